"""Rows holding NaN, inf or absurd values, and the invalid head and tail of a log a description
lets go (``drop_invalid_rows``; docs/identification.md "Bad input").

A log may begin with a controller's boot values (2.7e154, 253.0, … between good rows) or end
with rows a stopped logger half wrote. With ``drop_invalid_rows: true`` the log starts at the
first run of ``VALID_RUN`` valid rows and ends at the last one; the invalid rows before (after)
it are dropped, with the valid rows among them, none of whose runs is long enough to be
filtered. An invalid row between those runs is refused.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DataWarning, InputError
from ..model.transmission import Transmission
from .signal_processing import filter_padding

#: Joint-side magnitudes beyond which a value is garbage (e.g. 1e282 in uninitialised log rows).
ABSURD = {'time': 1e12, 'position': 1e3, 'velocity': 1e4, 'effort': 1e6}
#: Rows checked at a time for invalid values (bounds the temporaries on long logs).
CHECK_ROWS = 1 << 16
#: With ``drop_invalid_rows``, the log starts (ends) at the first (last) run of this many valid
#: rows: the fewest samples the default 4th-order low-pass filter can run on (a shorter run
#: could not be a segment anyway).
VALID_RUN = filter_padding(4) + 1


def drop_invalid_rows(raw: dict, drop: bool, source: str, tr: Transmission) -> dict:
    """Check a log's rows for NaN, inf and absurd values; drop its invalid head and tail when
    asked.

    Parameters
    ----------
    raw : dict
        ``time`` (N,), ``position``, ``effort`` and optional ``velocity`` (N, n) as read
        (motor side when ``tr`` says so), ``row`` (N,) the data file's row numbers, ``joints``.
    drop : bool
        The description's ``drop_invalid_rows``.
    source : str
        The description, for the warning.
    tr : Transmission
        Magnitudes are judged on the joint side (motor angles are |R| times larger).

    Returns
    -------
    dict
        ``raw``, or its rows without the invalid head and tail (``invalid_head``).

    Raises
    ------
    InputError
        If a row is invalid and ``drop`` is false (naming the first value at fault), every row
        is, or an invalid row lies between the head and the tail.

    Warns
    -----
    DataWarning
        What was dropped: the rows, how many of them were invalid, and the seconds.
    """
    # magnitudes are judged on the joint side: motor angles are |R| times larger
    joint_side = {'position': tr.joint_positions, 'velocity': tr.joint_velocities,
                  'effort': tr.joint_torques}
    bad = np.zeros(len(raw['time']), dtype=bool)
    first_problem = None
    for field in ('time', 'position', 'velocity', 'effort'):
        values = raw.get(field)
        if values is None:
            continue
        v2 = values.reshape(len(values), -1)
        for start in range(0, len(v2), CHECK_ROWS):
            block = v2[start:start + CHECK_ROWS]
            with np.errstate(invalid='ignore', over='ignore'):
                js = block if field == 'time' else joint_side[field](np.nan_to_num(block))
            invalid = ~np.isfinite(block) | ~np.isfinite(js) | (np.abs(js) > ABSURD[field])
            rows = invalid.any(axis=1)
            if rows.any() and first_problem is None:
                r = int(np.flatnonzero(rows)[0])
                c = int(np.flatnonzero(invalid[r])[0])
                where = f'joint {raw["joints"][c]}' if field != 'time' else 'time'
                first_problem = (f'{field} of {where} is {float(block[r, c])!r} in row '
                                 f'{raw["row"][start + r]}')
            bad[start:start + len(block)] |= rows
    if not bad.any():
        return raw
    summary = (f'{int(bad.sum())} row(s) hold NaN, inf or absurd values ({first_problem}; '
               f'joint-side limit {ABSURD[first_problem.split()[0]]:g})')
    if not drop:
        raise InputError(summary + '; set drop_invalid_rows: true to drop them')
    start = invalid_head(bad)
    stop = len(bad) - invalid_head(bad[::-1])
    if start >= stop:
        raise InputError('every row holds NaN, inf or absurd values')
    if bad[start:stop].any():
        inner = int(np.flatnonzero(bad[start:stop])[0]) + start
        raise InputError(f'invalid row {raw["row"][inner]} lies inside the recording; only '
                         'leading and trailing invalid rows can be dropped, with the valid rows '
                         f'among them that are fewer than {VALID_RUN} in a row (use rows: to '
                         'cut)')
    t = raw['time'][start:stop]
    step = np.diff(t)
    period = float(np.median(step)) if len(step) else 0.0
    parts = [f'rows {raw["row"][a]}–{raw["row"][b - 1]} ({b - a} {where} row(s), '
             f'{int(bad[a:b].sum())} invalid, {(b - a) * period:.3g} s)'
             for a, b, where in ((0, start, 'leading'), (stop, len(bad), 'trailing')) if b > a]
    warnings.warn(f'{source}: {summary}; dropped {" and ".join(parts)} as asked '
                  '(drop_invalid_rows)', DataWarning, stacklevel=2)
    return {k: v if k == 'joints' or v is None else v[start:stop] for k, v in raw.items()}


def invalid_head(bad: np.ndarray) -> int:
    """Rows in the leading block of invalid rows.

    The block ends at the last invalid row before the first ``VALID_RUN`` valid rows in a row:
    invalid rows dominate it, no stretch of valid rows among them is long enough to filter.

    Parameters
    ----------
    bad : (N,) ndarray of bool
        Which rows are invalid.

    Returns
    -------
    int
        0 when the log starts with ``VALID_RUN`` valid rows; N when it has no such run.
    """
    valid = np.concatenate([[0], np.cumsum(~bad)])
    runs = np.flatnonzero(valid[VALID_RUN:] - valid[:-VALID_RUN] == VALID_RUN)
    first_run = int(runs[0]) if len(runs) else len(bad)
    before = np.flatnonzero(bad[:first_run])
    return int(before[-1]) + 1 if len(before) else 0
