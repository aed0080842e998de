"""The graph on a robot's stack: the URDF only on ``/robot_description`` (latched, as
robot_state_publisher publishes it) and ``/joint_states`` from two publishers, an arm's
joint_state_broadcaster at 500 Hz (with a mobile base's wheels in its messages) and a gripper's at
50 Hz between its messages. The recorder (the installed executable, a child process), the
identification node and the torque estimator (in this process) start without ``urdf_file``, take
the robot from the topic, and work on the arm's samples: the bag holds every message and counts
the gripper's apart, the identification equals that of a bag of the arm's messages alone (the
same samples: ground truth), the estimator estimates every arm sample and skips the gripper's. A
recorder waiting for a description that never comes says so and ends on SIGINT. A URDF joint
the stack never publishes is one error naming it (recorder, estimator, identification)."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / 'src' / 'ident_core' / 'test'))   # the core's test helpers
import datafiles  # synthetic JointState bags

from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
# This workspace's installed copy (of the ROS 2 distribution set up), else the one on PATH.
EXECUTABLE = (REPO / f"install-{os.environ.get('ROS_DISTRO', 'jazzy')}" / 'ident_node' / 'lib'
              / 'ident_node' / 'recorder_node')
if not EXECUTABLE.is_file() and shutil.which('recorder_node'):
    EXECUTABLE = Path(shutil.which('recorder_node'))
pytestmark = pytest.mark.skipif(not EXECUTABLE.is_file(),
                                reason=f'recorder_node not installed ({EXECUTABLE})')
ARM_RATE, GRIPPER_RATE = 500.0, 50.0        # Hz
DURATION = 10.0                             # s of the arm's samples
WHEELS = ('wheel_left', 'wheel_right')
T0 = 1_700_000_000 * 10**9                  # ns, the first stamp (as datafiles' bags)
CHUNK = 250                                 # messages published before waiting for the acks
TIMEOUT = 60.0                              # s, guards against a hang only
#: The identification's guard (also against a hang only): its ~4 s of CPU took more than
#: 60 s in a nice'd test beside busy-looping processes on the 2 shared cores.
IDENTIFY_TIMEOUT = 600.0
DOMAIN = 100 + (random.randrange(90) + os.getpid() + 37) % 90


@pytest.fixture
def ros(monkeypatch):
    """(rclpy, context, env of a child process) in a ROS domain of this test alone."""
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context(DOMAIN) as context:
        yield rclpy, context, dict(os.environ, PYTHONUNBUFFERED='1')


def _wait_for_line(log: Path, proc: subprocess.Popen, text: str) -> None:
    """Until the process's log holds ``text`` (it is written as the node logs)."""
    deadline = time.monotonic() + TIMEOUT
    while text not in log.read_text():
        assert proc.poll() is None, f'the recorder ended ({proc.returncode}): {log.read_text()}'
        assert time.monotonic() < deadline, f'no {text!r} in {log}: {log.read_text()}'
        time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            return proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def test_a_node_waits_for_the_description_and_a_signal_ends_the_wait(ros, tmp_path):
    _rclpy, _context, env = ros
    log = tmp_path / 'recorder.log'
    with log.open('w') as out:
        proc = subprocess.Popen([str(EXECUTABLE), '--ros-args', '-p',
                                 f'output_dir:={tmp_path / "bags"}'],
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for_line(log, proc, 'waiting for the robot description on /robot_description')
    finally:
        code = _stop(proc)
    assert code == 0, log.read_text()
    assert 'while waiting for the robot description' in log.read_text()
    assert not (tmp_path / 'bags').exists()                   # nothing done


def stack_messages(dataset):
    """(stamp ns, publisher, names, position, velocity, effort) of the arm's samples (wheels
    first) and of the gripper's messages, in stamp order."""
    n_extra = len(WHEELS)
    arm = [(T0 + int(round(t * 1e9)), 'arm', [*WHEELS, *dataset.joint_names],
            [0.5] * n_extra + dataset.position[k].tolist(),
            [0.0] * n_extra + dataset.velocity[k].tolist(),
            [7.0] * n_extra + dataset.effort[k].tolist())
           for k, t in enumerate(dataset.t)]
    gripper = [(T0 + int(round(t * 1e9)), 'gripper', list(datafiles.GRIPPER_JOINTS),
                [0.01, 0.01], [0.0, 0.0], [3.0, 3.0])
               for t in np.arange(0.0123, dataset.t[-1], 1 / GRIPPER_RATE)]
    return sorted(arm + gripper, key=lambda m: m[0])


def test_recorder_identification_and_estimator_on_a_stack(ros, tmp_path):
    rclpy, context, env = ros
    from rclpy.duration import Duration
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from ident_core.workflows.identify import identify_recordings
    from ident_msgs.srv import IdentifyRecording, StartRecording, StopRecording
    from ident_node.identification_node import IdentificationNode
    from ident_ros import qos
    from ident_ros.testing import spin_until
    from torque_estimator.torque_estimator_node import TorqueEstimatorNode

    robot = load_robot(URDF)
    truth = perturbed_parameters(robot, np.random.default_rng(1))
    dataset, _ = synthetic_dataset(robot, truth, duration=DURATION, rate=ARM_RATE, seed=3,
                                   torque_noise=0.05)
    messages = stack_messages(dataset)
    arm_count = len(dataset.t)
    gripper_count = len(messages) - arm_count

    stack = rclpy.create_node('robot_state_publisher', context=context)
    description = stack.create_publisher(String, '/robot_description', qos.ROBOT_DESCRIPTION_QOS)
    description.publish(String(data=URDF.read_text()))        # latched: before every node
    broadcasters = {name: rclpy.create_node(f'{name}_joint_state_broadcaster', context=context)
                    for name in ('arm', 'gripper')}
    publishers = {name: node.create_publisher(JointState, '/joint_states',
                                              qos.JOINT_STATES_QOS)
                  for name, node in broadcasters.items()}
    log = tmp_path / 'recorder.log'
    with log.open('w') as out:
        recorder = subprocess.Popen(
            [str(EXECUTABLE), '--ros-args', '-p', f'output_dir:={tmp_path / "bags"}',
             '-p', 'nominal_period:=0.002'], env=env, stdout=out, stderr=subprocess.STDOUT)
    estimator = identification = None
    try:
        estimator = TorqueEstimatorNode(context=context, parameter_overrides=[
            Parameter('diagnostics_period', value=3600.0)])
        identification = IdentificationNode(context=context)
        assert estimator.robot.urdf_source == identification.robot.urdf_source == \
            '/robot_description'
        client = rclpy.create_node('stack_test_client', context=context)
        start = client.create_client(StartRecording, '/recorder/start')
        stop = client.create_client(StopRecording, '/recorder/stop')
        identify = client.create_client(IdentifyRecording, '/identification_node/identify')
        estimates = []
        client.create_subscription(JointState, '/torque_estimator/joint_torques',
                                   estimates.append, qos.ESTIMATE_QOS)
        executor = SingleThreadedExecutor(context=context)
        for node in (stack, *broadcasters.values(), estimator, identification, client):
            executor.add_node(node)

        def ready():
            assert recorder.poll() is None, log.read_text()
            return start.service_is_ready() and all(
                p.get_subscription_count() == 2 for p in publishers.values())
        spin_until(executor, ready, 'the recorder and the estimator', TIMEOUT)
        _wait_for_line(log, recorder, 'robot model from /robot_description (')

        def call(service, request, timeout=TIMEOUT):
            future = service.call_async(request)
            spin_until(executor, future.done, f'{service.srv_name}', timeout)
            return future.result()
        assert call(start, StartRecording.Request(experiment='stack')).success

        msg = JointState()
        for first in range(0, len(messages), CHUNK):
            chunk = messages[first:first + CHUNK]
            for stamp, name, names, position, velocity, effort in chunk:
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
                msg.name, msg.position, msg.velocity, msg.effort = names, position, velocity, \
                    effort
                publishers[name].publish(msg)
            done = first + len(chunk)
            spin_until(executor, lambda done=done: estimator.samples + estimator.refused
                       + estimator.selection.skipped + estimator.estimator.repeats == done,
                       f'the estimator at message {done}', TIMEOUT)
            for publisher in publishers.values():      # in the recorder's reader too
                assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT))
        spin_until(executor, lambda: len(estimates) == arm_count, 'every estimate', TIMEOUT)
        stopped = call(stop, StopRecording.Request())
        assert stopped.success, stopped.message
        bag = Path(stopped.info.path)
        reply = call(identify, IdentifyRecording.Request(bag_path=str(bag)), IDENTIFY_TIMEOUT)
        assert reply.success, reply.message
    finally:
        for node in (estimator, identification):
            if node is not None:
                node.destroy_node()
        code = _stop(recorder)
    assert code == 0, log.read_text()

    # the bag: every message; the arm's are the samples, the gripper's counted apart
    summary = yaml.safe_load((bag / 'recording.yaml').read_text())
    assert summary['joint_state_messages'] == arm_count == DURATION * ARM_RATE
    assert summary['other_joint_states'] == gripper_count == DURATION * GRIPPER_RATE
    assert (summary['dropped'], summary['out_of_order'], summary['missing_joints']) == (0, 0, [])
    # the torque estimator: every arm sample, the gripper's skipped
    assert (estimator.samples, estimator.refused, estimator.selection.skipped) == \
        (arm_count, 0, gripper_count)
    assert [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in estimates] == \
        [m[0] for m in messages if m[1] == 'arm']
    # the identification: as from a bag of the arm's samples alone
    result = yaml.safe_load(Path(reply.result_path).read_text())
    assert result['robot']['urdf'] == '/robot_description'
    assert result['robot']['urdf_sha256'] == robot.urdf_sha256()
    plain = datafiles.write_joint_state_bag(tmp_path / 'arm_alone', dataset)
    expected = identify_recordings(robot, [plain], out=tmp_path / 'expected.yaml').content
    np.testing.assert_allclose([p['value'] for p in result['base_parameters']],
                               [p.value for p in expected.base_parameters], rtol=1e-9)
    assert any(f'{gripper_count} /joint_states message(s) without every joint skipped' in line
               for line in result['identification']['preprocessing'])


def test_a_urdf_joint_the_stack_never_publishes_is_one_error_naming_it(ros, tmp_path):
    """The arm's broadcaster without joint6 (and the wheels), the gripper's between: the
    recorder and the torque estimator (in this process, their callbacks fed directly) find no
    sample and say once which joint never came; the bag cannot be identified, naming it."""
    rclpy, context, _env = ros
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from ident_core.errors import InputError
    from ident_core.monitoring.status import Level
    from ident_core.workflows.inputs import RecordingOptions, read_recording
    from ident_node.recorder_node import RecorderNode
    from torque_estimator.torque_estimator_node import TorqueEstimatorNode

    robot = load_robot(URDF)
    arm = [*WHEELS, *robot.joint_names[:-1]]
    messages = []
    for k in range(200):
        stamp = T0 + k * 2_000_000
        names = list(datafiles.GRIPPER_JOINTS) if k % 10 == 3 else arm
        msg = JointState(name=names, position=[0.1] * len(names), effort=[1.0] * len(names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        messages.append((stamp, msg))
    urdf = Parameter('urdf_file', value=str(URDF))
    recorder = RecorderNode(context=context, parameter_overrides=[
        urdf, Parameter('output_dir', value=str(tmp_path / 'bags'))])
    estimator = TorqueEstimatorNode(context=context, parameter_overrides=[
        urdf, Parameter('diagnostics_period', value=3600.0)])
    errors, now = [], [T0]
    recorder.get_logger().error = errors.append
    recorder._now_ns = lambda: now[0]
    T = recorder.typestore.types

    def raw(msg):
        """The CDR bytes a raw subscription takes (rclpy's serialize_message leaves padding
        after them that rosbags refuses when the bag is read)."""
        return bytes(recorder.typestore.serialize_cdr(T['sensor_msgs/msg/JointState'](
            header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
                sec=msg.header.stamp.sec, nanosec=msg.header.stamp.nanosec), frame_id=''),
            name=list(msg.name), position=np.array(msg.position), velocity=np.zeros(0),
            effort=np.array(msg.effort)), 'sensor_msgs/msg/JointState'))
    try:
        bag = recorder.start('no_joint6')
        for stamp, msg in messages:
            now[0] = stamp + 100_000
            recorder._on_joint_state(raw(msg))
            estimator._on_joint_state(msg)
        now[0] += 10**9
        summary = recorder.stop()
        status = estimator.estimation_status()
    finally:
        recorder.destroy_node()
        estimator.destroy_node()
    assert (summary.joint_state_messages, summary.other_joint_states) == (0, 200)
    assert summary.missing_joints == ['joint6']
    assert errors == [f'{bag.path}: no /joint_states message carries joint(s) joint6 '
                      '(200 message(s) without them)']
    assert (estimator.samples, estimator.refused, estimator.selection.skipped) == (0, 0, 200)
    assert status.level == Level.ERROR
    assert status.message.startswith('/joint_states: no message carries joint(s) joint6 '
                                     '(200 message(s) without them)')
    with pytest.raises(InputError, match=r'no message carries joint\(s\) joint6 \(200 '):
        read_recording(bag.path, RecordingOptions(), robot.joint_names)
