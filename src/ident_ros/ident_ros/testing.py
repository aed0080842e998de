"""Test support: an rclpy context of its own, so that tests running at the same time on one
machine do not discover each other's nodes; a URDF of given joint names for nodes that need a
robot model."""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

#: Environment of an isolated context: localhost discovery only.
ENVIRONMENT = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}


@contextmanager
def isolated_context(domain: int):
    """An initialised ``rclpy.Context`` in a ROS domain of its own, with localhost discovery.

    ``ROS_DOMAIN_ID`` and ``ROS_AUTOMATIC_DISCOVERY_RANGE`` are set for the time of the block
    (for nodes the test starts in child processes too) and restored after it; the context is
    shut down on exit.

    Parameters
    ----------
    domain : int
        ROS domain id (pick one per test process, e.g. from the process id).

    Yields
    ------
    rclpy.Context
    """
    import rclpy

    changes = {**ENVIRONMENT, 'ROS_DOMAIN_ID': str(domain)}
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def spin_until(executor, condition, what: str, timeout: float) -> None:
    """Spin an executor until a condition holds.

    Parameters
    ----------
    executor : rclpy.executors.Executor
        Spun 10 ms at a time.
    condition : callable
        Checked before each spin.
    what : str
        What is awaited, for the failure message.
    timeout : float
        [s] A guard against a hang, not a measurement.

    Raises
    ------
    AssertionError
        If ``condition()`` is still false after ``timeout``.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f'timeout ({timeout:g} s) waiting for {what}')
        executor.spin_once(timeout_sec=0.01)


def write_chain_urdf(path, joints: list[str], name: str = 'test_chain'):
    """Write a serial chain of revolute joints (about z, then y, alternately) as a URDF, for
    nodes that need a robot model with given joint names.

    Parameters
    ----------
    path : str or Path
        The file to write.
    joints : list of str
        The moving joints, base to tip.
    name : str, optional
        The robot's name.

    Returns
    -------
    Path
        ``path``.
    """
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}">\n  <link name="base_link"/>\n']
    parent = 'base_link'
    for i, joint in enumerate(joints):
        link = f'link_{i + 1}'
        axis = '0 0 1' if i % 2 == 0 else '0 1 0'
        parts.append(
            f'  <joint name="{joint}" type="revolute">\n'
            f'    <parent link="{parent}"/><child link="{link}"/>\n'
            f'    <origin xyz="0 0 0.1"/><axis xyz="{axis}"/>\n'
            f'    <limit lower="-3" upper="3" effort="100" velocity="5"/>\n'
            f'  </joint>\n'
            f'  <link name="{link}"><inertial><origin xyz="0.02 0.01 0.05"/><mass value="1"/>'
            f'<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.008"/>'
            f'</inertial></link>\n')
        parent = link
    parts.append('</robot>\n')
    path = Path(path)
    path.write_text(''.join(parts))
    return path
