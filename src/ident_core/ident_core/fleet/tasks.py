"""The work units of a fleet, and their records: what a worker runs and writes.

A task is a frozen dataclass of paths, configuration schemas and the hash of its inputs; it
pickles, and ``run_task`` runs it anywhere the package is installed and the paths are
reachable. Three kinds, each calling one workflow:

``identify``  one recording → ``<robot>/<recording>/RESULT.yaml`` (``identify_recordings``)
``baseline``  the robot's first successful recordings together → ``<robot>/baseline/RESULT.yaml``
``validate``  one recording predicted by the baseline model (and, for a baseline recording, by
              the other baseline recordings' own models) → ``<robot>/<recording>/VALIDATION.yaml``

Every file is written atomically (``files.write_atomic``); the record (TASK.yaml, or
VALIDATION.yaml which is its own record) is written last, so a task whose worker is killed
leaves either nothing new or its complete files. A bad input (``IdentError``) is the task's
result: a record with status ``failed`` and the one line the CLI would print.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pydantic
from pydantic import Field

from ..errors import IdentError
from ..estimation.config import IdentificationConfig
from ..schema import Document, Schema
from ..threads import limit_blas_threads
from ..workflows.identify import identify_recordings, validate_recording
from ..workflows.inputs import RecordingOptions

#: What each kind of task writes, in its folder.
RESULT, RECORD, VALIDATION = 'RESULT.yaml', 'TASK.yaml', 'VALIDATION.yaml'
#: The label of the baseline model in VALIDATION.yaml.
BASELINE_MODEL = 'baseline'

#: Whether this process has limited its BLAS threads (once per worker process).
_THREADS_LIMITED = []


class ModelErrors(Schema):
    """How well one model predicts a recording, per joint.

    Parameters
    ----------
    model : str
        ``baseline``, or the recording whose own model it is.
    relative_error_percent : float
        Of all joints (``metrics.relative_error_percent``) [%].
    error_percent : list of float
        Per joint: RMS of the prediction error over the RMS of the measured torque [%].
    torque_rms : list of float
        Per joint: RMS of the measured torque [N·m or N].
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)     # a joint without torque

    model: str
    relative_error_percent: float
    error_percent: list[float]
    torque_rms: list[float]


class ActuatorParameters(Schema):
    """One actuator parameter of every joint, as identified.

    Parameters
    ----------
    value : list of float or None
        Per joint (RESULT.yaml's ``actuators``); None where regrouped.
    std : list of float or None
        Their standard deviations.
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)

    value: list[float | None]
    std: list[float | None]


class TaskRecord(Document):
    """TASK.yaml or VALIDATION.yaml: what a task did with which inputs.

    Parameters
    ----------
    format : str
        ``robot-ident/fleet-task/1``.
    task : {'identify', 'baseline', 'validate'}
        Its kind.
    inputs_sha256 : str
        The hash of its inputs (``hashing``); equal next time: the task is done.
    status : {'ok', 'failed'}
        Whether it wrote its result.
    reason : str, optional
        Why it failed: the one line the CLI would print.
    data : list of str
        The recordings it read.
    fit_error_percent : float, optional
        identify, baseline: relative error of the fit [%].
    joints : list of str
        identify, baseline: the joints, the order of ``parameters``.
    parameters : dict of str to ActuatorParameters
        identify, baseline: ``Ia``, ``fv``, ``fc``, ``offset`` (those in the model) with
        their standard deviations.
    validations : list of ModelErrors
        validate: one per model.
    warnings : list of str
        The data warnings of the task.
    seconds : float
        Time it took on its worker [s].
    """

    kind = 'fleet task record'
    model_config = pydantic.ConfigDict(allow_inf_nan=True)

    format: Literal['robot-ident/fleet-task/1'] = 'robot-ident/fleet-task/1'
    task: Literal['identify', 'baseline', 'validate']
    inputs_sha256: str
    status: Literal['ok', 'failed']
    reason: str | None = None
    data: list[str] = []
    fit_error_percent: float | None = None
    joints: list[str] = []
    parameters: dict[str, ActuatorParameters] = {}
    validations: list[ModelErrors] = []
    warnings: list[str] = []
    seconds: float = Field(0.0, ge=0)


@dataclass(frozen=True)
class Task:
    """One work unit of a fleet.

    Parameters
    ----------
    kind : {'identify', 'baseline', 'validate'}
        What it does (module docstring).
    robot : str
        The robot.
    name : str
        The recording, or ``baseline``: the folder it writes into.
    urdf : str
        The robot's URDF.
    data : tuple of str
        The recordings it reads.
    folder : str
        Where it writes.
    config : IdentificationConfig
        How to identify.
    options : RecordingOptions
        How to read the recordings.
    models : tuple of (str, str)
        validate: (label, RESULT.yaml) of each model to validate with.
    inputs_sha256 : str
        The hash of its inputs; empty when they could not be read (the task then runs, and
        fails saying why).
    """

    kind: str
    robot: str
    name: str
    urdf: str
    data: tuple[str, ...]
    folder: str
    config: IdentificationConfig
    options: RecordingOptions
    models: tuple[tuple[str, str], ...] = ()
    inputs_sha256: str = ''

    @property
    def record_path(self) -> Path:
        """Its record: VALIDATION.yaml for validate, else TASK.yaml."""
        return Path(self.folder) / (VALIDATION if self.kind == 'validate' else RECORD)

    @property
    def result_path(self) -> Path | None:
        """The RESULT.yaml it writes (None for validate)."""
        return None if self.kind == 'validate' else Path(self.folder) / RESULT

    @property
    def key(self) -> str:
        """A unique, readable Dask key: kind, robot, name and the start of the hash."""
        return f'{self.kind}-{self.robot}-{self.name}-{self.inputs_sha256[:12] or "new"}'


def run_task(task: Task) -> TaskRecord:
    """Run a task and write its files; on a worker, or anywhere.

    BLAS is limited to ``threads.blas_threads()`` threads (one by default) in the process the
    first time. Temporary files that a killed run of the task left in its folder are removed
    first.

    Parameters
    ----------
    task : Task
        The task.

    Returns
    -------
    TaskRecord
        As written to ``task.record_path``.

    Raises
    ------
    OSError
        If its files cannot be written (Dask retries the task).
    """
    if not _THREADS_LIMITED:
        limit_blas_threads()
        _THREADS_LIMITED.append(True)
    start = time.perf_counter()
    folder = Path(task.folder)
    for stale in folder.glob('.*.tmp'):
        stale.unlink(missing_ok=True)
    fields = {'task': task.kind, 'inputs_sha256': task.inputs_sha256, 'data': list(task.data)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            fields.update(_run(task))
            fields['status'] = 'ok'
        except IdentError as exc:
            fields.update(status='failed', reason=str(exc))
            if task.result_path is not None:
                task.result_path.unlink(missing_ok=True)      # not an older run's result
    fields['warnings'] = sorted({str(w.message) for w in caught})
    fields['seconds'] = time.perf_counter() - start
    record = TaskRecord(**fields)
    record.write(task.record_path)
    return record


def _run(task: Task) -> dict:
    """The record fields of a task's work."""
    if task.kind == 'validate':
        return {'validations': [_errors(label, model, task)
                                for label, model in task.models]}
    model = identify_recordings(task.urdf, list(task.data), task.config,
                                recordings=task.options, out=task.result_path).model
    values, std = model.actuator_values(), model.actuator_std()
    return {'fit_error_percent': float(model.stats['relative_error_percent']),
            'joints': list(model.robot.joint_names),
            'parameters': {k: ActuatorParameters(value=values[k], std=std[k]) for k in std}}


def _errors(label: str, model: str, task: Task) -> ModelErrors:
    """How one model predicts the task's recording."""
    v = validate_recording(model, task.data[0], recordings=task.options).validation
    torque_rms = np.sqrt(np.mean(v.measured ** 2, axis=0))
    error_rms = np.sqrt(np.mean((v.predicted - v.measured) ** 2, axis=0))
    with np.errstate(divide='ignore', invalid='ignore'):
        percent = 100 * error_rms / torque_rms
    return ModelErrors(model=label, relative_error_percent=v.metrics['relative_error_percent'],
                       error_percent=percent.tolist(), torque_rms=torque_rms.tolist())
