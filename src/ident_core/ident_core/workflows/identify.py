"""The identification jobs: identify recordings, validate on others and write RESULT.yaml
(``identify_recordings``); validate a model on a recording (``validate_recording``)."""
from __future__ import annotations

import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..estimation.identification import Validation, identify, validate
from ..estimation.identified_model import IdentifiedModel
from ..estimation.results import ResultFile, read_result, result_file
from ..files import write_atomic
from ..model.robot import RobotModel
from ..progress import Progress
from .inputs import RecordingOptions, load_recording, robot_model
from .outputs import output_path
from .report import ReportAfter, report_after


@dataclass
class IdentifyOutcome:
    """What ``identify_recordings`` found and wrote.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    validations : list of Validation
        One per validation recording (the held-out parts of a split first).
    content : ResultFile
        What RESULT.yaml holds.
    result_path : Path
        RESULT.yaml, as written.
    report : ReportAfter
        The report asked for: its page, or why it failed (RESULT.yaml stands).
    """

    model: IdentifiedModel
    validations: list[Validation]
    content: ResultFile
    result_path: Path
    report: ReportAfter = field(default_factory=ReportAfter)

    @property
    def files(self) -> list[Path]:
        """The files written: RESULT.yaml, then the report's page."""
        return [self.result_path] + self.report.files

    @property
    def preprocessing(self) -> list[str]:
        """What the preprocessing did, one line per recording and decision: the identification
        recordings', then the validation recordings'."""
        return self.model.stats['preprocessing'] + [line for v in self.validations
                                                    for line in v.preprocessing]


@dataclass
class ValidateOutcome:
    """What ``validate_recording`` found and wrote.

    Parameters
    ----------
    model : IdentifiedModel
        The model validated.
    validation : Validation
        Its prediction of the recording.
    files : list of Path
        The CSV of the predictions, when asked for.
    """

    model: IdentifiedModel
    validation: Validation
    files: list[Path] = field(default_factory=list)


def identify_recordings(robot: RobotModel | str | Path, data: Sequence[str | Path],
                        config: IdentificationConfig | None = None, *,
                        validation: Sequence[str | Path] = (), split: float | None = None,
                        recordings: RecordingOptions | None = None,
                        out: str | Path | None = None, report: str | Path | bool | None = None,
                        progress: Progress = None) -> IdentifyOutcome:
    """Identify a robot from recordings, validate the model, write RESULT.yaml.

    The recordings are read one at a time, when the identification needs them, and let go once
    reduced (long logs).

    Parameters
    ----------
    robot : RobotModel, str or Path
        The robot, or its URDF.
    data : sequence of str or Path
        Identification recordings (dataset descriptions, ``.npz``, rosbag2), all through the
        same transmission.
    config : IdentificationConfig, optional
        Model columns, filtering, estimator (default: ``IdentificationConfig()``).
    validation : sequence of str or Path
        Recordings to validate on (never used for identification).
    split : float, optional
        Identify on the first ``split`` of each ``data`` recording, validate on the rest
        (before ``validation``); in (0, 1).
    recordings : RecordingOptions, optional
        How to read the recordings (default: ``RecordingOptions()``, a bag cut to its
        excitation).
    out : str or Path, optional
        RESULT.yaml to write; default ``<first recording>.result.yaml``
        (``outputs.output_path``).
    report : str, Path or bool, optional
        Also write the HTML report of RESULT.yaml into this folder; True: ``<stem>_report``
        beside it.
    progress : callable or object with ``update(n)``, optional
        Told of the reading, the identification and the validations (``ident_core.progress``).

    Returns
    -------
    IdentifyOutcome

    Raises
    ------
    InputError
        For a bad recording, setting or split, naming the file and the problem.
    ExcitationError
        If the recordings leave some base parameters unexcited.
    """
    if not data:
        raise InputError('identify: no dataset given')
    if split is not None and not 0 < split < 1:
        raise InputError(f'split must be in (0, 1), got {split}')
    robot = robot_model(robot)
    config = config or IdentificationConfig()
    options = recordings or RecordingOptions()
    joints = robot.joint_names
    train = (load_recording(p, options, joints, progress) for p in data)
    held_out = []
    if split is not None:
        parts = [d.split(split) for d in train]
        train, held_out = [a for a, _ in parts], [b for _, b in parts]
    model = identify(robot, train, config, progress=progress)
    del train
    checks = itertools.chain(held_out, (load_recording(p, options, joints, progress)
                                        for p in validation))
    validations = [validate(model, d, progress=progress) for d in checks]
    content = result_file(model, [v.report() for v in validations])
    written = content.write(output_path('result', data[0], out))
    return IdentifyOutcome(model, validations, content, written,
                           report_after(written, report, progress, model=written, urdf=robot,
                                        recover=options.recover))


def validate_recording(model: IdentifiedModel | str | Path, data: str | Path, *,
                       urdf: str | Path | None = None, ignore_urdf_change: bool = False,
                       recordings: RecordingOptions | None = None,
                       csv: str | Path | None = None,
                       progress: Progress = None) -> ValidateOutcome:
    """Predict the torques of a recording with an identified model and compare.

    Parameters
    ----------
    model : IdentifiedModel, str or Path
        The model, or its RESULT.yaml.
    data : str or Path
        The recording.
    urdf : str or Path, optional
        Use this URDF instead of the one RESULT.yaml names.
    ignore_urdf_change : bool
        Accept a URDF that differs from the one the model was identified with.
    recordings : RecordingOptions, optional
        How to read the recording (as for ``identify_recordings``).
    csv : str or Path, optional
        Also write time, measured and predicted torques here (``t``, ``measured_<joint>``...,
        ``predicted_<joint>``...).
    progress : callable or object with ``update(n)``, optional
        Told of the reading and the two steps of the validation.

    Returns
    -------
    ValidateOutcome

    Raises
    ------
    InputError
        For a bad result file, URDF or recording.
    """
    if not isinstance(model, IdentifiedModel):
        model = read_result(model, urdf, ignore_urdf_change)
    dataset = load_recording(data, recordings, model.robot.joint_names, progress)
    v = validate(model, dataset, progress=progress)
    files = [write_atomic(Path(csv), _predictions_csv(v, model.robot.joint_names))] if csv \
        else []
    return ValidateOutcome(model, v, files)


def _predictions_csv(v: Validation, joints: list[str]) -> str:
    """The CSV text of a validation's measured and predicted torques."""
    buf = io.StringIO()
    header = ['t'] + [f'measured_{j}' for j in joints] + [f'predicted_{j}' for j in joints]
    np.savetxt(buf, np.column_stack([v.t, v.measured, v.predicted]),
               delimiter=',', header=','.join(header), comments='', fmt='%.9g')
    return buf.getvalue()
