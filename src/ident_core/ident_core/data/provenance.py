"""Where a recording comes from: the files it reads (``recording_files``, what a content hash
covers) and when it started (``recording_start``: a dataset description's ``start_time``, a
rosbag2's first message)."""
from __future__ import annotations

import datetime
from contextlib import closing
from pathlib import Path

from ..errors import InputError
from ..files import read_yaml
from ..schema import parse
from .datasets import is_bag, resolve_path
from .description import DatasetDescription
from .readers import open_bag


def recording_files(path: str | Path) -> list[Path]:
    """The files a recording is read from.

    Parameters
    ----------
    path : str or Path
        A dataset description, an ``.npz``, a rosbag2 folder or ``.mcap``/``.db3`` file.

    Returns
    -------
    list of Path
        A description, then the data files it names (every file of a bag folder it names);
        the file itself; every file of a bag folder, by name.

    Raises
    ------
    InputError
        If a description cannot be read or names a file through an unset variable.
    """
    path = Path(path)
    if path.is_dir():
        return sorted((p for p in path.rglob('*') if p.is_file()),
                      key=lambda p: p.relative_to(path).as_posix())
    if path.suffix not in ('.yaml', '.yml'):
        return [path]
    spec = parse(DatasetDescription, read_yaml(path, 'dataset description'), path)
    named = [('file', spec.file)] + [(f'{k}.file', s.file) for k, s in (
        ('position', spec.position), ('velocity', spec.velocity), ('effort', spec.effort))
        if s is not None and s.file]
    files = [path]
    for field, value in named:
        try:
            data = resolve_path(value, path.parent, field)
        except InputError as exc:
            raise InputError(f'{path}: {exc}') from None
        files += recording_files(data) if data.is_dir() else [data]
    return files


def recording_start(path: str | Path) -> tuple[datetime.datetime | None, str]:
    """When a recording started.

    Parameters
    ----------
    path : str or Path
        The recording (any kind ``recording_files`` takes).

    Returns
    -------
    time : datetime.datetime or None
        With a time zone (a description's time without one is taken as UTC); None if unknown.
    source : {'start_time', 'bag', 'none'}
        The description's ``start_time``, the bag's first message, or none.

    Raises
    ------
    InputError
        If a description or bag cannot be read.
    """
    path = Path(path)
    if path.suffix in ('.yaml', '.yml') and path.is_file():
        spec = parse(DatasetDescription, read_yaml(path, 'dataset description'), path)
        if spec.start_time is None:
            return None, 'none'
        time = spec.start_time
        return (time if time.tzinfo else time.replace(tzinfo=datetime.UTC)), 'start_time'
    if is_bag(path):
        try:
            with closing(open_bag(path, recover=False)) as reader:
                start = reader.start_time
        except InputError:                   # unfinished: no index to tell; read in order
            return None, 'none'
        if not start or start >= 2**63 - 1:      # an empty bag
            return None, 'none'
        return datetime.datetime.fromtimestamp(start / 1e9, datetime.UTC), 'bag'
    return None, 'none'
