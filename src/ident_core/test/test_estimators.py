"""OLS / WLS (docs/methods.md §4) against closed-form least squares."""
import numpy as np
import pytest

from ident_core.errors import ExcitationError, InputError
from ident_core.estimation.estimators import estimate


def linear_problem(seed=0, samples=400, sigmas=(0.1, 1.0, 5.0)):
    rng = np.random.default_rng(seed)
    n, nb = len(sigmas), 4
    w = rng.normal(size=(samples, n, nb))
    beta = np.array([1.0, -2.0, 0.5, 3.0])
    tau = w @ beta + rng.normal(size=(samples, n)) * np.array(sigmas)
    return w, tau, beta


def test_ols_is_the_least_squares_solution():
    w, tau, _ = linear_problem()
    est = estimate(w, tau, 'ols')
    a, b = w.reshape(-1, 4), tau.ravel()
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(est.values, x, rtol=1e-10)
    sigma2 = np.sum((b - a @ x) ** 2) / (len(b) - 4)
    np.testing.assert_allclose(est.covariance, sigma2 * np.linalg.inv(a.T @ a), rtol=1e-8)
    assert est.condition_number == pytest.approx(np.linalg.cond(a), rel=1e-10)


def test_wls_weights_each_joint_by_its_residual_std():
    w, tau, _ = linear_problem()
    est = estimate(w, tau, 'wls', iterations=1)
    x_ols = np.linalg.lstsq(w.reshape(-1, 4), tau.ravel(), rcond=None)[0]
    sigma = np.sqrt(((tau - w @ x_ols) ** 2).sum(axis=0) / (len(tau) - 4))
    h = 1 / sigma
    a, b = (w * h[None, :, None]).reshape(-1, 4), (tau * h).ravel()
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(est.values, x, rtol=1e-10)
    np.testing.assert_allclose(est.covariance, np.linalg.inv(a.T @ a), rtol=1e-8)
    np.testing.assert_allclose(est.sigma_joint,
                               np.sqrt(((tau - w @ x) ** 2).sum(axis=0) / (len(tau) - 4)))


def test_wls_is_more_precise_than_ols_with_unequal_noise():
    w, tau, beta = linear_problem()
    assert np.all(estimate(w, tau, 'wls').std < estimate(w, tau, 'ols').std)


def test_iterated_wls_finds_the_joint_noise_and_calibrated_std():
    # Gautier's one-step weights come from OLS residuals, which the noisiest joint inflates on
    # the others; iterating the weights converges to the per-joint noise levels, and over
    # repeated experiments the error / std is then standard normal.
    z = []
    for seed in range(200):
        w, tau, beta = linear_problem(seed, samples=100)
        est = estimate(w, tau, 'wls')
        z.append((est.values - beta) / est.std)
    z = np.array(z)
    assert 0.85 < z.std() < 1.15
    assert abs(z.mean()) < 0.1
    w, tau, _ = linear_problem(samples=2000)
    np.testing.assert_allclose(estimate(w, tau, 'wls').sigma_joint, [0.1, 1.0, 5.0], rtol=0.08)
    ols = estimate(w, tau, 'ols')
    assert np.sqrt(np.mean((tau - w @ ols.values)[:, 0] ** 2)) > 0.11   # inflated by joint 3


def test_relative_std_percent():
    w, tau, _ = linear_problem()
    est = estimate(w, tau, 'ols')
    np.testing.assert_allclose(est.rel_std_percent, 100 * est.std / np.abs(est.values))


def test_collinear_columns_are_reported_by_name():
    w, tau, _ = linear_problem()
    w[:, :, 3] = 2 * w[:, :, 1]
    with pytest.raises(ExcitationError, match=r'b1.*b3|b3.*b1') as info:
        estimate(w, tau, 'ols', names=['b0', 'b1', 'b2', 'b3'])
    assert 'condition number' in str(info.value)


def test_zero_column_is_reported_by_name():
    w, tau, _ = linear_problem()
    w[:, :, 2] = 0.0
    with pytest.raises(ExcitationError, match='b2'):
        estimate(w, tau, 'wls', names=['b0', 'b1', 'b2', 'b3'])


def test_too_few_samples():
    w, tau, _ = linear_problem(samples=4)
    with pytest.raises(InputError, match='too few samples'):
        estimate(w, tau)


def test_unknown_method():
    w, tau, _ = linear_problem()
    with pytest.raises(InputError, match='estimator'):
        estimate(w, tau, 'tls')
