"""Recorded velocity: whether the velocity a log carries (from the drives) can stand in for the
derivative of its position.

Both are compared after the same low-pass filter, over the rows the identification keeps:

* per joint, the relative RMS disagreement ``rms(v − dq/dt) / rms(dq/dt)`` (and, to say why, the
  least-squares scale ``a`` of ``v ≈ a·dq/dt``);
* over all joints, the lag ``τ`` of ``v(t) ≈ (dq/dt)(t − τ) ≈ dq/dt − τ·d²q/dt²`` (least
  squares), as a phase error at the cut-off frequency, ``2π·fc·|τ|``: the highest frequency the
  identification keeps is where a lag does the most harm, while the RMS disagreement only weighs
  the frequencies the motion happens to have.

The recorded velocity is used when both stay within ``AGREEMENT`` (2 %) on every joint. The
reasoning: the derivative of the low-passed position is accurate to far better than that for any
encoder (quantisation noise is cut by the filter before it is differentiated), and it is
consistent by construction with the positions and accelerations of the regressor, so it is the
safe default and rejecting a good recorded velocity costs little. A larger disagreement is a
systematic error of the recorded velocity (a drive filter that lags, a velocity that is a backward
difference, half a sample late; a scale or unit mismatch; a velocity estimated elsewhere in the
drive train), and 2 % of velocity is already of the order of the validation errors of a good
identification. Joints that hardly move (RMS velocity below ``STILL`` of the fastest joint's)
are judged against that floor rather than their own tiny motion.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .sources import short_source

AGREEMENT = 0.02
STILL = 1e-3


@dataclass
class VelocityCheck:
    """Agreement of a recorded velocity with the derivative of the position (module docstring).

    Parameters
    ----------
    joint_names : list of str
        (n,) joints.
    disagreement : (n,) ndarray
        Relative RMS disagreement per joint.
    scale : (n,) ndarray
        Least-squares scale ``a`` per joint.
    lag : float
        Lag ``τ`` [s] (positive: the recorded velocity comes late).
    cutoff_hz : float
        Low-pass cut-off [Hz].
    """

    joint_names: list[str]
    disagreement: np.ndarray
    scale: np.ndarray
    lag: float
    cutoff_hz: float

    @property
    def phase_error(self) -> float:
        """``2π·fc·|τ|``: the lag's relative error at the cut-off frequency."""
        return 2 * math.pi * self.cutoff_hz * abs(self.lag)

    @property
    def agrees(self) -> bool:
        """Whether disagreement and phase error are within ``AGREEMENT``."""
        return bool(np.all(self.disagreement <= AGREEMENT)) and self.phase_error <= AGREEMENT

    def summary(self, source: str, used: bool, forced: bool) -> str:
        """The decision in one line.

        Parameters
        ----------
        source : str
            The log.
        used : bool
            Whether the recorded velocity is used.
        forced : bool
            Whether the configuration decided (``use_recorded_velocity`` set).

        Returns
        -------
        str
            E.g. ``log.npz: recorded velocity used (agrees with d/dt position within 1.3 %)``.
        """
        j = int(np.argmax(self.disagreement))
        worst = 100 * float(self.disagreement[j])
        if self.agrees:
            why = f'agrees with d/dt position within {worst:.2g} %'
        elif worst > 100 * AGREEMENT:
            why = (f'differs from d/dt position by {worst:.3g} % on {self.joint_names[j]}, '
                   f'scale {self.scale[j]:.3g}')
        else:
            why = (f'lags d/dt position by {1e3 * self.lag:.2g} ms, a phase error of '
                   f'{100 * self.phase_error:.2g} % at the {self.cutoff_hz:g} Hz cut-off')
        if forced:
            why = f'as configured; {why}'
        return f'{short_source(source)}: recorded velocity {"used" if used else "ignored"} ({why})'


def check_velocity(recorded: np.ndarray, derived: np.ndarray, acceleration: np.ndarray,
                   joint_names: list[str], cutoff_hz: float) -> VelocityCheck:
    """Compare a filtered recorded velocity with the derivative of the filtered position.

    Parameters
    ----------
    recorded : (M, n) ndarray
        Low-passed recorded velocity [rad/s or m/s].
    derived : (M, n) ndarray
        Derivative of the low-passed position, same rows [rad/s or m/s].
    acceleration : (M, n) ndarray
        Derivative of ``derived`` [rad/s² or m/s²].
    joint_names : list of str
        (n,) joints.
    cutoff_hz : float
        Low-pass cut-off [Hz].

    Returns
    -------
    VelocityCheck
    """
    return VelocitySums().add(recorded, derived, acceleration).check(joint_names, cutoff_hz)


@dataclass
class VelocitySums:
    """The sums ``check_velocity`` takes over the rows, gathered block by block (long logs).

    Parameters
    ----------
    rows : int
        Rows added.
    derived2, difference2, product : (n,) ndarray or float
        Per joint: sums of ``derived²``, ``(recorded − derived)²``, ``recorded·derived``.
    acceleration2, lag_product : float
        Over all joints: sums of ``acceleration²`` and ``(recorded − derived)·acceleration``.
    """

    rows: int = 0
    derived2: np.ndarray | float = 0.0
    difference2: np.ndarray | float = 0.0
    product: np.ndarray | float = 0.0
    acceleration2: float = 0.0
    lag_product: float = 0.0

    def add(self, recorded: np.ndarray, derived: np.ndarray,
            acceleration: np.ndarray) -> VelocitySums:
        """Add rows (arguments as ``check_velocity``'s).

        Parameters
        ----------
        recorded, derived, acceleration : (M, n) ndarray

        Returns
        -------
        VelocitySums
            Itself.
        """
        difference = recorded - derived
        self.rows += len(derived)
        self.derived2 = self.derived2 + np.sum(derived ** 2, axis=0)
        self.difference2 = self.difference2 + np.sum(difference ** 2, axis=0)
        self.product = self.product + np.sum(recorded * derived, axis=0)
        self.acceleration2 += float(np.sum(acceleration ** 2))
        self.lag_product += float(np.sum(difference * acceleration))
        return self

    def check(self, joint_names: list[str], cutoff_hz: float) -> VelocityCheck:
        """The comparison of the rows added.

        Parameters
        ----------
        joint_names : list of str
            (n,) joints.
        cutoff_hz : float
            Low-pass cut-off [Hz].

        Returns
        -------
        VelocityCheck
        """
        size = np.sqrt(self.derived2 / self.rows)
        floor = max(STILL * float(size.max()), np.finfo(float).tiny)
        disagreement = np.sqrt(self.difference2 / self.rows) / np.maximum(size, floor)
        power = self.derived2
        scale = self.product / np.where(power > 0, power, 1.0)
        curvature = self.acceleration2
        lag = -self.lag_product / curvature if curvature > 0 else 0.0
        return VelocityCheck(list(joint_names), disagreement, scale, lag, cutoff_hz)
