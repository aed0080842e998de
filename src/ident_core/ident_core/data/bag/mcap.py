"""MCAP files read record by record, without their index: what a recorder that was killed
left (no summary section, no footer, maybe a record cut off) is read up to the last complete
record. Messages in complete chunks and complete top-level message records count; a chunk whose
data do not decompress or fail their checksum is skipped (named in ``McapScan.problems``); the
complete messages at the start of a truncated uncompressed chunk count too. The rosbags
modules this needs are imported when a file is read (importing ``data.readers`` stays cheap).
"""
from __future__ import annotations

import os
import struct
from binascii import crc32
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...errors import InputError

MAGIC = b'\x89MCAP0\r\n'
# MCAP record opcodes
_FOOTER, _SCHEMA, _CHANNEL, _MESSAGE, _CHUNK, _DATA_END = 0x02, 0x03, 0x04, 0x05, 0x06, 0x0F
_RECORD = struct.Struct('<BQ')
_MESSAGE_HEAD = struct.Struct('<HIQQ')          # channel, sequence, log time, publish time
_CHUNK_HEAD = struct.Struct('<QQQI')            # start, end, uncompressed size, crc
_U16, _U32, _U64 = struct.Struct('<H'), struct.Struct('<I'), struct.Struct('<Q')


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

    @property
    def topics(self) -> dict[str, int]:
        """Messages found per topic."""
        return {c.topic: self.counts.get(i, 0) for i, c in self.channels.items()}


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
    for _ in scan_messages(scan, None):
        pass
    return scan


def scan_messages(scan: McapScan, wanted: set[int] | None):
    """The messages of an MCAP file in file order, filling a scan as it goes.

    Parameters
    ----------
    scan : McapScan
        A new scan of the file (``McapScan(path)``); filled with what the pass finds.
    wanted : set of int or None
        Channel ids whose messages are yielded (None: all); all count in ``scan``.

    Yields
    ------
    channel : int
        Channel id.
    log_time : int
        Log (receive) time [ns since the epoch].
    data : bytes
        The message (CDR with its encapsulation header).

    Raises
    ------
    InputError
        If the file cannot be read or does not start like an MCAP file.
    """
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
    from rosbags.rosbag2.storage_mcap import DECOMPRESSORS  # lazy: see the module docstring

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
    # lazy: see the module docstring
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
