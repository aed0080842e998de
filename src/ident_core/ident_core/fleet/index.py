"""The index of a fleet run, fleet.yaml (``format: robot-ident/fleet-index/1``).

Per robot, its baseline and per recording its time, status, fit error and the error of the
baseline model on it::

    manifest: /plant/FLEET.yaml
    drift: {baseline: 3, change_percent: 20.0, z: 4.0}
    robots:
      - name: r1
        urdf: /plant/urdf/ur5.urdf
        baseline: {status: ok, recordings: [night1, night2, night3], reason: null}
        recordings:
          - {name: night4, path: ..., time: '2026-03-04T22:00:00+00:00', time_source: start_time,
             status: ok, reason: null, fit_error_percent: 3.1, validation_error_percent: 3.4}

``status``: ``ok`` (identified now), ``skipped`` (inputs unchanged: the result of an earlier run
stands) or ``failed`` (``reason``: the one line the CLI would print). Paths of results are
``<robot>/<name>/RESULT.yaml`` beside fleet.yaml.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import pydantic

from ..schema import Document, Schema
from .hashing import combined
from .manifest import BASELINE, DriftConfig, Fleet
from .plan import Outcome, RobotPlan
from .records import BASELINE_MODEL

INDEX = 'fleet.yaml'


class RecordingEntry(Schema):
    """One recording of a robot in the index.

    Parameters
    ----------
    name : str
        Its folder under the robot's.
    path : str
        The recording.
    time : str, optional
        Its start (ISO 8601), when known.
    time_source : {'start_time', 'bag', 'order'}
        What orders it (``manifest.FleetRecording``).
    status : {'ok', 'skipped', 'failed', 'pending'}
        Of its identification (``pending``: never ran, the run was interrupted).
    reason : str, optional
        Why it failed.
    fit_error_percent : float, optional
        Relative error of its own fit [%].
    validation_error_percent : float, optional
        Relative error of the robot's baseline model on it [%].
    validation_reason : str, optional
        Why that validation failed.
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)

    name: str
    path: str
    time: str | None = None
    time_source: Literal['start_time', 'bag', 'order']
    status: Literal['ok', 'skipped', 'failed', 'pending']
    reason: str | None = None
    fit_error_percent: float | None = None
    validation_error_percent: float | None = None
    validation_reason: str | None = None


class BaselineEntry(Schema):
    """A robot's baseline model.

    Parameters
    ----------
    status : {'ok', 'skipped', 'failed', 'pending'}
        Of its identification (``pending``: too few recordings succeeded yet).
    recordings : list of str
        The recordings it was identified on.
    reason : str, optional
        Why it failed, or is pending.
    """

    status: Literal['ok', 'skipped', 'failed', 'pending']
    recordings: list[str] = []
    reason: str | None = None


class RobotIndex(Schema):
    """One robot in the index.

    Parameters
    ----------
    name : str
        The robot.
    urdf : str
        Its URDF.
    baseline : BaselineEntry
        Its baseline model (``<robot>/baseline/RESULT.yaml``).
    recordings : list of RecordingEntry
        Oldest first.
    """

    name: str
    urdf: str
    baseline: BaselineEntry
    recordings: list[RecordingEntry]


class FleetIndex(Document):
    """The fleet index, fleet.yaml (module docstring).

    Parameters
    ----------
    format : str
        ``robot-ident/fleet-index/1``.
    manifest : str
        The manifest.
    drift : DriftConfig
        The manifest's drift settings (``fleet report`` reads them here).
    robots : list of RobotIndex
        In the manifest's order.
    """

    kind = 'fleet index'

    format: Literal['robot-ident/fleet-index/1'] = 'robot-ident/fleet-index/1'
    manifest: str
    drift: DriftConfig
    robots: list[RobotIndex]

    def content_sha256(self) -> str:
        """A hash of what the drift depends on: the index with ``skipped`` read as ``ok``.

        Returns
        -------
        str
            Hexadecimal digest.
        """
        document = self.model_dump(mode='json')
        for robot in document['robots']:
            for entry in [robot['baseline'], *robot['recordings']]:
                if entry['status'] == 'skipped':
                    entry['status'] = 'ok'
        return combined([document])

    def failures(self) -> list[tuple[str, str, str]]:
        """Every failed task.

        Returns
        -------
        list of (str, str, str)
            (robot, recording or ``baseline``, reason), the validations' too.
        """
        out = []
        for robot in self.robots:
            if robot.baseline.status == 'failed':
                out.append((robot.name, BASELINE, robot.baseline.reason or ''))
            for rec in robot.recordings:
                if rec.status == 'failed':
                    out.append((robot.name, rec.name, rec.reason or ''))
                if rec.validation_reason:
                    out.append((robot.name, rec.name, rec.validation_reason))
        return out


def fleet_index(fleet: Fleet, plans: Iterable[RobotPlan]) -> FleetIndex:
    """The index of a fleet run.

    Parameters
    ----------
    fleet : Fleet
        The manifest.
    plans : iterable of RobotPlan
        One per robot, with their outcomes.

    Returns
    -------
    FleetIndex
    """
    robots = []
    for plan in plans:
        entries = []
        for rec in plan.robot.recordings:
            ident = plan.outcomes.get(('identify', rec.name))
            valid = plan.outcomes.get(('validate', rec.name))
            errors = _baseline_errors(valid)
            entries.append(RecordingEntry(
                name=rec.name, path=str(rec.path),
                time=rec.time.isoformat() if rec.time else None, time_source=rec.time_source,
                status=_status(ident), reason=ident.record.reason if ident else None,
                fit_error_percent=ident.record.fit_error_percent if ident else None,
                validation_error_percent=errors,
                validation_reason=valid.record.reason if valid and not valid.ok else None))
        base = plan.outcomes.get(('baseline', BASELINE))
        recordings = plan.baseline_recordings()
        baseline = BaselineEntry(
            status=_status(base), recordings=[r.name for r in recordings or []],
            reason=base.record.reason if base else
            f'fewer than {fleet.manifest.drift.baseline} recordings identified')
        robots.append(RobotIndex(name=plan.robot.name, urdf=str(plan.robot.urdf),
                                 baseline=baseline, recordings=entries))
    return FleetIndex(manifest=str(fleet.path), drift=fleet.manifest.drift,
                      robots=robots)


def _status(outcome: Outcome | None) -> str:
    if outcome is None:
        return 'pending'
    if not outcome.ok:
        return 'failed'
    return 'skipped' if outcome.reused else 'ok'


def _baseline_errors(outcome: Outcome | None) -> float | None:
    if outcome is None or not outcome.ok:
        return None
    return next((m.relative_error_percent for m in outcome.record.validations
                 if m.model == BASELINE_MODEL), None)
