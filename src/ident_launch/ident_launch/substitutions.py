r"""Parsing and evaluation of launch substitutions (``$(var x)``, ``$(find-pkg-share p)``, ...).

A string is parsed into a tuple of parts: plain ``str`` text and :class:`Sub` nodes. Arguments of a
substitution are themselves part tuples, so ``$(find-pkg-share $(var pkg))`` nests. Arguments are
separated by white space and may be quoted with ``'`` or ``"`` (``$(env GREETING 'hello world')``).
A backslash escapes the character after it, as in the launch front ends' grammar: ``\$(var x)``
is the text ``$(var x)``, ``\'`` a quote inside a quoted argument, ``\\`` one backslash, and any
other ``\c`` is ``c`` (``a\b`` is ``ab``); a backslash at the end, before a line break, or before
the white space that ends an unquoted argument stays.

Supported: ``var NAME``, ``find-pkg-share PKG``, ``find-pkg-prefix PKG``, ``env NAME [DEFAULT]``,
``dirname`` and ``command 'CMD ARGS' [ON_STDERR]`` (the standard output of a command, e.g. a URDF
for ``robot_description``: ``$(command 'cat $(var urdf)')``). Everything else is refused at parse
time, so a launch file using e.g. ``$(eval ...)`` fails before any process starts. Pure
functions apart from ``command``, which runs its command when evaluated; no ROS needed.
"""

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

from .errors import SubstitutionError

# name -> (min args, max args)
SUPPORTED = {
    'var': (1, 1),
    'find-pkg-share': (1, 1),
    'find-pkg-prefix': (1, 1),
    'env': (1, 2),
    'dirname': (0, 0),
    'command': (1, 2),
}
#: What ``$(command CMD ON_STDERR)`` does with output on standard error (as launch's
#: CommandSubstitution): fail (the default), ignore it, warn (print it), capture (append it).
ON_STDERR = ('fail', 'ignore', 'warn', 'capture')

_NAME_CHARS = set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-')
# launch.frontend.parse_substitution.replace_escaped_characters: a backslash and the character
# after it (any but a new line) give that character
_ESCAPED = re.compile(r'\\(.)')


@dataclass(frozen=True)
class Sub:
    """One ``$(name arg ...)``; each arg is a tuple of parts.

    ``str(sub)`` writes it back as launch-file text, quoting arguments that are empty or contain
    white space.

    Parameters
    ----------
    name : str
        Substitution name, one of :data:`SUPPORTED` (checked by :func:`parse`).
    args : tuple of tuple
        The arguments, each a tuple of parts (``str`` text and nested :class:`Sub`).
    """

    name: str
    args: tuple

    def __str__(self):
        args = [unparse(a) for a in self.args]
        args = [f"'{a}'" if not a or any(c.isspace() for c in a) else a for a in args]
        return '$(' + ' '.join([self.name] + args) + ')'


def unparse(parts):
    """Return the text of a parsed value (for messages and ``--show-args``).

    Parameters
    ----------
    parts : tuple of (str or Sub)
        A parsed value, as returned by :func:`parse`.

    Returns
    -------
    str
        Plain text as is, substitutions written as ``$(name arg ...)``.
    """
    return ''.join(str(p) for p in parts)


def parse(text):
    """Parse ``text`` into a tuple of parts.

    Parameters
    ----------
    text : str
        A launch-file string, possibly containing substitutions.

    Returns
    -------
    tuple of (str or Sub)
        Plain text and :class:`Sub` nodes in order; adjacent text is merged and empty text
        left out (``''`` gives ``()``).

    Raises
    ------
    SubstitutionError
        For bad syntax (unterminated substitution or quote, missing or invalid name) and for
        names that are not supported or get a wrong number of arguments.
    """
    parts, pos = _parse_text(text, 0)
    assert pos == len(text)
    return parts


def _append(parts, piece):
    if not piece:
        return
    if parts and isinstance(parts[-1], str) and isinstance(piece, str):
        parts[-1] += piece
    else:
        parts.append(piece)


def _parse_text(text, pos):
    parts = []
    while pos < len(text):
        start = _find_substitution(text, pos)
        if start < 0:
            _append(parts, _ESCAPED.sub(r'\1', text[pos:]))
            return tuple(parts), len(text)
        _append(parts, _ESCAPED.sub(r'\1', text[pos:start]))
        sub, pos = _parse_sub(text, start)
        parts.append(sub)
    return tuple(parts), pos


def _find_substitution(text, pos):
    """Index of the next ``$(`` from ``pos`` that no backslash escapes, or -1."""
    start = text.find('$(', pos)
    while start > 0 and text[start - 1] == '\\':
        start = text.find('$(', start + 1)
    return start


def _parse_sub(text, start):
    """Parse ``$(...)`` starting at ``start``; return (Sub, position after ')')."""
    pos = start + 2
    name_start = pos
    while pos < len(text) and text[pos] in _NAME_CHARS:
        pos += 1
    name = text[name_start:pos]
    if not name:
        raise SubstitutionError(f"missing substitution name after '$(' at column {start + 1}")
    args = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            raise SubstitutionError(f"unterminated substitution '$({name}' (missing ')')")
        if text[pos] == ')':
            pos += 1
            break
        if pos == name_start + len(name):
            raise SubstitutionError(
                f"invalid substitution name '{name}{text[pos]}' at column {name_start + 1}")
        arg, pos = _parse_arg(text, pos, name)
        args.append(arg)
    if name not in SUPPORTED:
        raise SubstitutionError(
            f"unsupported substitution '$({name} ...)' (supported: "
            + ', '.join(f'$({n})' for n in SUPPORTED) + ')')
    lo, hi = SUPPORTED[name]
    if not lo <= len(args) <= hi:
        want = str(lo) if lo == hi else f'{lo} or {hi}'
        raise SubstitutionError(
            f"substitution '$({name})' takes {want} argument(s), got {len(args)}")
    return Sub(name, tuple(args)), pos


def _parse_arg(text, pos, subname):
    """One argument: up to white space or ')', with quotes and nested substitutions."""
    parts = []
    while pos < len(text) and not text[pos].isspace() and text[pos] != ')':
        c = text[pos]
        if c == '\\' and pos + 1 < len(text) and not text[pos + 1].isspace():
            _append(parts, text[pos + 1])
            pos += 2
        elif text.startswith('$(', pos):
            sub, pos = _parse_sub(text, pos)
            parts.append(sub)
        elif c in '\'"':
            end_pos = pos + 1
            while True:
                if end_pos >= len(text):
                    raise SubstitutionError(
                        f"unterminated quote {c} in substitution '$({subname} ...)'")
                if text[end_pos] == c:
                    break
                if text[end_pos] == '\\':
                    end_pos += 2
                elif text.startswith('$(', end_pos):
                    _, end_pos = _parse_sub(text, end_pos)
                else:
                    end_pos += 1
            inner, _ = _parse_text(text[pos + 1:end_pos], 0)
            for p in inner:
                _append(parts, p)
            pos = end_pos + 1
        else:
            _append(parts, c)
            pos += 1
    return tuple(parts), pos


def substitutions_in(parts):
    """Iterate over all Sub nodes in ``parts``, nested ones included.

    Parameters
    ----------
    parts : tuple of (str or Sub)
        A parsed value.

    Yields
    ------
    Sub
        Each substitution, followed by the ones nested in its arguments (depth first).
    """
    for p in parts:
        if isinstance(p, Sub):
            yield p
            for a in p.args:
                yield from substitutions_in(a)


class Context:
    """What substitutions evaluate against.

    Parameters
    ----------
    launch_file : str or os.PathLike
        The launch file; ``$(dirname)`` gives its directory.
    variables : dict of {str: str}, optional
        Launch argument values for ``$(var NAME)`` (copied); default none.
    environ : mapping of {str: str}, optional
        Environment for ``$(env NAME)``; default ``os.environ``.

    Attributes
    ----------
    dirname : str
        Absolute path of the directory of the launch file.
    variables : dict of {str: str}
        Launch argument values: :func:`~ident_launch.description.resolve` starts with the
        given ones and adds each declared argument without a value when it reaches its
        declaration.
    environ : mapping of {str: str}
        Environment for ``$(env NAME)`` (not copied).
    """

    def __init__(self, launch_file, variables=None, environ=None):
        self.dirname = os.path.dirname(os.path.abspath(launch_file))
        self.variables = dict(variables or {})
        self.environ = os.environ if environ is None else environ


def _package_lookup(kind, package):
    from ament_index_python.packages import (
        PackageNotFoundError,
        get_package_prefix,
        get_package_share_directory,
    )
    try:
        if kind == 'share':
            return get_package_share_directory(package)
        return get_package_prefix(package)
    except (PackageNotFoundError, LookupError, ValueError) as exc:
        raise SubstitutionError(
            f"package '{package}' not found (AMENT_PREFIX_PATH="
            f"{os.environ.get('AMENT_PREFIX_PATH', '')!r}): {exc}") from None


def find_package_prefix(package):
    """Return the install prefix of a package, like ``$(find-pkg-prefix)``.

    Parameters
    ----------
    package : str
        Package name, looked up in the ament index (``AMENT_PREFIX_PATH``).

    Returns
    -------
    str
        The prefix directory (holding ``lib/<package>`` and ``share/<package>``).

    Raises
    ------
    SubstitutionError
        If the package is not found or its name is invalid; the message shows
        ``AMENT_PREFIX_PATH``.
    """
    return _package_lookup('prefix', package)


def find_package_share(package):
    """Return the share directory of a package, like ``$(find-pkg-share)``.

    Parameters
    ----------
    package : str
        Package name, looked up in the ament index (``AMENT_PREFIX_PATH``).

    Returns
    -------
    str
        The share directory, ``<prefix>/share/<package>``.

    Raises
    ------
    SubstitutionError
        If the package is not found or its name is invalid; the message shows
        ``AMENT_PREFIX_PATH``.
    """
    return _package_lookup('share', package)


def evaluate(parts, ctx):
    """Evaluate parts to a string.

    Parameters
    ----------
    parts : tuple of (str or Sub)
        A parsed value.
    ctx : Context
        Launch arguments, environment and launch-file directory to evaluate against.

    Returns
    -------
    str
        The text with every substitution replaced by its value.

    Raises
    ------
    SubstitutionError
        If ``$(var NAME)`` names an unknown launch argument, ``$(env NAME)`` without a default
        names an unset variable, ``$(find-pkg-share)``/``$(find-pkg-prefix)`` names a
        package that is not found, or a ``$(command)`` fails (see :func:`run_command`).
    """
    return ''.join(p if isinstance(p, str) else _evaluate_sub(p, ctx) for p in parts)


def _evaluate_sub(sub, ctx):
    args = [evaluate(a, ctx) for a in sub.args]
    if sub.name == 'var':
        if args[0] not in ctx.variables:
            raise SubstitutionError(f"$(var {args[0]}): unknown launch argument '{args[0]}'")
        return ctx.variables[args[0]]
    if sub.name == 'env':
        value = ctx.environ.get(args[0])
        if value is None:
            if len(args) == 2:
                return args[1]
            raise SubstitutionError(
                f"$(env {args[0]}): environment variable '{args[0]}' is not set "
                f"(give a default: $(env {args[0]} DEFAULT))")
        return value
    if sub.name == 'find-pkg-share':
        return find_package_share(args[0])
    if sub.name == 'find-pkg-prefix':
        return find_package_prefix(args[0])
    if sub.name == 'dirname':
        return ctx.dirname
    if sub.name == 'command':
        return run_command(args[0], args[1] if len(args) == 2 else 'fail')
    raise SubstitutionError(f'unsupported substitution {sub}')  # parse() prevents this


def run_command(command, on_stderr='fail'):
    """Run a command and return its standard output, like ``$(command)`` of ROS 2 launch.

    Parameters
    ----------
    command : str
        The command line, split shell-like (``shlex``; no shell: no pipes or redirections).
    on_stderr : str, optional
        One of :data:`ON_STDERR`: what output on standard error does: ``'fail'`` (an error),
        ``'ignore'``, ``'warn'`` (copied to our standard error) or ``'capture'`` (part of the
        result, where the command wrote it: standard error goes to standard output).

    Returns
    -------
    str
        The command's standard output (UTF-8, line breaks as ``\n``), unchanged.

    Raises
    ------
    SubstitutionError
        If ``on_stderr`` is unknown, the command line is empty or cannot be split, the
        program is not found or cannot run, it exits non-zero, or (``'fail'``) it writes to
        standard error; one line naming the command and the first line of its error output.
    """
    if on_stderr not in ON_STDERR:
        raise SubstitutionError(f"$(command '{command}' {on_stderr}): unknown on_stderr "
                                f"(choose from {', '.join(ON_STDERR)})")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SubstitutionError(f"$(command '{command}'): cannot split the command: {exc}") \
            from None
    if not argv:
        raise SubstitutionError('$(command): empty command')
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if on_stderr == 'capture' else subprocess.PIPE,
            text=True, encoding='utf-8', errors='replace', check=False)
    except OSError as exc:
        raise SubstitutionError(f"$(command '{command}'): cannot run {argv[0]!r}: "
                                f'{exc.strerror}') from None
    err = done.stderr or ''
    first = next((line for line in err.splitlines() if line.strip()), '')
    if done.returncode != 0:
        raise SubstitutionError(f"$(command '{command}') exited with code {done.returncode}"
                                + (f': {first}' if first else ''))
    if err:
        if on_stderr == 'fail':
            raise SubstitutionError(f"$(command '{command}') wrote to standard error: {first} "
                                    "(give on_stderr: $(command '...' ignore))")
        if on_stderr == 'warn':
            sys.stderr.write(f"[ident_launch] $(command '{command}'): {err.rstrip()}\n")
    return done.stdout


def split_command_line(parts, ctx):
    """Split a parsed ``args``/``ros_args`` string into arguments like ``ros2 launch`` does.

    Plain text is split shell-like (``shlex``); a substitution's result is never split, and it
    joins the text directly before/after it when there is no white space in between.

    Parameters
    ----------
    parts : tuple of (str or Sub)
        The parsed string.
    ctx : Context
        What the substitutions evaluate against.

    Returns
    -------
    list of str
        The command-line arguments.

    Raises
    ------
    SubstitutionError
        If plain text cannot be split (e.g. an unbalanced quote) or a substitution cannot be
        evaluated (see :func:`evaluate`).
    """
    result = []
    current = None  # None: no argument in progress

    def flush():
        """End the argument in progress, if any."""
        nonlocal current
        if current is not None:
            result.append(current)
        current = None

    for part in parts:
        if isinstance(part, Sub):
            current = (current or '') + _evaluate_sub(part, ctx)
            continue
        try:
            tokens = shlex.split(part)
        except ValueError as exc:
            raise SubstitutionError(f'cannot split {part!r} into arguments: {exc}') from None
        if not tokens:
            flush()
            continue
        if part[0].isspace():
            flush()
        current = (current or '') + tokens[0]
        for token in tokens[1:]:
            flush()
            current = token
        if part[-1].isspace():
            flush()
    flush()
    return result
