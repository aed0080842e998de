"""What a fleet task is and what it leaves: the work unit (``Task``, a frozen dataclass of
paths, configuration schemas and the hash of its inputs) and its record (``TaskRecord``, written
as TASK.yaml, or VALIDATION.yaml which is the validate task's own result). Running a task is
``tasks.run_task``, on a worker.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pydantic
from pydantic import Field

from ..estimation.config import IdentificationConfig
from ..schema import Document, Schema
from ..workflows.inputs import RecordingOptions

#: What each kind of task writes, in its folder.
RESULT, RECORD, VALIDATION = 'RESULT.yaml', 'TASK.yaml', 'VALIDATION.yaml'
#: The label of the baseline model in VALIDATION.yaml.
BASELINE_MODEL = 'baseline'

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
