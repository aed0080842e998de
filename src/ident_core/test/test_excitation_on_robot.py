"""An excitation optimised for the robot that runs it (``excitation.on_robot``, the excitation
node's ``~/optimize`` without DDS): the node's limits win over the config's, the output is named
after the request, and a trajectory beyond the node's limits is refused before it is written."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.errors import ExcitationError, InputError
from ident_core.excitation.config import ExcitationConfig, load_excitation_config
from ident_core.excitation.fourier import load_trajectory
from ident_core.excitation.on_robot import (
    default_trajectory_path,
    optimize_within_limits,
    optimizer_settings,
    trajectory_name,
)
from ident_core.model.robot import load_robot
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import period_violations

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf/six_axis_3kg.urdf'
#: The excitation node's parameters on the simulated arm: its acceleration limits [rad/s²]
#: and its default limit_margin.
NODE = yaml.safe_load((REPO / 'config/six_axis_3kg/excitation_node.yaml').read_text())
ACCELERATION = NODE['/**/excitation_node']['ros__parameters']['acceleration_limits']
MARGIN = 0.02
# Deliberately looser than the node (acceleration 50 rad/s², margin 0.01): the node's own
# limits must win. Two random candidates: the quickest optimisation there is.
TINY = {'harmonics': 2, 'period': 4.0, 'periods': 1, 'samples': 20,
        'limits': {'margin': 0.01, 'acceleration': 50.0},
        'optimizer': {'random': {'candidates': 2}}}


def test_optimizer_settings_take_the_node_limits_and_the_request_fields(tmp_path):
    path = tmp_path / 'cfg.yaml'
    path.write_text(yaml.safe_dump(TINY))
    config = load_excitation_config(path)
    out = optimizer_settings(config, np.array(ACCELERATION), MARGIN)
    assert out.limits.acceleration == ACCELERATION
    assert out.limits.margin == MARGIN                          # the node's, larger than 0.01
    assert (out.harmonics, out.period, out.objective) == (2, 4.0, 'cond')
    wide = config.updated(limits=config.limits.updated(margin=0.05))
    assert optimizer_settings(wide, [10.0] * 6, MARGIN).limits.margin == 0.05
    changed = optimizer_settings(config, ACCELERATION, MARGIN, 'dopt', 3, 6.0)
    assert (changed.harmonics, changed.period, changed.objective) == (3, 6.0, 'dopt')
    assert config.harmonics == 2                                # the loaded config is unchanged
    with pytest.raises(InputError, match='objective'):
        optimizer_settings(config, ACCELERATION, MARGIN, objective='fast')
    with pytest.raises(InputError, match='locked_joints'):
        optimizer_settings(ExcitationConfig(locked_joints={'joint6': 0.0}), ACCELERATION,
                           MARGIN)


def test_period_violations_sees_a_trajectory_beyond_the_node_limits():
    robot = load_robot(URDF)
    trajectory = load_trajectory(REPO / 'config/six_axis_3kg/excitation/identification.yaml')
    limits = JointLimits.from_robot(robot, ACCELERATION).with_margin(MARGIN)
    assert period_violations(trajectory, limits) == []
    tight = JointLimits.from_robot(robot, 1.0)
    assert any('acceleration' in v for v in period_violations(trajectory, tight))


def test_names_of_optimised_trajectories():
    assert trajectory_name('six axis/ga+local.v2_x-1') == 'six-axis-ga-local-v2_x-1'
    assert default_trajectory_path('out', URDF, 'ga+local', 'cond', 3) \
        == Path('out/six_axis_3kg_ga-local_cond_seed3.yaml')


@pytest.fixture(scope='module')
def settings():
    """The tiny settings as the node runs them, and the node's limits."""
    robot = load_robot(URDF)
    config = optimizer_settings(ExcitationConfig(**TINY), ACCELERATION, MARGIN)
    return robot, config, JointLimits.from_robot(robot, ACCELERATION).with_margin(MARGIN)


def test_an_optimised_trajectory_within_the_node_limits_is_written(settings, tmp_path):
    robot, config, limits = settings
    path = tmp_path / 'out' / 'arm_random_cond_seed1.yaml'
    result, written = optimize_within_limits(robot, config, limits, 'random', 1, 30.0, path)
    assert written == path and path.is_file()
    trajectory = load_trajectory(path)
    assert trajectory.name == 'arm_random_cond_seed1' == result.trajectory.name
    assert period_violations(trajectory, limits) == []


def test_a_trajectory_beyond_the_node_limits_is_refused_unwritten(settings, tmp_path):
    robot, config, _ = settings
    tight = JointLimits.from_robot(robot, 0.01)          # rad/s²: nothing that moves passes
    path = tmp_path / 'refused.yaml'
    with pytest.raises(ExcitationError, match='exceeds the limits of this node'):
        optimize_within_limits(robot, config, tight, 'random', 1, 30.0, path)
    assert not path.exists()
