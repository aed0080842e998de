"""The rosbags typestore of recordings, with the ``ident_msgs`` definitions installed in the
ament index (the core takes the definition's path: ``ident_core.data.bag.writer``)."""
from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

from ident_core.data.bag.writer import recording_typestore as typestore_of
from ident_core.errors import InputError


def excitation_msg_path() -> Path:
    """``ExcitationTrajectory.msg`` as installed by ``ident_msgs``.

    Returns
    -------
    Path
        ``<share of ident_msgs>/msg/ExcitationTrajectory.msg``.

    Raises
    ------
    InputError
        (a ValueError) If ``ident_msgs`` is not in the ament index.
    """
    try:
        share = get_package_share_directory('ident_msgs')
    except (PackageNotFoundError, LookupError, ValueError) as exc:
        raise InputError(f'package ident_msgs not found in the ament index ({exc}); '
                         'build it and source the workspace') from None
    return Path(share) / 'msg' / 'ExcitationTrajectory.msg'


def recording_typestore():
    """The typestore the recorder writes with.

    Returns
    -------
    rosbags Typestore
        The ROS 2 Kilted types with the installed ``ident_msgs/msg/ExcitationTrajectory``
        (cached).

    Raises
    ------
    InputError
        (a ValueError) If ``ident_msgs`` is not installed or its definition unreadable.
    """
    return typestore_of(str(excitation_msg_path()))
