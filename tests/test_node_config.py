"""Node parameters are declared once, in the node's parameter model: config/<robot>/<node>.yaml
names only declared parameters, holds only values that differ from their defaults, and
validates."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / 'config'


ROBOTS = ('six_axis_3kg', 'scara_3dof')
NODE_FILES = {
    'six_axis_3kg': ['excitation_node.yaml', 'identification_node.yaml', 'ident_sim.yaml',
                     'torque_estimator.yaml',
                     # make demo-friction
                     'excitation_node_friction.yaml', 'identification_node_friction.yaml',
                     'ident_sim_friction.yaml'],
    'scara_3dof': ['excitation_node.yaml', 'identification_node.yaml', 'ident_sim.yaml',
                   'torque_estimator.yaml']}


def _model(file: str):
    """(node name, parameter model) of a parameter file."""
    from excitation_node.excitation_node import ExcitationNodeParameters
    from ident_node.identification_node import IdentificationNodeParameters
    from ident_sim.sim_node import SimNodeParameters
    from torque_estimator.torque_estimator_node import TorqueEstimatorNodeParameters
    node = file.removesuffix('.yaml').removesuffix('_friction')
    return node, {'excitation_node': ExcitationNodeParameters,
                  'identification_node': IdentificationNodeParameters,
                  'ident_sim': SimNodeParameters,
                  'torque_estimator': TorqueEstimatorNodeParameters}[node]


@pytest.mark.parametrize('robot,file', [(r, f) for r in ROBOTS for f in NODE_FILES[r]])
def test_config_holds_only_declared_parameters_that_differ_from_their_defaults(robot, file):
    node, model = _model(file)
    values = yaml.safe_load((CONFIG / robot / file).read_text())[f'/**/{node}']['ros__parameters']
    unknown = sorted(set(values) - set(model.model_fields))
    assert not unknown, f'{robot}/{file}: not parameters of {node}: {unknown}'
    same = sorted(k for k, v in values.items() if v == model.model_fields[k].default)
    assert not same, f'{robot}/{file}: values equal to the declared defaults: {same}'
    model(**values, urdf_file=str(REPO / 'urdf' / f'{robot}.urdf'))


def test_every_node_parameter_file_is_checked():
    for robot in ROBOTS:
        assert {p.name for p in (CONFIG / robot).glob('*.yaml')} == set(NODE_FILES[robot])
    # rviz/: the RViz configuration, checked by test_rviz_config.py
    assert {p.name for p in CONFIG.iterdir() if p.is_dir()} == {
        *ROBOTS, 'controllers', 'datasets', 'ethercat', 'rviz'}


def test_simulator_settings_from_launch_arguments_default_to_the_declared_defaults():
    """sim.launch.yaml passes payload_mass and payload_mounted from launch arguments (make
    demo-payload sets them): a launch argument overrides the parameter file, so its default is
    the declared default and config/<robot>/ident_sim.yaml does not set the parameter."""
    from ident_sim.sim_node import SimNodeParameters

    entries = yaml.safe_load((REPO / 'launch' / 'sim.launch.yaml').read_text())['launch']
    defaults = {e['arg']['name']: e['arg'].get('default') for e in entries if 'arg' in e}
    sim = next(e['node'] for e in entries if 'node' in e and e['node']['exec'] == 'sim_node')
    passed = {p['name']: p['value'][len('$(var '):-1] for p in sim['param']
              if 'name' in p and p['name'].startswith('payload')}
    assert set(passed) == {'payload_mass', 'payload_mounted'}
    for robot in ROBOTS:
        config = yaml.safe_load((CONFIG / robot / 'ident_sim.yaml').read_text())[
            '/**/ident_sim']['ros__parameters']
        for name, arg in passed.items():
            default = SimNodeParameters.model_fields[name].default
            assert yaml.safe_load(defaults[arg]) == default, name
            assert name not in config, \
                f'{robot}/ident_sim.yaml sets {name}, which the launch overrides'
