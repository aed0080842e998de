"""Drift of a fleet, and drift.yaml (``format: robot-ident/drift/1``).

Each robot's identified parameters and baseline-model error over time, against its baseline and
against the robots of the same kind::

    alerts:          # sorted by z, largest first
      - {robot: r4, joint: joint2, quantity: fc, basis: robot, baseline: 1.52, current: 1.91,
         change_percent: 25.7, z: 9.3, first_recording: night6}
    robots:
      - {name: r4, baseline: [night1, night2, night3], joints: [...], worst_z: [...],
         failed: [{recording: night5, reason: ...}]}

Quantities: ``fc``, ``fv``, ``offset``, ``Ia`` per joint (the RESULT.yaml names, from each
recording's own identification) and ``validation_error``: per joint, the baseline model's error
on the recording (RMS over the torque RMS, %), the model-free sign that something changed.
Its baseline values are out-of-sample: each baseline recording predicted by the other baseline
recordings' own models. ``basis: robot``: against the robot's own baseline; ``basis: fleet``:
against the robots of the same URDF (its latest value). An alert holds while the latest
recording meets it; ``first_recording`` is the first of the run of recordings that met it
without a break. Statistics: ``statistics``.

Why friction: wear raises a joint's friction, and temperature and load change it too, by more
than early wear does (A. C. Bittencourt, P. Axelsson, "Modeling and experiment design for
identification of wear in a robot joint under load and temperature uncertainties based on
friction data", IEEE/ASME Trans. Mechatronics 19(5), 2014; preprint: report LiTH-ISY-R-3058,
Linköping University, 2013, urn:nbn:se:liu:diva-90023): hence a baseline of several
nights, a change judged against their scatter, and the same excitation every night.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pydantic

from ..errors import InputError
from ..schema import Document, Schema
from .hashing import file_sha256
from .index import INDEX, FleetIndex, RobotIndex
from .manifest import DriftConfig
from .records import BASELINE_MODEL, RECORD, VALIDATION, TaskRecord
from .statistics import (
    MAGNITUDE_SCATTER,
    baseline_scatter,
    drift_z,
    is_alert,
    pooled_scatter,
    robust_z,
)

#: The parameters followed, per joint.
PARAMETERS = ('fc', 'fv', 'offset', 'Ia')
#: The baseline model's error, per joint.
VALIDATION_ERROR = 'validation_error'
DRIFT = 'drift.yaml'
#: The fleet page's file in its folder; the folder's default name in FLEET_DIR.
PAGE, REPORT = 'index.html', 'report'


class AlertEntry(Schema):
    """One alert of drift.yaml.

    Parameters
    ----------
    robot, joint, quantity : str
        Where.
    basis : {'robot', 'fleet'}
        Against the robot's baseline, or the robots of its kind.
    baseline : float
        The baseline mean, or the fleet's median.
    current : float
        The latest value.
    change_percent : float
        ``100 (current − baseline) / reference`` (``|baseline|``, the torque RMS for an
        offset) [%].
    z : float
        Its significance (``statistics``).
    first_recording : str
        The first recording of the run that met the alert.
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)

    robot: str
    joint: str
    quantity: str
    basis: Literal['robot', 'fleet']
    baseline: float
    current: float
    change_percent: float
    z: float
    first_recording: str


class FailedRecording(Schema):
    """A recording whose identification or validation failed.

    Parameters
    ----------
    recording : str
        Its name (``baseline``: the baseline model).
    reason : str
        The one line the CLI would print.
    """

    recording: str
    reason: str


class RobotDrift(Schema):
    """One robot in drift.yaml.

    Parameters
    ----------
    name : str
        The robot.
    baseline : list of str
        Its baseline recordings (empty: too few yet).
    joints : list of str
        Its joints.
    worst_z : list of float
        Per joint, the largest z of its quantities at the latest recording.
    failed : list of FailedRecording
        Its failures.
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)

    name: str
    baseline: list[str]
    joints: list[str]
    worst_z: list[float]
    failed: list[FailedRecording] = []


class DriftFile(Document):
    """The drift file, drift.yaml (module docstring).

    Parameters
    ----------
    format : str
        ``robot-ident/drift/1``.
    settings : DriftConfig
        The thresholds used.
    index_sha256 : str
        The hash of the fleet.yaml it was made from.
    alerts : list of AlertEntry
        Sorted by z, largest first.
    robots : list of RobotDrift
        In the index's order.
    """

    kind = 'drift file'

    format: Literal['robot-ident/drift/1'] = 'robot-ident/drift/1'
    settings: DriftConfig
    index_sha256: str = ''
    alerts: list[AlertEntry]
    robots: list[RobotDrift]


@dataclass
class Point:
    """One value of a series.

    Parameters
    ----------
    recording : str
        Its recording.
    order : int
        The recording's place in the robot's (0-based).
    time : str or None
        Its start (ISO 8601).
    value, std : float
        The value and its identification standard deviation (NaN: none).
    """

    recording: str
    order: int
    time: str | None
    value: float
    std: float = float('nan')


@dataclass
class Series:
    """One quantity of one joint of one robot over time, and its judgement.

    Parameters
    ----------
    robot, kind, joint, quantity : str
        Where (``kind``: the URDF's hash).
    baseline : list of Point
        The baseline values.
    points : list of Point
        The recordings after the baseline (every recording for ``basis='fleet'`` use).
    reference : float
        What a change is a percentage of.
    mean, scatter : float
        Baseline mean and scatter (``statistics.baseline_scatter``).
    z : list of float
        Per point.
    alert : list of bool
        Per point: large and significant.
    """

    robot: str
    kind: str
    joint: str
    quantity: str
    baseline: list[Point]
    points: list[Point]
    reference: float = float('nan')
    mean: float = float('nan')
    scatter: float = float('nan')
    z: list[float] = field(default_factory=list)
    alert: list[bool] = field(default_factory=list)

    @property
    def own_scatter(self) -> float:
        """The sample standard deviation of the baseline alone (NaN with fewer than 2)."""
        values = [p.value for p in self.baseline]
        return float(np.std(values, ddof=1)) if len(values) > 1 else float('nan')


@dataclass
class DriftAnalysis:
    """The drift of a fleet.

    Parameters
    ----------
    index : FleetIndex
        fleet.yaml.
    series : list of Series
        Every robot's, joint's and quantity's.
    alerts : list of AlertEntry
        Sorted by z, largest first.
    file : DriftFile
        drift.yaml's content.
    """

    index: FleetIndex
    series: list[Series]
    alerts: list[AlertEntry]
    file: DriftFile


def analyse_drift(fleet_dir: str | Path) -> DriftAnalysis:
    """The drift of a fleet from the files of ``fleet identify``.

    Parameters
    ----------
    fleet_dir : str or Path
        FLEET_DIR, with fleet.yaml.

    Returns
    -------
    DriftAnalysis

    Raises
    ------
    InputError
        If fleet.yaml is missing or bad.
    """
    fleet_dir = Path(fleet_dir)
    index = FleetIndex.read(fleet_dir / INDEX)
    config = index.drift
    series = [s for robot in index.robots for s in _robot_series(fleet_dir, robot)]
    kinds = {}
    for s in series:
        kinds.setdefault((s.kind, s.joint, s.quantity), []).append(s)
    alerts = []
    for group in kinds.values():
        floor = pooled_scatter([s.own_scatter for s in group], [s.reference for s in group])
        for s in group:
            alerts += _judge(s, floor, config)
        if group[0].quantity in PARAMETERS:
            alerts += _compare(group, config)
    alerts.sort(key=lambda a: (-a.z, a.robot, a.joint, a.quantity))
    robots = [_robot_summary(robot, series, alerts) for robot in index.robots]
    file = DriftFile(settings=config, index_sha256=index.content_sha256(),
                     alerts=alerts, robots=robots)
    return DriftAnalysis(index, series, alerts, file)


def _robot_series(fleet_dir: Path, robot: RobotIndex) -> list[Series]:
    """The series of one robot, from its task records."""
    try:
        kind = file_sha256(robot.urdf)
    except InputError:
        kind = robot.urdf
    ok = [(i, r) for i, r in enumerate(robot.recordings) if r.status in ('ok', 'skipped')]
    base_names = set(robot.baseline.recordings)      # known even if its model failed
    records = {r.name: _read(fleet_dir / robot.name / r.name / RECORD) for _, r in ok}
    checks = {r.name: _read(fleet_dir / robot.name / r.name / VALIDATION) for _, r in ok}
    joints = next((rec.joints for rec in records.values() if rec is not None), [])
    torque_rms = _torque_rms(checks, base_names, len(joints))
    out = []
    for j, joint in enumerate(joints):
        for quantity in PARAMETERS:
            points = [Point(r.name, i, r.time, *_parameter(records[r.name], quantity, j))
                      for i, r in ok if records[r.name] is not None]
            points = [p for p in points if np.isfinite(p.value)]
            if not points:
                continue
            s = _series(robot.name, kind, joint, quantity, points, base_names)
            s.reference = torque_rms[j] if quantity == 'offset' else abs(s.mean)
            out.append(s)
        current = [Point(r.name, i, r.time, _error(checks[r.name], BASELINE_MODEL, j))
                   for i, r in ok]
        reference = [Point(r.name, i, r.time, _error(checks[r.name], other, j))
                     for i, r in ok if r.name in base_names for other in base_names
                     if other != r.name]
        current = [p for p in current if np.isfinite(p.value) and p.recording not in base_names]
        reference = [p for p in reference if np.isfinite(p.value)]
        if len(reference) >= 2:
            s = Series(robot.name, kind, joint, VALIDATION_ERROR, reference, current)
            s.mean = float(np.mean([p.value for p in reference]))
            s.reference = abs(s.mean)
            out.append(s)
    return out


def _series(robot, kind, joint, quantity, points, base_names) -> Series:
    baseline = [p for p in points if p.recording in base_names]
    later = [p for p in points if p.recording not in base_names]
    s = Series(robot, kind, joint, quantity, baseline, later)
    if len(baseline) >= 2:
        s.mean = float(np.mean([p.value for p in baseline]))
    return s


def _judge(s: Series, floor: float, config: DriftConfig) -> list[AlertEntry]:
    """Each point of a series against its baseline; the alert of the latest, if any."""
    if len(s.baseline) < 2 or not s.points:
        return []
    least = floor * s.reference if np.isfinite(s.reference) else 0.0
    if s.quantity == VALIDATION_ERROR:
        least = max(least, MAGNITUDE_SCATTER * abs(s.mean))
    s.scatter = baseline_scatter([p.value for p in s.baseline], [p.std for p in s.baseline],
                                 least)
    reference = s.reference if np.isfinite(s.reference) else 0.0
    s.z = [drift_z(p.value, p.std, s.mean, s.scatter, len(s.baseline)) for p in s.points]
    s.alert = [is_alert(p.value - s.mean, reference, z, config.change_percent, config.z)
               for p, z in zip(s.points, s.z)]
    if not s.alert[-1]:
        return []
    return [_alert(s.robot, s.joint, s.quantity, 'robot', s.mean, s.points, s.alert, s.z,
                   reference)]


def _compare(group: list[Series], config: DriftConfig) -> list[AlertEntry]:
    """Each robot's latest value against the robots of its kind."""
    latest = [(s, (s.points or s.baseline)[-1]) for s in group if s.points or s.baseline]
    if len(latest) < 3:
        return []
    values = [p.value for _, p in latest]
    scatter = [s.own_scatter for s, _ in latest if np.isfinite(s.own_scatter)]
    std = [p.std for _, p in latest if np.isfinite(p.std)]
    floor = float(np.sqrt((np.mean(np.square(scatter)) if scatter else 0.0)
                          + (np.mean(np.square(std)) if std else 0.0)))
    median, scale, _ = robust_z(values, floor)
    refs = [s.reference for s, _ in latest if np.isfinite(s.reference)]
    reference = float(np.median(refs)) if group[0].quantity == 'offset' and refs \
        else abs(median)
    out = []
    for s, _ in latest:
        points = s.baseline + s.points
        z = [abs(p.value - median) / scale if scale > 0 else
             (float('inf') if p.value != median else 0.0) for p in points]
        alert = [is_alert(p.value - median, reference, zi, config.change_percent, config.z)
                 for p, zi in zip(points, z)]
        if alert[-1]:
            out.append(_alert(s.robot, s.joint, s.quantity, 'fleet', median, points, alert, z,
                              reference))
    return out


def _alert(robot, joint, quantity, basis, baseline, points, alert, z, reference) -> AlertEntry:
    first = len(alert) - 1
    while first > 0 and alert[first - 1]:
        first -= 1
    current = points[-1].value
    change = 100 * (current - baseline) / reference if reference > 0 else float('inf')
    return AlertEntry(robot=robot, joint=joint, quantity=quantity, basis=basis,
                      baseline=baseline, current=current, change_percent=change, z=z[-1],
                      first_recording=points[first].recording)


def _robot_summary(robot: RobotIndex, series: list[Series],
                   alerts: list[AlertEntry]) -> RobotDrift:
    mine = [s for s in series if s.robot == robot.name]
    joints = list(dict.fromkeys(s.joint for s in mine))
    worst = []
    for joint in joints:
        zs = [s.z[-1] for s in mine if s.joint == joint and s.z]
        zs += [a.z for a in alerts if a.robot == robot.name and a.joint == joint]
        worst.append(max(zs, default=0.0))
    failed = [FailedRecording(recording=r.name, reason=r.reason or '')
              for r in robot.recordings if r.status == 'failed']
    failed += [FailedRecording(recording=r.name, reason=r.validation_reason)
               for r in robot.recordings if r.validation_reason]
    if robot.baseline.status == 'failed':
        failed.append(FailedRecording(recording='baseline', reason=robot.baseline.reason or ''))
    return RobotDrift(name=robot.name, baseline=robot.baseline.recordings, joints=joints,
                      worst_z=worst, failed=failed)


def _read(path: Path) -> TaskRecord | None:
    try:
        record = TaskRecord.read(path)
    except InputError:
        return None
    return record if record.status == 'ok' else None


def _parameter(record: TaskRecord | None, quantity: str, joint: int) -> tuple[float, float]:
    entry = record.parameters.get(quantity) if record is not None else None
    if entry is None or entry.value[joint] is None:
        return float('nan'), float('nan')
    std = entry.std[joint]
    return entry.value[joint], float('nan') if std is None else std


def _error(record: TaskRecord | None, model: str, joint: int) -> float:
    if record is None:
        return float('nan')
    entry = next((m for m in record.validations if m.model == model), None)
    return float('nan') if entry is None else entry.error_percent[joint]


def _torque_rms(checks: dict, base_names: set, n: int) -> np.ndarray:
    """Per joint, the mean torque RMS of the baseline recordings (NaN: unknown)."""
    rows = [next(m.torque_rms for m in checks[name].validations if m.model == BASELINE_MODEL)
            for name in base_names if checks.get(name) is not None and any(
                m.model == BASELINE_MODEL for m in checks[name].validations)]
    return np.mean(rows, axis=0) if rows else np.full(n, np.nan)


def report_is_current(fleet_dir: str | Path) -> bool:
    """Whether drift.yaml and the page were made from the present fleet.yaml.

    Parameters
    ----------
    fleet_dir : str or Path
        FLEET_DIR.

    Returns
    -------
    bool
    """
    fleet_dir = Path(fleet_dir)
    try:
        drift = DriftFile.read(fleet_dir / DRIFT)
        index = FleetIndex.read(fleet_dir / INDEX)
    except InputError:       # missing, or from another version: make it anew
        return False
    return drift.index_sha256 == index.content_sha256() and \
        (fleet_dir / REPORT / PAGE).is_file()
