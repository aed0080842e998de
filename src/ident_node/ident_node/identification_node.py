"""Identification node: identifies recordings with ``ident_core`` and publishes the result.

Service ``~/identify`` (ident_msgs/srv/IdentifyRecording): loads the ``sensor_msgs/JointState``
messages of a rosbag2, identifies the base parameters (settings from the node parameters), validates
on the other bags given, writes RESULT.yaml (``ident_core.results``; by default
``<bag>.result.yaml`` next to the bag) and publishes ``ident_msgs/IdentifiedParameters`` on
``~/parameters`` (transient local: late subscribers get the last result). With
``auto_identify`` it also identifies every bag the recorder reports closed.
"""
from __future__ import annotations

import sys
from pathlib import Path

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ident_core.datasets import load_bag
from ident_core.errors import IdentError, InputError
from ident_core.identification import Settings, identify, validate
from ident_core.readers import excitation_window
from ident_core.results import result_dict, write_result
from ident_core.robot_model import load_robot
from ident_msgs.msg import IdentifiedParameters, RecordingInfo
from ident_msgs.srv import IdentifyRecording
from ident_node import runtime
from ident_node.conversions import parameters_msg

PARAMETERS = {
    'urdf_file': '',
    'joint_states_topic': '/joint_states',
    'friction': 'viscous-coulomb-offset',
    'rotor_inertia': True,
    'estimator': 'wls',
    'cutoff_hz': 10.0,
    'filter_order': 4,
    'decimate': 0,
    'reversal_window': 0.0,
    'excitation_topic': '/excitation_node/trajectory',
    'excitation_window_only': True,
    'auto_identify': False,
    'recordings_topic': '/recorder/recordings',
}


class IdentificationNode(runtime.GracefulNode):
    """The ``identification_node``."""

    def __init__(self):
        super().__init__('identification_node')
        p = {name: runtime.parameter(self, name, default) for name, default in PARAMETERS.items()}
        if not p['urdf_file']:
            raise InputError('parameter urdf_file is empty')
        self.robot = load_robot(p['urdf_file'])
        self.settings = Settings(friction=p['friction'], rotor_inertia=p['rotor_inertia'],
                                 estimator=p['estimator'], cutoff_hz=p['cutoff_hz'] or None,
                                 filter_order=p['filter_order'], decimate=p['decimate'],
                                 reversal_window=p['reversal_window'])
        _ = self.settings.spec                  # raises InputError for an unknown friction model
        self.topic = p['joint_states_topic']
        self.excitation_topic = p['excitation_topic'] if p['excitation_window_only'] else ''
        self.publisher = self.create_publisher(IdentifiedParameters, '~/parameters',
                                               runtime.LATCHED_QOS)
        self.create_service(IdentifyRecording, '~/identify', self._on_identify)
        if p['auto_identify']:
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(RecordingInfo, p['recordings_topic'], self._on_recording,
                                     qos)
        self.get_logger().info(f'ready: {self.robot.model.name}, {self.settings}')

    def identify(self, bag: str, validation_bags: list[str], result_path: str) -> tuple:
        """Identify ``bag``, validate on ``validation_bags``, write RESULT.yaml, publish.

        Returns:
            (result path, IdentifiedParameters message).

        Raises:
            IdentError: bad recording or settings (message names the bag and the problem).
        """
        model = identify(self.robot, [self._load(bag)], self.settings)
        validations = []
        for other in validation_bags:
            v = validate(model, self._load(other))
            validations.append({'data': v.source, **v.metrics})
        path = Path(result_path) if result_path else Path(str(Path(bag)) + '.result.yaml')
        write_result(path, model, validations)
        msg = parameters_msg(result_dict(model, validations), self.get_clock().now().to_msg())
        self.publisher.publish(msg)
        self.get_logger().info(
            f'identified {len(model.values)} base parameters from {bag} '
            f'(condition number {model.stats["condition_number"]:.0f}, relative error '
            f'{msg.relative_error_percent:.2f} %), result {path}')
        return str(path.resolve()), msg

    def _load(self, bag: str):
        """The JointState recording of ``bag``, cut to its periodic excitation when the bag
        holds an ExcitationTrajectory description (approach, stop and rest are left out)."""
        window = excitation_window(Path(bag), self.excitation_topic) \
            if self.excitation_topic else None
        return load_bag(bag, self.topic, list(self.robot.joint_names), window)[0]

    def _on_identify(self, request, response):
        try:
            response.result_path, response.parameters = self.identify(
                request.bag_path, list(request.validation_bag_paths), request.result_path)
            response.success, response.message = True, 'identified'
        except IdentError as exc:
            self.get_logger().error(f'identification failed: {exc}')
            response.success, response.message = False, str(exc)
        return response

    def _on_recording(self, info: RecordingInfo) -> None:
        if info.recording:
            return
        try:
            self.identify(info.path, [], '')
        except IdentError as exc:
            self.get_logger().error(f'identification of {info.path} failed: {exc}')


def main(args=None):
    sys.exit(runtime.run(IdentificationNode, args=args))
