"""Optimisers of the excitation trajectory (docs/methods.md §6).

* ``random``: best of N random feasible coefficient sets (scara_kalman_torque_estimation_2018:
  random coefficients "within a range found by experience and trials" that satisfy the
  constraints, keep the smallest condition number); the baseline. Each candidate draws its
  coefficients uniformly in the gene box and q0 uniformly within the limits; the range is found
  by trials: all coefficients are halved until every constraint holds (at most 12 times).
* ``random-repair``: the same draws repaired instead (per-joint scaling and q0 shift): a
  stronger baseline that shows what the repair alone gives.
* ``ga``: the genetic algorithm of patent_whole_robot_identification_2019
  (``optim.evolution``, settings ``optimizer.ga``).
* ``sa-ga``: the simulated-annealing hybrid GA of stribeck_friction_sa_ga_2020 with the paper's
  operators (``OptimizerConfig.sa_ga``: sizes of ``optimizer.ga``, ``optimizer.annealing``).
* ``ga+local`` / ``sa-ga+local``: then a gradient-based refinement of the best individual,
  ``scipy.optimize.minimize`` (SLSQP) with the position, velocity and acceleration limits on the
  constraint grid as linear constraints and, if checked, the nominal torques as nonlinear
  constraints (Jacobian from Pinocchio's RNEA derivatives). Collision is not a constraint of the
  local step: its result goes through the same repair as every candidate, and is kept only if it
  is better than the GA's answer.

Every answer passes ``ExcitationProblem.finalize`` (repair and check on a 1 ms grid), so it is
feasible, or the run fails with ``ExcitationError`` naming the constraint.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin
import scipy.optimize

from ..errors import ExcitationError, InputError
from ..model.robot import configuration
from ..optim.evolution import minimize as evolve
from .fourier import FourierTrajectory
from .problem import ExcitationProblem

OPTIMIZERS = ('random', 'random-repair', 'ga', 'ga+local', 'sa-ga', 'sa-ga+local')
GA_SHARE = 0.7          # of the budget for the GA when a local refinement follows
LOCAL_SHARE = 0.9       # the local refinement ends by this fraction of the budget
HALVINGS = 12


@dataclass
class ExcitationResult:
    """Outcome of ``optimize_excitation``.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The feasible Fourier series (extra: objectives, margins, urdf_sha256, ...).
    objectives : dict
        ``{'cond', 'dopt', ...}``.
    margins : dict
        Constraint margins (``Constraints.margins``).
    stages : list of dict
        Per stage ``{'name', 'cost', 'cond', 'dopt', 'seconds', 'evaluations', ...}``.
    seconds : float
        Wall-clock time of the whole run [s].
    """

    trajectory: FourierTrajectory
    objectives: dict
    margins: dict
    stages: list = field(default_factory=list)
    seconds: float = 0.0


class _Deadline(Exception):
    pass


def optimize_excitation(problem: ExcitationProblem, optimizer: str = 'ga+local', seed: int = 0,
                        budget: float = 120.0, progress=None,
                        name: str = 'optimized_excitation') -> ExcitationResult:
    """Find a feasible excitation trajectory that minimises the configured objective.

    Parameters
    ----------
    problem : ExcitationProblem
        Robot, criteria, constraints and settings.
    optimizer : str
        One of ``OPTIMIZERS``.
    seed : int
        Seed of the only random generator (same seed, same result as long as the budget does
        not cut a stage short).
    budget : float
        Wall-clock budget [s]; the GA stops starting generations at 70 % of it (100 % without a
        local step), the local step stops at 90 %, the final 1 ms check follows.
    progress : callable, optional
        ``progress(stage: str, done: int, total: int, best_cost: float)``.
    name : str
        Trajectory name.

    Returns
    -------
    ExcitationResult
        Its trajectory satisfies every constraint on a 1 ms grid.

    Raises
    ------
    InputError
        For an unknown optimizer or a non-positive budget.
    ExcitationError
        If no candidate is feasible, naming the constraint that failed most often.
    """
    if optimizer not in OPTIMIZERS:
        raise InputError(f'optimizer {optimizer!r} unknown (choose from {", ".join(OPTIMIZERS)})')
    if not budget > 0:
        raise InputError(f'budget must be positive, got {budget}')
    start = time.monotonic()
    rng = np.random.default_rng(seed)
    stages = []
    local = optimizer.endswith('+local')
    if optimizer.startswith('random'):
        x = _random(problem, rng, start + budget, progress, stages, optimizer == 'random-repair')
    else:
        share = GA_SHARE if local else 1.0
        x = _genetic(problem, optimizer.startswith('sa-ga'), rng, start + share * budget,
                     progress, stages)
    if local:
        x = _local(problem, x, start + LOCAL_SHARE * budget, progress, stages)
    x = problem.finalize(x)
    report = problem.report(x)
    seconds = time.monotonic() - start
    trajectory = problem.trajectory(x, name)
    trajectory.extra.update({
        'source': f'robot-ident excite --optimizer {optimizer} --objective '
                  f'{problem.config.objective} --seed {seed} ({problem.config.source})',
        'objectives': report['objectives'], 'margins': report['margins'],
        'urdf_sha256': problem.robot.urdf_sha256()})
    return ExcitationResult(trajectory, report['objectives'], report['margins'], stages, seconds)


def _stage(stages, name, problem, x, cost, t0, evaluations, **more) -> None:
    values = problem.evaluate(x)
    stages.append({'name': name, 'cost': float(cost), 'cond': values['cond'],
                   'dopt': values['dopt'], 'seconds': time.monotonic() - t0,
                   'evaluations': int(evaluations), **more})


class _Failures:
    """Counts why candidates could not be repaired, for the error message."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.example: dict[str, str] = {}

    def add(self, description: str) -> None:
        key = description.split(':')[0]
        self.counts[key] = self.counts.get(key, 0) + 1
        self.example.setdefault(key, description)

    def error(self, tried: int, what: str) -> ExcitationError:
        if not self.counts:
            return ExcitationError(f'no feasible excitation among {tried} candidates')
        worst = max(self.counts, key=self.counts.get)
        return ExcitationError(
            f'no feasible excitation among {tried} candidates: {what}; most often '
            f'{worst} ({self.counts[worst]} of {tried}), e.g. {self.example[worst]}')


AT_REST = 'even at rest at its offset q0, every candidate violates a torque or collision limit'


def _random(problem, rng, deadline, progress, stages, repair: bool) -> np.ndarray:
    t0 = time.monotonic()
    total = problem.config.optimizer.random.candidates
    failures, best, best_cost, feasible = _Failures(), None, math.inf, 0
    tried = 0
    k = problem.n * problem.harmonics * 2
    while feasible < total and tried < 50 * total and time.monotonic() <= deadline:
        tried += 1
        x = rng.uniform(problem.lower, problem.upper)
        repaired, why = problem.repair(x) if repair else _halve_until_feasible(problem, x, k)
        if repaired is None:
            failures.add(why)
            continue
        feasible += 1
        cost = problem.cost_of(problem.evaluate(repaired))
        if cost < best_cost:
            best, best_cost = repaired, cost
        if progress:
            progress('random', feasible, total, best_cost)
    if best is None:
        raise failures.error(tried, AT_REST if repair else
                             f'every random candidate still violates a constraint after '
                             f'{HALVINGS} halvings of its coefficients')
    _stage(stages, 'random', problem, best, best_cost, t0, tried, feasible=feasible)
    return best


def _halve_until_feasible(problem, x, k):
    x = problem.project(x)
    for _ in range(HALVINGS + 1):
        problems = problem.violations(x, problem.constraint_basis)
        if not problems:
            return x, None
        x[:k] /= 2
    return None, problems[0]


def _genetic(problem, annealing, rng, deadline, progress, stages) -> np.ndarray:
    t0 = time.monotonic()
    optimizer = problem.config.optimizer
    settings = optimizer.sa_ga() if annealing else optimizer.ga
    failures = _Failures()

    def cost(x):
        repaired, why = problem.repair(x)
        if repaired is None:
            failures.add(why)
            return math.inf, x
        return problem.cost_of(problem.evaluate(repaired)), repaired

    report = (lambda g, c: progress('sa-ga' if annealing else 'ga', g, settings.generations, c)) \
        if progress else None
    result = evolve(cost, problem.lower, problem.upper, settings, rng, deadline=deadline,
                    progress=report)
    if not math.isfinite(result.cost):
        raise failures.error(result.evaluations, AT_REST)
    _stage(stages, 'sa-ga' if annealing else 'ga', problem, result.x, result.cost, t0,
           result.evaluations, generations=result.generations, stopped=result.stopped)
    return result.x


def _local(problem, x0, deadline, progress, stages) -> np.ndarray:
    """SLSQP from x0 in genes scaled to [0, 1]; returns the better of x0 and the repaired
    local optimum."""
    t0 = time.monotonic()
    span = problem.upper - problem.lower
    lo = problem.lower
    to_x = lambda z: lo + z * span                                     # noqa: E731
    cost0 = problem.cost_of(problem.evaluate(x0))
    count, last = [0, 0], [np.clip((x0 - lo) / span, 0, 1)]

    def objective(z):
        if time.monotonic() > deadline:
            raise _Deadline
        count[0] += 1
        value = problem.cost_of(problem.evaluate(to_x(z)))
        return value if math.isfinite(value) else 1e6

    def remember(z):
        last[0], count[1] = z.copy(), count[1] + 1
        if progress:
            progress('local', count[1], problem.config.optimizer.local.iterations, math.nan)

    constraints = [_box_rows(problem, span, lo)]
    if problem.constraints.effort is not None:
        constraints.append(_torque_rows(problem, span, lo))
    stopped = 'converged'
    try:
        res = scipy.optimize.minimize(objective, last[0], method='SLSQP', bounds=[(0, 1)] * len(lo),
                                      constraints=constraints, callback=remember,
                                      options={'maxiter': problem.config.optimizer.local.iterations,
                                               'eps': 1e-6, 'ftol': 1e-6})
        z = res.x
        stopped = 'converged' if res.success else res.message
    except _Deadline:
        z, stopped = last[0], 'budget'
    candidate, _ = problem.repair(to_x(z))
    cost = problem.cost_of(problem.evaluate(candidate)) if candidate is not None else math.inf
    kept = cost < cost0
    best = candidate if kept else x0
    _stage(stages, 'local', problem, best, min(cost, cost0), t0, count[0], stopped=str(stopped),
           improved=bool(kept))
    return best


def _box_rows(problem, span, lo) -> scipy.optimize.LinearConstraint:
    """Position, velocity and acceleration limits on the objective grid, linear in the genes:
    rows ``x_i(t_k)`` for every joint, kind and sample."""
    basis, n, N = problem.objective_basis, problem.n, problem.harmonics
    lim = problem.constraints.limits
    bounds = ((1.0, lim.lower, lim.upper), (0.0, -lim.velocity, lim.velocity),
              (0.0, -lim.acceleration, lim.acceleration))
    rows, lower, upper = [], [], []
    m = len(basis.t)
    for (pa, pb), (offset, lo_lim, hi_lim) in zip(basis.matrices, bounds):
        for i in range(n):
            block = np.zeros((m, problem.dim))
            block[:, i * N:(i + 1) * N] = pa
            block[:, n * N + i * N:n * N + (i + 1) * N] = pb
            block[:, 2 * n * N + i] = offset
            rows.append(block)
            lower.append(np.full(m, lo_lim[i]))
            upper.append(np.full(m, hi_lim[i]))
    a = np.vstack(rows)
    # x = lo + z * span  →  A x = A lo + (A * span) z
    shift = a @ lo
    return scipy.optimize.LinearConstraint(a * span, np.concatenate(lower) - shift,
                                           np.concatenate(upper) - shift)


def _torque_rows(problem, span, lo) -> scipy.optimize.NonlinearConstraint:
    """|tau(t_k)| <= effort on the objective grid, Jacobian by the chain rule through
    ``pin.computeRNEADerivatives``."""
    basis, n, N = problem.objective_basis, problem.n, problem.harmonics
    model, data = problem.robot.model, problem.robot.model.createData()
    effort = problem.constraints.effort
    (dq_da, dq_db), (dv_da, dv_db), (dacc_da, dacc_db) = basis.matrices

    def fun(z):
        return (problem.constraints.torques(*problem.samples(lo + z * span, basis))
                / effort).ravel()

    def jac(z):
        q, qd, qdd = problem.samples(lo + z * span, basis)
        x = configuration(model, q)
        out = np.zeros((len(q), n, problem.dim))
        for k in range(len(q)):
            dtq, dtv, dta = pin.computeRNEADerivatives(model, data, x[k], qd[k], qdd[k])
            for i in range(n):
                cols_a = slice(i * N, (i + 1) * N)
                cols_b = slice(n * N + i * N, n * N + (i + 1) * N)
                out[k, :, cols_a] = (np.outer(dtq[:, i], dq_da[k]) + np.outer(dtv[:, i], dv_da[k])
                                     + np.outer(dta[:, i], dacc_da[k]))
                out[k, :, cols_b] = (np.outer(dtq[:, i], dq_db[k]) + np.outer(dtv[:, i], dv_db[k])
                                     + np.outer(dta[:, i], dacc_db[k]))
                out[k, :, 2 * n * N + i] = dtq[:, i]
        return (out / effort[None, :, None]).reshape(-1, problem.dim) * span

    return scipy.optimize.NonlinearConstraint(fun, -1.0, 1.0, jac=jac)
