"""Payload identification methods (docs/methods.md §11, "Methods"; payload_identification_2017
§2.2): ``global`` (eq. (22)–(23)), ``torque-difference`` (eq. (20)–(21)),
``parameter-difference`` (eq. (16)–(19)), and beyond the paper ``model`` (with an identified
robot model) and ``static`` (poses at rest).

Each gives the payload parameters ``chi_L`` in a frame of the robot (joint torques
``tau_L = W_L chi_L``, ``PayloadFrame.regressor``) from unloaded and loaded runs by weighted
least squares, names the parameters the data leave unexcited, and is made physically consistent
(``parameters.consistent_payload``).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.linalg
from pydantic import NonNegativeFloat

from ..data.datasets import Dataset
from ..errors import ExcitationError, InputError
from ..estimation.config import IdentificationConfig
from ..estimation.estimators import Estimate, estimate, unexcited_parameters
from ..estimation.identified_model import IdentifiedModel
from ..estimation.preprocessing import preprocess
from ..estimation.regression import regression_data, stack_processed, stack_regression
from ..model.base_parameters import BaseParameters, compute_base_parameters
from ..model.regressor import Regressor
from ..model.robot import RobotModel
from ..schema import with_default
from .alignment import align_runs
from .frame import PayloadFrame
from .parameters import MASS_AND_FIRST_MOMENTS, PayloadEstimate, parameter_names

#: The methods, in order of preference for the selected result.
METHODS = ('global', 'model', 'parameter-difference', 'torque-difference', 'static')


class PayloadConfig(IdentificationConfig):
    """How the robot part of a payload identification is modelled and the data filtered
    (``IdentificationConfig``), with three defaults of its own: rotor inertias are identified,
    since a missing rotor inertia would be absorbed by the payload; and joint equations within
    0.2 s (two cut-off periods at 10 Hz) of a velocity reversal are left out: there the joints
    stick, ``fc sign(qd)`` does not hold, and the error, at the largest accelerations of the
    motion, biases the payload's small inertia (on the simulated arm: 12 % of the largest
    principal moment of a 3 kg payload with all equations, 2 % without those); and the
    standstill at the ends of a run is kept: the static method takes its poses at rest, and
    the paired runs of the difference methods are aligned row by row. The robot part is always
    fitted by WLS (``estimator`` is not used)."""

    rotor_inertia: bool = with_default(IdentificationConfig, 'rotor_inertia', True)
    reversal_window: NonNegativeFloat = with_default(IdentificationConfig, 'reversal_window', 0.2)
    trim_standstill: bool = with_default(IdentificationConfig, 'trim_standstill', False)


def robot_regressor(robot: RobotModel, datasets: list[Dataset],
                    config: IdentificationConfig) -> tuple[Regressor, BaseParameters]:
    """The robot's regressor and base parameters for a set of runs.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : list of Dataset
        All runs (unloaded and loaded).
    config : IdentificationConfig
        Friction model, rotor inertia, rank tolerance.

    Returns
    -------
    Regressor, BaseParameters

    Raises
    ------
    InputError
        If the runs are not of this robot's joints or go through different transmissions.
    """
    transmission = datasets[0].transmission_for(robot)
    for d in datasets[1:]:
        if not d.transmission_for(robot).same_as(transmission):
            raise InputError(f'{d.source}: transmission differs from {datasets[0].source}')
    regressor = Regressor(robot, config.spec, transmission)
    return regressor, compute_base_parameters(regressor, seed=config.seed,
                                              tolerance=config.rank_tolerance)


def identify_global(robot: RobotModel, unloaded: list[Dataset], loaded: list[Dataset],
                    frame: PayloadFrame, config: IdentificationConfig) -> PayloadEstimate:
    """The global method, eq. (22)–(23) (module docstring).

    Parameters
    ----------
    robot : RobotModel
        The robot.
    unloaded, loaded : list of Dataset
        Runs without and with the payload (any trajectories exciting the robot).
    frame : PayloadFrame
        The payload frame.
    config : IdentificationConfig
        Robot model columns and filtering.

    Returns
    -------
    PayloadEstimate
        Not yet made consistent.

    Raises
    ------
    InputError
        For bad data.
    ExcitationError
        If the runs leave base parameters, or the payload's mass or first moments, unexcited.
    """
    regressor, base = robot_regressor(robot, unloaded + loaded, config)
    u = stack_regression(regressor, base, unloaded, config)
    loaded_rows = stack_regression(regressor, base, loaded, config, payload=frame)
    w = np.concatenate([np.concatenate([u.w, np.zeros(u.w.shape[:2] + (10,))], axis=2),
                        loaded_rows.w])
    tau = np.concatenate([u.tau, loaded_rows.tau])
    mask = np.concatenate([u.mask, loaded_rows.mask])
    return fit_payload('global', frame, w, tau, mask, base.names)[0]


def identify_torque_difference(robot: RobotModel, unloaded: list[Dataset],
                               loaded: list[Dataset], frame: PayloadFrame,
                               config: IdentificationConfig) -> PayloadEstimate:
    """The torque-difference method, eq. (20)–(21) (module docstring).

    Parameters
    ----------
    robot : RobotModel
        The robot.
    unloaded, loaded : list of Dataset
        Pairs of runs of the same trajectory, without and with the payload.
    frame : PayloadFrame
        The payload frame.
    config : IdentificationConfig
        Filtering.

    Returns
    -------
    PayloadEstimate
        Not yet made consistent.

    Raises
    ------
    InputError
        If the runs do not pair up, or a pair does not follow the same trajectory.
    ExcitationError
        If the payload's mass or first moments are unexcited.
    """
    _check_pairs(unloaded, loaded)
    regressor, base = robot_regressor(robot, unloaded + loaded, config)
    w_parts, tau_parts = [], []
    for u, lo in zip(unloaded, loaded):
        pu, pl = align_runs(preprocess(u, robot, config), preprocess(lo, robot, config),
                            robot.joint_names)
        # on one grid: decimating the difference of the torques is the difference of theirs
        w_l, delta = regression_data(regressor, base, replace(pl, tau=pl.tau - pu.tau),
                                     pu.decimation(config.decimate), payload=frame)
        w_parts.append(w_l[:, :, base.count:])
        tau_parts.append(delta)
    return fit_payload('torque-difference', frame, np.concatenate(w_parts),
                       np.concatenate(tau_parts), None, [])[0]


def identify_parameter_difference(robot: RobotModel, unloaded: list[Dataset],
                                  loaded: list[Dataset], frame: PayloadFrame,
                                  config: IdentificationConfig) -> PayloadEstimate:
    """The parameter-difference method, eq. (16)–(19) (module docstring).

    Parameters
    ----------
    robot : RobotModel
        The robot.
    unloaded, loaded : list of Dataset
        Runs of the same trajectory without and with the payload.
    frame : PayloadFrame
        The payload frame.
    config : IdentificationConfig
        Robot model columns and filtering.

    Returns
    -------
    PayloadEstimate
        Not yet made consistent; ``equations`` is the number of base parameters.

    Raises
    ------
    InputError
        If the runs do not pair up or do not follow the same trajectory.
    ExcitationError
        If either set of runs leaves base parameters unexcited, or the base parameters do not
        determine the payload's mass or first moments.
    """
    _check_pairs(unloaded, loaded)
    runs = [[preprocess(d, robot, config) for d in group] for group in (unloaded, loaded)]
    for pu, pl in zip(*runs):
        align_runs(pu, pl, robot.joint_names)
    regressor, base = robot_regressor(robot, unloaded + loaded, config)
    fits = []
    for processed in runs:
        s = stack_processed(regressor, base, processed, config)
        fits.append(estimate(s.w, s.tau, 'wls', base.names, mask=s.mask))
    delta = fits[1].values - fits[0].values
    lower = np.linalg.cholesky(fits[0].covariance + fits[1].covariance)
    b_l = base.matrix()[:, frame.columns] @ frame.transform
    a = scipy.linalg.solve_triangular(lower, b_l, lower=True)
    y = scipy.linalg.solve_triangular(lower, delta, lower=True)
    names = parameter_names(10)
    keep, unexcited = _excited_columns(a, names)
    values, *_ = np.linalg.lstsq(a[:, :keep], y, rcond=None)
    covariance = np.linalg.inv(a[:, :keep].T @ a[:, :keep])
    return PayloadEstimate('parameter-difference', frame.name, values, covariance, np.empty(0),
                           base.count, unexcited)


def identify_model_based(model: IdentifiedModel, loaded: list[Dataset],
                         frame: PayloadFrame) -> PayloadEstimate:
    """The model-based quick check (module docstring).

    Parameters
    ----------
    model : IdentifiedModel
        The robot's identified model (RESULT.yaml); its filtering settings are used.
    loaded : list of Dataset
        Runs with the payload (a short excitation suffices).
    frame : PayloadFrame
        The payload frame.

    Returns
    -------
    PayloadEstimate
        Not yet made consistent.

    Raises
    ------
    InputError
        If a run's transmission differs from the model's, or for bad data.
    ExcitationError
        If the payload's mass or first moments are unexcited.
    """
    robot, nb = model.robot, model.base.count
    for d in loaded:
        if not d.transmission_for(robot).same_as(model.transmission):
            raise InputError(f"{d.source}: transmission differs from the identified model's")
    s = stack_regression(model.regressor, model.base, loaded, model.config, payload=frame)
    w_b, w_l = s.w[:, :, :nb], s.w[:, :, nb:]
    payload, fit = fit_payload('model', frame, w_l, s.tau - w_b @ model.values, s.mask, [])
    weights = (s.mask / fit.sigma_joint)[:, :, None]
    k = len(payload.values)
    g, *_ = np.linalg.lstsq((w_l[:, :, :k] * weights).reshape(-1, k),
                            (w_b * weights).reshape(-1, nb), rcond=None)
    payload.covariance = payload.covariance + (g * model.std ** 2) @ g.T
    return payload


def _check_pairs(unloaded: list[Dataset], loaded: list[Dataset]) -> None:
    """The difference methods pair unloaded run k with loaded run k."""
    if len(unloaded) != len(loaded):
        raise InputError(f'{len(unloaded)} unloaded and {len(loaded)} loaded runs: the '
                         'difference methods need them in pairs of the same trajectory (the '
                         'global method does not)')


def fit_payload(method: str, frame: PayloadFrame, w: np.ndarray, tau: np.ndarray,
                mask: np.ndarray | None, robot_names: list[str],
                estimator: str = 'wls') -> tuple[PayloadEstimate, Estimate]:
    """Least squares over robot columns (if any) and payload columns.

    When the data leave payload inertia parameters unexcited, the mass and first moments are
    estimated alone and the unexcited parameters named.

    Parameters
    ----------
    method : str
        The method, for the result and messages.
    frame : PayloadFrame
        The payload frame.
    w : (N, n, r + k) ndarray
        ``r`` robot columns, then ``k`` payload columns (10, or 4: mass and first moments).
    tau : (N, n) ndarray
        Torques [N·m or N].
    mask : (N, n) ndarray of bool or None
        False for joint equations to leave out.
    robot_names : list of str
        (r,) names of the robot columns.
    estimator : {'wls', 'ols'}
        ``estimators.estimate``.

    Returns
    -------
    PayloadEstimate
        Not yet made consistent.
    Estimate
        The whole fit.

    Raises
    ------
    ExcitationError
        If a robot column, the mass or a first moment is unexcited.
    """
    offset = len(robot_names)
    count = w.shape[2] - offset
    names = robot_names + [f'payload {p}' for p in parameter_names(count)]
    keep, unexcited = count, []
    try:
        fit = estimate(w, tau, estimator, names, mask=mask)
    except ExcitationError:                  # which columns: only the inertia may be dropped
        rows = w if mask is None else w * mask[:, :, None]
        r = np.linalg.qr(rows.reshape(-1, w.shape[2]), mode='r')
        keep, unexcited = _excited_columns(r, names, offset)
        fit = estimate(w[:, :, :offset + keep], tau, estimator, names[:offset + keep],
                       mask=mask)
    block = slice(offset, offset + keep)
    equations = int(w.shape[0] * w.shape[1] if mask is None else mask.sum())
    payload = PayloadEstimate(method, frame.name, fit.values[block],
                              fit.covariance[block, block], fit.sigma_joint, equations,
                              unexcited)
    return payload, fit


def _excited_columns(r: np.ndarray, names: list[str], offset: int = 0) -> tuple[int, list[str]]:
    """(payload columns to estimate: 10, or 4 when only inertia columns are unexcited; the
    unexcited payload parameter names). Anything else unexcited raises ``ExcitationError``."""
    bad, condition = unexcited_parameters(r)
    if not bad:
        return 10, []
    labels = [names[i] for i in bad]
    inertia = range(offset + MASS_AND_FIRST_MOMENTS, offset + 10)
    if all(i in inertia for i in bad):
        return MASS_AND_FIRST_MOMENTS, [parameter_names(10)[i - offset] for i in bad]
    raise ExcitationError(f'the data do not excite {", ".join(labels)} (condition number '
                          f'{condition:.3g} of the column-normalised identification matrix)')
