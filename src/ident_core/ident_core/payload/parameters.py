"""An identified payload: its parameters, their covariance, physical consistency, and the mass,
centre of mass and inertia about it with standard deviations (docs/methods.md §11).

Every method ends with the same step: an unconstrained weighted least-squares estimate
``chi_hat`` with covariance ``C``. If it is not physically consistent (pseudo-inertia
``J(chi) ⪰ 0``, Wensing, Kim & Slotine 2018), it is replaced by the consistent parameters
nearest in the metric of the estimate,

    chi = argmin (chi − chi_hat)ᵀ C⁻¹ (chi − chi_hat)   subject to   J(chi) ⪰ 0,

which, for a payload block of a larger least-squares problem (the global method), is exactly the
constrained solution of the whole problem: the robot's parameters are free, and ``C⁻¹`` is their
Schur complement. The covariance stays that of the unconstrained estimate (an upper bound where
the constraint binds). A mass that is not positive is refused rather than projected: it means
no payload, or unloaded and loaded runs given the wrong way round.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import IdentError
from ..model.inertial import (
    inertia_matrix,
    mass_com_inertia,
    physically_consistent,
    pseudo_inertia_basis,
)
from .frame import PAYLOAD_NAMES

#: The static method estimates the mass and first moments only.
MASS_AND_FIRST_MOMENTS = 4


@dataclass
class PayloadEstimate:
    """A payload identified by one method.

    Parameters
    ----------
    method : str
        ``global``, ``torque-difference``, ``parameter-difference``, ``model`` or ``static``.
    frame : str
        The payload frame.
    values : (k,) ndarray
        ``chi_L`` (k = 10: ``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``, inertia about the
        frame origin) or its first k = 4 entries (mass and first moments) [kg, kg·m, kg·m²].
    covariance : (k, k) ndarray
        Of the unconstrained estimate.
    residual_std : (n,) ndarray
        Residual standard deviation per joint of the fit [N·m or N] (of the base parameters,
        for the parameter difference: empty).
    equations : int
        Joint equations (or base parameters, for the parameter difference) used.
    unexcited : list of str
        Payload parameters the data do not determine (not estimated).
    projected : bool
        The unconstrained estimate was not physically consistent and was projected.
    """

    method: str
    frame: str
    values: np.ndarray
    covariance: np.ndarray
    residual_std: np.ndarray
    equations: int
    unexcited: list[str] = field(default_factory=list)
    projected: bool = False

    @property
    def has_inertia(self) -> bool:
        """Whether the rotational inertia was estimated."""
        return len(self.values) == 10

    @property
    def mass(self) -> float:
        """[kg]."""
        return float(self.values[0])

    @property
    def com(self) -> np.ndarray:
        """(3,) centre of mass in the payload frame [m]."""
        return self.values[1:4] / self.values[0]

    @property
    def inertia(self) -> np.ndarray | None:
        """(3, 3) inertia about the centre of mass, payload-frame axes [kg·m²]; None if not
        estimated."""
        return mass_com_inertia(self.values)[2] if self.has_inertia else None

    @property
    def physically_consistent(self) -> bool:
        """Positive mass and, with an inertia, a positive semi-definite pseudo-inertia."""
        if not self.has_inertia:
            return self.mass > 0
        return physically_consistent(self.values)

    def std(self) -> dict:
        """Standard deviations of mass, centre of mass and inertia (first-order propagation of
        the covariance).

        Returns
        -------
        dict
            ``{'mass': float, 'com': (3,) ndarray, 'inertia': (3, 3) ndarray or None}``.
        """
        jac = _jacobian(_derived, self.values)
        var = np.einsum('ij,jk,ik->i', jac, self.covariance, jac)
        sd = np.sqrt(np.clip(var, 0.0, None))
        inertia = None
        if self.has_inertia:
            inertia = inertia_matrix(sd[4:])
        return {'mass': float(sd[0]), 'com': sd[1:4], 'inertia': inertia}


def consistent_payload(estimate: PayloadEstimate) -> PayloadEstimate:
    """The estimate, made physically consistent (module docstring).

    Parameters
    ----------
    estimate : PayloadEstimate
        Unconstrained.

    Returns
    -------
    PayloadEstimate
        The same if consistent; else projected (``projected`` True).

    Raises
    ------
    IdentError
        If the estimated mass is not positive (naming the method and the value), or the
        projection fails.
    """
    sd = np.sqrt(max(float(estimate.covariance[0, 0]), 0.0))
    if estimate.mass <= 0:
        raise IdentError(f'{estimate.method}: payload mass estimated at {estimate.mass:.4g} ± '
                         f'{sd:.2g} kg, not positive: no payload in the loaded runs, or '
                         'unloaded and loaded runs swapped?')
    if estimate.physically_consistent:
        return estimate
    values = _nearest_consistent(estimate.values, estimate.covariance)
    return PayloadEstimate(estimate.method, estimate.frame, values, estimate.covariance,
                           estimate.residual_std, estimate.equations, estimate.unexcited,
                           projected=True)


def _nearest_consistent(values: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """argmin (x − values)ᵀ C⁻¹ (x − values) s.t. J(x) ⪰ margin (cvxpy + Clarabel); unknowns
    scaled by their standard deviations, J by a length so that its entries compare."""
    try:
        import cvxpy as cp
    except ImportError:
        raise IdentError('the payload estimate is not physically consistent and projecting it '
                         'needs cvxpy and clarabel (pip install cvxpy clarabel)') from None
    s = np.sqrt(np.clip(np.diag(covariance), 1e-30, None))
    corr = covariance / np.outer(s, s)
    u = np.linalg.cholesky(np.linalg.inv(corr + 1e-12 * np.eye(len(s)))).T
    z = cp.Variable(len(values))
    x = cp.multiply(s, z)
    mass, second = values[0], values[4] + values[6] + values[9]
    length = np.sqrt(second / mass) if second > 0 else 0.1
    congruence = np.diag([1.0, 1.0, 1.0, length])
    basis = pseudo_inertia_basis().reshape(10, 16).T
    j = cp.reshape(basis @ x, (4, 4), order='C')
    scaled = congruence @ j @ congruence
    margin = 1e-9 * mass * length ** 2
    problem = cp.Problem(cp.Minimize(cp.sum_squares(u @ (z - values / s))),
                         [(scaled + scaled.T) / 2 >> margin * np.eye(4)])
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.SolverError as exc:
        raise IdentError(f'payload: the consistency projection failed ({exc})') from None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise IdentError(f'payload: the consistency projection failed (status {problem.status})')
    return np.asarray(x.value, dtype=float)


def _derived(values: np.ndarray) -> np.ndarray:
    """[m, c (3), then the 6 entries of the inertia about the COM] (or [m, c] for k = 4)."""
    m, com = values[0], values[1:4] / values[0]
    if len(values) == MASS_AND_FIRST_MOMENTS:
        return np.concatenate([[m], com])
    inertia = mass_com_inertia(values)[2]
    return np.concatenate([[m], com, inertia[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]])


def _jacobian(f, x: np.ndarray) -> np.ndarray:
    """Central-difference Jacobian; steps relative to each entry, or to the mass times a 0.1 m
    length for small ones."""
    typical = abs(x[0]) * np.array([1.0] + [0.1] * 3 + [0.01] * 6)[:len(x)]
    h = 1e-6 * np.maximum(np.abs(x), typical)
    cols = [(f(x + h[k] * e) - f(x - h[k] * e)) / (2 * h[k]) for k, e in enumerate(np.eye(len(x)))]
    return np.column_stack(cols)


def parameter_names(count: int) -> list[str]:
    """Names of the first ``count`` payload parameters.

    Parameters
    ----------
    count : int
        4 or 10.

    Returns
    -------
    list of str
    """
    return list(PAYLOAD_NAMES[:count])
