"""ros2_control's ``control_msgs/action/FollowJointTrajectory``, where control_msgs is installed
(it is optional: without it the trajectories go on the controller's topic): the action's name
beside the controller's topic, a goal of a stretch of motion with its tolerances, the tolerances
of a received goal (for the simulated controller), and the excitation node's client, which keeps
one goal at a time on the controller (each replacing the one before) and reports how the
current one ended.
"""
from __future__ import annotations

from collections.abc import Callable

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from rclpy.callback_groups import CallbackGroup
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.task import Future

from ident_ros.trajectories import joint_trajectory_msg

try:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
except ImportError:         # optional: the nodes then use the topic only
    FollowJointTrajectory = JointTolerance = None

POLL_PERIOD = 0.05          # s between looks for the action server


def available() -> bool:
    """Whether control_msgs is installed (its ``FollowJointTrajectory`` importable).

    Returns
    -------
    bool
    """
    return FollowJointTrajectory is not None


def action_name(topic: str) -> str:
    """The ``FollowJointTrajectory`` action of the controller whose ``JointTrajectory`` topic is
    given: ``follow_joint_trajectory`` in the same namespace, as joint_trajectory_controller
    names them.

    Parameters
    ----------
    topic : str
        E.g. ``/joint_trajectory_controller/joint_trajectory``.

    Returns
    -------
    str
        E.g. ``/joint_trajectory_controller/follow_joint_trajectory``.
    """
    namespace, _, _name = topic.rpartition('/')
    return f'{namespace}/follow_joint_trajectory' if namespace or topic.startswith('/') \
        else 'follow_joint_trajectory'


def goal_msg(joint_names, start_ns: int, times, q, qd, qdd, path_tolerance, goal_tolerance,
             goal_time_tolerance: float):
    """The ``FollowJointTrajectory`` goal of a stretch of motion.

    Parameters
    ----------
    joint_names : sequence of str
        (n,) the joints, in the order of the columns.
    start_ns : int
        Clock time of ``time_from_start = 0`` [ns]: the trajectory's header stamp.
    times : (K,) array_like
        ``time_from_start`` of the points [s], from 0.
    q, qd, qdd : (K, n) ndarray
        Positions [rad or m], velocities and accelerations.
    path_tolerance, goal_tolerance : (n,) array_like
        Position tolerances [rad or m]: > 0 the tolerance, 0 the controller's default, −1
        none.
    goal_time_tolerance : float
        [s]; 0: the controller's default.

    Returns
    -------
    control_msgs.action.FollowJointTrajectory.Goal
    """
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = joint_trajectory_msg(joint_names, start_ns, times, q, qd, qdd)
    goal.path_tolerance = [JointTolerance(name=j, position=float(v))
                           for j, v in zip(joint_names, path_tolerance)]
    goal.goal_tolerance = [JointTolerance(name=j, position=float(v))
                           for j, v in zip(joint_names, goal_tolerance)]
    goal.goal_time_tolerance = Duration(
        nanoseconds=int(round(goal_time_tolerance * 1e9))).to_msg()
    return goal


def goal_tolerances_of(goal) -> tuple[dict, dict, float]:
    """The tolerances a ``FollowJointTrajectory`` goal asks for.

    Parameters
    ----------
    goal : control_msgs.action.FollowJointTrajectory.Goal

    Returns
    -------
    path, goal : dict
        Joint name → (position, velocity, acceleration) of ``path_tolerance`` and
        ``goal_tolerance``.
    goal_time : float
        ``goal_time_tolerance`` [s].
    """
    def table(tolerances):
        return {t.name: (t.position, t.velocity, t.acceleration) for t in tolerances}
    time = goal.goal_time_tolerance
    return (table(goal.path_tolerance), table(goal.goal_tolerance),
            time.sec + 1e-9 * time.nanosec)


class TrajectoryGoals:
    """The client of a controller's ``FollowJointTrajectory``: one goal at a time.

    Each goal sent replaces the one before on the controller (which then aborts that one,
    ``INVALID_GOAL``, or cancels it before Jazzy); only how the latest goal ends is reported. A
    goal the controller rejects while an earlier one runs cancels that one (the controller then
    holds the robot where it is): the rejected trajectory was meant to replace it.

    Parameters
    ----------
    node : rclpy.node.Node
        The node of the client.
    name : str
        The action, e.g. ``/joint_trajectory_controller/follow_joint_trajectory``.
    on_result : callable
        ``on_result(succeeded, aborted, error_code, error_string)`` when the latest goal ends
        (``aborted`` False and ``succeeded`` False: cancelled).
    callback_group : rclpy.callback_groups.CallbackGroup, optional
        Of the client and its timers.
    """

    def __init__(self, node: Node, name: str, on_result: Callable[[bool, bool, int, str], None],
                 callback_group: CallbackGroup | None = None):
        self.node, self.name, self.on_result = node, name, on_result
        self.group = callback_group
        self.client = ActionClient(node, FollowJointTrajectory, name,
                                   callback_group=callback_group)
        self.serial = 0
        self.handle = None          # the latest accepted goal
        self.abandoned = 0          # goals up to this serial are cancelled when they are accepted

    async def wait_for_server(self, timeout: float) -> bool:
        """Wait (without blocking the executor) until the action server is seen.

        Parameters
        ----------
        timeout : float
            [s].

        Returns
        -------
        bool
            Whether it was seen within ``timeout``.
        """
        if self.client.server_is_ready():
            return True
        seen = Future()
        deadline = self.node.get_clock().now() + Duration(seconds=timeout)

        def look():
            if not seen.done() and (self.client.server_is_ready()
                                    or self.node.get_clock().now() > deadline):
                seen.set_result(self.client.server_is_ready())
        timer = self.node.create_timer(POLL_PERIOD, look, callback_group=self.group)
        try:
            return await seen
        finally:
            self.node.destroy_timer(timer)

    def send(self, goal) -> Future:
        """Send a goal that replaces the current one.

        Parameters
        ----------
        goal : control_msgs.action.FollowJointTrajectory.Goal

        Returns
        -------
        rclpy.task.Future
            Done when the controller answered: True accepted, False rejected.
        """
        self.serial += 1
        serial, previous = self.serial, self.handle
        answered = Future()

        def answer(accepted: bool) -> None:
            if not answered.done():         # not timed out (``with_timeout``)
                answered.set_result(accepted)

        def on_response(future):
            handle = future.result()
            if not handle.accepted:
                if previous is not None and serial == self.serial:
                    previous.cancel_goal_async()
                    self.handle = None
                answer(False)
                return
            if serial <= self.abandoned:
                handle.cancel_goal_async()
                answer(False)
                return
            if serial == self.serial:
                self.handle = handle
            handle.get_result_async().add_done_callback(
                lambda result: self._on_result(serial, result))
            answer(True)
        self.client.send_goal_async(goal).add_done_callback(on_response)
        return answered

    def abandon(self) -> None:
        """Give up the goals sent so far whose answer has not come: cancel each one the
        controller still accepts (after a timeout, the excitation has failed)."""
        self.abandoned = self.serial

    def _on_result(self, serial: int, future) -> None:
        if serial != self.serial:
            return                  # replaced by a later goal: ended by that, not a failure
        self.handle = None
        response = future.result()
        self.on_result(response.status == GoalStatus.STATUS_SUCCEEDED,
                       response.status == GoalStatus.STATUS_ABORTED,
                       response.result.error_code, response.result.error_string)
