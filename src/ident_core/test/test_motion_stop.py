"""A running excitation motion cut short by a stop segment (motion.plan.Motion)."""
from pathlib import Path

import numpy as np
import pytest

from ident_core.excitation.fourier import load_trajectory
from ident_core.model.robot import load_robot
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan, Motion

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def plan():
    robot = load_robot(REPO / 'urdf/six_axis_3kg.urdf')
    limits = JointLimits.from_robot(robot, [20, 20, 20, 25, 25, 25]).with_margin(0.02)
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    return ExcitationPlan(trajectory, np.zeros(6), limits.reordered(trajectory.joint_names), 1)


def test_stop_mid_excitation_is_smooth_and_ends_at_rest_within_limits(plan):
    motion = Motion(plan, start_ns=0)
    t_stop = plan.excite_start + 1.234
    motion.stop_at_time(t_stop)
    assert motion.end < plan.duration
    t = np.arange(0.0, motion.end + 0.5, 0.001)
    q, qd, qdd = motion.sample(t)
    assert not plan.limits.violations(t, q, qd, qdd)
    before, after = motion.sample(np.array([t_stop - 1e-9])), motion.sample(np.array([t_stop]))
    for x, y in zip(before, after):                         # q, qd, qdd continuous at the switch
        assert np.allclose(x, y, atol=1e-6)
    assert np.abs(qd[t >= motion.end]).max() < 1e-9
    assert np.abs(qd[t < t_stop]).max() > 1.0


def test_stop_requested_twice_or_during_the_final_stop_changes_nothing(plan):
    motion = Motion(plan, start_ns=0)
    motion.stop_at_time(plan.stop_start + 0.1)
    assert motion.stop is None and motion.end == plan.duration
    motion.stop_at_time(plan.excite_start + 2.0)
    end = motion.end
    motion.stop_at_time(plan.excite_start + 3.0)
    assert motion.end == end
