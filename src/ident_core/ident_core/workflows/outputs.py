"""What a job writes when no output is named: every default file name, beside the recording or
result it comes from. The files themselves are written atomically by their formats' writers
(``write_result``, ``write_payload``, ``write_friction``, ``write_report``, all through
``ident_core.files.write_atomic``)."""
from __future__ import annotations

from pathlib import Path


def _beside(source: str | Path, suffix: str, out: str | Path | None) -> Path:
    """``out``, or ``<source><suffix>`` (the source's name as a path, a trailing slash
    dropped)."""
    return Path(out) if out else Path(str(Path(source)) + suffix)


def result_path(recording: str | Path, out: str | Path | None = None) -> Path:
    """RESULT.yaml of an identification.

    Parameters
    ----------
    recording : str or Path
        The first identification recording.
    out : str or Path, optional
        The path asked for; empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``<recording>.result.yaml``.
    """
    return _beside(recording, '.result.yaml', out)


def payload_path(loaded: str | Path, out: str | Path | None = None) -> Path:
    """PAYLOAD.yaml of a payload identification.

    Parameters
    ----------
    loaded : str or Path
        The first recording with the payload.
    out : str or Path, optional
        The path asked for; empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``<loaded>.payload.yaml``.
    """
    return _beside(loaded, '.payload.yaml', out)


def friction_path(recording: str | Path, out: str | Path | None = None) -> Path:
    """FRICTION.yaml of a friction identification.

    Parameters
    ----------
    recording : str or Path
        The first friction recording.
    out : str or Path, optional
        The path asked for; empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``<recording>.friction.yaml``.
    """
    return _beside(recording, '.friction.yaml', out)


def torques_path(recording: str | Path, out: str | Path | None = None) -> Path:
    """TORQUES.csv of a torque estimate.

    Parameters
    ----------
    recording : str or Path
        The recording.
    out : str or Path, optional
        The path asked for; empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``<recording>.torques.csv``.
    """
    return _beside(recording, '.torques.csv', out)


def report_folder(result: str | Path, out: str | Path | bool | None = None) -> Path:
    """The folder of the HTML report of a result file.

    Parameters
    ----------
    result : str or Path
        ``DIR/NAME.yaml`` (or ``.csv``).
    out : str, Path or bool, optional
        The folder asked for; True, empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``DIR/NAME_report`` beside the result.
    """
    if out and out is not True:
        return Path(out)
    result = Path(result)
    return result.with_name(f'{result.stem}_report')
