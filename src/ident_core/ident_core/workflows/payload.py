"""The payload jobs: identify a payload from recordings and write PAYLOAD.yaml
(``payload_from_recordings``), and write the URDF with a payload identified earlier
(``export_payload_urdf``)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..estimation.identified_model import IdentifiedModel
from ..estimation.results import read_result
from ..files import write_atomic
from ..model.inertial import LinkInertial
from ..model.robot import RobotModel
from ..payload.frame import payload_frame
from ..payload.geometry import frame_in_link
from ..payload.identify import PayloadIdentification, identify_payload
from ..payload.methods import PayloadConfig
from ..payload.results import PayloadData, PayloadFile, payload_file
from ..payload.urdf import urdf_with_fixed_body
from ..progress import Progress
from .inputs import RecordingOptions, load_recording, robot_model
from .outputs import output_path
from .report import ReportAfter, report_after


@dataclass
class PayloadOutcome:
    """What a payload job found and wrote.

    Parameters
    ----------
    content : PayloadFile
        The payload (PAYLOAD.yaml's content).
    identification : PayloadIdentification or None
        Every method's estimate; None when an earlier result was exported.
    payload_path : Path or None
        PAYLOAD.yaml written; None when an earlier result was exported.
    urdf_path : Path or None
        The URDF with the payload, when asked for and written.
    urdf_link : str or None
        The link the payload is fixed to in that URDF.
    urdf_failure : Exception or None
        Why the URDF asked for could not be written (PAYLOAD.yaml stands; no report is tried).
    report : ReportAfter
        The report asked for: its page, or why it failed.
    """

    content: PayloadFile
    identification: PayloadIdentification | None = None
    payload_path: Path | None = None
    urdf_path: Path | None = None
    urdf_link: str | None = None
    urdf_failure: Exception | None = None
    report: ReportAfter = field(default_factory=ReportAfter)

    @property
    def files(self) -> list[Path]:
        """The files written: PAYLOAD.yaml, the URDF, the report's page (those written)."""
        return [f for f in (self.payload_path, self.urdf_path) if f] + self.report.files


def payload_from_recordings(robot: RobotModel | str | Path, loaded: Sequence[str | Path],
                            config: PayloadConfig | None = None, *,
                            unloaded: Sequence[str | Path] = (),
                            model: IdentifiedModel | str | Path | None = None,
                            ignore_urdf_change: bool = False, method: str = 'all',
                            frame: str | None = None, known_mass: float | None = None,
                            recordings: RecordingOptions | None = None,
                            out: str | Path | None = None,
                            export_urdf: str | Path | None = None,
                            report: str | Path | bool | None = None,
                            progress: Progress = None) -> PayloadOutcome:
    """Identify a payload by one method or all, write PAYLOAD.yaml (docs/methods.md §11).

    Parameters
    ----------
    robot : RobotModel, str or Path
        The robot, or its URDF.
    loaded : sequence of str or Path
        Recordings with the payload.
    config : PayloadConfig, optional
        Robot model columns and filtering (default: ``PayloadConfig()``).
    unloaded : sequence of str or Path
        Recordings without it.
    model : IdentifiedModel, str or Path, optional
        The robot's identified model (or RESULT.yaml, read with ``robot``'s URDF), for the
        ``model`` and ``static`` methods.
    ignore_urdf_change : bool
        Accept a URDF that differs from the one RESULT.yaml was identified with.
    method : str
        A method of ``payload.methods.METHODS``, or ``'all'``: every method the inputs allow.
    frame : str, optional
        Payload frame (a joint, link or fixed-joint frame); default the last joint's.
    known_mass : float, optional
        The payload's mass [kg], to identify one drive gain per joint first.
    recordings : RecordingOptions, optional
        How to read the recordings (default: ``RecordingOptions()``).
    out : str or Path, optional
        PAYLOAD.yaml to write; default ``<first loaded recording>.payload.yaml``
        (``outputs.output_path``).
    export_urdf : str or Path, optional
        Also write the URDF with the payload as a fixed link (``export_payload_urdf``).
    report : str, Path or bool, optional
        Also write the HTML report of PAYLOAD.yaml into this folder; True: ``<stem>_report``
        beside it.
    progress : callable or object with ``update(n)``, optional
        Told of the reading and of each method (``ident_core.progress``).

    Returns
    -------
    PayloadOutcome
        ``PayloadData`` of PAYLOAD.yaml names the recordings by their sources (a bag cut to its
        excitation by its window).

    Raises
    ------
    InputError
        For a bad recording, model or request (see ``payload.identify.identify_payload``).
    IdentError
        If the method asked for, or with ``'all'`` every method, fails.
    """
    robot = robot_model(robot)
    options = recordings or RecordingOptions()
    joints = robot.joint_names
    unloaded_data = [load_recording(p, options, joints, progress) for p in unloaded]
    loaded_data = [load_recording(p, options, joints, progress) for p in loaded]
    model_file = None if model is None or isinstance(model, IdentifiedModel) else str(model)
    if model_file is not None:
        model = read_result(model_file, robot, ignore_urdf_change)
    result = identify_payload(robot, loaded_data, method, frame=frame, unloaded=unloaded_data,
                              model=model, config=config or PayloadConfig(),
                              known_mass=known_mass, progress=progress)
    content = payload_file(robot, result, PayloadData(
        unloaded=[d.source for d in unloaded_data], loaded=[d.source for d in loaded_data],
        model=model_file))
    written = content.write(output_path('payload', loaded[0], out))
    outcome = PayloadOutcome(content, result, written)
    _extras(outcome, robot, export_urdf, written, report, progress)
    return outcome


def export_payload_urdf(robot: RobotModel | str | Path, payload: str | Path,
                        out: str | Path, *, report: str | Path | bool | None = None,
                        progress: Progress = None) -> PayloadOutcome:
    """Write the URDF with a payload identified earlier fixed to the link that carries its
    frame (``model.urdf_export.urdf_with_fixed_body``).

    Parameters
    ----------
    robot : RobotModel, str or Path
        The robot, or its URDF.
    payload : str or Path
        PAYLOAD.yaml.
    out : str or Path
        The URDF to write.
    report : str, Path or bool, optional
        Also write the HTML report of PAYLOAD.yaml into this folder; True: ``<stem>_report``
        beside it.
    progress : callable or object with ``update(n)``, optional
        Told of the report's sections.

    Returns
    -------
    PayloadOutcome
        Without identification and PAYLOAD.yaml.

    Raises
    ------
    InputError
        For a bad PAYLOAD.yaml, or a payload whose selected method did not estimate the
        inertia (a URDF link needs one).
    """
    outcome = PayloadOutcome(PayloadFile.read(payload))
    _extras(outcome, robot_model(robot), out, payload, report, progress)
    if outcome.urdf_failure is not None:
        raise outcome.urdf_failure
    return outcome


def _extras(outcome: PayloadOutcome, robot: RobotModel, urdf: str | Path | None,
            payload: str | Path, report: str | Path | bool | None, progress: Progress) -> None:
    """Write the URDF with the payload of the file ``payload`` and its report into ``outcome``;
    a URDF that fails is kept in ``outcome.urdf_failure`` and no report is tried."""
    try:
        if urdf:
            outcome.urdf_path, outcome.urdf_link = _write_urdf(robot, outcome.content, urdf,
                                                               str(payload))
    except Exception as exc:              # PAYLOAD.yaml is written; the URDF is an extra
        outcome.urdf_failure = exc
        return
    outcome.report = report_after(Path(payload), report, progress, payload=payload)


def _write_urdf(robot: RobotModel, content: PayloadFile, path: str | Path,
                source: str) -> tuple[Path, str]:
    """Write the URDF with the payload fixed to the body carrying its frame; (the file, that
    body's link)."""
    if content.inertia is None:
        raise InputError(f'{source}: the selected method ({content.selected}) did not estimate '
                         'the inertia; a URDF link needs one')
    link, placement = frame_in_link(robot, payload_frame(robot, content.frame))
    body = LinkInertial('', 'payload', content.mass, np.array(content.com),
                        np.array(content.inertia), True)
    text = urdf_with_fixed_body(robot, link, 'payload', placement, body,
                                f'identified payload ({content.selected} method, {source}), '
                                f'frame {content.frame}')
    return write_atomic(path, text), link
