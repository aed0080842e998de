"""Settings of torque estimation: the method, the Kalman filter's covariances, the baselines,
the momentum observer and collision detection (docs/methods.md §12).

The ``estimate-torque`` CLI verb and the torque estimator node's parameters are this model.
Covariances are given as one number (every joint), n numbers (a diagonal matrix) or n² numbers
(a full matrix, row by row), so that a ROS parameter can hold them.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from ..errors import InputError
from ..schema import PerJoint, Schema, per_joint

METHODS = ('kalman', 'mean5', 'lowpass', 'momentum-observer')
#: The paper's covariances: P0 = 0.1, W = V = 0.01 (scara_kalman_torque_estimation_2018 §4.2).
PAPER_COVARIANCES = {'initial_covariance': 0.1, 'process_noise': 0.01,
                     'measurement_noise': 0.01}

#: A covariance: 'auto' (estimated from the data), one value, n values or n² values.
Covariance = Literal['auto'] | float | list[float]


class TorqueEstimatorConfig(Schema):
    """How joint torques are estimated."""

    method: Literal[METHODS] = Field(
        'kalman', description='``kalman``: model-based Kalman filters: without a reference the '
        'state filter of the motion and the model error (``state_filter``), with one the filter '
        'of scara_kalman_torque_estimation_2018; ``mean5``: the mean of the last '
        "``mean_window`` measurements (the paper's baseline, eq. (22)); ``lowpass``: a causal "
        'Butterworth low-pass; ``momentum-observer``: no filtering of the joint torque, the '
        'external torque of the momentum observer only (which every method gives, from the '
        'measured torque).')
    linearization: Literal['reference', 'measured'] = Field(
        'reference', description='Kalman filter with a reference: the motion where the inverse '
        'dynamics are expanded. ``reference``: the reference of the previous sample, so that '
        "the prediction follows the reference's increments; ``measured``: the measured "
        'position, its first difference and the acceleration of the forward dynamics under '
        "the mean-filtered torque (the paper's eq. (10), (22), (23)).")
    initial_covariance: PositiveFloat | list[float] = Field(
        0.1, description='Kalman filter with a reference: ``P0`` [(N·m)²], one, n or n² '
        'values.')
    process_noise: Covariance = Field(
        'auto', description='Kalman filter: ``W`` [(N·m)²], one, n or n² values (the state '
        'filter takes the diagonal); ``auto``: estimated per joint while filtering (the state '
        "filter's ``state_noise``; with a reference, from the auto-covariance of the "
        'innovation of the measured increments, ``noise.NoiseEstimator``).')
    measurement_noise: Covariance = Field(
        'auto', description='Kalman filter: ``V`` [(N·m)²], one, n or n² values (the state '
        'filter takes the diagonal); ``auto``: estimated like ``process_noise``.')
    noise_time_constant: PositiveFloat = Field(
        10.0, description='Kalman filter, ``auto`` covariances: memory of the noise estimates '
        '[s].')
    mean_window: PositiveInt = Field(5, description='Samples of the mean filter (``mean5``, '
                                     'and the torque of the ``measured`` linearisation).')
    lowpass_cutoff_hz: PositiveFloat = Field(100.0,
                                             description='Cut-off of ``lowpass`` [Hz].')
    lowpass_order: PositiveInt = Field(2, description='Butterworth order of ``lowpass``.')
    observer_gain: PerJoint = Field(
        100.0, description='``K_O`` of the momentum observer [1/s], one or n values: the '
        'external torque follows a first-order lag of this bandwidth.')
    collision_threshold: PerJoint = Field(
        0.0, description='|external torque| above which a joint is in collision [N·m or N], '
        'one or n values; 0 for a joint: never (no detection).')
    collision_time: NonNegativeFloat = Field(
        0.002, description='Time the external torque must stay above the threshold before a '
        'collision is reported [s].')


def covariance(value, n: int, field: str) -> np.ndarray | None:
    """A covariance setting as an (n, n) matrix.

    Parameters
    ----------
    value : 'auto' or float or list of float
        One value (every joint), n values (diagonal) or n² values (row by row).
    n : int
        Number of joints.
    field : str
        The setting, for the error message.

    Returns
    -------
    (n, n) ndarray or None
        None for ``'auto'``.

    Raises
    ------
    InputError
        For another number of values, or a matrix that is not symmetric positive definite.
    """
    if isinstance(value, str):
        return None
    values = np.atleast_1d(np.asarray(value, dtype=float))
    if values.size == n * n and n > 1:
        matrix = values.reshape(n, n)
    else:
        matrix = np.diag(per_joint(values, n, field))
    if not np.allclose(matrix, matrix.T) or np.any(np.linalg.eigvalsh(matrix) <= 0):
        raise InputError(f'field {field} must be symmetric positive definite '
                         f'({n}×{n}, or {n} positive values)')
    return matrix
