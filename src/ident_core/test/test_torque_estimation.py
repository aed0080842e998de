"""Torque estimation (ident_core.torque_estimation): the dynamic model against the regressor,
its derivatives against finite differences, the Taylor prediction against RNEA at the next
sample, the Kalman filter on noise-free and noisy simulated logs, the noise estimates on a
closed-form case, the momentum observer and collision detection on a simulated contact, the
baselines against scipy, and bad input."""
import math

import numpy as np
import pytest
import scipy.signal
from test_simulation import config, run, trajectory

from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identified_model import IdentifiedModel
from ident_core.friction.models import (
    FRICTION_MODELS,
    JointFriction,
    friction_torque,
    parameter_names,
)
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.transmission import Transmission
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan
from ident_core.sim.simulator import RobotSimulator
from ident_core.torque_estimation import noise as noise_module
from ident_core.torque_estimation.baselines import DESIGN_SAMPLES, LowpassFilter, MeanFilter
from ident_core.torque_estimation.collision import CollisionDetector
from ident_core.torque_estimation.config import TorqueEstimatorConfig, covariance
from ident_core.torque_estimation.dynamics import (
    DynamicModel,
    dynamic_model_from_result,
    forward_dynamics,
    generalized_momentum,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    momentum_bias,
)
from ident_core.torque_estimation.estimator import TorqueEstimator
from ident_core.torque_estimation.noise import NoiseEstimator

N = 6
SHAPE = {'vs': np.full(N, 0.05), 'delta': np.full(N, 2.0), 'v_l': np.full(N, 0.01)}
# a coupled wrist as the Stäubli TX40's: motor 6 turns with joint 5
GEAR = np.diag([100.0, 100.0, 80.0, 50.0, 50.0, 40.0])
GEAR[5, 4] = 40.0


def identified(robot, friction='improved-stribeck', gear=GEAR, seed=0):
    """An identified model with known standard parameters (URDF bodies scaled, random actuator
    terms), as ``read_result`` returns it."""
    rng = np.random.default_rng(seed)
    cfg = IdentificationConfig(friction=friction, rotor_inertia=True)
    transmission = Transmission(gear, np.zeros(N), np.ones(N))
    shape = {k: v for k, v in SHAPE.items() if k in cfg.spec.shape_terms}
    regressor = Regressor(robot, cfg.spec, transmission, shape or None)
    actuators = rng.uniform(0.05, 0.5, regressor.n_columns - regressor.n_inertial)
    chi = np.concatenate([robot.standard_parameters() * rng.uniform(0.8, 1.2), actuators])
    base = compute_base_parameters(regressor)
    return IdentifiedModel(robot, cfg, transmission, base, base.project(chi),
                           np.zeros(len(base.names)), standard=chi,
                           friction_shape=shape or None), regressor, chi


def motions(seed, count=5):
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1, 1, N) for _ in range(3)) for _ in range(count)]


# --- friction and the dynamic model ------------------------------------------------------------

@pytest.mark.parametrize('model', FRICTION_MODELS)
def test_joint_friction_equals_the_friction_model(model):
    p = {'fc': np.full(N, 1.0), 'fs': np.full(N, 1.6), 'vs': np.full(N, 0.04),
         'delta': np.array([2.0, 1.5, 2.0, 1.2, 2.0, 2.0]), 'fv': np.full(N, 0.7),
         'offset': np.full(N, 0.1), 'v_l': np.full(N, 0.01)}
    p = {k: p[k] for k in parameter_names(model)}
    u = np.random.default_rng(1).uniform(-0.2, 0.2, (400, N))
    u[0] = 0.0
    law = JointFriction(model, p)
    for got, want in zip(law.torque_and_slope(u), friction_torque(model, u, p)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(law.torque(u), law.torque_and_slope(u)[0])
    np.testing.assert_array_equal(JointFriction('none', {}).torque(u), 0.0)


@pytest.mark.parametrize('friction', ['coulomb-viscous-offset', 'improved-stribeck'])
@pytest.mark.parametrize('gear', [np.eye(N), GEAR], ids=['direct', 'coupled'])
def test_inverse_dynamics_of_a_result_is_the_regressor_prediction(six_axis, friction, gear):
    model, regressor, chi = identified(six_axis, friction, gear)
    dm = dynamic_model_from_result(model, 'RESULT.yaml')
    assert (dm.rotor_coupling is None) == bool(np.all(gear == np.diag(np.diag(gear))))
    data = dm.create_data()
    for q, qd, qdd in motions(2):
        want = regressor.compute(q[None], qd[None], qdd[None])[0] @ chi
        np.testing.assert_allclose(inverse_dynamics(dm, data, q, qd, qdd), want,
                                   rtol=1e-9, atol=1e-9)
        # the forward dynamics undo it
        np.testing.assert_allclose(forward_dynamics(dm, data, q, qd, want), qdd, atol=1e-8)


@pytest.mark.parametrize('gear', [np.eye(N), GEAR], ids=['direct', 'coupled'])
def test_derivatives_against_finite_differences(six_axis, gear):
    model, _, _ = identified(six_axis, 'improved-stribeck', gear)
    dm = dynamic_model_from_result(model, 'RESULT.yaml')
    data, h = dm.create_data(), 1e-6
    for q, qd, qdd in motions(3):
        qd = qd + 0.2 * np.sign(qd)             # away from the friction band and the step
        jacobians = inverse_dynamics_derivatives(dm, data, q, qd, qdd)
        for which, analytic in enumerate(jacobians):
            numeric = np.empty((N, N))
            for i in range(N):
                step = np.zeros(N)
                step[i] = h
                plus = [q, qd, qdd]
                minus = [q, qd, qdd]
                plus[which] = plus[which] + step
                minus[which] = minus[which] - step
                numeric[:, i] = (inverse_dynamics(dm, data, *plus)
                                 - inverse_dynamics(dm, data, *minus)) / (2 * h)
            np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_taylor_prediction_matches_rnea_at_the_next_sample(six_axis):
    """eq. (14): tau(s_{k+1}) ≈ tau(s_k) + B_u,k (s_{k+1} − s_k) on a 1 kHz Fourier trajectory,
    with an error of second order in the step."""
    model, _, _ = identified(six_axis, 'coulomb-viscous', np.eye(N))
    dm = dynamic_model_from_result(model, 'RESULT.yaml')
    data = dm.create_data()
    traj = trajectory()
    q, qd, qdd = traj.evaluate(np.arange(0.0, 2.0, 1e-3) + 0.1)
    worst = {}
    for stride in (1, 4):
        errors, steps = [], []
        for k in range(0, len(q) - stride, 25):
            s, r = (q[k], qd[k], qdd[k]), (q[k + stride], qd[k + stride], qdd[k + stride])
            if np.any(np.sign(s[1]) != np.sign(r[1])):
                continue                                 # the Coulomb step is not smooth
            jac = inverse_dynamics_derivatives(dm, data, *s)
            predicted = inverse_dynamics(dm, data, *s) + sum(b @ (b_r - b_s) for b, b_r, b_s
                                                             in zip(jac, r, s))
            actual = inverse_dynamics(dm, data, *r)
            errors.append(np.abs(predicted - actual).max())
            steps.append(np.abs(actual - inverse_dynamics(dm, data, *s)).max())
        worst[stride] = max(errors)
        assert max(errors) < 0.01 * max(steps)
    assert worst[4] > 8 * worst[1]                       # second order: ~16×


def test_momentum_terms_of_the_model(six_axis):
    """ṗ = tau − beta along a free motion: (p(t+h) − p(t−h)) / 2h against inverse dynamics."""
    model, _, _ = identified(six_axis, 'coulomb-viscous', GEAR)
    dm = dynamic_model_from_result(model, 'RESULT.yaml')
    data, h = dm.create_data(), 1e-5
    for q, qd, qdd in motions(4):
        qd = qd + 0.2 * np.sign(qd)
        p_plus = generalized_momentum(dm, data, q + h * qd, qd + h * qdd)
        p_minus = generalized_momentum(dm, data, q - h * qd, qd - h * qdd)
        tau = inverse_dynamics(dm, data, q, qd, qdd)
        np.testing.assert_allclose((p_plus - p_minus) / (2 * h),
                                   tau - momentum_bias(dm, data, q, qd), atol=1e-5)


def test_a_body_pinocchio_cannot_represent_is_refused(six_axis):
    model, _, chi = identified(six_axis, 'coulomb-viscous', np.eye(N))
    chi = chi.copy()
    chi[20] = 0.0                                  # joint3's body: no mass, first moments left
    model.standard = chi
    with pytest.raises(InputError, match='RESULT.yaml: body of joint joint3: mass 0'):
        dynamic_model_from_result(model, 'RESULT.yaml')
    model.standard = None
    with pytest.raises(InputError, match='no standard_parameters'):
        dynamic_model_from_result(model, 'RESULT.yaml')


# --- simulated logs -------------------------------------------------------------------------

def truth_model(sim) -> DynamicModel:
    """The simulator's own robot as a dynamic model."""
    f = sim.hardware.friction
    return DynamicModel(sim.robot, sim.true_model, None, np.eye(sim.robot.n),
                        JointFriction('improved-stribeck', f.parameters), 'truth')


def simulated(six_axis, seconds, **changes):
    traj = trajectory(periods=1)
    q_start = traj.evaluate(0.0)[0][0]
    plan = ExcitationPlan(traj, q_start, JointLimits.from_robot(six_axis, [20, 20, 20, 25, 25,
                                                                          25]))
    sim = RobotSimulator(six_axis, config(q_start, **changes))
    return sim, run(sim, plan.sample, int(seconds / sim.hardware.dt)), plan


def estimate(dm, log, plan=None, **settings):
    est = TorqueEstimator(dm, TorqueEstimatorConfig(**settings))
    reference = None if plan is None else np.stack(plan.sample(log['t']), 1)
    rows = [est.step(t, q, y, None if reference is None else tuple(reference[k]))
            for k, (t, q, y) in enumerate(zip(log['t'], log['position'], log['effort']))]
    return (np.array([r.filtered for r in rows]), np.array([r.external for r in rows]), est)


@pytest.fixture(scope='module')
def noisy(six_axis):
    return simulated(six_axis, 4.0)


@pytest.mark.parametrize('reference', [True, False], ids=['reference', 'measured'])
def test_filter_on_a_noise_free_log_returns_the_true_torque(six_axis, reference):
    """Once the noise estimates are warmed up, the estimate is the true torque: RMS error
    below 1e-4 of the largest torque; single samples at the controller's friction feed-forward
    steps (which no model predicts) within 0.5 %."""
    sim, log, plan = simulated(six_axis, 1.5, torque_noise_std=np.zeros(N),
                               position_resolution=0.0)
    filtered, _, est = estimate(truth_model(sim), log, plan if reference else None)
    scale = np.abs(log['torque']).max()
    error = (filtered - log['torque'])[noise_module.WARMUP:]
    assert np.sqrt(np.mean(error ** 2)) < 1e-4 * scale
    assert np.abs(error).max() < 5e-3 * scale
    assert est.kalman.noise.ready


def rmse(x, truth, skip=500):
    return np.sqrt(np.mean((x - truth)[skip:] ** 2, axis=0))


def test_kalman_filter_beats_the_mean_filter_on_a_noisy_log(six_axis, noisy):
    """Simulated drives with current noise (0.2 / 0.1 / 0.01 N·m) and the true model: the
    Kalman filter has a lower RMSE against the true torque than the paper's 5-sample mean on
    every joint, by at least half expanded at the reference and a quarter without one."""
    sim, log, plan = noisy
    dm = truth_model(sim)
    mean5 = rmse(estimate(dm, log, method='mean5')[0], log['torque'])
    kalman = rmse(estimate(dm, log, plan)[0], log['torque'])
    assert np.all(kalman < 0.5 * mean5), (kalman, mean5)
    measured = rmse(estimate(dm, log)[0], log['torque'])
    assert np.all(measured < 0.75 * mean5), (measured, mean5)


def test_noise_estimates_of_a_random_walk_seen_through_noise():
    """The closed-form case of the filter's model: y = random walk (W) + white noise (V)."""
    rng = np.random.default_rng(5)
    w, v, steps = np.array([1e-4, 1e-3]), np.array([0.04, 0.01]), 40000
    walk = np.cumsum(rng.normal(size=(steps, 2)) * np.sqrt(w), axis=0)
    y = walk + rng.normal(size=(steps, 2)) * np.sqrt(v)
    est = NoiseEstimator(2, time_constant=1e9)
    for z in np.diff(y, axis=0):
        est.update(z, 1e-3)
    got_w, got_v = est.covariances()
    np.testing.assert_allclose(got_v, v, rtol=0.05)
    np.testing.assert_allclose(got_w, w, rtol=0.25)


def test_noise_estimates_before_warmup_split_the_increments_evenly():
    est = NoiseEstimator(1, 10.0)
    z = np.random.default_rng(2).normal(size=noise_module.BLOCK)
    for x in z:
        est.update(np.array([x]), 1e-3)
    w, v = est.covariances()
    assert not est.ready and w[0] == v[0] == pytest.approx(np.var(z) / 3)
    assert noise_module.WARMUP > noise_module.BLOCK


def test_external_torque_pulse_is_observed_and_detected(six_axis, noisy):
    """A 5 N·m pulse on joint 2 for 50 ms in the simulator: the observer's residual reaches it,
    the detector reports joint 2 within 10 ms, and nothing before the pulse."""
    sim, log, plan = noisy
    traj = trajectory(periods=1)
    sim2 = RobotSimulator(six_axis, config(traj.evaluate(0.0)[0][0]))
    before = run(sim2, plan.sample, 1500)
    pulse = np.zeros(N)
    pulse[1] = 5.0
    sim2.apply_external_torque(pulse, 0.05)
    after = run(sim2, plan.sample, 500)
    joined = {k: np.concatenate([before[k], after[k]]) for k in ('t', 'position', 'effort')}
    _, external, _ = estimate(truth_model(sim2), joined, plan)
    assert np.abs(external[200:1500]).max() < 1.0
    end = 1500 + 50
    assert external[end, 1] == pytest.approx(5.0, abs=0.3)
    assert np.abs(after['external'][:50, 1] - 5.0).max() == 0.0
    detector = CollisionDetector(np.full(N, 2.0), 0.002)
    events = [c for k in range(len(joined['t']))
              for c in detector.update(joined['t'][k], external[k])]
    assert [c.joint for c in events] == [1]
    assert 0 < events[0].time - joined['t'][1500] <= 0.010


def test_collision_detector_holds_and_rearms():
    d = CollisionDetector(np.array([1.0, 0.0]), 0.002)
    seen = [d.update(k * 1e-3, np.array([x, 50.0]))
            for k, x in enumerate([0.5, 1.5, 1.5, 1.5, 1.5, 0.2, -1.2, -1.2, -1.2])]
    flat = [(k, c.joint, c.onset) for k, events in enumerate(seen) for c in events]
    assert [(k, j) for k, j, _ in flat] == [(3, 0), (8, 0)]
    assert flat[0][2] == pytest.approx(1e-3) and flat[1][2] == pytest.approx(6e-3)



def test_collision_detector_reports_the_joints_in_collision_and_when_they_change():
    """Duration 2 ms: joint 0 crosses at sample 1 and is confirmed at 3, joint 1 crosses at 2
    and is confirmed at 4; joint 0 falls back within its threshold at 6, joint 1 at 7."""
    d = CollisionDetector(np.array([1.0, 1.0]), 0.002)
    samples = [[0.5, 0.0], [1.5, 0.0], [1.5, 2.0], [1.5, 2.0], [1.5, 2.0], [1.5, 2.0],
               [0.2, 2.0], [0.2, 0.1], [0.2, 0.1]]
    active, changed = [], []
    for k, x in enumerate(samples):
        d.update(k * 1e-3, np.array(x))
        active.append(d.active.tolist())
        changed.append(d.changed)
    assert active == [[], [], [], [0], [0, 1], [0, 1], [1], [], []]
    assert changed == [False, False, False, True, True, False, True, True, False]

# --- baselines and settings -----------------------------------------------------------------

def test_mean_filter_is_the_running_mean():
    y = np.random.default_rng(0).normal(size=(20, 2))
    f = MeanFilter(2, 5)
    out = np.array([f.update(row) for row in y])
    np.testing.assert_allclose(out[2], y[:3].mean(0))
    np.testing.assert_allclose(out[4:], [y[k - 4:k + 1].mean(0) for k in range(4, 20)])


def test_lowpass_is_scipys_butterworth_from_steady_state():
    rng = np.random.default_rng(1)
    y = 1.0 + 0.1 * rng.normal(size=(300, 2))
    f = LowpassFilter(30.0, 2)
    out = np.array([f.update(row, 0.0 if k == 0 else 1e-3) for k, row in enumerate(y)])
    start = DESIGN_SAMPLES
    np.testing.assert_array_equal(out[:start], y[:start])
    sos = scipy.signal.butter(2, 30.0, fs=1000.0, output='sos')
    zi = scipy.signal.sosfilt_zi(sos)[:, :, None] * y[start][None, None, :]
    np.testing.assert_allclose(out[start:], scipy.signal.sosfilt(sos, y[start:], axis=0,
                                                                 zi=zi)[0], atol=1e-12)


def test_covariance_settings():
    assert covariance('auto', 3, 'W') is None
    np.testing.assert_array_equal(covariance(0.5, 3, 'W'), 0.5 * np.eye(3))
    np.testing.assert_array_equal(covariance([1.0, 2.0, 3.0], 3, 'W'), np.diag([1.0, 2, 3]))
    full = [2.0, 0.5, 0.5, 1.0]
    np.testing.assert_array_equal(covariance(full, 2, 'W'), [[2.0, 0.5], [0.5, 1.0]])
    with pytest.raises(InputError, match='field W'):
        covariance([1.0, 2.0], 3, 'W')
    with pytest.raises(InputError, match='positive definite'):
        covariance([1.0, 2.0, 2.0, 1.0], 2, 'W')
    with pytest.raises(InputError, match='positive definite'):
        covariance([1.0, -1.0, 1.0], 3, 'W')


def test_full_covariances_give_the_diagonal_filter_when_diagonal(six_axis, noisy):
    sim, log, plan = noisy
    dm = truth_model(sim)
    short = {k: v[:300] for k, v in log.items()}
    diagonal = estimate(dm, short, plan, process_noise=1e-3, measurement_noise=0.04)[0]
    full = estimate(dm, short, plan, process_noise=list((1e-3 * np.eye(N)).ravel()),
                    measurement_noise=list((0.04 * np.eye(N)).ravel()),
                    initial_covariance=list((0.1 * np.eye(N)).ravel()))[0]
    np.testing.assert_allclose(full, diagonal, rtol=1e-9, atol=1e-9)


def test_bad_samples_are_refused(six_axis, noisy):
    sim, _, _ = noisy
    est = TorqueEstimator(truth_model(sim), TorqueEstimatorConfig())
    q = np.zeros(N)
    with pytest.raises(InputError, match='effort: not a finite number for joint\\(s\\) joint3'):
        est.step(0.0, q, [0, 0, math.nan, 0, 0, 0])
    with pytest.raises(InputError, match='position: 6 values expected'):
        est.step(0.0, np.zeros(5), np.zeros(N))
    assert est.step(0.0, q, np.zeros(N)) is not None
    assert est.step(0.0, q, np.zeros(N)) is None and est.repeats == 1
    with pytest.raises(InputError, match='older than the previous'):
        est.step(-1e-3, q, np.zeros(N))


# --- the command line ----------------------------------------------------------------------------

def estimate_cli(data, tmp_path, *extra, out='TORQUES.csv'):
    from datafiles import URDF

    from ident_core.cli import main

    return main(['estimate-torque', '--urdf', str(URDF), '--data', str(data),
                 '--out', str(tmp_path / out), *map(str, extra)])


def test_estimate_torque_writes_the_torques(csv_case, tmp_path, capsys):
    assert estimate_cli(csv_case.yaml, tmp_path, '--method', 'mean5') == 0
    out = capsys.readouterr().out
    assert 'method mean5' in out and 'torques written to' in out
    table = np.genfromtxt(tmp_path / 'TORQUES.csv', delimiter=',', names=True)
    joints = [f'joint{i}' for i in range(1, 7)]
    assert list(table.dtype.names) == ['t'] + [f'{kind}_{j}' for kind in
                                               ('measured', 'filtered', 'external')
                                               for j in joints]
    assert len(table) == len(csv_case.t)
    np.testing.assert_allclose(table['measured_joint2'], csv_case.tau[:, 1], rtol=1e-8)
    np.testing.assert_allclose(table['filtered_joint2'][4:],
                               np.convolve(csv_case.tau[:, 1], np.ones(5) / 5, 'valid'),
                               rtol=1e-6, atol=1e-9)


def test_estimate_torque_with_a_reference_and_settings(csv_case, tmp_path, capsys):
    from ident_core.excitation.fourier import FourierTrajectory

    joints = [f'joint{i}' for i in range(1, 7)]
    traj = FourierTrajectory(joints, 2 * math.pi / 10, np.zeros(N), np.full((N, 2), 0.01),
                             np.zeros((N, 2)), 1, 'slow')
    settings = tmp_path / 'estimator.yaml'
    settings.write_text('process_noise: 0.001\nmeasurement_noise: [0.01, 0.01, 0.01, 0.01, '
                        '0.01, 0.01]\ncollision_threshold: 1000.0\n')
    reference = traj.to_file().write(tmp_path / 't.yaml')
    assert estimate_cli(csv_case.yaml, tmp_path, '--reference', reference,
                        '--reference-start', 2.0, '--config', settings) == 0
    assert 'method kalman' in capsys.readouterr().out


@pytest.mark.parametrize('case', ['joints', 'config', 'out', 'reference-start', 'method'])
def test_estimate_torque_bad_input(case, csv_case, tmp_path, capsys):
    from datafiles import assert_one_line_error

    if case == 'joints':
        bad = csv_case.variant('renamed', update={'joints': [f'j{i}' for i in range(1, 7)]})
        rc = estimate_cli(bad, tmp_path)
        fragments = ('renamed.yaml', 'j1')
    elif case == 'config':
        settings = tmp_path / 'estimator.yaml'
        settings.write_text('proces_noise: 0.1\n')
        rc = estimate_cli(csv_case.yaml, tmp_path, '--config', settings)
        fragments = ('estimator.yaml', 'proces_noise')
    elif case == 'out':
        rc = estimate_cli(csv_case.yaml, tmp_path, out='good.csv/TORQUES.csv')
        fragments = ('--out', 'good.csv is a file, not a folder')
    elif case == 'reference-start':
        rc = estimate_cli(csv_case.yaml, tmp_path, '--reference', tmp_path / 't.yaml')
        fragments = ('--reference-start',)
    else:
        settings = tmp_path / 'estimator.yaml'
        settings.write_text('observer_gain: [1.0, 2.0]\n')
        rc = estimate_cli(csv_case.yaml, tmp_path, '--config', settings)
        fragments = ('observer_gain',)
    assert_one_line_error(rc, capsys, *fragments)
    assert not (tmp_path / 'TORQUES.csv').exists()


def test_estimate_torque_adds_the_simulators_true_torques(make_synthetic, tmp_path, capsys):
    """``--truth``: the true torques of a simulator's truth log (joints in another order),
    matched by header stamp, become the true_<joint> columns; a recording without stamps is
    refused."""
    import datafiles

    from ident_core.sim.simulator import GROUND_TRUTH_FORMAT

    dataset = make_synthetic()
    bag = datafiles.write_joint_state_bag(tmp_path / 'bag', dataset)
    truth = tmp_path / 'ground_truth'
    truth.mkdir()
    (truth / 'ground_truth.yaml').write_text(f'format: {GROUND_TRUTH_FORMAT}\n')
    offsets = np.arange(1.0, N + 1)                              # true = measured + offset
    order = np.arange(N)[::-1]
    np.savez(truth / 'truth_log.npz', stamp_ns=1_700_000_000 * 10**9 + np.round(
        dataset.t * 1e9).astype(np.int64), torque=(dataset.effort + offsets)[:, order],
             joint_names=np.array(dataset.joint_names)[order])
    assert estimate_cli(bag, tmp_path, '--method', 'mean5', '--truth', truth) == 0
    table = np.genfromtxt(tmp_path / 'TORQUES.csv', delimiter=',', names=True)
    for j, name in enumerate(dataset.joint_names):
        np.testing.assert_allclose(table[f'true_{name}'] - table[f'measured_{name}'],
                                   offsets[j], atol=1e-6)
    capsys.readouterr()
    assert estimate_cli(datafiles.write_npz(tmp_path / 'd.npz', dataset), tmp_path, '--truth',
                        truth) == 2
    assert 'is not a rosbag2' in capsys.readouterr().err
