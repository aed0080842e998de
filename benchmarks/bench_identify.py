"""Identification speed: 60 s at 1 kHz of a 7-DOF arm (synthetic, KUKA LWR4+ URDF), idle and
beside a CPU-bound process.

For each case of ``CASES`` (one line each: estimator, decimation, targets) prints the median
over ``--repeats`` runs, after one warm-up run, of each stage (base parameters, preprocessing,
regressor, estimator) and of regressor + estimator, then one summary line per mode and case
against the targets of issue 10 (2-core reference machine): regressor + WLS ≤ 1 s idle and
≤ 2 s loaded, with the default automatic decimation, and pc-wls ≤ 10 s. ``--loaded`` runs a
CPU-bound process beside the measurement (one of two cores busy); ``--both`` measures idle, then
loaded. BLAS runs on one thread (``ROBOT_IDENT_BLAS_THREADS``, ``ident_core.threads``). Exit
code 1 if a target is missed.

    python benchmarks/bench_identify.py [--loaded | --both] [--repeats 5] [--urdf PATH]
                                        [--seconds 60] [--rate 1000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identified_model import run_estimator
from ident_core.estimation.preprocessing import preprocess
from ident_core.estimation.regression import regression_data
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset
from ident_core.threads import blas_threads, limit_blas_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
from data_dirs import recording_dir  # data/, then ../shared/data

DEFAULT_URDF = recording_dir('kuka_lwr4') / 'kuka_lwr4.urdf'
CORE = 'regressor + estimator'
CPU_BOUND = '''
import os
parent = os.getppid()
while os.getppid() == parent:   # until the benchmark is gone, however it ended
    for _ in range(10 ** 6):
        pass
'''


@dataclass(frozen=True)
class Case:
    """One measured configuration: estimator, decimation factor (0: automatic, 1: none) and
    the targets of regressor + estimator idle and loaded [s]."""

    label: str
    estimator: str
    decimate: int
    idle: float | None = None
    loaded: float | None = None


CASES = (
    Case('WLS, automatic decimation', 'wls', 0, idle=1.0, loaded=2.0),
    Case('WLS, no decimation', 'wls', 1),
    Case('PC-WLS, automatic decimation', 'pc-wls', 0, idle=10.0, loaded=10.0),
)


def run(robot, dataset, config: IdentificationConfig) -> dict:
    """One identification, stage by stage, as ``identify`` runs it (no reversal mask)."""
    timings = {}
    t0 = time.perf_counter()
    regressor = Regressor(robot, config.spec, dataset.transmission)
    base = compute_base_parameters(regressor, seed=config.seed)
    timings['base parameters (QR)'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    p = preprocess(dataset, robot, config)
    timings['preprocess (filter, differences)'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    factor = p.decimation(config.decimate)
    w, tau = regression_data(regressor, base, p, factor)
    timings['regressor (+ parallel decimation)'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    estimator = f'estimator ({config.estimator.upper()})'
    est = run_estimator(regressor, base, w, tau, None, config)[0]
    timings[estimator] = time.perf_counter() - t0
    timings['total'] = sum(timings.values())
    timings[CORE] = timings['regressor (+ parallel decimation)'] + timings[estimator]
    return {'timings': timings, 'rows': w.shape[0] * w.shape[1], 'nb': w.shape[2],
            'factor': factor, 'cond': est.condition_number}


def configuration(case: Case) -> IdentificationConfig:
    """The identification settings of a case."""
    return IdentificationConfig(rotor_inertia=True, decimate=case.decimate,
                                estimator=case.estimator)


def measure(robot, dataset, case: Case, repeats: int) -> float:
    """Print the median stage timings of ``repeats`` runs of a case after a warm-up run (first
    calls, lazy imports); the median of regressor + estimator [s]."""
    runs = [run(robot, dataset, configuration(case)) for _ in range(repeats + 1)][1:]
    out = runs[-1]
    print(f'\n{case.label}: decimation ×{out["factor"]}, {case.estimator.upper()} on '
          f'{out["rows"]} rows × {out["nb"]} base parameters, cond {out["cond"]:.4g}; '
          f'median of {repeats}')
    for stage in out['timings']:
        seconds = [r['timings'][stage] for r in runs]
        median = statistics.median(seconds)
        rate = f'; {dataset.samples / median:,.0f} samples/s' if stage in ('total', CORE) else ''
        print(f'  {stage:<36} {median:8.3f} s   ({min(seconds):.3f} … {max(seconds):.3f}{rate})')
    return statistics.median(r['timings'][CORE] for r in runs)


@contextmanager
def cpu_load(loaded: bool):
    """A CPU-bound process beside the block when ``loaded``; stopped at exit, also on
    Ctrl-C (and by itself if this process is killed)."""
    if not loaded:
        yield
        return
    hog = subprocess.Popen([sys.executable, '-c', CPU_BOUND])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def summary(mode: str, results: dict) -> list[str]:
    """Print one line per case of a mode; the targets missed."""
    missed = []
    for case, core in results.items():
        target = getattr(case, mode)
        verdict = '' if target is None else (f'target ≤ {target:g} s: '
                                             + ('met' if core <= target else 'MISSED'))
        print(f'{mode:<6} {case.label:<32} {CORE} {core:7.3f} s   {verdict}')
        if target is not None and core > target:
            missed.append(f'{mode}: {case.label} {core:.3f} s > {target:g} s')
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--urdf', type=Path, default=DEFAULT_URDF)
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--repeats', type=int, default=5, help='runs per case (median)')
    load = parser.add_mutually_exclusive_group()
    load.add_argument('--loaded', action='store_true',
                      help='run a CPU-bound process beside the measurement')
    load.add_argument('--both', action='store_true', help='idle, then loaded')
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error('--repeats must be at least 1')
    if not args.urdf.is_file():
        print(f'bench_identify: {args.urdf} not found (set DATA_DIR or --urdf)', file=sys.stderr)
        return 2
    limit_blas_threads()
    robot = load_robot(args.urdf)
    truth = perturbed_parameters(robot, np.random.default_rng(0))
    dataset, _ = synthetic_dataset(robot, truth, args.seconds, args.rate, seed=1,
                                   torque_noise=0.1, harmonics=5, period=10.0)
    print(f'{robot.urdf.name}: {robot.n} joints, {dataset.samples} samples '
          f'({args.seconds:g} s at {args.rate:g} Hz); BLAS threads: {blas_threads()}')
    modes = ['idle', 'loaded'] if args.both else ['loaded' if args.loaded else 'idle']
    results = {}
    for mode in modes:
        print(f'\n== {mode}' + (': one CPU-bound process beside' if mode == 'loaded' else '')
              + f' (load average before: {os.getloadavg()[0]:.2f})')
        with cpu_load(mode == 'loaded'):
            results[mode] = {case: measure(robot, dataset, case, args.repeats)
                             for case in CASES}
    print()
    missed = [m for mode in modes for m in summary(mode, results[mode])]
    print('\nall targets met' if not missed else '\ntargets missed:\n  ' + '\n  '.join(missed))
    return 0 if not missed else 1


if __name__ == '__main__':
    sys.exit(main())
