"""Friction identification on the simulated 6-axis arm with improved-Stribeck friction of the
size of stribeck_friction_sa_ga_2020 Table 3 (issue 12), and on the real recordings.

    python benchmarks/bench_friction.py [--quick] [--sections 1 2 3 4]

The arm is the one the ROS graph's ``ident_sim`` node runs in ``make demo-friction``
(``FRICTION_ARM``; ``RobotSimulator``: 1 kHz computed-torque control, encoder quantisation,
effort noise and quantisation).

1. Joint-wise friction experiments (``friction_experiment``: a fast cosine at 60 % of
   ``VELOCITY_LIMIT``, a slow one peaking at ``SLOW_SPEED``), as the friction demo runs them
   through the graph. Friction samples against the true rigid body; LSQ, GA and SA-GA per
   joint: parameters, error to the truth, time (Tables 1 and 3).
2. A 2-harmonic Fourier validation trajectory: residual sum of squares per model (Table 4).
3. Whole-robot identification, Fourier runs with pauses and reversals, linear model vs
   improved Stribeck (at ``CUTOFF_HZ``, then at 80, 20 and the default 10 Hz): validation
   error against the noise-free torque of another run, in all and on the joint torques while
   their joint slides (faster than ``STICK_SLIP_SPEED``).
4. Real data (KUKA LWR4 m1 → m3, Stäubli TX40 halves): identify with each friction model.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from ident_core.data.datasets import Dataset
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.estimation.preprocessing import preprocess
from ident_core.excitation.fourier import FourierTrajectory
from ident_core.excitation.jointwise import friction_constraints, friction_experiment
from ident_core.friction.identify import FrictionConfig, identify_friction, validation_rss
from ident_core.friction.models import ORDER
from ident_core.friction.samples import RigidBodyModel
from ident_core.model.robot import load_robot
from ident_core.model.transmission import Transmission
from ident_core.motion.plan import ExcitationPlan
from ident_core.sim.config import load_simulation_config
from ident_core.sim.evaluation import compare_friction, worst_errors
from ident_core.sim.simulator import RobotSimulator
from ident_core.threads import limit_blas_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
from data_dirs import recording_dir  # data/, then ../shared/data

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
#: The simulated arm of ``make demo-friction``: Table 3's improved-Stribeck friction on joints
#: 1–3 (joints 4–6: its joint 1 scaled by 1/4, 1/4, 1/8) and industrial-size rotors.
FRICTION_ARM = REPO / 'config' / 'six_axis_3kg' / 'ident_sim_friction.yaml'
#: Velocity limits of the experiments [rad/s]: friction of Table 3's size leaves room in the
#: URDF's effort limits up to these speeds (as the friction demo's ``velocity_limits``).
VELOCITY_LIMIT = [2.0, 1.2, 0.35, 3.0, 3.0, 3.0]
#: Peak speed of the slow cosine [rad/s] (``friction_experiment``).
SLOW_SPEED = 0.04
#: Speed below which a joint sticks and slips (section 3) [rad/s].
STICK_SLIP_SPEED = 0.03
#: Cut-off of whole-robot identification in section 3 [Hz], the friction demo's
#: (``config/six_axis_3kg/identification_node_friction.yaml``; other cut-offs are printed too).
CUTOFF_HZ = 40.0


def arm_simulator(path=FRICTION_ARM, **overrides):
    """The simulator of an ``ident_sim`` parameter file, as the graph's node runs it (with
    ``overrides`` of its settings)."""
    robot = load_robot(URDF)
    cfg = load_simulation_config(path, **overrides)
    return robot, RobotSimulator(robot, cfg.hardware(robot.n))


def true_friction(sim) -> dict[str, dict[str, float]]:
    """Per joint, the simulator's friction parameters (``ORDER``)."""
    values = sim.hardware.friction.parameters
    return {joint: {n: float(values[n][j]) for n in ORDER}
            for j, joint in enumerate(sim.robot.joint_names)}


def run(robot, sim, stages, name, limits):
    """Run a plan from the simulator's position; the recording and the noise-free torques."""
    q_now = sim.step(sim.position, np.zeros(robot.n), np.zeros(robot.n)).position
    plan = ExcitationPlan(stages, q_now, limits)
    t = np.arange(0.0, plan.duration, sim.hardware.dt)
    q, qd, qdd = plan.sample(t)
    rows = [sim.step(q[k], qd[k], qdd[k]) for k in range(len(t))]
    position = np.array([r.position for r in rows])
    effort = np.array([r.effort for r in rows])
    truth = np.array([r.torque for r in rows])
    measured = Dataset(name, list(robot.joint_names), t, position, None, effort,
                       Transmission.identity(robot.n))
    clean = Dataset(name + ' (noise-free)', list(robot.joint_names), t, position, None, truth,
                    Transmission.identity(robot.n))
    return measured, clean


def fourier(robot, limits, harmonics, seed, period=10.0, pause_periods=1):
    """A random Fourier trajectory filling half the limits (range, velocity, 5 rad/s²)."""
    rng = np.random.default_rng(seed)
    lo, hi = limits.lower, limits.upper
    wf = 2 * math.pi / period
    a = rng.normal(size=(robot.n, harmonics)) / np.arange(1, harmonics + 1)
    b = rng.normal(size=(robot.n, harmonics)) / np.arange(1, harmonics + 1)
    traj = FourierTrajectory(list(robot.joint_names), wf, (lo + hi) / 2, a, b, pause_periods)
    t = np.arange(0, period, 1e-3)
    q, qd, qdd = traj.evaluate(t)
    q -= traj.q0
    scale = np.minimum(0.5 * (hi - lo) / 2 / np.abs(q).max(0),
                       np.minimum(0.5 * limits.velocity / np.abs(qd).max(0),
                                  0.5 * 5.0 / np.abs(qdd).max(0)))
    return FourierTrajectory(list(robot.joint_names), wf, (lo + hi) / 2, a * scale[:, None],
                             b * scale[:, None], pause_periods, f'fourier{harmonics}_{seed}')


def jointwise_experiments(robot, hold):
    """One joint-wise friction experiment per joint around ``hold``."""
    limits = friction_constraints(robot, VELOCITY_LIMIT, 5.0)
    return [friction_experiment(limits, joint, hold, SLOW_SPEED) for joint in robot.joint_names]


def true_rigid(robot, sim):
    params = np.concatenate([sim.true_inertial, sim.hardware.rotor_inertia])
    return RigidBodyModel(robot, params, True, 'simulator truth')


def section_jointwise(quick):
    robot, sim = arm_simulator()
    limits = friction_constraints(robot, VELOCITY_LIMIT, 5.0).limits
    data = []
    for experiment in jointwise_experiments(robot, sim.position):
        measured, _ = run(robot, sim, experiment.stages(held=sim.position), experiment.name,
                          limits)
        data.append(measured)
    optimizers = ('lsq',) if quick else ('lsq', 'ga', 'sa-ga')
    t0 = time.perf_counter()
    result = identify_friction(robot, data, true_rigid(robot, sim),
                               models=('coulomb-viscous', 'stribeck', 'improved-stribeck'),
                               optimizers=optimizers)
    print(f'\n1. joint-wise experiments, {sum(d.t[-1] for d in data):.0f} s simulated; '
          f'fits in {time.perf_counter() - t0:.0f} s')
    truth = true_friction(sim)
    rows = compare_friction({joint: result.fits[joint]['improved-stribeck']
                             for joint in robot.joint_names}, truth)
    print_table(rows, truth)
    # 2. Table 4
    check, _ = run(robot, sim, [fourier(robot, limits, 2, seed=11, period=8.0,
                                        pause_periods=3)], 'fourier2', limits)

    rss = validation_rss(robot, [check], true_rigid(robot, sim), result.fits, FrictionConfig())
    print('\n2. validation on a 2-harmonic Fourier trajectory: residual sum of squares')
    print(f'{"joint":<10}{"coulomb-viscous":>18}{"stribeck":>14}{"improved":>14}{"reduction":>11}')
    gains = []
    for joint, r in rss.items():
        gain = 100 * (1 - r['improved-stribeck'] / r['coulomb-viscous'])
        gains.append(gain)
        print(f'{joint:<10}{r["coulomb-viscous"]:>18.5g}{r["stribeck"]:>14.5g}'
              f'{r["improved-stribeck"]:>14.5g}{gain:>10.1f}%')
    print(f'smallest reduction {min(gains):.1f} % (goal >= 25 %; paper 17.7–33.6 %)')


def print_table(rows, truth):
    """Per joint, each optimiser's improved-Stribeck parameters and errors to the truth."""
    for joint, by_optimizer in rows.items():
        print(f'{joint} improved-stribeck' + ''.join(f'{n:>10}' for n in ORDER)
              + f'{"RSS":>11}{"time s":>8}')
        print(f'{"truth":<26}' + ''.join(f'{truth[joint][n]:>10.4g}' for n in ORDER))
        for optimizer, row in by_optimizer.items():
            print(f'{optimizer:<26}' + ''.join(f'{row["parameters"][n]:>10.4g}' for n in ORDER)
                  + f'{row["rss"]:>11.4g}{row["seconds"]:>8.1f}')
            print(f'{"  error %":<26}'
                  + ''.join(f'{row["error_percent"][n]:>+10.2f}' for n in ORDER))
            for w in row['warnings']:
                print(f'{"":<26}warning: {w}')
    worst = worst_errors(rows)
    print(f'worst error: fc, fs, fv, offset {worst["linear"]["error"]:.2f} % (goal 2 %); '
          f'vs, v_l {worst["shape"]["error"]:.2f} % (goal 10 %)')


def section_whole_robot():
    # from the zero pose: the file's start pose is where the friction demo's trajectory starts
    robot, sim = arm_simulator(initial_position=[0.0])
    limits = friction_constraints(robot, VELOCITY_LIMIT, 5.0).limits
    stages = [fourier(robot, limits, 5, seed=s, period=10.0, pause_periods=2)
              for s in (21, 22, 23)]
    train, _ = run(robot, sim, stages[:2], 'fourier5 with pauses', limits)
    _, clean = run(robot, sim, stages[2:], 'fourier5 check', limits)
    print(f'\n3. whole-robot identification of the simulated arm ({FRICTION_ARM.name}): two '
          'Fourier runs joined by a stop, with pauses and reversals; validation against the '
          'noise-free torque of a third run')
    runs = [('coulomb-viscous-offset', CUTOFF_HZ)] + [('improved-stribeck', c)
                                                      for c in (CUTOFF_HZ, 80.0, 20.0, None)]
    for friction, cutoff in runs:
        t0 = time.perf_counter()
        model = identify(robot, [train], IdentificationConfig(
            friction=friction, rotor_inertia=True, cutoff_hz=cutoff))
        check = validate(model, clean)
        error = check.report()['relative_error_percent']
        p = preprocess(clean, robot, model.config)
        sliding = np.abs(p.trimmed(p.qd)) >= STICK_SLIP_SPEED
        residual = np.where(sliding, check.predicted - check.measured, 0.0)
        error_sliding = 100 * np.linalg.norm(residual) / np.linalg.norm(
            np.where(sliding, check.measured, 0.0))
        print(f'{friction:<24}{p.cutoff_hz:>4.0f} Hz: validation error {error:.3f} % (goal '
              f'{"<= 0.5" if "stribeck" in friction else ">= 1"} %); on the joint torques while '
              f'their joint is faster than {STICK_SLIP_SPEED} rad/s ({sliding.mean():.0%}) '
              f'{error_sliding:.3f} % ({time.perf_counter() - t0:.0f} s)')
        if 'stribeck' in friction:
            shape = model.actuator_values()
            print(f'{"":<24}vs {np.round(shape["vs"], 4).tolist()}, '
                  f'v_l {np.round(shape["v_l"], 4).tolist()}')


def section_real():
    from ident_core.data.datasets import load_dataset

    cases = []
    datasets = REPO / 'config' / 'datasets'
    kuka = recording_dir('kuka_lwr4')
    if kuka.exists():
        os.environ['DATA_DIR'] = str(kuka)
        robot = load_robot(kuka / 'kuka_lwr4.urdf')
        runs = [load_dataset(datasets / 'kuka_lwr4' / f'measurements_{i}.yaml', robot.joint_names)
                for i in (1, 3)]
        cases.append(('KUKA m1 -> m3', robot, [runs[0]], runs[1], False))
    tx40 = recording_dir('staubli_tx40')
    if tx40.exists():
        os.environ['TX40_DIR'] = str(tx40)
        robot = load_robot(tx40 / 'tx40_mdh_modified.urdf')
        first, last = load_dataset(datasets / 'staubli_tx40' / 'tx40.yaml').split(0.7)
        cases.append(('TX40 70/30', robot, [first], last, True))
    if not cases:
        print('\n4. real data: none found (skipped)')
        return
    print('\n4. real data: validation error [%] per friction model')
    for name, robot, train, check, rotor in cases:
        line = f'{name:<16}'
        for friction in ('coulomb-viscous-offset', 'stribeck', 'improved-stribeck'):
            try:
                model = identify(robot, train, IdentificationConfig(friction=friction,
                                                                    rotor_inertia=rotor))
                error = validate(model, check).report()['relative_error_percent']
                line += f'{friction} {error:.2f}   '
            except Exception as exc:         # report, do not hide
                line += f'{friction} failed: {exc}   '
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='LSQ only in section 1')
    parser.add_argument('--sections', type=int, nargs='+', choices=(1, 2, 3, 4),
                        default=[1, 2, 3, 4], help='sections to run (1 and 2 run together)')
    args = parser.parse_args()
    with limit_blas_threads():
        if {1, 2} & set(args.sections):
            section_jointwise(args.quick)
        if 3 in args.sections:
            section_whole_robot()
        if 4 in args.sections:
            section_real()
    return 0


if __name__ == '__main__':
    sys.exit(main())
