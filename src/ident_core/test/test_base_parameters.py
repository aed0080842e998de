"""Base parameters by QR (docs/methods.md §2): closed-form cases and structural properties."""
import numpy as np
import pytest
from helpers import ARM6, one_joint_urdf

from ident_core.model.base_parameters import compute_base_parameters, random_samples
from ident_core.model.regressor import Regressor, RegressorSpec
from ident_core.model.robot import load_robot


def test_vertical_axis_joint_closed_form(tmp_path):
    # tau = (Izz + m(cx²+cy²) about the axis … ) qdd: for a joint about the gravity axis only the
    # inertia about z (about the joint origin: Izz1) and the rotor inertia act, and only as a sum.
    robot = load_robot(one_joint_urdf(tmp_path, axis='0 0 1'))
    spec = RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True)
    base = compute_base_parameters(Regressor(robot, spec))
    assert base.names == ['Izz1 + Ia1', 'fv1', 'fc1', 'offset1']


def test_horizontal_axis_joint_closed_form(tmp_path):
    # A pendulum about the x axis: inertia about x plus gravity moments my, mz.
    robot = load_robot(one_joint_urdf(tmp_path, axis='1 0 0'))
    base = compute_base_parameters(Regressor(robot, RegressorSpec(friction='none')))
    assert sorted(base.names) == ['Ixx1', 'my1', 'mz1']


@pytest.fixture(scope='module')
def arm6_base():
    reg = Regressor(load_robot(ARM6),
                    RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True))
    return reg, compute_base_parameters(reg)


def test_base_regressor_reproduces_full_model(arm6_base):
    reg, base = arm6_base
    rng = np.random.default_rng(7)
    w = reg.compute(*random_samples(reg, 50, rng)).reshape(-1, reg.n_columns)
    chi = rng.normal(size=reg.n_columns)
    np.testing.assert_allclose(w[:, base.independent] @ base.project(chi), w @ chi,
                               rtol=1e-9, atol=1e-9)


def test_base_count_is_the_numerical_rank(arm6_base):
    reg, base = arm6_base
    w = reg.compute(*random_samples(reg, 100, np.random.default_rng(9))).reshape(-1, reg.n_columns)
    assert base.count == np.linalg.matrix_rank(w)
    assert np.linalg.matrix_rank(w[:, base.independent]) == base.count
    assert base.rank_gap > 1e6


def test_names_show_the_regrouping(arm6_base):
    reg, base = arm6_base
    names = base.names
    assert len(set(names)) == len(names)
    # every actuator friction term is identifiable on its own
    for j in range(1, 7):
        assert f'fv{j}' in names and f'fc{j}' in names and f'offset{j}' in names
    # rotor inertia of joint 1 cannot be told apart from the link inertia about the same axis
    assert not any(n == 'Ia1' for n in names)
    assert any(n.startswith('Izz1') and 'Ia1' in n for n in names)


def test_mapping_round_trips_through_dict(arm6_base):
    from ident_core.model.base_parameters import BaseParameters
    _, base = arm6_base
    again = BaseParameters.from_dict(base.to_dict())
    np.testing.assert_array_equal(again.matrix(), base.matrix())
    assert again.names == base.names


def test_independent_of_the_random_seed(arm6_base):
    reg, base = arm6_base
    other = compute_base_parameters(reg, seed=123)
    np.testing.assert_array_equal(other.independent, base.independent)
    np.testing.assert_allclose(other.k_d, base.k_d, atol=1e-8)
