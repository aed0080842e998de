"""The delay between torques and positions (issue 29 §3, docs/methods.md §3 *Torque delay*):
estimated per recording, compensated when significant, in identification and validation; and
the standstill at the ends of a log, left out (§6, *Standstill*).

Ground truth: synthetic runs of the UR5 of ``example-robot-data`` (``sim.synthetic``: RNEA with
perturbed inertias plus rotor inertia, viscous and Coulomb friction and offsets) at 1 kHz, with
the noise of a real log: torque noise of 1 % of each joint's RMS torque, encoders quantised to
1e-5 rad. The torques of a run are logged ``lag`` late (``tau_m(t) = tau(t − lag)``) exactly:
the motion is computed at twice the rate and the torques taken ``2·lag·rate`` fine samples back.
The validation recordings are the noise-free torques of another trajectory, with the same lag.
"""
import importlib.metadata
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ident_core.data.datasets import Dataset
from ident_core.estimation.blockwise import reduce
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.delay import DelayFit
from ident_core.estimation.identification import identify, validate
from ident_core.estimation.preprocessing import preprocess, standstill_rows
from ident_core.estimation.regression import regression_data, torque_signal
from ident_core.estimation.results import ResultFile, result_file
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.model.transmission import Transmission
from ident_core.sim.synthetic import (
    fourier_trajectory,
    perturbed_parameters,
    simulate_torques,
    synthetic_dataset,
)

RATE = 1000.0            # Hz
FINE = 2                 # the motion at FINE × RATE: lags of half a sample are exact
SECONDS = 20.0
NOISE = 0.01             # of each joint's RMS torque
ENCODER = 1e-5           # rad
CONFIG = IdentificationConfig(rotor_inertia=True)


def ur5_urdf() -> Path | None:
    """The UR5 of ``example-robot-data``, or None when the package is not installed."""
    try:
        dist = importlib.metadata.distribution('example-robot-data')
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file('cmeel.prefix/share/example-robot-data/robots/ur_description/'
                                 'urdf/ur5_robot.urdf'))
    return path if path.is_file() else None


pytestmark = pytest.mark.skipif(ur5_urdf() is None, reason='example-robot-data is not installed')


@pytest.fixture(scope='module')
def ur5():
    robot = load_robot(ur5_urdf())
    return robot, perturbed_parameters(robot, np.random.default_rng(1))


def run(ur5, seed: int, lag: float, noise: bool = True):
    """A 1 kHz recording whose torques are logged ``lag`` seconds late (negative: early)."""
    robot, truth = ur5
    margin = 100 * FINE
    data, tau = synthetic_dataset(robot, truth, SECONDS + 2 * margin / (RATE * FINE),
                                  RATE * FINE, seed)
    rows = np.arange(margin, len(data.t) - margin, FINE)
    logged = tau[rows - int(round(lag * RATE * FINE))]
    if noise:
        rng = np.random.default_rng(seed + 100)
        logged = logged + NOISE * np.sqrt(np.mean(tau ** 2, axis=0)) \
            * rng.standard_normal(logged.shape)
    return replace(data, source=f'run {seed}, lag {lag * 1e3:g} ms', t=data.t[rows] - data.t[
        rows[0]], position=np.round(data.position[rows] / ENCODER) * ENCODER, velocity=None,
        effort=logged)


def errors(ur5, lag: float, config=CONFIG, drop=None):
    """Identify a run with ``lag``, validate on another trajectory's noise-free torques with the
    same lag: (model, validation)."""
    recording = run(ur5, 3, lag)
    if drop is not None:
        keep = np.ones(len(recording.t), dtype=bool)
        keep[drop] = False
        recording = replace(recording, t=recording.t[keep], position=recording.position[keep],
                            effort=recording.effort[keep])
    model = identify(ur5[0], [recording], config)
    return model, validate(model, run(ur5, 4, lag, noise=False))


@pytest.fixture(scope='module')
def lag_free(ur5):
    return errors(ur5, 0.0)


def delay_of(model) -> dict:
    (entry,) = model.stats['torque_delay']
    return entry


def test_a_lag_free_run_reports_no_delay(lag_free):
    """|d| < 1 ms and nothing compensated, in identification and in validation."""
    model, validation = lag_free
    for fit in (delay_of(model), validation.torque_delay.report()):
        print(fit)
        assert abs(fit['delay_s']) < 1e-3 and not fit['compensated']
    assert validation.metrics['relative_error_percent'] < 0.1


@pytest.mark.parametrize('lag', [0.02, -0.02], ids=['torques late', 'torques early'])
def test_a_20_ms_lag_is_found_and_compensated(ur5, lag_free, lag):
    """Issue 29 §3: with the torques 20 ms late (or early), the delay is found within 0.1 ms
    (five samples' worth of noise margin on a ±0.02 ms standard deviation) and the validation
    error is within 1.2× the lag-free run's; without compensation it is over 10× (2.9 %)."""
    model, validation = errors(ur5, lag)
    base = lag_free[1].metrics['relative_error_percent']
    found = delay_of(model)
    error = validation.metrics['relative_error_percent']
    print(f'lag {lag * 1e3:+g} ms: found {found}, validation {error:.4f} % (lag-free '
          f'{base:.4f} %)')
    assert found['compensated'] and found['delay_s'] == pytest.approx(lag, abs=1e-4)
    assert validation.torque_delay.compensated
    assert validation.torque_delay.delay == pytest.approx(lag, abs=1e-4)
    assert error <= 1.2 * base
    assert any('torque delay' in line and 'compensated' in line
               for line in model.stats['preprocessing'])
    plain = validate(identify(ur5[0], [run(ur5, 3, lag)], CONFIG.updated(torque_delay='none')),
                     run(ur5, 4, lag, noise=False))
    assert plain.metrics['relative_error_percent'] > 10 * base


def test_a_sub_sample_delay_is_found(ur5, lag_free):
    """2.5 ms at 1 kHz (two and a half samples): found within 0.15 ms in identification and
    validation; the model predicts the lag-free torques within 1.2× the lag-free run's error.
    The margin: the Coulomb steps of the synthetic torques fall on whole samples, so half a
    sample of their timing is lost in the sampling (which is also why the lagged validation
    run itself, compensated, is scored 0.049 % rather than 0.041 %)."""
    model, validation = errors(ur5, 0.0025)
    found = delay_of(model)
    print(found, validation.torque_delay)
    assert found['compensated'] and found['delay_s'] == pytest.approx(0.0025, abs=1.5e-4)
    assert validation.torque_delay.delay == pytest.approx(0.0025, abs=1.5e-4)
    assert validate(model, run(ur5, 4, 0.0, noise=False)).metrics['relative_error_percent'] \
        <= 1.2 * lag_free[1].metrics['relative_error_percent']


def test_a_delay_on_a_log_split_at_a_gap(ur5, lag_free):
    """A second of rows missing in the middle splits the log into two segments; the delay is
    one per recording, found over both."""
    model, validation = errors(ur5, 0.02, drop=slice(9000, 10000))
    assert any('split' in line for line in model.stats['preprocessing']), \
        model.stats['preprocessing']
    assert delay_of(model)['delay_s'] == pytest.approx(0.02, abs=1e-4)
    assert validation.metrics['relative_error_percent'] \
        <= 1.2 * lag_free[1].metrics['relative_error_percent']


def test_a_given_delay_is_applied_and_none_leaves_the_torques(ur5, lag_free):
    model, validation = errors(ur5, 0.02, CONFIG.updated(torque_delay=0.02))
    assert delay_of(model) == {'data': 'run 3, lag 20 ms', 'delay_s': 0.02, 'std_s': 0.0,
                               'compensated': True, 'given': True,
                               'residual_improvement': 0.0}
    assert validation.metrics['relative_error_percent'] \
        <= 1.2 * lag_free[1].metrics['relative_error_percent']
    model = identify(ur5[0], [run(ur5, 3, 0.0)], CONFIG.updated(torque_delay='none'))
    assert 'torque_delay' not in model.stats
    assert not any('delay' in line for line in model.stats['preprocessing'])


def test_the_delays_go_into_result_yaml(lag_free):
    model, validation = lag_free
    content = ResultFile.model_validate(result_file(model, [validation.report()])
                                        .model_dump(mode='json'))
    assert content.config.torque_delay == 'auto'
    assert content.identification.torque_delay[0].data == 'run 3, lag 0 ms'
    assert content.validation[0].torque_delay.compensated is False


def test_config_takes_auto_none_or_seconds():
    assert IdentificationConfig().fixed_delay is None
    assert IdentificationConfig(torque_delay='none').fixed_delay == 0.0
    assert IdentificationConfig(torque_delay=0).fixed_delay == 0.0
    assert IdentificationConfig(torque_delay=-0.004).fixed_delay == -0.004


def test_delay_fit_lines():
    fit = DelayFit('log.csv', 0.0200, 1e-5, 0.5, True)
    assert fit.summary() == ('log.csv: torque delay +20 ms ± 0.01 ms (torques logged late): '
                             'compensated, residual 50 % lower')
    assert 'not significant' in DelayFit('log.csv', 1e-5, 1e-5, 0.5).summary()
    assert 'only 0.2 % lower' in DelayFit('log.csv', 1e-3, 1e-5, 0.002).summary()


@pytest.mark.parametrize('decimate', [0, 1, 100], ids=['automatic', 'none', 'anti-alias'])
def test_the_torque_signal_at_zero_delay_is_the_regression_torque(six_axis, make_synthetic,
                                                                  decimate):
    """``TorqueSignal.at(0)`` gives the regression rows' torques exactly, from ``preprocess``
    and from the block-wise reduction, whatever the decimation."""
    config = IdentificationConfig(decimate=decimate)
    data = make_synthetic()
    regressor = Regressor(six_axis, config.spec)
    base = compute_base_parameters(regressor)
    p = preprocess(data, six_axis, config)
    factor = p.decimation(decimate)
    tau = regression_data(regressor, base, p, factor)[1]
    np.testing.assert_array_equal(torque_signal(p, factor).at(0.0), tau)
    kept = reduce(data, regressor, base, config)
    np.testing.assert_allclose(kept.torque.at(0.0), tau, rtol=0, atol=1e-9 * np.abs(tau).max())


def run_from_rest(robot, truth, seed: int, rest: float = 2.0, hold: float = 3.0):
    """A 100 Hz recording of the robot standing still for ``rest`` seconds, a Fourier motion
    that starts and ends at rest (its deviation from the mean position faded in and out over
    a second by a C² smoothstep), then ``rest`` seconds still again; the torques at rest are
    ``hold`` N·m off the model (static friction, a controller's integrator), 0.05 N·m noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(round((20.0 + 2 * rest) * 100))) / 100
    q, qd, qdd = fourier_trajectory(robot, t - rest, rng)
    c = q.mean(axis=0)
    x = np.clip(np.minimum(t - rest, t[-1] - rest - t), 0.0, 1.0)[:, None]   # fade, [0, 1]
    side = np.where(t < t[-1] / 2, 1.0, -1.0)[:, None]         # d/dt of the fade's argument
    e, e1, e2 = (x ** 3 * (10 - 15 * x + 6 * x ** 2), side * 30 * x ** 2 * (1 - x) ** 2,
                 60 * x * (1 - x) * (1 - 2 * x))
    u = q - c
    position, velocity = c + e * u, e1 * u + e * qd
    tau = simulate_torques(robot, truth, position, velocity, e2 * u + 2 * e1 * qd + e * qdd)
    still = (t < rest) | (t > t[-1] - rest)
    effort = tau + np.where(still, 1.0, 0.0)[:, None] * np.where(t < rest, hold, -hold)[:, None]
    effort = effort + 0.05 * rng.standard_normal(effort.shape)
    return Dataset(f'from rest {seed}', list(robot.joint_names), t, position, None, effort,
                   Transmission.identity(robot.n))


def test_the_standstill_at_the_ends_of_a_log_is_left_out(six_axis, truth):
    """Issue 29 §6: two seconds of standstill before and after a motion, held 3 N·m off the
    model, are left out and said so: the model fits and validates (on another such run) as
    well as when the standstill holds the model's torque, within 10 % (measured: 1.48 % and
    1.20 % against 1.56 % and 1.22 %); with ``trim_standstill`` off the fit and the validation
    error grow tenfold (16.4 %, 15.7 %)."""
    config = IdentificationConfig(torque_delay='none')
    padded, other = run_from_rest(six_axis, truth, 3), run_from_rest(six_axis, truth, 4)
    model = identify(six_axis, [padded], config)
    (line,) = [x for x in model.stats['preprocessing'] if 'standing still' in x]
    first, last = (float(x) for x in re.findall(r'the (?:first|last) ([\d.]+) s', line))
    assert 1.5 < first < 2.0 and 1.5 < last < 2.0, line      # less the filter's margin
    fair = identify(six_axis, [run_from_rest(six_axis, truth, 3, hold=0.0)], config)
    errors = {name: (m.stats['relative_error_percent'],
                     validate(m, other).metrics['relative_error_percent'])
              for name, m in (('held', model), ('fair', fair))}
    kept = identify(six_axis, [padded], config.updated(trim_standstill=False))
    errors['kept'] = (kept.stats['relative_error_percent'],
                      validate(kept, other).metrics['relative_error_percent'])
    print(errors)
    assert all(h <= 1.1 * f for h, f in zip(errors['held'], errors['fair']))
    assert not any('standing still' in x for x in kept.stats['preprocessing'])
    assert min(errors['kept']) > 5 * max(errors['held'])


def test_a_log_that_moves_throughout_keeps_every_row(make_synthetic):
    data = make_synthetic()
    assert standstill_rows(data.t, data.position, 10.0) == (0, data.samples)
