"""Streaming an excitation (``motion.streaming``) and watching the robot while it runs
(``motion.watchdog``), without DDS: the point grid of each message, the whole motion as one
FollowJointTrajectory goal (its points, lead, tolerances and the controller's reasons), the
stages described and reported on a joint-wise plan, the end-of-motion rule on the robot's own
clock, and the tracking error of a measurement against the command at its stamp."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.errors import InputError
from ident_core.excitation.fourier import load_trajectory
from ident_core.excitation.jointwise import load_experiment
from ident_core.model.robot import load_robot
from ident_core.motion.controller import PATH_TOLERANCE_VIOLATED
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import Motion
from ident_core.motion.streaming import (
    LEAD,
    MAX_LAG,
    check_joints,
    controller_failure,
    controller_rejection,
    current_stage,
    excitation_plan,
    feedback,
    goal_lead,
    measured_until,
    motion_over,
    motion_points,
    plan_summary,
    point_times,
    stages_begun,
    tolerance_values,
)
from ident_core.motion.watchdog import (
    RECORDER_GRACE,
    JointSample,
    MotionWatchdog,
    recorder_gone,
)

REPO = Path(__file__).resolve().parents[3]
JOINTS = [f'joint{i}' for i in range(1, 7)]
ACCELERATION = [20, 20, 20, 25, 25, 25]           # rad/s², config/six_axis_3kg
Q_NOW = np.array([0.1, -0.2, 0.3, 0.0, 0.2, -0.1])  # rad, where the arm stands
START_NS = 1_700_000_000 * 10**9                    # plan time 0 on the runner's clock


@pytest.fixture(scope='module')
def limits():
    robot = load_robot(REPO / 'urdf/six_axis_3kg.urdf')
    return JointLimits.from_robot(robot, ACCELERATION).with_margin(0.02)


@pytest.fixture(scope='module')
def fourier():
    return load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')


@pytest.fixture(scope='module')
def experiment(tmp_path_factory):
    """Joint 4 on a fast then a slow cosine (3 × 1 s, then 2 × 2 s), the others held."""
    path = tmp_path_factory.mktemp('jointwise') / 'two.yaml'
    path.write_text(yaml.safe_dump({
        'format': 'robot-ident/jointwise/1', 'name': 'two', 'joint': 'joint4',
        'joint_names': JOINTS, 'hold': [0.0] * 6,
        'cosines': [{'amplitude': 0.15, 'period': 1.0, 'periods': 3},
                    {'amplitude': 0.3, 'period': 2.0, 'periods': 2}]}))
    return load_experiment(path)


def test_point_grid_is_aligned_to_plan_time_zero_and_ends_on_the_end():
    times = point_times(0.125, 1.125, 0.01, 10.0)
    assert times[0] == pytest.approx(0.13) and times[-1] == pytest.approx(1.12)
    np.testing.assert_allclose(np.diff(times), 0.01, atol=1e-12)
    near_end = point_times(9.5, 10.5, 0.01, 9.987)       # the motion ends off the grid
    assert near_end[-2] == pytest.approx(9.98) and near_end[-1] == 9.987
    assert list(point_times(10.0, 11.0, 0.01, 9.987)) == [9.987]   # a stop after the end
    assert len(point_times(1.005, 1.009, 0.01, 10.0)) == 0          # no grid point in it


def test_a_motion_is_over_after_settling_on_the_robot_clock():
    end, settle = 10.0, 0.5
    assert not motion_over(10.4, end, settle, np.inf, False)       # still settling
    assert motion_over(10.6, end, settle, np.inf, False)           # no stamps: wall clock
    assert not motion_over(10.6, end, settle, 10.4, False)         # the robot lags
    assert motion_over(10.6, end, settle, 10.6, False)             # ... and caught up
    assert motion_over(10.6, end, settle, 10.4, True)              # a failed goal ends now
    assert motion_over(end + MAX_LAG + 0.01, end, settle, 10.4, False)   # lags too long
    # over FollowJointTrajectory, the controller's result is awaited too
    assert not motion_over(10.6, end, settle, 10.6, False, result_pending=True)
    assert motion_over(10.6, end, settle, 10.6, True, result_pending=True)
    assert motion_over(end + MAX_LAG + 0.01, end, settle, 10.6, False, result_pending=True)


def test_the_whole_motion_is_one_goal_on_the_grid_ending_at_rest(limits, fourier):
    motion = Motion(excitation_plan(fourier, Q_NOW, limits), START_NS)
    points = motion_points(motion, 0.0, motion.end, 0.01)
    assert points.times[0] == 0.0 and points.times[-1] == motion.end
    assert len(points.times) == int(np.ceil(motion.end / 0.01 - 1e-9)) + 1
    np.testing.assert_allclose(points.q[0], Q_NOW, atol=1e-12)            # from where it stands
    assert np.abs(points.qd[[0, -1]]).max() < 1e-12                       # rest to rest
    assert np.abs(points.qdd[[0, -1]]).max() < 1e-12
    for got, want in zip(points[1:], motion.sample(points.times)):
        np.testing.assert_array_equal(got, want)
    # a 60 s motion on the 10 ms grid: 6001 points, sent 1.1 s ahead of its first one
    assert goal_lead(6001, 0.5) == pytest.approx(1.1001)
    assert motion_points(motion, 1.005, 1.009, 0.01) is None          # no grid point in it


def test_a_stop_replaces_the_goal_by_the_rest_of_the_motion(limits, fourier):
    motion = Motion(excitation_plan(fourier, Q_NOW, limits), START_NS)
    t = motion.plan.excite_start + 1.234
    before = motion.sample(np.array([t + 0.05]))
    motion.stop_at_time(t + LEAD)
    rest = motion_points(motion, t + LEAD / 2, motion.end + 1.0, 0.01)
    assert rest.times[0] == pytest.approx(t + 0.1, abs=0.01) and rest.times[-1] == motion.end
    np.testing.assert_allclose(motion.sample(np.array([t + 0.05]))[0], before[0], atol=1e-12)
    assert np.abs(rest.qd[-1]).max() < 1e-12                              # ends at rest


def test_tolerances_and_the_controllers_reasons():
    np.testing.assert_array_equal(tolerance_values([0.1], 3, 'path_tolerance'), [0.1] * 3)
    np.testing.assert_array_equal(tolerance_values([0.1, 0, -1], 3, 'goal_tolerance'),
                                  [0.1, 0.0, -1.0])
    with pytest.raises(InputError, match=r'path_tolerance: -0.5 is no tolerance'):
        tolerance_values([0.1, -0.5, 0.1], 3, 'path_tolerance')
    with pytest.raises(InputError, match=r'goal_tolerance must have shape \(3,\)'):
        tolerance_values([0.1, 0.1], 3, 'goal_tolerance')
    action = '/jtc/follow_joint_trajectory'
    assert controller_failure(action, True, PATH_TOLERANCE_VIOLATED,
                              'Aborted due to path tolerance violation') == (
        'the controller (/jtc/follow_joint_trajectory) aborted the trajectory: '
        'PATH_TOLERANCE_VIOLATED (-4): Aborted due to path tolerance violation')
    assert controller_failure(action, False, 0, '').endswith(
        'cancelled the trajectory: SUCCESSFUL (0)')
    assert '(-7)' in controller_failure(action, True, -7, 'x')
    assert controller_rejection(action).startswith(f'the controller ({action}) rejected')


def test_measured_until_is_the_plan_time_of_the_last_stamp(limits, fourier):
    motion = Motion(excitation_plan(fourier, np.zeros(6), limits), START_NS)
    assert measured_until(motion, None) == np.inf and measured_until(motion, 0) == np.inf
    assert measured_until(motion, START_NS + 2_500_000_000) == pytest.approx(2.5)


def test_a_jointwise_plan_holds_the_other_joints_and_counts_its_stages(limits, experiment):
    plan = excitation_plan(experiment, Q_NOW, limits)
    assert len(plan.stages) == 2 and plan.periods == 5
    for stage in plan.stages:
        q0 = stage.evaluate(0.0)[0][0]
        np.testing.assert_allclose(np.delete(q0, 3), np.delete(Q_NOW, 3), atol=1e-12)
    first, second = plan.stage_times
    assert first.begins == 0 and first.start == plan.excite_start and first.periods == 3
    assert second.begins == pytest.approx(first.start + 3 * 1.0) and second.periods == 2
    assert second.start > second.begins                           # a transition between them
    # described when the motion into a stage begins; reported once its first period begins
    assert stages_begun(plan, 0.0) == 1
    assert stages_begun(plan, second.begins - 1e-6) == 1
    assert stages_begun(plan, second.begins) == 2
    assert current_stage(plan.stage_times, first.start - 1e-6) == 0
    assert current_stage(plan.stage_times, first.start) == 1
    assert current_stage(plan.stage_times, (second.begins + second.start) / 2) == 1
    assert current_stage(plan.stage_times, second.start) == 2
    pattern = (r'joint-wise on joint4 \(others held\): approach \d+\.\d\d s, 3 x 1 s \+ '
               r'2 x 2 s \(transitions (\d+\.\d\d) s\), stop \d+\.\d\d s, (\d+\.\d\d) s in all')
    match = re.fullmatch(pattern, plan_summary(plan, experiment))
    assert match, plan_summary(plan, experiment)
    assert float(match.group(1)) == pytest.approx(second.start - second.begins, abs=0.006)
    assert float(match.group(2)) == pytest.approx(plan.duration, abs=0.006)


def test_feedback_through_approach_excitation_and_an_early_stop(limits, experiment):
    motion = Motion(excitation_plan(experiment, Q_NOW, limits), START_NS)
    plan = motion.plan
    assert feedback(motion, 0.0) == ('approach', 0.0, 0, 0)
    at = feedback(motion, plan.stage_times[1].start + 2.5)       # 2nd period of the 2nd stage
    assert (at.phase, at.period, at.stage) == ('excite', 5, 2)
    assert at.progress == pytest.approx((plan.stage_times[1].start + 2.5) / plan.duration)
    t_stop = plan.excite_start + 1.5
    motion.stop_at_time(t_stop)
    stopping = feedback(motion, t_stop + 0.01)
    assert stopping.phase == 'stop' and stopping.stage == 1
    assert stopping.progress == pytest.approx((t_stop + 0.01) / motion.end)
    assert feedback(motion, motion.end + 1.0).progress == 1.0


def test_a_fourier_plan_summary_and_joint_check(limits, fourier):
    plan = excitation_plan(fourier, np.zeros(6), limits, periods=2)
    text = plan_summary(plan, fourier)
    assert text.startswith('approach ') and f', 2 x {fourier.period:g} s, stop ' in text
    assert 'transitions' not in text and text.endswith(f'{plan.duration:.2f} s in all')
    check_joints(fourier, list(reversed(JOINTS)))                  # any order
    with pytest.raises(InputError, match='names the joints'):
        check_joints(fourier, JOINTS[:5] + ['joint7'])


# --- watching the robot ----------------------------------------------------------------------

def test_the_watchdog_compares_a_measurement_with_the_command_at_its_stamp(limits, fourier):
    motion = Motion(excitation_plan(fourier, np.zeros(6), limits), START_NS)
    names = list(fourier.joint_names)
    watchdog = MotionWatchdog(names, 1.0, np.full(6, 0.05), '/joint_states')
    t = motion.plan.excite_start + 0.7                      # moving fast here
    stamp = START_NS + int(t * 1e9)
    commanded = motion.sample(np.array([t]))[0][0]
    now = stamp + 300_000_000                               # received and looked at later
    exact = JointSample(now - 1_000_000, stamp, dict(zip(names, commanded)))
    reason, error = watchdog.check(motion, now, START_NS, exact)
    assert reason == '' and np.abs(error).max() < 1e-12

    off = commanded.copy()
    off[2] += 0.08                                          # beyond the 0.05 rad limit
    reason, error = watchdog.check(motion, now, START_NS,
                                   JointSample(now, stamp, dict(zip(names, off))))
    assert error[2] == pytest.approx(0.08) and np.delete(error, 2).max() < 1e-12
    assert reason.startswith(f'{names[2]} is 0.08 from its command (limit 0.05)')

    # no stamp: the receive time stands for it; before the plan starts, the start position
    unstamped = JointSample(stamp, 0, dict(zip(names, commanded)))
    assert np.abs(watchdog.check(motion, now, START_NS, unstamped)[1]).max() < 1e-12
    early = JointSample(now, START_NS - 10**9, dict(zip(names, motion.sample(0.0)[0][0])))
    assert np.abs(watchdog.check(motion, now, START_NS, early)[1]).max() < 1e-12


def test_the_watchdog_stops_a_motion_without_measurements(limits, fourier):
    motion = Motion(excitation_plan(fourier, np.zeros(6), limits), START_NS)
    names = list(fourier.joint_names)
    watchdog = MotionWatchdog(names, 1.0, np.full(6, 0.05), '/joint_states')
    assert watchdog.check(motion, START_NS + 900_000_000, START_NS, None) == ('', None)
    reason, error = watchdog.check(motion, START_NS + 1_500_000_000, START_NS, None)
    assert error is None and reason.startswith('no /joint_states for 1.50 s (limit 1 s)')
    partial = JointSample(START_NS + 10**9, 0, {n: 0.0 for n in names[:5]})   # joint6 missing
    late = START_NS + 2_600_000_000
    reason, error = watchdog.check(motion, late, START_NS, partial)
    assert error is None and reason.startswith('no /joint_states for 1.60 s')
    assert watchdog.starved(0.51) and not watchdog.starved(0.5)    # half the timeout


def test_the_recorder_is_gone_after_its_grace_period():
    now = START_NS
    assert not recorder_gone(None, now)
    assert not recorder_gone(now - int(RECORDER_GRACE * 1e9), now)
    assert recorder_gone(now - int(RECORDER_GRACE * 1e9) - 1_000_000, now)
