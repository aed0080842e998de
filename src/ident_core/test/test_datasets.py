"""Dataset descriptions that must load: columns, scales, rows, clocks, ${VAR}, transmissions,
joint order. Data: the synthetic 20 s, 100 Hz recording of the 6-axis test robot (conftest.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from datafiles import JOINTS, description, write_csv, write_yaml

from ident_core.data.datasets import DataWarning, load_dataset
from ident_core.data.invalid_rows import VALID_RUN
from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.estimation.preprocessing import preprocess
from ident_core.model.transmission import Transmission


def assert_same_data(a, b):
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.position, b.position)
    np.testing.assert_array_equal(a.effort, b.effort)
    assert a.joint_names == b.joint_names


# --- columns ------------------------------------------------------------------------------------

def test_header_names_and_column_indices_give_identical_arrays(csv_case, tmp_path):
    by_name = load_dataset(csv_case.yaml)
    by_index = load_dataset(write_yaml(tmp_path / 'by_index.yaml',
                                       description('good.csv', header=False)))
    write_csv(tmp_path / 'plain.csv', csv_case.t, csv_case.q, csv_case.tau, header=False)
    headerless = load_dataset(write_yaml(tmp_path / 'plain.yaml',
                                         description('plain.csv', header=False)))
    assert_same_data(by_name, by_index)
    assert_same_data(by_name, headerless)
    assert by_name.joint_names == JOINTS
    np.testing.assert_array_equal(by_name.position, csv_case.q)
    np.testing.assert_array_equal(by_name.effort, csv_case.tau)
    np.testing.assert_allclose(by_name.t, csv_case.t - csv_case.t[0], atol=1e-12)
    assert by_name.velocity is None
    assert by_name.transmission.same_as(Transmission.identity(6))


def test_description_without_joints_uses_default_joint_names(csv_case, tmp_path):
    spec = {k: v for k, v in csv_case.spec.items() if k != 'joints'}
    d = load_dataset(write_yaml(tmp_path / 'nojoints.yaml', spec), default_joints=JOINTS)
    assert d.joint_names == JOINTS
    with pytest.raises(InputError, match='nojoints.yaml.*missing field joints'):
        load_dataset(tmp_path / 'nojoints.yaml')


# --- scale --------------------------------------------------------------------------------------

def test_scale_number_and_per_joint_list(csv_case):
    per_joint = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    path = csv_case.variant('scaled', update={
        'position': {**csv_case.spec['position'], 'scale': 0.5},
        'effort': {**csv_case.spec['effort'], 'scale': per_joint}})
    d = load_dataset(path)
    np.testing.assert_allclose(d.position, 0.5 * csv_case.q, rtol=1e-15)
    np.testing.assert_allclose(d.effort, csv_case.tau * np.array(per_joint), rtol=1e-15)


def test_scale_of_wrong_length_refused(csv_case):
    path = csv_case.variant('badscale', update={
        'effort': {**csv_case.spec['effort'], 'scale': [1.0, 2.0]}})
    with pytest.raises(InputError, match=r'badscale\.yaml.*effort\.scale'):
        load_dataset(path)


# --- rows ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('rows, sl', [([100, 1100], slice(100, 1100)),
                                      ([None, -500], slice(None, -500)),
                                      ([1500, None], slice(1500, None))])
def test_rows_slice(csv_case, rows, sl):
    d = load_dataset(csv_case.variant('sliced', update={'rows': rows}))
    np.testing.assert_array_equal(d.position, csv_case.q[sl])
    np.testing.assert_array_equal(d.effort, csv_case.tau[sl])
    t = csv_case.t[sl]
    np.testing.assert_allclose(d.t, t - t[0], atol=1e-12)
    assert d.t[0] == 0.0


def test_rows_selecting_nothing_refused(csv_case):
    with pytest.raises(InputError, match=r'empty\.yaml.*rows'):
        load_dataset(csv_case.variant('empty', update={'rows': [500, 400]}))


# --- time ---------------------------------------------------------------------------------------

def test_time_from_sample_rate(csv_case):
    # the CSV's time column is ignored: the samples are numbered at 250 Hz
    d = load_dataset(csv_case.variant('rate', update={'time': {'sample_rate': 250}}))
    np.testing.assert_allclose(d.t, np.arange(len(csv_case.t)) / 250.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(d.position, csv_case.q)


def jittery_stamps(n, period=0.01, seed=0):
    """Logger stamps of a fixed-rate controller: k·T plus a random delay of 0–3 ms."""
    rng = np.random.default_rng(seed)
    return 100.0 + period * np.arange(n) + rng.uniform(0, 0.003, n)


def test_fixed_rate_clock_recovers_uniform_stamps(csv_case, six_axis):
    stamps = jittery_stamps(len(csv_case.t))
    with warnings.catch_warnings():
        warnings.simplefilter('error', DataWarning)      # the summary line replaced the warning
        raw = load_dataset(csv_case.variant('jitter', t=stamps))
    assert np.std(np.diff(raw.t)) > 5e-4                 # the stamps do jitter
    # time.clock: auto finds the controller's clock behind them
    summary = preprocess(raw, six_axis, IdentificationConfig()).summary
    assert summary[0].startswith('jitter.yaml: fixed-rate clock 100 Hz (logger stamps jitter'), \
        summary

    d = load_dataset(csv_case.variant('fixed', t=stamps,
                                      update={'time': {'column': 't', 'clock': 'fixed_rate'}}))
    dt = np.diff(d.t)
    np.testing.assert_allclose(dt, dt[0], rtol=1e-9)
    assert dt[0] == pytest.approx(0.01, rel=1e-4)
    np.testing.assert_allclose(d.t, 0.01 * np.arange(len(d.t)), atol=1e-3)   # < T / 10
    np.testing.assert_array_equal(d.position, csv_case.q)


def test_fixed_rate_clock_refuses_dropped_samples(csv_case):
    keep = np.r_[0:500, 505:len(csv_case.t)]            # five samples lost after row 499
    path = csv_case.variant('gap', t=jittery_stamps(len(csv_case.t))[keep], q=csv_case.q[keep],
                            tau=csv_case.tau[keep],
                            update={'time': {'column': 't', 'clock': 'fixed_rate'}})
    with pytest.raises(InputError, match=r'gap\.yaml.*gap of .* ms after row 499'):
        load_dataset(path)
    sliced = csv_case.variant('gap', t=jittery_stamps(len(csv_case.t))[keep], q=csv_case.q[keep],
                              tau=csv_case.tau[keep], update={
                                  'time': {'column': 't', 'clock': 'fixed_rate'},
                                  'rows': [100, None]})
    with pytest.raises(InputError, match=r'gap\.yaml.*gap of .* ms after row 499 '):
        load_dataset(sliced)                            # a data row, not a row of the selection


def test_fixed_rate_clock_takes_rounded_stamps(csv_case):
    stamps = np.round(jittery_stamps(len(csv_case.t)) / 0.02) * 0.02      # 20 ms steps at 100 Hz
    assert np.sum(np.diff(stamps) == 0) > 0.3 * len(stamps)
    d = load_dataset(csv_case.variant('rounded', t=stamps,
                                      update={'time': {'column': 't', 'clock': 'fixed_rate'}}))
    np.testing.assert_allclose(d.t, 0.01 * np.arange(len(d.t)), atol=1e-3)   # < T / 10
    np.testing.assert_array_equal(d.position, csv_case.q)


def test_invalid_rows_are_named_by_their_data_row(csv_case):
    q = csv_case.q.copy()
    q[150, 2] = np.nan
    with pytest.raises(InputError, match=r'nan\.yaml: .*nan in row 150'):
        load_dataset(csv_case.variant('nan', q=q, update={'rows': [100, None]}))


# --- damaged logger files (issue 29 §1) ----------------------------------------------------------

def _identified(path, six_axis):
    """Relative fit error and base parameters of the default identification of a description
    (its warnings are checked by the tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DataWarning)
        model = identify(six_axis, [load_dataset(path)], IdentificationConfig())
    return model.stats['relative_error_percent'], model.values


@pytest.mark.parametrize('cut', ['19.99,0.1,0.2', '19.99,0.1,0.2,0.3,0.4,0.5,0.6,1.2,1.3,1.2e',
                                 '19.99,0.1,0.2,0.3,0.4,0.5,0.6,1.2,1.3,1.4,1.5,1.6,'])
def test_a_last_row_cut_mid_write_is_dropped_with_a_warning(csv_case, six_axis, cut):
    """A logger stopped while writing its last row (a UR10e log: ``data row 6106 has 20
    columns, expected 31``): the row is dropped with a warning naming the file and the row, and
    the log identifies as the file without it does."""
    cut_csv = csv_case.dir / 'cut.csv'
    cut_csv.write_text(csv_case.csv.read_text() + cut)
    cut_yaml = write_yaml(csv_case.dir / 'cut.yaml', {**csv_case.spec, 'file': 'cut.csv'})
    with pytest.warns(DataWarning) as caught:
        d = load_dataset(cut_yaml)
    message = str(caught[0].message)
    assert f'cut.csv: data row {len(csv_case.t)} ' in message, message
    assert 'the last row, cut short' in message and 'dropped' in message
    assert_same_data(d, load_dataset(csv_case.yaml))
    assert _identified(cut_yaml, six_axis)[0] == _identified(csv_case.yaml, six_axis)[0]


def test_a_short_row_before_the_last_stays_an_error(csv_case):
    lines = csv_case.csv.read_text().splitlines()
    lines[100] = lines[100].rsplit(',', 5)[0]
    broken = csv_case.dir / 'short.csv'
    broken.write_text('\n'.join(lines) + '\n')
    with pytest.raises(InputError, match=r'short.csv: data row 99 has 8 columns, expected 13'):
        load_dataset(write_yaml(csv_case.dir / 'short.yaml', {**csv_case.spec,
                                                             'file': 'short.csv'}))


def test_boot_garbage_after_a_first_good_row_is_a_leading_block(csv_case, six_axis):
    """A UR10e log: one good row, nine rows of a controller's boot values (2.7e154, 253.0),
    then good rows. With ``drop_invalid_rows`` the ten rows go as one leading block, the warning
    says how many rows and seconds; the rest identifies as the same file cut at row 10 does."""
    q, tau = csv_case.q.copy(), csv_case.tau.copy()
    q[1:10, :3], q[1:10, 3:] = 2.7e154, 253.0
    tau[1:10] = 253.0
    garbage = csv_case.variant('boot', q=q, tau=tau, update={'drop_invalid_rows': True})
    with pytest.warns(DataWarning) as caught:
        d = load_dataset(garbage)
    message = str(caught[0].message)
    assert 'boot.yaml: 9 row(s) hold NaN, inf or absurd values' in message, message
    assert 'dropped rows 0–9 (10 leading row(s), 9 invalid, 0.1 s)' in message, message
    clean = csv_case.variant('from_row_10', update={'rows': [10, None]})
    assert_same_data(d, load_dataset(clean))
    assert d.first_row == 10
    fit, values = _identified(garbage, six_axis)
    clean_fit, clean_values = _identified(clean, six_axis)
    assert fit == clean_fit
    np.testing.assert_array_equal(values, clean_values)
    with pytest.raises(InputError, match='boot_kept.yaml: 9 row.*row 1.*drop_invalid_rows'):
        load_dataset(csv_case.variant('boot_kept', q=q, tau=tau))


def test_invalid_rows_among_long_valid_runs_stay_an_error(csv_case):
    """The leading block ends at the first run of ``VALID_RUN`` valid rows: an invalid row
    after such a run lies inside the recording."""
    q = csv_case.q.copy()
    q[0, 0] = q[VALID_RUN + 1, 0] = np.nan
    path = csv_case.variant('inner', q=q, update={'drop_invalid_rows': True})
    with pytest.raises(InputError, match=f'invalid row {VALID_RUN + 1} lies inside'):
        load_dataset(path)
    q[VALID_RUN, 0] = np.nan                       # now the first run starts after it
    with pytest.warns(DataWarning, match=f'dropped rows 0–{VALID_RUN + 1} '):
        load_dataset(csv_case.variant('inner2', q=q, update={'drop_invalid_rows': True}))


# --- ${VAR} -------------------------------------------------------------------------------------

def test_environment_variable_in_file(csv_case, tmp_path, monkeypatch):
    data_dir = tmp_path / 'elsewhere'
    data_dir.mkdir()
    (data_dir / 'moved.csv').write_bytes(csv_case.csv.read_bytes())
    monkeypatch.setenv('IDENT_TEST_DATA_DIR', str(data_dir))
    for i, ref in enumerate(('${IDENT_TEST_DATA_DIR}/moved.csv', '$IDENT_TEST_DATA_DIR/moved.csv')):
        spec = {**csv_case.spec, 'file': ref}
        d = load_dataset(write_yaml(tmp_path / f'env{i}.yaml', spec))
        assert_same_data(d, load_dataset(csv_case.yaml))


def test_unset_environment_variable_refused(csv_case, tmp_path, monkeypatch):
    monkeypatch.delenv('IDENT_TEST_UNSET_DIR', raising=False)
    spec = {**csv_case.spec, 'file': '${IDENT_TEST_UNSET_DIR}/good.csv'}
    path = write_yaml(tmp_path / 'unset.yaml', spec)
    with pytest.raises(InputError) as exc:
        load_dataset(path)
    message = str(exc.value)
    assert 'unset.yaml' in message and 'field file' in message
    assert 'IDENT_TEST_UNSET_DIR' in message and 'not set' in message


# --- transmission -------------------------------------------------------------------------------

RATIOS = np.array([100.0, 160.0, 120.0, 80.0, 80.0, 50.0])
COUPLING = [[5, 4, 50.0]]                               # motor 6 also turns with joint 5
OFFSET = np.array([0.1, -0.2, 0.0, 0.3, 0.05, 0.0])
TORQUE_SCALE = np.array([2.0, 2.0, 1.5, 0.5, 0.5, 0.25])   # N·m per A at the motor


def gear_matrix():
    gear = np.diag(RATIOS)
    for motor, joint, value in COUPLING:
        gear[motor, joint] = value
    return gear


def test_transmission_with_coupling_round_trip(csv_case):
    gear = gear_matrix()
    q_motor = (csv_case.q - OFFSET) @ gear.T             # q = R⁻¹ q_m + offset
    current = np.linalg.solve(gear.T, csv_case.tau.T).T / TORQUE_SCALE   # tau = Rᵀ (s · i)
    path = csv_case.variant('motor', q=q_motor, tau=current, update={'transmission': {
        'gear_ratios': RATIOS.tolist(), 'coupling': COUPLING, 'joint_offset': OFFSET.tolist(),
        'torque_scale': TORQUE_SCALE.tolist()}})
    d = load_dataset(path)
    np.testing.assert_allclose(d.position, csv_case.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.effort, csv_case.tau, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(d.transmission.gear_matrix, gear)
    np.testing.assert_array_equal(d.transmission.joint_offset, OFFSET)
    np.testing.assert_array_equal(d.transmission.torque_scale, TORQUE_SCALE)
    # the same transmission given as a full gear matrix
    same = load_dataset(csv_case.variant('motor_matrix', q=q_motor, tau=current, update={
        'transmission': {'gear_matrix': gear.tolist(), 'joint_offset': OFFSET.tolist(),
                         'torque_scale': TORQUE_SCALE.tolist()}}))
    np.testing.assert_allclose(same.position, d.position, rtol=0, atol=1e-12)
    np.testing.assert_allclose(same.effort, d.effort, rtol=0, atol=1e-12)


def test_motor_angles_beyond_joint_side_limit_accepted(csv_case):
    ratios = np.array([100.0, 100.0, 100.0, 100.0, 100.0, 160.0])
    q = csv_case.q.copy()
    q[:, 5] = np.deg2rad(400) * np.sin(2 * np.pi * csv_case.t / 10)   # e.g. ABB IRB 120 axis 6
    path = csv_case.variant('bigmotor', q=q * ratios, tau=csv_case.tau / ratios,
                            update={'transmission': {'gear_ratios': ratios.tolist()}})
    d = load_dataset(path)
    np.testing.assert_allclose(d.position, q, rtol=0, atol=1e-12)


# --- joint order --------------------------------------------------------------------------------

def test_joint_order_differing_from_urdf(csv_case, six_axis, tmp_path):
    order = [3, 0, 5, 1, 4, 2]
    shuffled = [JOINTS[i] for i in order]
    write_csv(tmp_path / 'shuffled.csv', csv_case.t, csv_case.q[:, order], csv_case.tau[:, order],
              joints=shuffled)
    path = write_yaml(tmp_path / 'shuffled.yaml', description('shuffled.csv', joints=shuffled))
    d = load_dataset(path, six_axis.joint_names)
    assert d.joint_names == shuffled
    reference = load_dataset(csv_case.yaml, six_axis.joint_names)
    assert_same_data(d.aligned(six_axis), reference)

    settings = IdentificationConfig()
    a = identify(six_axis, [reference], settings)
    b = identify(six_axis, [d], settings)
    assert a.base.names == b.base.names
    np.testing.assert_allclose(b.values, a.values, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.std, a.std, rtol=1e-9, atol=1e-12)
    assert b.stats['relative_error_percent'] == pytest.approx(
        a.stats['relative_error_percent'], rel=1e-9)


def test_aligned_permutes_a_coupled_transmission(csv_case, six_axis, tmp_path):
    gear = gear_matrix()
    order = [5, 4, 3, 2, 1, 0]
    shuffled = [JOINTS[i] for i in order]
    q_motor = (csv_case.q - OFFSET) @ gear.T
    current = np.linalg.solve(gear.T, csv_case.tau.T).T / TORQUE_SCALE
    write_csv(tmp_path / 'rev.csv', csv_case.t, q_motor[:, order], current[:, order],
              joints=shuffled)
    perm = np.array(order)
    spec = description('rev.csv', joints=shuffled)
    spec['transmission'] = {'gear_matrix': gear[np.ix_(perm, perm)].tolist(),
                            'joint_offset': OFFSET[perm].tolist(),
                            'torque_scale': TORQUE_SCALE[perm].tolist()}
    d = load_dataset(write_yaml(tmp_path / 'rev.yaml', spec)).aligned(six_axis)
    assert d.joint_names == JOINTS
    np.testing.assert_allclose(d.position, csv_case.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.effort, csv_case.tau, rtol=0, atol=1e-10)
    np.testing.assert_allclose(d.transmission.gear_matrix, gear)
    np.testing.assert_allclose(d.transmission.joint_offset, OFFSET)
    np.testing.assert_allclose(d.transmission.torque_scale, TORQUE_SCALE)


def test_load_source_reads_back_a_window_and_a_split(make_synthetic, tmp_path):
    """The source names of a windowed bag (``load_bag``) and of a split part name the same
    samples: ``load_source`` of the name gives them again (how the report finds the data a
    RESULT.yaml was identified on)."""
    from datafiles import write_joint_state_bag

    from ident_core.data.datasets import load_bag, load_source
    from ident_core.data.sources import short_source

    dataset = make_synthetic()
    bag = write_joint_state_bag(tmp_path / 'bag', dataset)
    start = 1_700_000_000 + 2.0
    windowed, _ = load_bag(bag, window=(start, start + 10.0), min_coverage=0.0)
    assert windowed.source == f'{bag}[/joint_states rows 200:1201]'
    for part in (windowed, *windowed.split(0.375)):
        again = load_source(part.source, JOINTS)
        assert again.source == part.source
        np.testing.assert_array_equal(again.t, part.t)
        np.testing.assert_array_equal(again.position, part.position)
        np.testing.assert_array_equal(again.effort, part.effort)
    last = windowed.split(0.375)[1].source
    assert short_source(last) == 'bag[/joint_states rows 200:1201][last 62.5%]'
