"""Two robots side by side in one ROS domain: launch/sim.launch.yaml twice, ``namespace:=left``
with the 6-axis arm and ``namespace:=right`` with the SCARA (simulator, recorder, excitation and
identification node in each; started by the launch runner, loopback, a domain of this test
alone). A recorded excitation runs in both at once, then an identification of each bag. Each
graph finds its own nodes (the excitation node the recorder's services, the recorder the
excitation's description, the identification node the bag's namespaced topics) and sees only its
own robot: every message of each bag names that robot's joints, and the bag holds exactly the
stamps its simulator published (its ground truth), none of the other's."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import yaml
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore
from test_ros_graph import _environment, _finish, _launch

from ident_core.sim.evaluation import load_ground_truth

REPO = Path(__file__).resolve().parents[1]
ROBOTS = {'left': ('six_axis_3kg', 'identification.yaml',
                   ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6']),
          'right': ('scara_3dof', 'validation.yaml', ['joint1', 'joint2', 'joint3'])}
GRAPH_NODES = ('ident_sim', 'recorder', 'excitation_node', 'identification_node')
#: Only guard against a hang: two graphs of four nodes start and run on a busy 2-core machine.
TIMEOUT = 300.0


def _bag_messages(bag: Path) -> tuple[set, list, np.ndarray]:
    """(topics, joint names of every JointState, their header stamps in ns) of a bag."""
    names, stamps = [], []
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        topics = {c.topic for c in reader.connections}
        conns = [c for c in reader.connections if c.msgtype == 'sensor_msgs/msg/JointState']
        for conn, _t, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            names.append(list(msg.name))
            stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
    return topics, names, np.array(stamps, dtype=np.int64)


def test_two_namespaced_graphs_side_by_side(tmp_path):
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor

    from ident_msgs.action import RunExcitation
    from ident_msgs.srv import IdentifyRecording
    from ident_ros.testing import spin_until

    env = _environment()
    launches = {ns: _launch(tmp_path / ns, f'namespace:={ns}', f'robot:={robot}', env=env)
                for ns, (robot, _, _) in ROBOTS.items()}
    context = rclpy.Context()
    results, identified, outputs = {}, {}, {}
    try:
        rclpy.init(context=context, domain_id=int(env['ROS_DOMAIN_ID']))
        node = rclpy.create_node('namespaces_test', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        actions = {ns: ActionClient(node, RunExcitation, f'/{ns}/excitation_node/run')
                   for ns in ROBOTS}
        identify = {ns: node.create_client(IdentifyRecording,
                                           f'/{ns}/identification_node/identify')
                    for ns in ROBOTS}

        def ready():
            for ns, proc in launches.items():
                assert proc.poll() is None, f'the {ns} launch ended'
            return all(a.server_is_ready() for a in actions.values()) and all(
                c.service_is_ready() for c in identify.values())
        spin_until(executor, ready, 'both excitation and identification nodes', TIMEOUT)
        goals = {}
        for ns, (robot, trajectory, _) in ROBOTS.items():
            goals[ns] = actions[ns].send_goal_async(RunExcitation.Goal(
                trajectory_file=str(REPO / 'config' / robot / 'excitation' / trajectory),
                periods=1, record=True, experiment=f'{ns}_excitation'))
        spin_until(executor, lambda: all(g.done() for g in goals.values()), 'goals accepted',
                   TIMEOUT)
        done = {ns: g.result().get_result_async() for ns, g in goals.items()}
        spin_until(executor, lambda: all(d.done() for d in done.values()), 'both excitations',
                   TIMEOUT)
        results = {ns: d.result().result for ns, d in done.items()}
        for ns, result in results.items():
            assert result.success, (ns, result.message)
        calls = {ns: identify[ns].call_async(IdentifyRecording.Request(
            bag_path=results[ns].bag_path)) for ns in ROBOTS}
        spin_until(executor, lambda: all(c.done() for c in calls.values()),
                   'both identifications', TIMEOUT)
        identified = {ns: c.result() for ns, c in calls.items()}
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        for proc in launches.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for ns, proc in launches.items():
            try:
                outputs[ns] = _finish(proc, timeout=TIMEOUT)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
    for ns, (robot, _, joints) in ROBOTS.items():
        out = outputs[ns]
        for name in GRAPH_NODES:
            assert f"'{name}' exited with code 0" in out, (ns, out[-6000:])
        bag = Path(results[ns].bag_path)
        topics, names, stamps = _bag_messages(bag)
        assert topics == {f'/{ns}/joint_states', f'/{ns}/excitation_node/trajectory'}
        assert all(n == joints for n in names), ns
        truth = load_ground_truth(tmp_path / ns / 'ground_truth').log['stamp_ns']
        published = truth[(truth >= stamps[0]) & (truth <= stamps[-1])]
        assert len(stamps) > 5000 and np.array_equal(stamps, published), ns
        summary = yaml.safe_load((bag / 'recording.yaml').read_text())
        assert (summary['joint_state_messages'], summary['other_joint_states']) == \
            (len(stamps), 0)
        reply = identified[ns]
        assert reply.success, (ns, reply.message)
        result = yaml.safe_load(Path(reply.result_path).read_text())
        assert result['robot']['name'] == robot and result['robot']['joints'] == joints
        # cut to the excitation its namespace's description announced
        assert result['identification']['data'][0].startswith(
            f'{bag}[/{ns}/joint_states rows ')


def test_every_default_topic_and_service_is_relative():
    """The nodes' topics, services and actions (parameters ``*_topic``, ``*_service``,
    ``*_action``) default to relative names, resolved in the node's namespace; the launch files
    put every node in ``namespace`` and pass no absolute name by default."""
    from excitation_node.excitation_node import ExcitationNodeParameters
    from ident_launch.cli import find_launch_file
    from ident_launch.description import load, resolve
    from ident_node.identification_node import IdentificationNodeParameters
    from ident_node.recorder_node import RecorderParameters
    from ident_sim.demo import DemoParameters
    from ident_sim.friction_demo import FrictionDemoParameters
    from ident_sim.payload_demo import PayloadDemoParameters
    from ident_sim.sim_node import SimNodeParameters
    from torque_estimator.torque_estimator_node import TorqueEstimatorNodeParameters

    models = (ExcitationNodeParameters, IdentificationNodeParameters, RecorderParameters,
              DemoParameters, FrictionDemoParameters, PayloadDemoParameters, SimNodeParameters,
              TorqueEstimatorNodeParameters)
    names = {f'{m.__name__}.{k}': f.default for m in models for k, f in m.model_fields.items()
             if k.endswith(('_topic', '_service', '_action'))}
    assert len(names) > 20
    absolute = {k: v for k, v in names.items() if v.startswith('/')}
    assert not absolute
    for launch_file, args in (('sim.launch.yaml', {'demo': 'true'}), ('real.launch.yaml', {})):
        _, specs = resolve(load(find_launch_file('ident_bringup', launch_file)),
                           {**args, 'namespace': 'left'})
        for spec in specs:
            assert '__ns:=/left' in spec.cmd, spec.cmd
            passed = [a for a in spec.cmd if a.split(':=')[0].endswith(('_topic', '_service'))]
            assert not [a for a in passed if a.split(':=')[1].startswith('/')], spec.cmd
