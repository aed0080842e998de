"""Start-up time of ``robot-ident``: what a short identification costs beyond its work.

The case of issue 26 §5: ``robot-ident identify --estimator wls`` on a 60 s, 1 kHz recording of
a 7-joint arm in a CSV (``t``, 7 positions, 7 torques) with its dataset description. The robot
is ``src/ident_core/test/data/seven_axis.urdf`` (a light-weight arm of the proportions of a KUKA
LWR4+); the motion is a random finite Fourier series (5 harmonics, period 10 s) and the torques
come from the simulator (``ident_core.sim.synthetic``) with 0.1 N·m Gaussian noise. The files are
written once into ``--dir`` and reused.

Prints, each as the median of ``--repeats`` fresh processes:

(a) ``python -X importtime`` of the identify command (the verb's lazy imports included): the
    total import time, the top-level imports by cumulative time, and where the heavy libraries
    are first imported;
(b) the wall time of ``robot-ident identify --urdf URDF --data CSV.yaml --estimator wls --out
    RESULT.yaml``;
(c) the wall time of ``robot-ident --help``, and of ``python -c pass`` for reference;
(d) the wall time of the verbs that filter nothing or only parse: ``robot-ident export-urdf``
    of (b)'s RESULT.yaml and ``robot-ident identify --help``.

With each wall time, the median CPU time (user + system) of the process, which depends less on
the load of a shared machine.

The load average is printed before each measurement (the machine may be shared).

    python benchmarks/bench_startup.py [--repeats 5] [--top 15] [--dir output/bench_startup]
                                       [--seconds 60] [--rate 1000] [--estimator wls]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

import ident_core
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / 'src' / 'ident_core' / 'test' / 'data' / 'seven_axis.urdf'
TORQUE_NOISE = 0.1   # N·m
#: Libraries whose first import is reported (cumulative time, where loaded at all).
HEAVY = ('numpy', 'scipy', 'scipy.linalg', 'scipy.sparse', 'scipy.special', 'scipy.signal',
         'scipy.interpolate', 'scipy.stats', 'scipy.optimize', 'scipy.spatial', 'pinocchio',
         'pydantic', 'yaml', 'threadpoolctl', 'cvxpy', 'matplotlib', 'rosbags', 'tqdm')
#: Marks the child's line listing the modules it loaded.
MODULES = 'loaded-modules:'
LINE = re.compile(r'import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)')


def write_case(folder: Path, seconds: float, rate: float) -> Path:
    """The CSV and its dataset description (written once); the description's path."""
    robot = load_robot(URDF)
    stem = f'seven_axis_{seconds:g}s_{rate:g}hz'
    data, desc = folder / f'{stem}.csv', folder / f'{stem}.yaml'
    if not (data.is_file() and desc.is_file()):
        truth = perturbed_parameters(robot, np.random.default_rng(0))
        dataset, _ = synthetic_dataset(robot, truth, seconds, rate, seed=1,
                                       torque_noise=TORQUE_NOISE, harmonics=5, period=10.0)
        joints = list(robot.joint_names)
        names = ['t'] + [f'q_{j}' for j in joints] + [f'tau_{j}' for j in joints]
        partial = data.with_suffix('.partial')
        np.savetxt(partial, np.column_stack([dataset.t, dataset.position, dataset.effort]),
                   fmt='%.10g', delimiter=',', header=','.join(names), comments='')
        partial.rename(data)
        spec = {'joints': joints, 'file': data.name, 'time': {'column': 't'},
                'position': {'columns': [f'q_{j}' for j in joints]},
                'effort': {'columns': [f'tau_{j}' for j in joints]}}
        desc.write_text(yaml.safe_dump(spec, sort_keys=False))
    print(f'{URDF.name}: {robot.n} joints; {data.name}: {seconds:g} s at {rate:g} Hz '
          f'({int(round(seconds * rate))} rows) in {folder}')
    return desc


def wall_times(command: list[str], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) times [s] of ``repeats`` runs of ``command`` (output
    discarded; must succeed). The CPU time depends less on the machine's load."""
    wall, cpu = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f'{" ".join(command)} failed ({done.returncode}):\n'
                             f'{done.stderr.decode()}')
    return wall, cpu


def import_times(argv: list[str], repeats: int) -> tuple[list[list[tuple[str, int, float]]],
                                                         set[str]]:
    """``-X importtime`` of ``robot-ident argv`` in ``repeats`` fresh interpreters: per run,
    (module, depth, cumulative [s]) in import order; the modules loaded at the end."""
    command = [sys.executable, '-X', 'importtime', '-c',
               'import sys; from ident_core.cli import main; code = main(); '
               'print(MODULES, *sys.modules, file=sys.stderr); sys.exit(code)'
               .replace('MODULES', repr(MODULES)), *argv]
    runs, loaded = [], set()
    for _ in range(repeats):
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            raise SystemExit(f'{" ".join(command)} failed ({done.returncode}):\n{done.stderr}')
        lines = done.stderr.splitlines()
        runs.append([(m[4], len(m[3]) // 2, int(m[2]) * 1e-6) for m in map(LINE.match, lines)
                     if m])
        loaded = {m for line in lines if line.startswith(MODULES) for m in line.split()[1:]}
    return runs, loaded


def median_by_module(runs, keep) -> dict[str, float]:
    """Median over the runs of the cumulative time of each module ``keep(module, depth)``
    selects (a module missing from a run counts 0)."""
    found: dict[str, list[float]] = {}
    for run in runs:
        for module, depth, cumulative in run:
            if keep(module, depth):
                found.setdefault(module, []).append(cumulative)
    return {m: statistics.median(v + [0.0] * (len(runs) - len(v))) for m, v in found.items()}


def summary(label: str, times: list[float] | tuple[list[float], list[float]]) -> str:
    """One line: the median and range of ``times``, or of (wall, CPU) times."""
    wall, cpu = times if isinstance(times, tuple) else (times, None)
    line = (f'{label:<44} median {statistics.median(wall):6.3f} s   '
            f'({min(wall):.3f} … {max(wall):.3f}, {len(wall)} runs)')
    return line if cpu is None else line + f'   CPU median {statistics.median(cpu):6.3f} s'


def load() -> str:
    return 'load average ' + ' '.join(f'{x:.2f}' for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=5, help='runs per measurement (median)')
    parser.add_argument('--top', type=int, default=15, help='top-level imports listed')
    parser.add_argument('--dir', type=Path, default=REPO / 'output' / 'bench_startup')
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--estimator', default='wls')
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error('--repeats must be at least 1')
    executable = shutil.which('robot-ident')
    if executable is None:
        print('bench_startup: robot-ident not found (source scripts/env.sh)', file=sys.stderr)
        return 2
    print(f'ident_core from {Path(ident_core.__file__).parent}; robot-ident: {executable}')
    args.dir.mkdir(parents=True, exist_ok=True)
    desc = write_case(args.dir, args.seconds, args.rate)
    identify = ['identify', '--urdf', str(URDF), '--data', str(desc), '--estimator',
                args.estimator, '--out', str(args.dir / 'RESULT.yaml'), '--no-progress']

    print(f'\n(a) python -X importtime: robot-ident {" ".join(identify[:1] + identify[5:7])} '
          f'… ({load()})')
    runs, loaded = import_times(identify, args.repeats)
    top = median_by_module(runs, lambda module, depth: depth == 0)
    print(summary('total import time (top-level imports)', [sum(c for _, d, c in run if d == 0)
                                                             for run in runs]))
    for module, cumulative in sorted(top.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f'  {module:<42} {cumulative:6.3f} s')
    heavy = median_by_module(runs, lambda module, depth: module in HEAVY)
    print('  heavy libraries, cumulative at their first import:')
    for module in HEAVY:
        print(f'    {module:<40} ' + (f'{heavy[module]:6.3f} s' if module in heavy else
                                      '   loaded, not timed' if module in loaded else
                                      '   not loaded'))

    print(f'\n(b) {executable}: {" ".join(identify[:1] + identify[5:7])} ({load()})')
    print(summary(f'robot-ident identify --estimator {args.estimator}',
                  wall_times([executable, *identify], args.repeats)))
    print(f'\n(c) ({load()})')
    print(summary('robot-ident --help', wall_times([executable, '--help'], args.repeats)))
    print(summary('python -c pass (interpreter start-up)',
                  wall_times([sys.executable, '-c', 'pass'], args.repeats)))
    print(f'\n(d) ({load()})')
    export = [executable, 'export-urdf', '--model', str(args.dir / 'RESULT.yaml'), '--out',
              str(args.dir / 'robot.urdf'), '--force']
    print(summary('robot-ident export-urdf', wall_times(export, args.repeats)))
    print(summary('robot-ident identify --help',
                  wall_times([executable, 'identify', '--help'], args.repeats)))
    print(f'\n{load()}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
