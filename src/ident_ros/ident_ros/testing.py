"""Test support: an rclpy context of its own, so that tests running at the same time on one
machine do not discover each other's nodes; a URDF of given joint names for nodes that need a
robot model.

A ROS domain id drawn at random is shared, now and then, by two tests that run at the same time
on one machine (other checkouts' test runs too): each then talks to the other's nodes (a goal
answered by the other graph's busy excitation node). ``reserve_domain`` takes an id that no other
process on the machine holds, by an exclusive ``flock`` on a file per id in the temporary folder;
the operating system releases it when the process ends, however it ends.
"""
from __future__ import annotations

import fcntl
import os
import random
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

#: Environment of an isolated context: localhost discovery only.
ENVIRONMENT = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
#: The ROS domain ids tests use.
DOMAINS = range(100, 200)
_held: dict[int, int] = {}          # reserved domain id -> the descriptor holding its lock
_used: set[int] = set()             # ids this process reserved before


def reserve_domain() -> int:
    """A ROS domain id that no other process on this machine has reserved, held until
    ``release_domain`` or the end of this process; one this process did not use before if
    there is one (nothing of an earlier test is discovered).

    Returns
    -------
    int
        A domain id in ``DOMAINS``.

    Raises
    ------
    RuntimeError
        If every id in ``DOMAINS`` is held.
    """
    for domain in sorted(random.sample(DOMAINS, len(DOMAINS)), key=_used.__contains__):
        if domain in _held:
            continue
        path = Path(tempfile.gettempdir()) / f'robot-ident-ros-domain-{domain}.lock'
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:             # another user's file we may not open: taken
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _held[domain] = fd
        _used.add(domain)
        return domain
    raise RuntimeError(f'every ROS domain id in {DOMAINS.start}-{DOMAINS.stop - 1} is held by '
                       'tests running on this machine')


def release_domain(domain: int) -> None:
    """Give back a domain id of ``reserve_domain``.

    Parameters
    ----------
    domain : int
        The id.
    """
    os.close(_held.pop(domain))


@contextmanager
def isolated_context(domain: int | None = None):
    """An initialised ``rclpy.Context`` in a ROS domain of its own, with localhost discovery.

    ``ROS_DOMAIN_ID`` and ``ROS_AUTOMATIC_DISCOVERY_RANGE`` are set for the time of the block
    (for nodes the test starts in child processes too) and restored after it; the context is
    shut down on exit.

    Parameters
    ----------
    domain : int, optional
        ROS domain id; by default one of ``reserve_domain``, released after the block.

    Yields
    ------
    rclpy.Context
    """
    import rclpy

    reserved = domain is None
    if reserved:
        domain = reserve_domain()
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
        if reserved:
            release_domain(domain)


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
