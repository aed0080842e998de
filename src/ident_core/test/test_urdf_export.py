"""``robot-ident export-urdf``: the identified robot as a URDF (issue 10 §3).

The round trip: identify the 7-axis test arm on synthetic data, export, reload the URDF with
Pinocchio and reproduce the identified model's torques on another trajectory.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import yaml
from helpers import REPO

from ident_core.cli import main
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.estimation.results import result_file
from ident_core.model.inertial import link_inertials
from ident_core.model.robot import load_robot
from ident_core.model.urdf_document import DRAKE_NS
from ident_core.model.urdf_export import export_urdf
from ident_core.sim.synthetic import fourier_trajectory, perturbed_parameters, synthetic_dataset

SEVEN_AXIS = REPO / 'src' / 'ident_core' / 'test' / 'data' / 'seven_axis.urdf'
ROUND_TRIP_TOLERANCE = 1e-9     # relative to the largest torque


@pytest.fixture(scope='module')
def arm():
    return load_robot(SEVEN_AXIS)


@pytest.fixture(scope='module')
def recording(arm):
    truth = perturbed_parameters(arm, np.random.default_rng(0))
    dataset, _ = synthetic_dataset(arm, truth, 20.0, 100.0, seed=1, torque_noise=0.05)
    return dataset


def _identified(arm, recording, tmp_path_factory, estimator):
    model = identify(arm, [recording], IdentificationConfig(estimator=estimator,
                                                            rotor_inertia=True))
    path = tmp_path_factory.mktemp(estimator) / 'RESULT.yaml'
    result_file(model, []).write(path)
    return model, path


@pytest.fixture(scope='module')
def consistent(arm, recording, tmp_path_factory):
    """pc-wls with rotor inertia, friction and offsets: physically consistent."""
    return _identified(arm, recording, tmp_path_factory, 'pc-wls')


@pytest.fixture(scope='module')
def inconsistent(arm, recording, tmp_path_factory):
    """Plain WLS: three bodies of these data are not physically consistent."""
    model, path = _identified(arm, recording, tmp_path_factory, 'wls')
    assert not all(k.physically_consistent for k in model.links())
    return model, path


def _export(capsys, *args):
    """Run ``robot-ident export-urdf``; exit code, stdout, stderr."""
    code = main(['export-urdf', *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _motion(robot, seed=7):
    """A trajectory other than the identification's."""
    t = np.arange(300) / 100.0
    return fourier_trajectory(robot, t, np.random.default_rng(seed), harmonics=4, period=3.0)


def _rnea(robot, q, qd, qdd):
    data = robot.model.createData()
    return np.array([pin.rnea(robot.model, data, *x) for x in zip(q, qd, qdd)])


def _relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_round_trip_reproduces_the_identified_torques(consistent, capsys, tmp_path):
    model, result = consistent
    out = tmp_path / 'robot_identified.urdf'
    code, stdout, err = _export(capsys, '--model', result, '--out', out)
    assert code == 0, err
    assert stdout.count('\n') == 1 and str(out) in stdout and '<inertial> of 7 bodies' in stdout
    reloaded = load_robot(out)
    assert reloaded.joint_names == model.robot.joint_names

    q, qd, qdd = _motion(model.robot)
    reg = model.regressor
    y = reg.compute(q, qd, qdd)
    rigid = y[:, :, :reg.n_inertial] @ model.standard[:reg.n_inertial]
    error = _relative(_rnea(reloaded, q, qd, qdd), rigid)
    print(f'rigid-body torques: max relative error {error:.2e}')
    assert error < ROUND_TRIP_TOLERANCE

    fv, fc, ia, offset = (model.standard[[reg.actuator_index(t, m) for m in range(7)]]
                          for t in ('fv', 'fc', 'Ia', 'offset'))
    np.testing.assert_allclose(reloaded.model.damping, fv, rtol=1e-15)
    np.testing.assert_allclose(reloaded.model.friction, fc, rtol=1e-15)
    tags_ia, comment_offset = _rotor_inertias(out), _comment_values(out, 'torque offset')
    np.testing.assert_allclose(tags_ia, ia, rtol=1e-14)
    np.testing.assert_allclose(comment_offset, offset, rtol=1e-15)

    # RNEA of the URDF + what the URDF's tags and comments say = the model's whole prediction
    full = (_rnea(reloaded, q, qd, qdd) + tags_ia * qdd + reloaded.model.damping * qd
            + reloaded.model.friction * np.sign(qd) + comment_offset)
    prediction = y[:, :, model.base.independent] @ model.values
    error = _relative(full, prediction)
    print(f'full prediction: max relative error {error:.2e}')
    assert error < ROUND_TRIP_TOLERANCE


def _rotor_inertias(urdf):
    """Joint-side rotor inertia per joint from Drake's transmission tags."""
    root = ET.parse(urdf).getroot()
    out = {}
    for trans in root.findall('transmission'):
        actuator = trans.find('actuator')
        rotor = float(actuator.find(f'{{{DRAKE_NS}}}rotor_inertia').get('value'))
        ratio = float(actuator.find(f'{{{DRAKE_NS}}}gear_ratio').get('value'))
        out[trans.find('joint').get('name')] = rotor * ratio ** 2
    return np.array([out[f'joint{i}'] for i in range(1, 8)])


def _comment_values(urdf, what):
    return np.array([float(v) for v in re.findall(rf'{what} = (\S+)', urdf.read_text())])


def test_an_inconsistent_model_is_refused_unless_forced(inconsistent, capsys, tmp_path):
    model, result = inconsistent
    out = tmp_path / 'robot_identified.urdf'
    code, stdout, err = _export(capsys, '--model', result, '--out', out)
    bad = [k.link for k in model.links() if not k.physically_consistent]
    assert code == 2 and stdout == '' and err.count('\n') == 1, err
    assert err.startswith(f'robot-ident: error: {result}: ') and '--force' in err
    assert all(f'body {link} ' in err for link in bad), err
    assert not out.exists()

    code, stdout, err = _export(capsys, '--model', result, '--out', out, '--force')
    assert code == 0 and err == '', err
    assert 'NOT physically consistent' in stdout
    text = out.read_text()
    assert text.count('NOT physically consistent, exported with force') == len(bad)
    reloaded = load_robot(out)
    masses = [reloaded.model.inertias[i].mass for i in range(1, 8)]
    np.testing.assert_allclose(masses, [k.mass for k in model.links()], rtol=1e-15)


def test_a_result_without_standard_parameters_is_refused(consistent, capsys, tmp_path):
    _, result = consistent
    doc = yaml.safe_load(result.read_text())
    del doc['standard_parameters']
    old = tmp_path / 'OLD.yaml'
    old.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, stdout, err = _export(capsys, '--model', old, '--out', tmp_path / 'x.urdf')
    assert code == 2 and stdout == '' and err.count('\n') == 1, err
    assert str(old) in err and 're-identify with this version' in err


def test_the_input_urdf_is_not_overwritten(consistent, capsys):
    model, result = consistent
    code, _, err = _export(capsys, '--model', result, '--out', model.robot.urdf)
    assert code == 2 and 'input URDF' in err


EXTRAS = '''
  <joint name="tool_joint" type="fixed">
    <parent link="flange"/><child link="tool"/><origin xyz="0 0 0.05" rpy="0 0.3 0"/>
  </joint>
  <link name="tool">
    <inertial><origin xyz="0.01 0 0.04"/><mass value="0.8"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial>
    <visual><geometry><cylinder radius="0.03" length="0.1"/></geometry></visual>
  </link>
  <joint name="camera_joint" type="fixed">
    <parent link="link4"/><child link="camera"/><origin xyz="0.05 0.1 0" rpy="0 0 1"/>
  </joint>
  <link name="camera">
    <!-- a camera on the forearm -->
    <inertial><origin xyz="0 0 0.01"/><mass value="0.3"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>
  </link>
  <transmission name="joint1_trans">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="joint1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="motor1"><mechanicalReduction>1</mechanicalReduction></actuator>
  </transmission>
  <ros2_control name="arm" type="system">
    <hardware><plugin>mock_components/GenericSystem</plugin></hardware>
    <joint name="joint1">
      <command_interface name="effort"/><state_interface name="position"/>
    </joint>
  </ros2_control>
  <gazebo reference="link1"><material>Gazebo/Orange</material></gazebo>
</robot>'''


@pytest.fixture()
def tooled(tmp_path):
    """The 7-axis arm with a flange mass, a tool fixed to the flange and a camera fixed to
    link4, an existing transmission for joint1, ros2_control and gazebo tags."""
    text = SEVEN_AXIS.read_text().replace('<link name="flange"/>', '''<link name="flange">
    <inertial><origin xyz="0 0 0.005"/><mass value="0.2"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="2e-4"/></inertial>
  </link>''').replace('</robot>', EXTRAS)
    path = tmp_path / 'tooled.urdf'
    path.write_text(text)
    return load_robot(path)


def _truth_export(robot, path, gear=None, truth=None):
    """Export the perturbed URDF parameters (physically consistent) with the core function."""
    truth = truth or perturbed_parameters(robot, np.random.default_rng(3))
    links = link_inertials(robot, truth.inertial)
    actuators = {t: getattr(truth, t) for t in ('Ia', 'fv', 'fc', 'offset')}
    gear = np.eye(robot.n) if gear is None else gear
    return truth, links, export_urdf(path, robot, links, actuators, gear, source='truth')


def test_links_fixed_to_a_body_lose_their_inertial(tooled, tmp_path):
    out = tmp_path / 'out.urdf'
    truth, links, report = _truth_export(tooled, out)
    assert sorted(report.cleared) == ['camera', 'flange', 'tool']
    root = ET.parse(out).getroot()
    inertial = {e.get('name') for e in root.findall('link') if e.find('inertial') is not None}
    assert inertial == {'link0'} | {f'link{i}' for i in range(1, 8)}
    reloaded = load_robot(out)
    masses = [reloaded.model.inertias[i].mass for i in range(1, 8)]
    assert sum(masses) == pytest.approx(sum(k.mass for k in links), rel=1e-15)
    assert sum(masses) == pytest.approx(sum(truth.inertial[0::10]), rel=1e-15)
    np.testing.assert_allclose(reloaded.standard_parameters(), truth.inertial,
                               rtol=1e-12, atol=1e-15)


def test_the_rest_of_the_urdf_is_kept_and_a_re_export_is_the_same(tooled, tmp_path):
    out = tmp_path / 'out.urdf'
    truth, _, _ = _truth_export(tooled, out)
    text = out.read_text()
    for kept in ('<!-- a camera on the forearm -->', '18 kg), for the tests of ident_core',
                 '<plugin>mock_components/GenericSystem</plugin>', 'Gazebo/Orange',
                 '<cylinder radius="0.03" length="0.1" />', 'xmlns:drake="http://drake.mit.edu"'):
        assert kept in text, kept
    root = ET.parse(out).getroot()
    transmissions = root.findall('transmission')
    assert [t.get('name') for t in transmissions].count('joint1_trans') == 1
    assert len(transmissions) == 7
    assert root.find('ros2_control').find('transmission') is None
    # exporting again from the exported URDF gives the same file
    again = tmp_path / 'again.urdf'
    _truth_export(load_robot(out), again, truth=truth)
    assert again.read_text() == text


def test_gear_ratios_and_coupling(arm, tmp_path):
    ratio = np.array([100.0, 100.0, 80.0, 80.0, 60.0, 50.0, 50.0])
    gear = np.diag(ratio)
    gear[6, 5] = 50.0               # motor 7 turns with joint 6 (a coupled wrist)
    out = tmp_path / 'out.urdf'
    truth, _, _ = _truth_export(arm, out, gear)
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.parse(out, parser=parser).getroot()
    for i, trans in enumerate(root.findall('transmission')):
        actuator = trans.find('actuator')
        assert float(actuator.find('mechanicalReduction').text) == ratio[i]
        assert float(actuator.find(f'{{{DRAKE_NS}}}gear_ratio').get('value')) == ratio[i]
        rotor = float(actuator.find(f'{{{DRAKE_NS}}}rotor_inertia').get('value'))
        assert rotor * ratio[i] ** 2 == pytest.approx(truth.Ia[i], rel=1e-15)
    coupled = [j.get('name') for j in root.findall('joint')
               if any('is coupled' in (c.text or '') for c in j if c.tag is ET.Comment)]
    assert coupled == ['joint7']
    assert 'joint6: 1.0, joint7: 1.0' in out.read_text()
    np.testing.assert_allclose(load_robot(out).model.damping, truth.fv, rtol=1e-15)
