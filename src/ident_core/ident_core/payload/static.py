"""Payload mass and centre of mass from poses at rest, as industrial controllers offer
(docs/methods.md §11).

At rest only gravity acts: ``tau_l(q) − tau_ref(q) = W_L(q, 0, 0) chi_L`` involves the mass and
first moments ``[m, m·c]`` alone. The reference is the identified model's torque at the pose
(gravity and offsets), or the unloaded run's torque at the same pose. Rest poses are found in
the loaded runs (every joint slower than ``REST_SPEED`` for ``REST_TIME``), averaged over the
middle half of each rest; an unloaded pose within 0.1 of a loaded one on every joint is carried
over the difference by the URDF's gravity gradient. The torque at rest includes static friction
up to the breakaway torque, which no model predicts (a joint that settles under friction stops
anywhere in that band): approach every pose the same way, or prefer the model-based method on a
short motion.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..data.datasets import Dataset
from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..estimation.identified_model import IdentifiedModel
from ..estimation.preprocessing import preprocess
from ..model.regressor import Regressor, RegressorSpec
from ..model.robot import RobotModel, configuration, position_difference
from .frame import PayloadFrame
from .methods import fit_payload

#: Every joint slower than this is at rest [rad/s or m/s].
REST_SPEED = 0.01
#: Shortest rest that counts as a pose [s].
REST_TIME = 0.5
#: A loaded pose matches an unloaded one within this, on every joint [rad or m].
POSE_TOLERANCE = 0.1


def rest_poses(robot: RobotModel, datasets: list[Dataset],
               config: IdentificationConfig) -> tuple[np.ndarray, np.ndarray]:
    """The poses at rest in some runs and their mean torques.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : list of Dataset
        The runs.
    config : IdentificationConfig
        Filtering.

    Returns
    -------
    q : (K, n) ndarray
        Mean position of each rest [rad or m].
    tau : (K, n) ndarray
        Mean torque [N·m or N].
    """
    q, tau = [], []
    for d in datasets:
        p = preprocess(d, robot, config)
        for a, b in p.spans():
            still = np.all(np.abs(p.qd[a:b]) < REST_SPEED, axis=1)
            for start, stop in _runs(still):
                if p.t[a + stop - 1] - p.t[a + start] < REST_TIME:
                    continue
                quarter = (stop - start) // 4
                rows = slice(a + start + quarter, a + stop - quarter)
                q.append(p.q[rows].mean(axis=0))
                tau.append(p.tau[rows].mean(axis=0))
    n = robot.n
    return np.array(q).reshape(-1, n), np.array(tau).reshape(-1, n)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` of the runs of True."""
    edges = np.diff(np.concatenate([[0], flags.astype(int), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def identify_static(robot: RobotModel, loaded: list[Dataset], frame: PayloadFrame,
                    config: IdentificationConfig, model: IdentifiedModel | None = None,
                    unloaded: list[Dataset] | None = None):
    """Mass and centre of mass of a payload from poses at rest (module docstring).

    Parameters
    ----------
    robot : RobotModel
        The robot.
    loaded : list of Dataset
        Runs with the payload holding poses at rest.
    frame : PayloadFrame
        The payload frame.
    config : IdentificationConfig
        Filtering (the model's, with a model).
    model : IdentifiedModel, optional
        Reference torques from this model.
    unloaded : list of Dataset, optional
        Else, from these runs at the same poses without the payload.

    Returns
    -------
    PayloadEstimate
        Mass and first moments (k = 4), not yet made consistent; OLS (few equations).

    Raises
    ------
    InputError
        With neither reference, fewer than 2 rest poses, or a loaded pose without an unloaded
        one within ``POSE_TOLERANCE`` [rad or m] on every joint.
    ExcitationError
        If the poses do not determine the mass or a first moment (e.g. one wrist orientation).
    """
    q, tau = rest_poses(robot, loaded, config)
    sources = ', '.join(d.source for d in loaded)
    if len(q) < 2:
        raise InputError(f'{sources}: {len(q)} poses at rest found (every joint slower than '
                         f'{REST_SPEED:g} for {REST_TIME:g} s); the static method needs at '
                         'least 2, better 6 or more with different wrist orientations')
    if model is not None:
        w = model.regressor.compute(q, np.zeros_like(q), np.zeros_like(q))
        reference = w[:, :, model.base.independent] @ model.values
    elif unloaded:
        reference = _matching_torques(robot, q, unloaded, config)
    else:
        raise InputError('the static method needs an identified model (--model) or unloaded '
                         'runs at the same poses (--unloaded)')
    full = Regressor(robot, RegressorSpec(friction='none')).compute(q, np.zeros_like(q),
                                                                   np.zeros_like(q))
    w_l = frame.regressor(full)[:, :, :4]
    payload, _ = fit_payload('static', frame, w_l, tau - reference, None, [], 'ols')
    return payload


def _matching_torques(robot, q, unloaded, config) -> np.ndarray:
    """The unloaded rest torque at each loaded pose: that of the nearest unloaded rest pose,
    carried over the small difference (a controller without integral action sags under the
    payload) by the URDF's gravity gradient (``pin.computeGeneralizedGravityDerivatives``)."""
    q_u, tau_u = rest_poses(robot, unloaded, config)
    model = robot.model
    data = model.createData()
    out = []
    for k, pose in enumerate(q):
        step = position_difference(model, pose, q_u)
        dist = np.abs(step).max(axis=1) if len(q_u) else np.array([np.inf])
        best = int(np.argmin(dist))
        if dist[best] > POSE_TOLERANCE:
            raise InputError(f'loaded rest pose {k + 1} ({np.round(pose, 3).tolist()}) has no '
                             f'unloaded rest pose within {POSE_TOLERANCE:g} on every joint')
        gradient = pin.computeGeneralizedGravityDerivatives(model, data,
                                                            configuration(model, q_u[best]))
        out.append(tau_u[best] + gradient @ step[best])
    return np.array(out)
