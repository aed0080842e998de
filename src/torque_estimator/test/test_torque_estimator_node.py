"""The torque estimator node in this process (one SingleThreadedExecutor, a ROS domain of this
test alone), fed sample by sample with a log of the simulated arm, so that no sample is lost
however slow the machine: the arm is its URDF exactly (no perturbation, rotor inertia or
friction) with current noise, so the URDF is the true model.

The node starts on the URDF (no collision detection) and takes the identified model published
on ``/identification_node/parameters`` (a RESULT.yaml of the URDF's own parameters). The
estimates carry the stamps of their inputs, a 5 N·m contact on joint 2 is reported within 10 ms
of its first sample and nothing before it, shown by collision markers at link2 that are cleared
when the contact ends, and samples with NaN or inconsistent arrays are refused; a message
without the arm's joints (another publisher's, e.g. a gripper's) is skipped and counted.
"""
from __future__ import annotations

import math
import os
import random
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
TIMEOUT = 60.0
DOMAIN = 100 + (random.randrange(90) + os.getpid()) % 90
JOINTS = [f'joint{i}' for i in range(1, 7)]
HOLD = [0.0, -0.5, 0.8, 0.0, 0.5, 0.0]
NOISE = [0.2, 0.2, 0.1, 0.03, 0.03, 0.01]
THRESHOLD = 2.0          # N·m, every joint
PULSE = 5.0              # N·m on joint 2
CONTACT = 300            # sample where it starts
CONTACT_SAMPLES = 100    # its length (0.1 s)
START_NS = 1_700_000_000_000_000_000


@pytest.fixture
def ros():
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context(DOMAIN) as context:
        yield rclpy, context


def arm_log(samples: int):
    """The simulated arm holding ``HOLD``, a 0.1 s contact on joint 2 from ``CONTACT``."""
    from ident_core.model.robot import load_robot
    from ident_core.sim.config import SimulationConfig
    from ident_core.sim.simulator import RobotSimulator

    robot = load_robot(URDF)
    sim = RobotSimulator(robot, SimulationConfig(perturbation=0.0, torque_noise_std=NOISE,
                                                 initial_position=HOLD).hardware(robot.n))
    pulse = np.zeros(robot.n)
    pulse[1] = PULSE
    rows = []
    for k in range(samples):
        if k == CONTACT:
            sim.apply_external_torque(pulse, CONTACT_SAMPLES * 1e-3)
        rows.append(sim.step(np.array(HOLD), np.zeros(robot.n), np.zeros(robot.n)))
    return rows


def urdf_result(path: Path) -> Path:
    """RESULT.yaml of a model identified as exactly the URDF (no friction, no rotor)."""
    from ident_core.estimation.config import IdentificationConfig
    from ident_core.estimation.identified_model import IdentifiedModel
    from ident_core.estimation.results import result_file
    from ident_core.model.base_parameters import compute_base_parameters
    from ident_core.model.regressor import Regressor
    from ident_core.model.robot import load_robot
    from ident_core.model.transmission import Transmission

    robot = load_robot(URDF)
    config = IdentificationConfig(friction='none')
    base = compute_base_parameters(Regressor(robot, config.spec))
    chi = robot.standard_parameters()
    model = IdentifiedModel(robot, config, Transmission.identity(robot.n), base,
                            base.project(chi), np.zeros(len(base.names)), standard=chi)
    return result_file(model, []).write(path)


def test_estimates_and_a_contact_detected_within_10_ms(ros, tmp_path):
    rclpy, context = ros
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.time import Time
    from sensor_msgs.msg import JointState
    from visualization_msgs.msg import Marker, MarkerArray

    from ident_msgs.msg import Collision, IdentifiedParameters
    from ident_ros import qos
    from ident_ros.testing import spin_until
    from torque_estimator.torque_estimator_node import TorqueEstimatorNode

    estimator = TorqueEstimatorNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)),
        Parameter('collision_threshold', value=THRESHOLD),
        Parameter('diagnostics_period', value=3600.0)])    # reported below, on request
    client = rclpy.create_node('torque_estimator_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for node in (estimator, client):
        executor.add_node(node)
    torques, externals, collisions = [], [], []
    client.create_subscription(JointState, '/torque_estimator/joint_torques', torques.append,
                               qos.ESTIMATE_QOS)
    client.create_subscription(JointState, '/torque_estimator/external_torques',
                               externals.append, qos.ESTIMATE_QOS)
    client.create_subscription(Collision, '/torque_estimator/collision', collisions.append,
                               qos.EVENT_QOS)
    markers = []                        # (sample count when received, MarkerArray)
    client.create_subscription(MarkerArray, '/torque_estimator/collision_markers',
                               lambda m: markers.append((len(externals), m)), qos.MARKER_QOS)
    publisher = client.create_publisher(JointState, '/joint_states', qos.JOINT_STATES_QOS)
    results = client.create_publisher(IdentifiedParameters, '/identification_node/parameters',
                                      qos.LATCHED_QOS)
    try:
        assert not estimator.identified and not estimator.detector.threshold.any()
        result = urdf_result(tmp_path / 'RESULT.yaml')
        spin_until(executor, lambda: results.get_subscription_count() == 1,
                   'the estimator subscribed to the identification results', TIMEOUT)
        results.publish(IdentifiedParameters(joint_names=JOINTS, result_path=str(result)))
        spin_until(executor, lambda: estimator.identified, 'the identified model taken',
                   TIMEOUT)
        assert estimator.dm.source == str(result)
        spin_until(executor, lambda: publisher.get_subscription_count() == 1,
                   'the estimator subscribed to /joint_states', TIMEOUT)
        log = arm_log(CONTACT + CONTACT_SAMPLES + 60)
        before_ns = time.time_ns()
        for k, sample in enumerate(log):
            msg = JointState(name=JOINTS, position=sample.position.tolist(),
                             effort=sample.effort.tolist())
            msg.header.stamp = Time(nanoseconds=START_NS + 1_000_000 * k).to_msg()
            publisher.publish(msg)
            spin_until(executor, lambda count=k + 1: len(externals) == count,
                       f'the estimate of sample {k}', TIMEOUT)
            assert torques[-1].header.stamp == msg.header.stamp
            assert externals[-1].header.stamp == msg.header.stamp
            if k < CONTACT:
                assert not collisions, f'collision reported at sample {k}, before the contact'
        after_ns = time.time_ns()
        assert torques[-1].name == JOINTS
        truth = np.array([s.torque for s in log[100:CONTACT]])
        filtered = np.array([m.effort for m in torques[100:CONTACT]])
        measured = np.array([s.effort for s in log[100:CONTACT]])
        # the filter removes noise on every joint (about half of it, the robot at rest)
        assert np.all(rmse(filtered, truth) < 0.75 * rmse(measured, truth))
        spin_until(executor, lambda: collisions, 'the collision report', TIMEOUT)
        report = collisions[0]
        assert [c.joint for c in collisions] == ['joint2']
        assert report.threshold == THRESHOLD and report.external_torque > THRESHOLD
        delay = Time.from_msg(report.header.stamp).nanoseconds - (START_NS + 1_000_000 * CONTACT)
        assert 0 < delay <= 10_000_000
        assert Time.from_msg(report.onset).nanoseconds >= START_NS + 1_000_000 * CONTACT
        # markers: the collision at link2 (the link joint2 moves), then cleared after the contact
        spin_until(executor, lambda: len(markers) >= 2, 'the collision markers, then cleared',
                   TIMEOUT)
        assert len(markers) == 2, [(k, [x.action for x in m.markers]) for k, m in markers]
        (shown_at, shown), (cleared_at, cleared) = markers
        clear, sphere, text = shown.markers
        assert clear.action == Marker.DELETEALL
        assert (sphere.type, sphere.header.frame_id, sphere.ns) == \
            (Marker.SPHERE, 'link2', 'collision')
        assert (sphere.color.r, sphere.color.g) == (pytest.approx(1.0), pytest.approx(0.1))
        assert text.type == Marker.TEXT_VIEW_FACING and text.header.frame_id == 'link2'
        assert text.text == f'joint2: {report.external_torque:.3g} N·m'
        # shown with the detection (within 10 samples); counted when taken by this client,
        # which may be after the estimates of a sample or two more
        assert shown_at <= CONTACT + 12 < CONTACT + CONTACT_SAMPLES < cleared_at
        assert [m.action for m in cleared.markers] == [Marker.DELETEALL]

        bad = JointState(name=JOINTS, position=HOLD, effort=[0.0, math.nan, 0, 0, 0, 0])
        bad.header.stamp = Time(nanoseconds=START_NS + 1_000_000 * len(log)).to_msg()
        refused = estimator.refused
        publisher.publish(JointState(name=['a', 'b'], position=[0.0, 0.0], effort=[0.0, 0.0]))
        publisher.publish(bad)
        publisher.publish(JointState(name=JOINTS, position=HOLD[:5], effort=[0.0] * 6))
        spin_until(executor, lambda: estimator.refused == refused + 2, 'two refused samples',
                   TIMEOUT)
        assert estimator.selection.skipped == 1          # the gripper's: not refused
        assert len(externals) == len(log)
        check_diagnostic(estimator, len(log), before_ns, after_ns)
    finally:
        executor.shutdown()
        for node in (client, estimator):
            node.destroy_node()


def check_diagnostic(estimator, samples: int, before_ns: int, after_ns: int) -> None:
    """The ``torque estimation`` status of the whole run: every sample estimated, the two
    refused; the latency of sample k is its publication (between ``before_ns`` and
    ``after_ns`` on this test's clock) minus its stamp ``START_NS + k ms``."""
    from diagnostic_msgs.msg import DiagnosticStatus

    [status] = estimator.diagnostics.statuses()
    assert status.name == 'torque_estimator: torque estimation'
    assert status.hardware_id == 'six_axis_3kg'
    values = {v.key: v.value for v in status.values}
    assert values['samples'] == str(samples) and values['refused'] == '2'
    assert values['skipped'] == '1'
    assert values['method'] == 'kalman' and values['model'] == 'identified'
    latency = estimator.latency.values()        # s, sample k at index k
    assert len(latency) == samples
    stamps = np.arange(samples) * 1e-3
    assert np.all(latency + stamps >= (before_ns - START_NS) * 1e-9)
    assert np.all(latency + stamps <= (after_ns - START_NS) * 1e-9)
    for key, q in (('latency_p50_s', 50), ('latency_p95_s', 95), ('latency_max_s', 100)):
        # 6 significant digits
        assert float(values[key]) == pytest.approx(np.percentile(latency, q), rel=1e-5), key
    # the stamps are years old: latency far above latency_warning; 2 samples refused
    assert status.level == DiagnosticStatus.WARN
    assert status.message.startswith('2 of ') and 'latency' in status.message
    for joint in JOINTS:
        assert 0 < float(values[f'{joint}.innovation_nis']) < math.inf
        assert 0 < float(values[f'{joint}.innovation_rms_Nm']) < math.inf
    assert 0 < float(values['compute_time_p95_s']) < (after_ns - before_ns) * 1e-9


def rmse(x, truth):
    return np.sqrt(np.mean((x - truth) ** 2, axis=0))


def test_the_controller_commands_are_the_reference(ros):
    rclpy, context = ros
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from ident_ros import qos
    from ident_ros.testing import spin_until
    from torque_estimator.torque_estimator_node import TorqueEstimatorNode

    estimator = TorqueEstimatorNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF)), Parameter('diagnostics_period', value=0.1)])
    client = rclpy.create_node('torque_estimator_reference_client', context=context)
    diagnostics = []
    client.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append,
                               qos.DIAGNOSTICS_QOS)
    executor = SingleThreadedExecutor(context=context)
    for node in (estimator, client):
        executor.add_node(node)
    states = client.create_publisher(JointState, '/joint_states', qos.JOINT_STATES_QOS)
    commands = client.create_publisher(JointTrajectory,
                                       '/joint_trajectory_controller/joint_trajectory',
                                       qos.COMMAND_QOS)

    def command(positions):
        point = JointTrajectoryPoint(positions=positions)
        point.time_from_start.sec = 1
        return JointTrajectory(joint_names=JOINTS, points=[point])

    try:
        spin_until(executor, lambda: states.get_subscription_count() == 1
                   and commands.get_subscription_count() == 1, 'the subscriptions', TIMEOUT)
        msg = JointState(name=JOINTS, position=HOLD, effort=[0.0] * 6)
        msg.header.stamp = client.get_clock().now().to_msg()
        states.publish(msg)
        spin_until(executor, lambda: estimator.samples == 1, 'the first sample', TIMEOUT)
        assert estimator.buffer is None
        # refused with a log line (an exception would end the spin and this test)
        commands.publish(command([0.0, math.nan, 0.0, 0.0, 0.0, 0.0]))
        commands.publish(command([0.1] * 6))
        spin_until(executor, lambda: estimator.buffer is not None, 'the reference', TIMEOUT)
        later = client.get_clock().now().nanoseconds * 1e-9 + 2.0
        np.testing.assert_allclose(estimator.buffer.sample(later)[0], 0.1)
        # the status reaches /diagnostics (the QoS of diagnostic_aggregator's subscription)
        spin_until(executor, lambda: diagnostics, 'a DiagnosticArray on /diagnostics', TIMEOUT)
        [status] = diagnostics[0].status
        assert status.name == 'torque_estimator: torque estimation'
        assert {'latency_p95_s', 'joint1.innovation_nis'} <= {v.key for v in status.values}
    finally:
        executor.shutdown()
        for node in (client, estimator):
            node.destroy_node()


def test_the_model_is_required(ros):
    rclpy, context = ros
    from rclpy.parameter import Parameter

    from ident_core.errors import InputError
    from torque_estimator.torque_estimator_node import TorqueEstimatorNode

    # without urdf_file the robot comes from robot_description_topic; without either, refused
    with pytest.raises(InputError, match='urdf_file and robot_description_topic are both empty'):
        TorqueEstimatorNode(context=context, parameter_overrides=[
            Parameter('robot_description_topic', value='')])
