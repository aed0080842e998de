"""Whole pipeline on simulated robots with known parameters (RNEA + friction + noise)."""
import numpy as np
import pytest
from helpers import ARM6

from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset


@pytest.fixture(scope='module')
def arm():
    robot = load_robot(ARM6)
    return robot, perturbed_parameters(robot, np.random.default_rng(11))


def z_scores(model, truth):
    beta = model.base.project(truth.vector(model.config.spec.actuator_terms))
    return (model.values - beta) / model.std, beta


def test_noise_free_data_give_the_true_base_parameters(arm):
    robot, truth = arm
    data, _ = synthetic_dataset(robot, truth, 20, 500, seed=1, torque_noise=0.0)
    # no noise: a cut-off just below Nyquist keeps the filter out of the way
    model = identify(robot, [data], IdentificationConfig(rotor_inertia=True, estimator='ols',
                                             cutoff_hz=240, decimate=1))
    _, beta = z_scores(model, truth)
    # what remains is the central-difference error of qd, qdd (~1e-5)
    np.testing.assert_allclose(model.values, beta, rtol=1e-4, atol=5e-5)


def test_wls_recovers_base_parameters_within_their_standard_deviations(arm):
    robot, truth = arm
    data, _ = synthetic_dataset(robot, truth, 40, 200, seed=2, torque_noise=0.3)
    model = identify(robot, [data], IdentificationConfig(rotor_inertia=True, cutoff_hz=20))
    z, _ = z_scores(model, truth)
    assert np.mean(np.abs(z) < 3) >= 0.95
    assert np.max(np.abs(z)) < 5
    assert 0.6 < np.std(z) < 1.6                        # standard deviations are not inflated


def test_validation_on_another_trajectory_against_noise_free_torque(arm):
    robot, truth = arm
    train, _ = synthetic_dataset(robot, truth, 40, 200, seed=3, torque_noise=0.3)
    test, clean = synthetic_dataset(robot, truth, 20, 200, seed=4, torque_noise=0.3)
    model = identify(robot, [train], IdentificationConfig(rotor_inertia=True, cutoff_hz=20))
    test.effort = clean                                   # compare with the noise-free torques
    report = validate(model, test)
    assert report.metrics['relative_error_percent'] < 1.5
    assert len(report.metrics['rmse']) == robot.n


def test_friction_and_rotor_values_are_reported_per_joint(arm):
    robot, truth = arm
    data, _ = synthetic_dataset(robot, truth, 40, 200, seed=5, torque_noise=0.1)
    model = identify(robot, [data], IdentificationConfig(rotor_inertia=True, cutoff_hz=20))
    act = model.actuator_values()
    np.testing.assert_allclose(act['fv'], truth.fv, rtol=0.1)
    np.testing.assert_allclose(act['fc'], truth.fc, rtol=0.1)
    assert act['Ia'][0] is None                           # regrouped with Izz1
    np.testing.assert_allclose(act['Ia'][2:], truth.Ia[2:], atol=0.01)


def test_several_datasets_are_stacked(arm):
    robot, truth = arm
    a, _ = synthetic_dataset(robot, truth, 20, 200, seed=6, torque_noise=0.3)
    b, _ = synthetic_dataset(robot, truth, 20, 200, seed=7, torque_noise=0.3)
    settings = IdentificationConfig(rotor_inertia=True, cutoff_hz=20)
    both = identify(robot, [a, b], settings)
    one = identify(robot, [a], settings)
    assert both.stats['samples'] > one.stats['samples']
    assert np.median(both.std / one.std) < 0.9


def test_split_keeps_the_held_out_part_unseen(arm):
    robot, truth = arm
    data, _ = synthetic_dataset(robot, truth, 30, 200, seed=8, torque_noise=0.3)
    first, last = data.split(0.7)
    assert first.samples + last.samples == data.samples
    assert first.t[-1] < last.t[0]
