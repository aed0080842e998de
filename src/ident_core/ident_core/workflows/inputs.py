"""What a job reads: the robot (a URDF path or a model already loaded) and its recordings, through
one loader for every entry point (``load_recording``): a dataset description, an ``.npz`` or a
rosbag2, a bag cut to the periodic excitation its ``ExcitationTrajectory`` message describes when
asked (``RecordingOptions``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from ..data.coverage import MIN_COVERAGE
from ..data.datasets import Dataset, is_bag, load_bag, load_dataset
from ..data.readers import EXCITATION_TOPIC, excitation_window
from ..model.robot import RobotModel, load_robot
from ..progress import Progress, describe
from ..schema import Schema


class RecordingOptions(Schema):
    """How to read recordings: the topics of a rosbag2, which part of it, damaged bags. The
    identification node's parameters of the same names are these fields. Dataset descriptions
    and ``.npz`` files are read as they are; a bag without an excitation description is read
    whole."""

    joint_states_topic: str = Field(
        'joint_states', description='JointState topic in the bags; a relative name is in the '
        "root namespace, or the identification node's (``data.readers.bag_topic``). Messages "
        "that lack one of the URDF's joints (another publisher's, e.g. a gripper's) are "
        'skipped.')
    excitation_topic: str = Field(EXCITATION_TOPIC,
                                  description='ExcitationTrajectory topic in the bags (as '
                                  '``joint_states_topic``).')
    excitation_window_only: bool = Field(
        True, description='Use only the periodic part of the excitation described in the bag.')
    min_coverage: float = Field(
        MIN_COVERAGE, ge=0, le=1,
        description='Smallest fraction of the excitation window described in the bag that its '
                    'joint states must cover: a recording whose stream stopped is refused '
                    'below, a gap is a warning above (``ident_core.data.coverage``).')
    recover: bool = Field(
        False, description='Read bags that a killed recorder left unfinished up to the damage '
        '(with a warning) instead of refusing them (``ident_core.data.bag.salvage``).')

    def whole(self) -> RecordingOptions:
        """These options reading every recording whole (friction, torque estimation).

        Returns
        -------
        RecordingOptions
            A copy with ``excitation_window_only`` false.
        """
        return self.model_copy(update={'excitation_window_only': False})


@dataclass
class Recording:
    """A recording as read.

    Parameters
    ----------
    dataset : Dataset
        Its samples; ``source`` names the window of a bag cut to its excitation.
    stamps : (N,) ndarray or None
        A rosbag2's absolute header stamps of the samples [s]; None for other files.
    """

    dataset: Dataset
    stamps: np.ndarray | None = None


def read_recording(path: str | Path, options: RecordingOptions | None = None,
                   joints: list[str] | None = None) -> Recording:
    """Read a recording: a dataset description, an ``.npz`` or a rosbag2.

    A rosbag2's ``joint_states_topic`` is read by its header stamps, its messages that name
    every one of ``joints`` (``data.joint_selection``); with
    ``excitation_window_only``, only the messages within the excitation window its last
    ``ExcitationTrajectory`` message describes, which they must cover to ``min_coverage``.

    Parameters
    ----------
    path : str or Path
        The file or bag folder.
    options : RecordingOptions, optional
        Topics, window, damaged bags (default: ``RecordingOptions()``).
    joints : list of str, optional
        The URDF's joints: column names for files that do not name theirs, and the joints a
        bag's messages must name.

    Returns
    -------
    Recording

    Raises
    ------
    InputError
        For any problem, naming the file and the field, row, topic or joint at fault; for a bag
        whose joint states cover too little of its excitation window.
    """
    options = options or RecordingOptions()
    if not is_bag(path):
        return Recording(load_dataset(path, joints, recover=options.recover))
    window = None
    if options.excitation_window_only and Path(path).exists():
        window = excitation_window(Path(path), options.excitation_topic, recover=options.recover)
    dataset, stamps = load_bag(path, options.joint_states_topic, window=window,
                               min_coverage=options.min_coverage, recover=options.recover,
                               joints=joints)
    return Recording(dataset, stamps)


def load_recording(path: str | Path, options: RecordingOptions | None = None,
                   joints: list[str] | None = None, progress: Progress = None) -> Dataset:
    """The dataset of a recording (``read_recording``), said to ``progress`` first.

    Parameters
    ----------
    path : str or Path
        The file or bag folder.
    options : RecordingOptions, optional
        As for ``read_recording``.
    joints : list of str, optional
        As for ``read_recording``.
    progress : callable or object with ``update(n)``, optional
        Told ``reading <path>`` (``ident_core.progress.describe``).

    Returns
    -------
    Dataset

    Raises
    ------
    InputError
        As ``read_recording``.
    """
    describe(progress, f'reading {path}')
    return read_recording(path, options, joints).dataset


def robot_model(robot: RobotModel | str | Path) -> RobotModel:
    """The robot of a job: a model already loaded, or loaded from its URDF.

    Parameters
    ----------
    robot : RobotModel, str or Path
        A model, or the URDF file.

    Returns
    -------
    RobotModel

    Raises
    ------
    InputError
        If the URDF cannot be loaded (``load_robot``).
    """
    return robot if isinstance(robot, RobotModel) else load_robot(robot)
