"""Metrics (FloBaRoID definitions) and signal processing on closed-form signals."""
import numpy as np
import pytest

from ident_core.data.signal_processing import (
    decimate_parallel,
    differentiate,
    fixed_rate_clock,
    lowpass,
)
from ident_core.errors import InputError
from ident_core.estimation import metrics


def test_metrics_closed_form():
    measured = np.array([[1.0, 2.0], [3.0, 4.0]])
    predicted = measured + np.array([[0.0, 1.0], [0.0, -1.0]])
    np.testing.assert_allclose(metrics.rmse(predicted, measured), [0.0, 1.0])
    assert metrics.relative_error_percent(predicted, measured) == pytest.approx(
        100 * np.sqrt(2) / np.sqrt(30))
    assert metrics.nrms_percent(predicted, measured, [10.0, 5.0]) == pytest.approx(
        100 * (0 / 20 + 1 / 10) / 2)
    assert metrics.absolute_error(predicted, measured) == pytest.approx(1.0)


def test_nrms_needs_effort_limits():
    x = np.ones((3, 2))
    with pytest.raises(InputError, match='effort limit'):
        metrics.nrms_percent(x, x, [1.0, 0.0])
    assert metrics.all_metrics(x, x, [1.0, np.inf])['nrms_percent'] is None


def test_lowpass_is_zero_phase_and_removes_noise():
    fs = 1000.0
    t = np.arange(5000) / fs
    clean = np.sin(2 * np.pi * 1.0 * t)
    noisy = clean + 0.1 * np.random.default_rng(0).standard_normal(len(t))
    inner = slice(500, -500)
    # no lag: a 1 ms delay alone would leave an error of 2π·1 Hz·1 ms ≈ 6e-3
    assert np.max(np.abs(lowpass(clean, fs, 10.0) - clean)[inner]) < 1e-4
    residual = (lowpass(noisy, fs, 10.0) - clean)[inner]
    assert np.sqrt(np.mean(residual ** 2)) < 0.1 * np.sqrt(2 * 10 / fs) * 1.5
    with pytest.raises(InputError, match='Nyquist|half'):
        lowpass(noisy, fs, 600.0)


def test_central_differences_of_a_sine():
    t = np.linspace(0, 2, 2001)
    q = np.sin(3 * t)
    qd = differentiate(q, t)
    qdd = differentiate(qd, t)
    np.testing.assert_allclose(qd[2:-2], 3 * np.cos(3 * t[2:-2]), atol=1e-5)
    np.testing.assert_allclose(qdd[4:-4], -9 * np.sin(3 * t[4:-4]), atol=1e-4)


def test_fixed_rate_clock_removes_logger_jitter():
    rng = np.random.default_rng(1)
    true = 0.005 * np.arange(1000) + 12.0
    stamps = true + rng.uniform(0, 0.0015, size=1000)        # logger stamps late by 0–1.5 ms
    recovered = fixed_rate_clock(stamps, 'log')
    np.testing.assert_allclose(np.diff(recovered), 0.005, rtol=1e-3)
    gap = np.delete(stamps, 500)
    with pytest.raises(InputError, match='dropped'):
        fixed_rate_clock(gap, 'log')


def test_parallel_decimation_keeps_a_linear_relation():
    fs = 1000.0
    t = np.arange(4000) / fs
    rng = np.random.default_rng(2)
    w = np.column_stack([np.sin(2 * np.pi * 0.5 * t), np.sign(np.sin(2 * np.pi * 0.7 * t))])
    w = w + 0.01 * rng.standard_normal(w.shape)
    beta = np.array([2.0, -1.0])
    tau = w @ beta
    wd, taud = decimate_parallel([w, tau], 10, fs, bandwidth=fs / 2)
    assert len(taud) == 400
    np.testing.assert_allclose(wd @ beta, taud, atol=1e-9)   # same filter on both sides
