"""Regressor against Pinocchio's RNEA and the closed-form actuator model."""
import numpy as np
import pinocchio as pin
import pytest
from helpers import ARM6

from ident_core.model.regressor import Regressor, RegressorSpec
from ident_core.model.robot import load_robot
from ident_core.model.transmission import Transmission
from ident_core.sim.synthetic import perturbed_parameters, simulate_torques


@pytest.fixture(scope='module')
def robot():
    return load_robot(ARM6)


def random_states(n, count, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, (count, n)), rng.uniform(-2, 2, (count, n)),
            rng.uniform(-5, 5, (count, n)))


def test_rigid_body_columns_reproduce_rnea(robot):
    q, qd, qdd = random_states(robot.n, 20)
    y = Regressor(robot, RegressorSpec(friction='none')).compute(q, qd, qdd)
    data = robot.model.createData()
    expected = np.array([pin.rnea(robot.model, data, *s) for s in zip(q, qd, qdd)])
    np.testing.assert_allclose(y @ robot.standard_parameters(), expected, atol=1e-10)


def test_full_regressor_matches_simulated_torques(robot):
    truth = perturbed_parameters(robot, np.random.default_rng(3))
    spec = RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True)
    q, qd, qdd = random_states(robot.n, 30, seed=1)
    y = Regressor(robot, spec).compute(q, qd, qdd)
    np.testing.assert_allclose(y @ truth.vector(spec.actuator_terms),
                               simulate_torques(robot, truth, q, qd, qdd), atol=1e-10)


def test_coupled_transmission_puts_actuator_terms_on_the_motor_side(robot):
    gear = np.diag([32.0, 32, 45, -48, 45, 32])
    gear[5, 4] = 32.0                      # motor 6 follows joints 5 and 6 (TX40 wrist)
    tr = Transmission(gear, np.zeros(6), np.ones(6))
    spec = RegressorSpec(friction='coulomb-viscous-offset', rotor_inertia=True)
    reg = Regressor(robot, spec, tr)
    q, qd, qdd = random_states(robot.n, 10, seed=2)
    rng = np.random.default_rng(4)
    ia, fv, fc, off = rng.uniform(0.1, 1.0, (4, 6))
    chi = np.concatenate([np.zeros(reg.n_inertial), ia, fv, fc, off])
    g = gear / np.diag(gear)[:, None]
    u, a = qd @ g.T, qdd @ g.T
    expected = (ia * a + fv * u + fc * np.sign(u) + off) @ g     # Gᵀ · motor torques
    np.testing.assert_allclose(reg.compute(q, qd, qdd) @ chi, expected, atol=1e-12)
    # joint 5 feels motor 6: its torque depends on Ia6 through qdd5 + qdd6
    assert reg.compute(q, qd, qdd)[:, 4, reg.actuator_index('Ia', 5)] == pytest.approx(a[:, 5])


def test_column_names_follow_pinocchio_order(robot):
    reg = Regressor(robot, RegressorSpec(friction='coulomb-viscous', rotor_inertia=True))
    assert reg.names[:10] == ['m1', 'mx1', 'my1', 'mz1', 'Ixx1', 'Ixy1', 'Iyy1', 'Ixz1', 'Iyz1',
                              'Izz1']
    assert reg.names[60:] == [f'{t}{j}' for t in ('Ia', 'fv', 'fc') for j in range(1, 7)]


def test_shape_mismatch_is_refused(robot):
    from ident_core.errors import InputError
    with pytest.raises(InputError, match='must all be'):
        Regressor(robot, RegressorSpec()).compute(np.zeros((3, 6)), np.zeros((3, 5)),
                                                  np.zeros((3, 6)))
