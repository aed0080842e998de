"""Genetic algorithm with an optional simulated-annealing stage (SA-GA): a reusable, seeded,
box-bounded minimiser (docs/methods.md §6).

GA (patent_whole_robot_identification_2019): the chromosome is the vector of unknowns; a
population evolves by selection, crossover and mutation over generations, the best individuals
survive unchanged (elitism) and the best individual is the answer.

SA-GA (stribeck_friction_sa_ga_2020 §3): roulette selection, an adaptive crossover rate that
decreases and a mutation rate that increases with the generation, uniform crossover,
single-point mutation, then a very-fast-simulated-annealing (VFSA, Ingber 1989) perturbation of
the best individuals with Metropolis acceptance, cooling each generation, and elitism.

:class:`GeneticConfig` configures the GA; :class:`SAGAConfig` has the paper's operators as
defaults and adds the annealing stage. The cost function may repair an individual (return
``(cost, repaired_x)``): the repaired genes replace the original ones (Lamarckian repair);
``inf`` marks an individual that cannot be made feasible.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

import numpy as np
import pydantic
from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt

from ..errors import InputError
from ..schema import Schema

SELECTIONS = ('tournament', 'roulette')
Probability = Annotated[float, Field(ge=0, le=1)]
Rates = Annotated[tuple[Probability, Probability], Field(strict=False)]


class AnnealingConfig(Schema):
    """VFSA stage of SA-GA.

    Parameters
    ----------
    temperature : float
        Initial generating temperature, in (0, 1] (fraction of each gene's range).
    cooling : float
        Temperature factor per generation, in (0, 1).
    individuals : int
        Best individuals perturbed each generation.
    steps : int
        Perturbation trials per individual and generation.
    """

    temperature: float = Field(0.05, gt=0, le=1)
    cooling: float = Field(0.9, gt=0, lt=1)
    individuals: PositiveInt = 4
    steps: PositiveInt = 2


class GeneticConfig(Schema):
    """Operators and sizes of the genetic algorithm.

    Parameters
    ----------
    population : int
        Individuals per generation (at least 4).
    generations : int
        Generations after the initial population.
    elite : int
        Best individuals copied unchanged into the next generation, in [0, population).
    selection : {'tournament', 'roulette'}
        Parent selection; roulette uses the fitness ``cost_max − cost``.
    tournament : int
        Tournament size.
    crossover : (float, float)
        Crossover probability at the first and at the last generation (linear in between).
    mutation : (float, float)
        Mutation probability per child at the first and the last generation.
    mutation_genes : int
        Genes changed by one mutation (1: single-point mutation; 0: a tenth of the genes).
    mutation_scale : float
        Standard deviation of a mutation step as a fraction of the gene's range, shrinking
        linearly to a tenth of it at the last generation.
    stall : int
        Stop after this many generations without improvement (0: never).
    """

    population: int = Field(40, ge=4)
    generations: NonNegativeInt = 50
    elite: NonNegativeInt = 2
    selection: Literal[SELECTIONS] = 'tournament'
    tournament: PositiveInt = 3
    crossover: Rates = (0.9, 0.7)
    mutation: Rates = (0.3, 0.5)
    mutation_genes: NonNegativeInt = 0
    mutation_scale: PositiveFloat = 0.1
    stall: NonNegativeInt = 0

    @pydantic.model_validator(mode='after')
    def _elite_below_population(self):
        if self.elite >= self.population:
            raise ValueError(f'elite ({self.elite}) must be below the population '
                             f'({self.population})')
        return self


class SAGAConfig(GeneticConfig):
    """SA-GA: the operators of stribeck_friction_sa_ga_2020 by default, plus the VFSA stage.

    Parameters
    ----------
    selection : {'tournament', 'roulette'}
        Roulette.
    crossover : (float, float)
        Decreasing, 0.9 → 0.6.
    mutation : (float, float)
        Increasing, 0.1 → 0.3.
    mutation_genes : int
        1 (single-point mutation).
    annealing : AnnealingConfig
        The VFSA stage.
    """

    selection: Literal[SELECTIONS] = 'roulette'
    crossover: Rates = (0.9, 0.6)
    mutation: Rates = (0.1, 0.3)
    mutation_genes: NonNegativeInt = 1
    annealing: AnnealingConfig = AnnealingConfig()


@dataclass
class EvolutionResult:
    """Outcome of ``minimize``.

    Parameters
    ----------
    x : (d,) ndarray
        Best individual (after repair).
    cost : float
        Its cost (inf: nothing feasible).
    generations : int
        Generations run.
    evaluations : int
        Cost function calls.
    history : list of float
        (generations + 1,) best cost after each generation.
    stopped : {'generations', 'stall', 'budget'}
        Why the run ended.
    """

    x: np.ndarray
    cost: float
    generations: int
    evaluations: int
    history: list[float] = field(default_factory=list)
    stopped: str = 'generations'


CostFunction = Callable[[np.ndarray], 'float | tuple[float, np.ndarray]']


def minimize(cost: CostFunction, lower, upper, config: GeneticConfig,
             rng: np.random.Generator, initial: np.ndarray | None = None,
             deadline: float | None = None,
             progress: Callable[[int, float], None] | None = None) -> EvolutionResult:
    """Minimise a cost over a box with the GA (or the SA-GA).

    Parameters
    ----------
    cost : callable
        x (d,) → cost, or (cost, repaired x); ``inf`` for an infeasible individual.
    lower, upper : (d,) array_like
        Finite gene bounds, ``lower < upper``.
    config : GeneticConfig or SAGAConfig
        Operators and sizes; an ``SAGAConfig`` adds the annealing stage.
    rng : numpy.random.Generator
        The only source of randomness (same seed, same result, unless the deadline cuts the
        run short).
    initial : (k, d) ndarray, optional
        Individuals to put in the first population (the rest is uniform).
    deadline : float, optional
        ``time.monotonic()`` after which no new generation starts.
    progress : callable, optional
        Called after each generation with (generation, best cost).

    Returns
    -------
    EvolutionResult
        The best individual found.

    Raises
    ------
    InputError
        If the bounds have different shapes, are not finite or leave an empty box.

    References
    ----------
    .. [1] Ingber L., "Very fast simulated re-annealing", Mathematical and Computer Modelling
       12(8):967–973, 1989, doi:10.1016/0895-7177(89)90202-1.
    .. [2] Zhang T., Hu L., Zou Y., "Identification of improved friction model for robot based
       on hybrid genetic algorithm", Journal of Zhejiang University (Engineering Science)
       55(5):801–809, 2021, doi:10.3785/j.issn.1008-973X.2021.05.001 (SA-GA operators).
    """
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    if lower.shape != upper.shape or lower.ndim != 1 or not np.all(lower < upper) \
            or not np.all(np.isfinite(lower) & np.isfinite(upper)):
        raise InputError('GA bounds must be two finite (d,) arrays with lower < upper')
    if initial is not None and np.atleast_2d(initial).shape[1] != len(lower):
        raise InputError(f'GA initial individuals must have {len(lower)} genes')
    engine = _Engine(cost, lower, upper, config, rng)
    pop = engine.initial_population(initial)
    costs, pop = engine.evaluate_all(pop)
    history = [float(costs.min())]
    stopped, g, best_at = 'generations', 0, 0
    for g in range(1, config.generations + 1):
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
        if config.stall and g - best_at >= config.stall:
            stopped = 'stall'
            break
    k = int(np.argmin(costs))
    return EvolutionResult(pop[k].copy(), float(costs[k]), g, engine.evaluations, history, stopped)


class _Engine:
    def __init__(self, cost, lower, upper, config, rng):
        self.cost, self.lower, self.upper = cost, lower, upper
        self.span = upper - lower
        self.s, self.rng = config, rng
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
        if isinstance(s, SAGAConfig):
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
