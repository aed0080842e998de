"""ROS 2 recorder node: joint_states and the excitation description to rosbag2 (MCAP).

A thin adapter over ``ident_core.data.bag.writer.BagRecorder``: subscriptions deliver raw CDR
bytes, which go to the open bag unchanged. Interface (node name ``recorder``):

* takes the robot model (``urdf_file``, or the URDF on ``robot_description_topic``,
  ``ident_ros.robot_description``) for its joints: every message on the topic is recorded, but
  only those that name every moving joint are samples (counted, timed, checked for drops); the
  others (another publisher's, e.g. a gripper's ``joint_state_broadcaster``) are counted apart
  (``other_joint_states``), and a joint no message names is an error at the stop;
* subscribes ``joint_states_topic`` (sensor_msgs/JointState, ``ident_ros.qos.JOINT_STATES_QOS``) and
  ``excitation_topic`` (ident_msgs/ExcitationTrajectory, latched), relative names resolved in its
  namespace (the bag holds the resolved names); the latest excitation message is cached and
  written at the start of every recording, new ones while recording;
* services ``~/start`` (ident_msgs/StartRecording; answers once the first joint_states sample is
  in the bag, or after ``stream_wait``) and ``~/stop`` (ident_msgs/StopRecording);
* publishes ``~/recordings`` (ident_msgs/RecordingInfo, latched, depth 100, 1 s liveliness lease)
  when a bag opens and when it is closed; warns when more than ``lost_warning_fraction`` of a
  recording is lost time (gaps: a stream that stopped or started late) or of its expected
  samples is missing (a publisher slower than the nominal period);
* on SIGINT/SIGTERM closes the open bag, publishes its info and exits 0;
* a bag closed by ``~/stop`` or a signal holds every message that was in the subscriptions'
  queues (taken before closing, ``RecorderNode.stop``); messages still in transit to them are
  not waited for (nothing orders them with the signal or the stop request: a publisher that
  needs them recorded waits until they are acknowledged, e.g. ``wait_for_all_acked``);
* writes the samples it holds to the file at least every ``flush_period`` (a timer, for a
  stream that stops), so a SIGKILL loses at most that much;
* at start, repairs the bags in ``output_dir`` a killed recorder left unfinished
  (``ident_core.data.bag.repair.repair_bag``; the original MCAP is kept) and names those it
  cannot repair in a warning;
* publishes ``recorder: recording`` on ``/diagnostics`` every ``diagnostics_period``
  (``ident_core.monitoring.checks.recording_status``): the drops (samples missing between
  consecutive header stamps), late (received more than ``late_threshold`` after their stamp)
  and out-of-order samples (stamp not newer than the newest received) of the open bag, or of the
  last one; WARN above ``lost_warning_fraction``, ERROR while recording without joint_states
  for more than ``stream_wait``.

Parameters: ``RecorderParameters`` (``output_dir``, created if missing; ``autostart`` and
``autostart_experiment``; ``repair_damaged``; the ``RecordingConfig`` of every bag;
``diagnostics_period``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from pydantic import Field, PositiveFloat
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from sensor_msgs.msg import JointState

from ident_core.data.bag.damage import find_damaged_bags
from ident_core.data.bag.repair import repair_bag
from ident_core.data.bag.summary import RecordingSummary
from ident_core.data.bag.writer import BagRecorder, RecordingConfig, start_recording
from ident_core.errors import InputError
from ident_core.monitoring.checks import recording_status
from ident_core.monitoring.status import DiagnosticsConfig, Status
from ident_msgs.msg import ExcitationTrajectory, RecordingInfo
from ident_msgs.srv import StartRecording, StopRecording
from ident_ros import lifecycle, qos
from ident_ros.conversions import recording_info_msg
from ident_ros.diagnostics import DiagnosticsPublisher
from ident_ros.parameters import declare_parameters
from ident_ros.robot_description import RobotDescriptionParameters, robot_model
from ident_ros.typestore import recording_typestore
from ident_ros.worker import with_timeout

DEFAULT_EXPERIMENT = 'experiment'
# At most this many pending joint_states are taken when a bag is closed (a 1 kHz publisher
# could otherwise keep the stop request waiting).
DRAIN_LIMIT = 10000


class RecorderParameters(RecordingConfig, RobotDescriptionParameters, DiagnosticsConfig):
    """Parameters of the recorder: the options of every bag, where bags go, autostart, the
    robot model (its joints)."""

    output_dir: str = Field(
        'recordings', description='Folder of the bags '
        '(``<experiment>_<YYYYmmdd-HHMMSS>[_k]/``), created if missing, relative to the working '
        'directory.')
    autostart: bool = Field(False, description='Start recording at launch, without a call to '
                            '``~/start``.')
    autostart_experiment: str = Field(DEFAULT_EXPERIMENT,
                                      description='Experiment name of the autostarted bag.')
    repair_damaged: bool = Field(True, description='At start, repair the bags in '
                                 '``output_dir`` that a killed recorder left unfinished.')
    stream_wait: PositiveFloat = Field(
        3.0, description='``~/start`` answers once the first joint_states sample is in the '
        'bag, or after this long [s] (its message then says that none arrived): a motion '
        "started on the answer is recorded from its beginning even when this recorder's "
        'subscription is still being matched with the publisher (discovery takes seconds on a '
        'busy machine). Also the silence while recording that makes the ``recording`` '
        'diagnostic an ERROR.')


class RecorderNode(lifecycle.GracefulNode):
    """Records joint_states (and the excitation description) into one bag per experiment.

    Construction raises ``ValueError`` for invalid parameter values, an ``output_dir`` that
    cannot be created, or an invalid ``autostart_experiment`` (``lifecycle.run`` prints it and
    exits with 2).
    """

    def __init__(self, **kwargs):
        super().__init__('recorder', **kwargs)
        p = declare_parameters(self, RecorderParameters)
        self.joints = robot_model(self, p).joint_names
        self.joint_states_topic = self.resolve_topic_name(p.joint_states_topic)
        self.excitation_topic = self.resolve_topic_name(p.excitation_topic)
        self.options = {**p.model_dump(include=set(RecordingConfig.model_fields)),
                        'joint_states_topic': self.joint_states_topic,
                        'excitation_topic': self.excitation_topic}
        self.lost_warning_fraction = p.lost_warning_fraction
        self.stream_wait = p.stream_wait
        self.output_dir = Path(p.output_dir).expanduser().absolute()
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f'parameter output_dir: cannot create {self.output_dir} ({exc})') \
                from None
        if p.repair_damaged:
            self.repair_damaged()

        # Load the message definitions (slow imports) before the subscriptions exist: fail early,
        # and no backlog of joint_states piles up while the node cannot spin yet.
        self.typestore = recording_typestore()
        self._bag: BagRecorder | None = None
        self._last_summary: RecordingSummary | None = None
        self._excitation: tuple[bytes, int] | None = None   # latest (raw, receive_ns)
        self._sim_time = self.get_parameter('use_sim_time').value
        self._info_pub = self.create_publisher(RecordingInfo, '~/recordings',
                                                qos.RECORDER_STATUS_QOS)
        # the start service awaits the first sample, which this subscription delivers meanwhile
        group = ReentrantCallbackGroup()
        self._first_sample: Future | None = None
        self._js_sub = self.create_subscription(
            JointState, self.joint_states_topic, self._on_joint_state, qos.JOINT_STATES_QOS,
            raw=True, callback_group=group)
        self._ex_sub = self.create_subscription(
            ExcitationTrajectory, self.excitation_topic, self._on_excitation,
            qos.LATCHED_QOS, raw=True)
        self.create_service(StartRecording, '~/start', self._on_start, callback_group=group)
        self.create_service(StopRecording, '~/stop', self._on_stop)
        self.create_timer(p.flush_period, self._on_flush_timer)
        self.diagnostics = DiagnosticsPublisher(self, p.diagnostics_period)
        self.diagnostics.add('recording', self.recording_status)
        self.get_logger().info(f'ready: {self.joint_states_topic} and {self.excitation_topic} '
                               f'-> {self.output_dir}')
        if p.autostart:
            try:
                self.start(p.autostart_experiment)
            except OSError as exc:
                raise ValueError(f'autostart: {exc}') from None

    # --- recording ------------------------------------------------------------------------

    def repair_damaged(self) -> list[Path]:
        """Repair the unfinished bags in ``output_dir`` (not those another recorder is still
        writing); log each, warn about those that cannot be repaired. Returns the repaired."""
        repaired = []
        for folder, damage in find_damaged_bags(self.output_dir):
            try:
                result = repair_bag(folder)
            except (InputError, OSError) as exc:
                self.get_logger().warning(f'damaged bag {folder} ({damage}) not repaired: {exc}')
                continue
            scan = result.scan
            self.get_logger().warning(
                f'repaired {folder} ({damage}): {scan.messages} messages over {scan.seconds:.3f} '
                f's recovered into {result.repaired.name} ({result.source.name} kept); what the '
                'recorder had not written before it ended is lost')
            repaired.append(folder)
        return repaired

    @property
    def recording(self) -> bool:
        """True while a bag is open."""
        return self._bag is not None

    def start(self, experiment: str) -> BagRecorder:
        """Open a new bag, write the cached excitation description, publish and log the start.

        Parameters
        ----------
        experiment : str
            Experiment name (empty: ``experiment``).

        Returns
        -------
        BagRecorder
            The open bag.

        Raises
        ------
        RuntimeError
            If a bag is already open.
        ValueError
            For an invalid experiment name.
        OSError
            If the bag cannot be created.
        """
        if self._bag is not None:
            raise RuntimeError(f'already recording to {self._bag.path}; stop it first')
        bag = start_recording(self.output_dir, experiment or DEFAULT_EXPERIMENT,
                              start_ns=self._now_ns(), typestore=self.typestore,
                              joints=self.joints, **self.options)
        self._bag = bag
        if self._excitation is not None:
            # Stamped with the start time, so the bag does not begin before the recording.
            bag.write_excitation(self._excitation[0], self._now_ns())
        summary = bag.summary()
        self._publish(summary)
        self.get_logger().info(f'recording {summary.experiment} to {summary.path}'
                               f'{" (with excitation description)" if self._excitation else ""}')
        return bag

    def stop(self) -> RecordingSummary:
        """Close the open bag, publish and log its final counts.

        Returns
        -------
        RecordingSummary

        Raises
        ------
        RuntimeError
            If no bag is open.
        OSError
            If the bag could not be finished (it counts as closed; the error is logged).
        """
        if self._bag is None:
            raise RuntimeError('not recording')
        pending = self._drain(self._bag)
        bag, self._bag = self._bag, None
        self._last_summary = bag.summary()
        try:
            summary = bag.close(self._now_ns())
        except Exception as exc:
            self.get_logger().error(f'{bag.path}: could not finish the bag: {exc}')
            self._publish(bag.summary(), recording=False)
            raise
        self._last_summary = summary
        self._publish(summary)
        self.get_logger().info(
            f'stopped {summary.experiment}: {summary.joint_state_messages} joint_states, '
            f'{summary.other_joint_states} without every joint, '
            f'{summary.excitation_messages} excitation, {summary.dropped} dropped, '
            f'{summary.late} late, {summary.out_of_order} out of order, '
            f'{summary.duration:.3f} s ({pending} taken at stop), {summary.lost_seconds:.3f} s '
            f'of {summary.recording_time:.3f} s lost in {summary.gap_count} gap(s) -> '
            f'{summary.path}')
        warning = summary.lost_warning(self.lost_warning_fraction)
        if summary.missing_joints and not summary.joint_state_messages:
            self.get_logger().error(warning)
        elif warning:
            self.get_logger().warning(warning)
        return summary

    def recording_status(self) -> Status:
        """The ``recording`` diagnostic: drops, late and out-of-order samples of the open bag
        (or of the last one) against ``lost_warning_fraction``, and the stream's silence while
        recording against ``stream_wait``."""
        bag = self._bag
        summary = bag.summary() if bag is not None else self._last_summary
        silence = None
        if bag is not None and bag.last_receive_ns is not None:
            silence = max(0.0, (self._now_ns() - bag.last_receive_ns) * 1e-9)
        s = summary
        return recording_status(
            recording=bag is not None, experiment=s.experiment if s else '',
            joint_state_messages=s.joint_state_messages if s else 0,
            expected_samples=s.expected_samples if s else 0, dropped=s.dropped if s else 0,
            late=s.late if s else 0, out_of_order=s.out_of_order if s else 0,
            lost_seconds=s.lost_seconds if s else 0.0,
            recording_time=s.recording_time if s else 0.0, silence=silence,
            late_threshold=self.options['late_threshold'],
            lost_warning_fraction=self.lost_warning_fraction, stream_timeout=self.stream_wait)

    # --- callbacks (cheap: 1 kHz) ---------------------------------------------------------

    def _on_joint_state(self, raw: bytes) -> None:
        bag = self._bag
        if bag is None:
            return
        try:
            sample = bag.write_joint_state(raw, self._now_ns())
        except ValueError as exc:           # not a JointState: skipped, not written
            self.get_logger().warning(str(exc), throttle_duration_sec=5.0)
            return
        except Exception as exc:            # e.g. disk full: finish what can be finished
            self._fail(exc)
            return
        if sample and self._first_sample is not None and not self._first_sample.done():
            self._first_sample.set_result(None)

    def _on_flush_timer(self) -> None:
        bag = self._bag
        if bag is None:
            return
        try:
            bag.flush(self._now_ns())
        except Exception as exc:            # disk full: finish what can be finished
            self._fail(exc)

    def _on_excitation(self, raw: bytes) -> None:
        receive_ns = self._now_ns()
        self._excitation = (raw, receive_ns)
        bag = self._bag
        if bag is not None:
            try:
                bag.write_excitation(raw, receive_ns)
            except Exception as exc:
                self._fail(exc)

    def _drain(self, bag: BagRecorder) -> int:
        """Write the messages that reached the subscriptions but were not taken yet; returns
        how many.

        The executor takes one message per subscription and wait, then serves the services, so
        a stop request could overtake a backlog of joint_states. This takes them the way the
        executor does (``Subscription.handle.take_message``, rclpy 9); a failure here is logged
        and the bag is closed with what it has.
        """
        count = 0
        try:
            for _ in range(DRAIN_LIMIT):
                with self._js_sub.handle:
                    taken = self._js_sub.handle.take_message(JointState, True)
                if taken is None:
                    break
                bag.write_joint_state(taken[0], self._now_ns())
                count += 1
            with self._ex_sub.handle:
                taken = self._ex_sub.handle.take_message(ExcitationTrajectory, True)
            if taken is not None:
                self._excitation = (taken[0], self._now_ns())
                bag.write_excitation(*self._excitation)
                count += 1
        except Exception as exc:   # rclpy internals changed, handle destroyed, disk full
            self.get_logger().warning(f'could not take pending messages before closing: {exc}')
        return count

    def _fail(self, exc: Exception) -> None:
        self.get_logger().error(f'writing to {self._bag.path} failed: {exc}; closing the bag')
        try:
            self.stop()
        except Exception:   # already logged by stop()
            pass

    async def _on_start(self, request, response):
        self._first_sample = Future()
        try:
            bag = self.start(request.experiment)
        except (RuntimeError, ValueError, OSError) as exc:
            response.success, response.message = False, str(exc)
            self.get_logger().warning(f'start refused: {exc}')
            return response
        response.success, response.message, response.path = True, '', str(bag.path)
        try:
            await with_timeout(self, self._first_sample, self.stream_wait,
                               f'no {self.joint_states_topic} sample within '
                               f'{self.stream_wait:g} s of the start')
        except RuntimeError as exc:
            missing = bag.missing_joints
            response.message = str(exc) + (f': no message carries joint(s) {", ".join(missing)}'
                                           if missing and bag.other_joint_states else '')
            self.get_logger().warning(response.message)
        return response

    def _on_stop(self, _request, response):
        if self._bag is None:
            response.success, response.message = False, 'not recording'
            return response
        path = self._bag.path
        try:
            summary = self.stop()
        except Exception as exc:
            response.success, response.message = False, f'{path}: {exc}'
            return response
        response.success, response.message = True, ''
        response.info = recording_info_msg(summary, self._now_ns())
        return response

    # --- life cycle -----------------------------------------------------------------------

    def request_shutdown(self) -> None:
        """SIGINT/SIGTERM: finish the open bag, then let the process end."""
        if self._bag is not None:
            try:
                self.stop()
            except Exception:
                self.exit_code = 1
        self.finished = True

    def close(self) -> None:
        """Finish a bag that is still open (e.g. after an exception in the executor)."""
        if self._bag is not None:
            try:
                self.stop()
            except Exception:   # logged by stop(); nothing more can be done here
                self.exit_code = self.exit_code or 1

    # --- helpers --------------------------------------------------------------------------

    def _now_ns(self) -> int:
        """Receive time (ns) as rosbag2 takes it: the node clock when the callback runs (system
        time unless ``use_sim_time``). Not the middleware's reception stamp: that is taken
        when a sample reaches the reader, and a retransmitted one arrives after its successors
        although it is delivered before them, so the bag (ordered by time) would reorder them.
        """
        return self.get_clock().now().nanoseconds if self._sim_time else time.time_ns()

    def _publish(self, summary: RecordingSummary, recording: bool | None = None) -> None:
        self._info_pub.publish(recording_info_msg(summary, self._now_ns(), recording))


def main(args=None) -> None:
    """Console script ``recorder_node``."""
    sys.exit(lifecycle.run(RecorderNode, args=args))
