"""``robot-ident excite``: optimise an excitation trajectory, or evaluate one
(docs/methods.md §6).

    robot-ident excite --urdf URDF [--config CFG] [--optimizer ga+local] [--objective cond|dopt]
                       [--harmonics N] [--period T] [--seed S] [--budget SECONDS] --out TRAJ.yaml
    robot-ident excite --evaluate TRAJ.yaml --urdf URDF [--config CFG]
    robot-ident excite --jointwise JOINT [JOINT ...] --urdf URDF [--config CFG] [--hold Q ...]
                       [--amplitude A_FAST A_SLOW] [--cosine-period T_FAST T_SLOW]
                       [--cosine-periods N_FAST N_SLOW] --out FILE.yaml  # '{joint}': several
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import InputError
from ..excitation.config import OBJECTIVES, default_config, load_excitation_config
from ..excitation.constraints import Constraints
from ..excitation.fourier import load_trajectory
from ..excitation.jointwise import FAST, SLOW, CosineSpec, design_jointwise
from ..excitation.optimize import OPTIMIZERS, optimize_excitation
from ..excitation.problem import ExcitationProblem
from ..model.robot import load_robot
from .progress import progress_bar


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``excite``: the robot, the config file, either ``--evaluate`` or the
    optimiser settings and ``--out``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-parser of ``excite``.
    """
    p.add_argument('--urdf', required=True, help='robot URDF')
    p.add_argument('--config', metavar='CFG', help='excitation config YAML (limits, collision, '
                   'optimiser settings; see ident_core/excitation/config.py)')
    p.add_argument('--evaluate', metavar='TRAJ.yaml', help='evaluate this trajectory instead')
    p.add_argument('--optimizer', choices=OPTIMIZERS, default='ga+local')
    p.add_argument('--objective', choices=OBJECTIVES)
    p.add_argument('--harmonics', type=int, metavar='N')
    p.add_argument('--period', type=float, metavar='T', help='s')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--budget', type=float, default=120.0, metavar='SECONDS')
    p.add_argument('--jointwise', nargs='+', metavar='JOINT', help='write joint-wise cosine '
                   'experiments for friction identification instead (one file per joint)')
    p.add_argument('--hold', nargs='+', type=float, metavar='Q', help='--jointwise: positions '
                   'of all joints, the moving joint\'s its centre (default: 0, the moving joint '
                   'mid-range)')
    p.add_argument('--amplitude', nargs=2, type=float, metavar=('FAST', 'SLOW'),
                   help='--jointwise: cosine amplitudes, rad or m')
    p.add_argument('--cosine-period', nargs=2, type=float, metavar=('FAST', 'SLOW'),
                   help='--jointwise: cosine periods, s')
    p.add_argument('--cosine-periods', nargs=2, type=int, metavar=('FAST', 'SLOW'),
                   default=(FAST[2], SLOW[2]), help='--jointwise: periods run of each cosine')
    p.add_argument('--out', metavar='TRAJ.yaml')
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Optimise and write the trajectory (0), or evaluate one (1 if it violates a
    constraint); bad input and infeasible problems raise."""
    config = load_excitation_config(args.config) if args.config else default_config()
    robot = load_robot(args.urdf, config.locked_joints)
    if args.evaluate:
        return _evaluate(args, robot, config)
    if args.jointwise:
        return _jointwise(args, robot, config)
    if not args.out:
        raise InputError('excite: give --out TRAJ.yaml (or --evaluate TRAJ.yaml)')
    config = config.updated(objective=args.objective, harmonics=args.harmonics,
                            period=args.period)
    problem = ExcitationProblem(robot, config)
    with progress_bar(args, unit='it') as bar:
        result = optimize_excitation(problem, args.optimizer, args.seed, args.budget,
                                     bar.stage, name=Path(args.out).stem)
    out = result.trajectory.to_file().write(args.out)
    for stage in result.stages:
        print(f'{stage["name"]:<8} cond {stage["cond"]:10.4g}  dopt {stage["dopt"]:10.4g}  '
              f'{stage["seconds"]:7.1f} s  {stage["evaluations"]} evaluations')
    _print(result.objectives, result.margins)
    print(f'{result.seconds:.1f} s; trajectory written to {out}')
    return 0


def _jointwise(args, robot, config) -> int:
    """Write one checked joint-wise cosine experiment per joint (``design_jointwise``)."""
    if not args.out or (len(args.jointwise) > 1 and '{joint}' not in args.out):
        raise InputError("excite --jointwise: give --out FILE.yaml (with '{joint}' in it for "
                         'several joints)')
    if args.hold is not None and len(args.hold) != robot.n:
        raise InputError(f'--hold: {len(args.hold)} positions given for the {robot.n} joints '
                         f'{", ".join(robot.joint_names)}')
    constraints = Constraints(robot, config)
    for joint in args.jointwise:
        cosines = None
        if args.amplitude or args.cosine_period:
            if not (args.amplitude and args.cosine_period):
                raise InputError('--amplitude and --cosine-period go together')
            cosines = [CosineSpec(amplitude=a, period=t, periods=k) for a, t, k in
                       zip(args.amplitude, args.cosine_period, args.cosine_periods)]
        experiment = design_jointwise(constraints, joint, args.hold, cosines,
                                      periods=tuple(args.cosine_periods))
        out = experiment.to_file().write(args.out.replace('{joint}', joint))
        speeds = ', '.join(f'{c.amplitude:.3g} rad × {c.period:.3g} s × {c.periods} '
                           f'(peak {2 * math.pi * c.amplitude / c.period:.3g} rad/s)'
                           for c in experiment.cosines)
        print(f'{joint}: centre {experiment.hold[experiment.index]:.4g}, cosines {speeds}; '
              f'{experiment.duration:.1f} s; written to {out}')
    return 0


def _evaluate(args, robot, config) -> int:
    trajectory = load_trajectory(args.evaluate)
    config = config.updated(harmonics=trajectory.harmonics, period=trajectory.period)
    problem = ExcitationProblem(robot, config)
    x = problem.genes(trajectory)
    report = problem.report(x)
    print(f'{trajectory.name}: {trajectory.harmonics} harmonics, period {trajectory.period:.4g} s,'
          f' {len(robot.joint_names)} joints; limits of {config.source} '
          f'(margin {config.limits.margin:g})')
    _print(report['objectives'], report['margins'])
    problems = problem.violations(x)
    for line in problems:
        print(f'VIOLATION: {line}')
    return 1 if problems else 0


def _print(objectives: dict, margins: dict) -> None:
    print(f'condition number {objectives["cond"]:.6g}   −log det(WᵀW/M) {objectives["dopt"]:.6g}'
          f'   ({objectives["base_parameters"]} base parameters, {objectives["samples"]} samples)')
    kinds = [k for k in ('position', 'velocity', 'acceleration', 'torque') if k in margins]
    print(f'{"margin to limit":<16}' + ''.join(f'{k:>14}' for k in kinds))
    for joint in margins['position']:
        print(f'{joint:<16}' + ''.join(f'{margins[k][joint]:>14.4g}' for k in kinds))
    if 'collision' in margins:
        c = margins['collision']
        print(f'min distance to collision {c["distance"]:.4g} m ({c["pair"][0]} – {c["pair"][1]} '
              f'at t = {c["t"]:.3f} s; required {c["clearance"]:g} m)')

