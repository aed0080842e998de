"""Datasets: a recording of joint positions and torques in joint space.

A recording is read from a dataset description (``description``: which file holds which signal),
from an ``.npz`` with the keys ``times``, ``positions``, ``torques`` (``velocities`` optional), or
from a rosbag2 folder or ``.mcap``/``.db3`` file (``sensor_msgs/JointState`` on
``/joint_states``). Every row is kept; the rows that repeat the previous row exactly are marked,
and the time base (``timing``) decides which of them are a logger's second read of a controller
cycle and which a robot standing still. Every problem raises ``InputError`` naming the file and
the field, row (0-based, of the data file) or joint at fault.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import DataWarning, InputError  # noqa: F401 (tests import it here)
from ..files import read_yaml
from ..model.robot import RobotModel
from ..model.transmission import Transmission
from ..schema import parse, per_joint
from . import readers
from .coverage import MIN_COVERAGE, check_coverage, window_coverage
from .description import DatasetDescription, SignalSpec, TimeSpec, transmission_from_spec
from .invalid_rows import drop_invalid_rows
from .signal_processing import fixed_rate_clock
from .sources import SPLIT_TAG, WINDOW_TAG, short_source, window_source

SIGNALS = ('position', 'velocity', 'effort')
BAG_SUFFIXES = ('.mcap', '.db3')


def is_bag(path: str | Path) -> bool:
    """Whether a path names a rosbag2 (a folder, ``.mcap`` or ``.db3``).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    bool
    """
    path = Path(path)
    return path.is_dir() or path.suffix in BAG_SUFFIXES


@dataclass
class Dataset:
    """A recording in joint space.

    Parameters
    ----------
    source : str
        The description or data file it came from.
    joint_names : list of str
        (n,) column order.
    t : (N,) ndarray
        Time [s] from 0, non-decreasing: the stamps (two rows may share one), or the fixed-rate
        clock for ``time.clock: fixed_rate``.
    position : (N, n) ndarray
        [rad or m].
    velocity : (N, n) ndarray or None
        Recorded velocity [rad/s or m/s], if any.
    effort : (N, n) ndarray
        Joint torques [N·m or N].
    transmission : Transmission
        The motor-to-joint transmission the data went through.
    cutoff_hz : float or None
        The description's low-pass cut-off [Hz].
    clock : {'auto', 'stamps', 'fixed_rate'}
        The description's ``time.clock`` (see ``timing``).
    repeats : (N,) ndarray of bool or None
        Rows equal to the previous row in every signal as read (``timing.samples`` drops those
        that come sooner than a period); all False for a ``sample_rate`` or ``time.clock:
        fixed_rate`` log (every row is declared a sample); None: compare the arrays.
    first_row : int
        Row of the data file (0-based) that is the first row here, for messages.
    notes : tuple of str
        What the reader left out of the source, one line each (JointState messages of a bag
        that lack a joint: another publisher's, e.g. a gripper's); the preprocessing summary
        repeats them.
    """

    source: str
    joint_names: list[str]
    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray
    transmission: Transmission
    cutoff_hz: float | None = None
    clock: str = 'auto'
    repeats: np.ndarray | None = None
    first_row: int = 0
    notes: tuple[str, ...] = ()

    @property
    def samples(self) -> int:
        """Number of samples N."""
        return len(self.t)

    @property
    def repeated(self) -> int:
        """Number of rows equal to the previous row in every signal (``repeat_mask``)."""
        return int(self.repeat_mask().sum())

    def repeat_mask(self) -> np.ndarray:
        """Which rows equal the previous row in every signal.

        Returns
        -------
        (N,) ndarray of bool
            ``repeats``, or the comparison of the arrays when it is None; the first row is
            never a repeat.
        """
        if self.repeats is not None:
            mask = np.array(self.repeats, dtype=bool)
        else:
            mask = _same_as_previous([self.position, self.velocity, self.effort])
        if len(mask):
            mask[0] = False
        return mask

    def aligned(self, robot: RobotModel) -> Dataset:
        """The same data with columns (and the transmission) in the robot's joint order, and
        the angles of continuous joints unwrapped.

        A continuous joint's angle may be logged wrapped, e.g. into (−π, π]: a step of more
        than π between two rows is taken as a whole turn and removed (``numpy.unwrap``), so
        that the positions are continuous as the filters and derivatives need.

        Parameters
        ----------
        robot : RobotModel

        Returns
        -------
        Dataset

        Raises
        ------
        InputError
            If the joints are not the robot's moving joints.
        """
        idx = robot.joint_order(self.joint_names, self.source)
        same = np.array_equal(idx, np.arange(len(idx)))
        position = unwrap_continuous(self.position if same else self.position[:, idx],
                                     robot.continuous)
        if same:
            return replace(self, joint_names=list(robot.joint_names), position=position)
        return replace(self, joint_names=list(robot.joint_names), position=position,
                       velocity=None if self.velocity is None else self.velocity[:, idx],
                       effort=self.effort[:, idx], transmission=self.transmission.reordered(idx))

    def transmission_for(self, robot: RobotModel) -> Transmission:
        """The transmission in the robot's joint order (``aligned`` without the data copy).

        Parameters
        ----------
        robot : RobotModel

        Returns
        -------
        Transmission

        Raises
        ------
        InputError
            If the joints are not the robot's moving joints.
        """
        return self.transmission.reordered(robot.joint_order(self.joint_names, self.source))

    def split(self, fraction: float) -> tuple[Dataset, Dataset]:
        """The first ``fraction`` of the samples and the rest.

        Parameters
        ----------
        fraction : float
            In (0, 1).

        Returns
        -------
        first, last : Dataset
        """
        k = int(round(fraction * self.samples))
        return (self.rows(0, k, f'{self.source}[first {100 * fraction:g}%]'),
                self.rows(k, self.samples, f'{self.source}[last {100 * (1 - fraction):g}%]'))

    def rows(self, start: int, stop: int, source: str | None = None) -> Dataset:
        """The rows ``[start, stop)``.

        Parameters
        ----------
        start, stop : int
            Row indices, ``0 <= start < stop <= samples``.
        source : str, optional
            The part's name (default: the dataset's).

        Returns
        -------
        Dataset
            Sharing the arrays' memory; ``first_row`` counts from the file's first row.
        """
        sl = slice(start, stop)
        return replace(self, source=self.source if source is None else source, t=self.t[sl],
                       position=self.position[sl], effort=self.effort[sl],
                       velocity=None if self.velocity is None else self.velocity[sl],
                       repeats=None if self.repeats is None else self.repeats[sl],
                       first_row=self.first_row + start)


def unwrap_continuous(position: np.ndarray, continuous: np.ndarray) -> np.ndarray:
    """Positions with the wrapped angles of continuous joints unwrapped.

    Parameters
    ----------
    position : (N, n) ndarray
        Positions [rad or m], rows in time order.
    continuous : (n,) ndarray of bool
        Which columns are angles of continuous joints (``RobotModel.continuous``).

    Returns
    -------
    (N, n) ndarray
        ``position`` itself when no such column jumps by more than π between rows; else a copy
        with those jumps removed by whole turns (``numpy.unwrap``).
    """
    columns = np.flatnonzero(continuous)
    if not len(columns) or len(position) < 2 or \
            np.all(np.abs(np.diff(position[:, columns], axis=0)) <= np.pi):
        return position
    out = position.copy()
    out[:, columns] = np.unwrap(position[:, columns], axis=0)
    return out


def load_dataset(path: str | Path, default_joints: list[str] | None = None, *,
                 recover: bool = False) -> Dataset:
    """Load a dataset from a YAML description, an ``.npz`` or a rosbag2.

    Parameters
    ----------
    path : str or Path
        The file or bag folder.
    default_joints : list of str, optional
        Joint names used when the source does not name its columns (plain ``.npz``, or a
        description without ``joints``), normally the URDF's order.
    recover : bool, optional
        Read a rosbag2 its recorder left unfinished up to the damage, with a ``DataWarning``
        (``readers.read_joint_states``); without, such a bag raises ``InputError``.

    Returns
    -------
    Dataset

    Raises
    ------
    InputError
        For any problem, naming the file and the field, row or joint at fault.
    """
    path = Path(path)
    if path.suffix in ('.yaml', '.yml'):
        spec = parse(DatasetDescription, read_yaml(path, 'dataset description'), path)
        return _build(spec, str(path), path.parent, default_joints, recover=recover)[0]
    if path.suffix == '.npz':
        spec = {'file': path.name, 'time': {'key': 'times'}, 'position': {'key': 'positions'},
                'effort': {'key': 'torques'}}
        if path.is_file() and 'velocities' in readers.read_npz(path):
            spec['velocity'] = {'key': 'velocities'}
        return _build(DatasetDescription(**spec), str(path), path.parent, default_joints)[0]
    if is_bag(path):
        return _build(DatasetDescription(file=path.name), str(path), path.parent,
                      default_joints, recover=recover)[0]
    if not path.exists():
        raise InputError(f'{path}: file not found')
    raise InputError(f'{path}: unknown data format (expected a .yaml description, an .npz, or a '
                     'rosbag2 folder / .mcap / .db3 file)')


def load_bag(path: str | Path, topic: str = 'joint_states', *,
             window: tuple[float, float] | None = None,
             min_coverage: float = MIN_COVERAGE,
             recover: bool = False,
             joints: list[str] | None = None) -> tuple[Dataset, np.ndarray]:
    """Load the ``sensor_msgs/JointState`` messages of a rosbag2 (header stamps as time).

    Parameters
    ----------
    path : str or Path
        rosbag2 folder or ``.mcap``/``.db3`` file.
    topic : str
        The JointState topic (the messages name their joints; a relative name is in the root
        namespace).
    window : (float, float), optional
        (start, end) header-stamp time [s]: keep only the messages inside (e.g.
        ``readers.excitation_window``, the periodic part of an excitation).
    min_coverage : float
        Smallest fraction of ``window`` the messages must cover (``coverage.check_coverage``:
        a stream that stopped during the excitation is refused, a shorter gap is a warning).
    recover : bool, optional
        As for ``load_dataset``.
    joints : list of str, optional
        The joints to read (the URDF's): the messages that name them all are the samples
        (``readers.read_joint_states``); default: the first message's.

    Returns
    -------
    dataset : Dataset
    stamps : (N,) ndarray
        Absolute header stamps of its samples [s].

    Raises
    ------
    InputError
        As ``load_dataset``; also when the messages cover less than ``min_coverage`` of
        ``window``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f'{path}: file not found')
    log = readers.read_joint_states(path, topic, joints=joints, recover=recover)
    topic = log.topic
    spec = {'file': path.name, 'topic': topic}
    if window is not None:
        rows = np.flatnonzero((log.stamp >= window[0]) & (log.stamp <= window[1]))
        if not len(rows):
            raise InputError(f'{path}: no {topic} message between the stamps {window[0]:.3f} '
                             f'and {window[1]:.3f} s')
        check_coverage(window_coverage(log.stamp, window), f'{path} ({topic})', min_coverage)
        spec['rows'] = (int(rows[0]), int(rows[-1]) + 1)
    source = str(path) if window is None else window_source(path, topic, *spec['rows'])
    dataset, kept = _build(DatasetDescription(**spec), source, path.parent, joints, log)
    return dataset, log.stamp[kept]


def load_source(source: str, default_joints: list[str] | None = None, *,
                recover: bool = False) -> Dataset:
    """Load a dataset again from the source name its loader gave it (as RESULT.yaml and
    PAYLOAD.yaml record it): a path (``load_dataset``), the window of a rosbag2 topic
    (``path[topic rows a:b]``, ``window_source``), or a part of either from ``Dataset.split``
    (``...[first 70%]``, ``...[last 30%]``).

    Parameters
    ----------
    source : str
        ``Dataset.source``.
    default_joints : list of str, optional
        As for ``load_dataset``.
    recover : bool, optional
        As for ``load_dataset``.

    Returns
    -------
    Dataset
        The same samples as the dataset of that name.

    Raises
    ------
    InputError
        As ``load_dataset``.
    """
    split = SPLIT_TAG.fullmatch(source)
    if split:
        whole = load_source(split['source'], default_joints, recover=recover)
        share = float(split['percent']) / 100
        return whole.split(share)[0] if split['part'] == 'first' else whole.split(1 - share)[1]
    window = WINDOW_TAG.fullmatch(source)
    if window is None:
        return load_dataset(source, default_joints, recover=recover)
    path = Path(window['source'])
    spec = {'file': path.name, 'topic': window['topic'],
            'rows': (int(window['start']), int(window['stop']))}
    return _build(DatasetDescription(**spec), source, path.parent, default_joints,
                  recover=recover)[0]


def _build(spec: DatasetDescription, source: str, base: Path, default_joints,
           log: readers.JointStateLog | None = None,
           recover: bool = False) -> tuple[Dataset, np.ndarray]:
    """The dataset of a description and the indices of the data rows it kept; ``log``: the
    bag's JointState messages, if already read; ``recover``: read an unfinished bag."""
    try:
        return _build_unchecked(spec, source, base, default_joints, log, recover)
    except InputError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(source) else f'{source}: {message}') \
            from None


def _build_unchecked(spec, source, base, default_joints, log,
                     recover) -> tuple[Dataset, np.ndarray]:
    data_file = resolve_path(spec.file, base, 'file')
    notes = ()
    if is_bag(data_file):
        if log is None:
            log = readers.read_joint_states(data_file, spec.topic,
                                            joints=spec.joints or default_joints,
                                            recover=recover)
        raw = _raw_from_bag(spec, log)
        if log.skipped:
            notes = (f'{short_source(source)}: {log.skipped} {log.topic} message(s) without '
                     "every joint skipped (another publisher's, e.g. a gripper's)",)
    else:
        raw = _raw_from_tables(spec, data_file, base, default_joints)
    raw['row'] = np.arange(len(raw['time']))
    raw = _select_rows(raw, spec.rows)
    n = len(raw['joints'])
    tr = transmission_from_spec(spec.transmission, n) if spec.transmission \
        else Transmission.identity(n)
    raw = drop_invalid_rows(raw, spec.drop_invalid_rows, source, tr)
    tspec = spec.time or TimeSpec()
    repeats = _repeats(raw, tspec)
    t = _clock(raw['time'], tspec, source, raw['row'])
    velocity = raw.get('velocity')
    identity = _is_identity(tr)
    dataset = Dataset(source=source, joint_names=raw['joints'], t=t,
                      position=raw['position'] if identity else tr.joint_positions(raw['position']),
                      velocity=velocity if identity or velocity is None
                      else tr.joint_velocities(velocity),
                      effort=raw['effort'] if identity else tr.joint_torques(raw['effort']),
                      transmission=tr,
                      cutoff_hz=spec.cutoff_hz, clock=tspec.clock, repeats=repeats,
                      first_row=int(raw['row'][0]), notes=notes)
    return dataset, raw['row']


def _is_identity(tr: Transmission) -> bool:
    """Whether the transmission leaves joint-side data as they are (no copy needed)."""
    n = len(tr.joint_offset)
    return (np.array_equal(tr.gear_matrix, np.eye(n)) and not np.any(tr.joint_offset)
            and np.all(tr.torque_scale == 1))


def resolve_path(value: str, base: Path, field: str) -> Path:
    """A file a dataset description names: ``${VAR}`` and ``~`` expanded, relative to the
    description's folder.

    Parameters
    ----------
    value : str
        The field's value.
    base : Path
        The description's folder.
    field : str
        The field's path, for messages (``file``, ``effort.file``).

    Returns
    -------
    Path

    Raises
    ------
    InputError
        If the value is empty or names an environment variable that is not set.
    """
    if not value:
        raise InputError(f'field {field} must be a file name')

    def expand(match):
        name = match.group(1) or match.group(2)
        if name not in os.environ:
            raise InputError(f'field {field}: environment variable {name} is not set')
        return os.environ[name]

    path = Path(re.sub(r'\$\{(\w+)\}|\$(\w+)', expand, value)).expanduser()
    return path if path.is_absolute() else base / path


def _raw_from_tables(spec: DatasetDescription, data_file, base, default_joints) -> dict:
    joints = spec.joints or default_joints
    if joints is None:
        raise InputError('missing field joints (URDF joint names in column order)')
    tables = {}

    def table(path):
        if path not in tables:
            tables[path] = (readers.read_npz(path) if path.suffix == '.npz'
                            else readers.read_csv(path))
        return tables[path]

    raw = {'joints': list(joints)}
    for field in SIGNALS:
        fspec = getattr(spec, field)
        if fspec is None:
            if field == 'velocity':
                continue
            raise InputError(f'missing field {field}')
        path = resolve_path(fspec.file, base, f'{field}.file') if fspec.file else data_file
        raw[field] = _signal(table(path), fspec, len(joints), field)
    if spec.time is None:
        raise InputError('missing field time ({column: i}, {key: name} or {sample_rate: hz})')
    raw['time'] = _time_column(spec.time, table(data_file), len(raw['position']))
    lengths = {f: len(raw[f]) for f in SIGNALS if f in raw}
    if len(set(lengths.values()) | {len(raw['time'])}) > 1:
        raise InputError('signals have different row counts: '
                         + ', '.join(f'{f} {k}' for f, k in lengths.items()))
    return raw


def _signal(table, fspec: SignalSpec, n: int, field: str) -> np.ndarray:
    if isinstance(table, dict):
        key = fspec.key
        if key is None:
            raise InputError(f'field {field}: give the NPZ array as key: NAME')
        if key not in table:
            raise InputError(f'field {field}: key {key!r} not in the NPZ archive '
                             f'(keys: {", ".join(sorted(table))})')
        values = np.asarray(table[key], dtype=float)
        if values.ndim != 2 or values.shape[1] != n:
            raise InputError(f'field {field}: array {key!r} has shape {values.shape}, '
                             f'expected (N, {n}) for {n} joints')
    else:
        cols = fspec.columns
        if cols is None:
            raise InputError(f'field {field}: give the CSV columns as columns: [...]')
        if len(cols) != n:
            raise InputError(f'field {field}: {len(cols)} columns for {n} joints')
        values = _columns(table.values, [table.column(c, field) for c in cols])
    scale = per_joint(fspec.scale, n, f'{field}.scale')
    return values if np.all(scale == 1) else values * scale


def _columns(values: np.ndarray, idx: list[int]) -> np.ndarray:
    """Columns of a table: a view when they are consecutive (a long log is not copied)."""
    if idx == list(range(idx[0], idx[0] + len(idx))):
        return values[:, idx[0]:idx[0] + len(idx)]
    return values[:, idx]


def _time_column(tspec: TimeSpec, table, rows: int) -> np.ndarray:
    if tspec.sample_rate is not None:
        return np.arange(rows) / tspec.sample_rate
    if isinstance(table, dict):
        key = tspec.key
        if key not in table:
            raise InputError(f'field time: key {key!r} not in the NPZ archive '
                             f'(keys: {", ".join(sorted(table))})')
        values = np.asarray(table[key], dtype=float).ravel()
    else:
        if tspec.column is None:
            raise InputError('field time: give column: i or sample_rate: hz')
        values = table.values[:, table.column(tspec.column, 'time')]
    return values if tspec.scale == 1 else values * tspec.scale


def _raw_from_bag(spec: DatasetDescription, log: readers.JointStateLog) -> dict:
    joints = spec.joints or log.names
    missing = [j for j in joints if j not in log.names]
    if missing:
        raise InputError(f'joint(s) {", ".join(missing)} not in the JointState messages '
                         f'(names: {", ".join(log.names)})')
    idx = [log.names.index(j) for j in joints]
    raw = {'joints': list(joints)}
    for field in SIGNALS:
        values = getattr(log, field)
        if values is None:
            if field == 'effort':
                raise InputError('JointState messages carry no effort')
            continue
        fspec = getattr(spec, field) or SignalSpec()
        raw[field] = values[:, idx] * per_joint(fspec.scale, len(idx), f'{field}.scale')
    header = (spec.time or TimeSpec()).source == 'header'
    raw['time'] = log.stamp if header and np.any(log.stamp) else log.receive
    return raw


def _select_rows(raw: dict, rows) -> dict:
    if rows is None:
        return raw
    total = len(raw['time'])
    start, stop = slice(*rows).indices(total)[:2]
    if start >= stop:
        raise InputError(f'field rows {list(rows)} selects no row of the {total} rows')
    return {k: v if k == 'joints' or v is None else v[start:stop] for k, v in raw.items()}


def _repeats(raw: dict, tspec: TimeSpec) -> np.ndarray:
    """Which rows equal the previous row in every signal; all False when the description
    declares every row a sample (``sample_rate``, ``time.clock: fixed_rate``). Refuses a log of
    fewer than two rows or one constant sample, decreasing stamps, and, for ``time.clock:
    stamps``, a stamp shared by rows of different states."""
    t, rows = raw['time'], raw['row']
    if len(t) < 2:
        raise InputError(f'{len(t)} row{"" if len(t) == 1 else "s"} (a log needs two rows or more)')
    same = _same_as_previous([raw.get(field) for field in SIGNALS])
    if same[1:].all():
        raise InputError(f'all {len(t)} rows hold the same sample (a constant log: nothing moves)')
    backwards = np.flatnonzero(np.diff(t) < 0)
    if len(backwards):
        r = backwards[0]
        raise InputError(f'decreasing time stamp at row {rows[r + 1]} ({float(t[r])!r} then '
                         f'{float(t[r + 1])!r}); time must increase')
    shared = np.flatnonzero((np.diff(t) == 0) & ~same[1:])
    if tspec.clock == 'stamps' and len(shared):
        r = shared[0]
        raise InputError(f'duplicated time stamp at row {rows[r + 1]} ({float(t[r])!r} twice) '
                         'with a different state; time.clock: stamps needs a stamp per sample '
                         '(auto puts such rows on consecutive controller cycles)')
    if tspec.sample_rate is not None or tspec.clock == 'fixed_rate':
        return np.zeros(len(t), dtype=bool)
    return same


def _same_as_previous(signals) -> np.ndarray:
    """(N,) bool: the row equals the previous one in every signal given (None: absent)."""
    signals = [s for s in signals if s is not None]
    same = np.zeros(len(signals[0]), dtype=bool)
    same[1:] = True
    for values in signals:
        same[1:] &= np.all(values[1:] == values[:-1], axis=1)
    return same


def _clock(t: np.ndarray, tspec: TimeSpec, source: str, rows: np.ndarray) -> np.ndarray:
    if tspec.clock == 'fixed_rate':
        t = fixed_rate_clock(t, source, rows)
    return t - t[0]
