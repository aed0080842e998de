"""``ident_launch``: run a YAML launch file (the subset we use) without launch/launch_ros.

    ident_launch <package> <file.launch.yaml> [name:=value ...]
    ident_launch <path/to/file.launch.yaml> [name:=value ...]

Output: every node's stdout and stderr go, line by line, to our stdout prefixed with
``[name] `` whatever its ``output:`` (screen, log and both all behave like screen; no log files
are written). The runner's own messages go to stderr prefixed with ``[ident_launch] ``.

Exit codes: 0 every node exited with status 0; 1 a node exited non-zero or by a signal (also
SIGINT: nodes must handle it and exit 0); 2 the launch file or the command line is invalid
(nothing was started).
"""

import argparse
import os
import shlex
import sys

from .description import load, resolve
from .errors import LaunchError, SubstitutionError
from .process import Runner
from .substitutions import find_package_share, unparse

PROG = 'ident_launch'


def build_parser():
    """Build the command-line parser of ``ident_launch``.

    Returns
    -------
    argparse.ArgumentParser
        Parser for ``ARG ...`` (launch file and ``name:=value`` arguments), ``--show-args``,
        ``--print``, ``--sigint-timeout`` and ``--sigterm-timeout``.
    """
    p = argparse.ArgumentParser(
        prog=PROG,
        description='Run a ROS 2 YAML launch file (supported subset: arg and node entries; '
                    '$(var), $(env), $(find-pkg-share), $(find-pkg-prefix), $(dirname), '
                    '$(command)) '
                    'without launch/launch_ros. Usage mirrors `ros2 launch`.')
    p.add_argument('target', nargs='+', metavar='ARG',
                   help='<package> <file.launch.yaml> or <path/to/file.launch.yaml>, '
                        'followed by launch arguments name:=value')
    p.add_argument('--show-args', '--show-arguments', '-s', action='store_true',
                   help='print the launch arguments with defaults and descriptions, then exit')
    p.add_argument('--print', '-p', action='store_true', dest='print_only',
                   help='print the resolved node command lines, start nothing')
    p.add_argument('--sigint-timeout', type=float, default=10.0, metavar='S',
                   help='seconds to wait after SIGINT before SIGTERM (default: %(default)s)')
    p.add_argument('--sigterm-timeout', type=float, default=5.0, metavar='S',
                   help='seconds to wait after SIGTERM before SIGKILL (default: %(default)s)')
    return p


def split_target(items):
    """Split the positional arguments into the launch file and the launch arguments.

    ``<package> <file.launch.yaml> [name:=value ...]`` when the second item is not a
    ``name:=value``, else ``<path/to/file.launch.yaml> [name:=value ...]``.

    Parameters
    ----------
    items : list of str
        The positional arguments (at least one).

    Returns
    -------
    path : str
        The launch file.
    overrides : dict of {str: str}
        The launch arguments, ``{name: value}``.

    Raises
    ------
    LaunchError
        If the launch file is not found or is ambiguous (see :func:`find_launch_file`), or a
        launch argument is not of the form ``name:=value`` with a name and a value (as
        ``ros2 launch``, which has no way to give an empty value either).
    """
    if len(items) > 1 and ':=' not in items[1]:
        package, file_name, rest = items[0], items[1], items[2:]
        path = find_launch_file(package, file_name)
    else:
        path, rest = items[0], items[1:]
        if not os.path.isfile(path):
            raise LaunchError(f'launch file not found: {path}')
    overrides = {}
    for item in rest:
        # as ros2launch's parse_launch_arguments: no empty name, no empty value ('x:=' is
        # refused, 'x:=a:=' is 'a:='), the last of a repeated name wins
        name, sep, value = item.partition(':=')
        if not sep or not name or not value:
            raise LaunchError(f"malformed launch argument {item!r}; expected name:=value")
        overrides[name] = value
    return path, overrides


def find_launch_file(package, file_name):
    """Locate a launch file the way ``ros2 launch`` does.

    ``share/<package>/<file_name>`` if it is a file, else the unique file with the base name
    of ``file_name`` anywhere below the share directory.

    Parameters
    ----------
    package : str
        Package whose share directory is searched.
    file_name : str
        File name, or a path relative to the share directory.

    Returns
    -------
    str
        Absolute path of the launch file.

    Raises
    ------
    LaunchError
        If the package is unknown, or no file or more than one file matches.
    """
    try:
        share = find_package_share(package)
    except SubstitutionError as exc:
        raise LaunchError(str(exc)) from None
    direct = os.path.join(share, file_name)
    if os.path.isfile(direct):
        return direct
    base = os.path.basename(file_name)
    matches = sorted(os.path.join(root, base) for root, _, files in os.walk(share)
                     if base in files)
    if not matches:
        raise LaunchError(f"launch file '{file_name}' not found in package '{package}' ({share})")
    if len(matches) > 1:
        raise LaunchError(f"launch file '{file_name}' is ambiguous in package '{package}': "
                          + ', '.join(matches))
    return matches[0]


def show_args(launch_file, out):
    """Write the launch arguments with their descriptions and defaults (``--show-args``).

    Parameters
    ----------
    launch_file : LaunchFile
        The loaded launch file.
    out : io.TextIOBase
        Stream to write to.
    """
    args = launch_file.args
    if not args:
        out.write('No arguments.\n')
        return
    out.write("Arguments (pass arguments as '<name>:=<value>'):\n")
    for arg in args:
        out.write(f"\n    '{arg.name}':\n")
        out.write(f'        {arg.description or "no description given"}\n')
        if arg.default is None:
            out.write('        (required: no default)\n')
        else:
            out.write(f"        (default: '{unparse(arg.default)}')\n")


def print_commands(variables, specs, out):
    """Write the launch argument values and the node command lines (``--print``).

    One ``# arg`` comment per argument, then per node a ``# [label] pkg/exec`` comment and its
    shell-quoted command line.

    Parameters
    ----------
    variables : dict of {str: str}
        The launch argument values.
    specs : list of NodeSpec
        The nodes to start.
    out : io.TextIOBase
        Stream to write to.
    """
    for name, value in variables.items():
        out.write(f'# arg {name} = {value!r}\n')
    for spec in specs:
        extra = ', on_exit: shutdown' if spec.shutdown_on_exit else ''
        out.write(f'# [{spec.label}] {spec.pkg}/{spec.executable}{extra}\n')
        out.write(shlex.join(spec.cmd) + '\n')


def main(argv=None):
    """Run the ``ident_launch`` command.

    Parameters
    ----------
    argv : list of str, optional
        The command-line arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit status: 0 every node exited with status 0 (also for ``--show-args``,
        ``--print`` and no nodes to start); 1 a node exited non-zero or by a signal (also
        SIGINT) or could not be started; 2 the launch file or the command line is invalid
        (the error is printed to stderr, nothing is started).

    Raises
    ------
    SystemExit
        From argparse: status 2 for invalid options, 0 for ``--help``.
    """
    args = build_parser().parse_intermixed_args(argv)
    try:
        path, overrides = split_target(args.target)
        launch_file = load(path)
        if args.show_args:
            show_args(launch_file, sys.stdout)
            return 0
        variables, specs = resolve(launch_file, overrides)
    except LaunchError as exc:
        print(f'{PROG}: error: {exc}', file=sys.stderr)
        return 2
    if args.print_only:
        print_commands(variables, specs, sys.stdout)
        return 0
    if not specs:
        print(f'[{PROG}] no nodes to start', file=sys.stderr)
        return 0
    runner = Runner(specs, sigint_timeout=args.sigint_timeout,
                    sigterm_timeout=args.sigterm_timeout)
    return runner.run()


if __name__ == '__main__':
    sys.exit(main())
