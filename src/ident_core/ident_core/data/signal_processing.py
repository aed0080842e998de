"""Signal processing before identification (docs/methods.md §3).

The signals arrive on a uniform grid (``timing``: a log's rows put on its controller's cycles or
resampled by their stamps, and split at gaps too long to bridge). Positions and torques are
low-pass filtered with a zero-phase Butterworth filter (``sosfiltfilt``, no lag between q and
tau); velocities and accelerations are central differences of the filtered positions
(payload_identification_2017 §1.3 and §4). Parallel decimation (Gautier) low-pass filters the
regressor and the torques with the same filter before keeping every k-th sample, so the linear
model ``tau = W chi`` still holds.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

MAX_GAP_PERIODS = 1.5


def fixed_rate_clock(t: np.ndarray, source: str, rows: np.ndarray | None = None) -> np.ndarray:
    """Replace jittery logger stamps by the fixed-rate clock that took the samples.

    Controllers sample at a fixed period while a non-real-time logger stamps them late by a
    varying amount, or rounds the stamps. The returned times are the least-squares line
    ``t0 + k·T`` through the stamps: every row is a sample (none dropped, none repeated).

    Parameters
    ----------
    t : (N,) ndarray
        Logger stamps [s], non-decreasing (rounded stamps may repeat), N ≥ 2.
    source : str
        The recording, for the error message.
    rows : (N,) ndarray of int, optional
        Data row of each stamp, for the message (default: 0 … N−1).

    Returns
    -------
    (N,) ndarray
        ``t0 + k·T`` [s].

    Raises
    ------
    InputError
        If the stamps are not finite or decrease, or an interval exceeds 1.5 periods plus the
        stamps' step (dropped samples: the clock is not fixed-rate). The step is the smallest
        non-zero interval when stamps repeat (rounded stamps), else 0.
    """
    rows = np.arange(len(t)) if rows is None else rows
    dt = np.diff(t)
    bad = np.flatnonzero(~np.isfinite(t))
    if len(bad):
        raise InputError(f'{source}: time stamp of row {rows[bad[0]]} is not finite')
    bad = np.flatnonzero(dt < 0)
    if len(bad):
        raise InputError(f'{source}: decreasing time stamp at row {rows[bad[0] + 1]} '
                         f'({float(t[bad[0]])!r} then {float(t[bad[0] + 1])!r}); time must '
                         'increase')
    k = np.arange(len(t))
    period, t0 = np.polyfit(k, t, 1)
    step = float(dt[dt > 0].min()) if np.any(dt == 0) and np.any(dt > 0) else 0.0
    gaps = np.flatnonzero(dt > MAX_GAP_PERIODS * period + step)
    if len(gaps):
        raise InputError(f'{source}: gap of {dt[gaps[0]] * 1e3:.2f} ms after row '
                         f'{rows[gaps[0]]} (period {period * 1e3:.2f} ms): samples were dropped, '
                         'so time.clock: fixed_rate does not apply (auto bridges or splits gaps)')
    return t0 + period * k


def lowpass(x: np.ndarray, fs: float, cutoff_hz: float, order: int = 4) -> np.ndarray:
    """Zero-phase Butterworth low-pass along axis 0.

    Parameters
    ----------
    x : (N, ...) ndarray
        Samples.
    fs : float
        Sample rate [Hz].
    cutoff_hz : float
        −3 dB frequency of the single pass [Hz].
    order : int
        Filter order (the forward-backward pass doubles it).

    Returns
    -------
    (N, ...) ndarray
        The filtered samples.

    Raises
    ------
    InputError
        If the cut-off is not below Nyquist, or there are too few samples for the filter.
    """
    if not 0 < cutoff_hz < fs / 2:
        raise InputError(f'filter cut-off {cutoff_hz} Hz must be in (0, {fs / 2:g}) Hz '
                         f'(half the {fs:g} Hz sample rate)')
    # deliberately lazy: scipy.signal loads scipy.stats, .interpolate and .optimize (~0.5 s),
    # which the readers of recordings and results that filter nothing do not need
    import scipy.signal

    sos = scipy.signal.butter(order, cutoff_hz, fs=fs, output='sos')
    padlen = filter_padding(order)
    if len(x) <= padlen:
        raise InputError(f'{len(x)} samples are too few for the order-{order} filter '
                         f'(needs more than {padlen})')
    return scipy.signal.sosfiltfilt(sos, x, axis=0)


def filter_padding(order: int = 4) -> int:
    """Samples ``lowpass`` pads each end with; it needs more samples than that.

    Parameters
    ----------
    order : int
        Filter order of one pass.

    Returns
    -------
    int
        ``3 · (2 · sections + 1)``, sections = ``ceil(order / 2)`` (scipy's default padding).
    """
    return 3 * (2 * ((order + 1) // 2) + 1)


def differentiate(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Central differences along axis 0 (second order, non-uniform spacing allowed, one-sided
    at the two ends).

    Parameters
    ----------
    x : (N, ...) ndarray
        Samples.
    t : (N,) ndarray
        Their times [s].

    Returns
    -------
    (N, ...) ndarray
        dx/dt.
    """
    return np.gradient(x, t, axis=0)


def decimate_parallel(arrays: list[np.ndarray], factor: int, fs: float, bandwidth: float,
                      order: int = 4) -> list[np.ndarray]:
    """Parallel decimation (the parallel filtering of [1]_).

    Every array passes the same zero-phase anti-alias low-pass (cut-off 0.8 × the new Nyquist
    frequency), then every ``factor``-th sample is kept. Arrays already band-limited below that
    cut-off (``bandwidth``, e.g. the preprocessing cut-off) are only down-sampled: the filter
    would leave them unchanged.

    Parameters
    ----------
    arrays : list of (N, ...) ndarray
        Sampled at ``fs``.
    factor : int
        Decimation factor ≥ 1.
    fs : float
        Sample rate [Hz].
    bandwidth : float
        Highest frequency the arrays contain [Hz].
    order : int
        Butterworth order of one pass.

    Returns
    -------
    list of (ceil(N / factor), ...) ndarray

    Raises
    ------
    InputError
        If ``factor < 1``.

    References
    ----------
    .. [1] Gautier M., "Dynamic identification of robots with power model", Proc. IEEE
       International Conference on Robotics and Automation (ICRA), 1997 (DOI not verified;
       docs/methods.md, References).
    """
    if factor < 1:
        raise InputError(f'decimation factor must be a positive integer, got {factor}')
    if factor == 1 or decimation_is_plain(factor, fs, bandwidth):
        return [a[::factor] for a in arrays]
    return [lowpass(a, fs, 0.8 * fs / (2 * factor), order)[::factor] for a in arrays]


def decimation_is_plain(factor: int, fs: float, bandwidth: float) -> bool:
    """Whether decimation needs no anti-alias filter.

    Parameters
    ----------
    factor : int
        Decimation factor.
    fs : float
        Sample rate [Hz].
    bandwidth : float
        Highest frequency the signals contain [Hz].

    Returns
    -------
    bool
        True when the anti-alias cut-off (0.8 × new Nyquist) is at or above ``bandwidth``.
    """
    return 0.8 * fs / (2 * factor) >= bandwidth
