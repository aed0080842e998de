"""``robot-ident``: identification and validation from the command line.

    robot-ident identify --urdf URDF --data D [D ...] [--validate D ...] --out RESULT.yaml
    robot-ident validate --model RESULT.yaml --data D [--csv PRED.csv] [--json]
    robot-ident excite --urdf URDF [--config CFG] [--optimizer ga+local] --out TRAJ.yaml
    robot-ident excite --evaluate TRAJ.yaml --urdf URDF [--config CFG]

Errors in the input print one line ``robot-ident: error: ...`` on stderr and exit with code 2.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from . import excite_cli
from .datasets import load_dataset
from .errors import IdentError
from .estimators import ESTIMATORS
from .identification import Settings, identify, validate
from .regressor import FRICTION_MODELS
from .results import read_result, write_atomic, write_result
from .robot_model import load_robot

NAME_WIDTH = 56


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code (0 ok, 2 bad input)."""
    args = _parser().parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        return args.run(args)
    except IdentError as exc:
        print(f'robot-ident: error: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='robot-ident', description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(required=True, metavar='COMMAND')

    p = sub.add_parser('identify', help='identify base parameters, friction and rotor inertia')
    p.add_argument('--urdf', required=True, help='robot URDF')
    p.add_argument('--data', required=True, nargs='+', metavar='DATASET',
                   help='dataset description (.yaml), .npz, or rosbag2 folder/.mcap')
    p.add_argument('--validate', nargs='*', default=[], metavar='DATASET',
                   help='datasets to validate on (never used for identification)')
    p.add_argument('--split', type=float, metavar='FRACTION',
                   help='identify on the first FRACTION of each --data set, validate on the rest')
    p.add_argument('--friction', choices=FRICTION_MODELS, default='viscous-coulomb-offset')
    p.add_argument('--rotor-inertia', action='store_true', help='identify rotor inertias')
    p.add_argument('--estimator', choices=ESTIMATORS, default='wls')
    p.add_argument('--cutoff', type=float, metavar='HZ',
                   help='low-pass cut-off (default: the dataset\'s cutoff_hz, else 10 Hz)')
    p.add_argument('--decimate', type=int, default=0, metavar='K',
                   help='parallel decimation factor (default 0: automatic, to the filter '
                        'bandwidth; 1: none)')
    p.add_argument('--use-recorded-velocity', action='store_true',
                   help='use recorded velocities instead of differentiating positions')
    p.add_argument('--out', required=True, metavar='RESULT.yaml')
    p.set_defaults(run=_identify)

    p = sub.add_parser('validate', help='predict torques of a dataset with an identified model')
    p.add_argument('--model', required=True, metavar='RESULT.yaml')
    p.add_argument('--data', required=True, metavar='DATASET')
    p.add_argument('--urdf', help='use this URDF instead of the one recorded in the result')
    p.add_argument('--csv', metavar='PRED.csv', help='write time, measured and predicted torques')
    p.add_argument('--json', action='store_true', help='print the metrics as one JSON object')
    p.set_defaults(run=_validate)
    excite_cli.add_parser(sub)
    return parser


def _identify(args) -> int:
    robot = load_robot(args.urdf)
    settings = Settings(friction=args.friction, rotor_inertia=args.rotor_inertia,
                        estimator=args.estimator, cutoff_hz=args.cutoff, decimate=args.decimate,
                        use_recorded_velocity=args.use_recorded_velocity)
    train = [load_dataset(p, robot.joint_names) for p in args.data]
    held_out = []
    if args.split is not None:
        if not 0 < args.split < 1:
            raise IdentError(f'--split must be in (0, 1), got {args.split}')
        parts = [d.split(args.split) for d in train]
        train, held_out = [a for a, _ in parts], [b for _, b in parts]
    checks = held_out + [load_dataset(p, robot.joint_names) for p in args.validate]
    model = identify(robot, train, settings)
    validations = [validate(model, d) for d in checks]
    reports = [{'data': v.source, **v.metrics} for v in validations]
    out = write_result(args.out, model, reports)
    _print_model(model)
    if reports:
        _print_validation(reports, robot.joint_names)
    print(f'\nresult written to {out}')
    return 0


def _validate(args) -> int:
    model = read_result(args.model, args.urdf)
    v = validate(model, load_dataset(args.data, model.robot.joint_names))
    if args.csv:
        _write_csv(args.csv, v, model.robot.joint_names)
    if args.json:
        print(json.dumps({'data': v.source, **v.metrics}))
    else:
        _print_validation([{'data': v.source, **v.metrics}], model.robot.joint_names)
    return 0


def _print_model(model) -> None:
    s, st = model.settings, model.stats
    print(f'Identified {model.base.count} base parameters of {model.robot.urdf.name} '
          f'({st["samples"]} samples, {s.estimator.upper()}, friction {s.friction}, '
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


def _print_validation(reports: list[dict], joints: list[str]) -> None:
    print(f'\n{"validation data":<44} {"rel. err %":>10} {"NRMS %":>8} {"abs. err":>9}  '
          'RMSE per joint (N·m)')
    for r in reports:
        nrms = '—' if r['nrms_percent'] is None else f'{r["nrms_percent"]:.3f}'
        name = _short(Path(r['data']).name, 44)
        print(f'{name:<44} {r["relative_error_percent"]:>10.2f} {nrms:>8} '
              f'{r["absolute_error"]:>9.3f}  ' + ' '.join(f'{x:.3f}' for x in r['rmse']))


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else '…' + text[-(width - 1):]


def _write_csv(path, v, joints) -> None:
    buf = io.StringIO()
    header = ['t'] + [f'measured_{j}' for j in joints] + [f'predicted_{j}' for j in joints]
    np.savetxt(buf, np.column_stack([v.t, v.measured, v.predicted]),
               delimiter=',', header=','.join(header), comments='', fmt='%.9g')
    write_atomic(Path(path), buf.getvalue())


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f'robot-ident: warning: {message}', file=sys.stderr)


if __name__ == '__main__':
    sys.exit(main())
