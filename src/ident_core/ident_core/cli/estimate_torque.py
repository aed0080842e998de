"""``robot-ident estimate-torque``: filter the joint torques of a recording with a dynamic model
(the state Kalman filter, with a reference the Kalman filter of
scara_kalman_torque_estimation_2018, or a baseline), smooth them if asked, estimate the external
torques and detect collisions; write TORQUES.csv (docs/methods.md §12).

    robot-ident estimate-torque (--model RESULT.yaml | --urdf URDF) [--payload PAYLOAD.yaml]
        --data D [--reference TRAJ.yaml [--reference-start S]] [--method kalman|mean5|lowpass|
        momentum-observer] [--config CONFIG.yaml] [--smooth] --out TORQUES.csv
"""
from __future__ import annotations

import argparse

import numpy as np

from ..errors import InputError
from ..files import read_yaml
from ..schema import parse
from ..torque_estimation.config import METHODS, TorqueEstimatorConfig
from ..torque_estimation.offline import TorqueEstimates
from ..workflows.torques import torques_from_recording
from .progress import progress_bar
from .recordings import add_recording_arguments, recording_options


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``estimate-torque``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-parser of ``estimate-torque``.
    """
    p.add_argument('--model', metavar='RESULT.yaml', help='identified model (friction, rotor '
                   'inertia and transmission included)')
    p.add_argument('--urdf', help="robot URDF (without --model: the URDF's rigid body; with "
                   'it: replaces the recorded URDF path)')
    p.add_argument('--payload', metavar='PAYLOAD.yaml', help='payload mounted during the '
                   'recording')
    p.add_argument('--data', required=True, metavar='DATASET',
                   help='dataset description (.yaml), .npz, or rosbag2 folder/.mcap')
    p.add_argument('--reference', metavar='TRAJ.yaml', help='excitation trajectory the robot '
                   'tracked (default: none; the state Kalman filter estimates from the '
                   'encoders and torques)')
    p.add_argument('--reference-start', type=float, metavar='S', help='time of the start of '
                   "the reference's first period in the recording's time [s] (default for a "
                   "rosbag2: the stamp of its ExcitationTrajectory message)")
    p.add_argument('--method', choices=METHODS, help='estimation method (default kalman)')
    p.add_argument('--config', metavar='CONFIG.yaml', help='settings (TorqueEstimatorConfig: '
                   'covariances, observer gain, collision thresholds)')
    p.add_argument('--truth', metavar='DIR', help="a simulator's ground-truth folder "
                   '(ground_truth.yaml, truth_log.npz; the recording a rosbag2 of that run): '
                   'adds the true torques to the CSV')
    p.add_argument('--smooth', action='store_true', help='also smooth the torques over the '
                   'whole recording (offline analysis: the state Kalman filter and the '
                   'Rauch–Tung–Striebel smoother), as smoothed_<joint> columns')
    add_recording_arguments(p, window=False)
    p.add_argument('--out', required=True, metavar='TORQUES.csv')
    p.add_argument('--ignore-urdf-change', action='store_true',
                    help='use a URDF that differs from the one RESULT.yaml was identified with')
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Estimate, print a summary, write the CSV; 0."""
    config = _config(args)
    with progress_bar(args, 'estimate-torque', unit='sample') as bar:
        outcome = torques_from_recording(
            args.data, config, model=args.model, urdf=args.urdf, payload=args.payload,
            ignore_urdf_change=args.ignore_urdf_change, reference=args.reference,
            reference_start=args.reference_start, truth=args.truth,
            recordings=recording_options(args), out=args.out, progress=bar,
            smooth=args.smooth)
    print_summary(outcome.estimates)
    print(f'torques written to {outcome.torques_path}')
    return 0


def _config(args) -> TorqueEstimatorConfig:
    document = {} if args.config is None else read_yaml(args.config, 'torque estimator config')
    if not isinstance(document, dict):
        raise InputError(f'{args.config}: expected a mapping of settings')
    if args.method:
        document = {**document, 'method': args.method}
    return parse(TorqueEstimatorConfig, document, args.config or 'settings')


def print_summary(result: TorqueEstimates) -> None:
    """Print the samples, the change the filter made, the noise estimates and the collisions.

    Parameters
    ----------
    result : TorqueEstimates
    """
    print(f'{result.source}: {len(result.t)} samples, method {result.method}'
          + (f', {result.repeats} repeated stamps left out' if result.repeats else ''))
    estimates = [('filtered', result.filtered)] + (
        [] if result.smoothed is None else [('smoothed', result.smoothed)])
    print(f'{"joint":<16}' + ''.join(f'{f"RMS({kind} − measured)":>26}' for kind, _ in estimates)
          + f'{"max |external|":>16}')
    change = [np.sqrt(np.mean((x - result.measured) ** 2, axis=0)) for _, x in estimates]
    for j, name in enumerate(result.joint_names):
        print(f'{name:<16}' + ''.join(f'{c[j]:>26.4g}' for c in change)
              + f'{np.abs(result.external[:, j]).max():>16.4g}')
    if result.noise:
        for key, values in result.noise.items():
            print(f'{key} (estimated): ' + ' '.join(f'{v:.3g}' for v in values))
    for c in result.collisions:
        print(f'collision on {result.joint_names[c.joint]} at t = {c.time:.4f} s (from '
              f'{c.onset:.4f} s): external torque {c.external_torque:.3g}')
