"""Progress of long computations: the core reports it, the caller shows it (the ``robot-ident``
command draws tqdm bars, ``ident_core.cli.progress``; the core never prints).

A function that can take long takes ``progress=None``: either a callable taking an increment
(``progress(n)``), or an object with ``update(n)`` and optionally ``set_description(text)`` and
a ``total`` attribute (a ``tqdm`` bar is one). The core announces the work it finds with
``expect`` (added to ``total``, when there is one) and reports the work done with ``advance``;
the increments of a call sum to what it announced.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: What the ``progress`` arguments accept (see the module docstring).
Progress = Callable[[int], Any] | Any | None


def advance(progress: Progress, n: int = 1) -> None:
    """Report ``n`` units of work done.

    Parameters
    ----------
    progress : callable, object with ``update(n)``, or None
        The receiver; None: nothing happens.
    n : int
        Units done since the last report.
    """
    if progress is None or n == 0:
        return
    update = getattr(progress, 'update', None)
    (update if callable(update) else progress)(n)


def expect(progress: Progress, n: int) -> None:
    """Announce ``n`` more units of work: added to ``progress.total`` when it has one.

    Parameters
    ----------
    progress : callable, object with ``update(n)``, or None
        The receiver; a plain callable or None is not told.
    n : int
        Units of work found.
    """
    if progress is None or n == 0 or not hasattr(progress, 'total'):
        return
    progress.total = (progress.total or 0) + n
    refresh = getattr(progress, 'refresh', None)
    if callable(refresh):
        refresh()


def describe(progress: Progress, text: str) -> None:
    """Say what is being done now (``progress.set_description``, when there is one).

    Parameters
    ----------
    progress : callable, object with ``update(n)``, or None
        The receiver.
    text : str
        Short description (a recording, a method, a fit).
    """
    setter = getattr(progress, 'set_description', None)
    if callable(setter):
        setter(text)
