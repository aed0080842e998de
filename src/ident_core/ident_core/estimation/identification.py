"""Whole-robot identification (docs/methods.md §10): recordings → preprocessing → regressor →
base parameters → OLS/WLS/pc-wls (``identify``), and validation of the identified model on other
recordings (``validate``). The layers below, top to bottom: ``identified_model`` (the model
and the estimator run), ``blockwise`` and ``friction_shape`` (long recordings, Stribeck shape),
``regression`` (regression rows), ``preprocessing`` (filtered signals), ``config``."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..data.datasets import Dataset
from ..errors import IdentError, InputError
from ..model.base_parameters import compute_base_parameters
from ..model.regressor import Regressor
from ..model.robot import RobotModel
from ..model.transmission import Transmission
from ..progress import Progress, advance, describe, expect
from . import metrics
from .blockwise import reduce, stack_kept
from .config import IdentificationConfig
from .delay import DelayFit, TorqueSignal, estimate_delays, given_delays, shifted_rows
from .fit_check import check_fit
from .friction_shape import identify_friction_shape
from .identified_model import IdentifiedModel, prior_standard_parameters, run_estimator
from .preprocessing import preprocess
from .regression import StackedRegression, regression_data, stack_processed, torque_signal


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
        datasets = [first, *datasets]
        _same_transmission(datasets, robot, transmission)
        expect(progress, len(datasets))
        processed = []
        for d in datasets:
            describe(progress, d.source)
            processed.append(preprocess(d, robot, config))
            advance(progress)
        stacked = stack_processed(regressor, base, processed, config)
        stacked, delays = compensate_delays(
            stacked, [torque_signal(p, f) for p, f in zip(processed, stacked.decimation)],
            [p.source for p in processed], config)
        shape, stacked, search = identify_friction_shape(regressor, base, processed, stacked,
                                                         config)
        regressor = Regressor(robot, config.spec, transmission, shape)
        sources = [(d.source, d.samples) for d in datasets]
        del processed, datasets
    else:
        kept = [reduce(first, regressor, base, config, progress)]
        del first                                 # a long recording goes once it is reduced
        kept += [reduce(_same_transmission([d], robot, transmission, kept[0].source)[0],
                        regressor, base, config, progress) for d in datasets]
        sources = [(k.source, k.samples) for k in kept]
        describe(progress, 'regressor')
        stacked = stack_kept(regressor, base, kept, progress=progress)
        signals = [k.torque for k in kept]
        del kept
        stacked, delays = compensate_delays(stacked, signals, [s for s, _ in sources], config)
        del signals
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
              list(robot.joint_names), ', '.join(source for source, _ in sources), w=w,
              free=base.independent >= regressor.n_inertial, mask=mask,
              refit=lambda t: w @ run_estimator(regressor, base, w, t, mask, config)[0].values,
              ignore=config.ignore_plausibility)
    stats = {'data': [source for source, _ in sources], 'samples': int(len(tau)),
             'equations_left_out': int(mask.size - mask.sum()),
             'decimation': stacked.decimation,
             'base_parameter_count': base.count,
             'condition_number': est.condition_number,
             'rank_gap': base.rank_gap,
             'residual_rms': metrics.rmse(predicted, tau).tolist(),
             'relative_error_percent': metrics.relative_error_percent(predicted, tau),
             'preprocessing': stacked.preprocessing, **search, **extra}
    if delays:
        stats['torque_delay'] = [f.report() for f in delays]
    return IdentifiedModel(robot, config, transmission, base, est.values, est.std, stats,
                           standard, regressor.friction_shape or None)


def compensate_delays(stacked: StackedRegression, signals: list[TorqueSignal | None],
                      sources: list[str], config: IdentificationConfig
                      ) -> tuple[StackedRegression, list[DelayFit]]:
    """The regression rows with each recording's torque delay compensated, as configured
    (``torque_delay``).

    Parameters
    ----------
    stacked : StackedRegression
        The regression rows of the recordings, stacked in order.
    signals : list of TorqueSignal or None
        Per recording, its filtered torques (``regression.torque_signal``); None with
        ``torque_delay: none``.
    sources : list of str
        The recordings.
    config : IdentificationConfig
        ``torque_delay``.

    Returns
    -------
    stacked : StackedRegression
        With the torques shifted where a delay is compensated, and a preprocessing line on
        each noteworthy delay (``DelayFit.noteworthy``).
    fits : list of DelayFit
        Per recording (empty with ``torque_delay: none``).
    """
    delay = config.fixed_delay
    if delay == 0:
        return stacked, []
    fits = given_delays(sources, delay) if delay is not None else \
        estimate_delays(stacked.w, signals, sources, stacked.mask)
    tau = shifted_rows(signals, fits) if any(f.compensated for f in fits) else stacked.tau
    lines = [f.summary() for f in fits if f.noteworthy]
    return replace(stacked, tau=tau, preprocessing=stacked.preprocessing + lines), fits


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
        What the preprocessing did (``Processed.summary``, then the torque delay).
    torque_delay : DelayFit or None
        The recording's torque delay (None with ``torque_delay: none``).
    """

    source: str
    metrics: dict
    t: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    preprocessing: list[str] = field(default_factory=list)
    torque_delay: DelayFit | None = None

    def report(self) -> dict:
        """The metrics labelled with the dataset, an entry of RESULT.yaml's ``validation``.

        Returns
        -------
        dict
            ``{'data': source, **metrics}``, and ``torque_delay`` (``DelayFit.report``).
        """
        delay = {} if self.torque_delay is None else {'torque_delay': self.torque_delay.report()}
        return {'data': self.source, **self.metrics, **delay}


def validate(model: IdentifiedModel, dataset: Dataset, progress: Progress = None) -> Validation:
    """Predict the torques of a dataset and compare them with its measured torques.

    The dataset is preprocessed like the identification data, and its own torque delay
    estimated with the model's parameters held and compensated when significant (or the
    configured delay applied; ``delay.estimate_delays``).

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
    fit = _validation_delay(model, p)
    if fit is not None and fit.compensated:
        measured = torque_signal(p, 1).at(fit.applied)
    advance(progress)
    return Validation(dataset.source,
                      metrics.all_metrics(predicted, measured, model.robot.effort_limit),
                      p.trimmed(p.t), measured, predicted,
                      p.summary + ([fit.summary()] if fit and fit.noteworthy else []), fit)


def _validation_delay(model: IdentifiedModel, p) -> DelayFit | None:
    """The torque delay of a preprocessed validation recording, estimated as in ``identify``
    (jointly with parameters of its own, which absorb the model's errors) on the decimated
    rows."""
    delay = model.config.fixed_delay
    if delay == 0:
        return None
    if delay is not None:
        return given_delays([p.source], delay)[0]
    factor = p.decimation(model.config.decimate)
    regressor = model.regressor
    w, _ = regression_data(regressor, model.base, p, factor)
    return estimate_delays(w, [torque_signal(p, factor)], [p.source],
                           p.reversal_mask(regressor.gear, factor,
                                           model.config.reversal_window))[0]
