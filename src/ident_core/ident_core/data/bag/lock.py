"""The advisory lock a writer holds on the MCAP it writes, so that a repair never takes a bag
that is still being recorded for a damaged one. The lock ends with its file object, or with the
process however it ends (a killed recorder leaves no stale lock)."""
from __future__ import annotations

import fcntl
from pathlib import Path
from typing import BinaryIO


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
