"""Effort columns in another unit or with the opposite sign of the URDF model's torques
(docs/methods.md §3, "Units and signs").

A torque logged in mN·m, a motor current without its drive gain, or a joint whose drive counts
torque the other way round still fits a linear model: the identification returns parameters 1000
times too large, or a joint's friction and inertias with the wrong sign, with a fit that may
look acceptable. The a-priori (URDF) model tells them apart: per joint j, its torque ``p_j``
(inertial parameters the URDF's) and the identification's actuator columns (friction, offset,
rotor inertia, fitted freely) are fitted to the measured torque ``y_j`` with a free gain,
``y_j ≈ s_j p_j + A_j f``. A recording as logged gives ``s_j ≈ 1`` up to the URDF's own error.

Hypotheses, each a correction ``c`` of the efforts (``effort.scale``):

- a common scale: most joints whose gain is determined have one far from 1, on the same side,
  within a factor ``FAR_FROM_ONE`` of each other (``diagnose_efforts``); the correction is the
  likely unit's factor (``UNITS``, when their geometric mean is within ``UNIT_MATCH`` of it) or
  ``1/s``;
- a joint's sign: ``s_j < 0`` with ``|s_j|`` near 1; the correction is −1;
- a joint's scale: ``|s_j|`` far from 1; the correction is ``1/s_j``, with its sign.

A joint's sign or scale is only tried when the identification fits some joint poorly
(``poorly_fitted``): one joint's wrong sign or gain spoils the fit, the joints sharing the
rigid-body parameters.

A gain counts when it is determined (standard deviation below ``DETERMINED`` of its value) and
far from 1 (negative, or off by more than ``FAR_FROM_ONE``). Its hypothesis explains the data
when the corrected efforts fit as a clean recording does, and the efforts as logged fit at least
``EXPLAINS`` times worse (the corrected data are the clean run), by either of two models:

- the URDF model (gain held at 1, actuator columns fitted), within ``CLEAN_FIT`` relative
  error; this is the only evidence of a common scale, which changes no least-squares fit;
- for one joint's sign or scale, when the identification's fit is poor: the identification run
  again on the corrected efforts (``Refit``), within ``CLEAN_FIT`` too. The rigid-body model
  couples the joints and pc-wls keeps the bodies physical, so a wrong sign or gain of one joint
  spoils the fit however rough the URDF (a Stäubli TX40 log with joint 1's sign flipped: the
  URDF model misses that joint by 29 % corrected, the identification goes from 69 % to 8 %).

The absolute bound matters on real logs: the wrist joints of a KUKA LWR4+ recording have gains
of −5 and 0.13 against their URDF (mostly friction, rough wrist inertias) yet its
identification fits 2.3 %; corrected, the URDF model still misses them by 27–60 %.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import IdentError
from . import metrics
from .estimators import TRUSTED_STD_PERCENT

#: A gain is determined when its standard deviation is below this fraction of its magnitude
#: (an identified parameter's trust limit).
DETERMINED = TRUSTED_STD_PERCENT / 100
#: A gain off by more than this factor (either way) is far from 1.
FAR_FROM_ONE = 3.0
#: The data as logged must miss the URDF model this many times more than the corrected data.
EXPLAINS = 2.0
#: Largest relative error of the corrected data (a clean recording's fit).
CLEAN_FIT = 0.2
#: Likely units of an effort logged in other units than N·m (or N): the factor of the value
#: logged per N·m, the unit's name.
UNITS = ((1e3, 'mN·m'), (1e2, 'N·cm'), (1e-3, 'kN·m'), (1 / 9.80665, 'kgf·m'),
         (8.850746, 'lbf·in'), (1e6, 'µN·m'))
#: A gain within this factor of a unit's factor names that unit.
UNIT_MATCH = 1.5


@dataclass
class UrdfGains:
    """The URDF model's torque fitted to each joint's measured torque with a free gain.

    Parameters
    ----------
    gain, std : (n,) ndarray
        Gain ``s_j`` and its standard deviation (inf where the URDF torque is nil after the
        actuator columns are fitted).
    measured, model : (n,) list of ndarray
        Per joint, the measured and the URDF model's torque with the actuator columns' fit
        removed [N·m or N].
    norm : (n,) ndarray
        Norm of each joint's measured torque (its rows in the regression).
    """

    gain: np.ndarray
    std: np.ndarray
    measured: list
    model: list
    norm: np.ndarray

    def determined(self) -> np.ndarray:
        """Whether each gain is determined (``DETERMINED``).

        Returns
        -------
        (n,) ndarray of bool
        """
        with np.errstate(invalid='ignore', divide='ignore'):
            return self.std < DETERMINED * np.abs(self.gain)

    def error(self, joints, correction) -> float:
        """Relative error of corrected efforts against the URDF model, gain 1.

        Parameters
        ----------
        joints : list of int
            The joints counted.
        correction : float
            Factor applied to their efforts.

        Returns
        -------
        float
            ``‖c y − p‖ / ‖c y_raw‖`` over those joints (``y`` and ``p`` without the actuator
            columns' fit; that fit scales with the data).
        """
        miss = sum(np.sum((self.measured[j] - self.model[j] / correction) ** 2) for j in joints)
        return float(np.sqrt(miss) / np.linalg.norm(self.norm[joints]))


def urdf_gains(measured: np.ndarray, prior: np.ndarray, w: np.ndarray | None = None,
               free: np.ndarray | None = None, mask: np.ndarray | None = None) -> UrdfGains:
    """Fit the URDF model's torque to each joint's measured torque with a free gain.

    Parameters
    ----------
    measured : (N, n) ndarray
        Measured joint torques [N·m or N].
    prior : (N, n) ndarray
        The a-priori (URDF) model's torques on the same samples.
    w : (N, n, nb) ndarray, optional
        The identification's base regressor.
    free : (nb,) ndarray of bool, optional
        Its columns fitted along with the gain (the actuator terms); none without ``w``.
    mask : (N, n) ndarray of bool, optional
        The joint equations used (False: left out near a reversal).

    Returns
    -------
    UrdfGains
    """
    n = measured.shape[1]
    gain, std, norm = np.zeros(n), np.full(n, np.inf), np.zeros(n)
    ys, ps = [], []
    for j in range(n):
        rows = slice(None) if mask is None else mask[:, j]
        y, p = measured[rows, j], prior[rows, j]
        rank = 0
        if w is not None and free is not None and free.any():
            a = w[rows, j][:, free]
            fit, _, rank, _ = np.linalg.lstsq(a, np.column_stack([y, p]), rcond=None)
            y, p = y - a @ fit[:, 0], p - a @ fit[:, 1]
        norm[j] = np.linalg.norm(measured[rows, j])
        ys.append(y)
        ps.append(p)
        pp = float(p @ p)
        dof = len(y) - rank - 1
        if pp <= 1e-24 * max(float(prior[rows, j] @ prior[rows, j]), 1e-300) or dof < 1:
            continue
        gain[j] = y @ p / pp
        rest = y - gain[j] * p
        std[j] = math.sqrt(float(rest @ rest) / dof / pp)
    return UrdfGains(gain, std, ys, ps, norm)


@dataclass
class Diagnosis:
    """A correction of the efforts that explains the data.

    Parameters
    ----------
    joint : int or None
        The joint corrected; None: every joint (a common scale).
    gain : float
        The fitted gain of the URDF model's torque.
    correction : float
        The factor to apply to the efforts (``effort.scale``).
    unit : str or None
        The unit the gain suggests, if any.
    before, after : float
        Relative error of the model that shows it, as logged and corrected.
    evidence : {'urdf', 'refit'}
        That model: the URDF model with friction fitted, or the identification run again.
    """

    joint: int | None
    gain: float
    correction: float
    unit: str | None
    before: float
    after: float
    evidence: str = 'urdf'

    def describe(self, joint_names: list[str]) -> str:
        """One clause naming the fault and the fix.

        Parameters
        ----------
        joint_names : list of str

        Returns
        -------
        str
        """
        model = 'the model, friction fitted,' if self.evidence == 'urdf' else \
            'the identification'
        fit = (f'{model} misses them by {100 * self.before:.0f} % as logged, by '
               f'{100 * self.after:.1f} % corrected')
        if self.joint is None:
            unit = f'in {self.unit}?' if self.unit else \
                'motor currents without drive gains, or another unit?'
            return (f'the efforts of every joint are {_number(self.gain)}× the URDF model\'s '
                    f'torques ({fit}): {unit} set effort.scale: {_number(self.correction, 6)}')
        name = joint_names[self.joint]
        if self.evidence == 'urdf':
            fit = fit.replace('them', 'it')
        if self.correction == -1:
            return (f'the effort of {name} has the opposite sign of its URDF model torque '
                    f'(gain {self.gain:.2f}; {fit}): set effort.scale: -1 for {name}')
        return (f'the effort of {name} is {_number(self.gain)}× its URDF model torque ({fit}): '
                f'set effort.scale: {_number(self.correction, 6)} for {name}')


@dataclass
class Refit:
    """The identification run again on corrected efforts.

    Parameters
    ----------
    measured, predicted : (N, n) ndarray
        The efforts as logged and the identification's fit of them [N·m or N].
    run : callable
        ``run(tau) -> predicted``: the identification's fit of other (N, n) torques; may raise
        ``IdentError``.
    """

    measured: np.ndarray
    predicted: np.ndarray
    run: Callable[[np.ndarray], np.ndarray]

    @property
    def logged(self) -> float:
        """Relative error of the fit of the efforts as logged."""
        return metrics.relative_error_percent(self.predicted, self.measured) / 100

    def error(self, factors: np.ndarray) -> float:
        """Relative error of the fit of the efforts multiplied per joint.

        Parameters
        ----------
        factors : (n,) ndarray

        Returns
        -------
        float
            inf when the identification fails on them.
        """
        tau = self.measured * factors
        try:
            return metrics.relative_error_percent(self.run(tau), tau) / 100
        except IdentError:
            return math.inf


def diagnose_efforts(gains: UrdfGains, refit: Refit | None = None,
                     poorly_fitted: bool = True) -> list[Diagnosis]:
    """The corrections of the efforts that explain the data (module docstring).

    A common scale is tried when at least half the joints whose gain is determined (two at
    least, unless the robot has one joint) have gains far from 1 on the same side, within
    ``FAR_FROM_ONE`` of their median (wrist joints, mostly friction, may have determined gains
    far from any other); its gain is their geometric mean, and it must explain every joint
    together.

    Parameters
    ----------
    gains : UrdfGains
        From ``urdf_gains``.
    refit : Refit, optional
        The identification run again, for one joint's sign or scale; without, the URDF model
        alone decides.
    poorly_fitted : bool
        Whether the identification fits some joint poorly; one joint's sign or scale is tried
        only then. A wrong sign or gain of one joint spoils the fit of some joint (the joints
        share the rigid-body parameters; not always its own); a well fitted joint whose URDF
        torque is mostly absorbed by its actuator columns (a wrist: rotor inertia, friction) can
        have a determined gain far from 1 and a URDF error that halves when corrected (4 % to
        2 %) without any fault.

    Returns
    -------
    list of Diagnosis
        A common scale alone, else one per joint with a wrong sign or scale; empty when the
        efforts match the URDF model (or no gain is determined).
    """
    determined = np.flatnonzero(gains.determined())
    if not len(determined):
        return []
    g = gains.gain[determined]
    far = (g < 0) | (np.abs(np.log(np.abs(g))) > math.log(FAR_FROM_ONE))
    for side in (g > 1, (g > 0) & (g < 1)):
        group = np.log(g[far & side])
        group = group[np.abs(group - np.median(group)) <= math.log(FAR_FROM_ONE)] \
            if len(group) else group
        if 2 * len(group) >= len(g) and (len(group) > 1 or len(gains.gain) == 1):
            common = _explained(gains, None, float(np.exp(np.mean(group))))
            if common is not None:
                return [common]
    found = (_explained(gains, int(j), float(gains.gain[j]), refit)
             for j, f in zip(determined, far)
             if f and poorly_fitted)
    return [d for d in found if d is not None]


def _explained(gains: UrdfGains, joint: int | None, gain: float,
               refit: Refit | None = None) -> Diagnosis | None:
    """The diagnosis of a gain far from 1 on one joint (None: every joint), if a correction
    explains the data: for a common scale the likely unit's factor first, then ``1/gain`` (two
    significant digits), or −1 for a sign; by the URDF model, else by the refit."""
    joints = list(range(len(gains.gain))) if joint is None else [joint]
    unit = _unit(gain) if joint is None else None
    if gain < 0 and abs(math.log(-gain)) <= math.log(FAR_FROM_ONE):
        candidates = [(-1.0, None)]
    else:
        candidates = ([(1 / unit[0], unit[1])] if unit else []) + [(float(f'{1 / gain:.2g}'),
                                                                     None)]
    for correction, name in candidates:
        before, after = gains.error(joints, 1.0), gains.error(joints, correction)
        if _clean(before, after):
            return Diagnosis(joint, gain, correction, name, before, after)
        if refit is not None and joint is not None:
            factors = np.ones(len(gains.gain))
            factors[joint] = correction
            after = refit.error(factors)
            if _clean(refit.logged, after):
                return Diagnosis(joint, gain, correction, name, refit.logged, after, 'refit')
    return None


def _clean(before: float, after: float) -> bool:
    """Whether corrected data fit as a clean recording does and the data as logged fit
    ``EXPLAINS`` times worse."""
    return after <= CLEAN_FIT and before >= EXPLAINS * after


def _unit(gain: float) -> tuple[float, str] | None:
    """The unit whose factor is within ``UNIT_MATCH`` of the gain, if any."""
    if gain <= 0:
        return None
    for factor, name in UNITS:
        if abs(math.log(gain / factor)) <= math.log(UNIT_MATCH):
            return factor, name
    return None


def _number(x: float, digits: int = 3) -> str:
    """A factor in ``digits`` significant digits, without an exponent: 0.001, 1060, 23.4."""
    return np.format_float_positional(x, precision=digits, unique=True, fractional=False,
                                      trim='-')
