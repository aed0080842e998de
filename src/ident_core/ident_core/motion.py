"""Executable excitation motions: joint limits, polynomial segments and the full plan

    approach (rest → trajectory start state) → N periods of the Fourier series → stop (→ rest).

The approach and stop segments are quintic polynomials, so position, velocity and acceleration
are continuous everywhere (the start of a finite Fourier series is in general not at rest,
methods §4). Every sample of a plan is checked against the joint limits before anything moves.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ExcitationError, InputError
from .fourier import FourierTrajectory
from .robot_model import RobotModel

CHECK_STEP = 1e-3          # s, sampling of the limit checks
MIN_SEGMENT = 0.5          # s, shortest approach/stop segment
MAX_SEGMENT = 120.0        # s


@dataclass
class JointLimits:
    """Joint limits, all (n,) arrays in the order of ``joint_names``: lower, upper (rad or m),
    velocity (rad/s or m/s), acceleration (rad/s² or m/s²)."""

    joint_names: list[str]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def from_robot(cls, robot: RobotModel, acceleration, joint_names: list[str] | None = None,
                   overrides: dict | None = None) -> 'JointLimits':
        """Limits from the URDF (position, velocity) plus acceleration limits, in the order of
        ``joint_names`` (default: the robot's).

        Args:
            acceleration: one value or one per joint (robot order), rad/s².
            overrides: optional ``{joint: {lower, upper, velocity, acceleration}}``.

        Raises:
            InputError: unknown joints, a missing/non-positive limit, bad override fields.
        """
        names = list(joint_names or robot.joint_names)
        idx = np.argsort(robot.joint_order(names, 'joint limits'))  # robot → names order
        acc = np.broadcast_to(np.asarray(acceleration, dtype=float), (robot.n,))[idx]
        lim = cls(names, robot.lower[idx].copy(), robot.upper[idx].copy(),
                  robot.velocity_limit[idx].copy(), acc.copy())
        for joint, fields in (overrides or {}).items():
            if joint not in names or not isinstance(fields, dict):
                raise InputError(f'limit override {joint!r}: unknown joint or not a mapping')
            for key, value in fields.items():
                if key not in ('lower', 'upper', 'velocity', 'acceleration'):
                    raise InputError(f'limit override {joint}.{key}: unknown field')
                getattr(lim, key)[names.index(joint)] = float(value)
        lim.validate()
        return lim

    def validate(self) -> None:
        """Raises InputError naming the joint with a missing or inconsistent limit."""
        for i, j in enumerate(self.joint_names):
            if not (np.isfinite(self.lower[i]) and np.isfinite(self.upper[i])
                    and self.lower[i] < self.upper[i]):
                raise InputError(f'joint {j}: position limits [{self.lower[i]}, {self.upper[i]}] '
                                 f'missing or empty')
            for kind in ('velocity', 'acceleration'):
                v = getattr(self, kind)[i]
                if not (np.isfinite(v) and v > 0):
                    raise InputError(f'joint {j}: {kind} limit {v} missing or not positive')

    def reordered(self, names: list[str]) -> 'JointLimits':
        """The same limits in the joint order ``names`` (a permutation of ``joint_names``).

        Raises:
            InputError: a name that is not one of ``joint_names``.
        """
        unknown = [j for j in names if j not in self.joint_names]
        if unknown:
            raise InputError(f'joint limits: unknown joint(s) {", ".join(unknown)}')
        idx = [self.joint_names.index(j) for j in names]
        return JointLimits(list(names), self.lower[idx], self.upper[idx], self.velocity[idx],
                           self.acceleration[idx])

    def with_margin(self, margin: float) -> 'JointLimits':
        """Limits shrunk by a safety margin: ``margin`` × range off each position end,
        velocity and acceleration × (1 − margin)."""
        if not 0 <= margin < 0.5:
            raise InputError(f'limit margin {margin} must be in [0, 0.5)')
        span = self.upper - self.lower
        keep = 1 - margin
        return JointLimits(self.joint_names, self.lower + margin * span,
                           self.upper - margin * span, self.velocity * keep,
                           self.acceleration * keep)

    def violations(self, t, q, qd, qdd) -> list[str]:
        """One message per joint and limit kind violated by the samples (t (M,), others
        (M, n)), naming the joint, the worst value, the limit and when it happens."""
        out = []
        checks = (('position', q, self.lower, self.upper, 'rad'),
                  ('velocity', qd, -self.velocity, self.velocity, 'rad/s'),
                  ('acceleration', qdd, -self.acceleration, self.acceleration, 'rad/s²'))
        for i, joint in enumerate(self.joint_names):
            for kind, x, lo, hi, unit in checks:
                excess = np.maximum(lo[i] - x[:, i], x[:, i] - hi[i])
                k = int(np.argmax(excess))
                if excess[k] > 1e-9:
                    bound = lo[i] if x[k, i] < lo[i] else hi[i]
                    out.append(f'joint {joint}: {kind} {x[k, i]:.4g} {unit} at t = {t[k]:.3f} s '
                               f'exceeds the limit {bound:.4g} {unit}')
        return out


class Segment:
    """Per-joint polynomial from one state to another over ``duration`` s (quintic when
    positions, velocities and accelerations are given at both ends)."""

    def __init__(self, start: tuple, end: tuple, duration: float):
        self.duration = float(duration)
        self.coefficients = polynomial_coefficients(*start, *end, self.duration)

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, qdd (M, n) at times t (M,) s from the segment start (clamped to it)."""
        s = np.clip(np.atleast_1d(np.asarray(t, dtype=float)), 0.0, self.duration)
        return evaluate_polynomial(self.coefficients, s)


def polynomial_coefficients(q0, v0, a0, q1, v1, a1, T) -> np.ndarray:
    """(6, ...) coefficients c_k of q(s) = Σ c_k s^k joining (q0, v0, a0) at s = 0 to
    (q1, v1, a1) at s = T. ``v`` or ``a`` given as None means that derivative is not specified:
    positions only → linear, positions and velocities → cubic, all three → quintic (the
    interpolation rules of ros2_controllers' joint_trajectory_controller)."""
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
    """q, qd, qdd (M, n) of coefficients ``c`` at local times ``s`` (M,): ``c`` (6, n) is one
    polynomial per joint, ``c`` (6, M, n) one per sample."""
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
    """Shortest quintic (10 % duration steps from ``min_duration``) from rest at ``q_now`` to the
    state ``target = (q, qd, qdd)`` that stays within ``limits``.

    Raises:
        ExcitationError: the start position is outside the limits, or no duration up to
            120 s works (the violations of the longest one are listed).
    """
    q_now = np.asarray(q_now, dtype=float)
    outside = limits.violations(np.zeros(1), q_now[None], np.zeros((1, len(q_now))),
                                np.zeros((1, len(q_now))))
    if outside:
        raise ExcitationError('the robot is outside the (margin-reduced) limits, will not move: '
                              + '; '.join(outside))
    zero = np.zeros_like(q_now)
    return _shortest(lambda T: Segment((q_now, zero, zero), target, T), limits, min_duration,
                     'approach')


def stop_segment(state: tuple, limits: JointLimits, min_duration: float = MIN_SEGMENT) -> Segment:
    """Shortest quintic that brings the motion from ``state = (q, qd, qdd)`` to rest near
    ``q + qd T/2 + qdd T²/12`` (clamped into the position limits) within the velocity and
    acceleration limits.

    Raises:
        ExcitationError: no stop within 120 s satisfies the limits.
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in state)
    zero = np.zeros_like(q)

    def make(T):
        rest = np.clip(q + qd * T / 2 + qdd * T ** 2 / 12, limits.lower, limits.upper)
        return Segment((q, qd, qdd), (rest, zero, zero), T)
    return _shortest(make, limits, min_duration, 'stop')


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


def period_violations(trajectory: FourierTrajectory, limits: JointLimits) -> list[str]:
    """``limits.violations`` of one period of ``trajectory`` (periodic), sampled every
    ``CHECK_STEP`` s; ``limits`` may name the joints in any order.

    Raises:
        InputError: ``limits`` lack a joint of the trajectory.
    """
    t = np.arange(0.0, trajectory.period, CHECK_STEP)
    return limits.reordered(list(trajectory.joint_names)).violations(t, *trajectory.evaluate(t))


PHASES = ('approach', 'excite', 'stop')


class ExcitationPlan:
    """The whole excitation motion in the trajectory's joint order, time 0 = start of the
    approach.

    Args:
        trajectory: the Fourier series (its ``periods`` unless ``periods`` is given).
        q_start: (n,) current joint positions (at rest).
        limits: limits in the trajectory's joint order (already margin-reduced).

    Raises:
        ExcitationError: any sample of the periodic part or of the approach/stop violates the
            limits (all violations are listed, nothing has moved).
    """

    def __init__(self, trajectory: FourierTrajectory, q_start, limits: JointLimits,
                 periods: int | None = None):
        if list(limits.joint_names) != list(trajectory.joint_names):
            raise InputError('plan: limits and trajectory name different joints')
        self.trajectory = trajectory
        self.periods = int(periods or trajectory.periods)
        self.limits = limits
        problems = period_violations(trajectory, limits)
        if problems:
            raise ExcitationError(f'trajectory {trajectory.name!r} violates the limits: '
                                  + '; '.join(problems))
        start = tuple(x[0] for x in trajectory.evaluate(0.0))
        self.approach = approach_segment(q_start, start, limits)
        self.stop = stop_segment(start, limits)
        self.excite_start = self.approach.duration
        self.stop_start = self.excite_start + self.periods * trajectory.period
        self.duration = self.stop_start + self.stop.duration

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, qdd (M, n) at plan times t (M,) s; before 0 the start, after the end rest."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = [np.empty((len(t), self.trajectory.n)) for _ in range(3)]
        parts = ((t < self.excite_start, self.approach.evaluate, 0.0),
                 ((t >= self.excite_start) & (t < self.stop_start), self.trajectory.evaluate,
                  self.excite_start),
                 (t >= self.stop_start, self.stop.evaluate, self.stop_start))
        for mask, evaluate, offset in parts:
            if np.any(mask):
                for o, v in zip(out, evaluate(t[mask] - offset)):
                    o[mask] = v
        return tuple(out)

    def phase(self, t: float) -> tuple[str, float, int]:
        """(phase name, progress 0..1 over the whole plan, 1-based period while exciting)."""
        progress = min(max(t / self.duration, 0.0), 1.0)
        if t < self.excite_start:
            return 'approach', progress, 0
        if t < self.stop_start:
            return 'excite', progress, int((t - self.excite_start) // self.trajectory.period) + 1
        return 'stop', progress, self.periods

