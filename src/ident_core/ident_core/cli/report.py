"""``robot-ident report``: a self-contained HTML report (``DIR/index.html``) of an identified
model, a payload, friction or torque estimates (``report.write_report``; matplotlib is imported
only when a report is written)."""
from __future__ import annotations

import argparse

from ..workflows.report import ReportAfter, report_results
from .progress import progress_bar
from .recordings import add_recording_arguments

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
    add_recording_arguments(parser, window=False)
    parser.add_argument('--out', dest='out_dir', required=True, metavar='DIR',
                        help='folder of the report (index.html)')
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Write the report, print its path; 0 (errors raise)."""
    with progress_bar(args, 'report', unit='part') as bar:
        outcome = report_results(args.out_dir, model=args.model, payload=args.payload,
                                 friction=args.friction, torques=args.torques, urdf=args.urdf,
                                 ignore_urdf_change=args.ignore_urdf_change,
                                 recover=args.recover, progress=bar)
    print_report(ReportAfter(outcome.page))
    return 0


def print_report(report: ReportAfter) -> None:
    """The end of ``--report DIR`` (identify, payload, friction) or of ``report``: print where
    the report was written, or raise why it could not be, once the result is shown.

    Parameters
    ----------
    report : ReportAfter
        The report's page, or why it failed; neither: none was asked for.

    Raises
    ------
    Exception
        ``report.failure``, when there is one (``InputError``: one line, exit code 2).
    """
    if report.failure is not None:
        raise report.failure
    if report.page is not None:
        print(f'report written to {report.page}')
