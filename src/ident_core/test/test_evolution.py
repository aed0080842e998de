"""The seeded GA / SA-GA box minimiser (ident_core.optim.evolution) on closed-form functions.

Known minima: the shifted sphere ``Σ (x − c)²`` (minimum 0 at c) and the 2-D Rastrigin function
``20 + Σ x² − 10 cos 2πx`` (global minimum 0 at the origin, local minima about 1 apart with
values ≈ 1, 2, ...). A cost may repair an individual by returning ``(cost, x_repaired)``.
"""
import math
import time

import numpy as np
import pytest

from ident_core.errors import InputError
from ident_core.optim.evolution import AnnealingConfig, GeneticConfig, SAGAConfig, minimize

CENTRE = np.array([0.7, -1.3, 2.1, 0.0, -0.4])
LOWER5, UPPER5 = -np.full(5, 3.0), np.full(5, 3.0)


def sphere(x):
    return float(np.sum((x - CENTRE) ** 2))


def rastrigin(x):
    return float(20 + np.sum(x ** 2 - 10 * np.cos(2 * np.pi * x)))


GA = GeneticConfig(population=40, generations=120, elite=2)
SA_GA = SAGAConfig(population=40, generations=120, elite=2)


def run(cost, settings, seed, lower=LOWER5, upper=UPPER5, **kw):
    return minimize(cost, lower, upper, settings, np.random.default_rng(seed), **kw)


# --- convergence on closed-form minima -----------------------------------------------------------

@pytest.mark.parametrize('settings', [GA, SA_GA], ids=['ga', 'sa-ga'])
def test_shifted_sphere_minimum_is_found(settings):
    res = run(sphere, settings, seed=4)
    # within 0.05 per coordinate of the known minimiser; cost is the value at res.x
    np.testing.assert_allclose(res.x, CENTRE, rtol=0, atol=0.05)
    assert res.cost == pytest.approx(sphere(res.x), rel=1e-12)
    assert res.cost < 5e-3
    assert res.generations == settings.generations and res.stopped == 'generations'
    assert len(res.history) == settings.generations + 1
    # initial population + children of every generation (+ annealing trials for SA-GA)
    children = settings.population - settings.elite
    extra = 0
    if isinstance(settings, SAGAConfig):
        extra = settings.annealing.individuals * settings.annealing.steps * settings.generations
    assert res.evaluations == settings.population + children * settings.generations + extra


@pytest.mark.parametrize('settings', [GA, SA_GA], ids=['ga', 'sa-ga'])
def test_rastrigin_global_minimum_is_found(settings):
    lower, upper = np.full(2, -5.12), np.full(2, 5.12)
    res = run(rastrigin, settings, seed=2, lower=lower, upper=upper)
    # the nearest local minima are at |x| ≈ 1 with value ≈ 1: 0.1 separates them clearly
    np.testing.assert_allclose(res.x, 0.0, rtol=0, atol=0.02)
    assert res.cost < 0.1


@pytest.mark.parametrize('settings', [GA, SA_GA], ids=['ga', 'sa-ga'])
def test_same_seed_same_result_different_seed_different_history(settings):
    short = settings.updated(generations=30)
    a, b, c = (run(sphere, short, seed) for seed in (7, 7, 8))
    np.testing.assert_array_equal(a.x, b.x)
    assert a.history == b.history and a.cost == b.cost and a.evaluations == b.evaluations
    assert a.history != c.history
    assert not np.array_equal(a.x, c.x)


# --- elitism ------------------------------------------------------------------------------------

@pytest.mark.parametrize('settings', [
    GA, SA_GA,
    # hot annealing accepts many worse moves; elite 0 leaves only the best-so-far re-insertion
    SAGAConfig(population=10, generations=60, elite=0,
                          annealing=AnnealingConfig(temperature=0.5, cooling=0.99, individuals=10,
                                              steps=3)),
], ids=['ga', 'sa-ga', 'hot-sa-ga-no-elite'])
def test_best_cost_history_never_increases(settings):
    seen = []
    res = run(rastrigin, settings, seed=5, lower=np.full(2, -5.12), upper=np.full(2, 5.12),
              progress=lambda g, c: seen.append((g, c)))
    hist = np.array(res.history)
    assert np.all(np.diff(hist) <= 0), hist
    assert hist[-1] < hist[0]                         # it did improve
    assert res.cost == hist[-1]
    # progress reports every generation with the history's value
    assert seen == [(g, res.history[g]) for g in range(1, res.generations + 1)]


# --- repair (Lamarckian) ------------------------------------------------------------------------

def test_repairing_cost_returns_a_repaired_individual():
    """Constraint Σx = 1: the cost projects x onto that hyperplane and evaluates the sphere there.
    The constrained minimiser of Σ(x − c)² on Σx = 1 is c + (1 − Σc)/d."""
    d = len(CENTRE)
    calls = []

    def repaired_sphere(x):
        y = x + (1 - x.sum()) / d
        calls.append(y)
        return sphere(y), y

    res = run(repaired_sphere, GA, seed=3)
    assert res.x.sum() == pytest.approx(1.0, abs=1e-12)            # a repaired individual
    assert any(np.array_equal(res.x, y) for y in calls)             # one the cost returned
    expected = CENTRE + (1 - CENTRE.sum()) / d
    np.testing.assert_allclose(res.x, expected, rtol=0, atol=0.05)
    assert res.cost == pytest.approx(sphere(res.x), rel=1e-12)


def test_infeasible_individuals_are_avoided():
    """inf (or nan) marks an infeasible individual: the answer is a feasible one."""
    def cost(x):
        if x[0] < 1.0:
            return math.nan if x[1] < 0 else math.inf
        return sphere(x)

    res = run(cost, GA, seed=1)
    assert res.x[0] >= 1.0 and math.isfinite(res.cost)
    np.testing.assert_allclose(res.x, [1.0, *CENTRE[1:]], rtol=0, atol=0.05)


@pytest.mark.parametrize('settings', [GA, SA_GA], ids=['ga', 'sa-ga'])
def test_all_infeasible_gives_infinite_cost(settings):
    small = settings.updated(population=8, generations=5)
    res = run(lambda x: math.inf, small, seed=0)
    assert res.cost == math.inf
    assert res.x.shape == (5,)
    assert np.all(res.x >= LOWER5) and np.all(res.x <= UPPER5)
    assert res.history == [math.inf] * 6


# --- initial population, budget, stall ----------------------------------------------------------

def test_initial_individuals_are_used():
    res = run(sphere, GeneticConfig(population=10, generations=0), seed=0,
              initial=CENTRE[None, :])
    np.testing.assert_array_equal(res.x, CENTRE)
    assert res.cost == 0.0 and res.evaluations == 10 and res.generations == 0


def test_deadline_in_the_past_stops_after_the_initial_population():
    settings = GeneticConfig(population=12, generations=50)
    res = run(sphere, settings, seed=0, deadline=time.monotonic() - 1.0)
    assert res.stopped == 'budget'
    assert res.generations == 0
    assert res.evaluations == settings.population
    assert len(res.history) == 1 and res.cost == res.history[0]


def test_stall_stops_a_run_that_cannot_improve():
    settings = GeneticConfig(population=8, generations=100, stall=5)
    res = run(lambda x: 1.0, settings, seed=0)
    assert res.stopped == 'stall' and res.generations == 5
    assert len(res.history) == 6


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize('changes, words', [
    ({'selection': 'foo'}, 'selection'),
    ({'population': 2}, 'population'),
    ({'population': 10, 'elite': 10}, 'elite'),
    ({'generations': -1}, 'generations'),
    ({'tournament': 0}, 'tournament'),
    ({'mutation_scale': 0.0}, 'mutation_scale'),
    ({'crossover': (0.9, 1.5)}, 'crossover'),
    ({'mutation': (0.1,)}, 'mutation'),
], ids=['selection', 'population', 'elite', 'generations', 'tournament', 'mutation_scale',
        'crossover', 'mutation'])
def test_bad_settings_are_refused(changes, words):
    with pytest.raises(InputError, match=words):
        GeneticConfig(**changes)


@pytest.mark.parametrize('changes', [
    {'temperature': 0.0}, {'temperature': -0.05}, {'cooling': 0.0}, {'cooling': 1.5},
], ids=['zero-temperature', 'negative-temperature', 'zero-cooling', 'cooling-above-1'])
def test_bad_annealing_settings_are_refused(changes):
    """AnnealingConfig's documented ranges: temperature > 0, cooling in (0, 1). Refused when the
    settings are made or at the latest when minimize starts, never a crash mid-run."""
    with pytest.raises(InputError, match='temperature|cooling'):
        settings = SAGAConfig(population=6, generations=3,
                                         annealing=AnnealingConfig(**changes))
        minimize(sphere, LOWER5, UPPER5, settings, np.random.default_rng(0))


def test_negative_mutation_genes_are_refused():
    with pytest.raises(InputError, match='mutation_genes'):
        settings = GeneticConfig(population=6, generations=3, mutation=(1.0, 1.0),
                                   mutation_genes=-1)
        minimize(sphere, LOWER5, UPPER5, settings, np.random.default_rng(0))


@pytest.mark.parametrize('lower, upper', [
    (np.zeros(3), np.ones(2)),                     # shapes differ
    (np.ones(3), np.ones(3)),                      # empty box
    (np.array([0.0, 2.0]), np.array([1.0, 1.0])),  # lower > upper
    (np.zeros((2, 2)), np.ones((2, 2))),           # not (d,)
    (np.array([np.nan, 0.0]), np.ones(2)),         # NaN
    (np.array([-np.inf, 0.0]), np.ones(2)),        # unbounded: no uniform initial population
], ids=['shapes', 'empty', 'reversed', '2-d', 'nan', 'infinite'])
def test_bad_bounds_are_refused(lower, upper):
    with pytest.raises(InputError, match='bounds'):
        minimize(sphere, lower, upper, GA, np.random.default_rng(0))
