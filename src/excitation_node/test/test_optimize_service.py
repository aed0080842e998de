"""The excitation node's ``~/optimize`` service: the node and a client node in this process (one
SingleThreadedExecutor, a ROS domain of each test alone, localhost discovery), a tiny optimiser
configuration. The settings logic is tested without DDS in ident_core
(test_excitation_on_robot.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.excitation.fourier import load_trajectory
from ident_core.model.robot import load_robot
from ident_core.motion.limits import JointLimits

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf/six_axis_3kg.urdf'
ACCELERATION = [20.0, 20.0, 20.0, 25.0, 25.0, 25.0]     # rad/s², the node's acceleration_limits
MARGIN = 0.02                                          # the node's limit_margin
# Deliberately looser than the node (acceleration 50 rad/s², margin 0.01): the node's own
# limits must win.
TINY = {'harmonics': 2, 'period': 4.0, 'periods': 1, 'samples': 20,
        'limits': {'margin': 0.01, 'acceleration': 50.0},
        'optimizer': {'ga': {'population': 6, 'generations': 2}, 'local': {'iterations': 2}}}
TIMEOUT = 20.0


class Graph:
    """The excitation node and a client node in one executor of their own context."""

    def __init__(self, rclpy, context, optimizer_config: str, out_dir: Path):
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState

        from excitation_node.excitation_node import ExcitationNode
        from ident_msgs.action import RunExcitation
        from ident_msgs.msg import ExcitationTrajectory
        from ident_msgs.srv import OptimizeExcitation
        from ident_ros.qos import LATCHED_QOS

        self.node = ExcitationNode(context=context, parameter_overrides=[
            Parameter('urdf_file', value=str(URDF)),
            Parameter('acceleration_limits', value=ACCELERATION),
            Parameter('limit_margin', value=MARGIN),
            Parameter('optimizer_config', value=optimizer_config),
            Parameter('optimization_budget', value=10.0),
            Parameter('optimized_trajectory_dir', value=str(out_dir))])
        self.client = rclpy.create_node('optimize_test_client', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        for node in (self.node, self.client):
            self.executor.add_node(node)
        self.optimize = self.client.create_client(OptimizeExcitation, '/excitation_node/optimize')
        self.run = ActionClient(self.client, RunExcitation, '/excitation_node/run')
        self.described = []
        self.client.create_subscription(ExcitationTrajectory, '/excitation_node/trajectory',
                                        self.described.append, LATCHED_QOS)
        self.joint_states = self.client.create_publisher(JointState, '/joint_states', 10)
        self.state = JointState(name=list(self.node.robot.joint_names),
                                position=[0.0] * self.node.robot.n)
        self.client.create_timer(0.02, lambda: self.joint_states.publish(self.state))
        self.spin_until(lambda: self.optimize.service_is_ready()
                        and self.run.server_is_ready(), 'the excitation node')

    def spin_until(self, condition, what: str, timeout: float = TIMEOUT):
        from ident_ros.testing import spin_until

        spin_until(self.executor, condition, what, timeout)

    def request(self, **fields):
        from ident_msgs.srv import OptimizeExcitation
        return self.optimize.call_async(OptimizeExcitation.Request(**fields))

    def send_goal(self, **fields):
        """The goal handle (accepted or not)."""
        from ident_msgs.action import RunExcitation
        future = self.run.send_goal_async(RunExcitation.Goal(**fields))
        self.spin_until(future.done, 'the goal response')
        return future.result()

    def result(self, goal_handle):
        future = goal_handle.get_result_async()
        self.spin_until(future.done, 'the goal result')
        return future.result().result

    def close(self):
        self.executor.shutdown()
        for node in (self.client, self.node):
            node.destroy_node()


@pytest.fixture
def graph(tmp_path):
    """Factory of a Graph for an optimiser config path, in a ROS domain of this test alone."""
    import rclpy

    from ident_ros.testing import isolated_context

    made = []
    with isolated_context() as context:
        def make(optimizer_config: str) -> Graph:
            made.append(Graph(rclpy, context, optimizer_config, tmp_path / 'out'))
            return made[-1]
        try:
            yield make
        finally:
            for g in made:
                g.close()


def test_optimize_writes_a_feasible_trajectory_that_an_empty_goal_then_runs(graph, tmp_path):
    from ident_ros.trajectories import trajectory_from_msg

    config = tmp_path / 'tiny.yaml'
    config.write_text(yaml.safe_dump(TINY))
    g = graph(str(config))

    # Nothing optimised yet: an empty goal fails and says what to do.
    handle = g.send_goal()
    assert handle.accepted
    result = g.result(handle)
    assert not result.success
    assert 'trajectory_file or trajectory' in result.message
    assert '/excitation_node/optimize first' in result.message

    first = g.request(seed=3, budget=5.0)
    second = g.request(seed=4, budget=5.0)
    g.spin_until(second.done, 'the second reply')
    assert not second.result().success
    assert 'already running' in second.result().message
    if not first.done():                 # the node answers while it optimises
        refused = g.result(g.send_goal())
        assert not refused.success
        assert refused.message == 'goal refused: an optimisation is running'
    g.spin_until(first.done, 'the optimisation')
    reply = first.result()
    assert reply.success, reply.message

    path = Path(reply.trajectory_file)
    assert path.is_absolute() and path.parent == tmp_path / 'out'
    assert path.name == 'six_axis_3kg_ga-local_cond_seed3.yaml'
    trajectory = load_trajectory(path)
    assert trajectory.name == path.stem
    assert reply.cond == pytest.approx(trajectory.extra['objectives']['cond'], rel=1e-12)
    assert reply.dopt == pytest.approx(trajectory.extra['objectives']['dopt'], rel=1e-12)
    assert reply.seconds > 0
    assert trajectory.harmonics == 2 and trajectory.period == pytest.approx(4.0)
    sent = trajectory_from_msg(reply.trajectory)
    assert np.allclose(sent.a, trajectory.a) and np.allclose(sent.q0, trajectory.q0)

    # Within the node's limits (not only the looser ones of the file), every 1 ms.
    robot = load_robot(URDF)
    limits = JointLimits.from_robot(robot, ACCELERATION).with_margin(MARGIN) \
        .reordered(list(trajectory.joint_names))
    t = np.arange(0.0, trajectory.period, 0.001)
    q, qd, qdd = trajectory.evaluate(t)
    assert not limits.violations(t, q, qd, qdd)
    assert np.abs(qdd).max(axis=0).max() > 0.01             # it does move

    # An empty goal now runs the optimised trajectory; no optimisation meanwhile.
    handle = g.send_goal()
    assert handle.accepted
    g.spin_until(lambda: g.described, 'the ~/trajectory description')
    assert g.described[-1].name == trajectory.name
    busy = g.request(seed=5, budget=5.0)
    g.spin_until(busy.done, 'the reply while running')
    assert not busy.result().success
    assert 'an excitation is running' in busy.result().message
    cancel = handle.cancel_goal_async()
    g.spin_until(cancel.done, 'the cancel response')
    result = g.result(handle)
    assert not result.success and 'cancel' in result.message


def test_bad_config_path_fails_cleanly_and_the_node_keeps_serving(graph, tmp_path):
    missing = tmp_path / 'nowhere' / 'optimizer.yaml'
    g = graph(str(missing))
    for seed in (0, 1):
        future = g.request(seed=seed, budget=1.0)
        g.spin_until(future.done, 'the reply')
        reply = future.result()
        assert not reply.success
        assert str(missing) in reply.message and 'not found' in reply.message
        assert reply.trajectory_file == ''
    assert not g.node.optimizing and g.node.optimized is None
