"""Physically consistent weighted least squares, ``pc-wls``.

``estimate_pc_wls`` minimises the WLS objective of the base parameters over the full standard
parameters, subject to the pseudo-inertia LMI of every body, non-negative rotor inertias and
friction, and the user's bounds (``PhysicalConstraints``), with a weak prior toward the URDF
whose weight is chosen on held-out data (cvxpy with Clarabel). The method, and why, is
docs/methods.md §4, "Physically consistent WLS".
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import DataWarning, IdentError, InputError
from ..model.base_parameters import BaseParameters
from ..model.inertial import pseudo_inertia, pseudo_inertia_basis
from .estimators import Estimate, equation_counts, estimate, r_factor, residual_deviation

#: ``J(phi) ⪰ EPSILON·J0``: strictly positive mass and principal moments, relative to the prior.
EPSILON = 1e-6
#: Candidate prior weights (units: equations of unit variance per unit of divergence).
PRIOR_WEIGHTS = (0.1, 1.0, 10.0, 100.0, 1e3, 1e4)
#: Weight κ of the relative mass deviation (equations of unit variance; not cross-validated).
MASS_PRIOR = 300.0
#: Contiguous blocks of the cross-validation of the prior weight.
FOLDS = 4
#: A user bound raising the weighted residual more than this χ² quantile (nb degrees of
#: freedom) is reported as contradicting the data.
BOUNDS_CONFIDENCE = 0.999

#: Clarabel's static regularisation of its KKT system for a second attempt when the first
#: breaks down numerically (10× its default 1e-8): the Stäubli TX40's 70 % part, its currents
#: shifted by their 2.2 ms delay, failed with the default and solves with this.
RETRY_REGULARIZATION = 1e-7


@dataclass
class PhysicalConstraints:
    """What a physically consistent solution must satisfy, and the prior.

    Parameters
    ----------
    link_count : int
        Bodies with 10 standard parameters each (the first ``10·link_count`` columns).
    prior : (p,) ndarray
        A-priori standard parameters (the URDF's; zero for the actuator terms).
    nonnegative : list of int
        Columns constrained to be ≥ 0 (``Ia``, ``fv``, ``fc``).
    total_mass : float, optional
        Sum of the body masses [kg].
    mass_range : (link_count, 2) ndarray, optional
        Lower and upper bound of each body's mass [kg] (upper inf: none).
    com_boxes : list of ((3,), (3,)) or None, optional
        Per body, lower and upper corner of a box that contains its centre of mass, in the
        body frame [m]; None for a body without one.
    epsilon : float
        Relative margin of the pseudo-inertia LMI, ``J ⪰ epsilon·J0``.
    scale : (p,) ndarray, optional
        Typical magnitude of each standard parameter (the solver works on ``chi / scale``);
        default ones.
    """

    link_count: int
    prior: np.ndarray
    nonnegative: list[int]
    total_mass: float | None = None
    mass_range: np.ndarray | None = None
    com_boxes: list | None = None
    epsilon: float = EPSILON
    scale: np.ndarray | None = None

    def __post_init__(self):
        if self.scale is None:
            self.scale = np.ones(len(self.prior))

    def has_user_bounds(self) -> bool:
        """Whether the user bounded the total mass, the masses or the centres of mass.

        Returns
        -------
        bool
        """
        return (self.total_mass is not None or self.mass_range is not None
                or self.com_boxes is not None)

    def prior_masses(self) -> np.ndarray:
        """The prior's body masses.

        Returns
        -------
        (link_count,) ndarray
            [kg].
        """
        return self.prior[0:10 * self.link_count:10]

    def prior_pseudo_inertias(self) -> list[np.ndarray]:
        """The prior's pseudo-inertia per body, made positive definite.

        Returns
        -------
        list of (4, 4) ndarray
            ``J(prior_i)`` with eigenvalues raised to at least 1e-6 × the largest; a body the
            URDF gives no mass gets a 5 cm sphere of a thousandth of the mean body mass.
        """
        masses = self.prior_masses()
        mean_mass = float(np.mean(masses[masses > 0])) if np.any(masses > 0) else 1.0
        out = []
        for i in range(self.link_count):
            phi = self.prior[10 * i:10 * i + 10]
            if phi[0] <= 0:
                small = 1e-3 * mean_mass
                rho = small * 0.05 ** 2 / 5
                out.append(np.diag([rho, rho, rho, small]))
                continue
            values, vectors = np.linalg.eigh(pseudo_inertia(phi))
            values = np.maximum(values, 1e-6 * values.max())
            out.append((vectors * values) @ vectors.T)
        return out


@dataclass
class ConsistentEstimate(Estimate):
    """A ``pc-wls`` estimate: base parameters and the standard parameters behind them.

    Parameters
    ----------
    standard : (p,) ndarray
        Standard parameters (regressor column order) with ``B standard = values``.
    prior_weight : float
        Weight of the prior used.
    prior_weight_scores : dict of float to float
        Held-out weighted residual sum of squares per candidate weight (empty when fixed).
    """

    standard: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prior_weight: float = 0.0
    prior_weight_scores: dict = field(default_factory=dict)


def estimate_pc_wls(w: np.ndarray, tau: np.ndarray, base: BaseParameters,
                    constraints: PhysicalConstraints, mask: np.ndarray | None = None,
                    prior_weight: float | None = None,
                    names: list[str] | None = None) -> ConsistentEstimate:
    """Physically consistent WLS identification (docs/methods.md §4).

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Base regressor.
    tau : (N, n) ndarray
        Joint torques [N·m or N].
    base : BaseParameters
        The base-parameter map ``beta = B chi``.
    constraints : PhysicalConstraints
        Constraints and prior.
    mask : (N, n) ndarray of bool, optional
        False for joint equations to leave out.
    prior_weight : float, optional
        Weight of the prior; None: chosen on held-out blocks among ``PRIOR_WEIGHTS``.
    names : list of str, optional
        (nb,) base parameter names, for error messages.

    Returns
    -------
    ConsistentEstimate

    Raises
    ------
    InputError
        As ``estimators.estimate``; also when the constraints admit no solution (e.g. a total
        mass below what the data need) or the solver fails.
    ExcitationError
        If the data do not excite some base parameters.

    References
    ----------
    .. [1] Wensing P. M., Kim S., Slotine J.-J. E., "Linear matrix inequalities for physically
       consistent inertial parameter identification: a statistical perspective on the mass
       distribution", IEEE Robotics and Automation Letters 3(1):60–67, 2018,
       doi:10.1109/LRA.2017.2729659.
    .. [2] Sousa C. D., Cortesão R., "Physical feasibility of robot base inertial parameter
       identification: a linear matrix inequality approach", The International Journal of
       Robotics Research 33(6):931–944, 2014, doi:10.1177/0278364913514870.
    .. [3] Lee T., Wensing P. M., Park F. C., "Geometric robot dynamic identification: a convex
       programming approach", IEEE Transactions on Robotics 36(2):348–365, 2020,
       doi:10.1109/TRO.2019.2926491.
    """
    wls = estimate(w, tau, 'wls', names, mask=mask)
    blocks = _weighted_blocks(w, tau, 1.0 / wls.sigma_joint, mask, FOLDS)
    problem = _ConvexProblem(base, constraints)
    scores = {}
    if prior_weight is None:
        folds = _folds(blocks)
        scores = {lam: _held_out_score(problem, folds, lam) for lam in PRIOR_WEIGHTS}
        if not np.isfinite(min(scores.values())):
            raise IdentError('pc-wls: the solver failed for every prior weight '
                             f'{", ".join(f"{lam:g}" for lam in PRIOR_WEIGHTS)}')
        prior_weight = min(scores, key=scores.get)
    r, rhs = _stacked(blocks)
    chi = problem.solve(r, rhs, prior_weight)
    beta = base.project(chi)
    if constraints.has_user_bounds():
        _check_user_bounds(base, constraints, r, rhs, prior_weight, beta)
    sigma = residual_deviation(w, tau, beta, equation_counts(w, mask), mask)
    return ConsistentEstimate('pc-wls', beta, wls.covariance, sigma, wls.condition_number,
                              wls.samples, standard=chi, prior_weight=float(prior_weight),
                              prior_weight_scores=scores)


def _check_user_bounds(base, constraints, r, rhs, prior_weight, beta) -> None:
    """Warn when the user's bounds raise the weighted residual beyond chance: they contradict
    the data (e.g. a total mass far from the robot's)."""
    free = replace(constraints, total_mass=None, mass_range=None, com_boxes=None)
    beta_free = base.project(_ConvexProblem(base, free).solve(r, rhs, prior_weight))
    increase = float(np.sum((r @ beta - rhs) ** 2) - np.sum((r @ beta_free - rhs) ** 2))
    # deliberately lazy, and not scipy.stats (start-up time): the chi-square quantile as
    # scipy.stats.chi2.ppf computes it
    from scipy.special import gammaincinv

    limit = float(2 * gammaincinv(base.count / 2, BOUNDS_CONFIDENCE))
    if increase > limit:
        warnings.warn(f'pc-wls: total_mass, mass_tolerance or com_in_collision_box raise the '
                      f'weighted residual sum of squares by {increase:.4g} (more than the '
                      f'{100 * BOUNDS_CONFIDENCE:g} % chance level {limit:.4g}): they contradict '
                      'the data', DataWarning, stacklevel=4)


def _weighted_blocks(w, tau, weights, mask, count):
    """Per contiguous block of rows: R factor, ``Qᵀ tau`` and the residual norm² of ``[W|tau]``
    with each joint's rows weighted and the left-out ones zero."""
    nb = w.shape[2]
    out = []
    for rows in np.array_split(np.arange(len(w)), count):
        rows = slice(rows[0], rows[-1] + 1) if len(rows) else slice(0, 0)
        r = r_factor(w[rows], tau[rows], weights, None if mask is None else mask[rows])
        out.append((r[:nb, :nb], r[:nb, nb], float(r[nb, nb] ** 2)))
    return out


def _stacked(blocks):
    """R and ``Qᵀ tau`` of the union of blocks."""
    nb = len(blocks[0][1])
    a = np.vstack([np.column_stack([r, rhs]) for r, rhs, _ in blocks])
    r = np.linalg.qr(a, mode='r')
    return r[:nb, :nb], r[:nb, nb]


def _folds(blocks):
    """Per block: the block, and R and ``Qᵀ tau`` of the other blocks (its training set)."""
    return [(block, _stacked(blocks[:k] + blocks[k + 1:])) for k, block in enumerate(blocks)]


def _held_out_score(problem, folds, prior_weight) -> float:
    """Sum over blocks of the weighted residual² of the block, predicted by a fit on the others
    (inf if the solver fails)."""
    total = 0.0
    for (r_k, rhs_k, res_k), (r, rhs) in folds:
        try:
            beta = problem.base.project(problem.solve(r, rhs, prior_weight))
        except InputError:
            raise
        except IdentError:
            return float('inf')               # this weight is out of the solver's reach
        total += float(np.sum((r_k @ beta - rhs_k) ** 2)) + res_k
    return total


class _ConvexProblem:
    """The cvxpy problem, compiled once (DPP) and solved for several data and prior weights."""

    def __init__(self, base: BaseParameters, c: PhysicalConstraints):
        try:
            import cvxpy as cp
        except ImportError:
            raise InputError('pc-wls needs cvxpy and clarabel (pip install cvxpy clarabel); or '
                             'choose --estimator wls') from None

        self.base = base
        nb, p = base.count, len(base.standard_names)
        self.scaled_map = base.matrix() * c.scale   # beta = scaled_map @ z
        self.r = cp.Parameter((nb, p))              # R B diag(scale), normalised
        self.rhs = cp.Parameter(nb)
        self.weight = cp.Parameter(nonneg=True)
        self.mass_weight = cp.Parameter(nonneg=True)
        self.z = cp.Variable(p)                     # chi / scale: every unknown of order 1
        self.chi = cp.multiply(c.scale, self.z)
        basis = pseudo_inertia_basis().reshape(10, 16).T            # vec(J) = basis @ phi
        constraints, divergence, mass = [], 0, 0
        for i, (j0, m0) in enumerate(zip(c.prior_pseudo_inertias(), c.prior_masses())):
            j = cp.Variable((4, 4), symmetric=True)
            constraints += [cp.vec(j, order='C') == basis @ self.chi[10 * i:10 * i + 10],
                            j >> c.epsilon * j0]
            divergence += -cp.log_det(j) + cp.trace(np.linalg.inv(j0) @ j)
            if m0 > 0:
                mass += cp.square(self.chi[10 * i] / m0 - 1)
        constraints += _optional_constraints(self.chi, c)
        objective = (cp.sum_squares(self.r @ self.z - self.rhs)
                     + self.weight * divergence + self.mass_weight * mass)
        self.problem = cp.Problem(cp.Minimize(objective), constraints)

    def solve(self, r: np.ndarray, rhs: np.ndarray, weight: float) -> np.ndarray:
        """Standard parameters minimising the objective for one data set and prior weight."""
        import cvxpy as cp

        a = r @ self.scaled_map
        norm = max(float(np.sum(a ** 2)) / a.shape[1], np.finfo(float).tiny)
        self.r.value, self.rhs.value = a / np.sqrt(norm), rhs / np.sqrt(norm)
        self.weight.value = weight / norm
        self.mass_weight.value = MASS_PRIOR / norm
        try:
            with warnings.catch_warnings():        # status OPTIMAL_INACCURATE is accepted below
                warnings.simplefilter('ignore', UserWarning)
                try:
                    self.problem.solve(solver=cp.CLARABEL)
                except cp.SolverError:             # its KKT factorisation broke down
                    self.problem.solve(solver=cp.CLARABEL,
                                       static_regularization_constant=RETRY_REGULARIZATION)
        except cp.SolverError as exc:
            raise IdentError(f'pc-wls: the solver failed ({exc})') from None
        if self.problem.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            raise InputError('pc-wls: the physical-consistency constraints admit no solution; '
                             'check total_mass, mass_tolerance and com_in_collision_box')
        if self.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise IdentError(f'pc-wls: the solver stopped without a solution (status '
                             f'{self.problem.status})')
        return np.asarray(self.chi.value, dtype=float)


def _optional_constraints(chi, c: PhysicalConstraints) -> list:
    """Non-negative actuator terms, total mass, mass range, centre-of-mass boxes."""
    out = [chi[i] >= 0 for i in c.nonnegative]
    masses = chi[0:10 * c.link_count:10]
    if c.total_mass is not None:
        out.append(sum(masses[i] for i in range(c.link_count)) == c.total_mass)
    if c.mass_range is not None:
        out.append(masses >= c.mass_range[:, 0])
        bounded = np.flatnonzero(np.isfinite(c.mass_range[:, 1]))
        out += [masses[i] <= c.mass_range[i, 1] for i in bounded]
    for i, box in enumerate(c.com_boxes or []):
        if box is not None:
            h = chi[10 * i + 1:10 * i + 4]
            out += [h >= masses[i] * box[0], h <= masses[i] * box[1]]
    return out
