"""What ros2_controllers' joint_trajectory_controller does with the trajectories it receives, for
the simulated hardware (docs/methods.md §7): a new trajectory (``JointTrajectory`` message or
``FollowJointTrajectory`` goal) replaces the rest of the current one from the moment it arrives,
the trajectory is interpolated between its points (linear, cubic or quintic depending on which
derivatives the points carry) and, after the last point, the controller holds that position. A
goal carries tolerances (``Tolerances``, ``goal_tolerances``): the controller aborts it when the
robot leaves the path tolerance while moving, and ends it once the robot is within the goal
tolerance after the last point (``check_tolerances``), with the result codes and error strings of
ros2_controllers' Jazzy release (``joint_trajectory_controller.cpp``, ``tolerances.hpp``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from .segments import evaluate_polynomial, polynomial_coefficients

# FollowJointTrajectory result codes (control_msgs/action/FollowJointTrajectory.action)
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
RESULT_CODES = {SUCCESSFUL: 'SUCCESSFUL', INVALID_GOAL: 'INVALID_GOAL',
                INVALID_JOINTS: 'INVALID_JOINTS', OLD_HEADER_TIMESTAMP: 'OLD_HEADER_TIMESTAMP',
                PATH_TOLERANCE_VIOLATED: 'PATH_TOLERANCE_VIOLATED',
                GOAL_TOLERANCE_VIOLATED: 'GOAL_TOLERANCE_VIOLATED'}
# The joint_trajectory_controller's error strings
GOAL_REACHED = 'Goal successfully reached!'
PATH_VIOLATION = 'Aborted due to path tolerance violation'
PREEMPTED = 'Current goal preempted by new incoming action.'
#: rad/s or m/s, the controller's default ``constraints.stopped_velocity_tolerance``: the goal
#: velocity tolerance of every joint
STOPPED_VELOCITY_TOLERANCE = 0.01
ERASE = -1.0                # a goal's tolerance that removes the controller's default
VARIABLES = ('position', 'velocity', 'acceleration')


class TrajectoryBuffer:
    """The desired joint trajectory of a joint_trajectory_controller.

    Parameters
    ----------
    q_hold : (n,) array_like
        Position held until the first trajectory arrives [rad or m].
    """

    def __init__(self, q_hold):
        self.hold(-np.inf, q_hold)

    def replace(self, now: float, start: float, times, q, qd=None, qdd=None) -> bool:
        """Take a new trajectory, as the controller does when a message arrives.

        Parameters
        ----------
        now : float
            Current time [s].
        start : float
            Absolute time of ``time_from_start = 0`` (the message's header stamp; pass ``now``
            for a zero stamp) [s].
        times : (K,) array_like
            time_from_start of the points, strictly increasing [s].
        q : (K, n) array_like
            Positions.
        qd, qdd : (K, n) array_like, optional
            Velocities and accelerations, None when the points carry none.

        Returns
        -------
        bool
            False (trajectory ignored) when every point lies in the past, else True.

        Raises
        ------
        InputError
            For inconsistent shapes, or times that do not increase.
        """
        times = start + np.asarray(times, dtype=float)
        q = np.asarray(q, dtype=float)
        n = self._end.shape[0]
        if q.ndim != 2 or q.shape != (len(times), n) or any(
                x is not None and np.shape(x) != q.shape for x in (qd, qdd)):
            raise InputError(f'trajectory: points must be ({len(times)}, {n}) arrays')
        if np.any(np.diff(times) <= 0):
            raise InputError('trajectory: time_from_start must increase strictly')
        future = times > now
        if not np.any(future):
            return False
        current = self.sample(now)
        qd = np.zeros_like(q) if qd is None and qdd is not None else qd
        knots = np.concatenate([[now], times[future]])
        pos = np.vstack([current[0], q[future]])
        vel = None if qd is None else np.vstack([current[1], np.asarray(qd)[future]])
        acc = None if qdd is None else np.vstack([current[2], np.asarray(qdd)[future]])
        dt = np.diff(knots)[:, None]
        self._coefficients = polynomial_coefficients(
            pos[:-1], None if vel is None else vel[:-1], None if acc is None else acc[:-1],
            pos[1:], None if vel is None else vel[1:], None if acc is None else acc[1:], dt)
        self._times = knots[:-1]
        self._last_time = knots[-1]
        self._end = pos[-1].copy()
        return True

    @property
    def end_time(self) -> float:
        """Time of the last point [s] (the desired state is at rest after it); -inf before any
        trajectory."""
        return self._last_time

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The desired state at a time.

        Parameters
        ----------
        t : float
            Time [s].

        Returns
        -------
        q, qd, qdd : (n,) ndarray
            The last point, at rest, once the trajectory is over.
        """
        k = int(np.searchsorted(self._times, t, side='right')) - 1
        if k < 0 or t >= self._last_time:
            zero = np.zeros_like(self._end)
            return self._end.copy(), zero, zero.copy()
        q, qd, qdd = evaluate_polynomial(self._coefficients[:, k], np.array([t - self._times[k]]))
        return q[0], qd[0], qdd[0]

    def hold(self, now: float, q) -> None:
        """Hold a position from now on, at rest (the controller's ``set_hold_position`` after
        an aborted or cancelled goal).

        Parameters
        ----------
        now : float
            Current time [s].
        q : (n,) array_like
            Position to hold [rad or m].
        """
        q = np.asarray(q, dtype=float)
        self._times = np.array([now])
        self._coefficients = np.zeros((6, 1, len(q)))
        self._coefficients[0, 0] = q
        self._end = q.copy()
        self._last_time = now


@dataclass(frozen=True)
class Tolerances:
    """The tolerances a joint_trajectory_controller checks a goal against (its
    ``SegmentTolerances``); 0 means not checked.

    Parameters
    ----------
    path : (3, n) ndarray
        Largest position, velocity and acceleration error (rows) of each joint while the
        trajectory runs [rad or m, /s, /s²].
    goal : (3, n) ndarray
        The same after the last point: the goal succeeds once every error is within them.
    goal_time : float
        How long after the last point the robot may take to get within ``goal`` [s]; 0: for
        ever.
    """

    path: np.ndarray
    goal: np.ndarray
    goal_time: float

    @classmethod
    def defaults(cls, n: int, stopped_velocity: float = STOPPED_VELOCITY_TOLERANCE
                 ) -> Tolerances:
        """The tolerances of a controller with the default ``constraints``: none but the goal
        velocity.

        Parameters
        ----------
        n : int
            Number of joints.
        stopped_velocity : float
            Goal velocity tolerance of every joint [rad/s or m/s].

        Returns
        -------
        Tolerances
        """
        goal = np.zeros((3, n))
        goal[1] = stopped_velocity
        return cls(np.zeros((3, n)), goal, 0.0)


def goal_tolerances(defaults: Tolerances, joint_names: list[str], path: dict, goal: dict,
                    goal_time: float) -> tuple[Tolerances, str]:
    """The tolerances of a goal: its own values over the controller's defaults.

    A positive value replaces the default, 0 keeps it, ``ERASE`` (−1) removes it. A joint the
    controller does not have, or another negative value, makes the controller ignore all of
    the goal's tolerances and keep its defaults (as ros2_controllers does, with an error in its
    log).

    Parameters
    ----------
    defaults : Tolerances
        The controller's, in the order of ``joint_names``.
    joint_names : list of str
        The controller's joints.
    path, goal : dict
        Joint name → (position, velocity, acceleration) tolerance of the goal's
        ``path_tolerance`` and ``goal_tolerance``.
    goal_time : float
        The goal's ``goal_time_tolerance`` [s].

    Returns
    -------
    tolerances : Tolerances
        What the controller checks.
    problem : str
        Why the goal's tolerances were ignored; empty when they were not.
    """
    def resolved(default: float, value: float, what: str) -> float:
        if value > 0:
            return value
        if abs(value - ERASE) < 1e-7:
            return 0.0
        if value < 0:
            raise InputError(f'{what}: illegal tolerance {value:g} (> 0, 0 or -1)')
        return default

    try:
        time = resolved(defaults.goal_time, goal_time, 'goal_time_tolerance')
        tables = []
        for name, given, default in (('path_tolerance', path, defaults.path),
                                     ('goal_tolerance', goal, defaults.goal)):
            table = default.copy()
            for joint, values in given.items():
                if joint not in joint_names:
                    raise InputError(f'{name}: the controller has no joint {joint!r}')
                j = joint_names.index(joint)
                for i, variable in enumerate(VARIABLES):
                    table[i, j] = resolved(default[i, j], values[i],
                                           f'{name} of {joint} ({variable})')
            tables.append(table)
    except InputError as exc:
        return defaults, f'{exc}; using the default tolerances'
    return Tolerances(tables[0], tables[1], time), ''


class Verdict(NamedTuple):
    """How a running goal stands after a control period.

    Parameters
    ----------
    code : int or None
        ``SUCCESSFUL``, ``PATH_TOLERANCE_VIOLATED`` or ``GOAL_TOLERANCE_VIOLATED`` when the goal
        ends now; None while it runs on.
    error_string : str
        The controller's ``error_string`` of that result.
    detail : str
        Which joints left which tolerance, by how much (what the controller logs).
    """

    code: int | None
    error_string: str
    detail: str


def _outside(error: np.ndarray, tolerance: np.ndarray, joint_names: list[str]) -> list[str]:
    over = (tolerance > 0) & (np.abs(error) > tolerance)
    return [f'{joint_names[j]} {VARIABLES[i]} error {error[i, j]:.4g} (tolerance '
            f'{tolerance[i, j]:g})' for j in range(over.shape[1]) for i in range(3) if over[i, j]]


def check_tolerances(tolerances: Tolerances, error, joint_names: list[str], since_end: float,
                     first: bool = False) -> Verdict:
    """One control period's check of a running goal, as the joint_trajectory_controller does.

    While the trajectory runs (and on its first period), a joint outside its path tolerance
    aborts the goal with ``PATH_TOLERANCE_VIOLATED``. After the last point, the goal succeeds as
    soon as every joint is within its goal tolerance; when it is not, and ``goal_time`` is not
    0, it is aborted ``goal_time`` after the last point with ``GOAL_TOLERANCE_VIOLATED``.

    Parameters
    ----------
    tolerances : Tolerances
        The goal's (``goal_tolerances``).
    error : (3, n) array_like
        Measured minus desired position, velocity and acceleration (zeros where not measured).
    joint_names : list of str
        (n,) for the messages.
    since_end : float
        Time since the last point of the trajectory [s] (negative before it).
    first : bool
        The goal's first period (the path tolerance is checked even if it is past the end).

    Returns
    -------
    Verdict
    """
    error = np.asarray(error, dtype=float)
    if since_end < 0 or first:
        outside = _outside(error, tolerances.path, joint_names)
        if outside:
            return Verdict(PATH_TOLERANCE_VIOLATED, PATH_VIOLATION, '; '.join(outside))
        if since_end < 0:
            return Verdict(None, '', '')
    outside = _outside(error, tolerances.goal, joint_names)
    if not outside:
        return Verdict(SUCCESSFUL, GOAL_REACHED, '')
    if tolerances.goal_time != 0 and since_end > tolerances.goal_time:
        return Verdict(GOAL_TOLERANCE_VIOLATED, 'Aborted due to goal_time_tolerance exceeding '
                       f'by {since_end:.6f} seconds', '; '.join(outside))
    return Verdict(None, '', '')
