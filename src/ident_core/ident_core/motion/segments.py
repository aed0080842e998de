"""Polynomial segments between joint states: the quintic approach to an excitation and the stop
at rest (docs/methods.md §7), and the interpolation rules of a joint_trajectory_controller.

Quintic segments keep position, velocity and acceleration continuous; the shortest duration that
respects the joint limits is found on a 1 ms grid.
"""
from __future__ import annotations

import numpy as np

from ..errors import ExcitationError
from .limits import JointLimits

CHECK_STEP = 1e-3          # s, sampling of the limit checks
MIN_SEGMENT = 0.5          # s, shortest approach/stop segment
MAX_SEGMENT = 120.0        # s


class Segment:
    """Per-joint polynomial from one state to another.

    Parameters
    ----------
    start, end : (q, qd, qdd)
        States at both ends, (n,) each [rad, rad/s, rad/s²]; a None derivative lowers the
        degree (see ``polynomial_coefficients``).
    duration : float
        [s].

    Attributes
    ----------
    duration : float
        [s].
    coefficients : (6, n) ndarray
        ``q(s) = Σ_k c_k s^k``.
    """

    def __init__(self, start: tuple, end: tuple, duration: float):
        self.duration = float(duration)
        self.coefficients = polynomial_coefficients(*start, *end, self.duration)

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The segment at given times.

        Parameters
        ----------
        t : float or (M,) array_like
            Times from the segment start [s], clamped to [0, duration].

        Returns
        -------
        q, qd, qdd : (M, n) ndarray
        """
        s = np.clip(np.atleast_1d(np.asarray(t, dtype=float)), 0.0, self.duration)
        return evaluate_polynomial(self.coefficients, s)


def polynomial_coefficients(q0, v0, a0, q1, v1, a1, T) -> np.ndarray:
    """Coefficients of the polynomial joining two states.

    Positions only give a linear, positions and velocities a cubic, all three a quintic
    polynomial: the interpolation rules of ros2_controllers' joint_trajectory_controller.

    Parameters
    ----------
    q0, v0, a0 : array_like or None
        Position, velocity and acceleration at s = 0 (``v0``/``a0`` None: not specified).
    q1, v1, a1 : array_like or None
        The same at s = T.
    T : float or array_like
        Duration [s] (broadcast against the states).

    Returns
    -------
    c : (6, ...) ndarray
        ``q(s) = Σ_k c_k s^k``.
    """
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    c = np.zeros((6,) + np.broadcast(q0, q1).shape)
    dq = q1 - q0
    c[0] = q0
    if v0 is None or v1 is None:
        c[1] = dq / T
        return c
    v0, v1 = np.asarray(v0, float), np.asarray(v1, float)
    c[1] = v0
    if a0 is None or a1 is None:
        c[2] = (3 * dq - (2 * v0 + v1) * T) / T ** 2
        c[3] = (-2 * dq + (v0 + v1) * T) / T ** 3
        return c
    a0, a1 = np.asarray(a0, float), np.asarray(a1, float)
    c[2] = a0 / 2
    c[3] = (20 * dq - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T ** 2) / (2 * T ** 3)
    c[4] = (-30 * dq + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T ** 2) / (2 * T ** 4)
    c[5] = (12 * dq - 6 * (v1 + v0) * T - (a0 - a1) * T ** 2) / (2 * T ** 5)
    return c


def evaluate_polynomial(c: np.ndarray, s: np.ndarray):
    """Position, velocity and acceleration of polynomials.

    Parameters
    ----------
    c : (6, n) or (6, M, n) ndarray
        One polynomial per joint, or one per sample and joint.
    s : (M,) ndarray
        Local times [s].

    Returns
    -------
    q, qd, qdd : (M, n) ndarray
    """
    c = c[:, None, :] if c.ndim == 2 else c
    s = s[:, None]
    powers = np.stack([np.ones_like(s), s, s ** 2, s ** 3, s ** 4, s ** 5])
    k = np.arange(6)[:, None, None]
    q = np.sum(c * powers, axis=0)
    qd = np.sum(c[1:] * k[1:] * powers[:-1], axis=0)
    qdd = np.sum(c[2:] * (k[2:] * (k[2:] - 1)) * powers[:-2], axis=0)
    return q, qd, qdd


def approach_segment(q_now, target: tuple, limits: JointLimits,
                     min_duration: float = MIN_SEGMENT) -> Segment:
    """The shortest quintic from rest to a moving state within the limits.

    Durations from ``min_duration`` up in 10 % steps are tried.

    Parameters
    ----------
    q_now : (n,) array_like
        Current position, at rest [rad or m].
    target : (q, qd, qdd)
        State to reach, (n,) each.
    limits : JointLimits
        In the same joint order (margin already applied).
    min_duration : float
        Shortest duration tried [s].

    Returns
    -------
    Segment

    Raises
    ------
    ExcitationError
        If the start position is outside the limits, or no duration up to 120 s works (the
        violations of the longest one are listed).
    """
    q_now = np.asarray(q_now, dtype=float)
    rest = np.zeros((1, len(q_now)))
    outside = limits.violations(np.zeros(1), q_now[None], rest, rest)
    if outside:
        raise ExcitationError('the robot is outside the (margin-reduced) limits, will not move: '
                              + '; '.join(outside))
    zero = np.zeros_like(q_now)
    return _shortest(lambda T: Segment((q_now, zero, zero), target, T), limits, min_duration,
                     'approach')


def stop_segment(state: tuple, limits: JointLimits, min_duration: float = MIN_SEGMENT) -> Segment:
    """The shortest quintic from a moving state to rest within the limits.

    The robot comes to rest near ``q + qd T/2 + qdd T²/12`` (clamped into the position
    limits).

    Parameters
    ----------
    state : (q, qd, qdd)
        Current state, (n,) each.
    limits : JointLimits
        In the same joint order.
    min_duration : float
        Shortest duration tried [s].

    Returns
    -------
    Segment

    Raises
    ------
    ExcitationError
        If no stop within 120 s satisfies the limits.
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in state)
    zero = np.zeros_like(q)

    def make(T):
        rest = np.clip(q + qd * T / 2 + qdd * T ** 2 / 12, limits.lower, limits.upper)
        return Segment((q, qd, qdd), (rest, zero, zero), T)
    return _shortest(make, limits, min_duration, 'stop')


def transition_segment(start: tuple, end: tuple, limits: JointLimits,
                       min_duration: float = MIN_SEGMENT) -> Segment:
    """The shortest quintic between two moving states within the limits (between the stages
    of a multi-stage excitation).

    Parameters
    ----------
    start, end : (q, qd, qdd)
        States, (n,) each.
    limits : JointLimits
        In the same joint order (margin already applied).
    min_duration : float
        Shortest duration tried [s].

    Returns
    -------
    Segment

    Raises
    ------
    ExcitationError
        If no duration up to 120 s works.
    """
    return _shortest(lambda T: Segment(start, end, T), limits, min_duration, 'transition')


def _shortest(make, limits, min_duration, what) -> Segment:
    duration = min_duration
    while True:
        segment = make(duration)
        t = np.arange(0.0, duration + CHECK_STEP, CHECK_STEP)
        problems = limits.violations(t, *segment.evaluate(t))
        if not problems:
            return segment
        if duration > MAX_SEGMENT:
            raise ExcitationError(f'no {what} segment within {MAX_SEGMENT:g} s respects the '
                                  f'limits: ' + '; '.join(problems))
        duration *= 1.1
