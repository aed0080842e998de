"""The simulator node's parameter handling without DDS."""
from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.errors import InputError
from ident_sim.sim_node import SimNodeParameters

REPO = Path(__file__).resolve().parents[3]
N = 6


def _params(**changes) -> dict:
    p = yaml.safe_load((REPO / 'config/six_axis_3kg/ident_sim.yaml').read_text())['/**/ident_sim'][
        'ros__parameters']
    p['urdf_file'] = str(REPO / 'urdf/six_axis_3kg.urdf')
    p.update(changes)
    return p


def _config(p: dict, n: int):
    return SimNodeParameters(**p).hardware(n)


def test_config_file_gives_per_joint_settings():
    cfg = _config(_params(), N)
    assert np.allclose(cfg.rotor_inertia, [0.2, 0.2, 0.1, 0.02, 0.02, 0.01])
    assert np.allclose(cfg.kp, 2500.0) and cfg.kp.shape == (6,)
    assert cfg.dt == pytest.approx(1e-3)
    assert cfg.payload is None and cfg.friction.model == 'coulomb-viscous'


def test_payload_and_stribeck_options():
    cfg = _config(_params(payload_mass=1.5, friction_model='improved-stribeck'), N)
    assert cfg.payload.mass == 1.5 and cfg.payload.frame == 'flange'
    assert np.allclose(cfg.friction.fs, [4.5, 4.5, 3.0, 1.5, 1.5, 0.75])


@pytest.mark.parametrize('name, value, words', [
    ('coulomb', [1.0, 2.0], 'coulomb'),
    ('robot_description_topic', '', 'urdf_file and robot_description_topic'),
    ('rate_hz', 0.0, 'rate_hz'),
    ('friction_model', 'lugre', 'lugre'),
])
def test_bad_parameter_is_named(name, value, words):
    # urdf_file is optional (the robot then comes from robot_description_topic): the case
    # without a robot source empties both
    with pytest.raises(InputError, match=words):
        _config(_params(**{name: value}, **({'urdf_file': ''} if name == 'robot_description_topic'
                                           else {})), N)
