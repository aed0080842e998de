"""Which tasks a robot needs now, given what is done: its recordings' identifications first,
its baseline model once its first ``drift.baseline`` successful recordings are known, then the
validation of each successful recording with that model.

A task is done, and not run again, when its record holds the hash of its present inputs
(``hashing``) and its result is there (``reusable``): a new recording, a changed file, URDF or
setting reruns exactly the tasks that read it, and those that depend on their results.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .hashing import FileHashes, combined, recording_sha256
from .manifest import BASELINE, FleetManifest, FleetRobot
from .records import BASELINE_MODEL, Task, TaskRecord


@dataclass
class Outcome:
    """A task and what came of it.

    Parameters
    ----------
    task : Task
        The task.
    record : TaskRecord
        Its record (for a task that failed on its worker without one: status ``failed``, not
        written).
    reused : bool
        Done by an earlier run, inputs unchanged.
    """

    task: Task
    record: TaskRecord
    reused: bool = False

    @property
    def ok(self) -> bool:
        """Whether the task wrote its result."""
        return self.record.status == 'ok'


def reusable(task: Task) -> TaskRecord | None:
    """The record of an earlier run of a task with the same inputs, if its result is there.

    Parameters
    ----------
    task : Task
        A task about to be offered, its inputs hashed.

    Returns
    -------
    TaskRecord or None
        None when the task must run.
    """
    if not task.inputs_sha256:
        return None
    try:
        record = TaskRecord.read(task.record_path)
    except InputError:
        return None
    if record.inputs_sha256 != task.inputs_sha256 or record.task != task.kind:
        return None
    if record.status == 'ok' and task.result_path is not None and not task.result_path.is_file():
        return None
    return record


class RobotPlan:
    """The tasks of one robot, and their outcomes as they come.

    Parameters
    ----------
    robot : FleetRobot
        The robot and its recordings.
    manifest : FleetManifest
        Settings of the fleet.
    out_dir : Path
        FLEET_DIR.
    hashes : FileHashes, optional
        Remembered file hashes (default: read every file).
    """

    def __init__(self, robot: FleetRobot, manifest: FleetManifest, out_dir: Path,
                 hashes: FileHashes | None = None):
        self.robot, self.manifest, self.out_dir = robot, manifest, Path(out_dir)
        self.hashes = hashes or FileHashes()
        self.outcomes: dict[tuple[str, str], Outcome] = {}
        self._offered: set[tuple[str, str]] = set()
        self._settings = [manifest.identification.model_dump(mode='json'),
                          manifest.recordings.model_dump(mode='json')]
        try:
            self._urdf_sha = self.hashes.sha256(robot.urdf)
        except InputError:
            self._urdf_sha = ''
        self._data_sha = {}
        for rec in robot.recordings:
            try:
                self._data_sha[rec.name] = recording_sha256(rec.path, self.hashes)
            except InputError:
                self._data_sha[rec.name] = ''

    def record(self, outcome: Outcome) -> None:
        """Note a task's outcome.

        Parameters
        ----------
        outcome : Outcome
            Of one of the tasks this plan offered.
        """
        self.outcomes[(outcome.task.kind, outcome.task.name)] = outcome

    def ready(self) -> list[Task]:
        """The tasks whose inputs are known now and that were not offered before.

        Returns
        -------
        list of Task
        """
        new = [self._identify(rec) for rec in self.robot.recordings
               if ('identify', rec.name) not in self._offered]
        base = self.baseline_recordings()
        if base is not None:
            if ('baseline', BASELINE) not in self._offered:
                new.append(self._baseline(base))
            done = self.outcomes.get(('baseline', BASELINE))
            if done is not None and done.ok:
                new += [self._validate(rec, base, done.task) for rec in self.robot.recordings
                        if ('validate', rec.name) not in self._offered
                        and self._ok('identify', rec.name)]
        self._offered.update((t.kind, t.name) for t in new)
        return new

    def baseline_recordings(self) -> list | None:
        """The recordings of the baseline, once known.

        Returns
        -------
        list of FleetRecording or None
            The first ``drift.baseline`` recordings whose identification succeeded; None while
            an earlier identification is still running, or if too few succeeded.
        """
        need, found = self.manifest.drift.baseline, []
        for rec in self.robot.recordings:
            outcome = self.outcomes.get(('identify', rec.name))
            if outcome is None:
                return None
            if outcome.ok:
                found.append(rec)
                if len(found) == need:
                    return found
        return None

    def _ok(self, kind: str, name: str) -> bool:
        outcome = self.outcomes.get((kind, name))
        return outcome is not None and outcome.ok

    def _task(self, kind, name, data, inputs, models=()) -> Task:
        digest = combined([kind, *self._settings, self._urdf_sha, *inputs]) \
            if all(inputs) and self._urdf_sha else ''
        return Task(kind, self.robot.name, name, str(self.robot.urdf),
                    tuple(str(p) for p in data), str(self.out_dir / self.robot.name / name),
                    self.manifest.identification, self.manifest.recordings, tuple(models),
                    digest)

    def _identify(self, rec) -> Task:
        return self._task('identify', rec.name, [rec.path], [self._data_sha[rec.name]])

    def _baseline(self, base) -> Task:
        return self._task('baseline', BASELINE, [r.path for r in base],
                          [self._data_sha[r.name] for r in base])

    def _validate(self, rec, base, baseline: Task) -> Task:
        models = [(BASELINE_MODEL, baseline.result_path)]
        if rec in base:
            models += [(other.name, self.out_dir / self.robot.name / other.name / 'RESULT.yaml')
                       for other in base if other != rec]
        hashes = [self._data_sha[rec.name]]
        for label, path in models:
            try:
                hashes.append(f'{label}:{self.hashes.sha256(path)}')
            except InputError:
                hashes.append('')
        return self._task('validate', rec.name, [rec.path], hashes,
                          [(label, str(path)) for label, path in models])
