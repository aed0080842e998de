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
from ..data.signal_processing import (
    decimate_parallel,
    decimation_is_plain,
    differentiate,
    lowpass,
    sample_rate,
)
from ..errors import IdentError, InputError
from ..model.base_parameters import DEFAULT_RANK_TOLERANCE, BaseParameters, compute_base_parameters
from ..model.regressor import FrictionModel, Regressor, RegressorSpec
from ..model.robot import RobotModel
from ..model.transmission import Transmission
from ..schema import Schema
from . import metrics
from .estimators import ESTIMATORS, estimate, relative_std_percent

DEFAULT_CUTOFF_HZ = 10.0
TRIM_PERIODS = 3


class IdentificationConfig(Schema):
    """How to identify: model columns, filtering, estimator.

    The ``identify`` CLI verb, the identification node's parameters and the ``config`` section
    of RESULT.yaml are this model.

    Parameters
    ----------
    friction : {'none', 'coulomb-viscous', 'coulomb-viscous-offset'}
        Friction model per actuator.
    rotor_inertia : bool
        Identify one rotor inertia per actuator.
    estimator : {'ols', 'wls'}
        Least-squares estimator.
    cutoff_hz : float or None
        Low-pass cut-off of positions and torques [Hz]; None: the dataset's ``cutoff_hz``,
        else 10 Hz.
    filter_order : int
        Butterworth order of one pass.
    use_recorded_velocity : bool
        Use the recorded velocity (filtered) instead of differentiating q.
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
    """

    friction: FrictionModel = Field(
        'coulomb-viscous-offset', description='friction model per actuator: none, '
        'coulomb-viscous or coulomb-viscous-offset')
    rotor_inertia: bool = Field(False, description='identify one rotor inertia per actuator')
    estimator: Literal[ESTIMATORS] = Field('wls', description='least-squares estimator: ols '
                                           'or wls')
    cutoff_hz: PositiveFloat | None = Field(
        None, description="low-pass cut-off of q and tau, Hz (unset: the dataset's, else 10)")
    filter_order: PositiveInt = Field(4, description='Butterworth order of one filter pass')
    use_recorded_velocity: bool = Field(
        False, description='filter the recorded velocity instead of differentiating q')
    decimate: NonNegativeInt = Field(0, description='parallel decimation factor (0: automatic,'
                                     ' 1: none)')
    rank_tolerance: PositiveFloat = Field(DEFAULT_RANK_TOLERANCE,
                                          description='relative QR rank tolerance')
    seed: int = Field(0, description='seed of the random samples for the base parameters')
    reversal_window: NonNegativeFloat = Field(
        0.0, description='s: leave out joint equations this close to a velocity reversal')

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
        Samples to drop at each end once the regressor is built.
    t : (M,) ndarray
        [s].
    q, qd, qdd, tau : (M, n) ndarray
        Filtered positions, velocities, accelerations and torques.
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

    def decimation(self, requested: int) -> int:
        """The parallel decimation factor.

        Parameters
        ----------
        requested : int
            The configured factor; 0: automatic.

        Returns
        -------
        int
            ``requested``, or ``floor(0.4 fs / cutoff_hz)`` (at least 1) for 0.
        """
        return requested or max(1, math.floor(0.4 * self.fs / self.cutoff_hz))

    def trimmed(self, x: np.ndarray) -> np.ndarray:
        """An array without the ``trim`` samples at each end.

        Parameters
        ----------
        x : (M, ...) ndarray

        Returns
        -------
        (M − 2·trim, ...) ndarray
        """
        return x[self.trim:len(x) - self.trim]

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
        u = self.qd @ gear.T
        t_rows = self.trimmed(self.t)[::factor]
        near = np.zeros((len(t_rows), u.shape[1]), dtype=bool)
        for m in range(u.shape[1]):
            flips = np.flatnonzero(np.sign(u[1:, m]) != np.sign(u[:-1, m]))
            crossings = 0.5 * (self.t[flips] + self.t[flips + 1])
            if len(crossings):
                k = np.clip(np.searchsorted(crossings, t_rows), 1, len(crossings)) - 1
                gap = np.minimum(np.abs(t_rows - crossings[k]),
                                 np.abs(t_rows - crossings[np.minimum(k + 1, len(crossings) - 1)]))
                near[:, m] = gap < window
        return ~(near.astype(float) @ (gear != 0).astype(float) > 0)


def preprocess(dataset: Dataset, robot: RobotModel, config: IdentificationConfig) -> Processed:
    """Filter, differentiate and trim a dataset (docs/methods.md §3).

    Positions and torques pass a zero-phase Butterworth low-pass; qd and qdd are central
    differences of the filtered positions (or qd the filtered recorded velocity if asked).
    ``trim`` is ``TRIM_PERIODS`` cut-off periods (``ceil(3 fs / cutoff)`` samples):
    ``regression_data`` drops it at each end, where the filter's start-up transients and the
    one-sided differences are inaccurate (with one period, simulated data still showed 10×
    larger torque errors in the 0.2 s next to each end).

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

    Raises
    ------
    InputError
        If the joints do not match the robot, the recorded velocity is asked for but absent,
        the cut-off is above Nyquist, or there are too few samples.
    """
    d = dataset.aligned(robot)
    fs = sample_rate(d.t)
    cutoff_hz = config.cutoff_hz or d.cutoff_hz or DEFAULT_CUTOFF_HZ
    order = config.filter_order
    if config.use_recorded_velocity and d.velocity is None:
        raise InputError(f'{d.source}: no velocity recorded, cannot use recorded velocity')
    try:
        q = lowpass(d.position, fs, cutoff_hz, order)
        tau = lowpass(d.effort, fs, cutoff_hz, order)
        qd = (lowpass(d.velocity, fs, cutoff_hz, order)
              if config.use_recorded_velocity else differentiate(q, d.t))
    except InputError as exc:
        raise InputError(f'{d.source}: {exc}') from None
    qdd = differentiate(qd, d.t)
    trim = math.ceil(TRIM_PERIODS * fs / cutoff_hz)
    if len(d.t) <= 2 * trim:
        raise InputError(f'{d.source}: {len(d.t)} samples are too few for a {cutoff_hz:g} Hz '
                         f'cut-off at {fs:g} Hz')
    return Processed(d.source, fs, cutoff_hz, order, trim, d.t, q, qd, qdd, tau)


def regression_data(regressor: Regressor, base: BaseParameters, p: Processed,
                    factor: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Base regressor and torques of preprocessed data, trimmed and decimated.

    Parallel filtering: the torques were low-pass filtered, so the Coulomb columns
    (``sign(qd)``, discontinuous) pass the same zero-phase filter; the other columns are smooth
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

    Returns
    -------
    w : (M', n, nb) ndarray
        Base regressor.
    tau : (M', n) ndarray
        Torques [N·m or N].
    """
    rows = np.arange(p.trim, len(p.t) - p.trim)
    plain = factor == 1 or decimation_is_plain(factor, p.fs, p.cutoff_hz)
    kept = rows[::factor] if plain else rows
    w = regressor.compute(p.q[kept], p.qd[kept], p.qdd[kept])[:, :, base.independent]
    tau = p.tau[kept]
    coulomb = [i for i, c in enumerate(base.independent) if regressor.names[c].startswith('fc')]
    if coulomb:
        cols = base.independent[coulomb] - regressor.n_inertial
        full = regressor.actuator_columns(p.qd, p.qdd)[:, :, cols]
        w[:, :, coulomb] = lowpass(full, p.fs, p.cutoff_hz, p.order)[kept]
    if plain:
        return w, tau
    return tuple(decimate_parallel([w, tau], factor, p.fs, p.cutoff_hz, p.order))


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
    """

    robot: RobotModel
    config: IdentificationConfig
    transmission: Transmission
    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def regressor(self) -> Regressor:
        """The identification regressor of this model."""
        return Regressor(self.robot, self.config.spec, self.transmission)

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

    def actuator_values(self) -> dict[str, list]:
        """Rotor inertia and friction per actuator.

        Returns
        -------
        dict of str to list
            ``{'Ia': [...], 'fv': [...], 'fc': [...], 'offset': [...]}`` for the terms in the
            model, one value per actuator; an entry is None when that parameter is not a base
            parameter on its own (regrouped with others).
        """
        reg = self.regressor
        out = {}
        for term in self.config.spec.actuator_terms:
            vals = []
            for m in range(self.robot.n):
                b = self.base.single_column_base(reg.actuator_index(term, m))
                vals.append(None if b is None else float(self.values[b]))
            out[term] = vals
        return out


def identify(robot: RobotModel, datasets: list[Dataset],
             config: IdentificationConfig) -> IdentifiedModel:
    """Identify the base parameters from one or more datasets of the same robot.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : list of Dataset
        Recordings, all through the same transmission.
    config : IdentificationConfig
        Model columns, filtering, estimator.

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
    if not datasets:
        raise InputError('identify: no dataset given')
    transmission = datasets[0].aligned(robot).transmission
    for d in datasets[1:]:
        if not d.aligned(robot).transmission.same_as(transmission):
            raise InputError(f'{d.source}: transmission differs from {datasets[0].source}')
    regressor = Regressor(robot, config.spec, transmission)
    base = compute_base_parameters(regressor, seed=config.seed, tolerance=config.rank_tolerance)
    w_parts, tau_parts, masks, factors = [], [], [], []
    for d in datasets:
        p = preprocess(d, robot, config)
        factors.append(p.decimation(config.decimate))
        w, tau = regression_data(regressor, base, p, factors[-1])
        masks.append(p.reversal_mask(regressor.gear, factors[-1], config.reversal_window))
        w_parts.append(w)
        tau_parts.append(tau)
    w, tau, mask = (np.concatenate(x) for x in (w_parts, tau_parts, masks))
    try:
        est = estimate(w, tau, config.estimator, base.names, mask=mask)
    except IdentError as exc:
        rows = ', '.join(f'{d.source} ({d.samples} rows)' for d in datasets)
        raise type(exc)(f'{rows}: {exc}') from None
    predicted = w @ est.values
    stats = {'data': [d.source for d in datasets], 'samples': int(len(tau)),
             'equations_left_out': int(mask.size - mask.sum()),
             'decimation': factors,
             'base_parameter_count': base.count,
             'condition_number': est.condition_number,
             'rank_gap': base.rank_gap,
             'residual_rms': metrics.rmse(predicted, tau).tolist(),
             'relative_error_percent': metrics.relative_error_percent(predicted, tau)}
    return IdentifiedModel(robot, config, transmission, base, est.values, est.std, stats)


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
        Time stamps [s].
    measured, predicted : (M, n) ndarray
        Joint torques [N·m or N].
    """

    source: str
    metrics: dict
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray

    def report(self) -> dict:
        """The metrics labelled with the dataset, an entry of RESULT.yaml's ``validation``.

        Returns
        -------
        dict
            ``{'data': source, **metrics}``.
        """
        return {'data': self.source, **self.metrics}


def validate(model: IdentifiedModel, dataset: Dataset) -> Validation:
    """Predict the torques of a dataset and compare them with its measured torques.

    The dataset is preprocessed like the identification data.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    dataset : Dataset
        A recording the identification did not use.

    Returns
    -------
    Validation

    Raises
    ------
    InputError
        If the dataset's transmission differs from the model's, or for bad data.
    """
    if not dataset.aligned(model.robot).transmission.same_as(model.transmission):
        raise InputError(f'{dataset.source}: transmission differs from the identified model\'s')
    p = preprocess(dataset, model.robot, model.config)
    predicted, measured = model.predict(p)
    return Validation(dataset.source,
                      metrics.all_metrics(predicted, measured, model.robot.effort_limit),
                      p.trimmed(p.t), measured, predicted)
