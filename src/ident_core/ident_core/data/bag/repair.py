"""Repairing an unfinished MCAP bag folder (``damage``) as ``ros2 bag reindex`` does.

The messages of the complete records go to a new indexed MCAP ``<name>.recovered.mcap`` beside
the original, then the ``metadata.yaml`` that names it is written atomically, and a
``recording.yaml`` says that the bag was recovered and how many seconds it covers
(``summary.recovery_summary``). The original MCAP is never modified; until ``metadata.yaml``
exists the folder counts as damaged, so a repair cut short by another crash is simply done
again.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...files import dump_yaml, read_yaml, write_atomic
from .damage import bag_damage, damaged_mcap
from .format import METADATA_FILE, RECORDING_FILE, RECOVERED_SUFFIX
from .lock import is_being_written
from .mcap import McapScan, message_types, scan_mcap, scan_messages
from .summary import recovery_summary

_TEMP_PREFIX = '.robot-ident-repair-'


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
        return self.scan.topics


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
        write_atomic(summary, dump_yaml(recovery_summary(folder, damage, scan, source, repaired)))
    return result


def _rewrite(source: Path, target: Path) -> tuple[McapScan, Path]:
    """Copy the complete messages of ``source`` into a new rosbag2 ``target``; returns the scan
    and the new MCAP (synced to disk)."""
    # lazy: the verbs that read recordings import this package without needing rosbags
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
        for channel, log_time, data in scan_messages(scan, None):
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
