"""``robot-ident report``: a self-contained HTML report (``DIR/index.html``) of an identified
model, a payload, friction or torque estimates (``report.write_report``; matplotlib is imported
only when a report is written)."""
from __future__ import annotations

import argparse

from .progress import progress_bar
from .repair_bag import RECOVER_HELP

#: Help of the ``--report`` option of identify, payload and friction.
REPORT_HELP = 'also write the HTML report of the result into this folder (DIR/index.html)'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``report``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-parser of ``report``; its ``run`` default is set.
    """
    parser.add_argument('--model', metavar='RESULT.yaml', help='identified model (torques on '
                        'its recordings, parameters, excitation)')
    parser.add_argument('--payload', metavar='PAYLOAD.yaml', help='identified payload')
    parser.add_argument('--friction', metavar='FRICTION.yaml', help='identified friction')
    parser.add_argument('--torques', metavar='TORQUES.csv', help='torque estimates '
                        '(estimate-torque; true_<joint> columns are drawn when present)')
    parser.add_argument('--urdf', help='use this URDF instead of the one the files name')
    parser.add_argument('--ignore-urdf-change', action='store_true',
                        help='use a URDF that differs from the one RESULT.yaml was identified with')
    parser.add_argument('--recover', action='store_true', help=RECOVER_HELP)
    parser.add_argument('--out', dest='out_dir', required=True, metavar='DIR',
                        help='folder of the report (index.html)')
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Write the report, print its path; 0 (errors raise)."""
    _write(args, args.out_dir, model=args.model, payload=args.payload, friction=args.friction,
           torques=args.torques, urdf=args.urdf, ignore_urdf_change=args.ignore_urdf_change,
           recover=args.recover)
    return 0


def report_after(args: argparse.Namespace, **files) -> None:
    """The ``--report DIR`` of identify, payload and friction: the report of the files just
    written.

    Parameters
    ----------
    args : argparse.Namespace
        The verb's options: ``report`` (the folder; None: no report) and ``no_progress``.
    **files
        ``ReportInputs`` fields (``model=``, ``payload=``...).
    """
    if args.report:
        _write(args, args.report, **files)


def _write(args: argparse.Namespace, folder: str, **files) -> None:
    """Write the report with a progress bar, print its path."""
    from ..report.page import ReportInputs, write_report

    with progress_bar(args, 'report', unit='part') as bar:
        page = write_report(folder, ReportInputs(**files), progress=bar)
    print(f'report written to {page}')
