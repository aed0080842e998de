"""Bad input through the command line, the cases that need more than the one-line check of
the corpus (tests/bad_inputs/cases.yaml, run by tests/test_bad_inputs.py).

Every refusal must be ONE stderr line ``robot-ident: error: ...`` naming the file and the
field/row/joint at fault, exit code 2, and no traceback (``datafiles.assert_one_line_error``).
The data are a synthetic 20 s, 100 Hz recording of ``urdf/six_axis_3kg.urdf`` written as a CSV +
YAML description pair (``csv_case`` fixture, conftest.py); each test writes a broken variant.
"""
from __future__ import annotations

import csv
import json
from dataclasses import replace

import numpy as np
import pytest
import yaml
from datafiles import (
    JOINTS,
    URDF,
    assert_one_line_error,
    write_joint_state_bag,
    write_npz,
    write_yaml,
)

from ident_core.cli import main
from ident_core.data.readers import excitation_window
from ident_core.errors import ExcitationError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify


def identify_cli(data, tmp_path, *extra, urdf=URDF):
    """``robot-ident identify --urdf URDF --data DATA --out tmp/RESULT.yaml [extra]``."""
    return main(['identify', '--urdf', str(urdf), '--data', str(data),
                 '--out', str(tmp_path / 'RESULT.yaml'), *map(str, extra)])


def few_rows(case, n):
    return dict(t=case.t[:n], q=case.q[:n], tau=case.tau[:n])


def joint6_still(case):
    """The recording with joint 6 held at a constant position (never moves)."""
    q = case.q.copy()
    q[:, 5] = 0.3
    return q


# --- 0. the valid pair the broken variants derive from -----------------------------------------

def test_valid_description_identifies(csv_case, tmp_path, capsys):
    assert identify_cli(csv_case.yaml, tmp_path) == 0
    assert capsys.readouterr().err == ''
    assert (tmp_path / 'RESULT.yaml').is_file()


# --- 1. fields, keys and columns ----------------------------------------------------------------


def test_unknown_field_name(csv_case, tmp_path, capsys):
    bad = csv_case.variant('typo', update={'efort': {'columns': [7, 8, 9, 10, 11, 12]}})
    rc = identify_cli(bad, tmp_path)
    line = assert_one_line_error(rc, capsys, 'typo.yaml', 'unknown field', 'efort')
    assert 'effort' in line.split('known:')[1]          # lists the known field names


def test_npz_key_missing_lists_available_keys(make_synthetic, tmp_path, capsys):
    npz = write_npz(tmp_path / 'no_torques.npz', make_synthetic(), drop=['torques'])
    rc = identify_cli(npz, tmp_path)
    line = assert_one_line_error(rc, capsys, 'no_torques.npz', 'effort', "'torques'")
    keys = line.split('keys:')[1]
    for key in ('positions', 'times', 'velocities'):
        assert key in keys


def test_csv_column_name_unknown(csv_case, tmp_path, capsys):
    names = [f'tau_{j}' for j in JOINTS[:5]] + ['torque_j6']
    bad = csv_case.variant('colname', update={'effort': {'columns': names}})
    rc = identify_cli(bad, tmp_path)
    line = assert_one_line_error(rc, capsys, 'colname.csv', 'effort', "'torque_j6'")
    assert 'tau_joint6' in line                         # shows the header


# --- 2. NaN / absurd rows -----------------------------------------------------------------------

def nan_and_absurd_start(case):
    """Like the UR10e logs: the first rows hold NaN, the next ones 1e282, then valid data."""
    t, q, tau = case.t.copy(), case.q.copy(), case.tau.copy()
    t[:3] = q[:3] = tau[:3] = np.nan
    q[3:5] = 1e282
    tau[3:5] = 1e282
    return dict(t=t, q=q, tau=tau)


def test_nan_rows_at_start_dropped_when_asked(csv_case, tmp_path, capsys):
    data = csv_case.variant('nandrop', update={'drop_invalid_rows': True},
                            **nan_and_absurd_start(csv_case))
    rc = identify_cli(data, tmp_path)
    err = capsys.readouterr().err
    assert rc == 0, err
    assert 'Traceback' not in err
    warnings = [line for line in err.splitlines() if line.startswith('robot-ident: warning:')]
    assert len(warnings) == 1, err
    assert 'nandrop.yaml' in warnings[0] and 'dropped rows 0' in warnings[0]
    assert '5 row(s)' in warnings[0]
    result = yaml.safe_load((tmp_path / 'RESULT.yaml').read_text())
    assert result['identification']['relative_error_percent'] < 5


# --- 3. time stamps -----------------------------------------------------------------------------


STAMPS = {'time': {'column': 't', 'clock': 'stamps'}}   # auto puts a shared stamp on a cycle


def test_messages_print_plain_numbers(csv_case, tmp_path, capsys):
    t = csv_case.t.copy()
    t[300] = t[299]
    tau = csv_case.tau.copy()
    tau[100, 3] = np.nan
    for name, data in (('dup', dict(t=t, update=STAMPS)), ('nan', dict(tau=tau))):
        rc = identify_cli(csv_case.variant(name, **data), tmp_path)
        line = assert_one_line_error(rc, capsys, f'{name}.yaml')
        assert 'np.float64' not in line


# --- 4. too few samples -------------------------------------------------------------------------

def test_too_few_samples(csv_case, tmp_path, capsys):
    bad = csv_case.variant('eighty', **few_rows(csv_case, 80))
    rc = identify_cli(bad, tmp_path)
    assert_one_line_error(rc, capsys, 'too few samples', '54 base parameters')


# --- 5. excitation ------------------------------------------------------------------------------

def test_joint_that_never_moves_is_not_excited(csv_case, tmp_path, capsys):
    bad = csv_case.variant('still6', q=joint6_still(csv_case))
    rc = identify_cli(bad, tmp_path)
    line = assert_one_line_error(rc, capsys, 'does not excite')
    assert 'fv6' in line or 'fc6' in line
    assert 'condition number' in line or 'column is zero' in line
    names = line.split('parameter(s)')[1]
    assert not any(f'{p}{i}' in names for p in ('fv', 'fc') for i in range(1, 6))


def test_identify_raises_excitation_error(six_axis, make_synthetic):
    d = make_synthetic()
    q = d.position.copy()
    q[:, 5] = 0.3
    still = replace(d, position=q)
    with pytest.raises(ExcitationError, match=r'fv6'):
        identify(six_axis, [still], IdentificationConfig())


def test_excitation_error_names_the_data_file(csv_case, tmp_path, capsys):
    bad = csv_case.variant('still6', q=joint6_still(csv_case))
    rc = identify_cli(bad, tmp_path)
    assert_one_line_error(rc, capsys, 'still6.yaml', 'fv6')


# --- 6. rosbag2 --------------------------------------------------------------------------------

def test_bag_without_the_topic(make_synthetic, tmp_path, capsys):
    bag = write_joint_state_bag(tmp_path / 'armbag', make_synthetic(duration=2.0),
                                topic='/arm/joint_states')
    rc = identify_cli(bag, tmp_path)
    assert_one_line_error(rc, capsys, 'armbag', "'/joint_states'", '/arm/joint_states')


def test_description_names_a_topic_missing_from_the_bag(make_synthetic, tmp_path, capsys):
    write_joint_state_bag(tmp_path / 'bag', make_synthetic(duration=2.0))
    desc = write_yaml(tmp_path / 'bagdesc.yaml', {'file': 'bag', 'topic': '/robot/joint_states'})
    rc = identify_cli(desc, tmp_path)
    assert_one_line_error(rc, capsys, 'bag', "'/robot/joint_states'", 'topics: /joint_states')


def test_bag_identifies(make_synthetic, truth, tmp_path, capsys):
    d = make_synthetic()
    # message 0 (and every 3rd) lists the joints in a random order
    bag = write_joint_state_bag(tmp_path / 'bag', d, shuffle_every=3, seed=5)
    rc = identify_cli(bag, tmp_path)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert 'Traceback' not in captured.err
    result = yaml.safe_load((tmp_path / 'RESULT.yaml').read_text())
    ident = result['identification']
    assert ident['data'] == [str(bag)]
    assert ident['samples'] > 54
    assert ident['relative_error_percent'] < 3
    assert 'result written to' in captured.out
    act = result['actuators']
    assert act['joints'] == JOINTS
    np.testing.assert_allclose(act['fv'], truth.fv, rtol=0.1)
    np.testing.assert_allclose(act['fc'], truth.fc, rtol=0.1)
    # a bag without an excitation description has no excitation window (not an error)
    assert excitation_window(bag, '/excitation_node/trajectory') is None


# --- 7. a valid run end to end -----------------------------------------------------------------

def test_identify_validate_end_to_end(csv_case, make_synthetic, tmp_path, capsys):
    other = make_synthetic(seed=11)
    check = csv_case.variant('check', t=other.t, q=other.position, tau=other.effort)
    result_path = tmp_path / 'RESULT.yaml'
    rc = identify_cli(csv_case.yaml, tmp_path, '--validate', check)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.err == ''

    result = yaml.safe_load(result_path.read_text())
    assert result['format'] == 'robot-ident/result/1'
    assert set(result) >= {'robot', 'config', 'transmission', 'base_parameters',
                           'base_definition', 'actuators', 'identification', 'validation'}
    assert result['robot']['joints'] == JOINTS
    assert result['robot']['urdf'] == str(URDF.resolve())
    assert len(result['robot']['urdf_sha256']) == 64
    assert set(result['config']) >= {'friction', 'rotor_inertia', 'estimator', 'cutoff_hz',
                                       'filter_order', 'use_recorded_velocity', 'decimate',
                                       'rank_tolerance', 'seed'}
    assert set(result['transmission']) == {'gear_matrix', 'joint_offset', 'torque_scale'}
    params = result['base_parameters']
    assert len(params) == result['identification']['base_parameter_count'] == 54
    assert all(set(p) == {'name', 'value', 'std', 'rel_std_percent'} for p in params)
    assert set(result['base_definition']) >= {'tolerance', 'standard_names', 'independent',
                                              'dependent', 'k_d'}
    assert set(result['actuators']) == {'joints', 'fv', 'fc', 'offset'}
    assert set(result['identification']) >= {'data', 'samples', 'base_parameter_count',
                                              'condition_number', 'rank_gap', 'residual_rms',
                                              'relative_error_percent'}
    assert len(result['identification']['residual_rms']) == 6
    [report] = result['validation']
    assert set(report) >= {'data', 'relative_error_percent', 'rmse', 'nrms_percent',
                           'absolute_error'}
    assert report['data'] == str(check)
    assert report['relative_error_percent'] < 5
    assert str(check) in captured.out or 'check.yaml' in captured.out

    pred_csv = tmp_path / 'pred.csv'
    rc = main(['validate', '--model', str(result_path), '--data', str(check), '--json',
               '--csv', str(pred_csv)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    lines = captured.out.strip().splitlines()
    assert len(lines) == 1
    metrics = json.loads(lines[0])
    assert isinstance(metrics, dict)
    assert metrics['data'] == str(check)
    assert metrics['relative_error_percent'] == pytest.approx(report['relative_error_percent'],
                                                              rel=1e-9)
    assert metrics['rmse'] == pytest.approx(report['rmse'], rel=1e-9)

    with pred_csv.open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == (['t'] + [f'measured_{j}' for j in JOINTS]
                       + [f'predicted_{j}' for j in JOINTS])
    values = np.array(rows[1:], dtype=float)
    assert values.shape[1] == 13 and len(values) > 100
    assert np.all(np.diff(values[:, 0]) > 0)
