"""A task's health: level, the reason, and its values as text with the unit in the key
(the content of one ``diagnostic_msgs/DiagnosticStatus``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pydantic import Field, PositiveFloat

from ..schema import Schema


class Level:
    """Health levels (ints), with the values of ``diagnostic_msgs/DiagnosticStatus``."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


class DiagnosticsConfig(Schema):
    """How often a node reports its health (a parameter of every node)."""

    diagnostics_period: PositiveFloat = Field(
        1.0, description='Time between two ``/diagnostics`` messages of a node [s].')


@dataclass(frozen=True)
class Status:
    """The health of one task of a node.

    Parameters
    ----------
    task : str
        What is checked, e.g. ``recording`` (the node name is added by the publisher).
    level : int
        The worst level of the checks (``Level``).
    message : str
        Why: the reasons of every check that is not OK, worst first; else what is fine.
    values : dict of str to str
        Key (snake_case, SI unit at the end, e.g. ``tracking_error_max_rad``) to value as
        text, in the order given.
    """

    task: str
    level: int
    message: str
    values: dict[str, str] = field(default_factory=dict)


def make_status(task: str, checks: list[tuple[int, str]], values: dict,
                ok_message: str) -> Status:
    """A status from checks and values.

    Parameters
    ----------
    task : str
        What is checked.
    checks : list of (int, str)
        Each check's level (``Level``) and reason; OK checks' reasons are not shown.
    values : dict
        Key to number, text, flag or None; formatted by ``format_value``.
    ok_message : str
        The message when every check is OK.

    Returns
    -------
    Status
        Level: the worst of ``checks`` (OK without any); message: the reasons of the checks
        that are not OK, worst first, joined by ``'; '``.
    """
    bad = sorted((c for c in checks if c[0] != Level.OK), key=lambda c: -c[0])
    level = bad[0][0] if bad else Level.OK
    message = '; '.join(reason for _level, reason in bad) if bad else ok_message
    return Status(task, level, message, {k: format_value(v) for k, v in values.items()})


def format_value(value) -> str:
    """A diagnostic value as text.

    Parameters
    ----------
    value : float, int, bool, str or None
        The value.

    Returns
    -------
    str
        ``true``/``false`` for flags, integers as they are, floats with 6 significant digits
        (``nan`` and ``inf`` as such), ``''`` for None.
    """
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f'{value:.6g}' if math.isfinite(value) else str(value)
    try:                                   # numpy scalars
        return format_value(value.item())
    except AttributeError:
        return str(value)
