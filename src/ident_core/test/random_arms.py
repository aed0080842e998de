"""Random serial arms and simulated logs with current-like torque noise, for the tests and the
benchmark of torque estimation (issue 29 §4).

An arm of n revolute joints: links 0.12–0.4 m long, shorter and lighter towards the flange
(masses from 3–8 kg down by a factor 0.6–0.8 per link), each a solid cylinder along the link;
every joint axis turned by ±90° about x from the previous one, or not (random). Its log comes
from ``ident_core.sim`` (the true robot the URDF perturbed by 20 %, rotor inertia, Coulomb +
viscous friction scaled to the link, the computed-torque controller with friction feed-forward
on the drive's fine motor encoder) along a random Fourier excitation, with the sensors of the
issue: the logged positions quantised to 1e-5 rad, the logged torque the true torque plus
white noise of 2 % of the joint's torque range + 0.1 N·m, quantised to 0.02 N·m.
"""
from pathlib import Path

import numpy as np

from ident_core.friction.models import Friction, JointFriction
from ident_core.model.robot import RobotModel, load_robot
from ident_core.sim.config import ENCODER_RESOLUTION, SimulatedHardware
from ident_core.sim.simulator import RobotSimulator
from ident_core.sim.synthetic import fourier_trajectory
from ident_core.torque_estimation.dynamics import DynamicModel

#: The logged encoder's resolution [rad].
ENCODER = 1e-5
#: Torque noise: this fraction of the joint's torque range, plus ``NOISE_FLOOR`` [N·m].
NOISE_SHARE, NOISE_FLOOR = 0.02, 0.1
#: Resolution of the logged torque [N·m].
EFFORT_RESOLUTION = 0.02
#: Resolution of the positions the drive's loop runs on: a 17-bit motor encoder behind 100:1
#: [rad] (``sim.config.ENCODER_RESOLUTION``).
DRIVE_ENCODER = ENCODER_RESOLUTION


def random_arm(folder: Path, n: int, seed: int) -> RobotModel:
    """Write and load a random serial arm.

    Parameters
    ----------
    folder : Path
        Where ``arm<n>_<seed>.urdf`` is written.
    n : int
        Number of revolute joints.
    seed : int
        Seed of the geometry.

    Returns
    -------
    RobotModel
    """
    rng = np.random.default_rng(seed)
    lengths = np.sort(rng.uniform(0.12, 0.4, n))[::-1]
    masses = rng.uniform(3.0, 8.0) * np.cumprod(rng.uniform(0.6, 0.8, n))
    radius = np.linspace(0.06, 0.035, n)
    turns = rng.choice([-np.pi / 2, 0.0, np.pi / 2], size=n)
    turns[1] = np.pi / 2 if turns[1] == 0 else turns[1]       # the shoulder lifts
    parts = ['<?xml version="1.0"?>', f'<robot name="arm{n}_{seed}">',
             '  <link name="link0"><inertial><origin xyz="0 0 0.05"/><mass value="5.0"/>'
             '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/>'
             '</inertial></link>']
    offset = 0.1
    for j in range(n):
        m, length, r = masses[j], lengths[j], radius[j]
        across = m * (3 * r * r + length * length) / 12
        com = rng.uniform(-0.01, 0.01, 2)
        limit = rng.uniform(2.0, 2.9)
        parts += [
            f'  <joint name="joint{j + 1}" type="revolute"><parent link="link{j}"/>'
            f'<child link="link{j + 1}"/><origin xyz="0 0 {offset:.4f}" '
            f'rpy="{turns[j]:.10f} 0 0"/><axis xyz="0 0 1"/><limit lower="{-limit:.3f}" '
            f'upper="{limit:.3f}" velocity="{rng.uniform(1.5, 3.0):.3f}" effort="1000"/>'
            '</joint>',
            f'  <link name="link{j + 1}"><inertial><origin xyz="{com[0]:.4f} {com[1]:.4f} '
            f'{length / 2:.4f}"/><mass value="{m:.4f}"/><inertia ixx="{across:.6f}" ixy="0" '
            f'ixz="0" iyy="{across:.6f}" iyz="0" izz="{m * r * r / 2:.6f}"/></inertial>'
            '</link>']
        offset = length
    parts.append('</robot>')
    path = Path(folder) / f'arm{n}_{seed}.urdf'
    path.write_text('\n'.join(parts) + '\n')
    return load_robot(path)


def simulated_log(robot: RobotModel, seconds: float, seed: int, motion: int = 0,
                  drive_encoder: float = DRIVE_ENCODER) -> tuple[dict, DynamicModel]:
    """A noisy log of the arm along a random excitation, and the true robot's model.

    Parameters
    ----------
    robot : RobotModel
        The arm.
    seconds : float
        Duration at 1 kHz [s].
    seed : int
        Seed of the true robot (bodies perturbed, friction, rotor inertia).
    motion : int
        Seed of the trajectory and of the noise, with ``seed``.
    drive_encoder : float
        Resolution of the positions the controller runs on [rad or m].

    Returns
    -------
    log : dict of str to ndarray
        ``t`` (M,) [s]; ``position``, ``effort`` (M, n) as logged; ``torque``, ``velocity``
        (M, n) the true joint torque and velocity; ``noise`` (n,) the torque noise's standard
        deviation [N·m].
    truth : DynamicModel
        The simulated robot (perturbed bodies, rotor inertia, friction).
    """
    n = robot.n
    rng = np.random.default_rng(seed)
    scale = np.linspace(1.0, 0.3, n)                           # lighter joints, less friction
    fc, fv = rng.uniform(0.5, 2.0, n) * scale, rng.uniform(0.5, 2.0, n) * scale
    friction = Friction(fc, fv, rng.uniform(-0.3, 0.3, n) * scale, np.full(n, 0.001))
    rotor = rng.uniform(0.01, 0.1, n) * scale
    draws = np.random.default_rng([seed, motion])
    t = np.arange(round(seconds * 1000)) * 1e-3
    q, qd, qdd = fourier_trajectory(robot, t, draws, period=10.0, fill=0.5)
    hardware = SimulatedHardware(
        rotor_inertia=rotor, friction=friction, torque_noise_std=np.zeros(n),
        effort_resolution=np.zeros(n), kp=np.full(n, 2500.0), kd=np.full(n, 100.0),
        controller_rotor_inertia=rotor, controller_fc=fc, controller_fv=fv,
        initial_position=q[0], position_resolution=drive_encoder, dt=1e-3, seed=seed,
        perturbation=0.2)
    sim = RobotSimulator(robot, hardware)
    samples = [sim.step(q[k], qd[k], qdd[k]) for k in range(len(t))]
    torque = np.array([s.torque for s in samples])
    position = np.array([s.q for s in samples])
    velocity = np.array([s.qd for s in samples])
    noise = NOISE_SHARE * (torque.max(axis=0) - torque.min(axis=0)) + NOISE_FLOOR
    effort = torque + noise * draws.standard_normal(torque.shape)
    log = {'t': t, 'position': np.round(position / ENCODER) * ENCODER,
           'effort': np.round(effort / EFFORT_RESOLUTION) * EFFORT_RESOLUTION,
           'torque': torque, 'velocity': velocity, 'noise': noise}
    truth = DynamicModel(robot, sim.true_model, None, np.eye(n),
                         JointFriction('improved-stribeck', friction.parameters), 'truth')
    return log, truth
