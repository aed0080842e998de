"""The generalised-momentum observer of external joint torques [De Luca et al. 2006]
(docs/methods.md §12).

With ``p = M(q) qd`` and ``ṗ = tau + tau_ext − beta(q, qd)`` (``dynamics.generalized_momentum``,
``dynamics.momentum_bias``),
the residual

    r(t) = K_O [p(t) − p(0) − ∫₀ᵗ (tau − beta + r) ds]

obeys ``ṙ = K_O (tau_ext − r)``: a first-order lag of the external torque that needs no
acceleration. ``tau_ext`` is the torque the environment applies at the joints (positive in the
joint's direction), ``tau`` the joint torque of the drives.

Discretised on the midpoints of the samples: the momentum of the first difference belongs to
``t_{k−1/2}`` (its position is the mean of the two samples), and the torques of sample ``k − 1``
act between ``t_{k−3/2}`` and ``t_{k−1/2}``, with the velocity there interpolated between the
two midpoints; ``r`` is taken implicitly. On a motion integrated with central differences
(the simulator) the residual of the true model is then zero to second order in the step.
"""
from __future__ import annotations

import numpy as np

from .dynamics import DynamicModel, generalized_momentum, momentum_bias


class MomentumObserver:
    """External joint torques from the motion and the drive torques.

    Parameters
    ----------
    dm : DynamicModel
        The dynamic model.
    gain : (n,) ndarray
        ``K_O`` per joint [1/s].

    References
    ----------
    .. [1] De Luca A., Albu-Schäffer A., Haddadin S., Hirzinger G., "Collision detection and
       safe reaction with the DLR-III lightweight manipulator arm", IEEE/RSJ International
       Conference on Intelligent Robots and Systems (IROS), 2006, pp. 1623–1630,
       DOI 10.1109/IROS.2006.282053.
    """

    def __init__(self, dm: DynamicModel, gain: np.ndarray):
        self.dm, self.data = dm, dm.create_data()
        self.gain = np.asarray(gain, dtype=float)
        self.residual = np.zeros(dm.n)
        self._previous = None     # q_{k-1}, tau_{k-1}, dt_{k-1}, qd_{k-3/2}
        self._start = None        # p(0)
        self._integral = np.zeros(dm.n)

    def update(self, q: np.ndarray, tau: np.ndarray, dt: float) -> np.ndarray:
        """Take a sample.

        Parameters
        ----------
        q : (n,) ndarray
            Measured joint positions [rad or m].
        tau : (n,) ndarray
            Joint torques of the drives at this sample [N·m or N].
        dt : float
            Time since the previous sample [s], > 0 (ignored for the first sample).

        Returns
        -------
        (n,) ndarray
            The external torque estimate ``r`` (at the midpoint before this sample) [N·m or N].
        """
        if self._previous is None:
            self._previous = (q, tau, 0.0, None)
            return self.residual
        q_last, tau_last, dt_last, qd_before = self._previous
        qd_half = (q - q_last) / dt
        momentum = generalized_momentum(self.dm, self.data, 0.5 * (q + q_last), qd_half)
        if qd_before is None:
            self._start = momentum
        else:
            span = 0.5 * (dt_last + dt)
            qd_last = (qd_before * dt + qd_half * dt_last) / (dt_last + dt)
            beta = momentum_bias(self.dm, self.data, q_last, qd_last)
            integral = self._integral + span * (tau_last - beta)
            self.residual = self.gain * (momentum - self._start - integral) / (
                1.0 + self.gain * span)
            self._integral = integral + span * self.residual
        self._previous = (q, tau, dt, qd_half)
        return self.residual
