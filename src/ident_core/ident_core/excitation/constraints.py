"""Constraints of an excitation trajectory (methods §4): joint position, velocity and
acceleration limits (URDF, overridable in the config, shrunk by the safety margin), optionally
joint torques of the nominal model (RNEA with the URDF inertias) within the effort limits, and
optionally a clearance to self-collision and to fixed obstacles (``collision``).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..motion import JointLimits
from ..robot_model import RobotModel
from .collision import Clearance, CollisionModel
from .config import ExcitationConfig


class Constraints:
    """All constraints of one optimisation, model joint order.

    Attributes:
        limits: position/velocity/acceleration limits, margin applied.
        effort: (n,) N·m or N, margin applied, or None when torques are not checked.
        collision: the collision model, or None. min_distance: required clearance, m.

    Raises:
        InputError: acceleration limits missing, a bad limit override, a missing effort limit
            while torques are checked, or a collision set-up error (naming file and field).
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        src = config.source
        if config.acceleration is None:
            raise InputError(f'{src}: field limits.acceleration missing (rad/s², one value or '
                             f'one per joint): a URDF has no acceleration limits')
        try:
            acc = np.broadcast_to(np.asarray(config.acceleration, float), (robot.n,))
        except (TypeError, ValueError):
            raise InputError(f'{src}: field limits.acceleration must be one number or '
                             f'{robot.n} numbers') from None
        try:
            limits = JointLimits.from_robot(robot, acc, overrides=config.joint_limits)
        except InputError as exc:
            raise InputError(f'{src}: limits: {exc}') from None
        except (TypeError, ValueError):
            raise InputError(f'{src}: field limits.joints must map joints to numbers') from None
        self.robot = robot
        self.limits = limits.with_margin(config.margin)
        self.effort = self._effort(robot, config) if config.torque else None
        self.collision = CollisionModel(robot, config) if config.collision else None
        self.min_distance = float(config.min_distance)
        self._data = robot.model.createData()

    @staticmethod
    def _effort(robot, config) -> np.ndarray:
        effort = robot.effort_limit.copy()
        for joint, value in config.effort.items():
            if joint not in robot.joint_names:
                raise InputError(f'{config.source}: limits.effort names unknown joint {joint}')
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f'{config.source}: field limits.effort.{joint} must be a '
                                 f'number, got {value!r}')
            effort[robot.joint_names.index(joint)] = float(value)
        for j, e in zip(robot.joint_names, effort):
            if not (np.isfinite(e) and e > 0):
                raise InputError(f'{config.source}: joint {j} has no effort limit in the URDF; '
                                 f'give it in limits.effort or set limits.torque: false')
        return effort * (1 - config.margin)

    def torques(self, q, qd, qdd) -> np.ndarray:
        """(M, n) joint torques of the nominal (URDF) model, RNEA, for samples (M, n)."""
        model, data = self.robot.model, self._data
        return np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(len(q))])

    def clearance(self, q) -> Clearance | None:
        """Smallest distance to collision over q (M, n); None without collision checks."""
        return self.collision.clearance(q) if self.collision is not None else None

    def dynamic_violation(self, t, q, qd, qdd) -> str | None:
        """The first torque or collision violation on the samples, described, or None."""
        if self.effort is not None:
            tau = self.torques(q, qd, qdd)
            excess = np.abs(tau) / self.effort
            k, i = np.unravel_index(np.argmax(excess), excess.shape)
            if excess[k, i] > 1:
                return (f'joint {self.robot.joint_names[i]}: torque {tau[k, i]:.4g} N·m at '
                        f't = {t[k]:.3f} s exceeds the limit {self.effort[i]:.4g} N·m')
        if self.collision is not None:
            c = self.collision.clearance(q)
            if c.distance < self.min_distance:
                return (f'collision: distance {c.distance:.4g} m between {c.pair[0]} and '
                        f'{c.pair[1]} at t = {t[c.sample]:.3f} s is below the clearance '
                        f'{self.min_distance:.4g} m')
        return None

    def margins(self, t, q, qd, qdd) -> dict:
        """Smallest distance to each limit over the samples (negative: violated), per joint:
        position (rad or m), velocity, acceleration, torque (N·m or N, if checked); and
        collision {distance (m) above the clearance, pair, time} if checked."""
        lim = self.limits
        names = self.robot.joint_names
        out = {'position': _per_joint(names, np.minimum(q.min(0) - lim.lower,
                                                        lim.upper - q.max(0))),
               'velocity': _per_joint(names, lim.velocity - np.abs(qd).max(0)),
               'acceleration': _per_joint(names, lim.acceleration - np.abs(qdd).max(0))}
        if self.effort is not None:
            out['torque'] = _per_joint(names, self.effort
                                       - np.abs(self.torques(q, qd, qdd)).max(0))
        if self.collision is not None:
            c = self.collision.clearance(q)
            out['collision'] = {'distance': float(c.distance), 'clearance': self.min_distance,
                                'pair': list(c.pair), 't': float(t[c.sample])}
        return out


def _per_joint(names, values) -> dict:
    return {j: float(v) for j, v in zip(names, values)}
