"""The friction demo's comparison with the simulator's truth, without a graph: a hand-made
ground truth and FRICTION.yaml fits give the errors, the worst errors against the goals, the
time per optimiser and the saturation count the demo prints."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ident_core.friction.results import FitEntry
from ident_core.sim.evaluation import compare_friction, worst_errors
from ident_sim.demo import DemoFailed
from ident_sim.friction_demo import (
    drive_saturation,
    friction_table,
    optimizer_seconds,
    saturation_line,
    true_friction,
)

TRUTH = {'fc': [10.0, 2.0], 'fs': [20.0, 4.0], 'vs': [0.02, 0.03], 'delta': [2.0, 2.0],
         'fv': [30.0, 5.0], 'offset': [0.5, -0.1], 'v_l': [0.01, 0.01]}
GROUND_TRUTH = {'robot': {'joints': ['joint1', 'joint2']},
                'friction': {'model': 'improved-stribeck', **TRUTH}}


def fit(scale: dict, seconds: float) -> FitEntry:
    """joint2's truth with some parameters scaled."""
    parameters = {k: v[1] * scale.get(k, 1.0) for k, v in TRUTH.items()}
    return FitEntry(parameters=parameters, std={k: 0.0 for k in parameters}, rss=1.5, rms=0.1,
                    samples=1000, seconds=seconds, evaluations=10)


def test_errors_worst_errors_and_table_against_a_hand_made_truth():
    truth = true_friction(GROUND_TRUTH)
    assert truth['joint2'] == {k: v[1] for k, v in TRUTH.items()}
    fits = {'joint2': {'lsq': fit({'offset': 1.03}, 0.2),            # offset 3 % off
                       'ga': fit({'fs': 0.99, 'v_l': 1.12}, 10.0)}}   # v_l 12 % off
    rows = compare_friction(fits, truth)
    assert rows['joint2']['lsq']['error_percent']['offset'] == pytest.approx(-3.0)  # of |true|
    assert rows['joint2']['ga']['error_percent']['fs'] == pytest.approx(-1.0)
    assert rows['joint2']['ga']['error_percent']['fc'] == pytest.approx(0.0)
    worst = worst_errors(rows)
    assert worst['linear']['error'] == pytest.approx(3.0)
    assert (worst['linear']['joint'], worst['linear']['optimizer'],
            worst['linear']['parameter']) == ('joint2', 'lsq', 'offset')
    assert worst['shape']['error'] == pytest.approx(12.0)
    assert worst['shape']['parameter'] == 'v_l'
    assert optimizer_seconds(fits) == {'lsq': 0.2, 'ga': 10.0}

    lines = friction_table(rows, truth, worst, {'linear': 2.0, 'shape': 10.0})
    assert lines[-2].startswith('worst error of fc, fs, fv, offset: 3.00 %')
    assert lines[-2].endswith('goal 2 %: MISSED')
    assert lines[-1].endswith('goal 10 %: MISSED')
    assert any(line.split()[:2] == ['joint2', 'truth'] for line in lines)
    assert sum('error %' in line for line in lines) == 2
    met = friction_table(rows, truth, worst, {'linear': 5.0, 'shape': 15.0})
    assert met[-2].endswith('goal 5 %: met') and met[-1].endswith('goal 15 %: met')


def test_a_zero_truth_gives_no_relative_error_and_counts_as_worst():
    truth = true_friction(GROUND_TRUTH)
    truth['joint2']['offset'] = 0.0
    rows = compare_friction({'joint2': {'lsq': fit({}, 0.1)}}, truth)
    assert math.isnan(rows['joint2']['lsq']['error_percent']['offset'])
    assert worst_errors(rows)['linear']['error'] == math.inf


def test_the_truth_must_be_improved_stribeck_friction():
    with pytest.raises(DemoFailed, match='coulomb-viscous'):
        true_friction({**GROUND_TRUTH, 'friction': {**TRUTH, 'model': 'coulomb-viscous'}})
    with pytest.raises(DemoFailed, match='friction'):
        true_friction({'robot': {'joints': ['joint1']}})


def test_saturation_counts_samples_at_the_effort_limit():
    torque = np.array([[1.0, 15.0], [-2.0, -15.0], [3.0, 7.5]])
    saturation = drive_saturation({'torque': torque}, [150.0, 15.0], ['joint1', 'joint2'])
    assert saturation['joint1'] == {'samples': 0, 'peak_ratio': pytest.approx(0.02)}
    assert saturation['joint2'] == {'samples': 2, 'peak_ratio': pytest.approx(1.0)}
    assert saturation['total_samples'] == 3
    assert saturation_line(saturation).startswith('SATURATION: joint2 2 samples of 3')
    calm = drive_saturation({'torque': torque[2:]}, [150.0, 15.0], ['joint1', 'joint2'])
    assert saturation_line(calm).startswith('saturation: none in the 1 samples')
