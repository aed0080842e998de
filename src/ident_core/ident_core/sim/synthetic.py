"""Synthetic recordings with known parameters, for tests and benchmarks (docs/methods.md §9).

Torques come from Pinocchio's RNEA with the true inertial parameters plus the joint-side actuator
model of payload_identification_2017 eq. (4) (``Ia qdd + fv qd + fc sign(qd) + offset``), so they
do not depend on the identification regressor. Trajectories are finite Fourier series
(docs/methods.md §6, eq. (14)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..data.datasets import Dataset
from ..excitation.fourier import FourierBasis
from ..model.robot import RobotModel, configuration
from ..model.transmission import Transmission


@dataclass
class TrueParameters:
    """Ground truth of a simulated robot.

    Parameters
    ----------
    inertial : (10·n,) ndarray
        Standard inertial parameters (Pinocchio order per link).
    Ia, fv, fc, offset : (n,) ndarray
        Joint-side rotor inertia, viscous and Coulomb friction, torque offset.
    """

    inertial: np.ndarray
    Ia: np.ndarray
    fv: np.ndarray
    fc: np.ndarray
    offset: np.ndarray

    def vector(self, terms: tuple[str, ...]) -> np.ndarray:
        """The standard parameter vector of a regressor.

        Parameters
        ----------
        terms : tuple of str
            The regressor's actuator terms (``RegressorSpec.actuator_terms``).

        Returns
        -------
        (p,) ndarray
        """
        return np.concatenate([self.inertial] + [getattr(self, t) for t in terms])


def perturbed_parameters(robot: RobotModel, rng: np.random.Generator,
                         spread: float = 0.2) -> TrueParameters:
    """URDF inertias perturbed by ``perturbed_inertial`` and random actuator parameters.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot.
    rng : numpy.random.Generator
        Source of randomness.
    spread : float
        Relative spread of the inertial parameters.

    Returns
    -------
    TrueParameters
        Ia in [0.01, 0.1] kg·m², fv and fc in [0.5, 3], offset in [−0.5, 0.5].
    """
    n = robot.n
    return TrueParameters(perturbed_inertial(robot, rng, spread), rng.uniform(0.01, 0.1, n),
                          rng.uniform(0.5, 3.0, n), rng.uniform(0.5, 3.0, n),
                          rng.uniform(-0.5, 0.5, n))


def perturbed_inertial(robot: RobotModel, rng: np.random.Generator,
                       spread: float = 0.2) -> np.ndarray:
    """Standard inertial parameters of the URDF, each link perturbed.

    Each link's mass, centre of mass and rotational inertia are scaled by factors drawn
    uniformly in ``1 ± spread``: the result stays physically consistent.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot.
    rng : numpy.random.Generator
        Source of randomness.
    spread : float
        Relative spread, in [0, 1).

    Returns
    -------
    (10·n_links,) ndarray
    """
    inertial = []
    for i in range(1, robot.model.njoints):
        nominal = robot.model.inertias[i]
        scale = rng.uniform(1 - spread, 1 + spread, size=3)
        inertia = pin.Inertia(nominal.mass * scale[0], nominal.lever * scale[1],
                              nominal.inertia * scale[2])
        inertial.append(inertia.toDynamicParameters())
    return np.concatenate(inertial)


def with_payload(truth: TrueParameters, frame, payload: np.ndarray) -> TrueParameters:
    """The true parameters with a payload fixed to the robot.

    Parameters
    ----------
    truth : TrueParameters
        Without the payload.
    frame : ident_core.payload.frame.PayloadFrame
        Where the payload is fixed.
    payload : (10,) ndarray
        Its standard parameters in that frame (Pinocchio order, inertia about the frame
        origin).

    Returns
    -------
    TrueParameters
        The carrying body's parameters increased by ``frame.transform @ payload``.
    """
    inertial = truth.inertial.copy()
    inertial[frame.columns] += frame.transform @ np.asarray(payload, dtype=float)
    return TrueParameters(inertial, truth.Ia, truth.fv, truth.fc, truth.offset)


def fourier_trajectory(robot: RobotModel, t: np.ndarray, rng: np.random.Generator,
                       harmonics: int = 5, period: float = 10.0, fill: float = 0.6):
    """A random finite Fourier series inside the joint limits.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    t : (M,) ndarray
        Times [s].
    rng : numpy.random.Generator
        Source of randomness.
    harmonics : int
        N of eq. (14).
    period : float
        2π/wf [s].
    fill : float
        Fraction of the position range and velocity limit the motion may use.

    Returns
    -------
    q, qd, qdd : (M, n) ndarray
        Closed-form positions, velocities, accelerations.
    """
    n = robot.n
    order = np.arange(1, harmonics + 1)
    a = rng.normal(size=(n, harmonics)) / order
    b = rng.normal(size=(n, harmonics)) / order
    q, qd, qdd = FourierBasis.at(2 * np.pi / period, harmonics, t).motion(a, b)
    lo, hi = robot.finite_limits()
    centre = (lo + hi) / 2
    q -= q.mean(axis=0)
    scale = np.minimum(fill * (hi - lo) / 2 / np.abs(q).max(axis=0),
                       fill * robot.velocity_limit / np.abs(qd).max(axis=0))
    return centre + q * scale, qd * scale, qdd * scale


def simulate_torques(robot: RobotModel, truth: TrueParameters, q, qd, qdd) -> np.ndarray:
    """Joint torques by RNEA with the true inertias plus the actuator model.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot.
    truth : TrueParameters
        The true parameters.
    q, qd, qdd : (M, n) ndarray
        Motion.

    Returns
    -------
    (M, n) ndarray
        [N·m or N].
    """
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(truth.inertial[10 * (i - 1):10 * i])
    data, x = model.createData(), configuration(model, q)
    tau = np.array([pin.rnea(model, data, x[k], qd[k], qdd[k]) for k in range(len(q))])
    return tau + truth.Ia * qdd + truth.fv * qd + truth.fc * np.sign(qd) + truth.offset


def synthetic_dataset(robot: RobotModel, truth: TrueParameters, duration: float, rate: float,
                      seed: int, torque_noise: float = 0.0, harmonics: int = 5,
                      period: float = 10.0) -> tuple[Dataset, np.ndarray]:
    """A recording of a random Fourier trajectory with Gaussian torque noise.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot.
    truth : TrueParameters
        The true parameters.
    duration : float
        [s].
    rate : float
        Sample rate [Hz].
    seed : int
        Seed of the trajectory and the noise.
    torque_noise : float
        Standard deviation of the noise [N·m].
    harmonics : int
        N of eq. (14).
    period : float
        [s].

    Returns
    -------
    dataset : Dataset
    torque : (M, n) ndarray
        Noise-free torques.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(duration * rate))) / rate
    q, qd, qdd = fourier_trajectory(robot, t, rng, harmonics, period)
    tau = simulate_torques(robot, truth, q, qd, qdd)
    noisy = tau + torque_noise * rng.standard_normal(tau.shape)
    dataset = Dataset(f'synthetic(seed={seed})', list(robot.joint_names), t, q, qd, noisy,
                      Transmission.identity(robot.n))
    return dataset, tau
