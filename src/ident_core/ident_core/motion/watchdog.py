"""Is the robot following the excitation? A motion streamed open loop to a robot whose driver
crashed, or that an e-stop or a collision holds, records nothing useful and must stop with the
reason: the measured joint states stop arriving, or they leave the commanded motion.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.robot import wrapped_angle


@dataclass(frozen=True)
class MotionWatchdog:
    """Limits on the measured joint states while a motion runs.

    Parameters
    ----------
    joint_names : list of str
        (n,) in the order of the positions given to ``fault``.
    timeout : float
        Longest time without a measurement [s].
    tracking_limit : (n,) ndarray
        Largest distance of a measured position from the commanded one [rad or m].
    topic : str
        Where the measurements come from, for the messages.
    continuous : (n,) ndarray of bool, optional
        Continuous joints, whose tracking error is taken the short way round (a driver may
        report their angles wrapped); default none.
    """

    joint_names: list[str]
    timeout: float
    tracking_limit: np.ndarray
    topic: str = 'joint_states'
    continuous: np.ndarray | None = None

    def fault(self, age: float, measured: np.ndarray | None,
              commanded: np.ndarray | None) -> str:
        """Why the motion must stop, or ``''``.

        Parameters
        ----------
        age : float
            Time since the last measurement arrived [s] (since the motion began if none did).
        measured : (n,) ndarray or None
            The last measured positions [rad or m].
        commanded : (n,) ndarray or None
            The commanded positions at the time that measurement arrived.

        Returns
        -------
        str
            ``''`` while the robot follows, else one line naming the topic or the joint.
        """
        if age > self.timeout:
            return (f'no {self.topic} for {age:.2f} s (limit {self.timeout:g} s): the driver '
                    'stopped, an e-stop, or the robot is gone')
        if measured is None or commanded is None:
            return ''
        error = tracking_error(measured, commanded, self.continuous)
        worst = int(np.argmax(error - self.tracking_limit))
        if error[worst] > self.tracking_limit[worst]:
            return (f'{self.joint_names[worst]} is {error[worst]:.3g} from its command (limit '
                    f'{self.tracking_limit[worst]:g}): the robot does not follow (collision, '
                    'e-stop, drive fault or limit)')
        return ''


def tracking_error(measured: np.ndarray, commanded: np.ndarray,
                   continuous: np.ndarray | None = None) -> np.ndarray:
    """Distance of the measured positions from the commanded ones.

    Parameters
    ----------
    measured, commanded : (n,) array_like
        Positions [rad or m].
    continuous : (n,) array_like of bool, optional
        Continuous joints (``RobotModel.continuous``): their angles may differ by whole turns.

    Returns
    -------
    (n,) ndarray
        ``|measured − commanded|`` [rad or m]; at most π for a continuous joint.
    """
    error = np.abs(np.asarray(measured, dtype=float) - np.asarray(commanded, dtype=float))
    if continuous is None:
        return error
    return np.where(continuous, np.abs(wrapped_angle(error)), error)
