"""``robot-ident validate``: predict the torques of a recording with an identified model
(RESULT.yaml) and compare with the measured ones (docs/methods.md §5)."""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import numpy as np

from ..data.datasets import load_dataset
from ..estimation.identification import validate
from ..estimation.results import read_result
from ..files import write_atomic
from .progress import progress_bar
from .repair_bag import RECOVER_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``validate``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-parser of ``validate``; its ``run`` default is set.
    """
    parser.add_argument('--model', required=True, metavar='RESULT.yaml')
    parser.add_argument('--data', required=True, metavar='DATASET')
    parser.add_argument('--urdf', help='use this URDF instead of the one recorded in the result')
    parser.add_argument('--csv', metavar='PRED.csv',
                        help='write time, measured and predicted torques')
    parser.add_argument('--json', action='store_true', help='print the metrics as one JSON object')
    parser.add_argument('--ignore-urdf-change', action='store_true',
                    help='use a URDF that differs from the one RESULT.yaml was identified with')
    parser.add_argument('--recover', action='store_true', help=RECOVER_HELP)
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Validate, print the metrics (or JSON), write the CSV if asked; 0 (errors raise)."""
    model = read_result(args.model, args.urdf, args.ignore_urdf_change)
    with progress_bar(args, 'validate') as bar:
        bar.set_description(f'reading {args.data}')
        dataset = load_dataset(args.data, model.robot.joint_names, recover=args.recover)
        v = validate(model, dataset, progress=bar)
    if args.csv:
        _write_csv(args.csv, v, model.robot.joint_names)
    if args.json:
        print(json.dumps(v.report()))
    else:
        for line in v.preprocessing:
            print(line)
        print_validation([v.report()])
    return 0


def print_validation(reports: list[dict]) -> None:
    """Print one line of metrics per validation dataset.

    Parameters
    ----------
    reports : list of dict
        ``{'data': source, **metrics.all_metrics(...)}`` each.
    """
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
