"""Memory and time of ``robot-ident identify`` on long logs: a synthetic 7-DOF arm at 1 kHz.

The log is what users record: a CSV (``t``, 7 positions, 7 velocities, 7 torques: 22 columns)
with its dataset description YAML, or the same in an ``.npz``. The motion is a random finite
Fourier series of period 10 s inside the limits of ``src/ident_core/test/data/seven_axis.urdf``
(a light-weight arm of the proportions of a KUKA LWR4+); one period's torques come from
Pinocchio's RNEA plus the actuator model (``ident_core.sim.synthetic``) and repeat, with fresh
Gaussian noise on every row (torques 0.3 N·m, velocities 0.005 rad/s). Files are written once
into ``--dir`` (the 3.6 M-row CSV takes about 1 GB and a minute to write) and reused.

Each size runs ``robot-ident identify --urdf URDF --data LOG.yaml --out RESULT.yaml`` (default
settings: pc-wls, automatic decimation) in a child process; its peak resident memory (``wait4``
rusage ``ru_maxrss``) and wall time are printed as a table, with the base parameters' largest
deviation from those of the first size's run (the same motion, so only the noise differs).

    python benchmarks/bench_long_logs.py [--rows 360000 1000000 3600000] [--format csv npz]
                                         [--dir output/bench_long_logs] [--args ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import fourier_trajectory, perturbed_parameters, simulate_torques

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / 'src' / 'ident_core' / 'test' / 'data' / 'seven_axis.urdf'
RATE = 1000.0            # Hz
PERIOD = 10.0            # s, of the Fourier series
TORQUE_NOISE = 0.3       # N·m
VELOCITY_NOISE = 0.005   # rad/s
BLOCK = 100_000          # rows written at a time


def one_period(robot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and noise-free torques of one period at ``RATE``."""
    rng = np.random.default_rng(0)
    truth = perturbed_parameters(robot, rng)
    t = np.arange(int(PERIOD * RATE)) / RATE
    q, qd, qdd = fourier_trajectory(robot, t, np.random.default_rng(1), harmonics=5,
                                    period=PERIOD)
    return q, qd, simulate_torques(robot, truth, q, qd, qdd)


def blocks(robot, rows: int):
    """(t, q, qd, tau) blocks of ``BLOCK`` rows (the last one shorter): the period repeated,
    with noise."""
    q, qd, tau = one_period(robot)
    period = len(q)
    rng = np.random.default_rng(2)
    for start in range(0, rows, BLOCK):
        k = np.arange(start, min(rows, start + BLOCK))
        i = k % period
        yield (k / RATE, q[i], qd[i] + VELOCITY_NOISE * rng.standard_normal(qd[i].shape),
               tau[i] + TORQUE_NOISE * rng.standard_normal(tau[i].shape))


def write_csv(robot, rows: int, folder: Path) -> Path:
    """The CSV and its description; the description's path."""
    joints = list(robot.joint_names)
    names = ['t'] + [f'{s}_{j}' for s in ('q', 'qd', 'tau') for j in joints]
    data = folder / f'log_{rows}.csv'
    if not data.exists():
        partial = data.with_suffix('.partial')
        with partial.open('w') as f:
            f.write(','.join(names) + '\n')
            for t, q, qd, tau in blocks(robot, rows):
                np.savetxt(f, np.column_stack([t, q, qd, tau]), fmt='%.10g', delimiter=',')
        partial.rename(data)
    spec = {'joints': joints, 'file': data.name, 'time': {'column': 't'},
            'position': {'columns': [f'q_{j}' for j in joints]},
            'velocity': {'columns': [f'qd_{j}' for j in joints]},
            'effort': {'columns': [f'tau_{j}' for j in joints]}}
    desc = folder / f'log_{rows}_csv.yaml'
    desc.write_text(yaml.safe_dump(spec, sort_keys=False))
    return desc


def write_npz(robot, rows: int, folder: Path) -> Path:
    """The ``.npz`` (keys ``times``, ``positions``, ``velocities``, ``torques``)."""
    data = folder / f'log_{rows}.npz'
    if not data.exists():
        parts = list(zip(*blocks(robot, rows)))
        np.savez(data.with_suffix('.partial.npz'),
                 **{k: np.concatenate(p) for k, p in
                    zip(('times', 'positions', 'velocities', 'torques'), parts)})
        data.with_suffix('.partial.npz').rename(data)
    return data


def identify(data: Path, out: Path, extra: list[str]) -> tuple[float, float, dict]:
    """Run ``robot-ident identify`` in a child: (peak RSS [MB], wall time [s], RESULT)."""
    command = [sys.executable, '-c', 'import sys; from ident_core.cli import main; '
               'sys.exit(main())', 'identify', '--urdf', str(URDF), '--data', str(data),
               '--out', str(out), *extra]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode()
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f'{" ".join(command)} failed ({child.returncode}):\n{error}')
    return usage.ru_maxrss / 1024, wall, yaml.safe_load(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rows', type=int, nargs='+', default=[360_000, 1_000_000, 3_600_000])
    parser.add_argument('--format', nargs='+', choices=('csv', 'npz'), default=['csv'])
    parser.add_argument('--dir', type=Path, default=REPO / 'output' / 'bench_long_logs')
    parser.add_argument('--args', nargs=argparse.REMAINDER, default=[],
                        help='further options of robot-ident identify')
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    robot = load_robot(URDF)
    writers = {'csv': write_csv, 'npz': write_npz}
    print(f'{robot.urdf.name}: {robot.n} joints, {RATE:g} Hz; robot-ident identify '
          f'{" ".join(args.args)}')
    print(f'{"format":<7}{"rows":>11}{"peak RSS MB":>13}{"bytes/row":>11}{"time s":>9}'
          f'{"rows/s":>11}{"max |Δ base| / |base|":>24}')
    reference = None
    for fmt in args.format:
        for rows in args.rows:
            data = writers[fmt](robot, rows, args.dir)
            rss, wall, result = identify(data, args.dir / f'result_{fmt}_{rows}.yaml', args.args)
            values = np.array([p['value'] for p in result['base_parameters']])
            reference = values if reference is None else reference
            change = np.max(np.abs(values - reference)) / np.max(np.abs(reference))
            print(f'{fmt:<7}{rows:>11,}{rss:>13,.0f}{rss * 2 ** 20 / rows:>11,.0f}'
                  f'{wall:>9.1f}{rows / wall:>11,.0f}{change:>24.2e}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
