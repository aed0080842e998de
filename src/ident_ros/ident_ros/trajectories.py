"""Trajectory messages and ident_core motions: the ``ExcitationTrajectory`` that describes a
Fourier series run (both ways), the ``trajectory_msgs/JointTrajectory`` a
joint_trajectory_controller receives (its points as arrays; a stretch of a motion as a
message)."""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.duration import Duration
from rclpy.time import Time as ClockTime
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ident_core.errors import InputError
from ident_core.excitation.fourier import FourierTrajectory, trajectory_from_dict
from ident_core.model.robot import RobotModel
from ident_msgs.msg import ExcitationTrajectory


def trajectory_to_msg(trajectory: FourierTrajectory, stamp: Time, periods: int,
                      stage: int = 1, stages: int = 1) -> ExcitationTrajectory:
    """The message describing a trajectory run for some periods.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The trajectory (of a multi-stage excitation: one stage).
    stamp : builtin_interfaces.msg.Time
        Start of the first period (t = 0 of the series).
    periods : int
        Periods run.
    stage, stages : int
        Stage (1-based) of a multi-stage excitation and the number of stages.

    Returns
    -------
    ident_msgs.msg.ExcitationTrajectory
    """
    msg = ExcitationTrajectory()
    msg.header.stamp = stamp
    msg.name = trajectory.name
    msg.joint_names = list(trajectory.joint_names)
    msg.wf = float(trajectory.wf)
    msg.harmonics = trajectory.harmonics
    msg.q0 = [float(x) for x in trajectory.q0]
    msg.a = [float(x) for x in trajectory.a.ravel()]
    msg.b = [float(x) for x in trajectory.b.ravel()]
    msg.period = float(trajectory.period)
    msg.periods = int(periods)
    msg.stage, msg.stages = int(stage), int(stages)
    return msg


def trajectory_from_msg(msg: ExcitationTrajectory) -> FourierTrajectory:
    """The trajectory a message describes.

    Parameters
    ----------
    msg : ident_msgs.msg.ExcitationTrajectory

    Returns
    -------
    FourierTrajectory

    Raises
    ------
    InputError
        For inconsistent array sizes or values (naming the field).
    """
    n, h = len(msg.joint_names), msg.harmonics
    shape_ok = len(msg.a) == len(msg.b) == n * h
    data = {'name': msg.name or 'excitation', 'joint_names': list(msg.joint_names),
            'wf': msg.wf, 'periods': max(1, msg.periods), 'q0': list(msg.q0),
            'a': np.reshape(msg.a, (n, h)).tolist() if shape_ok else list(msg.a),
            'b': np.reshape(msg.b, (n, h)).tolist() if shape_ok else list(msg.b)}
    if msg.period and not math.isclose(msg.period, 2 * math.pi / msg.wf if msg.wf else 0,
                                       rel_tol=1e-6):
        data['period'] = msg.period
    return trajectory_from_dict(data, 'ExcitationTrajectory message')


def trajectory_points(msg, robot: RobotModel) -> tuple:
    """The points of a ``trajectory_msgs/JointTrajectory`` as arrays in the robot's joint order.

    Parameters
    ----------
    msg : trajectory_msgs.msg.JointTrajectory
        The command (every joint of the robot, at least one point).
    robot : RobotModel
        The robot.

    Returns
    -------
    times : (K,) ndarray
        ``time_from_start`` of the points [s].
    q : (K, n) ndarray
        Positions.
    qd, qdd : (K, n) ndarray or None
        Velocities and accelerations, None when the points carry none.

    Raises
    ------
    InputError
        If a joint of the robot is missing or unknown, there is no point, a point carries
        some but not all values of a field, or a value is not finite.
    """
    idx = robot.joint_order(list(msg.joint_names), 'JointTrajectory')
    points = msg.points
    if not points:
        raise InputError('JointTrajectory has no points')
    times = np.array([pt.time_from_start.sec + 1e-9 * pt.time_from_start.nanosec
                      for pt in points])
    fields = []
    for name in ('positions', 'velocities', 'accelerations'):
        rows = [getattr(pt, name) for pt in points]
        if all(len(r) == len(idx) for r in rows):
            values = np.array(rows, dtype=float)[:, idx]
            if not np.all(np.isfinite(values)):
                raise InputError(f'JointTrajectory: {name} not finite')
            fields.append(values)
        elif name == 'positions' or any(len(r) for r in rows):
            raise InputError(f'JointTrajectory: every point needs {len(idx)} {name}')
        else:
            fields.append(None)
    return (times, *fields)


def joint_trajectory_msg(joint_names, start_ns: int, times, q, qd, qdd) -> JointTrajectory:
    """The ``JointTrajectory`` of a stretch of motion: positions, velocities and accelerations
    at given times.

    Parameters
    ----------
    joint_names : sequence of str
        (n,) the joints, in the order of the columns.
    start_ns : int
        Clock time of ``time_from_start = 0`` [ns]: the header stamp.
    times : (K,) array_like
        ``time_from_start`` of the points [s], from 0.
    q, qd, qdd : (K, n) ndarray
        Positions [rad or m], velocities and accelerations.

    Returns
    -------
    trajectory_msgs.msg.JointTrajectory
        ``time_from_start`` rounded to the nanosecond.
    """
    msg = JointTrajectory()
    msg.header.stamp = ClockTime(nanoseconds=start_ns).to_msg()
    msg.joint_names = list(joint_names)
    for k, tk in enumerate(times):
        msg.points.append(JointTrajectoryPoint(
            positions=q[k].tolist(), velocities=qd[k].tolist(), accelerations=qdd[k].tolist(),
            time_from_start=Duration(nanoseconds=int(round(tk * 1e9))).to_msg()))
    return msg
