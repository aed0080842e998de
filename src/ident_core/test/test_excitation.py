"""Optimal excitation trajectories (ident_core.excitation) on the six-axis arm
(urdf/six_axis_3kg.urdf): Fourier basis, repair, constraints checked independently on a dense
grid, error messages, objectives recomputed from the regressor, result file.

Problems are small (2–3 harmonics, 10–20 samples per period, GA of 6–12 individuals) so the
file runs in well under a minute; the constraints are checked on 20 000 samples over one period
(0.25 ms apart, offset from the optimiser's 1 ms grid), not with the optimiser's own code.
"""
import math
import re

import numpy as np
import pytest
import yaml
from helpers import ARM6, REPO, load_error

from ident_core.errors import ExcitationError, InputError
from ident_core.excitation.collision import CollisionModel
from ident_core.excitation.config import config_from_dict, load_excitation_config
from ident_core.excitation.constraints import Constraints
from ident_core.excitation.fourier import FourierBasis as Basis
from ident_core.excitation.fourier import FourierTrajectory, load_trajectory
from ident_core.excitation.optimize import optimize_excitation
from ident_core.excitation.problem import ExcitationProblem
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot

SOURCE = 'test-excitation.yaml'
BUDGET = 600.0          # s; never reached by these small problems (results must not depend on it)
DENSE = 20000           # samples per period of the independent check

BASE = {'harmonics': 3, 'period': 5.0, 'samples': 20,
        'regressor': {'friction': 'coulomb-viscous-offset', 'rotor_inertia': False},
        'limits': {'margin': 0.05, 'acceleration': [20.0, 20.0, 20.0, 25.0, 25.0, 25.0],
                   'torque': True},
        'optimizer': {'random': {'candidates': 20}, 'ga': {'population': 12, 'generations': 8},
                      'local': {'iterations': 4}}}

# joint2 confined to 0.2 rad at 0.5 rad/s, joint2 effort 16 N·m (gravity there is 9–17 N·m)
TIGHT = {**BASE, 'limits': {**BASE['limits'],
                            'joints': {'joint2': {'lower': -1.0, 'upper': -0.8, 'velocity': 0.5}},
                            'effort': {'joint2': 16.0}}}

TABLE = {'name': 'table', 'type': 'plane', 'normal': [0, 0, 1], 'offset': -0.12}
COLLISION = {**BASE, 'harmonics': 2, 'samples': 10,
             'limits': {'margin': 0.05, 'acceleration': 20.0},
             'collision': {'self': True, 'min_distance': 0.01, 'environment': [TABLE]},
             'optimizer': {'random': {'candidates': 3}, 'ga': {'population': 6, 'generations': 3},
                           'local': {'iterations': 2}}}


REST = {**BASE, 'start_at_rest': True}


def config(data, source=SOURCE):
    return config_from_dict(data, source)


@pytest.fixture(scope='module')
def robot():
    return load_robot(ARM6)


@pytest.fixture(scope='module')
def problems(robot):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = ExcitationProblem(robot, config(CONFIGS[name]))
        return cache[name]
    return get


@pytest.fixture(scope='module')
def runs(problems):
    """``runs(problem_name, optimizer, seed)`` → (problem, ExcitationResult), cached."""
    cache = {}

    def get(name, optimizer, seed=1):
        key = (name, optimizer, seed)
        if key not in cache:
            problem = problems(name)
            cache[key] = problem, optimize_excitation(problem, optimizer, seed=seed,
                                                      budget=BUDGET)
        return cache[key]
    return get


def dense(trajectory, samples=DENSE):
    """q, qd, qdd (samples, n) over one period, 0.37 step off t = 0 (off the 1 ms grid)."""
    t = (np.arange(samples) + 0.37) * trajectory.period / samples
    return trajectory.evaluate(t)


def dense_margins(problem, trajectory) -> dict:
    """Per joint margins (negative: violated) computed from the closed-form trajectory."""
    lim = problem.constraints.limits
    order = problem.robot.joint_order(trajectory.joint_names, 'test')
    assert list(order) == list(range(problem.n))
    q, qd, qdd = dense(trajectory)
    out = {'position': np.minimum(q.min(0) - lim.lower, lim.upper - q.max(0)),
           'velocity': lim.velocity - np.abs(qd).max(0),
           'acceleration': lim.acceleration - np.abs(qdd).max(0)}
    if problem.constraints.effort is not None:
        tau = problem.constraints.torques(q, qd, qdd)
        out['torque_relative'] = 1 - np.abs(tau).max(0) / problem.constraints.effort
    return out


def random_coefficients(rng, n=3, harmonics=4):
    return rng.normal(size=(n, harmonics)), rng.normal(size=(n, harmonics)), rng.normal(size=n)


# --- Fourier basis ----------------------------------------------------------------------------

def test_basis_motion_is_eq14_and_its_derivatives():
    rng = np.random.default_rng(0)
    a, b, q0 = random_coefficients(rng)
    wf, h = 2 * math.pi / 5.0, 1e-5
    t = np.linspace(0.0, 5.0, 1001)
    f, qd, qdd = Basis.at(wf, 4, t, 5.0 / 1000).motion(a, b)
    fp, qdp, _ = Basis.at(wf, 4, t + h, h).motion(a, b)
    fm, qdm, _ = Basis.at(wf, 4, t - h, h).motion(a, b)
    # central differences: truncation h²/6 sup|x'''| (< 1e3 here) plus rounding 1e-16/h
    np.testing.assert_allclose((fp - fm) / (2 * h), qd, rtol=0, atol=1e-6)
    np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd, rtol=0, atol=1e-5)
    assert np.abs(qdd).max() > 5                      # not a vacuous comparison
    traj = FourierTrajectory(['j1', 'j2', 'j3'], wf, q0, a, b)
    for mine, ref in zip((q0 + f, qd, qdd), traj.evaluate(t)):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize('samples', [30, 100])
def test_taylor_bound_bounds_the_motion_between_samples(samples):
    """Basis.taylor(a, b)[k] must bound how far the k-th derivative's maximum (minimum) over the
    period lies above (below) its maximum (minimum) on the sample grid. Checked on a grid 1000×
    finer that contains the coarse one."""
    rng = np.random.default_rng(3)
    a, b, _ = random_coefficients(rng, n=5, harmonics=6)
    wf = 2 * math.pi / 5.0
    coarse = Basis.over_period(wf, 6, samples)
    fine = Basis.over_period(wf, 6, 1000 * samples)
    np.testing.assert_allclose(fine.t[::1000], coarse.t, rtol=0, atol=1e-12)
    bounds = coarse.taylor(a, b)
    for k, (c, f) in enumerate(zip(coarse.motion(a, b), fine.motion(a, b))):
        excess = np.maximum(f.max(0) - c.max(0), c.min(0) - f.min(0))
        assert np.all(excess <= bounds[k]), (k, excess, bounds[k])


# --- start at rest ------------------------------------------------------------------------------

def test_start_at_rest_projection_and_repair(problems):
    problem = problems('rest')
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = rng.uniform(problem.lower, problem.upper)
        for genes in (problem.project(x), problem.repair(x)[0]):
            assert genes is not None
            traj = problem.trajectory(genes)
            _, qd, qdd = traj.evaluate([0.0, traj.period])
            np.testing.assert_allclose(qd, 0, rtol=0, atol=1e-9)
            np.testing.assert_allclose(qdd, 0, rtol=0, atol=1e-9)
        # only the last harmonic and nothing else changes in the projection
        a, b, q0 = problem.unpack(x)
        pa, pb, pq0 = problem.unpack(problem.project(x))
        np.testing.assert_array_equal(pa[:, :-1], a[:, :-1])
        np.testing.assert_array_equal(pb[:, :-1], b[:, :-1])
        np.testing.assert_array_equal(pq0, q0)


@pytest.mark.parametrize('optimizer', ['random', 'ga'])
def test_start_at_rest_optimized_trajectory_starts_at_rest(runs, optimizer):
    traj = runs('rest', optimizer, seed=2)[1].trajectory
    _, qd, qdd = traj.evaluate(0.0)
    np.testing.assert_allclose(qd, 0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(qdd, 0, rtol=0, atol=1e-9)
    assert np.abs(dense(traj, 2000)[1]).max() > 0.1            # it does move


# --- every constraint holds on the returned trajectory -------------------------------------------

# seed 5: the GA's answer has the joint4 and joint6 velocity limits binding between two samples
# of the 1 ms grid (what Basis.taylor must cover)
@pytest.mark.parametrize('seed', [1, 5])
@pytest.mark.parametrize('optimizer', ['random', 'ga', 'ga+local'])
def test_limits_and_torques_hold_on_a_dense_grid(runs, optimizer, seed):
    problem, result = runs('base', optimizer, seed)
    m = dense_margins(problem, result.trajectory)
    for kind in ('position', 'velocity', 'acceleration'):
        assert np.all(m[kind] >= 0), (kind, m[kind])            # zero tolerance
    assert np.all(m['torque_relative'] >= -1e-6), m['torque_relative']
    assert np.isfinite(result.objectives['cond'])


def relative_margins(problem, m) -> dict:
    """Dense margins as fractions of each limit (range, velocity, acceleration, effort)."""
    lim = problem.constraints.limits
    return {'position': m['position'] / (lim.upper - lim.lower),
            'velocity': m['velocity'] / lim.velocity,
            'acceleration': m['acceleration'] / lim.acceleration,
            'torque': m['torque_relative']}


@pytest.mark.parametrize('optimizer, binding', [('random', None), ('random-repair', 0.02),
                                                ('ga', 0.1), ('ga+local', 0.1)])
def test_tight_overrides_hold_and_bind(runs, optimizer, binding):
    """joint2: 0.2 rad range, 0.5 rad/s, 16 N·m (margin 5 % off each): the answer satisfies
    them on the dense grid. The repair scales the motion just enough (bisection to 1/256 of
    the amplitude), so the repaired random draw sits on a constraint (< 2 %); the GA's answer
    uses most of the room too (< 10 %)."""
    problem, result = runs('tight', optimizer)
    lim = problem.constraints.limits
    assert lim.upper[1] - lim.lower[1] == pytest.approx(0.18, rel=1e-12)
    assert lim.velocity[1] == pytest.approx(0.475, rel=1e-12)
    assert problem.constraints.effort[1] == pytest.approx(15.2, rel=1e-12)
    m = dense_margins(problem, result.trajectory)
    for kind in ('position', 'velocity', 'acceleration'):
        assert np.all(m[kind] >= 0), (kind, m[kind])
    assert np.all(m['torque_relative'] >= -1e-6), m['torque_relative']
    if binding is not None:
        relative = relative_margins(problem, m)
        smallest = min(v.min() for v in relative.values())
        assert smallest < binding, relative


@pytest.fixture(scope='module')
def collision_check(problems):
    """An independent collision model of the same config (dense check)."""
    problem = problems('collision')
    return CollisionModel(problem.robot, problem.config)


@pytest.mark.parametrize('optimizer', ['random', 'ga', 'ga+local'])
def test_collision_clearance_holds_on_a_dense_grid(runs, collision_check, optimizer):
    problem, result = runs('collision', optimizer)
    assert ('link3_0', 'table') in collision_check.pair_names            # obstacle pairs
    assert ('link2_0', 'link6_0') in collision_check.pair_names          # self-collision pairs
    m = dense_margins(problem, result.trajectory)
    for kind in ('position', 'velocity', 'acceleration'):
        assert np.all(m[kind] >= 0), (kind, m[kind])
    q, _, _ = dense(result.trajectory)
    c = collision_check.clearance(q)
    # between the 1 ms samples the clearance may dip a little: 1 mm tolerance
    assert c.distance >= problem.config.collision.min_distance - 1e-3, c
    assert c.distance > 0, c
    assert result.margins['collision']['distance'] >= problem.config.collision.min_distance


def test_collision_constraint_changes_the_answer(robot, runs, collision_check):
    """Without collision checks, the same GA run collides (so the constraint above is active)."""
    problem, result = runs('collision', 'ga')
    free = ExcitationProblem(robot, config({**COLLISION, 'collision': {}}))
    assert free.constraints.collision is None
    unconstrained = optimize_excitation(free, 'ga', seed=1, budget=BUDGET)
    c = collision_check.clearance(dense(unconstrained.trajectory, 5000)[0])
    assert c.distance < problem.config.collision.min_distance, c


# --- impossible constraint sets ----------------------------------------------------------------

# joint2 and joint3 confined where gravity alone gives 18–23 N·m on joint2 (far above 0.01 N·m)
NO_TORQUE = {**BASE, 'limits': {**BASE['limits'],
                                'joints': {'joint2': {'lower': -1.9, 'upper': -1.5},
                                           'joint3': {'lower': -0.3, 'upper': 0.3}},
                                'effort': {'joint2': 0.01}},
             'optimizer': {'random': {'candidates': 2}, 'ga': {'population': 6, 'generations': 2}}}


def table_at(offset):
    return {**COLLISION, 'collision': {'self': False, 'environment': [
        {'name': 'table', 'type': 'plane', 'normal': [0, 0, 1], 'offset': offset}]},
        'optimizer': {'random': {'candidates': 1}, 'ga': {'population': 4, 'generations': 1}}}


CONFIGS = {'base': BASE, 'tight': TIGHT, 'collision': COLLISION, 'rest': REST,
           'no-torque': NO_TORQUE,
           # the whole arm is inside the table, at every configuration
           'table-above-all': table_at(1.0),
           # the table cuts through link1 (z in [-0.1, 0]) and the foot of link2, always
           'table-through-base': table_at(0.0)}


@pytest.mark.parametrize('optimizer', ['random', 'ga'])
@pytest.mark.parametrize('name, words', [('no-torque', ('joint2', 'torque')),
                                         ('table-above-all', ('collision', 'table')),
                                         ('table-through-base', ('collision', 'table'))],
                         ids=['joint2-effort', 'table-above-all', 'table-through-base'])
def test_impossible_constraints_raise_naming_the_constraint(problems, name, words, optimizer):
    with pytest.raises(ExcitationError) as info:
        optimize_excitation(problems(name), optimizer, seed=0, budget=BUDGET)
    message = str(info.value)
    assert 'no feasible excitation' in message
    for word in words:
        assert word in message, message


# --- reproducibility --------------------------------------------------------------------------

@pytest.mark.parametrize('optimizer', ['random', 'ga+local'])
def test_same_seed_same_trajectory_other_seed_another(problems, runs, optimizer):
    problem, first = runs('base', optimizer, seed=1)
    again = optimize_excitation(problem, optimizer, seed=1, budget=BUDGET).trajectory
    other = optimize_excitation(problem, optimizer, seed=2, budget=BUDGET).trajectory
    for key in ('a', 'b', 'q0'):
        np.testing.assert_array_equal(getattr(again, key), getattr(first.trajectory, key))
    assert not np.array_equal(other.a, first.trajectory.a)
    assert not np.array_equal(other.q0, first.trajectory.q0)


# --- configuration errors -------------------------------------------------------------------------

@pytest.mark.parametrize('change, words', [
    (lambda d: d.update(harmonic=4), ['harmonic']),
    (lambda d: d['limits'].update(margn=0.1), ['limits.margn']),
    (lambda d: d.update(objective='aopt'), ['objective', 'aopt']),
    (lambda d: d.update(collision={'environment': [{'type': 'cylinder', 'radius': 0.1}]}),
     ['collision.environment[0]', 'type']),
    (lambda d: d.update(collision={'environment': [{'type': 'sphere', 'position': [0, 0, 1]}]}),
     ['collision.environment[0]', 'radius']),
    (lambda d: d['optimizer']['ga'].update(selection='foo'), ['optimizer.ga', 'selection']),
    (lambda d: d['optimizer']['ga'].update(populaton=10), ['optimizer.ga.populaton']),
    (lambda d: d.update(samples=4), ['samples']),
    (lambda d: d['regressor'].update(friction='lugre'), ['regressor', 'lugre']),
    (lambda d: d['limits'].update(margin='five percent'), ['limits.margin']),
    (lambda d: d['optimizer'].update(annealing={'temperature': 0.0}),
     ['optimizer.annealing', 'temperature']),
], ids=['unknown-top', 'unknown-nested', 'objective', 'obstacle-type', 'obstacle-field',
        'ga-selection', 'ga-unknown', 'samples', 'friction', 'margin-text', 'annealing-zero'])
def test_config_errors_name_file_and_field(tmp_path, change, words):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    path = tmp_path / 'good.yaml'
    path.write_text(yaml.safe_dump(data))
    load_excitation_config(path)                       # the unmodified file is valid
    change(data)
    message = load_error(load_excitation_config, data, tmp_path / 'bad_excitation.yaml')
    for word in words:
        assert word in message, message


@pytest.mark.parametrize('limits, words', [
    ({'acceleration': [20.0, 20.0]}, ['limits.acceleration']),
    ({'acceleration': -5.0}, ['acceleration', 'joint1']),
    ({'acceleration': 20.0, 'joints': {'joint9': {'lower': -1.0}}}, ['joint9']),
    ({'acceleration': 20.0, 'joints': {'joint2': {'low': -1.0}}}, ['joint2', 'low']),
    ({'acceleration': 20.0, 'joints': {'joint2': {'lower': 1.0, 'upper': -1.0}}},
     ['joint2', 'position']),
    ({'acceleration': 20.0, 'torque': True, 'effort': {'joint9': 3.0}},
     ['limits.effort', 'joint9']),
    ({'acceleration': 20.0, 'torque': True, 'effort': {'joint2': 'strong'}},
     ['limits.effort', 'joint2']),
], ids=['acceleration-count', 'acceleration-negative', 'override-unknown-joint',
        'override-unknown-field', 'override-empty-range', 'effort-unknown-joint', 'effort-text'])
def test_limit_errors_name_file_field_and_joint(tmp_path, robot, limits, words):
    path = tmp_path / 'bad_limits.yaml'
    path.write_text(yaml.safe_dump({**BASE, 'limits': limits}))
    with pytest.raises(InputError) as info:
        Constraints(robot, load_excitation_config(path))       # what ExcitationProblem builds
    message = str(info.value)
    assert str(path) in message
    for word in words:
        assert word in message, message


def test_missing_acceleration_limits_name_file_and_field(tmp_path, robot):
    data = yaml.safe_load(yaml.safe_dump(BASE))
    del data['limits']['acceleration']
    path = tmp_path / 'no_acceleration.yaml'
    path.write_text(yaml.safe_dump(data))
    cfg = load_excitation_config(path)
    with pytest.raises(InputError) as info:
        ExcitationProblem(robot, cfg)
    assert str(path) in str(info.value) and 'limits.acceleration' in str(info.value)


def test_sa_ga_runs_the_operators_of_the_paper_with_the_configured_sizes():
    """stribeck_friction_sa_ga_2020: roulette, crossover 0.9 → 0.6, mutation 0.1 → 0.3,
    single-point mutation, VFSA; population and generations as the config's GA."""
    config = config_from_dict({'optimizer': {
        'ga': {'population': 12, 'generations': 7, 'elite': 1, 'selection': 'tournament',
               'crossover': [0.5, 0.5]},
        'annealing': {'temperature': 0.1, 'cooling': 0.8}}}, 'sa-ga settings')
    sa_ga = config.optimizer.sa_ga()
    assert (sa_ga.population, sa_ga.generations, sa_ga.elite) == (12, 7, 1)
    assert sa_ga.selection == 'roulette' and sa_ga.mutation_genes == 1
    assert sa_ga.crossover == (0.9, 0.6) and sa_ga.mutation == (0.1, 0.3)
    assert (sa_ga.annealing.temperature, sa_ga.annealing.cooling) == (0.1, 0.8)
    assert config.optimizer.ga.crossover == (0.5, 0.5)        # the GA keeps its own operators


def test_empty_sections_and_non_finite_numbers(tmp_path):
    """``limits:`` with nothing under it means the defaults, as an absent section does; NaN and
    infinity are refused wherever a number goes."""
    path = tmp_path / 'sections.yaml'
    path.write_text('limits:\ncollision:\noptimizer:\n  ga:\n')
    assert load_excitation_config(path).model_dump() == config_from_dict({}, 'x').model_dump()
    for text, field in (('collision: {min_distance: .inf}', 'collision.min_distance'),
                        ('locked_joints: {joint6: .nan}', 'locked_joints.joint6'),
                        ('limits: {acceleration: [20, .nan, 20, 20, 20, 20]}',
                         'limits.acceleration')):
        path.write_text(text)
        with pytest.raises(InputError, match=re.escape(field)):
            load_excitation_config(path)


def test_missing_config_file(tmp_path):
    path = tmp_path / 'nowhere.yaml'
    with pytest.raises(InputError, match='not found') as info:
        load_excitation_config(path)
    assert str(path) in str(info.value)


# --- objectives -----------------------------------------------------------------------------------

def test_objectives_match_an_independent_computation(robot, runs):
    problem, result = runs('base', 'ga')
    traj = result.trajectory
    samples = problem.config.samples
    q, qd, qdd = traj.evaluate(np.arange(samples) * traj.period / samples)
    regressor = Regressor(robot, problem.config.regressor)
    y = regressor.compute(q, qd, qdd)                          # (M, n, p)
    full = y.reshape(-1, y.shape[2])
    base = compute_base_parameters(regressor)
    w = y[:, :, base.independent].reshape(-1, base.count)
    assert np.linalg.matrix_rank(full) == base.count == np.linalg.matrix_rank(w)
    cond = np.linalg.cond(w)
    sign, logdet = np.linalg.slogdet(w.T @ w / samples)
    assert sign > 0
    values = problem.criteria.evaluate(q, qd, qdd)
    assert values['cond'] == pytest.approx(cond, rel=1e-9)
    assert values['dopt'] == pytest.approx(-logdet, rel=1e-9)
    # the recorded objectives are those of the returned trajectory
    assert result.objectives['cond'] == pytest.approx(cond, rel=1e-9)
    assert result.objectives['dopt'] == pytest.approx(-logdet, rel=1e-9)
    assert result.objectives['base_parameters'] == base.count


def test_rank_deficient_motion_has_infinite_criteria(robot, problems):
    problem = problems('base')
    x = problem.pack(np.zeros((6, 3)), np.zeros((6, 3)), np.zeros(6))     # no motion at all
    assert problem.evaluate(x) == {'cond': math.inf, 'dopt': math.inf}


def test_ga_beats_random_for_the_same_seed_and_budget(runs):
    _, ga = runs('base', 'ga')
    _, rnd = runs('base', 'random')
    # 20 feasible random draws vs 12 + 8 × 10 = 92 GA evaluations: a clearly lower cond
    assert ga.objectives['cond'] < 0.8 * rnd.objectives['cond']
    assert ga.stages[0]['name'] == 'ga' and rnd.stages[0]['name'] == 'random'
    assert rnd.stages[0]['feasible'] == 20


def test_local_step_does_not_make_the_answer_worse(runs):
    _, ga = runs('base', 'ga')
    _, local = runs('base', 'ga+local')
    names = [s['name'] for s in local.stages]
    assert names == ['ga', 'local']
    assert local.stages[0]['cost'] == pytest.approx(ga.stages[0]['cost'], rel=1e-12)
    assert local.objectives['cond'] <= ga.objectives['cond'] * (1 + 1e-9)


# --- report and result file ----------------------------------------------------------------------

def test_report_margins_objectives_and_yaml_round_trip(runs, tmp_path):
    problem, result = runs('base', 'ga+local')
    traj = result.trajectory
    for kind in ('position', 'velocity', 'acceleration', 'torque'):
        assert set(result.margins[kind]) == set(problem.robot.joint_names)
        assert min(result.margins[kind].values()) >= 0, (kind, result.margins[kind])
    # the margins are those of the trajectory (1 ms grid vs dense grid: within 1e-3)
    m = dense_margins(problem, traj)
    for kind in ('position', 'velocity', 'acceleration'):
        np.testing.assert_allclose([result.margins[kind][j] for j in problem.robot.joint_names],
                                   m[kind], rtol=0, atol=1e-3)
    assert traj.extra['objectives'] == result.objectives
    assert traj.extra['margins'] == result.margins
    assert traj.extra['urdf_sha256'] == problem.robot.urdf_sha256()
    assert 'ga+local' in traj.extra['source'] and '--seed 1' in traj.extra['source']
    loaded = load_trajectory(traj.to_file().write(tmp_path / 'excitation.yaml'))
    assert loaded.wf == traj.wf and loaded.periods == traj.periods == BASE.get('periods', 4)
    assert loaded.joint_names == traj.joint_names
    for key in ('a', 'b', 'q0'):
        np.testing.assert_array_equal(getattr(loaded, key), getattr(traj, key))
    assert loaded.extra['objectives'] == pytest.approx(result.objectives)
    # the loaded file gives the same genes and criteria
    x = problem.genes(loaded)
    assert problem.evaluate(x)['cond'] == pytest.approx(result.objectives['cond'], rel=1e-12)
    assert problem.violations(x) == []


# --- payload_identification_2017 Table 1 ----------------------------------------------------------

def test_table1_trajectory_evaluates_on_the_six_axis_arm(robot):
    traj = load_trajectory(REPO / 'config' / 'six_axis_3kg' / 'excitation' / 'identification.yaml')
    cfg = load_excitation_config(REPO / 'config' / 'six_axis_3kg' / 'excitation' / 'optimizer.yaml')
    cfg = cfg.updated(harmonics=6, period=5.0,
                      collision=cfg.collision.updated(self=False, environment=[]))
    problem = ExcitationProblem(robot, cfg)
    assert problem.wf == pytest.approx(traj.wf, rel=1e-12)
    x = problem.genes(traj)
    values = problem.evaluate(x)
    assert math.isfinite(values['cond']) and values['cond'] > 1
    assert math.isfinite(values['dopt'])
    # genes → trajectory gives back the same motion
    t = np.linspace(0, traj.period, 101)
    for mine, ref in zip(problem.trajectory(x).evaluate(t), traj.evaluate(t)):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-12)
    # the file says it stays inside the limits with margin; torques of the URDF model too
    assert problem.violations(x) == []
