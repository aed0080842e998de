"""Leaving equations out of the estimation: ``estimators.estimate(..., mask=...)`` and the
velocity-reversal mask ``identification.Processed.reversal_mask``."""
import numpy as np
import pytest

from ident_core.errors import InputError
from ident_core.estimation.estimators import estimate
from ident_core.estimation.preprocessing import Processed

NB = 4
BETA = np.array([1.0, -2.0, 0.5, 3.0])
SIGMAS = np.array([0.1, 1.0, 5.0])


def problem(seed=0, samples=300):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(samples, 3, NB))
    tau = w @ BETA + rng.normal(size=(samples, 3)) * SIGMAS
    mask = rng.uniform(size=(samples, 3)) > 0.3
    return w, tau, mask


def kept_lstsq(w, tau, mask, weights=None):
    """Closed-form least squares on the kept equations only (unit weights by default)."""
    weights = np.ones(3) if weights is None else weights
    a = (w * weights[None, :, None])[mask]          # (M, nb)
    b = (tau * weights)[mask]
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    return x, a, b


# --- estimate(..., mask) ------------------------------------------------------------------------

def test_masked_ols_is_least_squares_without_those_equations():
    w, tau, mask = problem()
    x, a, b = kept_lstsq(w, tau, mask)
    est = estimate(w, tau, 'ols', mask=mask)
    np.testing.assert_allclose(est.values, x, rtol=1e-10)
    sigma2 = np.sum((b - a @ x) ** 2) / (mask.sum() - NB)
    np.testing.assert_allclose(est.covariance, sigma2 * np.linalg.inv(a.T @ a), rtol=1e-8)
    # and it differs from the unmasked estimate (the mask does something)
    assert np.abs(estimate(w, tau, 'ols').values - x).max() > 1e-4


def test_masked_equations_do_not_influence_the_estimate():
    w, tau, mask = problem(1)
    ref = estimate(w, tau, 'wls', mask=mask)
    rng = np.random.default_rng(5)
    w2, tau2 = w.copy(), tau.copy()
    tau2[~mask] = 1e6 * rng.normal(size=(~mask).sum())               # garbage where left out
    w2[~mask] = 1e3 * rng.normal(size=((~mask).sum(), NB))
    for method in ('ols', 'wls'):
        a, b = estimate(w, tau, method, mask=mask), estimate(w2, tau2, method, mask=mask)
        np.testing.assert_allclose(b.values, a.values, rtol=1e-9)
        np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-8)
        np.testing.assert_allclose(b.sigma_joint, a.sigma_joint, rtol=1e-9)
    assert ref.method == 'wls'


def test_per_joint_sigma_uses_the_masked_count():
    w, tau, mask = problem(2)
    est = estimate(w, tau, 'ols', mask=mask)
    x = kept_lstsq(w, tau, mask)[0]
    r = tau - w @ x
    counts = mask.sum(axis=0)
    expected = np.sqrt([(r[mask[:, j], j] ** 2).sum() / (counts[j] - NB) for j in range(3)])
    np.testing.assert_allclose(est.sigma_joint, expected, rtol=1e-10)


def test_masked_one_step_wls_closed_form():
    w, tau, mask = problem(3)
    x_ols = kept_lstsq(w, tau, mask)[0]
    r = tau - w @ x_ols
    counts = mask.sum(axis=0)
    sigma = np.sqrt([(r[mask[:, j], j] ** 2).sum() / (counts[j] - NB) for j in range(3)])
    x, a, _ = kept_lstsq(w, tau, mask, 1 / sigma)
    est = estimate(w, tau, 'wls', iterations=1, mask=mask)
    np.testing.assert_allclose(est.values, x, rtol=1e-10)
    np.testing.assert_allclose(est.covariance, np.linalg.inv(a.T @ a), rtol=1e-8)
    # the iterated weights find the per-joint noise of the kept equations
    np.testing.assert_allclose(estimate(w, tau, 'wls', mask=mask).sigma_joint, SIGMAS, rtol=0.15)


def test_all_true_mask_changes_nothing():
    w, tau, _ = problem(4)
    for method in ('ols', 'wls'):
        a = estimate(w, tau, method)
        b = estimate(w, tau, method, mask=np.ones(tau.shape, dtype=bool))
        np.testing.assert_allclose(b.values, a.values, rtol=1e-12)
        np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-10)


def test_too_few_equations_for_a_joint_names_it():
    w, tau, _ = problem(5, samples=50)
    mask = np.ones(tau.shape, dtype=bool)
    mask[NB + 1:, 1] = False                 # joint 2 keeps nb + 1 equations: enough
    est = estimate(w, tau, 'ols', mask=mask)
    assert np.all(np.isfinite(est.std))
    mask[NB, 1] = False                      # nb equations: too few
    with pytest.raises(InputError, match='joint 2') as info:
        estimate(w, tau, 'ols', mask=mask)
    assert f'{NB} equations' in str(info.value)
    mask = np.ones(tau.shape, dtype=bool)
    mask[:, 2] = False
    with pytest.raises(InputError, match='joint 3'):
        estimate(w, tau, 'wls', mask=mask)


def test_mask_of_the_wrong_shape():
    w, tau, mask = problem(6)
    with pytest.raises(InputError, match='mask'):
        estimate(w, tau, 'ols', mask=mask[:-1])


# --- Processed.reversal_mask --------------------------------------------------------------------

FS = 200.0
OMEGA = np.array([2 * np.pi * 0.7, 2 * np.pi * 1.1, 2 * np.pi * 0.45])
PHASE = np.array([0.3, 1.9, -0.8])


def processed(duration=6.0, trim=30, qd=None):
    t = np.arange(int(duration * FS)) / FS
    if qd is None:
        qd = np.sin(OMEGA * t[:, None] + PHASE)
    zero = np.zeros_like(qd)
    return Processed('sinusoids', FS, 10.0, 4, trim, t, zero, qd, zero, zero)


def brute_force(t, u, rows, window):
    """(len(rows), n): True where a row is within ``window`` of a sign change of u (the midpoint
    between the two samples around it), by looping over every pair."""
    near = np.zeros((len(rows), u.shape[1]), dtype=bool)
    for m in range(u.shape[1]):
        crossings = [0.5 * (t[k] + t[k + 1]) for k in range(len(t) - 1)
                     if np.sign(u[k, m]) != np.sign(u[k + 1, m])]
        for i, tr in enumerate(rows):
            near[i, m] = any(abs(tr - c) < window for c in crossings)
    return near


def analytic_zeros(omega, phase, t_end):
    k = np.arange(-2, int((omega * t_end + abs(phase)) / np.pi) + 3)
    z = (k * np.pi - phase) / omega
    return z[(z >= 0) & (z <= t_end)]


@pytest.mark.parametrize('factor', [1, 7])
def test_marks_rows_near_a_velocity_reversal(factor):
    p = processed()
    window = 0.1
    mask = p.reversal_mask(np.eye(3), factor, window)
    rows = p.t[p.trim:len(p.t) - p.trim][::factor]
    assert mask.shape == (len(rows), 3)
    np.testing.assert_array_equal(~mask, brute_force(p.t, p.qd, rows, window))
    # against the true zeros of sin(ωt + φ): the sampled crossings are within dt/2 of them
    dt = 1 / FS
    for j in range(3):
        zeros = analytic_zeros(OMEGA[j], PHASE[j], p.t[-1])
        gap = np.abs(rows[:, None] - zeros[None, :]).min(axis=1)
        assert np.all(~mask[gap < window - dt, j])
        assert np.all(mask[gap > window + dt, j])
        # the share left out is about 2·window per half period
        share = np.mean(~mask[:, j])
        assert share == pytest.approx(2 * window / (np.pi / OMEGA[j]), abs=0.05)


def test_coupled_joint_is_marked_too():
    p = processed()
    gear = np.array([[1.0, 0.0, 0.0],
                     [0.0, 1.0, 0.0],
                     [0.0, 0.5, 1.0]])               # motor 3 turns with joints 2 and 3
    window = 0.08
    mask = p.reversal_mask(gear, 1, window)
    rows = p.trimmed(p.t)
    u = np.column_stack([p.qd[:, 0], p.qd[:, 1], 0.5 * p.qd[:, 1] + p.qd[:, 2]])
    near = brute_force(p.t, u, rows, window)
    # motor 3's torque acts on joints 2 and 3; motors 1 and 2 only on their own joint
    np.testing.assert_array_equal(~mask[:, 0], near[:, 0])
    np.testing.assert_array_equal(~mask[:, 1], near[:, 1] | near[:, 2])
    np.testing.assert_array_equal(~mask[:, 2], near[:, 2])
    # motor 3 reverses where joint 3 alone does not: the coupling matters
    assert np.any(near[:, 2] != brute_force(p.t, p.qd, rows, window)[:, 2])
    assert np.any(~mask[:, 1] & ~near[:, 1])


def test_no_window_or_no_reversal_keeps_everything():
    p = processed()
    assert p.reversal_mask(np.eye(3), 1, 0.0).all()
    t = np.arange(1200) / FS
    steady = processed(qd=np.column_stack([1 + 0.5 * np.sin(t), -2 + np.cos(3 * t),
                                           0.1 + 0 * t]))
    assert steady.reversal_mask(np.eye(3), 4, 0.5).all()
