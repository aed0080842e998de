"""The excitation node through the controller's ``control_msgs/action/FollowJointTrajectory``
(control_msgs built from ../shared/ros2_src, ``conftest.control_msgs_env``; skipped without it).

The simulator serves the action as joint_trajectory_controller does, the excitation node runs
with ``controller_interface: action``, both as processes of their own (they import control_msgs);
the test's client (RunExcitation, the simulator's ``~/apply_external_torque``, joint_states and
the controller's topic) runs in this process, all in a ROS domain of this module on loopback.
Ground truth: the simulator's own report of each goal (its log) and the measured joint states.

* A cancelled excitation replaces the controller's goal by its stop: the controller pre-empts
  the running goal (``INVALID_GOAL``), which is no failure; the stop goal succeeds and the arm
  comes to rest.
* A joint pushed off its path (an external torque of 100 N·m on joint2 for 0.3 s: 0.08 rad off
  on the free simulator, against a path tolerance of 0.02 rad) makes the controller abort the
  goal with ``PATH_TOLERANCE_VIOLATED``: the excitation fails with the controller's code and
  error string.
* With ``controller_interface: auto``, a controller without the action server (the simulator
  without control_msgs) gets the motion on its topic.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
JOINTS = [f'joint{i}' for i in range(1, 7)]
START = [0.1, -0.2, 0.3, 0.0, 0.2, -0.1]               # rad
ACTION = '/joint_trajectory_controller/follow_joint_trajectory'
PERIODS = 20                                            # 1 s each: far longer than the tests
PATH_TOLERANCE = 0.02                                   # rad
TIMEOUT = 120.0                                         # s, guards against a hang only
DOMAIN = 100 + (random.randrange(90) + os.getpid() + 53) % 90
#: Waits of the excitation node for a machine shared by the simulator, the node, the test and
#: more: the action server may be discovered late (the wait ends when it is); a goal taken late
#: by the simulator starts into the motion (the lead only delays it; ``excite`` fails on the
#: node's warning), and while the simulator takes a goal it publishes no joint_states (its one
#: thread converts the goal's points, some 50 ms for 2101 points; with a CPU hog beside
#: the niced test, such a goal was accepted 3.4 s after it was sent and the node saw no
#: joint_states for 1.7 s, against the watchdog's default limit of 1 s).
BUSY_MACHINE = {'controller_wait': 30.0, 'goal_lead': 5.0, 'joint_states_timeout': 10.0}


def _parameters(values: dict) -> list[str]:
    args = ['--ros-args']
    for name, value in values.items():
        args += ['-p', f'{name}:={yaml.safe_dump(value, default_flow_style=True).strip()}']
    return args


class Graph:
    """The simulator and the excitation node as processes, a client in this process."""

    def __init__(self, context, env: dict, tmp: Path, sim_env: dict | None = None, **node):
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        from ident_msgs.action import RunExcitation
        from ident_msgs.srv import ApplyExternalTorque
        from ident_ros.qos import COMMAND_QOS

        self.tmp, self.processes, self.logs, self.mark = tmp, [], {}, {}
        # 250 Hz: the simulator beside the excitation node and the test on two busy cores
        self._start(sim_env or env, 'sim_node', {
            'urdf_file': str(URDF), 'initial_position': START, 'perturbation': 0.0,
            'rate_hz': 250.0, 'ground_truth_dir': str(tmp / 'ground_truth')})
        self._start(env, 'excitation_node', {
            'urdf_file': str(URDF), 'acceleration_limits': [20.0, 20.0, 20.0, 25.0, 25.0, 25.0],
            'controller_interface': 'action', 'path_tolerance': [PATH_TOLERANCE],
            'goal_tolerance': [0.01], 'goal_time_tolerance': 2.0, **BUSY_MACHINE, **node})
        self.client = rclpy.create_node('follow_joint_trajectory_test', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.client)
        # the newest joint state only (a queue would hand over old ones)
        self.state = None
        newest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.client.create_subscription(JointState, '/joint_states',
                                        lambda msg: setattr(self, 'state', msg), newest)
        self.commands = []
        self.client.create_subscription(JointTrajectory,
                                        '/joint_trajectory_controller/joint_trajectory',
                                        self.commands.append, COMMAND_QOS)
        self.run = ActionClient(self.client, RunExcitation, '/excitation_node/run')
        self.torque = self.client.create_client(ApplyExternalTorque,
                                                '/ident_sim/apply_external_torque')
        self.experiment = tmp / 'long.yaml'
        self.experiment.write_text(yaml.safe_dump({
            'format': 'robot-ident/jointwise/1', 'name': 'long', 'joint': 'joint4',
            'joint_names': JOINTS, 'hold': [0.0] * 6,
            'cosines': [{'amplitude': 0.15, 'period': 1.0, 'periods': PERIODS}]}))
        self.short = tmp / 'short.yaml'
        self.short.write_text(self.experiment.read_text().replace(f'periods: {PERIODS}',
                                                                  'periods: 2'))

    def _start(self, env: dict, executable: str, parameters: dict) -> None:
        log = self.tmp / f'{executable}.log'
        with open(log, 'w') as out:
            self.processes.append(subprocess.Popen(
                [executable, *_parameters(parameters)], env=env, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT))
        self.logs[executable] = log

    def spin_until(self, condition, what: str) -> None:
        from ident_ros.testing import spin_until

        for process in self.processes:
            assert process.poll() is None or process.returncode == 0, \
                f'{process.args[0]} ended: {self.log(process)}'
        try:
            spin_until(self.executor, condition, what, TIMEOUT)
        except AssertionError as exc:
            raise AssertionError('\n'.join([str(exc), *map(self.log, self.processes)])) from None

    def log(self, process) -> str:
        return self.logs[process.args[0]].read_text()[-3000:]

    def wait_for_log(self, executable: str, text: str) -> str:
        """What ``executable`` logged since the last ``excite``, once it holds ``text``."""
        deadline = time.monotonic() + TIMEOUT
        while text not in (log := self.logs[executable].read_text()[self.mark[executable]:]):
            assert time.monotonic() < deadline, \
                f'{executable} did not log {text!r} within {TIMEOUT:g} s:\n' + log[-3000:]
            self.executor.spin_once(timeout_sec=0.1)
        return log

    def excite(self, experiment: Path | None = None):
        """Send an experiment (the long one); returns its goal handle once it excites."""
        from ident_msgs.action import RunExcitation

        self.mark = {name: len(log.read_text()) for name, log in self.logs.items()}
        self.spin_until(lambda: self.run.server_is_ready() and self.state is not None,
                        'the excitation node and joint_states')
        feedback = []
        future = self.run.send_goal_async(
            RunExcitation.Goal(trajectory_file=str(experiment or self.experiment)),
            feedback_callback=lambda f: feedback.append(f.feedback))
        self.spin_until(future.done, 'the goal response')
        handle = future.result()
        assert handle.accepted
        result = handle.get_result_async()
        self.spin_until(lambda: result.done() or any(f.phase == 'excite' for f in feedback),
                        'the excitation to begin')
        log = self.logs['excitation_node'].read_text()[self.mark['excitation_node']:]
        assert any(f.phase == 'excite' for f in feedback), \
            f'the excitation ended before it began: {result.result().result.message}\n{log}'
        assert 'after its first point' not in log, log
        return handle

    def result(self, handle):
        result = handle.get_result_async()
        self.spin_until(result.done, 'the goal result')
        return result.result().result

    def assert_at_rest(self) -> None:
        """The next joint state: every joint at rest (below 0.01 rad/s; the encoder's
        quantum at 250 Hz is 1.2e-4 rad/s, the excitation reaches 0.94 rad/s)."""
        self.state = None
        self.spin_until(lambda: self.state is not None, 'a joint state')
        assert max(abs(v) for v in self.state.velocity) < 0.01, self.state

    def close(self) -> None:
        self.executor.shutdown()
        self.client.destroy_node()
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in self.processes:
            try:
                process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def running_graph(control_msgs_env: dict | None, tmp: Path, domain: int, simulator_action=True,
                  **node):
    """A ``Graph`` in ``domain``; without ``simulator_action`` the simulator runs without
    control_msgs (a controller with no action server)."""
    if control_msgs_env is None:
        pytest.skip('control_msgs is not in ../shared/ros2_src')
    from ident_ros.testing import ENVIRONMENT, isolated_context

    isolated = {**ENVIRONMENT, 'ROS_DOMAIN_ID': str(domain), 'ROS_LOG_DIR': str(tmp / 'ros_log')}
    with isolated_context(domain) as context:
        g = Graph(context, {**control_msgs_env, **isolated}, tmp,
                  None if simulator_action else {**os.environ, **isolated}, **node)
        try:
            yield g
        finally:
            g.close()


@pytest.fixture(scope='module')
def graph(control_msgs_env, tmp_path_factory):
    with running_graph(control_msgs_env, tmp_path_factory.mktemp('follow_joint_trajectory'),
                       DOMAIN) as g:
        yield g


def goal_events(log: str) -> list[str]:
    """What the simulated controller logged about its goals, in order ("accepted", "aborted:
    CODE error string (detail)", ...)."""
    marker = 'FollowJointTrajectory goal '
    return [line.split(marker, 1)[1].split(': ', 1)[0] if ' accepted: ' in line
            else line.split(marker, 1)[1] for line in log.splitlines() if marker in line]


def assert_stopped_by_a_replacing_goal(graph: Graph) -> None:
    """The simulated controller pre-empted the excitation's goal by the stop goal, which
    succeeded; the arm is at rest, and nothing went on the topic."""
    log = graph.wait_for_log('sim_node', 'FollowJointTrajectory goal succeeded')
    assert goal_events(log) == [
        'accepted', 'aborted: INVALID_GOAL Current goal preempted by new incoming action.',
        'accepted', 'succeeded: SUCCESSFUL Goal successfully reached!'], log[-3000:]
    graph.assert_at_rest()
    assert graph.commands == []


def test_a_cancelled_excitation_stops_through_a_replacing_goal(graph):
    handle = graph.excite()
    handle.cancel_goal_async()
    result = graph.result(handle)
    assert not result.success and result.message == 'cancel requested', result.message
    assert result.duration < PERIODS
    assert_stopped_by_a_replacing_goal(graph)
    assert f'via FollowJointTrajectory {ACTION}' in graph.logs['excitation_node'].read_text()


def test_a_path_tolerance_violation_fails_the_excitation_with_the_controllers_reason(graph):
    from ident_msgs.srv import ApplyExternalTorque

    handle = graph.excite()
    graph.spin_until(graph.torque.service_is_ready, 'the external torque service')
    push = graph.torque.call_async(ApplyExternalTorque.Request(joint='joint2', torque=100.0,
                                                               duration=0.3))
    graph.spin_until(push.done, 'the external torque')
    assert push.result().success, push.result().message
    result = graph.result(handle)
    assert not result.success
    assert result.message == (
        f'the controller ({ACTION}) aborted the trajectory: PATH_TOLERANCE_VIOLATED (-4): '
        'Aborted due to path tolerance violation'), result.message
    assert result.duration < PERIODS
    log = graph.wait_for_log('sim_node', 'FollowJointTrajectory goal aborted: '
                             'PATH_TOLERANCE_VIOLATED Aborted due to path tolerance violation')
    accepted, aborted = goal_events(log)
    assert accepted == 'accepted', log[-3000:]
    assert aborted.startswith('aborted: PATH_TOLERANCE_VIOLATED Aborted due to path tolerance '
                              'violation (joint2 position error '), log[-3000:]
    assert f'(tolerance {PATH_TOLERANCE:g})' in aborted
    assert graph.commands == []


def test_sigint_stops_the_arm_through_a_replacing_goal(graph):
    graph.excite()
    node = graph.processes[1]
    node.send_signal(signal.SIGINT)
    assert node.wait(timeout=TIMEOUT) == 0, graph.log(node)
    # the node left once the controller took its stop; the controller ran it to the end
    assert_stopped_by_a_replacing_goal(graph)


def test_auto_takes_the_topic_when_the_controller_has_no_action_server(control_msgs_env,
                                                                       tmp_path):
    # control_msgs in the excitation node, not in the simulator: no FollowJointTrajectory server
    with running_graph(control_msgs_env, tmp_path, 100 + (DOMAIN - 100 + 45) % 90,
                       simulator_action=False, controller_interface='auto',
                       controller_wait=2.0) as g:
        result = g.result(g.excite(g.short))
        assert result.success, result.message
        assert g.commands, 'no JointTrajectory on the topic'
        log = g.logs['excitation_node'].read_text()
        assert (f'no FollowJointTrajectory server {ACTION} within 2 s: sending JointTrajectory '
                'on /joint_trajectory_controller/joint_trajectory') in log, log[-3000:]
        assert 'FollowJointTrajectory' not in g.logs['sim_node'].read_text()
