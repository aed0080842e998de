"""``robot-ident validate``: predict the torques of a recording with an identified model
(RESULT.yaml) and compare with the measured ones (docs/methods.md §5)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..workflows.identify import validate_recording
from .progress import progress_bar
from .recordings import add_recording_arguments, recording_options


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
    add_recording_arguments(parser)
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Validate, print the metrics (or JSON), write the CSV if asked; 0 (errors raise)."""
    with progress_bar(args, 'validate') as bar:
        v = validate_recording(args.model, args.data, urdf=args.urdf,
                               ignore_urdf_change=args.ignore_urdf_change,
                               recordings=recording_options(args), csv=args.csv,
                               progress=bar).validation
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
