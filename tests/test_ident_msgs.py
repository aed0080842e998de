"""ident_msgs interface: CDR round trip (no node, no DDS) and ament index look-ups."""
import math

import pytest
from ament_index_python.packages import get_package_share_directory
from rclpy.serialization import deserialize_message, serialize_message

from ident_msgs.msg import (
    Collision,
    FrictionParameters,
    FrictionResult,
    IdentifiedParameters,
    Payload,
)
from ident_msgs.srv import ApplyExternalTorque, IdentifyFriction, IdentifyPayload

# lark (used by the rosidl runtime) imports deprecated sre_* modules.
pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning:lark.*')

FIELDS = dict(
    robot_name='kuka_lwr4',
    joint_names=['j1', 'j2'],
    base_parameter_names=['XX1R', 'ZZ2R', 'FV1'],
    base_parameter_values=[1.5, -0.25, 0.125],
    base_parameter_std=[0.01, 0.02, 0.003],
    base_parameter_rel_std_percent=[0.67, 8.0, 2.4],
    viscous_friction=[0.125, math.nan],
    coulomb_friction=[0.5, 0.75],
    torque_offset=[-0.05, 0.02],
    rotor_inertia=[0.01, 0.02],
    friction_model='improved-stribeck',
    stribeck_static=[0.9, 1.1],
    stribeck_velocity=[0.02, 0.03],
    stribeck_exponent=[2.0, 2.0],
    reversal_band=[0.005, 0.01],
    condition_number=123.5,
    rmse=[0.31, 0.42],
    relative_error_percent=4.25,
    estimator='wls',
    samples=4000,
    result_path='/data/run1.mcap.result.yaml',
)


def _same(a, b):
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def test_identified_parameters_round_trip():
    msg = IdentifiedParameters()
    msg.header.stamp.sec = 1_700_000_000
    msg.header.stamp.nanosec = 123_456_789
    msg.header.frame_id = 'base_link'
    for name, value in FIELDS.items():
        setattr(msg, name, value)

    data = serialize_message(msg)
    assert isinstance(data, bytes) and len(data) > 0
    out = deserialize_message(data, IdentifiedParameters)

    assert out.header.stamp.sec == 1_700_000_000
    assert out.header.stamp.nanosec == 123_456_789
    assert out.header.frame_id == 'base_link'
    for name, value in FIELDS.items():
        got = getattr(out, name)
        if isinstance(value, list):
            assert len(got) == len(value), name
            assert all(_same(g, v) for g, v in zip(list(got), value)), name
        else:
            assert _same(got, value), name


def test_field_set_is_complete():
    expected = set(FIELDS) | {'header'}
    assert set(IdentifiedParameters.get_fields_and_field_types()) == expected


def test_payload_round_trip_keeps_nan_where_not_estimated():
    msg = Payload(method='static', physically_consistent=True, unexcited=['Ixx', 'Iyz'],
                  drive_gains=[1.0, 0.97])
    msg.header.frame_id = 'flange'
    msg.inertia.m, msg.inertia.com.z, msg.inertia.ixx = 3.0, 0.05, math.nan
    msg.std.m, msg.std.izz = 0.01, math.nan
    out = deserialize_message(serialize_message(msg), Payload)
    assert out.header.frame_id == 'flange' and out.method == 'static'
    assert (out.inertia.m, out.inertia.com.z, out.std.m) == (3.0, 0.05, 0.01)
    assert math.isnan(out.inertia.ixx) and math.isnan(out.std.izz)
    assert list(out.unexcited) == ['Ixx', 'Iyz'] and list(out.drive_gains) == [1.0, 0.97]
    assert out.physically_consistent


def test_identify_payload_interface():
    assert set(IdentifyPayload.Request.get_fields_and_field_types()) == {
        'unloaded_bag_paths', 'model_path', 'loaded_bag_paths', 'method', 'frame', 'known_mass',
        'result_path'}
    fields = IdentifyPayload.Response.get_fields_and_field_types()
    assert fields == {'success': 'boolean', 'message': 'string', 'result_path': 'string',
                      'payload': 'ident_msgs/Payload', 'methods': 'sequence<ident_msgs/Payload>'}


def test_friction_result_round_trip_keeps_nan_for_fixed_parameters():
    joint = FrictionParameters(
        joint='joint4', model='improved-stribeck', optimizer='lsq',
        parameter_names=['fc', 'fs', 'vs', 'delta', 'fv', 'offset', 'v_l'],
        values=[1.0, 1.6, 0.1, 2.0, 0.5, 0.08, 0.02],
        std=[1e-3, 2e-3, 1e-4, math.nan, 1e-4, 1e-4, 3e-4], rss=0.1, rms=0.003, samples=9000,
        warnings=['v_l not determined'])
    msg = FrictionResult(rigid_body_model='URDF six_axis_3kg.urdf', joints=[joint])
    out = deserialize_message(serialize_message(msg), FrictionResult)
    (got,) = out.joints
    assert out.rigid_body_model == msg.rigid_body_model
    assert (got.joint, got.model, got.optimizer, got.samples) == ('joint4', 'improved-stribeck',
                                                                   'lsq', 9000)
    assert list(got.values) == list(joint.values) and list(got.warnings) == ['v_l not determined']
    assert all(_same(g, v) for g, v in zip(list(got.std), joint.std))


def test_identify_friction_interface():
    assert set(IdentifyFriction.Request.get_fields_and_field_types()) == {
        'bag_paths', 'model_path', 'joints', 'friction_model', 'optimizer',
        'validation_bag_paths', 'result_path'}
    fields = IdentifyFriction.Response.get_fields_and_field_types()
    assert fields == {'success': 'boolean', 'message': 'string', 'result_path': 'string',
                      'selected': 'sequence<ident_msgs/FrictionParameters>'}


@pytest.mark.parametrize('package', ['ident_core', 'ident_msgs'])
def test_share_directory_resolves(package):
    share = get_package_share_directory(package)
    assert share.endswith('/share/' + package)


def test_collision_round_trip():
    msg = Collision(joint='joint2', external_torque=-4.5, threshold=2.0)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1_700_000_000, 5_000_000
    msg.onset.sec, msg.onset.nanosec = 1_700_000_000, 2_000_000
    out = deserialize_message(serialize_message(msg), Collision)
    assert (out.joint, out.external_torque, out.threshold) == ('joint2', -4.5, 2.0)
    assert out.onset.nanosec == 2_000_000 and out.header.stamp.nanosec == 5_000_000


def test_apply_external_torque_service_fields():
    request = ApplyExternalTorque.Request(joint='joint2', torque=5.0, duration=0.05)
    assert (request.joint, request.torque, request.duration) == ('joint2', 5.0, 0.05)
    assert set(ApplyExternalTorque.Response.get_fields_and_field_types()) == {
        'success', 'message', 'start'}
