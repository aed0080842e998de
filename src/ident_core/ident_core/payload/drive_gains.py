"""Drive gains from a payload of known mass (Gautier & Briot 2011; docs/methods.md §11).

When the joint torques come from motor currents through gains that are not known well
(``tau = k_j · effort_j``), the torques fix the dynamic parameters only up to the gains: the
unloaded equations ``k_j effort_j = W_j beta`` are homogeneous. A payload of known mass ``m``
sets the scale. With the payload's remaining parameters ``chi_L'`` (first moments, inertia):

    unloaded:  W beta            − diag(effort) k = 0
    loaded:    W beta + W_L' chi_L' − diag(effort) k = − W_L,m · m

one weighted least-squares problem in ``(beta, chi_L', k)``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..data.datasets import Dataset
from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..estimation.estimators import estimate
from ..estimation.regression import stack_regression
from ..model.robot import RobotModel
from .frame import PayloadFrame
from .methods import robot_regressor
from .parameters import parameter_names


@dataclass
class DriveGains:
    """Identified drive gains.

    Parameters
    ----------
    gains : (n,) ndarray
        ``k_j``: joint torque = ``k_j`` × recorded effort, joint order.
    std : (n,) ndarray
        Their standard deviations.
    """

    gains: np.ndarray
    std: np.ndarray

    def apply(self, dataset: Dataset, robot: RobotModel) -> Dataset:
        """A run with its efforts multiplied by the gains.

        Parameters
        ----------
        dataset : Dataset
            A run of the robot (any column order).
        robot : RobotModel
            The robot (its joint order is the gains').

        Returns
        -------
        Dataset
            In the robot's joint order.
        """
        d = dataset.aligned(robot)
        return replace(d, effort=d.effort * self.gains, source=f'{d.source} (drive gains applied)')


def estimate_drive_gains(robot: RobotModel, unloaded: list[Dataset], loaded: list[Dataset],
                         frame: PayloadFrame, config: IdentificationConfig,
                         known_mass: float) -> DriveGains:
    """Drive gains and payload from unloaded and loaded runs and the payload's mass.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    unloaded, loaded : list of Dataset
        Runs without and with the payload; efforts in the drives' uncalibrated units.
    frame : PayloadFrame
        The payload frame.
    config : IdentificationConfig
        Robot model columns and filtering.
    known_mass : float
        The payload's mass [kg].

    Returns
    -------
    DriveGains

    Raises
    ------
    InputError
        If the mass is not positive, or for bad data.
    ExcitationError
        If the runs do not determine the parameters and gains.

    References
    ----------
    .. [1] Gautier M., Briot S., "New method for global identification of the joint drive gains
       of robots using a known payload mass", IEEE/RSJ International Conference on Intelligent
       Robots and Systems (IROS), San Francisco, 2011, HAL hal-00609073 (DOI not verified).
    """
    if not known_mass > 0:
        raise InputError(f'--known-mass must be positive, got {known_mass}')
    regressor, base = robot_regressor(robot, unloaded + loaded, config)
    u = stack_regression(regressor, base, unloaded, config)
    lo = stack_regression(regressor, base, loaded, config, payload=frame)
    nb = base.count
    w = np.concatenate([
        np.concatenate([u.w, np.zeros(u.w.shape[:2] + (9,)), _gain_columns(u.tau)], axis=2),
        np.concatenate([lo.w[:, :, :nb], lo.w[:, :, nb + 1:], _gain_columns(lo.tau)], axis=2)])
    rhs = np.concatenate([np.zeros_like(u.tau), -known_mass * lo.w[:, :, nb]])
    names = (base.names + [f'payload {p}' for p in parameter_names(10)[1:]]
             + [f'drive gain {j}' for j in robot.joint_names])
    fit = estimate(w, rhs, 'wls', names, mask=np.concatenate([u.mask, lo.mask]))
    return DriveGains(fit.values[nb + 9:], fit.std[nb + 9:])


def _gain_columns(effort: np.ndarray) -> np.ndarray:
    """(N, n, n): column j holds −effort_j on joint j's rows."""
    n = effort.shape[1]
    out = np.zeros(effort.shape + (n,))
    out[:, np.arange(n), np.arange(n)] = -effort
    return out
