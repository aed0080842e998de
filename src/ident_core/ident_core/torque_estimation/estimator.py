"""One interface for every torque estimation method (docs/methods.md §12): a sample of the
measured positions and torques in, the estimate of the joint torques and of the external
torques out.

``kalman`` estimates with the state Kalman filter (``state_filter``), which needs no reference,
on every sample; on the samples that come with a reference, the paper's filter expanded at the
reference (``kalman``) gives the estimate instead, started afresh where a reference begins. The
velocity of the baselines and of the paper's filter is the first difference of the positions
over the stamps (the paper's, and what a drive reports), a continuous joint's angle unwrapped
first (for every method); a sample with the stamp of the previous one is a repeat and is
skipped. The external torque is the momentum observer's, driven by the measured torque for every
method: the observer is itself a first-order filter of bandwidth ``observer_gain``, and another
filter in front of it would only delay a collision's detection. ``momentum-observer`` leaves the
joint torque unfiltered.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model.robot import unwrapped
from ..monitoring.statistics import InnovationStatistics
from ..schema import per_joint
from .baselines import LowpassFilter, MeanFilter
from .config import TorqueEstimatorConfig, covariance
from .dynamics import DynamicModel
from .kalman import GATE, KalmanTorqueFilter, measured_motion
from .observer import MomentumObserver
from .state_filter import StateKalmanFilter


@dataclass(frozen=True)
class TorqueEstimate:
    """The estimate at one sample.

    Parameters
    ----------
    filtered : (n,) ndarray
        Joint torques of the drives [N·m or N].
    external : (n,) ndarray
        External joint torques (the environment on the robot) [N·m or N].
    """

    filtered: np.ndarray
    external: np.ndarray


class TorqueEstimator:
    """Joint and external torque estimation, one sample at a time.

    Parameters
    ----------
    dm : DynamicModel
        The dynamic model.
    config : TorqueEstimatorConfig
        The method and its settings.

    Attributes
    ----------
    kalman : StateKalmanFilter or None
        ``kalman``: the state Kalman filter (None for the other methods).
    reference_kalman : KalmanTorqueFilter or None
        ``kalman``: the paper's filter of the current stretch of samples with a reference
        (None outside one).
    repeats : int
        Samples skipped because their stamp repeated the previous one.
    innovations : InnovationStatistics or None
        The innovations of the Kalman filter that gave each estimate (from its second sample
        on; None for the other methods); whoever reports them resets them.

    Raises
    ------
    InputError
        For settings that do not fit the model (numbers of values).
    """

    def __init__(self, dm: DynamicModel, config: TorqueEstimatorConfig):
        n = dm.n
        self.dm, self.config = dm, config
        self.method = config.method
        self.kalman = StateKalmanFilter(dm, config) if self.method == 'kalman' else None
        self.reference_kalman = None
        covariance(config.initial_covariance, n, 'initial_covariance')     # checked up front
        self.lowpass = LowpassFilter(config.lowpass_cutoff_hz, config.lowpass_order) \
            if self.method == 'lowpass' else None
        self.mean = MeanFilter(n, config.mean_window)
        self.observer = MomentumObserver(dm, per_joint(config.observer_gain, n,
                                                       'observer_gain'))
        self.repeats = 0
        self.innovations = InnovationStatistics(n, GATE) if self.kalman is not None else None
        self._last = None           # t, q

    def step(self, t: float, q, effort, reference: tuple | None = None) \
            -> TorqueEstimate | None:
        """Take a sample.

        Parameters
        ----------
        t : float
            Stamp [s].
        q : (n,) array_like
            Measured joint positions [rad or m], model joint order.
        effort : (n,) array_like
            Measured joint torques [N·m or N].
        reference : tuple of (n,) ndarray, optional
            The reference motion ``(q, qd, qdd)`` at ``t`` (what the controller tracks; finite,
            model joint order).

        Returns
        -------
        TorqueEstimate or None
            None for a repeated stamp.

        Raises
        ------
        InputError
            For a stamp older than the previous one, or values that are not n finite numbers.
        """
        q, effort = self._checked(q, 'position'), self._checked(effort, 'effort')
        if self._last is None:
            dt, qd = 0.0, np.zeros_like(q)
        else:
            dt = t - self._last[0]
            if dt < 0:
                raise InputError(f'sample at t = {t:.6f} s is older than the previous one '
                                 f'({self._last[0]:.6f} s)')
            if dt == 0:
                self.repeats += 1
                return None
            q = unwrapped(self.dm.model, q, self._last[1])   # a continuous joint's wrap
            qd = (q - self._last[1]) / dt
        self._last = (t, q)
        mean = self.mean.update(effort)
        if self.method == 'kalman':
            filtered = self._kalman(q, qd, mean, effort, dt, reference)
        elif self.method == 'mean5':
            filtered = mean
        elif self.method == 'lowpass':
            filtered = self.lowpass.update(effort, dt)
        else:
            filtered = effort
        return TorqueEstimate(filtered, self.observer.update(q, effort, dt).copy())

    def _kalman(self, q, qd, mean, effort, dt, reference):
        estimate = self.kalman.update(q, effort, dt)
        used = self.kalman
        if reference is None:
            self.reference_kalman = None
        else:
            if self.reference_kalman is None:
                self.reference_kalman = KalmanTorqueFilter(self.dm, self.config)
            used = self.reference_kalman
            started = used.innovation is not None
            estimate = self._referenced(q, qd, mean, effort, dt, reference)
            if not started:                 # its first sample only initialises it
                return estimate
        # innovations count once the noise estimate is warmed up: before, a robot at rest
        # gives variances near 0 and the statistics would take an infinite one for good
        if used.innovation is not None and (used.noise is None or used.noise.ready):
            self.innovations.add(used.innovation, used.innovation_variance)
        return estimate

    def _referenced(self, q, qd, mean, effort, dt, reference):
        """The paper's filter expanded at the reference."""
        flt = self.reference_kalman
        cache = []

        def measured():
            if not cache:
                cache.append(measured_motion(self.dm, flt.data, q, qd, mean))
            return cache[0]

        return flt.update(effort, dt, reference, measured, qd)

    def _checked(self, values, what: str) -> np.ndarray:
        x = np.asarray(values, dtype=float)
        if x.shape != (self.dm.n,):
            raise InputError(f'{what}: {self.dm.n} values expected (joints '
                             f'{", ".join(self.dm.robot.joint_names)}), got {x.size}')
        if not math.isfinite(x.sum()):            # one reduction: NaN and inf propagate
            bad = [self.dm.robot.joint_names[i] for i in np.flatnonzero(~np.isfinite(x))]
            raise InputError(f'{what}: not a finite number for joint(s) {", ".join(bad)}')
        return x
