"""Identification regressor: rigid body (Pinocchio) plus actuator columns.

    tau = Y(q, qd, qdd) · chi                                     (methods §1)

``chi`` stacks, per link, the 10 standard inertial parameters in Pinocchio's order
``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (``pin.computeJointTorqueRegressor``), then, per
actuator, the optional rotor inertia ``Ia``, viscous ``fv`` and Coulomb ``fc`` friction and torque
``offset`` of payload_identification_2017 eq. (4).

Actuator terms act on the motor side: with the normalised gear matrix ``G = diag(R)⁻¹ R`` (identity
without a transmission, unit diagonal with coupling terms otherwise) and ``u = G qd``, actuator ``m``
adds ``G[m]ᵀ (Ia_m (G[m]·qdd) + fv_m u_m + fc_m sign(u_m) + offset_m)`` to the joint torques. The
parameters are therefore joint-equivalent values (motor value × ratio², × |ratio| for Coulomb), the
same numbers as joint-side parameters for uncoupled joints.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .errors import InputError
from .robot_model import RobotModel
from .transmission import Transmission

FRICTION_MODELS = ('none', 'viscous-coulomb', 'viscous-coulomb-offset')
INERTIAL_NAMES = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')


@dataclass(frozen=True)
class RegressorSpec:
    """Which columns the identification model has.

    Attributes:
        friction: one of ``FRICTION_MODELS``.
        rotor_inertia: add one ``Ia`` column per actuator.
    """

    friction: str = 'viscous-coulomb-offset'
    rotor_inertia: bool = False

    def __post_init__(self):
        if self.friction not in FRICTION_MODELS:
            raise InputError(f'friction model {self.friction!r} unknown '
                             f'(choose from {", ".join(FRICTION_MODELS)})')

    @property
    def actuator_terms(self) -> tuple[str, ...]:
        """Per-actuator parameter kinds, in column order."""
        terms = ('Ia',) if self.rotor_inertia else ()
        if self.friction != 'none':
            terms += ('fv', 'fc')
        if self.friction == 'viscous-coulomb-offset':
            terms += ('offset',)
        return terms


class Regressor:
    """Stacked regressor of a robot for a given column specification.

    Args:
        robot: the robot model.
        spec: which actuator columns to add.
        transmission: motor coupling for the actuator columns (identity if None).

    Attributes:
        gear: (n, n) normalised gear matrix ``G``; motor velocities are ``G qd``.
    """

    def __init__(self, robot: RobotModel, spec: RegressorSpec,
                 transmission: Transmission | None = None):
        self.robot = robot
        self.spec = spec
        self.transmission = transmission or Transmission.identity(robot.n)
        gear = self.transmission.gear_matrix
        self.gear = gear / np.diag(gear)[:, None]
        self._data = robot.model.createData()
        n = robot.n
        self.names = [f'{p}{i}' for i in range(1, robot.link_count + 1) for p in INERTIAL_NAMES]
        self.names += [f'{t}{m}' for t in spec.actuator_terms for m in range(1, n + 1)]

    @property
    def n_inertial(self) -> int:
        return 10 * self.robot.link_count

    @property
    def n_columns(self) -> int:
        return len(self.names)

    def compute(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Regressor of N samples.

        Args:
            q, qd, qdd: (N, n) joint positions, velocities, accelerations (rad, rad/s, rad/s²
                or m, m/s, m/s² for prismatic joints), model joint order.

        Returns:
            (N, n, p) array: ``tau[k] = Y[k] @ chi``; p = ``n_columns``.

        Raises:
            InputError: arrays of different or wrong shapes.
        """
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
        n = self.robot.n
        if not (q.ndim == 2 and q.shape[1] == n and q.shape == qd.shape == qdd.shape):
            raise InputError(f'regressor: q, qd, qdd must all be (N, {n}), got '
                             f'{q.shape}, {qd.shape}, {qdd.shape}')
        out = np.empty((len(q), n, self.n_columns))
        self._rigid_body(q, qd, qdd, out[:, :, :self.n_inertial])
        out[:, :, self.n_inertial:] = self.actuator_columns(qd, qdd)
        return out

    def _rigid_body(self, q, qd, qdd, out):
        model, data = self.robot.model, self._data
        for k in range(len(q)):
            out[k] = pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k])

    def actuator_columns(self, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """(N, n, p − 10·n_links) actuator part of the regressor (columns after the inertial
        ones): the column of actuator m on joint j is ``G[m, j]`` × motor quantity m."""
        g = self.gear
        u = qd @ g.T
        kinds = {'Ia': lambda: qdd @ g.T, 'fv': lambda: u, 'fc': lambda: np.sign(u),
                 'offset': lambda: np.ones_like(u)}
        n = self.robot.n
        out = np.empty((len(qd), n, self.n_columns - self.n_inertial))
        for t, term in enumerate(self.spec.actuator_terms):
            out[:, :, t * n:(t + 1) * n] = kinds[term]()[:, None, :] * g.T[None, :, :]
        return out

    def actuator_index(self, term: str, actuator: int) -> int:
        """Column index of ``term`` (``Ia``, ``fv``, ``fc``, ``offset``) of 0-based ``actuator``."""
        return self.names.index(f'{term}{actuator + 1}')
