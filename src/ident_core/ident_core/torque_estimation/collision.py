"""Collision detection on the external joint torques (docs/methods.md §12): a joint is in
collision when its external torque stays beyond its threshold for a given time."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Collision:
    """A detected collision.

    Parameters
    ----------
    joint : int
        Index of the joint (model order).
    time : float
        Time of the sample that confirmed it [s].
    onset : float
        Time the external torque first crossed the threshold [s].
    external_torque : float
        External torque at ``time`` [N·m or N].
    """

    joint: int
    time: float
    onset: float
    external_torque: float


class CollisionDetector:
    """Per-joint threshold with a minimum duration; a joint reports once per crossing and is
    armed again when its external torque falls back within the threshold. Between the report
    and that fall the joint is *in collision* (``active``): a display shows it, and clears it
    when ``changed`` says the set of joints in collision changed at the last sample.

    Parameters
    ----------
    threshold : (n,) ndarray
        |external torque| of a collision per joint [N·m or N]; 0: never.
    duration : float
        Time the torque must stay beyond the threshold [s]; 0: the first sample beyond it.

    Attributes
    ----------
    changed : bool
        Whether the last ``update`` changed the set of joints in collision (a collision
        reported, or a joint's external torque back within its threshold).
    """

    def __init__(self, threshold: np.ndarray, duration: float):
        self.threshold = np.asarray(threshold, dtype=float)
        self.duration = duration
        self._onset = np.full(len(self.threshold), np.nan)
        self._reported = np.zeros(len(self.threshold), dtype=bool)
        self.changed = False

    @property
    def active(self) -> np.ndarray:
        """The joints in collision: reported, external torque still beyond the threshold.

        Returns
        -------
        (k,) ndarray of int
            Joint indices (model order), ascending.
        """
        return np.flatnonzero(self._reported)

    def update(self, t: float, external: np.ndarray) -> list[Collision]:
        """Take a sample of the external torques.

        Parameters
        ----------
        t : float
            Time [s].
        external : (n,) ndarray
            External joint torques [N·m or N].

        Returns
        -------
        list of Collision
            The collisions confirmed at this sample (usually none).
        """
        beyond = (self.threshold > 0) & (np.abs(external) > self.threshold)
        if not beyond.any() and not self._reported.any():
            self._onset[:] = np.nan
            self.changed = False
            return []
        before = self._reported.copy()
        self._onset = np.where(beyond, np.where(np.isnan(self._onset), t, self._onset), np.nan)
        self._reported &= beyond
        due = beyond & ~self._reported & (t - self._onset >= self.duration)
        self._reported |= due
        self.changed = bool((before != self._reported).any())
        return [Collision(int(j), t, float(self._onset[j]), float(external[j]))
                for j in np.flatnonzero(due)]
