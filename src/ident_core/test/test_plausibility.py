"""Plausible mistakes that are not refused but warned about, and the harmless variants of a
recording that must still read (the refusals are in the corpus, tests/bad_inputs/cases.yaml)."""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from datafiles import URDF

from ident_core.cli import main
from ident_core.data.datasets import DataWarning
from ident_core.data.plausibility import SLIGHTLY_OUTSIDE, check_positions
from ident_core.data.readers import read_csv
from ident_core.data.timing import PLAUSIBLE_RATES, analyse
from ident_core.errors import InputError
from ident_core.estimation.effort_scale import CLEAN_FIT, Refit, diagnose_efforts, urdf_gains
from ident_core.estimation.fit_check import FIT_ERROR_LIMIT, check_fit


def test_a_utf8_bom_before_the_header_is_no_header_text(csv_case):
    path = csv_case.dir / 'bom.csv'
    path.write_bytes(b'\xef\xbb\xbf' + csv_case.csv.read_bytes())
    table = read_csv(path)
    assert table.header[0] == 't'
    np.testing.assert_array_equal(table.values, read_csv(csv_case.csv).values)


def test_a_delimiter_that_ends_every_row_is_no_column(csv_case):
    path = csv_case.dir / 'trailing.csv'
    lines = csv_case.csv.read_text().splitlines()
    path.write_text('\n'.join([lines[0]] + [line + ',' for line in lines[1:]]) + '\n')
    np.testing.assert_array_equal(read_csv(path).values, read_csv(csv_case.csv).values)


def test_positions_slightly_outside_the_limits_warn(six_axis, make_synthetic):
    d = make_synthetic()
    span = six_axis.upper[1] - six_axis.lower[1]
    q = d.position.copy()
    q[100, 1] = six_axis.upper[1] + 3 * SLIGHTLY_OUTSIDE * span
    with pytest.warns(DataWarning, match='joint joint2: positions up to .* beyond its URDF'):
        check_positions(replace(d, position=q), six_axis)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        check_positions(d, six_axis)                  # within the limits: silent


def test_degrees_are_suggested_only_when_they_fit_the_limits(six_axis, make_synthetic):
    d = make_synthetic()
    with pytest.raises(InputError, match=r'joint1: .*far outside.*in degrees\?'):
        check_positions(replace(d, position=np.degrees(d.position)), six_axis)
    with pytest.raises(InputError, match='far outside') as exc:
        check_positions(replace(d, position=d.position + 1000.0), six_axis)
    assert 'degrees' not in str(exc.value)


def test_a_poor_fit_without_a_swap_is_a_warning():
    rng = np.random.default_rng(0)
    prior = rng.normal(size=(500, 3))
    measured = prior + rng.normal(scale=0.2, size=prior.shape)
    predicted = 0.5 * measured                       # 50 % error, columns where they belong
    with pytest.warns(DataWarning, match='misses the torques by 50 %'):
        check_fit(predicted, measured, prior, ['a', 'b', 'c'], 'log.csv')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        check_fit(measured, measured, prior, ['a', 'b', 'c'], 'log.csv')


def test_a_swapped_column_is_named():
    rng = np.random.default_rng(0)
    prior = rng.normal(size=(500, 3))
    measured = prior[:, [0, 2, 1]] + rng.normal(scale=0.1, size=prior.shape)
    predicted = prior * 0.2                          # the model cannot follow the swap
    assert 100 * np.linalg.norm(predicted - measured) / np.linalg.norm(measured) > \
        FIT_ERROR_LIMIT
    with pytest.raises(InputError, match='effort of b follows the URDF model torque of c.*'
                                         'effort of c follows .* of b.*swapped'):
        check_fit(predicted, measured, prior, ['a', 'b', 'c'], 'log.csv')


@pytest.mark.parametrize('scale, rate', [(1.0, 100.0), (1e-3, 1e5), (1e3, 0.1)])
def test_the_rate_is_checked_against_the_plausible_range(make_synthetic, scale, rate):
    d = make_synthetic()
    if PLAUSIBLE_RATES[0] <= rate <= PLAUSIBLE_RATES[1]:
        analyse(d.t * scale, d.position, 10.0, source='log.csv')
    else:
        with pytest.raises(InputError, match=r'log.csv: a sample rate of .* time.scale'):
            analyse(d.t * scale, d.position, 10.0, source='log.csv')


def test_validate_uses_a_changed_urdf_when_asked(csv_case, tmp_path, capsys):
    result = tmp_path / 'RESULT.yaml'
    assert main(['identify', '--urdf', str(URDF), '--data', str(csv_case.yaml), '--out',
                 str(result)]) == 0
    heavier = tmp_path / 'heavier.urdf'
    heavier.write_text(URDF.read_text().replace('<mass value="4.0"/>', '<mass value="4.5"/>'))
    argv = ['validate', '--model', str(result), '--data', str(csv_case.yaml), '--urdf',
            str(heavier)]
    capsys.readouterr()
    assert main(argv) == 2
    assert 'urdf_sha256' in capsys.readouterr().err
    assert main([*argv, '--ignore-urdf-change']) == 0


def _torques(rng, samples=2000, joints=3):
    """URDF-model torques (random smooth columns) and the measured ones: the model's with 5 %
    of its spread in white noise, and a friction-like column per joint [N·m]."""
    t = np.linspace(0, 20, samples)[:, None]
    prior = np.sin(t * rng.uniform(0.5, 2, joints) + rng.uniform(0, 6, joints)) * [10, 5, 1]
    friction = np.sign(np.cos(t * rng.uniform(0.5, 2, joints)))
    measured = prior + friction + 0.05 * prior.std(axis=0) * rng.normal(size=prior.shape)
    return prior, measured, friction


def _free_columns(friction):
    """The regressor (N, n, 2n) of a Coulomb column and an offset per joint (the actuator
    columns the URDF model's gain is fitted with), all free."""
    samples, n = friction.shape
    w = np.zeros((samples, n, 2 * n))
    for j in range(n):
        w[:, j, j], w[:, j, n + j] = friction[:, j], 1.0
    return w, np.ones(2 * n, dtype=bool)


@pytest.mark.parametrize('factors, joint, correction, unit', [
    ([1000, 1000, 1000], None, 0.001, 'mN·m'),
    ([1 / 9.80665] * 3, None, 9.80665, 'kgf·m'),
    ([23.4, 23.4, 23.4], None, 0.043, None),           # currents without drive gains
    ([1, -1, 1], 1, -1.0, None),
    ([1, 1, 10], 2, 0.1, None)])
def test_a_wrong_unit_or_sign_is_named_with_its_fix(factors, joint, correction, unit):
    """Efforts scaled as a logging fault would: the fault found from the URDF model's torques,
    with the ``effort.scale`` that undoes it (the truth: 1 / factor)."""
    prior, measured, friction = _torques(np.random.default_rng(4))
    w, free = _free_columns(friction)
    found = diagnose_efforts(urdf_gains(measured * factors, prior, w, free))
    assert len(found) == 1
    d = found[0]
    assert (d.joint, d.unit) == (joint, unit)
    assert d.correction == pytest.approx(correction, rel=0.02)
    assert d.after <= CLEAN_FIT and d.before >= 2 * d.after
    # a fit good on every joint: one joint's sign or scale is not tried, a common scale is
    assert diagnose_efforts(urdf_gains(measured * factors, prior, w, free),
                            poorly_fitted=False) == ([] if joint is not None else found)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert diagnose_efforts(urdf_gains(measured, prior, w, free)) == []   # as logged: none


def test_a_rough_urdf_joint_is_no_wrong_sign():
    """A joint whose URDF torque has the opposite sign and a fifth of the measured torque's
    shape (a wrist with rough inertias, mostly friction) is determined and far from 1, but the
    corrected data still miss the URDF model: no diagnosis (the KUKA LWR4+ wrist)."""
    rng = np.random.default_rng(5)
    prior, measured, friction = _torques(rng)
    rough = prior.copy()
    rough[:, 2] = -0.2 * prior[:, 2] + 0.8 * rng.normal(size=len(prior)) * prior[:, 2].std()
    w, free = _free_columns(friction)
    gains = urdf_gains(measured, rough, w, free)
    assert gains.determined()[2] and gains.gain[2] < 0
    assert diagnose_efforts(gains) == []


def test_a_flipped_sign_under_a_rough_urdf_is_found_by_the_identification_run_again():
    """A joint's sign flipped where the URDF model is too rough to show it (its torque of that
    joint half the measured one's shape, half noise: corrected, it still misses by ~100 %): the
    identification run again on the corrected efforts (a linear model whose parameters every
    joint shares, as the rigid-body model's are) fits as the clean recording does, within 2× of
    its fit, and the logged efforts at least 2× worse: the sign is diagnosed by the refit."""
    rng = np.random.default_rng(6)
    t = np.linspace(0, 20, 2000)[:, None, None]
    w = np.sin(t * rng.uniform(0.3, 3, (3, 6)) + rng.uniform(0, 6, (3, 6)))      # (N, n, nb)
    truth = w @ rng.normal(size=6)
    clean = truth + 0.01 * truth.std(axis=0) * rng.normal(size=truth.shape)
    prior = truth.copy()
    prior[:, 1] += truth[:, 1].std() * rng.normal(size=len(t))

    def run(tau):
        flat = w.reshape(-1, 6)
        return w @ np.linalg.lstsq(flat, tau.reshape(-1), rcond=None)[0]

    flipped = clean * [1, -1, 1]
    gains = urdf_gains(flipped, prior)
    assert gains.determined()[1] and gains.gain[1] < 0
    assert gains.error([1], -1.0) > CLEAN_FIT                  # the URDF model cannot tell
    (d,) = diagnose_efforts(gains, Refit(flipped, run(flipped), run))
    assert (d.joint, d.correction, d.evidence) == (1, -1.0, 'refit')
    clean_fit = Refit(clean, run(clean), run).logged
    assert d.after <= 2 * clean_fit and d.before >= 2 * d.after, (d, clean_fit)
    assert diagnose_efforts(urdf_gains(clean, prior), Refit(clean, run(clean), run)) == []


def test_a_flipped_effort_sign_is_refused_and_can_be_ignored(csv_case, tmp_path, capsys):
    """``effort.scale: -1`` on one joint of the description: ``identify`` names the joint and
    the fix; ``--ignore-plausibility`` identifies anyway, with the same words as a warning."""
    flipped = csv_case.variant('flipped', update={
        'effort': {**csv_case.spec['effort'], 'scale': [1, -1, 1, 1, 1, 1]}})
    argv = ['identify', '--urdf', str(URDF), '--data', str(flipped), '--out',
            str(tmp_path / 'RESULT.yaml')]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert 'joint2 has the opposite sign' in err and 'effort.scale: -1 for joint2' in err
    assert '--ignore-plausibility' in err and not (tmp_path / 'RESULT.yaml').exists()
    assert main([*argv, '--ignore-plausibility']) == 0
    err = capsys.readouterr().err
    assert 'warning:' in err and 'joint2 has the opposite sign' in err and \
        'ignore_plausibility' in err
    assert (tmp_path / 'RESULT.yaml').is_file()


def test_positions_far_outside_the_limits_can_be_ignored(six_axis, make_synthetic):
    d = make_synthetic()
    with pytest.warns(DataWarning, match='far outside.*in degrees.*ignore_plausibility'):
        check_positions(replace(d, position=np.degrees(d.position)), six_axis, ignore=True)
