"""Joint limits, and the margin of sampled motions to them: the one place where position,
velocity and acceleration limits are checked (plans, excitation optimisation, the nodes)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model.robot import RobotModel

KINDS = ('position', 'velocity', 'acceleration')
UNITS = {'position': 'rad', 'velocity': 'rad/s', 'acceleration': 'rad/s²'}
VIOLATION_TOLERANCE = 1e-9


@dataclass
class JointLimits:
    """Joint limits, all (n,) arrays in the order of ``joint_names``.

    Parameters
    ----------
    joint_names : list of str
        (n,) joints.
    lower, upper : (n,) ndarray
        Position limits [rad or m]; −∞ and +∞ for a joint without (a continuous joint), whose
        positions are then not checked.
    velocity : (n,) ndarray
        [rad/s or m/s].
    acceleration : (n,) ndarray
        [rad/s² or m/s²].
    """

    joint_names: list[str]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def from_robot(cls, robot: RobotModel, acceleration, joint_names: list[str] | None = None,
                   overrides: dict | None = None,
                   continuous_range: float | None = None) -> JointLimits:
        """Limits from the URDF (position, velocity) plus acceleration limits.

        Parameters
        ----------
        robot : RobotModel
            The robot.
        acceleration : float or (n,) array_like
            One value or one per joint (robot order) [rad/s² or m/s²].
        joint_names : list of str, optional
            Order of the result (default: the robot's).
        overrides : dict, optional
            ``{joint: {lower, upper, velocity, acceleration}}``.
        continuous_range : float, optional
            A continuous joint's position limits are ``±continuous_range`` [rad] where
            ``overrides`` does not give them; None: it has none (±∞, positions not checked).

        Returns
        -------
        JointLimits

        Raises
        ------
        InputError
            For unknown joints, a missing or non-positive limit, or bad override fields.
        """
        names = list(joint_names or robot.joint_names)
        idx = np.argsort(robot.joint_order(names, 'joint limits'))  # robot → names order
        acc = np.broadcast_to(np.asarray(acceleration, dtype=float), (robot.n,))[idx]
        lim = cls(names, robot.lower[idx].copy(), robot.upper[idx].copy(),
                  robot.velocity_limit[idx].copy(), acc.copy())
        if continuous_range is not None:
            continuous = robot.continuous[idx]
            lim.lower[continuous], lim.upper[continuous] = -continuous_range, continuous_range
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
        """Check that every limit is present and consistent.

        Raises
        ------
        InputError
            Naming the joint with a missing or inconsistent limit (position limits are both
            finite, or both infinite: none).
        """
        for i, j in enumerate(self.joint_names):
            lower, upper = self.lower[i], self.upper[i]
            unbounded = lower == -np.inf and upper == np.inf
            if not (unbounded or np.isfinite(lower) and np.isfinite(upper) and lower < upper):
                raise InputError(f'joint {j}: position limits [{lower}, {upper}] missing or '
                                 f'empty')
            for kind in ('velocity', 'acceleration'):
                v = getattr(self, kind)[i]
                if not (np.isfinite(v) and v > 0):
                    raise InputError(f'joint {j}: {kind} limit {v} missing or not positive')

    def reordered(self, names: list[str]) -> JointLimits:
        """The same limits in another joint order.

        Parameters
        ----------
        names : list of str
            A permutation of ``joint_names``.

        Returns
        -------
        JointLimits

        Raises
        ------
        InputError
            If a name is not one of ``joint_names``.
        """
        unknown = [j for j in names if j not in self.joint_names]
        if unknown:
            raise InputError(f'joint limits: unknown joint(s) {", ".join(unknown)}')
        idx = [self.joint_names.index(j) for j in names]
        return JointLimits(list(names), self.lower[idx], self.upper[idx], self.velocity[idx],
                           self.acceleration[idx])

    def with_margin(self, margin: float) -> JointLimits:
        """Limits shrunk by a safety margin.

        Parameters
        ----------
        margin : float
            In [0, 0.5): that fraction of the range comes off each position end, velocity and
            acceleration limits are multiplied by ``1 − margin``.

        Returns
        -------
        JointLimits

        Raises
        ------
        InputError
            If the margin is outside [0, 0.5).
        """
        if not 0 <= margin < 0.5:
            raise InputError(f'limit margin {margin} must be in [0, 0.5)')
        span = self.upper - self.lower
        shrink = margin * np.where(np.isfinite(span), span, 0.0)     # none without limits
        keep = 1 - margin
        return JointLimits(self.joint_names, self.lower + shrink, self.upper - shrink,
                           self.velocity * keep, self.acceleration * keep)

    def margins(self, q, qd, qdd, slack=None) -> dict[str, np.ndarray]:
        """Smallest distance of sampled motion to each limit, per joint.

        Parameters
        ----------
        q, qd, qdd : (M, n) ndarray
            Samples, in the order of ``joint_names``.
        slack : (bq, bv, ba), optional
            (n,) each: how far the motion may exceed its sampled extremes between samples
            (e.g. ``FourierBasis.taylor``); subtracted from the margins.

        Returns
        -------
        dict of str to (n,) ndarray
            ``{'position', 'velocity', 'acceleration'}``, negative where a limit is exceeded
            [rad, rad/s, rad/s² or m, m/s, m/s²].
        """
        return {kind: worst[0] for kind, worst in self._worst(q, qd, qdd, slack).items()}

    def violations(self, t, q, qd, qdd, slack=None) -> list[str]:
        """Every joint and limit kind exceeded by sampled motion, described.

        Parameters
        ----------
        t : (M,) ndarray
            Sample times [s].
        q, qd, qdd : (M, n) ndarray
            Samples, in the order of ``joint_names``.
        slack : (bq, bv, ba), optional
            As in ``margins``.

        Returns
        -------
        list of str
            One message per violation, naming the joint, the worst value, the limit and when
            it happens; empty when the motion is within the limits.
        """
        out = []
        worst = self._worst(q, qd, qdd, slack)
        for i, joint in enumerate(self.joint_names):
            for kind in KINDS:
                margin, k, value, bound = (x[i] for x in worst[kind])
                if margin < -VIOLATION_TOLERANCE:
                    unit = UNITS[kind]
                    out.append(f'joint {joint}: {kind} {value:.4g} {unit} at t = '
                               f'{t[int(k)]:.3f} s exceeds the limit {bound:.4g} {unit}')
        return out

    def _worst(self, q, qd, qdd, slack):
        """Per kind: (margin, sample index, value at the limit side, limit), each (n,)."""
        slack = slack or (0.0, 0.0, 0.0)
        out = {}
        for kind, x, lo, hi, s in (('position', q, self.lower, self.upper, slack[0]),
                                   ('velocity', qd, -self.velocity, self.velocity, slack[1]),
                                   ('acceleration', qdd, -self.acceleration, self.acceleration,
                                    slack[2])):
            k_lo, k_hi = np.argmin(x, axis=0), np.argmax(x, axis=0)
            cols = np.arange(x.shape[1])
            low, high = x[k_lo, cols] - s, x[k_hi, cols] + s
            below = low - lo < hi - high
            out[kind] = (np.minimum(low - lo, hi - high), np.where(below, k_lo, k_hi),
                         np.where(below, low, high), np.where(below, lo, hi))
        return out
