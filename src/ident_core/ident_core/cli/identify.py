"""``robot-ident identify``: identify the base parameters, friction and rotor inertia of a robot
from recordings, validate on others, write RESULT.yaml (docs/methods.md §10)."""
from __future__ import annotations

import argparse

import pydantic

from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..estimation.estimators import ESTIMATORS
from ..model.regressor import FRICTION_MODELS
from ..workflows.identify import identify_recordings
from .progress import progress_bar
from .recordings import IGNORE_PLAUSIBILITY_HELP, add_recording_arguments, recording_options
from .report import REPORT_HELP, print_report
from .validate import print_validation

NAME_WIDTH = 56


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the verb's arguments; defaults come from ``IdentificationConfig``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The verb's sub-parser.
    """
    default = IdentificationConfig()
    parser.add_argument('--urdf', required=True, help='robot URDF')
    parser.add_argument('--data', required=True, nargs='+', metavar='DATASET',
                        help='dataset description (.yaml), .npz, or rosbag2 folder/.mcap')
    parser.add_argument('--validate', nargs='*', default=[], metavar='DATASET',
                        help='datasets to validate on (never used for identification)')
    parser.add_argument('--split', type=float, metavar='FRACTION',
                        help='identify on the first FRACTION of each --data set, validate on '
                             'the rest')
    parser.add_argument('--friction', choices=FRICTION_MODELS,
                        help=f'friction model per actuator (default {default.friction})')
    parser.add_argument('--rotor-inertia', action='store_true', default=None,
                        help='identify rotor inertias')
    parser.add_argument('--estimator', choices=ESTIMATORS,
                        help=f'least-squares estimator (default {default.estimator})')
    parser.add_argument('--cutoff-hz', type=float, metavar='HZ',
                        help="low-pass cut-off (default: the dataset's cutoff_hz, else 10 Hz)")
    parser.add_argument('--decimate', type=int, metavar='K',
                        help='parallel decimation factor (default 0: automatic, to the filter '
                             'bandwidth; 1: none)')
    velocity = parser.add_mutually_exclusive_group()
    velocity.add_argument('--use-recorded-velocity', dest='use_recorded_velocity',
                          action='store_true', default=None,
                          help='use recorded velocities instead of differentiating positions '
                               '(default: when they agree with the derivative of the positions)')
    velocity.add_argument('--no-recorded-velocity', dest='use_recorded_velocity',
                          action='store_false', default=None,
                          help='differentiate positions even when velocities are recorded')
    parser.add_argument('--prior-weight', type=float, metavar='W',
                        help='pc-wls: weight of the prior toward the URDF (default: chosen on '
                             'held-out data)')
    parser.add_argument('--total-mass', type=float, metavar='KG',
                        help='pc-wls: the sum of the masses of the moving bodies (the fixed '
                             'base excluded), when known')
    parser.add_argument('--mass-tolerance', type=float, metavar='FRACTION',
                        help="pc-wls: body masses within this fraction of the URDF's (0.2: "
                             '±20 %%)')
    parser.add_argument('--com-in-collision-box', action='store_true', default=None,
                        help='pc-wls: centres of mass inside the collision geometry boxes')
    parser.add_argument('--torque-delay', type=_delay, metavar='auto|none|SECONDS',
                        help='delay of the torques behind the positions: auto estimates it per '
                             'recording and compensates it when significant, none leaves the '
                             'torques, a number (s, positive: torques logged late) shifts them '
                             f'(default {default.torque_delay})')
    add_recording_arguments(parser)
    parser.add_argument('--ignore-plausibility', action='store_true', default=None,
                        help=IGNORE_PLAUSIBILITY_HELP)
    parser.add_argument('--out', required=True, metavar='RESULT.yaml')
    parser.add_argument('--report', metavar='DIR', help=REPORT_HELP)
    parser.set_defaults(run=_run)


def _delay(text: str) -> str | float:
    """``--torque-delay``: 'auto', 'none' or seconds."""
    if text in ('auto', 'none'):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected auto, none or seconds, got {text!r}") \
            from None


def config_from_args(args: argparse.Namespace, schema: type = IdentificationConfig):
    """The settings given on the command line; the schema's defaults for the rest.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options; those named like a field of ``schema`` and not None are used.
    schema : type
        ``IdentificationConfig`` or a subclass.

    Returns
    -------
    IdentificationConfig

    Raises
    ------
    InputError
        For a bad value, naming its option (``--cutoff-hz``).
    """
    given = {k: v for k, v in vars(args).items() if k in schema.model_fields and v is not None}
    try:
        return schema.model_validate(given)
    except pydantic.ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        option = '--' + str(error['loc'][0]).replace('_', '-')
        raise InputError(f'option {option}: {error["msg"]}, got {error["input"]!r}') from None


def _run(args: argparse.Namespace) -> int:
    """Identify, validate, write RESULT.yaml and print the tables; 0 (errors raise)."""
    config = config_from_args(args)
    with progress_bar(args, 'identify') as bar:
        if args.split is not None and not 0 < args.split < 1:
            raise InputError(f'--split must be in (0, 1), got {args.split}')
        outcome = identify_recordings(args.urdf, args.data, config, validation=args.validate,
                                      split=args.split, recordings=recording_options(args),
                                      out=args.out, report=args.report, progress=bar)
    print_preprocessing(outcome.preprocessing)
    print_model(outcome.model)
    if outcome.validations:
        print_validation([v.report() for v in outcome.validations])
    print(f'\nresult written to {outcome.result_path}')
    print_report(outcome.report)
    return 0


def print_preprocessing(lines: list[str]) -> None:
    """Print what the preprocessing did, one line per dataset and decision.

    Parameters
    ----------
    lines : list of str
        ``Processed.summary`` lines.
    """
    for line in lines:
        print(line)
    if lines:
        print()


def print_model(model) -> None:
    """Print the base parameters and the actuator values of a model.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    """
    c, st = model.config, model.stats
    print(f'Identified {model.base.count} base parameters of {model.robot.urdf.name} '
          f'({st["samples"]} samples, {c.estimator.upper()}, friction {c.friction}, '
          f'condition number {st["condition_number"]:.4g})')
    print(f'{"#":>3}  {"base parameter":<{NAME_WIDTH}} {"value":>12} {"std":>11} {"rel std %":>10}')
    for i, (name, v, sd, r) in enumerate(zip(model.base.names, model.values, model.std,
                                             model.rel_std_percent), start=1):
        short = name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 1] + '…'
        print(f'{i:>3}  {short:<{NAME_WIDTH}} {v:>12.5g} {sd:>11.3g} {r:>10.3g}')
    actuators = model.actuator_values()
    if actuators:
        print(f'\n{"joint":<16}' + ''.join(f'{k:>12}' for k in actuators))
        for j, name in enumerate(model.robot.joint_names):
            cells = [actuators[k][j] for k in actuators]
            print(f'{name:<16}' + ''.join(f'{"(regrouped)":>12}' if c is None else f'{c:>12.4g}'
                                         for c in cells))
    print('identification residual RMS per joint (N·m): '
          + ' '.join(f'{x:.3g}' for x in st['residual_rms']))
    print_links(model)


def print_links(model) -> None:
    """Print mass, centre of mass and physical consistency of every body.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    """
    links = model.links()
    if not links:
        return
    weight = model.stats.get('prior_weight')
    source = (f'pc-wls, prior weight {weight:g}' if weight is not None
              else "nearest to the URDF's, for these base parameters")
    print(f'\nstandard parameters per body ({source})')
    print(f'{"link":<16}{"mass kg":>10}  {"centre of mass (m), link frame":<30} physical')
    for k in links:
        com = ' '.join(f'{x:>9.4f}' for x in k.com)
        physical = 'yes' if k.physically_consistent else 'NO'
        print(f'{k.link:<16}{k.mass:>10.4g}  {com:<30} {physical}')
    print(f'{"total":<16}{sum(k.mass for k in links):>10.4g}')
