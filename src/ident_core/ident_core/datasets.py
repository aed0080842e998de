"""Datasets: a recording of joint positions and torques, described by a small YAML file.

A description names the joints in column order, the file(s) holding the data and where each
signal lives in them. Example (CSV, motor-side data through a transmission)::

    joints: [joint_1, joint_2]
    file: log.csv                       # relative to this YAML; ${VAR} expands
    time: {column: 0}                   # or {key: times} (NPZ) or {sample_rate: 1000}
    position: {columns: [1, 2], scale: 1.0}
    velocity: {columns: [3, 4]}         # optional; used only with --use-recorded-velocity
    effort: {columns: [5, 6], scale: [0.5, 0.5], file: currents.csv}
    rows: [100, 20000]                  # optional slice of the rows
    drop_invalid_rows: false            # drop leading/trailing NaN/inf/absurd rows (with a warning)
    cutoff_hz: 10                       # optional default low-pass cut-off for this recording
    transmission: {gear_ratios: [100, 100], coupling: [[1, 0, 50]]}

``--data`` also accepts an ``.npz`` with the keys ``times``, ``positions``, ``torques`` (optional
``velocities``), and a rosbag2 folder or ``.mcap``/``.db3`` file (``sensor_msgs/JointState`` on
``/joint_states``). Every problem raises ``InputError`` naming the file and field.
"""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml

from . import readers
from .errors import InputError
from .robot_model import RobotModel
from .signal_processing import check_time, fixed_rate_clock, jitter
from .transmission import Transmission

FIELDS = ('joints', 'file', 'topic', 'time', 'position', 'velocity', 'effort', 'rows',
          'drop_invalid_rows', 'cutoff_hz', 'transmission')
SIGNALS = ('position', 'velocity', 'effort')
# Joint-side magnitudes beyond which a value is garbage (e.g. 1e282 in uninitialised log rows).
ABSURD = {'time': 1e12, 'position': 1e3, 'velocity': 1e4, 'effort': 1e6}
JITTER_WARNING = 0.05
BAG_SUFFIXES = ('.mcap', '.db3')


class DataWarning(UserWarning):
    """A recoverable problem with the data (dropped rows, jittery time stamps)."""


@dataclass
class Dataset:
    """A recording in joint space.

    Attributes:
        source: the description or data file it came from.
        joint_names: (n,) column order.
        t: (N,) s, strictly increasing.
        position: (N, n) rad or m. velocity: (N, n) rad/s or m/s, or None. effort: (N, n) N·m or N.
        transmission: the motor-to-joint transmission the data went through.
        cutoff_hz: the description's low-pass cut-off, or None.
    """

    source: str
    joint_names: list[str]
    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray
    transmission: Transmission
    cutoff_hz: float | None = None

    @property
    def samples(self) -> int:
        return len(self.t)

    def aligned(self, robot: RobotModel) -> 'Dataset':
        """The same data with columns (and the transmission) in the robot's joint order.

        Raises:
            InputError: joints that are not the robot's moving joints.
        """
        idx = robot.joint_order(self.joint_names, self.source)
        tr = self.transmission
        return replace(self, joint_names=list(robot.joint_names),
                       position=self.position[:, idx],
                       velocity=None if self.velocity is None else self.velocity[:, idx],
                       effort=self.effort[:, idx],
                       transmission=Transmission(tr.gear_matrix[np.ix_(idx, idx)],
                                                 tr.joint_offset[idx], tr.torque_scale[idx]))

    def split(self, fraction: float) -> tuple['Dataset', 'Dataset']:
        """The first ``fraction`` of the samples and the rest, as two datasets."""
        k = int(round(fraction * self.samples))
        parts = []
        for sl, tag in ((slice(0, k), 'first'), (slice(k, None), 'last')):
            share = fraction if tag == 'first' else 1 - fraction
            parts.append(replace(
                self, source=f'{self.source}[{tag} {100 * share:.0f}%]', t=self.t[sl],
                position=self.position[sl], effort=self.effort[sl],
                velocity=None if self.velocity is None else self.velocity[sl]))
        return parts[0], parts[1]


def load_dataset(path: str | Path, default_joints: list[str] | None = None) -> Dataset:
    """Load a dataset from a YAML description, an ``.npz`` (KUKA field names) or a rosbag2.

    Args:
        path: the file or bag folder.
        default_joints: joint names used when the source does not name its columns (plain
            ``.npz``, or a description without ``joints``), normally the URDF's order.

    Raises:
        InputError: any problem, naming the file and the field/row/joint at fault.
    """
    path = Path(path)
    if path.suffix in ('.yaml', '.yml'):
        return _from_description(path, default_joints)
    if path.suffix == '.npz':
        spec = {'file': path.name, 'time': {'key': 'times'}, 'position': {'key': 'positions'},
                'effort': {'key': 'torques'}}
        if path.is_file() and 'velocities' in readers.read_npz(path):
            spec['velocity'] = {'key': 'velocities'}
        return _build(spec, str(path), path.parent, default_joints)
    if path.is_dir() or path.suffix in BAG_SUFFIXES:
        return _build({'file': path.name}, str(path), path.parent, default_joints)
    if not path.exists():
        raise InputError(f'{path}: file not found')
    raise InputError(f'{path}: unknown data format (expected a .yaml description, an .npz, or a '
                     'rosbag2 folder / .mcap / .db3 file)')


def load_bag(path: str | Path, topic: str = '/joint_states',
             default_joints: list[str] | None = None,
             window: tuple[float, float] | None = None) -> tuple[Dataset, np.ndarray]:
    """Load the ``sensor_msgs/JointState`` messages of ``topic`` from a rosbag2 folder or
    ``.mcap``/``.db3`` file (header stamps as time, all joints of the messages).

    Args:
        window: optional (start, end) header-stamp time, s: keep only the messages inside
            (e.g. ``readers.excitation_window``, the periodic part of an excitation).

    Returns:
        (dataset, (N,) absolute header stamps of its samples, s).

    Raises:
        InputError: as ``load_dataset``; no message inside ``window``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f'{path}: file not found')
    stamps = readers.read_joint_states(path, topic).stamp
    spec = {'file': path.name, 'topic': topic}
    if window is not None:
        rows = np.flatnonzero((stamps >= window[0]) & (stamps <= window[1]))
        if not len(rows):
            raise InputError(f'{path}: no {topic} message between the stamps {window[0]:.3f} '
                             f'and {window[1]:.3f} s')
        spec['rows'] = [int(rows[0]), int(rows[-1]) + 1]
        stamps = stamps[rows[0]:rows[-1] + 1]
    return _build(spec, str(path), path.parent, default_joints), stamps


def _from_description(path: Path, default_joints) -> Dataset:
    if not path.is_file():
        raise InputError(f'{path}: file not found')
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise InputError(f'{path}: invalid YAML ({str(exc).splitlines()[0]})') from None
    if not isinstance(spec, dict):
        raise InputError(f'{path}: a dataset description must be a YAML mapping')
    unknown = sorted(set(spec) - set(FIELDS))
    if unknown:
        raise InputError(f'{path}: unknown field(s) {", ".join(unknown)} '
                         f'(known: {", ".join(FIELDS)})')
    return _build(spec, str(path), path.parent, default_joints)


def _build(spec: dict, source: str, base: Path, default_joints) -> Dataset:
    if 'file' not in spec:
        raise InputError(f'{source}: missing field file')
    data_file = _resolve(spec['file'], base, source, 'file')
    if data_file.is_dir() or data_file.suffix in BAG_SUFFIXES:
        raw = _raw_from_bag(spec, data_file, source, default_joints)
    else:
        raw = _raw_from_tables(spec, data_file, base, source, default_joints)
    raw = _select_rows(raw, spec.get('rows'), source)
    n = len(raw['joints'])
    tr = (Transmission.from_dict(spec['transmission'], n, source) if spec.get('transmission')
          else Transmission.identity(n))
    raw = _drop_invalid(raw, bool(spec.get('drop_invalid_rows', False)), source, tr)
    t = raw.pop('time')
    t = _clock(t, spec.get('time') or {}, source)
    joints = raw.pop('joints')
    velocity = raw.get('velocity')
    dataset = Dataset(source=source, joint_names=joints, t=t,
                      position=tr.joint_positions(raw['position']),
                      velocity=None if velocity is None else tr.joint_velocities(velocity),
                      effort=tr.joint_torques(raw['effort']), transmission=tr,
                      cutoff_hz=_cutoff(spec.get('cutoff_hz'), source))
    return dataset


def _resolve(value, base: Path, source: str, field: str) -> Path:
    if not isinstance(value, str) or not value:
        raise InputError(f'{source}: field {field} must be a file name')

    def expand(match):
        name = match.group(1) or match.group(2)
        if name not in os.environ:
            raise InputError(f'{source}: field {field}: environment variable {name} is not set')
        return os.environ[name]

    path = Path(re.sub(r'\$\{(\w+)\}|\$(\w+)', expand, value)).expanduser()
    return path if path.is_absolute() else base / path


def _joints(spec, source, default_joints) -> list[str]:
    joints = spec.get('joints', default_joints)
    if joints is None:
        raise InputError(f'{source}: missing field joints (URDF joint names in column order)')
    if not (isinstance(joints, list) and joints and all(isinstance(j, str) for j in joints)):
        raise InputError(f'{source}: field joints must be a list of joint names')
    return list(joints)


def _raw_from_tables(spec, data_file, base, source, default_joints) -> dict:
    joints = _joints(spec, source, default_joints)
    tables = {}

    def table(path):
        if path not in tables:
            tables[path] = (readers.read_npz(path) if path.suffix == '.npz'
                            else readers.read_csv(path))
        return tables[path]

    raw = {'joints': joints}
    for field in SIGNALS:
        fspec = spec.get(field)
        if fspec is None:
            if field == 'velocity':
                continue
            raise InputError(f'{source}: missing field {field}')
        path = _resolve(fspec['file'], base, source, f'{field}.file') if isinstance(
            fspec, dict) and 'file' in fspec else data_file
        raw[field] = _signal(table(path), fspec, len(joints), source, field)
    raw['time'] = _time_column(spec.get('time'), table(data_file), source,
                               len(raw['position']))
    lengths = {f: len(raw[f]) for f in SIGNALS if f in raw}
    if len(set(lengths.values()) | {len(raw['time'])}) > 1:
        raise InputError(f'{source}: signals have different row counts: '
                         + ', '.join(f'{f} {k}' for f, k in lengths.items()))
    return raw


def _signal(table, fspec, n, source, field) -> np.ndarray:
    if not isinstance(fspec, dict):
        raise InputError(f'{source}: field {field} must be a mapping with columns or key')
    if isinstance(table, dict):
        key = fspec.get('key')
        if key is None:
            raise InputError(f'{source}: field {field}: give the NPZ array as key: NAME')
        if key not in table:
            raise InputError(f'{source}: field {field}: key {key!r} not in the NPZ archive '
                             f'(keys: {", ".join(sorted(table))})')
        values = np.asarray(table[key], dtype=float)
        if values.ndim != 2 or values.shape[1] != n:
            raise InputError(f'{source}: field {field}: array {key!r} has shape {values.shape}, '
                             f'expected (N, {n}) for {n} joints')
    else:
        cols = fspec.get('columns')
        if not isinstance(cols, list):
            raise InputError(f'{source}: field {field}: give the CSV columns as columns: [...]')
        if len(cols) != n:
            raise InputError(f'{source}: field {field}: {len(cols)} columns for {n} joints')
        values = table.values[:, [table.column(c, field) for c in cols]]
    return values * _scale(fspec.get('scale', 1.0), n, source, field)


def _scale(value, n, source, field):
    arr = np.atleast_1d(np.asarray(value, dtype=float)) if _is_numeric(value) else None
    if arr is None or arr.shape not in ((1,), (n,)) or not np.all(np.isfinite(arr)):
        raise InputError(f'{source}: field {field}.scale must be a number or {n} numbers, '
                         f'got {value!r}')
    return arr


def _is_numeric(value) -> bool:
    items = value if isinstance(value, list) else [value]
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)


def _time_column(tspec, table, source, rows) -> np.ndarray:
    if not isinstance(tspec, dict):
        raise InputError(f'{source}: missing field time ({{column: i}}, {{key: name}} or '
                         '{sample_rate: hz})')
    if 'sample_rate' in tspec:
        rate = tspec['sample_rate']
        if not _is_numeric(rate) or isinstance(rate, list) or rate <= 0:
            raise InputError(f'{source}: field time.sample_rate must be a positive number')
        return np.arange(rows) / float(rate)
    scale = float(tspec.get('scale', 1.0))
    if isinstance(table, dict):
        key = tspec.get('key')
        if key not in table:
            raise InputError(f'{source}: field time: key {key!r} not in the NPZ archive '
                             f'(keys: {", ".join(sorted(table))})')
        values = np.asarray(table[key], dtype=float).ravel()
    else:
        if 'column' not in tspec:
            raise InputError(f'{source}: field time: give column: i or sample_rate: hz')
        values = table.values[:, table.column(tspec['column'], 'time')]
    return values * scale


def _raw_from_bag(spec, path, source, default_joints) -> dict:
    log = readers.read_joint_states(path, spec.get('topic', '/joint_states'))
    joints = spec.get('joints') or log.names
    missing = [j for j in joints if j not in log.names]
    if missing:
        raise InputError(f'{source}: joint(s) {", ".join(missing)} not in the JointState '
                         f'messages (names: {", ".join(log.names)})')
    idx = [log.names.index(j) for j in joints]
    raw = {'joints': list(joints)}
    for field in SIGNALS:
        values = getattr(log, field)
        if values is None:
            if field == 'effort':
                raise InputError(f'{source}: JointState messages carry no effort')
            continue
        fspec = spec.get(field) or {}
        raw[field] = values[:, idx] * _scale(fspec.get('scale', 1.0), len(idx), source, field)
    tsource = (spec.get('time') or {}).get('source', 'header')
    if tsource not in ('header', 'receive'):
        raise InputError(f'{source}: field time.source must be header or receive')
    raw['time'] = log.stamp if tsource == 'header' and np.any(log.stamp) else log.receive
    return raw


def _select_rows(raw, rows, source) -> dict:
    if rows is None:
        return raw
    total = len(raw['time'])
    if not (isinstance(rows, list) and len(rows) == 2
            and all(r is None or (isinstance(r, int) and not isinstance(r, bool)) for r in rows)):
        raise InputError(f'{source}: field rows must be [start, stop] (integers or null)')
    start, stop = slice(*rows).indices(total)[:2]
    if start >= stop:
        raise InputError(f'{source}: field rows {rows} selects no row of the {total} rows')
    return {k: v if k == 'joints' or v is None else v[start:stop] for k, v in raw.items()}


def _drop_invalid(raw, drop: bool, source, tr: Transmission) -> dict:
    # magnitudes are judged on the joint side: motor angles are |R| times larger
    joint_side = {'position': tr.joint_positions, 'velocity': tr.joint_velocities,
                  'effort': tr.joint_torques}
    bad = np.zeros(len(raw['time']), dtype=bool)
    first_problem = None
    for field in ('time',) + SIGNALS:
        values = raw.get(field)
        if values is None:
            continue
        v2 = values.reshape(len(values), -1)
        with np.errstate(invalid='ignore', over='ignore'):
            js = v2 if field == 'time' else joint_side[field](np.nan_to_num(v2))
        invalid = ~np.isfinite(v2) | ~np.isfinite(js) | (np.abs(js) > ABSURD[field])
        rows = invalid.any(axis=1)
        if rows.any() and first_problem is None:
            r = int(np.flatnonzero(rows)[0])
            c = int(np.flatnonzero(invalid[r])[0])
            where = f'joint {raw["joints"][c]}' if field != 'time' else 'time'
            first_problem = f'{field} of {where} is {float(v2[r, c])!r} in row {r}'
        bad |= rows
    if not bad.any():
        return raw
    idx = np.flatnonzero(bad)
    good = np.flatnonzero(~bad)
    summary = (f'{source}: {len(idx)} row(s) hold NaN, inf or absurd values ({first_problem}; '
               f'joint-side limit {ABSURD[first_problem.split()[0]]:g})')
    if not drop:
        raise InputError(summary + '; set drop_invalid_rows: true to drop them')
    if not len(good):
        raise InputError(f'{source}: every row holds NaN, inf or absurd values')
    start, stop = good[0], good[-1] + 1
    if bad[start:stop].any():
        inner = int(np.flatnonzero(bad[start:stop])[0]) + start
        raise InputError(f'{source}: invalid row {inner} lies inside the recording; only '
                         'leading and trailing invalid rows can be dropped (use rows: to cut)')
    warnings.warn(f'{summary}; dropped rows {idx[0]}–{idx[-1]} as asked (drop_invalid_rows)',
                  DataWarning, stacklevel=2)
    return {k: v if k == 'joints' or v is None else v[start:stop] for k, v in raw.items()}


def _clock(t, tspec, source) -> np.ndarray:
    clock = tspec.get('clock', 'stamps') if isinstance(tspec, dict) else 'stamps'
    if clock not in ('stamps', 'fixed_rate'):
        raise InputError(f'{source}: field time.clock must be stamps or fixed_rate')
    if clock == 'fixed_rate':
        t = fixed_rate_clock(t, source)
        return t - t[0]
    check_time(t, source)
    if len(t) > 2 and jitter(t) > JITTER_WARNING:
        warnings.warn(f'{source}: sample intervals jitter by {100 * jitter(t):.0f} % '
                      '(std/median); if a fixed-rate controller took the samples and only the '
                      'logger stamps jitter, set time.clock: fixed_rate', DataWarning, stacklevel=2)
    return t - t[0]


def _cutoff(value, source):
    if value is None:
        return None
    if not _is_numeric(value) or isinstance(value, list) or value <= 0:
        raise InputError(f'{source}: field cutoff_hz must be a positive number')
    return float(value)
