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
from pathlib import Path

from pydantic import Field, NonNegativeFloat
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from visualization_msgs.msg import MarkerArray

from ident_core.data.coverage import MIN_COVERAGE
from ident_core.data.datasets import load_bag
from ident_core.data.readers import EXCITATION_TOPIC, excitation_window
from ident_core.errors import InputError
from ident_core.estimation.identification import IdentificationConfig, identify, validate
from ident_core.estimation.results import read_result, result_file, result_links, write_result
from ident_core.friction.fit import OPTIMIZERS as FRICTION_OPTIMIZERS
from ident_core.friction.identify import FrictionConfig, identify_friction
from ident_core.friction.models import FRICTION_MODELS, PAPER_MODELS
from ident_core.friction.results import friction_file
from ident_core.friction.samples import RigidBodyModel
from ident_core.model.inertial import link_inertials
from ident_core.model.robot import load_robot
from ident_core.monitoring.checks import identification_status
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_core.payload.frame import payload_frame
from ident_core.payload.geometry import frame_in_link
from ident_core.payload.identify import PayloadIdentification, identify_payload
from ident_core.payload.methods import PayloadConfig
from ident_core.payload.results import PayloadData, payload_file
from ident_msgs.msg import FrictionResult, IdentifiedParameters, Payload, RecordingInfo
from ident_msgs.srv import IdentifyFriction, IdentifyPayload, IdentifyRecording
from ident_ros import lifecycle, qos
from ident_ros.conversions import (
    friction_result_msg,
    inertia_markers,
    parameters_msg,
    payload_markers,
    payload_msg,
)
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import UrdfFile, declare_parameters
from ident_ros.worker import failure_message, in_thread


class IdentificationNodeParameters(IdentificationConfig, DiagnosticsConfig):
    """Parameters of the node: the identification settings plus where the data come from."""

    urdf_file: UrdfFile = Field('', description="The robot's URDF (required).")
    joint_states_topic: str = Field('/joint_states', description='JointState topic in the bags.')
    excitation_topic: str = Field(EXCITATION_TOPIC,
                                  description='ExcitationTrajectory topic in the bags.')
    excitation_window_only: bool = Field(
        True, description='Use only the periodic part of the excitation described in the bag.')
    min_coverage: float = Field(
        MIN_COVERAGE, ge=0, le=1,
        description='Smallest fraction of the excitation window described in the bag that its '
                    'joint states must cover: a recording whose stream stopped is refused '
                    'below, a gap is a warning above (``ident_core.data.coverage``).')
    recover: bool = Field(
        False, description='Read bags that a killed recorder left unfinished up to the damage '
        '(with a warning) instead of refusing them (``ident_core.data.bag_repair``).')
    auto_identify: bool = Field(False,
                                description='Identify every bag the recorder reports closed.')
    write_report: bool = Field(
        False, description='Write the HTML report of every identification beside its '
        'RESULT.yaml, in ``<stem>_report/index.html`` '
        '(``ident_core.report.page.write_report``).')
    recordings_topic: str = Field('/recorder/recordings',
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
        self.payload_config = PayloadConfig(**{**self.config.model_dump(),
                                               'reversal_window': p.payload_reversal_window})
        # the friction settings are the core's defaults; the recorded velocity is used or not as
        # for identification (a property of the recordings)
        self.friction_config = FrictionConfig(
            use_recorded_velocity=self.config.use_recorded_velocity)
        self.robot = load_robot(p.urdf_file)
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
        if self.p.write_report:
            self._write_report(path)
        return path.resolve(), result.model_dump()

    def _write_report(self, result: Path) -> None:
        """The HTML report of a result (parameter ``write_report``); a report that fails is a
        warning, the identification stands."""
        from ident_core.report.page import ReportInputs, report_folder, write_report

        try:
            page = write_report(report_folder(result), ReportInputs(model=result,
                                                                    recover=self.p.recover))
            self.get_logger().info(f'report {page}')
        except Exception as exc:            # the result is written; the report is an extra
            self.get_logger().warning(f'no report of {result}: {exc}')

    def _load(self, bag: str, periodic_only: bool = True):
        """The JointState recording of ``bag``; with ``periodic_only`` (and parameter
        ``excitation_window_only``) cut to its periodic excitation when the bag holds an
        ExcitationTrajectory description (approach, stop and rest are left out)."""
        p = self.p
        window = excitation_window(Path(bag), p.excitation_topic, recover=p.recover) \
            if p.excitation_window_only and periodic_only else None
        return load_bag(bag, p.joint_states_topic, window=window,
                        min_coverage=p.min_coverage, recover=p.recover)[0]

    def identify_payload(self, request: IdentifyPayload.Request) -> tuple:
        """Identify a payload as a request asks and write PAYLOAD.yaml (any thread).

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
        method = request.method or 'all'
        frame = payload_frame(self.robot, request.frame or self.p.payload_frame or None).name
        loaded_bags = list(request.loaded_bag_paths)
        unloaded_bags = list(request.unloaded_bag_paths)
        model = read_result(request.model_path, urdf=self.p.urdf_file) \
            if request.model_path else None
        result = identify_payload(
            self.robot, [self._load(b) for b in loaded_bags], method, frame=frame,
            unloaded=[self._load(b) for b in unloaded_bags], model=model,
            config=self.payload_config,
            known_mass=request.known_mass or None)
        for name, why in result.failures.items():
            self.get_logger().warning(f'payload method {name}: {why}')
        path = Path(request.result_path or str(Path(loaded_bags[0])) + '.payload.yaml')
        payload_file(self.robot, result, PayloadData(
            unloaded=unloaded_bags, loaded=loaded_bags, model=request.model_path or None)
        ).write(path)
        return path.resolve(), result

    def identify_friction(self, request: IdentifyFriction.Request) -> tuple:
        """Identify joint friction as a request asks and write FRICTION.yaml (any thread).

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
        bags = list(request.bag_paths)
        if not bags:
            raise InputError('bag_paths: give at least one recording')
        models = _choice('friction_model', request.friction_model, FRICTION_MODELS,
                         'improved-stribeck', PAPER_MODELS)
        optimizers = _choice('optimizer', request.optimizer, FRICTION_OPTIMIZERS, 'lsq',
                             FRICTION_OPTIMIZERS)
        if request.model_path:
            rigid = RigidBodyModel.from_identified(
                read_result(request.model_path, urdf=self.p.urdf_file), request.model_path)
        else:
            rigid = RigidBodyModel.from_urdf(self.robot)
        validation_bags = list(request.validation_bag_paths)
        result = identify_friction(
            self.robot, [self._load(b, periodic_only=False) for b in bags], rigid,
            joints=list(request.joints) or None, models=models, optimizers=optimizers,
            config=self.friction_config,
            validation=[self._load(b, periodic_only=False) for b in validation_bags],
            progress=_FitLog(self.get_logger()))
        for key, why in result.failures.items():
            self.get_logger().warning(f'friction fit {key}: {why}')
        path = Path(request.result_path or str(Path(bags[0])) + '.friction.yaml')
        friction_file(result, self.friction_config).write(path)
        return path.resolve(), result

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
        msg = parameters_msg(result, self.get_clock().now().to_msg())
        msg.result_path = str(path)
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
            chosen = result.result
            response.success = True
            response.message = (f'{chosen.mass:.4g} kg by the {result.selected} method '
                                f'({len(result.estimates)} of '
                                f'{len(result.estimates) + len(result.failures)} methods '
                                'succeeded)')
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
            response.message = '; '.join(
                f'{j.joint}: {j.model} by {j.optimizer}, rms {j.rms:.3g} N·m' for j in msg.joints) \
                + (f' ({len(result.failures)} fit(s) failed)' if result.failures else '')
            self.get_logger().info(f'friction identified: {response.message}, result {path}')
        except Exception as exc:
            response.success, response.message = False, failure_message(exc)
            self.get_logger().error(f'friction identification failed: {response.message}')
        return response

    def _publish_payload(self, result: PayloadIdentification, response) -> None:
        """Fill the response's messages; publish the selected estimate and its markers."""
        stamp = self.get_clock().now().to_msg()
        gains = None if result.drive_gains is None else result.drive_gains.gains
        response.methods = [payload_msg(e, stamp, gains) for e in result.estimates.values()]
        response.payload = response.methods[list(result.estimates).index(result.selected)]
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


def _choice(field: str, value: str, names: tuple, default: str, every: tuple) -> tuple:
    """The names a request field asks for: ``''`` the default, ``'all'`` every one of
    ``every``; ``InputError`` naming the field for anything not in ``names``."""
    if not value:
        return (default,)
    if value == 'all':
        return tuple(every)
    if value not in names:
        raise InputError(f'{field} {value!r} unknown (choose from {", ".join(names)}, all; '
                         f'empty: {default})')
    return (value,)


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
