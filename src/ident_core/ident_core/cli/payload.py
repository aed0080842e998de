"""``robot-ident payload``: identify a payload's mass, centre of mass and inertia in a frame of
the robot, by the methods of payload_identification_2017 and a model-based check, write
PAYLOAD.yaml and optionally the URDF with the payload (docs/methods.md §11)."""
from __future__ import annotations

import argparse

import numpy as np

from ..errors import InputError
from ..model.regressor import FRICTION_MODELS
from ..payload.methods import METHODS, PayloadConfig
from ..workflows.payload import export_payload_urdf, payload_from_recordings
from .identify import config_from_args
from .progress import progress_bar
from .recordings import IGNORE_PLAUSIBILITY_HELP, add_recording_arguments, recording_options
from .report import REPORT_HELP, print_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the verb's arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The verb's sub-parser.
    """
    default = PayloadConfig()
    parser.add_argument('--urdf', required=True, help='robot URDF')
    parser.add_argument('--unloaded', nargs='+', default=[], metavar='DATASET',
                        help='runs without the payload')
    parser.add_argument('--model', metavar='RESULT.yaml',
                        help="the robot's identified model (model and static methods)")
    parser.add_argument('--loaded', nargs='+', default=[], metavar='DATASET',
                        help='runs with the payload')
    parser.add_argument('--method', default='all', choices=METHODS + ('all',),
                        help='payload method (default all: every method the inputs allow)')
    parser.add_argument('--frame', help="payload frame: a joint or link of the URDF (default: "
                                        "the last joint's frame)")
    parser.add_argument('--known-mass', type=float, metavar='KG',
                        help='the payload mass, to identify one drive gain per joint '
                             '(torques from motor currents with unknown gains)')
    parser.add_argument('--friction', choices=FRICTION_MODELS,
                        help=f'friction model of the robot (default {default.friction})')
    rotor = parser.add_mutually_exclusive_group()
    rotor.add_argument('--rotor-inertia', dest='rotor_inertia', action='store_true',
                       default=None, help='identify rotor inertias (default)')
    rotor.add_argument('--no-rotor-inertia', dest='rotor_inertia', action='store_false',
                       default=None, help='no rotor inertia columns')
    parser.add_argument('--cutoff-hz', type=float, metavar='HZ',
                        help="low-pass cut-off (default: the dataset's cutoff_hz, else 10 Hz)")
    parser.add_argument('--decimate', type=int, metavar='K',
                        help='parallel decimation factor (default 0: automatic)')
    add_recording_arguments(parser)
    parser.add_argument('--ignore-plausibility', action='store_true', default=None,
                        help=IGNORE_PLAUSIBILITY_HELP)
    parser.add_argument('--out', metavar='PAYLOAD.yaml', help='write the result here')
    parser.add_argument('--report', metavar='DIR', help=REPORT_HELP)
    parser.add_argument('--export-urdf', metavar='ROBOT.urdf',
                        help='write the URDF with the payload as a fixed link')
    parser.add_argument('--from', dest='from_file', metavar='PAYLOAD.yaml',
                        help='with --export-urdf: export an earlier result, identify nothing')
    parser.add_argument('--ignore-urdf-change', action='store_true',
                    help='use a URDF that differs from the one RESULT.yaml was identified with')
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Identify (or read) the payload, print the table, write the files; 0."""
    if args.from_file:
        if not args.export_urdf:
            raise InputError('--from needs --export-urdf (it only exports an earlier result)')
        with progress_bar(args, 'report', unit='part') as bar:
            outcome = export_payload_urdf(args.urdf, args.from_file, args.export_urdf,
                                          report=args.report, progress=bar)
        print(_exported(outcome))
        print_report(outcome.report)
        return 0
    if not args.loaded:
        raise InputError('--loaded: give the runs with the payload')
    if not args.out:
        raise InputError('--out: give the PAYLOAD.yaml to write')
    config = config_from_args(args, PayloadConfig)
    with progress_bar(args, 'payload') as bar:
        outcome = payload_from_recordings(
            args.urdf, args.loaded, config, unloaded=args.unloaded, model=args.model,
            ignore_urdf_change=args.ignore_urdf_change, method=args.method, frame=args.frame,
            known_mass=args.known_mass, recordings=recording_options(args), out=args.out,
            export_urdf=args.export_urdf, report=args.report, progress=bar)
    print_payload(outcome.content)
    if args.export_urdf:
        if outcome.urdf_failure is not None:
            raise outcome.urdf_failure
        print(_exported(outcome))
    print(f'\npayload written to {outcome.payload_path}')
    print_report(outcome.report)
    return 0


def print_payload(content) -> None:
    """Print the payload by each method: mass, centre of mass, principal inertias, std.

    Parameters
    ----------
    content : PayloadFile
        The result.
    """
    print(f'Payload in frame {content.frame} (selected: {content.selected})')
    print(f'{"method":<22}{"mass kg":>10}{"± std":>9}  {"COM mm (x y z)":<24}{"± std mm":<20}'
          f'{"principal inertias kg·m²":<30}{"consistent":>10}')
    for name, m in content.methods.items():
        com = ' '.join(f'{1e3 * x:7.2f}' for x in m.com)
        com_sd = ' '.join(f'{1e3 * x:5.2f}' for x in m.std.com)
        moments = ('not estimated' if m.inertia is None else
                   ' '.join(f'{x:9.3g}' for x in np.linalg.eigvalsh(np.array(m.inertia))))
        print(f'{name:<22}{m.mass:>10.4f}{m.std.mass:>9.2g}  {com:<24}{com_sd:<20}'
              f'{moments:<30}{"yes" if m.physically_consistent else "NO":>10}')
        if m.unexcited:
            print(f'{"":<22}not excited: {", ".join(m.unexcited)}')
    for name, why in content.failures.items():
        print(f'{name:<22}no estimate: {why}')
    if content.drive_gains is not None:
        kept = content.drive_gains_undetermined
        print('drive gains (joint torque = gain × recorded effort): ' + ' '.join(
            f'{e:.3g}±{s:.2g} (not determined: 1)' if j in kept else f'{g:.4f}±{s:.2g}'
            for j, g, e, s in zip(content.robot.joints, content.drive_gains,
                                  content.drive_gains_estimate, content.drive_gains_std)))


def _exported(outcome) -> str:
    """The line that says where the URDF with the payload was written."""
    return (f'wrote {outcome.urdf_path}: payload fixed to {outcome.urdf_link} '
            f'({outcome.content.mass:.4g} kg)')
