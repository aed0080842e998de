"""The shape of Stribeck friction in whole-robot identification, by variable projection
(separable least squares [1]_).

``identify_friction_shape`` finds the shape ``vs, v_l`` (and ``delta``) of every actuator that
minimises the residual the linear parameters leave: a grid and a pattern search, actuator by
actuator, then scipy's bounded ``least_squares`` or the SA-GA of ``optim.evolution`` [2]_. The
method, and why, is docs/methods.md §8.2, "Nonlinear friction in whole-robot identification".

References
----------
.. [1] Golub G. H., Pereyra V., "The differentiation of pseudo-inverses and nonlinear least
   squares problems whose variables separate", SIAM Journal on Numerical Analysis
   10(2):413–432, 1973, doi:10.1137/0710036.
.. [2] Zhang T., Hu L., Zou Y., "Identification of improved friction model for robot based on
   hybrid genetic algorithm", Journal of Zhejiang University (Engineering Science)
   55(5):801–809, 2021, doi:10.3785/j.issn.1008-973X.2021.05.001.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import scipy.linalg

from ..data.signal_processing import decimate_parallel
from ..model.base_parameters import BaseParameters
from ..model.regressor import Regressor
from .estimators import estimate
from .regression import filtered_sharp_columns, kept_rows, sharp_columns

#: Grid of vs as a fraction of each actuator's peak speed, and of v_l / vs.
VS_FRACTIONS = np.geomspace(0.003, 0.3, 12)
V_L_RATIOS = (0.1, 0.3, 0.9)
#: Passes of a coordinate descent over the actuators at most.
DESCENT_PASSES = 4
#: Smallest step of the pattern search in log shape (2 %), and its moves at most.
PATTERN_STEP = 0.02
PATTERN_MOVES = 100
#: Bounds of log(vs / peak speed), log(v_l / vs), log(delta).
LOG_BOUNDS = {'vs': (np.log(1e-3), np.log(1.0)), 'v_l': (np.log(0.01), np.log(1.0)),
              'delta': (np.log(0.3), np.log(5.0))}


def identify_friction_shape(regressor: Regressor, base: BaseParameters, processed: list,
                            stacked, config) -> tuple[dict[str, np.ndarray], object, dict]:
    """The Stribeck shape of every actuator that minimises the projected residual.

    Parameters
    ----------
    regressor : Regressor
        The identification regressor (a Stribeck friction model).
    base : BaseParameters
        Its base parameters.
    processed : list of Processed
        The preprocessed recordings.
    stacked : StackedRegression
        ``stack_processed`` of them with the regressor's current (nominal) shape.
    config : IdentificationConfig
        ``stribeck_exponent``, ``friction_search``, decimation.

    Returns
    -------
    shape : dict of str to (n,) ndarray
        ``vs``, ``delta``, ``v_l`` (improved model) per actuator.
    stacked : StackedRegression
        ``stacked`` with the Coulomb and Stribeck columns of that shape.
    statistics : dict
        ``friction_search`` (method, evaluations, residual before and after).
    """
    problem = _ShapeProblem(regressor, base, processed, stacked, config)
    x0, block = problem.start()
    before = problem.block_cost(block)
    if config.friction_search == 'sa-ga':
        # deliberately lazy: identify (imported by every entry point) loads the GA only here
        from ..optim.evolution import SAGAConfig, minimize

        lower, upper = problem.bounds
        result = minimize(problem.cost, lower, upper,
                          SAGAConfig(population=30, generations=40, stall=10),
                          np.random.default_rng(config.seed), initial=x0[None])
        x = result.x
    else:
        # deliberately lazy: scipy.optimize only for a friction shape search (start-up time)
        import scipy.optimize

        lower, upper = problem.bounds
        x = scipy.optimize.least_squares(problem.residual, np.clip(x0, lower, upper),
                                         bounds=(lower, upper), method='trf',
                                         diff_step=1e-3, x_scale=1.0, max_nfev=60).x
    shape = problem.shape(x)
    columns = problem.columns(shape)
    stats = {'friction_search': {'method': config.friction_search,
                                 'evaluations': problem.evaluations,
                                 'residual_start': before,
                                 'residual_final': problem.block_cost(problem.weighted(columns))}}
    w = stacked.w.copy()
    w[:, :, problem.sharp] = columns.reshape(w.shape[:2] + (-1,))
    return shape, dataclasses.replace(stacked, w=w), stats


class _ShapeProblem:
    """Projected residual over log shape parameters."""

    def __init__(self, regressor, base, processed, stacked, config):
        self.regressor, self.base, self.processed = regressor, base, processed
        self.config, self.factors = config, stacked.decimation
        self.sharp = sharp_columns(regressor, base)
        # the actuator of each sharp base column (``fc3`` → 2)
        self.owner = np.array([int(regressor.names[base.independent[i]][2:]) - 1
                               for i in self.sharp])
        other = [i for i in range(base.count) if i not in self.sharp]
        first = estimate(stacked.w, stacked.tau, 'wls', base.names, mask=stacked.mask)
        self.weights = (stacked.mask / first.sigma_joint).reshape(-1)
        fixed = stacked.w[:, :, other].reshape(-1, len(other)) * self.weights[:, None]
        self.q, _ = scipy.linalg.qr(fixed, mode='economic')
        self.y = self._project(stacked.tau.reshape(-1) * self.weights)
        self.n = regressor.robot.n
        self.terms = [t for t in regressor.spec.shape_terms
                      if not (t == 'delta' and config.stribeck_exponent is not None)]
        gear = regressor.gear
        self.peak = np.maximum(np.concatenate([np.abs(p.qd @ gear.T) for p in processed])
                               .max(0), 1e-3)
        self.evaluations = 0

    @property
    def bounds(self):
        lower, upper = [], []
        for t in self.terms:
            offset = np.log(self.peak) if t == 'vs' else np.zeros(self.n)
            lower += list(LOG_BOUNDS[t][0] + offset)
            upper += list(LOG_BOUNDS[t][1] + offset)
        return np.array(lower), np.array(upper)

    def shape(self, x) -> dict[str, np.ndarray]:
        values = dict(zip(self.terms, np.exp(np.asarray(x)).reshape(len(self.terms), self.n)))
        if 'v_l' in values:
            values['v_l'] = values['v_l'] * values['vs']
        if 'delta' not in values:
            values['delta'] = np.full(self.n, float(self.config.stribeck_exponent))
        return {k: values[k] for k in self.regressor.spec.shape_terms}

    def start(self) -> tuple[np.ndarray, np.ndarray]:
        """A grid of shapes, then a pattern search with halving steps, both actuator by
        actuator: the (len(terms)·n,) log shape that starts the search proper, and its
        ``block``."""
        grid = [self._log({'vs': fraction * self.peak, 'v_l': np.full(self.n, ratio),
                           'delta': np.full(self.n, 2.0)})
                for fraction in VS_FRACTIONS for ratio in V_L_RATIOS]
        x, block = self._descend(grid, [self.block(g) for g in grid], shared=True)
        lower, upper = self.bounds
        step = np.log(VS_FRACTIONS[1] / VS_FRACTIONS[0])
        for _ in range(PATTERN_MOVES):
            if step <= PATTERN_STEP:
                break
            moves = [np.clip(x + step * np.repeat(d, self.n), lower, upper)
                     for d in self._directions()]
            moved, block = self._descend([x] + moves, [block] + [self.block(m) for m in moves],
                                         shared=False)
            if np.array_equal(moved, x):
                step /= 2
            x = moved
        return x, block

    def _directions(self) -> list[np.ndarray]:
        """Moves of the pattern search in (terms,) log shape: along each term and along the
        diagonals of each pair (the valley of ``vs`` and ``v_l`` runs diagonally)."""
        k = len(self.terms)
        axes = [sign * e for e in np.eye(k) for sign in (-1, 1)]
        pairs = [a * np.eye(k)[i] + b * np.eye(k)[j] for i in range(k) for j in range(i + 1, k)
                 for a in (-1, 1) for b in (-1, 1)]
        return axes + pairs

    def _descend(self, points, blocks, shared: bool) -> tuple[np.ndarray, np.ndarray]:
        """Coordinate descent over actuators, each taking its shape from one of ``points``
        (from the best point shared by all, or from the first); ``blocks`` are their
        ``block``. Returns the combined point and its block.

        An actuator's Coulomb and Stribeck columns depend on its own shape only: the residual
        of any combination follows from the Gram matrix of the blocks."""
        k = len(self.sharp)
        columns = np.concatenate(blocks, axis=1)
        gram, projection = columns.T @ columns, columns.T @ self.y

        def index(choice):
            return choice[self.owner] * k + np.arange(k)

        def cost(choice):
            rhs = projection[index(choice)]
            solution, *_ = np.linalg.lstsq(gram[np.ix_(index(choice), index(choice))], rhs,
                                           rcond=None)
            return -float(rhs @ solution)          # the residual less ‖y‖²

        first = (min(range(len(points)), key=lambda g: cost(np.full(self.n, g)))
                 if shared else 0)
        choice = np.full(self.n, first)
        for _ in range(DESCENT_PASSES):
            previous = choice.copy()
            for m in range(self.n):
                costs = [cost(np.where(np.arange(self.n) == m, g, choice))
                         for g in range(len(points))]
                choice[m] = int(np.argmin(costs))
            if np.array_equal(choice, previous):
                break
        stacked = np.array(points).reshape(len(points), -1, self.n)
        return stacked[choice, :, np.arange(self.n)].T.reshape(-1), columns[:, index(choice)]

    def _log(self, values) -> np.ndarray:
        """Search variables of a grid point (``v_l`` as a ratio to ``vs``)."""
        return np.log(np.concatenate([values[t] for t in self.terms]))

    def _project(self, v):
        return v - self.q @ (self.q.T @ v)

    def columns(self, shape) -> np.ndarray:
        """The Coulomb and Stribeck base columns of a shape, stacked like ``stack_processed``:
        (rows × joints, k)."""
        reg = Regressor(self.regressor.robot, self.regressor.spec, self.regressor.transmission,
                        shape)
        parts = []
        for p, factor in zip(self.processed, self.factors):
            for a, b in p.spans():
                kept, plain = kept_rows(p, b - a, factor)
                cols = filtered_sharp_columns(reg, self.base, self.sharp, p, slice(a, b))[kept]
                parts.append(cols if plain else decimate_parallel(
                    [cols], factor, p.fs, p.cutoff_hz, p.order)[0])
        return np.concatenate(parts).reshape(-1, len(self.sharp))

    def block(self, x) -> np.ndarray:
        """The weighted, projected Coulomb and Stribeck columns of log shape ``x``."""
        return self.weighted(self.columns(self.shape(x)))

    def weighted(self, columns) -> np.ndarray:
        """``columns`` weighted and projected like ``y``."""
        return self._project(columns * self.weights[:, None])

    def _remainder(self, block) -> np.ndarray:
        solution, *_ = np.linalg.lstsq(block, self.y, rcond=None)
        return self.y - block @ solution

    def residual(self, x) -> np.ndarray:
        self.evaluations += 1
        return self._remainder(self.block(x))

    def cost(self, x) -> float:
        r = self.residual(x)
        return float(r @ r)

    def block_cost(self, block) -> float:
        """``cost`` of a shape from its ``block``."""
        r = self._remainder(block)
        return float(r @ r)
