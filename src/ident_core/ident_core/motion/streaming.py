"""Sending an excitation to a joint_trajectory_controller (the excitation node,
docs/methods.md §7).

A goal's trajectory (a Fourier series, or the stages of a joint-wise experiment around the
position the robot stands at) becomes an ``ExcitationPlan`` started ``LEAD`` after it was
planned. Over the controller's topic, the runner then sends, every send period, the motion of the
next horizon as one ``JointTrajectory`` whose points lie on a grid aligned to plan time 0 (each
message replaces the rest of the previous one, ``controller``). Over its
``FollowJointTrajectory`` action, the whole motion is one goal on the same grid, starting
``goal_lead`` after it is sent, with the tolerances of ``tolerance_values``; a stop replaces it by
a goal of the rest of the motion, and a goal the controller ends is reported by
``controller_failure``. The runner describes each stage when the motion into it begins, reports
the phase, period and stage, and declares the motion over once the robot had time to settle,
measured on the robot's own clock.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..excitation.fourier import FourierTrajectory
from ..excitation.jointwise import JointwiseExperiment
from ..schema import per_joint
from .controller import ERASE, RESULT_CODES
from .limits import JointLimits
from .plan import ExcitationPlan, Motion, StageTime

LEAD = 0.2                  # s between planning a motion (or its stop) and its first point
MAX_LAG = 10.0              # s the measured motion may lag the plan before the goal ends anyway
# s per point of a whole-motion goal between sending it and its first point, on top of a fixed
# lead, for the goal to reach the controller first (this workspace's Python simulator takes about
# 40 µs per point to receive one on a busy machine; a 60 s motion on the 10 ms grid is 6001
# points, 1.1 MB)
GOAL_LEAD_PER_POINT = 1e-4


class Feedback(NamedTuple):
    """Where a running motion is.

    Parameters
    ----------
    phase : {'approach', 'excite', 'stop'}
        ``stop`` also while a stop segment cuts the motion short.
    progress : float
        0..1 over the motion as it now ends.
    period : int
        1-based period over all stages (0 during the approach).
    stage : int
        ``current_stage``.
    """

    phase: str
    progress: float
    period: int
    stage: int


def check_joints(requested: FourierTrajectory | JointwiseExperiment,
                 joint_names: list[str]) -> None:
    """Refuse a trajectory that does not move exactly the robot's joints.

    Parameters
    ----------
    requested : FourierTrajectory or JointwiseExperiment
        What the goal asked for.
    joint_names : list of str
        The robot's joints.

    Raises
    ------
    InputError
        If the joint sets differ (naming both).
    """
    names = list(requested.joint_names)
    if sorted(names) != sorted(joint_names):
        raise InputError(f'trajectory {requested.name!r} names the joints '
                         f'{", ".join(names)}; the robot has {", ".join(joint_names)}')


def excitation_plan(requested: FourierTrajectory | JointwiseExperiment, q_now,
                    limits: JointLimits, periods: int | None = None) -> ExcitationPlan:
    """The plan a goal runs from where the robot stands.

    Parameters
    ----------
    requested : FourierTrajectory or JointwiseExperiment
        What the goal asked for; a joint-wise experiment holds its other joints at ``q_now``.
    q_now : (n,) array_like
        Measured positions, the trajectory's joint order [rad or m].
    limits : JointLimits
        The runner's limits, margin applied (any joint order).
    periods : int, optional
        Periods of each stage (default: each stage's own).

    Returns
    -------
    ExcitationPlan

    Raises
    ------
    ExcitationError
        If a sample of the plan violates the limits (nothing has moved).
    InputError
        If ``limits`` lack a joint of the trajectory.
    """
    names = list(requested.joint_names)
    stages = (requested.stages(held=q_now) if isinstance(requested, JointwiseExperiment)
              else [requested])
    return ExcitationPlan(stages, q_now, limits.reordered(names), periods)


def plan_summary(plan: ExcitationPlan, requested: FourierTrajectory | JointwiseExperiment) -> str:
    """One line on what a plan runs: approach, periods of every stage, transitions, stop.

    Parameters
    ----------
    plan : ExcitationPlan
        The plan.
    requested : FourierTrajectory or JointwiseExperiment
        What the goal asked for.

    Returns
    -------
    str
        E.g. ``approach 1.20 s, 4 x 5 s, stop 0.80 s, 22.00 s in all`` or, for a joint-wise
        experiment, ``joint-wise on joint4 (others held): approach 1.20 s, 3 x 1 s + 2 x 2 s
        (transitions 0.60 s), stop 0.50 s, 10.30 s in all``.
    """
    times = plan.stage_times
    runs = ' + '.join(f'{timing.periods} x {stage.period:g} s'
                      for stage, timing in zip(plan.stages, times))
    running = sum(timing.periods * stage.period for stage, timing in zip(plan.stages, times))
    transitions = plan.stop_start - plan.excite_start - running
    text = (f'approach {plan.approach.duration:.2f} s, {runs}'
            + (f' (transitions {transitions:.2f} s)' if len(plan.stages) > 1 else '')
            + f', stop {plan.stop.duration:.2f} s, {plan.duration:.2f} s in all')
    if isinstance(requested, JointwiseExperiment):
        text = f'joint-wise on {requested.joint} (others held): {text}'
    return text


def current_stage(times: list[StageTime], t: float) -> int:
    """The stage (1-based) running at plan time ``t``; 0 before the first period begins.

    Parameters
    ----------
    times : list of StageTime
        ``ExcitationPlan.stage_times``.
    t : float
        Plan time [s].

    Returns
    -------
    int
        The last stage whose first period has begun (during a transition, the stage before it).
    """
    return sum(1 for _begins, start, _count in times if t >= start)


def stages_begun(plan: ExcitationPlan, t: float) -> int:
    """How many stages the motion has begun to move into by plan time ``t``.

    A stage is described (its ``ExcitationTrajectory`` published) when the motion into it
    begins: the first with the approach, at plan time 0; each later one when the transition
    from the stage before starts.

    Parameters
    ----------
    plan : ExcitationPlan
        The plan.
    t : float
        Plan time [s].

    Returns
    -------
    int
        The stages ``0 .. stages_begun - 1`` (0-based) are due.
    """
    return sum(1 for timing in plan.stage_times if t >= timing.begins)


def feedback(motion: Motion, t: float) -> Feedback:
    """Where a running motion is at plan time ``t``.

    Parameters
    ----------
    motion : Motion
        The running motion (possibly stopping).
    t : float
        Plan time [s].

    Returns
    -------
    Feedback
    """
    phase, _progress, period = motion.plan.phase(t)
    if motion.stop is not None and t >= motion.stop_at:
        phase = 'stop'
    return Feedback(phase, float(min(max(t / motion.end, 0.0), 1.0)), period,
                    current_stage(motion.plan.stage_times, t))


def point_times(t_from: float, t_to: float, step: float, end: float) -> np.ndarray:
    """Plan times of the points of one ``JointTrajectory`` message.

    Parameters
    ----------
    t_from, t_to : float
        The stretch of the motion the message covers [s].
    step : float
        Time between points [s]; the grid is aligned to plan time 0.
    end : float
        End of the motion [s]: no point after it, and a message that reaches it ends on it.

    Returns
    -------
    (K,) ndarray
        Ascending plan times [s]; empty when the stretch holds no grid point before ``end``.
    """
    first = np.ceil(t_from / step) * step
    times = np.arange(first, min(t_to, end) + 1e-9, step)
    if t_to >= end and (len(times) == 0 or times[-1] < end - 1e-9):
        times = np.append(times, end)
    return times


def measured_until(motion: Motion, stamp_ns: int | None) -> float:
    """Plan time of the latest measurement's stamp: a robot whose clock lags (a driver that
    falls behind) has not finished the motion when the wall clock says so.

    Parameters
    ----------
    motion : Motion
        The running motion.
    stamp_ns : int or None
        Header stamp of the latest joint states [ns]; None or 0 when unknown.

    Returns
    -------
    float
        [s]; ``inf`` without a stamp.
    """
    if not stamp_ns:
        return np.inf
    return (stamp_ns - motion.start_ns) * 1e-9


def motion_over(t: float, end: float, settle_time: float, measured: float,
                failed: bool, result_pending: bool = False) -> bool:
    """Whether a motion is over and its goal can end.

    Parameters
    ----------
    t : float
        Plan time now (the runner's clock) [s].
    end : float
        Plan time at which the robot is at rest again (``Motion.end``) [s].
    settle_time : float
        Time at rest after the motion before the recording stops [s].
    measured : float
        ``measured_until``: plan time of the latest measurement [s].
    failed : bool
        Whether the goal has failed (the robot or the recorder).
    result_pending : bool
        Whether the controller's result of the motion's ``FollowJointTrajectory`` goal is still
        awaited.

    Returns
    -------
    bool
        True ``settle_time`` after the end, once the measurements reached that time too and the
        controller reported its result (or the goal failed, or they lag by more than
        ``MAX_LAG``).
    """
    return t > end + settle_time and (
        failed or t > end + MAX_LAG
        or (measured > end + settle_time and not result_pending))


class Points(NamedTuple):
    """The points of a stretch of motion.

    Parameters
    ----------
    times : (K,) ndarray
        Plan times [s] (a message carries ``times - times[0]``, stamped with the first).
    q, qd, qdd : (K, n) ndarray
        Positions [rad or m], velocities and accelerations.
    """

    times: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


def motion_points(motion: Motion, t_from: float, t_to: float, step: float) -> Points | None:
    """The points of a motion between two plan times, on the grid of ``point_times``.

    Parameters
    ----------
    motion : Motion
        The motion (as it now ends).
    t_from, t_to : float
        The stretch [s]; ``t_to`` at or past ``motion.end`` ends on the end.
    step : float
        Time between points [s].

    Returns
    -------
    Points or None
        None when the stretch holds no point.
    """
    times = point_times(t_from, t_to, step, motion.end)
    if len(times) == 0:
        return None
    return Points(times, *motion.sample(times))


def goal_lead(points: int, lead: float) -> float:
    """Time between sending a whole-motion ``FollowJointTrajectory`` goal and its first point.

    A trajectory whose first points are past when the controller takes it starts with a jump
    (the controller samples it at its own time); until its first point the controller holds the
    robot where it stands.

    Parameters
    ----------
    points : int
        Points of the goal.
    lead : float
        The fixed part [s] (the excitation node's ``goal_lead``).

    Returns
    -------
    float
        ``lead`` plus ``GOAL_LEAD_PER_POINT`` per point [s] (1.1 s for 6001 points and a lead of
        0.5 s).
    """
    return lead + GOAL_LEAD_PER_POINT * points


def tolerance_values(value, n: int, field: str) -> np.ndarray:
    """A per-joint ``FollowJointTrajectory`` tolerance as the parameters give it
    (``schema.per_joint``, with the values of ``JointTolerance.msg``).

    Parameters
    ----------
    value : float or list of float
        > 0 the tolerance, 0 the controller's default, −1 none; for every joint or per joint.
    n : int
        The robot's joints.
    field : str
        The parameter, named by the error.

    Returns
    -------
    (n,) ndarray
        The tolerances [rad or m] (with 0 and −1 as given).

    Raises
    ------
    InputError
        For another length than 1 or n, or a negative value other than −1.
    """
    values = per_joint(value, n, field)
    bad = values[(values < 0) & (values != ERASE)]
    if len(bad):
        raise InputError(f'{field}: {bad[0]:g} is no tolerance (> 0, 0 for the controller\'s '
                         'default, -1 for none)')
    return values


def controller_failure(action: str, aborted: bool, code: int, error_string: str) -> str:
    """Why an excitation failed when the controller ended its ``FollowJointTrajectory`` goal.

    Parameters
    ----------
    action : str
        The controller's action, e.g. ``/joint_trajectory_controller/follow_joint_trajectory``.
    aborted : bool
        Aborted (else cancelled by someone else).
    code : int
        The result's ``error_code`` (``controller.RESULT_CODES``).
    error_string : str
        The result's ``error_string``.

    Returns
    -------
    str
        E.g. ``the controller (/jtc/follow_joint_trajectory) aborted the trajectory:
        PATH_TOLERANCE_VIOLATED (-4): Aborted due to path tolerance violation``.
    """
    reason = f'{RESULT_CODES.get(code, "error code")} ({code})'
    if error_string:
        reason += f': {error_string}'
    return (f'the controller ({action}) {"aborted" if aborted else "cancelled"} the '
            f'trajectory: {reason}')


def controller_rejection(action: str) -> str:
    """Why an excitation failed when the controller rejected its ``FollowJointTrajectory`` goal
    (the action tells no reason; the controller logs it).

    Parameters
    ----------
    action : str
        The controller's action.

    Returns
    -------
    str
    """
    return (f'the controller ({action}) rejected the trajectory: see its log (joints that are '
            'not its own, a controller that is not active, points that end in the past, or a '
            'last point not at rest)')
