"""The state Kalman filter of joint torques: the model's torque of the motion the encoders and
the measured torques show together, without a reference (docs/methods.md §12).

Per joint the state is the motion and the model's torque error, ``x = [q, q̇, q̈, d]``. The
motion follows the Wiener-process acceleration model [1] (a random-walk acceleration: the
paper's torque random walk taken through the joint's inertia), the error a random walk, and
both measurements see the state:

    x_{k+1} = F(T) x_k + w_k,   q_m = q + e,   y = tau(q, q̇, q̈) + d + v                (12.4)

``tau`` is the inverse dynamics (12.1), ``F(T)`` the constant-acceleration step over the sample
interval ``T``, ``w`` per joint of covariance ``S_j Q(T)`` with the jerk density
``S_j = W_j / (T M_jj²)`` and ``W_d,j`` on ``d``: ``W_j`` is the torque's unpredicted increment
per sample, ``M_jj`` the joint's inertia.

The extended Kalman filter [2] linearises ``tau`` at the prediction (Pinocchio's RNEA
derivatives). The friction is linearised statistically over the predicted velocity's
uncertainty [3] (``uncertain_friction``): its expectation, the slope of its best linear fit and
the variance that fit leaves (added to ``V``); a Coulomb step the velocity may or may not have
crossed is then a steep slope through the torque the measurement shows, not a jump at a guessed
sample, and the estimate adds the friction's departure from that line in proportion to its
share of the torque innovation. The encoders carry the slow part of the torque through the
model (the acceleration of quantised positions is precise at low frequency), the torque
measurement the fast part and the model's error, each weighted by its noise: ``R`` (encoder),
``V`` (torque), ``W`` and ``W_d``, all estimated while filtering (``state_noise``). An estimate
uses the measurements up to its sample.

A torque innovation beyond ``GATE`` standard deviations (a step the model does not predict)
raises the prior variances of the joint's acceleration and model error, in proportion to their
shares of the predicted torque variance, to what the innovation shows (covariance matching for
that sample).

References
----------
.. [1] Bar-Shalom Y., Li X. R., Kirubarajan T., "Estimation with Applications to Tracking and
   Navigation", Wiley, 2001, §6.2.3 (the discrete Wiener process acceleration model),
   DOI 10.1002/0471221279.
.. [2] Simon D., "Optimal State Estimation: Kalman, H∞, and Nonlinear Approaches", Wiley,
   2006, §13.2 (the extended Kalman filter), DOI 10.1002/0470045345.
.. [3] Gelb A. (ed.), "Applied Optimal Estimation", MIT Press, 1974, §6.2 (statistical
   linearisation).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from .config import TorqueEstimatorConfig, covariance
from .dynamics import DynamicModel, inverse_dynamics, inverse_dynamics_derivatives
from .kalman import GATE
from .state_noise import StateNoise

#: Standard normal quantiles of equal probability (midpoints) over which the friction is
#: averaged: a step's expectation within 1/len of its height, unlike a Gauss–Hermite rule.
NODES = ndtri((np.arange(32) + 0.5) / 32)
#: Their mean square (just below 1), which makes the fitted slope of a line exact.
SPREAD = float(np.mean(NODES * NODES))
#: Velocity standard deviation assumed at the first sample for a joint without a finite
#: velocity limit in the URDF [rad/s or m/s].
START_VELOCITY = 1.0


@dataclass
class FilterStep:
    """What one sample's update leaves for a smoother (``StateKalmanFilter.keep``).

    Parameters
    ----------
    dt : float
        Time since the previous sample [s]; 0 for the first.
    prior, posterior : (4n,) ndarray
        State before and after the measurements.
    prior_covariance, covariance : (4n, 4n) ndarray
        Their covariances.
    """

    dt: float
    prior: np.ndarray
    posterior: np.ndarray
    prior_covariance: np.ndarray
    covariance: np.ndarray


class StateKalmanFilter:
    """The state Kalman filter of joint torques (module docstring), one sample at a time.

    Parameters
    ----------
    dm : DynamicModel
        The model the torques are estimated with (identified, or a URDF).
    config : TorqueEstimatorConfig
        ``process_noise`` and ``measurement_noise`` (``auto``: estimated; numbers: their
        diagonals are ``W`` and ``V``), ``noise_time_constant``.

    Attributes
    ----------
    noise : StateNoise
        The noise estimates.
    innovation : (n,) ndarray or None
        Torque innovation of the last update, measurement minus prediction [N·m or N] (None
        before the second sample).
    innovation_variance : (n,) ndarray or None
        Its predicted variance (before an outlier raises the prior) [(N·m)²].
    keep : bool
        Keep each update's ``FilterStep`` in ``step`` (for ``smoother``).
    step : FilterStep or None
        The last update's, when ``keep``.

    Raises
    ------
    InputError
        For a covariance with a wrong number of values or not positive definite.
    """

    def __init__(self, dm: DynamicModel, config: TorqueEstimatorConfig):
        n = dm.n
        self.dm, self.data = dm, dm.create_data()
        fixed = [covariance(value, n, field) for value, field in (
            (config.process_noise, 'process_noise'),
            (config.measurement_noise, 'measurement_noise'))]
        self.noise = StateNoise(n, config.noise_time_constant,
                                *(None if m is None else np.diag(m).copy() for m in fixed))
        self.innovation = self.innovation_variance = None
        self.keep, self.step = False, None
        self._x = self._p = None
        size = 4 * n
        self._f = np.eye(size)
        self._h = np.zeros((2 * n, size))
        self._h[:n, :n] = np.eye(n)
        self._h[n:, 3 * n:] = np.eye(n)
        self._block = {(i, j): (i * n + np.arange(n)) * size + j * n + np.arange(n)
                       for i in range(4) for j in range(4)}
        kinematic = [(i, j) for i in range(3) for j in range(3)]
        self._q_index = np.concatenate([self._block[b] for b in kinematic + [(3, 3)]])
        self._q_powers = np.array([5, 4, 3, 4, 3, 2, 3, 2, 1])
        self._q_factors = 1.0 / np.array([20, 8, 6, 8, 3, 2, 6, 2, 1])
        self._s_index = (np.arange(2 * n) * (2 * n + 1))         # diagonal of S
        self._friction_torque = self._friction_variance = np.zeros(n)
        limit = np.asarray(dm.robot.velocity_limit, dtype=float)
        self._start_speed = np.where(np.isfinite(limit) & (limit > 0), limit, START_VELOCITY)

    def update(self, q: np.ndarray, y: np.ndarray, dt: float) -> np.ndarray:
        """Predict to this sample and take its measurements.

        Parameters
        ----------
        q, y : (n,) ndarray
            Measured joint positions [rad or m] and torques [N·m or N].
        dt : float
            Time since the previous sample [s], > 0 (ignored for the first sample).

        Returns
        -------
        (n,) ndarray
            The estimate of the joint torques [N·m or N].
        """
        n = self.dm.n
        self.noise.add(q, y, dt)
        first = self._x is None
        x, p = self._start(q, y) if first else self._predict(dt)
        torque = self._measurement(x)
        h = self._h
        innovation = np.concatenate([q - x[:n], y - torque])
        noise = np.concatenate([self.noise.encoder(),
                                self.noise.measurement() + self._friction_variance])
        pht = p @ h.T
        s = h @ pht
        s.flat[self._s_index] += noise
        spread = s.flat[self._s_index[n:]]
        missed = innovation[n:] ** 2 > GATE * GATE * spread
        if missed.any():
            p, pht, s = self._inflate(p, np.where(missed, innovation[n:] ** 2 - spread, 0.0),
                                      noise)
        if not first:
            self.innovation, self.innovation_variance = innovation[n:], spread
            nis = innovation[:n] ** 2 / s.flat[self._s_index[:n]]
            self.noise.adapt(nis, innovation[n:], spread, dt)
        weights = scaled_solve(s, np.column_stack([innovation, pht.T]))
        correction = pht @ weights[:, 0]
        posterior = x + correction
        gain = weights[:, 1:].T
        keep = -gain @ h                    # Joseph's form: (I − K H) P (I − K H)ᵀ + K R Kᵀ
        keep.flat[::len(x) + 1] += 1.0
        covariance_ = keep @ p @ keep.T + (gain * noise) @ gain.T
        self._x, self._p = posterior, covariance_
        # the torque is the state's plus the friction's departure from its linear fit, which
        # the measurement shows too (its share of the innovation)
        estimate = torque + h[n:] @ correction + self._friction_variance * weights[n:, 0]
        if self.keep:
            self.step = FilterStep(0.0 if first else dt, x, posterior, p, covariance_)
        return estimate

    def _start(self, q, y):
        """The prior of the first sample: at rest where measured, the torque's residual split
        between acceleration and model error."""
        dm, n = self.dm, self.dm.n
        x = np.zeros(4 * n)
        x[:n] = q
        zero = np.zeros(n)
        residual = y - inverse_dynamics(dm, self.data, q, zero, zero)
        scale = residual ** 2 + y ** 2 + np.finfo(float).tiny
        inertia = self._jacobian(x)
        p = np.diag(np.concatenate([self.noise.encoder(), self._start_speed ** 2,
                                    scale / inertia ** 2, scale]))
        self._friction(x, p)
        return x, p

    def _predict(self, dt: float):
        """``F x``, ``F P Fᵀ + Q`` over ``dt`` (module docstring); on the way the rigid body's
        Jacobian at ``F x`` (``Q`` needs the inertia) and the friction's linearisation."""
        n, f = self.dm.n, self._f
        f.flat[self._block[0, 1]] = f.flat[self._block[1, 2]] = dt    # transition(n, dt)
        f.flat[self._block[0, 2]] = 0.5 * dt * dt
        x = f @ self._x
        p = f @ self._p @ f.T
        inertia = self._jacobian(x)
        density = self.noise.process() / (dt * inertia * inertia)
        values = np.empty((10, n))
        values[:9] = (self._q_factors * dt ** self._q_powers)[:, None] * density
        values[9] = self.noise.model_error()
        p.flat[self._q_index] += values.ravel()
        self._friction(x, p)
        return x, p

    def _jacobian(self, x) -> np.ndarray:
        """The rigid body's part of the torque's Jacobian at ``x`` into ``self._h``; the
        diagonal of the mass matrix (rotor inertia included)."""
        n, h = self.dm.n, self._h
        dq, dqd, dqdd = inverse_dynamics_derivatives(self.dm, self.data, x[:n], x[n:2 * n],
                                                     x[2 * n:3 * n], friction=False)
        h[n:, :n] = dq
        h[n:, n:2 * n] = dqd
        h[n:, 2 * n:3 * n] = dqdd
        return np.diag(dqdd).copy()

    def _friction(self, x, p) -> None:
        """The friction's statistical linearisation at the predicted velocity: its torque into
        ``self._friction_torque``, its slope added to the Jacobian, the variance it leaves
        into ``self._friction_variance``."""
        n = self.dm.n
        self._friction_torque, slope, self._friction_variance = uncertain_friction(
            self.dm, x[n:2 * n], p[n:2 * n, n:2 * n])
        self._h[n:, n:2 * n] += slope

    def _measurement(self, x) -> np.ndarray:
        """The predicted torque measurement ``tau(x) + d``."""
        n = self.dm.n
        return inverse_dynamics(self.dm, self.data, x[:n], x[n:2 * n], x[2 * n:3 * n],
                                friction=False) + self._friction_torque + x[3 * n:]

    def _inflate(self, p, excess, noise):
        """Raise the prior variances of the missed joints' acceleration and model error by
        ``excess`` of torque variance, shared in proportion to their contributions."""
        n = self.dm.n
        inertia = np.diag(self._h[n:, 2 * n:3 * n])
        acceleration = p.flat[self._block[2, 2]] * inertia * inertia
        error = p.flat[self._block[3, 3]]
        share = error / (acceleration + error)
        p = p.copy()
        p.flat[self._block[2, 2]] += excess * (1.0 - share) / (inertia * inertia)
        p.flat[self._block[3, 3]] += excess * share
        pht = p @ self._h.T
        s = self._h @ pht
        s.flat[self._s_index] += noise
        return p, pht, s


def scaled_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a⁻¹ b`` for a symmetric positive definite ``a`` whose diagonal spans many orders of
    magnitude (positions in rad², torques in (N·m)²): solved with ``a`` scaled to a unit
    diagonal, whose condition number is that of the correlations only.

    Parameters
    ----------
    a : (m, m) ndarray
    b : (m,) or (m, k) ndarray

    Returns
    -------
    (m,) or (m, k) ndarray
    """
    scale = 1.0 / np.sqrt(np.diag(a))
    column = scale if b.ndim == 1 else scale[:, None]
    return column * np.linalg.solve(a * np.outer(scale, scale), column * b)


def transition(n: int, dt: float) -> np.ndarray:
    """``F(T)`` of (12.4): the constant-acceleration step of the state ``[q, q̇, q̈, d]``.

    Parameters
    ----------
    n : int
        Number of joints.
    dt : float
        ``T`` [s].

    Returns
    -------
    (4n, 4n) ndarray
    """
    f = np.eye(4 * n)
    one = np.eye(n)
    f[:n, n:2 * n] = f[n:2 * n, 2 * n:3 * n] = dt * one
    f[:n, 2 * n:3 * n] = 0.5 * dt * dt * one
    return f


def uncertain_friction(dm: DynamicModel, qd: np.ndarray, covariance: np.ndarray) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Statistical linearisation of the joint friction torque over an uncertain velocity.

    Each actuator's velocity is taken as normal around ``G qd`` with the variance
    ``(G C Gᵀ)_mm``. Over its quantiles ``ū + σ NODES`` come the expectation of its friction,
    the slope of the best linear fit (the derivative of the expectation with respect to the
    mean velocity) ``E[f(u) (u − ū)] / σ²`` (Stein's identity, which holds for a step) and
    what the line leaves, ``var f(u) − (slope σ)²``.

    Parameters
    ----------
    dm : DynamicModel
        The model (friction per actuator, gear matrix ``G``).
    qd : (n,) ndarray
        Mean joint velocities [rad/s or m/s].
    covariance : (n, n) ndarray
        ``C``, their covariance.

    Returns
    -------
    torque : (n,) ndarray
        Expected joint friction torque ``Gᵀ E[f(G qd)]`` [N·m or N].
    jacobian : (n, n) ndarray
        Its derivative with respect to ``qd``.
    variance : (n,) ndarray
        Variance of each joint's friction torque about the linear fit [(N·m)²].

    References
    ----------
    .. [1] Gelb A. (ed.), "Applied Optimal Estimation", MIT Press, 1974, §6.2.
    .. [2] Stein C. M., "Estimation of the mean of a multivariate normal distribution", The
       Annals of Statistics 9(6):1135–1151, 1981, DOI 10.1214/aos/1176345632 (lemma 1).
    """
    g = dm.gear
    if dm.direct:
        mean, spread = qd, np.diag(covariance)
    else:
        mean, spread = g @ qd, np.einsum('ij,jk,ik->i', g, covariance, g)
    spread = np.sqrt(np.maximum(spread, 0.0))
    points = np.empty((len(NODES) + 1, len(mean)))
    points[:-1] = mean + NODES[:, None] * spread
    points[-1] = mean
    values, slopes = dm.friction.torque_and_slope(points)
    values = values[:-1]
    expected = values.mean(axis=0)
    moment = NODES @ values / (len(NODES) * SPREAD)        # slope × σ
    variance = np.maximum((values * values).mean(axis=0) - expected * expected
                          - SPREAD * moment * moment, 0.0)
    exact = spread > 0
    slope = np.where(exact, moment / np.where(exact, spread, 1.0), slopes[-1])
    if dm.direct:
        return expected, np.diag(slope), variance
    return g.T @ expected, (g.T * slope) @ g, (g.T * g.T) @ variance
