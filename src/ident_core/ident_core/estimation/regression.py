"""The regression rows of preprocessed recordings (docs/methods.md §3, §10): the base regressor
and torques, trimmed and decimated, with the sharp friction columns filtered like the torques
(parallel filtering), and several recordings stacked (``StackedRegression``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.datasets import Dataset
from ..data.signal_processing import decimate_parallel, decimation_is_plain, lowpass
from ..model.base_parameters import BaseParameters
from ..model.regressor import Regressor
from .config import IdentificationConfig
from .delay import TorqueSignal
from .preprocessing import Processed, preprocess

#: Actuator columns that change sharply at a velocity reversal (Coulomb, Stribeck): built from
#: the nearly unfiltered motion (``Processed.qd_sharp``) and passed through the torques'
#: low-pass (parallel filtering).
SHARP_TERMS = ('fc', 'fs')


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


def torque_signal(p: Processed, factor: int) -> TorqueSignal:
    """The filtered torques of preprocessed data and the rows ``regression_data`` keeps, to
    shift them by a delay (``delay.TorqueSignal``).

    Parameters
    ----------
    p : Processed
        Preprocessed data.
    factor : int
        Decimation factor.

    Returns
    -------
    TorqueSignal
        Whose ``at(0)`` is the ``tau`` of ``regression_data(..., p, factor)``.
    """
    segments, rows = [], []
    plain = True
    for a, b in p.spans():
        kept, plain = kept_rows(p, b - a, factor)
        segments.append(p.tau[a:b])
        rows.append(kept)
    return TorqueSignal(p.fs, segments, rows, factor, plain, p.cutoff_hz, p.order)


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
