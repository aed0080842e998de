"""The robot model from the robot's stack (ident_ros.robot_description): without ``urdf_file``
a node takes the URDF latched on ``robot_description`` in its own namespace, whatever other
namespaces publish, and logs where it came from; without either source it is refused."""
from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SIX_AXIS = REPO / 'urdf' / 'six_axis_3kg.urdf'
SCARA = REPO / 'urdf' / 'scara_3dof.urdf'
DOMAIN = 100 + (random.randrange(90) + os.getpid()) % 90
TIMEOUT = 60.0          # s, guards against a hang only


@pytest.fixture
def context():
    from ident_ros.testing import isolated_context

    with isolated_context(DOMAIN) as context:
        yield context


class Logger:
    def __init__(self):
        self.lines = []

    def info(self, text, **_kwargs):
        self.lines.append(text)

    warning = info


def test_a_node_takes_the_description_of_its_namespace(context):
    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import String

    from ident_ros.qos import ROBOT_DESCRIPTION_QOS
    from ident_ros.robot_description import RobotDescriptionParameters, robot_model

    stack = rclpy.create_node('stack', context=context)
    publishers = []
    for namespace, urdf in (('left', SIX_AXIS), ('right', SCARA)):
        pub = stack.create_publisher(String, f'/{namespace}/robot_description',
                                     ROBOT_DESCRIPTION_QOS)
        pub.publish(String(data=urdf.read_text()))          # latched, before the node exists
        publishers.append(pub)
    node = Node('identification_node', namespace='right', context=context)
    log = Logger()
    node.get_logger = lambda: log
    try:
        robot = robot_model(node, RobotDescriptionParameters())
    finally:
        node.destroy_node()
        stack.destroy_node()
    assert robot.urdf is None and robot.urdf_source == '/right/robot_description'
    assert robot.model.name == 'scara_3dof' and robot.joint_names == ['joint1', 'joint2',
                                                                      'joint3']
    digest = hashlib.sha256(SCARA.read_bytes()).hexdigest()
    assert robot.urdf_sha256() == digest
    assert log.lines[0].startswith('waiting for the robot description on '
                                   '/right/robot_description (std_msgs/String')
    assert log.lines[-1].startswith(
        f'robot model from /right/robot_description ({len(SCARA.read_bytes())} bytes, sha256 '
        f'{digest[:16]}…): scara_3dof, joints joint1, joint2, joint3')


def test_urdf_file_wins_and_no_source_is_refused(context):
    from rclpy.node import Node

    from ident_ros.robot_description import RobotDescriptionParameters, robot_model

    node = Node('n', context=context)
    try:
        robot = robot_model(node, RobotDescriptionParameters(urdf_file=str(SIX_AXIS)))
    finally:
        node.destroy_node()
    assert robot.urdf == SIX_AXIS and robot.model.name == 'six_axis_3kg'
    with pytest.raises(ValueError, match='urdf_file and robot_description_topic are both '
                                         'empty'):
        RobotDescriptionParameters(robot_description_topic='')
