"""Raw table readers: CSV, NPZ and rosbag2 (sqlite3 or MCAP, via ``rosbags``).

Readers return plain arrays and never interpret them; ``datasets`` maps them to joints.
"""
from __future__ import annotations

import csv
import io
import itertools
import re
import warnings
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataWarning, InputError
from ..files import check_readable
from .bag.damage import bag_damage, damage_message
from .bag.salvage import SalvageReader
from .joint_selection import JointSelection

#: Topic of the excitation node's ``ident_msgs/msg/ExcitationTrajectory`` descriptions: a
#: relative name, which nodes resolve in their namespace (``bag_topic``).
EXCITATION_TOPIC = 'excitation_node/trajectory'
#: Bytes of CSV text parsed at a time (the block takes about ten times that while parsed).
CSV_BLOCK_BYTES = 1 << 20
#: A number or its start, as a logger stopped while writing it leaves it ('', '-', '1.', '2e').
NUMBER_START = re.compile(r'\s*[-+]?(\d*\.?\d*([eE][-+]?\d*)?|inf\w*|nan)?\s*', re.IGNORECASE)


@dataclass
class CsvTable:
    """A numeric CSV file.

    Parameters
    ----------
    path : Path
        The file.
    header : list of str or None
        Column names, None if the file has no header row.
    values : (rows, columns) ndarray
        The numbers.
    """

    path: Path
    header: list[str] | None
    values: np.ndarray

    def column(self, ref, field: str) -> int:
        """0-based index of a column given by index or header name.

        Parameters
        ----------
        ref : int or str
            Column index or header name.
        field : str
            Description field that names the column, for the error message.

        Returns
        -------
        int

        Raises
        ------
        InputError
            If the name is unknown or the index out of range; names the file and the field.
        """
        ncols = self.values.shape[1]
        if isinstance(ref, str):
            if not self.header or ref not in self.header:
                raise InputError(f'{self.path}: field {field}: no column named {ref!r} '
                                 f'(header: {", ".join(self.header or ["none"])})')
            return self.header.index(ref)
        if not isinstance(ref, int) or isinstance(ref, bool) or not 0 <= ref < ncols:
            raise InputError(f'{self.path}: field {field}: column {ref!r} out of range '
                             f'(the file has {ncols} columns, 0-based)')
        return ref


def read_csv(path: Path) -> CsvTable:
    """Read a numeric CSV (',' ';' tab or space separated, optional header row).

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    CsvTable

    Raises
    ------
    InputError
        If the file is missing, unreadable, not text or empty, the header names another number
        of columns than the rows have, a row is ragged or a cell is not numeric (names the
        row).

    Warns
    -----
    DataWarning
        When the last row is cut short (fewer cells than the others, or a last cell that is no
        number: a logger stopped while writing it); it is dropped.
    """
    try:
        with path.open(newline='', encoding='utf-8-sig') as f:     # a BOM is no header text
            first = f.readline()
            if not first.strip():
                raise InputError(f'{path}: file is empty')
            delimiter = next((d for d in ',;\t' if d in first), None)
            f.seek(0)
            header, values = _read_rows(path, f, delimiter)
    except FileNotFoundError:
        raise InputError(f'{path}: file not found') from None
    except UnicodeDecodeError:
        raise InputError(f'{path}: not a text file, cannot be a CSV table') from None
    except IsADirectoryError:
        raise InputError(f'{path}: is a folder, not a CSV table') from None
    except OSError as exc:
        raise InputError(f'{path}: cannot read ({exc.strerror})') from None
    return CsvTable(path, header, values)


def _read_rows(path: Path, f, delimiter: str | None) -> tuple[list[str] | None, np.ndarray]:
    """Header and numbers of an open CSV, read a block of lines at a time into one preallocated
    array (lists of strings would take kilobytes per row)."""
    blocks = iter(lambda: f.readlines(CSV_BLOCK_BYTES), [])
    head = next(blocks)
    header = None
    if not _numeric(_cells(head[0], delimiter)):
        header, head = [c.strip() for c in _cells(head[0], delimiter)], head[1:]
    trailing = bool(delimiter and head and head[0].rstrip('\r\n').endswith(delimiter))
    if trailing and header and not header[-1]:
        header = header[:-1]
    values, count = None, 0
    for lines, last in _with_last(itertools.chain([head], blocks)):
        if trailing:                              # a delimiter ends each row: no column
            lines = [line.rstrip('\r\n').removesuffix(delimiter) + '\n' for line in lines]
        block = _parse_block(path, lines, delimiter, count,
                             None if values is None else values.shape[1], last)
        if not len(block):
            continue
        if values is None:
            if header is not None and len(header) != block.shape[1]:
                raise InputError(f'{path}: the header names {len(header)} columns, the rows '
                                 f'have {block.shape[1]}')
            values = np.empty((_line_count(path), block.shape[1]))
        values[count:count + len(block)] = block
        count += len(block)
    if not count:
        raise InputError(f'{path}: no data rows')
    return header, values[:count]


def _with_last(items):
    """(item, whether it is the last) for each item of an iterable."""
    items = iter(items)
    previous = next(items, None)
    for item in items:
        yield previous, False
        previous = item
    if previous is not None:
        yield previous, True


def _line_count(path: Path) -> int:
    """Lines of a file (an upper bound of its data rows)."""
    with path.open('rb') as raw:
        chunks = iter(lambda: raw.read(CSV_BLOCK_BYTES), b'')
        return 1 + sum(chunk.count(b'\n') for chunk in chunks)


def _parse_block(path: Path, lines: list[str], delimiter: str | None, first: int,
                 width: int | None, last: bool = False) -> np.ndarray:
    """(rows, columns) numbers of a block of data lines; ``first``: data rows before it,
    ``width``: the columns of the first data row (None: none yet); ``last``: the file's last
    block, whose last row may be cut short (dropped with a warning). NumPy's C parser reads a
    regular block; any other (blank or ragged rows, quotes, bad cells) is read cell by cell,
    which finds the row at fault."""
    if not lines:
        return np.empty((0, width or 0))
    try:
        block = np.loadtxt(io.StringIO(''.join(lines)), delimiter=delimiter, comments=None,
                           ndmin=2)
        if len(block) == len(lines) and width in (None, block.shape[1]):
            return block
    except ValueError:
        pass
    cells = csv.reader(lines, delimiter=delimiter) if delimiter else (x.split() for x in lines)
    rows = [r for r in cells if any(c.strip() for c in r)]
    width = width or (len(rows[0]) if rows else 0)
    if last and first + len(rows) > 1 and _cut_short(rows[-1], width):
        cut = rows.pop()
        what = f'has {len(cut)} columns, expected {width}' if len(cut) < width else \
            f'ends in {cut[-1]!r}, no number'
        warnings.warn(f'{path}: data row {first + len(rows)} {what}: the last row, cut short '
                      '(a logger stopped while writing it?); dropped', DataWarning,
                      stacklevel=5)
    for i, row in enumerate(rows):
        if len(row) != width:
            raise InputError(f'{path}: data row {first + i} has {len(row)} columns, expected '
                             f'{width}')
    try:
        return np.array(rows, dtype=float).reshape(len(rows), width)
    except ValueError:
        i = next(i for i, r in enumerate(rows) if not _numeric(r))
        raise InputError(f'{path}: data row {first + i} has a non-numeric cell: {rows[i]}') \
            from None


def _cut_short(row: list[str], width: int) -> bool:
    """Whether a row is a longer row cut short: numbers, then a start of a number (or nothing,
    cut after a delimiter) as its last cell, which leaves it short of cells or not a number."""
    return len(row) <= width and _numeric(row[:-1]) and bool(NUMBER_START.fullmatch(row[-1])) \
        and (len(row) < width or not _numeric(row[-1:]))


def _cells(line: str, delimiter: str | None) -> list[str]:
    """The cells of one line, as ``csv.reader`` (or whitespace splitting) gives them."""
    return next(csv.reader([line], delimiter=delimiter), []) if delimiter else line.split()


def _numeric(row: list[str]) -> bool:
    try:
        [float(c) for c in row]
    except ValueError:
        return False
    return True


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """Arrays of a NumPy ``.npz`` archive by key.

    Parameters
    ----------
    path : Path
        The archive.

    Returns
    -------
    dict of str to ndarray

    Raises
    ------
    InputError
        If the file is missing or unreadable.
    """
    check_readable(path, '.npz archive')
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {k: archive[k] for k in archive.files}
    except (OSError, ValueError) as exc:
        raise InputError(f'{path}: not a readable .npz archive ({exc})') from None


@dataclass
class JointStateLog:
    """``sensor_msgs/JointState`` messages of one topic, as arrays.

    Parameters
    ----------
    names : list of str
        Joint names (column order): those asked for, or of the first message.
    stamp : (N,) ndarray
        Header stamps [s].
    receive : (N,) ndarray
        Bag (receive) times [s].
    position : (N, n) ndarray
        [rad or m].
    velocity, effort : (N, n) ndarray or None
        None if every message left them empty.
    topic : str
        The topic's name in the bag.
    skipped : int
        Messages left out because they lack one of the joints (``joint_selection``).
    """

    names: list[str]
    stamp: np.ndarray
    receive: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None
    topic: str = ''
    skipped: int = 0


def bag_topic(topic: str) -> str:
    """The name in a bag of a topic given as a parameter.

    Parameters
    ----------
    topic : str
        An absolute name (``/left/joint_states``), or a relative one (``joint_states``): in the
        root namespace, where a process outside ROS (the CLI) resolves it. A node resolves a
        relative name in its own namespace first (``Node.resolve_topic_name``).

    Returns
    -------
    str
        The absolute name.
    """
    return topic if topic.startswith('/') else '/' + topic


def excitation_window(path: Path, topic: str, *,
                      recover: bool = False) -> tuple[float, float] | None:
    """Time span of the periodic excitation recorded in a rosbag2.

    Parameters
    ----------
    path : Path
        rosbag2 folder or file.
    topic : str
        Topic of the ``ident_msgs/msg/ExcitationTrajectory`` messages. The last experiment
        counts; a multi-stage one (a joint-wise friction experiment) is described by one
        message per stage, and its window spans all of them.
    recover : bool, optional
        Read an unfinished MCAP bag (a recorder that crashed) up to its damage, without a
        warning (``read_joint_states`` gives it); without, such a bag raises ``InputError``.

    Returns
    -------
    (float, float) or None
        (start, end) in header-stamp time [s]: the stamp of the experiment's first stage
        (start of its first period) and the last stage's stamp + periods × period; None if
        the bag holds no such message.

    Raises
    ------
    InputError
        If the bag cannot be read.
    """
    try:
        with closing(open_bag(Path(path), recover)) as reader:
            name = bag_topic(topic)
            conns = [c for c in reader.connections if c.topic == name]
            if not conns:                 # (no connections would mean all of them to rosbags)
                return None
            window = None
            for conn, _t, raw in reader.messages(connections=conns):
                msg = reader.deserialize(raw, conn.msgtype)
                start = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
                if window is None or msg.stage <= 1:        # a new experiment begins
                    window = (start, start)
                window = (window[0], start + msg.periods * msg.period)
            return window
    except InputError:
        raise
    except Exception as exc:  # rosbags raises several unrelated types for unreadable bags
        raise InputError(f'{path}: cannot read {topic} ({exc})') from None


def read_joint_states(path: Path, topic: str, *, joints: list[str] | None = None,
                      recover: bool = False) -> JointStateLog:
    """Read the ``sensor_msgs/msg/JointState`` messages of a topic from a rosbag2.

    Messages may list the joints in any order. With ``joints``, a row is a message that names
    every one of them (others besides: a gripper's fingers); messages that lack one (another
    publisher's, e.g. a gripper's ``joint_state_broadcaster`` between the arm's) are left out
    and counted (``data.joint_selection``). Without, the joints are the first message's and
    every message must name them.

    Parameters
    ----------
    path : Path
        rosbag2 folder or ``.mcap``/``.db3`` file.
    topic : str
        The topic (a relative name in the root namespace, ``bag_topic``).
    joints : list of str, optional
        The joints to read (the URDF's moving joints), the column order.
    recover : bool, optional
        Read an unfinished MCAP bag (its recorder crashed: no ``metadata.yaml``, no MCAP
        footer) up to its damage, with a ``DataWarning`` that states the seconds read (see
        ``bag.salvage``). Without, such a bag raises ``InputError`` suggesting ``--recover``.

    Returns
    -------
    JointStateLog

    Raises
    ------
    InputError
        If the bag is missing or damaged (without ``recover``), the topic unknown or of another
        type, no message names every one of ``joints`` (naming those none names), or, without
        ``joints``, a message lacks a joint; or a message has inconsistent array lengths
        (names the message index).
    """
    if not path.exists():
        raise InputError(f'{path}: rosbag2 not found')
    reader = open_bag(path, recover)
    try:
        topics = sorted({c.topic for c in reader.connections})
        name = bag_topic(topic)
        conns = [c for c in reader.connections if c.topic == name]
        if not conns:
            raise InputError(f'{path}: no topic {name!r} (topics: {", ".join(topics)})')
        bad = [c.msgtype for c in conns if c.msgtype != 'sensor_msgs/msg/JointState']
        if bad:
            raise InputError(f'{path}: topic {name} has type {bad[0]}, '
                             'expected sensor_msgs/msg/JointState')
        log = _collect(path, reader, conns, joints)
        log.topic = name
    finally:
        reader.close()
    if isinstance(reader, SalvageReader):
        _warn_recovered(path, name, reader, log)
    return log


def open_bag(path: Path, recover: bool):
    """Open a rosbag2 for reading.

    Parameters
    ----------
    path : Path
        rosbag2 folder or ``.mcap``/``.db3`` file.
    recover : bool
        Open an unfinished MCAP bag (its recorder crashed) with ``bag.salvage.SalvageReader``;
        without, such a bag raises ``InputError``.

    Returns
    -------
    rosbags.highlevel.AnyReader or bag.salvage.SalvageReader
        Open; the caller closes it.

    Raises
    ------
    InputError
        If the bag is damaged (without ``recover``) or cannot be opened.
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    damage = bag_damage(path)
    if damage is not None and not recover:
        raise InputError(damage_message(path, damage))
    try:
        if damage is not None:
            reader = SalvageReader(path)
        else:
            reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_KILTED))
        reader.open()
    except InputError:
        raise
    except Exception as exc:  # rosbags raises several unrelated types for unreadable bags
        raise InputError(f'{path}: cannot open rosbag2 ({exc})') from None
    return reader


def _warn_recovered(path: Path, topic: str, reader, log: JointStateLog) -> None:
    lost = '; '.join([reader.damage] + reader.scan.problems)
    warnings.warn(f'{path}: unfinished rosbag2 read up to its damage ({lost}): '
                  f'{len(log.receive)} {topic} messages, {log.receive[-1] - log.receive[0]:.3f} '
                  's; whatever the recorder had not written is lost', DataWarning, stacklevel=3)


def _collect(path, reader, conns, joints: list[str] | None) -> JointStateLog:
    names, stamps, receive = joints, [], []
    selection = None if joints is None else JointSelection(joints)
    fields = {'position': [], 'velocity': [], 'effort': []}
    for i, (conn, t_ns, raw) in enumerate(reader.messages(connections=conns)):
        msg = reader.deserialize(raw, conn.msgtype)
        if selection is not None:
            order = selection.columns(msg.name)
            if order is None:
                continue
        else:
            if names is None:
                names = list(msg.name)
            order = _message_order(path, i, list(msg.name), names)
        for key, rows in fields.items():
            values = np.asarray(getattr(msg, key), dtype=float)
            if len(values) == 0:
                rows.append(None)
            elif len(values) != len(msg.name):
                raise InputError(f'{path}: message {i}: {len(values)} {key} values for '
                                 f'{len(msg.name)} joint names')
            else:
                rows.append(values[order])
        stamps.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
        receive.append(1e-9 * t_ns)
    if not stamps:
        if selection is not None and selection.skipped:
            raise selection.error(str(path))
        raise InputError(f'{path}: topic has no messages')
    arrays = {}
    for key, rows in fields.items():
        present = [r is not None for r in rows]
        if not any(present):
            arrays[key] = None
        elif not all(present):
            raise InputError(f'{path}: message {present.index(False)} has no {key} values '
                             'while others do')
        else:
            arrays[key] = np.array(rows)
    if arrays['position'] is None:
        raise InputError(f'{path}: JointState messages carry no position')
    return JointStateLog(list(names), np.array(stamps), np.array(receive), arrays['position'],
                         arrays['velocity'], arrays['effort'],
                         skipped=0 if selection is None else selection.skipped)


def _message_order(path, index, msg_names, names):
    try:
        return [msg_names.index(n) for n in names]
    except ValueError:
        missing = [n for n in names if n not in msg_names]
        raise InputError(f'{path}: message {index} lacks joint(s) {", ".join(missing)}') from None
