"""What ros2_controllers' joint_trajectory_controller does with the ``JointTrajectory`` messages
it receives, for the simulated hardware (docs/methods.md §7): a new message replaces the rest of
the current trajectory from the moment it arrives, the trajectory is interpolated between its
points (linear, cubic or quintic depending on which derivatives the points carry) and, after the
last point, the controller holds that position.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .segments import evaluate_polynomial, polynomial_coefficients


class TrajectoryBuffer:
    """The desired joint trajectory of a joint_trajectory_controller.

    Parameters
    ----------
    q_hold : (n,) array_like
        Position held until the first trajectory arrives [rad or m].
    """

    def __init__(self, q_hold):
        q_hold = np.asarray(q_hold, dtype=float)
        self._times = np.zeros(1)
        self._coefficients = np.zeros((6, 1, len(q_hold)))
        self._coefficients[0, 0] = q_hold
        self._end = q_hold.copy()
        self._last_time = -np.inf

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
