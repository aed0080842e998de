"""The regression rows of long recordings, block by block (docs/methods.md §3, §10).

``preprocess`` keeps every sample filtered and differentiated (five full-length arrays) and
``regression_data`` then keeps one row in ``factor``; on an hour at 1 kHz that is gigabytes.
``reduce`` computes the same rows a block of ``BLOCK_ROWS`` samples at a time: each block of a
segment is resampled, filtered and differentiated with ``margin`` neighbouring samples on both
sides, enough for the zero-phase filters' start-up transients, which decay like the slowest
pole, to fall below ``SETTLED`` (relative) at the block's own rows; the ends of a segment are
the ends of its first and last windows, filtered as in ``preprocess``. Only the kept rows'
signals are stored (``KeptRows``); ``regression`` builds their regressor, so the recording can
be let go first. A first pass gathers what needs the whole recording: the recorded velocity's
agreement with ``dq/dt`` and the peak of the sharp velocity (``_at_rest_zero``).

A decimation that needs its anti-alias filter (a factor above the automatic one) takes
``preprocess`` and ``regression_data``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data.datasets import Dataset
from ..data.recorded_velocity import VelocitySums
from ..data.signal_processing import decimation_is_plain, differentiate, lowpass
from ..errors import InputError
from ..model.base_parameters import BaseParameters
from ..model.regressor import Regressor
from ..progress import Progress, advance, describe, expect
from .config import IdentificationConfig
from .delay import TorqueSignal
from .preprocessing import REST_FRACTION, near_reversal, preprocess, time_base, trim_samples
from .regression import StackedRegression, regression_data, sharp_columns, torque_signal

#: Samples of a segment processed at a time.
BLOCK_ROWS = 1 << 16
#: Kept rows whose regressor is built at a time.
REGRESSOR_ROWS = 4096
#: Samples beyond a window on each side that its cubic spline sees (the influence of a sample
#: on a not-a-knot spline falls by about 2 − √3 per sample).
SPLINE_MARGIN = 64
#: A filter transient this small (relative) is gone.
SETTLED = 1e-17


@dataclass
class KeptRows:
    """The signals of the rows a recording's regression keeps.

    Parameters
    ----------
    source : str
        The recording.
    samples : int
        Its rows.
    factor : int
        Decimation factor.
    q, qd, qdd, tau : (M, n) ndarray
        Filtered positions, velocities, accelerations and torques at the kept rows.
    sharp : (M, n, k) ndarray or None
        The sharp base columns (``sharp_columns``) filtered like the torques, at the kept rows.
    mask : (M, n) ndarray of bool
        ``Processed.reversal_mask`` at the kept rows.
    summary : list of str
        ``Processed.summary``.
    w : (M, n, nb) ndarray or None
        The regressor, when it was built from the whole recording (anti-alias decimation).
    torque : TorqueSignal or None
        The filtered torques at every sample, to shift them by a delay; None when the
        configuration leaves the torques where they are (``torque_delay: none``).
    """

    source: str
    samples: int
    factor: int
    q: np.ndarray | None
    qd: np.ndarray | None
    qdd: np.ndarray | None
    tau: np.ndarray
    sharp: np.ndarray | None
    mask: np.ndarray
    summary: list[str] = field(default_factory=list)
    w: np.ndarray | None = None
    torque: TorqueSignal | None = None


@dataclass
class _Segment:
    """One segment of a recording being read in windows."""

    dataset: Dataset
    base: object
    span: tuple[int, int]
    grid: np.ndarray

    def values(self, signal: np.ndarray, lo: int, hi: int, smooth: bool) -> np.ndarray:
        """``base.resample`` of grid samples ``lo``…``hi − 1`` only."""
        start, stop = self.span
        rows = self.base.rows
        if self.base.clock != 'stamps' and len(self.grid) == stop - start:   # on the grid
            return signal[slice(start + lo, start + hi) if rows is None
                          else rows[start + lo:start + hi]]
        x = self.base.times[start:stop]
        i = max(0, int(np.searchsorted(x, self.grid[lo], 'right')) - 1 - SPLINE_MARGIN)
        j = min(len(x), int(np.searchsorted(x, self.grid[hi - 1], 'left')) + 1 + SPLINE_MARGIN)
        taken = signal[slice(start + i, start + j) if rows is None else rows[start + i:start + j]]
        k = min(3 if smooth else 1, len(x) - 1)
        # deliberately lazy: scipy.interpolate only for a log off its grid (start-up time)
        from scipy.interpolate import make_interp_spline

        return make_interp_spline(x[i:j], taken, k=k, axis=0)(self.grid[lo:hi])


def settling_samples(fs: float, cutoff_hz: float, order: int) -> int:
    """Samples after which a transient of the Butterworth low-pass is below ``SETTLED``.

    Parameters
    ----------
    fs : float
        Sample rate [Hz].
    cutoff_hz : float
        Cut-off [Hz].
    order : int
        Order of one pass.

    Returns
    -------
    int
        ``log(SETTLED) / log(r)``, ``r`` the largest pole magnitude.
    """
    import scipy.signal  # deliberately lazy, as in data.signal_processing.lowpass

    sos = scipy.signal.butter(order, cutoff_hz, fs=fs, output='sos')
    radius = float(np.max(np.abs(scipy.signal.sos2zpk(sos)[1])))
    return math.ceil(math.log(SETTLED) / math.log(radius))


def reduce(dataset: Dataset, regressor: Regressor, base: BaseParameters,
           config: IdentificationConfig, progress: Progress = None) -> KeptRows:
    """The kept rows of ``preprocess`` + ``regression_data`` + ``reversal_mask``, computed
    block by block (module docstring).

    Parameters
    ----------
    dataset : Dataset
        The recording.
    regressor : Regressor
        The identification regressor (its robot orders the joints).
    base : BaseParameters
        Its base parameters.
    config : IdentificationConfig
        Filtering, decimation, reversal window.
    progress : callable or object with ``update(n)``, optional
        Told of one step per block of each of the two passes (``ident_core.progress``), or of
        one step when the recording is preprocessed whole.

    Returns
    -------
    KeptRows

    Raises
    ------
    InputError
        As ``preprocess``.
    """
    robot = regressor.robot
    describe(progress, dataset.source)
    d, tb, cutoff_hz, sharp_hz, notes = time_base(dataset, robot, config)
    fs, order = tb.rate, config.filter_order
    factor = config.decimate or max(1, math.floor(round(0.4 * fs / cutoff_hz, 6)))
    if not (factor == 1 or decimation_is_plain(factor, fs, cutoff_hz)):
        expect(progress, 1)
        p = preprocess(dataset, robot, config)
        w, tau = regression_data(regressor, base, p, factor)
        advance(progress)
        return KeptRows(d.source, d.samples, factor, None, None, None, tau, None,
                        p.reversal_mask(regressor.gear, factor, config.reversal_window),
                        p.summary, w, torque_signal(p, factor) if config.fixed_delay != 0
                        else None)
    settle = max(settling_samples(fs, cutoff_hz, order), settling_samples(fs, sharp_hz, order))
    reach = math.ceil(config.reversal_window * fs) + 2
    run = _Run(d, tb, regressor, base, config, cutoff_hz, sharp_hz, factor,
               margin=2 * settle + 4 + reach, reach=reach, progress=progress)
    run.summary += notes
    try:
        run.first_pass()
        parts = [run.kept(segment) for segment in run.segments()]
    except InputError as exc:
        raise InputError(f'{d.source}: {exc}') from None
    q, qd, qdd, tau, sharp, mask = (None if parts[0][i] is None else
                                    np.concatenate([x[i] for x in parts]) for i in range(6))
    torque = None
    if config.fixed_delay != 0:
        torque = TorqueSignal(fs, [x[6] for x in parts], [x[7] for x in parts], factor,
                              cutoff_hz=cutoff_hz, order=order)
    return KeptRows(d.source, d.samples, factor, q, qd, qdd, tau, sharp, mask, run.summary,
                    torque=torque)


class _Run:
    """The two passes of ``reduce`` over one recording."""

    def __init__(self, d, tb, regressor, base, config, cutoff_hz, sharp_hz, factor, margin,
                 reach, progress=None):
        self.d, self.tb, self.regressor, self.base = d, tb, regressor, base
        self.cutoff_hz, self.sharp_hz, self.factor = cutoff_hz, sharp_hz, factor
        self.order, self.window = config.filter_order, config.reversal_window
        self.use = config.use_recorded_velocity
        self.keep_torque = config.fixed_delay != 0      # for ``TorqueSignal``
        self.fs = tb.rate
        self.trim = trim_samples(self.fs, cutoff_hz)
        self.margin, self.reach = margin, reach
        self.sharp = sharp_columns(regressor, base)
        self.summary = [tb.summary(), *d.notes]
        self.recorded = False
        self.peak = None
        self.progress = progress

    def segments(self):
        for span in self.tb.segments:
            yield _Segment(self.d, self.tb, span, self.tb.grid(span))

    def windows(self, segment: _Segment):
        """(a, b, lo, hi): the block ``[a, b)`` of grid samples and its window ``[lo, hi)``."""
        length = len(segment.grid)
        for a in range(0, length, BLOCK_ROWS):
            b = min(length, a + BLOCK_ROWS)
            yield a, b, max(0, a - self.margin), min(length, b + self.margin)
            advance(self.progress)

    def lowpass(self, x, cutoff_hz):
        return lowpass(x, self.fs, cutoff_hz, self.order)

    def motion(self, segment, lo, hi, recorded: bool):
        """Filtered q, qd, qdd and the sharp velocity (before ``_at_rest_zero``) on a window;
        ``recorded``: qd from the recorded velocity."""
        t = segment.grid[lo:hi]
        q_raw = segment.values(self.d.position, lo, hi, True)
        q = self.lowpass(q_raw, self.cutoff_hz)
        if recorded:
            qd, sharp = self.recorded_velocity(segment, lo, hi)
        else:
            qd = differentiate(q, t)
            sharp = differentiate(self.lowpass(q_raw, self.sharp_hz), t) \
                if self.sharp and self.sharp_hz > self.cutoff_hz else qd
        return q, qd, differentiate(qd, t), sharp

    def recorded_velocity(self, segment, lo, hi):
        """The filtered recorded velocity on a window, and its sharp velocity."""
        v_raw = segment.values(self.d.velocity, lo, hi, True)
        qd = self.lowpass(v_raw, self.cutoff_hz)
        sharp_filter = self.sharp and self.sharp_hz > self.cutoff_hz
        return qd, self.lowpass(v_raw, self.sharp_hz) if sharp_filter else qd

    def first_pass(self) -> None:
        """The recorded velocity's check and the peak of the sharp velocity."""
        sums = VelocitySums()
        peaks = {False: 0.0, True: 0.0}
        for segment in self.segments():
            expect(self.progress, 2 * math.ceil(len(segment.grid) / BLOCK_ROWS))  # both passes
            inner = (self.trim, len(segment.grid) - self.trim)
            for a, b, lo, hi in self.windows(segment):
                q, qd, qdd, sharp = self.motion(segment, lo, hi, False)
                peaks[False] = np.maximum(peaks[False], _peak(sharp[a - lo:b - lo]))
                if self.d.velocity is None:
                    continue
                rows = slice(max(a, inner[0]) - lo, min(b, inner[1]) - lo)
                recorded, sharp_v = self.recorded_velocity(segment, lo, hi)
                peaks[True] = np.maximum(peaks[True], _peak(sharp_v[a - lo:b - lo]))
                if rows.stop > rows.start:
                    sums.add(recorded[rows], qd[rows], qdd[rows])
        if self.d.velocity is not None:
            check = sums.check(self.d.joint_names, self.cutoff_hz)
            self.recorded = check.agrees if self.use is None else self.use
            self.summary.append(check.summary(self.d.source, self.recorded, self.use is not None))
        self.peak = peaks[self.recorded]

    def kept(self, segment: _Segment) -> tuple:
        """(q, qd, qdd, tau, sharp columns, mask) at the kept rows of a segment, then its
        filtered torques at every sample and the kept rows."""
        length = len(segment.grid)
        kept = np.arange(self.trim, length - self.trim)[::self.factor]
        out, torque = [], []
        for a, b, lo, hi in self.windows(segment):
            rows = kept[(kept >= a) & (kept < b)]
            if not (len(rows) or self.keep_torque):
                continue
            tau = self.lowpass(segment.values(self.d.effort, lo, hi, False), self.cutoff_hz)
            if self.keep_torque:
                torque.append(tau[a - lo:b - lo])
            if not len(rows):
                continue
            q, qd, qdd, sharp = self.motion(segment, lo, hi, self.recorded)
            k = rows - lo
            columns = None
            if self.sharp:
                sharp = np.where(np.abs(sharp) < REST_FRACTION * self.peak, 0.0, sharp)
                columns = self.sharp_columns(sharp, qdd)[k]
            out.append((q[k], qd[k], qdd[k], tau[k], columns,
                        self.mask(segment, qd, a, b, lo, rows)))
        return tuple(None if out[0][i] is None else np.concatenate([x[i] for x in out])
                     for i in range(6)) + (np.concatenate(torque) if torque else None, kept)

    def sharp_columns(self, sharp, qdd):
        """``filtered_sharp_columns`` on a window."""
        columns = self.base.independent[self.sharp] - self.regressor.n_inertial
        full = self.regressor.actuator_columns(sharp, qdd, columns)
        moving = np.any(full != 0, axis=0)
        full[:, moving] = self.lowpass(full[:, moving], self.cutoff_hz)
        return full

    def mask(self, segment, qd, a, b, lo, rows):
        """``Processed.reversal_mask`` at the kept rows of a block."""
        gear = self.regressor.gear
        if self.window <= 0:
            return np.ones((len(rows), qd.shape[1]), dtype=bool)
        near_lo = max(lo, a - self.reach)
        near_hi = min(lo + len(qd), b + self.reach)
        near = near_reversal(qd[near_lo - lo:near_hi - lo] @ gear.T,
                             segment.grid[near_lo:near_hi], segment.grid[rows], self.window)
        return ~(near.astype(float) @ (gear != 0).astype(float) > 0)


def _peak(x: np.ndarray) -> np.ndarray:
    return np.max(np.abs(x), axis=0, initial=0.0)


def regression(regressor: Regressor, base: BaseParameters, rows: KeptRows,
               payload=None, progress: Progress = None) -> tuple[np.ndarray, np.ndarray]:
    """The base regressor and torques of kept rows (``regression_data``).

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    rows : KeptRows
        ``reduce`` of a recording.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the 10 columns of a payload in this frame.
    progress : callable or object with ``update(n)``, optional
        Told of one step per block of ``REGRESSOR_ROWS`` rows (``ident_core.progress``).

    Returns
    -------
    w : (M, n, nb) or (M, n, nb + 10) ndarray
    tau : (M, n) ndarray
    """
    if rows.w is not None:
        return rows.w, rows.tau
    expect(progress, math.ceil(len(rows.tau) / REGRESSOR_ROWS))
    n, nb = regressor.robot.n, base.count
    w = np.empty((len(rows.tau), n, nb + (10 if payload is not None else 0)))
    sharp = sharp_columns(regressor, base)
    for start in range(0, len(w), REGRESSOR_ROWS):
        block = slice(start, start + REGRESSOR_ROWS)
        full = regressor.compute(rows.q[block], rows.qd[block], rows.qdd[block])
        w[block, :, :nb] = full[:, :, base.independent]
        if payload is not None:
            w[block, :, nb:] = payload.regressor(full)
        if sharp:
            w[block, :, sharp] = rows.sharp[block]
        advance(progress)
    return w, rows.tau


def stack_kept(regressor: Regressor, base: BaseParameters, kept: list,
               payload=None, progress: Progress = None) -> StackedRegression:
    """Stack the regression rows of recordings reduced by ``reduce``.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    kept : list of KeptRows
        One per recording.
    payload : ident_core.payload.frame.PayloadFrame, optional
        Append the payload regressor in this frame.
    progress : callable or object with ``update(n)``, optional
        Told of the regressor's blocks (``regression``).

    Returns
    -------
    StackedRegression
    """
    parts = [regression(regressor, base, k, payload, progress) for k in kept]
    w = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
    tau = np.concatenate([p[1] for p in parts])
    return StackedRegression(w, tau, np.concatenate([k.mask for k in kept]),
                             [k.factor for k in kept], [line for k in kept for line in k.summary])
