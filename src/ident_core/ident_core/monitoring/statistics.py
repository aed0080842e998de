"""Statistics the nodes keep of their streams, cheap enough per sample at 1 kHz: running
moments of a vector, a window of the latest scalars with percentiles, the Kalman filter's
innovations, the simulator's lag behind the wall clock."""
from __future__ import annotations

import numpy as np


class RunningStatistics:
    """Count, mean, RMS, largest magnitude and latest value of a vector quantity, per component.

    Parameters
    ----------
    n : int
        Components (e.g. joints).
    """

    def __init__(self, n: int):
        self.n = n
        self.reset()

    def reset(self) -> None:
        """Forget every sample."""
        self.count = 0
        self._sum = np.zeros(self.n)
        self._sum_squares = np.zeros(self.n)
        self._max_abs = np.zeros(self.n)
        self._last = np.full(self.n, np.nan)

    def add(self, x) -> None:
        """Take one sample.

        Parameters
        ----------
        x : (n,) array_like
            The sample (any unit; the statistics have the same).
        """
        x = np.asarray(x, dtype=float)
        self.count += 1
        self._sum += x
        self._sum_squares += x * x
        np.maximum(self._max_abs, np.abs(x), out=self._max_abs)
        self._last = x.copy()

    @property
    def mean(self) -> np.ndarray:
        """(n,) mean of the samples (NaN without samples)."""
        return self._sum / self.count if self.count else np.full(self.n, np.nan)

    @property
    def rms(self) -> np.ndarray:
        """(n,) root mean square of the samples (NaN without samples)."""
        return np.sqrt(self._sum_squares / self.count) if self.count \
            else np.full(self.n, np.nan)

    @property
    def max_abs(self) -> np.ndarray:
        """(n,) largest magnitude of the samples (0 without samples)."""
        return self._max_abs.copy()

    @property
    def last(self) -> np.ndarray:
        """(n,) the latest sample (NaN without samples)."""
        return self._last.copy()


class SampleWindow:
    """The latest ``capacity`` values of a scalar (a ring buffer), with percentiles.

    Parameters
    ----------
    capacity : int
        Values kept; older ones are overwritten.

    Raises
    ------
    ValueError
        If ``capacity`` < 1.
    """

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f'capacity must be at least 1, got {capacity}')
        self._values = np.empty(int(capacity))
        self.total = 0                     # values ever added

    def add(self, value: float) -> None:
        """Take one value.

        Parameters
        ----------
        value : float
            The value (any unit).
        """
        self._values[self.total % len(self._values)] = value
        self.total += 1

    def reset(self) -> None:
        """Forget every value (``total`` too)."""
        self.total = 0

    @property
    def count(self) -> int:
        """Values in the window (at most ``capacity``)."""
        return min(self.total, len(self._values))

    def values(self) -> np.ndarray:
        """The values in the window, oldest first.

        Returns
        -------
        (count,) ndarray
            A copy.
        """
        size = len(self._values)
        if self.total <= size:
            return self._values[:self.total].copy()
        k = self.total % size
        return np.concatenate([self._values[k:], self._values[:k]])

    def percentile(self, q: float) -> float:
        """A percentile of the window (linear interpolation, ``numpy.percentile``).

        Parameters
        ----------
        q : float
            Percent, 0 to 100.

        Returns
        -------
        float
            NaN for an empty window.
        """
        if not self.count:
            return float('nan')
        return float(np.percentile(self._values[:self.count], q))

    def maximum(self) -> float:
        """The largest value in the window.

        Returns
        -------
        float
            NaN for an empty window.
        """
        return float(self._values[:self.count].max()) if self.count else float('nan')


class InnovationStatistics:
    """The innovations of a Kalman filter with a diagonal innovation covariance: their RMS,
    the mean normalised innovation squared (NIS) and the outliers, per joint.

    For a filter whose model and noise covariances are right, the innovation ``ν = y − ŷ⁻``
    has the covariance ``S = P⁻ + V`` it predicts, and ``ν²/S`` averages 1 per joint (NIS,
    [1]_ §5.4); a model that misses the dynamics gives a mean NIS well above 1.

    Parameters
    ----------
    n : int
        Joints.
    gate : float
        An innovation beyond ``gate·√S`` of its joint is an outlier.

    References
    ----------
    .. [1] Bar-Shalom Y., Li X. R., Kirubarajan T., "Estimation with Applications to Tracking
       and Navigation", Wiley, 2001, doi:10.1002/0471221279.
    """

    def __init__(self, n: int, gate: float):
        self.n, self.gate = n, gate
        self.reset()

    def reset(self) -> None:
        """Forget every sample."""
        self.count = 0
        self.outliers = 0                  # samples with an outlier on at least one joint
        self._squares = np.zeros(self.n)
        self._normalised = np.zeros(self.n)

    def add(self, innovation: np.ndarray, variance: np.ndarray) -> None:
        """Take the innovation of one sample.

        Parameters
        ----------
        innovation : (n,) ndarray
            ``ν = y − ŷ⁻``, measurement minus prediction [N·m or N].
        variance : (n,) ndarray
            The predicted variance ``S`` of each joint's innovation [(N·m)² or N²], > 0.
        """
        squared = innovation * innovation
        normalised = squared / variance
        self.count += 1
        self._squares += squared
        self._normalised += normalised
        if normalised.max() > self.gate * self.gate:
            self.outliers += 1

    @property
    def rms(self) -> np.ndarray:
        """(n,) RMS innovation per joint [N·m or N] (NaN without samples)."""
        return np.sqrt(self._squares / self.count) if self.count \
            else np.full(self.n, np.nan)

    @property
    def nis(self) -> np.ndarray:
        """(n,) mean normalised innovation squared ``ν²/S`` per joint (NaN without
        samples)."""
        return self._normalised / self.count if self.count else np.full(self.n, np.nan)

    @property
    def outlier_fraction(self) -> float:
        """Fraction of the samples with an outlier (0 without samples)."""
        return self.outliers / self.count if self.count else 0.0


class RealtimeMonitor:
    """How far a simulation stepped from a wall-clock timer falls behind the wall clock.

    ``lag`` is the wall-clock time since the start minus the simulation time reached (the
    time of the next step), 0 while the simulation keeps up; an ``overrun`` is a timer call
    that had to run more than one step to catch up (the timer came more than a period late).

    Attributes
    ----------
    lag : float
        After the latest call [s].
    max_lag : float
        Largest lag since the last ``reset_period`` [s].
    overruns, period_overruns : int
        Overruns in all, and since the last ``reset_period``.
    steps : int
        Steps in all.
    """

    def __init__(self):
        self.lag = self.max_lag = 0.0
        self.overruns = self.period_overruns = self.steps = 0

    def update(self, wall_elapsed: float, sim_time: float, steps: int) -> None:
        """Take one timer call.

        Parameters
        ----------
        wall_elapsed : float
            Wall-clock (monotonic) time since the simulation started [s].
        sim_time : float
            Simulation time after the call's steps [s].
        steps : int
            Steps the call ran.
        """
        self.lag = max(0.0, wall_elapsed - sim_time)
        self.max_lag = max(self.max_lag, self.lag)
        self.steps += steps
        if steps > 1:
            self.overruns += 1
            self.period_overruns += 1

    def reset_period(self) -> None:
        """Start a new reporting period (``max_lag`` and ``period_overruns``)."""
        self.max_lag = self.lag
        self.period_overruns = 0
