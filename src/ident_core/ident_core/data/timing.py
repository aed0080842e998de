"""The time base of a log: which rows are samples, when each was sampled, and the uniform grid it
is resampled onto.

``analyse`` works it out: the samples (``samples``, ``spread_ties``), the controller's period
(``cycle_period``, ``cycle_phase``, ``snapped_period``), the clock (uniform stamps, the cycles
of a fixed-rate controller, or the stamps themselves; ``fixed_rate_cycles``,
``smoother_on_cycles``) and the gaps bridged or split; ``TimeBase.resample`` puts the signals
onto the grid. The method, and why, is docs/methods.md §3, "Time base".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from ..errors import InputError
from .sources import short_source

#: Controller rates [Hz] an estimated period snaps to.
COMMON_RATES = (10000, 8000, 5000, 4000, 2500, 2000, 1000, 800, 500, 400, 250, 200, 125, 100,
                50, 25, 20, 10)
SNAP_TOLERANCE = 0.005
#: Sample rates a robot log can have [Hz]; outside, the time column's unit is wrong.
PLAUSIBLE_RATES = (1.0, 50_000.0)
GAP_PERIODS = 3
BRIDGE_CUTOFF_PERIODS = 0.1
#: Stamps within this fraction of a period of the fixed-rate cycles are a uniform clock.
UNIFORM_TOLERANCE = 1e-3
#: How far below its upper bound the cycle period is searched (a polling logger's bound is a
#: few 0.1 % above the period).
SEARCH_SPAN = 0.02
#: Phases per period at which the cover of the cycle boundaries is counted.
COVER_BINS = 64
#: Rows of the first (coarsest) cover search; each next one takes 8 times more.
COVER_ROWS = 512
#: Candidate periods × row pairs counted at once (memory of the cover search).
COVER_CHUNK = 2_000_000

Clock = Literal['uniform', 'fixed_rate', 'stamps']


@dataclass
class TimeBase:
    """How the rows of a log map onto uniform grids (docs/methods.md §3, Time base).

    Parameters
    ----------
    source : str
        The log, for the summary and messages.
    clock : {'uniform', 'fixed_rate', 'stamps'}
        The time base taken.
    period : float
        Grid period T [s].
    times : (M,) ndarray
        Time of each sample (row kept) in that time base [s], strictly increasing.
    segments : list of (int, int)
        ``[start, stop)`` indices into ``times`` of the segments kept.
    rows : (M,) ndarray of int or None
        The log row of each sample; None: every row, in order.
    bridged : int
        Gaps interpolated across.
    split : list of float
        Lengths of the gaps the log was split at [s].
    short : int
        Segments dropped for being too short for the filter.
    short_limit : float
        Shortest segment kept [s] (0: none dropped yet).
    jitter : float
        Standard deviation of the stamp intervals (``jitter``), relative to T.
    repeated : int
        Rows dropped because they repeated the previous row within a period (``samples``).
    duplicated : int
        Rows of a state of their own that share the stamp of the row before (``spread_ties``).
    described : str
        ``time.clock`` when the description chose the clock, else ''.
    """

    source: str
    clock: Clock
    period: float
    times: np.ndarray
    segments: list[tuple[int, int]]
    rows: np.ndarray | None = None
    bridged: int = 0
    split: list[float] = field(default_factory=list)
    short: int = 0
    short_limit: float = 0.0
    jitter: float = 0.0
    repeated: int = 0
    duplicated: int = 0
    described: str = ''

    @property
    def rate(self) -> float:
        """Grid sample rate 1/T [Hz]."""
        return 1.0 / self.period

    def grid(self, segment: tuple[int, int]) -> np.ndarray:
        """The uniform sample times of a segment.

        Parameters
        ----------
        segment : (int, int)
            ``[start, stop)`` samples.

        Returns
        -------
        (L,) ndarray
            ``times[start] + k·T`` up to ``times[stop − 1]`` [s].
        """
        start, stop = segment
        if self._on_grid(segment):
            return self.times[start:stop]
        count = int(math.floor((self.times[stop - 1] - self.times[start]) / self.period
                               + 1e-6)) + 1
        return self.times[start] + self.period * np.arange(count)

    def resample(self, values: np.ndarray, smooth: bool) -> list[np.ndarray]:
        """A signal on the uniform grid of each segment.

        Parameters
        ----------
        values : (N, ...) ndarray
            One row per log row (the rows dropped as repeats included).
        smooth : bool
            Cubic spline (positions, velocities) or linear interpolation (efforts).

        Returns
        -------
        list of (L_i, ...) ndarray
            One array per segment, on ``grid(segment)``.
        """
        values = values if self.rows is None else values[self.rows]
        out = []
        for segment in self.segments:
            start, stop = segment
            if self._on_grid(segment):
                out.append(values[start:stop])
                continue
            # deliberately lazy: scipy.interpolate only for a log off its grid (start-up time)
            from scipy.interpolate import make_interp_spline

            x = self.times[start:stop]
            k = min(3 if smooth else 1, len(x) - 1)
            out.append(make_interp_spline(x, values[start:stop], k=k, axis=0)(
                self.grid(segment)))
        return out

    def without_short(self, min_samples: int) -> TimeBase:
        """The same time base without the segments of ``min_samples`` grid samples or fewer.

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
            If no segment is long enough (naming the source).
        """
        kept = [s for s in self.segments if len(self.grid(s)) > min_samples]
        if not kept:
            raise InputError(self._too_short(min_samples))
        return replace(self, segments=kept,
                       short=self.short + len(self.segments) - len(kept),
                       short_limit=(min_samples + 1) * self.period)

    def summary(self) -> str:
        """What was done, in one line.

        Returns
        -------
        str
            E.g. ``log.npz: resampled 20 544 rows to 1 kHz (stamps jitter 25 %): 1 255 repeated
            rows dropped, 4 gaps bridged, 1 gap of 0.35 s split``.
        """
        rows, rate = _count(len(self.times)), _rate_text(self.rate)
        stamps = f'stamps jitter {round(100 * self.jitter, 2):.2g} %'
        if self.duplicated:
            stamps += f', {_count(self.duplicated)} duplicated'
        if self.clock == 'stamps':
            head = f'resampled {rows} rows to {rate} ({stamps})'
        else:
            cycles = int(np.rint((self.times[-1] - self.times[0]) / self.period)) + 1
            on = f' on {_count(cycles)} cycles' if cycles != len(self.times) else ''
            head = (f'uniform {rate} clock, {rows} rows{on}' if self.clock == 'uniform' else
                    f'fixed-rate clock {rate}'
                    + ('' if self.described else f' (logger {stamps})') + f', {rows} rows{on}')
        if self.described:
            head += f' (time.clock: {self.described})'
        events = self._events()
        return f'{short_source(self.source)}: {head}' + (': ' + ', '.join(events) if events else '')

    def _events(self) -> list[str]:
        events = []
        if self.repeated:
            events.append(f'{_count(self.repeated)} repeated row{_s(self.repeated)} dropped')
        if self.bridged:
            events.append(f'{_count(self.bridged)} gap{_s(self.bridged)} bridged')
        if self.split:
            shown = sorted({f'{x:.2g}' for x in self.split}, key=float)
            span = shown[0] if len(shown) == 1 else f'{shown[0]}–{shown[-1]}'
            events.append(f'{len(self.split)} gap{_s(len(self.split))} of {span} s split')
        if self.short:
            events.append(f'{self.short} segment{_s(self.short)} shorter than '
                          f'{self.short_limit:.2g} s dropped')
        return events

    def _too_short(self, min_samples: int) -> str:
        """The message when no segment has more than ``min_samples`` grid samples."""
        lengths = [len(self.grid(s)) for s in self.segments]
        need = f'more than {min_samples} needed at {_rate_text(self.rate)} for the filter and ' \
               'its trimmed edges'
        if len(lengths) == 1:
            return f'{self.source}: {lengths[0]} samples are too few ({need})'
        return (f'{self.source}: all {len(lengths)} segments between the gaps are too short '
                f'(longest {max(lengths)} samples; {need}); the log was split at '
                f'{len(self.split)} gap{_s(len(self.split))} of up to {max(self.split):.3g} s')

    def _on_grid(self, segment: tuple[int, int]) -> bool:
        """Whether every grid point of the segment is a sample (nothing to interpolate)."""
        start, stop = segment
        if self.clock == 'stamps':
            return False
        cycles = np.rint((self.times[stop - 1] - self.times[start]) / self.period)
        return int(cycles) == stop - start - 1


def analyse(t: np.ndarray, position: np.ndarray, cutoff_hz: float, *, source: str = '',
            clock: str = 'auto', repeats: np.ndarray | None = None,
            first_row: int = 0) -> TimeBase:
    """The time base of a log (docs/methods.md §3, Time base).

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], non-decreasing.
    position : (N, n) ndarray
        Positions [rad or m]; in ``auto``, the time base in which they are smoother wins.
    cutoff_hz : float
        Low-pass cut-off that follows [Hz]; gaps up to ``BRIDGE_CUTOFF_PERIODS / cutoff_hz``
        are bridged.
    source : str
        The log, for the summary and messages.
    clock : {'auto', 'stamps', 'fixed_rate'}
        The description's ``time.clock``. ``fixed_rate``: ``t`` is the fixed-rate clock
        already (``signal_processing.fixed_rate_clock``) and every row a sample; ``stamps``:
        trust the stamps.
    repeats : (N,) ndarray of bool, optional
        Rows equal to the previous row in every signal (``samples``); None: none.
    first_row : int
        Data row of the first row, for messages.

    Returns
    -------
    TimeBase

    Raises
    ------
    InputError
        If there are fewer than two rows, every row holds the same sample, or rows share stamps
        that no fixed-rate clock explains (or ``clock`` is ``stamps``).
    """
    t = np.asarray(t, dtype=float)
    if len(t) < 2:
        raise InputError(f'{source}: {len(t)} row{_s(len(t))}: a time base needs two samples '
                         'or more')
    bridge = BRIDGE_CUTOFF_PERIODS / cutoff_hz
    if clock == 'fixed_rate':
        period = _plausible(float((t[-1] - t[0]) / (len(t) - 1)), source)
        return _segments(TimeBase(source, 'fixed_rate', period, t, [], described=clock), bridge)
    repeats = np.zeros(len(t), dtype=bool) if repeats is None else np.asarray(repeats, bool)
    distinct = np.flatnonzero(~repeats[1:]) + 1
    if not len(distinct):
        raise InputError(f'{source}: all {len(t)} rows hold the same sample (a constant log: '
                         'nothing moves)')
    nominal = _plausible(nominal_period(spread_ties(t[np.r_[0, distinct]], source)[0]),
                         source)
    rows = np.flatnonzero(samples(t, repeats, nominal))
    stamps, step = spread_ties(t[rows], source)
    chosen, times, period = _clock_of(t[rows], stamps, step, position[rows], clock, nominal,
                                      f'{source}: ' if source else '', first_row + rows)
    base = TimeBase(source, chosen, period, times, [], rows=rows, jitter=jitter(stamps, period),
                    repeated=len(t) - len(rows), duplicated=int(np.sum(np.diff(t[rows]) == 0)),
                    described='' if clock == 'auto' else clock)
    return _segments(base, bridge)


def _plausible(period: float, source: str) -> float:
    """The period, if its rate is one a robot log can have (``PLAUSIBLE_RATES``)."""
    rate = 1.0 / period if period > 0 else math.inf
    low, high = PLAUSIBLE_RATES
    if low <= rate <= high:
        return period
    unit = 'milliseconds read as seconds' if rate < low else \
        'seconds read as milliseconds or microseconds'
    raise InputError(f'{source + ": " if source else ""}a sample rate of {_rate_text(rate)} is '
                     f'no robot log\'s: time in {unit}? (check time.scale)')


def _clock_of(raw, stamps, step, position, clock, nominal, prefix, rows):
    """(clock, times, period) of the samples; ``raw``: their stamps before ``spread_ties``;
    ``nominal``: the grid period of the stamps clock."""
    period = snapped_period(stamps, cycle_period(stamps, step))
    ticks, pushed = fixed_rate_cycles(stamps, period)
    if step:                            # shared stamps: only the cycles can time those rows
        off = np.abs(raw - ticks)
        k = int(np.argmax(off))
        if clock == 'stamps' or off[k] > step:
            tie = int(np.flatnonzero(np.diff(raw) == 0)[0])
            raise InputError(f'{prefix}duplicated time stamp at row {rows[tie + 1]} '
                             f'({float(raw[tie])!r} twice) with a different state, and '
                             + ('time.clock: stamps takes the stamps as the sample times'
                                if clock == 'stamps' else
                                f'no fixed-rate clock puts row {rows[k]} within a stamp step '
                                f'({step:.3g} s) of its cycle'))
        return 'fixed_rate', ticks, period
    if not pushed and np.max(np.abs(stamps - ticks)) <= UNIFORM_TOLERANCE * period:
        return 'uniform', ticks, period
    if clock == 'auto' and smoother_on_cycles(stamps, ticks, position, period):
        return 'fixed_rate', ticks, period
    return 'stamps', stamps, nominal


def samples(t: np.ndarray, repeats: np.ndarray, period: float) -> np.ndarray:
    """Which rows are samples: all but the repeats that come sooner than a period after the last
    row kept (docs/methods.md §3, Time base).

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], non-decreasing.
    repeats : (N,) ndarray of bool
        Rows equal to the previous row in every signal.
    period : float
        The controller's period [s], e.g. the ``nominal_period`` of the rows that differ from the
        one before.

    Returns
    -------
    (N,) ndarray of bool
        True for the rows kept: every row that differs from the one before, and each repeat at
        least a period (less ``UNIFORM_TOLERANCE``) after the last row kept, so that a
        standstill keeps one row per period.
    """
    keep = ~repeats
    keep[0] = True
    if keep.all():
        return keep
    limit = (1 - UNIFORM_TOLERANCE) * period
    previous = t[np.maximum.accumulate(np.where(keep, np.arange(len(t)), 0))]
    last = -np.inf
    for k in np.flatnonzero(~keep):
        if t[k] - max(last, previous[k]) >= limit:
            keep[k] = True
            last = t[k]
    return keep


def spread_ties(t: np.ndarray, source: str = '') -> tuple[np.ndarray, float]:
    """Stamps shared by consecutive rows, spread evenly over the stamps' step.

    A run of ``r`` rows on the stamp ``s`` of a log whose stamps move in steps of ``q`` (the
    smallest non-zero interval) was sampled within one step around ``s``; the rows get
    ``s + q·((i + ½)/r − ½)``, ``i = 0 … r−1``. Unique stamps are unchanged.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], non-decreasing.
    source : str
        The log, for the message.

    Returns
    -------
    stamps : (N,) ndarray
        Strictly increasing [s].
    step : float
        ``q`` [s]; 0 when no stamp is shared.

    Raises
    ------
    InputError
        If every row has the same stamp.
    """
    dt = np.diff(t)
    tied = dt == 0
    if not tied.any():
        return t, 0.0
    if tied.all():
        raise InputError(f'{source}: all {len(t)} rows have the same time stamp '
                         f'{float(t[0])!r}')
    step = float(dt[~tied].min())
    starts = np.flatnonzero(np.concatenate([[True], ~tied]))
    sizes = np.diff(np.append(starts, len(t)))
    index = np.arange(len(t)) - np.repeat(starts, sizes)
    return t + step * ((index + 0.5) / np.repeat(sizes, sizes) - 0.5), step


def nominal_period(t: np.ndarray) -> float:
    """The median interval of stamps, snapped to a common controller rate.

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


def cycle_period(t: np.ndarray, step: float = 0.0) -> float:
    """The period of the fixed-rate cycles that hold the rows one per cycle (docs/methods.md §3,
    Time base).

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing, N ≥ 2.
    step : float
        The step of rounded stamps (``spread_ties``) [s]: each stamp may be off by up to a step
        from its sample time, which widens the upper bound of T by ``2·step`` over each pair.

    Returns
    -------
    float
        T [s]: the stamps' own period when they lie on a uniform grid; else the largest period
        below ``_upper_bound`` whose cycle boundaries separate the most close pairs of rows,
        refined to hold the rows most tightly within their cycles.
    """
    uniform = _uniform_period(t)
    if uniform is not None:
        return uniform
    period = _widest_cover(t, _upper_bound(t, 2 * step))
    for _ in range(3):
        n, pushed = _cycles(t, period)
        period = _narrowest(t[~pushed], n[~pushed], period, period / len(t))
    return period


def snapped_period(t: np.ndarray, period: float) -> float:
    """A listed controller period in place of an estimated one, when the rows allow it.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing.
    period : float
        The estimate (``cycle_period``) [s].

    Returns
    -------
    float
        ``1/rate`` for the first rate of ``COMMON_RATES`` within ``SNAP_TOLERANCE`` of
        ``1/period`` whose cycles hold the rows as tightly (the spread of ``t_k − n_k·T`` wider
        by at most ``UNIFORM_TOLERANCE·T``), else ``period``.
    """
    rates = np.array(COMMON_RATES, dtype=float)
    near = np.abs(rates * period - 1) <= SNAP_TOLERANCE
    if not near.any():
        return period
    listed = 1.0 / float(rates[near][0])
    widths = [_width(t, _cycles(t, p)[0], p) for p in (period, listed)]
    return listed if widths[1] <= widths[0] + UNIFORM_TOLERANCE * period else period


def fixed_rate_cycles(t: np.ndarray, period: float) -> tuple[np.ndarray, int]:
    """The cycles ``t0 + n·T`` of a fixed-rate clock that the rows were sampled at.

    Row k gets the cycle ``n_k = floor(t_k/T − φ)``: the cycle boundaries ``(m + φ)·T`` are placed
    where they separate the most pairs of consecutive rows less than a period apart
    (``cycle_phase``). That fits both kinds of logger of a fixed-rate controller: one that stamps
    every cycle late by less than a period (the boundaries fall between the clusters of stamps),
    and one that polls the controller's latest state at its own irregular moments (the
    boundaries are the controller's; rows that read the same cycle twice were dropped as
    repeats). Cycles may be missing (dropped samples). A row that falls on the cycle of the row
    before (a shared or rounded stamp, or a row at the very edge of its cycle when T is not
    exact) is pushed onto the next free cycle.

    Parameters
    ----------
    t : (N,) ndarray
        Stamps [s], strictly increasing.
    period : float
        T [s].

    Returns
    -------
    ticks : (N,) ndarray
        ``t0 + n·T`` [s], ``t0`` the mean offset of the stamps from their cycles.
    pushed : int
        Rows pushed onto a later cycle than their stamp's.
    """
    n, pushed = _cycles(t, period)
    return float(np.mean(t - n * period)) + n * period, int(pushed.sum())


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
    # deliberately lazy: scipy.interpolate only for a log off its grid (start-up time)
    from scipy.interpolate import make_interp_spline

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


def _cycles(t: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray]:
    """(n, pushed): the cycle of each row (``fixed_rate_cycles``), from 0, and which rows were
    pushed onto a later cycle than their stamp's."""
    floor = np.floor(t / period - cycle_phase(t, period))
    floor -= floor[0]
    k = np.arange(len(t))
    n = np.maximum.accumulate(floor - k) + k
    return n, n != floor


def _uniform_period(t: np.ndarray) -> float | None:
    """The period of stamps on a uniform grid (cycles may be missing), else None."""
    median = float(np.median(np.diff(t)))
    n = np.rint((t - t[0]) / median)
    if median <= 0 or np.any(np.diff(n) < 1):
        return None
    period = float(np.polyfit(n, t, 1)[0])
    return period if _width(t, n, period) <= 2 * UNIFORM_TOLERANCE * period else None


def _upper_bound(t: np.ndarray, slack: float) -> float:
    """``min (t_j − t_i + slack)/(j − i − 1)`` over pairs of rows (on about 40 distances
    ``j − i``): no period above it holds the rows one per cycle."""
    bound, distance = np.inf, 2
    while distance < len(t):
        closest = float(np.min(t[distance:] - t[:-distance]))
        bound = min(bound, (closest + slack) / (distance - 1))
        distance = max(distance + 1, int(distance * 1.25))
    return min(bound, float(t[-1] - t[0] + slack) / max(len(t) - 2, 1))


def _widest_cover(t: np.ndarray, bound: float) -> float:
    """The largest period in ``[bound·(1 − SEARCH_SPAN), bound]`` whose cycle boundaries
    separate the most close pairs of rows; coarse to fine, each step on 8 times more rows."""
    rows = min(COVER_ROWS, len(t))
    low, high = bound * (1 - SEARCH_SPAN), bound
    while True:
        step = bound / (4 * rows)
        candidates = np.arange(high, low, -step)
        cover = _cover(t[:rows], candidates)
        best = float(candidates[np.flatnonzero(cover == cover.max())[0]])
        if rows == len(t):
            return best
        # the band of full cover is about 4 steps wide here and narrower on more rows
        low, high = best - 6 * step, best + step
        rows = min(8 * rows, len(t))


def _cover(t: np.ndarray, periods: np.ndarray) -> np.ndarray:
    """Per period, the fraction of the pairs of consecutive rows less than a period apart that
    the best of ``COVER_BINS`` boundary phases separates (1 when no pair is that close)."""
    chunk = max(1, COVER_CHUNK // max(len(t) - 1, 1))
    return np.concatenate([_cover_chunk(t, periods[i:i + chunk])
                           for i in range(0, len(periods), chunk)])


def _cover_chunk(t: np.ndarray, periods: np.ndarray) -> np.ndarray:
    length = np.diff(t)[None, :] / periods[:, None]
    short = length < 1
    start = np.mod(t[:-1][None, :] / periods[:, None], 1.0)
    first = np.ceil(COVER_BINS * start - 0.5).astype(int)           # first phase bin covered
    end = np.ceil(COVER_BINS * (start + np.minimum(length, 1)) - 0.5).astype(int)  # past it
    size = 2 * COVER_BINS + 1
    offset = (np.arange(len(periods)) * size)[:, None]
    weight = short.ravel().astype(float)
    steps = (np.bincount((offset + first).ravel(), weight, len(periods) * size)
             - np.bincount((offset + end).ravel(), weight, len(periods) * size))
    counts = np.cumsum(steps.reshape(len(periods), size), axis=1)
    counts = counts[:, :COVER_BINS] + counts[:, COVER_BINS:2 * COVER_BINS]
    pairs = short.sum(axis=1)
    return np.where(pairs > 0, counts.max(axis=1) / np.maximum(pairs, 1), 1.0)


def _narrowest(t: np.ndarray, n: np.ndarray, period: float, width: float) -> float:
    """The period within ``period ± width`` with the narrowest spread of ``t − n·T``."""
    # deliberately lazy: scipy.optimize only for a jittery clock (start-up time)
    from scipy.optimize import minimize_scalar

    found = minimize_scalar(lambda p: _width(t, n, p), bounds=(period - width, period + width),
                            method='bounded', options={'xatol': period * 1e-12})
    return float(found.x)


def _width(t: np.ndarray, n: np.ndarray, period: float) -> float:
    """The spread ``max − min`` of the rows' offsets ``t − n·T`` from their cycles."""
    offset = t - n * period
    return float(offset.max() - offset.min())


def _segments(base: TimeBase, bridge: float) -> TimeBase:
    """Count the gaps; split at those longer than ``bridge`` seconds."""
    dt = np.diff(base.times)
    if base.clock == 'stamps':
        gaps = dt >= GAP_PERIODS * base.period
    else:
        gaps = np.rint(dt / base.period) >= GAP_PERIODS
    cuts = np.flatnonzero(gaps & (dt > bridge))
    bounds = np.concatenate([[0], cuts + 1, [len(base.times)]])
    return replace(base, segments=[(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])],
                   bridged=int(gaps.sum() - len(cuts)), split=[float(dt[c]) for c in cuts])


def _span(x: np.ndarray) -> np.ndarray:
    """``x[k+1] − x[k−1]`` per row (inf at the ends)."""
    span = np.full(len(x), np.inf)
    span[1:-1] = x[2:] - x[:-2]
    return span


def _rate_text(rate: float) -> str:
    rate = float(f'{rate:.4g}')                  # 1024 Hz reads 1.024 kHz, not 1 kHz
    return f'{rate / 1000:g} kHz' if rate >= 1000 else f'{rate:g} Hz'


def _count(n: int) -> str:
    return f'{n:,}'.replace(',', ' ')


def _s(n: int) -> str:
    return '' if n == 1 else 's'
