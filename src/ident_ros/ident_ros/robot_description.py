"""The robot model of a node: its ``urdf_file``, or the URDF the robot's stack publishes.

A robot's stack publishes its URDF on ``robot_description`` (``std_msgs/String``, reliable,
transient local, depth 1: robot_state_publisher's, often generated from xacro at launch), in its
namespace. Every node of the suite that needs the robot model declares
``RobotDescriptionParameters`` and calls ``robot_model`` once while it is constructed: the file
when ``urdf_file`` is given, else the first message on ``robot_description_topic`` (a relative
name, resolved in the node's namespace), awaited with a log line and interrupted by SIGINT /
SIGTERM (``lifecycle.wait_during_startup``). The node logs where the model came from, its size
and SHA-256 (which result files record).
"""
from __future__ import annotations

import pydantic
from pydantic import Field
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import String

from ident_core.model.robot import RobotModel, load_robot, robot_from_urdf_text
from ident_core.schema import Schema

from . import lifecycle, qos


class RobotDescriptionParameters(Schema):
    """Where a node takes the robot model from (a mixin of the nodes' parameter models)."""

    urdf_file: str = Field(
        '', description="The robot's URDF file; empty: the URDF published on "
        '``robot_description_topic``, awaited at start.')
    robot_description_topic: str = Field(
        'robot_description', description='std_msgs/String topic of the URDF (transient local, '
        "as robot_state_publisher publishes it) when ``urdf_file`` is empty; a relative name is "
        "in the node's namespace.")

    @pydantic.model_validator(mode='after')
    def _a_source(self):
        if not self.urdf_file and not self.robot_description_topic:
            raise ValueError('urdf_file and robot_description_topic are both empty: give the '
                             "robot's URDF file or the topic of its description")
        return self


def robot_model(node: Node, p: RobotDescriptionParameters,
                locked_joints: dict | None = None) -> RobotModel:
    """Load the robot model of a node being constructed, and log where it came from.

    Parameters
    ----------
    node : rclpy.node.Node
        The node (not yet spun); while it waits for the topic, its callbacks run.
    p : RobotDescriptionParameters
        Its parameters.
    locked_joints : dict, optional
        As for ``ident_core.model.robot.load_robot``.

    Returns
    -------
    RobotModel
        From the file; or from the topic's first message, ``urdf_source`` the topic's full
        name.

    Raises
    ------
    InputError
        If the URDF cannot be loaded (naming the file or the topic).
    lifecycle.StartupInterrupted
        If a signal arrives while the node waits for the topic.
    """
    if p.urdf_file:
        robot = load_robot(p.urdf_file, locked_joints)
        size = robot.urdf.stat().st_size
    else:
        topic = node.resolve_topic_name(p.robot_description_topic)
        text = wait_for_description(node, topic)
        robot = robot_from_urdf_text(text, topic, locked_joints)
        size = len(text.encode())
    node.get_logger().info(
        f'robot model from {robot.urdf_source} ({size} bytes, sha256 {robot.urdf_sha256()[:16]}'
        f'…): {robot.model.name}, joints {", ".join(robot.joint_names)}')
    return robot


def wait_for_description(node: Node, topic: str) -> str:
    """The first URDF published on a topic (the latched one, if any).

    Parameters
    ----------
    node : rclpy.node.Node
        The node being constructed (``lifecycle.wait_during_startup``).
    topic : str
        Full name of the ``std_msgs/String`` topic.

    Returns
    -------
    str
        The URDF text.

    Raises
    ------
    lifecycle.StartupInterrupted
        If a signal arrives meanwhile.
    """
    received = Future()

    def on_description(msg: String) -> None:
        if not received.done():
            received.set_result(msg.data)
    subscription = node.create_subscription(String, topic, on_description,
                                            qos.ROBOT_DESCRIPTION_QOS)
    try:
        lifecycle.wait_during_startup(
            node, received, f'waiting for the robot description on {topic} (std_msgs/String, '
            'transient local; no urdf_file given): is robot_state_publisher running in this '
            'namespace?')
    finally:
        node.destroy_subscription(subscription)
    return received.result()
