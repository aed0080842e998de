"""BLAS threads of the suite's processes: one by default.

Multithreaded OpenBLAS pays off only on large factorisations, and on two cores it
oversubscribes them as soon as another process runs: its threads wait for each other on every
small product. ``benchmarks/bench_identify.py`` on the 2-core reference machine, 60 s at 1 kHz
of a 7-DOF arm, regressor + WLS, median of 5 (loaded: one CPU-bound process beside):

======================================  =========  =========  =========  =========
BLAS threads                            1, idle    1, loaded  2, idle    2, loaded
======================================  =========  =========  =========  =========
automatic decimation (10 400 rows)      0.22 s     0.22 s     0.35 s     0.44 s
no decimation (WLS on 415 800 rows)     4.5 s      4.8 s      3.1 s      5.0 s
======================================  =========  =========  =========  =========

The base-parameter QR alone takes 0.03 s on one thread, 0.14 s idle and 0.27 s loaded on two.
With other jobs using about one more core on top of the loaded case, two threads took 1.8 s and
11.5 s.

So one thread, unless ``ROBOT_IDENT_BLAS_THREADS`` (a positive integer) asks for more, e.g. 2
for WLS on all rows of long recordings on an idle machine. The ``robot-ident`` command, the
nodes (``ident_ros.lifecycle.run``) and the benchmarks apply the limit.
"""
from __future__ import annotations

import os

from .errors import InputError

ENVIRONMENT_VARIABLE = 'ROBOT_IDENT_BLAS_THREADS'
DEFAULT_THREADS = 1


def blas_threads() -> int:
    """The number of BLAS threads to use.

    Returns
    -------
    int
        ``$ROBOT_IDENT_BLAS_THREADS`` if set, else ``DEFAULT_THREADS`` (1).

    Raises
    ------
    InputError
        If the variable is set to anything but a positive integer.
    """
    text = os.environ.get(ENVIRONMENT_VARIABLE, '').strip()
    if not text:
        return DEFAULT_THREADS
    if not text.isdecimal() or int(text) < 1:
        raise InputError(f'{ENVIRONMENT_VARIABLE} must be a positive integer, got {text!r}')
    return int(text)


def limit_blas_threads(threads: int | None = None):
    """Limit the thread pools of the BLAS libraries loaded now (numpy's and scipy's OpenBLAS).

    Call it after importing the modules that do the work: a library loaded later keeps its own
    default. The limit holds for the whole process, every thread (OpenBLAS has one pool).

    Parameters
    ----------
    threads : int, optional
        Threads per library (default: ``blas_threads()``).

    Returns
    -------
    threadpoolctl.threadpool_limits
        Already in force; as a context manager it restores the previous limits on exit, else
        the limit lasts until the process ends.

    Raises
    ------
    InputError
        If ``threads`` is not given and ``$ROBOT_IDENT_BLAS_THREADS`` is not a positive
        integer.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads or blas_threads(), user_api='blas')
