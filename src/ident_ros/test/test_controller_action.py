"""The controller's FollowJointTrajectory (``ident_ros.controller_action``) without control_msgs
or DDS: the action's name. Goals, the client and the simulated server:
tests/test_follow_joint_trajectory.py and tests/test_ros_graph.py (where control_msgs is built)."""

from ident_ros.controller_action import action_name


def test_the_action_is_beside_the_controllers_topic():
    assert action_name('/joint_trajectory_controller/joint_trajectory') == \
        '/joint_trajectory_controller/follow_joint_trajectory'
    assert action_name('/arm/jtc/joint_trajectory') == '/arm/jtc/follow_joint_trajectory'
    assert action_name('jtc/joint_trajectory') == 'jtc/follow_joint_trajectory'   # relative
    assert action_name('joint_trajectory') == 'follow_joint_trajectory'
    assert action_name('/joint_trajectory') == '/follow_joint_trajectory'
