"""Whole-robot identification pipeline (docs/methods.md §10): preprocess → regressor → base
parameters → OLS/WLS → validation on other data.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from ..data.datasets import Dataset
from ..data.plausibility import check_efforts, check_positions
from ..data.recorded_velocity import check_velocity
from ..data.signal_processing import (
    decimate_parallel,
    decimation_is_plain,
    differentiate,
    filter_padding,
    lowpass,
)
from ..data.timing import analyse
from ..errors import IdentError, InputError
from ..model.base_parameters import DEFAULT_RANK_TOLERANCE, BaseParameters, compute_base_parameters
from ..model.inertial import LinkInertial, collision_boxes, link_inertials
from ..model.regressor import FrictionModel, Regressor, RegressorSpec
from ..model.robot import RobotModel
from ..model.transmission import Transmission
from ..progress import Progress, advance, describe, expect
from ..schema import Schema
from . import metrics
from .estimators import ESTIMATORS, estimate, relative_std_percent
from .fit_check import check_fit

DEFAULT_CUTOFF_HZ = 10.0
#: Actuator columns that change sharply at a velocity reversal (Coulomb, Stribeck): built from
#: the nearly unfiltered motion (``Processed.qd_sharp``) and passed through the torques'
#: low-pass (parallel filtering).
SHARP_TERMS = ('fc', 'fs')
#: ``qd_sharp`` is the derivative of the positions low-passed at this multiple of the cut-off
#: (at most ``SHARP_RATE_FRACTION`` of the sample rate): enough to smooth encoder steps, little
#: enough to keep the reversals. With the cut-off's own velocity, the model sees each reversal
#: smeared twice, and on the friction arm of the demo the offsets came out 1.5 % off on
#: noise-free torques (0.36 % with this velocity).
SHARP_CUTOFF_FACTOR = 4.0
SHARP_RATE_FRACTION = 0.4
#: A ``qd_sharp`` below this fraction of the joint's peak speed is zero: the filter's residue
#: where the positions stand still, whose sign would be noise.
REST_FRACTION = 1e-6
TRIM_PERIODS = 3


class IdentificationConfig(Schema):
    """How to identify: model columns, filtering, estimator.

    The ``identify`` CLI verb, the identification node's parameters and the ``config`` section
    of RESULT.yaml are this model.

    Parameters
    ----------
    friction : {'none', 'coulomb-viscous', 'coulomb-viscous-offset', 'stribeck', \
'improved-stribeck'}
        Friction model per actuator; the Stribeck models' shape (``vs``, ``v_l``, and
        ``delta`` unless ``stribeck_exponent`` fixes it) is found by variable projection
        (``friction_shape``).
    stribeck_exponent : float or None
        Stribeck models: ``delta`` of every actuator, held (2: the Gaussian model of
        stribeck_friction_sa_ga_2020); None: identified.
    friction_search : {'local', 'sa-ga'}
        Stribeck models: search of the shape parameters, a bounded local search from the best
        point of a grid, or the SA-GA (``optim.evolution``).
    rotor_inertia : bool
        Identify one rotor inertia per actuator.
    estimator : {'ols', 'wls', 'pc-wls'}
        Least-squares estimator; ``pc-wls``: WLS over the standard parameters subject to
        physical consistency (``pc_wls``).
    cutoff_hz : float or None
        Low-pass cut-off of positions and torques [Hz]; None: the dataset's ``cutoff_hz``,
        else 10 Hz.
    filter_order : int
        Butterworth order of one pass.
    use_recorded_velocity : bool or None
        Use the recorded velocity (filtered) instead of differentiating q; None: use it when
        the log carries one that agrees with the derivative of q (``recorded_velocity``).
    decimate : int
        Parallel decimation factor; 1: none; 0: automatic, the largest factor whose
        anti-alias filter (0.8 × new Nyquist) stays above ``cutoff_hz``. Filtered residuals
        are correlated over ~fs/cutoff samples; decimating to the filter's bandwidth keeps the
        least-squares standard deviations honest (Gautier).
    rank_tolerance : float
        Relative QR rank tolerance of the base parameters.
    seed : int
        Seed of the random samples for the base parameters.
    reversal_window : float
        [s]; the equations of a joint within this time of a velocity reversal of an actuator
        acting on it are left out of the estimation (0: keep all). Around a reversal, joints
        stick for a moment and ``fc sign(qd)`` does not hold; the low-pass filter spreads that
        error over about one cut-off period (``1 / cutoff_hz`` is a good window).
    prior_weight : float or None
        pc-wls: weight of the prior toward the URDF; None: chosen on held-out data.
    total_mass : float or None
        pc-wls: the sum of the masses of the moving bodies [kg] (the fixed base excluded), when
        known (e.g. weighed).
    mass_tolerance : float or None
        pc-wls: each body's mass within this fraction of the URDF's (0.2: ±20 %); bodies the
        URDF leaves without mass are not bounded.
    com_in_collision_box : bool
        pc-wls: each body's centre of mass inside the box around its collision geometry.
    """

    friction: FrictionModel = Field(
        'coulomb-viscous-offset', description='friction model per actuator: none, '
        'coulomb-viscous, coulomb-viscous-offset, stribeck or improved-stribeck')
    stribeck_exponent: PositiveFloat | None = Field(
        2.0, description='Stribeck models: delta of every actuator (unset: identified)')
    friction_search: Literal['local', 'sa-ga'] = Field(
        'local', description='Stribeck models: search of vs, v_l (delta): local or sa-ga')
    rotor_inertia: bool = Field(False, description='identify one rotor inertia per actuator')
    estimator: Literal[ESTIMATORS] = Field('pc-wls', description='least-squares estimator: ols, '
                                           'wls or pc-wls (physically consistent)')
    cutoff_hz: PositiveFloat | None = Field(
        None, description="low-pass cut-off of q and tau, Hz (unset: the dataset's, else 10)")
    filter_order: PositiveInt = Field(4, description='Butterworth order of one filter pass')
    use_recorded_velocity: bool | None = Field(
        None, description='filter the recorded velocity instead of differentiating q (unset: '
        'when it agrees with dq/dt)')
    decimate: NonNegativeInt = Field(0, description='parallel decimation factor (0: automatic,'
                                     ' 1: none)')
    rank_tolerance: PositiveFloat = Field(DEFAULT_RANK_TOLERANCE,
                                          description='relative QR rank tolerance')
    seed: int = Field(0, description='seed of the random samples for the base parameters')
    reversal_window: NonNegativeFloat = Field(
        0.0, description='s: leave out joint equations this close to a velocity reversal')
    prior_weight: PositiveFloat | None = Field(
        None, description='pc-wls: weight of the prior toward the URDF (unset: chosen on '
        'held-out data)')
    total_mass: PositiveFloat | None = Field(
        None, description='pc-wls: sum of the moving body masses (base excluded), kg (unset: '
        'free)')
    mass_tolerance: PositiveFloat | None = Field(
        None, description="pc-wls: body masses within this fraction of the URDF's (unset: free)")
    com_in_collision_box: bool = Field(
        False, description='pc-wls: centres of mass inside the collision geometry boxes')

    @property
    def spec(self) -> RegressorSpec:
        """The regressor columns (friction model, rotor inertia)."""
        return RegressorSpec(friction=self.friction, rotor_inertia=self.rotor_inertia)


@dataclass
class Processed:
    """Signals ready for the regressor, in the robot's joint order.

    Parameters
    ----------
    source : str
        The dataset.
    fs : float
        Sample rate before decimation [Hz].
    cutoff_hz : float
        Cut-off of the low-pass [Hz].
    order : int
        Butterworth order of one pass.
    trim : int
        Samples to drop at each end of each segment once the regressor is built.
    t : (M,) ndarray
        [s], uniform within each segment.
    q, qd, qdd, tau : (M, n) ndarray
        Filtered positions, velocities, accelerations and torques.
    segments : tuple of (int, int)
        ``[start, stop)`` rows of the segments the log was split into at gaps, each filtered and
        differentiated on its own; empty: one segment.
    summary : list of str
        What the preprocessing did (time base, recorded velocity), one line each.
    qd_sharp : (M, n) ndarray or None
        Velocities for the sharp friction columns (``SHARP_CUTOFF_FACTOR``); None: ``qd``.
    """

    source: str
    fs: float
    cutoff_hz: float
    order: int
    trim: int
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    segments: tuple[tuple[int, int], ...] = ()
    summary: list[str] = field(default_factory=list)
    qd_sharp: np.ndarray | None = None

    @property
    def sharp_velocity(self) -> np.ndarray:
        """(M, n) velocities the sharp friction terms are evaluated at [rad/s or m/s]."""
        return self.qd if self.qd_sharp is None else self.qd_sharp

    def spans(self) -> list[tuple[int, int]]:
        """The ``[start, stop)`` rows of each segment.

        Returns
        -------
        list of (int, int)
            ``segments``, or the whole range.
        """
        return list(self.segments) or [(0, len(self.t))]

    def decimation(self, requested: int) -> int:
        """The parallel decimation factor.

        Parameters
        ----------
        requested : int
            The configured factor; 0: automatic.

        Returns
        -------
        int
            ``requested``, or ``floor(0.4 fs / cutoff_hz)`` (at least 1) for 0, the ratio
            rounded to 6 decimals first (a rate of 200.00000000000006 Hz is 200 Hz).
        """
        return requested or max(1, math.floor(round(0.4 * self.fs / self.cutoff_hz, 6)))

    def trimmed(self, x: np.ndarray) -> np.ndarray:
        """An array without the ``trim`` samples at each end of each segment.

        Parameters
        ----------
        x : (M, ...) ndarray

        Returns
        -------
        (M − 2·trim·segments, ...) ndarray
        """
        return np.concatenate([x[a + self.trim:b - self.trim] for a, b in self.spans()])

    def reversal_mask(self, gear: np.ndarray, factor: int, window: float) -> np.ndarray:
        """Which joint equations lie away from velocity reversals.

        Parameters
        ----------
        gear : (n, n) ndarray
            Normalised gear matrix; motor velocities are ``gear @ qd``.
        factor : int
            Decimation factor of the rows (as in ``regression_data``).
        window : float
            [s].

        Returns
        -------
        (M', n) ndarray of bool
            For the rows of ``regression_data(..., factor)``: False where joint j is within
            ``window`` of a sign change of the velocity of an actuator acting on it
            (``gear[m, j] != 0``).
        """
        near = np.concatenate([self._near_reversal(a, b, gear, factor, window)
                               for a, b in self.spans()])
        return ~(near.astype(float) @ (gear != 0).astype(float) > 0)

    def _near_reversal(self, start, stop, gear, factor, window) -> np.ndarray:
        """(rows, actuators) of one segment: within ``window`` of a velocity reversal."""
        t = self.t[start:stop]
        return near_reversal(self.qd[start:stop] @ gear.T, t,
                             t[self.trim:len(t) - self.trim][::factor], window)


def near_reversal(u: np.ndarray, t: np.ndarray, t_rows: np.ndarray,
                  window: float) -> np.ndarray:
    """Which rows lie within a window of a velocity reversal of each actuator.

    Parameters
    ----------
    u : (M, m) ndarray
        Motor velocities of consecutive samples.
    t : (M,) ndarray
        Their times [s].
    t_rows : (K,) ndarray
        Times of the rows to judge [s].
    window : float
        [s].

    Returns
    -------
    (K, m) ndarray of bool
        True where a sign change of motor m's velocity (midway between the samples) is
        closer than ``window``.
    """
    near = np.zeros((len(t_rows), u.shape[1]), dtype=bool)
    for m in range(u.shape[1]):
        flips = np.flatnonzero(np.sign(u[1:, m]) != np.sign(u[:-1, m]))
        crossings = 0.5 * (t[flips] + t[flips + 1])
        if len(crossings):
            k = np.clip(np.searchsorted(crossings, t_rows), 1, len(crossings)) - 1
            gap = np.minimum(np.abs(t_rows - crossings[k]),
                             np.abs(t_rows - crossings[np.minimum(k + 1, len(crossings) - 1)]))
            near[:, m] = gap < window
    return near


def preprocess(dataset: Dataset, robot: RobotModel, config: IdentificationConfig) -> Processed:
    """Resample, filter, differentiate and trim a dataset (docs/methods.md §3).

    The time base of the log is worked out first (``timing.analyse``): the rows go onto a
    uniform grid at the nominal rate, on the fixed-rate controller's cycles or resampled by
    their stamps, and the log is split into segments at gaps too long to bridge; segments too
    short for the filter are dropped. On each segment, positions and torques pass a zero-phase
    Butterworth low-pass; qd and qdd are central differences of the filtered positions, or qd
    the filtered recorded velocity (``recorded_velocity``: when asked, or when it agrees with
    the derivative of q). The sharp friction columns get their own velocity, ``qd_sharp``, from
    the positions (or the recorded velocity) low-passed at ``SHARP_CUTOFF_FACTOR`` × the
    cut-off. ``trim`` is ``TRIM_PERIODS`` cut-off periods (``trim_samples``):
    ``regression_data`` drops it at each end of each segment, where the filter's start-up
    transients and the one-sided differences are inaccurate (with one period, simulated data
    still showed 10× larger torque errors in the 0.2 s next to each end).

    Parameters
    ----------
    dataset : Dataset
        The recording.
    robot : RobotModel
        Its joints define the column order.
    config : IdentificationConfig
        Cut-off, filter order, recorded velocity.

    Returns
    -------
    Processed
        With one summary line on the time base and, when a velocity was recorded, one on its
        use.

    Raises
    ------
    InputError
        If the joints do not match the robot, an effort column is constant or positions lie
        far outside the URDF limits (``data.plausibility``), the recorded velocity is asked for
        but absent, the sample rate is implausible, the cut-off is above Nyquist, or there are
        too few samples.
    """
    d, base, cutoff_hz, sharp_hz = time_base(dataset, robot, config)
    fs, order = base.rate, config.filter_order
    trim = trim_samples(fs, cutoff_hz)
    grids = [base.grid(segment) for segment in base.segments]
    try:
        q_raw = base.resample(d.position, True)
        q = [lowpass(x, fs, cutoff_hz, order) for x in q_raw]
        tau = [lowpass(x, fs, cutoff_hz, order) for x in base.resample(d.effort, False)]
        qd = [differentiate(x, t) for x, t in zip(q, grids)]
        qdd = [differentiate(x, t) for x, t in zip(qd, grids)]
        qd_sharp = [differentiate(lowpass(x, fs, sharp_hz, order), t)
                    for x, t in zip(q_raw, grids)] if sharp_hz > cutoff_hz else qd
        summary = [base.summary()]
        if d.velocity is not None:
            v_raw = base.resample(d.velocity, True)
            recorded = [lowpass(x, fs, cutoff_hz, order) for x in v_raw]
            use, line = _velocity_choice(d, recorded, qd, qdd, trim, cutoff_hz,
                                         config.use_recorded_velocity)
            summary.append(line)
            if use:
                qd, qdd = recorded, [differentiate(x, t) for x, t in zip(recorded, grids)]
                qd_sharp = [lowpass(x, fs, sharp_hz, order) for x in v_raw] \
                    if sharp_hz > cutoff_hz else qd
    except InputError as exc:
        raise InputError(f'{d.source}: {exc}') from None
    stops = np.cumsum([len(g) for g in grids])
    segments = tuple((int(b - len(g)), int(b)) for b, g in zip(stops, grids))
    return Processed(d.source, fs, cutoff_hz, order, trim, *(np.concatenate(x) for x in
                     (grids, q, qd, qdd, tau)),
                     segments=segments if len(segments) > 1 else (), summary=summary,
                     qd_sharp=_at_rest_zero(np.concatenate(qd_sharp)))


def time_base(dataset: Dataset, robot: RobotModel, config: IdentificationConfig) -> tuple:
    """The first steps of ``preprocess``: the dataset in the robot's joint order, its time base
    without the segments too short for the filter, and the cut-offs.

    Parameters
    ----------
    dataset : Dataset
        The recording.
    robot : RobotModel
        Its joints define the column order.
    config : IdentificationConfig
        Cut-off, filter order, recorded velocity.

    Returns
    -------
    dataset : Dataset
        Aligned to the robot's joints.
    base : timing.TimeBase
        Its time base (``timing.analyse``), the short segments dropped.
    cutoff_hz, sharp_hz : float
        Cut-off of positions and torques, and of ``qd_sharp`` [Hz].

    Raises
    ------
    InputError
        As ``preprocess``.
    """
    d = dataset.aligned(robot)
    check_efforts(d)
    check_positions(d, robot)
    cutoff_hz = config.cutoff_hz or d.cutoff_hz or DEFAULT_CUTOFF_HZ
    order = config.filter_order
    if config.use_recorded_velocity and d.velocity is None:
        raise InputError(f'{d.source}: no velocity recorded, cannot use recorded velocity')
    base = analyse(d.t, d.position, cutoff_hz, source=d.source, clock=d.clock,
                   repeats=d.repeat_mask(), first_row=d.first_row)
    fs = base.rate
    base = base.without_short(max(2 * trim_samples(fs, cutoff_hz), filter_padding(order)))
    sharp_hz = min(SHARP_CUTOFF_FACTOR * cutoff_hz, SHARP_RATE_FRACTION * fs)
    return d, base, cutoff_hz, sharp_hz


def _at_rest_zero(qd: np.ndarray) -> np.ndarray:
    """Velocities with the low-pass filter's residue at standstill set to zero."""
    peak = np.max(np.abs(qd), axis=0, initial=0.0)
    return np.where(np.abs(qd) < REST_FRACTION * peak, 0.0, qd)


def trim_samples(fs: float, cutoff_hz: float) -> int:
    """Samples trimmed at each end of each segment: ``TRIM_PERIODS`` cut-off periods.

    Parameters
    ----------
    fs : float
        Sample rate [Hz].
    cutoff_hz : float
        Low-pass cut-off [Hz].

    Returns
    -------
    int
        ``ceil(3 fs / cutoff_hz)``, the ratio rounded to 6 decimals first (a rate of
        200.00000000000006 Hz trims 60 samples at 10 Hz, not 61).
    """
    return math.ceil(round(TRIM_PERIODS * fs / cutoff_hz, 6))


def _velocity_choice(d: Dataset, recorded, derived, acceleration, trim, cutoff_hz,
                     use: bool | None):
    """(whether to use the recorded velocity, summary line); per segment: the filtered recorded
    velocity, the derivative of q and its derivative."""
    inner = [slice(trim, len(x) - trim) for x in derived]
    check = check_velocity(*(np.concatenate([x[s] for x, s in zip(xs, inner)])
                             for xs in (recorded, derived, acceleration)), d.joint_names,
                           cutoff_hz)
    chosen = check.agrees if use is None else use
    return chosen, check.summary(d.source, chosen, use is not None)


def regression_data(regressor: Regressor, base: BaseParameters, p: Processed,
                    factor: int = 1, payload=None) -> tuple[np.ndarray, np.ndarray]:
    """Base regressor and torques of preprocessed data, trimmed and decimated (segment by
    segment, stacked).

    Parallel filtering: the torques were low-pass filtered, so the Coulomb and Stribeck
    columns (``SHARP_TERMS``: discontinuous or steep at reversal) pass the same zero-phase
    filter; the other columns are smooth
    functions of the filtered positions, which that filter leaves unchanged. For the same
    reason, when the decimation's anti-alias cut-off is above the preprocessing cut-off, the
    regressor is only evaluated at the kept samples (``decimate_parallel``).

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    p : Processed
        Preprocessed data.
    factor : int
        Decimation factor.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the 10 columns of a payload in this frame (``PayloadFrame.regressor``).

    Returns
    -------
    w : (M', n, nb) or (M', n, nb + 10) ndarray
        Base regressor (then the payload regressor).
    tau : (M', n) ndarray
        Torques [N·m or N].
    """
    parts = [_segment_regression(regressor, base, p, slice(a, b), factor, payload)
             for a, b in p.spans()]
    return tuple(np.concatenate(x) for x in zip(*parts))


def _segment_regression(regressor, base, p: Processed, segment: slice, factor: int, payload):
    """``regression_data`` of one segment."""
    q, qd, qdd, tau = p.q[segment], p.qd[segment], p.qdd[segment], p.tau[segment]
    kept, plain = kept_rows(p, len(q), factor)
    full = regressor.compute(q[kept], qd[kept], qdd[kept])
    w = full[:, :, base.independent]
    if payload is not None:
        w = np.concatenate([w, payload.regressor(full)], axis=2)
    tau = tau[kept]
    sharp = sharp_columns(regressor, base)
    if sharp:
        w[:, :, sharp] = filtered_sharp_columns(regressor, base, sharp, p, segment)[kept]
    if plain:
        return w, tau
    return tuple(decimate_parallel([w, tau], factor, p.fs, p.cutoff_hz, p.order))


def kept_rows(p: Processed, length: int, factor: int) -> tuple[np.ndarray, bool]:
    """The rows of a segment the regression keeps, before any decimation filter.

    Parameters
    ----------
    p : Processed
        Preprocessed data.
    length : int
        Rows of the segment.
    factor : int
        Decimation factor.

    Returns
    -------
    kept : (M,) ndarray of int
        Segment rows: every ``factor``-th of the trimmed ones when plain slicing decimates
        (``decimation_is_plain``), else all trimmed ones (``decimate_parallel`` follows).
    plain : bool
        Whether slicing was the decimation.
    """
    rows = np.arange(p.trim, length - p.trim)
    plain = factor == 1 or decimation_is_plain(factor, p.fs, p.cutoff_hz)
    return (rows[::factor] if plain else rows), plain


def sharp_columns(regressor: Regressor, base: BaseParameters) -> list[int]:
    """Base columns of the Coulomb and Stribeck terms (``SHARP_TERMS``).

    Parameters
    ----------
    regressor : Regressor
    base : BaseParameters

    Returns
    -------
    list of int
        Indices into the base parameters.
    """
    return [i for i, c in enumerate(base.independent)
            if regressor.names[c].startswith(SHARP_TERMS)]


def filtered_sharp_columns(regressor: Regressor, base: BaseParameters, sharp: list[int],
                           p: Processed, segment: slice) -> np.ndarray:
    """The sharp base columns of one segment, built from its motion and low-pass filtered like
    the torques (parallel filtering).

    Parameters
    ----------
    regressor : Regressor
        With the friction shape to use.
    base : BaseParameters
    sharp : list of int
        ``sharp_columns``.
    p : Processed
    segment : slice
        Rows of one segment of ``p``.

    Returns
    -------
    (M, n, len(sharp)) ndarray
        Every row of the segment.
    """
    columns = base.independent[sharp] - regressor.n_inertial
    full = regressor.actuator_columns(p.sharp_velocity[segment], p.qdd[segment], columns)
    moving = np.any(full != 0, axis=0)           # a column acts on the joints its actuator drives
    full[:, moving] = lowpass(full[:, moving], p.fs, p.cutoff_hz, p.order)
    return full


@dataclass
class IdentifiedModel:
    """An identified dynamic model: everything needed to predict joint torques.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    config : IdentificationConfig
        How it was identified.
    transmission : Transmission
        Actuator coupling of the friction and rotor-inertia columns.
    base : BaseParameters
        The base-parameter mapping.
    values, std : (nb,) ndarray
        Base parameters and their standard deviations.
    stats : dict
        Identification statistics (samples, condition number, residuals, data).
    standard : (p,) ndarray or None
        Standard parameters (regressor column order) behind ``values``: those of ``pc-wls``,
        or for OLS and WLS the ones nearest to the URDF's (``standard_parameters_near``).
        None for a model read from an older RESULT.yaml.
    friction_shape : dict of str to (n,) ndarray or None
        Stribeck models: the identified ``vs``, ``delta``, ``v_l`` per actuator.
    """

    robot: RobotModel
    config: IdentificationConfig
    transmission: Transmission
    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    stats: dict = field(default_factory=dict)
    standard: np.ndarray | None = None
    friction_shape: dict | None = None

    @property
    def regressor(self) -> Regressor:
        """The identification regressor of this model."""
        return Regressor(self.robot, self.config.spec, self.transmission, self.friction_shape)

    @property
    def rel_std_percent(self) -> np.ndarray:
        """(nb,) relative standard deviation of each base parameter [%]."""
        return relative_std_percent(self.values, self.std)

    def predict(self, processed: Processed) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and measured joint torques of preprocessed data.

        Parameters
        ----------
        processed : Processed

        Returns
        -------
        predicted, measured : (M', n) ndarray
            Trimmed, not decimated [N·m or N].
        """
        w, tau = regression_data(self.regressor, self.base, processed)
        return w @ self.values, tau

    def links(self) -> list[LinkInertial]:
        """Mass, centre of mass, inertia and physical consistency of every body.

        Returns
        -------
        list of LinkInertial
            One per moving joint (empty when ``standard`` is None).
        """
        if self.standard is None:
            return []
        return link_inertials(self.robot, self.standard[:10 * self.robot.link_count])

    def actuator_values(self) -> dict[str, list]:
        """Rotor inertia and friction per actuator.

        Returns
        -------
        dict of str to list
            ``{'Ia': [...], 'fv': [...], 'fc': [...], 'fs': [...], 'offset': [...]}`` for the
            terms in the model, one value per actuator, and the Stribeck shape (``vs``,
            ``delta``, ``v_l``); an entry is None when that parameter is not a base parameter
            on its own (regrouped with others).
        """
        reg = self.regressor
        out = {}
        for term in self.config.spec.actuator_terms:
            vals = []
            for m in range(self.robot.n):
                b = self.base.single_column_base(reg.actuator_index(term, m))
                vals.append(None if b is None else float(self.values[b]))
            out[term] = vals
        out.update({k: v.tolist() for k, v in reg.friction_shape.items()})
        return out


def identify(robot: RobotModel, datasets: list[Dataset],
             config: IdentificationConfig, progress: Progress = None) -> IdentifiedModel:
    """Identify the base parameters from one or more datasets of the same robot.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : iterable of Dataset
        Recordings, all through the same transmission. Each is reduced to the rows the
        regression keeps, block by block (``blockwise``; the Stribeck models' shape search
        needs them preprocessed whole); a generator lets each go once it is reduced.
    config : IdentificationConfig
        Model columns, filtering, estimator.
    progress : callable or object with ``update(n)``, optional
        Told of the work (``ident_core.progress``): per recording, the blocks of its two passes
        (``blockwise.reduce``) or one step (preprocessed whole), the blocks of the regressor
        (``blockwise.regression``), then one step for the estimator.

    Returns
    -------
    IdentifiedModel

    Raises
    ------
    InputError
        For bad data or settings, or datasets with different transmissions.
    ExcitationError
        If the data leave some base parameters unexcited.
    """
    datasets = iter(datasets)
    first = next(datasets, None)
    if first is None:
        raise InputError('identify: no dataset given')
    transmission = first.transmission_for(robot)
    regressor = Regressor(robot, config.spec, transmission)
    base = compute_base_parameters(regressor, seed=config.seed, tolerance=config.rank_tolerance)
    search = {}
    if config.spec.shape_terms:
        from .friction_shape import identify_friction_shape

        datasets = [first, *datasets]
        _same_transmission(datasets, robot, transmission)
        expect(progress, len(datasets))
        processed = []
        for d in datasets:
            describe(progress, d.source)
            processed.append(preprocess(d, robot, config))
            advance(progress)
        stacked = stack_processed(regressor, base, processed, config)
        shape, stacked, search = identify_friction_shape(regressor, base, processed, stacked,
                                                         config)
        regressor = Regressor(robot, config.spec, transmission, shape)
        sources = [(d.source, d.samples) for d in datasets]
        del processed, datasets
    else:
        from .blockwise import reduce

        kept = [reduce(first, regressor, base, config, progress)]
        del first                                 # a long recording goes once it is reduced
        kept += [reduce(_same_transmission([d], robot, transmission, kept[0].source)[0],
                        regressor, base, config, progress) for d in datasets]
        sources = [(k.source, k.samples) for k in kept]
        describe(progress, 'regressor')
        stacked = stack_kept(regressor, base, kept, progress=progress)
        del kept
    w, tau, mask = stacked.w, stacked.tau, stacked.mask
    expect(progress, 1)
    describe(progress, f'{config.estimator} estimate')
    try:
        est, standard, extra = run_estimator(regressor, base, w, tau, mask, config)
    except IdentError as exc:
        rows = ', '.join(f'{source} ({samples} rows)' for source, samples in sources)
        raise type(exc)(f'{rows}: {exc}') from None
    advance(progress)
    predicted = w @ est.values
    check_fit(predicted, tau, w @ base.project(prior_standard_parameters(regressor)),
              list(robot.joint_names), ', '.join(source for source, _ in sources))
    stats = {'data': [source for source, _ in sources], 'samples': int(len(tau)),
             'equations_left_out': int(mask.size - mask.sum()),
             'decimation': stacked.decimation,
             'base_parameter_count': base.count,
             'condition_number': est.condition_number,
             'rank_gap': base.rank_gap,
             'residual_rms': metrics.rmse(predicted, tau).tolist(),
             'relative_error_percent': metrics.relative_error_percent(predicted, tau),
             'preprocessing': stacked.preprocessing, **search, **extra}
    return IdentifiedModel(robot, config, transmission, base, est.values, est.std, stats,
                           standard, regressor.friction_shape or None)


def _same_transmission(datasets: list[Dataset], robot: RobotModel, transmission: Transmission,
                       first: str | None = None) -> list[Dataset]:
    """The datasets, after checking that they all go through ``transmission`` (that of
    ``first``, default the first dataset)."""
    first = first or datasets[0].source
    for d in datasets:
        if not d.transmission_for(robot).same_as(transmission):
            raise InputError(f'{d.source}: transmission differs from {first}')
    return datasets


@dataclass
class StackedRegression:
    """The regression rows of several datasets, stacked.

    Parameters
    ----------
    w : (N, n, nb) or (N, n, nb + 10) ndarray
        Base regressor (with a payload: then the payload regressor).
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    mask : (N, n) ndarray of bool
        False for joint equations near a velocity reversal (``reversal_window``).
    decimation : list of int
        Decimation factor per dataset.
    preprocessing : list of str
        ``Processed.summary`` of every dataset.
    """

    w: np.ndarray
    tau: np.ndarray
    mask: np.ndarray
    decimation: list[int]
    preprocessing: list[str]


def stack_regression(regressor: Regressor, base: BaseParameters, datasets: list[Dataset],
                     config: IdentificationConfig, payload=None) -> StackedRegression:
    """Preprocess datasets and stack their regression rows (``regression_data``).

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    datasets : list of Dataset
        Recordings of the robot.
    config : IdentificationConfig
        Filtering, decimation, reversal window.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the payload regressor in this frame.

    Returns
    -------
    StackedRegression

    Raises
    ------
    InputError
        For bad data (``preprocess``).
    """
    processed = [preprocess(d, regressor.robot, config) for d in datasets]
    return stack_processed(regressor, base, processed, config, payload)


def stack_processed(regressor: Regressor, base: BaseParameters, processed: list[Processed],
                    config: IdentificationConfig, payload=None) -> StackedRegression:
    """Stack the regression rows of preprocessed recordings (``stack_regression`` without the
    preprocessing).

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    processed : list of Processed
        ``preprocess`` of each recording.
    config : IdentificationConfig
        Decimation, reversal window.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the payload regressor in this frame.

    Returns
    -------
    StackedRegression
    """
    parts, masks, factors, summary = [], [], [], []
    for p in processed:
        summary += p.summary
        factors.append(p.decimation(config.decimate))
        parts.append(regression_data(regressor, base, p, factors[-1], payload))
        masks.append(p.reversal_mask(regressor.gear, factors[-1], config.reversal_window))
    w, tau = (np.concatenate(x) for x in zip(*parts))
    return StackedRegression(w, tau, np.concatenate(masks), factors, summary)


def stack_kept(regressor: Regressor, base: BaseParameters, kept: list,
               payload=None, progress: Progress = None) -> StackedRegression:
    """Stack the regression rows of recordings reduced by ``blockwise.reduce``.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    kept : list of blockwise.KeptRows
        One per recording.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the payload regressor in this frame.
    progress : callable or object with ``update(n)``, optional
        Told of the regressor's blocks (``blockwise.regression``).

    Returns
    -------
    StackedRegression
    """
    from .blockwise import regression

    parts = [regression(regressor, base, k, payload, progress) for k in kept]
    w = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
    tau = np.concatenate([p[1] for p in parts])
    return StackedRegression(w, tau, np.concatenate([k.mask for k in kept]),
                             [k.factor for k in kept], [line for k in kept for line in k.summary])


def run_estimator(regressor: Regressor, base: BaseParameters, w: np.ndarray, tau: np.ndarray,
                  mask: np.ndarray | None, config: IdentificationConfig) -> tuple:
    """Run the configured estimator on stacked regression data.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    mask : (N, n) ndarray of bool or None
        False for joint equations to leave out.
    config : IdentificationConfig
        The estimator and, for pc-wls, its bounds and prior weight.

    Returns
    -------
    estimate : Estimate
        Base parameters, covariance, residual deviations.
    standard : (p,) ndarray
        The standard parameters behind them (``IdentifiedModel.standard``).
    statistics : dict
        The estimator's own entries of the identification statistics (pc-wls: prior weight,
        its held-out scores, how the standard deviations were obtained).

    Raises
    ------
    InputError
        For bad data or bounds that admit no solution.
    ExcitationError
        If the data leave some base parameters unexcited.
    """
    prior = prior_standard_parameters(regressor)
    if config.estimator != 'pc-wls':
        est = estimate(w, tau, config.estimator, base.names, mask=mask)
        near = base.standard_parameters_near(est.values, prior, standard_scale(regressor))
        return est, near, {}
    from .pc_wls import estimate_pc_wls

    est = estimate_pc_wls(w, tau, base, physical_constraints(regressor, config), mask=mask,
                          prior_weight=config.prior_weight, names=base.names)
    extra = {'prior_weight': est.prior_weight,
             'prior_weight_scores': {str(k): v for k, v in est.prior_weight_scores.items()},
             'std_method': 'WLS linearisation (constraints ignored: an upper bound where one '
                           'binds)'}
    return est, est.standard, extra


def prior_standard_parameters(regressor: Regressor) -> np.ndarray:
    """The a-priori standard parameters: the URDF's inertial ones, zero actuator terms.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.

    Returns
    -------
    (p,) ndarray
        Regressor column order.
    """
    actuators = np.zeros(regressor.n_columns - regressor.n_inertial)
    return np.concatenate([regressor.robot.standard_parameters(), actuators])


def standard_scale(regressor: Regressor) -> np.ndarray:
    """Typical magnitude of each standard parameter, to compare them across units.

    Per body ``[m0, m0·L (3), m0·L² (6)]`` with ``m0`` the URDF mass (at least a tenth of the
    mean) and ``L = 0.1 m``; rotor inertias ``m0·L²`` of the joint's body; friction and
    offsets 1.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.

    Returns
    -------
    (p,) ndarray
        [kg, kg·m, kg·m², N·m·s/rad, N·m].
    """
    masses = regressor.robot.standard_parameters()[0::10]
    m0 = np.maximum(masses, 0.1 * max(float(np.mean(masses)), 1e-3))
    length = 0.1
    per_body = np.outer(m0, [1.0] + [length] * 3 + [length ** 2] * 6).ravel()
    scale = np.ones(regressor.n_columns)
    scale[:regressor.n_inertial] = per_body
    for m in range(regressor.robot.n):
        if 'Ia' in regressor.spec.actuator_terms:
            scale[regressor.actuator_index('Ia', m)] = m0[min(m, len(m0) - 1)] * length ** 2
    return scale


def physical_constraints(regressor: Regressor, config: IdentificationConfig):
    """The constraints of pc-wls for a regressor and the user's optional bounds.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    config : IdentificationConfig
        ``total_mass``, ``mass_tolerance``, ``com_in_collision_box``.

    Returns
    -------
    pc_wls.PhysicalConstraints

    Raises
    ------
    InputError
        If the collision boxes are asked for and the collision geometry cannot be loaded.
    """
    from .pc_wls import PhysicalConstraints

    prior = prior_standard_parameters(regressor)
    links = regressor.robot.link_count
    nonnegative = [regressor.actuator_index(t, m) for t in ('Ia', 'fv', 'fc', 'fs')
                   if t in regressor.spec.actuator_terms for m in range(regressor.robot.n)]
    mass_range = None
    if config.mass_tolerance is not None:
        masses = prior[0:10 * links:10]       # a body the URDF leaves massless stays free
        mass_range = np.column_stack([masses * max(1 - config.mass_tolerance, 0.0),
                                      np.where(masses > 0, masses * (1 + config.mass_tolerance),
                                               np.inf)])
    boxes = collision_boxes(regressor.robot) if config.com_in_collision_box else None
    return PhysicalConstraints(links, prior, nonnegative, total_mass=config.total_mass,
                               mass_range=mass_range, com_boxes=boxes,
                               scale=standard_scale(regressor))


@dataclass
class Validation:
    """Prediction of a model on a dataset.

    Parameters
    ----------
    source : str
        The dataset.
    metrics : dict
        See ``metrics.all_metrics``.
    t : (M,) ndarray
        Time stamps [s] (with jumps where the log was split at gaps or trimmed).
    measured, predicted : (M, n) ndarray
        Joint torques [N·m or N].
    preprocessing : list of str
        What the preprocessing did (``Processed.summary``).
    """

    source: str
    metrics: dict
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    preprocessing: list[str] = field(default_factory=list)

    def report(self) -> dict:
        """The metrics labelled with the dataset, an entry of RESULT.yaml's ``validation``.

        Returns
        -------
        dict
            ``{'data': source, **metrics}``.
        """
        return {'data': self.source, **self.metrics}


def validate(model: IdentifiedModel, dataset: Dataset, progress: Progress = None) -> Validation:
    """Predict the torques of a dataset and compare them with its measured torques.

    The dataset is preprocessed like the identification data.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    dataset : Dataset
        A recording the identification did not use.
    progress : callable or object with ``update(n)``, optional
        Told of two steps: the preprocessing and the prediction (``ident_core.progress``).

    Returns
    -------
    Validation

    Raises
    ------
    InputError
        If the dataset's transmission differs from the model's, or for bad data.
    """
    if not dataset.transmission_for(model.robot).same_as(model.transmission):
        raise InputError(f'{dataset.source}: transmission differs from the identified model\'s')
    expect(progress, 2)
    describe(progress, f'validate {dataset.source}')
    p = preprocess(dataset, model.robot, model.config)
    advance(progress)
    predicted, measured = model.predict(p)
    advance(progress)
    return Validation(dataset.source,
                      metrics.all_metrics(predicted, measured, model.robot.effort_limit),
                      p.trimmed(p.t), measured, predicted, p.summary)
