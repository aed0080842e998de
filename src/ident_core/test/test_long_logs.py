"""Long recordings: the block-by-block regression (``estimation.blockwise``), the QR by blocks
of samples (``estimators.r_factor``) and the CSV reader's blocks give what the whole-array
computations give, and reading a CSV takes memory of the order of its numbers.

Blocks are made small (a few thousand samples) so that a moderate log of the 7-DOF test arm
(``data/seven_axis.urdf``) spans many of them, with a segment split at a gap, jittery stamps
resampled, and the recorded velocity used and ignored.
"""
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ident_core.data import readers
from ident_core.errors import InputError
from ident_core.estimation import blockwise, estimators
from ident_core.estimation.blockwise import stack_kept
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.estimation.identified_model import run_estimator
from ident_core.estimation.preprocessing import preprocess
from ident_core.estimation.regression import stack_processed
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

SEVEN_AXIS = Path(__file__).resolve().parent / 'data' / 'seven_axis.urdf'
#: Relative to the largest entry: the block filters' transients are below 1e-17 and central
#: differences amplify rounding by fs² (~1e-10 of the accelerations measured).
TOLERANCE = 1e-9


@pytest.fixture(scope='module')
def arm():
    robot = load_robot(SEVEN_AXIS)
    truth = perturbed_parameters(robot, np.random.default_rng(4))
    d, _ = synthetic_dataset(robot, truth, 16.0, 1000.0, seed=5, torque_noise=0.3)
    rng = np.random.default_rng(6)
    return robot, replace(d, velocity=d.velocity + 0.002 * rng.standard_normal(d.velocity.shape))


def jittery_with_gaps(d):
    """Stamps jittered by ±0.1 ms (resampled), 3 samples missing (bridged) and 0.4 s missing
    (the log is split there)."""
    rng = np.random.default_rng(7)
    keep = np.ones(d.samples, dtype=bool)
    keep[6000:6003] = False
    keep[10000:10400] = False
    t = np.sort(d.t + 1e-4 * rng.uniform(-1, 1, d.samples))[keep]
    return replace(d, t=t, position=d.position[keep], velocity=d.velocity[keep],
                   effort=d.effort[keep], clock='stamps')


CASES = {
    'recorded velocity': lambda d: (d, IdentificationConfig()),
    'no velocity, reversal window': lambda d: (replace(d, velocity=None),
                                               IdentificationConfig(reversal_window=0.05)),
    'stamps and gaps, rotor inertia': lambda d: (jittery_with_gaps(d),
                                                 IdentificationConfig(rotor_inertia=True)),
    'no decimation': lambda d: (d, IdentificationConfig(decimate=1, friction='coulomb-viscous')),
    'anti-alias decimation': lambda d: (d, IdentificationConfig(decimate=100)),
}


@pytest.mark.parametrize('case', CASES)
def test_blocks_give_the_regression_rows_of_the_whole_log(arm, case, monkeypatch):
    robot, d = arm
    d, config = CASES[case](d)
    monkeypatch.setattr(blockwise, 'BLOCK_ROWS', 3000)
    monkeypatch.setattr(blockwise, 'REGRESSOR_ROWS', 100)
    regressor = Regressor(robot, config.spec, d.transmission)
    base = compute_base_parameters(regressor)
    whole = stack_processed(regressor, base, [preprocess(d, robot, config)], config)
    kept = blockwise.reduce(d, regressor, base, config)
    blocks = stack_kept(regressor, base, [kept])
    assert blocks.w.shape == whole.w.shape
    scale = np.max(np.abs(whole.w), axis=(0, 1))
    np.testing.assert_allclose(blocks.w / scale, whole.w / scale, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(blocks.tau, whole.tau, rtol=0,
                               atol=TOLERANCE * np.max(np.abs(whole.tau)))
    np.testing.assert_array_equal(blocks.mask, whole.mask)
    assert blocks.preprocessing == whole.preprocessing
    assert blocks.decimation == whole.decimation
    if case == 'no velocity, reversal window':
        assert 0 < (~blocks.mask).sum() < blocks.mask.size           # the window left some out
    if case == 'stamps and gaps, rotor inertia':
        assert 'split' in whole.preprocessing[0] and 'bridged' in whole.preprocessing[0]


def test_identify_gives_the_parameters_of_the_whole_log(arm):
    robot, d = arm
    config = IdentificationConfig(estimator='wls')
    model = identify(robot, (x for x in [d]), config)            # a generator of recordings
    regressor = Regressor(robot, config.spec, d.transmission)
    base = compute_base_parameters(regressor)
    whole = stack_processed(regressor, base, [preprocess(d, robot, config)], config)
    est = run_estimator(regressor, base, whole.w, whole.tau, whole.mask, config)[0]
    np.testing.assert_allclose(model.values, est.values, rtol=1e-8,
                               atol=1e-8 * np.max(np.abs(est.values)))
    np.testing.assert_allclose(model.std, est.std, rtol=1e-6)
    assert model.stats['data'] == [d.source]


@pytest.mark.parametrize('method', ['wls', 'pc-wls'])
def test_qr_by_blocks_of_samples_gives_the_estimate_of_one_block(arm, method, monkeypatch):
    robot, d = arm
    config = IdentificationConfig(estimator=method, decimate=4, prior_weight=1.0)
    regressor = Regressor(robot, config.spec, d.transmission)
    base = compute_base_parameters(regressor)
    s = stack_kept(regressor, base, [blockwise.reduce(d, regressor, base, config)])
    mask = np.random.default_rng(8).uniform(size=s.mask.shape) > 0.1
    one = run_estimator(regressor, base, s.w, s.tau, mask, config)[0]
    monkeypatch.setattr(estimators, 'QR_SAMPLES', 97)
    assert len(s.w) > 20 * estimators.QR_SAMPLES
    many = run_estimator(regressor, base, s.w, s.tau, mask, config)[0]
    np.testing.assert_allclose(many.values, one.values, rtol=1e-7,
                               atol=1e-7 * np.max(np.abs(one.values)))
    np.testing.assert_allclose(many.sigma_joint, one.sigma_joint, rtol=1e-9)


def write_rows(path, text_rows, header='t,a,b'):
    path.write_text(header + '\n' + ''.join(text_rows))
    return path


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(readers, 'CSV_BLOCK_BYTES', 200)


def test_csv_blocks_read_every_number(tmp_path, small_blocks):
    values = np.random.default_rng(9).standard_normal((500, 3)) * 10.0 ** np.arange(-5, 10, 5)
    rows = [','.join(repr(float(x)) for x in row) + '\n' for row in values]
    rows[100] = '\n'
    rows[300] = ' , , \n'                                  # blank rows are skipped
    table = readers.read_csv(write_rows(tmp_path / 'log.csv', rows))
    assert table.header == ['t', 'a', 'b']
    np.testing.assert_array_equal(table.values, np.delete(values, [100, 300], axis=0))


@pytest.mark.parametrize('bad, message', [
    ('1.0,2.0\n', 'data row 398 has 2 columns, expected 3'),
    ('1.0,2.0,x\n', "data row 398 has a non-numeric cell: ['1.0', '2.0', 'x']"),
])
def test_csv_blocks_name_the_data_row_at_fault(tmp_path, small_blocks, bad, message):
    rows = ['1,2,3\n'] * 401                      # a row after the bad one: a cut last row is
    rows[5] = '\n'                                 # dropped (test_datasets.py); not a data row
    rows[399] = bad
    with pytest.raises(InputError) as info:
        readers.read_csv(write_rows(tmp_path / 'bad.csv', rows))
    assert str(info.value) == f'{tmp_path / "bad.csv"}: {message}'


def test_csv_header_wider_than_the_rows_is_refused(tmp_path):
    path = write_rows(tmp_path / 'wide.csv', ['1,2\n', '3,4\n'])
    with pytest.raises(InputError, match='the header names 3 columns, the rows have 2'):
        readers.read_csv(path)


def test_csv_memory_is_of_the_order_of_its_numbers(tmp_path):
    rows = 200_000
    block = np.random.default_rng(10).standard_normal((1000, 8))
    text = ''.join(','.join(f'{x:.6f}' for x in row) + '\n' for row in block)
    path = tmp_path / 'long.csv'
    path.write_text(','.join(f'c{i}' for i in range(8)) + '\n' + text * (rows // len(block)))
    tracemalloc.start()
    try:
        table = readers.read_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table.values.shape == (rows, 8)
    # the numbers take 64 B per row, the text of a block a few times its bytes; lists of
    # strings took ~0.7 kB per row
    assert peak < table.values.nbytes + 16 * readers.CSV_BLOCK_BYTES, peak
