"""Identification node: identifies recordings with ``ident_core`` and publishes the result.

Service ``~/identify`` (ident_msgs/srv/IdentifyRecording): loads the ``sensor_msgs/JointState``
messages of a rosbag2, identifies the base parameters (settings from the node parameters),
validates on the other bags given, writes RESULT.yaml (by default ``<bag>.result.yaml`` next to
the bag) and publishes ``ident_msgs/IdentifiedParameters`` on ``~/parameters`` (transient local:
late subscribers get the last result). With ``auto_identify`` it also identifies every bag the
recorder reports closed.

Service ``~/identify_payload`` (ident_msgs/srv/IdentifyPayload): identifies a payload from bags
without and with it and/or an identified model (RESULT.yaml), by one method or all
(``ident_core.payload``), writes PAYLOAD.yaml (by default ``<first loaded bag>.payload.yaml``),
publishes the selected estimate on ``~/payload`` (ident_msgs/Payload) and RViz markers of it on
``~/payload_markers`` (visualization_msgs/MarkerArray: centre of mass and equivalent-inertia box
in the link that carries the payload), both transient local.

RViz markers of the bodies on ``~/inertia_markers`` (visualization_msgs/MarkerArray, transient
local, depth 1): per moving link its centre of mass and equivalent-inertia box from the URDF
(blue, namespace ``urdf``) and, after each identification, identified (orange, ``identified``;
a body that is not physically consistent gets a red text instead of its box). Published at
start (URDF only) and after every identification (``ident_ros.conversions.inertia_markers``).

Service ``~/identify_friction`` (ident_msgs/srv/IdentifyFriction): identifies joint friction
models on their own (``ident_core.friction``: Coulomb–viscous up to the improved Stribeck model,
by least squares, the GA and/or the SA-GA) from bags, best joint-wise experiments (a
``RunExcitation`` goal with a joint-wise file per joint), after subtracting the rigid-body torque
of an identified model (RESULT.yaml) or of the URDF; compares the models on validation bags,
writes FRICTION.yaml (by default ``<first bag>.friction.yaml``) and publishes the selected model
of every joint on ``~/friction`` (ident_msgs/FrictionResult, transient local). Friction uses the
whole recording, not only the described excitation: friction needs motion, not periodicity
(standstills are left out per joint), and a joint-wise experiment has one description per stage.

Identifications run in a worker thread: the node keeps answering while it works; one
identification (of either kind) runs at a time, later requests wait their turn. On
SIGINT/SIGTERM the identification that runs is abandoned (its request gets a failure; nothing is
written, files are written atomically at the end) and none is started, so that the node stops
at once.

``/diagnostics``: ``identification_node: identification`` every ``diagnostics_period``, the
condition number, relative error and residual RMS per joint of the latest identification (and
its first validation's relative error) (``ident_core.monitoring.checks.identification_status``);
WARN above ``condition_number_warning`` or ``relative_error_warning_percent``, ERROR when the
latest identification failed.
"""
from __future__ import annotations

import math
import sys

from pydantic import Field, NonNegativeFloat
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from visualization_msgs.msg import MarkerArray

from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.results import result_links
from ident_core.friction.identify import FrictionConfig
from ident_core.model.inertial import link_inertials
from ident_core.monitoring.checks import identification_status
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_core.payload.frame import payload_frame
from ident_core.payload.geometry import frame_in_link
from ident_core.payload.identify import PayloadIdentification
from ident_core.payload.methods import PayloadConfig
from ident_core.workflows.friction import friction_from_recordings
from ident_core.workflows.identify import identify_recordings
from ident_core.workflows.inputs import RecordingOptions
from ident_core.workflows.payload import payload_from_recordings
from ident_msgs.msg import FrictionResult, IdentifiedParameters, Payload, RecordingInfo
from ident_msgs.srv import IdentifyFriction, IdentifyPayload, IdentifyRecording
from ident_ros import lifecycle, qos
from ident_ros.conversions import (
    friction_result_msg,
    friction_summary,
    inertia_markers,
    parameters_msg,
    payload_markers,
    payload_msgs,
    payload_summary,
)
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.worker import failure_message, in_thread


class IdentificationNodeParameters(IdentificationConfig, RecordingOptions,
                                   RobotDescriptionParameters, DiagnosticsConfig):
    """Parameters of the node: the identification settings, how the bags are read
    (``RecordingOptions``; relative topic names resolved in the node's namespace), the robot
    model and where the data come from."""

    auto_identify: bool = Field(False,
                                description='Identify every bag the recorder reports closed.')
    write_report: bool = Field(
        False, description='Write the HTML report of every identification beside its '
        'RESULT.yaml, in ``<stem>_report/index.html`` '
        '(``ident_core.report.page.write_report``).')
    recordings_topic: str = Field('recorder/recordings',
                                  description="The recorder's reports (RecordingInfo).")
    payload_frame: str = Field(
        '', description='Default payload frame of ``~/identify_payload`` (a joint, link or '
        'fixed-joint frame of the URDF); empty: the frame of the last joint.')
    payload_reversal_window: NonNegativeFloat = Field(
        PayloadConfig.model_fields['reversal_window'].default,
        description='``reversal_window`` of payload identifications [s] (``PayloadConfig``: '
                    'payload identification leaves out joint equations this close to a '
                    "velocity reversal, since Coulomb friction errors near reversals bias the "
                    "payload's small inertia); the other settings are the identification's.")
    condition_number_warning: float = Field(
        1000.0, gt=1, description='The ``identification`` diagnostic warns above this '
        'condition number of the base regressor (an excitation that separates the parameters '
        'poorly).')
    relative_error_warning_percent: float = Field(
        10.0, gt=0, description='The ``identification`` diagnostic warns above this relative '
        'error of the fit or of the first validation [%].')


class IdentificationNode(lifecycle.GracefulNode):
    """The ``identification_node``: ``~/identify``, ``~/identify_payload``,
    ``~/identify_friction`` and, with ``auto_identify``, every bag the recorder closes (module
    docstring). ``InputError`` for bad parameters or URDF."""

    def __init__(self, **kwargs):
        super().__init__('identification_node', **kwargs)
        p = declare_parameters(self, IdentificationNodeParameters)
        self.p = p
        self.config = IdentificationConfig(**p.model_dump(include=set(
            IdentificationConfig.model_fields)))
        self.recordings = RecordingOptions(**{
            **p.model_dump(include=set(RecordingOptions.model_fields)),
            'joint_states_topic': self.resolve_topic_name(p.joint_states_topic),
            'excitation_topic': self.resolve_topic_name(p.excitation_topic)})
        self.payload_config = PayloadConfig(**{     # keeps its own standstill default
            **self.config.model_dump(exclude={'trim_standstill'}),
            'reversal_window': p.payload_reversal_window})
        # the friction settings are the core's defaults; the recorded velocity is used or not as
        # for identification (a property of the recordings)
        self.friction_config = FrictionConfig(
            use_recorded_velocity=self.config.use_recorded_velocity)
        self.robot = robot_model(self, p)
        if p.payload_frame:
            payload_frame(self.robot, p.payload_frame)          # an unknown frame fails here
        self.group = ReentrantCallbackGroup()
        self.busy = False
        self.waiting: list[Future] = []
        self.abandon = Future()          # done on shutdown: the running work is dropped
        self.publisher = self.create_publisher(IdentifiedParameters, '~/parameters',
                                               qos.LATCHED_QOS)
        self.payload_publisher = self.create_publisher(Payload, '~/payload', qos.LATCHED_QOS)
        self.marker_publisher = self.create_publisher(MarkerArray, '~/payload_markers',
                                                      qos.MARKER_QOS)
        self.urdf_links = link_inertials(self.robot, self.robot.standard_parameters())
        self.inertia_marker_publisher = self.create_publisher(MarkerArray, '~/inertia_markers',
                                                              qos.MARKER_QOS)
        self.inertia_marker_publisher.publish(inertia_markers([], self.urdf_links))
        self.friction_publisher = self.create_publisher(FrictionResult, '~/friction',
                                                        qos.LATCHED_QOS)
        self.create_service(IdentifyRecording, '~/identify', self._on_identify,
                            callback_group=self.group)
        self.create_service(IdentifyPayload, '~/identify_payload', self._on_identify_payload,
                            callback_group=self.group)
        self.create_service(IdentifyFriction, '~/identify_friction', self._on_identify_friction,
                            callback_group=self.group)
        # the latest identification, for the diagnostic
        self.identifications = 0
        self.last_stats: dict | None = None
        self.last_validation_error: float | None = None
        self.last_failure = ''
        self.diagnostics = DiagnosticsPublisher(self, p.diagnostics_period, self.robot.model.name)
        self.diagnostics.add('identification', self.identification_status)
        if p.auto_identify:
            self.create_subscription(RecordingInfo, p.recordings_topic, self._on_recording,
                                     qos.LATCHED_HISTORY_QOS, callback_group=self.group)
        self.get_logger().info(f'ready: {self.robot.model.name}, {self.config}')

    def identify(self, bag: str, validation_bags: list[str], result_path: str) -> tuple:
        """Identify a bag, validate on others and write RESULT.yaml (any thread;
        ``workflows.identify.identify_recordings``).

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
        outcome = identify_recordings(self.robot, [bag], self.config,
                                      validation=validation_bags, recordings=self.recordings,
                                      out=result_path, report=self.p.write_report)
        for line in outcome.preprocessing:
            self.get_logger().info(line)
        if outcome.report.failure is not None:
            self.get_logger().warning(f'no report of {outcome.result_path}: '
                                      f'{outcome.report.failure}')
        elif outcome.report.page is not None:
            self.get_logger().info(f'report {outcome.report.page}')
        return outcome.result_path.resolve(), outcome.content.model_dump()

    def identify_payload(self, request: IdentifyPayload.Request) -> tuple:
        """Identify a payload as a request asks and write PAYLOAD.yaml (any thread;
        ``workflows.payload.payload_from_recordings``).

        Parameters
        ----------
        request : ident_msgs.srv.IdentifyPayload.Request
            Bags without and with the payload, RESULT.yaml, method, frame (empty: parameter
            ``payload_frame``), known mass [kg] (0: unknown) and PAYLOAD.yaml path (empty:
            ``<first loaded bag>.payload.yaml``).

        Returns
        -------
        path : Path
            The payload file.
        identification : PayloadIdentification
            The estimates.

        Raises
        ------
        IdentError
            For a bad request, recording or model (unknown method or frame, negative mass, a
            method without its inputs; the message names the problem), or if no method
            succeeds.
        """
        if not request.loaded_bag_paths:
            raise InputError('loaded_bag_paths: give the bags recorded with the payload')
        if not (request.known_mass >= 0 and math.isfinite(request.known_mass)):
            raise InputError(f'known_mass must be >= 0 kg (0: unknown), got {request.known_mass}')
        outcome = payload_from_recordings(
            self.robot, list(request.loaded_bag_paths), self.payload_config,
            unloaded=list(request.unloaded_bag_paths), model=request.model_path or None,
            method=request.method or 'all',
            frame=request.frame or self.p.payload_frame or None,
            known_mass=request.known_mass or None, recordings=self.recordings,
            out=request.result_path)
        for name, why in outcome.identification.failures.items():
            self.get_logger().warning(f'payload method {name}: {why}')
        return outcome.payload_path.resolve(), outcome.identification

    def identify_friction(self, request: IdentifyFriction.Request) -> tuple:
        """Identify joint friction as a request asks and write FRICTION.yaml (any thread;
        ``workflows.friction.friction_from_recordings``).

        Parameters
        ----------
        request : ident_msgs.srv.IdentifyFriction.Request
            Bags (whole recordings), RESULT.yaml (empty: the URDF's rigid-body model), joints
            (empty: every joint that moves), friction model and optimiser (empty:
            improved-stribeck by lsq; ``all``: ``PAPER_MODELS``, every optimiser), validation
            bags and FRICTION.yaml path (empty: ``<first bag>.friction.yaml``).

        Returns
        -------
        path : Path
            The friction file.
        identification : FrictionIdentification
            Every fit and the selected model per joint.

        Raises
        ------
        IdentError
            For a bad request, recording or model (no bag, unknown model, optimiser or joint, a
            joint that never moves; the message names it), or a model no optimiser could fit.
        """
        if not request.bag_paths:
            raise InputError('bag_paths: give at least one recording')
        outcome = friction_from_recordings(
            list(request.bag_paths), self.friction_config, robot=self.robot,
            model=request.model_path or None, joints=list(request.joints) or None,
            friction_model=request.friction_model, optimizer=request.optimizer,
            validation=list(request.validation_bag_paths), recordings=self.recordings,
            out=request.result_path, progress=_FitLog(self.get_logger()))
        for key, why in outcome.identification.failures.items():
            self.get_logger().warning(f'friction fit {key}: {why}')
        return outcome.friction_path.resolve(), outcome.identification

    async def _one_at_a_time(self, function, *args, name: str):
        """``function(*args)`` in a worker thread once no other identification runs."""
        while self.busy:                 # one identification at a time; the others wait
            waiter = Future()
            self.waiting.append(waiter)
            await waiter
        if self.shutdown_requested:
            raise RuntimeError('the node is shutting down')
        self.busy = True
        self.get_logger().info(f'{name} started')
        try:
            return await in_thread(self, function, *args, name=name, callback_group=self.group,
                                   abandon=self.abandon)
        finally:
            self.busy = False
            waiters, self.waiting = self.waiting, []
            for waiter in waiters:
                waiter.set_result(None)
            if self.shutdown_requested:
                self.finished = True     # the requests are answered

    async def _identify_and_publish(self, bag: str, validation_bags: list[str],
                                    result_path: str) -> tuple:
        try:
            path, result = await self._one_at_a_time(self.identify, bag, validation_bags,
                                                     result_path, name='identification')
        except Exception as exc:
            self.last_failure = failure_message(exc)
            raise
        self.identifications += 1
        self.last_failure = ''
        self.last_stats = result['identification']
        self.last_validation_error = (float(result['validation'][0]['relative_error_percent'])
                                      if result['validation'] else None)
        msg = parameters_msg(result, self.get_clock().now().to_msg(), str(path))
        self.publisher.publish(msg)
        identified = result_links(result)
        self.inertia_marker_publisher.publish(inertia_markers(identified, self.urdf_links))
        for body in identified:
            if not body.physically_consistent:
                self.get_logger().warning(f'identified body {body.link} is not physically '
                                          f'consistent (mass {body.mass:.3g} kg): no inertia box')
        self.get_logger().info(
            f'identified {len(msg.base_parameter_values)} base parameters from {bag} '
            f'(condition number {msg.condition_number:.0f}, relative error '
            f'{msg.relative_error_percent:.2f} %), result {path}')
        return str(path), msg

    def identification_status(self) -> Status:
        """The ``identification`` diagnostic of the latest identification."""
        return identification_status(
            joint_names=self.robot.joint_names, prismatic=self.robot.prismatic,
            stats=self.last_stats, validation_relative_error_percent=self.last_validation_error,
            identifications=self.identifications, failure=self.last_failure,
            condition_number_warning=self.p.condition_number_warning,
            relative_error_warning_percent=self.p.relative_error_warning_percent)

    async def _on_identify(self, request, response):
        try:
            response.result_path, response.parameters = await self._identify_and_publish(
                request.bag_path, list(request.validation_bag_paths), request.result_path)
            response.success, response.message = True, 'identified'
        except Exception as exc:
            response.success, response.message = False, failure_message(exc)
            self.get_logger().error(f'identification failed: {response.message}')
        return response

    async def _on_identify_payload(self, request, response):
        try:
            path, result = await self._one_at_a_time(self.identify_payload, request,
                                                     name='payload identification')
            self._publish_payload(result, response)
            response.result_path = str(path)
            response.success, response.message = True, payload_summary(result)
            self.get_logger().info(f'payload in {result.frame.name}: {response.message}, '
                                   f'result {path}')
        except Exception as exc:
            response.success, response.message = False, failure_message(exc)
            self.get_logger().error(f'payload identification failed: {response.message}')
        return response

    async def _on_identify_friction(self, request, response):
        try:
            path, result = await self._one_at_a_time(self.identify_friction, request,
                                                     name='friction identification')
            msg = friction_result_msg(result, self.get_clock().now().to_msg())
            self.friction_publisher.publish(msg)
            response.selected = msg.joints
            response.result_path = str(path)
            response.success = True
            response.message = friction_summary(msg, len(result.failures))
            self.get_logger().info(f'friction identified: {response.message}, result {path}')
        except Exception as exc:
            response.success, response.message = False, failure_message(exc)
            self.get_logger().error(f'friction identification failed: {response.message}')
        return response

    def _publish_payload(self, result: PayloadIdentification, response) -> None:
        """Fill the response's messages; publish the selected estimate and its markers."""
        response.methods, response.payload = payload_msgs(result,
                                                          self.get_clock().now().to_msg())
        self.payload_publisher.publish(response.payload)
        link, placement = frame_in_link(self.robot, result.frame)
        self.marker_publisher.publish(payload_markers(result.result, link, placement))

    async def _on_recording(self, info: RecordingInfo) -> None:
        if info.recording:
            return
        try:
            await self._identify_and_publish(info.path, [], '')
        except Exception as exc:
            self.get_logger().error(f'identification of {info.path} failed: {failure_message(exc)}')

    def request_shutdown(self) -> None:
        """SIGINT/SIGTERM: abandon the identification that runs (its request fails with the
        reason), start no other."""
        if not self.busy:
            self.finished = True
            return
        self.abandon.set_result('the identification node is shutting down: work abandoned')


def main(args=None):
    """Console script ``identification_node``."""
    sys.exit(lifecycle.run(IdentificationNode, args=args))


class _FitLog:
    """The ``progress`` receiver of ``identify_friction``: logs each fit as it starts."""

    def __init__(self, logger):
        self.logger = logger

    def update(self, n: int) -> None:
        pass

    def set_description(self, line: str) -> None:
        self.logger.info(f'fitting friction of {line}')
