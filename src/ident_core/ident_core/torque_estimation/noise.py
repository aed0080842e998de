"""Process and measurement noise of the torque Kalman filter, estimated from the data while
filtering (docs/methods.md §12).

The filter's model is ``tau_{k+1} = tau_k + b_k + w_k``, ``y_k = tau_k + v_k`` with the
predicted increment ``b_k = B_u,k u_k``: the measurements less the summed predictions,
``d_k = y_k − Σ_{j<k} b_j``, are a random walk (``W``) seen through white noise (``V``). Their
variogram is then ``γ(h) = var(d_{k+h} − d_k) = h W + 2 V``; its values at the lags 1 and
``LAG`` give both covariances per joint. The second lag keeps ``W`` well determined when it is
much smaller than ``V`` (at lag 1 alone, ``W`` is a small difference of large numbers). The
variances are tracked with exponential forgetting, so the filter adapts to the noise of the log
or of the robot it runs on, and robustly: once warmed up, a difference beyond ``CLIP`` standard
deviations counts as that many (a torque step the model does not predict, e.g. a drive's
friction feed-forward switching at a reversal, is a model error, not noise).
"""
from __future__ import annotations

import numpy as np

#: The longer lag of the variogram [samples].
LAG = 20
#: Increments taken together [samples].
BLOCK = 20
#: Samples seen before the estimates replace the start values.
WARMUP = 100
#: Smallest ``V`` relative to the variance at lag 1 (keeps the filter well posed on noise-free
#: data).
FLOOR = 1e-9
#: Smallest ``W`` relative to ``V``: the gain stays above about its square root (0.01), so the
#: estimate follows a slow drift the model misses (at rest, without a reference, the increments
#: show no process noise at all).
PROCESS_FLOOR = 1e-4
#: Differences beyond this many standard deviations are clipped to it once warmed up.
CLIP = 4.0
TINY = np.finfo(float).tiny


class NoiseEstimator:
    """Running per-joint estimates of ``W`` and ``V``.

    The increments are taken in blocks of ``BLOCK`` samples (a few array operations per block
    instead of per sample): each block's mean and variance at both lags join the running ones
    with the weight of its samples under exponential forgetting (pooled exactly while fewer
    samples than the memory are in).

    Parameters
    ----------
    n : int
        Number of joints.
    time_constant : float
        Memory of the estimates [s].
    """

    def __init__(self, n: int, time_constant: float):
        self.time_constant = time_constant
        self.count = 0                              # increments digested
        self._block = np.zeros((BLOCK, n))          # z of the current block
        self._fill = 0
        self._span = 0.0                            # its time [s]
        self._d = np.zeros((LAG + BLOCK + 1, n))    # d_k: the last LAG + 1, then the block's
        self._mean = np.zeros((2, n))               # of the differences at lag 1 and LAG
        self._variance = np.zeros((2, n))
        self._estimates = None

    def update(self, z: np.ndarray, dt: float) -> None:
        """Take one increment beyond the prediction.

        Parameters
        ----------
        z : (n,) ndarray
            ``y_{k+1} − y_k − b_k`` [N·m or N].
        dt : float
            Time since the last increment [s].
        """
        self._block[self._fill] = z
        self._fill += 1
        self._span += dt
        if self._fill == BLOCK:
            self._digest()

    def _digest(self) -> None:
        d = self._d
        d[LAG + 1:] = d[LAG] + np.cumsum(self._block, axis=0)
        first = self.count + 1                      # index k of the block's first d_k
        self.count += BLOCK
        forget = 1.0 - (1.0 - min(1.0, self._span / BLOCK / self.time_constant)) ** BLOCK
        lagged = d[LAG + 1:] - d[1:BLOCK + 1]
        valid = max(0, LAG - first)                 # rows without d_{k−LAG} yet
        for row, x, seen in ((0, self._block, self.count),
                             (1, lagged[valid:], self.count - LAG + 1)):
            if len(x) and seen > 0:
                self._merge(row, x, max(len(x) / seen, forget))
        d[:LAG + 1] = d[BLOCK:]
        self._fill, self._span, self._estimates = 0, 0.0, None

    def _merge(self, row: int, x: np.ndarray, weight: float) -> None:
        """Join a block's mean and variance to the running ones (robustly once warmed up)."""
        mean, variance = self._mean[row], self._variance[row]
        if self.ready:
            spread = CLIP * np.sqrt(variance)
            x = np.clip(x, mean - spread, mean + spread)
        block_mean = x.mean(axis=0)
        gap = block_mean - mean
        variance *= 1.0 - weight
        variance += weight * (x.var(axis=0) + (1.0 - weight) * gap * gap)
        mean += weight * gap

    @property
    def ready(self) -> bool:
        """Whether enough increments were seen (``WARMUP``)."""
        return self.count >= max(WARMUP, LAG)

    def covariances(self) -> tuple[np.ndarray, np.ndarray]:
        """The current estimates (diagonal).

        Returns
        -------
        W, V : (n,) ndarray
            Process and measurement noise variance per joint [(N·m)²]; before ``ready`` both
            a third of the variogram at lag 1 (the paper's W = V).
        """
        if self._estimates is None:
            one = self._variance[0]
            floor = FLOOR * one + TINY
            if not self.ready:
                third = np.maximum(one / 3.0, floor)
                self._estimates = third, third.copy()
            else:
                w = np.maximum((self._variance[1] - one) / (LAG - 1), floor)
                v = np.maximum(0.5 * (one - w), floor)
                self._estimates = np.maximum(w, PROCESS_FLOOR * v), v
        return self._estimates
