"""Excitation motions: joint limits, polynomial segments, approach/stop and the whole plan."""
import math

import numpy as np
import pytest
from test_fourier import JOINTS, TABLE1

from ident_core.errors import ExcitationError, InputError
from ident_core.excitation.fourier import FourierTrajectory
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan
from ident_core.motion.segments import (
    MIN_SEGMENT,
    Segment,
    approach_segment,
    evaluate_polynomial,
    polynomial_coefficients,
    stop_segment,
)

ACCELERATION = [20, 20, 20, 25, 25, 25]          # rad/s²
# six_axis_3kg.urdf: lower, upper, velocity per joint
URDF_LOWER = [-2.9, -2.6, -2.8, -3.0, -2.2, -3.0]
URDF_UPPER = [2.9, 1.2, 1.6, 3.0, 2.2, 3.0]
URDF_VELOCITY = [3.5, 3.5, 3.5, 5.0, 5.0, 6.0]
DT = 1e-3


def table1(periods=2):
    return FourierTrajectory(JOINTS, 2 * math.pi / 5.0, TABLE1[:, 0], TABLE1[:, 1::2],
                             TABLE1[:, 2::2], periods, 'table1')


@pytest.fixture(scope='module')
def limits(six_axis):
    return JointLimits.from_robot(six_axis, ACCELERATION)


@pytest.fixture(scope='module')
def plan(limits):
    return ExcitationPlan(table1(), np.zeros(6), limits)


def assert_within(limits, q, qd, qdd, tol=1e-9):
    assert np.all(q >= limits.lower - tol) and np.all(q <= limits.upper + tol)
    assert np.all(np.abs(qd) <= limits.velocity + tol)
    assert np.all(np.abs(qdd) <= limits.acceleration + tol)


# --- JointLimits --------------------------------------------------------------------------------

def test_limits_from_urdf(limits):
    assert limits.joint_names == JOINTS
    np.testing.assert_array_equal(limits.lower, URDF_LOWER)
    np.testing.assert_array_equal(limits.upper, URDF_UPPER)
    np.testing.assert_array_equal(limits.velocity, URDF_VELOCITY)
    np.testing.assert_array_equal(limits.acceleration, ACCELERATION)


def test_limits_in_another_order_with_overrides(six_axis):
    order = ['joint3', 'joint1', 'joint2', 'joint6', 'joint5', 'joint4']
    lim = JointLimits.from_robot(six_axis, 15.0, order,
                                 {'joint6': {'velocity': 2.0, 'lower': -1.0},
                                  'joint1': {'acceleration': 7}})
    assert lim.joint_names == order
    np.testing.assert_array_equal(lim.lower, [-2.8, -2.9, -2.6, -1.0, -2.2, -3.0])
    np.testing.assert_array_equal(lim.upper, [1.6, 2.9, 1.2, 3.0, 2.2, 3.0])
    np.testing.assert_array_equal(lim.velocity, [3.5, 3.5, 3.5, 2.0, 5.0, 5.0])
    np.testing.assert_array_equal(lim.acceleration, [15, 7, 15, 15, 15, 15])
    # the robot is untouched by the overrides
    np.testing.assert_array_equal(six_axis.velocity_limit, URDF_VELOCITY)
    np.testing.assert_array_equal(six_axis.lower, URDF_LOWER)


@pytest.mark.parametrize('overrides, words', [
    ({'joint9': {'velocity': 1.0}}, ['joint9']),
    ({'joint2': 1.0}, ['joint2']),
    ({'joint2': {'jerk': 1.0}}, ['joint2', 'jerk']),
    ({'joint2': {'velocity': 0.0}}, ['joint2', 'velocity']),
    ({'joint2': {'acceleration': -1.0}}, ['joint2', 'acceleration']),
    ({'joint4': {'lower': 3.5}}, ['joint4', 'position']),
])
def test_bad_overrides(six_axis, overrides, words):
    with pytest.raises(InputError) as info:
        JointLimits.from_robot(six_axis, ACCELERATION, overrides=overrides)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_unknown_joint_name(six_axis):
    with pytest.raises(InputError, match='joint7'):
        JointLimits.from_robot(six_axis, 10.0, JOINTS[:5] + ['joint7'])


def test_validate_names_the_joint(limits):
    lim = limits.with_margin(0.0)
    lim.validate()
    lim.upper[4] = np.nan
    with pytest.raises(InputError, match='joint5'):
        lim.validate()
    lim = limits.with_margin(0.0)
    lim.acceleration[2] = np.inf
    with pytest.raises(InputError, match='joint3.*acceleration'):
        lim.validate()


def test_with_margin(limits):
    m = limits.with_margin(0.1)
    span = np.subtract(URDF_UPPER, URDF_LOWER)
    np.testing.assert_allclose(m.lower, np.add(URDF_LOWER, 0.1 * span))
    np.testing.assert_allclose(m.upper, np.subtract(URDF_UPPER, 0.1 * span))
    np.testing.assert_allclose(m.velocity, 0.9 * np.array(URDF_VELOCITY))
    np.testing.assert_allclose(m.acceleration, 0.9 * np.array(ACCELERATION))
    np.testing.assert_array_equal(limits.velocity, URDF_VELOCITY)          # a new object
    for bad in (-0.1, 0.5, 0.7):
        with pytest.raises(InputError, match='margin'):
            limits.with_margin(bad)


def test_violations_name_joint_kind_worst_value_and_time(limits):
    t = np.arange(5) * 0.1
    q = np.zeros((5, 6))
    qd = np.zeros((5, 6))
    qdd = np.zeros((5, 6))
    assert limits.violations(t, q, qd, qdd) == []
    q[3, 1] = 1.5            # joint2 above 1.2
    q[1, 1] = 1.3
    qd[2, 3] = -5.5          # joint4 below -5
    qdd[4, 5] = 25.0         # joint6 exactly at its limit: allowed
    out = limits.violations(t, q, qd, qdd)
    assert len(out) == 2
    assert 'joint2' in out[0] and 'position' in out[0] and '1.5' in out[0] and '0.300' in out[0]
    assert 'joint4' in out[1] and 'velocity' in out[1] and '-5.5' in out[1] and '0.200' in out[1]
    qdd[4, 5] = 25.01
    assert any('joint6' in v and 'acceleration' in v for v in limits.violations(t, q, qd, qdd))


# --- polynomials --------------------------------------------------------------------------------

def _states(rng, n=4):
    return [rng.normal(size=n) for _ in range(6)]


def test_quintic_meets_all_boundary_conditions():
    rng = np.random.default_rng(0)
    for T in (0.3, 1.0, 7.5):
        q0, v0, a0, q1, v1, a1 = _states(rng)
        c = polynomial_coefficients(q0, v0, a0, q1, v1, a1, T)
        q, qd, qdd = evaluate_polynomial(c, np.array([0.0, T]))
        scale = 1 + max(abs(x).max() for x in (q0, q1, v0, v1, a0, a1))
        for got, want in ((q, (q0, q1)), (qd, (v0, v1)), (qdd, (a0, a1))):
            np.testing.assert_allclose(got, np.array(want), rtol=0, atol=1e-11 * scale)


def test_quintic_rest_to_rest_is_the_minimum_jerk_profile():
    q0, q1, T = np.array([0.2, -1.0]), np.array([1.4, 0.5]), 2.0
    zero = np.zeros(2)
    c = polynomial_coefficients(q0, zero, zero, q1, zero, zero, T)
    s = np.linspace(0, T, 101)
    tau = s / T
    q, qd, qdd = evaluate_polynomial(c, s)
    shape = 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5
    np.testing.assert_allclose(q, q0 + np.outer(shape, q1 - q0), atol=1e-13)
    np.testing.assert_allclose(qd, np.outer((30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4) / T,
                                            q1 - q0), atol=1e-12)
    np.testing.assert_allclose(qdd, np.outer((60 * tau - 180 * tau ** 2 + 120 * tau ** 3) / T ** 2,
                                             q1 - q0), atol=1e-12)


def test_quintic_reproduces_a_quintic():
    rng = np.random.default_rng(1)
    coef = rng.normal(size=(6, 3))
    T = 1.7

    def p(s):
        s = np.asarray(s, float)
        q = sum(coef[k] * s[:, None] ** k for k in range(6))
        qd = sum(k * coef[k] * s[:, None] ** (k - 1) for k in range(1, 6))
        qdd = sum(k * (k - 1) * coef[k] * s[:, None] ** (k - 2) for k in range(2, 6))
        return q, qd, qdd
    (q0, q1), (v0, v1), (a0, a1) = p([0.0, T])
    c = polynomial_coefficients(q0, v0, a0, q1, v1, a1, T)
    np.testing.assert_allclose(c, coef, atol=1e-11)
    s = np.linspace(0, T, 50)
    for got, want in zip(evaluate_polynomial(c, s), p(s)):
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_cubic_meets_position_and_velocity_conditions():
    rng = np.random.default_rng(2)
    q0, v0, _, q1, v1, _ = _states(rng)
    T = 0.8
    c = polynomial_coefficients(q0, v0, None, q1, v1, None, T)
    np.testing.assert_array_equal(c[4:], 0)
    q, qd, qdd = evaluate_polynomial(c, np.array([0.0, T]))
    np.testing.assert_allclose(q, [q0, q1], atol=1e-12)
    np.testing.assert_allclose(qd, [v0, v1], atol=1e-12)
    # cubic: the acceleration is linear in s
    s = np.linspace(0, T, 9)
    qdd = evaluate_polynomial(c, s)[2]
    np.testing.assert_allclose(np.diff(qdd, 2, axis=0), 0, atol=1e-10)


def test_linear_interpolates_positions():
    q0, q1, T = np.array([0.0, 1.0, -2.0]), np.array([1.0, 1.0, 2.0]), 4.0
    for v0 in (None, np.ones(3)):          # positions only at one end: linear
        c = polynomial_coefficients(q0, v0, None, q1, None, None, T)
        s = np.linspace(0, T, 11)
        q, qd, qdd = evaluate_polynomial(c, s)
        np.testing.assert_allclose(q, q0 + np.outer(s / T, q1 - q0), atol=1e-14)
        np.testing.assert_allclose(qd, np.broadcast_to((q1 - q0) / T, qd.shape), atol=1e-14)
        np.testing.assert_array_equal(qdd, 0)


def test_one_polynomial_per_sample_with_per_row_durations():
    # the layout the trajectory buffer uses: (K, n) boundary states and (K, 1) durations
    rng = np.random.default_rng(3)
    q0, v0, a0, q1, v1, a1 = (rng.normal(size=(5, 2)) for _ in range(6))
    T = rng.uniform(0.1, 2.0, size=(5, 1))
    c = polynomial_coefficients(q0, v0, a0, q1, v1, a1, T)
    assert c.shape == (6, 5, 2)
    q, qd, qdd = evaluate_polynomial(c, T[:, 0])
    np.testing.assert_allclose(q, q1, atol=1e-10)
    np.testing.assert_allclose(qd, v1, atol=1e-9)
    np.testing.assert_allclose(qdd, a1, atol=1e-8)
    q, qd, qdd = evaluate_polynomial(c, np.zeros(5))
    np.testing.assert_allclose(q, q0, atol=1e-14)
    np.testing.assert_allclose(qd, v0, atol=1e-14)
    np.testing.assert_allclose(qdd, a0, atol=1e-14)


def test_segment_clamps_time():
    start = (np.array([0.0, 1.0]), np.array([0.5, 0.0]), np.array([0.0, -1.0]))
    end = (np.array([1.0, 0.0]), np.zeros(2), np.zeros(2))
    seg = Segment(start, end, 2.0)
    q, qd, qdd = seg.evaluate(np.array([-1.0, 0.0, 2.0, 5.0]))
    np.testing.assert_allclose(q, [start[0], start[0], end[0], end[0]], atol=1e-12)
    np.testing.assert_allclose(qd, [start[1], start[1], end[1], end[1]], atol=1e-12)
    np.testing.assert_allclose(qdd, [start[2], start[2], end[2], end[2]], atol=1e-12)


# --- approach and stop --------------------------------------------------------------------------

def _dense(segment):
    t = np.arange(0.0, segment.duration + DT / 2, DT)
    return t, segment.evaluate(t)


def test_approach_from_rest_reaches_the_trajectory_start_state(limits):
    target = tuple(x[0] for x in table1().evaluate(0.0))
    seg = approach_segment(np.zeros(6), target, limits)
    q, qd, qdd = seg.evaluate(np.array([0.0, seg.duration]))
    np.testing.assert_allclose(q[0], 0, atol=1e-14)
    np.testing.assert_allclose(qd[0], 0, atol=1e-14)
    np.testing.assert_allclose(qdd[0], 0, atol=1e-14)
    np.testing.assert_allclose(q[1], target[0], atol=1e-10)
    np.testing.assert_allclose(qd[1], target[1], atol=1e-9)
    np.testing.assert_allclose(qdd[1], target[2], atol=1e-8)
    assert seg.duration >= MIN_SEGMENT
    t, states = _dense(seg)
    assert_within(limits, *states)
    # the shortest such segment (10 % steps): one step shorter breaks a limit
    if seg.duration > MIN_SEGMENT * 1.0001:
        shorter = approach_segment(np.zeros(6), target, limits, min_duration=seg.duration / 1.1)
        assert shorter.duration == pytest.approx(seg.duration, rel=1e-9)
        too_short = Segment((np.zeros(6), np.zeros(6), np.zeros(6)), target, seg.duration / 1.1)
        t = np.arange(0.0, too_short.duration, DT)
        assert limits.violations(t, *too_short.evaluate(t))


def test_long_approach_respects_limits(limits):
    # a long way (joint1 across its range) with a low velocity limit forces a long segment
    slow = limits.with_margin(0.0)
    slow.velocity[:] = 0.5
    start = np.array([-2.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    target = (np.array([2.5, -1.0, 0.5, 1.0, -1.0, 2.0]), np.zeros(6), np.zeros(6))
    seg = approach_segment(start, target, slow)
    # a rest-to-rest quintic peaks at 15/8 · distance / T
    assert seg.duration >= 15 / 8 * 5.0 / 0.5 - 1e-9
    t, states = _dense(seg)
    assert_within(slow, *states)
    np.testing.assert_allclose(seg.evaluate(seg.duration)[0][0], target[0], atol=1e-10)


def test_stop_segment_ends_at_rest(limits):
    traj = table1()
    for t_end in (0.0, 1.3, 3.7):
        state = tuple(x[0] for x in traj.evaluate(t_end))
        seg = stop_segment(state, limits)
        q, qd, qdd = seg.evaluate(np.array([0.0, seg.duration]))
        np.testing.assert_allclose(q[0], state[0], atol=1e-14)
        np.testing.assert_allclose(qd[0], state[1], atol=1e-14)
        np.testing.assert_allclose(qdd[0], state[2], atol=1e-14)
        np.testing.assert_allclose(qd[1], 0, atol=1e-9)
        np.testing.assert_allclose(qdd[1], 0, atol=1e-8)
        t, states = _dense(seg)
        assert_within(limits, *states)


def test_approach_from_outside_the_limits_refuses(limits):
    target = tuple(x[0] for x in table1().evaluate(0.0))
    start = np.zeros(6)
    start[1] = 1.5                   # joint2 upper limit 1.2
    with pytest.raises(ExcitationError) as info:
        approach_segment(start, target, limits)
    assert 'joint2' in str(info.value) and 'position' in str(info.value)


# --- the whole plan -----------------------------------------------------------------------------

def test_plan_respects_the_limits_everywhere(plan, limits):
    t = np.arange(0.0, plan.duration + DT / 2, DT)
    q, qd, qdd = plan.sample(t)
    assert_within(limits, q, qd, qdd)
    assert limits.violations(t, q, qd, qdd) == []
    # starts and ends at rest
    q, qd, qdd = plan.sample(np.array([0.0, plan.duration]))
    np.testing.assert_allclose(q[0], 0, atol=1e-14)
    np.testing.assert_allclose(qd, 0, atol=1e-9)
    np.testing.assert_allclose(qdd, 0, atol=1e-8)
    after = plan.sample(np.array([plan.duration + 1.0, plan.duration + 100.0]))
    np.testing.assert_allclose(after[0], np.vstack([q[1], q[1]]), atol=1e-12)
    np.testing.assert_allclose(after[1], 0, atol=1e-12)


def test_plan_excites_with_the_fourier_series(plan):
    traj = table1()
    assert plan.periods == 2
    assert plan.stop_start - plan.excite_start == pytest.approx(2 * traj.period, rel=1e-12)
    assert plan.duration == pytest.approx(plan.stop_start + plan.stop.duration, rel=1e-12)
    s = np.linspace(0.0, 2 * traj.period, 1001)[:-1]
    for got, want in zip(plan.sample(plan.excite_start + s), traj.evaluate(s)):
        np.testing.assert_allclose(got, want, atol=1e-9)


def test_plan_is_c2_continuous_at_the_phase_boundaries(plan):
    eps = 1e-9
    for boundary in (plan.excite_start, plan.stop_start):
        before = plan.sample(np.array([boundary - eps]))
        after = plan.sample(np.array([boundary + eps]))
        # jumps of at most eps × the next derivative (|qddd| < 1e3 here)
        for b, a in zip(before, after):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    # and the velocity is the derivative of the position across the boundaries
    h = 1e-6
    for boundary in (plan.excite_start, plan.stop_start):
        t = boundary + np.array([-3e-4, -1e-4, 0.0, 1e-4, 3e-4])
        q_p, qd_p, _ = plan.sample(t + h)
        q_m, qd_m, _ = plan.sample(t - h)
        _, qd, qdd = plan.sample(t)
        np.testing.assert_allclose((q_p - q_m) / (2 * h), qd, atol=1e-6)
        np.testing.assert_allclose((qd_p - qd_m) / (2 * h), qdd, atol=1e-3)


def test_plan_periods_override(limits):
    plan = ExcitationPlan(table1(periods=2), np.zeros(6), limits, periods=3)
    assert plan.periods == 3
    assert plan.stop_start - plan.excite_start == pytest.approx(15.0, rel=1e-12)


def test_phase_progress_and_period(plan):
    T = 5.0
    assert plan.phase(0.0) == ('approach', 0.0, 0)
    assert plan.phase(-1.0)[1] == 0.0
    name, progress, period = plan.phase(plan.excite_start + 0.5 * T)
    assert (name, period) == ('excite', 1)
    assert progress == pytest.approx((plan.excite_start + 0.5 * T) / plan.duration)
    assert plan.phase(plan.excite_start + 1.5 * T)[::2] == ('excite', 2)
    assert plan.phase(plan.excite_start)[::2] == ('excite', 1)
    assert plan.phase(plan.stop_start + 0.01)[::2] == ('stop', 2)
    assert plan.phase(plan.duration + 5.0) == ('stop', 1.0, 2)
    progress = [plan.phase(t)[1] for t in np.linspace(0, plan.duration, 50)]
    assert np.all(np.diff(progress) > 0) and progress[-1] == pytest.approx(1.0)


def test_trajectory_above_a_velocity_limit_is_refused(six_axis):
    # Table 1 at 5 s reaches |qd4| = 3.81 rad/s; limit joint4 to 3.5 rad/s
    lim = JointLimits.from_robot(six_axis, ACCELERATION, overrides={'joint4': {'velocity': 3.5}})
    with pytest.raises(ExcitationError) as info:
        ExcitationPlan(table1(), np.zeros(6), lim)
    message = str(info.value)
    assert 'joint4' in message and 'velocity' in message
    for other in ('joint1', 'joint2', 'joint3', 'joint5', 'joint6'):
        assert other not in message


def test_trajectory_above_an_acceleration_or_position_limit_is_refused(six_axis):
    # faster: period 4 s multiplies the accelerations by 1.25 (joint2 peaks at 17.3 rad/s² at 5 s)
    fast = FourierTrajectory(JOINTS, 2 * math.pi / 4.0, TABLE1[:, 0], TABLE1[:, 1::2],
                             TABLE1[:, 2::2], 1, 'fast')
    lim = JointLimits.from_robot(six_axis, ACCELERATION, overrides={
        j: {'velocity': 10.0} for j in JOINTS})
    with pytest.raises(ExcitationError, match='joint2: acceleration'):
        ExcitationPlan(fast, np.zeros(6), lim)
    # joint1 swings between -0.77 and 0.79 rad
    lim = JointLimits.from_robot(six_axis, ACCELERATION, overrides={'joint1': {'upper': 0.7}})
    with pytest.raises(ExcitationError, match='joint1: position'):
        ExcitationPlan(table1(), np.zeros(6), lim)


def test_plan_from_outside_the_limits_is_refused(limits):
    start = np.zeros(6)
    start[4] = -2.5                          # joint5 lower limit -2.2
    with pytest.raises(ExcitationError, match='joint5'):
        ExcitationPlan(table1(), start, limits)


def test_plan_needs_the_same_joints(six_axis):
    lim = JointLimits.from_robot(six_axis, ACCELERATION, list(reversed(JOINTS)))
    with pytest.raises(InputError):
        ExcitationPlan(table1(), np.zeros(6), lim)
