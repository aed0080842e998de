"""Waiting on a server: a service that dies before it answers gives its client an error
(``worker.while_served``), and abandoned work ends the wait with the reason
(``worker.in_thread``)."""
from __future__ import annotations

import threading

import pytest

TIMEOUT = 60.0             # s; guards against a hang only


def test_a_client_of_a_server_that_dies_gets_an_error():
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger

    from ident_ros.testing import isolated_context, spin_until
    from ident_ros.worker import while_served

    with isolated_context() as context:
        server = rclpy.create_node('silent_server', context=context)
        asked = threading.Event()

        async def never_answer(_request, response):
            asked.set()
            await rclpy.task.Future()              # never done
            return response
        server.create_service(Trigger, 'silent', never_answer)
        client = rclpy.create_node('waiting_client', context=context)
        call = client.create_client(Trigger, 'silent')
        executor = SingleThreadedExecutor(context=context)
        for node in (server, client):
            executor.add_node(node)
        outcome = {}

        async def ask():
            try:
                await while_served(client, call.call_async(Trigger.Request()),
                                   call.service_is_ready, 'silent', poll=0.05)
            except RuntimeError as exc:
                outcome['error'] = str(exc)
        try:
            spin_until(executor, call.service_is_ready, 'the service', TIMEOUT)
            task = executor.create_task(ask())
            spin_until(executor, asked.is_set, 'the request to arrive', TIMEOUT)
            executor.remove_node(server)
            server.destroy_node()
            spin_until(executor, task.done, 'the client to notice', TIMEOUT)
            assert outcome['error'] == ('silent: the server is gone (killed or crashed) before '
                                        'it answered')
        finally:
            executor.shutdown()
            client.destroy_node()


def test_abandoned_work_ends_the_wait_with_the_reason():
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.task import Future

    from ident_ros.testing import isolated_context, spin_until
    from ident_ros.worker import in_thread

    with isolated_context() as context:
        node = rclpy.create_node('worker_test', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        release, abandon, outcome = threading.Event(), Future(), {}

        async def work():
            with pytest.raises(RuntimeError, match='shutting down') as exc:
                await in_thread(node, release.wait, TIMEOUT, abandon=abandon)
            outcome['error'] = str(exc.value)
        try:
            task = executor.create_task(work())
            executor.spin_once(timeout_sec=0.01)
            abandon.set_result('shutting down')
            spin_until(executor, task.done, 'the wait to end', TIMEOUT)
            task.result()
            assert outcome['error'] == 'shutting down'
        finally:
            release.set()
            executor.shutdown()
            node.destroy_node()
