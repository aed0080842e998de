"""Drive gains from a payload of known mass (Gautier & Briot 2011; docs/methods.md §11).

When the joint torques come from motor currents through gains that are not known well
(``tau = k_j · effort_j``), the torques fix the dynamic parameters only up to the gains: the
unloaded equations ``k_j effort_j = W_j beta`` are homogeneous. A payload of known mass ``m``
sets the scale. With the payload's remaining parameters ``chi_L'`` (first moments, inertia):

    unloaded:  effort = diag(g) (W beta)
    loaded:    effort = diag(g) (W beta + W_L' chi_L' + W_L,m m)

with ``g_j = 1 / k_j``: one weighted nonlinear least-squares problem in ``(beta, chi_L', g)``,
solved by Gauss–Newton steps (each a WLS problem of ``estimators.estimate``). The efforts, the
noisy signal, are the observations: put as regressor columns (``W beta − diag(effort) k = 0``,
linear in ``k``) their noise would draw a weakly determined gain towards 0 (errors in
variables: a vertical base axis's gain came out 0.33 for 1.2 on a simulated arm, ±0.02).

A gain the data do not determine (``determined``) is not applied: it is kept at 1 and the
others are estimated again with it held there.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ..data.datasets import Dataset
from ..errors import DataWarning, InputError
from ..estimation.config import IdentificationConfig
from ..estimation.estimators import TRUSTED_STD_PERCENT, estimate, relative_std_percent
from ..estimation.regression import stack_regression
from ..model.robot import RobotModel
from .frame import PayloadFrame
from .methods import robot_regressor
from .parameters import parameter_names

#: Gauss–Newton steps at most, and the relative change of every gain that ends them.
STEPS, STEP_TOLERANCE = 50, 1e-9


@dataclass
class DriveGains:
    """Identified drive gains.

    Parameters
    ----------
    gains : (n,) ndarray
        ``k_j`` applied: joint torque = ``k_j`` × recorded effort, joint order; 1 where the
        data do not determine the gain.
    std : (n,) ndarray
        Their standard deviations (of the estimate, where a gain is not applied).
    estimate : (n,) ndarray
        The gains as estimated, all free.
    determined : (n,) ndarray of bool
        Whether the data determine each gain (``determined``); only those are applied.
    joints : list of str
        The joints' names.
    """

    gains: np.ndarray
    std: np.ndarray
    estimate: np.ndarray
    determined: np.ndarray
    joints: list[str]

    @property
    def undetermined(self) -> list[str]:
        """The joints whose gain the data do not determine (kept at 1)."""
        return [j for j, ok in zip(self.joints, self.determined) if not ok]

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

    Warns
    -----
    DataWarning
        For each gain the runs do not determine (``determined``), naming the joint: kept at 1.

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
    w = np.concatenate([np.concatenate([u.w, np.zeros(u.w.shape[:2] + (9,))], axis=2),
                        np.concatenate([lo.w[:, :, :nb], lo.w[:, :, nb + 1:]], axis=2)])
    known = np.concatenate([np.zeros_like(u.tau), known_mass * lo.w[:, :, nb]])
    effort = np.concatenate([u.tau, lo.tau])
    mask = np.concatenate([u.mask, lo.mask])
    names = base.names + [f'payload {p}' for p in parameter_names(10)[1:]]
    free = np.ones(robot.n, dtype=bool)
    theta = estimate(w, effort - known, 'wls', names, mask=mask).values     # the efforts as N·m
    k, k_std = _gauss_newton(w, known, effort, mask, names, robot.joint_names, free, theta)
    ok = determined(k, k_std)
    gains, std = k, k_std
    if not ok.all():
        gains, std = _gauss_newton(w, known, effort, mask, names, robot.joint_names, ok, theta)
        std = np.where(ok, std, k_std)
        for j in np.flatnonzero(~ok):
            warnings.warn(f'the drive gain of {robot.joint_names[j]} is not determined by the '
                          f'runs ({k[j]:.3g} ± {k_std[j]:.2g}, relative standard deviation '
                          f'{relative_std_percent(k[j:j + 1], k_std[j:j + 1])[0]:.0f} % ≥ '
                          f'{TRUSTED_STD_PERCENT:g} %): kept at 1', DataWarning, stacklevel=2)
    return DriveGains(gains, std, k, ok, list(robot.joint_names))


def determined(gains: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Whether the data determine each gain: its relative standard deviation is below
    ``TRUSTED_STD_PERCENT``, the limit below which an identified parameter is trusted.

    Parameters
    ----------
    gains, std : (n,) ndarray
        Estimated gains and their standard deviations.

    Returns
    -------
    (n,) ndarray of bool

    References
    ----------
    .. [1] M. Gautier, "Numerical calculation of the base inertial parameters of robots",
       Journal of Robotic Systems 8(4), 485–506, 1991. DOI: 10.1002/rob.4620080405
    """
    return relative_std_percent(gains, std) < TRUSTED_STD_PERCENT


def _gauss_newton(w, known, effort, mask, names, joints, free, theta):
    """Gains ``k = 1/g`` and their standard deviations (n,) minimising
    ``Σ ‖effort_j − g_j (W theta + known)_j‖²`` (weighted per joint), ``g_j = 1`` held where
    ``free`` is False. Each step solves the problem linearised about ``(theta_0, g_0)``:
    ``effort − g_0 ∘ known = (g_0 ∘ W) theta + (W theta_0 + known) ∘ dg``, from ``theta``
    (the fit with every gain 1)."""
    n = effort.shape[1]
    g = np.ones(n)
    gain_names = [f'drive gain {j}' for j, f in zip(joints, free) if f]
    for _ in range(STEPS):
        torque = w @ theta + known
        columns = np.zeros(effort.shape + (n,))
        columns[:, np.arange(n), np.arange(n)] = torque
        fit = estimate(np.concatenate([w * g[:, None], columns[:, :, free]], axis=2),
                       effort - g * known, 'wls', names + gain_names, mask=mask)
        theta, step = fit.values[:w.shape[2]], np.zeros(n)
        step[free] = fit.values[w.shape[2]:]
        g = g + step
        if np.all(np.abs(step) <= STEP_TOLERANCE * np.abs(g)):
            break
    g_std = np.zeros(n)
    g_std[free] = fit.std[w.shape[2]:]
    return 1 / g, g_std / g ** 2
