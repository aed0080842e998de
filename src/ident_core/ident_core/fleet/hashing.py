"""Content hashes of a task's inputs: a task whose hash equals the one its record holds is done
(resume). A hash covers the bytes of every file the task reads (the recording's files,
``data.provenance.recording_files``; the URDF; the models it validates with), its settings and
the package version, never paths or modification times: moving a fleet's files keeps its
results, touching them does not rerun anything.

A plant's history grows every night; ``FileHashes`` remembers each file's hash with its size
and modification time (FLEET_DIR/.file-hashes.json), so that a run reads again only the files
that are new or were written since (a touched file is hashed again, and its task still does not
run when its bytes are the same)."""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from ..data.provenance import recording_files
from ..errors import InputError
from ..files import write_atomic

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


class FileHashes:
    """File hashes remembered by path, size and modification time.

    Parameters
    ----------
    store : str or Path, optional
        The JSON file that keeps them between runs (unreadable or missing: start empty);
        None: remember for this process only.
    """

    def __init__(self, store: str | Path | None = None):
        self.store = Path(store) if store else None
        self.known, self.changed = {}, False
        try:
            self.known = json.loads(self.store.read_text()) if self.store else {}
        except (OSError, ValueError):
            pass

    def sha256(self, path: str | Path) -> str:
        """``file_sha256``, read again only when the file's size or time changed.

        Parameters
        ----------
        path : str or Path
            Any file; remembered by its absolute path.

        Returns
        -------
        str
            As ``file_sha256`` gives it.

        Raises
        ------
        InputError
            If the file is missing or unreadable.
        """
        key = str(Path(path).absolute())
        try:
            stat = os.stat(path)
        except OSError as exc:
            raise InputError(f'{path}: cannot read ({exc.strerror})') from None
        stamp = [stat.st_size, stat.st_mtime_ns]
        entry = self.known.get(key)
        if entry is not None and entry[:2] == stamp:
            return entry[2]
        digest = file_sha256(path)
        self.known[key], self.changed = [*stamp, digest], True
        return digest

    def save(self) -> None:
        """Write the store, if anything was hashed anew (atomically)."""
        if self.store is not None and self.changed:
            write_atomic(self.store, json.dumps(self.known))
            self.changed = False


def recording_sha256(path: str | Path, hashes: FileHashes | None = None) -> str:
    """The hash of what a recording is read from: its files' bytes, in order.

    Parameters
    ----------
    path : str or Path
        A dataset description, an ``.npz`` or a rosbag2.
    hashes : FileHashes, optional
        Remembered file hashes (default: read every file).

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
    hashes = hashes or FileHashes()
    return combined(f'{_relative(f, path)}:{hashes.sha256(f) if f.exists() else "missing"}'
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
