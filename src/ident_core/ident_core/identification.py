"""Whole-robot identification pipeline (lagrange_dynamics_lecture_notes §3.3.4, methods §8):
preprocess → regressor → base parameters → OLS/WLS → validation on other data.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from . import metrics
from .base_parameters import DEFAULT_RANK_TOLERANCE, BaseParameters, compute_base_parameters
from .datasets import Dataset
from .errors import IdentError, InputError
from .estimators import estimate, relative_std_percent
from .regressor import Regressor, RegressorSpec
from .robot_model import RobotModel
from .signal_processing import (decimate_parallel, decimation_is_plain, differentiate, lowpass,
                                sample_rate)
from .transmission import Transmission

DEFAULT_CUTOFF_HZ = 10.0
TRIM_PERIODS = 3


@dataclass(frozen=True)
class Settings:
    """Identification settings.

    Attributes:
        friction: ``none``, ``viscous-coulomb`` or ``viscous-coulomb-offset``.
        rotor_inertia: identify one rotor (armature) inertia per actuator.
        estimator: ``ols`` or ``wls``.
        cutoff_hz: low-pass cut-off of positions and torques; None: the dataset's ``cutoff_hz``,
            else 10 Hz.
        filter_order: Butterworth order of one pass.
        use_recorded_velocity: use the recorded velocity (filtered) instead of differentiating q.
        decimate: parallel decimation factor; 1: none; 0 (default): automatic, the largest factor
            whose anti-alias filter (0.8 × new Nyquist) stays above ``cutoff_hz``. Filtered
            residuals are correlated over ~fs/cutoff samples; decimating to the filter's
            bandwidth keeps the least-squares standard deviations honest (Gautier).
        rank_tolerance: relative QR rank tolerance of the base parameters.
        seed: seed of the random samples for the base parameters.
        reversal_window: s; the equations of a joint within this time of a velocity reversal
            of an actuator acting on it are left out of the estimation (0: keep all). Around a
            reversal, real and simulated joints stick for a moment and the ``fc sign(qd)``
            model does not hold, and the low-pass filter spreads that error over about one
            cut-off period (``1 / cutoff_hz`` is a good window).
    """

    friction: str = 'viscous-coulomb-offset'
    rotor_inertia: bool = False
    estimator: str = 'wls'
    cutoff_hz: float | None = None
    filter_order: int = 4
    use_recorded_velocity: bool = False
    decimate: int = 0
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE
    seed: int = 0
    reversal_window: float = 0.0

    @property
    def spec(self) -> RegressorSpec:
        return RegressorSpec(self.friction, self.rotor_inertia)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Processed:
    """Signals ready for the regressor, in the robot's joint order.

    Attributes: source; fs (Hz, before decimation); cutoff (Hz) and order of the low-pass;
    trim: samples to drop at each end once the regressor is built; t (M,) s;
    q, qd, qdd, tau (M, n).
    """

    source: str
    fs: float
    cutoff: float
    order: int
    trim: int
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray

    def decimation(self, requested: int) -> int:
        """The parallel decimation factor for a requested one (0: automatic)."""
        return requested or max(1, math.floor(0.4 * self.fs / self.cutoff))

    def trimmed(self, x: np.ndarray) -> np.ndarray:
        """``x`` (M, ...) without the ``trim`` samples at each end."""
        return x[self.trim:len(x) - self.trim]

    def reversal_mask(self, gear: np.ndarray, factor: int, window: float) -> np.ndarray:
        """(M', n) bool for the rows of ``regression_data(..., factor)``: False where joint j
        is within ``window`` s of a sign change of the velocity of an actuator that acts on it
        (``gear[m, j] != 0``, motor velocities ``gear @ qd``)."""
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


def preprocess(dataset: Dataset, robot: RobotModel, settings: Settings) -> Processed:
    """Filter, differentiate and trim a dataset (methods §3, last paragraph).

    Positions and torques pass a zero-phase Butterworth low-pass; qd and qdd are central
    differences of the filtered positions (or qd the filtered recorded velocity if asked).
    ``trim`` is ``TRIM_PERIODS`` cut-off periods (``ceil(3 fs / cutoff)`` samples):
    ``regression_data`` drops it at each end, where the filter's start-up transients and the
    one-sided differences are inaccurate (with one period, simulated data still showed 10×
    larger torque errors in the 0.2 s next to each end).

    Raises:
        InputError: joints not matching the robot, recorded velocity asked but absent, cut-off
            above Nyquist, too few samples.
    """
    d = dataset.aligned(robot)
    fs = sample_rate(d.t)
    cutoff = settings.cutoff_hz or d.cutoff_hz or DEFAULT_CUTOFF_HZ
    if settings.use_recorded_velocity and d.velocity is None:
        raise InputError(f'{d.source}: no velocity recorded, cannot use recorded velocity')
    try:
        q = lowpass(d.position, fs, cutoff, settings.filter_order)
        tau = lowpass(d.effort, fs, cutoff, settings.filter_order)
        qd = (lowpass(d.velocity, fs, cutoff, settings.filter_order)
              if settings.use_recorded_velocity else differentiate(q, d.t))
    except InputError as exc:
        raise InputError(f'{d.source}: {exc}') from None
    qdd = differentiate(qd, d.t)
    trim = math.ceil(TRIM_PERIODS * fs / cutoff)
    if len(d.t) <= 2 * trim:
        raise InputError(f'{d.source}: {len(d.t)} samples are too few for a {cutoff:g} Hz '
                         f'cut-off at {fs:g} Hz')
    return Processed(d.source, fs, cutoff, settings.filter_order, trim, d.t, q, qd, qdd, tau)


def regression_data(regressor: Regressor, base: BaseParameters, p: Processed,
                    factor: int = 1):
    """Base regressor and torques of preprocessed data, trimmed and decimated by ``factor``.

    Parallel filtering: the torques were low-pass filtered, so the Coulomb columns
    (``sign(qd)``, discontinuous) pass the same zero-phase filter; the other columns are smooth
    functions of the filtered positions, which that filter leaves unchanged. For the same
    reason, when the decimation's anti-alias cut-off is above the preprocessing cut-off, the
    regressor is only evaluated at the kept samples (``signal_processing.decimate_parallel``).

    Returns:
        w: (M', n, nb) base regressor; tau: (M', n) torques.
    """
    rows = np.arange(p.trim, len(p.t) - p.trim)
    plain = factor == 1 or decimation_is_plain(factor, p.fs, p.cutoff)
    kept = rows[::factor] if plain else rows
    w = regressor.compute(p.q[kept], p.qd[kept], p.qdd[kept])[:, :, base.independent]
    tau = p.tau[kept]
    coulomb = [i for i, c in enumerate(base.independent) if regressor.names[c].startswith('fc')]
    if coulomb:
        cols = base.independent[coulomb] - regressor.n_inertial
        full = regressor.actuator_columns(p.qd, p.qdd)[:, :, cols]
        w[:, :, coulomb] = lowpass(full, p.fs, p.cutoff, p.order)[kept]
    if plain:
        return w, tau
    return tuple(decimate_parallel([w, tau], factor, p.fs, p.cutoff, p.order))


@dataclass
class IdentifiedModel:
    """An identified dynamic model: everything needed to predict joint torques.

    Attributes:
        robot: the robot model. settings: how it was identified. transmission: actuator coupling
        of the friction/rotor columns. base: the base-parameter mapping.
        values, std: (nb,) base parameters and their standard deviations.
        stats: identification statistics (samples, condition number, residuals, data).
    """

    robot: RobotModel
    settings: Settings
    transmission: Transmission
    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def regressor(self) -> Regressor:
        return Regressor(self.robot, self.settings.spec, self.transmission)

    @property
    def rel_std_percent(self) -> np.ndarray:
        """(nb,) relative standard deviation of each base parameter, %."""
        return relative_std_percent(self.values, self.std)

    def predict(self, processed: Processed) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and measured joint torques of preprocessed data, both (M', n) trimmed."""
        w, tau = regression_data(self.regressor, self.base, processed)
        return w @ self.values, tau

    def actuator_values(self) -> dict[str, list]:
        """Rotor inertia and friction per actuator: ``{'Ia': [...], 'fv': ..., 'fc': ...,
        'offset': ...}`` for the terms in the model; an entry is None when that parameter is
        not a base parameter on its own (regrouped with others)."""
        reg = self.regressor
        out = {}
        for term in self.settings.spec.actuator_terms:
            vals = []
            for m in range(self.robot.n):
                b = self.base.single_column_base(reg.actuator_index(term, m))
                vals.append(None if b is None else float(self.values[b]))
            out[term] = vals
        return out


def identify(robot: RobotModel, datasets: list[Dataset], settings: Settings) -> IdentifiedModel:
    """Identify the base parameters from one or more datasets of the same robot.

    Raises:
        InputError: bad data or settings, datasets with different transmissions.
        ExcitationError: the data leave some base parameters unexcited.
    """
    if not datasets:
        raise InputError('identify: no dataset given')
    transmission = datasets[0].aligned(robot).transmission
    for d in datasets[1:]:
        if not d.aligned(robot).transmission.same_as(transmission):
            raise InputError(f'{d.source}: transmission differs from {datasets[0].source}')
    regressor = Regressor(robot, settings.spec, transmission)
    base = compute_base_parameters(regressor, seed=settings.seed, tolerance=settings.rank_tolerance)
    w_parts, tau_parts, masks, factors = [], [], [], []
    for d in datasets:
        p = preprocess(d, robot, settings)
        factors.append(p.decimation(settings.decimate))
        w, tau = regression_data(regressor, base, p, factors[-1])
        masks.append(p.reversal_mask(regressor.gear, factors[-1], settings.reversal_window))
        w_parts.append(w)
        tau_parts.append(tau)
    w, tau, mask = (np.concatenate(x) for x in (w_parts, tau_parts, masks))
    try:
        est = estimate(w, tau, settings.estimator, base.names, mask=mask)
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
    return IdentifiedModel(robot, settings, transmission, base, est.values, est.std, stats)


@dataclass
class Validation:
    """Prediction of a model on a dataset: ``metrics`` (see ``metrics.all_metrics``), the
    time stamps (M,) s, and the measured and predicted torques (M, n)."""

    source: str
    metrics: dict
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray


def validate(model: IdentifiedModel, dataset: Dataset) -> Validation:
    """Predict the torques of ``dataset`` (preprocessed like the identification data) and
    compare with its measured torques.

    Raises:
        InputError: the dataset's transmission differs from the model's, or bad data.
    """
    if not dataset.aligned(model.robot).transmission.same_as(model.transmission):
        raise InputError(f'{dataset.source}: transmission differs from the identified model\'s')
    p = preprocess(dataset, model.robot, model.settings)
    predicted, measured = model.predict(p)
    return Validation(dataset.source,
                      metrics.all_metrics(predicted, measured, model.robot.effort_limit),
                      p.trimmed(p.t), measured, predicted)
