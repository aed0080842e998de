"""Constraints of an excitation trajectory (docs/methods.md §6): joint position, velocity and
acceleration limits (URDF, overridable in the config, shrunk by the safety margin; a continuous
joint's positions within ``limits.continuous_range``), optionally
joint torques of the nominal model (RNEA with the URDF inertias) within the effort limits, and
optionally a clearance to self-collision and to fixed obstacles (``collision``).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..model.robot import RobotModel, configuration
from ..motion.limits import JointLimits
from ..schema import per_joint
from .collision import Clearance, CollisionModel
from .config import ExcitationConfig


class Constraints:
    """All constraints of one optimisation, model joint order.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    config : ExcitationConfig
        Limits and collision settings.

    Attributes
    ----------
    limits : JointLimits
        Position, velocity and acceleration limits, margin applied.
    effort : (n,) ndarray or None
        Effort limits, margin applied [N·m or N]; None when torques are not checked.
    collision : CollisionModel or None
        The collision model, None without collision checks.
    min_distance : float
        Required clearance [m].

    Raises
    ------
    InputError
        If acceleration limits are missing, a limit override is bad, an effort limit is
        missing while torques are checked, or the collision set-up fails (naming file and
        field).
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        src, lim = config.source, config.limits
        if lim.acceleration is None:
            raise InputError(f'{src}: field limits.acceleration missing (rad/s², one value or '
                             f'one per joint): a URDF has no acceleration limits')
        try:
            acc = per_joint(lim.acceleration, robot.n, 'limits.acceleration')
        except InputError as exc:
            raise InputError(f'{src}: {exc}') from None
        overrides = {j: o.model_dump(exclude_none=True) for j, o in lim.joints.items()}
        try:
            limits = JointLimits.from_robot(robot, acc, overrides=overrides,
                                            continuous_range=lim.continuous_range)
        except InputError as exc:
            raise InputError(f'{src}: limits: {exc}') from None
        self.robot = robot
        self.limits = limits.with_margin(lim.margin)
        self.effort = self._effort(robot, config) if lim.torque else None
        self.collision = CollisionModel(robot, config) if config.collision.enabled else None
        self.min_distance = float(config.collision.min_distance)

    @staticmethod
    def _effort(robot, config) -> np.ndarray:
        effort = robot.effort_limit.copy()
        for joint, value in config.limits.effort.items():
            if joint not in robot.joint_names:
                raise InputError(f'{config.source}: limits.effort names unknown joint {joint}')
            effort[robot.joint_names.index(joint)] = value
        for j, e in zip(robot.joint_names, effort):
            if not (np.isfinite(e) and e > 0):
                raise InputError(f'{config.source}: joint {j} has no effort limit in the URDF; '
                                 f'give it in limits.effort or set limits.torque: false')
        return effort * (1 - config.limits.margin)

    def torques(self, q, qd, qdd) -> np.ndarray:
        """Joint torques of the nominal (URDF) model by RNEA.

        Parameters
        ----------
        q, qd, qdd : (M, n) ndarray
            Samples, model joint order.

        Returns
        -------
        (M, n) ndarray
            [N·m or N].
        """
        model = self.robot.model
        data, x = model.createData(), configuration(model, q)
        return np.array([pin.rnea(model, data, x[k], qd[k], qdd[k]) for k in range(len(q))])

    def clearance(self, q) -> Clearance | None:
        """Smallest distance to collision over configurations.

        Parameters
        ----------
        q : (M, n) ndarray
            Configurations, model joint order.

        Returns
        -------
        Clearance or None
            None without collision checks.
        """
        return self.collision.clearance(q) if self.collision is not None else None

    def dynamic_violation(self, t, q, qd, qdd) -> str | None:
        """The first torque or collision violation of sampled motion.

        Parameters
        ----------
        t : (M,) ndarray
            Sample times [s].
        q, qd, qdd : (M, n) ndarray
            Samples, model joint order.

        Returns
        -------
        str or None
            The violation described, None if there is none.
        """
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
        """Smallest distance of sampled motion to each limit (negative: violated).

        Parameters
        ----------
        t : (M,) ndarray
            Sample times [s].
        q, qd, qdd : (M, n) ndarray
            Samples, model joint order.

        Returns
        -------
        dict
            Per joint: ``position`` [rad or m], ``velocity``, ``acceleration``, ``torque``
            [N·m or N] (if checked); and ``collision`` {distance above the clearance [m],
            pair, time} (if checked).
        """
        names = self.robot.joint_names
        out = {kind: _per_joint(names, m) for kind, m in self.limits.margins(q, qd, qdd).items()}
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
