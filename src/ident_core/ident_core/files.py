"""Reading and writing the suite's files: YAML documents in, atomic writes out.

Every file the suite writes (results, trajectories, ground truth, recording summaries) goes
through :func:`write_atomic`, so a reader never sees a half-written file and an existing file is
replaced only by a complete new one.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import yaml

from .errors import InputError

#: The safe loader of libyaml (several times faster: a fleet reads hundreds of records), else
#: PyYAML's own.
_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def read_yaml(path: str | Path, what: str = 'file'):
    """Parse a YAML file.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str, optional
        What the file is, for the error message (``'excitation config'``, ...).

    Returns
    -------
    object
        The document (``None`` for an empty file).

    Raises
    ------
    InputError
        If the file is missing or unreadable, or is not valid YAML; the message names the file.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InputError(f'{path}: {what} not found') from None
    except OSError as exc:
        raise InputError(f'{path}: cannot read {what} ({exc.strerror})') from None
    except UnicodeDecodeError:
        raise InputError(f'{path}: not a text file, cannot be a {what}') from None
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        pass                      # the pure-Python parser says where and what, as always
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' at line {mark.line + 1}, column {mark.column + 1}' if mark else ''
        problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
        raise InputError(f'{path}: invalid YAML{where} ({problem})') from None


class _Dumper(yaml.SafeDumper):
    """Block style, except lists of scalars (a joint vector, a matrix row) on one line."""

    def represent_list(self, data):
        flow = all(not isinstance(x, (list, dict)) for x in data)
        return self.represent_sequence('tag:yaml.org,2002:seq', data, flow_style=flow)


_Dumper.add_representer(list, _Dumper.represent_list)


def dump_yaml(document) -> str:
    """YAML text of a document of plain Python types, keys in their given order.

    Parameters
    ----------
    document : dict or list
        Plain Python types (no numpy scalars).

    Returns
    -------
    str
        Block-style YAML with lists of scalars on one line, lines up to 120 characters.
    """
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def check_readable(path: str | Path, what: str = 'file') -> Path:
    """Check that a file exists and can be read, telling a missing file from an unreadable one.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str, optional
        What the file is, for the message (``'URDF'``, ...).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        If it is missing, a folder, or cannot be read (naming the file and the reason).
    """
    path = Path(path)
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        raise InputError(f'{path}: {what} not found') from None
    except OSError as exc:
        raise InputError(f'{path}: cannot read {what} ({exc.strerror})') from None
    if is_folder:
        raise InputError(f'{path}: is a folder, not a {what}')
    if not os.access(path, os.R_OK):
        raise InputError(f'{path}: cannot read {what} (permission denied)')
    return path


def check_output(path: str | Path, option: str) -> Path:
    """Check before any work that a file can be written where an option names it.

    Parameters
    ----------
    path : str or Path
        The file to write (its missing folders are created when it is written).
    option : str
        The option or field naming it, for the message (``--out``).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        If it names a folder, a part of its folder is a file, or the nearest existing folder
        is not writable.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f'{option} {path}: is a folder, not a file')
    return _check_writable(path, path.parent, option)


def check_output_dir(path: str | Path, option: str) -> Path:
    """Check before any work that files can be written into a folder an option names.

    Parameters
    ----------
    path : str or Path
        The folder (created when the first file is written).
    option : str
        The option naming it, for the message (``--report``).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        If it, or a part of it, is a file, or the nearest existing folder is not writable.
    """
    path = Path(path)
    return _check_writable(path, path, option)


def _check_writable(path: Path, folder: Path, option: str) -> Path:
    """``path``, once the nearest existing folder of ``folder`` is a writable folder."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f'{option} {path}: {folder} is a file, not a folder')
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f'{option} {path}: folder {folder} is not writable')
    return path


def write_atomic(path: str | Path, content: str | bytes) -> Path:
    """Write a file through a temporary file in the same folder and a rename.

    Parameters
    ----------
    path : str or Path
        Destination; its folder is created if missing.
    content : str or bytes
        Text, or bytes written as they are.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        If the folder or the file cannot be written (``path`` is then left as it was); its
        ``filename`` is ``path``.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.', suffix='.tmp')
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)            # mkstemp creates 0600 files
        with os.fdopen(fd, 'wb' if isinstance(content, bytes) else 'w') as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
