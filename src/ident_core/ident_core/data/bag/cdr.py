"""Fields of a serialized ``sensor_msgs/msg/JointState`` read without deserialising it: the
header stamp and the joint names, as the recorder needs them at 1 kHz.

The bytes are those of a ``raw=True`` subscription: a 4-byte encapsulation header (its second
byte's lowest bit set for little endian), then the message in (X)CDR, aligned relative to the
end of that header: ``int32 sec, uint32 nanosec, string frame_id, sequence<string> name, ...``;
a string is a ``uint32`` length (its terminating NUL included) and the bytes, every length
4-byte aligned (the same in XCDR1 and in XCDR2's plain encoding).
"""
from __future__ import annotations

import struct

from ...errors import InputError

_STAMP = {True: struct.Struct('<iI'), False: struct.Struct('>iI')}
_UINT32 = {True: struct.Struct('<I'), False: struct.Struct('>I')}
#: Start of the message after the encapsulation header.
_BODY = 4


def joint_state_stamp(raw: bytes) -> int:
    """The header stamp of a serialized JointState.

    Parameters
    ----------
    raw : bytes
        CDR bytes with their encapsulation header.

    Returns
    -------
    int
        [ns since the epoch].

    Raises
    ------
    InputError
        (a ValueError) For fewer than 12 bytes.
    """
    try:
        sec, nanosec = _STAMP[_little(raw)].unpack_from(raw, _BODY)
    except (struct.error, IndexError):
        raise InputError(f'message of {len(raw)} bytes is too short for a JointState') \
            from None
    return sec * 1_000_000_000 + nanosec


def joint_state_names(raw: bytes) -> tuple[str, ...]:
    """The joint names (``name``) of a serialized JointState.

    Parameters
    ----------
    raw : bytes
        The message as a raw subscription takes it (the encapsulation header first).

    Returns
    -------
    tuple of str
        In the message's order, repeated names kept.

    Raises
    ------
    InputError
        (a ValueError) If the bytes end inside the names, or a name is not UTF-8.
    """
    uint32 = _UINT32[_little(raw)]
    try:
        pos = _skip_string(raw, _BODY + 8, uint32)           # after the stamp: frame_id
        pos = _aligned(pos)
        (count,) = uint32.unpack_from(raw, pos)
        pos += 4
        if count > len(raw):
            raise IndexError
        names = []
        for _ in range(count):
            pos = _aligned(pos)
            (length,) = uint32.unpack_from(raw, pos)
            end = pos + 4 + length
            if length == 0 or end > len(raw):
                raise IndexError
            names.append(raw[pos + 4:end - 1].decode())
            pos = end
    except (struct.error, IndexError):
        raise InputError(f'JointState of {len(raw)} bytes ends inside its joint names') \
            from None
    except UnicodeDecodeError:
        raise InputError('JointState joint name is not UTF-8') from None
    return tuple(names)


def _little(raw: bytes) -> bool:
    try:
        return bool(raw[1] & 1)
    except IndexError:
        raise InputError(f'message of {len(raw)} bytes has no CDR header') from None


def _aligned(pos: int) -> int:
    """``pos`` moved to the next multiple of 4 from the start of the message."""
    return _BODY + ((pos - _BODY + 3) & ~3)


def _skip_string(raw: bytes, pos: int, uint32: struct.Struct) -> int:
    pos = _aligned(pos)
    (length,) = uint32.unpack_from(raw, pos)
    if pos + 4 + length > len(raw):
        raise IndexError
    return pos + 4 + length
