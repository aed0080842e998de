"""The time base of a log: when each row was sampled, and the uniform grid it is resampled onto.

Many logs come from loggers that are not real-time: they sample a controller running at a fixed
rate (1 kHz, 500 Hz, ...) at irregular moments, stamp the rows late by a varying amount, repeat a
row when they read the same controller cycle twice, and stall now and then. Filtering such rows by
sample index (as if the rate were uniform) and differentiating over the irregular stamps turns the
jitter into acceleration noise. ``analyse`` works out the time base of a log instead:

* **nominal period** ``T``: the median interval, snapped to a common controller rate
  (``COMMON_RATES``) when within ``SNAP_TOLERANCE`` (10 %: the rates listed are at least 20 %
  apart, and the median interval of a logger that polls a controller runs a few % long once its
  repeated rows are dropped);
* **clock**, one of

  - ``uniform``: the stamps lie on a uniform grid already (``sample_rate`` logs, simulators);
  - ``fixed_rate``: the rows are cycles ``t0 + n·T`` of a fixed-rate controller (integer ``n``,
    cycles may be missing) whatever their stamps say: a logger stamped every cycle late by a
    varying amount, or polled the controller's latest state at moments of its own
    (``fixed_rate_cycles``). ``time.clock: auto`` takes it when the stamps admit such cycles and
    the positions are smoother on them than on the stamps: each half of the rows (odd, even)
    predicts the other half by a cubic spline, once over each time base, and the time base with
    the smaller prediction residual wins. Timing errors show as high-frequency roughness of the
    position, the motion itself does not (it is smooth at half the sample rate). The decision
    is the data's, not a threshold's: no jitter level or residual bound to tune;
  - ``stamps``: the stamps are the sample times, however irregular (``time.clock: stamps``
    forces it unless they are uniform);

* **gaps**: intervals of ``GAP_PERIODS`` periods or more (two samples missing, at least: a single
  missing sample cannot be told from jitter and is interpolated like any irregular sample). A gap
  up to ``BRIDGE_CUTOFF_PERIODS`` cut-off periods is bridged by interpolation; a longer one splits
  the log into pieces, each filtered, differentiated and trimmed on its own.

``TimeBase.resample`` puts a signal onto the uniform grid of period ``T`` of each piece, before any
filtering. Positions (and recorded velocities) take a cubic spline (C², so the accelerations
differentiated from them have no kinks at the rows; positions are smooth and barely noisy, so the
spline does not ring); efforts, which are noisy, take linear interpolation, which cannot overshoot
its neighbours (a spline through noise rings between the rows).

Why a tenth of the cut-off period bridges: the interpolants are polynomials across the gap; for a
component of frequency ``f`` over a gap ``g``, linear interpolation errs by at most
``1 − cos(π f g) ≈ (π f g)²/2`` of its amplitude, a cubic spline by about ``(2π f g)⁴/384``. At the
cut-off frequency (the highest the identification keeps) and ``g = 0.1/fc`` that is 5 % and
0.04 %, falling with ``f²`` and ``f⁴`` towards the motion's frequencies, well below the cut-off.
Splitting instead costs the trim at both new ends (``3/fc`` each).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.interpolate import make_interp_spline

from ..errors import InputError

#: Controller rates [Hz] a median interval snaps to.
COMMON_RATES = (10000, 8000, 5000, 4000, 2500, 2000, 1000, 800, 500, 400, 250, 200, 125, 100,
                50, 25, 20, 10)
SNAP_TOLERANCE = 0.1
GAP_PERIODS = 3.0
BRIDGE_CUTOFF_PERIODS = 0.1
#: Stamps within this fraction of a period of the fixed-rate cycles are a uniform clock.
UNIFORM_TOLERANCE = 1e-3

Clock = Literal['uniform', 'fixed_rate', 'stamps']


@dataclass
class TimeBase:
    """How the rows of a log map onto uniform grids (module docstring).

    Parameters
    ----------
    source : str
        The log, for the summary and messages.
    clock : {'uniform', 'fixed_rate', 'stamps'}
        The time base taken.
    period : float
        Grid period T [s].
    times : (N,) ndarray
        Time of each row in that time base [s], strictly increasing.
    pieces : list of (int, int)
        ``[start, stop)`` rows of the pieces kept.
    bridged : int
        Gaps interpolated across.
    split : list of float
        Lengths of the gaps the log was split at [s].
    short : int
        Pieces dropped for being too short for the filter.
    short_limit : float
        Shortest piece kept [s] (0: none dropped yet).
    jitter : float
        Standard deviation of the stamp intervals (``jitter``), relative to T.
    repeated : int
        Rows dropped on loading because they repeated the previous row exactly.
    described : str
        ``time.clock`` when the description chose the clock, else ''.
    """

    source: str
    clock: Clock
    period: float
    times: np.ndarray
    pieces: list[tuple[int, int]]
    bridged: int = 0
    split: list[float] = field(default_factory=list)
    short: int = 0
    short_limit: float = 0.0
    jitter: float = 0.0
    repeated: int = 0
    described: str = ''

    @property
    def rate(self) -> float:
        """Grid sample rate 1/T [Hz]."""
        return 1.0 / self.period

    def grid(self, piece: tuple[int, int]) -> np.ndarray:
        """The uniform sample times of a piece.

        Parameters
        ----------
        piece : (int, int)
            ``[start, stop)`` rows.

        Returns
        -------
        (M,) ndarray
            ``times[start] + k·T`` up to ``times[stop − 1]`` [s].
        """
        start, stop = piece
        if self._on_grid(piece):
            return self.times[start:stop]
        count = int(math.floor((self.times[stop - 1] - self.times[start]) / self.period
                               + 1e-6)) + 1
        return self.times[start] + self.period * np.arange(count)

    def resample(self, values: np.ndarray, smooth: bool) -> list[np.ndarray]:
        """A signal on the uniform grid of each piece.

        Parameters
        ----------
        values : (N, ...) ndarray
            One row per log row.
        smooth : bool
            Cubic spline (positions, velocities) or linear interpolation (efforts).

        Returns
        -------
        list of (M_i, ...) ndarray
            One array per piece, on ``grid(piece)``.
        """
        out = []
        for piece in self.pieces:
            start, stop = piece
            if self._on_grid(piece):
                out.append(values[start:stop])
                continue
            x = self.times[start:stop]
            k = min(3 if smooth else 1, len(x) - 1)
            out.append(make_interp_spline(x, values[start:stop], k=k, axis=0)(self.grid(piece)))
        return out

    def without_short(self, min_samples: int) -> TimeBase:
        """The same time base without the pieces of ``min_samples`` grid samples or fewer.

        Parameters
        ----------
        min_samples : int
            E.g. what the filter and the trim at both ends need.

        Returns
        -------
        TimeBase

        Raises
        ------
        InputError
            If no piece is long enough (naming the source).
        """
        kept = [p for p in self.pieces if len(self.grid(p)) > min_samples]
        if not kept:
            longest = max(len(self.grid(p)) for p in self.pieces)
            raise InputError(f'{self.source}: {longest} samples are too few at '
                             f'{_rate_text(self.rate)} (more than {min_samples} needed for the '
                             'filter and its trimmed edges)')
        return replace(self, pieces=kept, short=self.short + len(self.pieces) - len(kept),
                       short_limit=(min_samples + 1) * self.period)

    def summary(self) -> str:
        """What was done, in one line.

        Returns
        -------
        str
            E.g. ``log.npz: resampled 20 544 rows to 1 kHz: 1 255 repeated rows dropped, 4 gaps
            bridged, 1 gap of 0.35 s split``.
        """
        rows, rate = _count(len(self.times)), _rate_text(self.rate)
        jitter = f'stamps jitter {100 * self.jitter:.2g} %'
        if self.clock == 'stamps':
            head = f'resampled {rows} rows to {rate} ({jitter})'
        else:
            cycles = int(np.rint((self.times[-1] - self.times[0]) / self.period)) + 1
            on = f' on {_count(cycles)} cycles' if cycles != len(self.times) else ''
            head = (f'uniform {rate} clock, {rows} rows{on}' if self.clock == 'uniform' else
                    f'fixed-rate clock {rate}'
                    + ('' if self.described else f' (logger {jitter})') + f', {rows} rows{on}')
        if self.described:
            head += f' (time.clock: {self.described})'
        events = self._events()
        return f'{Path(self.source).name}: {head}' + (': ' + ', '.join(events) if events else '')

    def _events(self) -> list[str]:
        events = []
        if self.repeated:
            events.append(f'{_count(self.repeated)} repeated row{_s(self.repeated)} dropped')
        if self.bridged:
            events.append(f'{_count(self.bridged)} gap{_s(self.bridged)} bridged')
        if self.split:
            lengths = sorted(self.split)
            span = (f'{lengths[0]:.2g} s' if len(lengths) == 1 or lengths[0] == lengths[-1]
                    else f'{lengths[0]:.2g}–{lengths[-1]:.2g} s')
            events.append(f'{len(lengths)} gap{_s(len(lengths))} of {span} split')
        if self.short:
            events.append(f'{self.short} piece{_s(self.short)} shorter than '
                          f'{self.short_limit:.2g} s dropped')
        return events

    def _on_grid(self, piece: tuple[int, int]) -> bool:
        """Whether every grid point of the piece is a row (nothing to interpolate)."""
        start, stop = piece
        if self.clock == 'stamps':
            return False
        cycles = np.rint((self.times[stop - 1] - self.times[start]) / self.period)
        return int(cycles) == stop - start - 1


def analyse(t: np.ndarray, position: np.ndarray, cutoff_hz: float, *, source: str = '',
            clock: str = 'auto', repeated: int = 0) -> TimeBase:
    """The time base of a log (module docstring).

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing (rows that repeat the previous one already dropped).
    position : (N, n) ndarray
        Positions [rad or m]; in ``auto``, the time base in which they are smoother wins.
    cutoff_hz : float
        Low-pass cut-off that follows [Hz]; gaps up to ``BRIDGE_CUTOFF_PERIODS / cutoff_hz``
        are bridged.
    source : str
        The log, for the summary and messages.
    clock : {'auto', 'stamps', 'fixed_rate'}
        The description's ``time.clock``. ``fixed_rate``: ``t`` is the fixed-rate clock
        already (``signal_processing.fixed_rate_clock``); ``stamps``: trust the stamps.
    repeated : int
        Rows dropped on loading as repeats, for the summary.

    Returns
    -------
    TimeBase

    Raises
    ------
    InputError
        If there are fewer than two rows.
    """
    if len(t) < 2:
        raise InputError(f'{source}: {len(t)} row(s) hold no time base')
    period = nominal_period(t)
    cycles = fixed_rate_cycles(t, period)
    chosen: Clock = 'stamps'
    times = t
    if cycles is not None:
        ticks, fitted = cycles
        if clock == 'fixed_rate' or np.max(np.abs(t - ticks)) <= UNIFORM_TOLERANCE * fitted:
            chosen = 'fixed_rate' if clock == 'fixed_rate' else 'uniform'
        elif clock == 'auto' and smoother_on_cycles(t, ticks, position, fitted):
            chosen = 'fixed_rate'
        if chosen != 'stamps':
            times, period = ticks, fitted
    base = TimeBase(source, chosen, period, times, [], jitter=jitter(t, period),
                    repeated=repeated, described='' if clock == 'auto' else clock)
    return _pieces(base, BRIDGE_CUTOFF_PERIODS / cutoff_hz)


def nominal_period(t: np.ndarray) -> float:
    """The sample period of a log: the median interval, snapped to a common controller rate.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing, N ≥ 2.

    Returns
    -------
    float
        ``1/rate`` for the rate of ``COMMON_RATES`` within ``SNAP_TOLERANCE`` of the median
        interval, else the median interval [s].
    """
    median = float(np.median(np.diff(t)))
    rates = np.array(COMMON_RATES, dtype=float)
    near = np.abs(rates * median - 1) <= SNAP_TOLERANCE
    return 1.0 / rates[near][0] if near.any() else median


def fixed_rate_cycles(t: np.ndarray, period: float) -> tuple[np.ndarray, float] | None:
    """The cycles ``t0 + n·T`` of a fixed-rate clock that the rows may have been sampled at.

    Row k gets the cycle ``n_k = floor((t_k − φ) / T)``: the cycle boundaries ``φ + m·T`` are
    placed where they separate the most pairs of consecutive rows less than a period apart
    (``cycle_phase``). That fits both kinds of logger of a fixed-rate controller: one that stamps
    every cycle late by less than half a period (the boundaries fall between the clusters of
    stamps), and one that polls the controller's latest state at its own irregular moments (the
    boundaries are the controller's; rows that read the same cycle twice were dropped as repeats).
    Cycles may be missing (dropped samples). When the nominal period leaves two rows on one
    cycle, ``T`` is refitted as the least-squares slope of the stamps over ``n`` and the cycles
    assigned again (a few times), as the logger's and the controller's clocks may drift apart.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing.
    period : float
        Nominal period [s].

    Returns
    -------
    ticks : (N,) ndarray
        ``t0 + n·T`` on the least-squares line through the stamps [s].
    period : float
        The fitted T [s].

    None is returned when two rows fall on the same cycle whatever the phase: the stamps are no
    fixed-rate clock's.
    """
    slope = period
    for _ in range(4):
        n = np.floor(t / slope - cycle_phase(t, slope))
        fitted, t0 = np.polyfit(n, t, 1)
        if np.all(np.diff(n) >= 1):
            return t0 + fitted * n, float(fitted)
        if fitted == slope:
            break
        slope = fitted
    return None


def cycle_phase(t: np.ndarray, period: float) -> float:
    """Where the cycle boundaries of a fixed-rate clock of period T lie among the stamps.

    Two consecutive rows less than a period apart were sampled in different cycles only if a
    boundary lies between them: on the circle of phases ``t/T mod 1``, inside the arc from the
    first stamp's phase to the second's. The phase returned lies in the widest stretch covered by
    the most such arcs (all of them for a consistent clock).

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing.
    period : float
        T [s].

    Returns
    -------
    float
        φ in [0, 1) cycles: boundaries at ``(m + φ)·T``.
    """
    phase = np.mod(t / period, 1.0)
    length = np.diff(t) / period
    short = length < 1
    if not short.any():     # no constraint: opposite the mean phase of the stamps
        mean = np.angle(np.mean(np.exp(2j * np.pi * phase))) / (2 * np.pi)
        return float(np.mod(mean + 0.5, 1.0))
    start = phase[:-1][short]
    end = start + length[short]
    # arcs unrolled on [0, 3): every arc and its copy one turn later; read the turn [1, 2)
    position = np.concatenate([start, end, start + 1, end + 1])
    step = np.concatenate([np.ones_like(start), -np.ones_like(end)] * 2)
    order = np.argsort(position, kind='stable')
    position, cover = position[order], np.cumsum(step[order])
    middle = 0.5 * (position[:-1] + position[1:])
    width = np.diff(position)
    turn = (middle >= 1) & (middle < 2)
    best = turn & (cover[:-1] == cover[:-1][turn].max())
    k = np.flatnonzero(best)[np.argmax(width[best])]
    return float(middle[k] - 1)


def smoother_on_cycles(t: np.ndarray, ticks: np.ndarray, position: np.ndarray,
                       period: float) -> bool:
    """Whether the positions are smoother on the fixed-rate cycles than on the stamps.

    Parameters
    ----------
    t, ticks : (N,) ndarray
        The stamps and the cycles of ``fixed_rate_cycles`` [s].
    position : (N, n) ndarray
        Positions [rad or m].
    period : float
        T [s].

    Returns
    -------
    bool
        True when the geometric mean over the joints of the ratio of their ``roughness`` (cycles
        over stamps) is at most 1 (ties, e.g. still joints, go to the cycles).
    """
    near = (_span(t) < 2 * GAP_PERIODS * period) & (_span(ticks) < 2 * GAP_PERIODS * period)
    on_ticks, on_stamps = roughness(ticks, position, near), roughness(t, position, near)
    both = (on_ticks > 0) & (on_stamps > 0)
    if not both.any():
        return True
    return float(np.mean(np.log(on_ticks[both] / on_stamps[both]))) <= 0.0


def roughness(times: np.ndarray, position: np.ndarray, rows: np.ndarray | None = None
              ) -> np.ndarray:
    """High-frequency roughness of positions over a time base.

    The even rows predict the odd rows by a cubic spline and vice versa; smooth motion is
    predicted almost exactly, timing errors are not.

    Parameters
    ----------
    times : (N,) ndarray
        Row times [s], strictly increasing, N ≥ 8.
    position : (N, n) ndarray
        Positions [rad or m].
    rows : (N,) ndarray of bool, optional
        Rows to judge (e.g. away from gaps); the first and last two are never judged.

    Returns
    -------
    (n,) ndarray
        RMS prediction residual per joint [rad or m].
    """
    if len(times) < 8:
        return np.zeros(position.shape[1])
    residual = np.zeros_like(position, dtype=float)
    for first in (0, 1):
        known = slice(first, None, 2)
        x = times[known]
        residual[1 - first::2] = (make_interp_spline(x, position[known], k=3, axis=0)(
            times[1 - first::2]) - position[1 - first::2])
    judged = np.zeros(len(times), dtype=bool)
    judged[2:-2] = True
    if rows is not None:
        judged &= rows
    if not judged.any():
        return np.zeros(position.shape[1])
    return np.sqrt(np.mean(residual[judged] ** 2, axis=0))


def jitter(t: np.ndarray, period: float) -> float:
    """Relative jitter of the sample intervals where no sample is missing.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s].
    period : float
        Nominal period T [s].

    Returns
    -------
    float
        ``std(dt) / T`` over the intervals shorter than 1.5 T.
    """
    dt = np.diff(t)
    dt = dt[dt < 1.5 * period]
    return float(np.std(dt) / period) if len(dt) else 0.0


def _pieces(base: TimeBase, bridge: float) -> TimeBase:
    """Count the gaps; split at those longer than ``bridge`` seconds."""
    dt = np.diff(base.times)
    gaps = dt >= (GAP_PERIODS - 0.5 if base.clock != 'stamps' else GAP_PERIODS) * base.period
    cuts = np.flatnonzero(gaps & (dt > bridge))
    bounds = np.concatenate([[0], cuts + 1, [len(base.times)]])
    return replace(base, pieces=[(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])],
                   bridged=int(gaps.sum() - len(cuts)), split=[float(dt[c]) for c in cuts])


def _span(x: np.ndarray) -> np.ndarray:
    """``x[k+1] − x[k−1]`` per row (inf at the ends)."""
    span = np.full(len(x), np.inf)
    span[1:-1] = x[2:] - x[:-2]
    return span


def _rate_text(rate: float) -> str:
    rate = float(f'{rate:.3g}')
    return f'{rate / 1000:g} kHz' if rate >= 1000 else f'{rate:g} Hz'


def _count(n: int) -> str:
    return f'{n:,}'.replace(',', ' ')


def _s(n: int) -> str:
    return '' if n == 1 else 's'
