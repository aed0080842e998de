"""Executable excitation motions (docs/methods.md §7).

    approach (rest → trajectory start state) → N periods of the Fourier series → stop (→ rest)

A running ``Motion`` that can be cut short by a stop segment at any time. The approach and
stop segments are quintic polynomials, so position, velocity and acceleration are continuous
everywhere (a finite Fourier series does not in general start at rest). Every sample of a plan
is checked against the joint limits before anything moves.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ..errors import ExcitationError, InputError
from ..excitation.fourier import FourierTrajectory
from .limits import JointLimits
from .segments import CHECK_STEP, Segment, approach_segment, stop_segment, transition_segment

STOP_MIN_DURATION = 0.2     # s, shortest stop segment of an interrupted motion


def period_violations(trajectory: FourierTrajectory, limits: JointLimits) -> list[str]:
    """Limit violations of one period of a (periodic) trajectory, sampled every 1 ms.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The trajectory.
    limits : JointLimits
        May name the joints in any order.

    Returns
    -------
    list of str
        ``JointLimits.violations`` messages; empty if the trajectory is within the limits.

    Raises
    ------
    InputError
        If ``limits`` lack a joint of the trajectory.
    """
    t = np.arange(0.0, trajectory.period, CHECK_STEP)
    return limits.reordered(list(trajectory.joint_names)).violations(t, *trajectory.evaluate(t))


class StageTime(NamedTuple):
    """When a stage of a plan runs (plan times [s]).

    Parameters
    ----------
    begins : float
        The motion into the stage begins: 0 for the first (the approach), else the end of the
        previous stage, where the transition starts.
    start : float
        Its first period starts.
    periods : int
        Periods it runs.
    """

    begins: float
    start: float
    periods: int


class ExcitationPlan:
    """The whole excitation motion in the trajectory's joint order; time 0 is the start of the
    approach.

    A multi-stage excitation (a joint-wise friction experiment: several cosines one after the
    other, ``excitation.jointwise``) runs its stages in order, joined by the shortest quintic
    transitions within the limits.

    Parameters
    ----------
    trajectory : FourierTrajectory or sequence of FourierTrajectory
        The Fourier series, or the stages, all on the same joints.
    q_start : (n,) array_like
        Current joint positions (at rest) [rad or m].
    limits : JointLimits
        In the trajectory's joint order, margin already applied.
    periods : int, optional
        Periods to run of each stage (default: each stage's own).

    Attributes
    ----------
    trajectory : FourierTrajectory
        The (first) stage.
    stages : list of FourierTrajectory
        Every stage.
    periods : int
        Periods of all stages together.
    approach, stop : Segment
        The approach from rest and the final stop.
    stage_times : list of StageTime
        Per stage: when the motion into it begins, when its first period starts, its periods.
    excite_start, stop_start, duration : float
        Plan times of the first period, of the stop and of the end [s].

    Raises
    ------
    InputError
        If ``limits`` and a stage name different joints, or no stage is given.
    ExcitationError
        If any sample of a periodic part or of the approach, a transition or the stop violates
        the limits (all violations are listed; nothing has moved).
    """

    def __init__(self, trajectory: FourierTrajectory | Sequence[FourierTrajectory], q_start,
                 limits: JointLimits, periods: int | None = None):
        stages = [trajectory] if isinstance(trajectory, FourierTrajectory) else list(trajectory)
        if not stages:
            raise InputError('plan: no trajectory given')
        for stage in stages:
            if list(limits.joint_names) != list(stage.joint_names):
                raise InputError('plan: limits and trajectory name different joints')
            problems = period_violations(stage, limits)
            if problems:
                raise ExcitationError(f'trajectory {stage.name!r} violates the limits: '
                                      + '; '.join(problems))
        self.stages, self.trajectory, self.limits = stages, stages[0], limits
        counts = [int(periods or stage.periods) for stage in stages]
        self.periods = sum(counts)
        starts = [tuple(x[0] for x in stage.evaluate(0.0)) for stage in stages]
        self.approach = approach_segment(q_start, starts[0], limits)
        t = self.excite_start = self.approach.duration
        self._starts, self._pieces, self.stage_times = [0.0], [self.approach.evaluate], []
        for k, (stage, count) in enumerate(zip(stages, counts)):
            begins = t if k else 0.0
            if k:
                transition = transition_segment(starts[k - 1], starts[k], limits)
                self._starts.append(t)
                self._pieces.append(transition.evaluate)
                t += transition.duration
            self._starts.append(t)
            self._pieces.append(stage.evaluate)
            self.stage_times.append(StageTime(begins, t, count))
            t += count * stage.period
        self.stop = stop_segment(starts[-1], limits)
        self.stop_start = t
        self.duration = t + self.stop.duration
        self._starts.append(t)
        self._pieces.append(self.stop.evaluate)

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The plan at given times.

        Parameters
        ----------
        t : float or (M,) array_like
            Plan times [s]; before 0 the start position, after the end at rest.

        Returns
        -------
        q, qd, qdd : (M, n) ndarray
        """
        return piecewise(t, self.trajectory.n, self._starts, self._pieces)

    def phase(self, t: float) -> tuple[str, float, int]:
        """Where the plan is at a time.

        Parameters
        ----------
        t : float
            Plan time [s].

        Returns
        -------
        phase : {'approach', 'excite', 'stop'}
        progress : float
            0..1 over the whole plan.
        period : int
            1-based period while exciting, counted over all stages (0 during the approach).
        """
        progress = min(max(t / self.duration, 0.0), 1.0)
        if t < self.excite_start:
            return 'approach', progress, 0
        if t >= self.stop_start:
            return 'stop', progress, self.periods
        period, before = 1, 0
        for stage, timing in zip(self.stages, self.stage_times):
            if t >= timing.start:
                period = before + min(int((t - timing.start) // stage.period) + 1,
                                      timing.periods)
            before += timing.periods
        return 'excite', progress, period


class Motion:
    """A plan started at a given time, possibly cut short by a stop segment.

    Parameters
    ----------
    plan : ExcitationPlan
        The motion to run.
    start_ns : int
        Clock time of plan time 0 [ns] (the caller's clock, e.g. ROS time).

    Attributes
    ----------
    stop : Segment or None
        The stop segment once the motion was interrupted.
    stop_at : float or None
        Plan time at which that stop starts [s].
    """

    def __init__(self, plan: ExcitationPlan, start_ns: int):
        self.plan, self.start_ns = plan, start_ns
        self.stop: Segment | None = None
        self.stop_at: float | None = None

    @property
    def end(self) -> float:
        """Plan time at which the robot is at rest again [s]."""
        return self.plan.duration if self.stop is None else self.stop_at + self.stop.duration

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The motion at given times.

        Parameters
        ----------
        t : float or (M,) array_like
            Plan times [s].

        Returns
        -------
        q, qd, qdd : (M, n) ndarray
        """
        if self.stop is None:
            return self.plan.sample(t)
        return piecewise(t, self.plan.trajectory.n, (0.0, self.stop_at),
                         (self.plan.sample, self.stop.evaluate))

    def stop_at_time(self, t: float) -> None:
        """Replace the rest of the motion, from plan time ``t``, by a stop segment.

        Nothing changes when the motion is already stopping (an earlier request, or the plan's
        own final stop).

        Parameters
        ----------
        t : float
            Plan time [s].

        Raises
        ------
        ExcitationError
            If no stop within the limits exists (it always does for a state inside them).
        """
        if self.stop is not None or t >= self.plan.stop_start:
            return
        state = tuple(x[0] for x in self.sample(np.array([t])))
        self.stop = stop_segment(state, self.plan.limits, min_duration=STOP_MIN_DURATION)
        self.stop_at = t


def piecewise(t, n: int, starts: Sequence[float],
              pieces: Sequence[Callable]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples of consecutive motion pieces.

    Parameters
    ----------
    t : float or (M,) array_like
        Times [s].
    n : int
        Number of joints.
    starts : sequence of float
        Ascending start time of each piece [s]; the first piece also covers earlier times.
    pieces : sequence of callable
        ``evaluate(local_t) -> (q, qd, qdd)``, called with ``t − start`` of the piece.

    Returns
    -------
    q, qd, qdd : (M, n) ndarray
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    index = np.maximum(np.searchsorted(starts, t, side='right') - 1, 0)
    out = tuple(np.empty((len(t), n)) for _ in range(3))
    for i, (start, evaluate) in enumerate(zip(starts, pieces)):
        mask = index == i
        if np.any(mask):
            for o, v in zip(out, evaluate(t[mask] - start)):
                o[mask] = v
    return out
