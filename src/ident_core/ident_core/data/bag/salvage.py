"""Reading the complete records of an unfinished MCAP bag (``damage``) with the part of the
rosbags ``AnyReader`` interface that ``data.readers`` uses."""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from .damage import bag_damage, damaged_mcap
from .mcap import Channel, McapScan, message_types, scan_mcap, scan_messages


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
        found = list(scan_messages(McapScan(self.path), wanted))
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
