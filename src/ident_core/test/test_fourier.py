"""Finite Fourier series excitation trajectories (docs/methods.md §6, payload_identification_2017
eq. (14)) and their YAML file format."""
import math
import re

import numpy as np
import pytest
import yaml
from helpers import load_error

from ident_core.errors import InputError
from ident_core.excitation.fourier import FourierTrajectory, load_trajectory, trajectory_from_dict

# payload_identification_2017, Table 1: per joint q0, a1, b1, a2, b2, ..., a6, b6.
TABLE1 = np.array([
    [-0.001, 0.092, -1.071, 0.062, 0.096, -0.273, 0.839, 0.011, -0.050, 0.411, -0.290, 0.326,
     -0.064],
    [-1.504, -0.027, -0.383, -0.051, -0.222, 0.387, -0.931, -0.375, -0.572, -0.434, 0.577, 0.461,
     0.811],
    [-1.303, -0.026, 0.795, -0.122, -0.429, 0.246, 0.598, -0.096, 0.838, -0.236, -0.320, 0.076,
     -0.498],
    [-0.231, -0.250, -0.661, 0.111, 0.183, 0.492, -1.501, -0.514, -0.179, 0.107, 0.919, 0.838,
     0.138],
    [-0.136, -0.173, 0.616, -0.129, 0.873, 0.430, -0.678, -0.133, 0.017, 0.239, -0.895, -0.328,
     0.848],
    [-0.300, -0.667, -0.916, -0.044, 0.132, -1.158, -0.898, -0.467, -0.682, -0.234, -1.190, -0.351,
     0.245]])
JOINTS = [f'joint{i}' for i in range(1, 7)]


def table1(period=5.0, periods=2):
    return FourierTrajectory(JOINTS, 2 * math.pi / period, TABLE1[:, 0], TABLE1[:, 1::2],
                             TABLE1[:, 2::2], periods, 'table1')


def valid_dict():
    return {'format': 'robot-ident/excitation/1', 'name': 'two', 'joint_names': ['j1', 'j2'],
            'wf': 1.25, 'periods': 3, 'q0': [0.1, -0.2],
            'a': [[0.5, -0.1, 0.05], [0.2, 0.3, -0.4]],
            'b': [[-0.3, 0.2, 0.1], [0.0, -0.1, 0.25]]}


# --- evaluation -------------------------------------------------------------------------------

def test_velocity_and_acceleration_are_the_derivatives_of_position():
    traj = table1()
    h = 1e-5
    t = np.linspace(0.0, traj.period, 2001)
    q_plus, qd_plus, _ = traj.evaluate(t + h)
    q_minus, qd_minus, _ = traj.evaluate(t - h)
    _, qd, qdd = traj.evaluate(t)
    # truncation error h²/6·q''' (|q'''| < 200 rad/s³ here) and rounding ~1e-16/h
    np.testing.assert_allclose((q_plus - q_minus) / (2 * h), qd, rtol=0, atol=1e-7)
    np.testing.assert_allclose((qd_plus - qd_minus) / (2 * h), qdd, rtol=0, atol=1e-6)
    assert np.abs(qd).max() > 1 and np.abs(qdd).max() > 10      # the check is not vacuous


def test_trajectory_is_periodic():
    traj = table1()
    t = np.linspace(0.0, traj.period, 777)
    for shifted, original in zip(traj.evaluate(t + traj.period), traj.evaluate(t)):
        np.testing.assert_allclose(shifted, original, rtol=0, atol=1e-10)
    for shifted, original in zip(traj.evaluate(t + 3 * traj.period), traj.evaluate(t)):
        np.testing.assert_allclose(shifted, original, rtol=0, atol=1e-10)
    # but not periodic with half the period
    assert np.abs(traj.evaluate(t + traj.period / 2)[0] - traj.evaluate(t)[0]).max() > 0.1


def test_single_harmonic_closed_form():
    wf, a, b, q0 = 0.8, 0.7, -0.4, 0.25
    # only the third harmonic is non-zero: the amplitudes scale with 1/(wf·l), l = 3
    traj = FourierTrajectory(['j'], wf, np.array([q0]), np.array([[0.0, 0.0, a]]),
                             np.array([[0.0, 0.0, b]]))
    t = np.linspace(-2.0, 9.0, 501)
    w = 3 * wf
    q, qd, qdd = traj.evaluate(t)
    np.testing.assert_allclose(q[:, 0], q0 + a / w * np.sin(w * t) - b / w * np.cos(w * t),
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(qd[:, 0], a * np.cos(w * t) + b * np.sin(w * t), rtol=0, atol=1e-14)
    np.testing.assert_allclose(qdd[:, 0], -a * w * np.sin(w * t) + b * w * np.cos(w * t),
                               rtol=0, atol=1e-14)


def test_mean_position_over_a_period_is_q0_and_start_state():
    traj = table1()
    t = np.arange(4000) * traj.period / 4000     # uniform over one period: exact mean of harmonics
    q, qd, qdd = traj.evaluate(t)
    np.testing.assert_allclose(q.mean(axis=0), TABLE1[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(qd.mean(axis=0), 0, atol=1e-12)
    # at t = 0: q = q0 − Σ b/(wf l), qd = Σ a, qdd = Σ b wf l
    wl = traj.wf * np.arange(1, 7)
    q_0, qd_0, qdd_0 = (x[0] for x in traj.evaluate(0.0))
    np.testing.assert_allclose(q_0, TABLE1[:, 0] - (TABLE1[:, 2::2] / wl).sum(axis=1))
    np.testing.assert_allclose(qd_0, TABLE1[:, 1::2].sum(axis=1))
    np.testing.assert_allclose(qdd_0, (TABLE1[:, 2::2] * wl).sum(axis=1))


def test_scalar_time_and_derived_properties():
    traj = table1(period=5.0, periods=2)
    q, qd, qdd = traj.evaluate(1.3)
    assert q.shape == qd.shape == qdd.shape == (1, 6)
    assert traj.n == 6 and traj.harmonics == 6
    assert traj.period == pytest.approx(5.0, rel=1e-15)
    assert traj.duration == pytest.approx(10.0, rel=1e-15)


# --- file format --------------------------------------------------------------------------------

def test_yaml_round_trip(tmp_path):
    extra = {'source': 'payload_identification_2017 Table 1',
             'objectives': {'condition_number': 42.5}, 'margins': {'position': 0.05},
             'urdf_sha256': 'ab' * 32}
    traj = FourierTrajectory(JOINTS, 2 * math.pi / 5, TABLE1[:, 0].copy(), TABLE1[:, 1::2].copy(),
                             TABLE1[:, 2::2].copy(), 4, 'table1', dict(extra))
    path = traj.to_file().write(tmp_path / 'excitation.yaml')
    assert path.is_file()
    loaded = load_trajectory(path)
    assert loaded.joint_names == JOINTS
    assert loaded.name == 'table1'
    assert loaded.periods == 4
    assert loaded.wf == traj.wf                       # exact: floats survive YAML
    np.testing.assert_array_equal(loaded.q0, TABLE1[:, 0])
    np.testing.assert_array_equal(loaded.a, TABLE1[:, 1::2])
    np.testing.assert_array_equal(loaded.b, TABLE1[:, 2::2])
    assert loaded.extra == extra
    t = np.linspace(0, 5, 50)
    for x, y in zip(loaded.evaluate(t), traj.evaluate(t)):
        np.testing.assert_array_equal(x, y)
    # the file is plain YAML with the documented fields
    raw = yaml.safe_load(path.read_text())
    assert raw['format'] == 'robot-ident/excitation/1'
    assert raw['period'] == pytest.approx(5.0, rel=1e-12)


def test_period_instead_of_wf_and_defaults(tmp_path):
    data = valid_dict()
    del data['wf'], data['periods'], data['name']
    data['period'] = 4.0
    path = tmp_path / 'by_period.yaml'
    path.write_text(yaml.safe_dump(data))
    traj = load_trajectory(path)
    assert traj.wf == pytest.approx(2 * math.pi / 4.0, rel=1e-15)
    assert traj.periods == 1
    assert traj.name == 'by_period'            # the file stem when the file has no name
    assert traj.extra == {}
    # wf and period may both be given when they agree
    data['wf'] = 2 * math.pi / 4.0
    assert trajectory_from_dict(data, 'x.yaml').wf == pytest.approx(math.pi / 2)
    # an integer wf is accepted
    assert trajectory_from_dict({**valid_dict(), 'wf': 2}, 'x.yaml').wf == 2.0


def _set(key, value):
    def change(d):
        d[key] = value
    return change


def _delete(key):
    def change(d):
        del d[key]
    return change


BAD_FIELDS = [
    ('missing joint_names', _delete('joint_names'), 'joint_names'),
    ('empty joint_names', _set('joint_names', []), 'joint_names'),
    ('joint_names not strings', _set('joint_names', ['j1', 2]), 'joint_names'),
    ('q0 rows', _set('q0', [0.1, 0.2, 0.3]), 'q0'),
    ('a rows', _set('a', [[0.5, -0.1, 0.05]]), 'field a'),
    ('b rows', _set('b', [[0.5, -0.1, 0.05]] * 3), 'field b'),
    ('a/b harmonics', _set('b', [[0.5, -0.1], [0.2, 0.3]]), 'a and b'),
    ('no harmonics', lambda d: d.update(a=[[], []], b=[[], []]), 'a and b'),
    ('a not a matrix', _set('a', [0.5, 0.2]), 'field a'),
    ('q0 not a list', _set('q0', [[0.1], [0.2]]), 'q0'),
    ('a ragged', _set('a', [[0.5, -0.1, 0.05], [0.2, 0.3]]), 'field a'),
    ('a text', _set('a', [['x', 1, 2], [0, 1, 2]]), 'field a'),
    ('missing b', _delete('b'), 'field b'),
    ('missing q0', _delete('q0'), 'q0'),
    ('NaN in q0', _set('q0', [0.1, float('nan')]), 'q0'),
    ('inf in a', _set('a', [[0.5, float('inf'), 0.05], [0.2, 0.3, -0.4]]), 'field a'),
    ('NaN in b', _set('b', [[0.5, 0.1, 0.05], [0.2, float('nan'), -0.4]]), 'field b'),
    ('zero wf', _set('wf', 0), 'wf'),
    ('negative wf', _set('wf', -1.0), 'wf'),
    ('NaN wf', _set('wf', float('nan')), 'wf'),
    ('text wf', _set('wf', 'fast'), 'wf'),
    ('negative period', lambda d: (d.pop('wf'), d.update(period=-5.0)), 'period'),
    ('no frequency', _delete('wf'), 'wf'),
    ('wf/period disagree', _set('period', 5.0), 'period'),
    ('unknown field', _set('harmonic_count', 3), 'harmonic_count'),
    ('zero periods', _set('periods', 0), 'periods'),
    ('fractional periods', _set('periods', 1.5), 'periods'),
    ('bool periods', _set('periods', True), 'periods'),
    ('text periods', _set('periods', 'two'), 'periods'),
    ('wrong format', _set('format', 'robot-ident/excitation/99'), 'format'),
]


@pytest.mark.parametrize('change, field', [(c, f) for _, c, f in BAD_FIELDS],
                         ids=[i for i, _, _ in BAD_FIELDS])
def test_bad_field_names_file_and_field(tmp_path, change, field):
    data = valid_dict()
    trajectory_from_dict(data, 'ok.yaml')           # the unmodified content is valid
    change(data)
    message = load_error(load_trajectory, data, tmp_path / 'bad_excitation.yaml')
    assert re.search(re.escape(field) + r'\b', message), message


def test_not_a_mapping(tmp_path):
    path = tmp_path / 'list.yaml'
    path.write_text('- 1\n- 2\n')
    with pytest.raises(InputError, match='list.yaml'):
        load_trajectory(path)


def test_missing_file(tmp_path):
    path = tmp_path / 'nowhere' / 'missing.yaml'
    with pytest.raises(InputError, match='not found') as info:
        load_trajectory(path)
    assert str(path) in str(info.value)


def test_bad_yaml(tmp_path):
    path = tmp_path / 'broken.yaml'
    path.write_text('joint_names: [j1, j2\nwf: 1.0\n')
    with pytest.raises(InputError) as info:
        load_trajectory(path)
    assert str(path) in str(info.value)
