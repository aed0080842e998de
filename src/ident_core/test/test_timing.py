"""Time stamps of real loggers (``data.timing``, ``data.recorded_velocity``): nominal rate, repeated
rows, fixed-rate clocks behind jittery stamps, resampling, gaps bridged or split, the one-line
summary, the recorded-velocity decision; and the acceptance run of a simulated 7-axis arm logged
by a non-real-time logger."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from datafiles import write_npz, write_yaml
from helpers import KUKA_DIR, KUKA_MISSING, REPO

from ident_core.cli import main
from ident_core.data.datasets import load_dataset
from ident_core.data.timing import TimeBase, analyse, nominal_period
from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.estimation.preprocessing import Processed, preprocess, trim_samples
from ident_core.estimation.regression import regression_data
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import (
    fourier_trajectory,
    perturbed_parameters,
    simulate_torques,
    synthetic_dataset,
)

SEVEN_AXIS = REPO / 'src' / 'ident_core' / 'test' / 'data' / 'seven_axis.urdf'
RATE = 1000.0                 # Hz, the simulated controller
T = 1 / RATE


def polling_logger(controller, rng, sigma=0.16, stalls=4, stall_periods=8):
    """What a non-real-time logger records of a controller running at ``RATE``.

    It reads the controller's latest cycle at moments of its own: log-normal intervals of median
    one period (``sigma`` 0.16: ±16 % jitter), so it reads some cycles twice (a repeated row,
    about 6 %) and misses others; ``stalls`` times it stalls for ``stall_periods`` periods. The
    stamps are the moments of reading.
    """
    n = controller.samples
    dt = T * rng.lognormal(0.0, sigma, size=int(1.2 * n))
    dt[rng.choice(np.arange(len(dt) // 10, len(dt) // 2), size=stalls, replace=False)] \
        += stall_periods * T
    reads = T * rng.uniform() + np.cumsum(dt)
    cycle = np.floor(reads[reads < (n - 1) * T] / T).astype(int)
    return replace(controller, source='polled', t=1000.0 + reads[:len(cycle)],
                   position=controller.position[cycle], velocity=controller.velocity[cycle],
                   effort=controller.effort[cycle]), cycle


@pytest.fixture(scope='module')
def arm7():
    robot = load_robot(SEVEN_AXIS)
    return robot, perturbed_parameters(robot, np.random.default_rng(1))


# --- acceptance ---------------------------------------------------------------------------------

def test_polled_log_identifies_as_well_as_a_uniform_one(arm7, tmp_path):
    robot, truth = arm7
    controller, _ = synthetic_dataset(robot, truth, 10, RATE, seed=5, torque_noise=0.5)
    check, clean = synthetic_dataset(robot, truth, 10, RATE, seed=105, torque_noise=0.5)
    logged, _ = polling_logger(controller, np.random.default_rng(5))
    path = write_npz(tmp_path / 'polled.npz', logged)
    irregular = load_dataset(path, robot.joint_names)
    intervals = np.diff(logged.t) / T
    assert intervals.min() < 0.75 and 8.5 < intervals.max() < 10     # 0.7× to 9× nominal
    assert 0.05 < irregular.repeated / logged.samples < 0.07          # 6 % repeated rows

    config = IdentificationConfig(rotor_inertia=True, estimator='wls')
    uniform = identify(robot, [controller], config)
    polled = identify(robot, [irregular], config)
    clock, velocity = polled.stats['preprocessing']
    assert re.fullmatch(r'polled\.npz: fixed-rate clock 1 kHz \(logger stamps jitter 1\d %\), '
                        r'[\d ]+ rows on 9 99\d cycles: [\d ]+ repeated rows dropped, 4 gaps '
                        r'bridged', clock), clock
    assert velocity.startswith('polled.npz: recorded velocity used'), velocity
    # a separate run logged uniformly, against its measured and its noise-free torques
    for reference in (check, replace(check, effort=clean)):
        errors = [validate(m, reference).metrics['relative_error_percent']
                  for m in (uniform, polled)]
        print(f'validation error: uniform log {errors[0]:.3f} %, polled log {errors[1]:.3f} % '
              f'(ratio {errors[1] / errors[0]:.3f})')
        assert errors[1] <= 1.2 * errors[0]


# --- nominal rate and clocks --------------------------------------------------------------------

def sine(t):
    return np.column_stack([np.sin(2 * np.pi * 0.5 * t), np.cos(2 * np.pi * 0.3 * t)])


def test_nominal_rate_snaps_to_a_common_controller_rate():
    rng = np.random.default_rng(0)
    stamps = 0.002 * np.arange(2000) + rng.uniform(0, 0.0005, 2000)
    assert nominal_period(stamps) == pytest.approx(0.002, rel=1e-12)
    odd = np.cumsum(rng.uniform(0.9, 1.1, 2000)) / 650.0               # no controller rate
    assert 1 / nominal_period(odd) == pytest.approx(650, rel=0.01)


def test_uniform_stamps_are_left_alone():
    t = np.arange(1000) / 100.0
    base = analyse(t, sine(t), 10.0, source='u.csv')
    assert base.clock == 'uniform' and base.segments == [(0, 1000)]
    np.testing.assert_array_equal(base.resample(sine(t), smooth=True)[0], sine(t))
    assert base.summary() == 'u.csv: uniform 100 Hz clock, 1 000 rows'


def test_jittery_stamps_of_a_fixed_rate_controller_give_its_clock():
    rng = np.random.default_rng(1)
    cycles = 0.005 * np.arange(3000)
    stamps = cycles + rng.uniform(0, 0.0015, 3000)                    # late by 0–30 % of T
    base = analyse(stamps, sine(cycles), 10.0, source='kuka.npz')
    assert base.clock == 'fixed_rate'
    np.testing.assert_allclose(np.diff(base.times), 0.005, rtol=1e-4)
    np.testing.assert_allclose(base.times - base.times[0], cycles, atol=1e-4)   # < T / 50
    assert re.fullmatch(r'kuka\.npz: fixed-rate clock 200 Hz \(logger stamps jitter \d+ %\), '
                        r'3 000 rows', base.summary()), base.summary()


def test_polling_logger_is_put_back_on_the_controller_cycles():
    rng = np.random.default_rng(2)
    reads = 0.37 * T + np.cumsum(T * rng.lognormal(0, 0.2, 6000))
    cycle = np.floor(reads / T)
    fresh = np.concatenate([[True], np.diff(cycle) > 0])            # repeated reads dropped
    stamps, cycle = reads[fresh], cycle[fresh]
    base = analyse(stamps, sine(cycle * T), 10.0)
    assert base.clock == 'fixed_rate'
    np.testing.assert_array_equal(np.rint(np.diff(base.times) / T), np.diff(cycle))


def test_irregular_sampling_is_resampled_by_its_stamps():
    rng = np.random.default_rng(3)
    stamps = np.cumsum(T * rng.lognormal(0, 0.2, 6000))             # sampled at the stamps
    base = analyse(stamps, sine(stamps), 10.0, source='irregular.csv')
    assert base.clock == 'stamps' and base.period == T
    [grid] = [base.grid(s) for s in base.segments]
    np.testing.assert_allclose(np.diff(grid), T, rtol=1e-9)
    [q] = base.resample(sine(stamps), smooth=True)
    np.testing.assert_allclose(q, sine(grid), atol=1e-8)
    [tau] = base.resample(sine(stamps), smooth=False)
    np.testing.assert_allclose(tau, sine(grid), atol=1e-4)
    assert base.summary().startswith('irregular.csv: resampled 6 000 rows to 1 kHz (stamps '
                                     'jitter')


@pytest.mark.parametrize('rate, text', [(950.0, '950 Hz'), (1024.0, '1.024 kHz'),
                                        (480.0, '480 Hz')])
def test_uniform_log_off_the_listed_rates_keeps_its_rate(rate, text):
    t = 5.0 + np.arange(5000) / rate
    base = analyse(t, sine(t), 10.0, source='u.npz')
    assert base.clock == 'uniform' and base.rate == pytest.approx(rate, rel=1e-9)
    [q] = base.resample(sine(t), smooth=True)
    np.testing.assert_array_equal(q, sine(t))                           # not resampled
    assert base.summary() == f'u.npz: uniform {text} clock, 5 000 rows'


def test_jittery_stamps_of_a_controller_off_the_listed_rates_give_its_clock():
    rate = 1024.0
    cycles = np.arange(6000) / rate
    stamps = 3.0 + cycles + np.random.default_rng(4).uniform(0, 0.3 / rate, 6000)
    base = analyse(stamps, sine(cycles), 10.0, source='j.npz')
    assert base.clock == 'fixed_rate' and base.rate == pytest.approx(rate, rel=1e-6)
    np.testing.assert_allclose(base.times - base.times[0], cycles, atol=0.01 / rate)
    assert base.summary().startswith('j.npz: fixed-rate clock 1.024 kHz (logger stamps jitter')


def test_stamps_rounded_to_the_millisecond_identify_as_well_as_exact_ones(six_axis, truth):
    rate = 2000.0
    exact, _ = synthetic_dataset(six_axis, truth, 6, rate, seed=11, torque_noise=0.05)
    check, clean = synthetic_dataset(six_axis, truth, 6, rate, seed=111, torque_noise=0.05)
    late = np.random.default_rng(11).uniform(0, 0.2 / rate, exact.samples)
    rounded = replace(exact, source='rounded.npz', t=np.round(exact.t + 3e-4 + late, 3))
    assert np.sum(np.diff(rounded.t) == 0) > 0.4 * exact.samples      # most stamps shared
    # no decimation: one grid row more or less (the last row, alone on its stamp after a pair,
    # lands a cycle late) would change the rows decimation keeps, and with them the estimate
    config = IdentificationConfig(rotor_inertia=True, estimator='wls', decimate=1)
    models = [identify(six_axis, [d], config) for d in (exact, rounded)]
    clock = models[1].stats['preprocessing'][0]
    assert re.fullmatch(r'rounded\.npz: fixed-rate clock 2 kHz \(logger stamps jitter [\d.]+ %, '
                        r'[\d ]+ duplicated\), 12 000 rows( on 12 00\d cycles)?', clock), clock
    errors = [validate(m, replace(check, effort=clean)).metrics['relative_error_percent']
              for m in models]
    print(f'validation error: exact stamps {errors[0]:.4f} %, rounded {errors[1]:.4f} %')
    assert errors[1] <= 1.05 * errors[0]


# --- gaps ---------------------------------------------------------------------------------------

def with_gap(periods, rate=1000.0, n=4000, at=2000):
    t = np.arange(n) / rate
    t[at:] += (periods - 1) / rate
    return t


@pytest.mark.parametrize('cutoff, bridged, split', [(10.0, 1, []), (20.0, 0, [0.008])])
def test_gap_is_bridged_or_split_by_the_cutoff(cutoff, bridged, split):
    t = with_gap(8)                                                     # 8 ms
    base = analyse(t, sine(t), cutoff, source='gap.npz')
    assert base.bridged == bridged
    np.testing.assert_allclose(base.split, split)
    assert len(base.segments) == 1 + len(split)
    # ≤ a tenth of the cut-off period (10 ms at 10 Hz) bridges, a longer gap splits
    event = '1 gap bridged' if bridged else '1 gap of 0.008 s split'
    assert base.summary() == f'gap.npz: uniform 1 kHz clock, 4 000 rows on 4 007 cycles: {event}'
    # the values across the gap: a component at the cut-off frequency, within the error bounds
    # of the module docstring (spline (2π f g)⁴/384, linear (π f g)²/2 of the amplitude)
    wave = np.sin(2 * np.pi * cutoff * t + 0.3)[:, None]
    gap = 0.008
    for smooth, bound in ((True, (2 * np.pi * cutoff * gap) ** 4 / 384),
                          (False, (np.pi * cutoff * gap) ** 2 / 2)):
        for grid, values in zip([base.grid(s) for s in base.segments],
                                base.resample(wave, smooth)):
            truth = np.sin(2 * np.pi * cutoff * grid + 0.3)[:, None]
            assert np.max(np.abs(values - truth)) <= bound
            if not bridged:                      # split: every grid point is a sample
                np.testing.assert_allclose(values, truth, rtol=0, atol=1e-12)


def test_log_of_segments_all_too_short_says_so():
    t = np.arange(4000) / 1000.0 + 0.1 * (np.arange(4000) // 50)     # 0.1 s lost every 50 rows
    base = analyse(t, sine(t), 10.0, source='bits.npz')
    assert len(base.segments) == 80
    with pytest.raises(InputError, match=r'^bits\.npz: all 80 segments between the gaps are too '
                                         r'short \(longest 50 samples; more than 60 needed at '
                                         r'1 kHz .*\); the log was split at 79 gaps of up to '
                                         r'0\.101 s'):
        base.without_short(60)


def test_trim_and_decimation_round_the_rate_first():
    assert trim_samples(200.00000000000006, 10.0) == 60
    p = Processed('x', 199.99999999999997, 10.0, 4, 60, *[np.zeros((1, 1))] * 5)
    assert p.decimation(0) == 8


def test_short_segment_is_dropped_and_counted():
    t = with_gap(500, at=3700)                                         # last 0.3 s after 0.5 s
    base = analyse(t, sine(t), 10.0, source='tail.npz').without_short(600)
    assert base.segments == [(0, 3700)] and base.short == 1
    assert base.summary().endswith('1 gap of 0.5 s split, 1 segment shorter than 0.6 s dropped')
    with pytest.raises(InputError, match='tail.npz: 3700 samples are too few'):
        base.without_short(4000)


def test_summary_line():
    base = TimeBase('/logs/m1.npz', 'stamps', 0.001, np.arange(20544) * 0.001, [(0, 20544)],
                    bridged=4, split=[0.35], jitter=0.25, repeated=1255)
    assert base.summary() == ('m1.npz: resampled 20 544 rows to 1 kHz (stamps jitter 25 %): '
                              '1 255 repeated rows dropped, 4 gaps bridged, 1 gap of 0.35 s split')
    # lengths equal to the precision shown are shown once
    assert replace(base, split=[0.0211, 0.0214]).summary().endswith('2 gaps of 0.021 s split')
    assert replace(base, split=[0.0211, 0.35]).summary().endswith('2 gaps of 0.021–0.35 s split')


def test_split_log_is_filtered_and_identified_segment_by_segment(six_axis, make_synthetic):
    data = make_synthetic()                                             # 20 s at 100 Hz
    keep = np.r_[0:900, 1000:data.samples]                              # 1 s lost after 9 s
    cut = replace(data, t=data.t[keep], position=data.position[keep],
                  effort=data.effort[keep], velocity=None)
    config = IdentificationConfig(estimator='wls')
    p = preprocess(cut, six_axis, config)
    assert p.segments == ((0, 900), (900, 1900))
    assert p.summary == [f'{cut.source}: uniform 100 Hz clock, 1 900 rows on 2 000 cycles: '
                         '1 gap of 1 s split']
    regressor = Regressor(six_axis, config.spec, cut.transmission)
    base = compute_base_parameters(regressor)
    w, tau = regression_data(regressor, base, p, 2)
    rows = sum(len(range(p.trim, m - p.trim, 2)) for m in (900, 1000))    # each one trimmed
    assert len(w) == len(tau) == rows == len(p.reversal_mask(regressor.gear, 2, 0.1))
    assert len(p.trimmed(p.t)) == 1900 - 4 * p.trim
    v = validate(identify(six_axis, [cut], config), cut)
    assert len(v.t) == len(v.measured) and np.max(np.diff(v.t)) > 1.5   # the jump at the split
    assert v.metrics['relative_error_percent'] < 5


# --- loading: repeated rows and shared stamps ---------------------------------------------------

def test_repeated_rows_are_kept_on_loading_and_rereads_dropped(csv_case, six_axis):
    rows = np.r_[0:500, 499, 499, 500:1000, 999, 1000:2000]             # three repeats
    t = csv_case.t[rows].copy()
    t[501] += 0.004                                                      # read again 4 ms later
    d = load_dataset(csv_case.variant('repeats', t=t, q=csv_case.q[rows], tau=csv_case.tau[rows]))
    assert d.samples == 2003 and d.repeated == 3
    np.testing.assert_array_equal(d.position, csv_case.q[rows])
    first, last = d.split(0.5)
    assert (first.repeated, last.repeated) == (2, 0)       # row 999 again opens the last half
    summary = preprocess(d, six_axis, IdentificationConfig()).summary
    assert summary == ['repeats.yaml: uniform 100 Hz clock, 2 000 rows: 3 repeated rows dropped']


def test_shared_stamp_is_put_on_its_own_cycle(csv_case):
    t = csv_case.t.copy()
    t[700] = t[699]                                    # stamped with the previous cycle's time
    d = load_dataset(csv_case.variant('same', t=t))
    base = analyse(d.t, d.position, 10.0, source=d.source, repeats=d.repeat_mask())
    assert base.clock == 'fixed_rate' and base.duplicated == 1
    np.testing.assert_allclose(base.times - base.times[0], csv_case.t - csv_case.t[0], atol=1e-9)


def test_shared_stamps_are_refused_when_no_clock_explains_them(csv_case):
    t = csv_case.t.copy()
    t[700:702] = t[699]                                # three rows on one stamp at 100 Hz
    with pytest.raises(InputError, match=r'^\S*three\.yaml: duplicated time stamp at row 700 .*'
                                         r'no fixed-rate clock puts row 701 within a stamp step'):
        preprocess(load_dataset(csv_case.variant('three', t=t, update={'rows': [100, None]})),
                   load_robot(REPO / 'urdf' / 'six_axis_3kg.urdf'), IdentificationConfig())


def test_shared_stamp_is_refused_with_the_stamps_clock(csv_case):
    t = csv_case.t.copy()
    t[700] = t[699]
    path = csv_case.variant('same', t=t, update={'time': {'column': 't', 'clock': 'stamps'},
                                                 'rows': [100, None]})
    with pytest.raises(InputError, match=r'^\S*same\.yaml: duplicated time stamp at row 700 .*'
                                         'different state; time.clock: stamps'):
        load_dataset(path)


def test_decreasing_stamp_is_refused_even_on_a_repeated_row(csv_case):
    rows = np.r_[0:800, 799, 800:2000]
    t = csv_case.t[rows].copy()
    t[800] -= 0.05                                                       # the repeat goes back
    with pytest.raises(InputError, match=r'back\.yaml: decreasing time stamp at row 800'):
        load_dataset(csv_case.variant('back', t=t, q=csv_case.q[rows], tau=csv_case.tau[rows]))
    sliced = csv_case.variant('back', t=t, q=csv_case.q[rows], tau=csv_case.tau[rows],
                              update={'rows': [100, None]})
    with pytest.raises(InputError, match=r'back\.yaml: decreasing time stamp at row 800 '):
        load_dataset(sliced)                           # data rows, not rows of the selection


def test_constant_log_is_refused_naming_the_file(csv_case):
    q, tau = np.repeat(csv_case.q[:1], 500, axis=0), np.repeat(csv_case.tau[:1], 500, axis=0)
    with pytest.raises(InputError, match=r'^\S*still\.yaml: all 500 rows hold the same sample '
                                         r'\(a constant log'):
        load_dataset(csv_case.variant('still', t=csv_case.t[:500], q=q, tau=tau))


# --- standstill ---------------------------------------------------------------------------------

def stopping(t, start, hold, ramp=0.5):
    """The motion time ``s(t)`` of a robot that slows to rest from ``start`` over ``ramp`` s,
    stands still for ``hold`` s and speeds up again (speed factor ``1 − smooth + smooth``, the C²
    quintic smoothstep); returns ``s``, ``ds/dt``, ``d²s/dt²``."""
    a, b = (t - start) / ramp, (t - start - ramp - hold) / ramp

    def step(x, order):                          # smoothstep, its integral and derivative
        c = np.clip(x, 0, 1)
        return {0: c ** 3 * (10 - 15 * c + 6 * c * c),
                -1: c ** 4 * (2.5 - 3 * c + c * c) + np.maximum(x - 1, 0),
                1: 30 * c * c * (1 - c) ** 2}[order]
    return (t - ramp * (step(a, -1) - step(b, -1)), 1 - step(a, 0) + step(b, 0),
            (step(b, 1) - step(a, 1)) / ramp)


def standstill_log(robot, truth, hold, rate=200.0, seed=4):
    """20 s of a Fourier trajectory with a ``hold`` s standstill from 8.5 s, read by quantised
    sensors (1e-5 rad, 0.01 N·m, noise-free): the standstill rows repeat exactly. Stamps late by
    0–30 % of a period."""
    t = np.arange(int(20 * rate)) / rate
    s, v, dv = stopping(t, 8.0, hold)
    q, qd, qdd = fourier_trajectory(robot, s, np.random.default_rng(seed))
    tau = simulate_torques(robot, truth, q, qd * v[:, None],
                           qdd * (v ** 2)[:, None] + qd * dv[:, None])
    late = np.random.default_rng(seed).uniform(0, 0.3 / rate, len(t))
    return replace(synthetic_dataset(robot, truth, 1, rate, seed)[0], source='hold', t=t + late,
                   position=np.round(q / 1e-5) * 1e-5, effort=np.round(tau / 0.01) * 0.01,
                   velocity=None)


def test_standstill_is_kept_with_every_clock(six_axis, truth, tmp_path):
    still, moving = (standstill_log(six_axis, truth, hold) for hold in (3.0, 0.0))
    assert still.repeated > 550                                         # 3 s of 200 Hz rows
    write_npz(tmp_path / 'still.npz', still)
    write_npz(tmp_path / 'moving.npz', moving)
    check, clean = synthetic_dataset(six_axis, truth, 20, 200.0, seed=105)
    reference = replace(check, effort=clean)
    # Coulomb friction is undefined at rest: leave out the equations around it (1/fc)
    config = IdentificationConfig(rotor_inertia=True, estimator='wls', reversal_window=0.1)
    for time in ({'key': 'times'}, {'key': 'times', 'clock': 'stamps'},
                 {'key': 'times', 'clock': 'fixed_rate'}, {'sample_rate': 200.0}):
        errors = []
        for name in ('still', 'moving'):
            spec = {'joints': list(six_axis.joint_names), 'file': f'{name}.npz', 'time': time,
                    'position': {'key': 'positions'}, 'effort': {'key': 'torques'}}
            d = load_dataset(write_yaml(tmp_path / f'{name}.yaml', spec))
            p = preprocess(d, six_axis, config)
            assert p.segments == () and len(p.t) >= 3999, p.summary  # one segment, 20 s at 200 Hz
            assert 'split' not in p.summary[0], p.summary
            model = identify(six_axis, [d], config)
            errors.append(validate(model, reference).metrics['relative_error_percent'])
        print(f'{time}: standstill {errors[0]:.4f} %, none {errors[1]:.4f} %')
        assert errors[0] <= 1.2 * errors[1]


def test_polling_logger_drops_rereads_and_keeps_a_standstill():
    rng = np.random.default_rng(7)
    cycles = np.arange(8000) * T                                        # 8 s at 1 kHz
    s, _, _ = stopping(cycles, 2.0, 3.0)                                # still 2.5–5.5 s
    controller = np.round(sine(s) / 1e-6) * 1e-6                       # quantised encoder
    reads = 0.37 * T + np.cumsum(T * rng.lognormal(0, 0.16, 9000))
    cycle = np.floor(reads[reads < 7999 * T] / T).astype(int)
    position = controller[cycle]
    repeats = np.concatenate([[False], np.all(position[1:] == position[:-1], axis=1)])
    base = analyse(1000.0 + reads[:len(cycle)], position, 10.0, source='polled.npz',
                   repeats=repeats)
    assert base.clock == 'fixed_rate' and base.period == T and len(base.segments) == 1
    # every row kept sits on the cycle it read, and no cycle was read twice
    np.testing.assert_array_equal(np.rint((base.times - base.times[0]) / T),
                                  cycle[base.rows] - cycle[base.rows[0]])
    assert base.repeated >= np.sum(np.diff(cycle) == 0)
    still = (cycle[base.rows] > 2600) & (cycle[base.rows] < 5400)
    assert np.sum(still) > 0.6 * 2800                                   # the standstill is kept
    # on the grid, the controller's positions at every cycle, the standstill included
    [q] = base.resample(position, smooth=True)
    np.testing.assert_allclose(q, controller[cycle[0]:cycle[0] + len(q)], rtol=0, atol=2e-6)


# --- recorded velocity --------------------------------------------------------------------------

def delayed(data, lag):
    return np.column_stack([np.interp(data.t - lag, data.t, v) for v in data.velocity.T])


@pytest.mark.parametrize('velocity, used, reason', [
    (lambda d: d.velocity, True, r'agrees with d/dt position within [\d.e-]+ %'),
    (lambda d: 0.8 * d.velocity, False, r'differs from d/dt position by 2\d(\.\d)? % on joint\d, '
                                        r'scale 0\.8'),
    (lambda d: delayed(d, 0.005), False, r'lags d/dt position by 5(\.\d)? ms, a phase error of '
                                         r'3\d % at the 10 Hz cut-off'),
    (lambda d: delayed(d, 0.05), False, r'differs from d/dt position by .*'),
])
def test_recorded_velocity_used_when_it_agrees(six_axis, make_synthetic, velocity, used, reason):
    data = make_synthetic()
    data = replace(data, velocity=velocity(data))
    p = preprocess(data, six_axis, IdentificationConfig())
    line = p.summary[1]
    assert re.fullmatch(rf'\S+: recorded velocity {"used" if used else "ignored"} \({reason}\)',
                        line), line
    derived = preprocess(data, six_axis, IdentificationConfig(use_recorded_velocity=False))
    assert np.array_equal(p.qd, derived.qd) != used
    forced = preprocess(data, six_axis, IdentificationConfig(use_recorded_velocity=True))
    assert 'recorded velocity used (as configured' in forced.summary[1]


def test_cli_prints_the_summary_and_takes_the_velocity_options(make_synthetic, tmp_path, capsys):
    path = write_npz(tmp_path / 'run.npz', make_synthetic())
    args = ['identify', '--urdf', str(REPO / 'urdf' / 'six_axis_3kg.urdf'), '--data', str(path),
            '--out', str(tmp_path / 'RESULT.yaml')]
    assert main(args + ['--no-recorded-velocity']) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'run.npz: uniform 100 Hz clock, 2 000 rows'
    assert out[1].startswith('run.npz: recorded velocity ignored (as configured; agrees'), out[1]
    assert main(['validate', '--model', str(tmp_path / 'RESULT.yaml'), '--data', str(path)]) == 0
    assert capsys.readouterr().out.startswith('run.npz: uniform 100 Hz clock')
    with pytest.raises(SystemExit):
        main(args + ['--no-recorded-velocity', '--use-recorded-velocity'])


# --- KUKA LWR4+ recordings ----------------------------------------------------------------------

@pytest.mark.skipif(not (KUKA_DIR / 'measurements_1.npz').is_file(),
                    reason=KUKA_MISSING)
def test_kuka_npz_directly_gives_the_fixed_rate_result(monkeypatch):
    monkeypatch.setenv('DATA_DIR', str(KUKA_DIR))
    robot = load_robot(KUKA_DIR / 'kuka_lwr4.urdf')
    config = IdentificationConfig(estimator='wls')
    errors = {}
    for kind in ('yaml', 'npz'):
        files = [REPO / 'config' / 'datasets' / 'kuka_lwr4' / f'measurements_{i}.yaml'
                 for i in (1, 2)] if kind == 'yaml' else \
            [KUKA_DIR / f'measurements_{i}.npz' for i in (1, 2)]
        train, check = (load_dataset(f, robot.joint_names) for f in files)
        model = identify(robot, [train], config)
        errors[kind] = validate(model, check).metrics['relative_error_percent']
        if kind == 'npz':
            assert model.stats['preprocessing'][0].startswith(
                'measurements_1.npz: fixed-rate clock 200 Hz (logger stamps jitter')
    print(f'KUKA m1 → m2 (WLS): {errors}')
    assert errors['npz'] == pytest.approx(errors['yaml'], abs=0.05)
    assert errors['npz'] <= 2.2
