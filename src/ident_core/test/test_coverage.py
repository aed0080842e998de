"""A recording against the excitation window it should fill: closed-form gaps, the refusal of a
stream that stopped and the warning about a short gap, through ``load_bag``."""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from datafiles import write_joint_state_bag

from ident_core.data.coverage import COVERAGE_GAP_PERIODS, check_coverage, window_coverage
from ident_core.data.datasets import load_bag
from ident_core.errors import DataWarning, InputError

T0 = 1_700_000_000.0          # s, the stamps of datafiles.write_joint_state_bag begin here


def test_gaps_head_and_tail_in_closed_form():
    t = np.r_[np.arange(2.0, 5.0, 0.01), np.arange(7.0, 9.0, 0.01)]
    c = window_coverage(t, (1.0, 10.0), period=0.01)
    starts, lengths = np.array(c.gaps).T
    np.testing.assert_allclose(starts, [1.0, t[299], t[-1]])
    np.testing.assert_allclose(lengths, [1.0, 7.0 - t[299], 10.0 - t[-1]])
    assert c.fraction == pytest.approx(1 - lengths.sum() / 9.0)
    assert 'no sample for 2.0 s from 4.0 s into it (3 gaps in all)' in c.describe()


def test_short_pauses_are_no_gaps():
    t = np.arange(0.0, 10.0, 0.01)
    t = np.delete(t, np.arange(500, 500 + COVERAGE_GAP_PERIODS - 1))   # that many periods apart
    assert window_coverage(t, (0.0, t[-1]), period=0.01).gaps == []


def test_a_stream_that_stopped_is_refused_a_gap_warned():
    t = np.arange(0.0, 21.0, 0.001)
    stopped = window_coverage(t[t < 7.0], (0.0, 21.0))
    with pytest.raises(InputError, match=r'run.mcap: the recording covers 33 % .* no sample '
                                         r'for 14.0 s from 7.0 s .*min_coverage'):
        check_coverage(stopped, 'run.mcap')
    paused = window_coverage(t[(t < 7.0) | (t > 8.0)], (0.0, 21.0))
    with pytest.warns(DataWarning, match='covers 95 %.*1.0 s from 7.0 s'):
        check_coverage(paused, 'run.mcap')
    with pytest.raises(InputError):
        check_coverage(paused, 'run.mcap', min_fraction=0.99)


def test_load_bag_checks_the_window(make_synthetic, tmp_path):
    d = make_synthetic()                                  # 20 s at 100 Hz
    cut = d.t < 12.0
    bag = write_joint_state_bag(tmp_path / 'cut', replace(
        d, t=d.t[cut], position=d.position[cut], effort=d.effort[cut],
        velocity=None if d.velocity is None else d.velocity[cut]))
    window = (T0 + 2.0, T0 + 18.0)
    with pytest.raises(InputError, match='cut.*covers 62 % of the excitation window'):
        load_bag(bag, window=window)
    with pytest.warns(DataWarning, match='covers 62 %'):
        dataset, _ = load_bag(bag, window=window, min_coverage=0.5)
    assert dataset.t[-1] - dataset.t[0] == pytest.approx(10.0 - 0.01, abs=0.011)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        load_bag(bag, window=(T0 + 2.0, T0 + 11.0))
