"""The Kalman filter of joint torques of scara_kalman_torque_estimation_2018, for n joints and any
dynamic model (docs/methods.md §12, "Kalman filter").

State and measurement are the joint torques. The prediction is the first-order Taylor expansion
of the inverse dynamics at the motion ``s_k`` toward the next reference, ``s_k`` the measured
motion (``linearization='measured'``, the paper's) or the reference (``'reference'``, friction
increments at the measured velocities); the update is the linear Kalman filter with
``F = C = I``; a measurement missed by more than ``GATE`` standard deviations of the innovation
resets the prior's variance to what the innovation shows.
"""
from __future__ import annotations

import numpy as np

from .config import TorqueEstimatorConfig, covariance
from .dynamics import (
    DynamicModel,
    forward_dynamics,
    inverse_dynamics,
    inverse_dynamics_derivatives,
)
from .noise import NoiseEstimator

#: Innovations beyond this many standard deviations raise the prior's variance.
GATE = 4.0


class KalmanTorqueFilter:
    """The torque Kalman filter, one sample at a time.

    Parameters
    ----------
    dm : DynamicModel
        The dynamic model (identified, or a URDF).
    config : TorqueEstimatorConfig
        ``linearization``, ``initial_covariance``, ``process_noise``, ``measurement_noise``,
        ``noise_time_constant``.

    Attributes
    ----------
    covariance : (n, n) ndarray
        ``P`` after the last update [(N·m)²].
    innovation : (n,) ndarray or None
        ``ν = y − x⁻`` of the last update, measurement minus prediction [N·m or N].
    innovation_variance : (n,) ndarray or None
        Its predicted variance ``S = P⁻ + V`` per joint (before an outlier raises ``P⁻``)
        [(N·m)²].

    Raises
    ------
    InputError
        For a covariance with a wrong number of values or not positive definite.

    References
    ----------
    .. [1] Zhang T., Liang X., "Kalman filter-based SCARA robot joint torque estimation",
       Journal of Zhejiang University (Engineering Science) 52(5):951–959, 2018,
       DOI 10.3785/j.issn.1008-973X.2018.05.015, eq. (10)–(23).
    """

    def __init__(self, dm: DynamicModel, config: TorqueEstimatorConfig):
        n = dm.n
        self.dm, self.data = dm, dm.create_data()
        self.at_reference = config.linearization == 'reference'
        p0 = covariance(config.initial_covariance, n, 'initial_covariance')
        w = covariance(config.process_noise, n, 'process_noise')
        v = covariance(config.measurement_noise, n, 'measurement_noise')
        self.noise = None if w is not None and v is not None else \
            NoiseEstimator(n, config.noise_time_constant)
        self._diagonal = all(np.count_nonzero(m - np.diag(np.diag(m))) == 0
                             for m in (p0, w, v) if m is not None)
        self._p0, self._w, self._v = (None if m is None else self._shaped(m) for m in (p0, w, v))
        self._x = None
        self._p = None
        self.innovation = self.innovation_variance = None
        self._point = None          # s_k as one (3n,) vector
        self._jacobian = np.zeros((n, 3 * n))      # B_u,k
        self._y = None
        self._friction = None       # friction at the measured velocity of s_k

    @property
    def covariance(self) -> np.ndarray:
        """``P`` after the last update, (n, n) [(N·m)²]."""
        return np.diag(self._p) if self._diagonal else self._p

    def update(self, y, dt: float, target: tuple, measured, velocity) -> np.ndarray:
        """Predict to this sample and take its measurement.

        Parameters
        ----------
        y : (n,) ndarray
            Measured joint torques [N·m or N].
        dt : float
            Time since the previous sample [s].
        target : tuple of (n,) ndarray
            ``r_{k+1}``: the reference ``(q, qd, qdd)`` at this sample, or the measured motion
            without a reference.
        measured : callable
            Returns the measured motion ``(q, qd, qdd)`` (eq. (10)); called only when needed.
        velocity : (n,) ndarray
            Measured joint velocities (first difference) [rad/s or m/s].

        Returns
        -------
        (n,) ndarray
            The estimate of the joint torques [N·m or N].
        """
        if self._x is None:
            prior, spread = inverse_dynamics(self.dm, self.data, *target), self._p0
            self._friction = self.dm.friction_torque(velocity)
        else:
            step = self._step_to(target, velocity)
            prior = self._x + step
            if self.noise is not None:
                self.noise.update(y - self._y - step, dt)
            spread = self._p + self._process()
        self._correct(prior, spread, y)
        self._y = y
        point = target if self.at_reference else measured()
        self._point = np.concatenate(point)
        for i, block in enumerate(inverse_dynamics_derivatives(
                self.dm, self.data, *point, friction=not self.at_reference)):
            self._jacobian[:, i * self.dm.n:(i + 1) * self.dm.n] = block
        return self._x

    def _step_to(self, target, velocity) -> np.ndarray:
        """``B_u,k u_k`` (eq. (15)–(17), (23)); expanded at the reference, the friction's
        increment at the measured velocities."""
        step = self._jacobian @ (np.concatenate(target) - self._point)
        if not self.at_reference:
            return step
        friction, self._friction = self._friction, self.dm.friction_torque(velocity)
        return step + self._friction - friction

    def _process(self) -> np.ndarray:
        return self._w if self._w is not None else self._shaped(self.noise.covariances()[0])

    def _measurement(self) -> np.ndarray:
        return self._v if self._v is not None else self._shaped(self.noise.covariances()[1])

    def _shaped(self, m: np.ndarray) -> np.ndarray:
        """A covariance as the filter keeps it: the diagonal, or the matrix."""
        if self._diagonal:
            return np.diag(m).copy() if m.ndim == 2 else m
        return m if m.ndim == 2 else np.diag(m)

    def _correct(self, prior, spread, y) -> None:
        """The update of eq. (12)–(13) with C = I."""
        v = self._measurement()
        innovation = y - prior
        squared = innovation * innovation
        if self._diagonal:
            self.innovation, self.innovation_variance = innovation, spread + v
            missed = squared > GATE * GATE * self.innovation_variance
            if missed.any():
                spread = np.where(missed, squared - v, spread)
            gain = spread / (spread + v)
            self._p = gain * v                          # (1 − K) P⁻ with C = I
        else:
            diagonal, noise = np.diag(spread), np.diag(v)
            self.innovation, self.innovation_variance = innovation, diagonal + noise
            missed = squared > GATE * GATE * self.innovation_variance
            if missed.any():
                spread = spread + np.diag(np.where(missed, squared - noise - diagonal, 0.0))
            gain = np.linalg.solve(spread + v, spread).T
            self._p = spread - gain @ spread
        self._x = prior + (gain * innovation if self._diagonal else gain @ innovation)


def measured_motion(dm: DynamicModel, data, q, qd, torque) -> tuple:
    """The measured motion of the paper's linearisation: the acceleration of the forward
    dynamics under the mean-filtered torque instead of a double difference (eq. (10)).

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd : (n,) ndarray
        Measured position and its first difference.
    torque : (n,) ndarray
        Mean-filtered measured torque [N·m or N].

    Returns
    -------
    tuple of (n,) ndarray
        ``(q, qd, qdd)``.
    """
    return q, qd, forward_dynamics(dm, data, q, qd, torque)

