"""A node's health on ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), the way
``diagnostic_updater`` publishes it, which is not installable here: every ``period`` one array
with a status per task, named ``"<node name>: <task>"``, ``hardware_id`` the robot where known.
The statuses are computed by ``ident_core.monitoring``; this module only turns them into
messages and publishes them.
"""
from __future__ import annotations

from collections.abc import Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from ident_core.monitoring.status import Level, Status

from . import qos

TOPIC = '/diagnostics'


def status_msg(status: Status, name: str, hardware_id: str = '') -> DiagnosticStatus:
    """The message of one status.

    Parameters
    ----------
    status : Status
        Level, message and values.
    name : str
        The status name (``"<node name>: <task>"``).
    hardware_id : str
        The robot, ``''`` if unknown.

    Returns
    -------
    diagnostic_msgs.msg.DiagnosticStatus
    """
    return DiagnosticStatus(level=bytes([int(status.level)]), name=name, message=status.message,
                            hardware_id=hardware_id,
                            values=[KeyValue(key=k, value=v) for k, v in status.values.items()])


class DiagnosticsPublisher:
    """Publishes a node's task statuses on ``/diagnostics`` from a timer.

    Parameters
    ----------
    node : rclpy.node.Node
        The node (its name prefixes the status names; the timer runs in its default callback
        group).
    period : float
        Time between two arrays [s] (parameter ``diagnostics_period``).
    hardware_id : str
        The robot's name, ``''`` if the node does not know it.
    """

    def __init__(self, node: Node, period: float, hardware_id: str = ''):
        self.node, self.hardware_id = node, hardware_id
        self.tasks: list[tuple[str, Callable[[], Status]]] = []
        self.publisher = node.create_publisher(DiagnosticArray, TOPIC, qos.DIAGNOSTICS_QOS)
        self.timer = node.create_timer(period, self.publish)

    def add(self, task: str, update: Callable[[], Status]) -> None:
        """Report a task.

        Parameters
        ----------
        task : str
            The task's name in the status name.
        update : callable
            Returns the task's ``Status``, called at every publication.
        """
        self.tasks.append((task, update))

    def statuses(self) -> list[DiagnosticStatus]:
        """The status messages of every task now (a task whose update raises is an ERROR
        naming the exception).

        Returns
        -------
        list of diagnostic_msgs.msg.DiagnosticStatus
        """
        out = []
        for task, update in self.tasks:
            try:
                status = update()
            except Exception as exc:        # a bug in a check must not stop the node
                status = Status(task, Level.ERROR, f'status not computed: {exc!r}')
            out.append(status_msg(status, f'{self.node.get_name()}: {task}', self.hardware_id))
        return out

    def publish(self) -> None:
        """Publish one array with every task's status."""
        msg = DiagnosticArray(status=self.statuses())
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(msg)
