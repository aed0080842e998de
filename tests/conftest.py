"""Fixtures shared by the integration tests of this folder."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ros2_sources import FOLLOW_JOINT_TRAJECTORY_CMAKE, ColconBuild, environment, missing_sources

#: s, guards against a hang only (about one minute on a busy 2-core machine)
BUILD_TIMEOUT = 900.0


@pytest.fixture(scope='session')
def control_msgs_env(tmp_path_factory) -> dict | None:
    """Environment (for child processes) in which control_msgs' ``FollowJointTrajectory``
    imports: ../shared/ros2_src/control_msgs built by colcon into a throw-away folder, reduced to
    that action (``ros2_sources.FOLLOW_JOINT_TRAJECTORY_CMAKE``); once per test session. None
    when the source is absent (a user's clone): the nodes then use the controller's topic."""
    if missing_sources(['control_msgs']):
        return None
    root = tmp_path_factory.mktemp('control_msgs')
    build = ColconBuild(root, ['control_msgs'],
                        {'control_msgs': FOLLOW_JOINT_TRAJECTORY_CMAKE})
    env = environment(os.environ, build.wait(BUILD_TIMEOUT))
    check = subprocess.run(
        [sys.executable, '-c', 'from rclpy.type_support import check_for_type_support; '
         'from ident_ros.controller_action import FollowJointTrajectory; '
         'check_for_type_support(FollowJointTrajectory)'],
        env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr[-3000:]
    return env
