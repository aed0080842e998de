"""Identification node: identifies recordings with ``ident_core`` and publishes the result.

Service ``~/identify`` (ident_msgs/srv/IdentifyRecording): loads the ``sensor_msgs/JointState``
messages of a rosbag2, identifies the base parameters (settings from the node parameters),
validates on the other bags given, writes RESULT.yaml (by default ``<bag>.result.yaml`` next to
the bag) and publishes ``ident_msgs/IdentifiedParameters`` on ``~/parameters`` (transient local:
late subscribers get the last result). With ``auto_identify`` it also identifies every bag the
recorder reports closed. The identification runs in a worker thread: the node keeps answering
while it works; one identification runs at a time, later requests wait their turn. On
SIGINT/SIGTERM the identification that runs is finished, none is started.
"""
from __future__ import annotations

import sys
from pathlib import Path

from pydantic import Field
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future

from ident_core.data.datasets import load_bag
from ident_core.data.readers import excitation_window
from ident_core.estimation.identification import IdentificationConfig, identify, validate
from ident_core.estimation.results import result_file, write_result
from ident_core.model.robot import load_robot
from ident_msgs.msg import IdentifiedParameters, RecordingInfo
from ident_msgs.srv import IdentifyRecording
from ident_ros import lifecycle, qos
from ident_ros.conversions import parameters_msg
from ident_ros.parameters import UrdfFile, declare_parameters
from ident_ros.worker import failure_message, in_thread


class IdentificationNodeParameters(IdentificationConfig):
    """Parameters of the node: the identification settings plus where the data come from.

    Attributes
    ----------
    urdf_file : str
        The robot's URDF (required).
    joint_states_topic : str
        JointState topic in the bags.
    excitation_topic : str
        ExcitationTrajectory topic in the bags.
    excitation_window_only : bool
        Use only the periodic part of the excitation described in the bag.
    auto_identify : bool
        Identify every bag the recorder reports closed.
    recordings_topic : str
        The recorder's reports.
    """

    urdf_file: UrdfFile = Field('', description='URDF of the robot (required)')
    joint_states_topic: str = Field('/joint_states', description='JointState topic in the bags')
    excitation_topic: str = Field('/excitation_node/trajectory',
                                  description='ExcitationTrajectory topic in the bags')
    excitation_window_only: bool = Field(True, description='use only the periodic part of the '
                                         'excitation described in the bag')
    auto_identify: bool = Field(False, description='identify every bag the recorder closes')
    recordings_topic: str = Field('/recorder/recordings',
                                  description="the recorder's RecordingInfo reports")


class IdentificationNode(lifecycle.GracefulNode):
    """The ``identification_node``: ``~/identify`` and, with ``auto_identify``, every bag the
    recorder closes (module docstring). ``InputError`` for bad parameters or URDF."""

    def __init__(self, **kwargs):
        super().__init__('identification_node', **kwargs)
        p = declare_parameters(self, IdentificationNodeParameters)
        self.p = p
        self.config = IdentificationConfig(**p.model_dump(include=set(
            IdentificationConfig.model_fields)))
        self.robot = load_robot(p.urdf_file)
        self.group = ReentrantCallbackGroup()
        self.busy = False
        self.waiting: list[Future] = []
        self.publisher = self.create_publisher(IdentifiedParameters, '~/parameters',
                                               qos.LATCHED_QOS)
        self.create_service(IdentifyRecording, '~/identify', self._on_identify,
                            callback_group=self.group)
        if p.auto_identify:
            self.create_subscription(RecordingInfo, p.recordings_topic, self._on_recording,
                                     qos.LATCHED_HISTORY_QOS, callback_group=self.group)
        self.get_logger().info(f'ready: {self.robot.model.name}, {self.config}')

    def identify(self, bag: str, validation_bags: list[str], result_path: str) -> tuple:
        """Identify a bag, validate on others and write RESULT.yaml (any thread).

        Parameters
        ----------
        bag : str
            The identification recording.
        validation_bags : list of str
            Recordings to validate on.
        result_path : str
            RESULT.yaml to write; empty: ``<bag>.result.yaml``.

        Returns
        -------
        path : Path
            The result file.
        result : dict
            Its content.

        Raises
        ------
        IdentError
            For a bad recording or settings (the message names the bag and the problem).
        """
        model = identify(self.robot, [self._load(bag)], self.config)
        for line in model.stats['preprocessing']:
            self.get_logger().info(line)
        validations = []
        for other in validation_bags:
            check = validate(model, self._load(other))
            for line in check.preprocessing:
                self.get_logger().info(line)
            validations.append(check.report())
        path = Path(result_path) if result_path else Path(str(Path(bag)) + '.result.yaml')
        result = result_file(model, validations)
        write_result(path, result)
        return path.resolve(), result.model_dump()

    def _load(self, bag: str):
        """The JointState recording of ``bag``, cut to its periodic excitation when the bag
        holds an ExcitationTrajectory description (approach, stop and rest are left out)."""
        p = self.p
        window = excitation_window(Path(bag), p.excitation_topic) \
            if p.excitation_window_only else None
        return load_bag(bag, p.joint_states_topic, window=window)[0]

    async def _identify_and_publish(self, bag: str, validation_bags: list[str],
                                    result_path: str) -> tuple:
        while self.busy:                 # one identification at a time; the others wait
            waiter = Future()
            self.waiting.append(waiter)
            await waiter
        if self.shutdown_requested:
            raise RuntimeError('the node is shutting down')
        self.busy = True
        try:
            path, result = await in_thread(self, self.identify, bag, validation_bags,
                                           result_path, name='identification',
                                           callback_group=self.group)
        finally:
            self.busy = False
            waiters, self.waiting = self.waiting, []
            for waiter in waiters:
                waiter.set_result(None)
            if self.shutdown_requested:
                self.finished = True     # the work asked for before the signal is done
        msg = parameters_msg(result, self.get_clock().now().to_msg())
        self.publisher.publish(msg)
        self.get_logger().info(
            f'identified {len(msg.base_parameter_values)} base parameters from {bag} '
            f'(condition number {msg.condition_number:.0f}, relative error '
            f'{msg.relative_error_percent:.2f} %), result {path}')
        return str(path), msg

    async def _on_identify(self, request, response):
        try:
            response.result_path, response.parameters = await self._identify_and_publish(
                request.bag_path, list(request.validation_bag_paths), request.result_path)
            response.success, response.message = True, 'identified'
        except Exception as exc:
            response.success, response.message = False, failure_message(exc)
            self.get_logger().error(f'identification failed: {response.message}')
        return response

    async def _on_recording(self, info: RecordingInfo) -> None:
        if info.recording:
            return
        try:
            await self._identify_and_publish(info.path, [], '')
        except Exception as exc:
            self.get_logger().error(f'identification of {info.path} failed: {failure_message(exc)}')

    def request_shutdown(self) -> None:
        """SIGINT/SIGTERM: finish the identification that runs (within the shutdown timeout),
        start no other."""
        if not self.busy:
            self.finished = True


def main(args=None):
    """Console script ``identification_node``."""
    sys.exit(lifecycle.run(IdentificationNode, args=args))
