"""The identified model (``IdentifiedModel``: everything needed to predict joint torques) and
the estimator run that produces its parameters: the prior toward the URDF, the scale of the
standard parameters and the physical-consistency constraints of pc-wls (docs/methods.md §4,
§10)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.base_parameters import BaseParameters
from ..model.inertial import LinkInertial, collision_boxes, link_inertials
from ..model.regressor import Regressor
from ..model.robot import RobotModel
from ..model.transmission import Transmission
from .config import IdentificationConfig
from .estimators import estimate, relative_std_percent
from .pc_wls import PhysicalConstraints, estimate_pc_wls
from .preprocessing import Processed
from .regression import regression_data


@dataclass
class IdentifiedModel:
    """An identified dynamic model: everything needed to predict joint torques.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    config : IdentificationConfig
        How it was identified.
    transmission : Transmission
        Actuator coupling of the friction and rotor-inertia columns.
    base : BaseParameters
        The base-parameter mapping.
    values, std : (nb,) ndarray
        Base parameters and their standard deviations.
    stats : dict
        Identification statistics (samples, condition number, residuals, data).
    standard : (p,) ndarray or None
        Standard parameters (regressor column order) behind ``values``: those of ``pc-wls``,
        or for OLS and WLS the ones nearest to the URDF's (``standard_parameters_near``).
        None for a model read from an older RESULT.yaml.
    friction_shape : dict of str to (n,) ndarray or None
        Stribeck models: the identified ``vs``, ``delta``, ``v_l`` per actuator.
    """

    robot: RobotModel
    config: IdentificationConfig
    transmission: Transmission
    base: BaseParameters
    values: np.ndarray
    std: np.ndarray
    stats: dict = field(default_factory=dict)
    standard: np.ndarray | None = None
    friction_shape: dict | None = None

    @property
    def regressor(self) -> Regressor:
        """The identification regressor of this model."""
        return Regressor(self.robot, self.config.spec, self.transmission, self.friction_shape)

    @property
    def rel_std_percent(self) -> np.ndarray:
        """(nb,) relative standard deviation of each base parameter [%]."""
        return relative_std_percent(self.values, self.std)

    def predict(self, processed: Processed) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and measured joint torques of preprocessed data.

        Parameters
        ----------
        processed : Processed

        Returns
        -------
        predicted, measured : (M', n) ndarray
            Trimmed, not decimated [N·m or N].
        """
        w, tau = regression_data(self.regressor, self.base, processed)
        return w @ self.values, tau

    def links(self) -> list[LinkInertial]:
        """Mass, centre of mass, inertia and physical consistency of every body.

        Returns
        -------
        list of LinkInertial
            One per moving joint (empty when ``standard`` is None).
        """
        if self.standard is None:
            return []
        return link_inertials(self.robot, self.standard[:10 * self.robot.link_count])

    def actuator_values(self) -> dict[str, list]:
        """Rotor inertia and friction per actuator.

        Returns
        -------
        dict of str to list
            ``{'Ia': [...], 'fv': [...], 'fc': [...], 'fs': [...], 'offset': [...]}`` for the
            terms in the model, one value per actuator, and the Stribeck shape (``vs``,
            ``delta``, ``v_l``); an entry is None when that parameter is not a base parameter
            on its own (regrouped with others).
        """
        out = {term: [None if b is None else float(self.values[b]) for b in bases]
               for term, bases in self._actuator_bases().items()}
        out.update({k: v.tolist() for k, v in self.regressor.friction_shape.items()})
        return out

    def actuator_std(self) -> dict[str, list]:
        """Standard deviations of the rotor inertias and friction parameters.

        Returns
        -------
        dict of str to list
            ``{'Ia': [...], 'fv': [...], ...}`` as ``actuator_values`` (without the Stribeck
            shape), the standard deviation of each value; None where regrouped.
        """
        return {term: [None if b is None else float(self.std[b]) for b in bases]
                for term, bases in self._actuator_bases().items()}

    def _actuator_bases(self) -> dict[str, list]:
        """Per actuator term, the base parameter of each actuator's column (None: regrouped)."""
        reg = self.regressor
        return {term: [self.base.single_column_base(reg.actuator_index(term, m))
                       for m in range(self.robot.n)]
                for term in self.config.spec.actuator_terms}

def run_estimator(regressor: Regressor, base: BaseParameters, w: np.ndarray, tau: np.ndarray,
                  mask: np.ndarray | None, config: IdentificationConfig) -> tuple:
    """Run the configured estimator on stacked regression data.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    base : BaseParameters
        Its base parameters.
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    mask : (N, n) ndarray of bool or None
        False for joint equations to leave out.
    config : IdentificationConfig
        The estimator and, for pc-wls, its bounds and prior weight.

    Returns
    -------
    estimate : Estimate
        Base parameters, covariance, residual deviations.
    standard : (p,) ndarray
        The standard parameters behind them (``IdentifiedModel.standard``).
    statistics : dict
        The estimator's own entries of the identification statistics (pc-wls: prior weight,
        its held-out scores, how the standard deviations were obtained).

    Raises
    ------
    InputError
        For bad data or bounds that admit no solution.
    ExcitationError
        If the data leave some base parameters unexcited.
    """
    prior = prior_standard_parameters(regressor)
    if config.estimator != 'pc-wls':
        est = estimate(w, tau, config.estimator, base.names, mask=mask)
        near = base.standard_parameters_near(est.values, prior, standard_scale(regressor))
        return est, near, {}
    est = estimate_pc_wls(w, tau, base, physical_constraints(regressor, config), mask=mask,
                          prior_weight=config.prior_weight, names=base.names)
    extra = {'prior_weight': est.prior_weight,
             'prior_weight_scores': {str(k): v for k, v in est.prior_weight_scores.items()},
             'std_method': 'WLS linearisation (constraints ignored: an upper bound where one '
                           'binds)'}
    return est, est.standard, extra


def prior_standard_parameters(regressor: Regressor) -> np.ndarray:
    """The a-priori standard parameters: the URDF's inertial ones, zero actuator terms.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.

    Returns
    -------
    (p,) ndarray
        Regressor column order.
    """
    actuators = np.zeros(regressor.n_columns - regressor.n_inertial)
    return np.concatenate([regressor.robot.standard_parameters(), actuators])


def standard_scale(regressor: Regressor) -> np.ndarray:
    """Typical magnitude of each standard parameter, to compare them across units.

    Per body ``[m0, m0·L (3), m0·L² (6)]`` with ``m0`` the URDF mass (at least a tenth of the
    mean) and ``L = 0.1 m``; rotor inertias ``m0·L²`` of the joint's body; friction and
    offsets 1.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.

    Returns
    -------
    (p,) ndarray
        [kg, kg·m, kg·m², N·m·s/rad, N·m].
    """
    masses = regressor.robot.standard_parameters()[0::10]
    m0 = np.maximum(masses, 0.1 * max(float(np.mean(masses)), 1e-3))
    length = 0.1
    per_body = np.outer(m0, [1.0] + [length] * 3 + [length ** 2] * 6).ravel()
    scale = np.ones(regressor.n_columns)
    scale[:regressor.n_inertial] = per_body
    for m in range(regressor.robot.n):
        if 'Ia' in regressor.spec.actuator_terms:
            scale[regressor.actuator_index('Ia', m)] = m0[min(m, len(m0) - 1)] * length ** 2
    return scale


def physical_constraints(regressor: Regressor,
                         config: IdentificationConfig) -> PhysicalConstraints:
    """The constraints of pc-wls for a regressor and the user's optional bounds.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor.
    config : IdentificationConfig
        ``total_mass``, ``mass_tolerance``, ``com_in_collision_box``.

    Returns
    -------
    PhysicalConstraints

    Raises
    ------
    InputError
        If the collision boxes are asked for and the collision geometry cannot be loaded.
    """
    prior = prior_standard_parameters(regressor)
    links = regressor.robot.link_count
    nonnegative = [regressor.actuator_index(t, m) for t in ('Ia', 'fv', 'fc', 'fs')
                   if t in regressor.spec.actuator_terms for m in range(regressor.robot.n)]
    mass_range = None
    if config.mass_tolerance is not None:
        masses = prior[0:10 * links:10]       # a body the URDF leaves massless stays free
        mass_range = np.column_stack([masses * max(1 - config.mass_tolerance, 0.0),
                                      np.where(masses > 0, masses * (1 + config.mass_tolerance),
                                               np.inf)])
    boxes = collision_boxes(regressor.robot) if config.com_in_collision_box else None
    return PhysicalConstraints(links, prior, nonnegative, total_mass=config.total_mass,
                               mass_range=mass_range, com_boxes=boxes,
                               scale=standard_scale(regressor))
