"""The offline smoother of joint torques: the state Kalman filter run forward, then the
Rauch–Tung–Striebel recursion backward, so that each estimate uses the whole recording
(docs/methods.md §12).

With the filter's prior ``x⁻_{k+1}, P⁻_{k+1}`` and posterior ``x_k, P_k`` of (12.4),

    C_k = P_k Fᵀ(T_{k+1}) (P⁻_{k+1})⁻¹,   x^s_k = x_k + C_k (x^s_{k+1} − x⁻_{k+1}),
    P^s_k = P_k + C_k (P^s_{k+1} − P⁻_{k+1}) C_kᵀ                                        (12.5)

and the smoothed torque is the model's at ``x^s_k`` with the friction linearised over the
smoothed velocity's uncertainty, plus the smoothed model error. The forward pass starts from
the noise estimates a causal pass over the recording ended with, so that its first seconds are
filtered with settled noise. The backward recursion runs over blocks of ``BLOCK`` samples, each
started ``LAG`` samples beyond its end at the filter's estimate (the smoother forgets its start
within far fewer samples): memory stays bounded on long recordings.

References
----------
.. [1] Rauch H. E., Tung F., Striebel C. T., "Maximum likelihood estimates of linear dynamic
   systems", AIAA Journal 3(8):1445–1450, 1965, DOI 10.2514/3.3166.
"""
from __future__ import annotations

import copy

import numpy as np

from .config import TorqueEstimatorConfig
from .dynamics import DynamicModel, inverse_dynamics
from .state_filter import (
    FilterStep,
    StateKalmanFilter,
    scaled_solve,
    transition,
    uncertain_friction,
)
from .state_noise import StateNoise

#: Samples smoothed per backward pass.
BLOCK = 2000
#: Samples beyond a block's end its backward pass starts at.
LAG = 1000


def smooth_torques(dm: DynamicModel, config: TorqueEstimatorConfig, dt: np.ndarray,
                   position: np.ndarray, effort: np.ndarray,
                   noise: StateNoise | None = None, progress=None) -> np.ndarray:
    """Smoothed joint torques of a recording.

    Parameters
    ----------
    dm : DynamicModel
        The model the torques are estimated with.
    config : TorqueEstimatorConfig
        The noise settings (``StateKalmanFilter``).
    dt : (M,) ndarray
        Time since the previous sample [s], > 0 (the first ignored).
    position, effort : (M, n) ndarray
        Measured joint positions [rad or m] and torques [N·m or N], model joint order.
    noise : StateNoise, optional
        Noise estimates to start from (a causal pass's, ``StateKalmanFilter.noise``); copied.
    progress : callable, optional
        ``progress(k)`` after each sample of the forward pass.

    Returns
    -------
    (M, n) ndarray
        The smoothed joint torques [N·m or N].
    """
    flt = StateKalmanFilter(dm, config)
    if noise is not None:
        flt.noise = copy.deepcopy(noise)
    flt.keep = True
    smoothed = np.empty_like(effort, dtype=float)
    data = dm.create_data()
    steps: list[FilterStep] = []
    done = 0                                    # samples smoothed
    for k in range(len(effort)):
        flt.update(position[k], effort[k], dt[k])
        steps.append(flt.step)
        if progress is not None:
            progress(k)
        if len(steps) == BLOCK + LAG:
            _backward(dm, data, steps, smoothed[done:done + BLOCK])
            steps, done = steps[BLOCK:], done + BLOCK
    if steps:
        _backward(dm, data, steps, smoothed[done:])
    return smoothed


def _backward(dm: DynamicModel, data, steps: list[FilterStep], out: np.ndarray) -> None:
    """(12.5) from the last step's posterior back; the torques of the first ``len(out)``
    steps into ``out``."""
    n = dm.n
    state, spread = steps[-1].posterior, steps[-1].covariance
    for k in range(len(steps) - 1, -1, -1):
        step = steps[k]
        if k < len(steps) - 1:
            after = steps[k + 1]
            gain = scaled_solve(after.prior_covariance,
                                transition(n, after.dt) @ step.covariance).T
            state = step.posterior + gain @ (state - after.prior)
            spread = step.covariance + gain @ (spread - after.prior_covariance) @ gain.T
        if k < len(out):
            out[k] = smoothed_torque(dm, data, state, spread)


def smoothed_torque(dm: DynamicModel, data, state: np.ndarray, covariance: np.ndarray) \
        -> np.ndarray:
    """The torque of a state of (12.4): the model's, the friction expected over the velocity's
    uncertainty, plus the model error.

    Parameters
    ----------
    dm : DynamicModel
        The model of the filter.
    data : pinocchio.Data
        A work space of ``dm``, overwritten.
    state, covariance : (4n,) and (4n, 4n) ndarray
        ``[q, q̇, q̈, d]`` and its covariance.

    Returns
    -------
    (n,) ndarray
        Joint torques [N·m or N].
    """
    n = dm.n
    qd = state[n:2 * n]
    friction = uncertain_friction(dm, qd, covariance[n:2 * n, n:2 * n])[0]
    return inverse_dynamics(dm, data, state[:n], qd, state[2 * n:3 * n], friction=False) \
        + friction + state[3 * n:]
