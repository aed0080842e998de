"""How the excitation node reaches the controller (``controller_interface``), without DDS
traffic: a node asked for the FollowJointTrajectory action where control_msgs is missing, or
given a tolerance that is none, does not start (one line naming the parameter), and ``auto``
without control_msgs uses the topic. The action itself: tests/test_follow_joint_trajectory.py."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
DOMAIN = 100 + (random.randrange(90) + os.getpid() + 71) % 90


@pytest.fixture
def make_node():
    from rclpy.parameter import Parameter

    from excitation_node.excitation_node import ExcitationNode
    from ident_ros.testing import isolated_context

    nodes = []
    with isolated_context(DOMAIN) as context:
        def make(**parameters):
            nodes.append(ExcitationNode(context=context, parameter_overrides=[
                Parameter('urdf_file', value=str(URDF)),
                *[Parameter(k, value=v) for k, v in parameters.items()]]))
            return nodes[-1]
        try:
            yield make
        finally:
            for node in nodes:
                node.destroy_node()


def test_without_control_msgs_auto_uses_the_topic_and_action_is_refused(make_node):
    from ident_core.errors import InputError
    from ident_ros import controller_action

    if controller_action.available():
        pytest.skip('control_msgs is installed here')
    assert make_node().controller is None
    with pytest.raises(InputError, match='controller_interface is action, but control_msgs'):
        make_node(controller_interface='action')


@pytest.mark.parametrize('name', ['path_tolerance', 'goal_tolerance'])
def test_a_negative_tolerance_other_than_minus_one_is_refused(make_node, name):
    from ident_core.errors import InputError

    with pytest.raises(InputError, match=rf'{name}: -0.5 is no tolerance'):
        make_node(**{name: [0.1, 0.1, -0.5, 0.1, 0.1, 0.1]})
    assert make_node(**{name: [-1.0]}) is not None            # -1: none
