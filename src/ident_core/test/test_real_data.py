"""Acceptance on real robot recordings (../shared/data). Skipped when the data are absent.

Tolerances: KUKA LWR4+ m1 → m2 relative validation error ≤ 2.5 % (issue 2; FloBaRoID publishes
2.81 %); the harder m1 → m3 / m3 → m1 and the TX40 70/30 split are regression guards set a margin
above the values measured when this test was written (11.7 %, 5.8 %, 21 %). TX40 friction and
rotor inertia are compared with the reference identification of the same recording
(TX40_config_reference_params.yaml) on the joints where both models have the same parameter.
"""
import os

import numpy as np
import pytest
import yaml
from helpers import KUKA_DIR, REPO, TX40_DIR

from ident_core.data.datasets import load_dataset
from ident_core.estimation.identification import IdentificationConfig, identify, validate
from ident_core.model.robot import load_robot

DATASETS = REPO / 'config' / 'datasets'

kuka = pytest.mark.skipif(not (KUKA_DIR / 'measurements_1.npz').is_file(),
                          reason=f'KUKA LWR4+ recordings not found in {KUKA_DIR}')
tx40 = pytest.mark.skipif(not (TX40_DIR / 'curr_data.csv').is_file(),
                          reason=f'Stäubli TX40 recordings not found in {TX40_DIR}')


@pytest.fixture(scope='module')
def kuka_runs():
    os.environ['DATA_DIR'] = str(KUKA_DIR)
    robot = load_robot(KUKA_DIR / 'kuka_lwr4.urdf')
    runs = {i: load_dataset(DATASETS / 'kuka_lwr4' / f'measurements_{i}.yaml', robot.joint_names)
            for i in (1, 2, 3)}
    return robot, runs


def relative_error(robot, runs, train, test):
    model = identify(robot, [runs[train]], IdentificationConfig())
    return validate(model, runs[test]).metrics


@kuka
def test_kuka_m1_to_m2_beats_flobaroid(kuka_runs):
    m = relative_error(*kuka_runs, 1, 2)
    assert m['relative_error_percent'] <= 2.5
    assert m['nrms_percent'] < 0.18                       # FloBaRoID: 0.18 %


@kuka
def test_kuka_generalisation_to_another_trajectory(kuka_runs):
    assert relative_error(*kuka_runs, 1, 3)['relative_error_percent'] < 13
    assert relative_error(*kuka_runs, 3, 1)['relative_error_percent'] < 7


@tx40
def test_tx40_coupled_wrist_70_30():
    os.environ['TX40_DIR'] = str(TX40_DIR)
    robot = load_robot(TX40_DIR / 'tx40_mdh_modified.urdf')
    first, last = load_dataset(DATASETS / 'staubli_tx40' / 'tx40.yaml').split(0.7)
    model = identify(robot, [first], IdentificationConfig(rotor_inertia=True))
    assert validate(model, last).metrics['relative_error_percent'] < 24
    ref = yaml.safe_load((TX40_DIR / 'TX40_config_reference_params.yaml').read_text())
    ref = ref['identification']['robot_params'][0]
    act = model.actuator_values()
    np.testing.assert_allclose(act['fv'][:4], ref['fv'][:4], rtol=0.15)
    np.testing.assert_allclose(act['fc'][:4], ref['fs'][:4], rtol=0.15)
    np.testing.assert_allclose([act['Ia'][j] for j in (2, 3, 5)],
                               [ref['Ia'][j] for j in (2, 3, 5)], rtol=0.25)
    # motor 6 carries the coupled wrist: its Coulomb friction is the reference's fs6 + fsm6
    assert act['fc'][5] == pytest.approx(ref['fs'][5] + ref['fsm6'], rel=0.15)
