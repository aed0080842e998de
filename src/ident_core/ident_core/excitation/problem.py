"""The excitation optimisation problem (docs/methods.md §6): genes ↔ finite Fourier series
(eq. (14)), repair into the constraints, cost, and the dense final check.

Genes ``x`` (d = n (2N + 1)): ``a`` (n × N, row-major), then ``b`` (n × N), then ``q0`` (n),
model joint order; the chromosome of patent_whole_robot_identification_2019 (the sine/cosine
amplitudes) plus the offsets that Swevers et al. (1997) also optimise.

Repair (every optimiser uses it):

1. with ``start_at_rest``, the last harmonic is set so that qd(0) = Σ_l a_l = 0 and
   qdd(0) = wf Σ_l l b_l = 0 (the series then starts and ends each period at rest);
2. per joint, the motion about q0 is scaled down just enough to fit the position range, the
   velocity and the acceleration limit, and q0 is shifted into the range. Samples are spaced h
   apart, so each sampled extreme is widened by the Taylor bound ``max|x''| h² / 8`` of the
   motion between samples: a trajectory repaired on a coarse grid satisfies these limits at
   every instant;
3. if a torque or collision constraint is violated on the grid, all amplitudes are scaled by
   the largest factor in [0, 1] (bisection) that satisfies them; if even the motionless robot
   at q0 violates them, the candidate is infeasible.
"""
from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..errors import ExcitationError
from ..model.robot import RobotModel
from ..motion.segments import CHECK_STEP
from .config import ExcitationConfig
from .constraints import Constraints
from .fourier import FourierBasis, FourierTrajectory
from .objective import BaseRegressorCriteria

CONSTRAINT_OVERSAMPLING = 2     # constraint samples per objective sample
BISECTION_STEPS = 6


class ExcitationProblem:
    """One excitation optimisation: robot, criteria, constraints, gene layout and bounds.

    Parameters
    ----------
    robot : RobotModel
        The robot (joint order of the genes = model order).
    config : ExcitationConfig
        Harmonics, period, objective, limits, collision, optimiser settings.

    Attributes
    ----------
    wf : float
        Base angular frequency [rad/s].
    n, harmonics : int
        Joints and harmonics N.
    dim : int
        Number of genes, ``n (2N + 1)``.
    lower, upper : (dim,) ndarray
        Gene bounds.
    criteria : BaseRegressorCriteria
        The base-regressor criteria.
    constraints : Constraints
        The constraint set.
    objective_basis, constraint_basis : FourierBasis
        The grids of the objective and of the repair.

    Raises
    ------
    InputError
        From the constraints set-up.
    ExcitationError
        If ``start_at_rest`` is asked with fewer than 2 harmonics.
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        self.robot, self.config = robot, config
        self.n, self.harmonics = robot.n, config.harmonics
        if config.start_at_rest and self.harmonics < 2:
            raise ExcitationError(f'{config.source}: start_at_rest needs at least 2 harmonics')
        self.wf = 2 * math.pi / config.period
        self.dim = self.n * (2 * self.harmonics + 1)
        self.criteria = BaseRegressorCriteria(robot, config.regressor)
        self.constraints = Constraints(robot, config)
        self.objective_basis = FourierBasis.over_period(self.wf, self.harmonics, config.samples)
        self.constraint_basis = FourierBasis.over_period(self.wf, self.harmonics,
                                                  CONSTRAINT_OVERSAMPLING * config.samples)
        self.lower, self.upper = self._bounds()

    def _bounds(self):
        lim, wl = self.constraints.limits, self.wf * np.arange(1, self.harmonics + 1)
        amp = np.minimum.reduce([np.broadcast_to(lim.velocity[:, None], (self.n, self.harmonics)),
                                 lim.acceleration[:, None] / wl[None, :],
                                 (lim.upper - lim.lower)[:, None] / 2 * wl[None, :]])
        amp = amp.ravel()
        return (np.concatenate([-amp, -amp, lim.lower]), np.concatenate([amp, amp, lim.upper]))

    # genes ----------------------------------------------------------------------------------
    def unpack(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Coefficients of genes.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.

        Returns
        -------
        a, b : (n, N) ndarray
        q0 : (n,) ndarray
        """
        k = self.n * self.harmonics
        return (x[:k].reshape(self.n, self.harmonics).copy(),
                x[k:2 * k].reshape(self.n, self.harmonics).copy(), x[2 * k:].copy())

    @staticmethod
    def pack(a, b, q0) -> np.ndarray:
        """Genes of coefficients (inverse of ``unpack``).

        Parameters
        ----------
        a, b : (n, N) ndarray
        q0 : (n,) ndarray

        Returns
        -------
        (dim,) ndarray
        """
        return np.concatenate([a.ravel(), b.ravel(), q0])

    def trajectory(self, x, name: str = 'excitation') -> FourierTrajectory:
        """The Fourier series of genes (no repair).

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.
        name : str
            Trajectory name.

        Returns
        -------
        FourierTrajectory
        """
        a, b, q0 = self.unpack(x)
        return FourierTrajectory(list(self.robot.joint_names), self.wf, q0, a, b,
                                 self.config.periods, name)

    def genes(self, trajectory: FourierTrajectory) -> np.ndarray:
        """Genes of a trajectory of this robot (rows reordered to the model order).

        Parameters
        ----------
        trajectory : FourierTrajectory

        Returns
        -------
        (dim,) ndarray

        Raises
        ------
        InputError
            If the trajectory names other joints than the robot's.
        """
        order = self.robot.joint_order(trajectory.joint_names, f'trajectory {trajectory.name}')
        return self.pack(trajectory.a[order], trajectory.b[order], trajectory.q0[order])

    # repair and cost ------------------------------------------------------------------------
    def repair(self, x, basis: FourierBasis | None = None) \
            -> tuple[np.ndarray | None, str | None]:
        """Steps 1–3 of the module docstring.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.
        basis : FourierBasis, optional
            Sample grid (default: the constraint grid).

        Returns
        -------
        repaired : (dim,) ndarray or None
            The repaired genes, None when even the motionless robot at q0 violates a
            constraint.
        problem : str or None
            That constraint, described.
        """
        basis = basis or self.constraint_basis
        a, b, q0 = self.unpack(self.project(x))
        a, b, q0 = self._fit_box(a, b, q0, basis)
        if self.constraints.effort is None and self.constraints.collision is None:
            return self.pack(a, b, q0), None
        problem = self._dynamic(a, b, q0, 1.0, basis)
        if problem is None:
            return self.pack(a, b, q0), None
        still = self._dynamic(a, b, q0, 0.0, basis)
        if still is not None:
            return None, still
        lo, hi = 0.0, 1.0
        for _ in range(BISECTION_STEPS):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self._dynamic(a, b, q0, mid, basis) is None else (lo, mid)
        return self.pack(a * lo, b * lo, q0), None

    def project(self, x) -> np.ndarray:
        """Step 1 (``start_at_rest``): the last harmonic makes qd(0) = qdd(0) = 0.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.

        Returns
        -------
        (dim,) ndarray
            The projected genes (unchanged without ``start_at_rest``).
        """
        x = np.asarray(x, float)
        if not self.config.start_at_rest:
            return x
        a, b, q0 = self.unpack(x)
        order = np.arange(1, self.harmonics + 1)
        a[:, -1] = -a[:, :-1].sum(axis=1)
        b[:, -1] = -(b[:, :-1] @ order[:-1]) / order[-1]
        return self.pack(a, b, q0)

    def _fit_box(self, a, b, q0, basis):
        lim = self.constraints.limits
        f, qd, qdd = basis.motion(a, b)
        bq, bv, ba = basis.taylor(a, b)
        fmin, fmax = f.min(0) - bq, f.max(0) + bq
        tiny = 1e-12
        scale = np.minimum.reduce([np.ones(self.n),
                                   (lim.upper - lim.lower) / np.maximum(fmax - fmin, tiny),
                                   lim.velocity / np.maximum(np.abs(qd).max(0) + bv, tiny),
                                   lim.acceleration / np.maximum(np.abs(qdd).max(0) + ba, tiny)])
        scale *= 1 - 1e-9
        q0 = np.clip(q0, lim.lower - scale * fmin, lim.upper - scale * fmax)
        return a * scale[:, None], b * scale[:, None], q0

    def _dynamic(self, a, b, q0, scale, basis) -> str | None:
        f, qd, qdd = basis.motion(a * scale, b * scale)
        return self.constraints.dynamic_violation(basis.t, q0 + f, qd, qdd)

    def samples(self, x, basis: FourierBasis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Motion of genes on a grid.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.
        basis : FourierBasis
            The grid.

        Returns
        -------
        q, qd, qdd : (M, n) ndarray
        """
        a, b, q0 = self.unpack(x)
        f, qd, qdd = basis.motion(a, b)
        return q0 + f, qd, qdd

    def evaluate(self, x, basis: FourierBasis | None = None) -> dict:
        """Both criteria of genes (no repair).

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.
        basis : FourierBasis, optional
            Sample grid (default: the objective grid).

        Returns
        -------
        dict
            ``{'cond', 'dopt'}`` (``BaseRegressorCriteria.evaluate``).
        """
        return self.criteria.evaluate(*self.samples(x, basis or self.objective_basis))

    def cost_of(self, values: dict) -> float:
        """The optimised number of a criteria dict.

        Parameters
        ----------
        values : dict
            ``{'cond', 'dopt'}``.

        Returns
        -------
        float
            log(cond) (the same optimum as cond, on a scale that selection and annealing can
            use) or dopt.
        """
        if self.config.objective == 'cond':
            return math.log(values['cond'])
        return values['dopt']

    # final check ---------------------------------------------------------------------------
    @cached_property
    def dense_basis(self) -> FourierBasis:
        """Samples every ``CHECK_STEP`` (1 ms) over one period."""
        t = np.arange(0.0, 2 * math.pi / self.wf, CHECK_STEP)
        return FourierBasis.at(self.wf, self.harmonics, t, CHECK_STEP)

    def finalize(self, x) -> np.ndarray:
        """Repair on the 1 ms grid and verify.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.

        Returns
        -------
        (dim,) ndarray
            Genes that satisfy every constraint at every instant.

        Raises
        ------
        ExcitationError
            Naming the constraint that cannot be met.
        """
        repaired, problem = self.repair(x, self.dense_basis)
        if repaired is None:
            raise ExcitationError(f'no feasible excitation: {problem}')
        violations = self.violations(repaired)
        if violations:
            raise ExcitationError('the excitation violates: ' + '; '.join(violations))
        return repaired

    def violations(self, x, basis: FourierBasis | None = None) -> list[str]:
        """Every constraint violated by genes, described.

        Position, velocity and acceleration include the between-sample Taylor bound.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.
        basis : FourierBasis, optional
            Sample grid (default: the 1 ms grid).

        Returns
        -------
        list of str
            Empty when the genes satisfy every constraint.
        """
        basis = basis or self.dense_basis
        a, b, _ = self.unpack(x)
        q, qd, qdd = self.samples(x, basis)
        problems = self.constraints.limits.violations(basis.t, q, qd, qdd,
                                                      slack=basis.taylor(a, b))
        dynamic = self.constraints.dynamic_violation(basis.t, q, qd, qdd)
        return problems + ([dynamic] if dynamic else [])

    def report(self, x) -> dict:
        """Objective values and constraint margins of genes.

        Parameters
        ----------
        x : (dim,) ndarray
            Genes.

        Returns
        -------
        dict
            ``objectives`` {cond, dopt, samples, base_parameters} on the objective grid and
            ``margins`` (``Constraints.margins``) on the 1 ms grid.
        """
        values = self.evaluate(x)
        return {'objectives': {'cond': values['cond'], 'dopt': values['dopt'],
                               'samples': self.config.samples,
                               'base_parameters': self.criteria.base.count},
                'margins': self.constraints.margins(self.dense_basis.t,
                                                    *self.samples(x, self.dense_basis))}
