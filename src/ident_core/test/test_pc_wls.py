"""Physically consistent identification (pc-wls) and the standard parameters of every estimator.

Ground truth: closed-form pseudo-inertias of Pinocchio inertias, and a simulated 7-DOF arm
(seven_axis.urdf) whose true parameters are the URDF's perturbed by up to 20 %.
"""
import re
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ident_core.data.datasets import DataWarning
from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.estimation.results import read_result, result_file, result_links
from ident_core.model.inertial import (
    LinkInertial,
    collision_boxes,
    equivalent_box,
    link_equivalent_box,
    link_inertials,
    physically_consistent,
    pseudo_inertia,
)
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

SEVEN_AXIS = Path(__file__).resolve().parent / 'data' / 'seven_axis.urdf'


@pytest.fixture(scope='module')
def arm7():
    robot = load_robot(SEVEN_AXIS)
    truth = perturbed_parameters(robot, np.random.default_rng(0))
    train, _ = synthetic_dataset(robot, truth, 30, 200, seed=3, torque_noise=0.3)
    test, clean = synthetic_dataset(robot, truth, 20, 200, seed=4, torque_noise=0.3)
    test.effort = clean
    return robot, truth, train, test


@pytest.fixture(scope='module')
def fits(arm7):
    robot, _, train, _ = arm7
    return {e: identify(robot, [train], IdentificationConfig(estimator=e, rotor_inertia=True))
            for e in ('wls', 'pc-wls')}


def test_pseudo_inertia_of_a_rigid_body_is_its_second_moment_matrix():
    rng = np.random.default_rng(1)
    for _ in range(5):
        box = pin.Inertia.FromBox(rng.uniform(0.5, 5), *rng.uniform(0.05, 0.5, 3))
        inertia = pin.SE3.Random().act(box)                     # a box somewhere in the frame
        phi = inertia.toDynamicParameters()
        j = pseudo_inertia(phi)
        i_origin = inertia.matrix()[3:, 3:]
        np.testing.assert_allclose(j[:3, :3], 0.5 * np.trace(i_origin) * np.eye(3) - i_origin,
                                   atol=1e-12)
        np.testing.assert_allclose(j[:3, 3], phi[1:4])
        assert j[3, 3] == phi[0]
        assert physically_consistent(phi)
        phi_bad = phi.copy()
        phi_bad[9] = phi[4] + phi[6] + rng.uniform(0.1, 1)    # Izz > Ixx + Iyy: no such body
        assert not physically_consistent(phi_bad)
    assert not physically_consistent(-phi)


def test_link_inertials_give_back_the_urdf_bodies():
    robot = load_robot(SEVEN_AXIS)
    for link, i in zip(link_inertials(robot, robot.standard_parameters()), range(1, 8)):
        body = robot.model.inertias[i]
        assert link.link == f'link{i}' and link.joint == f'joint{i}'
        assert link.mass == pytest.approx(body.mass)
        np.testing.assert_allclose(link.com, body.lever, atol=1e-12)
        np.testing.assert_allclose(link.inertia, body.inertia, atol=1e-12)
        assert link.physically_consistent


def test_equivalent_box_of_a_uniform_box_is_that_box():
    """A uniform 0.1 × 0.2 × 0.4 m box of 3 kg, turned: its sides along its own axes (by
    ascending principal moment: the 0.4 m side, about whose axis the moment is smallest,
    first)."""
    sides = np.array([0.1, 0.2, 0.4])
    rotation = pin.exp3(np.array([0.3, -0.5, 0.7]))
    box = pin.Inertia.FromBox(3.0, *sides)
    inertia = rotation @ box.inertia @ rotation.T
    found, axes = equivalent_box(3.0, inertia)
    np.testing.assert_allclose(found, sides[::-1], rtol=1e-9)
    np.testing.assert_allclose(np.abs(axes.T @ rotation[:, ::-1]), np.eye(3), atol=1e-9)
    assert np.linalg.det(axes) == pytest.approx(1.0)
    body = LinkInertial('joint1', 'link1', 3.0, np.array([0.0, 0.1, 0.0]), inertia, True)
    found, _ = link_equivalent_box(body)
    np.testing.assert_allclose(found, sides[::-1], rtol=1e-9)


def test_no_equivalent_box_for_a_body_that_is_not_physical():
    inertia = np.diag([0.01, 0.02, 0.04])                   # Izz > Ixx + Iyy: no such body
    assert link_equivalent_box(LinkInertial('j', 'l', 1.0, np.zeros(3), inertia, False)) is None
    assert link_equivalent_box(LinkInertial('j', 'l', -0.5, np.zeros(3), np.eye(3), False)) \
        is None
    assert link_equivalent_box(LinkInertial('j', 'l', 0.0, np.zeros(3), np.eye(3), True)) is None


def test_result_links_give_back_the_identified_bodies(fits):
    model = fits['pc-wls']
    links = result_links(result_file(model, []).model_dump())
    assert [k.link for k in links] == [k.link for k in model.links()]
    for read, body in zip(links, model.links()):
        assert read.mass == body.mass and read.physically_consistent
        np.testing.assert_array_equal(read.com, body.com)
        np.testing.assert_array_equal(read.inertia, body.inertia)


def test_effort_units_of_revolute_and_prismatic_joints():
    scara = load_robot(Path(__file__).resolve().parents[3] / 'urdf' / 'scara_3dof.urdf')
    assert scara.effort_units() == ['N·m', 'N·m', 'N']
    assert load_robot(SEVEN_AXIS).effort_units() == ['N·m'] * 7


def test_collision_boxes_enclose_the_urdf_centres_of_mass():
    robot = load_robot(SEVEN_AXIS)
    for box, i in zip(collision_boxes(robot), range(1, 8)):
        com = robot.model.inertias[i].lever
        assert np.all(box[0] < com) and np.all(com < box[1])


def test_ols_and_wls_standard_parameters_reproduce_their_base_parameters(fits):
    model = fits['wls']
    np.testing.assert_allclose(model.base.project(model.standard), model.values,
                               rtol=1e-9, atol=1e-12)


def test_pc_wls_is_consistent_and_within_three_sigma_of_the_truth(arm7, fits):
    _, truth, _, _ = arm7
    wls, pc = fits['wls'], fits['pc-wls']
    assert not all(k.physically_consistent for k in wls.links())   # the constraint is needed
    assert all(k.physically_consistent for k in pc.links())
    np.testing.assert_allclose(pc.base.project(pc.standard), pc.values, rtol=1e-9, atol=1e-9)
    beta = pc.base.project(truth.vector(pc.config.spec.actuator_terms))
    assert np.mean(np.abs(pc.values - beta) <= 3 * pc.std) >= 0.95
    terms = pc.actuator_values()
    assert all(v is None or v >= -1e-9 for t in ('Ia', 'fv', 'fc') for v in terms[t])
    assert pc.stats['prior_weight'] in [float(k) for k in pc.stats['prior_weight_scores']]


def test_pc_wls_predicts_another_trajectory_as_well_as_wls(arm7, fits):
    _, _, _, test = arm7
    errors = {e: validate(m, test).metrics['relative_error_percent'] for e, m in fits.items()}
    assert errors['pc-wls'] <= 1.05 * errors['wls']


def test_geared_drives_keep_their_rotor_inertia_and_friction(arm7):
    # industrial drives: rotor inertias and friction two orders above the test arm's; pc-wls
    # has no prior on them, so it must agree with the truth as WLS does (a pull toward zero put
    # such rotor inertias 25 % low)
    robot, truth, _, _ = arm7
    n = robot.n
    geared = replace(truth, Ia=np.linspace(6.0, 0.25, n), fv=np.linspace(90.0, 3.5, n),
                     fc=np.linspace(40.0, 1.5, n), offset=np.linspace(-4.0, 0.5, n))
    train, _ = synthetic_dataset(robot, geared, 30, 200, seed=3, torque_noise=0.3)
    config = IdentificationConfig(rotor_inertia=True, prior_weight=1.0)
    model = identify(robot, [train], config)
    beta = model.base.project(geared.vector(config.spec.actuator_terms))
    actuator = [i for i, name in enumerate(model.base.names)
                if name.startswith(('Ia', 'fv', 'fc', 'offset'))]
    assert len(actuator) >= 3 * n
    z = np.abs(model.values - beta)[actuator] / model.std[actuator]
    assert z.max() <= 4.0, dict(zip(np.array(model.base.names)[actuator], z.round(1)))


def test_user_bounds_are_respected(arm7):
    robot, truth, train, _ = arm7
    urdf_masses = robot.standard_parameters()[0::10]
    config = IdentificationConfig(total_mass=18.0, mass_tolerance=0.1, com_in_collision_box=True,
                                  prior_weight=10.0)
    model = identify(robot, [train], config)
    masses = np.array([k.mass for k in model.links()])
    assert masses.sum() == pytest.approx(18.0, rel=1e-5)
    assert np.all(np.abs(masses / urdf_masses - 1) <= 0.1 + 1e-6)
    for k, box in zip(model.links(), collision_boxes(robot)):
        assert np.all(k.com >= box[0] - 1e-6) and np.all(k.com <= box[1] + 1e-6)
    assert model.stats['prior_weight'] == 10.0 and model.stats['prior_weight_scores'] == {}


def test_infeasible_bounds_are_refused_in_one_line(arm7):
    robot, _, train, _ = arm7
    with pytest.raises(InputError, match='admit no solution') as info:
        identify(robot, [train], IdentificationConfig(total_mass=1.0, mass_tolerance=0.1,
                                                      prior_weight=1.0))
    assert '\n' not in str(info.value)


def test_result_file_keeps_the_standard_parameters_and_links(tmp_path, fits):
    model = fits['pc-wls']
    path = result_file(model, []).write(tmp_path / 'RESULT.yaml')
    back = read_result(path)
    np.testing.assert_array_equal(back.standard, model.standard)
    assert [k.physically_consistent for k in back.links()] == [True] * 7
    assert back.stats['prior_weight'] == model.stats['prior_weight']


def _variant(tmp_path, name, edit):
    path = tmp_path / f'{name}.urdf'
    path.write_text(edit(SEVEN_AXIS.read_text()))
    return path


def _scaled(text: str, length: float, mass: float) -> str:
    """The arm scaled in size and mass (inertias by mass·length², efforts by mass·length)."""
    def numbers(values, factor):
        return ' '.join(repr(float(v) * factor) for v in values.split())

    text = re.sub(r'xyz="([^"]*)"', lambda m: f'xyz="{numbers(m[1], length)}"', text)
    text = re.sub(r'size="([^"]*)"', lambda m: f'size="{numbers(m[1], length)}"', text)
    text = re.sub(r'<mass value="([^"]*)"', lambda m: f'<mass value="{numbers(m[1], mass)}"',
                  text)
    text = re.sub(r'(i[xyz]{2})="([^"]*)"',
                  lambda m: f'{m[1]}="{numbers(m[2], mass * length ** 2)}"', text)
    return re.sub(r'effort="([^"]*)"',
                  lambda m: f'effort="{numbers(m[1], mass * length)}"', text)


def test_a_small_robot_keeps_its_true_parameters_feasible(tmp_path):
    """The LMI margin is relative to each body: a 1:10 arm of 18 g is identified as well as the
    full-size one (the relative errors of the two fits agree)."""
    robot = load_robot(_variant(tmp_path, 'small', lambda t: _scaled(t, 0.1, 1e-3)))
    truth = perturbed_parameters(robot, np.random.default_rng(0))
    torque, inertia = 1e-3 * 0.1, 1e-3 * 0.1 ** 2           # friction and rotors scaled too
    truth = replace(truth, Ia=truth.Ia * inertia, fv=truth.fv * torque, fc=truth.fc * torque,
                    offset=truth.offset * torque)
    train, _ = synthetic_dataset(robot, truth, 30, 200, seed=3, torque_noise=0.3e-4)
    model = identify(robot, [train], IdentificationConfig())
    assert all(k.physically_consistent for k in model.links())
    beta = model.base.project(truth.vector(model.config.spec.actuator_terms))
    assert np.mean(np.abs(model.values - beta) <= 3 * model.std) >= 0.95


def test_a_body_the_urdf_leaves_massless_is_free(tmp_path, arm7):
    _, truth, train, _ = arm7
    no_inertial = re.compile(r'(<link name="link3">\s*)<inertial>.*?</inertial>', re.S)
    robot = load_robot(_variant(tmp_path, 'massless', lambda t: no_inertial.sub(r'\1', t)))
    assert robot.model.inertias[3].mass == 0
    model = identify(robot, [train], IdentificationConfig(mass_tolerance=0.2, prior_weight=10.0))
    masses = np.array([k.mass for k in model.links()])
    urdf = robot.standard_parameters()[0::10]
    others = np.arange(7) != 2
    assert np.all(np.abs(masses[others] / urdf[others] - 1) <= 0.2 + 1e-6)
    assert all(k.physically_consistent for k in model.links())


def test_bounds_that_contradict_the_data_are_reported(arm7):
    robot, _, train, _ = arm7
    with pytest.warns(DataWarning, match='contradict the data'):
        identify(robot, [train], IdentificationConfig(total_mass=0.5, prior_weight=10.0))


def test_pc_wls_without_cvxpy_is_one_line(arm7, monkeypatch):
    robot, _, train, _ = arm7
    monkeypatch.setitem(sys.modules, 'cvxpy', None)
    with pytest.raises(InputError, match='pip install cvxpy clarabel'):
        identify(robot, [train], IdentificationConfig())


def test_a_result_is_refused_with_a_urdf_of_other_kinematics(tmp_path, fits):
    path = result_file(fits['wls'], []).write(tmp_path / 'RESULT.yaml')
    heavier = _variant(tmp_path, 'heavier', lambda t: t.replace('<mass value="3.9"/>',
                                                                '<mass value="4.5"/>'))
    with pytest.raises(InputError, match='urdf_sha256 differs.*--ignore-urdf-change'):
        read_result(path, heavier)
    np.testing.assert_array_equal(read_result(path, heavier, ignore_urdf_change=True).values,
                                  fits['wls'].values)
    moved = _variant(tmp_path, 'moved', lambda t: t.replace('<origin xyz="0 0 0.2" rpy=',
                                                            '<origin xyz="0 0 0.5" rpy=', 1))
    with pytest.raises(InputError, match='places or orients its joints differently'):
        read_result(path, moved, ignore_urdf_change=True)
