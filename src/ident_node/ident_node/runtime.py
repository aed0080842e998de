"""Process life cycle shared by the suite's nodes (ROS side, no mathematics).

rclpy's own SIGINT handler shuts the context down at once, so a node could not finish what it
is doing (close a bag, bring the robot to rest). Here SIGINT/SIGTERM only call the node's
``request_shutdown``; the node keeps spinning until it sets ``finished``, or until
``SHUTDOWN_TIMEOUT`` s have passed. Only ``SingleThreadedExecutor`` is used (the stock
MultiThreadedExecutor of rclpy 9.1.2 drops messages, see docs/ros2_from_pypi.md).
"""
from __future__ import annotations

import signal
import sys
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from ident_core.errors import InputError

SHUTDOWN_TIMEOUT = 10.0

# joint_states at 1 kHz: reliable so a recorder gets every sample, deep enough for bursts.
JOINT_STATES_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                              reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.VOLATILE)
# Descriptions and results that late joiners must still get (latched).
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Trajectory commands: reliable, a few in flight.
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)


class GracefulNode(Node):
    """A node that finishes its work on SIGINT/SIGTERM.

    Subclasses override ``request_shutdown`` (default: finish at once) and set
    ``self.finished = True`` when done; ``exit_code`` is the process exit status.
    """

    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)
        self.finished = False
        self.shutdown_requested = False
        self.exit_code = 0

    def request_shutdown(self) -> None:
        self.finished = True

    def close(self) -> None:
        """Release resources (files) after the last spin; called exactly once."""


def run(node_class, args=None, **kwargs) -> int:
    """Create ``node_class(**kwargs)``, spin it until it finishes, return its exit code.

    Errors raised while constructing the node (bad parameters, files) are printed on one line
    and give exit code 2.
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    signals = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _frame: signals.append(s))
    node = None
    try:
        node = node_class(**kwargs)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        deadline = None
        while not node.finished and rclpy.ok():
            executor.spin_once(timeout_sec=0.05)
            if signals and not node.shutdown_requested:
                node.shutdown_requested = True
                deadline = time.monotonic() + SHUTDOWN_TIMEOUT
                node.get_logger().info(f'signal {signals[0]}: shutting down')
                node.request_shutdown()
            if deadline is not None and time.monotonic() > deadline:
                node.get_logger().error(f'not finished {SHUTDOWN_TIMEOUT:g} s after the signal')
                node.exit_code = node.exit_code or 1
                break
        return node.exit_code
    except ValueError as exc:          # ident_core errors and bad parameters
        name = node.get_name() if node is not None else node_class.__name__
        print(f'{name}: error: {exc}', file=sys.stderr)
        return 2
    finally:
        if node is not None:
            node.close()
            node.destroy_node()
        rclpy.try_shutdown()


def per_joint(values, n: int, name: str) -> np.ndarray:
    """(n,) array from a per-joint parameter given as one value (for every joint) or n values.

    Raises:
        InputError: another number of values, naming the parameter.
    """
    values = np.asarray(values, dtype=float)
    if values.shape == (1,):
        return np.full(n, values[0])
    if values.shape != (n,):
        raise InputError(f'parameter {name}: give 1 or {n} values, got {values.size}')
    return values


def parameter(node: Node, name: str, default):
    """Declare and read a parameter; the default fixes its type, except that integers are
    accepted where the default is a float (``rate_hz:=1000``, ``kp: [2500]``).

    Raises:
        ValueError: a value of another type, naming the parameter.
    """
    value = node.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=True)).value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, list) and default and isinstance(default[0], float) \
            and isinstance(value, (list, tuple)) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    if type(value) is not type(default) and not (isinstance(default, list)
                                                  and isinstance(value, (list, tuple))):
        raise ValueError(f'parameter {name}: expected {type(default).__name__}, got {value!r}')
    return value
