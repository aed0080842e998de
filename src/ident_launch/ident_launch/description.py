"""Launch file → validated description → resolved node command lines (pure; starts nothing).

:func:`load` reads and checks the whole file (structure, keys, types, substitution syntax and
names) so that anything outside the supported subset fails before any process starts.
:func:`resolve` applies the command-line arguments, evaluates substitutions and conditions and
builds one :class:`NodeSpec` (command line) per enabled node, with the semantics of
``ros2 launch`` (launch, launch_yaml, launch_ros): launch arguments are set before the file's
declarations are evaluated, undeclared ones are accepted, a missing parameter file is skipped
with a warning, parameter values are typed as in :mod:`ident_launch.params`.
"""

import os
import sys
from dataclasses import dataclass, field

import yaml

from . import params as params_mod
from .errors import LaunchError, SubstitutionError
from .substitutions import Context, evaluate, find_package_prefix, parse, split_command_line

ENTRY_TYPES = ('arg', 'node')
ARG_KEYS = ('name', 'default', 'description')
NODE_KEYS = ('pkg', 'exec', 'name', 'namespace', 'param', 'remap', 'args', 'ros_args', 'output',
             'on_exit', 'if', 'unless')
NODE_REQUIRED = ('pkg', 'exec')
OUTPUT_MODES = ('screen', 'log', 'both')
ON_EXIT_ACTIONS = ('shutdown',)
#: ``type:`` of a ``name:``/``value:`` parameter (launch_ros): ``str`` keeps a substituted value
#: a string (a URDF is not read as YAML).
PARAM_TYPES = ('str',)


@dataclass
class ArgDecl:
    """A launch argument declaration (``- arg:`` entry), as loaded.

    Parameters
    ----------
    index : int
        Position of the entry in the ``launch:`` list.
    name : str
        Argument name.
    default : tuple of (str or Sub), optional
        Parsed default value; None if the argument has no default (it must be passed).
    description : str, optional
        Description shown by ``--show-args``.
    """

    index: int
    name: str
    default: tuple | None = None
    description: str = ''

    @property
    def where(self):
        """Location of the entry in messages.

        Returns
        -------
        str
            ``launch[<index>] (arg '<name>')``.
        """
        return f"launch[{self.index}] (arg '{self.name}')"


@dataclass
class NodeDecl:
    """A node declaration (``- node:`` entry), as loaded: validated, nothing evaluated.

    Parameters
    ----------
    index : int
        Position of the entry in the ``launch:`` list.
    label : str
        Name of the node in messages before evaluation: the raw ``name``, else the raw ``exec``.
    attrs : dict of {str: tuple}, optional
        Parsed parts of the string attributes present, by key (``pkg``, ``exec``, ``name``,
        ``namespace``, ``args``, ``ros_args``, ``if``, ``unless``).
    params : list of tuple, optional
        The ``param`` items in file order: ``('file', key, parts)`` for ``from:`` and
        ``('value', key, name parts, raw value, type)`` for ``name:``/``value:``, where ``key``
        is ``param[<i>]``, the raw value is parts for a string, the value for a bool, int or
        float, or a list of those, and ``type`` is ``'str'`` for ``type: str`` (the value is
        passed as a string, not read as YAML), else None.
    remaps : list of tuple, optional
        The ``remap`` items in file order: ``(key, from parts, to parts)``, ``key`` being
        ``remap[<i>]``.
    output : str, optional
        ``'screen'``, ``'log'`` or ``'both'``.
    shutdown_on_exit : bool, optional
        True for ``on_exit: shutdown``.
    """

    index: int
    label: str
    attrs: dict = field(default_factory=dict)
    params: list = field(default_factory=list)
    remaps: list = field(default_factory=list)
    output: str = 'screen'
    shutdown_on_exit: bool = False

    @property
    def where(self):
        """Location of the entry in messages.

        Returns
        -------
        str
            ``launch[<index>] (node '<label>')``.
        """
        return f"launch[{self.index}] (node '{self.label}')"


@dataclass
class LaunchFile:
    """A loaded and validated launch file.

    Parameters
    ----------
    path : str
        Path of the launch file.
    entries : list of (ArgDecl or NodeDecl)
        The entries in file order.
    """

    path: str
    entries: list

    @property
    def args(self):
        """The argument declarations, in file order.

        Returns
        -------
        list of ArgDecl
            The :class:`ArgDecl` entries.
        """
        return [e for e in self.entries if isinstance(e, ArgDecl)]


@dataclass
class NodeSpec:
    """A node ready to start.

    Parameters
    ----------
    label : str
        Output prefix and name in messages: the node name, else the executable name; ``-2``,
        ``-3``, ... are appended to repeated labels.
    cmd : list of str
        Command line: the executable's path, the node's ``args``, then ``--ros-args`` and the
        name, namespace, parameters, remappings and ``ros_args``.
    pkg : str
        Package of the executable.
    executable : str
        Executable name (``exec``).
    output : str, optional
        ``'screen'``, ``'log'`` or ``'both'`` (the runner treats all like ``'screen'``).
    shutdown_on_exit : bool, optional
        Whether the launch shuts down when this node exits (``on_exit: shutdown``).
    """

    label: str
    cmd: list
    pkg: str
    executable: str
    output: str = 'screen'
    shutdown_on_exit: bool = False


# --------------------------------------------------------------------------------------------
# loading and validation
# --------------------------------------------------------------------------------------------

def load(path):
    """Read and validate a launch file.

    The whole file is checked (structure, keys, types, substitution syntax and names) so that
    anything outside the supported subset fails before any process starts. Nothing is
    evaluated.

    Parameters
    ----------
    path : str or os.PathLike
        The launch file.

    Returns
    -------
    LaunchFile
        The validated entries.

    Raises
    ------
    LaunchError
        If the file cannot be read, is not valid YAML, or has anything outside the supported
        subset; the error names the file, the entry and the key.
    """
    path = str(path)
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except OSError as exc:
        raise LaunchError(f'cannot read launch file: {exc.strerror}', path) from None
    except yaml.YAMLError as exc:
        raise LaunchError('invalid YAML: ' + ' '.join(str(exc).split()), path) from None
    if not isinstance(data, dict) or list(data) != ['launch']:
        found = list(data) if isinstance(data, dict) else type(data).__name__
        raise LaunchError(f"expected a single top-level key 'launch:', found {found}", path)
    items = data['launch']
    if items is None:
        items = []
    if not isinstance(items, list):
        raise LaunchError("'launch:' must be a list of entries (- arg: ... / - node: ...)", path)
    entries = []
    seen_args = set()
    for index, item in enumerate(items):
        where = f'launch[{index}]'
        if not isinstance(item, dict) or len(item) != 1:
            raise LaunchError('each entry must be a single-key mapping (arg: or node:)',
                              path, where)
        (kind, body), = item.items()
        if kind not in ENTRY_TYPES:
            raise LaunchError(f"unsupported entry '{kind}' (supported: arg, node)", path, where,
                              kind)
        if not isinstance(body, dict):
            raise LaunchError(f"'{kind}' must be a mapping", path, where, kind)
        if kind == 'arg':
            entry = _load_arg(path, index, body)
            if entry.name in seen_args:
                raise LaunchError('argument declared twice', path, entry.where, 'name')
            seen_args.add(entry.name)
        else:
            entry = _load_node(path, index, body)
        entries.append(entry)
    return LaunchFile(path, entries)


def _check_keys(body, allowed, path, where, prefix=''):
    for key in body:
        if key not in allowed:
            hint = ' (respawning is not supported by ident_launch)' if key == 'respawn' else ''
            raise LaunchError(f'unsupported key{hint}; supported: ' + ', '.join(allowed),
                              path, where, prefix + str(key))


def _string(body, key, path, where, required=False, keypath=None):
    keypath = keypath or key
    if key not in body:
        if required:
            raise LaunchError('required key is missing', path, where, keypath)
        return None
    value = body[key]
    if not isinstance(value, str):
        raise LaunchError(f'must be a string, got {type(value).__name__} {value!r} '
                          f"(quote it: '{value}')", path, where, keypath)
    return value


def _parse(text, path, where, key):
    try:
        return parse(text)
    except SubstitutionError as exc:
        raise LaunchError(str(exc), path, where, key) from None


def _load_arg(path, index, body):
    where = f'launch[{index}] (arg)'
    name = _string(body, 'name', path, where, required=True)
    if not name or not name.replace('_', 'a').replace('-', 'a').isalnum():
        raise LaunchError(f'invalid argument name {name!r}', path, where, 'name')
    where = f"launch[{index}] (arg '{name}')"
    _check_keys(body, ARG_KEYS, path, where)
    default = _string(body, 'default', path, where)
    description = _string(body, 'description', path, where) or ''
    parts = None if default is None else _parse(default, path, where, 'default')
    return ArgDecl(index, name, parts, description)


def _load_node(path, index, body):
    raw_label = body.get('name', body.get('exec', '?'))
    node = NodeDecl(index, str(raw_label))
    where = node.where
    _check_keys(body, NODE_KEYS, path, where)
    for key in ('pkg', 'exec', 'name', 'namespace', 'args', 'ros_args', 'if', 'unless'):
        text = _string(body, key, path, where, required=key in NODE_REQUIRED)
        if text is not None:
            node.attrs[key] = _parse(text, path, where, key)
    if 'if' in node.attrs and 'unless' in node.attrs:
        raise LaunchError("'if' and 'unless' are mutually exclusive", path, where, 'unless')
    output = _string(body, 'output', path, where)
    if output is not None:
        if output not in OUTPUT_MODES:
            raise LaunchError(f'unsupported output {output!r} (supported: '
                              + ', '.join(OUTPUT_MODES) + ')', path, where, 'output')
        node.output = output
    on_exit = _string(body, 'on_exit', path, where)
    if on_exit is not None:
        if on_exit not in ON_EXIT_ACTIONS:
            raise LaunchError(f'unsupported on_exit action {on_exit!r} (supported: shutdown)',
                              path, where, 'on_exit')
        node.shutdown_on_exit = True
    for i, item in enumerate(_list_of_mappings(body, 'param', path, where)):
        key = f'param[{i}]'
        if 'from' in item:
            _check_keys(item, ('from',), path, where, key + '.')
            text = _string(item, 'from', path, where, keypath=key + '.from')
            node.params.append(('file', key, _parse(text, path, where, key + '.from')))
        else:
            _check_keys(item, ('name', 'value', 'type'), path, where, key + '.')
            name = _string(item, 'name', path, where, required=True, keypath=key + '.name')
            if 'value' not in item:
                raise LaunchError("required key is missing (a param needs 'from:' or "
                                  "'name:' and 'value:')", path, where, key + '.value')
            value_type = _string(item, 'type', path, where, keypath=key + '.type')
            if value_type is not None and value_type not in PARAM_TYPES:
                raise LaunchError(f'unsupported parameter type {value_type!r} (supported: '
                                  + ', '.join(PARAM_TYPES) + ')', path, where, key + '.type')
            value = _load_param_value(item['value'], path, where, key + '.value')
            if value_type == 'str' and not isinstance(value, tuple):
                raise LaunchError('type str needs a string value', path, where, key + '.value')
            node.params.append(('value', key, _parse(name, path, where, key + '.name'), value,
                                value_type))
    for i, item in enumerate(_list_of_mappings(body, 'remap', path, where)):
        key = f'remap[{i}]'
        _check_keys(item, ('from', 'to'), path, where, key + '.')
        src = _string(item, 'from', path, where, required=True, keypath=key + '.from')
        dst = _string(item, 'to', path, where, required=True, keypath=key + '.to')
        node.remaps.append((key, _parse(src, path, where, key + '.from'),
                            _parse(dst, path, where, key + '.to')))
    return node


def _list_of_mappings(body, key, path, where):
    items = body.get(key)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise LaunchError('must be a list of mappings', path, where, key)
    return items


def _load_param_value(value, path, where, key):
    """Parsed form: parts for a string, the value for bool/int/float, a list of those."""
    if isinstance(value, str):
        return _parse(value, path, where, key)
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, list):
        if not value:
            raise LaunchError('an empty list has no ROS parameter type', path, where, key)
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                out.append(_parse(item, path, where, f'{key}[{i}]'))
            elif isinstance(item, (bool, int, float)):
                out.append(item)
            else:
                raise LaunchError(f'list items must be bool, int, float or string, got '
                                  f'{type(item).__name__}', path, where, f'{key}[{i}]')
        return out
    raise LaunchError(f'unsupported parameter value type {type(value).__name__} '
                      '(bool, int, float, string or a list of them)', path, where, key)


# --------------------------------------------------------------------------------------------
# resolution
# --------------------------------------------------------------------------------------------

def resolve(launch_file, overrides=None, environ=None, warn=None):
    """Evaluate the launch file with ``overrides``; build the command line of each enabled node.

    As in ``ros2 launch``, the command-line arguments are set first (so a default may use an
    argument declared after it when that one is given), then each declaration without a value
    takes its default in file order, so a default can use earlier arguments; node conditions
    (``if``/``unless``) are evaluated, and disabled nodes are not looked up.

    Parameters
    ----------
    launch_file : LaunchFile
        The loaded launch file (see :func:`load`).
    overrides : dict of {str: str}, optional
        Launch argument values from the command line (``name:=value``), by name; they replace
        the defaults. An undeclared name is accepted (usable by ``$(var)``), with a warning.
    environ : mapping of {str: str}, optional
        Environment for ``$(env NAME)``; default ``os.environ``. Package look-ups always use
        the process environment (``AMENT_PREFIX_PATH``).
    warn : callable, optional
        Called with the message of what ``ros2 launch`` accepts and the runner reports (an
        undeclared argument, a parameter file that does not exist and is skipped); default:
        the message to standard error, prefixed ``[ident_launch] warning:``.

    Returns
    -------
    variables : dict of {str: str}
        The value of every launch argument: the given ones, then the declared ones in
        declaration order.
    specs : list of NodeSpec
        One per enabled node, in file order, with unique labels.

    Raises
    ------
    LaunchError
        If an argument without default gets no value, a substitution cannot be evaluated, a
        condition is not a boolean, a package or executable is not found, a node or parameter
        name is empty, or a parameter value has no ROS parameter type.
    """
    lf = launch_file
    warn = warn or _warn
    declared = [a.name for a in lf.args]
    ctx = Context(lf.path, variables=overrides, environ=environ)
    unknown = [name for name in ctx.variables if name not in declared]
    if unknown:
        warn(str(LaunchError(
            'launch argument(s) ' + ', '.join(f"'{u}'" for u in unknown) + ' not declared '
            '(declared: ' + (', '.join(declared) or 'none') + ')', lf.path)))
    specs = []
    for entry in lf.entries:
        if isinstance(entry, ArgDecl):
            if entry.name in ctx.variables:
                continue
            if entry.default is None:
                raise LaunchError(f'argument has no default; pass {entry.name}:=VALUE',
                                  lf.path, entry.where)
            ctx.variables[entry.name] = _evaluate(entry.default, ctx, lf.path, entry.where,
                                                  'default')
        else:
            spec = _resolve_node(entry, ctx, lf.path, warn)
            if spec is not None:
                specs.append(spec)
    _unique_labels(specs)
    return dict(ctx.variables), specs


def _warn(message):
    print(f'[ident_launch] warning: {message}', file=sys.stderr)


def _evaluate(parts, ctx, path, where, key):
    try:
        return evaluate(parts, ctx)
    except SubstitutionError as exc:
        raise LaunchError(str(exc), path, where, key) from None


def parse_bool(text, path, where, key):
    """Read the value of a condition (``if``/``unless``).

    Parameters
    ----------
    text : str
        The evaluated condition: ``true``/``1`` or ``false``/``0``, case and surrounding white
        space ignored.
    path : str
        The launch file, for the error message.
    where : str
        The entry, for the error message.
    key : str
        The condition key (``'if'`` or ``'unless'``), for the error message.

    Returns
    -------
    bool
        The condition's value.

    Raises
    ------
    LaunchError
        If ``text`` is none of the accepted values.
    """
    value = text.strip().lower()
    if value in ('true', '1'):
        return True
    if value in ('false', '0'):
        return False
    raise LaunchError(f'condition evaluates to {text!r}; expected true/false/1/0',
                      path, where, key)


def _resolve_node(node, ctx, path, warn):
    where = node.where
    attrs = node.attrs

    def ev(key):
        return _evaluate(attrs[key], ctx, path, where, key) if key in attrs else None

    if 'if' in attrs and not parse_bool(ev('if'), path, where, 'if'):
        return None
    if 'unless' in attrs and parse_bool(ev('unless'), path, where, 'unless'):
        return None
    pkg, exe_name = ev('pkg'), ev('exec')
    exe = find_executable(pkg, exe_name, path, where)
    cmd = [exe]
    if 'args' in attrs:
        cmd += _split(attrs['args'], ctx, path, where, 'args')
    cmd.append('--ros-args')
    name = ev('name')
    if name is not None:
        if not name:
            raise LaunchError('node name is empty', path, where, 'name')
        cmd += ['-r', f'__node:={name}']
    namespace = ev('namespace')
    if namespace is not None:      # launch_ros: absolute, without trailing '/'; '' is '/'
        cmd += ['-r', '__ns:=/' + namespace.strip('/')]
    for param in node.params:
        if param[0] == 'file':
            _, key, parts = param
            file = _evaluate(parts, ctx, path, where, key + '.from')
            if not os.path.isfile(file):
                warn(str(LaunchError(f'parameter file not found, skipped: {file}', path, where,
                                     key + '.from')))
                continue
            cmd += ['--params-file', file]
        else:
            _, key, name_parts, raw, value_type = param
            pname = _evaluate(name_parts, ctx, path, where, key + '.name')
            if not pname:
                raise LaunchError('parameter name is empty', path, where, key + '.name')
            try:
                value = params_mod.evaluate_value(raw, ctx, value_type)
            except SubstitutionError as exc:
                raise LaunchError(str(exc), path, where, key + '.value') from None
            cmd += ['-p', f'{pname}:={params_mod.encode(value)}']
    for key, src, dst in node.remaps:
        cmd += ['-r', _evaluate(src, ctx, path, where, key + '.from') + ':='
                + _evaluate(dst, ctx, path, where, key + '.to')]
    if 'ros_args' in attrs:
        cmd += _split(attrs['ros_args'], ctx, path, where, 'ros_args')
    return NodeSpec(label=name or exe_name, cmd=cmd, pkg=pkg, executable=exe_name,
                    output=node.output, shutdown_on_exit=node.shutdown_on_exit)


def _split(parts, ctx, path, where, key):
    try:
        return split_command_line(parts, ctx)
    except SubstitutionError as exc:
        raise LaunchError(str(exc), path, where, key) from None


def find_executable(pkg, exe_name, path=None, where=None):
    """Find a node's executable: ``<prefix of pkg>/lib/<pkg>/<exe_name>``.

    Parameters
    ----------
    pkg : str
        Package name, looked up in the ament index.
    exe_name : str
        Executable name (``exec``).
    path : str, optional
        The launch file, for error messages.
    where : str, optional
        The entry, for error messages.

    Returns
    -------
    str
        Path of the executable, checked to be an executable file.

    Raises
    ------
    LaunchError
        If the package is not found (key ``pkg``), or the file does not exist or is not
        executable (key ``exec``).
    """
    try:
        prefix = find_package_prefix(pkg)
    except SubstitutionError as exc:
        raise LaunchError(str(exc), path, where, 'pkg') from None
    exe = os.path.join(prefix, 'lib', pkg, exe_name)
    if not os.path.isfile(exe):
        raise LaunchError(f"executable '{exe_name}' of package '{pkg}' not found ({exe})",
                          path, where, 'exec')
    if not os.access(exe, os.X_OK):
        raise LaunchError(f"'{exe}' (package '{pkg}', exec '{exe_name}') is not executable",
                          path, where, 'exec')
    return exe


def _unique_labels(specs):
    counts = {}
    for spec in specs:
        counts[spec.label] = counts.get(spec.label, 0) + 1
        if counts[spec.label] > 1:
            spec.label = f'{spec.label}-{counts[spec.label]}'
