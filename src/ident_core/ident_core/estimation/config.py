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

    Parameters
    ----------
    friction : {'none', 'coulomb-viscous', 'coulomb-viscous-offset', 'stribeck', \
'improved-stribeck'}
        Friction model per actuator; the Stribeck models' shape (``vs``, ``v_l``, and
        ``delta`` unless ``stribeck_exponent`` fixes it) is found by variable projection
        (``friction_shape``).
    stribeck_exponent : float or None
        Stribeck models: ``delta`` of every actuator, held (2: the Gaussian model of
        stribeck_friction_sa_ga_2020); None: identified.
    friction_search : {'local', 'sa-ga'}
        Stribeck models: search of the shape parameters, a bounded local search from the best
        point of a grid, or the SA-GA (``optim.evolution``).
    rotor_inertia : bool
        Identify one rotor inertia per actuator.
    estimator : {'ols', 'wls', 'pc-wls'}
        Least-squares estimator; ``pc-wls``: WLS over the standard parameters subject to
        physical consistency (``pc_wls``).
    cutoff_hz : float or None
        Low-pass cut-off of positions and torques [Hz]; None: the dataset's ``cutoff_hz``,
        else 10 Hz.
    filter_order : int
        Butterworth order of one pass.
    use_recorded_velocity : bool or None
        Use the recorded velocity (filtered) instead of differentiating q; None: use it when
        the log carries one that agrees with the derivative of q (``recorded_velocity``).
    decimate : int
        Parallel decimation factor; 1: none; 0: automatic, the largest factor whose
        anti-alias filter (0.8 × new Nyquist) stays above ``cutoff_hz``. Filtered residuals
        are correlated over ~fs/cutoff samples; decimating to the filter's bandwidth keeps the
        least-squares standard deviations honest (Gautier).
    rank_tolerance : float
        Relative QR rank tolerance of the base parameters.
    seed : int
        Seed of the random samples for the base parameters.
    reversal_window : float or None
        [s]; the equations of a joint within this time of a velocity reversal of an actuator
        acting on it are left out of the estimation (0: keep all). Around a reversal, joints
        stick for a moment and ``fc sign(qd)`` does not hold; the low-pass filter spreads that
        error over about one cut-off period. None: one cut-off period, ``1 / cutoff_hz``
        (``reversal_seconds``).
    prior_weight : float or None
        pc-wls: weight of the prior toward the URDF; None: chosen on held-out data.
    total_mass : float or None
        pc-wls: the sum of the masses of the moving bodies [kg] (the fixed base excluded), when
        known (e.g. weighed).
    mass_tolerance : float or None
        pc-wls: each body's mass within this fraction of the URDF's (0.2: ±20 %); bodies the
        URDF leaves without mass are not bounded.
    com_in_collision_box : bool
        pc-wls: each body's centre of mass inside the box around its collision geometry.
    trim_standstill : bool
        Leave out the rows before the robot first moves and after it last stops
        (``preprocessing.standstill_rows``): there the torque holds the joints against static
        friction, which no friction model of the suite predicts, and a position controller's
        integrator sets it.
    torque_delay : {'auto', 'none'} or float
        Delay of the torques behind the positions [s] (positive: logged late, the torque of
        time t stamped at t + delay): 'auto' estimates it per recording and compensates it
        when significant (``delay.estimate_delays``), a number shifts every recording's
        torques by it, 'none' (or 0) leaves them.
    """

    friction: FrictionModel = Field(
        'coulomb-viscous-offset', description='friction model per actuator: none, '
        'coulomb-viscous, coulomb-viscous-offset, stribeck or improved-stribeck')
    stribeck_exponent: PositiveFloat | None = Field(
        2.0, description='Stribeck models: delta of every actuator (unset: identified)')
    friction_search: Literal['local', 'sa-ga'] = Field(
        'local', description='Stribeck models: search of vs, v_l (delta): local or sa-ga')
    rotor_inertia: bool = Field(False, description='identify one rotor inertia per actuator')
    estimator: Literal[ESTIMATORS] = Field('pc-wls', description='least-squares estimator: ols, '
                                           'wls or pc-wls (physically consistent)')
    cutoff_hz: PositiveFloat | None = Field(
        None, description="low-pass cut-off of q and tau, Hz (unset: the dataset's, else 10)")
    filter_order: PositiveInt = Field(4, description='Butterworth order of one filter pass')
    use_recorded_velocity: bool | None = Field(
        None, description='filter the recorded velocity instead of differentiating q (unset: '
        'when it agrees with dq/dt)')
    decimate: NonNegativeInt = Field(0, description='parallel decimation factor (0: automatic,'
                                     ' 1: none)')
    rank_tolerance: PositiveFloat = Field(DEFAULT_RANK_TOLERANCE,
                                          description='relative QR rank tolerance')
    seed: int = Field(0, description='seed of the random samples for the base parameters')
    reversal_window: NonNegativeFloat | None = Field(
        None, description='s: leave out joint equations this close to a velocity reversal '
        '(unset: one cut-off period; 0: keep all)')
    prior_weight: PositiveFloat | None = Field(
        None, description='pc-wls: weight of the prior toward the URDF (unset: chosen on '
        'held-out data)')
    total_mass: PositiveFloat | None = Field(
        None, description='pc-wls: sum of the moving body masses (base excluded), kg (unset: '
        'free)')
    mass_tolerance: PositiveFloat | None = Field(
        None, description="pc-wls: body masses within this fraction of the URDF's (unset: free)")
    com_in_collision_box: bool = Field(
        False, description='pc-wls: centres of mass inside the collision geometry boxes')
    trim_standstill: bool = Field(
        True, description='leave out the rows before the robot first moves and after it last '
        'stops')
    torque_delay: Literal['auto', 'none'] | float = Field(
        'auto', description="s: delay of the torques behind the positions; auto: estimated per "
        'recording, compensated when significant; none: left')

    def reversal_seconds(self, cutoff_hz: float) -> float:
        """The reversal window at a cut-off.

        Parameters
        ----------
        cutoff_hz : float
            The preprocessing cut-off [Hz].

        Returns
        -------
        float
            ``reversal_window``, or one cut-off period ``1 / cutoff_hz`` when it is unset [s].
        """
        return 1.0 / cutoff_hz if self.reversal_window is None else self.reversal_window

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

