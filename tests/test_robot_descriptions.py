"""Robot descriptions: plain URDFs, their ros2_control xacros (EtherCAT), drive and controller
configuration, the hardware launch file, and the six-axis limits against the paper's excitation."""
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import xacro
import yaml

REPO = Path(__file__).resolve().parents[1]
URDF_DIR = REPO / 'urdf'
ROBOTS = ['six_axis_3kg', 'scara_3dof']
MOVING_JOINTS = {
    'six_axis_3kg': ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6'],
    'scara_3dof': ['joint1', 'joint2', 'joint3'],
}
LIMIT_ATTRS = ('lower', 'upper', 'velocity', 'effort')

# payload_identification_2017, Table 1 (docs/methods.md §6): per joint q0, a1, b1, ..., a6, b6.
TABLE1 = np.array([
    [-0.001, 0.092, -1.071, 0.062, 0.096, -0.273, 0.839, 0.011, -0.050, 0.411, -0.290, 0.326, -0.064],  # noqa: E501
    [-1.504, -0.027, -0.383, -0.051, -0.222, 0.387, -0.931, -0.375, -0.572, -0.434, 0.577, 0.461, 0.811],  # noqa: E501
    [-1.303, -0.026, 0.795, -0.122, -0.429, 0.246, 0.598, -0.096, 0.838, -0.236, -0.320, 0.076, -0.498],  # noqa: E501
    [-0.231, -0.250, -0.661, 0.111, 0.183, 0.492, -1.501, -0.514, -0.179, 0.107, 0.919, 0.838, 0.138],  # noqa: E501
    [-0.136, -0.173, 0.616, -0.129, 0.873, 0.430, -0.678, -0.133, 0.017, 0.239, -0.895, -0.328, 0.848],  # noqa: E501
    [-0.300, -0.667, -0.916, -0.044, 0.132, -1.158, -0.898, -0.467, -0.682, -0.234, -1.190, -0.351, 0.245],  # noqa: E501
])
TABLE1_PERIOD = 5.0  # s


def expand(robot, **mappings):
    return xacro.process_file(str(URDF_DIR / f'{robot}.urdf.xacro'), mappings=mappings).toxml()


@pytest.fixture(scope='module', params=ROBOTS)
def robot(request):
    name = request.param
    plain = ET.parse(URDF_DIR / f'{name}.urdf').getroot()
    xml = expand(name, master_id='3')
    return name, plain, ET.fromstring(xml), xml


def moving_joints(root):
    """(name, type, axis, limits) of every non-fixed joint, in document order."""
    out = []
    for j in root.findall('joint'):
        if j.get('type') == 'fixed':
            continue
        limit = j.find('limit')
        out.append((j.get('name'), j.get('type'), j.find('axis').get('xyz'),
                    tuple(float(limit.get(k)) for k in LIMIT_ATTRS)))
    return out


def canonical(elem):
    return (elem.tag, sorted(elem.attrib.items()), (elem.text or '').strip(),
            [canonical(c) for c in elem])


def load_controllers(name):
    path = REPO / 'config' / 'controllers' / f'{name}_controllers.yaml'
    return yaml.safe_load(path.read_text())


# ---- plain URDFs ----------------------------------------------------------------------------

@pytest.mark.parametrize('name', ROBOTS)
def test_plain_urdf_loads_with_collision_geometry(name):
    path = str(URDF_DIR / f'{name}.urdf')
    model = pin.buildModelFromUrdf(path)
    assert [model.names[i] for i in range(1, model.njoints)] == MOVING_JOINTS[name]
    links = ET.parse(path).getroot().findall('link')
    for kind in (pin.COLLISION, pin.VISUAL):
        geom = pin.buildGeomFromUrdf(model, path, kind)
        assert geom.ngeoms == len(links)
    for inertia in model.inertias[1:]:
        assert inertia.mass > 0
        e = np.linalg.eigvalsh(inertia.inertia)
        assert e[0] > 0 and e[0] + e[1] >= e[2] - 1e-12


def test_scara_kinematics_and_limits():
    path = str(URDF_DIR / 'scara_3dof.urdf')
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    assert model.nq == 3
    assert [j.shortname() for j in model.joints[1:]] == ['JointModelRZ', 'JointModelRZ',
                                                        'JointModelPrismaticUnaligned']
    np.testing.assert_allclose(model.lowerPositionLimit, [-2.6, -2.4, 0.0])
    np.testing.assert_allclose(model.upperPositionLimit, [2.6, 2.4, 0.15])
    np.testing.assert_allclose(model.velocityLimit, [3.0, 3.0, 0.5])
    np.testing.assert_allclose(model.effortLimit, [40.0, 20.0, 100.0])
    flange = model.getFrameId('flange')
    for q, expected_xy in [([0, 0, 0], [0.4, 0.0]), ([math.pi / 2, 0, 0], [0.0, 0.4]),
                           ([0, math.pi / 2, 0], [0.2, 0.2])]:
        pin.framesForwardKinematics(model, data, np.array(q, dtype=float))
        np.testing.assert_allclose(data.oMf[flange].translation[:2], expected_xy, atol=1e-12)
    z = []
    for d in (0.0, 0.15):
        pin.framesForwardKinematics(model, data, np.array([0.3, -0.5, d]))
        z.append(data.oMf[flange].translation[2])
    assert z[1] - z[0] == pytest.approx(-0.15)  # the quill moves down
    joints = ET.parse(path).getroot().findall('joint')
    assert [(j.get('name'), j.get('type')) for j in joints][-1] == ('joint4_locked', 'fixed')


def test_six_axis_limits():
    root = ET.parse(URDF_DIR / 'six_axis_3kg.urdf').getroot()
    lims = {n: limits for n, _, _, limits in moving_joints(root)}
    assert lims == {
        'joint1': (-2.9, 2.9, 3.5, 150.0), 'joint2': (-2.6, 1.2, 3.5, 150.0),
        'joint3': (-2.8, 1.6, 3.5, 80.0), 'joint4': (-3.0, 3.0, 5.0, 30.0),
        'joint5': (-2.2, 2.2, 5.0, 30.0), 'joint6': (-3.0, 3.0, 6.0, 15.0),
    }


def test_six_axis_limits_contain_table1_excitation():
    model = pin.buildModelFromUrdf(str(URDF_DIR / 'six_axis_3kg.urdf'))
    wf = 2 * math.pi / TABLE1_PERIOD
    t = np.linspace(0.0, TABLE1_PERIOD, 5001)
    order = np.arange(1, 7)
    q0, a, b = TABLE1[:, 0], TABLE1[:, 1::2], TABLE1[:, 2::2]
    s, c = np.sin(wf * np.outer(t, order)), np.cos(wf * np.outer(t, order))   # (T, 6 harmonics)
    q = q0 + s @ (a / (wf * order)).T - c @ (b / (wf * order)).T             # (T, 6 joints)
    qd = c @ a.T + s @ b.T
    qdd = -s @ (a * wf * order).T + c @ (b * wf * order).T
    # the closed forms are consistent with each other (periodic series, central differences)
    dt = t[1] - t[0]
    np.testing.assert_allclose(np.gradient(q, dt, axis=0)[1:-1], qd[1:-1], atol=1e-4)
    np.testing.assert_allclose(np.gradient(qd, dt, axis=0)[1:-1], qdd[1:-1], atol=1e-3)
    assert np.all(q.min(axis=0) >= model.lowerPositionLimit + 0.1)
    assert np.all(q.max(axis=0) <= model.upperPositionLimit - 0.1)
    assert np.all(np.abs(qd).max(axis=0) <= 0.95 * model.velocityLimit)
    # joint 2 comes closest to its limits: about 0.65 rad above the lower one, 80 % of its speed
    assert q[:, 1].min() == pytest.approx(-1.951, abs=2e-3)
    assert np.abs(qd[:, 1]).max() / model.velocityLimit[1] == pytest.approx(0.80, abs=0.01)


# ---- xacro with ros2_control ------------------------------------------------------------------

def test_xacro_keeps_the_plain_robot(robot):
    name, plain, expanded, xml = robot
    model = pin.buildModelFromXML(xml)
    plain_model = pin.buildModelFromUrdf(str(URDF_DIR / f'{name}.urdf'))
    assert list(model.names) == list(plain_model.names)
    assert moving_joints(expanded) == moving_joints(plain)
    assert [n for n, *_ in moving_joints(expanded)] == MOVING_JOINTS[name]
    for tag in ('link', 'joint'):
        assert [canonical(e) for e in expanded.findall(tag)] == \
            [canonical(e) for e in plain.findall(tag)]
    assert expanded.get('name') == plain.get('name') == name


def test_ros2_control_uses_ethercat_cia402_drives(robot):
    name, _, expanded, _ = robot
    systems = expanded.findall('ros2_control')
    assert len(systems) == 1
    system = systems[0]
    assert system.get('type') == 'system'
    hardware = system.find('hardware')
    assert hardware.findtext('plugin') == 'ethercat_driver/EthercatDriver'
    hw_params = {p.get('name'): p.text for p in hardware.findall('param')}
    assert hw_params == {'master_id': '3', 'control_frequency': '1000'}
    joints = system.findall('joint')
    assert [j.get('name') for j in joints] == MOVING_JOINTS[name]
    positions = []
    for j in joints:
        assert [c.get('name') for c in j.findall('command_interface')] == ['position']
        assert [s.get('name') for s in j.findall('state_interface')] == \
            ['position', 'velocity', 'effort']
        modules = j.findall('ec_module')
        assert len(modules) == 1
        assert modules[0].findtext('plugin') == 'ethercat_generic_plugins/EcCiA402Drive'
        params = {p.get('name'): p.text for p in modules[0].findall('param')}
        assert set(params) == {'alias', 'position', 'mode_of_operation', 'slave_config'}
        assert params['mode_of_operation'] == '8'
        config = Path(params['slave_config'])
        assert config.is_absolute() and config.is_file()
        assert config.resolve() == (REPO / 'config' / 'ethercat' / 'cia402_drive.yaml').resolve()
        positions.append((int(params['alias']), int(params['position'])))
    assert len(set(positions)) == len(positions)
    assert [p for _, p in positions] == list(range(len(joints)))


def test_xacro_args(tmp_path):
    xml = expand('scara_3dof', slave_config_dir=str(tmp_path),
                 joint3_slave_config=str(tmp_path / 'ball_screw.yaml'))
    root = ET.fromstring(xml)
    configs = [e.text for e in root.iter('param') if e.get('name') == 'slave_config']
    rotary, screw = str(tmp_path / 'cia402_drive.yaml'), str(tmp_path / 'ball_screw.yaml')
    assert configs == [rotary, rotary, screw]
    assert root.find('ros2_control/hardware/param').text == '0'  # master_id default
    for name in ROBOTS:
        with pytest.raises(xacro.XacroException, match='prefix must be empty'):
            expand(name, prefix='left_')


def test_macro_joint_list_prefix_and_bus_positions(tmp_path):
    (tmp_path / 'robot.xacro').write_text(f"""\
<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="{URDF_DIR / 'ethercat_cia402.ros2_control.xacro'}"/>
  <xacro:ethercat_cia402_system name="arm" joints="${{['a', 'b', 'c']}}" prefix="left_"
      slave_config="${{dict(a='/a.yaml', b='/b.yaml', c='/c.yaml')}}" first_position="4"
      mode_of_operation="9"/>
</robot>""")
    root = ET.fromstring(xacro.process_file(str(tmp_path / 'robot.xacro')).toxml())
    system = root.find('ros2_control')
    assert system.get('name') == 'left_arm'
    rows = [(j.get('name'), j.find('ec_module').get('name'),
             {p.get('name'): p.text for p in j.find('ec_module').findall('param')})
            for j in system.findall('joint')]
    assert [(n, m, p['position'], p['slave_config'], p['mode_of_operation'])
            for n, m, p in rows] == [
        ('left_a', 'left_a_drive', '4', '/a.yaml', '9'),
        ('left_b', 'left_b_drive', '5', '/b.yaml', '9'),
        ('left_c', 'left_c_drive', '6', '/c.yaml', '9'),
    ]


# ---- drive, controllers, launch ---------------------------------------------------------------

def test_cia402_drive_config():
    cfg = yaml.safe_load((REPO / 'config' / 'ethercat' / 'cia402_drive.yaml').read_text())
    assert {'vendor_id', 'product_id', 'assign_activate', 'rpdo', 'tpdo'} <= set(cfg)
    rx = {ch['index']: ch for pdo in cfg['rpdo'] for ch in pdo['channels']}
    tx = {ch['index']: ch for pdo in cfg['tpdo'] for ch in pdo['channels']}
    assert set(rx) == {0x6040, 0x607A, 0x6060}
    assert set(tx) == {0x6041, 0x6064, 0x606C, 0x6077, 0x6061}
    for ch in [*rx.values(), *tx.values()]:
        assert {'index', 'sub_index', 'type'} <= set(ch)
    assert rx[0x607A]['command_interface'] == 'position' and math.isnan(rx[0x607A]['default'])
    assert rx[0x6060]['default'] == 8
    assert [tx[i]['state_interface'] for i in (0x6064, 0x606C, 0x6077)] == \
        ['position', 'velocity', 'effort']
    # 20-bit encoder, 100:1 gear: count <-> rad both ways, torque per mille of 1.27 N·m rated
    rad_per_count = 2 * math.pi / (2 ** 20 * 100)
    assert tx[0x6064]['factor'] == pytest.approx(rad_per_count, rel=1e-12)
    assert tx[0x606C]['factor'] == pytest.approx(rad_per_count, rel=1e-12)
    assert rx[0x607A]['factor'] * tx[0x6064]['factor'] == pytest.approx(1.0, rel=1e-12)
    assert tx[0x6077]['factor'] == pytest.approx(0.127)
    # 1 ms interpolation period, as the 1 kHz control loop
    sdo = {(s['index'], s['sub_index']): s['value'] for s in cfg['sdo']}
    assert sdo[(0x60C2, 1)] * 10.0 ** sdo[(0x60C2, 2)] == pytest.approx(1e-3)


@pytest.mark.parametrize('name', ROBOTS)
def test_controllers_yaml(name):
    cfg = load_controllers(name)
    cm = cfg['controller_manager']['ros__parameters']
    assert cm['update_rate'] == 1000
    assert cm['joint_state_broadcaster']['type'] == 'joint_state_broadcaster/JointStateBroadcaster'
    assert cm['joint_trajectory_controller']['type'] == \
        'joint_trajectory_controller/JointTrajectoryController'
    jtc = cfg['joint_trajectory_controller']['ros__parameters']
    urdf_joints = [n for n, *_ in moving_joints(ET.parse(URDF_DIR / f'{name}.urdf').getroot())]
    assert jtc['joints'] == urdf_joints == MOVING_JOINTS[name]
    assert jtc['command_interfaces'] == ['position']
    assert jtc['state_interfaces'] == ['position', 'velocity']
    assert jtc['allow_partial_joints_goal'] is False
    assert jtc['interpolation_method'] == 'splines'
    assert jtc['allow_nonzero_velocity_at_trajectory_end'] is True
    assert jtc['action_monitor_rate'] > 0
    constraints = jtc['constraints']
    assert constraints['stopped_velocity_tolerance'] > 0 and constraints['goal_time'] > 0
    assert set(constraints) - {'stopped_velocity_tolerance', 'goal_time'} == set(urdf_joints)
    control_frequency = ET.fromstring(expand(name)).find(
        "ros2_control/hardware/param[@name='control_frequency']").text
    assert float(control_frequency) == cm['update_rate']


def test_hardware_launch_file():
    doc = yaml.safe_load((REPO / 'launch' / 'robot_hardware.launch.yaml').read_text())
    assert isinstance(doc['launch'], list) and doc['launch']
    actions = [(kind, body) for entry in doc['launch'] for kind, body in entry.items()]
    args = {b['name']: b['default'] for k, b in actions if k == 'arg'}
    assert args['robot'] == 'six_axis_3kg'
    nodes = [b for k, b in actions if k == 'node']
    by_exec = {}
    for n in nodes:
        by_exec.setdefault((n['pkg'], n['exec']), []).append(n)
    rsp, = by_exec[('robot_state_publisher', 'robot_state_publisher')]
    description, = rsp['param']
    assert description['name'] == 'robot_description' and description['type'] == 'str'
    assert description['value'].startswith(
        "$(command 'xacro $(find-pkg-share ident_bringup)/urdf/$(var robot).urdf.xacro")
    control, = by_exec[('controller_manager', 'ros2_control_node')]
    controllers_file = control['param'][0]['from']
    assert controllers_file == \
        '$(find-pkg-share ident_bringup)/config/controllers/$(var robot)_controllers.yaml'
    spawned = sorted(n['args'].split()[0] for n in by_exec[('controller_manager', 'spawner')])
    assert spawned == ['joint_state_broadcaster', 'joint_trajectory_controller']
    for n in by_exec[('controller_manager', 'spawner')]:
        assert n['args'].endswith(f' --param-file {controllers_file}')
    # the files the launch file names exist for every robot (share/ident_bringup = repository top)
    for name in ROBOTS:
        def resolve(s, name=name):
            return Path(s.replace('$(find-pkg-share ident_bringup)', str(REPO))
                        .replace('$(var robot)', name))
        assert resolve(controllers_file).is_file()
        assert resolve('$(find-pkg-share ident_bringup)/urdf/$(var robot).urdf.xacro').is_file()
