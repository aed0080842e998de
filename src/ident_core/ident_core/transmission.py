"""Transmission between motor-side measurements and joint-side quantities.

Industrial robots often log motor encoder angles and motor currents. With the gear matrix ``R``
(``q_motor = R · q_joint``, coupling terms off the diagonal, e.g. the Stäubli TX40 wrist where
motor 6 also turns with joint 5), the joint quantities are

    q_joint   = R⁻¹ · q_motor + offset
    tau_joint = Rᵀ · (torque_scale ∘ effort)        (principle of virtual work)

``torque_scale`` is the drive gain per motor (current → motor torque; 1 if the effort is already
a motor torque).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError


@dataclass
class Transmission:
    """Motor-to-joint transmission of an n-joint robot.

    Attributes:
        gear_matrix: (n, n) ``R`` with ``q_motor = R · q_joint`` (gear ratios on the diagonal).
        joint_offset: (n,) rad or m, added to the joint positions after ``R⁻¹``.
        torque_scale: (n,) drive gain per motor, N·m per effort unit.
    """

    gear_matrix: np.ndarray
    joint_offset: np.ndarray
    torque_scale: np.ndarray

    @classmethod
    def identity(cls, n: int) -> 'Transmission':
        return cls(np.eye(n), np.zeros(n), np.ones(n))

    @classmethod
    def from_dict(cls, spec: dict, n: int, source: str) -> 'Transmission':
        """Build from a dataset description's ``transmission`` mapping.

        Keys (all optional): ``gear_ratios`` (n,), ``coupling`` (list of ``[motor, joint, value]``,
        0-based, sets ``R[motor, joint]``), ``gear_matrix`` (n×n, instead of the two above),
        ``joint_offset`` (n,), ``torque_scale`` (number or n).

        Raises:
            InputError: unknown key, wrong size, singular ``R``; names ``source`` and the key.
        """
        if not isinstance(spec, dict):
            raise InputError(f'{source}: field transmission must be a mapping')
        known = {'gear_ratios', 'coupling', 'gear_matrix', 'joint_offset', 'torque_scale'}
        unknown = set(spec) - known
        if unknown:
            raise InputError(f'{source}: unknown transmission field(s) {", ".join(sorted(unknown))}'
                             f' (known: {", ".join(sorted(known))})')
        if 'gear_matrix' in spec:
            if 'gear_ratios' in spec or 'coupling' in spec:
                raise InputError(f'{source}: transmission: give gear_matrix or '
                                 'gear_ratios/coupling, not both')
            gear = _array(spec['gear_matrix'], (n, n), source, 'transmission.gear_matrix')
        else:
            gear = np.diag(_vector(spec.get('gear_ratios', 1.0), n, source,
                                   'transmission.gear_ratios'))
            for entry in spec.get('coupling', []):
                if not (isinstance(entry, (list, tuple)) and len(entry) == 3):
                    raise InputError(f'{source}: transmission.coupling entries are '
                                     f'[motor, joint, value], got {entry!r}')
                motor, joint, value = entry
                if not (isinstance(motor, int) and isinstance(joint, int)
                        and 0 <= motor < n and 0 <= joint < n):
                    raise InputError(f'{source}: transmission.coupling {entry!r}: motor and joint '
                                     f'must be 0-based indices below {n}')
                gear[motor, joint] = float(value)
        if abs(np.linalg.det(gear)) < 1e-12 * max(1.0, np.abs(gear).max()) ** n:
            raise InputError(f'{source}: transmission gear matrix is singular')
        return cls(gear,
                   _vector(spec.get('joint_offset', 0.0), n, source, 'transmission.joint_offset'),
                   _vector(spec.get('torque_scale', 1.0), n, source, 'transmission.torque_scale'))

    def joint_positions(self, q_motor: np.ndarray) -> np.ndarray:
        """(N, n) motor angles → (N, n) joint positions."""
        return np.linalg.solve(self.gear_matrix, q_motor.T).T + self.joint_offset

    def joint_velocities(self, qd_motor: np.ndarray) -> np.ndarray:
        """(N, n) motor velocities → (N, n) joint velocities (no offset)."""
        return np.linalg.solve(self.gear_matrix, qd_motor.T).T

    def joint_torques(self, effort: np.ndarray) -> np.ndarray:
        """(N, n) motor efforts (e.g. currents) → (N, n) joint torques ``Rᵀ (scale ∘ effort)``."""
        return (effort * self.torque_scale) @ self.gear_matrix

    def to_dict(self) -> dict:
        return {'gear_matrix': self.gear_matrix.tolist(),
                'joint_offset': self.joint_offset.tolist(),
                'torque_scale': self.torque_scale.tolist()}

    def same_as(self, other: 'Transmission') -> bool:
        return all(np.allclose(a, b) for a, b in
                   ((self.gear_matrix, other.gear_matrix), (self.joint_offset, other.joint_offset),
                    (self.torque_scale, other.torque_scale)))


def _vector(value, n: int, source: str, field: str) -> np.ndarray:
    """A number broadcast to (n,), or a list of n numbers."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return np.full(n, float(value))
    return _array(value, (n,), source, field)


def _array(value, shape: tuple, source: str, field: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{source}: field {field} must be numeric, got {value!r}') from None
    if arr.shape != shape:
        raise InputError(f'{source}: field {field} must have shape {shape}, got {arr.shape}')
    if not np.all(np.isfinite(arr)):
        raise InputError(f'{source}: field {field} contains NaN or inf')
    return arr
