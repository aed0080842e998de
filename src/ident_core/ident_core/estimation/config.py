"""How to identify: the settings of a whole-robot identification (``IdentificationConfig``,
docs/methods.md §10), shared by the ``identify`` verb, the identification node's parameters and
the ``config`` section of RESULT.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from ..model.base_parameters import DEFAULT_RANK_TOLERANCE
from ..model.regressor import FrictionModel, RegressorSpec
from ..schema import Schema
from .estimators import ESTIMATORS


class IdentificationConfig(Schema):
    """How to identify: model columns, filtering, estimator.

    The ``identify`` CLI verb, the identification node's parameters and the ``config`` section
    of RESULT.yaml are this model.
    """

    friction: FrictionModel = Field(
        'coulomb-viscous-offset', description='Friction model per actuator: none, '
        'coulomb-viscous, coulomb-viscous-offset, stribeck or improved-stribeck; the Stribeck '
        "models' shape (``vs``, ``v_l``, and ``delta`` unless ``stribeck_exponent`` fixes it) "
        'is found by variable projection (``friction_shape``).')
    stribeck_exponent: PositiveFloat | None = Field(
        2.0, description='Stribeck models: ``delta`` of every actuator, held (2: the Gaussian '
        'model of stribeck_friction_sa_ga_2020); None (unset): identified.')
    friction_search: Literal['local', 'sa-ga'] = Field(
        'local', description='Stribeck models: search of the shape parameters (``vs``, ``v_l``, '
        '``delta``), ``local``: a bounded local search from the best point of a grid, or '
        '``sa-ga``: the SA-GA (``optim.evolution``).')
    rotor_inertia: bool = Field(False, description='Identify one rotor inertia per actuator.')
    estimator: Literal[ESTIMATORS] = Field(
        'pc-wls', description='Least-squares estimator: ols, wls, or pc-wls (WLS over the '
        'standard parameters subject to physical consistency, ``pc_wls``).')
    cutoff_hz: PositiveFloat | None = Field(
        None, description='Low-pass cut-off of positions q and torques tau [Hz]; None (unset): '
        "the dataset's ``cutoff_hz``, else 10 Hz.")
    filter_order: PositiveInt = Field(4, description='Butterworth order of one filter pass.')
    use_recorded_velocity: bool | None = Field(
        None, description='Use the recorded velocity (filtered) instead of differentiating q; '
        'None (unset): use it when the log carries one that agrees with the derivative of q, '
        'dq/dt (``recorded_velocity``).')
    decimate: NonNegativeInt = Field(
        0, description='Parallel decimation factor; 1: none; 0: automatic, the largest factor '
        'whose anti-alias filter (0.8 × new Nyquist) stays above ``cutoff_hz``. Filtered '
        'residuals are correlated over ~fs/cutoff samples; decimating to the filter\'s '
        'bandwidth keeps the least-squares standard deviations honest (Gautier).')
    rank_tolerance: PositiveFloat = Field(
        DEFAULT_RANK_TOLERANCE, description='Relative QR rank tolerance of the base parameters.')
    seed: int = Field(0, description='Seed of the random samples for the base parameters.')
    reversal_window: NonNegativeFloat = Field(
        0.0, description='Window around velocity reversals [s]: the equations of a joint '
        'within this time of a velocity reversal of an actuator acting on it are left out of '
        'the estimation (0: keep all). '
        'Around a reversal, joints stick for a moment and ``fc sign(qd)`` does not hold; the '
        'low-pass filter spreads that error over about one cut-off period (``1 / cutoff_hz`` '
        'is a good window).')
    prior_weight: PositiveFloat | None = Field(
        None, description='pc-wls: weight of the prior toward the URDF; None (unset): chosen '
        'on held-out data.')
    total_mass: PositiveFloat | None = Field(
        None, description='pc-wls: the sum of the masses of the moving bodies [kg] (the fixed '
        'base excluded), when known (e.g. weighed); None (unset): free.')
    mass_tolerance: PositiveFloat | None = Field(
        None, description="pc-wls: each body's mass within this fraction of the URDF's (0.2: "
        '±20 %); bodies the URDF leaves without mass are not bounded; None (unset): free.')
    ignore_plausibility: bool = Field(
        False, description='Use recordings that fail a plausibility check (positions far '
        'outside the URDF limits, an effort column constant while its joint moves, swapped '
        'effort labels, efforts in another unit or with the opposite sign of the URDF model) '
        'as logged, with a warning, instead of refusing them (docs/methods.md §3).')
    com_in_collision_box: bool = Field(
        False, description="pc-wls: each body's centre of mass inside the box around its "
        'collision geometry.')
    trim_standstill: bool = Field(
        True, description='Leave out the rows before the robot first moves and after it last '
        'stops (``preprocessing.standstill_rows``): there the torque holds the joints against '
        'static friction, which no friction model of the suite predicts, and a position '
        "controller's integrator sets it.")
    torque_delay: Literal['auto', 'none'] | float = Field(
        'auto', description='Delay of the torques behind the positions [s] (positive: logged '
        'late, the torque of time t stamped at t + delay): auto: estimated per recording and '
        'compensated when significant (``delay.estimate_delays``); a number: every '
        "recording's torques shifted by it; none (or 0): left.")

    @property
    def fixed_delay(self) -> float | None:
        """The torque delay to apply to every recording [s]: ``torque_delay``, 0 for 'none';
        None for 'auto' (estimate it)."""
        if self.torque_delay == 'auto':
            return None
        return 0.0 if self.torque_delay == 'none' else float(self.torque_delay)

    @property
    def spec(self) -> RegressorSpec:
        """The regressor columns (friction model, rotor inertia)."""
        return RegressorSpec(friction=self.friction, rotor_inertia=self.rotor_inertia)

