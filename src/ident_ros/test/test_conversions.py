"""Message conversions of ident_ros (``conversions``) without DDS."""
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Time
from visualization_msgs.msg import Marker

from ident_core.friction.fit import FrictionFit
from ident_core.friction.models import friction_torque
from ident_core.model.inertial import LinkInertial, link_inertials
from ident_core.model.robot import load_robot
from ident_core.payload.parameters import PayloadEstimate
from ident_ros.conversions import (
    BOX_ALPHA,
    BOX_MARKER_ID,
    COM_MARKER_ID,
    IDENTIFIED_COLOR,
    URDF_COLOR,
    WARNING_COLOR,
    collision_markers,
    collision_msg,
    friction_msg,
    friction_result_msg,
    friction_summary,
    inertia_markers,
    joint_state_msg,
    parameters_msg,
    payload_markers,
    payload_msg,
    payload_msgs,
    payload_summary,
    recording_info_msg,
)

REPO = Path(__file__).resolve().parents[3]


def test_parameters_message_from_result():
    result = {
        'robot': {'name': 'arm', 'joints': ['j1', 'j2']},
        'config': {'estimator': 'wls', 'friction': 'coulomb-viscous-offset'},
        'base_parameters': [{'name': 'Izz1 + Ia1', 'value': 0.5, 'std': 0.01,
                             'rel_std_percent': 2.0}],
        'actuators': {'joints': ['j1', 'j2'], 'fv': [1.0, 2.0], 'fc': [0.5, None],
                      'offset': [0.1, 0.2], 'Ia': [None, 0.03]},
        'identification': {'condition_number': 12.5, 'samples': 100, 'residual_rms': [1, 2],
                           'relative_error_percent': 3.0},
        'validation': [{'rmse': [0.1, 0.2], 'relative_error_percent': 1.5}],
    }
    msg = parameters_msg(result, Time(sec=1))
    assert msg.robot_name == 'arm' and msg.base_parameter_names == ['Izz1 + Ia1']
    assert msg.coulomb_friction[0] == 0.5 and math.isnan(msg.coulomb_friction[1])
    assert math.isnan(msg.rotor_inertia[0]) and msg.rotor_inertia[1] == 0.03
    assert list(msg.rmse) == [0.1, 0.2] and msg.relative_error_percent == 1.5
    assert msg.friction_model == 'coulomb-viscous-offset'
    assert all(math.isnan(v) for v in [*msg.stribeck_static, *msg.reversal_band])


def test_parameters_message_carries_the_stribeck_shape():
    result = {
        'robot': {'name': 'arm', 'joints': ['j1', 'j2']},
        'config': {'estimator': 'wls', 'friction': 'improved-stribeck'},
        'base_parameters': [],
        'actuators': {'joints': ['j1', 'j2'], 'fv': [1.0, 2.0], 'fc': [0.5, 0.6],
                      'offset': [0.1, 0.2], 'fs': [0.9, 1.1], 'vs': [0.02, 0.03],
                      'delta': [2.0, 2.0], 'v_l': [0.005, 0.01]},
        'identification': {'condition_number': 12.5, 'samples': 100, 'residual_rms': [1, 2],
                           'relative_error_percent': 3.0},
        'validation': [],
    }
    msg = parameters_msg(result, Time(sec=1), '/data/bag.result.yaml')
    assert msg.result_path == '/data/bag.result.yaml'
    assert msg.friction_model == 'improved-stribeck'
    assert list(msg.stribeck_static) == [0.9, 1.1]
    assert list(msg.stribeck_velocity) == [0.02, 0.03]
    assert list(msg.stribeck_exponent) == [2.0, 2.0]
    assert list(msg.reversal_band) == [0.005, 0.01]


def _friction_fit(actuator='joint4', model='improved-stribeck', optimizer='lsq'):
    """A fit with every parameter of the model and delta held fixed (no standard deviation)."""
    parameters = {'fc': 1.0, 'fs': 1.6, 'vs': 0.1, 'delta': 2.0, 'fv': 0.5, 'offset': 0.08,
                  'v_l': 0.02}
    std = {k: 0.01 * v for k, v in parameters.items() if k != 'delta'}
    return FrictionFit(actuator, model, optimizer, parameters, std, rss=0.25, rms=0.005,
                       samples=10000, seconds=0.2, evaluations=30,
                       warnings=['v_l not determined: only 15 samples inside |u| < v_l'])


def test_friction_message_of_a_fit_in_display_order_with_nan_for_fixed():
    fit = _friction_fit()
    msg = friction_msg(fit)
    assert (msg.joint, msg.model, msg.optimizer) == ('joint4', 'improved-stribeck', 'lsq')
    assert list(msg.parameter_names) == ['fc', 'fs', 'vs', 'delta', 'fv', 'offset', 'v_l']
    assert list(msg.values) == [fit.parameters[n] for n in msg.parameter_names]
    std = dict(zip(msg.parameter_names, msg.std))
    assert math.isnan(std['delta']) and std['fs'] == pytest.approx(0.016)
    assert (msg.rss, msg.rms, msg.samples) == (0.25, 0.005, 10000)
    assert list(msg.warnings) == fit.warnings
    # the values give back the model's torque
    u = np.linspace(-1, 1, 41)
    np.testing.assert_allclose(
        friction_torque(msg.model, u, dict(zip(msg.parameter_names, msg.values)))[0],
        fit.torque(u))
    plain = friction_msg(_friction_fit(model='coulomb-viscous', optimizer='ga'))
    assert list(plain.parameter_names) == ['fc', 'fv'] and plain.optimizer == 'ga'


def test_friction_result_lists_the_selected_fits_in_joint_order():
    result = SimpleNamespace(
        robot=SimpleNamespace(joint_names=['joint1', 'joint2', 'joint3', 'joint4']),
        rigid_source='RESULT.yaml',
        selected={'joint4': _friction_fit('joint4'), 'joint2': _friction_fit('joint2')})
    msg = friction_result_msg(result, Time(sec=7))
    assert msg.header.stamp.sec == 7 and msg.rigid_body_model == 'RESULT.yaml'
    assert [j.joint for j in msg.joints] == ['joint2', 'joint4']
    line = 'joint2: improved-stribeck by lsq, rms 0.005 N·m; joint4: improved-stribeck by lsq, ' \
        'rms 0.005 N·m'
    assert friction_summary(msg, 0) == line
    assert friction_summary(msg, 2) == line + ' (2 fit(s) failed)'


# A homogeneous 2 kg box of sides 0.1 × 0.2 × 0.3 m, turned about an oblique axis, its centre
# of mass off the payload frame's origin.
BOX_MASS, BOX_SIDES = 2.0, np.array([0.1, 0.2, 0.3])
BOX_ROTATION = pin.exp3(np.array([0.3, -0.5, 0.8]))
BOX_COM = np.array([0.01, -0.02, 0.05])


def _box_inertia(mass, sides):
    a2, b2, c2 = np.square(sides)
    return mass / 12 * np.diag([b2 + c2, a2 + c2, a2 + b2])


def _estimate(values, method='global'):
    return PayloadEstimate(method, 'flange', np.asarray(values, float),
                           np.diag((1e-3 * np.maximum(np.abs(values), 1e-3)) ** 2),
                           np.zeros(6), 1000)


def _box_estimate():
    inertia = BOX_ROTATION @ _box_inertia(BOX_MASS, BOX_SIDES) @ BOX_ROTATION.T
    return _estimate(pin.Inertia(BOX_MASS, BOX_COM, inertia).toDynamicParameters()), inertia


def test_payload_message_of_an_estimate_with_inertia():
    estimate, inertia = _box_estimate()
    msg = payload_msg(estimate, Time(sec=3), drive_gains=np.array([1.0, 0.98]))
    assert msg.header.frame_id == 'flange' and msg.header.stamp.sec == 3
    assert msg.method == 'global' and msg.physically_consistent and not msg.unexcited
    assert msg.inertia.m == pytest.approx(BOX_MASS)
    assert [msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z] == pytest.approx(BOX_COM)
    for name, (i, j) in (('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
                         ('iyz', (1, 2)), ('izz', (2, 2))):
        assert getattr(msg.inertia, name) == pytest.approx(inertia[i, j], abs=1e-12), name
    sd = estimate.std()
    assert msg.std.m == pytest.approx(sd['mass']) and msg.std.izz == pytest.approx(
        sd['inertia'][2, 2])
    assert list(msg.drive_gains) == [1.0, 0.98]


def test_static_estimate_has_nan_inertia_and_std_and_deletes_the_box():
    mass, com = 1.5, np.array([0.0, 0.01, 0.04])
    estimate = _estimate(np.concatenate([[mass], mass * com]), method='static')
    msg = payload_msg(estimate, Time())
    assert msg.inertia.m == pytest.approx(mass) and msg.inertia.com.z == pytest.approx(0.04)
    assert not msg.drive_gains
    for field in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
        assert math.isnan(getattr(msg.inertia, field)) and math.isnan(getattr(msg.std, field))
    assert msg.std.m > 0 and not math.isnan(msg.std.com.z)
    sphere, box = payload_markers(estimate, 'link6', pin.SE3.Identity()).markers
    assert sphere.action == Marker.ADD and sphere.pose.position.z == pytest.approx(0.04)
    assert (box.ns, box.id, box.action) == ('payload', BOX_MARKER_ID, Marker.DELETE)


def test_markers_show_the_equivalent_box_at_the_com_in_the_link():
    """The box of a known box inertia: its sides, and its orientation carried into the link,
    give back the inertia (in link axes); sphere and box sit at the COM placed in the link."""
    estimate, inertia = _box_estimate()
    placement = pin.SE3(pin.exp3(np.array([0.0, 0.0, math.pi / 2])), np.array([0, 0, 0.08]))
    sphere, box = payload_markers(estimate, 'link6', placement).markers
    com = placement.act(BOX_COM)
    for marker, kind, marker_id in ((sphere, Marker.SPHERE, COM_MARKER_ID),
                                    (box, Marker.CUBE, BOX_MARKER_ID)):
        assert marker.header.frame_id == 'link6' and marker.ns == 'payload'
        assert (marker.type, marker.id, marker.action) == (kind, marker_id, Marker.ADD)
        p = marker.pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], com, atol=1e-12)
    _assert_is_the_box(box, placement.rotation @ inertia @ placement.rotation.T)


def _assert_is_the_box(box, inertia):
    """The marker's sides are BOX_SIDES and, turned by its orientation, give ``inertia``."""
    sides = np.array([box.scale.x, box.scale.y, box.scale.z])
    np.testing.assert_allclose(np.sort(sides), BOX_SIDES, rtol=1e-9)
    o = box.pose.orientation
    rotation = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
    np.testing.assert_allclose(rotation @ _box_inertia(BOX_MASS, sides) @ rotation.T, inertia,
                               atol=1e-12)


def _rgba(marker):
    c = marker.color
    return (c.r, c.g, c.b, c.a)


def test_inertia_markers_show_identified_and_urdf_bodies_in_two_colours():
    """Two identified bodies of the SCARA: link1 the known box (turned, off the origin), link2
    with a negative mass (not physical); the URDF's three bodies in the other colour."""
    robot = load_robot(REPO / 'urdf' / 'scara_3dof.urdf')
    urdf = link_inertials(robot, robot.standard_parameters())
    inertia = BOX_ROTATION @ _box_inertia(BOX_MASS, BOX_SIDES) @ BOX_ROTATION.T
    identified = [LinkInertial('joint1', 'link1', BOX_MASS, BOX_COM, inertia, True),
                  LinkInertial('joint2', 'link2', -0.4, np.array([0.1, 0.0, 0.0]),
                               np.eye(3) * 1e-3, False)]
    clear, *markers = inertia_markers(identified, urdf).markers
    assert clear.action == Marker.DELETEALL
    by_key = {(m.ns, m.id): m for m in markers}
    assert len(by_key) == len(markers) == 2 * 3 + 2 + 1     # link2 identified: no sphere
    for k, body in enumerate(urdf):
        sphere, box = by_key['urdf', 2 * k], by_key['urdf', 2 * k + 1]
        assert (sphere.type, box.type) == (Marker.SPHERE, Marker.CUBE)
        assert sphere.header.frame_id == box.header.frame_id == body.link == f'link{k + 1}'
        assert _rgba(sphere) == pytest.approx((*URDF_COLOR, 1.0))
        assert _rgba(box) == pytest.approx((*URDF_COLOR, BOX_ALPHA))
        p = box.pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], body.com, atol=1e-12)
    sphere, box = by_key['identified', 0], by_key['identified', 1]
    assert sphere.header.frame_id == box.header.frame_id == 'link1'
    assert _rgba(box) == pytest.approx((*IDENTIFIED_COLOR, BOX_ALPHA))
    p = sphere.pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], BOX_COM, atol=1e-12)
    _assert_is_the_box(box, inertia)
    warning = by_key['identified', 3]
    assert warning.type == Marker.TEXT_VIEW_FACING and warning.header.frame_id == 'link2'
    assert 'not physically consistent' in warning.text and '-0.4 kg' in warning.text
    assert _rgba(warning) == pytest.approx((*WARNING_COLOR, 1.0))
    # before an identification: the URDF's alone
    assert [m.ns for m in inertia_markers([], urdf).markers[1:]] == ['urdf'] * 6


def test_collision_markers_at_the_link_and_cleared():
    clear, sphere, text = collision_markers([('link2', 'joint2', 5.123, 'N·m')]).markers
    assert clear.action == Marker.DELETEALL
    assert (sphere.type, sphere.header.frame_id, sphere.ns) == (Marker.SPHERE, 'link2',
                                                                'collision')
    assert _rgba(sphere)[:3] == pytest.approx(WARNING_COLOR)
    assert (text.type, text.header.frame_id, text.text) == (Marker.TEXT_VIEW_FACING, 'link2',
                                                            'joint2: 5.12 N·m')
    assert len({(m.ns, m.id) for m in (sphere, text)}) == 2
    assert [m.action for m in collision_markers([]).markers] == [Marker.DELETEALL]


def test_recording_info_carries_the_summary():
    from ident_core.data.bag.summary import RecordingSummary

    summary = RecordingSummary(
        path='/bags/run_20260101-120000', experiment='run', recording=True,
        joint_state_messages=2990, excitation_messages=1, dropped=7, late=2, out_of_order=1,
        nominal_period=0.001, nominal_period_source='parameter', late_threshold=0.05,
        duration=2.999, first_stamp=10.0, last_stamp=12.999, joint_states_topic='/js',
        excitation_topic='/ex', start_wall_time=None, stop_wall_time=None,
        recording_time=3.2, expected_samples=3200, lost_seconds=0.2, longest_gap=0.15,
        gap_count=2, gaps=[{'start': 9.8, 'length': 0.15}, {'start': 11.0, 'length': 0.05}])
    msg = recording_info_msg(summary, 1_700_000_000_123_456_789)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1_700_000_000, 123_456_789)
    assert (msg.path, msg.experiment, msg.recording) == (summary.path, 'run', True)
    assert (msg.joint_state_messages, msg.excitation_messages, msg.dropped, msg.late) \
        == (2990, 1, 7, 2)
    assert (msg.nominal_period, msg.duration, msg.recording_time) == (0.001, 2.999, 3.2)
    assert (msg.expected_samples, msg.lost_seconds, msg.longest_gap, msg.gap_count) \
        == (3200, 0.2, 0.15, 2)
    assert list(msg.gap_starts) == [9.8, 11.0] and list(msg.gap_lengths) == [0.15, 0.05]
    assert recording_info_msg(summary, 0, recording=False).recording is False


def test_payload_messages_of_every_method_and_the_selected_one():
    box, _ = _box_estimate()
    static = _estimate(np.concatenate([[1.5], 1.5 * BOX_COM]), method='static')
    result = SimpleNamespace(estimates={'global': box, 'static': static},
                             failures={'model': 'no model'}, selected='static',
                             drive_gains=SimpleNamespace(gains=np.array([1.0, 0.9]),
                                                         std=np.array([0.01, 0.02]),
                                                         undetermined=['joint1']),
                             result=static)
    methods, selected = payload_msgs(result, Time(sec=4))
    assert [m.method for m in methods] == ['global', 'static'] and selected is methods[1]
    assert all(list(m.drive_gains) == [1.0, 0.9] and m.header.stamp.sec == 4 for m in methods)
    assert all(list(m.drive_gains_std) == [0.01, 0.02] and list(m.drive_gains_undetermined) ==
               ['joint1'] for m in methods)
    assert payload_summary(result) == '1.5 kg by the static method (2 of 3 methods succeeded)'

def test_joint_state_of_every_joint():
    msg = joint_state_msg(2_000_000_001, ['a', 'b'], np.array([0.1, 0.2]),
                          np.array([1.0, -1.0]), np.array([3.0, 4.0]))
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (2, 1)
    assert list(msg.name) == ['a', 'b'] and list(msg.position) == [0.1, 0.2]
    assert list(msg.velocity) == [1.0, -1.0] and list(msg.effort) == [3.0, 4.0]


def test_collision_message_of_a_detection():
    from ident_core.torque_estimation.collision import Collision

    event = Collision(joint=2, time=12.5, onset=12.3456789012, external_torque=-7.5)
    msg = collision_msg(event, 'joint3', np.float64(4.0), Time(sec=12, nanosec=500_000_000))
    assert (msg.joint, msg.external_torque, msg.threshold) == ('joint3', -7.5, 4.0)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 500_000_000)
    assert (msg.onset.sec, msg.onset.nanosec) == (12, 345_678_901)
