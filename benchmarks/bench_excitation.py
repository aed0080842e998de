"""Optimal excitation (issue 4): random best-of-200 vs GA vs GA + local refinement.

For the 6-axis arm of urdf/, the KUKA LWR4+ of data/ or ../shared/data (skipped if absent) and
the 7-DOF Franka Panda of the ``example-robot-data`` package (skipped if not installed:
``pip install -r benchmarks/requirements.txt``), 5 seeds each, 120 s budget per run, prints per
optimiser the condition number and −log det(WᵀW/M) reached (median, min, max over seeds), the
time, and whether every run was feasible (independent check of every constraint on the 1 ms
grid) and within the budget. GA figures are the GA stage of the GA + local runs (the same GA,
same seed, as ``--optimizer ga`` while the budget does not cut it short: ``stopped`` tells).
Then the Table 1 trajectory of payload_identification_2017 against an optimised one on the
6-axis arm (same period, 5 s). Small matrices only: BLAS runs on one thread (multithreaded, it
is slower here, and much slower on a busy machine; ``ident_core.threads``).

Goals: GA + local ≥ 5× lower condition number than random best-of-200; 7-DOF arms below 121.9
(Gaz et al. 2019, Panda, classical Fourier trajectory); 100 % feasible; within the budget.

    python benchmarks/bench_excitation.py [--seeds 5] [--budget 120] [--robots six_axis kuka panda]
"""
from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import sys
import time
from pathlib import Path

from ident_core.excitation.config import config_from_dict, load_excitation_config
from ident_core.excitation.fourier import load_trajectory
from ident_core.excitation.optimize import optimize_excitation
from ident_core.excitation.problem import ExcitationProblem
from ident_core.model.robot import load_robot
from ident_core.threads import limit_blas_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
from data_dirs import recording_dir  # data/, then ../shared/data

REPO = Path(__file__).resolve().parents[1]

GAZ_PANDA_COND = 121.9
OPTIMIZERS = ('random', 'random-repair', 'ga+local')
SEVEN_DOF_SETTINGS = {
    'harmonics': 6, 'period': 10.0, 'samples': 100, 'objective': 'cond',
    'regressor': {'friction': 'coulomb-viscous-offset', 'rotor_inertia': False},
    'optimizer': {'random': {'candidates': 200},
                  'ga': {'population': 40, 'generations': 60, 'elite': 2},
                  'local': {'iterations': 60}}}


def six_axis():
    config = load_excitation_config(REPO / 'config/six_axis_3kg/excitation/optimizer.yaml')
    return load_robot(REPO / 'urdf/six_axis_3kg.urdf'), config


def kuka():
    urdf = recording_dir('kuka_lwr4') / 'kuka_lwr4.urdf'
    if not urdf.is_file():
        return None
    # No published acceleration limits: 10 rad/s² on every joint; torque limits of the URDF.
    # No collision check: the URDF's collision meshes are not in the data folder.
    config = config_from_dict({**SEVEN_DOF_SETTINGS,
                               'limits': {'margin': 0.05, 'acceleration': 10.0, 'torque': True}},
                              'kuka (bench)')
    return load_robot(urdf), config


def panda():
    try:
        files = importlib.metadata.files('example-robot-data') or []
    except importlib.metadata.PackageNotFoundError:
        return None
    urdf = [f for f in files if str(f).endswith('panda_description/urdf/panda.urdf')]
    if not urdf:
        return None
    share = Path(urdf[0].locate()).parents[1]
    fingers = {'panda_finger_joint1': 0.0, 'panda_finger_joint2': 0.0}
    # Franka's datasheet acceleration limits; torque limits of the URDF; self-collision of the
    # collision meshes (convex hulls) without the pairs the SRDF disables.
    config = config_from_dict({**SEVEN_DOF_SETTINGS, 'locked_joints': fingers,
                               'limits': {'margin': 0.05, 'torque': True,
                                          'acceleration': [15, 7.5, 10, 12.5, 15, 20, 20]},
                               'collision': {'self': True, 'min_distance': 0.005,
                                             'srdf': str(share / 'srdf' / 'panda.srdf')}},
                              'panda (bench)')
    return load_robot(share / 'urdf' / 'panda.urdf', fingers), config


ROBOTS = {'six_axis': six_axis, 'kuka': kuka, 'panda': panda}


def run_robot(name, robot, config, seeds, budget) -> dict:
    problem = ExcitationProblem(robot, config)
    print(f'\n== {name}: {robot.n} joints, {problem.criteria.base.count} base parameters, '
          f'{problem.dim} genes, {config.harmonics} harmonics, period {config.period:g} s, '
          f'torque {"on" if config.limits.torque else "off"}, collision '
          f'{"on" if config.collision.enabled else "off"}', flush=True)
    rows = {k: [] for k in ('random', 'random-repair', 'ga', 'ga+local')}
    for seed in range(seeds):
        for optimizer in OPTIMIZERS:
            t0 = time.monotonic()
            result = optimize_excitation(problem, optimizer, seed, budget)
            seconds = time.monotonic() - t0
            feasible = not problem.violations(problem.genes(result.trajectory))
            rows[optimizer].append({'cond': result.objectives['cond'],
                                    'dopt': result.objectives['dopt'], 'seconds': seconds,
                                    'feasible': feasible, 'in_budget': seconds <= budget})
            if optimizer == 'ga+local':
                ga = result.stages[0]
                rows['ga'].append({'cond': ga['cond'], 'dopt': ga['dopt'],
                                   'seconds': ga['seconds'], 'feasible': feasible,
                                   'in_budget': True, 'stopped': ga['stopped']})
            print(f'  seed {seed} {optimizer:<14} cond {result.objectives["cond"]:9.2f}  '
                  f'dopt {result.objectives["dopt"]:9.2f}  {seconds:6.1f} s  '
                  f'feasible {feasible}  ' + ' / '.join(
                      f'{s["name"]} {s["cond"]:.1f} ({s["seconds"]:.1f} s, '
                      f'{s.get("stopped", "")})' for s in result.stages), flush=True)
    return rows


def summarize(name, rows, seven_dof) -> list[str]:
    print(f'\n{name}: {"optimiser":<14} {"cond median":>12} {"min":>8} {"max":>8} '
          f'{"dopt median":>12} {"time median":>12} {"max":>7} {"feasible":>9} {"in budget":>10}')
    for optimizer, r in rows.items():
        cond = [x['cond'] for x in r]
        dopt = [x['dopt'] for x in r]
        sec = [x['seconds'] for x in r]
        print(f'{"":<{len(name)}}  {optimizer:<14} {statistics.median(cond):>12.2f} '
              f'{min(cond):>8.2f} {max(cond):>8.2f} {statistics.median(dopt):>12.2f} '
              f'{statistics.median(sec):>11.1f}s {max(sec):>6.1f}s '
              f'{sum(x["feasible"] for x in r):>5}/{len(r)} {sum(x["in_budget"] for x in r):>6}/'
              f'{len(r)}')
    failed = []
    gl = statistics.median(x['cond'] for x in rows['ga+local'])
    ratio = statistics.median(x['cond'] for x in rows['random']) / gl
    ratio_repair = statistics.median(x['cond'] for x in rows['random-repair']) / gl
    print(f'  random / GA+local (medians): {ratio:.2f}× (goal ≥ 5×); random-repair / GA+local: '
          f'{ratio_repair:.2f}×')
    if ratio < 5:
        failed.append(f'{name}: random/GA+local {ratio:.2f}× < 5×')
    if seven_dof:
        worst = max(x['cond'] for x in rows['ga+local'])
        print(f'  GA+local worst cond {worst:.2f} (goal < {GAZ_PANDA_COND})')
        if worst >= GAZ_PANDA_COND:
            failed.append(f'{name}: cond {worst:.2f} >= {GAZ_PANDA_COND}')
    for optimizer, r in rows.items():
        if not all(x['feasible'] and x['in_budget'] for x in r):
            failed.append(f'{name}: {optimizer} not always feasible and within budget')
    return failed


def table1(budget) -> None:
    robot, config = six_axis()
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    config = config.updated(period=trajectory.period, harmonics=trajectory.harmonics)
    problem = ExcitationProblem(robot, config)
    x = problem.genes(trajectory)
    values, violations = problem.evaluate(x), problem.violations(x)
    result = optimize_excitation(problem, 'ga+local', 0, budget)
    print(f'\nTable 1 of payload_identification_2017 on the 6-axis arm (period 5 s): '
          f'cond {values["cond"]:.2f}, dopt {values["dopt"]:.2f}, '
          f'{len(violations)} violation(s) of the config above'
          + (f' ({violations[0]})' if violations else ''))
    print(f'optimised (GA + local, seed 0, same period and harmonics): '
          f'cond {result.objectives["cond"]:.2f}, dopt {result.objectives["dopt"]:.2f}, '
          f'{values["cond"] / result.objectives["cond"]:.1f}× lower condition number')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seeds', type=int, default=5)
    parser.add_argument('--budget', type=float, default=120.0)
    parser.add_argument('--robots', nargs='+', choices=list(ROBOTS), default=list(ROBOTS))
    args = parser.parse_args()
    limit_blas_threads()
    failed = []
    for name in args.robots:
        loaded = ROBOTS[name]()
        if loaded is None:
            print(f'\n== {name}: skipped (URDF or package not available)')
            continue
        rows = run_robot(name, *loaded, args.seeds, args.budget)
        failed += summarize(name, rows, seven_dof=loaded[0].n == 7)
    if 'six_axis' in args.robots:
        table1(args.budget)
    print('\nall goals met' if not failed else '\ngoals missed:\n  ' + '\n  '.join(failed))
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
