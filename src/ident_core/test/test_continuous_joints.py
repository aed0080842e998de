"""Continuous joints (issue 28 §5): one angle per joint outside Pinocchio, ``(cos θ, sin θ)``
inside. Ground truth: the same arm with revolute joints, whose Pinocchio configuration is the
angle itself; every quantity of the continuous arm must equal its twin's at the same angles.
Also the joints that are refused (mimic, planar), wrapped angles in a log and in a stream, and
the limits of a joint that has none."""
import math
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from ident_core.data.datasets import Dataset
from ident_core.errors import InputError
from ident_core.excitation.config import config_from_dict
from ident_core.excitation.constraints import Constraints
from ident_core.model.inertial import link_inertials
from ident_core.model.regressor import Regressor, RegressorSpec
from ident_core.model.robot import (
    configuration,
    joint_angles,
    load_robot,
    position_difference,
    wrapped_angle,
)
from ident_core.model.transmission import Transmission
from ident_core.model.urdf_export import identified_urdf
from ident_core.motion.limits import JointLimits
from ident_core.motion.watchdog import MotionWatchdog, tracking_error
from ident_core.sim.synthetic import perturbed_parameters
from ident_core.torque_estimation.config import TorqueEstimatorConfig
from ident_core.torque_estimation.dynamics import (
    dynamic_model_from_urdf,
    forward_dynamics,
    inverse_dynamics,
    inverse_dynamics_derivatives,
    mass_matrix,
    momentum_bias,
)
from ident_core.torque_estimation.estimator import TorqueEstimator

EXACT = 1e-12           # relative: the same arithmetic up to cos/sin rounding
ENDLESS = [True, False, True]


def wrist_urdf(path, continuous: bool, extra: str = '') -> str:
    """Three joints: a base roll (z), a pitch (y) and a wrist roll (x off the axes), the rolls
    ``continuous`` or revolute in ±4 rad; ``extra`` is added inside ``<robot>``."""
    axes = ['0 0 1', '0 1 0', '0.6 0 0.8']
    body = ['<link name="base"/>']
    parent = 'base'
    for i, axis in enumerate(axes, start=1):
        kind = 'continuous' if continuous and ENDLESS[i - 1] else 'revolute'
        bounds = '' if kind == 'continuous' else 'lower="-4" upper="4" '
        body.append(f'<joint name="j{i}" type="{kind}"><parent link="{parent}"/>'
                    f'<child link="l{i}"/><origin xyz="0 0.05 0.2"/><axis xyz="{axis}"/>'
                    f'<limit {bounds}velocity="3" effort="50"/></joint>'
                    f'<link name="l{i}"><inertial><origin xyz="0.1 -0.03 0.05"/>'
                    f'<mass value="{2.0 / i}"/><inertia ixx="0.02" ixy="0.001" ixz="0" '
                    f'iyy="0.025" iyz="0.002" izz="0.015"/></inertial></link>')
        parent = f'l{i}'
    path.write_text(f'<robot name="wrist">{"".join(body)}{extra}</robot>')
    return path


@pytest.fixture(scope='module')
def twins(tmp_path_factory):
    folder = tmp_path_factory.mktemp('twins')
    return (load_robot(wrist_urdf(folder / 'continuous.urdf', True)),
            load_robot(wrist_urdf(folder / 'revolute.urdf', False)))


@pytest.fixture(scope='module')
def motion():
    """Angles over several turns (the continuous joints' winding must not matter)."""
    rng = np.random.default_rng(2)
    return (rng.uniform(-9, 9, size=(25, 3)), rng.uniform(-2, 2, size=(25, 3)),
            rng.uniform(-5, 5, size=(25, 3)))


def test_the_model_of_continuous_joints(twins):
    endless, plain = twins
    assert endless.continuous.tolist() == ENDLESS and not plain.continuous.any()
    assert (endless.model.nq, endless.model.nv, endless.n) == (5, 3, 3)
    np.testing.assert_array_equal(endless.lower, [-np.inf, -4, -np.inf])
    np.testing.assert_array_equal(endless.upper, [np.inf, 4, np.inf])
    np.testing.assert_allclose(endless.finite_limits()[0], [-np.pi, -4, -np.pi])
    assert endless.effort_units() == ['N·m'] * 3 and not endless.prismatic.any()
    # the kinematic tree alone: the twins share it
    assert endless.kinematics_sha256() == plain.kinematics_sha256()


def test_configuration_and_angles(twins, motion):
    model = twins[0].model
    q = motion[0]
    x = configuration(model, q)
    assert x.shape == (25, 5)
    np.testing.assert_array_equal(configuration(model, np.zeros(3)), pin.neutral(model))
    np.testing.assert_allclose(x[:, [0, 1]], np.stack([np.cos(q[:, 0]), np.sin(q[:, 0])], 1))
    np.testing.assert_array_equal(x[:, 2], q[:, 1])
    back = joint_angles(model, x)
    np.testing.assert_allclose(back, np.where(ENDLESS, wrapped_angle(q), q), atol=1e-12)
    assert np.all(np.abs(back[:, [0, 2]]) <= np.pi)
    for xk in x:            # a valid configuration of Pinocchio's (unit cos/sin pairs)
        assert pin.isNormalized(model, xk)
    plain = twins[1].model
    assert configuration(plain, q) is q             # nothing to convert
    d = position_difference(model, [3.0, 3.0, -3.0], [-3.0, -3.0, 3.0])
    np.testing.assert_allclose(d, [6 - 2 * np.pi, 6.0, 2 * np.pi - 6])


def test_the_regressor_and_the_dynamics_equal_the_revolute_twins(twins, motion):
    endless, plain = twins
    q, qd, qdd = motion
    spec = RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True)
    expected = Regressor(plain, spec).compute(q, qd, qdd)
    np.testing.assert_allclose(Regressor(endless, spec).compute(q, qd, qdd), expected,
                               rtol=EXACT, atol=EXACT * np.abs(expected).max())
    models = [dynamic_model_from_urdf(r) for r in twins]
    datas = [dm.create_data() for dm in models]
    for k in range(0, 25, 6):
        for f, args in ((inverse_dynamics, (q[k], qd[k], qdd[k])),
                        (forward_dynamics, (q[k], qd[k], qdd[k])),
                        (mass_matrix, (q[k],)), (momentum_bias, (q[k], qd[k]))):
            a, b = (np.array(f(dm, data, *args)) for dm, data in zip(models, datas))
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f.__name__)
        for a, b in zip(*(inverse_dynamics_derivatives(dm, data, q[k], qd[k], qdd[k])
                          for dm, data in zip(models, datas))):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_excitation_limits_of_a_joint_without_position_limits(twins, motion):
    endless, plain = twins
    limits = JointLimits.from_robot(endless, 10.0)          # the excitation node's
    np.testing.assert_array_equal(limits.lower, [-np.inf, -4, -np.inf])
    margin = limits.with_margin(0.1)
    np.testing.assert_allclose(margin.lower, [-np.inf, -3.2, -np.inf])
    np.testing.assert_allclose(margin.velocity, [2.7] * 3)
    q, qd, qdd = motion
    t = np.arange(25) * 0.01
    problems = margin.violations(t, q, np.zeros_like(qd), np.zeros_like(qdd))
    assert problems and all(p.startswith('joint j2: position') for p in problems)
    assert np.isinf(margin.margins(q, qd, qdd)['position'][[0, 2]]).all()
    # a half-override is refused: both limits or none
    with pytest.raises(InputError, match='joint j1: position limits'):
        JointLimits.from_robot(endless, 10.0, overrides={'j1': {'lower': -1.0}})
    # the optimisation's range: limits.continuous_range, or limits.joints
    doc = {'limits': {'margin': 0.05, 'acceleration': 10.0, 'torque': True,
                      'continuous_range': 2.0, 'joints': {'j3': {'upper': 1.0}}}}
    constraints = Constraints(endless, config_from_dict(doc, 'test.yaml'))
    np.testing.assert_allclose(constraints.limits.lower, [-1.8, -3.6, -1.85])
    np.testing.assert_allclose(constraints.limits.upper, [1.8, 3.6, 0.85])
    expected = Constraints(plain, config_from_dict(doc, 'test.yaml')).torques(q, qd, qdd)
    np.testing.assert_allclose(constraints.torques(q, qd, qdd), expected, rtol=EXACT,
                               atol=EXACT * np.abs(expected).max())


def test_a_locked_continuous_joint(twins, tmp_path):
    endless = load_robot(twins[0].urdf, {'j3': 2.5})
    plain = load_robot(twins[1].urdf, {'j3': 2.5})
    assert endless.joint_names == ['j1', 'j2'] and endless.model.nq == 3
    spec = RegressorSpec(friction='none')
    q = np.array([[0.4, -0.7], [5.0, 1.0]])
    a, b = (Regressor(r, spec).compute(q, q, q) for r in (endless, plain))
    np.testing.assert_allclose(a, b, rtol=EXACT, atol=EXACT * np.abs(b).max())


def test_mimic_and_planar_joints_are_refused_in_one_line(tmp_path):
    finger = ('<joint name="finger" type="prismatic"><parent link="l3"/><child link="f"/>'
              '<axis xyz="0 1 0"/><limit lower="0" upper="0.04" velocity="0.2" effort="20"/>'
              '<mimic joint="j2"/></joint><link name="f"><inertial><mass value="0.1"/>'
              '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/>'
              '</inertial></link>')
    path = wrist_urdf(tmp_path / 'mimic.urdf', True, finger)
    with pytest.raises(InputError) as info:
        load_robot(path)
    message = str(info.value)
    assert message.startswith(f'{path}: joint finger mimics j2') and '\n' not in message
    assert 'type="fixed"' in message and 'locked_joints' in message
    assert load_robot(path, {'finger': 0.01}).joint_names == ['j1', 'j2', 'j3']
    planar = wrist_urdf(tmp_path / 'planar.urdf', True).read_text().replace(
        'name="j2" type="revolute"', 'name="j2" type="planar"')
    (tmp_path / 'planar.urdf').write_text(planar)
    with pytest.raises(InputError, match='joint j2 is a JointModelPlanar; only 1-DOF revolute, '
                                         'continuous and prismatic joints are supported'):
        load_robot(tmp_path / 'planar.urdf')


def test_wrapped_angles_in_a_log_are_unwrapped(twins, motion):
    endless = twins[0]
    t = np.arange(400) * 0.01
    q = np.stack([1.5 * t, np.sin(t), 3.0 - 2.0 * t], axis=1)         # j1, j3: several turns
    logged = np.where(ENDLESS, wrapped_angle(q), q)
    effort = np.ones_like(q)
    names = ['j3', 'j1', 'j2']                                          # another column order
    d = Dataset('log.npz', names, t, logged[:, [2, 0, 1]], None, effort, Transmission.identity(3))
    aligned = d.aligned(endless)
    unwrapped = aligned.position - (aligned.position[0] - q[0])        # unwrap starts at row 0
    np.testing.assert_allclose(unwrapped, q, atol=1e-12)
    np.testing.assert_allclose(aligned.position[0], logged[0])
    # nothing to unwrap: the positions are not copied (long logs)
    plain = Dataset('log.npz', ['j1', 'j2', 'j3'], t, q, None, effort, Transmission.identity(3))
    assert plain.aligned(twins[1]).position is q
    assert Dataset('log.npz', ['j1', 'j2', 'j3'], t[:50], q[:50], None, effort[:50],
                   Transmission.identity(3)).aligned(endless).position is not None


def test_wrapped_angles_in_a_stream_are_unwrapped(twins):
    """The torque estimator takes joint_states one by one: a wrapped angle is the same motion."""
    dm = dynamic_model_from_urdf(twins[0])
    t = np.arange(300) * 0.002
    q = np.stack([3.0 + 4.0 * t, 0.3 * np.sin(4 * t), -3.0 - 3.0 * t], axis=1)
    qd = np.stack([np.full_like(t, 4.0), 1.2 * np.cos(4 * t), np.full_like(t, -3.0)], axis=1)
    qdd = np.stack([0 * t, -4.8 * np.sin(4 * t), 0 * t], axis=1)
    data = dm.create_data()
    effort = np.array([inverse_dynamics(dm, data, *x) for x in zip(q, qd, qdd)]) \
        + 0.01 * np.random.default_rng(0).standard_normal(q.shape)
    estimates = []
    for positions in (q, np.where(ENDLESS, wrapped_angle(q), q)):
        estimator = TorqueEstimator(dm, TorqueEstimatorConfig(method='kalman'))
        estimates.append([estimator.step(tk, qk, ek) for tk, qk, ek in zip(t, positions, effort)])
    for a, b in zip(*estimates):
        np.testing.assert_allclose(a.filtered, b.filtered, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(a.external, b.external, rtol=1e-9, atol=1e-9)


def test_tracking_error_of_a_wrapped_angle():
    continuous = np.array([True, False])
    measured, commanded = np.array([-3.1, 3.1]), np.array([3.1, -3.1])
    np.testing.assert_allclose(tracking_error(measured, commanded), [6.2, 6.2])
    np.testing.assert_allclose(tracking_error(measured, commanded, continuous),
                               [2 * math.pi - 6.2, 6.2])
    watchdog = MotionWatchdog(['a', 'b'], 1.0, np.array([0.5, 0.5]), continuous=continuous)
    assert watchdog.fault(0.0, measured, np.array([3.1, 3.1])) == ''
    assert watchdog.fault(0.0, measured, commanded).startswith('b is 6.2 from its command')


def test_urdf_export_keeps_continuous_joints(twins, motion, tmp_path):
    endless = twins[0]
    truth = perturbed_parameters(endless, np.random.default_rng(4))
    actuators = {'Ia': truth.Ia, 'fv': truth.fv, 'fc': truth.fc, 'offset': truth.offset}
    text, _ = identified_urdf(endless, link_inertials(endless, truth.inertial), actuators,
                              np.eye(3))
    path = tmp_path / 'identified.urdf'
    path.write_text(text)
    kinds = {j.get('name'): j.get('type') for j in ET.parse(path).getroot().findall('joint')}
    assert kinds == {'j1': 'continuous', 'j2': 'revolute', 'j3': 'continuous'}
    reloaded = load_robot(path)
    assert reloaded.continuous.tolist() == ENDLESS
    q, qd, qdd = motion
    y = Regressor(endless, RegressorSpec(friction='none')).compute(q, qd, qdd)
    expected = y @ truth.inertial
    got = Regressor(reloaded, RegressorSpec(friction='none')).compute(q, qd, qdd) \
        @ reloaded.standard_parameters()
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
