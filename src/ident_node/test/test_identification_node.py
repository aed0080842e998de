"""The identification node in this process (one SingleThreadedExecutor, a ROS domain of this
test alone): it identifies in a worker thread, answers while it works, and serves requests one
after the other."""
from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / 'src' / 'ident_core' / 'test'))   # the core's test helpers
import datafiles  # synthetic JointState bags

from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
TIMEOUT = 60.0
DOMAIN = 100 + (random.randrange(90) + os.getpid()) % 90


@pytest.fixture
def bag(tmp_path) -> Path:
    robot = load_robot(URDF)
    truth = perturbed_parameters(robot, np.random.default_rng(1))
    dataset, _ = synthetic_dataset(robot, truth, duration=20.0, rate=200.0, seed=3,
                                   torque_noise=0.05)
    return datafiles.write_joint_state_bag(tmp_path / 'run', dataset)


@pytest.fixture
def ros(monkeypatch):
    import rclpy

    monkeypatch.setenv('ROS_DOMAIN_ID', str(DOMAIN))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    try:
        yield rclpy, context
    finally:
        rclpy.try_shutdown(context=context)


def test_identifies_in_a_worker_and_answers_meanwhile(ros, bag, tmp_path):
    rclpy, context = ros
    from rcl_interfaces.srv import GetParameters
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from ident_msgs.msg import IdentifiedParameters
    from ident_msgs.srv import IdentifyRecording
    from ident_node.identification_node import IdentificationNode
    from ident_ros.qos import LATCHED_QOS

    node = IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)), Parameter('rotor_inertia', value=True)])
    client = rclpy.create_node('identify_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    published = []
    client.create_subscription(IdentifiedParameters, '/identification_node/parameters',
                               published.append, LATCHED_QOS)
    identify = client.create_client(IdentifyRecording, '/identification_node/identify')
    release, original = threading.Event(), node.identify

    def held_identify(*args):                   # the work waits until the test lets it go
        assert release.wait(TIMEOUT), 'the test never released the identification'
        return original(*args)
    node.identify = held_identify

    def spin_until(condition, what):
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            assert time.monotonic() < deadline, f'timeout waiting for {what}'
            executor.spin_once(timeout_sec=0.01)

    try:
        spin_until(identify.service_is_ready, 'the identify service')
        result_path = tmp_path / 'RESULT.yaml'
        first = identify.call_async(IdentifyRecording.Request(bag_path=str(bag),
                                                              result_path=str(result_path)))
        spin_until(lambda: node.busy, 'the identification to start')
        # the node answers while it works: its parameter service, and a second request waits
        second = identify.call_async(IdentifyRecording.Request(bag_path=str(bag)))
        parameters = client.create_client(GetParameters, '/identification_node/get_parameters')
        spin_until(parameters.service_is_ready, 'the parameter service')
        answer = parameters.call_async(GetParameters.Request(names=['estimator']))
        spin_until(answer.done, 'the answer of the parameter service while identifying')
        assert answer.result().values[0].string_value == 'pc-wls'
        assert node.busy and not first.done() and not second.done()
        release.set()
        spin_until(first.done, 'the identification')
        reply = first.result()
        assert reply.success, reply.message
        assert Path(reply.result_path) == result_path.resolve() and result_path.is_file()
        spin_until(second.done, 'the second identification, after the first')
        assert second.result().success, second.result().message
        spin_until(lambda: len(published) == 2, 'the two IdentifiedParameters messages')
        assert published[0].samples == reply.parameters.samples > 0
        assert not node.busy
    finally:
        release.set()
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()
