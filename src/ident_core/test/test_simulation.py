"""Simulated robot hardware (simulation.py): friction, the central-difference integration,
sensors, saturation, payload, ground truth, and an identification of the simulated robot that
must recover the ground truth within its standard deviations."""
import math

import numpy as np
import pinocchio as pin
import pytest
from helpers import REPO
from test_fourier import JOINTS, TABLE1

from ident_core.data.datasets import Dataset
from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.excitation.fourier import FourierTrajectory
from ident_core.friction.models import Friction
from ident_core.model.base_parameters import BaseParameters
from ident_core.model.regressor import Regressor, RegressorSpec
from ident_core.model.transmission import Transmission
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan
from ident_core.sim.config import (
    ENCODER_RESOLUTION,
    Payload,
    SimulatedHardware,
    load_simulation_config,
)
from ident_core.sim.simulator import RobotSimulator, TruthLog

N = 6
ACCELERATION = [20, 20, 20, 25, 25, 25]
EFFORT_LIMIT = np.array([150, 150, 80, 30, 30, 15])          # six_axis_3kg.urdf
FC = np.array([2.0, 2.5, 1.5, 0.5, 0.4, 0.3])
FV = np.array([3.0, 2.0, 1.5, 0.5, 0.4, 0.2])
OFFSET = np.array([0.1, -0.2, 0.15, 0.05, -0.05, 0.02])
ROTOR = np.array([0.05, 0.05, 0.03, 0.01, 0.01, 0.005])
NOISE = np.array([0.2, 0.2, 0.1, 0.03, 0.03, 0.01])

# stribeck_friction_sa_ga_2020, Table 3 (improved model), joints 1–3
TABLE3 = dict(fc=np.array([11.64, 39.93, 38.53]), fs=np.array([23.19, 73.24, 53.78]),
              vs=np.array([0.02767, 0.01292, 0.01557]), delta=np.array([2.0, 2.0, 2.0]),
              fv=np.array([27.88, 89.24, 89.49]), offset=np.array([0.47, -3.34, -4.74]),
              v_l=np.array([0.010, 0.005, 0.010]))


def table3(model='improved-stribeck'):
    p = TABLE3
    if model == 'improved-stribeck':
        return Friction(p['fc'], p['fv'], p['offset'], p['v_l'], 'improved-stribeck', p['fs'],
                        p['vs'], p['delta'])
    return Friction(p['fc'], p['fv'], p['offset'], p['v_l'])


def friction(model='coulomb-viscous'):
    if model == 'improved-stribeck':
        return Friction(FC, FV, OFFSET, np.full(N, 0.01), 'improved-stribeck', 1.8 * FC,
                        np.full(N, 0.03), np.full(N, 2.0))
    return Friction(FC, FV, OFFSET, np.full(N, 0.01))


def trajectory(periods=2):
    return FourierTrajectory(JOINTS, 2 * math.pi / 5.0, TABLE1[:, 0], TABLE1[:, 1::2],
                             TABLE1[:, 2::2], periods, 'table1')


def config(q_start, **changes):
    settings = dict(rotor_inertia=ROTOR.copy(), friction=friction(),
                    torque_noise_std=NOISE.copy(), effort_resolution=np.zeros(N),
                    kp=np.full(N, 2500.0), kd=np.full(N, 100.0),
                    controller_rotor_inertia=ROTOR.copy(), controller_fc=FC.copy(),
                    controller_fv=FV.copy(), initial_position=np.array(q_start, float), seed=7,
                    position_resolution=ENCODER_RESOLUTION, dt=1e-3, perturbation=0.2)
    settings.update(changes)
    return SimulatedHardware(**settings)


@pytest.fixture(scope='module')
def plan(six_axis):
    """Table 1 at 5 s from rest at the trajectory's start position."""
    traj = trajectory()
    q_start = traj.evaluate(0.0)[0][0]
    return ExcitationPlan(traj, q_start, JointLimits.from_robot(six_axis, ACCELERATION))


def run(sim, desired, steps):
    """Run ``steps`` periods following ``desired(t) -> (q, qd, qdd)`` (plan-like, vectorised);
    returns the truth log arrays plus the measured position, velocity and effort."""
    t = np.arange(steps) * sim.hardware.dt + sim.time
    q_d, qd_d, qdd_d = desired(t)
    log = TruthLog(sim.robot.n, chunk=997)
    measured = {'position': [], 'velocity': [], 'effort': []}
    for k in range(steps):
        s = sim.step(q_d[k], qd_d[k], qdd_d[k])
        log.append(s)
        for key in measured:
            measured[key].append(getattr(s, key))
    out = log.arrays()
    out.update({k: np.array(v) for k, v in measured.items()})
    out.update(t=t, q_des=q_d)
    return out


@pytest.fixture(scope='module', params=['coulomb-viscous', 'improved-stribeck'])
def tracking(request, six_axis, plan):
    """2 s at 1 kHz of the plan (0.5 s approach, then the Fourier series)."""
    cfg = config(plan.sample(0.0)[0][0], friction=friction(request.param))
    sim = RobotSimulator(six_axis, cfg)
    return sim, run(sim, plan.sample, 2000)


# --- friction -----------------------------------------------------------------------------------

@pytest.mark.parametrize('model', ['coulomb-viscous', 'improved-stribeck'])
def test_friction_is_continuous_at_the_band_edges_and_odd(model):
    f = table3(model)
    v_l = f.v_l
    for sign in (1, -1):
        inside = f.torque(sign * v_l * (1 - 1e-12))[0]
        outside = f.torque(sign * v_l * (1 + 1e-12))[0]
        np.testing.assert_allclose(inside, outside, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(f.torque(np.zeros(3))[0], TABLE3['offset'])
    for v in (1e-4, 0.004, 0.01, 0.02, 0.1, 1.0, 7.5):
        plus, minus = f.torque(np.full(3, v))[0], f.torque(np.full(3, -v))[0]
        np.testing.assert_allclose(plus - TABLE3['offset'], -(minus - TABLE3['offset']),
                                   rtol=1e-14, atol=1e-12)


@pytest.mark.parametrize('model', ['coulomb-viscous', 'improved-stribeck'])
def test_friction_derivative_matches_finite_differences(model):
    f = table3(model)
    speeds = np.concatenate([np.linspace(-2.0, 2.0, 401), np.linspace(-0.05, 0.05, 401)])
    h = 1e-7
    for v in speeds:
        v3 = np.full(3, v)
        kink = np.abs(np.abs(v3) - f.v_l) < 2 * h
        numeric = (f.torque(v3 + h)[0] - f.torque(v3 - h)[0]) / (2 * h)
        analytic = f.torque(v3)[1]
        np.testing.assert_allclose(analytic[~kink], numeric[~kink],
                                   rtol=1e-5, atol=1e-5 * np.abs(analytic).max())


def test_coulomb_viscous_closed_form():
    f = table3('coulomb-viscous')
    p = TABLE3
    for v in (0.011, 0.3, -0.02, -4.0):
        np.testing.assert_allclose(f.torque(np.full(3, v))[0],
                                   p['fc'] * np.sign(v) + p['fv'] * v + p['offset'], rtol=1e-14)
    # inside the band: the straight line from the offset to the value at ±v_l
    v = 0.4 * p['v_l']
    np.testing.assert_allclose(f.torque(v)[0],
                               p['offset'] + 0.4 * (p['fc'] + p['fv'] * p['v_l']), rtol=1e-14)


def test_stribeck_closed_form_and_limits():
    f = table3('improved-stribeck')
    p = TABLE3
    # far above vs the Stribeck term has died out: fc + fv·v
    v = 100 * p['vs']
    np.testing.assert_allclose(f.torque(v)[0], p['fc'] + p['fv'] * v + p['offset'], rtol=1e-12)
    np.testing.assert_allclose(f.torque(-v)[0], -p['fc'] - p['fv'] * v + p['offset'],
                               rtol=1e-12)
    # at the band edge, the Stribeck curve itself
    v_l = p['v_l']
    level = p['fc'] + (p['fs'] - p['fc']) * np.exp(-(v_l / p['vs']) ** p['delta'])
    np.testing.assert_allclose(f.torque(v_l)[0], level + p['fv'] * v_l + p['offset'],
                               rtol=1e-12)
    # with a narrow band the breakaway level approaches fs
    narrow = Friction(p['fc'], p['fv'], p['offset'], np.full(3, 1e-5), 'improved-stribeck',
                      p['fs'], p['vs'], p['delta'])
    np.testing.assert_allclose(narrow.torque(np.full(3, 1e-5))[0] - p['offset'], p['fs'],
                               rtol=2e-3)
    # and the friction dips between breakaway and sliding (the Stribeck effect)
    mid = f.torque(3 * p['vs'])[0] - p['offset'] - p['fv'] * 3 * p['vs']
    assert np.all(mid < f.torque(v_l)[0] - p['offset'] - p['fv'] * v_l)


@pytest.mark.parametrize('kwargs, words', [
    (dict(model='lugre'), 'lugre'),
    (dict(model='improved-stribeck'), 'fs'),
    (dict(v_l=np.array([0.01, 0.0, 0.01])), 'v_l'),
])
def test_bad_friction(kwargs, words):
    args = dict(fc=np.ones(3), fv=np.ones(3), offset=np.zeros(3), v_l=np.full(3, 0.01))
    args.update(kwargs)
    with pytest.raises(InputError, match=words):
        Friction(**args)


# --- integration and sensors --------------------------------------------------------------------

def test_logged_truth_satisfies_the_equation_of_motion(tracking):
    sim, out = tracking
    data = sim.true_model.createData()
    f = sim.hardware.friction
    residual = np.array([pin.rnea(sim.true_model, data, q, qd, qdd) + f.torque(qd)[0] - tau
                         for q, qd, qdd, tau in zip(out['q'], out['qd'], out['qdd'],
                                                    out['torque'])])
    assert np.abs(residual).max() < 1e-8
    # the run is a real motion, tracked closely
    assert np.abs(out['torque']).max(axis=0).min() > 0.5
    assert np.abs(out['qd']).max() > 1.0
    assert np.abs(out['q'] - out['q_des']).max() < 0.01
    np.testing.assert_array_equal(out['step'], np.arange(2000))


def test_true_positions_satisfy_the_central_differences(tracking):
    sim, out = tracking
    q, dt = out['q'], sim.hardware.dt
    np.testing.assert_allclose((q[2:] - q[:-2]) / (2 * dt), out['qd'][1:-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose((q[2:] - 2 * q[1:-1] + q[:-2]) / dt ** 2, out['qdd'][1:-1],
                               rtol=0, atol=1e-5)


def test_measured_position_is_the_quantised_true_position(tracking):
    sim, out = tracking
    res = sim.hardware.position_resolution
    assert res == pytest.approx(2 * np.pi / 2 ** 17 / 100)
    err = out['position'] - out['q']
    assert np.abs(err).max() <= res / 2 * (1 + 1e-6)
    assert np.abs(err).max() > res / 4                 # really quantised, not exact
    ticks = out['position'] / res
    np.testing.assert_allclose(ticks, np.round(ticks), rtol=0, atol=1e-6)
    # the reported velocity is the backward difference of the measured positions
    backward = np.diff(out['position'], axis=0) / sim.hardware.dt
    np.testing.assert_allclose(out['velocity'][1:], backward, rtol=1e-12, atol=1e-9)


def test_effort_noise_has_the_configured_std(tracking):
    _, out = tracking
    noise = out['effort'] - out['torque']
    m = len(noise)
    np.testing.assert_allclose(noise.std(axis=0), NOISE, rtol=0.08)    # ~5 σ of a std estimate
    assert np.all(np.abs(noise.mean(axis=0)) < 4 * NOISE / np.sqrt(m))
    # white: no correlation between successive samples
    r1 = [np.corrcoef(noise[1:, j], noise[:-1, j])[0, 1] for j in range(N)]
    assert np.all(np.abs(r1) < 4 / np.sqrt(m))


def test_effort_quantisation(six_axis, plan):
    res = np.array([0.15, 0.15, 0.08, 0.03, 0.03, 0.015])         # per mille of the limit
    cfg = config(plan.sample(0.0)[0][0], effort_resolution=res, torque_noise_std=np.zeros(N))
    out = run(RobotSimulator(six_axis, cfg), plan.sample, 300)
    ticks = out['effort'] / res
    np.testing.assert_allclose(ticks, np.round(ticks), rtol=0, atol=1e-9)
    assert np.all(np.abs(out['effort'] - out['torque']) <= res / 2 * (1 + 1e-9))


def test_torque_saturates_at_the_effort_limit(six_axis, plan):
    q0 = plan.sample(0.0)[0][0]
    sim = RobotSimulator(six_axis, config(q0, torque_noise_std=np.zeros(N)))
    target = q0 + np.array([1.0, 0.8, -1.0, 1.5, 1.5, 2.0])      # a step: the PD asks too much
    out = run(sim, lambda t: (np.tile(target, (len(t), 1)), np.zeros((len(t), N)),
                              np.zeros((len(t), N))), 100)
    peak = np.abs(out['torque']).max(axis=0)
    assert np.all(peak <= EFFORT_LIMIT)
    np.testing.assert_array_equal(peak, EFFORT_LIMIT)                 # every joint saturated
    # the saturated torque is what drives the robot
    data = sim.true_model.createData()
    f = sim.hardware.friction
    for k in (0, 10, 50):
        tau = pin.rnea(sim.true_model, data, out['q'][k], out['qd'][k], out['qdd'][k])
        np.testing.assert_allclose(tau + f.torque(out['qd'][k])[0], out['torque'][k], atol=1e-8)


def test_same_seed_same_run_other_seed_other_robot(six_axis, plan):
    q0 = plan.sample(0.0)[0][0]
    a = run(RobotSimulator(six_axis, config(q0, seed=3)), plan.sample, 300)
    b = run(RobotSimulator(six_axis, config(q0, seed=3)), plan.sample, 300)
    for key in ('position', 'velocity', 'effort', 'q', 'qd', 'qdd', 'torque'):
        np.testing.assert_array_equal(a[key], b[key])
    other = RobotSimulator(six_axis, config(q0, seed=4))
    assert not np.allclose(other.true_inertial, RobotSimulator(six_axis, config(q0, seed=3))
                           .true_inertial)
    c = run(other, plan.sample, 300)
    assert not np.allclose(a['effort'], c['effort'])


# --- settings, payload, ground truth ------------------------------------------------------------

@pytest.mark.parametrize('change, name', [
    (dict(kp=np.full(5, 100.0)), 'kp'),
    (dict(rotor_inertia=np.zeros(7)), 'rotor_inertia'),
    (dict(controller_fv=np.zeros((2, 3))), 'controller_fv'),
    (dict(initial_position=np.array([0, 0, np.nan, 0, 0, 0])), 'initial_position'),
    (dict(friction=Friction(np.ones(5), np.ones(5), np.zeros(5), np.full(5, 0.01))),
     'friction.fc'),
    (dict(torque_noise_std=-NOISE), 'torque_noise_std'),
    (dict(kd=np.full(N, -1.0)), 'kd'),
    (dict(dt=0.0), 'dt'),
    (dict(perturbation=1.0), 'perturbation'),
])
def test_bad_setting_is_named(six_axis, change, name):
    cfg = config(np.zeros(N), **change)
    with pytest.raises(InputError, match=f'{name}') as info:
        cfg.check(six_axis)
    assert 'simulation setting' in str(info.value)
    with pytest.raises(InputError):
        RobotSimulator(six_axis, cfg)


def test_payload_adds_to_the_last_link(six_axis):
    mass, com = 1.5, np.array([0.01, -0.02, 0.05])
    inertia = np.array([0.002, 0.0, 0.002, 0.0, 0.0, 0.001])
    plain = RobotSimulator(six_axis, config(np.zeros(N))).ground_truth()
    loaded_sim = RobotSimulator(six_axis, config(np.zeros(N), payload=Payload(mass, com, inertia)))
    loaded = loaded_sim.ground_truth()
    names = plain['standard_parameters']['names']
    p0 = dict(zip(names, plain['standard_parameters']['values']))
    p1 = dict(zip(names, loaded['standard_parameters']['values']))
    assert p1['m6'] == pytest.approx(p0['m6'] + mass, rel=1e-12)
    # first moment: mass × centre of mass in the link-6 joint frame (flange placement applied)
    model = six_axis.model
    flange = model.frames[model.getFrameId('flange')]
    assert flange.parentJoint == 6
    c6 = flange.placement.act(com)
    for axis, k in zip('xyz', range(3)):
        assert p1[f'm{axis}6'] == pytest.approx(p0[f'm{axis}6'] + mass * c6[k], abs=1e-12)
    for name in names:
        if not name.endswith('6') or name.startswith(('Ia', 'fv', 'fc', 'offset')):
            assert p1[name] == p0[name], name
    assert loaded['payload']['mass'] == mass and plain['payload'] is None
    with pytest.raises(InputError, match='tool0'):
        RobotSimulator(six_axis, config(np.zeros(N), payload=Payload(mass, com, inertia,
                                                                     'tool0')))


def test_switching_the_payload_gives_the_robot_built_with_or_without_it(six_axis, plan):
    """A simulator configured with a payload but started without it runs exactly like one built
    without; mounted at run time, exactly like one built with it (same seed: same noise), from
    the same state; removed again, like the one without. The ground truth keeps the configured
    payload and says whether it is mounted."""
    payload = Payload(3.0, np.array([0.0, 0.0, 0.05]), np.array([1e-3, 0, 1e-3, 0, 0, 1e-3]))
    start = plan.sample(0.0)[0][0]
    without = RobotSimulator(six_axis, config(start))
    switched = RobotSimulator(six_axis, config(start, payload=payload, payload_mounted=False))
    assert switched.payload is None and not switched.ground_truth()['payload_mounted']
    a, b = run(without, plan.sample, 300), run(switched, plan.sample, 300)
    for key in ('effort', 'torque', 'q'):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)

    built = RobotSimulator(six_axis, config(start, payload=payload))
    switched = RobotSimulator(six_axis, config(start, payload=payload, payload_mounted=False))
    switched.set_payload(payload)
    np.testing.assert_array_equal(switched.true_inertial, built.true_inertial)
    a, b = run(built, plan.sample, 300), run(switched, plan.sample, 300)
    for key in ('effort', 'torque', 'q'):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    truth = switched.ground_truth()
    assert truth['payload_mounted'] and truth['payload'] == built.ground_truth()['payload']

    # removed in motion: the next samples obey the payload-free dynamics
    switched.set_payload(None)
    np.testing.assert_array_equal(switched.true_inertial, without.true_inertial)
    c = run(switched, plan.sample, 50)
    data = without.true_model.createData()
    residual = [pin.rnea(without.true_model, data, q, qd, qdd)
                + without.hardware.friction.torque(qd)[0] - tau
                for q, qd, qdd, tau in zip(c['q'], c['qd'], c['qdd'], c['torque'])]
    assert np.abs(residual).max() < 1e-8
    truth = switched.ground_truth()
    assert not truth['payload_mounted'] and truth['payload']['mass'] == 3.0
    with pytest.raises(InputError, match='tool0'):
        switched.set_payload(Payload(1.0, np.zeros(3), np.zeros(6), 'tool0'))
    np.testing.assert_array_equal(switched.true_inertial, without.true_inertial)


def test_ground_truth_describes_the_simulated_robot(six_axis):
    sim = RobotSimulator(six_axis, config(np.zeros(N), friction=friction()))
    gt = sim.ground_truth()
    chi = np.array(gt['standard_parameters']['values'])
    beta = np.array(gt['base_parameters']['values'])
    base = BaseParameters.from_dict(gt['base_parameters']['definition'])
    np.testing.assert_allclose(beta, base.project(chi), rtol=1e-12, atol=1e-14)
    assert gt['base_parameters']['names'] == base.names
    reg = Regressor(six_axis, RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True))
    assert gt['standard_parameters']['names'] == reg.names
    # the standard parameters reproduce the simulator's dynamics (outside the friction band),
    # and the base parameters the same torques
    rng = np.random.default_rng(0)
    q = rng.uniform(six_axis.lower, six_axis.upper, size=(20, N))
    qd = rng.uniform(0.05, 2.0, size=(20, N)) * rng.choice([-1, 1], size=(20, N))
    qdd = rng.uniform(-5, 5, size=(20, N))
    y = reg.compute(q, qd, qdd)
    data = sim.true_model.createData()
    expected = np.array([pin.rnea(sim.true_model, data, *x) + sim.hardware.friction.torque(x[1])[0]
                         for x in zip(q, qd, qdd)])
    np.testing.assert_allclose(y @ chi, expected, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(y[:, :, base.independent] @ beta, expected, rtol=1e-8, atol=1e-8)
    assert gt['friction']['model'] == 'coulomb-viscous'
    np.testing.assert_array_equal(gt['friction']['fv'], FV)
    assert gt['robot']['joints'] == JOINTS


def test_truth_log_across_chunks():
    log = TruthLog(2, chunk=7)
    assert log.arrays()['q'].shape == (0, 2)
    rng = np.random.default_rng(0)
    rows = []
    for k in range(20):
        q, qd, qdd, tau, ext = rng.normal(size=(5, 2))
        log.append(type('S', (), dict(step=k, q=q, qd=qd, qdd=qdd, torque=tau, external=ext)))
        rows.append((q, qd, qdd, tau, ext))
    out = log.arrays()
    assert out['step'].dtype == np.int64
    np.testing.assert_array_equal(out['step'], np.arange(20))
    for i, key in enumerate(('q', 'qd', 'qdd', 'torque', 'external')):
        np.testing.assert_array_equal(out[key], np.array([r[i] for r in rows]))


# --- identification of the simulated robot ------------------------------------------------------

def test_identification_recovers_the_ground_truth(six_axis, plan):
    """Table 1, two periods at 5 s, with friction, torque noise and the controller's friction
    feed-forward: the identified base parameters agree with the simulator's truth within their
    standard deviations, and predict the noise-free torque."""
    cfg = config(plan.sample(0.0)[0][0], seed=11)
    sim = RobotSimulator(six_axis, cfg)
    steps = int(round(plan.duration / cfg.dt))
    out = run(sim, plan.sample, steps)
    assert np.abs(out['q'] - out['q_des']).max() < 0.01
    measured = Dataset('simulated Table 1', JOINTS, out['t'], out['position'], None,
                       out['effort'], Transmission.identity(N))
    model = identify(six_axis, [measured],
                     IdentificationConfig(rotor_inertia=True, reversal_window=0.1))
    gt = sim.ground_truth()
    assert model.base.names == gt['base_parameters']['names']
    truth = np.array(gt['base_parameters']['values'])
    z = (model.values - truth) / model.std
    within = np.mean(np.abs(z) < 3)
    assert within >= 0.95, f'{within:.1%} within 3σ, worst z {z[np.argmax(np.abs(z))]:.2f}'
    assert 0.5 < z.std() < 1.6            # honest standard deviations, neither tiny nor huge
    noise_free = Dataset('simulated Table 1 (true torque)', JOINTS, out['t'], out['position'],
                         None, out['torque'], Transmission.identity(N))
    error = validate(model, noise_free).metrics['relative_error_percent']
    assert error <= 1.0


def test_simulation_config_of_a_node_parameter_file(tmp_path):
    cfg = load_simulation_config(REPO / 'config' / 'six_axis_3kg' / 'ident_sim_friction.yaml',
                                 seed=3)
    hardware = cfg.hardware(6)
    assert cfg.seed == 3 and hardware.friction.model == 'improved-stribeck'
    np.testing.assert_allclose(hardware.friction.fs, [23.19, 73.24, 53.78, 5.80, 5.80, 2.90])
    np.testing.assert_allclose(hardware.rotor_inertia, [6.0, 10.0, 4.0, 0.4, 0.4, 0.25])
    other = tmp_path / 'other.yaml'
    other.write_text('recorder:\n  ros__parameters: {topic: joint_states}\n')
    with pytest.raises(InputError, match='other.yaml: no ident_sim.ros__parameters'):
        load_simulation_config(other)
    other.write_text('ident_sim:\n  ros__parameters: {rate_hz: -1.0}\n')
    with pytest.raises(InputError, match='rate_hz'):
        load_simulation_config(other)
