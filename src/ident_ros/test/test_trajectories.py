"""Trajectory messages of ident_ros (``trajectories``) without DDS: ExcitationTrajectory both
ways, the points of a JointTrajectory, a stretch of motion as a JointTrajectory."""
import math
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Time

from ident_core.errors import InputError
from ident_core.excitation.fourier import load_trajectory
from ident_ros.trajectories import (
    joint_trajectory_msg,
    trajectory_from_msg,
    trajectory_points,
    trajectory_to_msg,
)

REPO = Path(__file__).resolve().parents[3]


def test_excitation_trajectory_round_trip():
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    msg = trajectory_to_msg(trajectory, Time(sec=12, nanosec=5), periods=3)
    assert msg.harmonics == 6 and msg.periods == 3 and msg.header.stamp.sec == 12
    assert msg.a[6 * 1 + 2] == trajectory.a[1, 2]          # row-major joints x harmonics
    back = trajectory_from_msg(msg)
    assert back.joint_names == trajectory.joint_names
    assert np.array_equal(back.a, trajectory.a) and np.array_equal(back.b, trajectory.b)
    assert back.period == pytest.approx(5.0) and back.periods == 3


def test_stage_of_a_multi_stage_excitation():
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    single = trajectory_to_msg(trajectory, Time(), periods=1)
    assert (single.stage, single.stages) == (1, 1)
    second = trajectory_to_msg(trajectory, Time(sec=30), periods=2, stage=2, stages=3)
    assert (second.stage, second.stages, second.periods) == (2, 3, 2)
    assert trajectory_from_msg(second).joint_names == trajectory.joint_names


def test_inconsistent_message_is_refused():
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    msg = trajectory_to_msg(trajectory, Time(), periods=1)
    msg.a = msg.a[:-1]
    with pytest.raises(InputError, match='ExcitationTrajectory message'):
        trajectory_from_msg(msg)


def test_trajectory_points_in_robot_order_and_refused_when_broken():
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from ident_core.model.robot import load_robot

    robot = load_robot(REPO / 'urdf' / 'scara_3dof.urdf')
    msg = JointTrajectory(joint_names=['joint3', 'joint1', 'joint2'])
    for k in range(2):
        point = JointTrajectoryPoint(positions=[0.1 * k, 1.0 + k, 2.0 + k],
                                     velocities=[0.0, 0.5, 0.25])
        point.time_from_start.sec, point.time_from_start.nanosec = k, 500_000_000
        msg.points.append(point)
    times, q, qd, qdd = trajectory_points(msg, robot)
    np.testing.assert_allclose(times, [0.5, 1.5])
    np.testing.assert_allclose(q, [[1.0, 2.0, 0.0], [2.0, 3.0, 0.1]])
    np.testing.assert_allclose(qd[0], [0.5, 0.25, 0.0])
    assert qdd is None
    msg.points[1].positions[1] = math.nan
    with pytest.raises(InputError, match='positions not finite'):
        trajectory_points(msg, robot)
    msg.points[1].positions = [0.0, 0.0]
    with pytest.raises(InputError, match='every point needs 3 positions'):
        trajectory_points(msg, robot)
    with pytest.raises(InputError, match='no data for joint'):
        trajectory_points(JointTrajectory(joint_names=['joint1']), robot)


def test_a_stretch_of_motion_as_a_joint_trajectory():
    times = np.array([0.0, 0.01, 0.02, 1.0 / 3.0])
    q = np.arange(8.0).reshape(4, 2)
    msg = joint_trajectory_msg(('b', 'a'), 1_700_000_000_250_000_000, times, q, -q, 2 * q)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1_700_000_000, 250_000_000)
    assert list(msg.joint_names) == ['b', 'a'] and len(msg.points) == 4
    last = msg.points[-1]
    assert (last.time_from_start.sec, last.time_from_start.nanosec) == (0, 333_333_333)
    assert list(last.positions) == [6.0, 7.0] and list(last.velocities) == [-6.0, -7.0]
    assert list(last.accelerations) == [12.0, 14.0]
    assert msg.points[1].time_from_start.nanosec == 10_000_000
