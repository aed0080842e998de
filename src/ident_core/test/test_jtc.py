"""The joint_trajectory_controller semantics of the simulated hardware
(``motion.controller``): the trajectory buffer, and a FollowJointTrajectory goal's tolerances
as ros2_controllers' Jazzy release resolves and checks them."""
import numpy as np
import pytest

from ident_core.errors import InputError
from ident_core.motion.controller import (
    GOAL_REACHED,
    GOAL_TOLERANCE_VIOLATED,
    PATH_TOLERANCE_VIOLATED,
    PATH_VIOLATION,
    STOPPED_VELOCITY_TOLERANCE,
    SUCCESSFUL,
    Tolerances,
    TrajectoryBuffer,
    check_tolerances,
    goal_tolerances,
)

Q_HOLD = np.array([0.3, -1.2, 0.7])


def poly(coef, t):
    """q, qd, qdd (M, n) of q(t) = Σ_k coef[k] t^k, coef (K, n)."""
    t = np.atleast_1d(np.asarray(t, float))[:, None]
    q = sum(c * t ** k for k, c in enumerate(coef))
    qd = sum(k * c * t ** (k - 1) for k, c in enumerate(coef) if k >= 1)
    qdd = sum(k * (k - 1) * c * t ** (k - 2) for k, c in enumerate(coef) if k >= 2)
    return q, qd + 0 * q, qdd + 0 * q


def samples(buf, times):
    out = [buf.sample(t) for t in times]
    return tuple(np.array([o[i] for o in out]) for i in range(3))


def test_holds_the_initial_position():
    buf = TrajectoryBuffer(Q_HOLD)
    for t in (-5.0, 0.0, 0.1, 1e6):
        q, qd, qdd = buf.sample(t)
        np.testing.assert_array_equal(q, Q_HOLD)
        np.testing.assert_array_equal(qd, 0)
        np.testing.assert_array_equal(qdd, 0)
    buf.sample(1.0)[0][0] = 99.0               # the caller gets a copy
    np.testing.assert_array_equal(buf.sample(1.0)[0], Q_HOLD)


def test_points_only_in_the_past_are_ignored():
    buf = TrajectoryBuffer(Q_HOLD)
    now = 10.0
    q = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    assert buf.replace(now, 8.0, [0.5, 2.0], q) is False        # absolute 8.5 and 10.0 <= now
    np.testing.assert_array_equal(buf.sample(now + 1.0)[0], Q_HOLD)
    assert buf.replace(now, 8.0, [0.5, 2.5], q) is True


def test_quintic_interpolation_reproduces_a_quintic():
    # q(t) = Q_HOLD + c3 t³ + c4 t⁴ + c5 t⁵ starts at rest in Q_HOLD, the held state; the
    # quintic through two full states is unique, so every segment must be this polynomial
    rng = np.random.default_rng(0)
    coef = np.vstack([Q_HOLD, np.zeros((2, 3)), rng.normal(size=(3, 3))])
    knots = np.array([0.3, 0.7, 1.0, 1.6])
    buf = TrajectoryBuffer(Q_HOLD)
    assert buf.replace(0.0, 0.0, knots, *poly(coef, knots))
    t = np.linspace(0.0, 1.6, 321)[:-1]
    for got, want in zip(samples(buf, t), poly(coef, t)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_cubic_interpolation_reproduces_a_cubic():
    rng = np.random.default_rng(1)
    coef = np.vstack([Q_HOLD, np.zeros((1, 3)), rng.normal(size=(2, 3))])
    knots = np.array([0.25, 0.5, 1.1])
    q, qd, _ = poly(coef, knots)
    buf = TrajectoryBuffer(Q_HOLD)
    assert buf.replace(0.0, 0.0, knots, q, qd)
    t = np.linspace(0.0, 1.1, 111)[:-1]
    for got, want in zip(samples(buf, t), poly(coef, t)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_positions_only_interpolate_linearly():
    buf = TrajectoryBuffer(Q_HOLD)
    knots = np.array([1.0, 1.5, 3.0])
    q = np.array([[1.0, 0.0, 0.0], [1.5, -1.0, 2.0], [0.0, -1.0, 1.0]])
    start = 2.0
    assert buf.replace(2.0, start, knots, q)
    t = np.linspace(2.0, 5.0, 61)[:-1]
    got_q, got_qd, got_qdd = samples(buf, t)
    all_knots = np.concatenate([[start], start + knots])
    all_q = np.vstack([Q_HOLD, q])
    for j in range(3):
        np.testing.assert_allclose(got_q[:, j], np.interp(t, all_knots, all_q[:, j]), atol=1e-12)
        seg = np.searchsorted(all_knots, t, side='right') - 1
        slope = np.diff(all_q[:, j]) / np.diff(all_knots)
        np.testing.assert_allclose(got_qd[:, j], slope[seg], atol=1e-12)
    np.testing.assert_array_equal(got_qdd, 0)


def test_after_the_last_point_holds_it_at_rest():
    buf = TrajectoryBuffer(Q_HOLD)
    q = np.array([[1.0, 0.5, 0.0], [2.0, -0.5, 1.0]])
    qd = np.array([[0.4, 0.1, 0.2], [0.3, -0.2, 0.5]])      # moving at the last point
    assert buf.replace(1.0, 1.0, [0.5, 1.0], q, qd, np.ones_like(q))
    for t in (2.0, 2.001, 50.0):
        got = buf.sample(t)
        np.testing.assert_array_equal(got[0], q[-1])
        np.testing.assert_array_equal(got[1], 0)
        np.testing.assert_array_equal(got[2], 0)


def test_a_new_message_replaces_the_rest_continuously():
    rng = np.random.default_rng(2)
    buf = TrajectoryBuffer(Q_HOLD)
    k1 = np.array([0.5, 1.0, 2.0, 3.0])
    q1 = Q_HOLD + rng.normal(scale=0.3, size=(4, 3))
    qd1, qdd1 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    assert buf.replace(0.0, 0.0, k1, q1, qd1, qdd1)
    np.testing.assert_allclose(buf.sample(1.0)[0], q1[1], atol=1e-12)     # passes its points
    np.testing.assert_allclose(buf.sample(2.0)[1], qd1[2], atol=1e-12)
    now = 1.37
    before = buf.sample(now)
    k2 = np.array([0.4, 1.1])                 # stamped 0.1 s ago: absolute 1.47, 2.17
    q2 = Q_HOLD + rng.normal(scale=0.3, size=(2, 3))
    qd2, qdd2 = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    assert buf.replace(now, now - 0.1, k2, q2, qd2, qdd2)
    # the desired state does not jump when the message arrives
    for b, a in zip(before, buf.sample(now)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    eps = 1e-9
    for b, a in zip(before, buf.sample(now + eps)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4)
    # the new points are reached exactly, the old ones no longer matter
    for t_abs, i in ((now - 0.1 + 0.4, 0), (now - 0.1 + 1.1 - 1e-12, 1)):
        got = buf.sample(t_abs)
        np.testing.assert_allclose(got[0], q2[i], atol=1e-9)
        np.testing.assert_allclose(got[1], qd2[i], atol=1e-7)
        np.testing.assert_allclose(got[2], qdd2[i], atol=1e-5)
    assert np.abs(buf.sample(2.0)[0] - q1[2]).max() > 1e-3
    for t in (2.5, 3.0, 10.0):                 # and after the new end: its last point, at rest
        np.testing.assert_array_equal(buf.sample(t)[0], q2[-1])
        np.testing.assert_array_equal(buf.sample(t)[1], 0)


def test_points_partly_in_the_past_start_from_the_current_state():
    buf = TrajectoryBuffer(Q_HOLD)
    now = 1.0
    knots = np.array([0.2, 0.4, 0.8, 1.2])            # absolute 0.7, 0.9, 1.3, 1.7
    q = np.array([[9.0] * 3, [9.0] * 3, [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
    assert buf.replace(now, 0.5, knots, q)
    # linear from the held position at `now` to the first future point; the past ones are unused
    np.testing.assert_allclose(buf.sample(1.15)[0], (Q_HOLD + q[2]) / 2, atol=1e-12)
    np.testing.assert_allclose(buf.sample(1.3)[0], q[2], atol=1e-12)
    np.testing.assert_allclose(buf.sample(1.5)[0], (q[2] + q[3]) / 2, atol=1e-12)


def test_accelerations_without_velocities_mean_zero_velocities():
    buf = TrajectoryBuffer(np.zeros(1))
    q = np.array([[1.0], [2.0]])
    qdd = np.zeros((2, 1))
    assert buf.replace(0.0, 0.0, [1.0, 2.0], q, None, qdd)
    # quintic rest-to-rest segments: zero velocity at every point
    for t in (1.0, 2.0 - 1e-12):
        np.testing.assert_allclose(buf.sample(t)[1], 0, atol=1e-9)
    np.testing.assert_allclose(buf.sample(0.5)[0], 0.5, atol=1e-12)       # symmetric profile


@pytest.mark.parametrize('times, q, qd, qdd', [
    ([0.1, 0.2], np.zeros((2, 4)), None, None),          # wrong joint count
    ([0.1, 0.2], np.zeros((3, 3)), None, None),          # wrong point count
    ([0.1, 0.2], np.zeros(3), None, None),               # not (K, n)
    ([0.1, 0.2], np.zeros((2, 3)), np.zeros((2, 2)), None),
    ([0.1, 0.2], np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((1, 3))),
    ([0.2, 0.1], np.zeros((2, 3)), None, None),          # decreasing
    ([0.2, 0.2], np.zeros((2, 3)), None, None),          # repeated
])
def test_bad_points_raise(times, q, qd, qdd):
    buf = TrajectoryBuffer(Q_HOLD)
    with pytest.raises(InputError, match='trajectory'):
        buf.replace(0.0, 0.0, times, q, qd, qdd)
    np.testing.assert_array_equal(buf.sample(1.0)[0], Q_HOLD)     # nothing changed


def test_hold_keeps_a_position_at_rest_from_now_on():
    buf = TrajectoryBuffer(Q_HOLD)
    assert buf.replace(0.0, 0.0, [1.0, 2.0], [Q_HOLD + 1, Q_HOLD + 2])
    here = np.array([0.5, 0.5, 0.5])
    buf.hold(1.5, here)
    assert buf.end_time == 1.5
    for t in (1.5, 1.7, 10.0):
        q, qd, qdd = buf.sample(t)
        np.testing.assert_array_equal(q, here)
        assert not qd.any() and not qdd.any()


JOINTS = ['a', 'b', 'c']


def test_a_goal_resolves_its_tolerances_over_the_controllers():
    defaults = Tolerances.defaults(3)
    assert not defaults.path.any() and defaults.goal_time == 0.0
    np.testing.assert_array_equal(defaults.goal[1], STOPPED_VELOCITY_TOLERANCE)
    configured = Tolerances(np.full((3, 3), 0.2), defaults.goal, 0.5)
    tolerances, problem = goal_tolerances(
        configured, JOINTS, {'b': (0.05, 0.0, -1.0)}, {'c': (0.01, 0.0, 0.0)}, 0.0)
    assert problem == ''
    np.testing.assert_array_equal(tolerances.path[:, 1], [0.05, 0.2, 0.0])   # >0, 0, -1
    np.testing.assert_array_equal(tolerances.path[:, 0], 0.2)                 # not named
    assert tolerances.goal[0, 2] == 0.01 and tolerances.goal[1, 2] == STOPPED_VELOCITY_TOLERANCE
    assert tolerances.goal_time == 0.5                                        # 0: default
    assert goal_tolerances(configured, JOINTS, {}, {}, -1.0)[0].goal_time == 0.0   # erased
    # an unknown joint or an illegal value: the goal's tolerances are ignored, all of them
    for path, time in (({'d': (0.1, 0, 0)}, 2.0), ({'a': (-0.5, 0, 0)}, 2.0), ({}, -2.0)):
        tolerances, problem = goal_tolerances(configured, JOINTS, path, {}, time)
        assert tolerances is configured and problem.endswith('using the default tolerances')


def test_path_tolerance_aborts_while_moving_and_goal_tolerance_ends_the_goal():
    tolerances = Tolerances(np.array([[0.1, 0.0, 0.1], [0, 0, 0], [0, 0, 0]]),
                            np.array([[0.01] * 3, [0.01] * 3, [0] * 3]), 0.5)
    error = np.zeros((3, 3))
    error[0] = [0.05, 3.0, -0.02]           # joint b has no path tolerance
    assert check_tolerances(tolerances, error, JOINTS, -1.0).code is None
    error[0, 2] = -0.12
    verdict = check_tolerances(tolerances, error, JOINTS, -1.0)
    assert verdict.code == PATH_TOLERANCE_VIOLATED and verdict.error_string == PATH_VIOLATION
    assert verdict.detail == 'c position error -0.12 (tolerance 0.1)'
    # after the last point: not yet within the goal tolerance, then within it
    error[0] = [0.02, 0.0, 0.0]
    assert check_tolerances(tolerances, error, JOINTS, 0.3).code is None
    verdict = check_tolerances(tolerances, error, JOINTS, 0.6)
    assert verdict.code == GOAL_TOLERANCE_VIOLATED
    assert verdict.error_string == ('Aborted due to goal_time_tolerance exceeding by '
                                    '0.600000 seconds')
    error[0, 0] = 0.005
    assert check_tolerances(tolerances, error, JOINTS, 0.6) == (SUCCESSFUL, GOAL_REACHED, '')
    # goal_time 0: waits for ever; the first period checks the path tolerance even at the end
    waiting = Tolerances(tolerances.path, tolerances.goal, 0.0)
    error[0, 0] = 0.05
    assert check_tolerances(waiting, error, JOINTS, 100.0).code is None
    error[0, 0] = 0.2
    assert check_tolerances(waiting, error, JOINTS, 1.0, first=True).code == \
        PATH_TOLERANCE_VIOLATED
