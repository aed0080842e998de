"""The simulator node's ``~/set_payload`` in this process (one SingleThreadedExecutor, a ROS
domain of this test alone): the configured payload is mounted and removed at run time, the
ground truth follows, and mounting without a configured payload is refused."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
TIMEOUT = 60.0


@pytest.fixture
def ros():
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context() as context:
        yield rclpy, context


@pytest.mark.parametrize('mass', [3.0, 0.0])
def test_set_payload_mounts_and_removes_the_configured_payload(ros, tmp_path, mass):
    rclpy, context = ros
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from std_srvs.srv import SetBool

    from ident_ros.testing import spin_until
    from ident_sim.sim_node import SimNode

    truth_dir = tmp_path / 'ground_truth'
    node = SimNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)),
        Parameter('ground_truth_dir', value=str(truth_dir)),
        Parameter('payload_mass', value=mass), Parameter('payload_mounted', value=False)])
    client = rclpy.create_node('set_payload_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    service = client.create_client(SetBool, '/ident_sim/set_payload')

    def call(data: bool):
        future = service.call_async(SetBool.Request(data=data))
        spin_until(executor, future.done, f'set_payload({data})', TIMEOUT)
        return future.result()

    def truth() -> dict:
        return yaml.safe_load((truth_dir / 'ground_truth.yaml').read_text())

    try:
        spin_until(executor, service.service_is_ready, 'the set_payload service', TIMEOUT)
        bare = truth()
        assert node.sim.payload is None and not bare['payload_mounted']
        reply = call(True)
        if mass == 0:
            assert not reply.success and 'payload_mass' in reply.message
            assert node.sim.payload is None and truth() == bare
            return
        assert reply.success, reply.message
        assert node.sim.payload is node.hardware.payload
        loaded = truth()
        assert loaded['payload_mounted'] and loaded['payload'] == bare['payload']
        names = loaded['standard_parameters']['names']
        m6 = names.index('m6')
        assert loaded['standard_parameters']['values'][m6] == pytest.approx(
            bare['standard_parameters']['values'][m6] + mass)
        reply = call(False)
        assert reply.success and node.sim.payload is None
        assert truth()['standard_parameters'] == bare['standard_parameters']
    finally:
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()


def test_apply_external_torque_acts_from_the_stamp_it_returns(ros, tmp_path):
    rclpy, context = ros
    import numpy as np
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.time import Time
    from std_srvs.srv import Trigger

    from ident_msgs.srv import ApplyExternalTorque
    from ident_ros.testing import spin_until
    from ident_sim.sim_node import SimNode

    truth_dir = tmp_path / 'ground_truth'
    node = SimNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)),
        Parameter('ground_truth_dir', value=str(truth_dir))])
    client = rclpy.create_node('external_torque_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    apply = client.create_client(ApplyExternalTorque, '/ident_sim/apply_external_torque')
    write = client.create_client(Trigger, '/ident_sim/write_ground_truth')

    def call(service, request):
        future = service.call_async(request)
        spin_until(executor, future.done, f'a reply of {service.srv_name}', TIMEOUT)
        return future.result()

    try:
        spin_until(executor, lambda: apply.service_is_ready() and write.service_is_ready(),
                   'the services of ident_sim', TIMEOUT)
        reply = call(apply, ApplyExternalTorque.Request(joint='joint9', torque=1.0,
                                                        duration=0.1))
        assert not reply.success and 'joint9' in reply.message
        reply = call(apply, ApplyExternalTorque.Request(joint='joint2', torque=5.0,
                                                        duration=0.05))
        assert reply.success, reply.message
        start = Time.from_msg(reply.start).nanoseconds
        spin_until(executor, lambda: node.stamps and node.stamps[-1] > start + 100_000_000,
                   '0.1 s simulated after the contact', TIMEOUT)
        log = np.load(call(write, Trigger.Request()).message)
        external = log['external']
        first = int(np.flatnonzero(log['stamp_ns'] == start)[0])
        expected = np.zeros_like(external)
        expected[first:first + 50, 1] = 5.0
        np.testing.assert_array_equal(external, expected)
    finally:
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()
