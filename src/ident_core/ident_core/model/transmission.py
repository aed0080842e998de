"""Transmission between motor-side measurements and joint-side quantities (docs/methods.md §1).

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


@dataclass
class Transmission:
    """Motor-to-joint transmission of an n-joint robot.

    Parameters
    ----------
    gear_matrix : (n, n) ndarray
        ``R`` with ``q_motor = R · q_joint`` (gear ratios on the diagonal).
    joint_offset : (n,) ndarray
        Added to the joint positions after ``R⁻¹`` [rad or m].
    torque_scale : (n,) ndarray
        Drive gain per motor [N·m per effort unit].
    """

    gear_matrix: np.ndarray
    joint_offset: np.ndarray
    torque_scale: np.ndarray

    @classmethod
    def identity(cls, n: int) -> Transmission:
        """Joint-side data: ``R = I``, no offset, unit gains.

        Parameters
        ----------
        n : int
            Number of joints.

        Returns
        -------
        Transmission
        """
        return cls(np.eye(n), np.zeros(n), np.ones(n))

    def joint_positions(self, q_motor: np.ndarray) -> np.ndarray:
        """Joint positions of motor angles.

        Parameters
        ----------
        q_motor : (N, n) ndarray
            Motor positions [rad].

        Returns
        -------
        (N, n) ndarray
            ``R⁻¹ q_motor + offset`` [rad or m].
        """
        return np.linalg.solve(self.gear_matrix, q_motor.T).T + self.joint_offset

    def joint_velocities(self, qd_motor: np.ndarray) -> np.ndarray:
        """Joint velocities of motor velocities (no offset).

        Parameters
        ----------
        qd_motor : (N, n) ndarray
            Motor velocities [rad/s].

        Returns
        -------
        (N, n) ndarray
            ``R⁻¹ qd_motor`` [rad/s or m/s].
        """
        return np.linalg.solve(self.gear_matrix, qd_motor.T).T

    def joint_torques(self, effort: np.ndarray) -> np.ndarray:
        """Joint torques of motor efforts.

        Parameters
        ----------
        effort : (N, n) ndarray
            Motor efforts (torques, or currents with ``torque_scale`` the drive gains).

        Returns
        -------
        (N, n) ndarray
            ``Rᵀ (torque_scale ∘ effort)`` [N·m or N].
        """
        return (effort * self.torque_scale) @ self.gear_matrix

    def reordered(self, idx: np.ndarray) -> Transmission:
        """The same transmission with joints (and motors) permuted.

        Parameters
        ----------
        idx : (n,) ndarray of int
            New order: joint k of the result is joint ``idx[k]`` of this one.

        Returns
        -------
        Transmission
        """
        return Transmission(self.gear_matrix[np.ix_(idx, idx)], self.joint_offset[idx],
                            self.torque_scale[idx])

    def to_dict(self) -> dict:
        """Plain lists, the ``transmission`` section of RESULT.yaml.

        Returns
        -------
        dict
            ``{'gear_matrix', 'joint_offset', 'torque_scale'}``.
        """
        return {'gear_matrix': self.gear_matrix.tolist(),
                'joint_offset': self.joint_offset.tolist(),
                'torque_scale': self.torque_scale.tolist()}

    def same_as(self, other: Transmission) -> bool:
        """Whether two transmissions are equal to rounding.

        Parameters
        ----------
        other : Transmission

        Returns
        -------
        bool
        """
        return all(np.allclose(a, b) for a, b in
                   ((self.gear_matrix, other.gear_matrix), (self.joint_offset, other.joint_offset),
                    (self.torque_scale, other.torque_scale)))
