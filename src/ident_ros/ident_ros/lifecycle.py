"""Process life cycle of the suite's nodes: finish the work on SIGINT/SIGTERM, then tear down.

rclpy's own SIGINT handler shuts the context down at once, so a node could not finish what it is
doing (close a bag, bring the robot to rest). Here SIGINT and SIGTERM only call the node's
``request_shutdown``; the node keeps spinning until it sets ``finished``, or until
``SHUTDOWN_TIMEOUT`` s have passed. Before the node is destroyed and the context shut down, the
default actions of SIGINT and SIGTERM are restored (terminate the process), so a node that hangs
in teardown dies on the next signal; and a teardown (middleware) that has not finished after
``TEARDOWN_TIMEOUT`` s prints the traceback of every thread and ends the process with status 1
(``faulthandler``'s watchdog runs in C, so it fires even while a native call holds the GIL). The
interpreter's final garbage collection is skipped (``gc.freeze``): from SIGINT to exit must fit
in the 5 s after which ``ros2 launch`` sends SIGTERM, also on a busy machine.
Nodes spin a ``SingleThreadedExecutor`` (the stock ``MultiThreadedExecutor`` of rclpy 9.1.2
drops messages, docs/ros2_from_pypi.md), or rclpy's ``EventsExecutor`` when they ask for it: it
takes each message without rebuilding the wait set, which a node at the joint_states rate needs
(the torque estimator; it has no timer, where the events executor is still young).
Warnings about the data (``ident_core.errors.DataWarning``: a gap in a recording, a poor fit) go
to the node's logger, every time they occur. A node that must wait for something while it is
constructed (the robot description) waits with ``wait_during_startup``, which a signal ends
(``StartupInterrupted``: the process exits 0 at once).
"""
from __future__ import annotations

import faulthandler
import gc
import signal
import sys
import time
import warnings

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from ident_core.errors import DataWarning
from ident_core.threads import limit_blas_threads

SHUTDOWN_TIMEOUT = 10.0
TEARDOWN_TIMEOUT = 5.0
SPIN_PERIOD = 0.05
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The signals ``run`` received, latest process only (``wait_during_startup`` looks at them).
_received: list = []


class StartupInterrupted(Exception):
    """A signal arrived while a node waited during its construction."""


class GracefulNode(Node):
    """A node that finishes its work on SIGINT/SIGTERM.

    Subclasses override ``request_shutdown`` (default: finish at once) and set
    ``self.finished = True`` when done.

    Parameters
    ----------
    name : str
        Node name.
    **kwargs
        Passed to ``rclpy.node.Node``.

    Attributes
    ----------
    finished : bool
        Set when the node has nothing left to do; ``run`` then tears it down.
    shutdown_requested : bool
        Set by ``run`` when a signal arrived.
    exit_code : int
        The process exit status.
    """

    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)
        self.finished = False
        self.shutdown_requested = False
        self.exit_code = 0

    def request_shutdown(self) -> None:
        """A signal arrived: finish the work (default: at once)."""
        self.finished = True

    def close(self) -> None:
        """Release resources (files) after the last spin; called exactly once."""


def run(node_class, args=None, executor_class=SingleThreadedExecutor, **kwargs) -> int:
    """Create a node, spin it until it finishes, tear it down.

    BLAS runs on one thread for the rest of the process (``ident_core.threads``): the nodes'
    work in worker threads (identification, excitation optimisation, simulation steps) is small
    factorisations that multithreaded BLAS only slows down on a busy machine. Errors raised
    while constructing the node (bad parameters, files, a bad ``ROBOT_IDENT_BLAS_THREADS``) are
    printed on one line and give exit code 2.

    Parameters
    ----------
    node_class : type
        A ``GracefulNode`` subclass.
    args : list of str, optional
        Command-line arguments for ``rclpy.init``.
    executor_class : type, optional
        The executor (``SingleThreadedExecutor``, or ``rclpy.experimental.EventsExecutor``).
    **kwargs
        Passed to ``node_class``.

    Returns
    -------
    int
        The exit code: the node's ``exit_code``, 1 if it did not finish within
        ``SHUTDOWN_TIMEOUT`` s of a signal, 2 for bad parameters.
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    received = _received
    received.clear()
    for sig in SIGNALS:
        signal.signal(sig, lambda s, _frame: received.append(s))
    node = None
    try:
        try:
            limit_blas_threads()
            node = node_class(**kwargs)
            _log_warnings(node)
        except ValueError as exc:      # bad parameters or files (InputError is a ValueError)
            print(f'{node_class.__name__}: error: {exc}', file=sys.stderr)
            return 2
        except StartupInterrupted as exc:
            print(f'{node_class.__name__}: {exc}', file=sys.stderr)
            return 0
        _spin(node, received, executor_class())
        return node.exit_code
    finally:
        if node is not None:
            node.close()
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        sys.stdout.flush()
        sys.stderr.flush()
        # armed until the process ends: also covers the interpreter's own finalisation
        faulthandler.dump_traceback_later(TEARDOWN_TIMEOUT, exit=True)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        # The middleware leaves now (the context's participant), not when the interpreter's final
        # garbage collection reaches it; that collection is then skipped (objects left to the
        # operating system): over the numeric stack it took seconds on a busy 2-core machine, and
        # ros2 launch sends SIGTERM 5 s after SIGINT.
        rclpy.get_default_context().destroy()
        gc.freeze()


def wait_during_startup(node: Node, future, waiting: str, repeat: float = 10.0) -> None:
    """Spin a node that is being constructed until a future is done.

    The node's callbacks run meanwhile (those of the entities it already has), on an executor
    of its own that is gone afterwards (``run`` spins the node later on its own executor).

    Parameters
    ----------
    node : rclpy.node.Node
        The node, not yet spun by any executor.
    future : rclpy.task.Future
        Done by a callback of the node (e.g. a subscription's).
    waiting : str
        What the node waits for: logged at once, and again (a warning) every ``repeat`` s.
    repeat : float, optional
        [s].

    Raises
    ------
    StartupInterrupted
        If SIGINT or SIGTERM arrives meanwhile (in a process of ``run``), or the context is
        shut down.
    """
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    node.get_logger().info(waiting)
    since = time.monotonic()
    try:
        while not future.done():
            if _received or not node.context.ok():
                raise StartupInterrupted(f'signal {_received[0] if _received else ""} while '
                                         f'{waiting}: nothing done')
            executor.spin_once(timeout_sec=SPIN_PERIOD)
            if not future.done() and time.monotonic() - since > repeat:
                since = time.monotonic()
                node.get_logger().warning(f'still {waiting}')
    finally:
        executor.remove_node(node)
        executor.shutdown(timeout_sec=0.0)


def _log_warnings(node: Node) -> None:
    """Route warnings to the node's logger; show every DataWarning, not the first of each
    place only (a node identifies many recordings)."""
    warnings.simplefilter('always', DataWarning)
    warnings.showwarning = lambda message, *_args, **_kwargs: \
        node.get_logger().warning(str(message))


def _spin(node: GracefulNode, received: list, executor) -> None:
    executor.add_node(node)
    deadline = None
    try:
        while not node.finished and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_PERIOD)
            if received and not node.shutdown_requested:
                node.shutdown_requested = True
                deadline = time.monotonic() + SHUTDOWN_TIMEOUT
                node.get_logger().info(f'signal {received[0]}: shutting down')
                node.request_shutdown()
            if deadline is not None and time.monotonic() > deadline:
                node.get_logger().error(f'not finished {SHUTDOWN_TIMEOUT:g} s after the signal')
                node.exit_code = node.exit_code or 1
                return
    finally:
        executor.remove_node(node)
        executor.shutdown(timeout_sec=0.0)
