"""Noise of the state Kalman filter of joint torques, estimated from the data while filtering
(docs/methods.md §12).

The filter (``state_filter``) needs four variances per joint; none is a constant of the
robot, so each is measured where the data show it:

* ``R``, the encoder's: an encoder reports multiples of its resolution Δ, whose rounding error
  is uniform, ``Δ²/12``. Δ is the smallest non-zero change of the positions or of their steps;
  positions that are noisy rather than quantised show it in their third difference instead (a
  smooth motion's is ``jerk·dt³``, nil at a drive's rate), ``var(Δ³q)/20``. The larger of the
  two.
* ``V``, the torque measurement's: the second difference of the measured torque removes the
  torque's motion (``τ̈ dt²``, nil at a drive's rate) and leaves ``var(Δ²y) = 6 V``.
* ``W``, how unpredictably the torque moves the joint (its random-walk increment per sample,
  ``(N·m)²``, taken through the joint's inertia as the acceleration's): set by covariance
  matching, so that the normalised squared innovations of the positions average 1. Too small a
  ``W`` and the predicted motion lags the encoders (ratio above 1); too large, and it follows
  their quantisation (below 1). It is at most the measured torque's own increment, ``var(Δy)``
  (positions smoother than their resolution, as an interpolating logger leaves them, would
  otherwise drive it without bound).
* ``W_d``, how fast the model's torque error drifts: set so that the torque innovations are
  white. A drifting error the filter does not follow shows as positively correlated
  innovations, one it follows too eagerly as negatively correlated ones.

``W`` and ``W_d`` are adapted by stochastic approximation of their logarithms (a step of
``dt / ADAPT_TIME`` per sample towards the matching condition, each sample's evidence clipped),
``R`` and ``V`` are running robust variances with the memory ``time_constant``.

References
----------
.. [1] Mehra R. K., "On the identification of variances and adaptive Kalman filtering", IEEE
   Transactions on Automatic Control 15(2):175–184, 1970, DOI 10.1109/TAC.1970.1099422
   (covariance matching, whiteness of the innovations).
.. [2] Widrow B., Kollár I., Liu M.-C., "Statistical theory of quantization", IEEE
   Transactions on Instrumentation and Measurement 45(2):353–361, 1996,
   DOI 10.1109/19.492748 (the Δ²/12 of a quantiser).
"""
from __future__ import annotations

import numpy as np

#: Time over which ``W`` and ``W_d`` move by a factor e under a steady mismatch [s].
ADAPT_TIME = 0.2
#: A sample's normalised squared innovation counts as at most this much evidence.
NIS_CLIP = 9.0
#: Normalised innovations are clipped to this many standard deviations for the whiteness test.
WHITE_CLIP = 3.0
#: Past innovations the whiteness test correlates each with [samples].
WHITE_LAG = 10
#: Samples before the variances are clipped and ``W_d`` adapts (the filter's start); ``W``
#: adapts from the first sample with a torque noise estimate on.
WARMUP = 100
#: Squared differences beyond this many running variances are clipped once warmed up.
CLIP = 4.0
#: Smallest ``W`` and ``W_d`` relative to ``V``, and their start: the filter then follows a
#: motion that starts after a long rest within a few hundred samples.
FLOOR = 1e-9
#: Position changes within this many units in the last place are rounding, not motion.
ROUNDING = 64
#: Finer than any encoder (2π/2³² ≈ 1.5e-9 rad) [rad or m], and than any drive's torque
#: reading [N·m or N]: the smallest standard deviations ``R`` and ``V`` are given.
ENCODER_FLOOR, TORQUE_FLOOR = 1e-9, 1e-6


class RunningVariance:
    """Running variance of a zero-mean normal vector from its mean absolute value
    (``σ² = π/2 · E|x|²``), which an outlier moves in proportion to its size rather than its
    square; once warmed up, a sample counts as at most ``CLIP`` standard deviations.

    Parameters
    ----------
    n : int
        Components.
    time_constant : float
        Memory [s]; pooled exactly while fewer samples than that are in.
    """

    def __init__(self, n: int, time_constant: float):
        self.time_constant = time_constant
        self.count = 0
        self._mean = np.zeros(n)                 # of |x|

    @property
    def value(self) -> np.ndarray:
        """(n,) the variance."""
        return 0.5 * np.pi * self._mean * self._mean

    def add(self, x: np.ndarray, dt: float) -> None:
        """Take a sample.

        Parameters
        ----------
        x : (n,) ndarray
            The sample.
        dt : float
            Time since the previous one [s].
        """
        self.count += 1
        size = np.abs(x)
        if self.count > WARMUP:
            size = np.minimum(size, CLIP * np.sqrt(0.5 * np.pi) * self._mean)
        self._mean += max(1.0 / self.count, dt / self.time_constant) * (size - self._mean)


class StateNoise:
    """The running noise estimates of ``StateKalmanFilter``.

    Parameters
    ----------
    n : int
        Number of joints.
    time_constant : float
        Memory of ``R`` and ``V`` [s].
    process_noise, measurement_noise : (n,) ndarray or None
        Fixed ``W`` and ``V`` [(N·m)²] instead of estimates.

    Attributes
    ----------
    count : int
        Samples seen.
    """

    def __init__(self, n: int, time_constant: float, process_noise=None,
                 measurement_noise=None):
        self.count = 0
        self._fixed_w, self._fixed_v = process_noise, measurement_noise
        self._third = RunningVariance(n, time_constant)        # Δ³q
        self._first = RunningVariance(n, time_constant)        # Δy
        self._second = RunningVariance(n, time_constant)       # Δ²y
        self._quantum = np.full(n, np.inf)
        self._q = self._y = None                                # the last sample's
        self._step = self._slope = self._curvature = None       # its differences
        self._log_w = self._log_wd = None
        self._start = 0.0
        self._white = np.zeros((WHITE_LAG, n))                  # the last normalised innovations
        self._white_sum = np.zeros(n)

    @property
    def ready(self) -> bool:
        """Whether ``WARMUP`` samples were seen (the estimates have replaced the start)."""
        return self.count > WARMUP

    def add(self, q: np.ndarray, y: np.ndarray, dt: float) -> None:
        """Take a sample's measurements (before the filter uses the estimates).

        Parameters
        ----------
        q : (n,) ndarray
            Measured positions [rad or m].
        y : (n,) ndarray
            Measured torques [N·m or N].
        dt : float
            Time since the previous sample [s] (ignored for the first).
        """
        self.count += 1
        if self.count >= 2:
            step = q - self._q
            self._smallest(step)
            slope = y - self._y
            self._first.add(slope, dt)
            if self.count >= 3:
                self._second.add(slope - self._slope, dt)
                curvature = step - self._step
                self._smallest(curvature)
                if self.count >= 4:
                    self._third.add(curvature - self._curvature, dt)
                self._curvature = curvature
            self._step, self._slope = step, slope
        else:
            self._start = float(np.max(y * y)) + TORQUE_FLOOR ** 2
        self._q, self._y = q, y

    def _smallest(self, change: np.ndarray) -> None:
        """Keep the smallest position change beyond rounding (steps and their changes are
        multiples of the resolution: a joint always moving by several counts per sample still
        changes its step by one now and then)."""
        size = np.abs(change)
        beyond = size > ROUNDING * np.spacing(np.abs(self._q))
        np.minimum(self._quantum, np.where(beyond, size, np.inf), out=self._quantum)

    def encoder(self) -> np.ndarray:
        """``R``, the encoder's noise.

        Returns
        -------
        (n,) ndarray
            Variance of the positions' error [rad² or m²].
        """
        rounding = np.where(np.isfinite(self._quantum), self._quantum ** 2 / 12.0, 0.0)
        return np.maximum(np.maximum(rounding, self._third.value / 20.0), ENCODER_FLOOR ** 2)

    def measurement(self) -> np.ndarray:
        """``V``, the torque measurement's noise.

        Returns
        -------
        (n,) ndarray
            Its variance [(N·m)²].
        """
        if self._fixed_v is not None:
            return self._fixed_v
        if self.count < 3:          # no second difference yet: as uncertain as the torque
            return np.full(len(self._second.value), self._start)
        return np.maximum(self._second.value / 6.0, TORQUE_FLOOR ** 2)

    def process(self) -> np.ndarray:
        """``W``, how unpredictably the torque moves.

        Returns
        -------
        (n,) ndarray
            Variance of the torque's unpredicted increment per sample [(N·m)²].
        """
        if self._fixed_w is not None:
            return self._fixed_w
        return FLOOR * self.measurement() if self._log_w is None else np.exp(self._log_w)

    def model_error(self) -> np.ndarray:
        """``W_d``, how fast the model's error drifts.

        Returns
        -------
        (n,) ndarray
            Variance of the model error's increment per sample [(N·m)²].
        """
        return FLOOR * self.measurement() if self._log_wd is None else np.exp(self._log_wd)

    def adapt(self, position_nis: np.ndarray, torque_innovation: np.ndarray,
              torque_variance: np.ndarray, dt: float) -> None:
        """Move ``W`` and ``W_d`` towards matching this sample's innovations.

        Parameters
        ----------
        position_nis : (n,) ndarray
            Squared position innovations over their predicted variances.
        torque_innovation, torque_variance : (n,) ndarray
            Torque innovations [N·m or N] and their predicted variances [(N·m)²].
        dt : float
            Time since the previous sample [s].
        """
        e = np.clip(torque_innovation / np.sqrt(torque_variance), -WHITE_CLIP, WHITE_CLIP)
        slot = self.count % WHITE_LAG
        correlation = e * self._white_sum * (1.0 / np.sqrt(WHITE_LAG))
        self._white_sum += e - self._white[slot]
        self._white[slot] = e
        if self.count < 3:                          # no torque noise estimate yet
            return
        rate = max(min(1.0, dt / ADAPT_TIME), 1.0 / self.count)    # Robbins–Monro at the start
        floor = np.log(FLOOR * self.measurement())
        if self._log_w is None:
            self._log_w, self._log_wd = floor.copy(), floor.copy()
        if self._fixed_w is None:
            self._log_w += rate * (np.minimum(position_nis, NIS_CLIP) - 1.0)
            np.clip(self._log_w, floor, np.log(np.maximum(self._first.value, np.exp(floor))),
                    out=self._log_w)
        if self.count > WARMUP + WHITE_LAG:
            self._log_wd += rate * correlation
        np.maximum(self._log_wd, floor, out=self._log_wd)

    def summary(self) -> dict[str, list[float]]:
        """The current estimates, per joint, as plain lists.

        Returns
        -------
        dict of str to list of float
            ``encoder_noise`` (R), ``measurement_noise`` (V), ``process_noise`` (W),
            ``model_error_noise`` (W_d).
        """
        return {'encoder_noise': self.encoder().tolist(),
                'measurement_noise': self.measurement().tolist(),
                'process_noise': self.process().tolist(),
                'model_error_noise': self.model_error().tolist()}
