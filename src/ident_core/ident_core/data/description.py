"""The dataset description: a small YAML file that says where each signal of a log is.

Example (CSV, motor-side data through a transmission)::

    joints: [joint_1, joint_2]          # URDF joint names in column order
    file: log.csv                       # relative to this YAML; ${VAR} expands
    time: {column: 0, scale: 0.001}     # or {key: times} (NPZ) or {sample_rate: 1000}
                                        # clock: auto (default), stamps or fixed_rate
    position: {columns: [1, 2], scale: 1.0}
    velocity: {columns: [3, 4]}         # optional
    effort: {columns: [5, 6], scale: [0.5, 0.5], file: currents.csv}
    rows: [100, 20000]                  # optional [start, stop) slice of the rows
    drop_invalid_rows: false            # drop leading/trailing NaN/inf/absurd rows (warning)
    cutoff_hz: 10                       # optional low-pass cut-off for this recording
    start_time: 2026-03-02T22:00:00Z    # optional ISO 8601 start of the recording (fleet)
    transmission: {gear_ratios: [100, 100], coupling: [[1, 0, 50]]}

Stamps must not decrease. A row that repeats the previous row exactly (every signal equal) is a
logger's second read of a controller cycle when it comes sooner than a period after the last row
kept, and is dropped; later, it is a robot standing still, and is kept (``timing.samples``).
``time.clock`` says how to read the stamps (``timing``): ``auto`` detects the controller's rate
and whether the rows are the cycles of a fixed-rate controller whose logger stamps jitter, are
rounded (rows may share a stamp) or poll it (then the rows are put back on those cycles), or
samples at irregular moments (then they are resampled by their stamps onto a uniform grid);
either way gaps are bridged or, when too long, split the log. ``stamps`` trusts the stamps (one
per sample); ``fixed_rate`` replaces them by the least-squares line ``t0 + k·T`` through them,
takes every row as a sample, and refuses gaps (a controller at a fixed rate whose logger lost
no row). With ``sample_rate`` too every row is a sample.

A rosbag2 needs only ``file`` (and ``topic``, default ``joint_states``: ``/joint_states``). The
schema checks types and keys; what depends on the data (column counts, sizes per joint) is
checked when the data are read (``datasets``).
"""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import numpy as np
import pydantic
from pydantic import Field, PositiveFloat

from ..errors import InputError
from ..model.transmission import Transmission
from ..schema import Matrix, PerJoint, Schema, checked_array, per_joint


class SignalSpec(Schema):
    """Where one signal (position, velocity or effort) is.

    Parameters
    ----------
    columns : list of int or str, optional
        CSV columns per joint, by 0-based index or header name.
    key : str, optional
        NPZ array of shape (N, n).
    scale : float or list of float
        Factor per joint (one for all, or n), e.g. a drive gain turning currents into torques.
    file : str, optional
        Another file with the same rows (relative to the description).
    """

    columns: list[int | str] | None = None
    key: str | None = None
    scale: PerJoint = 1.0
    file: str | None = None


class TimeSpec(Schema):
    """Where the time stamps are, or the sample rate.

    Parameters
    ----------
    column : int or str, optional
        CSV column of the stamps.
    key : str, optional
        NPZ array of the stamps.
    sample_rate : float, optional
        Hz, when the log has no stamps.
    scale : float
        Factor to seconds (0.001 for ms).
    clock : {'auto', 'stamps', 'fixed_rate'}
        ``auto``: decide from the data whether the rows are a fixed-rate clock's cycles or
        samples at their stamps (``timing``); ``stamps``: the stamps are the sample times
        (resampled onto a uniform grid when irregular; no two rows of different states may
        share one); ``fixed_rate``: the controller ran at a fixed rate and dropped no sample,
        only the logger stamps jitter (or are rounded); every row is a sample.
    source : {'header', 'receive'}
        For a rosbag2: the messages' header stamps or the bag's receive times.
    """

    column: int | str | None = None
    key: str | None = None
    sample_rate: PositiveFloat | None = None
    scale: float = 1.0
    clock: Literal['auto', 'stamps', 'fixed_rate'] = 'auto'
    source: Literal['header', 'receive'] = 'header'


class TransmissionSpec(Schema):
    """Motor-to-joint transmission, ``q_motor = R · q_joint`` (docs/methods.md §1).

    Parameters
    ----------
    gear_ratios : float or list of float, optional
        Diagonal of ``R``.
    coupling : list of [int, int, float]
        ``[motor, joint, value]`` entries (0-based) setting ``R[motor, joint]``.
    gear_matrix : list of list of float, optional
        The whole (n, n) ``R``, instead of ``gear_ratios`` and ``coupling``.
    joint_offset : float or list of float
        Added to ``R⁻¹ q_motor`` [rad or m].
    torque_scale : float or list of float
        Drive gain per motor [N·m per effort unit].
    """

    gear_ratios: PerJoint | None = None
    coupling: list[Annotated[tuple[int, int, float], Field(strict=False)]] = []
    gear_matrix: Matrix | None = None
    joint_offset: PerJoint = 0.0
    torque_scale: PerJoint = 1.0

    @pydantic.model_validator(mode='after')
    def _one_way(self):
        if self.gear_matrix is not None and (self.gear_ratios is not None or self.coupling):
            raise ValueError('give gear_matrix or gear_ratios/coupling, not both')
        return self


class DatasetDescription(Schema):
    """A dataset description file (module docstring).

    Parameters
    ----------
    joints : list of str, optional
        URDF joint names in column order (default: the URDF's order).
    file : str
        The data file (CSV, NPZ, rosbag2 folder, ``.mcap`` or ``.db3``).
    topic : str
        ``sensor_msgs/JointState`` topic of a rosbag2 (a relative name is in the root
        namespace); its messages that lack one of the joints (``joints``, or the URDF's:
        another publisher's, e.g. a gripper's) are skipped.
    time, position, velocity, effort : TimeSpec or SignalSpec, optional
        Where the signals are (position, effort and time required for tables).
    rows : [int or None, int or None], optional
        ``[start, stop)`` slice of the rows.
    drop_invalid_rows : bool
        Drop leading and trailing rows holding NaN, inf or absurd values (with a warning).
    cutoff_hz : float, optional
        Low-pass cut-off for this recording [Hz].
    transmission : TransmissionSpec, optional
        For motor-side data.
    start_time : datetime, optional
        When the recording started (ISO 8601; without a time zone: UTC). ``robot-ident fleet``
        orders a robot's recordings by it.
    """

    joints: list[str] | None = Field(default=None, min_length=1)
    file: str
    topic: str = 'joint_states'
    time: TimeSpec | None = None
    position: SignalSpec | None = None
    velocity: SignalSpec | None = None
    effort: SignalSpec | None = None
    rows: Annotated[tuple[int | None, int | None], Field(strict=False)] | None = None
    drop_invalid_rows: bool = False
    cutoff_hz: PositiveFloat | None = None
    transmission: TransmissionSpec | None = None
    start_time: Annotated[datetime, Field(strict=False)] | None = None


def transmission_from_spec(spec: TransmissionSpec, n: int) -> Transmission:
    """The transmission of a description's ``transmission`` section.

    Parameters
    ----------
    spec : TransmissionSpec
        The section.
    n : int
        Number of joints.

    Returns
    -------
    Transmission

    Raises
    ------
    InputError
        If a field has the wrong size, a coupling index is out of range, or ``R`` is singular
        (the message names the field; the caller adds the file).
    """
    if spec.gear_matrix is not None:
        gear = checked_array(np.array(spec.gear_matrix, dtype=float), (n, n),
                             'transmission.gear_matrix')
    else:
        ratios = 1.0 if spec.gear_ratios is None else spec.gear_ratios
        gear = np.diag(per_joint(ratios, n, 'transmission.gear_ratios'))
        for i, (motor, joint, value) in enumerate(spec.coupling):
            if not (0 <= motor < n and 0 <= joint < n):
                raise InputError(f'field transmission.coupling[{i}]: motor and joint must be '
                                 f'0-based indices below {n}, got {[motor, joint, value]}')
            gear[motor, joint] = value
    if abs(np.linalg.det(gear)) < 1e-12 * max(1.0, np.abs(gear).max()) ** n:
        raise InputError('transmission gear matrix is singular')
    return Transmission(gear, per_joint(spec.joint_offset, n, 'transmission.joint_offset'),
                        per_joint(spec.torque_scale, n, 'transmission.torque_scale'))
