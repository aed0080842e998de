"""``robot-ident``: identification, validation and excitation design from the command line.

    robot-ident identify --urdf URDF --data D [D ...] [--validate D ...] --out RESULT.yaml
    robot-ident validate --model RESULT.yaml --data D [--csv PRED.csv] [--json]
    robot-ident excite --urdf URDF [--config CFG] [--optimizer ga+local] --out TRAJ.yaml
    robot-ident excite --evaluate TRAJ.yaml --urdf URDF [--config CFG]
    robot-ident excite --jointwise JOINT [JOINT ...] --urdf URDF [--config CFG] --out FILE.yaml
    robot-ident export-urdf --model RESULT.yaml --out ROBOT.urdf [--force]
    robot-ident payload --urdf URDF (--unloaded D ... | --model RESULT.yaml) --loaded D ...
                        [--method all] [--frame FRAME] [--known-mass KG] --out PAYLOAD.yaml
    robot-ident friction (--model RESULT.yaml | --urdf URDF) --data D [D ...] [--joints J ...]
                         [--friction-model M|all] [--optimizer lsq|ga|sa-ga|all] --out FRICTION.yaml
    robot-ident estimate-torque (--model RESULT.yaml | --urdf URDF) [--payload PAYLOAD.yaml]
                                --data D [--reference TRAJ.yaml] [--method M] --out TORQUES.csv
    robot-ident repair-bag BAG [BAG ...]
    robot-ident report [--model RESULT.yaml] [--payload PAYLOAD.yaml] [--friction FRICTION.yaml]
                       [--torques TORQUES.csv] --out DIR
    robot-ident fleet identify --manifest FLEET.yaml --out FLEET_DIR [--scheduler ADDR]
    robot-ident fleet report FLEET_DIR [--out DIR]

``identify``, ``payload`` and ``friction`` take ``--report DIR``: the report of what they wrote.

The verbs that read recordings take ``--recover``: a rosbag2 that a killed recorder left
unfinished is read up to its damage (with a warning) instead of refused.

One module per verb; only the module of the verb given is imported. Errors in the input print
one line ``robot-ident: error: ...`` on stderr and exit with code 2. The verbs that can take
long draw a progress bar on stderr when it is a terminal (``--no-progress``: none; the bar is
cleared before an error line; ``cli/progress.py``). BLAS runs on one thread
(``ROBOT_IDENT_BLAS_THREADS``, see ``ident_core.threads``).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from ..errors import IdentError
from ..threads import limit_blas_threads

#: Options that name a file a verb writes: checked before any work.
OUTPUTS = {'out': '--out', 'csv': '--csv', 'export_urdf': '--export-urdf'}
#: Options that name a folder a verb writes into: checked before any work.
OUTPUT_DIRS = {'out_dir': '--out', 'report': '--report'}

VERBS = {
    'identify': 'identify base parameters, friction and rotor inertia from recordings',
    'validate': 'predict the torques of a recording with an identified model',
    'excite': 'optimise (or evaluate) an excitation trajectory',
    'export-urdf': 'write the URDF with the identified inertias, friction and rotor inertia',
    'payload': "identify a payload's mass, centre of mass and inertia",
    'friction': 'identify Coulomb-viscous and (improved) Stribeck friction per joint',
    'estimate-torque': 'filter joint torques with a dynamic model, estimate external torques',
    'repair-bag': 'make rosbag2 recordings a killed recorder left unfinished readable again',
    'report': 'write an HTML report of an identification, payload, friction or torque estimate',
    'fleet': "identify many robots' recordings on Dask and report their drift",
}


def main(argv: list[str] | None = None) -> int:
    """Run ``robot-ident``.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit code: 0 ok, 1 a check failed (``excite --evaluate``) or a task of ``fleet
        identify`` failed, 2 bad input, 130 interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = next((a for a in argv if not a.startswith('-')), None)
    args = build_parser(verb).parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        _check_outputs(args)
        with limit_blas_threads():
            return args.run(args)
    except IdentError as exc:
        print(f'robot-ident: error: {exc}', file=sys.stderr)
        return 2
    except OSError as exc:                       # an output that cannot be written
        print(f'robot-ident: error: {exc.filename}: cannot write ({exc.strerror})',
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The argument parser, with the arguments of one verb.

    Parameters
    ----------
    verb : str, optional
        The verb whose module is imported to add its arguments (None: no verb's).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = _OneLineParser(prog='robot-ident', description=__doc__.splitlines()[0]
                            .replace('``', ''))
    sub = parser.add_subparsers(required=True, metavar='COMMAND', parser_class=_OneLineParser)
    for name, text in VERBS.items():
        p = sub.add_parser(name, help=text, description=text)
        if name == verb:
            importlib.import_module(f'{__name__}.{name.replace("-", "_")}').add_arguments(p)
            if name != 'fleet':               # fleet's sub-verbs have their own
                p.add_argument('--no-progress', action='store_true',
                               help='no progress bar (none either when stderr is not a '
                                    'terminal)')
    return parser


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error."""

    def error(self, message: str):
        self.exit(2, f'{self.prog}: error: {message} (see {self.prog} --help)\n')


def _check_outputs(args: argparse.Namespace) -> None:
    """Every output file the command names can be written (``files.check_output``); a name
    template (``{joint}``) is checked by its folder; so can every output folder."""
    from ..files import check_output, check_output_dir

    for attribute, option in OUTPUTS.items():
        value = getattr(args, attribute, None)
        if value:
            check_output(value.replace('{joint}', 'joint'), option)
    for attribute, option in OUTPUT_DIRS.items():
        value = getattr(args, attribute, None)
        if value:
            check_output_dir(value, option)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f'robot-ident: warning: {message}', file=sys.stderr)
