"""The recording format: one rosbag2 folder (MCAP) per experiment.

A folder ``<experiment>_<YYYYmmdd-HHMMSS>[_k]/`` holds

* ``sensor_msgs/msg/JointState`` on the joint-states topic and
* ``ident_msgs/msg/ExcitationTrajectory`` on the excitation topic,

rosbag2's ``metadata.yaml`` and this suite's ``recording.yaml`` (``summary``). An existing folder
is never written into: bag names carry a time stamp and a counter. (No rosbags import here: the
readers of recordings that are no bags do not load it.)
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ...errors import InputError

METADATA_FILE = 'metadata.yaml'
RECORDING_FILE = 'recording.yaml'
RECORDING_FORMAT = 'robot-ident/recording/1'
RECOVERED_SUFFIX = '.recovered.mcap'     # the MCAP a repair writes beside the damaged one
JOINT_STATE_TYPE = 'sensor_msgs/msg/JointState'
EXCITATION_TYPE = 'ident_msgs/msg/ExcitationTrajectory'
MAX_EXPERIMENT_LENGTH = 100
_EXPERIMENT_RE = re.compile(r'[A-Za-z0-9_-]+')
_BAG_NAME = re.compile(r'(.+)_\d{8}-\d{6}(_\d+)?')


def validate_experiment(experiment: str) -> str:
    """Check an experiment name (a part of bag folder names).

    Parameters
    ----------
    experiment : str
        1 to 100 characters: ASCII letters, digits, ``-`` and ``_``.

    Returns
    -------
    str
        ``experiment``.

    Raises
    ------
    InputError
        (a ValueError) If it is empty, too long or has other characters (naming them).
    """
    if not isinstance(experiment, str) or not experiment:
        raise InputError('experiment name is empty (use letters, digits, "-" and "_")')
    if len(experiment) > MAX_EXPERIMENT_LENGTH:
        raise InputError(f'experiment name {experiment[:20]!r}... is {len(experiment)} '
                         f'characters long (at most {MAX_EXPERIMENT_LENGTH})')
    if not _EXPERIMENT_RE.fullmatch(experiment):
        bad = sorted({c for c in experiment if not _EXPERIMENT_RE.fullmatch(c)})
        raise InputError(f'experiment name {experiment!r} contains {"".join(bad)!r}: use only '
                         'letters, digits, "-" and "_"')
    return experiment


def unique_bag_path(directory: str | Path, experiment: str, now: datetime | None = None) -> Path:
    """A bag folder path that does not exist yet.

    Parameters
    ----------
    directory : str or Path
        Where bags go (need not exist).
    experiment : str
        Experiment name, see ``validate_experiment``.
    now : datetime, optional
        The time for the name (local wall time by default).

    Returns
    -------
    Path
        ``<directory>/<experiment>_<YYYYmmdd-HHMMSS>``, with ``_2``, ``_3``, ... appended while
        that name exists.

    Raises
    ------
    InputError
        (a ValueError) For an invalid experiment name.
    """
    validate_experiment(experiment)
    now = datetime.now() if now is None else now
    base = Path(directory) / f'{experiment}_{now:%Y%m%d-%H%M%S}'
    path, k = base, 1
    while path.exists() or path.is_symlink():
        k += 1
        path = base.with_name(f'{base.name}_{k}')
    return path


def experiment_of(folder: Path) -> str:
    """The experiment a bag folder records, from its name.

    Parameters
    ----------
    folder : Path
        A bag folder.

    Returns
    -------
    str
        ``<experiment>`` of ``<experiment>_<YYYYmmdd-HHMMSS>[_k]``; the whole name otherwise.
    """
    match = _BAG_NAME.fullmatch(folder.name)
    return match.group(1) if match else folder.name
