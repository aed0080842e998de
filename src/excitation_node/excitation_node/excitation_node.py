"""Excitation node: runs excitation trajectories on a joint_trajectory_controller.

Action ``~/run`` (ident_msgs/action/RunExcitation): loads the trajectory (YAML file or message),
checks every sample of approach, periods and stop against the joint limits (URDF + configured
acceleration limits, minus a margin) **before** anything moves, then sends the motion to the
joint_trajectory_controller (positions, velocities, accelerations, time_from_start, stamped in
absolute time), publishes the ``ExcitationTrajectory`` it runs on ``~/trajectory`` (transient
local) and, if asked, starts and stops the recorder around it. Cancelling the goal, the ``~/stop``
service or SIGINT/SIGTERM bring the robot to rest along a quintic stop segment
(``ident_core.motion``).

The controller gets the motion (``controller_interface``) through its
``control_msgs/action/FollowJointTrajectory`` (``follow_joint_trajectory`` beside
``command_topic``): the whole motion as one goal, with ``path_tolerance``, ``goal_tolerance`` and
``goal_time_tolerance``; a stop replaces it by a goal of the rest of the motion; a goal the
controller rejects, aborts (its error code and string) or that another client pre-empts fails the
excitation; the controller's result ends the motion. Or through its topic, as
``trajectory_msgs/JointTrajectory`` messages, each covering ``horizon`` s and replacing the rest
of the previous one (the controller needs ``allow_nonzero_velocity_at_trajectory_end``). With
``auto`` (default) a goal uses the action when control_msgs is installed and the server answers
within ``controller_wait``, else the topic.

A joint-wise friction experiment file (``robot-ident/jointwise/1``,
``ident_core.excitation.jointwise``) runs its joint on the file's cosines around its ``hold``
centre while every other joint is held where it stands when the goal starts; the cosines run
one after the other as the stages of one plan, joined by quintic transitions. Each stage is
described by its own ``ExcitationTrajectory`` (``stage`` of ``stages``, stamped with the start
of its first period), published when the transition into it begins (the first one with the
goal); a stage that a stop pre-empts is not published.

Service ``~/optimize`` (ident_msgs/srv/OptimizeExcitation): optimises an excitation trajectory
with ``ident_core.excitation`` for this robot. The settings come from the YAML file of parameter
``optimizer_config``, with this node's ``acceleration_limits`` instead of its
``limits.acceleration`` and a margin of at least ``limit_margin``, so that the result passes the
node's own check. The optimisation runs in a worker thread (the node keeps spinning); the result
is written to a YAML file and remembered: a goal with neither ``trajectory_file`` nor
``trajectory`` runs the last optimised trajectory. One thing at a time: an optimisation is
refused while an excitation or another optimisation runs, a goal while an optimisation runs.

``/diagnostics``: ``excitation_node: excitation tracking`` every ``diagnostics_period``, the
distance of the measured positions from the command the watchdog samples (every 50 ms) during
the running or last motion (``ident_core.monitoring.checks.tracking_status``); WARN above
``tracking_error_warning_fraction`` of ``tracking_error_limit``, ERROR when the watchdog
stopped the motion.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import numpy as np
import rclpy
from pydantic import Field, NonNegativeFloat, PositiveFloat
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from ident_core.data.joint_selection import JointSelection
from ident_core.errors import IdentError, InputError
from ident_core.excitation.config import default_config, load_excitation_config
from ident_core.excitation.fourier import FourierTrajectory
from ident_core.excitation.jointwise import JointwiseExperiment, load_experiment
from ident_core.excitation.on_robot import (
    default_trajectory_path,
    optimize_within_limits,
    optimizer_settings,
)
from ident_core.excitation.optimize import OPTIMIZERS
from ident_core.monitoring.checks import tracking_status
from ident_core.monitoring.statistics import RunningStatistics
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_core.motion import streaming
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import Motion
from ident_core.motion.watchdog import JointSample, MotionWatchdog, recorder_gone
from ident_core.schema import per_joint
from ident_msgs.action import RunExcitation
from ident_msgs.msg import ExcitationTrajectory, RecordingInfo
from ident_msgs.srv import OptimizeExcitation, StartRecording, StopRecording
from ident_ros import lifecycle, qos
from ident_ros.controller_action import TrajectoryGoals, action_name, available, goal_msg
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.trajectories import joint_trajectory_msg, trajectory_from_msg, trajectory_to_msg
from ident_ros.worker import failure_message, in_thread, with_timeout

SERVICE_TIMEOUT = 5.0       # s to wait for the recorder's services and for joint_states
STOP_DELIVERY = 2.0         # s a shutdown waits for its stop command to reach the controller
WATCH_PERIOD = 0.05         # s between checks of the measured joint states while moving
# The watch takes the newest joint_states when it looks, not a callback per 1 kHz sample (that
# would rebuild this node's wait set a thousand times a second); the newest few, because the
# newest may be another publisher's (a gripper's broadcaster publishing right after the arm's
# in every controller cycle would otherwise hide the arm's for good).
NEWEST_SAMPLES = 8
NEWEST_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=NEWEST_SAMPLES,
                        reliability=ReliabilityPolicy.BEST_EFFORT)


class ExcitationNodeParameters(RobotDescriptionParameters, DiagnosticsConfig):
    """Parameters of the excitation node; the robot model gives the position and velocity
    limits and the joint names."""

    acceleration_limits: list[float] = Field(
        [10.0], description='Acceleration limits [rad/s² or m/s²], one for every joint or one '
        'per joint (URDF order).')
    limit_margin: float = Field(
        0.02, ge=0, lt=0.5, description='Fraction of the position range, velocity and '
        'acceleration limit kept free, in [0, 0.5).')
    command_topic: str = Field('joint_trajectory_controller/joint_trajectory',
                               description='JointTrajectory topic of the '
                                           'joint_trajectory_controller; its '
                                           'FollowJointTrajectory action is '
                                           '``follow_joint_trajectory`` beside it.')
    controller_interface: Literal['auto', 'action', 'topic'] = Field(
        'auto', description='How the motion reaches the controller: ``action`` '
        '(FollowJointTrajectory, needs control_msgs), ``topic`` (JointTrajectory messages) or '
        '``auto`` (the action when control_msgs is installed and its server answers within '
        '``controller_wait``, else the topic).')
    controller_wait: PositiveFloat = Field(2.0, description='How long a goal waits for the '
                                           'FollowJointTrajectory server [s] (``auto``: then '
                                           'the topic; ``action``: then the goal fails).')
    path_tolerance: list[float] = Field(
        [0.0], description='FollowJointTrajectory: the controller aborts the motion when a '
        'joint is further than this from its command [rad or m], one value or one per joint '
        "(URDF order); 0: the controller's default (``constraints.<joint>.trajectory``), -1: "
        'none.')
    goal_tolerance: list[float] = Field(
        [0.0], description='FollowJointTrajectory: largest distance from the final position '
        'that ends the motion successfully [rad or m], one value or one per joint (URDF '
        "order); 0: the controller's default (``constraints.<joint>.goal``), -1: none.")
    goal_lead: PositiveFloat = Field(
        0.5, description='FollowJointTrajectory: time between sending the goal and its first '
        'point [s], plus 0.1 ms per point (the controller must have it before it starts: '
        'it would otherwise jump into the motion).')
    goal_time_tolerance: float = Field(
        0.0, ge=0, description='FollowJointTrajectory: time after the end of the motion '
        'within which the robot must be within ``goal_tolerance`` [s]; 0: the '
        "controller's default (``constraints.goal_time``).")
    joint_states_topic: str = Field(
        'joint_states', description="Where the current position is read: the messages that "
        "name every joint of the motion (others, e.g. a gripper's, are skipped).")
    recorder_start_service: str = Field('recorder/start',
                                        description="The recorder's start service.")
    recorder_stop_service: str = Field('recorder/stop',
                                       description="The recorder's stop service.")
    point_period: PositiveFloat = Field(0.01,
                                        description='Time between JointTrajectory points [s].')
    horizon: PositiveFloat = Field(1.0, description='Motion covered by one JointTrajectory '
                                   'message [s].')
    send_period: PositiveFloat = Field(0.25, description='Time between JointTrajectory '
                                       'messages [s] (each replaces the rest of the previous '
                                       'one).')
    settle_time: NonNegativeFloat = Field(0.5, description='Time at rest after the motion '
                                          'before the recording stops [s].')
    joint_states_timeout: PositiveFloat = Field(
        1.0, description='A motion stops when no joint_states arrives for this long [s] (a '
        'driver that crashed, an e-stop).')
    tracking_error_limit: list[PositiveFloat] = Field(
        [0.5], description='A motion stops when a measured position is further than this from '
        'the commanded one [rad or m], one value or one per joint (URDF order).')
    tracking_error_warning_fraction: float = Field(
        0.5, gt=0, le=1, description="The ``excitation tracking`` diagnostic warns when a "
        "joint's tracking error exceeds this fraction of its ``tracking_error_limit``.")
    recordings_topic: str = Field(
        'recorder/recordings', description="The recorder's reports (its publisher's "
        'liveliness tells that it runs): a recorded motion stops when the recorder is gone.')
    optimizer_config: str = Field('', description='Excitation config of ``~/optimize`` '
                                  '(empty: the defaults of that format).')
    optimizer: Literal[OPTIMIZERS] = Field('ga+local',
                                           description='Default optimiser of ``~/optimize``.')
    optimization_budget: PositiveFloat = Field(
        120.0, description='Wall-clock budget of an optimisation [s].')
    optimized_trajectory_dir: str = Field(
        'output/excitation', description='Where optimised trajectories are written.')


class ExcitationNode(lifecycle.GracefulNode):
    """The ``excitation_node`` of the module docstring; keyword arguments (``context``,
    ``parameter_overrides``) go to ``rclpy.node.Node``. Bad parameters raise ``InputError``."""

    def __init__(self, **kwargs):
        super().__init__('excitation_node', **kwargs)
        p = declare_parameters(self, ExcitationNodeParameters)
        self.robot = robot_model(self, p)
        self.acceleration = per_joint(p.acceleration_limits, self.robot.n, 'acceleration_limits')
        self.limits = JointLimits.from_robot(self.robot, self.acceleration) \
            .with_margin(p.limit_margin)
        self.p = p
        self.path_tolerance = streaming.tolerance_values(p.path_tolerance, self.robot.n,
                                                         'path_tolerance')
        self.goal_tolerance = streaming.tolerance_values(p.goal_tolerance, self.robot.n,
                                                         'goal_tolerance')
        if p.controller_interface == 'action' and not available():
            raise InputError('controller_interface is action, but control_msgs (its '
                             'FollowJointTrajectory) is not installed')
        self.group = group = ReentrantCallbackGroup()
        self.command = self.create_publisher(JointTrajectory, p.command_topic, qos.COMMAND_QOS)
        self.controller = TrajectoryGoals(
            self, action_name(self.command.topic_name), self._on_controller_result, group) \
            if available() and p.controller_interface != 'topic' else None
        self.via_action = False             # whether the running goal uses the controller's action
        self.result_pending = False         # the controller's result of its goal is awaited
        self.stop_sent: Future | None = None
        self.description = self.create_publisher(ExcitationTrajectory, '~/trajectory',
                                                 qos.LATCHED_QOS)
        self.start_client = self.create_client(StartRecording, p.recorder_start_service,
                                               callback_group=group)
        self.stop_client = self.create_client(StopRecording, p.recorder_stop_service,
                                              callback_group=group)
        self.create_service(Trigger, '~/stop', self._on_stop)
        self.tracking_limit = per_joint(p.tracking_error_limit, self.robot.n,
                                        'tracking_error_limit')
        self.measured: JointSample | None = None
        self.samples_taken = 0
        self.watched = JointSelection(self.robot.joint_names)     # joints of the motion
        self.state_sub = None
        # joint_states are taken by a node of their own, spun only by the watch timer
        # (not the process's arguments: a launch file's __node remap would name it like this one;
        # the topic resolved by this node: its namespace and remappings)
        self.state_node = rclpy.create_node('_excitation_node_watch', context=self.context,
                                            use_global_arguments=False)
        self.joint_states_topic = self.resolve_topic_name(p.joint_states_topic)
        self.state_executor = SingleThreadedExecutor(context=self.context)
        self.state_executor.add_node(self.state_node)
        self.recorder_alive = False
        self.recorder_lost_ns: int | None = None
        self.create_subscription(
            RecordingInfo, p.recordings_topic, lambda _msg: None, qos.RECORDER_STATUS_QOS,
            event_callbacks=SubscriptionEventCallbacks(liveliness=self._on_recorder_liveliness))
        self.create_service(OptimizeExcitation, '~/optimize', self._on_optimize,
                            callback_group=group)
        self.action = ActionServer(self, RunExcitation, '~/run', self._execute,
                                   goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                   callback_group=group)
        self.motion: Motion | None = None
        self.busy = False
        self.optimizing = False
        self.refused: dict[int, str] = {}   # id(goal request) -> why it cannot run now
        self.optimized: FourierTrajectory | None = None     # the last optimised trajectory
        self.stop_reason = ''
        self.failure = ''                   # why the robot or the recorder failed the goal
        self.watchdog: MotionWatchdog | None = None
        self.watch_recorder = False
        self.watch_since = self.last_watch = 0
        self.done: Future | None = None
        self.goal = None
        self.sent_until = -np.inf
        self.described = 0                  # stages whose description was published
        self.create_timer(p.send_period, self._tick)
        self.create_timer(WATCH_PERIOD, self._watch)
        # |measured − commanded| of the running (or last) motion, of its joints (in its order)
        self.tracking: RunningStatistics | None = None
        self.tracked_joints = list(self.robot.joint_names)
        self.diagnostics = DiagnosticsPublisher(self, p.diagnostics_period,
                                                self.robot.model.name)
        self.diagnostics.add('excitation tracking', self.tracking_status)
        self.get_logger().info(f'ready: {self.robot.n} joints, commands on '
                               f'{self.command.topic_name}')

    # --- action ---------------------------------------------------------------------------
    def _on_goal(self, goal):
        """Accept every goal; one that cannot run now is aborted at once with the reason in
        its result (a rejection would tell the client nothing)."""
        if self.busy or self.optimizing:
            reason = f'an {"excitation" if self.busy else "optimisation"} is running'
            self.refused[id(goal)] = f'goal refused: {reason}'
            self.get_logger().warning(f'goal refused: {reason}')
            return GoalResponse.ACCEPT
        self.busy = True
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle):
        if goal_handle is self.goal:
            self.stop_motion('cancel requested')
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle):
        refusal = self.refused.pop(id(goal_handle.request), None)
        if refusal:
            goal_handle.abort()
            return RunExcitation.Result(success=False, message=refusal)
        try:
            return await self._run(goal_handle)
        finally:
            self.motion, self.goal, self.busy = None, None, False
            self.watchdog, self.watch_recorder = None, False
            if self.state_sub is not None:
                self.state_node.destroy_subscription(self.state_sub)
                self.state_sub = None

    async def _run(self, goal_handle):
        request, result = goal_handle.request, RunExcitation.Result()
        self.goal = goal_handle
        try:
            requested = self._requested_trajectory(request)
            streaming.check_joints(requested, self.robot.joint_names)
            names = list(requested.joint_names)
            q_now = await self._current_position(names)
            plan = streaming.excitation_plan(requested, q_now, self.limits,
                                             request.periods or None)
            self.via_action = await self._use_action()
            if request.record:
                result.bag_path = await self._start_recording(request.experiment
                                                              or requested.name)
        except (IdentError, RuntimeError) as exc:
            self.get_logger().error(f'excitation refused: {exc}')
            goal_handle.abort()
            result.success, result.message = False, str(exc)
            return result
        self.failure = ''
        self._watch_joint_states(names, request.record)
        lead = streaming.LEAD if not self.via_action else streaming.goal_lead(
            len(streaming.point_times(0.0, plan.duration, self.p.point_period, plan.duration)),
            self.p.goal_lead)
        self.motion = Motion(plan, self.get_clock().now().nanoseconds + int(lead * 1e9))
        self.sent_until = -np.inf
        self.described = 0
        via = (f'FollowJointTrajectory {self.controller.name}' if self.via_action
               else f'JointTrajectory on {self.command.topic_name}')
        self.get_logger().info(f'running {requested.name!r} via {via}: '
                               f'{streaming.plan_summary(plan, requested)}')
        self.stop_sent = None
        refused = await self._send_motion()
        stopped = refused
        if not refused:
            self.done = Future()
            self._describe_stages(0.0)
            self._tick()
            stopped = await self.done
        stopped = self.failure or stopped
        if request.record:
            ok, message = await self._stop_recording()
            if not ok:
                stopped = stopped or f'recorder: {message}'
        result.duration = 0.0 if refused else self.motion.end
        result.success = not stopped
        result.message = stopped or 'done'
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif stopped:
            goal_handle.abort()
        else:
            goal_handle.succeed()
        return result

    async def _use_action(self) -> bool:
        """Whether the goal about to run goes through the controller's FollowJointTrajectory
        (``controller_interface``); else its topic.

        Raises ``RuntimeError`` when ``action`` is asked for and the server does not answer."""
        if self.controller is None:
            return False
        if await self.controller.wait_for_server(self.p.controller_wait):
            return True
        missing = f'no FollowJointTrajectory server {self.controller.name} within ' \
                  f'{self.p.controller_wait:g} s'
        if self.p.controller_interface == 'action':
            raise RuntimeError(missing)
        self.get_logger().info(f'{missing}: sending JointTrajectory on '
                               f'{self.command.topic_name}')
        return False

    async def _send_motion(self) -> str:
        """Send the whole motion as one FollowJointTrajectory goal (the topic's messages are
        sent by ``_tick``); why the excitation fails when the controller does not take it."""
        if not self.via_action:
            return ''
        self.result_pending = True
        name = self.controller.name
        try:
            accepted = await with_timeout(self, self._send(0.0, self.motion.end),
                                          SERVICE_TIMEOUT, f'{name} did not answer the goal')
        except RuntimeError as exc:
            self.controller.abandon()
            accepted, reason = False, str(exc)
        else:
            reason = '' if accepted else streaming.controller_rejection(name)
            late = self._plan_time()
            if accepted and late > 0:
                self.get_logger().warning(
                    f'{name} accepted the goal {late:.3f} s after its first point: it may have '
                    'started into the motion (raise goal_lead)')
        if not accepted:
            self.result_pending = False
            self.failure = reason
            self.get_logger().error(f'excitation failed: {reason}')
        return reason

    def _on_controller_result(self, succeeded: bool, aborted: bool, code: int,
                              error_string: str) -> None:
        """The controller ended the latest goal (``TrajectoryGoals``)."""
        self.result_pending = False
        if not succeeded:
            self._fail(streaming.controller_failure(self.controller.name, aborted, code,
                                                    error_string), command=False)

    def _describe_stages(self, t: float) -> None:
        """Publish the ``ExcitationTrajectory`` of every stage whose transition has begun by
        plan time ``t`` (the first stage's at once), unless the motion is stopping."""
        plan = self.motion.plan
        due = streaming.stages_begun(plan, t)
        while self.described < due and self.motion.stop is None:
            k = self.described
            _begins, start, count = plan.stage_times[k]
            self.description.publish(trajectory_to_msg(
                plan.stages[k], Time(nanoseconds=self.motion.start_ns + int(start * 1e9)).to_msg(),
                count, stage=k + 1, stages=len(plan.stages)))
            self.described += 1

    def _requested_trajectory(self, request) -> FourierTrajectory | JointwiseExperiment:
        if request.trajectory_file:
            return load_experiment(request.trajectory_file)
        if request.trajectory.joint_names:
            return trajectory_from_msg(request.trajectory)
        if self.optimized is None:
            raise InputError(f'no trajectory: give trajectory_file or trajectory, or call '
                             f'{self.get_fully_qualified_name()}/optimize first')
        return self.optimized

    async def _current_position(self, joints) -> np.ndarray:
        """Latest measured positions of ``joints``, from the first message that names them all
        (subscribes to joint_states only meanwhile)."""
        got, selection = Future(), JointSelection(joints)

        def on_state(msg: JointState):
            columns = selection.columns(msg.name)
            if columns is not None and not got.done():
                got.set_result(np.asarray(msg.position, dtype=float)[columns])
        sub = self.create_subscription(JointState, self.joint_states_topic, on_state, 10)
        try:
            return await with_timeout(self, got, SERVICE_TIMEOUT,
                                      f'no message on {self.joint_states_topic}')
        except RuntimeError:
            if selection.skipped:            # messages came, none named every joint
                raise InputError(selection.problem(self.joint_states_topic)) from None
            raise
        finally:
            self.destroy_subscription(sub)

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
        return await with_timeout(self, client.call_async(request), SERVICE_TIMEOUT,
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
            result, path = await in_thread(self, self._optimize, request,
                                           name='excitation-optimizer', callback_group=self.group)
        except Exception as exc:
            response.message = failure_message(exc)
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
        config = (load_excitation_config(p.optimizer_config) if p.optimizer_config else
                  default_config('default excitation settings (optimizer_config empty)'))
        config = optimizer_settings(config, self.acceleration, p.limit_margin,
                                    request.objective, request.harmonics, request.period)
        optimizer = request.optimizer or p.optimizer
        path = (Path(request.output_file) if request.output_file else default_trajectory_path(
            p.optimized_trajectory_dir, self.robot.urdf or Path(f'{self.robot.model.name}.urdf'),
            optimizer, config.objective,
            request.seed))
        return optimize_within_limits(self.robot, config, self.limits, optimizer, request.seed,
                                      request.budget or p.optimization_budget, path)

    # --- watching the robot and the recorder -----------------------------------------------
    def _watch_joint_states(self, names: list[str], recorded: bool) -> None:
        """Follow the measured positions of ``names`` for the motion about to start."""
        order = [self.robot.joint_names.index(j) for j in names]
        self.watchdog = MotionWatchdog(names, self.p.joint_states_timeout,
                                       self.tracking_limit[order], self.joint_states_topic,
                                       self.robot.continuous[order])
        self.watch_recorder = recorded
        self.tracking, self.tracked_joints = RunningStatistics(len(names)), list(names)
        self.measured = None
        self.watch_since = self.last_watch = self.get_clock().now().nanoseconds
        self.watched = JointSelection(names)
        self.state_sub = self.state_node.create_subscription(
            JointState, self.joint_states_topic, self._on_joint_state, NEWEST_QOS)

    def _on_joint_state(self, msg: JointState) -> None:
        """The newest sample, if it names every joint of the motion (another publisher's, e.g.
        a gripper's, is no sign that the arm's stream is alive)."""
        self.samples_taken += 1
        if self.watched.columns(msg.name) is None:
            return
        stamp = Time.from_msg(msg.header.stamp).nanoseconds
        self.measured = JointSample(self.get_clock().now().nanoseconds, stamp,
                                    dict(zip(msg.name, msg.position)))

    def _watch(self) -> None:
        """Stop a running motion whose joint states stop or leave the command."""
        motion, watchdog = self.motion, self.watchdog
        if motion is None or watchdog is None or self.failure:
            return
        now = self.get_clock().now().nanoseconds
        previous, self.last_watch = self.last_watch, now
        self._watch_recorder(previous)
        if watchdog.starved((now - previous) * 1e-9):  # this node did not run for a while:
            return                                      # the messages may be queued
        for _ in range(NEWEST_SAMPLES):                      # the queued samples, oldest first
            taken = self.samples_taken
            self.state_executor.spin_once(timeout_sec=0.0)
            if self.samples_taken == taken:
                break
        reason, error = watchdog.check(motion, now, self.watch_since, self.measured)
        if error is not None:
            self.tracking.add(error)
        if reason:
            self._fail(reason)

    def tracking_status(self) -> Status:
        """The ``excitation tracking`` diagnostic: the tracking error of the running (or last)
        motion against ``tracking_error_warning_fraction`` of its limit; ERROR when the
        watchdog (or the recorder's loss) stopped it."""
        order = [self.robot.joint_names.index(j) for j in self.tracked_joints]
        return tracking_status(
            joint_names=self.tracked_joints, prismatic=self.robot.prismatic[order],
            errors=self.tracking, limit=self.tracking_limit[order],
            warning_fraction=self.p.tracking_error_warning_fraction,
            running=self.motion is not None, failure=self.failure)

    def _fail(self, reason: str, command: bool = True) -> None:
        """The goal fails: stop the motion (if it still runs; ``command`` False when the
        controller already stopped the robot) and report why."""
        if self.motion is None or self.failure:
            return
        self.failure = reason
        self.get_logger().error(f'excitation failed: {reason}')
        self.stop_motion(reason, command)

    def _on_recorder_liveliness(self, event) -> None:
        alive = event.alive_count > 0
        if alive or self.recorder_alive:
            self.recorder_lost_ns = None if alive else self.get_clock().now().nanoseconds
        self.recorder_alive = alive

    def _watch_recorder(self, previous: int) -> None:
        """Fail a recorded goal when the recorder's liveliness stayed lost (a starved process
        may miss one lease and come back) from its loss until ``previous``, the watch's last
        look: rclpy runs a wait set's events before its timers, so a return of the liveliness
        that DDS signalled before then has been handled. Also judged when this node is
        starved (the lease is kept by DDS, not by this node's callbacks)."""
        if self.watch_recorder and recorder_gone(self.recorder_lost_ns, previous):
            self._fail(f'the recorder is gone ({self.p.recordings_topic} lost its '
                       'liveliness): nothing would be recorded')

    # --- streaming ------------------------------------------------------------------------
    def _plan_time(self) -> float:
        return (self.get_clock().now().nanoseconds - self.motion.start_ns) * 1e-9

    def _tick(self) -> None:
        if self.motion is None or self.done is None or self.done.done():
            return
        t = self._plan_time()
        end = self.motion.end
        stamp = None if self.measured is None else self.measured.stamp_ns
        measured = streaming.measured_until(self.motion, stamp)
        if streaming.motion_over(t, end, self.p.settle_time, measured, bool(self.failure),
                                 self.result_pending):
            if self.result_pending and not self.failure:
                self.failure = (f'the controller ({self.controller.name}) sent no result '
                                f'within {streaming.MAX_LAG:g} s of the end of the motion')
            self.done.set_result(self.stop_reason if self.motion.stop is not None else '')
            return
        if self.sent_until < end:
            self._send(t + streaming.LEAD / 2, t + self.p.horizon)
        self._describe_stages(t)
        if self.goal is not None and self.goal.is_active:
            where = streaming.feedback(self.motion, t)
            self.goal.publish_feedback(RunExcitation.Feedback(**where._asdict()))

    def _send(self, t_from: float, t_to: float) -> Future | None:
        """Send the motion between plan times t_from and t_to (point grid aligned to 0): a
        JointTrajectory message, or a FollowJointTrajectory goal replacing the one running
        (then the future of the controller's answer, True when accepted)."""
        points = streaming.motion_points(self.motion, t_from, t_to, self.p.point_period)
        if points is None:
            return None
        times, *states = points
        names = self.motion.plan.trajectory.joint_names
        start_ns = self.motion.start_ns + int(round(times[0] * 1e9))
        self.sent_until = times[-1]
        if not self.via_action:
            self.command.publish(joint_trajectory_msg(names, start_ns, times - times[0], *states))
            return None
        order = [self.robot.joint_names.index(j) for j in names]
        return self.controller.send(goal_msg(
            names, start_ns, times - times[0], *states, self.path_tolerance[order],
            self.goal_tolerance[order], self.p.goal_time_tolerance))

    def stop_motion(self, reason: str, command: bool = True) -> bool:
        """Bring a running motion to rest now (``command`` False: the controller already
        stopped it; only the plan ends); False when nothing runs."""
        if self.motion is None or self.motion.stop is not None:
            return self.motion is not None
        t = self._plan_time() + streaming.LEAD
        self.motion.stop_at_time(t)
        self.stop_reason = reason
        self.get_logger().warning(f'stopping: {reason}')
        if not command:
            self.sent_until = self.motion.end
            return True
        self.sent_until = -np.inf
        self.stop_sent = self._send(self._plan_time() + streaming.LEAD / 2, self.motion.end + 1.0)
        if self.stop_sent is not None:
            self.stop_sent.add_done_callback(self._on_stop_answer)
        return True

    def _on_stop_answer(self, future: Future) -> None:
        if not future.result():     # TrajectoryGoals cancelled the running goal
            self.result_pending = False
            self.get_logger().error(f'the controller ({self.controller.name}) rejected the stop; '
                                    'its goal was cancelled (it holds the robot where it is)')

    def _on_stop(self, _request, response):
        response.success = self.stop_motion('stop service called')
        response.message = 'stopping' if response.success else 'no motion running'
        return response

    def destroy_node(self) -> None:
        self.state_executor.shutdown(timeout_sec=0.0)
        self.state_node.destroy_node()
        super().destroy_node()

    def request_shutdown(self) -> None:
        if not self.stop_motion('shutdown'):
            self.finished = True
            return
        if self.stop_sent is None:
            self.command.wait_for_all_acked(Duration(seconds=STOP_DELIVERY))
            self.finished = True
            return
        # the stop goal must reach the controller: finish once it answered
        self.stop_sent.add_done_callback(lambda _future: setattr(self, 'finished', True))
        self.create_timer(STOP_DELIVERY, lambda: setattr(self, 'finished', True))


def main(args=None):
    sys.exit(lifecycle.run(ExcitationNode, args=args))
