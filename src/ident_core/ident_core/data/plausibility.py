"""Plausible mistakes in a recording, caught before they become a confident, wrong model
(docs/methods.md §3): positions in degrees or of another joint range, and effort columns that
hold no torque. Each is refused (``refuse``) unless ``ignore_plausibility`` asks to use the data
as logged; then it is a warning.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import DataWarning, InputError
from ..model.robot import RobotModel
from .datasets import Dataset

#: Positions beyond a URDF limit by more than this fraction of the joint's range are refused.
FAR_OUTSIDE = 0.5
#: Positions beyond a URDF limit by more than this fraction of the range give a warning.
SLIGHTLY_OUTSIDE = 0.01


def refuse(message: str, ignore: bool) -> None:
    """Refuse a recording for a plausible mistake, or with ``ignore`` warn and go on.

    Parameters
    ----------
    message : str
        What is wrong and how to fix it (one line).
    ignore : bool
        ``ignore_plausibility``: warn instead.

    Raises
    ------
    InputError
        ``message`` and how to go on anyway, unless ``ignore``.

    Warns
    -----
    DataWarning
        With ``ignore``: ``message``, and that the data are used as they are.
    """
    if ignore:
        warnings.warn(f'{message} (used as logged: ignore_plausibility)', DataWarning,
                      stacklevel=3)
        return
    raise InputError(f'{message} (--ignore-plausibility: use the data as logged)')


def check_positions(dataset: Dataset, robot: RobotModel, ignore: bool = False) -> None:
    """Positions within the URDF's limits, or near them.

    Parameters
    ----------
    dataset : Dataset
        In the robot's joint order (``Dataset.aligned``).
    robot : RobotModel
        The robot; joints without finite limits (continuous joints) are not checked.
    ignore : bool
        Warn instead of refusing (``ignore_plausibility``).

    Raises
    ------
    InputError
        If a joint's positions lie far outside its limits (more than ``FAR_OUTSIDE`` of its
        range), naming the joint, with a hint when the values read as degrees fit the limits;
        not with ``ignore``.

    Warns
    -----
    DataWarning
        If they exceed a limit by more than ``SLIGHTLY_OUTSIDE`` of the range, or lie far
        outside it with ``ignore``.
    """
    for j, name in enumerate(robot.joint_names):
        lower, upper = robot.lower[j], robot.upper[j]
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            continue
        q = dataset.position[:, j]
        low, high = float(q.min()), float(q.max())
        span = upper - lower
        beyond = max(lower - low, high - upper)
        if beyond > FAR_OUTSIDE * span:
            radians = np.radians([low, high])
            hint = ''
            if robot.model.joints[j + 1].shortname().startswith('JointModelR') and \
                    radians[0] >= lower - SLIGHTLY_OUTSIDE * span and \
                    radians[1] <= upper + SLIGHTLY_OUTSIDE * span:
                hint = f'; in degrees? (position.scale: {math.pi / 180:.9f})'
            refuse(f'{dataset.source}: joint {name}: positions from {low:.4g} to {high:.4g} lie '
                   f'far outside its URDF limits [{lower:.4g}, {upper:.4g}]{hint}', ignore)
        elif beyond > SLIGHTLY_OUTSIDE * span:
            warnings.warn(f'{dataset.source}: joint {name}: positions up to {beyond:.3g} beyond '
                          f'its URDF limits [{lower:.4g}, {upper:.4g}]', DataWarning,
                          stacklevel=2)


def check_efforts(dataset: Dataset, ignore: bool = False) -> None:
    """The effort of every joint that moves varies.

    Parameters
    ----------
    dataset : Dataset
        The recording.
    ignore : bool
        Warn instead of refusing (``ignore_plausibility``).

    Raises
    ------
    InputError
        If a joint moves while its effort holds the same value in every row (an empty column,
        a wrong column, a drive that reports nothing), naming the joints; not with ``ignore``.
        A joint held still may keep one torque (a noise-free simulation does).

    Warns
    -----
    DataWarning
        For such joints with ``ignore``.
    """
    moves = np.ptp(dataset.position, axis=0) > 0
    constant = np.flatnonzero(moves & (np.ptp(dataset.effort, axis=0) == 0))
    if len(constant):
        joints = ', '.join(f'{dataset.joint_names[j]} ({dataset.effort[0, j]:g})'
                           for j in constant)
        refuse(f'{dataset.source}: joint(s) {joints} move but their effort is the same in every '
               'row: no torque recorded in that column?', ignore)
