"""Genetic algorithm with an optional simulated-annealing stage (SA-GA): a reusable, seeded,
box-bounded minimiser.

GA (patent_whole_robot_identification_2019, methods §4): the chromosome is the vector of
unknowns; a population evolves by selection, crossover and mutation over generations, the best
individuals survive unchanged (elitism) and the best individual is the answer.

SA-GA (stribeck_friction_sa_ga_2020 §3, methods §6): roulette selection, an adaptive crossover
rate that decreases and a mutation rate that increases with the generation, uniform crossover,
single-point mutation, then a very-fast-simulated-annealing (VFSA) perturbation of the best
individuals with Metropolis acceptance, cooling each generation, and elitism.

Both are ``GeneticSettings``; ``GeneticSettings.sa_ga()`` gives the paper's choice of operators.
The cost function may repair an individual (return ``(cost, repaired_x)``): the repaired genes
replace the original ones (Lamarckian repair); ``inf`` marks an individual that cannot be made
feasible.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .errors import InputError

SELECTIONS = ('tournament', 'roulette')


@dataclass(frozen=True)
class Annealing:
    """VFSA stage of SA-GA.

    Attributes:
        temperature: initial generating temperature (fraction of each gene's range).
        cooling: temperature factor per generation, in (0, 1).
        individuals: best individuals perturbed each generation.
        steps: perturbation trials per individual and generation.
    """

    temperature: float = 0.05
    cooling: float = 0.9
    individuals: int = 4
    steps: int = 2

    def __post_init__(self):
        if not (0 < self.temperature <= 1 and 0 < self.cooling < 1 and self.individuals >= 1
                and self.steps >= 1):
            raise InputError('annealing needs temperature in (0, 1], cooling in (0, 1), '
                             'individuals >= 1 and steps >= 1')


@dataclass(frozen=True)
class GeneticSettings:
    """Operators and sizes of the genetic algorithm.

    Attributes:
        population: individuals per generation.
        generations: generations after the initial population.
        elite: best individuals copied unchanged into the next generation.
        selection: ``tournament`` or ``roulette`` (fitness ``cost_max − cost``, as in SA-GA).
        tournament: tournament size.
        crossover: crossover probability at the first and at the last generation (linear in
            between; SA-GA decreases it).
        mutation: mutation probability per child at the first and the last generation (SA-GA
            increases it).
        mutation_genes: genes changed by one mutation (1: single-point mutation).
        mutation_scale: standard deviation of a mutation step, fraction of the gene's range,
            shrinking linearly to a tenth of it at the last generation.
        annealing: the VFSA stage, None for the plain GA.
        stall: stop after this many generations without improvement (0: never).
    """

    population: int = 40
    generations: int = 50
    elite: int = 2
    selection: str = 'tournament'
    tournament: int = 3
    crossover: tuple[float, float] = (0.9, 0.7)
    mutation: tuple[float, float] = (0.3, 0.5)
    mutation_genes: int = 0
    mutation_scale: float = 0.1
    annealing: Annealing | None = None
    stall: int = 0

    def __post_init__(self):
        if self.selection not in SELECTIONS:
            raise InputError(f'GA selection {self.selection!r} unknown (choose from '
                             f'{", ".join(SELECTIONS)})')
        if self.population < 4 or not 0 <= self.elite < self.population:
            raise InputError('GA population must be at least 4 and elite in [0, population)')
        if self.generations < 0 or self.tournament < 1 or self.mutation_scale <= 0 \
                or self.mutation_genes < 0 or self.stall < 0:
            raise InputError('GA generations, mutation_genes and stall must be >= 0, '
                             'tournament >= 1, mutation_scale > 0')
        for name in ('crossover', 'mutation'):
            rates = getattr(self, name)
            if len(rates) != 2 or not all(0 <= r <= 1 for r in rates):
                raise InputError(f'GA {name} must be two probabilities (first, last generation)')

    @classmethod
    def sa_ga(cls, **changes) -> 'GeneticSettings':
        """The operators of stribeck_friction_sa_ga_2020: roulette selection, decreasing
        crossover and increasing mutation rates, single-point mutation, VFSA stage."""
        base = cls(selection='roulette', crossover=(0.9, 0.6), mutation=(0.1, 0.3),
                   mutation_genes=1, annealing=Annealing())
        return replace(base, **changes)


@dataclass
class EvolutionResult:
    """Outcome of ``minimize``.

    Attributes:
        x: (d,) best individual (after repair). cost: its cost (inf: nothing feasible).
        generations: generations run. evaluations: cost function calls.
        history: (generations + 1,) best cost after each generation.
        stopped: ``generations``, ``stall`` or ``budget``.
    """

    x: np.ndarray
    cost: float
    generations: int
    evaluations: int
    history: list[float] = field(default_factory=list)
    stopped: str = 'generations'


CostFunction = Callable[[np.ndarray], 'float | tuple[float, np.ndarray]']


def minimize(cost: CostFunction, lower, upper, settings: GeneticSettings,
             rng: np.random.Generator, initial: np.ndarray | None = None,
             deadline: float | None = None,
             progress: Callable[[int, float], None] | None = None) -> EvolutionResult:
    """Minimise ``cost`` over the box ``[lower, upper]`` with the GA (or SA-GA).

    Args:
        cost: x (d,) → cost, or (cost, repaired x); ``inf`` for an infeasible individual.
        lower, upper: (d,) gene bounds, ``lower < upper``.
        settings: operators and sizes.
        rng: the only source of randomness (same seed, same result, unless the deadline cuts
            the run short).
        initial: (k, d) individuals to put in the first population (the rest is uniform).
        deadline: ``time.monotonic()`` after which no new generation starts.
        progress: called after each generation with (generation, best cost).

    Returns:
        The best individual found.

    Raises:
        InputError: bounds of different shapes or empty.
    """
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if lower.shape != upper.shape or lower.ndim != 1 or not np.all(lower < upper) \
            or not np.all(np.isfinite(lower) & np.isfinite(upper)):
        raise InputError('GA bounds must be two finite (d,) arrays with lower < upper')
    if initial is not None and np.atleast_2d(initial).shape[1] != len(lower):
        raise InputError(f'GA initial individuals must have {len(lower)} genes')
    engine = _Engine(cost, lower, upper, settings, rng)
    pop = engine.initial_population(initial)
    costs, pop = engine.evaluate_all(pop)
    history = [float(costs.min())]
    stopped, g, best_at = 'generations', 0, 0
    for g in range(1, settings.generations + 1):
        if deadline is not None and time.monotonic() > deadline:
            stopped, g = 'budget', g - 1
            break
        best = int(np.argmin(costs))
        best_x, best_cost = pop[best].copy(), costs[best]
        pop, costs = engine.generation(pop, costs, g)
        if costs.min() > best_cost:          # annealing accepted worse: the best so far stays
            worst = int(np.argmax(costs))
            pop[worst], costs[worst] = best_x, best_cost
        if costs.min() < history[-1]:
            best_at = g
        history.append(float(costs.min()))
        if progress:
            progress(g, history[-1])
        if settings.stall and g - best_at >= settings.stall:
            stopped = 'stall'
            break
    k = int(np.argmin(costs))
    return EvolutionResult(pop[k].copy(), float(costs[k]), g, engine.evaluations, history, stopped)


class _Engine:
    def __init__(self, cost, lower, upper, settings, rng):
        self.cost, self.lower, self.upper = cost, lower, upper
        self.span = upper - lower
        self.s, self.rng = settings, rng
        self.evaluations = 0
        self.acceptance_scale = 1.0

    def initial_population(self, initial) -> np.ndarray:
        pop = self.rng.uniform(self.lower, self.upper, size=(self.s.population, len(self.lower)))
        if initial is not None:
            seeds = np.clip(np.atleast_2d(initial), self.lower, self.upper)[:self.s.population]
            pop[:len(seeds)] = seeds
        return pop

    def evaluate(self, x) -> tuple[float, np.ndarray]:
        self.evaluations += 1
        out = self.cost(x)
        value, x = out if isinstance(out, tuple) else (out, x)
        value = float(value)
        return (value if math.isfinite(value) else math.inf), np.asarray(x, float)

    def evaluate_all(self, pop) -> tuple[np.ndarray, np.ndarray]:
        results = [self.evaluate(x) for x in pop]
        costs = np.array([c for c, _ in results])
        finite = costs[np.isfinite(costs)]
        if len(finite) > 1 and np.ptp(finite) > 0:
            self.acceptance_scale = float(np.std(finite))
        return costs, np.array([x for _, x in results])

    def generation(self, pop, costs, g) -> tuple[np.ndarray, np.ndarray]:
        s = self.s
        frac = g / max(s.generations, 1)
        pc = s.crossover[0] + (s.crossover[1] - s.crossover[0]) * frac
        pm = s.mutation[0] + (s.mutation[1] - s.mutation[0]) * frac
        order = np.argsort(costs, kind='stable')
        elite = pop[order[:s.elite]]
        children = []
        while len(children) < s.population - s.elite:
            p1, p2 = pop[self.select(costs)], pop[self.select(costs)]
            c1, c2 = self.crossover(p1, p2) if self.rng.random() < pc else (p1.copy(), p2.copy())
            children += [self.mutate(c, frac, pm) for c in (c1, c2)]
        child_costs, children = self.evaluate_all(np.array(children[:s.population - s.elite]))
        pop = np.vstack([elite, children])
        costs = np.concatenate([costs[order[:s.elite]], child_costs])
        if s.annealing is not None:
            self.anneal(pop, costs, g)
        return pop, costs

    def select(self, costs) -> int:
        if self.s.selection == 'roulette':
            finite = np.isfinite(costs)
            if not finite.any():
                return int(self.rng.integers(len(costs)))
            fitness = np.where(finite, costs[finite].max() - costs, 0.0)
            fitness = fitness + 1e-12 * finite
            return int(self.rng.choice(len(costs), p=fitness / fitness.sum()))
        picks = self.rng.integers(len(costs), size=self.s.tournament)
        return int(picks[np.argmin(costs[picks])])

    def crossover(self, p1, p2):
        """Uniform crossover with blending: each gene is ``β p1 + (1 − β) p2``, β ~ U(0, 1)."""
        beta = self.rng.random(len(p1))
        return beta * p1 + (1 - beta) * p2, (1 - beta) * p1 + beta * p2

    def mutate(self, x, frac, pm) -> np.ndarray:
        if self.rng.random() >= pm:
            return x
        d = len(x)
        count = self.s.mutation_genes or max(1, d // 10)
        genes = self.rng.choice(d, size=min(count, d), replace=False)
        step = self.s.mutation_scale * (1 - 0.9 * frac) * self.span[genes]
        x = x.copy()
        x[genes] += step * self.rng.standard_normal(len(genes))
        return np.clip(x, self.lower, self.upper)

    def anneal(self, pop, costs, g) -> None:
        """VFSA perturbation ``y = x + u (upper − lower)``,
        ``u = sgn(r − ½) T [(1 + 1/T)^|2r − 1| − 1]``, Metropolis acceptance
        ``exp(−Δ / (T · scale))``; T = temperature · cooling^g."""
        a = self.s.annealing
        temp = a.temperature * a.cooling ** g
        for k in np.argsort(costs, kind='stable')[:a.individuals]:
            for _ in range(a.steps):
                r = self.rng.random(len(pop[k]))
                u = np.sign(r - 0.5) * temp * ((1 + 1 / temp) ** np.abs(2 * r - 1) - 1)
                y = np.clip(pop[k] + u * self.span, self.lower, self.upper)
                cy, y = self.evaluate(y)
                delta = cy - costs[k] if math.isfinite(cy) else math.inf
                if delta <= 0 or (math.isfinite(delta) and self.rng.random()
                                  < math.exp(-delta / (temp * self.acceptance_scale))):
                    pop[k], costs[k] = y, cy
