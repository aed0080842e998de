"""Preprocessing of a recording for the regressor (docs/methods.md §3): time base, zero-phase
low-pass, differentiation, the sharp friction velocity, the velocity-reversal mask
(``Processed``, ``preprocess``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data.datasets import Dataset
from ..data.plausibility import check_efforts, check_positions
from ..data.recorded_velocity import check_velocity
from ..data.signal_processing import differentiate, filter_padding, lowpass
from ..data.sources import short_source
from ..data.timing import analyse
from ..errors import InputError
from ..model.robot import RobotModel
from .config import IdentificationConfig

#: Cut-off of positions and torques when neither the settings nor the dataset give one [Hz].
DEFAULT_CUTOFF_HZ = 10.0
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
#: The robot stands still while every joint's speed (positions low-passed at the cut-off) is
#: below this fraction of that joint's peak speed in the log (``standstill_rows``).
STANDSTILL_FRACTION = 0.01


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
    d, base, cutoff_hz, sharp_hz, notes = time_base(dataset, robot, config)
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
        summary = [base.summary(), *d.notes, *notes]
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
        Aligned to the robot's joints, without the standstill at its ends
        (``standstill_rows``, unless ``trim_standstill`` is off).
    base : timing.TimeBase
        Its time base (``timing.analyse``), the short segments dropped.
    cutoff_hz, sharp_hz : float
        Cut-off of positions and torques, and of ``qd_sharp`` [Hz].
    notes : list of str
        A summary line on the standstill left out, if any.

    Raises
    ------
    InputError
        As ``preprocess``.
    """
    d = dataset.aligned(robot)
    check_efforts(d, config.ignore_plausibility)
    check_positions(d, robot, config.ignore_plausibility)
    cutoff_hz = config.cutoff_hz or d.cutoff_hz or DEFAULT_CUTOFF_HZ
    order = config.filter_order
    notes = []
    if config.trim_standstill:
        start, stop = standstill_rows(d.t, d.position, cutoff_hz, order)
        if (start, stop) != (0, d.samples):
            ends = [f'the {end} {seconds:.3g} s' for end, seconds in
                    (('first', d.t[start] - d.t[0]), ('last', d.t[-1] - d.t[stop - 1]))
                    if seconds > 0]
            notes.append(f'{short_source(d.source)}: robot standing still: {" and ".join(ends)}'
                         ' left out (the torque at rest is held by static friction)')
            d = d.rows(start, stop)
    if config.use_recorded_velocity and d.velocity is None:
        raise InputError(f'{d.source}: no velocity recorded, cannot use recorded velocity')
    base = analyse(d.t, d.position, cutoff_hz, source=d.source, clock=d.clock,
                   repeats=d.repeat_mask(), first_row=d.first_row)
    fs = base.rate
    base = base.without_short(max(2 * trim_samples(fs, cutoff_hz), filter_padding(order)))
    sharp_hz = min(SHARP_CUTOFF_FACTOR * cutoff_hz, SHARP_RATE_FRACTION * fs)
    return d, base, cutoff_hz, sharp_hz, notes


def standstill_rows(t: np.ndarray, position: np.ndarray, cutoff_hz: float,
                    order: int = 4) -> tuple[int, int]:
    """The rows of a log from shortly before the robot first moves to shortly after it last
    stops.

    The robot moves at a row when some joint's speed, of the positions low-passed at the
    cut-off (by row index at the median period: enough to tell motion from rest), exceeds
    ``STANDSTILL_FRACTION`` of that joint's peak speed. ``trim_samples`` rows are kept on each
    side of the motion: ``preprocess`` trims as many from each end, so the regression rows
    start where the motion does.

    Parameters
    ----------
    t : (N,) ndarray
        Row stamps [s].
    position : (N, n) ndarray
        Positions [rad or m].
    cutoff_hz : float
        Low-pass cut-off [Hz].
    order : int
        Butterworth order of one pass.

    Returns
    -------
    start, stop : int
        ``[start, stop)``; ``(0, N)`` when the robot moves from end to end, or when the log is
        too short or too slow for the filter (the preprocessing then says why).
    """
    steps = np.diff(t)
    n_rows = len(t)
    if not np.any(steps > 0):
        return 0, n_rows
    fs = 1.0 / float(np.median(steps[steps > 0]))
    if not 0 < cutoff_hz < fs / 2 or n_rows <= filter_padding(order):
        return 0, n_rows
    speed = np.abs(np.gradient(lowpass(position - position[0], fs, cutoff_hz, order), axis=0))
    moving = np.flatnonzero(np.any(speed > STANDSTILL_FRACTION * speed.max(axis=0), axis=1))
    if not len(moving):
        return 0, n_rows
    margin = trim_samples(fs, cutoff_hz)
    return max(0, int(moving[0]) - margin), min(n_rows, int(moving[-1]) + 1 + margin)


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

