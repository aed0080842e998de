"""Message conversions of ident_ros without DDS."""
import math
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Time

from ident_core.errors import InputError
from ident_core.excitation.fourier import load_trajectory
from ident_ros.conversions import parameters_msg, trajectory_from_msg, trajectory_to_msg

REPO = Path(__file__).resolve().parents[3]


def test_excitation_trajectory_round_trip():
    trajectory = load_trajectory(REPO / 'config/excitation/six_axis_table1.yaml')
    msg = trajectory_to_msg(trajectory, Time(sec=12, nanosec=5), periods=3)
    assert msg.harmonics == 6 and msg.periods == 3 and msg.header.stamp.sec == 12
    assert msg.a[6 * 1 + 2] == trajectory.a[1, 2]          # row-major joints x harmonics
    back = trajectory_from_msg(msg)
    assert back.joint_names == trajectory.joint_names
    assert np.array_equal(back.a, trajectory.a) and np.array_equal(back.b, trajectory.b)
    assert back.period == pytest.approx(5.0) and back.periods == 3


def test_inconsistent_message_is_refused():
    trajectory = load_trajectory(REPO / 'config/excitation/six_axis_table1.yaml')
    msg = trajectory_to_msg(trajectory, Time(), periods=1)
    msg.a = msg.a[:-1]
    with pytest.raises(InputError, match='ExcitationTrajectory message'):
        trajectory_from_msg(msg)


def test_parameters_message_from_result():
    result = {
        'robot': {'name': 'arm', 'joints': ['j1', 'j2']},
        'config': {'estimator': 'wls'},
        'base_parameters': [{'name': 'Izz1 + Ia1', 'value': 0.5, 'std': 0.01,
                             'rel_std_percent': 2.0}],
        'actuators': {'joints': ['j1', 'j2'], 'fv': [1.0, 2.0], 'fc': [0.5, None],
                      'offset': [0.1, 0.2], 'Ia': [None, 0.03]},
        'identification': {'condition_number': 12.5, 'samples': 100, 'residual_rms': [1, 2],
                           'relative_error_percent': 3.0},
        'validation': [{'rmse': [0.1, 0.2], 'relative_error_percent': 1.5}],
    }
    msg = parameters_msg(result, Time(sec=1))
    assert msg.robot_name == 'arm' and msg.base_parameter_names == ['Izz1 + Ia1']
    assert msg.coulomb_friction[0] == 0.5 and math.isnan(msg.coulomb_friction[1])
    assert math.isnan(msg.rotor_inertia[0]) and msg.rotor_inertia[1] == 0.03
    assert list(msg.rmse) == [0.1, 0.2] and msg.relative_error_percent == 1.5
