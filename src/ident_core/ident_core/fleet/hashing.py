"""Content hashes of a task's inputs: a task whose hash equals the one its record holds is done
(resume). A hash covers the bytes of every file the task reads (the recording's files,
``data.provenance.recording_files``; the URDF; the models it validates with), its settings and
the package version, never paths or modification times: moving a fleet's files keeps its
results, touching them does not rerun anything."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from ..data.provenance import recording_files
from ..errors import InputError

#: Bytes read at a time.
CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes.

    Parameters
    ----------
    path : str or Path
        A URDF, a result, a data file: read in blocks of ``CHUNK`` bytes.

    Returns
    -------
    str
        Hexadecimal digest.

    Raises
    ------
    InputError
        If the file cannot be read.
    """
    digest = hashlib.sha256()
    try:
        with open(path, 'rb') as f:
            while block := f.read(CHUNK):
                digest.update(block)
    except OSError as exc:
        raise InputError(f'{path}: cannot read ({exc.strerror})') from None
    return digest.hexdigest()


def recording_sha256(path: str | Path) -> str:
    """The hash of what a recording is read from: its files' bytes, in order.

    Parameters
    ----------
    path : str or Path
        A dataset description, an ``.npz`` or a rosbag2.

    Returns
    -------
    str
        The digest of the files' names (relative to the recording) and bytes, in hexadecimal.

    Raises
    ------
    InputError
        If the recording is missing or a file unreadable; a file a description names that is
        missing counts as such (as does a description that cannot be read, by its bytes), so
        that the task that fails on it is not run again until it changes.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f'{path}: recording not found')
    try:
        files = recording_files(path)
    except InputError:          # a bad description: its bytes (the task says what is wrong)
        files = [path]
    return combined(f'{_relative(f, path)}:{file_sha256(f) if f.exists() else "missing"}'
                    for f in files)


def combined(parts: Iterable) -> str:
    """One hash of several values (digests, settings).

    Parameters
    ----------
    parts : iterable
        Strings, or values that JSON encodes (settings as ``model_dump(mode='json')``).

    Returns
    -------
    str
        Hexadecimal digest, including the package version (new code: new results).
    """
    digest = hashlib.sha256(_version().encode())
    for part in parts:
        text = part if isinstance(part, str) else json.dumps(part, sort_keys=True)
        digest.update(b'\0' + text.encode())
    return digest.hexdigest()


def _relative(file: Path, recording: Path) -> str:
    """A file's name as seen from its recording (not its absolute path)."""
    base = recording if recording.is_dir() else recording.parent
    try:
        return file.relative_to(base).as_posix()
    except ValueError:
        return file.name


def _version() -> str:
    try:
        return 'ident_core ' + metadata.version('ident_core')
    except metadata.PackageNotFoundError:      # run from the source tree
        return 'ident_core (source)'
