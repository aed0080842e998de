"""Simulated robot hardware: "true" dynamics, friction, drives and sensors at a fixed rate
(docs/methods.md §9).

The true robot is the URDF with perturbed inertial parameters (``synthetic.perturbed_inertial``),
rotor inertias (Pinocchio's ``armature``), an optional payload, and joint friction
(``friction.models``): the Coulomb + viscous + offset model of payload_identification_2017
eq. (4), or the improved Stribeck model of stribeck_friction_sa_ga_2020.

Control: computed torque with the nominal (URDF) model plus PD and friction feed-forward,
``u = M̂(q)(qdd_d + Kp e + Kd ė) + ĥ(q, qd) + f̂c tanh(qd_d / 0.0005) + f̂v qd_d``, saturated at
the URDF effort limits, computed from the measured (quantised) positions and their backward
differences.

Integration: the central-difference method at the control period ``dt`` with ``u`` held over the
step. With ``v_k = (q_{k+1} − q_{k−1})/2dt`` and ``a_k = (q_{k+1} − 2q_k + q_{k−1})/dt²``, each
step solves ``M(q_k) a_k + h(q_k, v_k) + F(v_k) = u_k`` (Newton on ``a_k``, friction implicit).
The samples thus satisfy the equation of motion exactly in the central differences that the
identification uses (docs/methods.md §3), so what remains in an identification is noise,
quantisation, filtering and model structure, not integration error.

Sensors: positions quantised to the encoder resolution; velocity = backward difference of the
quantised positions (what a drive reports); effort = applied torque + Gaussian noise, quantised
(CiA 402 reports torque in per mille of the rated torque).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..model.base_parameters import compute_base_parameters
from ..model.inertial import inertia_matrix
from ..model.regressor import Regressor, RegressorSpec
from ..model.robot import RobotModel, configuration, position_difference
from .config import Payload, SimulatedHardware
from .synthetic import perturbed_inertial

NEWTON_ITERATIONS = 12
FEEDFORWARD_BAND = 0.0005
GROUND_TRUTH_FORMAT = 'robot-ident/ground-truth/1'


@dataclass
class Sample:
    """One control period.

    Parameters
    ----------
    step : int
        Index of the period.
    position, velocity, effort : (n,) ndarray
        What the sensors report.
    q, qd, qdd : (n,) ndarray
        The true state.
    torque : (n,) ndarray
        The noise-free applied joint torque (ground truth, never published as measurement).
    external : (n,) ndarray
        External joint torque acting in this period (``apply_external_torque``).
    """

    step: int
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    torque: np.ndarray
    external: np.ndarray


class RobotSimulator:
    """The simulated robot; ``step`` advances it by one control period.

    A simulated robot is one stateful object stepped by one thread: it keeps its Pinocchio
    ``Data`` with its state.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot (URDF).
    hardware : SimulatedHardware
        The true robot, drives and sensors.

    Attributes
    ----------
    true_inertial : (10·n,) ndarray
        The true standard inertial parameters, with the payload mounted now (``payload``).
    true_model : pinocchio.Model
        The true robot (payload included).
    nominal_model : pinocchio.Model
        What the controller knows.
    payload : Payload or None
        The payload mounted now: ``hardware.payload`` at start if ``hardware.payload_mounted``;
        changed by ``set_payload``.
    step_count : int
        Periods simulated.

    Raises
    ------
    InputError
        For bad settings (``SimulatedHardware.check``) or an unknown payload frame.
    """

    def __init__(self, robot: RobotModel, hardware: SimulatedHardware):
        hardware.check(robot)
        self.robot, self.hardware = robot, hardware
        self._rng = np.random.default_rng(hardware.seed)
        self._bare_inertial = perturbed_inertial(robot, self._rng, hardware.perturbation)
        self.true_model = robot.model.copy()
        self.true_model.armature = np.asarray(hardware.rotor_inertia, dtype=float)
        if hardware.payload is not None:
            _payload_inertia(self.true_model, hardware.payload)    # mounted or not: check it
        self.set_payload(hardware.payload if hardware.payload_mounted else None)
        self.nominal_model = robot.model.copy()
        self.nominal_model.armature = np.asarray(hardware.controller_rotor_inertia, dtype=float)
        self._nominal_data = self.nominal_model.createData()
        self._effort_limit = np.where(robot.effort_limit > 0, robot.effort_limit, np.inf)
        self.step_count = 0
        self._q = np.array(hardware.initial_position, dtype=float)
        self._v_half = np.zeros(robot.n)
        self._a = np.zeros(robot.n)
        self._measured_previous = self._measure_position(self._q)
        self._base = None
        self._external = np.zeros(robot.n)
        self._external_until = 0

    def apply_external_torque(self, torque, duration: float) -> None:
        """Apply an external joint torque (a contact) from the next step on, for a time.

        Parameters
        ----------
        torque : (n,) array_like
            Joint torque the environment applies [N·m or N] (replaces any other).
        duration : float
            [s]; rounded to whole control periods, at least one.

        Raises
        ------
        InputError
            If ``torque`` is not n finite values or ``duration`` is negative.
        """
        torque = np.asarray(torque, dtype=float)
        if torque.shape != (self.robot.n,) or not np.all(np.isfinite(torque)) \
                or not duration >= 0:
            raise InputError(f'external torque: need {self.robot.n} finite values and a '
                             'duration >= 0')
        self._external = torque.copy()
        self._external_until = self.step_count + max(1, round(duration / self.hardware.dt))

    def set_payload(self, payload: Payload | None) -> None:
        """Mount a payload, or remove it, from the next step on (the motion state is kept).

        The true bodies are recomputed from the payload-free true inertias, so switching back
        and forth gives exactly the robot constructed with or without the payload.

        Parameters
        ----------
        payload : Payload or None
            The payload to mount (replacing any other); None: none.

        Raises
        ------
        InputError
            If the payload's frame is not a frame of the URDF (nothing is changed).
        """
        model = self.true_model
        added = None if payload is None else _payload_inertia(model, payload)
        inertial = self._bare_inertial.copy()
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(
                self._bare_inertial[10 * (i - 1):10 * i])
        if added is not None:
            joint, inertia = added
            model.inertias[joint] = model.inertias[joint] + inertia
            inertial[10 * (joint - 1):10 * joint] = model.inertias[joint].toDynamicParameters()
        self.true_inertial = inertial
        self.payload = payload
        self._true_data = model.createData()        # no quantity of the old bodies survives

    @property
    def position(self) -> np.ndarray:
        """(n,) true joint positions now [rad or m] (a copy)."""
        return self._q.copy()

    @property
    def time(self) -> float:
        """Time of the next sample [s] since the start."""
        return self.step_count * self.hardware.dt

    def _measure_position(self, q):
        res = self.hardware.position_resolution
        return np.round(q / res) * res if res > 0 else q.copy()

    def step(self, q_des, qd_des, qdd_des) -> Sample:
        """Control, integrate and measure one period.

        Parameters
        ----------
        q_des, qd_des, qdd_des : (n,) ndarray
            Desired state; a continuous joint's position error is taken the short way round
            (as ``joint_trajectory_controller`` does for it).

        Returns
        -------
        Sample
            The sample at the current time (before the state advances).
        """
        cfg, dt = self.hardware, self.hardware.dt
        position = self._measure_position(self._q)
        velocity = (position - self._measured_previous) / dt
        error = position_difference(self.nominal_model, q_des, position)   # JTC: short way
        command = qdd_des + cfg.kp * error + cfg.kd * (qd_des - velocity)
        u = pin.rnea(self.nominal_model, self._nominal_data,
                     configuration(self.nominal_model, position), velocity, command)
        u += cfg.controller_fc * np.tanh(qd_des / FEEDFORWARD_BAND) + cfg.controller_fv * qd_des
        u = np.clip(u, -self._effort_limit, self._effort_limit)
        external = self._external if self.step_count < self._external_until \
            else np.zeros(len(u))
        a, v = self._solve_acceleration(u + external)
        effort = u + cfg.torque_noise_std * self._rng.standard_normal(len(u))
        res = np.asarray(cfg.effort_resolution)
        effort = np.where(res > 0, np.round(effort / np.where(res > 0, res, 1)) * res, effort)
        sample = Sample(self.step_count, position, velocity, effort, self._q.copy(), v, a, u,
                        external.copy())
        self._v_half = self._v_half + dt * a
        self._q = self._q + dt * self._v_half
        self._a = a
        self._measured_previous = position
        self.step_count += 1
        return sample

    def _solve_acceleration(self, u):
        """a_k, v_k with M a + h(q, v) + F(v) = u and v = v_{k−1/2} + a dt/2 (Newton); ``u``
        the drive and external torques."""
        half = 0.5 * self.hardware.dt
        model, data = self.true_model, self._true_data
        x = configuration(model, self._q)
        m = pin.crba(model, data, x)
        m = np.triu(m) + np.triu(m, 1).T
        v_l = self.hardware.friction.v_l
        a = self._a
        for _ in range(NEWTON_ITERATIONS):
            v = self._v_half + half * a
            friction, slope = self.hardware.friction.torque(v)
            residual = m @ a + pin.nonLinearEffects(model, data, x, v) + friction - u
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
        """The true parameters as plain types (``ground_truth.yaml``).

        Returns
        -------
        dict
            Standard parameters named like the identification regressor's columns (rigid body,
            with the payload mounted now, + ``Ia, fv, fc, offset``), their projection on the
            base parameters, friction, the configured payload (``hardware.payload``, mounted
            or not: ``payload_mounted``), and sensor settings.
        """
        robot, cfg = self.robot, self.hardware
        if self._base is None:          # the structure alone: computed once (0.7 s), kept
            spec = RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True)
            regressor = Regressor(robot, spec)
            self._base = regressor.names, compute_base_parameters(regressor)
        names, base = self._base
        chi = np.concatenate([self.true_inertial, cfg.rotor_inertia, cfg.friction.fv,
                              cfg.friction.fc, cfg.friction.offset])
        friction = {k: np.asarray(v).tolist() for k, v in asdict(cfg.friction).items()
                    if k != 'model'}
        return {
            'format': GROUND_TRUTH_FORMAT,
            'robot': {'urdf': robot.urdf_reference(), 'urdf_sha256': robot.urdf_sha256(),
                      'joints': list(robot.joint_names)},
            'seed': cfg.seed, 'perturbation': cfg.perturbation, 'dt': cfg.dt,
            'standard_parameters': {'names': names, 'values': chi.tolist()},
            'base_parameters': {'names': base.names, 'values': base.project(chi).tolist(),
                                'definition': base.to_dict()},
            'friction': {'model': cfg.friction.model, **friction},
            'payload': None if cfg.payload is None else {
                'frame': cfg.payload.frame, 'mass': float(cfg.payload.mass),
                'com': np.asarray(cfg.payload.com, float).tolist(),
                'inertia': np.asarray(cfg.payload.inertia, float).tolist()},
            'payload_mounted': self.payload is not None,
            'sensors': {'position_resolution': float(cfg.position_resolution),
                        'torque_noise_std': np.asarray(cfg.torque_noise_std).tolist(),
                        'effort_resolution': np.asarray(cfg.effort_resolution).tolist()},
            'controller': {'kp': np.asarray(cfg.kp).tolist(), 'kd': np.asarray(cfg.kd).tolist()},
        }


def _payload_inertia(model: pin.Model, payload: Payload) -> tuple[int, pin.Inertia]:
    """(joint whose body carries the payload, the payload's inertia in that joint's frame)."""
    if not model.existFrame(payload.frame):
        raise InputError(f'payload frame {payload.frame!r} is not a frame of the URDF')
    frame = model.frames[model.getFrameId(payload.frame)]
    inertia = pin.Inertia(payload.mass, np.asarray(payload.com, dtype=float),
                          inertia_matrix(payload.inertia))
    return int(frame.parentJoint), frame.placement.act(inertia)


class TruthLog:
    """Ground-truth time series of a simulation run, grown in chunks.

    Parameters
    ----------
    n : int
        Number of joints.
    chunk : int
        Rows allocated at a time.
    """

    def __init__(self, n: int, chunk: int = 10000):
        self.n, self.chunk = n, chunk
        self._parts: list[np.ndarray] = []
        self._current: np.ndarray | None = None
        self._fill = 0

    def append(self, sample: Sample) -> None:
        """Log the true state, drive torque and external torque of a sample.

        Parameters
        ----------
        sample : Sample
        """
        if self._current is None or self._fill == self.chunk:
            if self._current is not None:
                self._parts.append(self._current)
            self._current = np.empty((self.chunk, 1 + 5 * self.n))
            self._fill = 0
        self._current[self._fill] = np.concatenate(
            [[sample.step], sample.q, sample.qd, sample.qdd, sample.torque, sample.external])
        self._fill += 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The log so far.

        Returns
        -------
        dict of str to ndarray
            ``{'step': (M,) int, 'q', 'qd', 'qdd', 'torque', 'external': (M, n)}``.
        """
        parts = self._parts + ([self._current[:self._fill]] if self._current is not None else [])
        table = np.concatenate(parts) if parts else np.empty((0, 1 + 5 * self.n))
        n = self.n
        out = {'step': table[:, 0].astype(np.int64)}
        for i, key in enumerate(('q', 'qd', 'qdd', 'torque', 'external')):
            out[key] = table[:, 1 + i * n:1 + (i + 1) * n]
        return out
