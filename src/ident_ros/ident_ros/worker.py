"""Long work off the executor thread, waiting with a timeout, and reporting failed work, for
coroutine callbacks.

A node runs on one ``SingleThreadedExecutor``; a service or action callback that computes for
seconds would block every other callback (``stop``, shutdown, feedback). Such a callback is a
coroutine that awaits ``in_thread(node, function, ...)``: the function runs in a worker thread
and a guard condition wakes the executor when it is done.
"""
from __future__ import annotations

import concurrent.futures
import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.task import Future

from ident_core.errors import IdentError


async def in_thread(node: Node, function, *args, name: str = 'worker',
                    callback_group: CallbackGroup | None = None,
                    abandon: Future | None = None):
    """Run ``function(*args)`` in a worker thread while the executor keeps spinning.

    Parameters
    ----------
    node : rclpy.node.Node
        The node whose executor awaits the result.
    function : callable
        The work; may raise.
    *args
        Its arguments.
    name : str
        Name of the thread.
    callback_group : rclpy.callback_groups.CallbackGroup, optional
        Group of the guard condition that signals completion.
    abandon : rclpy.task.Future, optional
        Once it is done (its result: the reason), the wait ends with ``RuntimeError(reason)``;
        the thread (a daemon) runs on unobserved and ends with the process.

    Returns
    -------
    object
        What ``function`` returned.

    Raises
    ------
    Exception
        Whatever ``function`` raised, re-raised in the awaiting coroutine.
    RuntimeError
        If the work was abandoned.
    """
    outcome, done = concurrent.futures.Future(), Future()
    guard = node.create_guard_condition(lambda: done.done() or done.set_result(None),
                                        callback_group=callback_group)

    def work():
        try:
            outcome.set_result(function(*args))
        except BaseException as exc:
            outcome.set_exception(exc)
        try:
            guard.trigger()
        except Exception:
            pass

    threading.Thread(target=work, name=name, daemon=True).start()
    if abandon is not None:
        abandon.add_done_callback(lambda _f: done.done() or done.set_result(None))
    try:
        await done
    finally:
        node.destroy_guard_condition(guard)
    if not outcome.done():
        raise RuntimeError(abandon.result())
    return outcome.result()


def failure_message(exc: BaseException) -> str:
    """The message of work that failed, for a service response or a log line.

    Parameters
    ----------
    exc : BaseException
        What the work raised.

    Returns
    -------
    str
        An input or excitation error (``IdentError``) as it is; anything else, a defect rather
        than bad input, with its type.
    """
    return str(exc) if isinstance(exc, IdentError) else f'{type(exc).__name__}: {exc}'


async def with_timeout(node: Node, future: Future, timeout: float, message: str):
    """Await a future, failing if it is not done in time.

    Parameters
    ----------
    node : rclpy.node.Node
        The node whose clock times out.
    future : rclpy.task.Future
        What to wait for.
    timeout : float
        [s].
    message : str
        Text of the error.

    Returns
    -------
    object
        The future's result.

    Raises
    ------
    RuntimeError
        With ``message``, if the future is not done within ``timeout``.
    """
    timer = node.create_timer(timeout, lambda: future.done() or future.set_exception(
        RuntimeError(message)))
    try:
        return await future
    finally:
        node.destroy_timer(timer)


async def while_served(node: Node, future: Future, served, what: str, poll: float = 0.5):
    """Await the answer of a server, failing when the server is gone.

    A service or action client whose server dies waits for ever; this one checks the ROS graph
    every ``poll`` s (a killed process leaves it when its middleware lease expires).

    Parameters
    ----------
    node : rclpy.node.Node
        The node whose timer polls.
    future : rclpy.task.Future
        The answer (``call_async``, ``get_result_async``).
    served : callable
        True while the server is in the graph (``client.service_is_ready``,
        ``action_client.server_is_ready``).
    what : str
        The request, for the message.
    poll : float
        [s].

    Returns
    -------
    object
        The future's result.

    Raises
    ------
    RuntimeError
        If the server leaves the graph before answering.
    """
    def check():
        if not future.done() and not served():
            future.set_exception(RuntimeError(f'{what}: the server is gone (killed or crashed) '
                                              'before it answered'))
    timer = node.create_timer(poll, check)
    try:
        return await future
    finally:
        node.destroy_timer(timer)
