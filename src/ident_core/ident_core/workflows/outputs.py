"""What a job writes when no output is named: every default file name, beside the recording or
result it comes from. The files themselves are written atomically by their formats' writers
(``Document.write`` of RESULT.yaml, PAYLOAD.yaml and FRICTION.yaml, ``write_report``, all
through ``ident_core.files.write_atomic``)."""
from __future__ import annotations

from pathlib import Path

#: What each job appends to the name of its first recording (the first recording with the
#: payload, for ``payload``): ``<bag>.result.yaml``, ``<bag>.payload.yaml``...
SUFFIXES = {'result': '.result.yaml', 'payload': '.payload.yaml',
            'friction': '.friction.yaml', 'torques': '.torques.csv'}


def output_path(kind: str, recording: str | Path, out: str | Path | None = None) -> Path:
    """The file a job writes.

    Parameters
    ----------
    kind : {'result', 'payload', 'friction', 'torques'}
        The job's file: RESULT.yaml, PAYLOAD.yaml, FRICTION.yaml, TORQUES.csv.
    recording : str or Path
        The job's first recording (a trailing slash of a bag folder is dropped).
    out : str or Path, optional
        The path asked for; empty or None: the default.

    Returns
    -------
    Path
        ``out``, or ``<recording>`` + ``SUFFIXES[kind]``.
    """
    return Path(out) if out else Path(str(Path(recording)) + SUFFIXES[kind])


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
