"""The report job: the HTML report of result files (``report.page.write_report``), on its own or
after the job that wrote them."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.robot import RobotModel
from ..progress import Progress
from .outputs import report_folder


@dataclass
class ReportOutcome:
    """What ``report_results`` wrote.

    Parameters
    ----------
    page : Path
        ``DIR/index.html``.
    """

    page: Path

    @property
    def files(self) -> list[Path]:
        """The files written: the page."""
        return [self.page]


def report_results(out_dir: str | Path | None = None, *, model: str | Path | None = None,
                   payload: str | Path | None = None, friction: str | Path | None = None,
                   torques: str | Path | None = None,
                   urdf: str | Path | RobotModel | None = None,
                   ignore_urdf_change: bool = False, recover: bool = False,
                   progress: Progress = None) -> ReportOutcome:
    """Write the HTML report of result files.

    Parameters
    ----------
    out_dir : str or Path, optional
        The report's folder; default ``<stem>_report`` beside the first of ``model``,
        ``payload``, ``friction``, ``torques`` given (``outputs.report_folder``).
    model, payload, friction, torques : str or Path, optional
        RESULT.yaml, PAYLOAD.yaml, FRICTION.yaml and TORQUES.csv; at least one.
    urdf : str, Path or RobotModel, optional
        Use this URDF (or robot) instead of the one the files name.
    ignore_urdf_change : bool
        Accept a URDF whose content differs from the one RESULT.yaml was identified with.
    recover : bool
        Read recordings a killed recorder left unfinished up to the damage.
    progress : callable or object with ``update(n)``, optional
        Told of each section and recording (``ident_core.progress``).

    Returns
    -------
    ReportOutcome

    Raises
    ------
    InputError
        If no input is given, or an input file is missing or malformed (naming it).
    """
    # deliberately lazy: the report loads matplotlib and the friction fits, which the jobs that
    # only offer a report (identify, payload, friction) need not load
    from ..report.page import ReportInputs, write_report

    inputs = ReportInputs(model=model, payload=payload, friction=friction, torques=torques,
                          urdf=urdf, ignore_urdf_change=ignore_urdf_change, recover=recover)
    first = next((f for f in (model, payload, friction, torques) if f), None)
    folder = out_dir or (report_folder(first) if first else None)   # none: write_report refuses
    return ReportOutcome(write_report(folder, inputs, progress=progress))


@dataclass
class ReportAfter:
    """The optional report at the end of a job whose result file is written: written, failed,
    or not asked for.

    Parameters
    ----------
    page : Path or None
        The report's ``index.html``, when written.
    failure : Exception or None
        Why the report asked for could not be written (the result file stands).
    """

    page: Path | None = None
    failure: Exception | None = None

    @property
    def files(self) -> list[Path]:
        """The files written: the page, if any."""
        return [self.page] if self.page else []


def report_after(written: Path, report: str | Path | bool | None, progress: Progress = None,
                 **files) -> ReportAfter:
    """The optional report at the end of a job whose result file is written.

    A report that fails leaves the result standing: the failure is kept, not raised, so that
    the caller can show the result first (the CLI then raises it, the node logs it).

    Parameters
    ----------
    written : Path
        The result file just written.
    report : str, Path or bool, optional
        The report's folder; True: ``<stem>_report`` beside ``written``; None or False: none.
    progress : callable or object with ``update(n)``, optional
        As for ``report_results``.
    **files
        The arguments of ``report_results`` (``model=``, ``payload=``, ``recover=`` ...).

    Returns
    -------
    ReportAfter
    """
    if not report:
        return ReportAfter()
    try:
        return ReportAfter(report_results(report_folder(written, report), progress=progress,
                                          **files).page)
    except Exception as exc:              # the result is written; the report is an extra
        return ReportAfter(failure=exc)
