"""Simulated ros2_control hardware: behaves like a joint_trajectory_controller plus a
joint_state_broadcaster on EtherCAT drives (``ident_core.sim.simulator``).

Subscribes ``trajectory_msgs/JointTrajectory`` (default ``joint_trajectory_controller/
joint_trajectory``, in its namespace) and, where control_msgs is installed, serves
``control_msgs/action/FollowJointTrajectory`` beside it (``follow_joint_trajectory``;
``ident_sim.trajectory_action``: tolerances, aborts, feedback, as the controller does); publishes
``sensor_msgs/JointState`` on ``joint_states`` at the control rate with header stamps
``start + k·dt``, and optionally ``/clock``. The simulated robot is ``urdf_file``, or the URDF
its stack publishes on ``robot_description`` (``ident_ros.robot_description``). The ground truth
goes to
``ground_truth_dir`` (``ground_truth.yaml`` at start and whenever the payload changes;
``truth_log.npz`` — every published stamp with the true state and noise-free torque — on
``~/write_ground_truth`` and at shutdown), never onto a topic. ``~/set_payload``
(std_srvs/SetBool) mounts the configured payload (``payload_mass`` > 0) or removes it, from the
next control period on, as an operator would between two experiments.
``~/apply_external_torque`` (ident_msgs/ApplyExternalTorque) applies an external torque on one
joint for a time, from the next control period on (a contact, for tests of the torque
estimator); the truth log records it. On SIGINT/SIGTERM it
keeps running the commanded trajectory until the robot is at rest (at most
``shutdown_settle_time`` s of simulation time after the signal or after the last commanded point,
whichever is later: a simulator behind the wall clock gets the stop command's points late), as
real hardware would, then writes the ground truth.

``/diagnostics``: ``ident_sim: real time`` every ``diagnostics_period``
(``ident_core.monitoring.checks.realtime_status``): how far the simulation is behind the wall
clock (largest lag of the period) and the timer calls that had to run more than one step to
catch up; WARN above ``realtime_lag_warning``, ERROR above ``realtime_lag_error``.
"""
from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from ident_core.errors import InputError
from ident_core.files import dump_yaml, write_atomic
from ident_core.monitoring.checks import realtime_status
from ident_core.monitoring.statistics import RealtimeMonitor
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_core.motion.controller import TrajectoryBuffer
from ident_core.sim.config import SimulationConfig
from ident_core.sim.simulator import RobotSimulator, TruthLog
from ident_msgs.srv import ApplyExternalTorque
from ident_ros import lifecycle, qos
from ident_ros.controller_action import action_name
from ident_ros.controller_action import available as action_available
from ident_ros.conversions import joint_state_msg
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.trajectories import trajectory_points
from ident_sim.trajectory_action import TrajectoryActionServer

MAX_CATCH_UP = 50          # steps per timer call when the process fell behind
REST_SPEED = 1e-3          # rad/s, "at rest" for the shutdown
REST_TIME = 0.2            # s at rest before the shutdown completes


class SimNodeParameters(SimulationConfig, RobotDescriptionParameters, DiagnosticsConfig):
    """Parameters of the simulator node: the simulated hardware plus its interfaces; the
    robot model (``urdf_file``, or the URDF on ``robot_description_topic``) is the simulated
    robot."""

    trajectory_topic: str = Field('joint_trajectory_controller/joint_trajectory',
                                  description='JointTrajectory topic of the simulated '
                                              'joint_trajectory_controller.')
    joint_states_topic: str = Field('joint_states', description='JointState output.')
    ground_truth_dir: str = Field('ground_truth', description='Folder of the ground truth, '
                                  '``ground_truth.yaml`` and ``truth_log.npz``.')
    publish_clock: bool = Field(False, description='Publish ``/clock`` (nodes then use '
                                '``use_sim_time``).')
    shutdown_settle_time: NonNegativeFloat = Field(
        3.0, description='Time allowed to come to rest after SIGINT, or after the last '
        'commanded point if that is later [s].')
    realtime_lag_warning: PositiveFloat = Field(
        0.1, description='The ``real time`` diagnostic warns when the simulation falls further '
        'than this behind the wall clock [s].')
    realtime_lag_error: PositiveFloat = Field(
        1.0, description='The ``real time`` diagnostic reports an error when the simulation '
        'falls further than this behind the wall clock [s].')


class SimNode(lifecycle.GracefulNode):
    """The simulated hardware (``ident_sim``): steps ``ident_core.sim.simulator`` at the control
    rate from a wall-clock timer. Invalid parameters raise ``InputError`` at construction."""

    def __init__(self, **kwargs):
        super().__init__('ident_sim', **kwargs)
        p = declare_parameters(self, SimNodeParameters)
        self.robot = robot_model(self, p)
        self.hardware = p.hardware(self.robot.n)
        self.sim = RobotSimulator(self.robot, self.hardware)
        self.dt_ns = int(round(self.hardware.dt * 1e9))
        self.buffer = TrajectoryBuffer(self.hardware.initial_position)
        self.log = TruthLog(self.robot.n)
        self.truth_dir = Path(p.ground_truth_dir).resolve()
        self.settle_time = p.shutdown_settle_time
        self.write_ground_truth()
        self.joint_states = self.create_publisher(JointState, p.joint_states_topic,
                                                  qos.JOINT_STATES_QOS)
        self.clock = (self.create_publisher(Clock, '/clock', qos.COMMAND_QOS)
                      if p.publish_clock else None)
        self.create_subscription(JointTrajectory, p.trajectory_topic, self._on_trajectory,
                                 qos.COMMAND_QOS)
        self.last_position = np.array(self.hardware.initial_position, dtype=float)
        self.action = TrajectoryActionServer(
            self, action_name(self.resolve_topic_name(p.trajectory_topic)), self.robot,
            self._now, self._start_time, self._replace, self._hold) \
            if action_available() else None
        self.create_service(Trigger, '~/write_ground_truth', self._on_write_truth)
        self.create_service(SetBool, '~/set_payload', self._on_set_payload)
        self.create_service(ApplyExternalTorque, '~/apply_external_torque',
                            self._on_external_torque)
        # sim time 0 at the wall-clock start; stamps are exact multiples of dt after it
        self.start_ns = 0 if self.clock else self.get_clock().now().nanoseconds
        self.start_wall = time.monotonic()
        self.stamps: list[int] = []
        self.rest_since = None
        self.stop_deadline = None
        self.last_qd = np.zeros(self.robot.n)
        self.realtime = RealtimeMonitor()
        self.p = p
        self.create_timer(self.hardware.dt, self._tick)
        self.diagnostics = DiagnosticsPublisher(self, p.diagnostics_period, self.robot.model.name)
        self.diagnostics.add('real time', self.realtime_status)
        self.get_logger().info(
            f'simulating {self.robot.model.name} ({self.robot.n} joints) at '
            f'{1 / self.hardware.dt:g} Hz, ground truth in {self.truth_dir}')

    def _now(self) -> float:
        """Simulation time of the next step, s since the start."""
        return self.sim.time

    def _start_time(self, msg: JointTrajectory) -> float:
        """Simulation time of a trajectory's ``time_from_start = 0``: its stamp, or now."""
        stamp = Time.from_msg(msg.header.stamp).nanoseconds
        return self._now() if stamp == 0 else (stamp - self.start_ns) * 1e-9

    def _replace(self, msg: JointTrajectory) -> float | None:
        """Run a trajectory from now on (``TrajectoryBuffer.replace``); the simulation time of
        its last point, None when all its points are in the past. Raises ``InputError``."""
        times, *fields = trajectory_points(msg, self.robot)
        if not self.buffer.replace(self._now(), self._start_time(msg), times, *fields):
            return None
        return self.buffer.end_time

    def _hold(self) -> None:
        """Hold the last measured position (an aborted or cancelled goal)."""
        self.buffer.hold(self._now(), self.last_position)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            if self._replace(msg) is None:
                self.get_logger().warning('JointTrajectory ignored: all its points are in the past')
        except InputError as exc:
            self.get_logger().error(f'JointTrajectory rejected: {exc}')

    def _tick(self) -> None:
        elapsed = time.monotonic() - self.start_wall
        due = int(elapsed / self.hardware.dt) + 1
        steps = max(0, min(due - self.sim.step_count, MAX_CATCH_UP))
        for _ in range(steps):
            self._step()
        self.realtime.update(elapsed, self.sim.time, steps)
        if self.shutdown_requested:
            self._check_rest()

    def _step(self) -> None:
        now = self._now()
        desired = self.buffer.sample(now)
        sample = self.sim.step(*desired)
        self.log.append(sample)
        self.last_qd, self.last_position = sample.qd, sample.position
        stamp_ns = self.start_ns + sample.step * self.dt_ns
        self.stamps.append(stamp_ns)
        msg = joint_state_msg(stamp_ns, self.robot.joint_names, sample.position,
                              sample.velocity, sample.effort)
        if self.clock is not None:
            self.clock.publish(Clock(clock=msg.header.stamp))
        self.joint_states.publish(msg)
        if self.action is not None:
            self.action.step(now, msg.header.stamp, desired, sample.position, sample.velocity)

    def realtime_status(self) -> Status:
        """The ``real time`` diagnostic of the period since the last one."""
        status = realtime_status(monitor=self.realtime, control_period=self.hardware.dt,
                                 lag_warning=self.p.realtime_lag_warning,
                                 lag_error=self.p.realtime_lag_error)
        self.realtime.reset_period()
        return status

    def _check_rest(self) -> None:
        now = self._now()
        commanded = self.buffer.sample(now)[1]
        if np.abs(self.last_qd).max() < REST_SPEED and not np.any(commanded):
            self.rest_since = now if self.rest_since is None else self.rest_since
        else:
            self.rest_since = None
        at_rest = self.rest_since is not None and now - self.rest_since >= REST_TIME
        # a simulator behind the wall clock reaches the commanded stop later than the signal
        deadline = max(self.stop_deadline, self.buffer.end_time + self.settle_time)
        if at_rest or now >= deadline:
            if not at_rest:
                self.get_logger().warning(f'robot not at rest {self.settle_time:g} s after the '
                                          'shutdown request')
            self.finished = True

    def request_shutdown(self) -> None:
        self.stop_deadline = self._now() + self.settle_time

    def _on_set_payload(self, request, response):
        payload = self.hardware.payload
        if request.data and payload is None:
            response.success = False
            response.message = 'no payload configured: set the parameter payload_mass (kg) > 0'
            return response
        self.sim.set_payload(payload if request.data else None)
        self.write_ground_truth()
        response.success = True
        response.message = (f'{payload.mass:g} kg payload mounted on {payload.frame}'
                            if request.data else 'payload removed')
        self.get_logger().info(f'{response.message} at t = {self.sim.time:.3f} s')
        return response

    def _on_external_torque(self, request, response):
        try:
            joint = self.robot.joint_index(request.joint, 'apply_external_torque')
            torque = np.zeros(self.robot.n)
            torque[joint] = request.torque
            self.sim.apply_external_torque(torque, request.duration)
        except InputError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.start = Time(nanoseconds=self.start_ns + self.sim.step_count * self.dt_ns).to_msg()
        response.success = True
        response.message = (f'{request.torque:g} on {request.joint} for {request.duration:g} s '
                            f'from t = {self.sim.time:.3f} s')
        self.get_logger().info(f'external torque: {response.message}')
        return response

    def write_ground_truth(self) -> Path:
        """Write ``ground_truth.yaml`` atomically (``RobotSimulator.ground_truth``: the true
        robot with the payload mounted now)."""
        return write_atomic(self.truth_dir / 'ground_truth.yaml',
                            dump_yaml(self.sim.ground_truth()))

    def _on_write_truth(self, _request, response):
        path = self.write_truth_log()
        response.success, response.message = True, str(path)
        return response

    def write_truth_log(self) -> Path:
        """Write ``truth_log.npz`` atomically: stamp_ns (M,) int64 of every published
        JointState, and the true q, qd, qdd and noise-free torque (M, n)."""
        arrays = self.log.arrays()
        arrays['stamp_ns'] = np.array(self.stamps, dtype=np.int64)
        arrays['joint_names'] = np.array(self.robot.joint_names)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return write_atomic(self.truth_dir / 'truth_log.npz', buffer.getvalue())

    def close(self) -> None:
        if hasattr(self, 'log'):
            path = self.write_truth_log()
            self.get_logger().info(f'{self.sim.step_count} samples published, max |qd| at the '
                                   f'end {np.abs(self.last_qd).max():.2e} rad/s, truth log {path}')


def main(args=None):
    """Console script ``sim_node``."""
    sys.exit(lifecycle.run(SimNode, args=args))
