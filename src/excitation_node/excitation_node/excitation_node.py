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

Service ``~/optimize`` (ident_msgs/srv/OptimizeExcitation): optimises an excitation trajectory
with ``ident_core.excitation`` for this robot. The settings come from the YAML file of parameter
``optimizer_config``, with this node's ``acceleration_limits`` instead of its
``limits.acceleration`` and a margin of at least ``limit_margin``, so that the result passes the
node's own check. The optimisation runs in a worker thread (the node keeps spinning); the result
is written to a YAML file and remembered: a goal with neither ``trajectory_file`` nor
``trajectory`` runs the last optimised trajectory. One thing at a time: an optimisation is
refused while an excitation or another optimisation runs, a goal while an optimisation runs.
"""
from __future__ import annotations

import concurrent.futures
import re
import sys
import threading
from pathlib import Path

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ident_core.errors import ExcitationError, IdentError, InputError
from ident_core.excitation import (ExcitationConfig, ExcitationProblem, load_excitation_config,
                                   optimize_excitation)
from ident_core.fourier import FourierTrajectory, load_trajectory
from ident_core.motion import ExcitationPlan, JointLimits, period_violations, stop_segment
from ident_core.robot_model import load_robot
from ident_msgs.action import RunExcitation
from ident_msgs.msg import ExcitationTrajectory
from ident_msgs.srv import OptimizeExcitation, StartRecording, StopRecording
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

    def __init__(self, **kwargs):
        super().__init__('excitation_node', **kwargs)
        p = {name: runtime.parameter(self, name, default) for name, default in PARAMETERS.items()}
        if not p['urdf_file']:
            raise InputError('parameter urdf_file is empty')
        self.robot = load_robot(p['urdf_file'])
        self.acceleration = runtime.per_joint(p['acceleration_limits'], self.robot.n,
                                              'acceleration_limits')
        self.limits = JointLimits.from_robot(self.robot, self.acceleration) \
            .with_margin(p['limit_margin'])
        self.p = p
        self.group = group = ReentrantCallbackGroup()
        self.command = self.create_publisher(JointTrajectory, p['command_topic'],
                                             runtime.COMMAND_QOS)
        self.description = self.create_publisher(ExcitationTrajectory, '~/trajectory',
                                                 runtime.LATCHED_QOS)
        self.start_client = self.create_client(StartRecording, p['recorder_start_service'],
                                               callback_group=group)
        self.stop_client = self.create_client(StopRecording, p['recorder_stop_service'],
                                              callback_group=group)
        self.create_service(Trigger, '~/stop', self._on_stop)
        self.create_service(OptimizeExcitation, '~/optimize', self._on_optimize,
                            callback_group=group)
        self.action = ActionServer(self, RunExcitation, '~/run', self._execute,
                                   goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                   callback_group=group)
        self.motion: Motion | None = None
        self.busy = False
        self.optimizing = False
        self.optimized: FourierTrajectory | None = None     # the last optimised trajectory
        self.stop_reason = ''
        self.done: Future | None = None
        self.goal = None
        self.sent_until = -np.inf
        self.create_timer(p['send_period'], self._tick)
        self.get_logger().info(f'ready: {self.robot.n} joints, commands on {p["command_topic"]}')

    # --- action ---------------------------------------------------------------------------
    def _on_goal(self, _goal):
        if self.busy or self.optimizing:
            self.get_logger().warning(f'goal rejected: an '
                                      f'{"excitation" if self.busy else "optimisation"} is running')
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
            trajectory = self._requested_trajectory(request)
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

    def _requested_trajectory(self, request) -> FourierTrajectory:
        if request.trajectory_file:
            return load_trajectory(request.trajectory_file)
        if request.trajectory.joint_names:
            return trajectory_from_msg(request.trajectory)
        if self.optimized is None:
            raise InputError(f'no trajectory: give trajectory_file or trajectory, or call '
                             f'{self.get_fully_qualified_name()}/optimize first')
        return self.optimized

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

    # --- optimisation ---------------------------------------------------------------------
    async def _on_optimize(self, request, response):
        refusal = ('an optimisation is already running' if self.optimizing
                   else 'an excitation is running' if self.busy else '')
        if refusal:
            response.message = f'optimisation refused: {refusal}'
            self.get_logger().warning(response.message)
            return response
        self.optimizing = True
        try:
            result, path = await self._in_thread(self._optimize, request)
        except Exception as exc:    # noqa: BLE001 -- a failed optimisation must not end the node
            response.message = str(exc) if isinstance(exc, IdentError) \
                else f'{type(exc).__name__}: {exc}'
            self.get_logger().error(f'optimisation failed: {response.message}')
            return response
        finally:
            self.optimizing = False
        self.optimized = result.trajectory
        response.success, response.trajectory_file = True, str(path.resolve())
        response.trajectory = trajectory_to_msg(result.trajectory, Time().to_msg(),
                                                result.trajectory.periods)
        response.cond, response.dopt = result.objectives['cond'], result.objectives['dopt']
        response.seconds = result.seconds
        response.message = (f'{result.trajectory.name}: cond {response.cond:.4g}, dopt '
                            f'{response.dopt:.4g} in {result.seconds:.1f} s, written to {path}')
        self.get_logger().info(f'optimised {response.message}')
        return response

    def _optimize(self, request):
        """Worker thread: settings, optimisation, check against the node's limits, YAML file.
        Returns (ExcitationResult, path written)."""
        p = self.p
        config = (load_excitation_config(p['optimizer_config']) if p['optimizer_config'] else
                  ExcitationConfig(source='default excitation settings (optimizer_config empty)'))
        config = optimizer_settings(config, self.acceleration, p['limit_margin'],
                                    request.objective, request.harmonics, request.period)
        optimizer = request.optimizer or p['optimizer']
        path = Path(request.output_file or Path(p['optimized_trajectory_dir']) / (
            _name(f'{self.robot.urdf.stem}_{optimizer}_{config.objective}')
            + f'_seed{request.seed}.yaml'))
        result = optimize_excitation(ExcitationProblem(self.robot, config), optimizer,
                                     request.seed, request.budget or p['optimization_budget'],
                                     name=_name(path.stem))
        problems = period_violations(result.trajectory, self.limits)
        if problems:
            raise ExcitationError(f'the optimised trajectory exceeds the limits of this node '
                                  f'({problems[0]}); does limits.joints of {config.source} '
                                  f'widen a URDF limit?')
        return result, result.trajectory.save(path)

    async def _in_thread(self, function, *args):
        """``function(*args)`` run in a worker thread; the executor keeps spinning meanwhile and
        is woken through a guard condition when the thread is done."""
        outcome, done = concurrent.futures.Future(), Future()
        guard = self.create_guard_condition(lambda: done.done() or done.set_result(None),
                                            callback_group=self.group)

        def work():
            try:
                outcome.set_result(function(*args))
            except BaseException as exc:     # noqa: BLE001 -- handed to the awaiting coroutine
                outcome.set_exception(exc)
            try:
                guard.trigger()
            except Exception:                # noqa: BLE001 -- the node was destroyed meanwhile
                pass
        threading.Thread(target=work, name='excitation-optimizer', daemon=True).start()
        try:
            await done
        finally:
            self.destroy_guard_condition(guard)
        return outcome.result()

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


def optimizer_settings(config: ExcitationConfig, acceleration, margin: float, objective: str = '',
                       harmonics: int = 0, period: float = 0.0) -> ExcitationConfig:
    """The settings of an optimisation by the node: ``config`` with the node's acceleration
    limits (rad/s², per joint) instead of its own, a margin of at least the node's ``margin``,
    and the request's objective, harmonics and period where given ('' or 0: as in ``config``).

    Raises:
        InputError: invalid values (naming the field), or ``locked_joints`` in ``config`` (the
            node runs every joint of its URDF).
    """
    if config.locked_joints:
        raise InputError(f'{config.source}: locked_joints cannot be used by the excitation '
                         f'node, it runs every joint of its URDF')
    return config.with_changes(acceleration=[float(a) for a in acceleration],
                               margin=max(config.margin, margin), objective=objective or None,
                               harmonics=int(harmonics) or None, period=float(period) or None)


def _name(text: str) -> str:
    """``text`` usable as a trajectory and experiment name (letters, digits, '-', '_')."""
    return re.sub(r'[^A-Za-z0-9_-]', '-', text)


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
    'optimizer_config': '',
    'optimizer': 'ga+local',
    'optimization_budget': 120.0,
    'optimized_trajectory_dir': 'output/excitation',
}


def main(args=None):
    sys.exit(runtime.run(ExcitationNode, args=args))
