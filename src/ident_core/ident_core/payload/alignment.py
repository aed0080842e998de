"""Time alignment of two runs of the same trajectory by the phase of their motion
(docs/methods.md §11).

The torque-difference method subtracts an unloaded from a loaded run sample by sample, so the
two must be compared at the same point of the trajectory, not at the same sample index: the
recordings start at arbitrary moments. The shift comes from the positions: coarse by
cross-correlation (every lag), refined to a fraction of a sample by minimising the squared
position difference with the other run interpolated by cubic splines. Runs whose positions still
differ after the best shift do not follow the same trajectory and are refused.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..estimation.preprocessing import Processed

#: Largest RMS position difference after alignment, as a fraction of each joint's range.
MISMATCH = 0.02
#: Smallest overlap, as a fraction of the shorter run.
MIN_OVERLAP = 0.5


def align_runs(reference: Processed, other: Processed,
               joint_names: list[str]) -> tuple[Processed, Processed]:
    """Both runs on the reference's time grid, over the time they share, ``other`` shifted to
    the same phase of the motion.

    Parameters
    ----------
    reference, other : Processed
        Preprocessed runs of the same trajectory, each in one segment.
    joint_names : list of str
        (n,) the joints, for messages.

    Returns
    -------
    reference, other : Processed
        Untrimmed (``trim`` 0, the filter edges already cut), same ``t``; ``other``'s signals
        interpolated at ``t + shift`` by cubic splines.

    Raises
    ------
    InputError
        If a run has gaps (several segments), the runs overlap for less than half the shorter,
        or a joint's positions differ by more than 2 % of its range of motion after the best
        shift (naming the runs, the joint and the shift).
    """
    for p in (reference, other):
        if p.segments:
            raise InputError(f'{p.source}: the log has gaps ({len(p.segments)} segments); the '
                             'difference methods need one continuous run (use the global method)')
    ref, oth = _inner(reference), _inner(other)
    shift = _refined_shift(ref, oth, _coarse_shift(ref, oth))
    inside = (ref.t + shift >= oth.t[0]) & (ref.t + shift <= oth.t[-1])
    shorter = min(ref.t[-1] - ref.t[0], oth.t[-1] - oth.t[0])
    shared = ref.t[inside]
    if len(shared) < 2 or shared[-1] - shared[0] < MIN_OVERLAP * shorter:
        raise InputError(f'{other.source} and {reference.source}: after aligning their motion '
                         f'(shift {shift:.3f} s) the runs overlap for less than half the shorter')
    # deliberately lazy (here and below): scipy.interpolate, .optimize and .signal only when
    # runs are aligned; PAYLOAD.yaml's readers import this module too
    import scipy.interpolate

    moved = {k: scipy.interpolate.CubicSpline(oth.t, getattr(oth, k))(shared + shift)
             for k in ('q', 'qd', 'qdd', 'tau', 'sharp_velocity')}
    moved['qd_sharp'] = moved.pop('sharp_velocity')
    ref = _rows(ref, inside)
    _check_same_motion(ref, moved['q'], (reference.source, other.source), joint_names,
                       shift)
    return ref, replace(ref, source=other.source, summary=other.summary, **moved)


def _inner(p: Processed) -> Processed:
    """The run without its ``trim`` edges."""
    rows = np.zeros(len(p.t), dtype=bool)
    rows[p.trim:len(p.t) - p.trim] = True
    return replace(_rows(p, rows), trim=0)


def _rows(p: Processed, rows: np.ndarray) -> Processed:
    return replace(p, t=p.t[rows], q=p.q[rows], qd=p.qd[rows], qdd=p.qdd[rows],
                   tau=p.tau[rows], qd_sharp=p.sharp_velocity[rows])


def _normalised(q: np.ndarray, centre: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return (q - centre) / scale


def _scale(p: Processed) -> np.ndarray:
    """Per joint range of motion (at least 1e-6)."""
    return np.maximum(np.ptp(p.q, axis=0), 1e-6)


def _coarse_shift(ref: Processed, oth: Processed) -> float:
    """Shift [s] with the smallest mean squared position difference over the overlap, among
    every lag on the reference's grid with at least ``MIN_OVERLAP`` of the shorter run (sums
    by FFT cross-correlation and cumulative sums)."""
    import scipy.signal  # deliberately lazy (align_runs)

    dt = float(np.median(np.diff(ref.t)))
    grid = np.arange(oth.t[0], oth.t[-1], dt)
    scale, centre = _scale(ref), ref.q.mean(axis=0)
    a = _normalised(ref.q, centre, scale)
    b = _normalised(np.column_stack([np.interp(grid, oth.t, x) for x in oth.q.T]), centre,
                    scale)
    corr = sum(scipy.signal.correlate(b[:, j], a[:, j], mode='full', method='fft')
               for j in range(a.shape[1]))
    lags = scipy.signal.correlation_lags(len(b), len(a), mode='full')
    energy_a = np.concatenate([[0.0], np.cumsum((a ** 2).sum(axis=1))])
    energy_b = np.concatenate([[0.0], np.cumsum((b ** 2).sum(axis=1))])
    first = np.maximum(0, -lags)                      # overlap: a[first:last], b[first+lag:…]
    last = np.minimum(len(a), len(b) - lags)
    count = last - first
    with np.errstate(divide='ignore', invalid='ignore'):
        msd = (energy_a[last] - energy_a[first] + energy_b[last + lags]
               - energy_b[first + lags] - 2 * corr) / count
    msd[count < MIN_OVERLAP * min(len(a), len(b))] = np.inf
    lag = lags[int(np.argmin(msd))]
    return float(grid[0] + lag * dt - ref.t[0])


def _refined_shift(ref: Processed, oth: Processed, coarse: float) -> float:
    """The shift within two samples of ``coarse`` minimising the squared position difference."""
    import scipy.interpolate  # deliberately lazy (align_runs)
    import scipy.optimize

    dt = float(np.median(np.diff(ref.t)))
    spline = scipy.interpolate.CubicSpline(oth.t, oth.q)
    scale = _scale(ref)

    def cost(shift):
        inside = (ref.t + shift >= oth.t[0]) & (ref.t + shift <= oth.t[-1])
        if not np.any(inside):
            return np.inf
        return float(np.mean(((spline(ref.t[inside] + shift) - ref.q[inside]) / scale) ** 2))

    found = scipy.optimize.minimize_scalar(cost, bounds=(coarse - 2 * dt, coarse + 2 * dt),
                                           method='bounded', options={'xatol': 1e-4 * dt})
    return float(found.x)


def _check_same_motion(ref: Processed, moved_q: np.ndarray, sources: tuple[str, str],
                       joint_names: list[str], shift: float) -> None:
    """Refuse runs whose aligned positions differ by more than ``MISMATCH`` of the range."""
    scale = _scale(ref)
    rms = np.sqrt(np.mean((moved_q - ref.q) ** 2, axis=0))
    worst = int(np.argmax(rms / scale))
    if rms[worst] > MISMATCH * scale[worst]:
        raise InputError(
            f'{sources[1]} and {sources[0]} do not follow the same trajectory: after the best '
            f'time alignment (shift {shift:.3f} s) joint {joint_names[worst]} differs by '
            f'{rms[worst]:.3g} RMS ({100 * rms[worst] / scale[worst]:.1f} % of its range); the '
            'torque-difference and parameter-difference methods need the same excitation '
            'trajectory unloaded and loaded (the global method does not)')
