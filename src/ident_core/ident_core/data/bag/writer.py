"""Writing one recording (``format``) from raw CDR messages, and counting what it lost.

Pure Python (no rclpy), so the bookkeeping is unit-testable: the recorder node hands over the
exact bytes of a ``raw=True`` subscription and the receive time. The receive time is the bag time
stamp (what rosbag2 does). The writer counts samples that never reached the recorder
(``dropped``, from gaps between consecutive JointState header stamps), messages that arrived late
and stamps that went backwards. Time without samples counts as lost: a stream that stops (a
publisher that died) leaves a silent tail before the stop, one that starts late a silent head;
these and the gaps between header stamps that are longer than ``gap_tolerance`` are listed as
gaps, and ``expected_samples`` is what the nominal period fits into the recording's time. After
closing, ``recording.yaml`` in the bag folder summarises the recording (``summary``).

Crash safety: the samples of the last ``flush_period`` at most are held in memory; older ones are
in the file as complete MCAP chunks, which ``salvage`` reads and ``repair`` recovers from a bag
whose recorder was killed. While a bag is open its MCAP carries the advisory ``lock``, so that a
repair never takes a bag that is still being written for a damaged one.
"""
from __future__ import annotations

import functools
import statistics
from datetime import datetime
from pathlib import Path

from pydantic import Field, NonNegativeFloat, PositiveFloat, confloat
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from ...errors import InputError
from ...files import dump_yaml, write_atomic
from ...schema import Schema
from ..joint_selection import JointSelection
from ..readers import EXCITATION_TOPIC, bag_topic
from .cdr import joint_state_names, joint_state_stamp
from .format import (
    EXCITATION_TYPE,
    JOINT_STATE_TYPE,
    RECORDING_FILE,
    unique_bag_path,
    validate_experiment,
)
from .lock import lock_for_writing
from .summary import MAX_GAPS_LISTED, RecordingSummary

# Intervals used to estimate the nominal period when it is given as 0.
PERIOD_ESTIMATE_INTERVALS = 100


@functools.cache
def recording_typestore(excitation_msg: str | Path):
    """The rosbags typestore of recordings.

    Parameters
    ----------
    excitation_msg : str or Path
        ``ExcitationTrajectory.msg`` of ``ident_msgs`` (the ROS side finds the installed one:
        ``ident_ros.typestore``).

    Returns
    -------
    rosbags Typestore
        The ROS 2 Kilted types with ``ident_msgs/msg/ExcitationTrajectory`` added (cached per
        path).

    Raises
    ------
    InputError
        (a ValueError) If the file cannot be read.
    """
    try:
        text = Path(excitation_msg).read_text()
    except OSError as exc:
        raise InputError(f'{excitation_msg}: cannot read the message definition ({exc})') \
            from None
    typestore = get_typestore(Stores.ROS2_KILTED)
    typestore.register(get_types_from_msg(text, EXCITATION_TYPE))
    return typestore


def _qos(durability: str, depth: int):
    """A rosbags QoS record (reliable, keep-last) for the bag metadata."""
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, depth, QosReliability.RELIABLE,
               QosDurability[durability], zero, zero, QosLiveliness.AUTOMATIC, zero, False)


class RecordingConfig(Schema):
    """What a recording stores and how it counts lost and late samples."""

    joint_states_topic: str = Field(
        'joint_states', description='sensor_msgs/JointState topic recorded (the recorder node '
        'resolves a relative name in its namespace; the bag holds the resolved name).')
    excitation_topic: str = Field(EXCITATION_TOPIC,
                                  description='ident_msgs/ExcitationTrajectory topic recorded '
                                  '(as ``joint_states_topic``).')
    nominal_period: NonNegativeFloat = Field(
        0.001, description='JointState period for counting dropped samples from header-stamp '
        'gaps [s]; 0: the median of the first 100 stamp intervals (all of them if fewer).')
    late_threshold: PositiveFloat = Field(
        0.05, description='A JointState received more than this after its header stamp counts '
        'as late [s].')
    gap_tolerance: PositiveFloat = Field(
        0.1, description='Time without JointState samples longer than this is a gap, counted '
        'as lost [s].')
    lost_warning_fraction: confloat(ge=0.0, le=1.0) = Field(
        0.01, description="The recorder warns when more than this fraction of a recording's "
        'time is lost, or of its expected samples is missing.')
    flush_period: confloat(gt=0.0, le=10.0) = Field(
        0.25, description='Samples are written to the file (a closed MCAP chunk) at least this '
        'often: a recorder that is killed loses at most the samples of this last period [s].')


class BagRecorder:
    """One rosbag2 (MCAP) of JointState and ExcitationTrajectory messages given as CDR bytes.

    Life cycle: ``BagRecorder(path, ...)`` → ``open(start_ns)`` → ``write_*`` ... (and
    ``flush(now_ns)`` from a timer, for a stream that stops) → ``close(stop_ns)``.
    Not thread-safe (the node calls it from one executor thread).

    Parameters
    ----------
    path : str or Path
        Bag folder to create; must not exist (see ``format.unique_bag_path``).
    experiment : str
        Experiment name, see ``format.validate_experiment``.
    typestore : rosbags typestore
        Knows both types (``recording_typestore``).
    joints : list of str, optional
        The robot's joints: only messages that name every one of them are samples (counted,
        timed, checked for drops); the others (another publisher's on the topic, e.g. a
        gripper's) are written and counted apart (``data.joint_selection``). None: every
        message is a sample.
    **options
        Fields of ``RecordingConfig`` (topics, nominal period, late threshold, gap tolerance,
        flush period).

    Raises
    ------
    InputError
        For an invalid experiment name or option (a ValueError).
    """

    def __init__(self, path: str | Path, experiment: str, *, typestore,
                 joints: list[str] | None = None, **options):
        validate_experiment(experiment)
        opts = RecordingConfig(**options)
        self.path = Path(path).absolute()
        self.experiment = experiment
        self.joint_states_topic = bag_topic(opts.joint_states_topic)
        self.excitation_topic = bag_topic(opts.excitation_topic)
        self.late_threshold = opts.late_threshold
        self._typestore = typestore
        self._period_ns = int(round(opts.nominal_period * 1e9))
        self._period_source = 'parameter' if self._period_ns else 'median'
        self._late_ns = int(round(opts.late_threshold * 1e9))
        self._gap_ns = int(round(opts.gap_tolerance * 1e9))
        self._flush_ns = int(round(opts.flush_period * 1e9))
        self._intervals: list[int] = []   # first intervals (ns) while the period is estimated
        self._writer = None
        self._lock = None                 # advisory lock on the MCAP while it is written
        self._start_ns: int | None = None   # receive clock, ns
        self._stop_ns: int | None = None
        self._first_rx: int | None = None   # receive time of the first JointState
        self._last_rx: int | None = None    # ... of the latest in stamp order
        self._latest_rx: int | None = None  # ... of the latest received
        self._stamp_gaps: list[tuple[int, int]] = []   # (receive ns before, stamp interval ns)
        self._js_conn = self._ex_conn = None
        self._closed = False
        self._summary: RecordingSummary | None = None
        self._start_wall: str | None = None
        self._stop_wall: str | None = None
        self._selection = None if joints is None else JointSelection(joints)
        self.joint_state_messages = 0
        self.excitation_messages = 0
        self.dropped = 0
        self.late = 0
        self.out_of_order = 0
        self._first_ns: int | None = None   # smallest JointState stamp
        self._last_ns: int | None = None    # largest JointState stamp
        self._log_ns = 0                    # latest bag time stamp written

    @property
    def last_receive_ns(self) -> int | None:
        """Receive time (ns since the epoch) of the latest JointState, or the recording's start
        before the first one (None if neither is known)."""
        return self._latest_rx if self._latest_rx is not None else self._start_ns

    @property
    def other_joint_states(self) -> int:
        """JointState messages written that are no samples (they lack one of ``joints``)."""
        return 0 if self._selection is None else self._selection.skipped

    @property
    def missing_joints(self) -> list[str]:
        """The ``joints`` no message has named so far."""
        return [] if self._selection is None else self._selection.missing()

    @property
    def is_open(self) -> bool:
        """True between ``open()`` and ``close()``."""
        return self._writer is not None

    def open(self, start_ns: int | None = None) -> BagRecorder:
        """Create the bag folder and its MCAP file.

        Parameters
        ----------
        start_ns : int, optional
            The recording's start on the receive clock [ns since the epoch]; time until the
            first JointState counts as a gap. Default: the first message's receive time (no
            silent head is counted).

        Returns
        -------
        BagRecorder
            self.

        Raises
        ------
        RuntimeError
            If it was already opened or closed.
        FileExistsError
            If the folder exists (never overwritten).
        OSError
            If the folder cannot be created.
        """
        if self._writer is not None or self._closed:
            raise RuntimeError(f'{self.path}: bag already opened')
        typestore = self._typestore
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
            writer.open()
        except WriterError as exc:
            if self.path.exists():
                raise FileExistsError(f'{self.path}: exists already, not overwriting') from None
            raise OSError(f'{self.path}: cannot create the bag ({exc})') from None
        try:
            self._js_conn = writer.add_connection(
                self.joint_states_topic, JOINT_STATE_TYPE, typestore=typestore,
                offered_qos_profiles=[_qos('VOLATILE', 1000)])
            self._ex_conn = writer.add_connection(
                self.excitation_topic, EXCITATION_TYPE, typestore=typestore,
                offered_qos_profiles=[_qos('TRANSIENT_LOCAL', 1)])
            storage = _flushable(writer.storage)
            self._lock = lock_for_writing(storage.path)
        except BaseException:
            writer.close()
            raise
        self._writer = writer
        self._start_ns = start_ns
        self._start_wall = _wall_time()
        return self

    def write_joint_state(self, raw: bytes, receive_ns: int) -> bool:
        """Write one serialized ``sensor_msgs/msg/JointState`` and update the counters.

        Parameters
        ----------
        raw : bytes
            CDR bytes with their 4-byte encapsulation header (a ``raw=True`` subscription).
        receive_ns : int
            Receive time [ns since the epoch]; the message's bag time stamp, raised to the
            previous message's if it is earlier (a wall-clock step back), so that the bag, which
            readers return ordered by time stamp, keeps the order of arrival.

        Returns
        -------
        bool
            Whether it is a sample (it names every one of ``joints``); written either way.

        Raises
        ------
        RuntimeError
            If the bag is not open.
        InputError
            (a ValueError) For fewer than 12 bytes, or, with ``joints``, bytes that end inside
            the joint names (not written).
        """
        writer = self._writer
        if writer is None:
            raise RuntimeError(f'{self.path}: bag is not open')
        try:
            stamp = joint_state_stamp(raw)
            sample = self._selection is None or \
                self._selection.columns(joint_state_names(raw)) is not None
        except InputError as exc:
            raise InputError(f'{self.joint_states_topic}: {exc}') from None
        if receive_ns < self._log_ns:
            receive_ns = self._log_ns
        self._log_ns = receive_ns
        writer.write(self._js_conn, receive_ns, raw)
        self._flush_due(receive_ns)
        if not sample:
            return False
        self._latest_rx = receive_ns
        self.joint_state_messages += 1
        self._count(stamp, receive_ns)
        return True

    def _count(self, stamp: int, receive_ns: int) -> None:
        """Late, out-of-order and dropped samples, gaps and the period, of one more sample."""
        if receive_ns - stamp > self._late_ns:
            self.late += 1
        last = self._last_ns
        if last is None:
            self._first_ns = self._last_ns = stamp
            self._first_rx = self._last_rx = receive_ns
            return
        delta = stamp - last
        if delta <= 0:
            self.out_of_order += 1
            if stamp < self._first_ns:
                self._first_ns = stamp
            return
        self._last_ns = stamp
        if delta > self._gap_ns:
            self._stamp_gaps.append((self._last_rx, delta))
        self._last_rx = receive_ns
        if self._period_ns:
            if delta >= self._period_ns + (self._period_ns >> 1):
                self.dropped += _missing(delta, self._period_ns)
        else:
            self._intervals.append(delta)
            if len(self._intervals) >= PERIOD_ESTIMATE_INTERVALS:
                self._settle_period()

    def write_excitation(self, raw: bytes, receive_ns: int) -> None:
        """Write one serialized ``ident_msgs/msg/ExcitationTrajectory``.

        Parameters
        ----------
        raw : bytes
            CDR bytes with encapsulation header.
        receive_ns : int
            Bag time stamp [ns since the epoch] (never below the previous one, see
            ``write_joint_state``).

        Raises
        ------
        RuntimeError
            If the bag is not open.
        """
        if self._writer is None:
            raise RuntimeError(f'{self.path}: bag is not open')
        receive_ns = self._log_ns = max(receive_ns, self._log_ns)
        self._writer.write(self._ex_conn, receive_ns, raw)
        self._flush_due(receive_ns)
        self.excitation_messages += 1

    def flush(self, now_ns: int | None = None) -> bool:
        """Write the messages held in memory to the file as one MCAP chunk.

        Parameters
        ----------
        now_ns : int, optional
            Receive-clock time [ns]; then only if the oldest message held is at least
            ``flush_period`` old (what a timer calls). None: whatever is held.

        Returns
        -------
        bool
            True if a chunk was written.

        Raises
        ------
        RuntimeError
            If the bag is not open.
        OSError
            If the file cannot be written.
        """
        if self._writer is None:
            raise RuntimeError(f'{self.path}: bag is not open')
        storage = self._writer.storage
        if not storage.chunk.msgs:
            return False
        if now_ns is not None and now_ns - storage.chunk.message_start_time < self._flush_ns:
            return False
        storage.close_chunk()
        storage.bio.flush()
        return True

    def _flush_due(self, now_ns: int) -> None:
        chunk = self._writer.storage.chunk
        if now_ns - chunk.message_start_time >= self._flush_ns:
            self.flush()

    def summary(self) -> RecordingSummary:
        """The recording's summary.

        Returns
        -------
        RecordingSummary
            The current state (``recording`` True while open); final after ``close()``.
        """
        if self._summary is not None:
            return self._summary
        if self._period_ns:
            period = self._period_ns * 1e-9
        else:
            period = statistics.median(self._intervals) * 1e-9 if self._intervals else 0.0
        first, last = self._first_ns, self._last_ns
        start, stop, gaps = self._gaps(int(round(period * 1e9)))
        lengths = [g['length'] for g in gaps]
        return RecordingSummary(
            path=str(self.path), experiment=self.experiment, recording=self.is_open,
            joint_state_messages=self.joint_state_messages,
            excitation_messages=self.excitation_messages, dropped=self.dropped, late=self.late,
            out_of_order=self.out_of_order, nominal_period=period,
            nominal_period_source=self._period_source, late_threshold=self.late_threshold,
            duration=0.0 if first is None else (last - first) * 1e-9,
            first_stamp=None if first is None else first * 1e-9,
            last_stamp=None if last is None else last * 1e-9,
            joint_states_topic=self.joint_states_topic, excitation_topic=self.excitation_topic,
            start_wall_time=self._start_wall, stop_wall_time=self._stop_wall,
            recording_time=(stop - start) * 1e-9,
            expected_samples=int(round((stop - start) / (period * 1e9))) if period else 0,
            lost_seconds=sum(lengths), longest_gap=max(lengths, default=0.0),
            gap_count=len(gaps), gaps=gaps[:MAX_GAPS_LISTED],
            other_joint_states=self.other_joint_states, missing_joints=self.missing_joints)

    def _gaps(self, period_ns: int) -> tuple[int, int, list[dict]]:
        """(start, stop) on the receive clock (ns) and the gaps longer than ``gap_tolerance``."""
        first_rx = self._first_rx
        start = self._start_ns if self._start_ns is not None else first_rx
        stop = self._stop_ns if self._stop_ns is not None else max(self._log_ns, start or 0)
        if start is None:
            return 0, 0, []
        stop = max(stop, start)
        if first_rx is None:
            found = [(start, stop - start)]
        else:
            found = [(start, first_rx - start)]
            found += [(rx, delta - period_ns) for rx, delta in self._stamp_gaps]
            found.append((self._latest_rx, stop - self._latest_rx))
        gaps = [{'start': t * 1e-9, 'length': n * 1e-9} for t, n in found if n > self._gap_ns]
        return start, stop, gaps

    def close(self, stop_ns: int | None = None) -> RecordingSummary:
        """Finish the bag (MCAP index, ``metadata.yaml``) and write ``recording.yaml``
        atomically into the bag folder.

        Idempotent: later calls return the same summary. Closing a recorder that was never
        opened writes nothing.

        Parameters
        ----------
        stop_ns : int, optional
            The recording's end on the receive clock [ns since the epoch]; time since the latest
            JointState counts as a gap. Default: the latest message's receive time (no silent
            tail is counted).

        Returns
        -------
        RecordingSummary
            The final summary.

        Raises
        ------
        OSError
            If the bag or the summary cannot be written (the recorder counts as closed).
        """
        if self._closed:
            return self.summary()
        self._closed = True
        writer, self._writer = self._writer, None
        if not self._period_ns and self._intervals:
            self._settle_period()
        self._stop_wall = _wall_time()
        if writer is not None:
            self._stop_ns = max(stop_ns if stop_ns is not None else self._log_ns, self._log_ns)
            try:
                writer.close()
            finally:
                self._lock.close()
        summary = self.summary()
        if writer is not None:
            write_atomic(self.path / RECORDING_FILE, dump_yaml(summary.to_dict()))
        self._summary = summary
        return summary

    def _settle_period(self) -> None:
        """Fix the period to the median of the buffered intervals and count their drops."""
        self._period_ns = max(1, int(round(statistics.median(self._intervals))))
        self.dropped += sum(_missing(d, self._period_ns) for d in self._intervals)
        self._intervals = []


def start_recording(directory: str | Path, experiment: str, now: datetime | None = None,
                    start_ns: int | None = None, **options) -> BagRecorder:
    """Open a new bag ``unique_bag_path(directory, experiment, now)``; if another process
    creates that folder first, take the next free name (a few tries).

    Parameters
    ----------
    directory : str or Path
        Where bags go.
    experiment : str
        Experiment name.
    now : datetime, optional
        The time for the name (local wall time by default).
    start_ns : int, optional
        See ``BagRecorder.open``.
    **options
        Keyword arguments of ``BagRecorder`` (``typestore`` and the ``RecordingConfig``).

    Returns
    -------
    BagRecorder
        Open.

    Raises
    ------
    InputError
        (a ValueError) For an invalid name or option.
    OSError
        If the folder cannot be created (``FileExistsError`` when no free name was found).
    """
    for _ in range(10):
        recorder = BagRecorder(unique_bag_path(directory, experiment, now), experiment, **options)
        try:
            return recorder.open(start_ns)
        except FileExistsError:
            continue
    raise FileExistsError(f'{directory}: no free bag name for {experiment!r}')


def _flushable(storage):
    """The rosbags MCAP storage writer, checked for what ``BagRecorder.flush`` uses."""
    if not all(hasattr(storage, a) for a in ('chunk', 'close_chunk', 'bio', 'path')) \
            or not hasattr(storage.chunk, 'msgs'):
        raise RuntimeError(f'rosbags {type(storage).__name__} has no chunk / close_chunk / bio: '
                           'its MCAP writer changed, BagRecorder.flush needs an update')
    return storage


def _missing(delta_ns: int, period_ns: int) -> int:
    """Samples missing in a stamp interval: round(delta/period) - 1, at least 0."""
    return max(0, (2 * delta_ns + period_ns) // (2 * period_ns) - 1)


def _wall_time() -> str:
    return datetime.now().astimezone().isoformat(timespec='milliseconds')
