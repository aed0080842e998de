"""Torque estimates (TORQUES.csv of ``estimate-torque``): filtered against raw measured torque,
and against the true torque when the file has it (a simulated robot)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import check_readable
from . import figures
from .html import Figure, Table


@dataclass
class TorqueLog:
    """The columns of TORQUES.csv.

    Parameters
    ----------
    source : str
        The file.
    joint_names : list of str
        (n,) joint names.
    t : (M,) ndarray
        [s].
    measured, filtered : (M, n) ndarray
        Raw measured and estimated joint torques [N·m or N].
    external : (M, n) ndarray or None
        Estimated external torques.
    true : (M, n) ndarray or None
        True joint torques (``true_<joint>`` columns), when known.
    """

    source: str
    joint_names: list[str]
    t: np.ndarray
    measured: np.ndarray
    filtered: np.ndarray
    external: np.ndarray | None = None
    true: np.ndarray | None = None


def read_torques(path: str | Path) -> TorqueLog:
    """Read TORQUES.csv: ``t``, then ``measured_<joint>`` and ``filtered_<joint>`` per joint,
    optionally ``external_<joint>`` and ``true_<joint>``.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    TorqueLog

    Raises
    ------
    InputError
        If the file cannot be read, a column is missing or a value is not a finite number
        (naming the file and the column or row).
    """
    path = check_readable(path, 'torques')
    with open(path, encoding='utf-8') as f:
        header = f.readline().strip().split(',')
    joints = [h[len('measured_'):] for h in header if h.startswith('measured_')]
    if not header or header[0] != 't' or not joints:
        raise InputError(f'{path}: expected a header t,measured_<joint>...,filtered_<joint>... '
                         f'(TORQUES.csv of robot-ident estimate-torque), got {",".join(header)}')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)        # numpy's "no data" warning
            data = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
    except ValueError as exc:
        raise InputError(f'{path}: {exc}') from None
    if not len(data):
        raise InputError(f'{path}: no rows after the header')
    if data.shape[1] != len(header):
        raise InputError(f'{path}: {data.shape[1]} values per row for {len(header)} columns')
    bad = ~np.isfinite(data).all(axis=1)
    if bad.any():
        raise InputError(f'{path}: row {int(np.flatnonzero(bad)[0]) + 2} holds a value that is '
                         'not a finite number')

    def block(kind, required):
        names = [f'{kind}_{j}' for j in joints]
        missing = [n for n in names if n not in header]
        if missing and required:
            raise InputError(f'{path}: column {missing[0]} is missing')
        return None if missing else data[:, [header.index(n) for n in names]]

    return TorqueLog(str(path), joints, data[:, 0], block('measured', True),
                     block('filtered', True), block('external', False), block('true', False))


def torque_estimate_figure(log: TorqueLog) -> Figure:
    """Raw measured, filtered and (when known) true torque against time, a row per joint.

    Parameters
    ----------
    log : TorqueLog

    Returns
    -------
    Figure
    """
    fig, axes = figures.joint_figure(len(log.joint_names))
    k = figures.stride(len(log.t))
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(log.t[k], log.measured[k, j], color=figures.COLORS['measured'], lw=0.8,
                label='measured (raw)')
        ax.plot(log.t[k], log.filtered[k, j], color=figures.COLORS['filtered'], lw=1.0,
                label='filtered')
        if log.true is not None:
            ax.plot(log.t[k], log.true[k, j], color=figures.COLORS['true'], lw=0.9, ls='--',
                    label='true')
        ax.set_ylabel(f'{log.joint_names[j]}\n[N·m]')
    axes[0, 0].legend(loc='upper right', fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel('time [s]')
    return Figure(figures.png_data_uri(fig, tight=False), f'torque estimates of {log.source}')


def torque_estimate_table(log: TorqueLog) -> Table:
    """Per joint: RMS change the filter made, and with a true torque the RMS error of the raw
    and of the filtered torque.

    Parameters
    ----------
    log : TorqueLog

    Returns
    -------
    Table
    """
    def rms(x):
        return np.sqrt(np.mean(x ** 2, axis=0))

    change = rms(log.filtered - log.measured)
    header = ['joint', 'RMS(filtered − raw)']
    columns = [change]
    if log.true is not None:
        header += ['RMS(raw − true)', 'RMS(filtered − true)']
        columns += [rms(log.measured - log.true), rms(log.filtered - log.true)]
    rows = [[j, *[c[i] for c in columns]] for i, j in enumerate(log.joint_names)]
    return Table(header, rows, caption='torque estimator [N·m or N]')
