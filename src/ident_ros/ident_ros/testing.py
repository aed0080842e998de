"""Test support: an rclpy context of its own, so that tests running at the same time on one
machine do not discover each other's nodes."""
from __future__ import annotations

import os
import time
from contextlib import contextmanager

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
