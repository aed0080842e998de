"""``recording.yaml``: what a recording holds and what it lost, beside its rosbag2 files.

The recorder writes it when it closes a bag (``RecordingSummary``; the same content goes into
the ``RecordingInfo`` messages while it records); a repair writes one for a bag whose recorder
was killed (``recovery_summary``), if the folder has none. Both start with ``format:
robot-ident/recording/1``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from .format import EXCITATION_TYPE, JOINT_STATE_TYPE, RECORDING_FORMAT, experiment_of
from .mcap import McapScan

#: At most this many gaps are listed (all of them count).
MAX_GAPS_LISTED = 100


@dataclass
class RecordingSummary:
    """State of one recording, the content of ``recording.yaml`` and of ``RecordingInfo``.

    Parameters
    ----------
    path : str
        Bag folder (absolute).
    experiment : str
        Experiment name.
    recording : bool
        True while the bag is open.
    joint_state_messages, excitation_messages : int
        Messages written per topic; JointState: the samples (messages that name every joint
        of the robot, when the recorder knows them).
    dropped : int
        JointState samples missing between consecutive header stamps.
    late : int
        JointState messages received more than ``late_threshold`` after their stamp.
    out_of_order : int
        JointState messages whose stamp is not later than the latest one before.
    nominal_period : float
        JointState period used for ``dropped`` [s]; 0 if not known yet.
    nominal_period_source : {'parameter', 'median'}
        Given, or estimated from the stamps.
    late_threshold : float
        [s].
    duration : float
        Last minus first JointState header stamp [s].
    first_stamp, last_stamp : float or None
        Earliest and latest JointState header stamp [s since the epoch]; None without
        JointState messages.
    joint_states_topic, excitation_topic : str
        Topic names.
    start_wall_time, stop_wall_time : str or None
        Local wall time (ISO 8601) of open and close; stop is None while recording.
    recording_time : float
        Stop minus start on the receive clock [s]; while recording, up to the latest message.
    expected_samples : int
        JointState samples the nominal period fits into ``recording_time`` (0 while the period
        is not known).
    lost_seconds : float
        Total length of the gaps [s].
    longest_gap : float
        Length of the longest gap [s], 0 without gaps.
    gap_count : int
        Number of gaps.
    gaps : list of dict
        The first ``MAX_GAPS_LISTED`` gaps, ``{'start': s since the epoch (receive clock),
        'length': s}``: a silent head after the start, stamp gaps (minus one period) between
        consecutive JointState messages, a silent tail before the stop, each longer than the
        recording's ``gap_tolerance``.
    other_joint_states : int
        JointState messages written that are no samples: they lack a joint of the robot
        (another publisher's on the topic, e.g. a gripper's).
    missing_joints : list of str
        Joints of the robot that no JointState message named.
    """

    path: str
    experiment: str
    recording: bool
    joint_state_messages: int
    excitation_messages: int
    dropped: int
    late: int
    out_of_order: int
    nominal_period: float
    nominal_period_source: str
    late_threshold: float
    duration: float
    first_stamp: float | None
    last_stamp: float | None
    joint_states_topic: str
    excitation_topic: str
    start_wall_time: str | None
    stop_wall_time: str | None
    recording_time: float
    expected_samples: int
    lost_seconds: float
    longest_gap: float
    gap_count: int
    gaps: list
    other_joint_states: int = 0
    missing_joints: list = field(default_factory=list)

    @property
    def lost_fraction(self) -> float:
        """``lost_seconds`` over ``recording_time`` (0 for an empty recording)."""
        return self.lost_seconds / self.recording_time if self.recording_time > 0 else 0.0

    @property
    def missing_fraction(self) -> float:
        """Fraction of the expected samples that are not in the bag (0 while none is
        expected; negative when there are more)."""
        expected = self.expected_samples
        return 1 - self.joint_state_messages / expected if expected else 0.0

    def to_dict(self) -> dict:
        """The ``recording.yaml`` layout.

        Returns
        -------
        dict
            Plain Python types, with a ``format`` key first.
        """
        return {'format': RECORDING_FORMAT, **asdict(self)}

    def lost_warning(self, fraction: float) -> str:
        """The warning about a recording that lost too much.

        Parameters
        ----------
        fraction : float
            Largest acceptable fraction of the recording's time without samples, and of its
            expected samples missing (the recorder's ``lost_warning_fraction``).

        Returns
        -------
        str
            One line (messages, expected samples, lost time and the first gaps; the joints no
            message named, if any), or ``''`` when neither fraction exceeds ``fraction``.
        """
        if self.missing_joints and self.joint_state_messages == 0:
            return (f'{self.path}: no {self.joint_states_topic} message carries joint(s) '
                    f'{", ".join(self.missing_joints)} ({self.other_joint_states} message(s) '
                    'without them)')
        if max(self.lost_fraction, self.missing_fraction) <= fraction:
            return ''
        gaps = f': {describe_gaps(self.gaps)}' if self.gaps else ''
        return (f'{self.path}: {self.joint_state_messages} of {self.expected_samples} expected '
                f'joint_states; {self.lost_seconds:.3f} s of {self.recording_time:.3f} s '
                f'({100 * self.lost_fraction:.1f} %) without any, in {self.gap_count} '
                f'gap(s){gaps}')


def describe_gaps(gaps: list[dict], most: int = 3) -> str:
    """Gaps for a log line.

    Parameters
    ----------
    gaps : list of dict
        ``RecordingSummary.gaps``.
    most : int
        Gaps named; ``...`` stands for the others.

    Returns
    -------
    str
        E.g. ``2.000 s at 2024-05-01T12:00:01.250, ...`` (local time).
    """
    text = ', '.join(f'{g["length"]:.3f} s at '
                     f'{datetime.fromtimestamp(g["start"]).isoformat(timespec="milliseconds")}'
                     for g in gaps[:most])
    return text + (', ...' if len(gaps) > most else '')


def recovery_summary(folder: Path, damage: str, scan: McapScan, original: Path,
                     repaired: Path) -> dict:
    """The ``recording.yaml`` of a repaired bag.

    Parameters
    ----------
    folder : Path
        The bag folder.
    damage : str
        What was wrong (``damage.bag_damage``).
    scan : McapScan
        The messages recovered.
    original, repaired : Path
        The damaged MCAP (kept) and the new one.

    Returns
    -------
    dict
        ``format``, ``path``, ``experiment`` (from the folder name), ``recording`` (False),
        ``recovered`` (True), ``recovered_seconds`` (log-time span of the recovered messages),
        ``start_time``/``end_time`` (s since the epoch), ``joint_state_messages``,
        ``excitation_messages`` and ``topics`` (messages per topic), ``lost_bytes``,
        ``original_file``, ``repaired_file``, ``note``.
    """
    by_type: dict[str, int] = {}
    for key, c in scan.channels.items():
        by_type[c.msgtype] = by_type.get(c.msgtype, 0) + scan.counts.get(key, 0)
    end = None if scan.end_ns is None else scan.end_ns * 1e-9
    return {
        'format': RECORDING_FORMAT, 'path': str(folder.absolute()),
        'experiment': experiment_of(folder), 'recording': False,
        'recovered': True, 'recovered_seconds': scan.seconds,
        'start_time': None if scan.start_ns is None else scan.start_ns * 1e-9, 'end_time': end,
        'joint_state_messages': by_type.get(JOINT_STATE_TYPE, 0),
        'excitation_messages': by_type.get(EXCITATION_TYPE, 0),
        'topics': scan.topics, 'lost_bytes': scan.size - scan.intact,
        'original_file': original.name, 'repaired_file': repaired.name,
        'note': f'recovered from an unfinished bag ({damage}); what the recorder had not '
                f'written after {end if end is None else f"{end:.3f}"} s is lost',
    }
