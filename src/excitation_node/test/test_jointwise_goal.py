"""A joint-wise friction experiment run by the excitation node on the simulated arm: the
simulator node and the excitation node in this process (one SingleThreadedExecutor, a ROS
domain of this test alone, localhost discovery). The goal's file moves joint4 on two cosines;
the other joints stay where the arm stood (not at the file's hold positions), every stage is
described on ``~/trajectory``, the feedback counts stages and periods; a file whose cosine leaves
the limits is refused in one line before anything moves."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
JOINTS = [f'joint{i}' for i in range(1, 7)]
# rad/s², config/six_axis_3kg/excitation_node.yaml
ACCELERATION = [20.0, 20.0, 20.0, 25.0, 25.0, 25.0]
START = [0.1, -0.2, 0.3, 0.0, 0.2, -0.1]                # rad, where the simulated arm stands
MOVING, CENTRE = 'joint4', 0.3                          # rad
# Small and short: 2 periods of 1 s at 0.15 rad (0.94 rad/s, 5.9 rad/s²), 1 of 1.5 s at 0.05 rad.
COSINES = [{'amplitude': 0.15, 'period': 1.0, 'periods': 2},
           {'amplitude': 0.05, 'period': 1.5, 'periods': 1}]
# The three nodes share one executor in this process: at 1 kHz it falls behind the wall clock
# (the simulator then catches up in bursts, and each JointTrajectory message, which replaces the
# rest of the previous one from the simulator's "now" as the controller does, bridges the lag
# with a quintic that leaves the plan). 250 Hz keeps it on time.
RATE = 250.0                 # Hz
# The simulated arm is the URDF's (perturbation 0, no friction, no noise), so its computed-torque
# controller has the exact model and holds a joint against the coupling torques of joint4 to the
# encoder resolution (5e-7 rad). It differentiates the measured position backwards (half a
# sample, dt = 1/RATE, late): at the turning points of the fast cosine it lags by kd·qdd·dt/(2·kp)
# = 100 · 5.9 · 0.004 / (2 · 2500) = 0.5 mrad.
HELD_TOLERANCE = 1e-4        # rad
AMPLITUDE_TOLERANCE = 1e-3   # rad
TIMEOUT = 60.0               # s, guards against a hang only


def jointwise_file(path: Path, joint: str = MOVING, centre: float = CENTRE,
                   cosines=COSINES) -> Path:
    """A joint-wise experiment file; its joints in reverse URDF order and its hold positions of
    the other joints far from ``START`` (the node must hold them where they stand)."""
    names = JOINTS[::-1]
    hold = [centre if name == joint else 1.0 for name in names]
    path.write_text(yaml.safe_dump({
        'format': 'robot-ident/jointwise/1', 'name': path.stem, 'joint': joint,
        'joint_names': names, 'hold': hold, 'cosines': cosines}, sort_keys=False))
    return path


class Graph:
    """Simulator, excitation node and a client node in one executor of their own context."""

    def __init__(self, rclpy, context, tmp_path: Path):
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState

        from excitation_node.excitation_node import ExcitationNode
        from ident_msgs.action import RunExcitation
        from ident_msgs.msg import ExcitationTrajectory
        from ident_ros.qos import JOINT_STATES_QOS, LATCHED_QOS
        from ident_sim.sim_node import SimNode

        self.sim = SimNode(context=context, parameter_overrides=[
            Parameter('urdf_file', value=str(URDF)),
            Parameter('initial_position', value=START), Parameter('perturbation', value=0.0),
            Parameter('rate_hz', value=RATE),
            Parameter('ground_truth_dir', value=str(tmp_path / 'ground_truth'))])
        self.node = ExcitationNode(context=context, parameter_overrides=[
            Parameter('urdf_file', value=str(URDF)),
            Parameter('acceleration_limits', value=ACCELERATION)])
        self.client = rclpy.create_node('jointwise_test_client', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        for node in (self.sim, self.node, self.client):
            self.executor.add_node(node)
        self.states: list[tuple[float, list[float]]] = []      # (stamp s, positions URDF order)

        def on_state(msg: JointState):
            order = [list(msg.name).index(j) for j in JOINTS]
            self.states.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                                [msg.position[i] for i in order]))
        self.client.create_subscription(JointState, '/joint_states', on_state, JOINT_STATES_QOS)
        self.described: list[ExcitationTrajectory] = []
        self.client.create_subscription(ExcitationTrajectory, '/excitation_node/trajectory',
                                        self.described.append, LATCHED_QOS)
        self.feedback: list = []
        self.run = ActionClient(self.client, RunExcitation, '/excitation_node/run')
        self.spin_until(lambda: self.run.server_is_ready() and self.states,
                        'the excitation node and the first joint_states')

    def spin_until(self, condition, what: str):
        from ident_ros.testing import spin_until

        spin_until(self.executor, condition, what, TIMEOUT)

    def run_goal(self, trajectory_file: Path):
        """Send a goal, wait for its result; returns the result."""
        from ident_msgs.action import RunExcitation

        future = self.run.send_goal_async(
            RunExcitation.Goal(trajectory_file=str(trajectory_file)),
            feedback_callback=lambda f: self.feedback.append(f.feedback))
        self.spin_until(future.done, 'the goal response')
        handle = future.result()
        assert handle.accepted
        result = handle.get_result_async()
        self.spin_until(result.done, 'the goal result')
        return result.result().result

    def close(self):
        self.executor.shutdown()
        for node in (self.client, self.node, self.sim):
            node.destroy_node()


@pytest.fixture
def graph(tmp_path):
    import rclpy

    from ident_ros.testing import isolated_context

    with isolated_context() as context:
        g = Graph(rclpy, context, tmp_path)
        try:
            yield g
        finally:
            g.close()


def test_jointwise_goal_moves_one_joint_and_holds_the_others_where_they_stand(graph,
                                                                              tmp_path):
    g = graph
    # A cosine beyond joint5's limit (2.2 rad): refused before anything moves, in one line.
    bad = g.run_goal(jointwise_file(tmp_path / 'too_far.yaml', 'joint5', 2.0,
                                    [{'amplitude': 0.5, 'period': 2.0}]))
    assert not bad.success and '\n' not in bad.message
    assert 'joint5' in bad.message and 'too_far_1' in bad.message
    assert not g.described

    standing = np.array(g.states[-1][1])            # where the arm stands when the goal starts
    result = g.run_goal(jointwise_file(tmp_path / 'friction_joint4.yaml'))
    assert result.success, result.message

    # one description per stage, stamped with the start of its first period
    assert [(d.name, d.stage, d.stages, d.periods) for d in g.described] == [
        ('friction_joint4_1', 1, 2, 2), ('friction_joint4_2', 2, 2, 1)]
    stamps = [d.header.stamp.sec + 1e-9 * d.header.stamp.nanosec for d in g.described]
    for d, cosine in zip(g.described, COSINES):
        assert list(d.joint_names) == JOINTS[::-1]
        assert d.period == pytest.approx(cosine['period'])
        q0 = dict(zip(d.joint_names, d.q0))
        assert q0 == pytest.approx({**dict(zip(JOINTS, standing)), MOVING: CENTRE},
                                   abs=HELD_TOLERANCE)
    # the second stage begins after the first one's periods and a transition
    assert stamps[1] > stamps[0] + 2 * COSINES[0]['period']
    stages = {(f.phase, f.stage) for f in g.feedback}
    assert {('approach', 0), ('excite', 1), ('excite', 2)} <= stages
    assert max(f.period for f in g.feedback) == 3       # periods counted over both stages

    # The simulator may run a little behind the wall clock: wait for its joint_states to reach
    # the end of the last stage.
    end = stamps[1] + COSINES[1]['period'] * COSINES[1]['periods']
    g.spin_until(lambda: g.states[-1][0] >= end, 'joint_states up to the end of the last stage')
    t = np.array([s for s, _ in g.states])
    q = np.array([p for _, p in g.states])
    running = (t >= stamps[0]) & (t <= end)
    k = JOINTS.index(MOVING)
    held = [i for i in range(len(JOINTS)) if i != k]
    assert standing[held] == pytest.approx(np.array(START)[held], abs=HELD_TOLERANCE)
    deviation = np.abs(q[:, held] - standing[held]).max()
    assert deviation < HELD_TOLERANCE, f'a held joint moved by {deviation:.2e} rad'
    amplitude = COSINES[0]['amplitude']
    assert q[running, k].min() == pytest.approx(CENTRE - amplitude, abs=AMPLITUDE_TOLERANCE)
    assert q[running, k].max() == pytest.approx(CENTRE + amplitude, abs=AMPLITUDE_TOLERANCE)
    # the slow stage runs around the same centre with its own amplitude
    slow = (t >= stamps[1]) & (t <= end)
    assert np.ptp(q[slow, k]) == pytest.approx(2 * COSINES[1]['amplitude'],
                                               abs=AMPLITUDE_TOLERANCE)
