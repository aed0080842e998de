"""Time stamps of real loggers (``data.timing``, ``data.recorded_velocity``): nominal rate, repeated
rows, fixed-rate clocks behind jittery stamps, resampling, gaps bridged or split, the one-line
summary, the recorded-velocity decision; and the acceptance run of a simulated 7-axis arm logged
by a non-real-time logger."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from datafiles import write_npz
from helpers import KUKA_DIR, REPO

from ident_core.cli import main
from ident_core.data.datasets import load_dataset
from ident_core.data.timing import TimeBase, analyse, nominal_period
from ident_core.errors import InputError
from ident_core.estimation.identification import (
    IdentificationConfig,
    identify,
    preprocess,
    regression_data,
    validate,
)
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

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
    assert base.clock == 'uniform' and base.pieces == [(0, 1000)]
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
    [grid] = [base.grid(p) for p in base.pieces]
    np.testing.assert_allclose(np.diff(grid), T, rtol=1e-9)
    [q] = base.resample(sine(stamps), smooth=True)
    np.testing.assert_allclose(q, sine(grid), atol=1e-8)
    [tau] = base.resample(sine(stamps), smooth=False)
    np.testing.assert_allclose(tau, sine(grid), atol=1e-4)
    assert base.summary().startswith('irregular.csv: resampled 6 000 rows to 1 kHz (stamps '
                                     'jitter')


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
    assert len(base.pieces) == 1 + len(split)
    # ≤ a tenth of the cut-off period (10 ms at 10 Hz) bridges, a longer gap splits
    event = '1 gap bridged' if bridged else '1 gap of 0.008 s split'
    assert base.summary() == f'gap.npz: uniform 1 kHz clock, 4 000 rows on 4 007 cycles: {event}'



def test_short_piece_is_dropped_and_counted():
    t = with_gap(500, at=3700)                                         # last 0.3 s after 0.5 s
    base = analyse(t, sine(t), 10.0, source='tail.npz').without_short(600)
    assert base.pieces == [(0, 3700)] and base.short == 1
    assert base.summary().endswith('1 gap of 0.5 s split, 1 piece shorter than 0.6 s dropped')
    with pytest.raises(InputError, match='tail.npz: 3700 samples are too few'):
        base.without_short(4000)


def test_summary_line():
    base = TimeBase('/logs/m1.npz', 'stamps', 0.001, np.arange(20544) * 0.001, [(0, 20544)],
                    bridged=4, split=[0.35], jitter=0.25, repeated=1255)
    assert base.summary() == ('m1.npz: resampled 20 544 rows to 1 kHz (stamps jitter 25 %): '
                              '1 255 repeated rows dropped, 4 gaps bridged, 1 gap of 0.35 s split')


def test_split_log_is_filtered_and_identified_piece_by_piece(six_axis, make_synthetic):
    data = make_synthetic()                                             # 20 s at 100 Hz
    keep = np.r_[0:900, 1000:data.samples]                              # 1 s lost after 9 s
    cut = replace(data, t=data.t[keep], position=data.position[keep],
                  effort=data.effort[keep], velocity=None)
    config = IdentificationConfig(estimator='wls')
    p = preprocess(cut, six_axis, config)
    assert p.pieces == ((0, 900), (900, 1900))
    assert p.summary == [f'{cut.source}: uniform 100 Hz clock, 1 900 rows on 2 000 cycles: '
                         '1 gap of 1 s split']
    regressor = Regressor(six_axis, config.spec, cut.transmission)
    base = compute_base_parameters(regressor)
    w, tau = regression_data(regressor, base, p, 2)
    rows = sum(len(range(p.trim, m - p.trim, 2)) for m in (900, 1000))    # each piece trimmed
    assert len(w) == len(tau) == rows == len(p.reversal_mask(regressor.gear, 2, 0.1))
    assert len(p.trimmed(p.t)) == 1900 - 4 * p.trim
    v = validate(identify(six_axis, [cut], config), cut)
    assert len(v.t) == len(v.measured) and np.max(np.diff(v.t)) > 1.5   # the jump at the split
    assert v.metrics['relative_error_percent'] < 5


# --- loading: repeated rows and bad stamps ------------------------------------------------------

def test_repeated_rows_are_dropped_on_loading(csv_case, six_axis):
    rows = np.r_[0:500, 499, 499, 500:1000, 999, 1000:2000]             # three repeats
    t = csv_case.t[rows].copy()
    t[501] += 0.004                                                      # read again 4 ms later
    d = load_dataset(csv_case.variant('repeats', t=t, q=csv_case.q[rows], tau=csv_case.tau[rows]))
    assert d.samples == 2000 and d.repeated == 3
    np.testing.assert_array_equal(d.position, csv_case.q)
    first, last = d.split(0.5)
    assert (first.repeated, last.repeated) == (3, 0)
    summary = preprocess(d, six_axis, IdentificationConfig()).summary
    assert summary == ['repeats.yaml: uniform 100 Hz clock, 2 000 rows: 3 repeated rows dropped']


def test_repeated_stamp_with_another_state_is_refused(csv_case):
    t = csv_case.t.copy()
    t[700] = t[699]
    with pytest.raises(InputError, match=r'^\S*same\.yaml: duplicated time stamp at row 700 .*'
                                         'different state'):
        load_dataset(csv_case.variant('same', t=t))


def test_decreasing_stamp_is_refused_even_on_a_repeated_row(csv_case):
    rows = np.r_[0:800, 799, 800:2000]
    t = csv_case.t[rows].copy()
    t[800] -= 0.05                                                       # the repeat goes back
    with pytest.raises(InputError, match=r'back\.yaml: decreasing time stamp at row 800'):
        load_dataset(csv_case.variant('back', t=t, q=csv_case.q[rows], tau=csv_case.tau[rows]))


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
                    reason=f'KUKA LWR4+ recordings not found in {KUKA_DIR}')
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
