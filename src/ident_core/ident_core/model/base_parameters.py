"""Base (minimal) parameters by QR decomposition with column pivoting (docs/methods.md §2).

Method (payload_identification_2017 eq. (6)–(9); Gautier & Khalil 1990): stack the regressor
over random samples, drop the columns that are identically zero, split the rest by a
column-pivoted QR into independent columns ``W_b`` and dependent columns ``W_d = W_b K_d``. The
base parameters ``beta = chi_b + K_d chi_d`` are the only combinations that joint torques
identify, and ``tau = W_b beta``.

Rank decision: a pivot ``|R_ii|`` counts as non-zero when ``|R_ii| > tolerance · |R_00|``
(default tolerance 1e-8; the gap to the next pivot is reported as ``rank_gap``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .regressor import Regressor

DEFAULT_RANK_TOLERANCE = 1e-8
_COEFF_ZERO = 1e-9


@dataclass
class BaseParameters:
    """Mapping from the p standard parameters to the nb base parameters.

    Parameters
    ----------
    standard_names : list of str
        (p,) names of the standard (regressor) columns.
    independent : (nb,) ndarray of int
        Column indices of ``W_b``, ascending.
    dependent : (nd,) ndarray of int
        Column indices regrouped into the base parameters.
    k_d : (nb, nd) ndarray
        Regrouping coefficients, ``beta = chi[independent] + k_d @ chi[dependent]``.
    tolerance : float
        Relative rank tolerance used.
    rank_gap : float
        Smallest kept pivot / largest dropped pivot (inf if none was dropped).
    """

    standard_names: list[str]
    independent: np.ndarray
    dependent: np.ndarray
    k_d: np.ndarray
    tolerance: float = DEFAULT_RANK_TOLERANCE
    rank_gap: float = float('inf')

    @property
    def count(self) -> int:
        """Number of base parameters nb."""
        return len(self.independent)

    @property
    def names(self) -> list[str]:
        """(nb,) readable names: the independent column plus the regrouped ones, e.g.
        ``Izz2 + 0.0625·m3 - 0.25·mx3``."""
        out = []
        for row, col in enumerate(self.independent):
            terms = [self.standard_names[col]]
            for coeff, dep in zip(self.k_d[row], self.dependent):
                if abs(coeff) > _COEFF_ZERO:
                    sign = '-' if coeff < 0 else '+'
                    factor = '' if abs(abs(coeff) - 1) < _COEFF_ZERO else f'{abs(coeff):.4g}·'
                    terms.append(f'{sign} {factor}{self.standard_names[dep]}')
            out.append(' '.join(terms))
        return out

    def matrix(self) -> np.ndarray:
        """The projection onto the base parameters.

        Returns
        -------
        B : (nb, p) ndarray
            ``beta = B @ chi``.
        """
        b = np.zeros((self.count, len(self.standard_names)))
        b[np.arange(self.count), self.independent] = 1.0
        b[:, self.dependent] = self.k_d
        return b

    def project(self, chi: np.ndarray) -> np.ndarray:
        """Base parameters of standard parameters.

        Parameters
        ----------
        chi : (p,) ndarray
            Standard parameters, regressor column order.

        Returns
        -------
        beta : (nb,) ndarray
        """
        return self.matrix() @ chi

    def standard_parameters_near(self, beta: np.ndarray, prior: np.ndarray,
                                 scale: np.ndarray) -> np.ndarray:
        """The standard parameters closest to a prior that give these base parameters.

        ``chi = argmin ‖(chi − prior) / scale‖  subject to  B chi = beta``, in closed form
        ``chi = prior + S² Bᵀ (B S² Bᵀ)⁻¹ (beta − B prior)``, ``S = diag(scale)``.

        Parameters
        ----------
        beta : (nb,) ndarray
            Base parameters.
        prior : (p,) ndarray
            A-priori standard parameters.
        scale : (p,) ndarray
            Positive typical magnitude of each standard parameter.

        Returns
        -------
        chi : (p,) ndarray
            ``project(chi) == beta``; not necessarily physically consistent.
        """
        b = self.matrix()
        s2 = np.asarray(scale, dtype=float) ** 2
        gram = (b * s2) @ b.T
        return prior + s2 * (b.T @ np.linalg.solve(gram, beta - b @ prior))

    def single_column_base(self, column: int) -> int | None:
        """The base parameter that is one standard parameter alone.

        Parameters
        ----------
        column : int
            Standard parameter (regressor column) index.

        Returns
        -------
        int or None
            Index of the base parameter equal to that standard parameter, None if the
            parameter is regrouped with others or not identifiable.
        """
        hits = np.flatnonzero(self.independent == column)
        if not len(hits) or np.any(np.abs(self.k_d[hits[0]]) > _COEFF_ZERO):
            return None
        return int(hits[0])

    def to_dict(self) -> dict:
        """Plain types, the ``base_definition`` section of RESULT.yaml.

        Returns
        -------
        dict
            ``{tolerance, standard_names, independent, dependent, k_d}``.
        """
        return {'tolerance': self.tolerance, 'standard_names': list(self.standard_names),
                'independent': self.independent.tolist(), 'dependent': self.dependent.tolist(),
                'k_d': self.k_d.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> BaseParameters:
        """Inverse of ``to_dict``.

        Parameters
        ----------
        d : dict
            ``{tolerance, standard_names, independent, dependent, k_d}``.

        Returns
        -------
        BaseParameters
        """
        nb = len(d['independent'])
        return cls(list(d['standard_names']), np.array(d['independent'], dtype=int),
                   np.array(d['dependent'], dtype=int),
                   np.array(d['k_d'], dtype=float).reshape(nb, len(d['dependent'])),
                   float(d['tolerance']))


def random_samples(regressor: Regressor, count: int, rng: np.random.Generator) -> tuple:
    """Random states that reveal the structural rank of a regressor.

    Parameters
    ----------
    regressor : Regressor
        Its robot's limits bound the positions.
    count : int
        Number of samples M.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    q, qd, qdd : (M, n) ndarray
        q uniform within the joint limits (±π where a limit is missing), qd and qdd uniform
        in ±3 rad/s and rad/s².
    """
    robot = regressor.robot
    lo, hi = robot.finite_limits()
    q = rng.uniform(lo, hi, size=(count, robot.n))
    qd = rng.uniform(-3, 3, size=(count, robot.n))
    qdd = rng.uniform(-3, 3, size=(count, robot.n))
    return q, qd, qdd


def compute_base_parameters(regressor: Regressor, samples: int | None = None, seed: int = 0,
                            tolerance: float = DEFAULT_RANK_TOLERANCE) -> BaseParameters:
    """Find the base parameters of a regressor from random samples (docs/methods.md §2).

    Parameters
    ----------
    regressor : Regressor
        Its columns are the standard parameters.
    samples : int, optional
        Number of random configurations, default ``max(200, 4·p)``.
    seed : int
        Seed of the random generator; the structural rank does not depend on it.
    tolerance : float
        Relative rank tolerance on the QR pivots.

    Returns
    -------
    BaseParameters
        Independent columns in ascending column order.

    References
    ----------
    .. [1] Gautier M., Khalil W., "Direct calculation of minimum set of inertial parameters
       of serial robots", IEEE Transactions on Robotics and Automation 6(3):368–373, 1990,
       doi:10.1109/70.56655.
    """
    p = regressor.n_columns
    rng = np.random.default_rng(seed)
    y = regressor.compute(*random_samples(regressor, samples or max(200, 4 * p), rng))
    w = y.reshape(-1, p)
    norms = np.linalg.norm(w, axis=0)
    nonzero = np.flatnonzero(norms > tolerance * norms.max())
    _, r, perm = scipy.linalg.qr(w[:, nonzero], mode='economic', pivoting=True)
    pivots = np.abs(np.diag(r))
    rank = int(np.sum(pivots > tolerance * pivots[0]))
    gap = pivots[rank - 1] / pivots[rank] if rank < len(pivots) else float('inf')
    independent = _preferred_independent(w, nonzero, regressor.names, rank, tolerance)
    if independent is None:
        independent = nonzero[perm[:rank]]
    independent = np.sort(independent)
    dependent = np.setdiff1d(nonzero, independent)
    k_d = np.linalg.lstsq(w[:, independent], w[:, dependent], rcond=None)[0]
    k_d[np.abs(k_d) < _COEFF_ZERO] = 0.0
    return BaseParameters(regressor.names, independent, dependent, k_d,
                          tolerance, float(gap))


_PREFERENCE = ('Izz', 'Ixx', 'Ixy', 'Ixz', 'Iyz', 'mx', 'my', 'fv', 'fc', 'offset', 'Ia',
               'mz', 'Iyy', 'm')


def _preferred_independent(w, nonzero, names, rank, tolerance):
    """Independent columns chosen greedily in the classical order (Gautier's regrouping keeps
    ZZ, XX, XY, XZ, YZ, MX, MY and folds YY, MZ, M and rotor inertias of axes aligned with an
    earlier joint into them), so that base parameter names read as in the literature. Returns
    None if that order does not reveal the rank found by the pivoted QR."""
    def key(col):
        kind = names[col].rstrip('0123456789')
        return _PREFERENCE.index(kind) if kind in _PREFERENCE else len(_PREFERENCE)
    order = sorted(nonzero, key=lambda c: (int(names[c][len(names[c].rstrip('0123456789')):]),
                                           key(c)))
    _, r = scipy.linalg.qr(w[:, order] / np.linalg.norm(w[:, order], axis=0), mode='economic')
    diag = np.abs(np.diag(r))
    chosen = np.array(order)[diag > tolerance * diag.max()]
    return chosen if len(chosen) == rank else None
