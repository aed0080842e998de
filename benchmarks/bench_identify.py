"""Identification speed: 60 s at 1 kHz of a 7-DOF arm (synthetic, KUKA LWR4+ URDF).

Prints the time of each stage (preprocessing, regressor, WLS) and the samples per second, for the
default pipeline (automatic parallel decimation) and without decimation (WLS on all 420 000
rows). Target (issue 2): regressor + WLS ≤ 2 s on the 2-core reference machine.

    python benchmarks/bench_identify.py [--urdf PATH] [--seconds 60] [--rate 1000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from ident_core.estimation.estimators import estimate
from ident_core.estimation.identification import IdentificationConfig, preprocess, regression_data
from ident_core.model.base_parameters import compute_base_parameters
from ident_core.model.regressor import Regressor
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

DEFAULT_URDF = Path(os.environ.get('DATA_DIR', Path(__file__).resolve().parents[2]
                                   / 'shared/data/kuka_lwr4')) / 'kuka_lwr4.urdf'


def run(robot, dataset, config) -> dict:
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
    est = estimate(w, tau, 'wls', base.names)
    timings['WLS (OLS + weighted QR)'] = time.perf_counter() - t0
    return {'timings': timings, 'rows': w.shape[0] * w.shape[1], 'nb': w.shape[2],
            'factor': factor, 'cond': est.condition_number}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--urdf', type=Path, default=DEFAULT_URDF)
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    args = parser.parse_args()
    if not args.urdf.is_file():
        print(f'bench_identify: {args.urdf} not found (set DATA_DIR or --urdf)', file=sys.stderr)
        return 2
    robot = load_robot(args.urdf)
    truth = perturbed_parameters(robot, np.random.default_rng(0))
    dataset, _ = synthetic_dataset(robot, truth, args.seconds, args.rate, seed=1,
                                   torque_noise=0.1, harmonics=5, period=10.0)
    samples = dataset.samples
    print(f'{robot.urdf.name}: {robot.n} joints, {samples} samples '
          f'({args.seconds:g} s at {args.rate:g} Hz)')
    for label, decimate in (('default (automatic decimation)', 0), ('no decimation', 1)):
        out = run(robot, dataset, IdentificationConfig(rotor_inertia=True, decimate=decimate))
        core = (out['timings']['regressor (+ parallel decimation)']
                + out['timings']['WLS (OLS + weighted QR)'])
        print(f'\n{label}: decimation ×{out["factor"]}, WLS on {out["rows"]} rows × '
              f'{out["nb"]} base parameters, cond {out["cond"]:.4g}')
        for stage, seconds in out['timings'].items():
            print(f'  {stage:<36} {seconds:8.3f} s')
        total = sum(out['timings'].values())
        print(f'  {"regressor + WLS":<36} {core:8.3f} s   ({samples / core:,.0f} samples/s)')
        print(f'  {"total":<36} {total:8.3f} s   ({samples / total:,.0f} samples/s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
