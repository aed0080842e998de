"""Excitation node: runs excitation trajectories on a joint_trajectory_controller.

Action ``~/run`` (ident_msgs/action/RunExcitation): loads the trajectory (YAML file or message),
checks every sample of approach, periods and stop against the joint limits (URDF + configured
acceleration limits, minus a margin) **before** anything moves, then streams
``trajectory_msgs/JointTrajectory`` messages (positions, velocities, accelerations,
time_from_start; each covers ``horizon`` s and replaces the rest of the previous one, stamped in
absolute time) to the controller topic, publishes the ``ExcitationTrajectory`` it runs on
``~/trajectory`` (transient local) and, if asked, starts and stops the recorder around it.
Cancelling the goal, the ``~/stop`` service or SIGINT/SIGTERM bring the robot to rest along a
quintic stop segment (``ident_core.motion``).
"""
from __future__ import annotations

import sys

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ident_core.errors import IdentError, InputError
from ident_core.fourier import load_trajectory
from ident_core.motion import ExcitationPlan, JointLimits, stop_segment
from ident_core.robot_model import load_robot
from ident_msgs.action import RunExcitation
from ident_msgs.msg import ExcitationTrajectory
from ident_msgs.srv import StartRecording, StopRecording
from ident_node import runtime
from ident_node.conversions import trajectory_from_msg, trajectory_to_msg

LEAD = 0.2                  # s between planning a motion and its first point
SERVICE_TIMEOUT = 5.0       # s to wait for the recorder's services and for joint_states


class Motion:
    """A plan started at ``start_ns`` (ROS time), possibly cut short by a stop segment."""

    def __init__(self, plan: ExcitationPlan, start_ns: int):
        self.plan, self.start_ns = plan, start_ns
        self.stop = None
        self.stop_at = None

    @property
    def end(self) -> float:
        """Plan time (s) at which the robot is at rest again."""
        return self.plan.duration if self.stop is None else self.stop_at + self.stop.duration

    def sample(self, t: np.ndarray):
        """q, qd, qdd (M, n) at plan times t (M,) s."""
        if self.stop is None:
            return self.plan.sample(t)
        before = t < self.stop_at
        out = [np.empty((len(t), self.plan.trajectory.n)) for _ in range(3)]
        for mask, values in ((before, self.plan.sample(t[before]) if before.any() else None),
                             (~before, self.stop.evaluate(t[~before] - self.stop_at)
                              if (~before).any() else None)):
            if values is not None:
                for o, v in zip(out, values):
                    o[mask] = v
        return tuple(out)

    def stop_at_time(self, t: float) -> None:
        """Replace the rest of the motion, from plan time ``t``, by a stop segment."""
        if self.stop is not None or t >= self.plan.stop_start:
            return                   # already stopping (the plan ends with a stop)
        state = tuple(x[0] for x in self.sample(np.array([t])))
        self.stop = stop_segment(state, self.plan.limits, min_duration=0.2)
        self.stop_at = t


class ExcitationNode(runtime.GracefulNode):
    """The ``excitation_node``."""

    def __init__(self):
        super().__init__('excitation_node')
        p = {name: runtime.parameter(self, name, default) for name, default in PARAMETERS.items()}
        if not p['urdf_file']:
            raise InputError('parameter urdf_file is empty')
        self.robot = load_robot(p['urdf_file'])
        self.limits = JointLimits.from_robot(
            self.robot, runtime.per_joint(p['acceleration_limits'], self.robot.n,
                                          'acceleration_limits')) \
            .with_margin(p['limit_margin'])
        self.p = p
        group = ReentrantCallbackGroup()
        self.command = self.create_publisher(JointTrajectory, p['command_topic'],
                                             runtime.COMMAND_QOS)
        self.description = self.create_publisher(ExcitationTrajectory, '~/trajectory',
                                                 runtime.LATCHED_QOS)
        self.start_client = self.create_client(StartRecording, p['recorder_start_service'],
                                               callback_group=group)
        self.stop_client = self.create_client(StopRecording, p['recorder_stop_service'],
                                              callback_group=group)
        self.create_service(Trigger, '~/stop', self._on_stop)
        self.action = ActionServer(self, RunExcitation, '~/run', self._execute,
                                   goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                   callback_group=group)
        self.motion: Motion | None = None
        self.busy = False
        self.stop_reason = ''
        self.done: Future | None = None
        self.goal = None
        self.sent_until = -np.inf
        self.create_timer(p['send_period'], self._tick)
        self.get_logger().info(f'ready: {self.robot.n} joints, commands on {p["command_topic"]}')

    # --- action ---------------------------------------------------------------------------
    def _on_goal(self, _goal):
        if self.busy:
            self.get_logger().warning('goal rejected: an excitation is running')
            return GoalResponse.REJECT
        self.busy = True
        return GoalResponse.ACCEPT

    def _on_cancel(self, _goal_handle):
        self.stop_motion('cancel requested')
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle):
        try:
            return await self._run(goal_handle)
        finally:
            self.motion, self.goal, self.busy = None, None, False

    async def _run(self, goal_handle):
        request, result = goal_handle.request, RunExcitation.Result()
        self.goal = goal_handle
        try:
            trajectory = (load_trajectory(request.trajectory_file) if request.trajectory_file
                          else trajectory_from_msg(request.trajectory))
            names = list(trajectory.joint_names)
            if sorted(names) != sorted(self.robot.joint_names):
                raise InputError(f'trajectory {trajectory.name!r} names the joints '
                                 f'{", ".join(names)}; the robot has '
                                 f'{", ".join(self.robot.joint_names)}')
            q_now = await self._current_position(names)
            plan = ExcitationPlan(trajectory, q_now, self.limits.reordered(names),
                                  request.periods or None)
            if request.record:
                result.bag_path = await self._start_recording(request.experiment
                                                              or trajectory.name)
        except (IdentError, RuntimeError) as exc:
            self.get_logger().error(f'excitation refused: {exc}')
            goal_handle.abort()
            result.success, result.message = False, str(exc)
            return result
        start_ns = self.get_clock().now().nanoseconds + int(LEAD * 1e9)
        self.motion = Motion(plan, start_ns)
        self.sent_until = -np.inf
        self.done = Future()
        self.description.publish(trajectory_to_msg(
            trajectory, Time(nanoseconds=start_ns + int(plan.excite_start * 1e9)).to_msg(),
            plan.periods))
        self.get_logger().info(
            f'running {trajectory.name!r}: approach {plan.approach.duration:.2f} s, '
            f'{plan.periods} x {trajectory.period:g} s, stop {plan.stop.duration:.2f} s')
        self._tick()
        stopped = await self.done
        if request.record:
            ok, message = await self._stop_recording()
            if not ok:
                stopped = stopped or f'recorder: {message}'
        result.duration = self.motion.end
        result.success = not stopped
        result.message = stopped or 'done'
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif stopped:
            goal_handle.abort()
        else:
            goal_handle.succeed()
        return result

    async def _current_position(self, joints) -> np.ndarray:
        """Latest measured positions of ``joints`` (subscribes to joint_states only meanwhile)."""
        got = Future()

        def on_state(msg: JointState):
            if not got.done():
                got.set_result(dict(zip(msg.name, msg.position)))
        sub = self.create_subscription(JointState, self.p['joint_states_topic'], on_state, 10)
        try:
            state = await _with_timeout(self, got, SERVICE_TIMEOUT,
                                        f'no message on {self.p["joint_states_topic"]}')
        finally:
            self.destroy_subscription(sub)
        missing = [j for j in joints if j not in state]
        if missing:
            raise InputError(f'joint_states has no joint(s) {", ".join(missing)}')
        return np.array([state[j] for j in joints])

    async def _start_recording(self, experiment: str) -> str:
        reply = await self._call(self.start_client, StartRecording.Request(experiment=experiment))
        if not reply.success:
            raise RuntimeError(f'recorder refused to start: {reply.message}')
        return reply.path

    async def _stop_recording(self):
        try:
            reply = await self._call(self.stop_client, StopRecording.Request())
        except RuntimeError as exc:
            return False, str(exc)
        return reply.success, reply.message

    async def _call(self, client, request):
        if not client.wait_for_service(timeout_sec=SERVICE_TIMEOUT):
            raise RuntimeError(f'service {client.srv_name} not available')
        return await _with_timeout(self, client.call_async(request), SERVICE_TIMEOUT,
                                   f'service {client.srv_name} did not answer')

    # --- streaming ------------------------------------------------------------------------
    def _plan_time(self) -> float:
        return (self.get_clock().now().nanoseconds - self.motion.start_ns) * 1e-9

    def _tick(self) -> None:
        if self.motion is None or self.done is None or self.done.done():
            return
        t = self._plan_time()
        end = self.motion.end
        if t > end + self.p['settle_time']:
            self.done.set_result(self.stop_reason if self.motion.stop is not None else '')
            return
        if self.sent_until < end:
            self._send(t + LEAD / 2, t + self.p['horizon'])
        if self.goal is not None and self.goal.is_active:
            phase, progress, period = self.motion.plan.phase(t)
            if self.motion.stop is not None and t >= self.motion.stop_at:
                phase = 'stop'
            self.goal.publish_feedback(RunExcitation.Feedback(
                phase=phase, progress=float(min(max(t / end, 0.0), 1.0)), period=period))

    def _send(self, t_from: float, t_to: float) -> None:
        """Publish the motion between plan times t_from and t_to (point grid aligned to 0)."""
        step = self.p['point_period']
        end = self.motion.end
        first = np.ceil(t_from / step) * step
        times = np.arange(first, min(t_to, end) + 1e-9, step)
        if t_to >= end and (len(times) == 0 or times[-1] < end - 1e-9):
            times = np.append(times, end)
        if len(times) == 0:
            return
        q, qd, qdd = self.motion.sample(times)
        msg = JointTrajectory()
        msg.header.stamp = Time(nanoseconds=self.motion.start_ns + int(round(times[0] * 1e9))) \
            .to_msg()
        msg.joint_names = list(self.motion.plan.trajectory.joint_names)
        for k, tk in enumerate(times):
            msg.points.append(JointTrajectoryPoint(
                positions=q[k].tolist(), velocities=qd[k].tolist(),
                accelerations=qdd[k].tolist(),
                time_from_start=Duration(nanoseconds=int(round((tk - times[0]) * 1e9))).to_msg()))
        self.command.publish(msg)
        self.sent_until = times[-1]

    def stop_motion(self, reason: str) -> bool:
        """Bring a running motion to rest now; False when nothing runs."""
        if self.motion is None or self.motion.stop is not None:
            return self.motion is not None
        t = self._plan_time() + LEAD
        self.motion.stop_at_time(t)
        self.stop_reason = reason
        self.get_logger().warning(f'stopping: {reason}')
        self.sent_until = -np.inf
        self._send(self._plan_time() + LEAD / 2, self.motion.end + 1.0)
        return True

    def _on_stop(self, _request, response):
        response.success = self.stop_motion('stop service called')
        response.message = 'stopping' if response.success else 'no motion running'
        return response

    def request_shutdown(self) -> None:
        if not self.stop_motion('shutdown'):
            self.finished = True
            return
        self.command.wait_for_all_acked(Duration(seconds=2.0))
        self.finished = True


async def _with_timeout(node, future: Future, timeout: float, message: str):
    """Await ``future``; RuntimeError(message) if it is not done within ``timeout`` s."""
    timer = node.create_timer(timeout, lambda: future.done() or future.set_exception(
        RuntimeError(message)))
    try:
        return await future
    finally:
        node.destroy_timer(timer)


PARAMETERS = {
    'urdf_file': '',
    'acceleration_limits': [10.0],
    'limit_margin': 0.02,
    'command_topic': '/joint_trajectory_controller/joint_trajectory',
    'joint_states_topic': '/joint_states',
    'recorder_start_service': '/recorder/start',
    'recorder_stop_service': '/recorder/stop',
    'point_period': 0.01,
    'horizon': 1.0,
    'send_period': 0.25,
    'settle_time': 0.5,
}


def main(args=None):
    sys.exit(runtime.run(ExcitationNode, args=args))
