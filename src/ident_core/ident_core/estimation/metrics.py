"""Validation metrics with FloBaRoID's definitions, so that numbers compare (docs/methods.md §5).

For predicted torques tau_hat and measured torques tau, both (N, n):
    rmse_j                = sqrt(mean_k (tau_hat_kj − tau_kj)²)            N·m, per joint
    relative_error        = 100 · ‖tau_hat − tau‖_F / ‖tau‖_F               %
    nrms                  = 100 · mean_j (rmse_j / (2 · effort_limit_j))    %
    absolute_error        = mean_k ‖tau_hat_k − tau_k‖₂                     N·m
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def rmse(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Root-mean-square error per joint.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Joint torques [N·m or N].

    Returns
    -------
    (n,) ndarray
        [N·m or N].

    Raises
    ------
    InputError
        If the shapes differ.
    """
    _check(predicted, measured)
    return np.sqrt(np.mean((predicted - measured) ** 2, axis=0))


def relative_error_percent(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Relative error ``100·‖tau_hat − tau‖_F / ‖tau‖_F``.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Joint torques [N·m or N].

    Returns
    -------
    float
        [%].

    Raises
    ------
    InputError
        If the shapes differ.
    """
    _check(predicted, measured)
    return float(100 * np.linalg.norm(predicted - measured) / np.linalg.norm(measured))


def nrms_percent(predicted: np.ndarray, measured: np.ndarray, effort_limit: np.ndarray) -> float:
    """Normalised RMS error ``100·mean_j(rmse_j / (2·effort_limit_j))``.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Joint torques [N·m or N].
    effort_limit : (n,) ndarray
        Effort limits of the URDF [N·m or N].

    Returns
    -------
    float
        [%].

    Raises
    ------
    InputError
        If an effort limit is missing (≤ 0 or not finite), or the shapes differ.
    """
    limits = np.asarray(effort_limit, dtype=float)
    if not np.all(np.isfinite(limits) & (limits > 0)):
        raise InputError('NRMS needs a positive effort limit for every joint in the URDF')
    return float(100 * np.mean(rmse(predicted, measured) / (2 * limits)))


def absolute_error(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Mean over samples of the per-sample error norm.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Joint torques [N·m or N].

    Returns
    -------
    float
        [N·m or N].

    Raises
    ------
    InputError
        If the shapes differ.
    """
    _check(predicted, measured)
    return float(np.mean(np.linalg.norm(predicted - measured, axis=1)))


def all_metrics(predicted: np.ndarray, measured: np.ndarray, effort_limit: np.ndarray) -> dict:
    """The four metrics as plain types, for YAML and JSON output.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Joint torques [N·m or N].
    effort_limit : (n,) ndarray
        Effort limits; NRMS is None when one is missing.

    Returns
    -------
    dict
        ``{relative_error_percent, rmse (list), nrms_percent (or None), absolute_error}``.

    Raises
    ------
    InputError
        If the shapes differ.
    """
    limits = np.asarray(effort_limit, dtype=float)
    has_limits = bool(np.all(np.isfinite(limits) & (limits > 0)))
    return {'relative_error_percent': relative_error_percent(predicted, measured),
            'rmse': rmse(predicted, measured).tolist(),
            'nrms_percent': nrms_percent(predicted, measured, limits) if has_limits else None,
            'absolute_error': absolute_error(predicted, measured)}


def _check(predicted, measured):
    if predicted.shape != measured.shape or predicted.ndim != 2:
        raise InputError(f'predicted torques {predicted.shape} and measured torques '
                         f'{measured.shape} must have the same (N, n) shape')
