"""Faults while the excitation node moves the simulated arm: the robot's driver dies (the
simulator is killed), the recorder dies, the robot does not follow, a second goal arrives. Each
goal must fail with the reason in its result and the command must come to rest long before the
planned motion would have ended. And one that is not a fault: a gripper's joint states always
published right after the arm's. Nodes under test that are killed run as processes of their own
(SIGKILL, as a crash); the excitation node and the test's client share one executor in this
process, in a ROS domain of this test alone."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
JOINTS = [f'joint{i}' for i in range(1, 7)]
ACCELERATION = [20.0, 20.0, 20.0, 25.0, 25.0, 25.0]    # rad/s², config/six_axis_3kg
START = [0.1, -0.2, 0.3, 0.0, 0.2, -0.1]               # rad
RATE = 250.0                                            # Hz, see test_jointwise_goal.py
PERIODS = 20                                            # 1 s each: far longer than any fault
TIMEOUT = 60.0                                          # s, guards against a hang only
DOMAIN = 100 + (random.randrange(90) + os.getpid() + 37) % 90


def long_experiment(path: Path) -> Path:
    """Joint 4 on a 1 s cosine of 0.15 rad for ``PERIODS`` periods, the others held."""
    path.write_text(yaml.safe_dump({
        'format': 'robot-ident/jointwise/1', 'name': 'long', 'joint': 'joint4',
        'joint_names': JOINTS, 'hold': [0.0] * 6,
        'cosines': [{'amplitude': 0.15, 'period': 1.0, 'periods': PERIODS}]}))
    return path


def sim_parameters(tmp_path: Path) -> dict:
    return {'urdf_file': str(URDF), 'initial_position': START, 'perturbation': 0.0,
            'rate_hz': RATE, 'ground_truth_dir': str(tmp_path / 'ground_truth')}


def start_process(executable: str, parameters: dict) -> subprocess.Popen:
    """A node as a process of its own (it inherits the test's ROS domain)."""
    args = [executable, '--ros-args']
    for name, value in parameters.items():
        args += ['-p', f'{name}:={yaml.safe_dump(value, default_flow_style=True).strip()}']
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


class Graph:
    """The excitation node, a client and (optionally) the simulator in this process."""

    def __init__(self, context, tmp_path: Path, sim_in_process: bool, **overrides):
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        from excitation_node.excitation_node import ExcitationNode
        from ident_msgs.action import RunExcitation
        from ident_ros.qos import COMMAND_QOS, JOINT_STATES_QOS

        self.nodes = []
        if sim_in_process:
            from ident_sim.sim_node import SimNode
            self.nodes.append(SimNode(context=context, parameter_overrides=[
                Parameter(k, value=v) for k, v in sim_parameters(tmp_path).items()]))
        self.node = ExcitationNode(context=context, parameter_overrides=[
            Parameter('urdf_file', value=str(URDF)),
            Parameter('acceleration_limits', value=ACCELERATION),
            *[Parameter(k, value=v) for k, v in overrides.items()]])
        self.client = rclpy.create_node('fault_test_client', context=context)
        self.nodes += [self.node, self.client]
        self.executor = SingleThreadedExecutor(context=context)
        for node in self.nodes:
            self.executor.add_node(node)
        self.commands: list = []
        self.client.create_subscription(JointTrajectory,
                                        '/joint_trajectory_controller/joint_trajectory',
                                        self.commands.append, COMMAND_QOS)
        self.states = 0
        self.client.create_subscription(JointState, '/joint_states', self._count_state,
                                        JOINT_STATES_QOS)
        self.feedback: list = []
        self.run = ActionClient(self.client, RunExcitation, '/excitation_node/run')

    def _count_state(self, _msg) -> None:
        self.states += 1

    def spin_until(self, condition, what: str):
        from ident_ros.testing import spin_until

        spin_until(self.executor, condition, what, TIMEOUT)

    def send(self, path: Path, record: bool = False):
        """Send a goal; returns its goal handle once accepted."""
        from ident_msgs.action import RunExcitation

        self.spin_until(lambda: self.run.server_is_ready() and self.states,
                        'the excitation node and joint_states')
        future = self.run.send_goal_async(
            RunExcitation.Goal(trajectory_file=str(path), record=record, experiment='fault'),
            feedback_callback=lambda f: self.feedback.append(f.feedback))
        self.spin_until(future.done, 'the goal response')
        assert future.result().accepted
        return future.result()

    def result(self, handle):
        result = handle.get_result_async()
        self.spin_until(result.done, 'the goal result')
        return result.result().result

    def wait_for_excitation(self):
        self.spin_until(lambda: any(f.phase == 'excite' for f in self.feedback),
                        'the excitation to begin')

    def assert_commands_end_at_rest(self):
        last = self.commands[-1].points[-1]
        assert max(abs(v) for v in last.velocities) < 1e-9
        assert max(abs(a) for a in last.accelerations) < 1e-9

    def close(self):
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()


@pytest.fixture
def context():
    from ident_ros.testing import isolated_context

    with isolated_context(DOMAIN) as ctx:
        yield ctx


@pytest.fixture
def processes():
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=TIMEOUT)


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=TIMEOUT)


def test_a_dead_driver_stops_the_excitation(context, processes, tmp_path):
    processes.append(start_process('sim_node', sim_parameters(tmp_path)))
    g = Graph(context, tmp_path, sim_in_process=False)
    try:
        handle = g.send(long_experiment(tmp_path / 'long.yaml'))
        g.wait_for_excitation()
        kill(processes[0])
        result = g.result(handle)
        assert not result.success
        assert 'no /joint_states for' in result.message and '\n' not in result.message
        assert result.duration < PERIODS, 'the motion ran on after the driver died'
        g.assert_commands_end_at_rest()
    finally:
        g.close()


def test_a_dead_recorder_stops_the_excitation_at_once(context, processes, tmp_path):
    processes.append(start_process('recorder_node', {'output_dir': str(tmp_path / 'bags'),
                                                     'urdf_file': str(URDF)}))
    g = Graph(context, tmp_path, sim_in_process=True)
    try:
        g.spin_until(lambda: g.node.recorder_alive, "the recorder's liveliness")
        handle = g.send(long_experiment(tmp_path / 'long.yaml'), record=True)
        g.wait_for_excitation()
        kill(processes[0])
        result = g.result(handle)
        assert not result.success
        assert 'the recorder is gone' in result.message
        assert result.duration < PERIODS, 'the motion ran on after the recorder died'
        g.assert_commands_end_at_rest()
    finally:
        g.close()


def test_a_robot_that_does_not_follow_stops_the_excitation(context, tmp_path):
    # The simulated arm tracks the command to well under a milliradian; a limit of 1 µrad
    # stands for a robot held by a collision or a drive fault.
    g = Graph(context, tmp_path, sim_in_process=True, tracking_error_limit=[1e-6])
    try:
        result = g.result(g.send(long_experiment(tmp_path / 'long.yaml')))
        assert not result.success
        assert 'from its command (limit 1e-06)' in result.message
        assert result.message.split()[0] in JOINTS
        assert result.duration < PERIODS
        g.assert_commands_end_at_rest()
    finally:
        g.close()


def test_a_goal_that_cannot_run_now_carries_the_reason(context, tmp_path):
    g = Graph(context, tmp_path, sim_in_process=True)
    try:
        first = g.send(long_experiment(tmp_path / 'long.yaml'))
        g.wait_for_excitation()
        second = g.result(g.send(tmp_path / 'long.yaml'))
        assert not second.success
        assert second.message == 'goal refused: an excitation is running'
        assert g.node.busy and g.node.motion is not None, 'the refusal touched the running goal'
        first.cancel_goal_async()
        assert not g.result(first).success
    finally:
        g.close()


def test_the_arm_s_joint_states_are_seen_behind_a_gripper_s(context, tmp_path):
    """A robot stack where a gripper's joint_state_broadcaster publishes right after the arm's
    in every controller cycle: the newest message is always the gripper's, and the watch must
    still see the arm's (else: no /joint_states for joint_states_timeout)."""
    from sensor_msgs.msg import JointState

    from ident_ros.qos import JOINT_STATES_QOS

    g = Graph(context, tmp_path, sim_in_process=False, joint_states_timeout=0.5)
    stack = g.client.create_publisher(JointState, '/joint_states', JOINT_STATES_QOS)

    def controller_cycle():
        stamp = g.client.get_clock().now().to_msg()
        for names, positions in ((JOINTS, START), (['gripper_finger'], [0.02])):
            msg = JointState(name=names, position=positions, velocity=[0.0] * len(names),
                             effort=[0.0] * len(names))
            msg.header.stamp = stamp
            stack.publish(msg)

    g.client.create_timer(0.01, controller_cycle)
    try:
        result = g.result(g.send(short_experiment(tmp_path / 'short.yaml')))
        assert result.success, result.message
    finally:
        g.close()


def short_experiment(path: Path) -> Path:
    """Joint 4 on two 1 s cosines of 0.05 rad from ``START``, the others held."""
    path.write_text(yaml.safe_dump({
        'format': 'robot-ident/jointwise/1', 'name': 'short', 'joint': 'joint4',
        'joint_names': JOINTS, 'hold': START,
        'cosines': [{'amplitude': 0.05, 'period': 1.0, 'periods': 2}]}))
    return path


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-v']))
