"""The baselines of torque estimation (docs/methods.md §12): the mean filter of
scara_kalman_torque_estimation_2018 (eq. (22)) and a causal Butterworth low-pass, one sample at
a time.
"""
from __future__ import annotations

import numpy as np

#: Sample intervals the low-pass waits for to know the sample rate of its design.
DESIGN_SAMPLES = 10


class MeanFilter:
    """Mean of the last ``window`` measurements (fewer at the start; eq. (22)).

    Parameters
    ----------
    n : int
        Number of joints.
    window : int
        Samples averaged (the paper: 5).
    """

    def __init__(self, n: int, window: int):
        self._buffer = np.zeros((window, n))
        self._sum = np.zeros(n)
        self._count = 0

    def update(self, y: np.ndarray) -> np.ndarray:
        """Take a measurement.

        Parameters
        ----------
        y : (n,) ndarray
            Measured joint torques [N·m or N].

        Returns
        -------
        (n,) ndarray
            The mean of the last ``window`` measurements.
        """
        window = len(self._buffer)
        slot = self._count % window
        self._sum += y - self._buffer[slot]
        self._buffer[slot] = y
        self._count += 1
        return self._sum / min(self._count, window)


class LowpassFilter:
    """Causal Butterworth low-pass (``scipy.signal.butter``, ``sosfilt`` with its state).

    The filter is designed for the median interval of the first ``DESIGN_SAMPLES`` sample
    intervals and starts in the steady state of the measurement then; until then the
    measurement passes unfiltered.

    Parameters
    ----------
    cutoff_hz : float
        Cut-off [Hz].
    order : int
        Butterworth order.
    """

    def __init__(self, cutoff_hz: float, order: int):
        self.cutoff_hz, self.order = cutoff_hz, order
        self._intervals: list[float] = []
        self._sos = None
        self._state = None

    def update(self, y: np.ndarray, dt: float) -> np.ndarray:
        """Take a measurement.

        Parameters
        ----------
        y : (n,) ndarray
            Measured joint torques [N·m or N].
        dt : float
            Time since the previous measurement [s] (0 for the first).

        Returns
        -------
        (n,) ndarray
            The filtered torques.
        """
        if self._sos is None:
            if dt > 0:
                self._intervals.append(dt)
            if len(self._intervals) < DESIGN_SAMPLES:
                return y
            self._design(1.0 / float(np.median(self._intervals)), y)
        out, self._state = self._sosfilt(self._sos, y[None, :], axis=0, zi=self._state)
        return out[0]

    def _design(self, rate: float, y: np.ndarray) -> None:
        # deliberately lazy: scipy.signal (~0.5 s to import) only for the lowpass method
        import scipy.signal

        cutoff = min(self.cutoff_hz, 0.45 * rate)
        self._sosfilt = scipy.signal.sosfilt
        self._sos = scipy.signal.butter(self.order, cutoff, fs=rate, output='sos')
        zi = scipy.signal.sosfilt_zi(self._sos)
        self._state = zi[:, :, None] * y[None, None, :]
