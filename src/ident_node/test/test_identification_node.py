"""The identification node in this process (one SingleThreadedExecutor, a ROS domain of this
test alone): it identifies in a worker thread, answers while it works, and serves requests one
after the other; it identifies a payload from synthetic bags with and without it, publishes the
estimate and its markers, and refuses a bad request in one line."""
from __future__ import annotations

import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / 'src' / 'ident_core' / 'test'))   # the core's test helpers
import datafiles  # synthetic JointState bags

from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
TIMEOUT = 60.0


@pytest.fixture
def bag(tmp_path) -> Path:
    robot = load_robot(URDF)
    truth = perturbed_parameters(robot, np.random.default_rng(1))
    dataset, _ = synthetic_dataset(robot, truth, duration=20.0, rate=200.0, seed=3,
                                   torque_noise=0.05)
    return datafiles.write_joint_state_bag(tmp_path / 'run', dataset)


def test_identifies_in_a_worker_and_answers_meanwhile(ros, bag, tmp_path):
    rclpy, context = ros
    from rcl_interfaces.srv import GetParameters
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from visualization_msgs.msg import Marker, MarkerArray

    from ident_msgs.msg import IdentifiedParameters
    from ident_msgs.srv import IdentifyRecording
    from ident_node.identification_node import IdentificationNode
    from ident_ros import testing
    from ident_ros.qos import LATCHED_QOS, MARKER_QOS

    node = IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)), Parameter('rotor_inertia', value=True)])
    client = rclpy.create_node('identify_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    published = []
    client.create_subscription(IdentifiedParameters, '/identification_node/parameters',
                               published.append, LATCHED_QOS)
    inertia_markers = []
    client.create_subscription(MarkerArray, '/identification_node/inertia_markers',
                               inertia_markers.append, MARKER_QOS)
    identify = client.create_client(IdentifyRecording, '/identification_node/identify')
    release, original = threading.Event(), node.identify

    def held_identify(*args):                   # the work waits until the test lets it go
        assert release.wait(TIMEOUT), 'the test never released the identification'
        return original(*args)
    node.identify = held_identify

    def spin_until(condition, what):
        testing.spin_until(executor, condition, what, TIMEOUT)

    try:
        spin_until(identify.service_is_ready, 'the identify service')
        # the URDF's bodies, published (latched) at start: a sphere and a box per link
        spin_until(lambda: inertia_markers, 'the latched URDF inertia markers')
        clear, *urdf = inertia_markers[0].markers
        assert clear.action == Marker.DELETEALL
        assert [(m.ns, m.id, m.type, m.header.frame_id) for m in urdf] == [
            ('urdf', 2 * k + i, kind, f'link{k + 1}') for k in range(6)
            for i, kind in enumerate((Marker.SPHERE, Marker.CUBE))]
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
        # after each identification: URDF and identified bodies (pc-wls: all consistent)
        spin_until(lambda: len(inertia_markers) == 3, 'the inertia markers of both results')
        identified = [m for m in inertia_markers[-1].markers if m.ns == 'identified']
        assert [(m.id, m.type, m.header.frame_id) for m in identified] == [
            (2 * k + i, kind, f'link{k + 1}') for k in range(6)
            for i, kind in enumerate((Marker.SPHERE, Marker.CUBE))]
        result = yaml.safe_load(result_path.read_text())
        for body, sphere in zip(result['links'], identified[::2]):
            p = sphere.pose.position
            np.testing.assert_allclose([p.x, p.y, p.z], body['com'], atol=1e-9)
        assert not node.busy
    finally:
        release.set()
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()


def test_a_shutdown_abandons_the_running_identification(ros, bag, tmp_path):
    rclpy, context = ros
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from ident_msgs.srv import IdentifyRecording
    from ident_node.identification_node import IdentificationNode
    from ident_ros import testing

    node = IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF))])
    client = rclpy.create_node('shutdown_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    identify = client.create_client(IdentifyRecording, '/identification_node/identify')
    release = threading.Event()
    node.identify = lambda *args: release.wait(TIMEOUT)     # work that outlasts the shutdown

    def spin_until(condition, what):
        testing.spin_until(executor, condition, what, TIMEOUT)

    try:
        spin_until(identify.service_is_ready, 'the identify service')
        result_path = tmp_path / 'RESULT.yaml'
        running = identify.call_async(IdentifyRecording.Request(
            bag_path=str(bag), result_path=str(result_path)))
        spin_until(lambda: node.busy, 'the identification to start')
        queued = identify.call_async(IdentifyRecording.Request(bag_path=str(bag)))
        spin_until(lambda: node.waiting, 'the second request to queue')
        node.shutdown_requested = True           # what lifecycle.run does on SIGINT/SIGTERM
        node.request_shutdown()
        spin_until(lambda: running.done() and queued.done(), 'the answers to both requests')
        for reply in (running.result(), queued.result()):
            assert not reply.success and 'shutting down' in reply.message
        assert node.finished and not result_path.exists()
    finally:
        release.set()
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()


# The payload of the synthetic loaded run: 1.5 kg at (10, −20, 50) mm in the flange frame.
PAYLOAD_MASS, PAYLOAD_COM = 1.5, np.array([0.01, -0.02, 0.05])
PAYLOAD_INERTIA = np.diag([0.004, 0.003, 0.002])          # kg·m² about the COM


@pytest.fixture
def payload_bags(tmp_path) -> dict:
    """The same trajectory (and noise) run without and with the payload at the flange."""
    robot = load_robot(URDF)
    truth = perturbed_parameters(robot, np.random.default_rng(1))
    flange = robot.model.frames[robot.model.getFrameId('flange')]
    inertial = truth.inertial.copy()
    body = slice(10 * (flange.parentJoint - 1), 10 * flange.parentJoint)
    inertial[body] += flange.placement.act(
        pin.Inertia(PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_INERTIA)).toDynamicParameters()
    bags = {}
    for name, parameters in (('unloaded', truth), ('loaded', replace(truth, inertial=inertial))):
        dataset, _ = synthetic_dataset(robot, parameters, duration=20.0, rate=200.0, seed=3,
                                       torque_noise=0.05)
        bags[name] = str(datafiles.write_joint_state_bag(tmp_path / name, dataset))
    return bags


def test_identifies_a_payload_publishes_it_and_refuses_a_bad_request(ros, payload_bags,
                                                                      tmp_path):
    rclpy, context = ros
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from visualization_msgs.msg import Marker, MarkerArray

    from ident_core.payload.results import PayloadFile
    from ident_msgs.msg import Payload
    from ident_msgs.srv import IdentifyPayload
    from ident_node.identification_node import IdentificationNode
    from ident_ros import testing
    from ident_ros.qos import LATCHED_QOS

    node = IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)), Parameter('rotor_inertia', value=True)])
    client = rclpy.create_node('identify_payload_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    payloads, markers = [], []
    client.create_subscription(Payload, '/identification_node/payload', payloads.append,
                               LATCHED_QOS)
    client.create_subscription(MarkerArray, '/identification_node/payload_markers',
                               markers.append, LATCHED_QOS)
    service = client.create_client(IdentifyPayload, '/identification_node/identify_payload')

    def call(**fields):
        future = service.call_async(IdentifyPayload.Request(**fields))
        spin_until(future.done, f'the reply to {fields}')
        return future.result()

    def spin_until(condition, what):
        testing.spin_until(executor, condition, what, TIMEOUT)

    try:
        spin_until(service.service_is_ready, 'the identify_payload service')
        bad = call(unloaded_bag_paths=[payload_bags['unloaded']],
                   loaded_bag_paths=[payload_bags['loaded']], frame='nowhere')
        assert not bad.success and 'nowhere' in bad.message and '\n' not in bad.message
        assert not payloads and not node.busy

        result_path = tmp_path / 'PAYLOAD.yaml'
        reply = call(unloaded_bag_paths=[payload_bags['unloaded']],
                     loaded_bag_paths=[payload_bags['loaded']], frame='flange',
                     result_path=str(result_path))
        assert reply.success, reply.message
        assert Path(reply.result_path) == result_path.resolve()
        content = PayloadFile.read(result_path)
        assert content.selected == reply.payload.method == 'global'
        assert [m.method for m in reply.methods] == list(content.methods)
        assert {'global', 'parameter-difference', 'torque-difference'} <= set(content.methods)
        # noise 0.05 N·m on 4000 samples: the mass within 1 %, the COM within 1 mm
        for msg in reply.methods:
            assert msg.header.frame_id == 'flange' and msg.physically_consistent
            assert msg.inertia.m == pytest.approx(PAYLOAD_MASS, rel=0.01), msg.method
            com = [msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z]
            np.testing.assert_allclose(com, PAYLOAD_COM, atol=1e-3, err_msg=msg.method)
            assert 0 < msg.std.m < 0.01 and not msg.drive_gains
        spin_until(lambda: payloads and markers, 'the latched Payload and MarkerArray')
        assert payloads[-1].method == 'global'
        assert payloads[-1].inertia.m == reply.payload.inertia.m
        sphere, box = markers[-1].markers
        assert sphere.header.frame_id == box.header.frame_id == 'link6'
        assert (sphere.type, box.type, box.action) == (Marker.SPHERE, Marker.CUBE, Marker.ADD)
        # the flange is 80 mm along z of link6
        assert sphere.pose.position.z == pytest.approx(0.08 + PAYLOAD_COM[2], abs=1e-3)
    finally:
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()


def test_parameter_recover_reads_a_bag_a_killed_recorder_left(ros, bag, tmp_path):
    """Without ``recover`` an unfinished bag is refused in one line naming --recover; with it,
    the complete messages are identified (a DataWarning says how much was read), and with
    ``write_report`` the report is written beside the result."""
    import warnings

    from rclpy.parameter import Parameter

    from ident_core.data.datasets import DataWarning
    from ident_core.errors import InputError
    from ident_node.identification_node import IdentificationNode

    _, context = ros
    damaged = tmp_path / 'killed'
    damaged.mkdir()
    data = (bag / f'{bag.name}.mcap').read_bytes()
    (damaged / 'killed.mcap').write_bytes(data[:len(data) // 2])     # no footer, no metadata
    nodes = [IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)), Parameter('recover', value=recover),
        Parameter('write_report', value=recover)]) for recover in (False, True)]
    try:
        with pytest.raises(InputError, match='--recover') as refused:
            nodes[0].identify(str(damaged), [], str(tmp_path / 'R0.yaml'))
        assert '\n' not in str(refused.value)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            path, result = nodes[1].identify(str(damaged), [], str(tmp_path / 'R1.yaml'))
        assert any(issubclass(w.category, DataWarning) and 'unfinished rosbag2' in
                   str(w.message) for w in caught)
        assert path.is_file() and 0 < result['identification']['samples'] < 4000
        # write_report: the report beside RESULT.yaml, its recording read with recover too
        page = (tmp_path / 'R1_report' / 'index.html').read_text()
        assert page.count('<img src="data:image/png;base64,') == 4
        assert 'not shown' not in page and not (tmp_path / 'R0_report').exists()
    finally:
        for node in nodes:
            node.destroy_node()
