"""Damaged rosbag2 recordings (MCAP): tell them apart, read what they hold, repair them.

A recorder that dies without closing its bag (SIGKILL, out of memory, power loss) leaves a bag
folder without ``metadata.yaml`` whose MCAP file ends without summary section and footer. The
complete records in it (the chunks the recorder flushed) are intact; what it held in memory is
lost. This module

* tells such a bag from a complete one (``bag_damage``) and from one still being written
  (``is_being_written``: a writer holds an advisory lock on its MCAP, ``lock_for_writing``);
* reads the messages of the complete records (``SalvageReader``, the part of the rosbags
  ``AnyReader`` interface that ``readers`` uses);
* repairs a bag folder (``repair_bag``) as ``ros2 bag reindex`` does: the messages of the complete
  records go to a new indexed MCAP ``<name>.recovered.mcap`` beside the original, then the
  ``metadata.yaml`` that names it is written atomically, and a ``recording.yaml`` says that the bag
  was recovered and how many seconds it covers. The original MCAP is never modified; until
  ``metadata.yaml`` exists the folder counts as damaged, so a repair cut short by another crash is
  simply done again.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import tempfile
from binascii import crc32
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

from ..errors import InputError
from ..files import dump_yaml, read_yaml, write_atomic

MAGIC = b'\x89MCAP0\r\n'
METADATA_FILE = 'metadata.yaml'
RECORDING_FILE = 'recording.yaml'
RECORDING_FORMAT = 'robot-ident/recording/1'
RECOVERED_SUFFIX = '.recovered.mcap'
_TEMP_PREFIX = '.robot-ident-repair-'
# MCAP record opcodes
_FOOTER, _SCHEMA, _CHANNEL, _MESSAGE, _CHUNK, _DATA_END = 0x02, 0x03, 0x04, 0x05, 0x06, 0x0F
_RECORD = struct.Struct('<BQ')
_MESSAGE_HEAD = struct.Struct('<HIQQ')          # channel, sequence, log time, publish time
_CHUNK_HEAD = struct.Struct('<QQQI')            # start, end, uncompressed size, crc
_U16, _U32, _U64 = struct.Struct('<H'), struct.Struct('<I'), struct.Struct('<Q')
_BAG_NAME = re.compile(r'(.+)_\d{8}-\d{6}(_\d+)?')


class Channel(NamedTuple):
    """A topic of an MCAP file (the fields of ``AnyReader`` connections that readers use).

    Parameters
    ----------
    id : int
        MCAP channel id.
    topic : str
        Topic name.
    msgtype : str
        ``pkg/msg/Name``.
    encoding : str
        Message encoding (``cdr``).
    schema_encoding : str
        ``ros2msg``, ``ros2idl`` or empty.
    msgdef : str
        The schema text (message definition).
    metadata : dict of str to str
        The channel's map, e.g. ``offered_qos_profiles``.
    """

    id: int
    topic: str
    msgtype: str
    encoding: str
    schema_encoding: str
    msgdef: str
    metadata: dict


@dataclass
class McapScan:
    """What one pass over an MCAP file found.

    Parameters
    ----------
    path : Path
        The file.
    channels : dict of int to Channel
        By channel id.
    counts : dict of int to int
        Messages per channel id.
    start_ns, end_ns : int or None
        Earliest and latest log (receive) time [ns since the epoch]; None without messages.
    size : int
        File size [bytes].
    intact : int
        Offset after the last complete record [bytes]; ``size - intact`` bytes were lost.
    footer : bool
        The file ends with its footer (it was closed).
    problems : list of str
        What was skipped (damaged chunks, the truncated tail), for messages.
    """

    path: Path
    channels: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    start_ns: int | None = None
    end_ns: int | None = None
    size: int = 0
    intact: int = 0
    footer: bool = False
    problems: list = field(default_factory=list)

    @property
    def messages(self) -> int:
        """Messages found."""
        return sum(self.counts.values())

    @property
    def seconds(self) -> float:
        """Log-time span of the messages found [s]."""
        return 0.0 if self.start_ns is None else (self.end_ns - self.start_ns) * 1e-9


@dataclass
class BagRepair:
    """The outcome of ``repair_bag``.

    Parameters
    ----------
    path : Path
        The bag folder.
    damage : str
        What was wrong (``bag_damage``).
    source : Path
        The damaged MCAP (left as it was).
    repaired : Path
        The new indexed MCAP that ``metadata.yaml`` names.
    scan : McapScan
        The messages recovered per channel, their time span, the bytes lost.
    """

    path: Path
    damage: str
    source: Path
    repaired: Path
    scan: McapScan

    @property
    def topics(self) -> dict[str, int]:
        """Messages recovered per topic."""
        return {c.topic: self.scan.counts.get(i, 0) for i, c in self.scan.channels.items()}


def has_footer(mcap: Path) -> bool:
    """True if the file ends with the MCAP magic (its footer was written).

    Parameters
    ----------
    mcap : Path
        The file.

    Returns
    -------
    bool
    """
    try:
        with open(mcap, 'rb') as f:
            if f.seek(0, os.SEEK_END) < 2 * len(MAGIC) + 29:
                return False
            f.seek(-len(MAGIC), os.SEEK_END)
            return f.read() == MAGIC
    except OSError:
        return False


def bag_damage(path: str | Path) -> str | None:
    """Why a rosbag2 cannot be read as it is, if it is an MCAP bag left unfinished.

    Parameters
    ----------
    path : str or Path
        A bag folder or an ``.mcap`` file.

    Returns
    -------
    str or None
        A short reason (``no metadata.yaml and x.mcap has no footer``), or None for a complete
        bag and for anything that is no MCAP bag at all (the normal readers report those).
    """
    path = Path(path)
    if path.is_file():
        if path.suffix == '.mcap' and not has_footer(path):
            return f'{path.name} has no footer'
        return None
    if not path.is_dir():
        return None
    if not (path / METADATA_FILE).is_file():
        mcap = damaged_mcap(path)
        if mcap is None:
            return None
        ending = 'has no footer' if not has_footer(mcap) else 'is complete'
        return f'no {METADATA_FILE} and {mcap.name} {ending}'
    for mcap in _listed_files(path):
        if mcap.suffix == '.mcap' and not has_footer(mcap):
            return f'{mcap.name} has no footer' if mcap.exists() else f'{mcap.name} is missing'
    return None


def damaged_mcap(folder: Path) -> Path | None:
    """The original MCAP of a bag folder: the one ``metadata.yaml`` lists, else the only
    ``*.mcap`` that is no ``*.recovered.mcap``.

    Parameters
    ----------
    folder : Path
        The bag folder.

    Returns
    -------
    Path or None
        None if there is none.

    Raises
    ------
    InputError
        If the folder holds several candidates.
    """
    if (folder / METADATA_FILE).is_file():
        listed = [p for p in _listed_files(folder) if p.suffix == '.mcap']
        return listed[0] if listed else None
    found = sorted(p for p in folder.glob('*.mcap') if not p.name.endswith(RECOVERED_SUFFIX))
    if len(found) > 1:
        raise InputError(f'{folder}: several MCAP files ({", ".join(p.name for p in found)}) '
                         f'and no {METADATA_FILE}; cannot tell which one to read')
    return found[0] if found else None


def _listed_files(folder: Path) -> list[Path]:
    try:
        info = read_yaml(folder / METADATA_FILE, 'rosbag2 metadata')
        names = info['rosbag2_bagfile_information']['relative_file_paths']
        return [folder / Path(str(n)).name for n in names]
    except (InputError, KeyError, TypeError):
        return []


def damage_message(path: str | Path, damage: str) -> str:
    """The one-line error for a damaged bag read without recovery.

    Parameters
    ----------
    path : str or Path
        The bag.
    damage : str
        ``bag_damage(path)``.

    Returns
    -------
    str
    """
    mcap = path if Path(path).is_file() else damaged_mcap(Path(path))
    if mcap is not None and is_being_written(mcap):
        return f'{path}: rosbag2 still being recorded ({damage}); stop the recording first'
    return (f'{path}: damaged rosbag2 ({damage}: its recorder did not close it); read the '
            'complete part with --recover (node parameter recover) or repair it with '
            '"robot-ident repair-bag"')


# --- locks ---------------------------------------------------------------------------------

def lock_for_writing(mcap: str | Path) -> BinaryIO:
    """Take the advisory lock that marks an MCAP as being written.

    Parameters
    ----------
    mcap : str or Path
        The file (it must exist).

    Returns
    -------
    file object
        Holds the lock until it is closed (or the process ends, however it ends).

    Raises
    ------
    BlockingIOError
        If another writer holds the lock.
    """
    f = open(mcap, 'rb')  # noqa: SIM115 (returned: it holds the lock)
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        f.close()
        raise
    return f


def is_being_written(mcap: str | Path) -> bool:
    """Whether a live writer holds the lock of ``lock_for_writing`` on the file.

    Parameters
    ----------
    mcap : str or Path
        The file.

    Returns
    -------
    bool
        False also for a file that cannot be opened.
    """
    try:
        with open(mcap, 'rb') as f:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


# --- scanning ------------------------------------------------------------------------------

def scan_mcap(path: str | Path) -> McapScan:
    """Go through an MCAP file record by record, without its index.

    Messages in complete chunks and complete top-level message records count; a chunk whose
    data do not decompress or fail their checksum is skipped (named in ``problems``); the
    complete messages at the start of a truncated uncompressed chunk count too.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    McapScan

    Raises
    ------
    InputError
        If the file cannot be read or does not start like an MCAP file.
    """
    scan = McapScan(Path(path))
    for _ in _messages(scan, None):
        pass
    return scan


def _messages(scan: McapScan, wanted: set[int] | None):
    """Yield (channel id, log time ns, data) of the messages of the channels ``wanted`` (all
    with None) in file order, filling ``scan`` as it goes."""
    path = scan.path
    try:
        f = open(path, 'rb')  # noqa: SIM115 (a generator: closed by the with below)
    except OSError as exc:
        raise InputError(f'{path}: cannot read ({exc.strerror})') from None
    with f:
        scan.size = f.seek(0, os.SEEK_END)
        f.seek(0)
        if scan.size < len(MAGIC):
            raise InputError(f'{path}: holds no MCAP data ({scan.size} bytes)')
        if f.read(len(MAGIC)) != MAGIC:
            raise InputError(f'{path}: not an MCAP file')
        schemas: dict[int, tuple[str, str, str]] = {}
        scan.intact = f.tell()
        while True:
            head = f.read(_RECORD.size)
            if len(head) < _RECORD.size:
                if head:
                    scan.problems.append(f'the file ends inside a record at byte {scan.intact} '
                                         f'of {scan.size}')
                return
            op, length = _RECORD.unpack(head)
            if op in (_FOOTER, _DATA_END):
                scan.footer = op == _FOOTER or has_footer(path)
                return
            if op not in (_SCHEMA, _CHANNEL, _MESSAGE, _CHUNK):
                if f.seek(length, os.SEEK_CUR) > scan.size:
                    scan.problems.append(f'a record cut off at byte {scan.intact}')
                    return
                scan.intact = f.tell()
                continue
            body = memoryview(f.read(length))
            if len(body) < length:
                if op == _CHUNK:
                    yield from _partial_chunk(scan, schemas, body, wanted)
                scan.problems.append(f'the file ends inside a record at byte {scan.intact} '
                                     f'of {scan.size}')
                return
            if op == _CHUNK:
                records = _chunk_records(scan, body)
                if records is not None:
                    yield from _records(scan, schemas, records, wanted, complete=True)
            else:
                yield from _records(scan, schemas, memoryview(head + bytes(body)), wanted,
                                    complete=True)
            scan.intact = f.tell()


def _chunk_records(scan: McapScan, body: memoryview) -> memoryview | None:
    """The records of a complete chunk, None (and a problem noted) if they are damaged."""
    from rosbags.rosbag2.storage_mcap import DECOMPRESSORS

    try:
        _, _, size, crc = _CHUNK_HEAD.unpack_from(body, 0)
        at = _CHUNK_HEAD.size
        compression, at = _string(body, at)
        (compressed,) = _U64.unpack_from(body, at)
        data = body[at + 8:at + 8 + compressed]
        raw = DECOMPRESSORS[compression](bytes(data), size)
        if len(raw) != size or (crc and crc32(raw) != crc):
            raise ValueError('size or checksum mismatch')
    except Exception as exc:     # struct.error, KeyError, decompressor errors
        scan.problems.append(f'chunk at byte {scan.intact} skipped ({exc})')
        return None
    return memoryview(raw)


def _partial_chunk(scan, schemas, body: memoryview, wanted):
    """The complete records at the start of a cut-off uncompressed chunk."""
    try:
        at = _CHUNK_HEAD.size
        compression, at = _string(body, at)
    except (struct.error, UnicodeDecodeError):
        return
    if compression == '':
        yield from _records(scan, schemas, body[at + 8:], wanted, complete=False)


def _records(scan: McapScan, schemas, buf: memoryview, wanted, complete: bool):
    """Parse schema, channel and message records in ``buf`` (other records skipped); a cut-off
    record at the end ends the parse (``complete`` False: expected)."""
    at, end = 0, len(buf)
    while at + _RECORD.size <= end:
        op, length = _RECORD.unpack_from(buf, at)
        start, at = at + _RECORD.size, at + _RECORD.size + length
        if at > end:
            break
        if op == _MESSAGE:
            channel, _, log_time, _ = _MESSAGE_HEAD.unpack_from(buf, start)
            if channel not in scan.channels:
                continue
            scan.counts[channel] = scan.counts.get(channel, 0) + 1
            if scan.start_ns is None or log_time < scan.start_ns:
                scan.start_ns = log_time
            if scan.end_ns is None or log_time > scan.end_ns:
                scan.end_ns = log_time
            if wanted is None or channel in wanted:
                yield channel, log_time, bytes(buf[start + _MESSAGE_HEAD.size:at])
        elif op == _SCHEMA:
            (key,) = _U16.unpack_from(buf, start)
            name, pos = _string(buf, start + 2)
            encoding, pos = _string(buf, pos)
            data, _ = _string(buf, pos)
            schemas[key] = (name, encoding, data)
        elif op == _CHANNEL:
            key, schema = struct.unpack_from('<HH', buf, start)
            topic, pos = _string(buf, start + 4)
            encoding, pos = _string(buf, pos)
            metadata = _string_map(buf, pos)
            name, schema_encoding, msgdef = schemas.get(schema, ('', '', ''))
            scan.channels[key] = Channel(key, topic, name, encoding, schema_encoding, msgdef,
                                         metadata)
            scan.counts.setdefault(key, 0)
    if at != end and complete:
        scan.problems.append(f'a chunk at byte {scan.intact} ends inside a record')


def _string(buf, at: int) -> tuple[str, int]:
    (n,) = _U32.unpack_from(buf, at)
    if at + 4 + n > len(buf):
        raise struct.error('string beyond its record')
    return bytes(buf[at + 4:at + 4 + n]).decode(), at + 4 + n


def _string_map(buf, at: int) -> dict[str, str]:
    (n,) = _U32.unpack_from(buf, at)
    at, end, out = at + 4, at + 4 + n, {}
    while at < end:
        key, at = _string(buf, at)
        out[key], at = _string(buf, at)
    return out


# --- reading -------------------------------------------------------------------------------

class SalvageReader:
    """Messages of the complete records of an unfinished MCAP bag, with the interface of the
    rosbags ``AnyReader`` that ``readers`` uses (``connections``, ``messages``,
    ``deserialize``, context manager).

    Parameters
    ----------
    path : str or Path
        Bag folder or ``.mcap`` file.

    Raises
    ------
    InputError
        On ``open()``: no MCAP, not readable, or no message definitions to decode it.
    """

    def __init__(self, path: str | Path):
        path = Path(path)
        mcap = path if path.is_file() else damaged_mcap(path)
        if mcap is None:
            raise InputError(f'{path}: no MCAP file in the rosbag2 folder')
        self.path = mcap
        self.damage = bag_damage(path) or 'complete'
        self.scan: McapScan | None = None
        self.connections: list[Channel] = []
        self._typestore = None

    def open(self) -> None:
        """Scan the file: channels, message counts, time span, damage."""
        self.scan = scan_mcap(self.path)
        self.connections = list(self.scan.channels.values())
        self._typestore = message_types(self.connections, self.path)

    def close(self) -> None:
        """Nothing to release (every pass opens the file anew)."""

    def __enter__(self) -> SalvageReader:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def messages(self, connections=None):
        """(connection, log time ns, CDR bytes) of the complete messages, ordered by log time.

        Parameters
        ----------
        connections : list of Channel, optional
            Only these (default all).
        """
        wanted = {c.id for c in (connections or self.connections)}
        found = list(_messages(McapScan(self.path), wanted))
        found.sort(key=lambda m: m[1])
        channels = self.scan.channels
        for channel, log_time, data in found:
            yield channels[channel], log_time, data

    def deserialize(self, raw: bytes, msgtype: str):
        """Decode the CDR bytes of a message.

        Parameters
        ----------
        raw : bytes
            CDR bytes with their encapsulation header.
        msgtype : str
            A message type found in the file.

        Returns
        -------
        object
            The rosbags message object.
        """
        return self._typestore.deserialize_cdr(raw, msgtype)


def message_types(channels: list[Channel], path: Path):
    """A rosbags typestore with the message definitions of the channels (as ``AnyReader``
    builds it).

    Parameters
    ----------
    channels : list of Channel
        Their ``msgdef`` are parsed.
    path : Path
        The file, for messages.

    Returns
    -------
    rosbags Typestore
        The ROS 2 Kilted types if the file carries no definition.

    Raises
    ------
    InputError
        If a definition does not parse.
    """
    from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore

    types = {}
    try:
        for c in channels:
            if c.schema_encoding == 'ros2msg' and c.msgdef:
                types.update(get_types_from_msg(c.msgdef, c.msgtype))
            elif c.schema_encoding == 'ros2idl' and c.msgdef:
                sep = '=' * 80 + '\n'
                parts = c.msgdef.split(sep)[1:] if c.msgdef.startswith(sep) else [c.msgdef]
                for part in parts:
                    idl = part.split('\n', 1)[1] if part.startswith('IDL: ') else part
                    types.update(get_types_from_idl(idl))
    except Exception as exc:     # rosbags' parser errors have no common base
        raise InputError(f'{path}: message definition of {c.topic} does not parse ({exc})') \
            from None
    if not types:
        return get_typestore(Stores.ROS2_KILTED)
    store = get_typestore(Stores.EMPTY)
    store.register(types)
    return store


# --- repair --------------------------------------------------------------------------------

def repair_bag(path: str | Path) -> BagRepair:
    """Make an unfinished MCAP bag folder readable again, keeping its original MCAP.

    Writes ``<name>.recovered.mcap`` (indexed, every complete message of the original) beside
    the original, then ``metadata.yaml`` naming it (atomically: the commit point), then
    ``recording.yaml`` (if the folder has none) with ``recovered: true`` and the seconds
    covered. A ``metadata.yaml`` that was there is kept as ``metadata.damaged.yaml``.

    Parameters
    ----------
    path : str or Path
        The bag folder.

    Returns
    -------
    BagRepair

    Raises
    ------
    InputError
        If the folder is no damaged MCAP bag (complete, not a bag, being recorded) or holds no
        complete message.
    OSError
        If the repaired files cannot be written (the original is left as it was).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(f'{folder}: not a rosbag2 folder')
    damage = bag_damage(folder)
    if damage is None:
        what = 'complete' if (folder / METADATA_FILE).is_file() else 'not an MCAP bag'
        raise InputError(f'{folder}: nothing to repair ({what})')
    source = damaged_mcap(folder)
    if source is None or not source.exists():
        raise InputError(f'{folder}: {damage}; no MCAP data left to recover')
    if is_being_written(source):
        raise InputError(f'{folder}: still being recorded ({source.name} is locked by its '
                         'writer)')
    for stale in folder.glob(f'{_TEMP_PREFIX}*'):
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX, dir=folder))
    try:
        scan, written = _rewrite(source, work / 'bag')
        repaired = folder / (source.name[:-len('.mcap')] + RECOVERED_SUFFIX)
        os.replace(written, repaired)
        _write_metadata(folder, work / 'bag' / METADATA_FILE, repaired, source)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = BagRepair(folder, damage, source, repaired, scan)
    summary = folder / RECORDING_FILE
    if not summary.exists():
        write_atomic(summary, dump_yaml(recovery_summary(result)))
    return result


def _rewrite(source: Path, target: Path) -> tuple[McapScan, Path]:
    """Copy the complete messages of ``source`` into a new rosbag2 ``target``; returns the scan
    and the new MCAP (synced to disk)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.metadata import parse_qos

    first = scan_mcap(source)
    if not first.messages:
        raise InputError(f'{source}: no complete message to recover '
                         f'({"; ".join(first.problems) or "no data"})')
    store = message_types(list(first.channels.values()), source)
    writer = Writer(target, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connections = {}
    try:
        for key, c in first.channels.items():
            connections[key] = writer.add_connection(
                c.topic, c.msgtype, msgdef=c.msgdef or None,
                rihs01=store.hash_rihs01(c.msgtype) if c.msgdef else None,
                typestore=None if c.msgdef else store, serialization_format=c.encoding,
                offered_qos_profiles=parse_qos(c.metadata.get('offered_qos_profiles', '')))
        scan = McapScan(source)
        for channel, log_time, data in _messages(scan, None):
            writer.write(connections[channel], log_time, data)
    except BaseException:
        writer.abort()
        raise
    writer.close()
    written = target / f'{target.name}.mcap'
    with open(written, 'rb') as f:
        os.fsync(f.fileno())
    return scan, written


def _write_metadata(folder: Path, written: Path, repaired: Path, source: Path) -> None:
    info = read_yaml(written, 'rosbag2 metadata')
    bag = info['rosbag2_bagfile_information']
    bag['relative_file_paths'] = [repaired.name]
    for f in bag['files']:
        f['path'] = repaired.name
    bag['custom_data'] = {**(bag.get('custom_data') or {}), 'recovered_from': source.name}
    old = folder / METADATA_FILE
    if old.exists() and not (folder / 'metadata.damaged.yaml').exists():
        write_atomic(folder / 'metadata.damaged.yaml', old.read_bytes())
    write_atomic(old, dump_yaml(info))


def recovery_summary(repair: BagRepair) -> dict:
    """The ``recording.yaml`` of a repaired bag.

    Parameters
    ----------
    repair : BagRepair

    Returns
    -------
    dict
        ``format``, ``path``, ``experiment`` (from the folder name), ``recording`` (False),
        ``recovered`` (True), ``recovered_seconds`` (log-time span of the recovered messages),
        ``start_time``/``end_time`` (s since the epoch), ``joint_state_messages``,
        ``excitation_messages`` and ``topics`` (messages per topic), ``lost_bytes``,
        ``original_file``, ``repaired_file``, ``note``.
    """
    scan = repair.scan
    by_type: dict[str, int] = {}
    for key, c in scan.channels.items():
        by_type[c.msgtype] = by_type.get(c.msgtype, 0) + scan.counts.get(key, 0)
    match = _BAG_NAME.fullmatch(repair.path.name)
    end = None if scan.end_ns is None else scan.end_ns * 1e-9
    return {
        'format': RECORDING_FORMAT, 'path': str(repair.path.absolute()),
        'experiment': match.group(1) if match else repair.path.name, 'recording': False,
        'recovered': True, 'recovered_seconds': scan.seconds,
        'start_time': None if scan.start_ns is None else scan.start_ns * 1e-9, 'end_time': end,
        'joint_state_messages': by_type.get('sensor_msgs/msg/JointState', 0),
        'excitation_messages': by_type.get('ident_msgs/msg/ExcitationTrajectory', 0),
        'topics': repair.topics, 'lost_bytes': scan.size - scan.intact,
        'original_file': repair.source.name, 'repaired_file': repair.repaired.name,
        'note': f'recovered from an unfinished bag ({repair.damage}); what the recorder had not '
                f'written after {end if end is None else f"{end:.3f}"} s is lost',
    }


def find_damaged_bags(directory: str | Path) -> list[tuple[Path, str]]:
    """The unfinished MCAP bags among the folders of ``directory`` that no writer holds.

    Parameters
    ----------
    directory : str or Path
        E.g. the recorder's ``output_dir``.

    Returns
    -------
    list of (Path, str)
        Bag folder and ``bag_damage`` reason, sorted by name.
    """
    found = []
    for folder in sorted(p for p in Path(directory).iterdir() if p.is_dir()):
        try:
            damage = bag_damage(folder)
            mcap = damaged_mcap(folder) if damage else None
        except InputError as exc:
            found.append((folder, str(exc)))
            continue
        if damage and not (mcap is not None and is_being_written(mcap)):
            found.append((folder, damage))
    return found
