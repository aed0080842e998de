"""The nodes' health (``ident_core.monitoring``): statistics against closed forms, the Kalman
filter's innovation against the steady-state Riccati solution, and each task's level and
reason against known injected errors and limits."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ident_core.monitoring.checks import (
    estimator_status,
    identification_status,
    realtime_status,
    recording_status,
    tracking_status,
)
from ident_core.monitoring.statistics import (
    InnovationStatistics,
    RealtimeMonitor,
    RunningStatistics,
    SampleWindow,
)
from ident_core.monitoring.status import Level, format_value, make_status
from ident_core.motion.watchdog import tracking_error


def test_running_statistics_match_their_closed_forms():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 3)) * [1.0, 2.0, 0.5] + [0.0, 1.0, -3.0]
    stats = RunningStatistics(3)
    assert stats.count == 0 and np.isnan(stats.rms).all() and not stats.max_abs.any()
    for row in x:
        stats.add(row)
    assert stats.count == 200
    np.testing.assert_allclose(stats.mean, x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(stats.rms, np.sqrt((x ** 2).mean(axis=0)), rtol=1e-12)
    np.testing.assert_array_equal(stats.max_abs, np.abs(x).max(axis=0))
    np.testing.assert_array_equal(stats.last, x[-1])
    stats.reset()
    assert stats.count == 0


def test_sample_window_keeps_the_latest_values_and_their_percentiles():
    window = SampleWindow(1000)
    assert math.isnan(window.percentile(50)) and math.isnan(window.maximum())
    for value in range(1, 1501):              # 1 … 1500: the window holds 501 … 1500
        window.add(float(value))
    assert window.count == 1000 and window.total == 1500
    np.testing.assert_array_equal(window.values(), np.arange(501, 1501))
    assert window.percentile(50) == 1000.5
    assert window.percentile(95) == pytest.approx(np.percentile(np.arange(501, 1501), 95),
                                                  abs=1e-12)
    assert window.maximum() == 1500.0
    with pytest.raises(ValueError):
        SampleWindow(0)


def test_innovation_statistics_normalise_by_the_predicted_variance():
    stats = InnovationStatistics(2, gate=4.0)
    for sign in (1.0, -1.0) * 50:
        stats.add(np.array([1.0, 2.0]) * sign, np.array([1.0, 4.0]))
    np.testing.assert_allclose(stats.rms, [1.0, 2.0])
    np.testing.assert_allclose(stats.nis, [1.0, 1.0])
    assert stats.outliers == 0
    stats.add(np.array([0.0, 8.1]), np.array([1.0, 4.0]))    # 8.1 > 4·√4
    assert stats.outliers == 1 and stats.outlier_fraction == pytest.approx(1 / 101)


def test_kalman_innovation_of_a_torque_step_against_the_steady_state_riccati_solution(urdf):
    """The arm at rest, its reference constant and the measured torque its gravity torque:
    every prediction is exact, the innovation 0. A step of 1 N·m on joint 2 is an innovation
    of exactly 1 N·m, whose predicted variance is the steady state of the scalar Riccati
    recursion ``M = P + W``, ``P = M V / (M + V)``: ``M = (W + √(W² + 4WV)) / 2``, ``S = M + V``.
    """
    from ident_core.torque_estimation.config import TorqueEstimatorConfig
    from ident_core.torque_estimation.dynamics import inverse_dynamics, load_dynamic_model
    from ident_core.torque_estimation.estimator import TorqueEstimator

    w = v = 0.01
    dm = load_dynamic_model(None, str(urdf))
    estimator = TorqueEstimator(dm, TorqueEstimatorConfig(
        method='kalman', linearization='reference', initial_covariance=0.1, process_noise=w,
        measurement_noise=v))
    q, zero = np.array([0.0, -0.5, 0.8, 0.0, 0.5, 0.0]), np.zeros(dm.n)
    gravity = inverse_dynamics(dm, dm.create_data(), q, zero, zero)
    reference = (q, zero, zero)
    for k in range(400):
        estimator.step(k * 1e-3, q, gravity, reference)
    stats = estimator.innovations
    assert stats.count == 399                       # the first sample initialises the filter
    np.testing.assert_allclose(stats.rms, 0.0, atol=1e-9)
    stats.reset()
    step = gravity.copy()
    step[1] += 1.0
    estimator.step(0.4, q, step, reference)
    m = (w + math.sqrt(w * w + 4 * w * v)) / 2
    expected = np.zeros(dm.n)
    expected[1] = 1.0 / (m + v)
    np.testing.assert_allclose(stats.rms, np.eye(dm.n)[1], atol=1e-9)
    np.testing.assert_allclose(stats.nis, expected, rtol=1e-6, atol=1e-12)
    assert stats.outliers == 1                      # 1 N·m > 4·√S = 0.65 N·m


def test_tracking_error_of_a_known_offset():
    commanded = np.array([0.3, -1.0, 0.05])
    errors = RunningStatistics(3)
    for offset in ([0.1, -0.2, 0.0], [0.0, 0.3, 0.01], [-0.05, 0.1, 0.0]):
        errors.add(tracking_error(commanded + offset, commanded))
    status = tracking_status(joint_names=['a', 'b', 'c'], prismatic=[False, False, True],
                             errors=errors, limit=np.array([0.5, 0.5, 0.02]),
                             warning_fraction=0.5, running=True, failure='')
    # b: 0.3 rad = 0.6 of its limit, c: 0.01 m = 0.5 (not above)
    assert status.level == Level.WARN
    assert status.message.startswith('b tracking error 0.3 rad is above 0.5 of its limit')
    assert status.task == 'excitation tracking'
    assert float(status.values['b.tracking_error_max_rad']) == pytest.approx(0.3)
    assert float(status.values['c.tracking_error_max_m']) == pytest.approx(0.01)
    assert float(status.values['b.tracking_error_rms_rad']) == pytest.approx(
        math.sqrt((0.04 + 0.09 + 0.01) / 3), rel=1e-5)      # 6 significant digits
    assert float(status.values['tracking_error_max_ratio']) == pytest.approx(0.6)
    assert status.values['worst_joint'] == 'b' and status.values['samples'] == '3'
    stopped = tracking_status(joint_names=['a', 'b', 'c'], prismatic=[False] * 3,
                              errors=errors, limit=np.array([0.5, 0.5, 0.02]),
                              warning_fraction=0.7, running=False, failure='b is 0.6 from it')
    assert stopped.level == Level.ERROR and stopped.message == 'motion stopped: b is 0.6 from it'
    idle = tracking_status(joint_names=['a'], prismatic=[False], errors=None,
                           limit=np.array([0.5]), warning_fraction=0.5, running=False,
                           failure='')
    assert idle.level == Level.OK and idle.message == 'no motion yet'


def _recording(**changes):
    values = dict(recording=True, experiment='ident', joint_state_messages=9900,
                  expected_samples=10000, dropped=50, late=20, out_of_order=0,
                  lost_seconds=0.0, recording_time=10.0, silence=0.001, late_threshold=0.05,
                  lost_warning_fraction=0.01, stream_timeout=3.0)
    return recording_status(**{**values, **changes})


def test_recording_status_levels_and_reasons():
    ok = _recording()             # 50 of 9950 dropped (0.5 %), 20 late (0.2 %)
    assert ok.level == Level.OK and ok.task == 'recording'
    assert ok.values['dropped_samples'] == '50' and ok.values['late_samples'] == '20'
    assert float(ok.values['dropped_fraction']) == pytest.approx(50 / 9950)
    dropped = _recording(dropped=200)
    assert dropped.level == Level.WARN and dropped.message.startswith('200 samples dropped')
    late = _recording(late=90, out_of_order=30)              # 120 of 9900 > 1 %
    assert late.level == Level.WARN
    assert late.message.startswith('90 late (> 0.05 s) and 30 out-of-order samples')
    silent = _recording(silence=4.0, lost_seconds=0.5)
    assert silent.level == Level.ERROR
    assert silent.message.startswith('no joint_states for 4.0 s (limit 3 s); 0.500 s of')
    last = _recording(recording=False, silence=None, dropped=200)
    assert last.level == Level.WARN and last.message.startswith('last recording ident: 200')
    idle = _recording(recording=False, experiment='', silence=None)
    assert idle.level == Level.OK and idle.message == 'idle, nothing recorded yet'


def test_identification_status_levels_and_units():
    stats = {'condition_number': 1500.0, 'relative_error_percent': 2.0,
             'residual_rms': [0.5, 0.25, 3.0], 'samples': 3000}
    status = identification_status(
        joint_names=['j1', 'j2', 'j3'], prismatic=[False, False, True], stats=stats,
        validation_relative_error_percent=12.5, identifications=1, failure='',
        condition_number_warning=1000.0, relative_error_warning_percent=10.0)
    assert status.level == Level.WARN
    assert status.message == ('condition number 1500 > 1000: the trajectory excites the '
                              'parameters poorly; validation relative error 12.5 % > 10 %')
    assert status.values['j1.residual_rms_Nm'] == '0.5'
    assert status.values['j3.residual_rms_N'] == '3'
    assert status.values['condition_number'] == '1500'
    failed = identification_status(
        joint_names=['j1'], prismatic=[False], stats=None,
        validation_relative_error_percent=None, identifications=0, failure='bag empty',
        condition_number_warning=1000.0, relative_error_warning_percent=10.0)
    assert failed.level == Level.ERROR
    assert failed.message == 'the latest identification failed: bag empty'
    assert failed.values['j1.residual_rms_Nm'] == 'nan'


def test_estimator_status_latency_percentiles_and_refusals():
    latency, compute = SampleWindow(100), SampleWindow(100)
    for k in range(100):                   # 1 … 100 ms
        latency.add((k + 1) * 1e-3)
        compute.add(2e-4)
    innovations = InnovationStatistics(2, gate=4.0)
    innovations.add(np.array([0.3, 0.0]), np.array([0.01, 0.01]))       # NIS 9 on joint a
    common = dict(joint_names=['a', 'b'], prismatic=[False, True], method='kalman',
                  identified=True, period=1.0, latency=latency, compute_time=compute,
                  nis_warning=5.0)
    status = estimator_status(samples=1000, refused=0, innovations=innovations,
                              latency_warning=0.2, **common)
    assert status.level == Level.WARN and status.task == 'torque estimation'
    assert status.message.startswith('a innovation 9 times its predicted variance')
    assert float(status.values['latency_p50_s']) == pytest.approx(0.0505)
    assert float(status.values['latency_p95_s']) == pytest.approx(0.09505)
    assert float(status.values['latency_max_s']) == pytest.approx(0.1)
    assert float(status.values['a.innovation_rms_Nm']) == pytest.approx(0.3)
    assert status.values['b.innovation_nis'] == '0'
    slow = estimator_status(samples=1000, refused=0, innovations=None, latency_warning=0.05,
                            **common)
    assert slow.level == Level.WARN and slow.message == ('latency 95 ms (95th percentile) '
                                                         '> 50 ms')
    assert slow.values['a.innovation_nis'] == 'nan'
    refused = estimator_status(samples=0, refused=5, innovations=None, latency_warning=0.2,
                               **common)
    assert refused.level == Level.ERROR and refused.message.startswith('5 of 5 joint_states')


def test_realtime_lag_and_overruns():
    monitor = RealtimeMonitor()
    monitor.update(0.0105, 0.011, 1)           # keeping up: lag 0
    assert monitor.lag == 0.0
    monitor.update(0.5, 0.25, 50)              # a starved process: 0.25 s behind
    monitor.update(0.51, 0.30, 50)
    status = realtime_status(monitor=monitor, control_period=0.001, lag_warning=0.1,
                             lag_error=1.0)
    assert status.level == Level.WARN
    assert status.message == '0.250 s behind the wall clock (> 0.1 s)'
    assert status.values['overruns'] == '2' and status.values['steps'] == '101'
    assert float(status.values['lag_s']) == pytest.approx(0.21)
    monitor.reset_period()
    monitor.update(2.0, 0.5, 50)
    status = realtime_status(monitor=monitor, control_period=0.001, lag_warning=0.1,
                             lag_error=1.0)
    assert status.level == Level.ERROR and status.values['overruns'] == '1'
    assert status.values['overruns_total'] == '3'


def test_status_takes_the_worst_level_and_formats_values():
    status = make_status('t', [(Level.WARN, 'w'), (Level.OK, 'fine'), (Level.ERROR, 'e')],
                         {'x_s': 0.1234567, 'n': 3, 'flag': True, 'none': None,
                          'big': float('inf')}, 'all good')
    assert status.level == Level.ERROR and status.message == 'e; w'
    assert status.values == {'x_s': '0.123457', 'n': '3', 'flag': 'true', 'none': '',
                             'big': 'inf'}
    assert make_status('t', [], {}, 'all good').message == 'all good'
    assert format_value(np.float64(2.5)) == '2.5'


def test_innovations_count_once_the_noise_estimate_is_warmed_up(urdf):
    """The arm at rest, then moving, its torques with a little noise and the noise covariances
    estimated: before the estimate is warmed up the innovations' variances are near 0 (the
    variogram of the first few samples), so the statistics leave them out and stay finite."""
    from ident_core.torque_estimation.config import TorqueEstimatorConfig
    from ident_core.torque_estimation.dynamics import inverse_dynamics, load_dynamic_model
    from ident_core.torque_estimation.estimator import TorqueEstimator

    dm = load_dynamic_model(None, str(urdf))
    estimator = TorqueEstimator(dm, TorqueEstimatorConfig(method='kalman',
                                                          linearization='reference'))
    rng = np.random.default_rng(0)
    q0 = np.array([0.0, -0.5, 0.8, 0.0, 0.5, 0.0])
    data = dm.create_data()
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        for k in range(3000):
            t = k * 1e-3
            a = 0.0 if k < 300 else 0.2 * np.sin(2 * np.pi * 0.5 * (t - 0.3))
            q, qd = q0 + a, np.full(dm.n, 0.0 if k < 300 else 0.2 * np.pi * np.cos(
                2 * np.pi * 0.5 * (t - 0.3)))
            qdd = np.full(dm.n, 0.0 if k < 300 else -0.2 * np.pi ** 2 * np.sin(
                2 * np.pi * 0.5 * (t - 0.3)))
            tau = inverse_dynamics(dm, data, q, qd, qdd) + rng.normal(0.0, 1e-4, dm.n)
            estimator.step(t, q, tau, (q, qd, qdd))
    stats = estimator.innovations
    assert 0 < stats.count < 2999
    assert np.isfinite(stats.nis).all()
