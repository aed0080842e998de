"""``robot-ident fleet``: identify the recordings of many robots on Dask and report their drift
(docs/fleet.md).

    robot-ident fleet identify --manifest FLEET.yaml --out FLEET_DIR [--scheduler ADDR]
                               [--workers N] [--no-progress]
    robot-ident fleet report FLEET_DIR [--out DIR]

``identify`` runs the tasks that are not done (resume by content hash), writes fleet.yaml, then
the drift report (unless it is already that of this fleet.yaml). Bad input (the manifest, a
URDF, a glob matching nothing) is one line and exit code 2 before any work; a task that fails
fails alone, is listed, and the exit code is 1.
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from ..fleet.drift import report_is_current
from ..fleet.engine import identify_fleet
from ..fleet.manifest import load_fleet
from .progress import progress_bar

NO_PROGRESS_HELP = 'no progress bar (none either when stderr is not a terminal)'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the sub-verbs ``identify`` and ``report`` with their arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The verb's sub-parser.
    """
    sub = parser.add_subparsers(required=True, metavar='SUBCOMMAND', parser_class=type(parser))
    text = 'identify every recording of a fleet manifest on Dask, then report the drift'
    identify = sub.add_parser('identify', help=text, description=text)
    identify.add_argument('--manifest', required=True, metavar='FLEET.yaml',
                          help='the fleet manifest (robot-ident/fleet/1)')
    identify.add_argument('--out', required=True, dest='out_dir', metavar='FLEET_DIR',
                          help='folder of the results, fleet.yaml, drift.yaml and report/')
    identify.add_argument('--scheduler', metavar='tcp://HOST:PORT',
                          help='a running Dask scheduler (default: an embedded LocalCluster)')
    identify.add_argument('--workers', type=int, metavar='N',
                          help='worker processes of the embedded cluster (default: the cores)')
    identify.add_argument('--no-progress', action='store_true', help=NO_PROGRESS_HELP)
    identify.set_defaults(run=_identify)
    text = 'write drift.yaml and the HTML fleet page of a fleet folder'
    report = sub.add_parser('report', help=text, description=text)
    report.add_argument('fleet_dir', metavar='FLEET_DIR', help='the folder of fleet identify')
    report.add_argument('--out', dest='out_dir', metavar='DIR',
                        help='folder of the page (default FLEET_DIR/report)')
    report.add_argument('--no-progress', action='store_true', help=NO_PROGRESS_HELP)
    report.set_defaults(run=_report)


def _identify(args: argparse.Namespace) -> int:
    """Run the fleet, print what failed and the alerts; 1 if a task failed."""
    if args.workers is not None and args.workers < 1:
        raise InputError(f'--workers must be at least 1, got {args.workers}')
    if args.workers is not None and args.scheduler:
        raise InputError('--workers is for the embedded cluster; the workers of --scheduler '
                         'are those started with it')
    fleet = load_fleet(args.manifest)
    with progress_bar(args, 'fleet', unit='task') as bar:
        run = identify_fleet(fleet, args.out_dir, scheduler=args.scheduler,
                             workers=args.workers, progress=bar)
    failures = run.index.failures()
    print(f'{len(fleet.robots)} robots: {run.ran} tasks run, {run.reused} unchanged, '
          f'{len(failures)} failed; index written to {args.out_dir}/fleet.yaml')
    for robot, name, reason in failures:
        print(f'  failed {robot}/{name}: {reason}')
    if report_is_current(args.out_dir):
        print('drift report unchanged')
    else:
        print_report(_write_report(args.out_dir))
    return 1 if failures else 0


def _report(args: argparse.Namespace) -> int:
    """Write the drift report; 0 (errors raise)."""
    print_report(_write_report(args.fleet_dir, args.out_dir))
    return 0


def _write_report(fleet_dir, out_dir=None):
    """``page.write_fleet_report``, imported only when a report is written (matplotlib takes
    a second to import; a resumed run with nothing new writes none)."""
    from ..fleet.page import write_fleet_report

    return write_fleet_report(fleet_dir, out_dir)


def print_report(report) -> None:
    """Print the alerts and where the report is.

    Parameters
    ----------
    report : FleetReport
        What ``write_fleet_report`` wrote.
    """
    alerts = report.analysis.alerts
    print(f'{len(alerts)} drift alert{"s" * (len(alerts) != 1)}')
    for a in alerts:
        print(f'  {a.robot} {a.joint} {a.quantity} ({a.basis}): {a.baseline:.4g} -> '
              f'{a.current:.4g} ({a.change_percent:+.1f} %, z {a.z:.1f}) since '
              f'{a.first_recording}')
    print(f'drift written to {report.drift_path}, page to {report.page}')
