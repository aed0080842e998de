"""Least-squares estimators of the base parameters (docs/methods.md §4;
payload_identification_2017 eq. (10)–(13); Gautier's weighted least squares).

    OLS:  beta = argmin ‖tau − W beta‖²,        cov = σ² (WᵀW)⁻¹,  σ² = ‖r‖² / (N·n − nb)
    WLS:  σ_j² = ‖tau_j − W_j beta_OLS‖² / (N − nb) per joint j, rows of joint j weighted by 1/σ_j,
          beta = argmin ‖H (tau − W beta)‖²,   cov = (Wᵀ H² W)⁻¹
          σ_j are then re-estimated from the WLS residuals and the weighting repeated until they
          change by less than 1 % (at most ``iterations`` passes; ``iterations=1`` is Gautier's
          one-step WLS). OLS residuals overstate σ_j of the joints with small torques, because
          the OLS fit leans towards the joints with large torques; the iteration removes that and
          gives calibrated standard deviations.

Solutions use a QR factorisation of ``[W | tau]`` (no normal equations, no Q matrix stored).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..errors import ExcitationError, InputError

#: Estimator names; ``pc-wls`` is in ``pc_wls`` (it needs the standard parameters).
ESTIMATORS = ('ols', 'wls', 'pc-wls')
EXCITATION_TOLERANCE = 1e-7
#: Samples per block of the QR factorisations (``r_factor``).
QR_SAMPLES = 8192
#: Relative standard deviation [%] below which an identified parameter is trusted (Gautier
#: 1991, ``relative_std_percent``).
TRUSTED_STD_PERCENT = 10.0


@dataclass
class Estimate:
    """Result of a least-squares identification.

    Parameters
    ----------
    method : {'ols', 'wls'}
        The estimator.
    values : (nb,) ndarray
        Base parameter estimates.
    covariance : (nb, nb) ndarray
        Parameter covariance.
    sigma_joint : (n,) ndarray
        Residual standard deviation per joint of the final fit [N·m or N].
    condition_number : float
        2-norm condition number of the stacked base regressor W (N·n, nb).
    samples : int
        Number of samples N.
    """

    method: str
    values: np.ndarray
    covariance: np.ndarray
    sigma_joint: np.ndarray
    condition_number: float
    samples: int

    @property
    def std(self) -> np.ndarray:
        """(nb,) standard deviation of each base parameter."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    @property
    def rel_std_percent(self) -> np.ndarray:
        """(nb,) relative standard deviation ``100·σ/|beta|`` in % (inf for beta = 0)."""
        return relative_std_percent(self.values, self.std)


def relative_std_percent(values: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Relative standard deviation, the usual quality criterion (docs/methods.md §4).

    Parameters
    ----------
    values, std : (nb,) ndarray
        Parameters and their standard deviations.

    Returns
    -------
    (nb,) ndarray
        ``100·σ/|value|`` [%]; inf where the value is 0.
    """
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(values != 0, 100 * std / np.abs(values), np.inf)


def estimate(w: np.ndarray, tau: np.ndarray, method: str = 'wls',
             names: list[str] | None = None, iterations: int = 10,
             mask: np.ndarray | None = None) -> Estimate:
    """Identify the base parameters from a stacked regressor.

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    method : {'ols', 'wls'}
        The estimator.
    names : list of str, optional
        (nb,) base parameter names, used in error messages.
    iterations : int
        Maximum number of WLS re-weightings (1: Gautier's one-step WLS).
    mask : (N, n) ndarray of bool, optional
        False for joint equations to leave out.

    Returns
    -------
    Estimate

    Raises
    ------
    InputError
        For an unknown method, a shape mismatch, or a joint with no more than nb equations.
    ExcitationError
        If the data do not excite some base parameters.

    References
    ----------
    .. [1] Gautier M., Poignet P., "Extended Kalman filtering and weighted least squares
       dynamic identification of robot", Control Engineering Practice 9(12):1361–1372, 2001,
       doi:10.1016/S0967-0661(01)00105-8.
    """
    if method not in ('ols', 'wls'):
        raise InputError(f'estimator {method!r} unknown here (choose ols or wls; pc-wls is '
                         'pc_wls.estimate_pc_wls)')
    n_samples, n, nb = w.shape
    if tau.shape != (n_samples, n) or (mask is not None and mask.shape != (n_samples, n)):
        raise InputError(f'torque array {tau.shape} or mask does not match the regressor, '
                         f'({n_samples}, {n}) needed')
    counts = equation_counts(w, mask)
    if np.any(counts <= nb):
        j = int(np.argmin(counts))
        raise InputError(f'too few samples: {counts[j]} equations of joint {j + 1} for {nb} '
                         f'base parameters (need more than {nb} per joint)')
    names = names or [f'beta{i + 1}' for i in range(nb)]
    r = r_factor(w, tau, mask=mask)
    r_w, rhs = r[:nb, :nb], r[:nb, nb]
    check_excitation(r_w, names)
    x = scipy.linalg.solve_triangular(r_w, rhs)
    condition = float(np.linalg.cond(r_w))
    sigma_joint = residual_deviation(w, tau, x, counts, mask)
    if method == 'ols':
        sigma2 = (sigma_joint ** 2 * (counts - nb)).sum() / (counts.sum() - nb)
        return Estimate('ols', x, sigma2 * _inverse_gram(r_w), sigma_joint, condition, n_samples)
    for _ in range(max(1, iterations)):
        if np.any(sigma_joint == 0):
            raise InputError('WLS: a joint has zero residual (torque exactly fits the model); '
                             'use the OLS estimator')
        r = r_factor(w, tau, 1.0 / sigma_joint, mask)
        r_h, rhs_h = r[:nb, :nb], r[:nb, nb]
        x = scipy.linalg.solve_triangular(r_h, rhs_h)
        previous, sigma_joint = sigma_joint, residual_deviation(w, tau, x, counts, mask)
        if np.all(np.abs(sigma_joint - previous) <= 0.01 * previous):
            break
    # covariance with the weights of the last solve, the σ_j it used
    return Estimate('wls', x, _inverse_gram(r_h), sigma_joint, condition, n_samples)


def equation_counts(w: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Equations per joint.

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Base regressor.
    mask : (N, n) ndarray of bool or None
        False for joint equations left out.

    Returns
    -------
    (n,) ndarray of int
        N_j, the equations of joint j that take part.
    """
    return np.full(w.shape[1], w.shape[0]) if mask is None else mask.sum(axis=0)


def residual_deviation(w: np.ndarray, tau: np.ndarray, x: np.ndarray,
                       counts: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Residual standard deviation per joint.

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    x : (nb,) ndarray
        Base parameters.
    counts : (n,) ndarray
        N_j (``equation_counts``).
    mask : (N, n) ndarray of bool, optional
        False for joint equations left out (or give them as zero rows of ``w`` and ``tau``).

    Returns
    -------
    (n,) ndarray
        ``‖tau_j − W_j x‖ / sqrt(N_j − nb)`` over the equations kept [N·m or N].
    """
    residual = tau - w @ x
    if mask is not None:
        residual *= mask
    return np.sqrt((residual ** 2).sum(axis=0) / (counts - w.shape[2]))


def r_factor(w: np.ndarray, tau: np.ndarray, weights: np.ndarray | None = None,
             mask: np.ndarray | None = None) -> np.ndarray:
    """The triangular factor of the weighted least-squares system ``[W | tau]``.

    The QR runs on blocks of ``QR_SAMPLES`` samples, each stacked under the factor of the
    blocks before (no copy of the whole system on long recordings).

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    weights : (n,) ndarray, optional
        Weight of each joint's equations (default 1).
    mask : (N, n) ndarray of bool, optional
        False for joint equations to leave out.

    Returns
    -------
    (nb + 1, nb + 1) ndarray
        ``R`` of ``[W | tau]`` with the rows weighted and the left-out ones zero (rows of zeros
        below when there are fewer equations): ``R[:nb, :nb]`` is the factor of ``W``,
        ``R[:nb, nb]`` is ``Qᵀ tau`` and ``|R[nb, nb]|`` the residual norm.
    """
    nb = w.shape[2]
    r = np.zeros((0, nb + 1))
    for start in range(0, len(w), QR_SAMPLES):
        rows = slice(start, start + QR_SAMPLES)
        a = np.concatenate([w[rows], tau[rows, :, None]], axis=2)
        if weights is not None:
            a *= weights[None, :, None]
        if mask is not None:
            a *= mask[rows, :, None]
        a = a.reshape(-1, nb + 1)
        r = np.linalg.qr(a if not len(r) else np.vstack([r, a]), mode='r')
    return np.vstack([r, np.zeros((nb + 1 - len(r), nb + 1))]) if len(r) < nb + 1 else r


def check_excitation(r: np.ndarray, names: list[str],
                     tolerance: float = EXCITATION_TOLERANCE) -> None:
    """Refuse an identification matrix that leaves base parameters unexcited.

    Parameters
    ----------
    r : (nb, nb) ndarray
        R factor of the stacked regressor.
    names : list of str
        (nb,) base parameter names.
    tolerance : float
        Relative singular value below which a direction counts as unexcited.

    Raises
    ------
    ExcitationError
        Naming the parameters (``unexcited_parameters``) and the condition number.
    """
    involved, condition = unexcited_parameters(r, tolerance)
    if involved:
        detail = ('regressor column is zero' if not np.isfinite(condition) else
                  f'condition number {condition:.3g} of the column-normalised identification '
                  f'matrix (limit {1 / tolerance:.0e})')
        raise ExcitationError('trajectory does not excite base parameter(s) '
                              f'{", ".join(names[i] for i in involved)}: {detail}')


def unexcited_parameters(r: np.ndarray,
                         tolerance: float = EXCITATION_TOLERANCE) -> tuple[list[int], float]:
    """The parameters an identification matrix leaves unexcited.

    Columns are scaled to unit norm (units do not matter); a zero column is unexcited; else a
    singular value below ``tolerance`` × the largest marks a direction the data do not see, and
    the parameters with the largest weight in it (at least 0.3 × the largest) are unexcited.

    Parameters
    ----------
    r : (m, p) ndarray
        The identification matrix or its R factor, m ≥ p.
    tolerance : float
        Relative singular value below which a direction counts as unexcited.

    Returns
    -------
    indices : list of int
        Columns of the unexcited parameters, sorted (empty: all excited).
    condition : float
        Condition number of the column-normalised matrix (inf with a zero column).
    """
    norms = np.linalg.norm(r, axis=0)
    zero = np.flatnonzero(norms <= 1e-12 * max(norms.max(), 1e-300))
    if len(zero):
        return [int(i) for i in zero], float('inf')
    _, s, vt = np.linalg.svd(r / norms, full_matrices=False)
    weak = np.flatnonzero(s < tolerance * s[0])
    involved = sorted({int(i) for k in weak for i in np.flatnonzero(
        np.abs(vt[k]) > 0.3 * np.abs(vt[k]).max())})
    return involved, float(s[0] / s[-1])


def _inverse_gram(r: np.ndarray) -> np.ndarray:
    """(RᵀR)⁻¹ from the triangular factor."""
    r_inv = scipy.linalg.solve_triangular(r, np.eye(len(r)))
    return r_inv @ r_inv.T
