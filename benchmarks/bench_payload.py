"""Payload identification on the simulated 6-axis arm (issue 11): Table 3 of
payload_identification_2017 reproduced, the model-based quick check, and drive gains from a
known mass.

The simulated hardware is ``config/six_axis_3kg/ident_sim.yaml`` (the true robot: URDF inertias
perturbed by up to 20 %, rotor inertias, Coulomb + viscous friction and offsets, torque noise
and 1 ‰ quantisation, computed-torque control at 1 kHz). One simulator runs every experiment in
turn, as on a real robot: the optimised excitation trajectory (``optimized.yaml``, 8 periods of
10 s) unloaded, then with each payload mounted on the flange; the model-based check uses a 10 s
loaded run of another trajectory (``identification.yaml``, Table 1, 2 periods of 5 s) and a
model identified from the unloaded run (``identify``, pc-wls, rotor inertia); the static method
8 poses (random, 30–70 % of each joint's range) held 2 s each, referenced to the same poses
unloaded or to the model. The payloads, machined
steel (7850 kg/m³), mounted off the flange axis:

* 1.5 kg: cylinder Ø80 × 38.0 mm, axis along the flange z, centre 20 mm off the axis;
* 3 kg: bar 120 × 60 × 53.1 mm (x × y × z), centre 30 mm off the axis.

Printed per payload and method: mass error [%], COM error [mm] (norm), error of the inertia
about the COM as the spectral norm of the difference over the largest principal moment [%],
and the paper's mass error (Table 3). Goals: global mass ≤ 0.1 %, COM ≤ 1 mm, inertia ≤ 10 %;
every method better than the paper; quick check mass ≤ 0.5 %, COM ≤ 3 mm; drive gains (true
gains drawn in ±20 %, recorded effort = torque / gain) within 1 % with the 3 kg payload known.
Exit code 1 if a goal is missed.

    python benchmarks/bench_payload.py [--seed 7]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from ident_core.data.datasets import Dataset
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.excitation.fourier import load_trajectory
from ident_core.model.inertial import inertia_matrix
from ident_core.model.robot import load_robot
from ident_core.model.transmission import Transmission
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan
from ident_core.motion.segments import approach_segment
from ident_core.payload.identify import identify_payload
from ident_core.sim.config import Payload, load_simulation_config
from ident_core.sim.simulator import RobotSimulator
from ident_core.threads import limit_blas_threads

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / 'urdf/six_axis_3kg.urdf'
EXCITATION = REPO / 'config/six_axis_3kg/excitation'
ACCELERATION = [20.0, 20.0, 20.0, 25.0, 25.0, 25.0]          # rad/s², as the excitation node
POSES = 8                                                    # of the static method
PERIODS = 8                                                  # of the identification runs
STEEL = 7850.0                                               # kg/m³
#: payload_identification_2017, Table 3: mass error of each method [%] for 1.5 kg and 3 kg.
PAPER = {'parameter-difference': (3.30, 1.20), 'torque-difference': (1.10, 1.33),
         'global': (0.12, 0.33)}


def cylinder(mass: float, radius: float, offset: float) -> Payload:
    """Steel cylinder on the flange, axis along z, centre ``offset`` along x."""
    length = mass / (STEEL * np.pi * radius ** 2)
    side = mass * (3 * radius ** 2 + length ** 2) / 12
    return Payload(mass, np.array([offset, 0.0, length / 2]),
                   np.array([side, 0.0, side, 0.0, 0.0, mass * radius ** 2 / 2]), 'flange')


def bar(mass: float, a: float, b: float, offset: float) -> Payload:
    """Steel bar a × b × c on the flange (c from the mass), centre ``offset`` along x."""
    c = mass / (STEEL * a * b)
    return Payload(mass, np.array([offset, 0.0, c / 2]),
                   np.array([mass * (b * b + c * c) / 12, 0.0, mass * (a * a + c * c) / 12, 0.0,
                             0.0, mass * (a * a + b * b) / 12]), 'flange')


PAYLOADS = {'1.5 kg': cylinder(1.5, 0.04, 0.02), '3 kg': bar(3.0, 0.12, 0.06, 0.03)}


class Experiments:
    """One simulated robot (``config/six_axis_3kg/ident_sim.yaml``, no payload at start) that runs
    excitation trajectories one after the other, as on a real robot.

    Parameters
    ----------
    robot : RobotModel
        The nominal robot.
    seed : int
        Simulator seed (true robot, noise).
    """

    def __init__(self, robot, seed: int):
        hardware = load_simulation_config(REPO / 'config/six_axis_3kg/ident_sim.yaml', seed=seed,
                                          payload_mass=0.0).hardware(robot.n)
        self.robot, self.sim = robot, RobotSimulator(robot, hardware)
        self.held = np.array(hardware.initial_position, dtype=float)

    def record(self, name: str, periods: int | None = None) -> Dataset:
        """Run a trajectory from rest where the robot is (approach, periods, stop, as the
        excitation node plans them); the periodic part as a Dataset."""
        robot, sim = self.robot, self.sim
        trajectory = load_trajectory(EXCITATION / f'{name}.yaml')
        limits = JointLimits.from_robot(robot, ACCELERATION, trajectory.joint_names)
        q_now = sim.step(self.held, np.zeros(robot.n), np.zeros(robot.n)).position
        plan = ExcitationPlan(trajectory, q_now, limits, periods)
        t0, rows = sim.time, []
        while sim.time - t0 < plan.duration:
            t = sim.time - t0
            s = sim.step(*(x[0] for x in plan.sample(t)))
            if plan.excite_start <= t < plan.stop_start:
                rows.append((t, s.position, s.velocity, s.effort))
        self.held = plan.sample(plan.duration)[0][0]
        return self._dataset(name, rows)

    def hold_poses(self, poses: np.ndarray, hold: float = 2.0) -> Dataset:
        """Move to each pose (shortest quintic within the limits) and hold it ``hold`` s."""
        robot, sim = self.robot, self.sim
        limits = JointLimits.from_robot(robot, ACCELERATION)
        t0, rows = sim.time, []
        for pose in poses:
            segment = approach_segment(self.held, (pose, np.zeros(robot.n), np.zeros(robot.n)),
                                       limits)
            start = sim.time
            while sim.time - start < segment.duration + hold:
                s = sim.step(*(x[0] for x in segment.evaluate(sim.time - start)))
                rows.append((sim.time - t0, s.position, s.velocity, s.effort))
            self.held = pose
        return self._dataset('poses', rows)

    def _dataset(self, name: str, rows: list) -> Dataset:
        t, q, qd, tau = (np.array(x) for x in zip(*rows))
        return Dataset(name, list(self.robot.joint_names), t - t[0], q, qd, tau,
                       Transmission.identity(self.robot.n))


def errors(estimate, payload: Payload) -> tuple[float, float, float | None]:
    """(mass error %, COM error mm, inertia error % of the largest principal moment)."""
    true_inertia = inertia_matrix(payload.inertia)
    mass = 100 * abs(estimate.mass / payload.mass - 1)
    com = 1e3 * float(np.linalg.norm(estimate.com - payload.com))
    if estimate.inertia is None:
        return mass, com, None
    spread = np.linalg.norm(estimate.inertia - true_inertia, 2)
    return mass, com, 100 * spread / np.linalg.eigvalsh(true_inertia)[-1]


def table(result, payload: Payload, label: str) -> list[str]:
    """Rows: method, mass %, COM mm, inertia %, paper's mass %."""
    k = 0 if payload.mass < 2 else 1
    rows = []
    for method, estimate in result.estimates.items():
        mass, com, inertia = errors(estimate, payload)
        paper = f'{PAPER[method][k]:.2f}' if method in PAPER else '-'
        cell = 'not estimated' if inertia is None else f'{inertia:.2f}'
        rows.append(f'{label:<8}{method:<22}{mass:>10.4f}{com:>10.3f}{cell:>14}{paper:>10}')
    for method, why in result.failures.items():
        rows.append(f'{label:<8}{method:<22}  no estimate: {why[:70]}')
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seed', type=int, default=7, help='simulator seed (true robot, noise)')
    args = parser.parse_args()
    robot = load_robot(URDF)
    lab = Experiments(robot, args.seed)
    unloaded = lab.record('optimized', periods=PERIODS)
    lo, hi = robot.finite_limits()
    poses = lo + (hi - lo) * np.random.default_rng(args.seed).uniform(0.3, 0.7, (POSES, robot.n))
    poses_unloaded = lab.hold_poses(poses)
    model = identify(robot, [unloaded], IdentificationConfig(rotor_inertia=True))
    rng = np.random.default_rng(args.seed)
    gains = rng.uniform(0.8, 1.2, robot.n)
    failed = []
    print(f'{"payload":<8}{"method":<22}{"mass %":>10}{"COM mm":>10}{"inertia %":>14}'
          f'{"paper %":>10}')
    for label, payload in PAYLOADS.items():
        lab.sim.set_payload(payload)
        loaded = lab.record('optimized', periods=PERIODS)
        short = lab.record('identification', periods=2)
        poses_loaded = lab.hold_poses(poses)
        lab.sim.set_payload(None)
        result = identify_payload(robot, [loaded], 'all', frame='flange', unloaded=[unloaded])
        result.failures.pop('static')           # no rest in an excitation run: below
        quick = identify_payload(robot, [short], 'model', frame='flange', model=model)
        result.estimates['model (10 s)'] = quick.result
        for reference, inputs in (('unloaded', {'unloaded': [poses_unloaded]}),
                                  ('model', {'model': model})):
            static = identify_payload(robot, [poses_loaded], 'static', frame='flange', **inputs)
            result.estimates[f'static ({reference})'] = static.result
        for line in table(result, payload, label):
            print(line)
        failed += _check(result, payload)
        if label == '3 kg':
            scaled = [replace(d, effort=d.effort / gains) for d in (unloaded, loaded)]
            found = identify_payload(robot, scaled[1:], 'global', frame='flange',
                                     unloaded=scaled[:1], known_mass=payload.mass)
            error = 100 * np.abs(found.drive_gains.gains / gains - 1)
            print(f'drive gains, 3 kg known: true {np.round(gains, 4).tolist()}, error % '
                  + ' '.join(f'{e:.3f}' for e in error))
            if error.max() > 1.0:
                failed.append(f'drive gain error {error.max():.2f} % > 1 %')
    for problem in failed:
        print(f'GOAL MISSED: {problem}')
    return 1 if failed else 0


def _check(result, payload: Payload) -> list[str]:
    """The goals of issue 11 this result misses."""
    out = []
    k = 0 if payload.mass < 2 else 1
    for method, estimate in result.estimates.items():
        mass, com, inertia = errors(estimate, payload)
        if method in PAPER and mass >= PAPER[method][k]:
            out.append(f'{method} {payload.mass} kg: mass {mass:.3f} % not below the paper')
        if method == 'global' and (mass > 0.1 or com > 1.0 or inertia > 10.0):
            out.append(f'global {payload.mass} kg: mass {mass:.3f} %, COM {com:.2f} mm, '
                       f'inertia {inertia:.1f} %')
        if method == 'model (10 s)' and (mass > 0.5 or com > 3.0):
            out.append(f'model 10 s {payload.mass} kg: mass {mass:.3f} %, COM {com:.2f} mm')
    return out


if __name__ == '__main__':
    with limit_blas_threads():
        sys.exit(main())
