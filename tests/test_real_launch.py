"""The launch files under the real ``ros2 launch`` (the upstream launch, launch_yaml and launch_ros
of ../shared/ros2_src, installed into a throw-away folder), and against ``ident_launch``.

* ``sim.launch.yaml demo:=true`` runs end to end through ``launch.LaunchService`` and
  ``IncludeLaunchDescription(AnyLaunchDescriptionSource(FILE), launch_arguments=...)``, as
  ``ros2 launch ident_bringup sim.launch.yaml demo:=true`` does (tests/real_launch_driver.py), in
  a ROS domain of its own on loopback: every node starts, the demo's identification passes, every
  process ends with status 0.
* Every launch file, with the arguments a user gives (the ``make demo*`` targets' among them),
  runs under the real launch with ``launch-prefix:=true`` (``ros2 launch --launch-prefix true``:
  every substitution, condition and parameter evaluated, each node's command line built, but
  ``true`` started in its place), with stand-ins for the packages this machine does not have
  (robot_state_publisher, rviz2, controller_manager). ``ident_launch`` must resolve the same
  arguments to the same nodes: executable, arguments, name, namespace, remappings and every
  parameter with its type, in the same order (the order decides which value wins).

Skipped when ../shared/ros2_src is absent (a user's clone has no ../shared).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ros2_sources import ROS2_SRC, ColconBuild, copy_sources, environment, missing_sources

from ident_core.estimation.results import read_result
from ident_launch.cli import find_launch_file
from ident_launch.description import load, resolve

REPO = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).with_name('real_launch_driver.py')
LAUNCH_PACKAGES = ('launch', 'launch_yaml', 'launch_xml', 'launch_ros')
#: Pure-Python dependencies of launch that PyPI has (versions of ../shared/ros2_src/README.md).
LAUNCH_DEPENDENCIES = ('osrf-pycommon==2.0.2', 'lark==1.3.1')
#: Packages a full ROS 2 install has and this machine has not: stand-in executables (never run).
STAND_INS = {'robot_state_publisher': ('robot_state_publisher',), 'rviz2': ('rviz2',),
             'controller_manager': ('ros2_control_node', 'spawner')}
#: Guards against a hang only (the install takes about a minute on a busy 2-core machine).
INSTALL_TIMEOUT = 900.0
DEMO_TIMEOUT = 300.0
RESOLVE_TIMEOUT = 120.0


def _run_logged(cmd: list, log: Path, timeout: float, **kwargs) -> None:
    """Run ``cmd`` with its output in ``log``; fail with the log's tail if it fails."""
    with open(log, 'w') as out:
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=timeout, **kwargs)
        except subprocess.TimeoutExpired:
            pytest.fail(f'{cmd[:4]} did not finish within {timeout:g} s ({log})')
    if done.returncode != 0:
        pytest.fail(f'{" ".join(map(str, cmd[:6]))} ... failed ({done.returncode}):\n'
                    + log.read_text()[-3000:])


def _lifecycle_msgs() -> list[str]:
    """launch_ros imports lifecycle_msgs: rclpy's own dependency where it has one; else the
    wheel of rcl_interfaces' release that the installed action_msgs comes from."""
    if importlib.util.find_spec('lifecycle_msgs') is not None:
        return []
    return [f'ros-lifecycle-msgs=={importlib.metadata.version("ros-action-msgs")}']


@pytest.fixture(scope='module')
def real_launch_env(tmp_path_factory) -> dict:
    """Environment in which launch, launch_yaml, launch_xml and launch_ros import, installed
    from ../shared/ros2_src into a throw-away folder (with composition_interfaces, which
    launch_ros imports, built by colcon beside them); once per test session of this module."""
    missing = missing_sources((*LAUNCH_PACKAGES, 'composition_interfaces'))
    if missing:
        pytest.skip(f'the upstream ROS 2 launch sources are not in {ROS2_SRC} '
                    f'(missing: {", ".join(missing)})')
    root = tmp_path_factory.mktemp('real_launch')
    build = ColconBuild(root, ['composition_interfaces'])
    try:
        copy_sources(LAUNCH_PACKAGES, root)
        target = root / 'site'
        _run_logged([sys.executable, '-m', 'pip', 'install', '--no-deps', '--target', str(target),
                     *LAUNCH_DEPENDENCIES, *_lifecycle_msgs(),
                     *(str(root / 'src' / p) for p in LAUNCH_PACKAGES)],
                    root / 'pip.log', INSTALL_TIMEOUT)
        prefixes = build.wait(INSTALL_TIMEOUT)
    finally:
        build.kill()
    env = environment(os.environ, prefixes, [target])
    _run_logged([sys.executable, '-c', 'import launch_ros.actions, launch_yaml, launch_xml'],
                root / 'import.log', RESOLVE_TIMEOUT, env=env)
    return env


def _isolated(env: dict, tmp_path: Path) -> dict:
    """``env`` in a ROS domain of its own on loopback, logs and launch_ros' parameter files
    in ``tmp_path``."""
    from ident_ros.testing import reserve_domain

    env = dict(env)
    env['ROS_DOMAIN_ID'] = str(reserve_domain())     # held until this process ends
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_LOG_DIR'] = str(tmp_path / 'ros_log')
    env['TMPDIR'] = str(tmp_path)
    return env


def _real_launch(env: dict, tmp_path: Path, launch_file: str, args: dict, timeout: float):
    """Run the real launch on ``launch_file`` with ``args`` (the driver, in a process group of
    its own, killed whole on a timeout or failure); its report and output."""
    report = tmp_path / 'report.json'
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(report), launch_file,
         *(f'{k}:={v}' for k, v in args.items())],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f'the real launch of {launch_file} did not finish within {timeout:g} s:\n'
                    + out[-4000:])
    finally:
        _kill_group(proc.pid)
    assert report.is_file(), out[-4000:]
    return json.loads(report.read_text()), out


def _kill_group(pgid: int) -> None:
    """Kill what is left of a process group; fail if anything was (every process of a launch
    must have ended with it)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    pytest.fail(f'processes of the launch (process group {pgid}) outlived it; killed')


# --------------------------------------------------------------------------------------------
# the demo, end to end
# --------------------------------------------------------------------------------------------

def test_sim_demo_under_the_real_launch(real_launch_env, tmp_path):
    """``ros2 launch ident_bringup sim.launch.yaml demo:=true`` (one 10 s period of the
    optimised excitation, as test_ros_graph.py: its validation error is reproducible, 0.06–0.07 %
    here): the demo passes, RESULT.yaml is the identified six_axis_3kg, every process exits 0
    (the torque estimator included: its model_file is the empty torque_model)."""
    out = tmp_path / 'demo'
    trajectory = REPO / 'config' / 'six_axis_3kg' / 'excitation' / 'optimized.yaml'
    launch_file = find_launch_file('ident_bringup', 'sim.launch.yaml')
    report, log = _real_launch(
        _isolated(real_launch_env, tmp_path), tmp_path, launch_file,
        {'demo': 'true', 'output_dir': out, 'identification_periods': 1,
         'identification_trajectory': trajectory}, DEMO_TIMEOUT)
    assert report['returncode'] == 0, log[-6000:]
    started = sorted(Path(p['cmd'][0]).name for p in report['started'])
    assert started == ['demo', 'excitation_node', 'identification_node', 'recorder_node',
                       'sim_node', 'torque_estimator_node'], log[-6000:]
    exits = {p['name']: p['returncode'] for p in report['exited']}
    assert sorted(exits) == sorted(p['name'] for p in report['started'])
    assert set(exits.values()) == {0}, (exits, log[-6000:])
    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    assert summary['parameters_message_samples'] > 0          # IdentifiedParameters received
    assert summary['within_3_std'] >= 0.95, (out / 'parameters.txt').read_text()
    assert summary['validation_noise_free']['relative_error_percent'] <= 0.5
    assert Path(summary['result']) == out / 'RESULT.yaml'
    read_result(out / 'RESULT.yaml')                          # a valid RESULT.yaml
    raw = yaml.safe_load((out / 'RESULT.yaml').read_text())
    urdf = Path(launch_file).parents[1] / 'urdf'
    assert raw['robot']['name'] == 'six_axis_3kg'
    assert raw['robot']['urdf_sha256'] == hashlib.sha256(
        (urdf / 'six_axis_3kg.urdf').read_bytes()).hexdigest()
    assert len(raw['base_parameters']) == summary['base_parameters']
    bag = re.escape(summary['bags']['validation'])
    assert re.fullmatch(bag + r'\[/joint_states rows \d+:\d+\]', raw['validation'][0]['data'])


# --------------------------------------------------------------------------------------------
# every launch file resolves under the real front end as under ident_launch
# --------------------------------------------------------------------------------------------

CONFIG = 'config/six_axis_3kg'
#: (launch file, arguments); ``{tmp}`` is the test's folder. Relative paths are relative to the
#: repository (the make targets' working directory).
CASES = {
    'sim': ('sim.launch.yaml', {}),
    'sim-scara-demo-rviz': ('sim.launch.yaml', {
        'robot': 'scara_3dof', 'demo': 'true', 'rviz': 'true', 'output_dir': '{tmp}/out',
        'torque_model': '{tmp}/RESULT.yaml'}),
    'sim-make-demo-payload': ('sim.launch.yaml', {
        'payload_demo': 'true', 'payload_mass': '3.0', 'payload_mounted': 'false',
        'output_dir': 'output/demo_payload'}),
    'sim-make-demo-friction': ('sim.launch.yaml', {
        'friction_demo': 'true', 'sim_params': f'{CONFIG}/ident_sim_friction.yaml',
        'excitation_params': f'{CONFIG}/excitation_node_friction.yaml',
        'identification_params': f'{CONFIG}/identification_node_friction.yaml',
        'output_dir': 'output/demo_friction'}),
    'real': ('real.launch.yaml', {}),
    'real-scara-rviz': ('real.launch.yaml', {
        'urdf': 'urdf/scara_3dof.urdf', 'config_dir': 'config/scara_3dof', 'rviz': 'true',
        'jtc_topic': '/arm/joint_trajectory_controller/joint_trajectory',
        'joint_states_topic': '/arm/joint_states', 'torque_estimator': 'false'}),
    # one robot of several: every node in the namespace, the topics relative to it
    'sim-namespace-scara-demo': ('sim.launch.yaml', {
        'namespace': 'left', 'robot': 'scara_3dof', 'demo': 'true', 'output_dir': '{tmp}/out'}),
    'real-namespace-description': ('real.launch.yaml', {
        'namespace': 'right', 'rviz': 'true', 'robot_state_publisher': 'false'}),
    'robot_hardware': ('robot_hardware.launch.yaml', {}),
    'robot_hardware-scara': ('robot_hardware.launch.yaml', {'robot': 'scara_3dof',
                                                             'master_id': '1'}),
}


@pytest.fixture
def stand_in_prefix(tmp_path, monkeypatch) -> Path:
    """An ament prefix with the packages of STAND_INS, ahead of the workspace's."""
    root = tmp_path / 'stand_ins'
    for package, executables in STAND_INS.items():
        marker = root / 'share' / 'ament_index' / 'resource_index' / 'packages' / package
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text('')
        for name in executables:
            exe = root / 'lib' / package / name
            exe.parent.mkdir(parents=True, exist_ok=True)
            exe.write_text('#!/bin/sh\nexit 1\n')
            exe.chmod(0o755)
    monkeypatch.setenv('AMENT_PREFIX_PATH',
                       os.pathsep.join([str(root), os.environ.get('AMENT_PREFIX_PATH', '')]))
    return root


def _typed(value):
    """A parameter value with its type, for comparison (True is not 1)."""
    if isinstance(value, list):
        return ['list', [_typed(v) for v in value]]
    return [type(value).__name__, value]


def _flatten(parameters: dict, prefix: str = ''):
    for name, value in parameters.items():
        if isinstance(value, dict):
            yield from _flatten(value, f'{prefix}{name}.')
        else:
            yield f'{prefix}{name}', value


def _node_view(cmd: list, generated: Path) -> dict:
    """What a node's command line gives the node. Parameter files that launch_ros generated
    (``launch_params_*`` in ``generated``, one per ``name:``/``value:``) count as the
    parameters they hold; other files by their path."""
    exe, rest = cmd[0], cmd[1:]
    split = rest.index('--ros-args') if '--ros-args' in rest else len(rest)
    view = {'exe': exe, 'args': rest[:split], 'name': None, 'namespace': None, 'remaps': [],
            'parameters': [], 'other': []}
    tokens = iter(rest[split:])
    for token in tokens:
        if token == '--ros-args':
            continue
        if token == '-r':
            rule = next(tokens)
            key = {'__node': 'name', '__ns': 'namespace'}.get(rule.partition(':=')[0])
            if key:
                view[key] = rule.partition(':=')[2]
            else:
                view['remaps'].append(rule)
        elif token == '-p':
            name, _, value = next(tokens).partition(':=')
            view['parameters'].append([name, _typed(yaml.safe_load(value))])
        elif token == '--params-file':
            path = Path(next(tokens))
            if path.parent == generated and path.name.startswith('launch_params_'):
                for body in yaml.safe_load(path.read_text()).values():
                    view['parameters'] += [[name, _typed(value)] for name, value
                                           in _flatten(body['ros__parameters'])]
            else:
                view['parameters'].append(['file', os.path.normpath(path)])
        else:
            view['other'].append(token)
    return view


def _resolve_both(env: dict, stand_ins: Path, tmp_path: Path, launch_file: str, args: dict):
    """The nodes of ``launch_file`` with ``args`` as the real launch starts them (with
    ``launch-prefix:=true``) and as ident_launch resolves them; the real launch's report, the
    arguments as ident_launch resolves them and its warnings."""
    env = _isolated(env, tmp_path)
    env['AMENT_PREFIX_PATH'] = os.pathsep.join([str(stand_ins), env['AMENT_PREFIX_PATH']])
    report, log = _real_launch(env, tmp_path, launch_file, {**args, 'launch-prefix': 'true'},
                               RESOLVE_TIMEOUT)
    assert report['returncode'] == 0, log[-6000:]
    assert report['started'] and all(p['cmd'][0] == 'true' for p in report['started']), log
    real = [_node_view(p['cmd'][1:], tmp_path) for p in report['started']]
    warnings = []
    variables, specs = resolve(load(launch_file), args, warn=warnings.append)
    ours = [_node_view(spec.cmd, tmp_path) for spec in specs]
    return sorted(real, key=json.dumps), sorted(ours, key=json.dumps), report, variables, warnings


@pytest.mark.parametrize('case', CASES)
def test_launch_file_resolves_alike_under_the_real_launch(
        real_launch_env, stand_in_prefix, tmp_path, monkeypatch, case):
    launch_name, args = CASES[case]
    args = {k: v.format(tmp=tmp_path) for k, v in args.items()}
    monkeypatch.chdir(REPO)
    real, ours, report, variables, warnings = _resolve_both(
        real_launch_env, stand_in_prefix, tmp_path, find_launch_file('ident_bringup', launch_name),
        args)
    assert ours == real
    assert warnings == []
    assert variables == {k: v for k, v in report['configurations'].items()
                         if k != 'launch-prefix'}
    if 'namespace' in args:                        # every node in the namespace
        assert {v['namespace'] for v in real} == {'/' + args['namespace']}
    if launch_name != 'robot_hardware.launch.yaml' and args.get('torque_estimator') != 'false':
        # the empty torque_model (default) is the empty string, without the quoting
        # "'$(var torque_model)'" that ident_launch needed before it followed launch
        estimator, = (v for v in real if v['name'] == 'torque_estimator')
        assert ['model_file', ['str', args.get('torque_model', '')]] in estimator['parameters']


SEMANTICS = REPO / 'src' / 'ident_launch' / 'test' / 'semantics.launch.yaml'


def test_launch_semantics_alike_under_the_real_launch(
        real_launch_env, stand_in_prefix, tmp_path, monkeypatch):
    """ident_launch gives the nodes what ros2 launch gives them on
    src/ident_launch/test/semantics.launch.yaml: the cases where the two disagreed or could
    (docs/ros_launch.md#ident_launch)."""
    monkeypatch.delenv('IDENT_LAUNCH_UNSET', raising=False)
    args = {'pkg': 'ident_sim', 'exec': 'demo', 'late': 'given', 'list': '[a, b]',
            'undeclared': '1'}
    env = dict(real_launch_env)
    env.pop('IDENT_LAUNCH_UNSET', None)
    real, ours, report, variables, warnings = _resolve_both(
        env, stand_in_prefix, tmp_path, str(SEMANTICS), args)
    assert ours == real
    assert variables == {k: v for k, v in report['configurations'].items()
                         if k != 'launch-prefix'}
    assert variables['early'] == 'given/x' and variables['undeclared'] == '1'
    nodes = {v['name']: v for v in real}
    assert sorted(nodes) == ['absolute', 'rooted', 'typed']
    assert nodes['rooted']['namespace'] == '/x/y'
    typed = nodes['typed']
    parameters = {p[0]: p[1] for p in typed['parameters']}
    assert parameters['plain_number'] == ['str', '42'] and parameters['sub_empty'] == ['str', '']
    assert typed['namespace'] == '/' and typed['remaps'] == ['a:=givenb']
    assert len(warnings) == 2, warnings            # 'undeclared', missing.yaml
