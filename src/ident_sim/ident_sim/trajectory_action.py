"""The simulated joint_trajectory_controller's ``control_msgs/action/FollowJointTrajectory``
server (where control_msgs is installed), with ros2_controllers' semantics
(``ident_core.motion.controller``, docs/ros_interfaces.md#followjointtrajectory).

A goal is rejected when its trajectory does not name exactly the robot's joints, its points are
malformed or they all lie in the past; an accepted goal replaces the trajectory running (a goal
running is aborted, ``INVALID_GOAL``, "Current goal preempted by new incoming action."), and its
tolerances (over the controller's defaults: none but the stopped velocity) are checked every
control period: outside the path tolerance while moving, the goal is aborted
(``PATH_TOLERANCE_VIOLATED``) and the robot held where it is; after the last point it succeeds
once within the goal tolerance, or is aborted ``goal_time_tolerance`` after it. A cancelled goal
holds the robot where it is. Feedback (desired, actual, error) goes out every
``FEEDBACK_PERIOD`` of simulated time (the controller's ``action_monitor_rate``, 20 Hz).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectoryPoint

from ident_core.errors import InputError
from ident_core.model.robot import RobotModel, position_difference
from ident_core.motion.controller import (
    INVALID_GOAL,
    PREEMPTED,
    RESULT_CODES,
    SUCCESSFUL,
    Tolerances,
    check_tolerances,
    goal_tolerances,
)
from ident_ros.controller_action import FollowJointTrajectory, goal_tolerances_of
from ident_ros.trajectories import trajectory_points

FEEDBACK_PERIOD = 0.05      # s of simulated time


class _Running(NamedTuple):
    handle: object
    tolerances: Tolerances
    end: float              # simulated time of the last point [s]
    done: Future            # (status, error_code, error_string)


class TrajectoryActionServer:
    """``FollowJointTrajectory`` of the simulated controller; ``step`` checks the running goal
    every control period.

    Parameters
    ----------
    node : rclpy.node.Node
        The simulator's node.
    name : str
        The action's name.
    robot : RobotModel
        The simulated robot: the controller's joints.
    now : callable
        ``now()``: the simulated time [s].
    start_time : callable
        ``start_time(msg)``: the simulated time [s] of ``time_from_start = 0`` of a
        ``JointTrajectory`` (its stamp; now for a zero stamp).
    replace : callable
        ``replace(msg) -> float or None``: run a ``JointTrajectory`` from now on; the simulated
        time of its last point, None when every point is in the past.
    hold : callable
        ``hold()``: hold the robot where it is measured now.
    """

    def __init__(self, node: Node, name: str, robot: RobotModel, now: Callable[[], float],
                 start_time: Callable[[object], float],
                 replace: Callable[[object], float | None], hold: Callable[[], None]):
        self.node, self.robot = node, robot
        self.now, self.start_time, self.replace, self.hold = now, start_time, replace, hold
        self.defaults = Tolerances.defaults(robot.n)
        self.running: _Running | None = None
        self.done: dict[int, Future] = {}       # id(goal handle) -> its end
        self.first = False
        self.next_feedback = 0.0
        self.server = ActionServer(node, FollowJointTrajectory, name, self._execute,
                                   goal_callback=self._on_goal,
                                   handle_accepted_callback=self._on_accepted,
                                   cancel_callback=self._on_cancel)

    def _on_goal(self, goal) -> GoalResponse:
        try:
            times = trajectory_points(goal.trajectory, self.robot)[0]
            if np.any(np.diff(times) <= 0):
                raise InputError('time_from_start must increase strictly')
            if self.start_time(goal.trajectory) + times[-1] < self.now():
                raise InputError('the trajectory ends in the past')
        except InputError as exc:
            self.node.get_logger().error(f'FollowJointTrajectory goal rejected: {exc}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, handle) -> CancelResponse:
        running = self.running
        if running is not None and running.handle is handle:
            self._end('canceled', SUCCESSFUL, '')
            self.hold()
        return CancelResponse.ACCEPT

    def _on_accepted(self, handle) -> None:
        """The controller's ``goal_accepted_callback``: the goal's trajectory replaces the
        running one at once (the goal running is pre-empted), then the goal executes."""
        if self.running is not None:
            self._end('aborted', INVALID_GOAL, PREEMPTED)
        goal, done = handle.request, Future()
        end = self.replace(goal.trajectory)
        if end is None:             # its points passed while it waited
            done.set_result(('aborted', INVALID_GOAL, 'trajectory ends in the past'))
        else:
            tolerances, problem = goal_tolerances(self.defaults, self.robot.joint_names,
                                                  *goal_tolerances_of(goal))
            if problem:
                self.node.get_logger().error(f'FollowJointTrajectory goal: {problem}')
            self.running = _Running(handle, tolerances, end, done)
            self.first, self.next_feedback = True, 0.0
            self.node.get_logger().info(f'FollowJointTrajectory goal accepted: '
                                        f'{len(goal.trajectory.points)} points until t = '
                                        f'{end:.3f} s')
        self.done[id(handle)] = done
        handle.execute()

    async def _execute(self, handle):
        status, code, text = await self.done.pop(id(handle))
        getattr(handle, {'aborted': 'abort', 'canceled': 'canceled',
                         'succeeded': 'succeed'}[status])()
        return FollowJointTrajectory.Result(error_code=code, error_string=text)

    def _end(self, status: str, code: int, text: str, detail: str = '') -> None:
        running, self.running = self.running, None
        message = f'FollowJointTrajectory goal {status}: {RESULT_CODES[code]} {text}' + (
            f' ({detail})' if detail else '')
        if status == 'succeeded':
            self.node.get_logger().info(message)
        else:
            self.node.get_logger().warning(message)
        running.done.set_result((status, code, text))

    def step(self, now: float, stamp, desired, position, velocity) -> None:
        """Check the running goal after a control period (and publish its feedback when due).

        Parameters
        ----------
        now : float
            Simulated time of the period [s].
        stamp : builtin_interfaces.msg.Time
            Its stamp.
        desired : tuple of (n,) ndarray
            The desired position, velocity and acceleration.
        position, velocity : (n,) ndarray
            Measured.
        """
        running = self.running
        if running is None:
            return
        error = np.zeros((3, self.robot.n))
        error[0] = position_difference(self.robot.model, position, desired[0])
        error[1] = velocity - desired[1]
        verdict = check_tolerances(running.tolerances, error, self.robot.joint_names,
                                   now - running.end, self.first)
        self.first = False
        if now >= self.next_feedback or verdict.code is not None:
            self.next_feedback = now + FEEDBACK_PERIOD
            feedback = FollowJointTrajectory.Feedback(
                joint_names=list(self.robot.joint_names),
                desired=JointTrajectoryPoint(positions=desired[0].tolist(),
                                             velocities=desired[1].tolist()),
                actual=JointTrajectoryPoint(positions=position.tolist(),
                                            velocities=velocity.tolist()),
                error=JointTrajectoryPoint(positions=error[0].tolist(),
                                           velocities=error[1].tolist()))
            feedback.header.stamp = stamp
            running.handle.publish_feedback(feedback)
        if verdict.code is None:
            return
        if verdict.code == SUCCESSFUL:
            self._end('succeeded', verdict.code, verdict.error_string)
        else:
            self._end('aborted', verdict.code, verdict.error_string, verdict.detail)
            self.hold()
