"""Settings of the simulated hardware (docs/methods.md §9).

:class:`SimulationConfig` is the flat form a user writes (the ``ident_sim`` node's
parameters, ``config/<robot>/ident_sim.yaml``): per-joint values as one number for every joint
or one per joint. :class:`SimulatedHardware` is the same with (n,) arrays and the friction
model, what :class:`~ident_core.sim.simulator.RobotSimulator` runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat

from ..errors import InputError
from ..files import read_yaml
from ..friction.models import SIMULATED_MODELS, Friction
from ..model.robot import RobotModel
from ..schema import Schema, parse, per_joint

ENCODER_RESOLUTION = 2 * np.pi / 2 ** 17 / 100     # rad: 17-bit motor encoder, 100:1 gear


@dataclass
class Payload:
    """A rigid payload attached to a frame of the robot.

    Parameters
    ----------
    mass : float
        [kg].
    com : (3,) ndarray
        Centre of mass in ``frame`` [m].
    inertia : (6,) ndarray
        Rotational inertia about the centre of mass ``[ixx, ixy, iyy, ixz, iyz, izz]``
        [kg·m²].
    frame : str
        A frame of the URDF (link or joint name).
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    frame: str = 'flange'


@dataclass
class SimulatedHardware:
    """Settings of the simulated hardware; per-joint arrays are (n,) in the URDF's joint order.

    Parameters
    ----------
    rotor_inertia : (n,) ndarray
        True rotor inertia, joint side [kg·m²].
    friction : Friction
        The true friction.
    torque_noise_std : (n,) ndarray
        Standard deviation of the effort measurement noise [N·m or N].
    effort_resolution : (n,) ndarray
        Effort quantisation step [N·m or N]; 0: none.
    kp, kd : (n,) ndarray
        PD gains of the computed-torque controller [1/s², 1/s].
    controller_rotor_inertia : (n,) ndarray
        Rotor inertia known to the controller's model [kg·m²].
    controller_fc, controller_fv : (n,) ndarray
        Friction feed-forward of the controller on the desired velocity, as industrial drives
        compensate friction [N·m, N·m·s/rad].
    initial_position : (n,) ndarray
        Joint positions at start [rad or m].
    position_resolution : float
        Encoder resolution, joint side [rad or m].
    dt : float
        Control and sample period [s].
    seed : int
        Seed of the perturbation and of the noise.
    perturbation : float
        Relative spread of the true inertial parameters around the URDF's, in [0, 1).
    payload : Payload or None
        The payload, if any (``RobotSimulator.set_payload`` mounts and removes it at run time).
    payload_mounted : bool
        Whether ``payload`` is mounted at start.
    """

    rotor_inertia: np.ndarray
    friction: Friction
    torque_noise_std: np.ndarray
    effort_resolution: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    controller_rotor_inertia: np.ndarray
    controller_fc: np.ndarray
    controller_fv: np.ndarray
    initial_position: np.ndarray
    position_resolution: float
    dt: float
    seed: int
    perturbation: float
    payload: Payload | None = None
    payload_mounted: bool = True

    def check(self, robot: RobotModel) -> None:
        """Check sizes and values against a robot.

        Parameters
        ----------
        robot : RobotModel
            The simulated robot.

        Raises
        ------
        InputError
            Naming the first setting with a wrong length or value.
        """
        n = robot.n
        arrays = {'rotor_inertia': self.rotor_inertia, 'torque_noise_std': self.torque_noise_std,
                  'effort_resolution': self.effort_resolution, 'kp': self.kp, 'kd': self.kd,
                  'controller_rotor_inertia': self.controller_rotor_inertia,
                  'controller_fc': self.controller_fc, 'controller_fv': self.controller_fv,
                  'initial_position': self.initial_position}
        arrays.update({f'friction.{k}': getattr(self.friction, k)
                       for k in ('fc', 'fv', 'offset', 'v_l', 'fs', 'vs', 'delta')})
        for name, value in arrays.items():
            value = np.asarray(value, dtype=float)
            if value.shape != (n,) or not np.all(np.isfinite(value)):
                raise InputError(f'simulation setting {name}: need {n} finite values (one per '
                                 f'joint {", ".join(robot.joint_names)}), got {value.tolist()}')
        for name in ('rotor_inertia', 'torque_noise_std', 'effort_resolution', 'kp', 'kd'):
            if np.any(np.asarray(arrays[name]) < 0):
                raise InputError(f'simulation setting {name}: values must not be negative')
        if not (self.dt > 0 and self.position_resolution >= 0 and 0 <= self.perturbation < 1):
            raise InputError('simulation settings dt > 0, position_resolution >= 0 and '
                             '0 <= perturbation < 1 are required')


class SimulationConfig(Schema):
    """The simulated hardware as a user configures it; lists are per joint (URDF order), one
    value meaning the same for every joint."""

    rate_hz: PositiveFloat = Field(1000.0, description='Control, integration and joint_states '
                                   'rate [Hz].')
    seed: int = Field(0, description='Seed of the perturbation and of the noise.')
    perturbation: float = Field(0.2, ge=0, lt=1, description='Relative spread of the true '
                                'inertial parameters around the URDF, in [0, 1).')
    rotor_inertia: list[float] = Field([0.0], description='True rotor inertia, joint side '
                                       '[kg·m²].')
    friction_model: Literal[SIMULATED_MODELS] = Field(
        'coulomb-viscous', description='True friction model (``friction.models``; both with '
        'the linear band through the offset inside ``|qd| < v_l``).')
    coulomb: list[float] = Field([0.0], description='True Coulomb friction [N·m].')
    viscous: list[float] = Field([0.0], description='True viscous friction [N·m·s/rad].')
    offset: list[float] = Field([0.0], description='True torque offset [N·m].')
    stribeck_static: list[float] = Field([0.0], description='Improved Stribeck model only: '
                                         'fs [N·m].')
    stribeck_velocity: list[float] = Field([0.0], description='Improved Stribeck model only: '
                                           'vs [rad/s].')
    stribeck_exponent: list[float] = Field([0.0], description='Improved Stribeck model only: '
                                           'the exponent delta.')
    reversal_band: list[PositiveFloat] = Field(
        [0.001], description='v_l, half-width of the linear friction segment through zero '
        '(``|qd| < v_l``) [rad/s].')
    position_resolution: NonNegativeFloat = Field(
        ENCODER_RESOLUTION, description='Encoder resolution, joint side [rad].')
    torque_noise_std: list[float] = Field([0.0], description='Effort noise, standard '
                                          'deviation [N·m].')
    effort_resolution: list[float] = Field([0.0], description='Effort quantisation step [N·m]; '
                                           '0: none.')
    kp: list[float] = Field([2500.0], description='Computed-torque P gain [1/s²].')
    kd: list[float] = Field([100.0], description='Computed-torque D gain [1/s].')
    controller_rotor_inertia: list[float] = Field(
        [0.0], description="Rotor inertia in the controller's model [kg·m²] (what the "
        'controller knows).')
    controller_coulomb: list[float] = Field(
        [0.0], description="Coulomb friction feed-forward of the controller's model [N·m].")
    controller_viscous: list[float] = Field(
        [0.0], description="Viscous friction feed-forward of the controller's model "
        '[N·m·s/rad].')
    initial_position: list[float] = Field([0.0], description='Joint positions at start [rad].')
    payload_mass: NonNegativeFloat = Field(0.0, description='Payload mass [kg]; > 0: a payload '
                                           'in ``payload_frame``.')
    payload_com: list[float] = Field([0.0, 0.0, 0.0], min_length=3, max_length=3,
                                     description='(3,) centre of mass of the payload in '
                                                 '``payload_frame`` [m].')
    payload_inertia: list[float] = Field(
        [0.0] * 6, min_length=6, max_length=6, description='(6,) ``ixx ixy iyy ixz iyz izz`` '
        'of the payload about its centre of mass [kg·m²].')
    payload_frame: str = Field('flange', description='Frame of the URDF holding the payload.')
    payload_mounted: bool = Field(True, description="Mount the payload at start (else it waits "
                                  "for the simulator node's ``~/set_payload``).")

    def hardware(self, n: int) -> SimulatedHardware:
        """The simulator's settings for an n-joint robot.

        Parameters
        ----------
        n : int
            Number of joints.

        Returns
        -------
        SimulatedHardware

        Raises
        ------
        InputError
            If a per-joint list has neither 1 nor n values (naming the parameter), or the
            friction model is inconsistent.
        """
        joint = {name: per_joint(getattr(self, name), n, name) for name, info in
                 type(self).model_fields.items()
                 if info.annotation == list[float] and not name.startswith('payload')}
        stribeck = self.friction_model == 'improved-stribeck'
        friction = Friction(fc=joint['coulomb'], fv=joint['viscous'], offset=joint['offset'],
                            v_l=per_joint(self.reversal_band, n, 'reversal_band'),
                            model=self.friction_model,
                            fs=joint['stribeck_static'] if stribeck else None,
                            vs=joint['stribeck_velocity'] if stribeck else None,
                            delta=joint['stribeck_exponent'] if stribeck else None)
        payload = (Payload(self.payload_mass, np.asarray(self.payload_com),
                           np.asarray(self.payload_inertia), self.payload_frame)
                   if self.payload_mass > 0 else None)
        return SimulatedHardware(
            rotor_inertia=joint['rotor_inertia'], friction=friction,
            torque_noise_std=joint['torque_noise_std'],
            effort_resolution=joint['effort_resolution'], kp=joint['kp'], kd=joint['kd'],
            controller_rotor_inertia=joint['controller_rotor_inertia'],
            controller_fc=joint['controller_coulomb'], controller_fv=joint['controller_viscous'],
            initial_position=joint['initial_position'],
            position_resolution=self.position_resolution, dt=1.0 / self.rate_hz, seed=self.seed,
            perturbation=self.perturbation, payload=payload,
            payload_mounted=self.payload_mounted)


def load_simulation_config(path, node: str = 'ident_sim', **overrides) -> SimulationConfig:
    """The simulated hardware of a ROS parameter file of the ``ident_sim`` node, for offline use
    (benchmarks): its ``<node>.ros__parameters`` that are ``SimulationConfig`` fields (the
    node's topics are left out).

    Parameters
    ----------
    path : str or Path
        The parameter file, e.g. ``config/six_axis_3kg/ident_sim.yaml``.
    node : str
        The node's name in the file: its key ``node``, ``/node`` or ``/**/node`` (the suite's
        files: the node in any namespace).
    **overrides
        Settings that replace the file's.

    Returns
    -------
    SimulationConfig

    Raises
    ------
    InputError
        If the file is missing or not YAML, has no ``<node>.ros__parameters``, or a setting is
        wrong (naming it).
    """
    doc = read_yaml(path, 'simulation parameter file')
    try:
        key = next(k for k in (node, f'/{node}', f'/**/{node}') if k in doc)
        params = doc[key]['ros__parameters']
    except (StopIteration, KeyError, TypeError, IndexError):
        params = None
    if not isinstance(params, dict):
        raise InputError(f'{path}: no {node}.ros__parameters')
    settings = {k: v for k, v in params.items() if k in SimulationConfig.model_fields}
    return parse(SimulationConfig, {**settings, **overrides}, path)
