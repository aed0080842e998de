"""The excitation optimisation problem: genes ↔ finite Fourier series (methods §4, eq. (14)),
repair into the constraints, cost, and the dense final check.

Genes ``x`` (d = n (2N + 1)): ``a`` (n × N, row-major), then ``b`` (n × N), then ``q0`` (n),
model joint order; the chromosome of patent_whole_robot_identification_2019 (the sine/cosine
amplitudes) plus the offsets that methods §4 also optimises.

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
from ..fourier import FourierBasis, FourierTrajectory
from ..motion import CHECK_STEP
from ..robot_model import RobotModel
from .config import ExcitationConfig
from .constraints import Constraints
from .objective import BaseRegressorCriteria

CONSTRAINT_OVERSAMPLING = 2     # constraint samples per objective sample
BISECTION_STEPS = 6


class ExcitationProblem:
    """One excitation optimisation: robot, criteria, constraints, gene layout and bounds.

    Args:
        robot: the robot (joint order of the genes = model order).
        config: harmonics, period, objective, limits, collision, optimiser settings.

    Attributes:
        wf: rad/s. n, harmonics. dim: number of genes. lower, upper: (dim,) gene bounds.
        criteria: the base-regressor criteria. constraints: the constraint set.

    Raises:
        InputError: from the constraints set-up; ``start_at_rest`` with fewer than 2 harmonics.
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        config.validate()
        self.robot, self.config = robot, config
        self.n, self.harmonics = robot.n, config.harmonics
        if config.start_at_rest and self.harmonics < 2:
            raise ExcitationError(f'{config.source}: start_at_rest needs at least 2 harmonics')
        self.wf = 2 * math.pi / config.period
        self.dim = self.n * (2 * self.harmonics + 1)
        self.criteria = BaseRegressorCriteria(robot, config.spec)
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
        """Genes → (a (n, N), b (n, N), q0 (n,))."""
        k = self.n * self.harmonics
        return (x[:k].reshape(self.n, self.harmonics).copy(),
                x[k:2 * k].reshape(self.n, self.harmonics).copy(), x[2 * k:].copy())

    @staticmethod
    def pack(a, b, q0) -> np.ndarray:
        return np.concatenate([a.ravel(), b.ravel(), q0])

    def trajectory(self, x, name: str = 'excitation') -> FourierTrajectory:
        """The Fourier series of genes x (no repair)."""
        a, b, q0 = self.unpack(x)
        return FourierTrajectory(list(self.robot.joint_names), self.wf, q0, a, b,
                                 self.config.periods, name)

    def genes(self, trajectory: FourierTrajectory) -> np.ndarray:
        """Genes of a trajectory of this robot (rows reordered to the model order)."""
        order = self.robot.joint_order(trajectory.joint_names, f'trajectory {trajectory.name}')
        return self.pack(trajectory.a[order], trajectory.b[order], trajectory.q0[order])

    # repair and cost ------------------------------------------------------------------------
    def repair(self, x, basis: FourierBasis | None = None) \
            -> tuple[np.ndarray | None, str | None]:
        """Steps 1–3 of the module docstring on ``basis`` (default: the constraint grid).

        Returns:
            (repaired genes, None), or (None, description of the constraint that the
            motionless robot at q0 already violates).
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
        """Step 1 (``start_at_rest``): genes whose last harmonic makes qd(0) = qdd(0) = 0;
        other genes unchanged."""
        x = np.asarray(x, float)
        if not self.config.start_at_rest:
            return x
        a, b, q0 = self.unpack(x)
        l = np.arange(1, self.harmonics + 1)
        a[:, -1] = -a[:, :-1].sum(axis=1)
        b[:, -1] = -(b[:, :-1] @ l[:-1]) / l[-1]
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
        """q, qd, qdd (M, n) of genes x at the times of ``basis``."""
        a, b, q0 = self.unpack(x)
        f, qd, qdd = basis.motion(a, b)
        return q0 + f, qd, qdd

    def evaluate(self, x, basis: FourierBasis | None = None) -> dict:
        """{'cond', 'dopt'} of genes x (no repair) on ``basis`` (default: objective grid)."""
        return self.criteria.evaluate(*self.samples(x, basis or self.objective_basis))

    def cost(self, x) -> tuple[float, np.ndarray]:
        """(cost, repaired genes) for the optimisers: log(cond) or dopt of the repaired genes;
        inf if they cannot be repaired."""
        repaired, _ = self.repair(x)
        if repaired is None:
            return math.inf, np.asarray(x, float)
        return self.cost_of(self.evaluate(repaired)), repaired

    def cost_of(self, values: dict) -> float:
        """The optimised number of a criteria dict: log(cond) (the same optimum as cond, on a
        scale that selection and annealing can use) or dopt."""
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
        """Repair on the 1 ms grid and verify: the returned genes satisfy every constraint.

        Raises:
            ExcitationError: naming the constraint that cannot be met.
        """
        repaired, problem = self.repair(x, self.dense_basis)
        if repaired is None:
            raise ExcitationError(f'no feasible excitation: {problem}')
        violations = self.violations(repaired)
        if violations:
            raise ExcitationError('the excitation violates: ' + '; '.join(violations))
        return repaired

    def violations(self, x, basis: FourierBasis | None = None) -> list[str]:
        """Every constraint violated by genes x on ``basis`` (default: 1 ms grid), described;
        position, velocity and acceleration include the between-sample Taylor bound."""
        basis = basis or self.dense_basis
        a, b, _ = self.unpack(x)
        q, qd, qdd = self.samples(x, basis)
        bq, bv, ba = basis.taylor(a, b)
        lim = self.constraints.limits
        problems = []
        for i, j in enumerate(self.robot.joint_names):
            checks = (('position', min(q[:, i].min() - bq[i] - lim.lower[i],
                                       lim.upper[i] - q[:, i].max() - bq[i])),
                      ('velocity', lim.velocity[i] - np.abs(qd[:, i]).max() - bv[i]),
                      ('acceleration', lim.acceleration[i] - np.abs(qdd[:, i]).max() - ba[i]))
            problems += [f'joint {j}: {kind} limit exceeded by {-m:.3g}'
                         for kind, m in checks if m < -1e-9]
        dynamic = self.constraints.dynamic_violation(basis.t, q, qd, qdd)
        return problems + ([dynamic] if dynamic else [])

    def report(self, x) -> dict:
        """Objective values (objective grid) and constraint margins (1 ms grid) of genes x."""
        values = self.evaluate(x)
        return {'objectives': {'cond': values['cond'], 'dopt': values['dopt'],
                               'samples': self.config.samples,
                               'base_parameters': self.criteria.base.count},
                'margins': self.constraints.margins(self.dense_basis.t,
                                                    *self.samples(x, self.dense_basis))}
