"""Progress bars of the ``robot-ident`` verbs: tqdm on stderr, only when stderr is a terminal
and ``--no-progress`` is not given; never on stdout, and cleared before an error line.

Every verb has ``--no-progress`` (``cli.build_parser``). A ``Bar`` is the ``progress``
argument of the core functions (``ident_core.progress``)::

    with progress_bar(args, 'identify') as bar:
        model = identify(robot, datasets, config, progress=bar)
"""
from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Iterator


def progress_bar(args: argparse.Namespace | None, description: str = '', total: int = 0,
                 unit: str = 'step') -> Bar:
    """A bar for a verb, off with ``--no-progress`` or when stderr is not a terminal.

    Parameters
    ----------
    args : argparse.Namespace or None
        The verb's options (``no_progress``).
    description : str
        Text in front of the bar.
    total : int
        Units of work known at the start (the core adds what it finds).
    unit : str
        Name of a unit.

    Returns
    -------
    Bar
    """
    return Bar(description, total, unit, disable=bool(getattr(args, 'no_progress', False)))


class Bar:
    """A tqdm bar on stderr, or nothing; the ``progress`` receiver of the core functions.

    Parameters
    ----------
    description : str
        Text in front of the bar.
    total : int
        Units of work known at the start.
    unit : str
        Name of a unit.
    disable : bool
        No bar at all.
    file : file object, optional
        Where the bar goes (default ``sys.stderr``); a bar is drawn only if it is a terminal.
    """

    def __init__(self, description: str = '', total: int = 0, unit: str = 'step',
                 disable: bool = False, file=None):
        self.file = sys.stderr if file is None else file
        self.enabled = not disable and _is_terminal(self.file)
        self.description, self.unit = description, unit
        self.done, self._total = 0, total
        self._bar = None
        self._stage = None
        self._closed = False
        if description or total:
            self._ensure()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self.close(clear=kind is not None)

    @property
    def total(self) -> int:
        """Units of work known so far.

        Returns
        -------
        int
        """
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        self._total = value
        if self._ensure():
            self._bar.total = value or None
            self._bar.refresh()

    def update(self, n: int = 1) -> None:
        """Count ``n`` units done.

        Parameters
        ----------
        n : int
            Units done since the last update.
        """
        self.done += n
        if self._ensure():
            self._bar.update(n)

    def set_description(self, text: str) -> None:
        """Show what is being done now.

        Parameters
        ----------
        text : str
            Short text (shortened to 40 characters, from the left).
        """
        if self._ensure():
            short = text if len(text) <= 40 else '…' + text[-39:]
            self._bar.set_description(f'{self.description}: {short}' if self.description
                                      else short, refresh=True)

    def each(self, items: Iterable, what: str = 'reading') -> Iterator:
        """Yield ``items``, describing each (``'reading <item>'``) before it is used.

        Parameters
        ----------
        items : iterable
            Paths of recordings, typically.
        what : str
            Verb in front of each item.

        Yields
        ------
        object
            The items, unchanged.
        """
        for item in items:
            self.set_description(f'{what} {item}')
            yield item

    def stage(self, name: str, done: int, total: int, best: float = math.nan) -> None:
        """One bar per stage of a multi-stage optimisation (``optimize_excitation``'s
        ``progress(stage, done, total, best_cost)``); a new stage closes the bar before.

        Parameters
        ----------
        name : str
            The stage.
        done : int
            Units of the stage done.
        total : int
            Units of the stage.
        best : float
            Best cost so far (NaN: none).
        """
        if not self.enabled or self._closed:
            return
        if name != self._stage:
            if self._bar is not None:
                self._bar.close()
            self._open(name, total)
            self._stage = name
        self._bar.n = min(done, total)
        if best == best:
            self._bar.set_postfix(cost=f'{best:.4g}', refresh=False)
        self._bar.refresh()

    def close(self, clear: bool = False) -> None:
        """End the bar; ``clear``: erase it (before an error line).

        Parameters
        ----------
        clear : bool
            Leave no trace of the bar on the terminal.
        """
        if self._bar is not None:
            if clear:
                self._bar.leave = False
            self._bar.close()
            self._bar = None
        self._closed = True

    def _ensure(self) -> bool:
        """Open the bar on first use; whether there is one."""
        if self._bar is None and self.enabled and not self._closed:
            self._open(self.description, self._total)
        return self._bar is not None

    def _open(self, description: str, total: int) -> None:
        from tqdm import tqdm  # only with a bar: the import takes time

        self._bar = tqdm(total=total or None, desc=description, unit=self.unit, file=self.file,
                         dynamic_ncols=True)


def _is_terminal(file) -> bool:
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError):
        return False
