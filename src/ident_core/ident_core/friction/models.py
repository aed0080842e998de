"""Joint friction models (docs/methods.md §8; stribeck_friction_sa_ga_2020).

    Coulomb + viscous:  tau_f = fc sign(qd) + fv qd + offset
    Stribeck:           tau_f = [fc + (fs − fc) exp(−|qd/vs|^delta)] sign(qd) + fv qd + offset

Both use the improved model's linear segment through ``offset`` inside ``|qd| < v_l``, so the
torque is continuous at velocity reversal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

FRICTION_MODELS = ('coulomb-viscous', 'stribeck')


@dataclass
class Friction:
    """Friction of n joints; every coefficient is an (n,) array.

    For ``|qd| >= v_l`` the torque is
    ``[fc + (fs − fc) exp(−|qd/vs|^delta)] sign(qd) + fv qd + offset`` (``fs``, ``vs``,
    ``delta`` only for the Stribeck model); inside the band it is the straight line from
    ``offset`` at 0 to the value at ``±v_l``.

    Parameters
    ----------
    fc : (n,) ndarray
        Coulomb friction [N·m or N].
    fv : (n,) ndarray
        Viscous friction [N·m·s/rad or N·s/m].
    offset : (n,) ndarray
        Torque offset [N·m or N].
    v_l : (n,) ndarray
        Half-width of the linear band around zero velocity [rad/s or m/s], > 0.
    model : {'coulomb-viscous', 'stribeck'}
        The friction model.
    fs : (n,) ndarray, optional
        Static (breakaway) friction [N·m or N], Stribeck model only.
    vs : (n,) ndarray, optional
        Stribeck velocity [rad/s or m/s], > 0, Stribeck model only.
    delta : (n,) ndarray, optional
        Stribeck exponent, Stribeck model only.

    Raises
    ------
    InputError
        For an unknown model, missing Stribeck coefficients, or ``v_l``, ``vs`` not positive.
    """

    fc: np.ndarray
    fv: np.ndarray
    offset: np.ndarray
    v_l: np.ndarray
    model: str = 'coulomb-viscous'
    fs: np.ndarray | None = None
    vs: np.ndarray | None = None
    delta: np.ndarray | None = None

    def __post_init__(self):
        if self.model not in FRICTION_MODELS:
            raise InputError(f'friction model {self.model!r} unknown (choose from '
                             f'{", ".join(FRICTION_MODELS)})')
        if self.model == 'coulomb-viscous':
            self.fs, self.vs, self.delta = self.fc, np.ones_like(self.fc), np.ones_like(self.fc)
        elif any(x is None for x in (self.fs, self.vs, self.delta)):
            raise InputError('friction: the stribeck model needs fs, vs and delta per joint')
        if np.any(self.v_l <= 0) or np.any(self.vs <= 0):
            raise InputError('friction: v_l and vs must be positive')

    def _sliding(self, speed):
        """Magnitude of the Coulomb/Stribeck part and its derivative at ``speed`` >= 0."""
        e = np.exp(-(speed / self.vs) ** self.delta)
        level = self.fc + (self.fs - self.fc) * e
        slope = -(self.fs - self.fc) * e * self.delta / self.vs * (speed / self.vs) ** (
            self.delta - 1)
        return level, slope

    def torque(self, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Friction torque and its derivative with respect to velocity.

        Parameters
        ----------
        qd : (n,) ndarray
            Joint velocities [rad/s or m/s].

        Returns
        -------
        tau : (n,) ndarray
            Friction torque [N·m or N].
        dtau : (n,) ndarray
            ``d tau / d qd`` [N·m·s/rad or N·s/m].
        """
        speed = np.abs(qd)
        level, slope = self._sliding(np.maximum(speed, self.v_l))
        outside = speed >= self.v_l
        edge = level + self.fv * self.v_l
        tau = np.where(outside, level * np.sign(qd) + self.fv * qd, edge * qd / self.v_l)
        dtau = np.where(outside, slope + self.fv, edge / self.v_l)
        return tau + self.offset, dtau
