"""config/rviz/identification.rviz names only topics the graph publishes.

Every topic the .rviz file names (a display's ``Topic``/``Description Topic``, and /tf and
/tf_static of its TF display) is collected. The simulated graph of launch/sim.launch.yaml
(started by ident_launch, as in test_ros_graph.py, in a ROS domain of its own on loopback,
demo:=false, with the torque estimator) must have a publisher of each, of the message type the
display reads and, where the display subscribes Transient Local, with a durability that serves
it (transient local).

/robot_description, /tf and /tf_static are published by robot_state_publisher alone, which cannot
be installed on this machine (ROS 2 from PyPI wheels: no robot_state_publisher, tf2 or rviz2).
For those the test checks instead that sim.launch.yaml and real.launch.yaml, resolved with
rviz:=true (ident_launch's resolve, against a stand-in ament prefix holding the
robot_state_publisher and rviz2 executables), start robot_state_publisher with parameter
robot_description = the URDF's text, and rviz2 with this file; and that without the stand-in the
runner refuses rviz:=true in one line naming the missing package.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from test_ros_graph import _environment, _finish, _launch

REPO = Path(__file__).resolve().parents[1]
RVIZ = REPO / 'config' / 'rviz' / 'identification.rviz'
GRAPH_NODES = ('ident_sim', 'recorder', 'excitation_node', 'identification_node',
               'torque_estimator')
#: Message type each display class reads.
DISPLAY_TYPES = {
    'rviz_default_plugins/MarkerArray': 'visualization_msgs/msg/MarkerArray',
    'rviz_default_plugins/RobotModel': 'std_msgs/msg/String',
    'rviz_default_plugins/TF': 'tf2_msgs/msg/TFMessage',
}
#: Published by robot_state_publisher only (checked through the launch files).
STATE_PUBLISHER_TOPICS = {'/robot_description', '/tf', '/tf_static'}
#: Node name of an endpoint whose node is not discovered yet (rmw).
UNKNOWN_NODE = '_NODE_NAME_UNKNOWN_'
#: Only guards against a hang: the graph's nodes are up well before on a busy machine.
STARTUP_TIMEOUT = 180.0


def rviz_topics(path: Path = RVIZ) -> dict[str, tuple[str, str]]:
    """{topic: (message type, durability policy)} of every display of an .rviz file."""
    config = yaml.safe_load(path.read_text())
    topics = {}

    def walk(displays):
        for display in displays:
            walk(display.get('Displays') or [])          # groups
            kind = display['Class']
            if kind == 'rviz_default_plugins/TF':
                topics['/tf'] = topics['/tf_static'] = (DISPLAY_TYPES[kind], 'Volatile')
            for key in ('Topic', 'Description Topic'):
                topic = display.get(key)
                if isinstance(topic, dict) and topic.get('Value'):
                    if display.get('Description Source', 'Topic') != 'Topic' \
                            and key == 'Description Topic':
                        continue
                    assert kind in DISPLAY_TYPES, f'display {kind} of {topic["Value"]}: type?'
                    topics[topic['Value']] = (DISPLAY_TYPES[kind],
                                              topic.get('Durability Policy', 'Volatile'))

    walk(config['Visualization Manager']['Displays'])
    return topics


def test_rviz_file_shows_the_robot_the_markers_and_the_collisions():
    config = yaml.safe_load(RVIZ.read_text())
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'base_link'
    for urdf in ('six_axis_3kg.urdf', 'scara_3dof.urdf'):     # the root link of both robots
        text = (REPO / 'urdf' / urdf).read_text()
        first_joint = text[text.index('<joint'):]
        assert '<parent link="base_link"/>' in first_joint.split('</joint>')[0], urdf
    assert set(rviz_topics()) == STATE_PUBLISHER_TOPICS | {
        '/identification_node/inertia_markers', '/identification_node/payload_markers',
        '/torque_estimator/collision_markers'}
    robot_model, = [d for d in manager['Displays']
                    if d['Class'] == 'rviz_default_plugins/RobotModel']
    assert robot_model['Description Source'] == 'Topic'


def _publishers(node, topics, proc, timeout):
    """{topic: [TopicEndpointInfo]} once every topic has a publisher whose node is discovered
    (its name known; polled; fails if the launch ends or ``timeout`` passes first)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {t: node.get_publishers_info_by_topic(t) for t in topics}
        missing = sorted(t for t, infos in found.items()
                         if not infos or any(i.node_name == UNKNOWN_NODE for i in infos))
        if not missing:
            return found
        assert proc.poll() is None, 'the launch ended before every topic had a publisher'
        assert time.monotonic() < deadline, f'no publisher of {missing} within {timeout:g} s'
        time.sleep(0.2)


def test_every_topic_of_the_rviz_file_is_published_by_the_simulated_graph(tmp_path):
    import rclpy
    from rclpy.qos import DurabilityPolicy

    expected = {t: v for t, v in rviz_topics().items() if t not in STATE_PUBLISHER_TOPICS}
    expected['/joint_states'] = ('sensor_msgs/msg/JointState', 'Volatile')  # robot_state_pub.
    env = _environment()
    proc = _launch(tmp_path, 'torque_estimator:=true', env=env)
    context = rclpy.Context()
    try:
        rclpy.init(context=context, domain_id=int(env['ROS_DOMAIN_ID']))
        node = rclpy.create_node('rviz_topics_test', context=context)
        found = _publishers(node, expected, proc, STARTUP_TIMEOUT)
        node.destroy_node()
    finally:
        # SIGINT to the runner, which stops its nodes (each runs in a session of its own: a
        # SIGKILL to the runner's group would leave them running)
        rclpy.try_shutdown(context=context)
        proc.send_signal(signal.SIGINT)
        out = _finish(proc, timeout=60)
    for topic, (msg_type, durability) in expected.items():
        infos = found[topic]
        assert {i.topic_type for i in infos} == {msg_type}, (topic, infos)
        assert {i.node_name for i in infos} <= set(GRAPH_NODES), (topic, infos)
        if durability == 'Transient Local':         # a latched subscriber needs a latched writer
            assert all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                       for i in infos), (topic, infos)
    for name in GRAPH_NODES:
        assert f"'{name}' exited with code 0" in out, out[-6000:]


@pytest.fixture
def stand_in_prefix(tmp_path, monkeypatch):
    """An ament prefix holding robot_state_publisher and rviz2 executables (never run), ahead
    of the workspace's."""
    root = tmp_path / 'prefix'
    for pkg in ('robot_state_publisher', 'rviz2'):
        marker = root / 'share' / 'ament_index' / 'resource_index' / 'packages' / pkg
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text('')
        exe = root / 'lib' / pkg / pkg
        exe.parent.mkdir(parents=True)
        exe.write_text('#!/bin/sh\nexit 1\n')
        exe.chmod(0o755)
    monkeypatch.setenv('AMENT_PREFIX_PATH',
                       f'{root}{os.pathsep}{os.environ.get("AMENT_PREFIX_PATH", "")}')
    return root


def _p_value(cmd: list[str], name: str):
    values = [yaml.safe_load(arg.partition(':=')[2]) for flag, arg in zip(cmd, cmd[1:])
              if flag == '-p' and arg.startswith(name + ':=')]
    assert len(values) == 1, cmd
    return values[0]


@pytest.mark.parametrize('launch_file, args, urdf', [
    ('sim.launch.yaml', {}, 'six_axis_3kg.urdf'),
    ('sim.launch.yaml', {'robot': 'scara_3dof'}, 'scara_3dof.urdf'),
    # (real.launch.yaml's nodes take the stack's robot_description unless urdf:= is given)
    ('real.launch.yaml', {'urdf': str(REPO / 'urdf' / 'six_axis_3kg.urdf')},
     'six_axis_3kg.urdf'),
])
def test_rviz_true_starts_robot_state_publisher_with_the_urdf_and_rviz2(
        stand_in_prefix, launch_file, args, urdf):
    from ident_launch.cli import find_launch_file
    from ident_launch.description import load, resolve

    launch = load(find_launch_file('ident_bringup', launch_file))
    _, specs = resolve(launch, {**args, 'rviz': 'true'})
    by_pkg = {s.pkg: s for s in specs}
    rsp, rviz = by_pkg['robot_state_publisher'], by_pkg['rviz2']
    assert rsp.cmd[0] == str(stand_in_prefix / 'lib/robot_state_publisher/robot_state_publisher')
    assert _p_value(rsp.cmd, 'robot_description') == (REPO / 'urdf' / urdf).read_text()
    config = Path(rviz.cmd[rviz.cmd.index('-d') + 1])
    assert config.read_text() == RVIZ.read_text()
    if launch_file == 'real.launch.yaml':          # TF from the robot's joint_states
        # (relative: in the launch's namespace, the root one by default)
        assert '-r' in rsp.cmd and 'joint_states:=joint_states' in rsp.cmd
    # rviz:=false (the default): neither is started
    _, specs = resolve(launch, args)
    assert not {'robot_state_publisher', 'rviz2'} & {s.pkg for s in specs}


def test_rviz_true_without_rviz2_is_one_line():
    """On this machine (no robot_state_publisher, no rviz2) rviz:=true stops before starting
    anything, with the runner's one-line error."""
    from ident_launch.errors import SubstitutionError
    from ident_launch.substitutions import find_package_prefix

    try:
        find_package_prefix('robot_state_publisher')
        pytest.skip('robot_state_publisher is installed here')
    except SubstitutionError:
        pass
    res = subprocess.run(['ident_launch', 'ident_bringup', 'sim.launch.yaml', 'rviz:=true'],
                         cwd=REPO, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stderr
    assert res.stdout == '' and 'Traceback' not in res.stderr
    assert res.stderr.count('\n') == 1, res.stderr
    assert "package 'robot_state_publisher' not found" in res.stderr
