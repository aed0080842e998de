"""Excitation criteria of a trajectory: the stacked base regressor over one period
(docs/methods.md §2, §6).

    W = [Y_b(q(t_k), qd(t_k), qdd(t_k))]_k,  t_k = k T / M,  k = 0..M−1     (M n × nb)

``Y_b`` holds the base columns of the identification regressor (rigid body + the friction and
rotor columns that will be identified). Two criteria:

* ``cond``: the 2-norm condition number σ_max / σ_min of W (payload_identification_2017 §3,
  scara_kalman_torque_estimation_2018, the seeds' criterion);
* ``dopt``: D-optimality ``−log det(WᵀW / M)`` (FloBaRoID; smaller is better). Dividing by M
  makes it the information per sample, independent of the sampling density.
"""
from __future__ import annotations

import math

import numpy as np

from ..model.base_parameters import BaseParameters, compute_base_parameters
from ..model.regressor import Regressor, RegressorSpec
from ..model.robot import RobotModel


class BaseRegressorCriteria:
    """Criteria of the base regressor of a robot.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    spec : RegressorSpec
        The columns to be identified.

    Attributes
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    """

    def __init__(self, robot: RobotModel, spec: RegressorSpec):
        self.regressor = Regressor(robot, spec)
        self.base: BaseParameters = compute_base_parameters(self.regressor)

    def matrix(self, q, qd, qdd) -> np.ndarray:
        """Stacked base regressor of samples.

        Parameters
        ----------
        q, qd, qdd : (M, n) ndarray
            Samples, model joint order.

        Returns
        -------
        W : (M·n, nb) ndarray
        """
        y = self.regressor.compute(q, qd, qdd)[:, :, self.base.independent]
        return y.reshape(-1, self.base.count)

    def evaluate(self, q, qd, qdd) -> dict:
        """Both criteria of samples.

        Parameters
        ----------
        q, qd, qdd : (M, n) ndarray
            Samples, model joint order.

        Returns
        -------
        dict
            ``{'cond': σ_max/σ_min, 'dopt': −log det(WᵀW/M)}``; both inf when W is rank
            deficient.
        """
        sigma = np.linalg.svd(self.matrix(q, qd, qdd), compute_uv=False)
        if not sigma[-1] > 1e-12 * sigma[0]:
            return {'cond': math.inf, 'dopt': math.inf}
        return {'cond': float(sigma[0] / sigma[-1]),
                'dopt': float(-2 * np.sum(np.log(sigma)) + len(sigma) * math.log(len(q)))}
