"""Simulated robot hardware: "true" dynamics, friction, drives and sensors at a fixed rate.

The true robot is the URDF with perturbed inertial parameters (``synthetic.perturbed_inertial``),
rotor inertias (Pinocchio armature), an optional payload at the flange, and joint friction: the
Coulomb + viscous + offset model of payload_identification_2017 eq. (4), or the improved Stribeck
model of methods §6 (stribeck_friction_sa_ga_2020). Both use the improved model's linear segment
through zero inside ``|qd| < v_l`` so the torque is continuous at reversal.

Control: computed torque with the nominal (URDF) model plus PD and friction feed-forward,
``u = M̂(q)(qdd_d + Kp e + Kd ė) + ĥ(q, qd) + f̂c tanh(qd_d/0.01) + f̂v qd_d``, saturated at the URDF effort limits, computed
from the measured (quantised) positions and their backward differences.

Integration: the central-difference method at the control period ``dt`` with ``u`` held over the
step. With ``v_k = (q_{k+1} − q_{k−1})/2dt`` and ``a_k = (q_{k+1} − 2q_k + q_{k−1})/dt²``, each
step solves ``M(q_k) a_k + h(q_k, v_k) + F(v_k) = u_k`` (Newton on ``a_k``, friction implicit).
The samples thus satisfy the equation of motion exactly in the central differences that the
identification uses (methods §3), so what remains in an identification is noise, quantisation,
filtering and model structure, not integration error.

Sensors: positions quantised to the encoder resolution; velocity = backward difference of the
quantised positions (what a drive reports); effort = applied torque + Gaussian noise, quantised
(CiA 402 reports torque in per mille of the rated torque).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pinocchio as pin

from .base_parameters import compute_base_parameters
from .errors import InputError
from .regressor import Regressor, RegressorSpec
from .robot_model import RobotModel
from .synthetic import perturbed_inertial

FRICTION_MODELS = ('coulomb-viscous', 'stribeck')
NEWTON_ITERATIONS = 12
FEEDFORWARD_BAND = 0.0005
GROUND_TRUTH_FORMAT = 'robot-ident/ground-truth/1'


@dataclass
class Friction:
    """Joint friction, all (n,) arrays (N·m, N·m·s/rad, rad/s).

    ``tau_f = [fc + (fs − fc) exp(−|qd/vs|^delta)] sign(qd) + fv qd + offset`` for
    ``|qd| >= v_l`` (``fs``, ``vs``, ``delta`` only with ``model = 'stribeck'``), and inside the
    band the straight line from ``offset`` at 0 to the value at ``±v_l`` (methods §6).
    """

    fc: np.ndarray
    fv: np.ndarray
    offset: np.ndarray
    v_l: np.ndarray
    model: str = 'coulomb-viscous'
    fs: np.ndarray | None = None
    vs: np.ndarray | None = None
    delta: np.ndarray | None = None

    def __post_init__(self):
        if self.model not in FRICTION_MODELS:
            raise InputError(f'friction model {self.model!r} unknown (choose from '
                             f'{", ".join(FRICTION_MODELS)})')
        if self.model == 'coulomb-viscous':
            self.fs, self.vs, self.delta = self.fc, np.ones_like(self.fc), np.ones_like(self.fc)
        elif any(x is None for x in (self.fs, self.vs, self.delta)):
            raise InputError('friction: the stribeck model needs fs, vs and delta per joint')
        if np.any(self.v_l <= 0) or np.any(self.vs <= 0):
            raise InputError('friction: v_l and vs must be positive')

    def _sliding(self, speed):
        """Magnitude of the Coulomb/Stribeck part and its derivative at ``speed`` >= 0."""
        e = np.exp(-(speed / self.vs) ** self.delta)
        level = self.fc + (self.fs - self.fc) * e
        slope = -(self.fs - self.fc) * e * self.delta / self.vs * (speed / self.vs) ** (
            self.delta - 1)
        return level, slope

    def torque(self, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Friction torque (n,) at velocities qd (n,), and its derivative d tau_f / d qd."""
        speed = np.abs(qd)
        level, slope = self._sliding(np.maximum(speed, self.v_l))
        outside = speed >= self.v_l
        edge = level + self.fv * self.v_l
        tau = np.where(outside, level * np.sign(qd) + self.fv * qd, edge * qd / self.v_l)
        dtau = np.where(outside, slope + self.fv, edge / self.v_l)
        return tau + self.offset, dtau


@dataclass
class Payload:
    """A rigid payload in the frame ``frame``: mass (kg), centre of mass (3,) m, rotational
    inertia about the centre of mass ``[ixx, ixy, iyy, ixz, iyz, izz]`` kg·m²."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    frame: str = 'flange'


@dataclass
class SimulationConfig:
    """Settings of the simulated hardware; per-joint arrays are (n,) in the URDF's joint order.

    Attributes:
        dt: control and sample period, s. seed: seed of the perturbation and of the noise.
        perturbation: relative spread of the true inertial parameters around the URDF's.
        rotor_inertia: true rotor (armature) inertia, joint side, kg·m².
        friction: the true friction.
        position_resolution: encoder resolution, joint side, rad (m).
        torque_noise_std: std of the effort measurement noise, N·m (N).
        effort_resolution: effort quantisation step, N·m (N); 0: none.
        kp, kd: PD gains of the computed-torque controller, 1/s², 1/s.
        controller_armature: rotor inertia known to the controller's model, kg·m².
        controller_fc, controller_fv: friction feed-forward of the controller (N·m, N·m·s/rad),
            on the desired velocity, as industrial drives compensate friction.
        initial_position: joint positions at start, rad (m).
        payload: optional payload.
    """

    rotor_inertia: np.ndarray
    friction: Friction
    torque_noise_std: np.ndarray
    effort_resolution: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    controller_armature: np.ndarray
    controller_fc: np.ndarray
    controller_fv: np.ndarray
    initial_position: np.ndarray
    position_resolution: float = 2 * np.pi / 2 ** 17 / 100
    dt: float = 1e-3
    seed: int = 0
    perturbation: float = 0.2
    payload: Payload | None = None

    def check(self, robot: RobotModel) -> None:
        """Raises InputError naming the first setting with a wrong length or value."""
        n = robot.n
        arrays = {'rotor_inertia': self.rotor_inertia, 'torque_noise_std': self.torque_noise_std,
                  'effort_resolution': self.effort_resolution, 'kp': self.kp, 'kd': self.kd,
                  'controller_armature': self.controller_armature,
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


@dataclass
class Sample:
    """One control period. ``position``, ``velocity``, ``effort`` (n,) are what the sensors
    report; ``q``, ``qd``, ``qdd`` (n,) the true state and ``torque`` (n,) the noise-free
    applied joint torque (ground truth, never published as measurement)."""

    step: int
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    torque: np.ndarray


class RobotSimulator:
    """The simulated robot; ``step`` advances it by one control period.

    Raises:
        InputError: bad settings (``SimulationConfig.check``), an unknown payload frame.
    """

    def __init__(self, robot: RobotModel, config: SimulationConfig):
        config.check(robot)
        self.robot, self.config = robot, config
        self._rng = np.random.default_rng(config.seed)
        self.true_inertial = perturbed_inertial(robot, self._rng, config.perturbation)
        self.true_model = robot.model.copy()
        for i in range(1, self.true_model.njoints):
            self.true_model.inertias[i] = pin.Inertia.FromDynamicParameters(
                self.true_inertial[10 * (i - 1):10 * i])
        if config.payload is not None:
            self._add_payload(config.payload)
        self.true_model.armature = np.asarray(config.rotor_inertia, dtype=float)
        self.nominal_model = robot.model.copy()
        self.nominal_model.armature = np.asarray(config.controller_armature, dtype=float)
        self._true_data = self.true_model.createData()
        self._nominal_data = self.nominal_model.createData()
        self._effort_limit = np.where(robot.effort_limit > 0, robot.effort_limit, np.inf)
        self.step_count = 0
        self._q = np.array(config.initial_position, dtype=float)
        self._v_half = np.zeros(robot.n)
        self._a = np.zeros(robot.n)
        self._measured_previous = self._measure_position(self._q)

    def _add_payload(self, payload: Payload) -> None:
        model = self.true_model
        if not model.existFrame(payload.frame):
            raise InputError(f'payload frame {payload.frame!r} is not a frame of the URDF')
        frame = model.frames[model.getFrameId(payload.frame)]
        inertia = pin.Inertia(payload.mass, np.asarray(payload.com, dtype=float),
                              _symmetric(payload.inertia))
        joint = frame.parentJoint
        model.inertias[joint] = model.inertias[joint] + frame.placement.act(inertia)
        self.true_inertial[10 * (joint - 1):10 * joint] = model.inertias[joint].toDynamicParameters()

    @property
    def time(self) -> float:
        """Time of the next sample, s since the start."""
        return self.step_count * self.config.dt

    def _measure_position(self, q):
        res = self.config.position_resolution
        return np.round(q / res) * res if res > 0 else q.copy()

    def step(self, q_des, qd_des, qdd_des) -> Sample:
        """Control, integrate and measure one period with the desired state (n,) each.

        Returns:
            the sample at the current time (before the state advances).
        """
        cfg, dt = self.config, self.config.dt
        position = self._measure_position(self._q)
        velocity = (position - self._measured_previous) / dt
        command = qdd_des + cfg.kp * (q_des - position) + cfg.kd * (qd_des - velocity)
        u = pin.rnea(self.nominal_model, self._nominal_data, position, velocity, command)
        u += cfg.controller_fc * np.tanh(qd_des / FEEDFORWARD_BAND) + cfg.controller_fv * qd_des
        u = np.clip(u, -self._effort_limit, self._effort_limit)
        a, v = self._solve_acceleration(u)
        effort = u + cfg.torque_noise_std * self._rng.standard_normal(len(u))
        res = np.asarray(cfg.effort_resolution)
        effort = np.where(res > 0, np.round(effort / np.where(res > 0, res, 1)) * res, effort)
        sample = Sample(self.step_count, position, velocity, effort, self._q.copy(), v, a, u)
        self._v_half = self._v_half + dt * a
        self._q = self._q + dt * self._v_half
        self._a = a
        self._measured_previous = position
        self.step_count += 1
        return sample

    def _solve_acceleration(self, u):
        """a_k, v_k with M a + h(q, v) + F(v) = u and v = v_{k−1/2} + a dt/2 (Newton)."""
        half = 0.5 * self.config.dt
        model, data = self.true_model, self._true_data
        m = pin.crba(model, data, self._q)
        m = np.triu(m) + np.triu(m, 1).T
        v_l = self.config.friction.v_l
        a = self._a
        for _ in range(NEWTON_ITERATIONS):
            v = self._v_half + half * a
            friction, slope = self.config.friction.torque(v)
            residual = m @ a + pin.nonLinearEffects(model, data, self._q, v) + friction - u
            if np.max(np.abs(residual)) < 1e-9:
                break
            a = a - np.linalg.solve(m + half * np.diag(slope), residual)
            # A step across the reversal band would miss the friction jump: land inside the
            # band first, where the next step sees the band's slope.
            v_new = self._v_half + half * a
            jump = (np.sign(v_new) != np.sign(v)) & (np.abs(v) >= v_l)
            a = np.where(jump, (0.5 * v_l * np.sign(v) - self._v_half) / half, a)
        return a, self._v_half + half * a

    def ground_truth(self) -> dict:
        """The true parameters as plain types: standard parameters named like the
        identification regressor's columns (rigid body + ``Ia, fv, fc, offset``), their
        projection on the base parameters, friction, payload and sensor settings."""
        robot, cfg = self.robot, self.config
        spec = RegressorSpec('viscous-coulomb-offset', rotor_inertia=True)
        regressor = Regressor(robot, spec)
        chi = np.concatenate([self.true_inertial, cfg.rotor_inertia, cfg.friction.fv,
                              cfg.friction.fc, cfg.friction.offset])
        base = compute_base_parameters(regressor)
        friction = {k: np.asarray(v).tolist() for k, v in asdict(cfg.friction).items()
                    if k != 'model'}
        return {
            'format': GROUND_TRUTH_FORMAT,
            'robot': {'urdf': str(robot.urdf.resolve()), 'urdf_sha256': robot.urdf_sha256(),
                      'joints': list(robot.joint_names)},
            'seed': cfg.seed, 'perturbation': cfg.perturbation, 'dt': cfg.dt,
            'standard_parameters': {'names': regressor.names, 'values': chi.tolist()},
            'base_parameters': {'names': base.names, 'values': base.project(chi).tolist(),
                                'definition': base.to_dict()},
            'friction': {'model': cfg.friction.model, **friction},
            'payload': None if cfg.payload is None else {
                'frame': cfg.payload.frame, 'mass': float(cfg.payload.mass),
                'com': np.asarray(cfg.payload.com, float).tolist(),
                'inertia': np.asarray(cfg.payload.inertia, float).tolist()},
            'sensors': {'position_resolution': float(cfg.position_resolution),
                        'torque_noise_std': np.asarray(cfg.torque_noise_std).tolist(),
                        'effort_resolution': np.asarray(cfg.effort_resolution).tolist()},
            'controller': {'kp': np.asarray(cfg.kp).tolist(), 'kd': np.asarray(cfg.kd).tolist()},
        }


def _symmetric(i6) -> np.ndarray:
    ixx, ixy, iyy, ixz, iyz, izz = np.asarray(i6, dtype=float)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


@dataclass
class TruthLog:
    """Ground-truth time series of a simulation run, grown in chunks: step numbers (M,) and
    true q, qd, qdd and applied torque (M, n)."""

    n: int
    chunk: int = 10000
    _parts: list = field(default_factory=list)
    _current: np.ndarray | None = None
    _fill: int = 0

    def append(self, sample: Sample) -> None:
        if self._current is None or self._fill == self.chunk:
            if self._current is not None:
                self._parts.append(self._current)
            self._current = np.empty((self.chunk, 1 + 4 * self.n))
            self._fill = 0
        self._current[self._fill] = np.concatenate(
            [[sample.step], sample.q, sample.qd, sample.qdd, sample.torque])
        self._fill += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """``{'step': (M,) int, 'q', 'qd', 'qdd', 'torque': (M, n)}``."""
        parts = self._parts + ([self._current[:self._fill]] if self._current is not None else [])
        table = np.concatenate(parts) if parts else np.empty((0, 1 + 4 * self.n))
        n = self.n
        out = {'step': table[:, 0].astype(np.int64)}
        for i, key in enumerate(('q', 'qd', 'qdd', 'torque')):
            out[key] = table[:, 1 + i * n:1 + (i + 1) * n]
        return out
