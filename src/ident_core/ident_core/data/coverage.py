"""How much of an excitation a recording holds: a stream that stopped (a driver crash, an
e-stop, a dead publisher) leaves the excitation window partly empty, and a model identified from
the rest fits a motion other than the one planned (docs/methods.md §3).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import DataWarning, InputError
from .timing import nominal_period

#: A stretch without samples longer than this many sample periods is a gap.
COVERAGE_GAP_PERIODS = 10
#: Default smallest fraction of the window a recording must cover to be identified.
MIN_COVERAGE = 0.9


@dataclass(frozen=True)
class Coverage:
    """The samples of a recording against the window they should fill.

    Parameters
    ----------
    window : (float, float)
        (start, end) [s], in the time of the stamps.
    gaps : list of (float, float)
        (start [s], length [s]) of every stretch of the window without a sample for more than
        ``COVERAGE_GAP_PERIODS`` sample periods, including an empty head or tail.
    """

    window: tuple[float, float]
    gaps: list[tuple[float, float]]

    @property
    def fraction(self) -> float:
        """Fraction of the window outside the gaps, in [0, 1]."""
        length = self.window[1] - self.window[0]
        return max(0.0, 1.0 - sum(g[1] for g in self.gaps) / length) if length > 0 else 1.0

    def describe(self) -> str:
        """The coverage in words, naming the longest gap.

        Returns
        -------
        str
            E.g. ``covers 34 % of the excitation window (21.0 s): no sample for 13.9 s from
            7.1 s into it``.
        """
        start, end = self.window
        longest = max(self.gaps, key=lambda g: g[1])
        more = f' ({len(self.gaps)} gaps in all)' if len(self.gaps) > 1 else ''
        return (f'covers {100 * self.fraction:.0f} % of the excitation window '
                f'({end - start:.1f} s): no sample for {longest[1]:.1f} s from '
                f'{longest[0] - start:.1f} s into it{more}')


def window_coverage(stamps: np.ndarray, window: tuple[float, float],
                    period: float | None = None) -> Coverage:
    """The gaps of a recording inside a time window.

    Parameters
    ----------
    stamps : (N,) ndarray
        Sample times [s], non-decreasing.
    window : (float, float)
        (start, end) [s] the samples should fill (e.g. ``readers.excitation_window``).
    period : float, optional
        Sample period [s]; default: the nominal period of ``stamps``
        (``timing.nominal_period``).

    Returns
    -------
    Coverage
    """
    start, end = window
    inside = stamps[(stamps >= start) & (stamps <= end)]
    if len(inside) < 2:
        return Coverage((start, end), [(start, end - start)])
    period = period or nominal_period(stamps)
    edges = np.concatenate([[start], inside, [end]])
    lengths = np.diff(edges)
    long = np.flatnonzero(lengths > COVERAGE_GAP_PERIODS * period)
    return Coverage((start, end), [(float(edges[k]), float(lengths[k])) for k in long])


def check_coverage(coverage: Coverage, source: str, min_fraction: float = MIN_COVERAGE) -> None:
    """Refuse a recording that misses too much of its window, warn about any gap.

    Parameters
    ----------
    coverage : Coverage
        Of the recording.
    source : str
        The recording, for the message.
    min_fraction : float
        Smallest fraction of the window it must cover, in [0, 1].

    Raises
    ------
    InputError
        If it covers less than ``min_fraction`` (naming the longest gap).

    Warns
    -----
    DataWarning
        If it covers at least ``min_fraction`` but has a gap.
    """
    if not coverage.gaps:
        return
    text = f'{source}: the recording {coverage.describe()}'
    if coverage.fraction < min_fraction:
        raise InputError(f'{text}; the stream stopped (driver, e-stop, publisher)? At least '
                         f'{100 * min_fraction:.0f} % is needed (min_coverage)')
    warnings.warn(text, DataWarning, stacklevel=2)
