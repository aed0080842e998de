"""Torque estimator node: filters the joint torques of ``joint_states`` with an identified
dynamic model, sample by sample (``ident_core.torque_estimation``, docs/methods.md §12).

Subscribes ``sensor_msgs/JointState`` (``joint_states_topic``, with effort) and the
``trajectory_msgs/JointTrajectory`` commands the joint_trajectory_controller receives
(``reference_topic``; sampled as the controller does, ``motion.controller``): the reference of
the Kalman filter. Where no command applies, or without ``reference_topic``, the state Kalman
filter estimates from the encoders and torques alone. Publishes, with the stamp of the input
sample:

* ``~/joint_torques`` (sensor_msgs/JointState): effort = the torque estimate;
* ``~/external_torques`` (sensor_msgs/JointState): effort = the external torque of the momentum
  observer (the environment on the robot, positive in the joint's direction);
* ``~/collision`` (ident_msgs/Collision): a joint whose external torque stayed beyond
  ``collision_threshold`` for ``collision_time``;
* ``~/collision_markers`` (visualization_msgs/MarkerArray, transient local, depth 1): while
  joints are in collision, a red sphere and a text (joint, external torque) at the link each
  moves; a DELETEALL alone once none is (``ident_ros.conversions.collision_markers``).

The robot is ``urdf_file``, or the URDF on ``robot_description_topic``
(``ident_ros.robot_description``); the model is ``model_file`` (RESULT.yaml: rigid body, rotor
inertia, friction, transmission, checked against that robot) or the robot's URDF alone, with
``payload_file`` (PAYLOAD.yaml) mounted; each new identification published on ``model_topic``
(the identification node's ``~/parameters``, with its RESULT.yaml) replaces it and restarts the
filter. Collisions are detected on an identified model only: with the URDF's nominal inertias
the external torque holds the model's errors, which any threshold a contact could cross would
see too. A sample is a message that names every joint of the model, others besides (a gripper's
fingers); a message that lacks one (another publisher's, e.g. a gripper's
``joint_state_broadcaster``) is skipped and counted, and the ``torque estimation`` diagnostic
names the joints no message carries. A sample with NaN or inconsistent array lengths is refused
(logged, not filtered), as is one older than the previous sample (out of order); one with the
previous stamp is a repeat and is skipped. A stamp more than ``RESTART_JUMP`` older than the
previous one (the robot's clock restarted) restarts the filter.

``/diagnostics``: ``torque_estimator: torque estimation`` every ``diagnostics_period``
(``ident_core.monitoring.checks.estimator_status``): the latency of the estimates (publication
minus the sample's stamp; 50th and 95th percentile and largest of the last ``LATENCY_WINDOW``
samples), the time to compute one, and the Kalman filter's innovations over the period (RMS and
mean normalised innovation squared per joint, outliers); WARN above ``latency_warning`` or
``innovation_nis_warning``, WARN or ERROR (none estimated) for refused samples.
"""
from __future__ import annotations

import array
import gc
import sys
import time

import numpy as np
from pydantic import Field
from rclpy.time import Time
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from ident_core.data.joint_selection import JointSelection
from ident_core.errors import InputError
from ident_core.model.inertial import body_links
from ident_core.monitoring.checks import estimator_status
from ident_core.monitoring.statistics import SampleWindow
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_core.motion.controller import TrajectoryBuffer
from ident_core.schema import per_joint
from ident_core.torque_estimation.collision import CollisionDetector
from ident_core.torque_estimation.config import TorqueEstimatorConfig
from ident_core.torque_estimation.dynamics import load_dynamic_model
from ident_core.torque_estimation.estimator import TorqueEstimator
from ident_msgs.msg import Collision, IdentifiedParameters
from ident_ros import lifecycle, qos
from ident_ros.conversions import collision_markers, collision_msg
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.trajectories import trajectory_points

#: A stamp this much older than the previous one restarts the filter [s].
RESTART_JUMP = 1.0
#: Latest samples whose latency and compute time the diagnostic reports (1 s at 1 kHz).
LATENCY_WINDOW = 1000

try:                            # a message every millisecond: no wait set rebuilt per message
    from rclpy.experimental import EventsExecutor as Executor
except ImportError:             # rclpy before 7.1.4 (Humble, early Jazzy)
    from rclpy.executors import SingleThreadedExecutor as Executor


class TorqueEstimatorNodeParameters(TorqueEstimatorConfig, RobotDescriptionParameters,
                                    DiagnosticsConfig):
    """Parameters of the node: the estimation settings plus the robot, the model and the
    topics."""

    model_file: str = Field('', description='RESULT.yaml of the identified model (of the '
                            "robot's URDF, whatever path it records); empty: the URDF alone.")
    payload_file: str = Field('', description='PAYLOAD.yaml of a payload mounted now; empty: '
                              'none.')
    joint_states_topic: str = Field('joint_states',
                                    description='JointState input (position and effort).')
    reference_topic: str = Field('joint_trajectory_controller/joint_trajectory',
                                 description='JointTrajectory commands of the controller; '
                                             'empty: no reference.')
    model_topic: str = Field('identification_node/parameters',
                             description='IdentifiedParameters of new identifications (their '
                             'RESULT.yaml replaces the model); empty: the model stays.')
    latency_warning: float = Field(
        0.01, gt=0, description='The ``torque estimation`` diagnostic warns when the 95th '
        "percentile of the latency (publication of an estimate minus its sample's stamp) "
        'exceeds this [s].')
    innovation_nis_warning: float = Field(
        5.0, gt=0, description="The ``torque estimation`` diagnostic warns when a joint's mean "
        'normalised innovation squared over a period exceeds this (about 1 when the model and '
        'the noise covariances are right).')


class TorqueEstimatorNode(lifecycle.GracefulNode):
    """The ``torque_estimator`` (module docstring). ``InputError`` for bad parameters or
    files."""

    def __init__(self, **kwargs):
        super().__init__('torque_estimator', **kwargs)
        p = declare_parameters(self, TorqueEstimatorNodeParameters)
        self.p = p
        self.config = TorqueEstimatorConfig(**{k: getattr(p, k)
                                               for k in TorqueEstimatorConfig.model_fields})
        self.robot = robot_model(self, p)
        self.dm = load_dynamic_model(p.model_file or None, self.robot, p.payload_file or None)
        self.identified = bool(p.model_file)
        self.joint_names = list(self.dm.robot.joint_names)
        self.thresholds = per_joint(p.collision_threshold, self.dm.n, 'collision_threshold')
        self.links = body_links(self.dm.robot)
        self.units = self.dm.robot.effort_units()
        self._collision_torques: dict[int, float] = {}     # joint in collision -> torque shown
        self._restart()
        self._last_q = None
        self.buffer: TrajectoryBuffer | None = None
        self.selection = JointSelection(self.joint_names)
        self.samples = self.refused = 0
        self.latency = SampleWindow(LATENCY_WINDOW)          # s
        self.compute_time = SampleWindow(LATENCY_WINDOW)     # s
        self._reported = (0, 0, 0)        # samples, refused, skipped at the last report
        self._sim_time = self.get_parameter('use_sim_time').value
        # one message of each output, filled anew for every sample (publish copies it)
        self._outputs = [JointState(name=self.joint_names) for _ in range(2)]
        self.torques = self.create_publisher(JointState, '~/joint_torques', qos.ESTIMATE_QOS)
        self.external = self.create_publisher(JointState, '~/external_torques',
                                              qos.ESTIMATE_QOS)
        self.collisions = self.create_publisher(Collision, '~/collision', qos.EVENT_QOS)
        self.collision_marker_publisher = self.create_publisher(
            MarkerArray, '~/collision_markers', qos.MARKER_QOS)
        self.joint_states_topic = self.resolve_topic_name(p.joint_states_topic)
        self.create_subscription(JointState, self.joint_states_topic, self._on_joint_state,
                                 qos.JOINT_STATES_QOS)
        if p.reference_topic:
            self.create_subscription(JointTrajectory, p.reference_topic, self._on_reference,
                                     qos.COMMAND_QOS)
        if p.model_topic:
            self.create_subscription(IdentifiedParameters, p.model_topic, self._on_model,
                                     qos.LATCHED_QOS)
        self.diagnostics = DiagnosticsPublisher(self, p.diagnostics_period,
                                                self.dm.robot.model.name)
        self.diagnostics.add('torque estimation', self.estimation_status)
        gc.freeze()     # the model and the modules: no collector pauses in the message loop
        self.get_logger().info(
            f'ready: {self.config.method} on {self.dm.source}, {self.joint_states_topic} -> '
            f'{self.torques.topic_name}, {self.external.topic_name}, '
            f'{self.collisions.topic_name}; reference {p.reference_topic or "none"}'
            + ('' if self.identified else '; collision detection waits for an identified model'))

    def _restart(self) -> None:
        self.estimator = TorqueEstimator(self.dm, self.config)
        threshold = self.thresholds if self.identified else np.zeros(self.dm.n)
        self.detector = CollisionDetector(threshold, self.config.collision_time)
        self._last_stamp = None
        if self._collision_torques:                 # a new detector: no joint in collision
            self._collision_torques = {}
            self.collision_marker_publisher.publish(collision_markers([]))

    def _on_model(self, msg: IdentifiedParameters) -> None:
        if not msg.result_path or msg.result_path == self.dm.source:
            return
        try:
            dm = load_dynamic_model(msg.result_path, self.robot, self.p.payload_file or None)
        except InputError as exc:
            self.get_logger().error(f'identified model not taken: {exc}')
            return
        if dm.robot.joint_names != self.joint_names:
            self.get_logger().error(f'identified model not taken: {msg.result_path} has joints '
                                    f'{dm.robot.joint_names}, the estimator {self.joint_names}')
            return
        self.dm, self.identified = dm, True
        self._restart()
        self.get_logger().info(f'model replaced by {msg.result_path}: filter restarted')

    def _on_reference(self, msg: JointTrajectory) -> None:
        if self._last_q is None:
            self.get_logger().warning('JointTrajectory ignored: no joint_states yet')
            return
        buffer = self.buffer or TrajectoryBuffer(self._last_q)
        now = self.get_clock().now().nanoseconds * 1e-9
        stamp = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        try:
            buffer.replace(now, stamp or now, *trajectory_points(msg, self.dm.robot))
        except InputError as exc:
            self.get_logger().error(f'JointTrajectory ignored: {exc}')
            return
        self.buffer = buffer

    def _on_joint_state(self, msg: JointState) -> None:
        started = time.perf_counter()
        columns = self.selection.columns(msg.name)
        if columns is None:             # another publisher's (a gripper's): not a sample
            return
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        try:
            q, effort = self._arrays(msg, columns)
            if self._last_stamp is not None and stamp < self._last_stamp - RESTART_JUMP:
                self.get_logger().warning('joint_states went back in time: filter restarted')
                self._restart()
            reference = None if self.buffer is None else self.buffer.sample(stamp)
            estimate = self.estimator.step(stamp, q, effort, reference)
        except InputError as exc:
            self.refused += 1
            self.get_logger().error(f'joint_states refused: {exc}', throttle_duration_sec=5.0)
            return
        self._last_stamp, self._last_q = stamp, q
        if estimate is None:
            return
        self.samples += 1
        for publisher, out, effort in zip((self.torques, self.external), self._outputs,
                                          (estimate.filtered, estimate.external)):
            out.header.stamp = msg.header.stamp
            out.effort = array.array('d', effort.tobytes())     # no per-element checks
            publisher.publish(out)
        self.compute_time.add(time.perf_counter() - started)
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        self.latency.add((self._now_ns() - stamp_ns) * 1e-9)
        collisions = self.detector.update(stamp, estimate.external)
        for c in collisions:
            self._report(msg, c)
        if self.detector.changed:
            self._publish_collision_markers(collisions)

    def _now_ns(self) -> int:
        """Now on the clock of the stamps (system time unless ``use_sim_time``) [ns]."""
        return self.get_clock().now().nanoseconds if self._sim_time else time.time_ns()

    def estimation_status(self) -> Status:
        """The ``torque estimation`` diagnostic of the period since the last one (the
        innovations are reset)."""
        skipped = self.selection.skipped
        samples, refused = self.samples - self._reported[0], self.refused - self._reported[1]
        other = skipped - self._reported[2]
        self._reported = (self.samples, self.refused, skipped)
        innovations = self.estimator.innovations
        status = estimator_status(
            joint_names=self.joint_names, prismatic=self.dm.robot.prismatic,
            method=self.config.method, identified=self.identified, samples=samples,
            refused=refused, skipped=other,
            missing=self.selection.problem(self.joint_states_topic) if other and not samples
            else '', period=self.p.diagnostics_period, latency=self.latency,
            compute_time=self.compute_time, innovations=innovations,
            latency_warning=self.p.latency_warning, nis_warning=self.p.innovation_nis_warning)
        if innovations is not None:
            innovations.reset()
        return status

    @staticmethod
    def _arrays(msg: JointState, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Position and effort in model joint order (``columns`` of the message)."""
        if len(msg.position) != len(msg.name) or len(msg.effort) != len(msg.name):
            raise InputError(f'{len(msg.name)} names, {len(msg.position)} positions and '
                             f'{len(msg.effort)} efforts')
        return (np.asarray(msg.position, dtype=float)[columns],
                np.asarray(msg.effort, dtype=float)[columns])

    def _report(self, msg: JointState, c) -> None:
        out = collision_msg(c, self.joint_names[c.joint], self.thresholds[c.joint],
                            msg.header.stamp)
        self.collisions.publish(out)
        self.get_logger().warning(f'collision on {out.joint}: external torque '
                                  f'{c.external_torque:.3g} (threshold {out.threshold:g})')

    def _publish_collision_markers(self, collisions: list) -> None:
        """Markers of the joints in collision now, with the torque of their report."""
        active = [int(j) for j in self.detector.active]
        torques = {j: t for j, t in self._collision_torques.items() if j in active}
        torques.update({c.joint: c.external_torque for c in collisions})
        self._collision_torques = torques
        self.collision_marker_publisher.publish(collision_markers(
            [(self.links[j], self.joint_names[j], torques[j], self.units[j]) for j in active]))

    def close(self) -> None:
        if hasattr(self, 'estimator'):
            self.get_logger().info(f'{self.samples} samples estimated, {self.refused} refused, '
                                   f'{self.estimator.repeats} repeated stamps skipped, '
                                   f'{self.selection.skipped} messages without every joint')


def main(args=None):
    """Console script ``torque_estimator_node`` (events executor: a message every
    millisecond)."""
    sys.exit(lifecycle.run(TorqueEstimatorNode, args=args, executor_class=Executor))
