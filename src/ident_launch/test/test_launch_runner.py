"""Tests of the ident_launch runner against a temporary fake ament prefix (no ROS needed).

The fake prefix holds packages ``fakepkg`` and ``otherpkg``; their executables are small Python
scripts (``fake_node``) that print their argv and then behave as told by options placed before
``--ros-args`` (exit code, wait for a file, wait for SIGINT, ignore SIGINT, ...).

No test depends on how fast the machine is: the tests wait for events (a file written by a
node, the runner's exit), with timeouts that only guard against hangs.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
PKG_ROOT = HERE.parent
if str(PKG_ROOT) not in sys.path:
    sys.path.insert(0, str(PKG_ROOT))

from ident_launch import description, errors, params, substitutions

FAKE_NODE = '''\
#!{python} -S
import json, os, signal, sys, time
argv = sys.argv[1:]
own = argv[:argv.index('--ros-args')] if '--ros-args' in argv else argv
opts = {{}}
i = 0
while i < len(own):
    if own[i].startswith('--') and i + 1 < len(own) and not own[i + 1].startswith('--'):
        opts[own[i]] = own[i + 1]; i += 2
    else:
        opts[own[i]] = True; i += 1
if '--pid-dir' in opts:
    with open(os.path.join(opts['--pid-dir'], str(os.getpid())), 'w'):
        pass
def on_sigint(signum, frame):
    if '--marker' in opts:
        with open(opts['--marker'], 'w') as f:
            f.write('sigint')
    print('got SIGINT', flush=True)
    sys.exit(0)
if '--ignore-sigint' in opts:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
elif '--default-sigint' in opts:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
else:
    signal.signal(signal.SIGINT, on_sigint)
print('argv: ' + json.dumps(argv))
if '--read-stdin' in opts:
    print('stdin: %r' % sys.stdin.read())
print('to stderr', file=sys.stderr)
sys.stdout.flush()
if '--ready' in opts:
    open(opts['--ready'], 'w').close()
if '--wait-for' in opts:
    deadline = time.monotonic() + 20
    while not os.path.exists(opts['--wait-for']):
        if time.monotonic() >= deadline:
            print('gave up waiting for ' + opts['--wait-for'], flush=True)
            break
        time.sleep(0.02)
if '--wait' in opts:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.02)
sys.exit(int(opts.get('--exit', 0)))
'''


class Prefix:
    """A fake ament prefix: <root>/share/ament_index/..., share/<pkg>/, lib/<pkg>/<exe>."""

    def __init__(self, root):
        self.root = root
        self.pid_dir = root.parent / 'pids'
        self.pid_dir.mkdir(parents=True)
        for pkg in ('fakepkg', 'otherpkg'):
            self.add_package(pkg)
        cfg = self.share('fakepkg') / 'config'
        cfg.mkdir()
        (cfg / 'params.yaml').write_text('/**:\n  ros__parameters:\n    a: 1\n')
        (self.share('fakepkg') / 'launch').mkdir()

    def add_package(self, pkg, exes=('talker', 'listener')):
        marker = self.root / 'share' / 'ament_index' / 'resource_index' / 'packages' / pkg
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text('')
        self.share(pkg).mkdir(parents=True, exist_ok=True)
        lib = self.root / 'lib' / pkg
        lib.mkdir(parents=True, exist_ok=True)
        for exe in exes:
            path = lib / exe
            path.write_text(FAKE_NODE.format(python=sys.executable))
            path.chmod(0o755)

    def share(self, pkg):
        return self.root / 'share' / pkg

    def write_launch(self, text, name='test.launch.yaml', where=None):
        path = (where or self.share('fakepkg') / 'launch') / name
        path.write_text(textwrap.dedent(text))
        return path

    def kill_leftovers(self):
        for pid_file in self.pid_dir.iterdir():
            try:
                os.kill(int(pid_file.name), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


@pytest.fixture
def prefix(tmp_path, monkeypatch):
    p = Prefix(tmp_path / 'prefix')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(p.root))
    monkeypatch.setenv('PYTHONPATH', str(PKG_ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    monkeypatch.setenv('IDENT_LAUNCH_TEST_VAR', 'from-env')
    monkeypatch.delenv('IDENT_LAUNCH_UNSET', raising=False)
    yield p
    p.kill_leftovers()


def runner_cmd(*args):
    return [sys.executable, '-m', 'ident_launch', *[str(a) for a in args]]


# Only guards against hangs: no wait comes near it when the runner works, however busy the
# machine is (the fake nodes' own --wait/--wait-for give up after 20 s).
HANG_TIMEOUT = 60.0


def run_launch(*args, timeout=HANG_TIMEOUT):
    try:
        return subprocess.run(runner_cmd(*args), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f'timed out after {timeout:g} s waiting for `ident_launch '
                    f'{" ".join(map(str, args))}` to exit')


def resolve_text(prefix, text, overrides=None, warnings=None):
    lf = description.load(prefix.write_launch(text))
    return description.resolve(lf, overrides, warn=None if warnings is None else warnings.append)


def error_of(prefix, text, overrides=None):
    with pytest.raises(errors.LaunchError) as info:
        resolve_text(prefix, text, overrides)
    return str(info.value)


def wait_for(path, what, proc=None, timeout=HANG_TIMEOUT):
    """Wait until ``path`` exists; fail naming ``what`` if the runner ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while not Path(path).exists():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f'the runner exited with code {proc.returncode} before {what} ({path})')
        if time.monotonic() >= deadline:
            pytest.fail(f'timed out after {timeout:g} s waiting for {what} ({path})')
        time.sleep(0.02)


def wait_exit(proc, what, timeout=HANG_TIMEOUT):
    """Wait for the runner ``proc`` to exit and return its exit code; fail naming ``what``."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f'timed out after {timeout:g} s waiting for the runner to exit {what}')


def assert_no_escalation(err, label):
    """The runner's stderr ``err`` shows that node ``label`` stopped on SIGINT alone."""
    assert f"'{label}' did not exit after" not in err, err
    assert f"'{label}' needed" not in err, err


def p_values(cmd):
    """{name: yaml value} of the -p arguments of a command line."""
    out = {}
    for flag, arg in zip(cmd, cmd[1:]):
        if flag == '-p':
            name, _, value = arg.partition(':=')
            out[name] = yaml.safe_load(value)
    return out


# --------------------------------------------------------------------------------------------
# arguments
# --------------------------------------------------------------------------------------------

ARGS_LAUNCH = '''\
launch:
- arg: {name: robot, default: kuka, description: which robot}
- arg: {name: rate, default: "100"}
- arg: {name: path, default: "$(var robot)/data"}
- arg: {name: needed}
'''


def test_arg_defaults_and_overrides(prefix):
    variables, specs = resolve_text(prefix, ARGS_LAUNCH, {'needed': 'x'})
    assert variables == {'robot': 'kuka', 'rate': '100', 'path': 'kuka/data', 'needed': 'x'}
    assert specs == []
    variables, _ = resolve_text(prefix, ARGS_LAUNCH, {'needed': '', 'robot': 'tx40'})
    assert variables['robot'] == 'tx40' and variables['path'] == 'tx40/data'
    assert variables['needed'] == ''


def test_unknown_and_missing_args(prefix):
    """An undeclared argument is accepted, as ros2 launch does (IncludeLaunchDescription sets
    every given argument), with a warning naming it; a missing one is an error."""
    warnings = []
    variables, _ = resolve_text(prefix, ARGS_LAUNCH, {'needed': 'x', 'bogus': '1'}, warnings)
    assert variables['bogus'] == '1'
    msg, = warnings
    assert 'test.launch.yaml' in msg and "'bogus'" in msg and 'not declared' in msg
    msg = error_of(prefix, ARGS_LAUNCH)
    assert "launch[3] (arg 'needed')" in msg and 'needed:=VALUE' in msg


def test_given_argument_is_set_before_the_declarations(prefix):
    """ros2 launch sets the given arguments first: a default can use an argument declared
    after it when that one is given (and only then)."""
    text = 'launch:\n- arg: {name: early, default: "$(var late)/x"}\n- arg: {name: late}\n'
    variables, _ = resolve_text(prefix, text, {'late': 'given'})
    assert variables == {'late': 'given', 'early': 'given/x'}
    text = text.replace('{name: late}', '{name: late, default: L}')
    assert "unknown launch argument 'late'" in error_of(prefix, text)


def test_cli_show_args_and_unknown_arg(prefix):
    prefix.write_launch(ARGS_LAUNCH)
    res = run_launch('fakepkg', 'test.launch.yaml', '--show-args')
    assert res.returncode == 0, res.stderr
    assert "'robot':" in res.stdout and 'which robot' in res.stdout
    assert "(default: '$(var robot)/data')" in res.stdout and 'no default' in res.stdout
    res = run_launch('fakepkg', 'test.launch.yaml', 'needed:=1', 'bogus:=2')
    assert res.returncode == 0 and "'bogus'" in res.stderr and 'warning' in res.stderr
    res = run_launch('fakepkg', 'test.launch.yaml')
    assert res.returncode == 2 and "needed" in res.stderr
    # as ros2 launch: a launch argument needs a name and a value
    for bad in ('needed:=', ':=1'):
        res = run_launch(prefix.share('fakepkg') / 'launch' / 'test.launch.yaml', bad)
        assert res.returncode == 2 and 'malformed launch argument' in res.stderr, bad


# --------------------------------------------------------------------------------------------
# substitutions
# --------------------------------------------------------------------------------------------

def test_substitutions(prefix):
    launch = prefix.write_launch('''\
    launch:
    - arg: {name: pkg, default: otherpkg}
    - arg: {name: share, default: "$(find-pkg-share fakepkg)"}
    - arg: {name: nested, default: "$(find-pkg-share $(var pkg))/x"}
    - arg: {name: prefix, default: "$(find-pkg-prefix $(var pkg))"}
    - arg: {name: env, default: "$(env IDENT_LAUNCH_TEST_VAR)"}
    - arg: {name: env_default, default: "$(env IDENT_LAUNCH_UNSET 'a b $(var pkg)')"}
    - arg: {name: env_set_default, default: "$(env IDENT_LAUNCH_TEST_VAR other)"}
    - arg: {name: dir, default: "$(dirname)/cfg.yaml"}
    - arg: {name: text, default: "a $ b $x ) ("}
    ''')
    variables, _ = description.resolve(description.load(launch))
    assert variables['share'] == str(prefix.share('fakepkg'))
    assert variables['nested'] == str(prefix.share('otherpkg')) + '/x'
    assert variables['prefix'] == str(prefix.root)
    assert variables['env'] == 'from-env'
    assert variables['env_default'] == 'a b otherpkg'
    assert variables['env_set_default'] == 'from-env'
    assert variables['dir'] == str(launch.parent) + '/cfg.yaml'
    assert variables['text'] == 'a $ b $x ) ('


def test_substitution_evaluation_errors(prefix):
    msg = error_of(prefix, 'launch:\n- arg: {name: e, default: "$(env IDENT_LAUNCH_UNSET)"}\n')
    assert "launch[0] (arg 'e')" in msg and 'IDENT_LAUNCH_UNSET' in msg and "'default'" in msg
    msg = error_of(prefix, 'launch:\n- arg: {name: e, default: "$(var later)"}\n')
    assert "unknown launch argument 'later'" in msg
    msg = error_of(prefix, 'launch:\n- arg: {name: e, default: "$(find-pkg-share nopkg)"}\n')
    assert "package 'nopkg' not found" in msg and 'test.launch.yaml' in msg


@pytest.mark.parametrize('text, expected', [
    ('$(command)', 'takes 1 or 2 argument'),
    ('$(eval 1 + 1)', "'$(eval ...)'"),
    ('$(anon x)', "'$(anon ...)'"),
    ('$(find-pkg-share $(optenv X))', "'$(optenv ...)'"),
    ('$(var a', 'unterminated'),
    ("$(env 'A)", 'unterminated quote'),
    ('$(var)', 'takes 1 argument'),
    ('$(env A B C)', 'takes 1 or 2 argument'),
    ('$(dirname x)', 'takes 0 argument'),
    ('$()', 'missing substitution name'),
])
def test_substitution_parse_errors(text, expected):
    with pytest.raises(substitutions.SubstitutionError) as info:
        substitutions.parse(text)
    assert expected in str(info.value)


URDF_TEXT = ('<?xml version="1.0"?>\n<robot name="r">\n  <!-- note: a colon -->\n'
             '  <link name="a"/>\n</robot>\n')


def test_command_substitution(prefix, tmp_path):
    """$(command) gives the command's standard output unchanged (as robot_description needs)."""
    urdf = tmp_path / 'robot dir' / 'r.urdf'
    urdf.parent.mkdir()
    urdf.write_text(URDF_TEXT)
    variables, _ = resolve_text(prefix, f'''\
    launch:
    - arg: {{name: urdf, default: "{urdf}"}}
    - arg: {{name: text, default: "$(command 'cat \\"$(var urdf)\\"')"}}
    - arg: {{name: echo, default: "$(command 'echo a b')"}}
    ''')
    assert variables['text'] == URDF_TEXT
    assert variables['echo'] == 'a b\n'
    script = tmp_path / 'noisy.sh'
    script.write_text('#!/bin/sh\necho out\necho "bad things" >&2\nexit "${1:-0}"\n')
    script.chmod(0o755)
    run = substitutions.run_command
    assert run(f'{script}', 'ignore') == 'out\n'
    assert run(f'{script}', 'capture') == 'out\nbad things\n'
    with pytest.raises(substitutions.SubstitutionError, match='wrote to standard error: bad'):
        run(str(script))
    with pytest.raises(substitutions.SubstitutionError, match='exited with code 3: bad things'):
        run(f'{script} 3', 'ignore')
    with pytest.raises(substitutions.SubstitutionError, match="cannot run 'no-such-program'"):
        run('no-such-program x')
    with pytest.raises(substitutions.SubstitutionError, match='unknown on_stderr'):
        run('true', 'loud')
    msg = error_of(prefix, 'launch:\n- arg: {name: e, default: "$(command \'cat /no/such\')"}\n')
    assert "launch[0] (arg 'e')" in msg and 'exited with code 1' in msg and '\n' not in msg


def test_param_of_type_str_is_not_read_as_yaml(prefix, tmp_path):
    """``type: str`` (launch_ros) keeps a URDF a string: as YAML its comment's colon would
    make it a mapping, and "1.0" would be a float."""
    urdf = tmp_path / 'r.urdf'
    urdf.write_text(URDF_TEXT)
    _, (spec,) = resolve_text(prefix, f'''\
    launch:
    - node:
        pkg: fakepkg
        exec: talker
        param:
        - {{name: robot_description, type: str, value: "$(command 'cat {urdf}')"}}
        - {{name: version, type: str, value: "1.0"}}
    ''')
    assert p_values(spec.cmd) == {'robot_description': URDF_TEXT, 'version': '1.0'}
    msg = error_of(prefix, '''\
    launch:
    - node: {pkg: fakepkg, exec: talker, param: [{name: a, type: str, value: 1}]}
    ''')
    assert 'param[0].value' in msg and 'type str needs a string' in msg


@pytest.mark.parametrize('text, expected', [
    (r'a\b', 'ab'),
    (r'c\\d', 'c\\d'),
    (r'\$(var v)', '$(var v)'),
    (r'$(var v)\$(var v)', 'V$(var v)'),
    ('end\\', 'end\\'),
    (r"$(env NO_SUCH_VAR_X 'it\'s')", "it's"),
    (r'$(env NO_SUCH_VAR_X a\)b)', 'a)b'),
    (r"$(env NO_SUCH_VAR_X '\$(var v)')", '$(var v)'),
])
def test_backslash_escapes(prefix, text, expected, monkeypatch):
    """Backslash escapes as launch.frontend's grammar and replace_escaped_characters."""
    monkeypatch.delenv('NO_SUCH_VAR_X', raising=False)
    ctx = substitutions.Context(str(prefix.root / 'x.yaml'), {'v': 'V'})
    assert substitutions.evaluate(substitutions.parse(text), ctx) == expected


def test_split_command_line(prefix):
    ctx = substitutions.Context(str(prefix.root / 'x.yaml'), {'sp': 'a b', 'v': 'V'})
    parts = substitutions.parse("--x $(var sp) pre$(var v)post 'q r' \"s t\" --y=$(var sp) ")
    assert substitutions.split_command_line(parts, ctx) == [
        '--x', 'a b', 'preVpost', 'q r', 's t', '--y=a b']
    parts = substitutions.parse('$(var v) $(var v)$(var v)')
    assert substitutions.split_command_line(parts, ctx) == ['V', 'VV']


# --------------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------------

ROUND_TRIP_VALUES = [
    0, -7, 2**40, 1.0, -2.5, 1e20, 1.5e-7, float('inf'), float('-inf'), True, False,
    'plain', '/abs/path.yaml', '007', '1.0', '1e5', 'true', 'False', 'yes', 'off', 'null', '~',
    '', ' lead', 'a: b', 'a:b', "it's", '"dq"', '#c', '[1, 2]', '{a: 1}', 'line1\nline2',
    'tab\there', 'ünï', 'inf', 'nan', '.5', '+1', '0x10', '2001-12-14', '1_000',
    [1, 2, 3], [1.5, 2.0], [True, False], ['a', '1', 'b c', 'true'],
]


@pytest.mark.parametrize('value', ROUND_TRIP_VALUES, ids=repr)
def test_param_encoding_round_trip(value):
    back = yaml.safe_load(params.encode(value))
    assert back == value and type(back) is type(value)
    if isinstance(value, list):
        assert [type(v) for v in back] == [type(v) for v in value]


def test_param_nan_round_trip():
    back = yaml.safe_load(params.encode(float('nan')))
    assert isinstance(back, float) and back != back


def test_params_on_command_line(prefix):
    _, specs = resolve_text(prefix, '''\
    launch:
    - arg: {name: rate, default: "250.0"}
    - arg: {name: label, default: "007"}
    - node:
        pkg: fakepkg
        exec: talker
        param:
        - {name: int, value: 42}
        - {name: float, value: 2.0}
        - {name: bool, value: true}
        - {name: str, value: hello world}
        - from: $(find-pkg-share fakepkg)/config/params.yaml
        - {name: quoted, value: "'42'"}
        - {name: yaml_int, value: "42"}
        - {name: from_var, value: $(var rate)}
        - {name: label_str, value: "'$(var label)'"}
        - {name: ints, value: [1, 2]}
        - {name: strs, value: [a, "b c"]}
        - {name: str_items, value: ["1.5", "'$(var label)'"]}
        - {name: sub_items, value: ["$(var rate)", "$(var rate)"]}
        - {name: bools, value: [true, false]}
        - {name: path, value: "$(find-pkg-share fakepkg)/config/params.yaml"}
    ''')
    cmd = specs[0].cmd
    values = p_values(cmd)
    # ros2 launch (launch_yaml, launch_ros): a string without substitutions is that string,
    # quotes included; a substituted one is read as YAML
    expected = {
        'int': 42, 'float': 2.0, 'bool': True, 'str': 'hello world', 'quoted': "'42'",
        'yaml_int': '42', 'from_var': 250.0, 'label_str': '007', 'ints': [1, 2],
        'strs': ['a', 'b c'], 'str_items': ['1.5', '007'], 'sub_items': [250.0, 250.0],
        'bools': [True, False], 'path': str(prefix.share('fakepkg') / 'config' / 'params.yaml'),
    }
    assert values == expected
    for name, value in expected.items():
        assert type(values[name]) is type(value), name
    # order of the file: -p int ... --params-file ... -p quoted ...
    flags = [a for a in cmd if a in ('-p', '--params-file')]
    assert flags == ['-p'] * 4 + ['--params-file'] + ['-p'] * 10


@pytest.mark.parametrize('value, substituted, expected', [
    ('null', True, 'is null'),
    ('a: b', True, 'allowed are'),
    ('[]', False, 'empty list'),
    ('[]', True, 'empty list'),
    ('[1, "a"]', False, 'one type'),
    ('["1.5", "$(var v)"]', False, 'one type'),
    ('{a: 1}', False, 'unsupported parameter value type'),
    ('2001-12-14', True, 'date'),
    ('[1', True, 'not a valid YAML value'),
])
def test_bad_param_values(prefix, value, substituted, expected):
    """Values no ROS parameter can have: a substituted text is read as YAML (launch's
    perform_typed_substitution), a literal list must be of one type."""
    msg = error_of(prefix, f'''\
    launch:
    - arg: {{name: v, default: "{value if substituted else 2.5}"}}
    - node:
        pkg: fakepkg
        exec: talker
        name: n1
        param:
        - {{name: p, value: {'"$(var v)"' if substituted else value}}}
    ''')
    assert "launch[1] (node 'n1')" in msg and 'param[0].value' in msg and expected in msg


def test_launch_semantics(prefix, monkeypatch):
    """semantics.launch.yaml (also run under the real launch by tests/test_real_launch.py): as
    under ros2 launch, text without substitutions is a string whatever it looks like (only
    backslash escapes apply), a substituted value is read as YAML and '' stays '' (the
    torque_model:='' of the launch files), a given argument is set before the declarations, a
    missing parameter file is skipped with a warning, a namespace is made absolute."""
    monkeypatch.delenv('IDENT_LAUNCH_UNSET', raising=False)
    launch = HERE / 'semantics.launch.yaml'
    warnings = []
    variables, specs = description.resolve(description.load(launch), {
        'pkg': 'fakepkg', 'exec': 'talker', 'late': 'given', 'list': '[a, b]',
        'undeclared': '1'}, warn=warnings.append)
    assert variables['early'] == 'given/x' and variables['undeclared'] == '1'
    assert len(warnings) == 2 and 'missing.yaml' in warnings[1]
    typed, rooted, absolute = specs
    assert typed.cmd[1:typed.cmd.index('--ros-args')] == [
        '--x', 'given/x', 'pre250.0post', 'q r', 's t']
    assert p_values(typed.cmd) == {
        'plain_number': '42', 'plain_quoted': "'42'", 'plain_mapping': 'a: b',
        'plain_date': '2001-12-14', 'plain_empty': '', 'plain_tilde': '~',
        'escaped': 'ab $(var empty) c\\d', 'number': 7, 'sub_float': 250.0, 'sub_empty': '',
        'sub_quoted': '250.0', 'sub_str': '250.0', 'sub_list': ['a', 'b'], 'ints': [1, 2],
        'items': ['', 'b', '250.0'], 'env': 'd e', 'dir': str(HERE), 'command': 'a b\n'}
    assert '__ns:=/' in typed.cmd and 'a:=givenb' in typed.cmd
    assert '__ns:=/x/y' in rooted.cmd and '__ns:=/x' in absolute.cmd


def test_params_through_rcl(prefix, tmp_path):
    """The encoded -p values read back with the right type by rcl itself (when rclpy is here)."""
    try:
        import rclpy  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        pytest.skip('rclpy not importable')
    values = {f'v{i}': v for i, v in enumerate(ROUND_TRIP_VALUES)}
    script = tmp_path / 'check_rcl.py'
    script.write_text(textwrap.dedent('''\
        import json, sys
        import rclpy
        from rclpy.node import Node
        rclpy.init(args=sys.argv)
        node = Node('check', automatically_declare_parameters_from_overrides=True)
        out = {}
        for p in node._parameters.values():
            v = p.value
            out[p.name] = [type(v).__name__, v if isinstance(v, (bool, int, float, str))
                           else [[type(x).__name__, x] for x in v]]
        print(json.dumps(out))
        node.destroy_node()
        rclpy.shutdown()
    '''))
    args = ['--ros-args']
    for name, value in values.items():
        args += ['-p', f'{name}:={params.encode(value)}']
    res = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for name, value in values.items():
        kind, v = got[name]
        if isinstance(value, list):
            assert [x[1] for x in v] == value, name
            assert [x[0] for x in v] == [type(x).__name__ for x in value], name
        else:
            assert v == value and kind == type(value).__name__, (name, value, got[name])


# --------------------------------------------------------------------------------------------
# validation: everything outside the subset fails before anything starts
# --------------------------------------------------------------------------------------------

NODE = '    pkg: fakepkg\n    exec: talker\n    name: n1\n'


@pytest.mark.parametrize('entry, where, key', [
    ('- include: {file: x.launch.yaml}\n', 'launch[1]', "'include'"),
    ('- group: []\n', 'launch[1]', "'group'"),
    ('- let: {name: a, value: b}\n', 'launch[1]', "'let'"),
    ('- executable: {cmd: ls}\n', 'launch[1]', "'executable'"),
    ('- set_env: {name: A, value: b}\n', 'launch[1]', "'set_env'"),
    ('- node:\n' + NODE + '    respawn: "true"\n', "launch[1] (node 'n1')", "'respawn'"),
    ('- node:\n' + NODE + '    exec_name: x\n', "launch[1] (node 'n1')", "'exec_name'"),
    ('- node:\n' + NODE + '    launch-prefix: gdb\n', "launch[1] (node 'n1')", "'launch-prefix'"),
    ('- node:\n' + NODE + '    args: "$(eval 1)"\n', "launch[1] (node 'n1')", "'args'"),
    ('- node:\n' + NODE + '    param: [{name: a, value: "$(eval 1)"}]\n',
     "launch[1] (node 'n1')", "'param[0].value'"),
    ('- node:\n' + NODE + '    param: [{name: a, value: 1, type: int}]\n',
     "launch[1] (node 'n1')", "'param[0].type'"),
    ('- node:\n' + NODE + '    param: [{from: a.yaml, allow_substs: "true"}]\n',
     "launch[1] (node 'n1')", "'param[0].allow_substs'"),
    ('- node:\n' + NODE + '    remap: [{from: a}]\n', "launch[1] (node 'n1')", "'remap[0].to'"),
    ('- node:\n' + NODE + '    output: own_log\n', "launch[1] (node 'n1')", "'output'"),
    ('- node:\n' + NODE + '    on_exit: restart\n', "launch[1] (node 'n1')", "'on_exit'"),
    ('- node:\n' + NODE + '    if: "true"\n    unless: "false"\n', "launch[1] (node 'n1')",
     "'unless'"),
    ('- node:\n' + NODE + '    if: true\n', "launch[1] (node 'n1')", "'if'"),
    ('- node:\n    pkg: fakepkg\n    name: n1\n', "launch[1] (node 'n1')", "'exec'"),
    ('- arg: {name: a, default: 1}\n', "launch[1] (arg 'a')", "'default'"),
    ('- arg: {name: a, choices: [x]}\n', "launch[1] (arg 'a')", "'choices'"),
    ('- arg: {name: b}\n', "launch[1] (arg 'b')", 'declared twice'),
])
def test_unsupported_constructs(prefix, entry, where, key):
    text = 'launch:\n- arg: {name: b, default: x}\n' + entry
    path = prefix.write_launch(text)
    with pytest.raises(errors.LaunchError) as info:
        description.load(path)
    msg = str(info.value)
    assert str(path) in msg and where in msg and key in msg, msg


def test_unsupported_fails_before_start(prefix, tmp_path):
    marker = tmp_path / 'started'
    prefix.write_launch(f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, args: "--ready {marker}"}}
    - include: {{file: other.launch.yaml}}
    ''')
    res = run_launch('fakepkg', 'test.launch.yaml')
    assert res.returncode == 2
    assert res.stderr.count('\n') == 1 and "launch[1]: key 'include'" in res.stderr
    assert not marker.exists()


def test_bad_top_level(prefix):
    for text in ('nodes: []\n', '- node: {}\n', 'launch: {a: 1}\n', 'launch: [node]\n',
                 'launch:\n- {arg: {name: a}, node: {}}\n', 'launch: [\n'):
        with pytest.raises(errors.LaunchError) as info:
            description.load(prefix.write_launch(text))
        assert 'test.launch.yaml' in str(info.value)


# --------------------------------------------------------------------------------------------
# conditions, look-ups, command line
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize('key, value, started', [
    ('if', 'true', True), ('if', 'TRUE', True), ('if', '1', True), ('if', 'False', False),
    ('if', '0', False), ('unless', 'true', False), ('unless', '0', True),
    ('unless', 'FALSE', True),
])
def test_conditions(prefix, key, value, started):
    _, specs = resolve_text(prefix, f'''\
    launch:
    - arg: {{name: flag, default: "{value}"}}
    - node: {{pkg: fakepkg, exec: talker, {key}: "$(var flag)"}}
    - node: {{pkg: fakepkg, exec: listener}}
    ''')
    assert [s.label for s in specs] == (['talker', 'listener'] if started else ['listener'])


def test_condition_must_be_boolean(prefix):
    msg = error_of(prefix, '''\
    launch:
    - node: {pkg: fakepkg, exec: talker, if: "yes"}
    ''')
    assert "launch[0] (node 'talker')" in msg and "'if'" in msg and 'true/false/1/0' in msg


def test_disabled_node_is_not_looked_up(prefix):
    _, specs = resolve_text(prefix, '''\
    launch:
    - node: {pkg: nopkg, exec: talker, if: "false"}
    ''')
    assert specs == []


def test_missing_package_executable_params_file(prefix):
    msg = error_of(prefix, 'launch:\n- node: {pkg: nopkg, exec: talker}\n')
    assert "package 'nopkg' not found" in msg and "'pkg'" in msg
    msg = error_of(prefix, 'launch:\n- node: {pkg: fakepkg, exec: nothere, name: n}\n')
    assert "'nothere'" in msg and "'fakepkg'" in msg and "(node 'n')" in msg
    (prefix.root / 'lib' / 'fakepkg' / 'talker').chmod(0o644)
    msg = error_of(prefix, 'launch:\n- node: {pkg: fakepkg, exec: talker}\n')
    assert 'not executable' in msg and "'talker'" in msg
    # a parameter file that does not exist is skipped with a warning, as launch_ros does
    warnings = []
    _, (spec,) = resolve_text(prefix, '''\
    launch:
    - node: {pkg: fakepkg, exec: listener, param: [{from: "$(dirname)/missing.yaml"}]}
    ''', warnings=warnings)
    msg, = warnings
    assert 'parameter file not found' in msg and 'missing.yaml' in msg and 'param[0].from' in msg
    assert '--params-file' not in spec.cmd


def test_command_line_layout(prefix):
    _, specs = resolve_text(prefix, '''\
    launch:
    - node:
        pkg: fakepkg
        exec: talker
        name: tk
        namespace: robot
        args: "--a 1"
        param:
        - {name: x, value: 1}
        - from: $(find-pkg-share fakepkg)/config/params.yaml
        remap: [{from: in, to: /out}]
        ros_args: "--log-level debug"
    - node: {pkg: fakepkg, exec: talker}
    - node: {pkg: fakepkg, exec: talker}
    ''')
    exe = str(prefix.root / 'lib' / 'fakepkg' / 'talker')
    params_file = str(prefix.share('fakepkg') / 'config' / 'params.yaml')
    assert specs[0].cmd == [exe, '--a', '1', '--ros-args', '-r', '__node:=tk', '-r',
                            '__ns:=/robot', '-p', 'x:=1', '--params-file', params_file,
                            '-r', 'in:=/out', '--log-level', 'debug']
    assert specs[1].cmd == [exe, '--ros-args']
    assert [s.label for s in specs] == ['tk', 'talker', 'talker-2']


@pytest.mark.parametrize('namespace, expected', [
    ('robot', '/robot'), ('/robot/', '/robot'), ('a/b', '/a/b'), ('', '/'), ('/', '/')])
def test_namespace_as_launch_ros(prefix, namespace, expected):
    """launch_ros makes the namespace absolute without a trailing '/'; an empty one is the
    root namespace, given explicitly."""
    _, (spec,) = resolve_text(prefix, f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, namespace: "{namespace}"}}
    ''')
    assert spec.cmd[1:] == ['--ros-args', '-r', f'__ns:={expected}']


def test_cli_print_and_path_form(prefix):
    path = prefix.write_launch('''\
    launch:
    - arg: {name: n, default: one}
    - node: {pkg: fakepkg, exec: talker, name: "$(var n)", on_exit: shutdown}
    ''', where=prefix.root)
    res = run_launch('--print', path, 'n:=two')
    assert res.returncode == 0, res.stderr
    assert "# [two] fakepkg/talker, on_exit: shutdown" in res.stdout
    assert str(prefix.root / 'lib/fakepkg/talker') + ' --ros-args -r __node:=two' in res.stdout
    res = run_launch('fakepkg', 'nothere.launch.yaml')
    assert res.returncode == 2 and "'nothere.launch.yaml' not found in package" in res.stderr
    res = run_launch('nopkg', 'x.launch.yaml')
    assert res.returncode == 2 and "'nopkg'" in res.stderr


# --------------------------------------------------------------------------------------------
# running processes
# --------------------------------------------------------------------------------------------

def test_run_two_nodes(prefix):
    prefix.write_launch(f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: tk,
              args: "--read-stdin --pid-dir {prefix.pid_dir}",
              param: [{{name: rate, value: 5}}], output: screen}}
    - node: {{pkg: fakepkg, exec: listener, args: "--pid-dir {prefix.pid_dir}", output: log}}
    ''')
    res = run_launch('fakepkg', 'test.launch.yaml')
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    tk = [json.loads(line.split('argv: ', 1)[1])
          for line in lines if line.startswith('[tk] argv: ')]
    assert tk == [['--read-stdin', '--pid-dir', str(prefix.pid_dir), '--ros-args',
                   '-r', '__node:=tk', '-p', 'rate:=5']]
    assert "[tk] stdin: ''" in lines
    assert '[tk] to stderr' in lines and '[listener] to stderr' in lines
    assert any(line.startswith('[listener] argv: ') for line in lines)
    assert all(line.startswith(('[tk] ', '[listener] ')) for line in lines)


def test_failing_node_stops_launch(prefix, tmp_path):
    marker, ready = tmp_path / 'waiter-sigint', tmp_path / 'waiter-ready'
    # the crasher fails once the waiter is ready (handles SIGINT), not after a fixed delay
    prefix.write_launch(f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: waiter,
              args: "--wait --marker {marker} --ready {ready} --pid-dir {prefix.pid_dir}"}}
    - node: {{pkg: fakepkg, exec: listener, name: crasher,
              args: "--wait-for {ready} --exit 3 --pid-dir {prefix.pid_dir}"}}
    ''')
    res = run_launch('fakepkg', 'test.launch.yaml', '--sigint-timeout', '5')
    assert res.returncode == 1, res.stdout + res.stderr
    assert "'crasher' failed: shutting down" in res.stderr
    assert "FAILED: 'crasher' exit code 3" in res.stderr
    assert 'waiter' not in res.stderr.split('FAILED', 1)[1]  # waiter stopped cleanly
    # the shutdown stopped the (otherwise 20 s) waiter with SIGINT alone
    assert marker.exists(), 'the waiter never got SIGINT\n' + res.stdout + res.stderr
    assert marker.read_text() == 'sigint'
    assert "'waiter' exited with code 0" in res.stderr
    assert_no_escalation(res.stderr, 'waiter')


def test_on_exit_shutdown(prefix, tmp_path):
    marker, ready = tmp_path / 'waiter-sigint', tmp_path / 'waiter-ready'
    prefix.write_launch(f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: waiter,
              args: "--wait --marker {marker} --ready {ready} --pid-dir {prefix.pid_dir}"}}
    - node: {{pkg: fakepkg, exec: listener, name: driver, on_exit: shutdown,
              args: "--wait-for {ready} --pid-dir {prefix.pid_dir}"}}
    ''')
    res = run_launch('fakepkg', 'test.launch.yaml')
    assert res.returncode == 0, res.stdout + res.stderr
    assert marker.exists(), 'the waiter never got SIGINT\n' + res.stdout + res.stderr
    assert marker.read_text() == 'sigint'
    assert "on_exit: shutdown" in res.stderr and '[waiter] got SIGINT' in res.stdout
    # the driver's exit caused the shutdown, and the waiter stopped on SIGINT alone (the
    # default --sigint-timeout of 10 s was not waited out)
    assert "'driver' exited (on_exit: shutdown): shutting down" in res.stderr
    assert_no_escalation(res.stderr, 'waiter')


def start_runner(prefix, text, *extra):
    prefix.write_launch(text)
    return subprocess.Popen(runner_cmd('fakepkg', 'test.launch.yaml', *extra),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    return proc.communicate(timeout=HANG_TIMEOUT)


def test_sigint_is_forwarded(prefix, tmp_path):
    m1, m2, r1, r2 = (tmp_path / n for n in ('m1', 'm2', 'r1', 'r2'))
    proc = start_runner(prefix, f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: a,
              args: "--wait --marker {m1} --ready {r1} --pid-dir {prefix.pid_dir}"}}
    - node: {{pkg: fakepkg, exec: listener, name: b,
              args: "--wait --marker {m2} --ready {r2} --pid-dir {prefix.pid_dir}"}}
    ''')
    try:
        wait_for(r1, "node 'a' to start", proc)
        wait_for(r2, "node 'b' to start", proc)
        proc.send_signal(signal.SIGINT)
        rc = wait_exit(proc, 'after SIGINT')
    finally:
        out, err = stop(proc)
    assert rc == 0, out + err
    assert m1.read_text() == 'sigint' and m2.read_text() == 'sigint'
    assert 'received SIGINT' in err


def test_sigterm_to_runner_is_forwarded_as_sigint(prefix, tmp_path):
    marker, ready = tmp_path / 'm', tmp_path / 'r'
    proc = start_runner(prefix, f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker,
              args: "--wait --marker {marker} --ready {ready} --pid-dir {prefix.pid_dir}"}}
    ''')
    try:
        wait_for(ready, 'the node to start', proc)
        proc.send_signal(signal.SIGTERM)
        rc = wait_exit(proc, 'after SIGTERM')
    finally:
        out, err = stop(proc)
    assert rc == 0, out + err
    assert marker.read_text() == 'sigint'


def test_node_ignoring_sigint_gets_sigterm(prefix, tmp_path):
    r1, r2, marker = tmp_path / 'r1', tmp_path / 'r2', tmp_path / 'm'
    sigint_timeout = 1.0
    proc = start_runner(prefix, f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: stubborn,
              args: "--wait --ignore-sigint --ready {r1} --pid-dir {prefix.pid_dir}"}}
    - node: {{pkg: fakepkg, exec: listener, name: polite,
              args: "--wait --marker {marker} --ready {r2} --pid-dir {prefix.pid_dir}"}}
    ''', '--sigint-timeout', str(sigint_timeout))
    try:
        wait_for(r1, "node 'stubborn' to start", proc)
        wait_for(r2, "node 'polite' to start", proc)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rc = wait_exit(proc, 'after SIGINT')
        elapsed = time.monotonic() - start
    finally:
        out, err = stop(proc)
    assert rc == 1, out + err
    # SIGTERM only after the SIGINT timeout (a busy machine can only make this longer)
    assert elapsed >= sigint_timeout, f'stopped {elapsed:.2f} s after SIGINT\n{err}'
    assert "'stubborn' did not exit after SIGINT: sending SIGTERM" in err
    assert "'stubborn' needed SIGTERM" in err
    assert "FAILED: 'stubborn' exit code -15 (SIGTERM)" in err
    # SIGTERM was enough: no SIGKILL, and the stubborn node did not run to its own end
    assert "'stubborn' did not exit after SIGTERM" not in err, err
    assert "'stubborn' needed SIGKILL" not in err, err
    assert 'polite' not in err.split('FAILED', 1)[1]
    assert marker.read_text() == 'sigint'
    assert_no_escalation(err, 'polite')


def test_node_dying_from_sigint_is_a_failure(prefix, tmp_path):
    ready = tmp_path / 'r'
    proc = start_runner(prefix, f'''\
    launch:
    - node: {{pkg: fakepkg, exec: talker, name: fragile,
              args: "--wait --default-sigint --ready {ready} --pid-dir {prefix.pid_dir}"}}
    ''')
    try:
        wait_for(ready, "node 'fragile' to start", proc)
        proc.send_signal(signal.SIGINT)
        rc = wait_exit(proc, 'after SIGINT')
    finally:
        out, err = stop(proc)
    assert rc == 1, out + err
    assert "FAILED: 'fragile' exit code -2 (SIGINT)" in err
