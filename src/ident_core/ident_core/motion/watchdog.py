"""Is the robot following the excitation? A motion streamed open loop to a robot whose driver
crashed, or that an e-stop or a collision holds, records nothing useful and must stop with the
reason: the measured joint states stop arriving, or they leave the commanded motion. A recorded
motion also stops when the recorder is gone (nothing would be recorded).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..model.robot import wrapped_angle
from .plan import Motion

RECORDER_GRACE = 1.0        # s the recorder's liveliness may stay lost before the goal fails


class JointSample(NamedTuple):
    """The latest measured joint states.

    Parameters
    ----------
    received_ns : int
        When it was taken, on the runner's clock [ns].
    stamp_ns : int
        Its header stamp [ns] (0 if the driver stamps none).
    positions : dict of str to float
        Position of each joint it names [rad or m].
    """

    received_ns: int
    stamp_ns: int
    positions: dict


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

    def starved(self, elapsed: float) -> bool:
        """Whether the watcher itself did not run for a while (its messages may be queued, so
        their age tells nothing about the robot).

        Parameters
        ----------
        elapsed : float
            Time since the watcher last looked [s].

        Returns
        -------
        bool
            True above half the ``timeout``.
        """
        return elapsed > self.timeout / 2

    def check(self, motion: Motion, now_ns: int, since_ns: int,
              sample: JointSample | None) -> tuple[str, np.ndarray | None]:
        """One look at the robot while a motion runs.

        The measured positions are compared with the command at the time of the measurement,
        in the clock the controller stamps both with (a driver that lags the wall clock is no
        tracking error); the receive time when the sample has no stamp.

        Parameters
        ----------
        motion : Motion
            The running motion, in the order of ``joint_names``.
        now_ns : int
            Now, on the runner's clock [ns].
        since_ns : int
            When the watch began [ns] (the age of the measurements before the first arrives).
        sample : JointSample or None
            The latest measurement, None before the first.

        Returns
        -------
        reason : str
            ``fault``: why the motion must stop, or ``''``.
        error : (n,) ndarray or None
            ``tracking_error`` of the sample [rad or m]; None without a sample that names every
            joint.
        """
        received, measured, commanded, error = since_ns, None, None, None
        if sample is not None:
            received, stamp, state = sample
            if all(j in state for j in self.joint_names):
                measured = np.array([state[j] for j in self.joint_names])
                t = max(((stamp or received) - motion.start_ns) * 1e-9, 0.0)
                commanded = motion.sample(np.array([t]))[0][0]
                error = tracking_error(measured, commanded, self.continuous)
        return self.fault((now_ns - received) * 1e-9, measured, commanded), error


def recorder_gone(lost_ns: int | None, now_ns: int) -> bool:
    """Whether the recorder's liveliness stayed lost for longer than ``RECORDER_GRACE`` (a
    starved process may miss one lease and come back).

    Parameters
    ----------
    lost_ns : int or None
        When it was lost [ns]; None while alive.
    now_ns : int
        Now, same clock [ns].

    Returns
    -------
    bool
    """
    return lost_ns is not None and (now_ns - lost_ns) * 1e-9 > RECORDER_GRACE


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
