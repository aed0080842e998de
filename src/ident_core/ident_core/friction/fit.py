"""Friction parameters of one actuator from its friction samples, by nonlinear least squares,
the genetic algorithm or the simulated-annealing hybrid GA (stribeck_friction_sa_ga_2020 §2.2,
§3; docs/methods.md §8).

The cost is the residual sum of squares (RSS) of the paper's eq. (15) between the measured
friction torque and the model passed through the same low-pass (``FrictionSamples.filtered``).

* ``lsq``: scipy ``least_squares`` (trust-region reflective) with the analytic Jacobian
  (``friction_jacobian``) and bounds, from the initial estimate.
* ``ga``, ``sa-ga``: ``optim.evolution.minimize`` over a search box around the initial
  estimate, as the paper does (its graphical estimates give the initial values and the range).

The initial estimate plays the role of the paper's graphical method: the model is linear in
``fc, fs, fv, offset`` once ``vs, delta, v_l`` are fixed, so a grid over ``vs`` and ``v_l``
with a linear least-squares solve at each point (variable projection) gives the start.

Parameter uncertainty: ``cov = c σ² (JᵀJ)⁻¹`` at the optimum, ``σ² = RSS / (M − p)``, with
``c = FrictionSamples.correlation`` for the correlation of filtered residuals.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from pydantic import Field

from ..errors import InputError
from ..optim.evolution import GeneticConfig, SAGAConfig, minimize
from ..schema import Schema
from .models import (
    LINEAR,
    SHAPE,
    UNITS,
    basis,
    friction_jacobian,
    friction_torque,
    friction_torque_only,
    parameter_names,
)
from .samples import FrictionSamples

OPTIMIZERS = ('lsq', 'ga', 'sa-ga')
#: A Stribeck model needs this many samples slower than a tenth of the peak speed.
MIN_SLOW_SAMPLES = 20
#: A shape parameter needs this many samples in the speed range that determines it.
MIN_DETERMINING = 20
#: Relative standard deviation [%] above which a parameter is reported as poorly determined.
POOR_STD_PERCENT = 50.0
VS_GRID = np.geomspace(1e-3, 0.3, 16)      # × peak speed
V_L_RATIOS = (0.1, 0.25, 0.5, 0.8)          # × vs


class FrictionFitConfig(Schema):
    """How to fit friction models."""

    fixed: dict[str, float] = Field(
        {'delta': 2.0}, description="Parameters held at a value, e.g. ``{'delta': 2.0}``: the "
        'Gaussian exponent of the paper (its Tables 1 and 3 keep ``delta = 2``).')
    ga: GeneticConfig = Field(GeneticConfig(population=40, generations=100, stall=25, elite=2),
                              description='The plain GA.')
    sa_ga: SAGAConfig = Field(SAGAConfig(population=40, generations=60, stall=20, elite=2),
                              description="The SA-GA (the paper's operators).")
    repair: bool = Field(
        True, description='GA and SA-GA: solve the linear parameters of each individual by '
        'least squares for its shape parameters (Lamarckian repair; the search is then '
        "effectively over ``vs, delta, v_l``). False: the paper's plain chromosome, which "
        'converges slowly in the flat valleys of ``fs, vs, v_l``.')
    search_range: float = Field(0.3, gt=0, description='GA search box around the initial '
                                'estimate (``search_box``).')
    seed: int = Field(0, description='Seed of the GA and SA-GA.')


@dataclass
class FrictionFit:
    """One friction model of one actuator, fitted by one optimiser.

    Parameters
    ----------
    actuator : str
        The joint name.
    model : str
        Friction model (``friction.models``).
    optimizer : {'lsq', 'ga', 'sa-ga'}
        How it was fitted.
    parameters : dict of str to float
        Every parameter of the model (``parameter_names`` order), fixed ones included.
    std : dict of str to float
        Standard deviation of each fitted parameter (fixed ones absent).
    rss : float
        Residual sum of squares [(N·m)²].
    rms : float
        Root-mean-square residual [N·m].
    samples : int
        Samples compared.
    seconds : float
        Time of the optimisation [s].
    evaluations : int
        Cost (or residual) evaluations.
    warnings : list of str
        Parameters the data do not determine, or bounds reached.
    """

    actuator: str
    model: str
    optimizer: str
    parameters: dict[str, float]
    std: dict[str, float]
    rss: float
    rms: float
    samples: int
    seconds: float
    evaluations: int
    warnings: list[str] = field(default_factory=list)

    def torque(self, u) -> np.ndarray:
        """Friction torque of this fit.

        Parameters
        ----------
        u : (N,) array_like
            Velocities [rad/s or m/s].

        Returns
        -------
        (N,) ndarray
            [N·m or N].
        """
        return friction_torque(self.model, u, self.parameters)[0]


class _Problem:
    """Residuals of one model on one actuator's samples, over its free parameters."""

    def __init__(self, samples: FrictionSamples, model: str, fixed: dict[str, float]):
        self.samples, self.model = samples, model
        self.names = parameter_names(model)
        self.fixed = {k: float(v) for k, v in fixed.items() if k in self.names}
        self.free = [k for k in self.names if k not in self.fixed]
        self.target = samples.tau[samples.used]
        self.evaluations = 0
        # basis columns that do not depend on the shape parameters, filtered once
        self.constant = {k: samples.filtered(c) for k, c in
                         (('fv', samples.u), ('offset', np.ones_like(samples.u)))}

    def parameters(self, x) -> dict[str, float]:
        return {**self.fixed, **dict(zip(self.free, map(float, x)))}

    def residual(self, x) -> np.ndarray:
        self.evaluations += 1
        tau = friction_torque_only(self.model, self.samples.u, self.parameters(x))
        return self.target - self.samples.filtered(tau)

    def jacobian(self, x) -> np.ndarray:
        jac = friction_jacobian(self.model, self.samples.u, self.parameters(x))
        columns = [self.names.index(k) for k in self.free]
        return -self.samples.filtered(jac[:, columns])

    def rss(self, x) -> float:
        r = self.residual(x)
        return float(r @ r)

    def repaired(self, x) -> tuple[float, np.ndarray]:
        """RSS after solving the free linear parameters for x's shape parameters (Lamarckian
        repair), and the repaired individual."""
        self.evaluations += 1
        params = self.parameters(x)
        linear = LINEAR[self.model]
        raw = basis(self.model, self.samples.u, params)
        varying = [i for i, k in enumerate(linear) if k not in self.constant]
        phi = np.empty((len(self.target), len(linear)))
        phi[:, varying] = self.samples.filtered(raw[:, varying])
        for i, k in enumerate(linear):
            if k in self.constant:
                phi[:, i] = self.constant[k]
        free = [i for i, k in enumerate(linear) if k not in self.fixed]
        target = self.target - sum(phi[:, i] * self.fixed[k] for i, k in enumerate(linear)
                                   if k in self.fixed)
        solution, *_ = np.linalg.lstsq(phi[:, free], target, rcond=None)
        params.update({linear[i]: float(v) for i, v in zip(free, solution)})
        r = target - phi[:, free] @ solution
        return float(r @ r), np.array([params[k] for k in self.free])


def residual_sum_of_squares(samples: FrictionSamples, model: str, parameters: dict) -> float:
    """RSS of a friction model on samples (after the samples' low-pass).

    Parameters
    ----------
    samples : FrictionSamples
    model : str
    parameters : dict of str to float
        Every parameter of the model.

    Returns
    -------
    float
        [(N·m)² or N²].
    """
    problem = _Problem(samples, model, parameters)
    return problem.rss([])


def check_samples(samples: FrictionSamples, model: str) -> None:
    """Refuse samples that cannot determine a model.

    Parameters
    ----------
    samples : FrictionSamples
        One actuator's samples.
    model : str
        Friction model.

    Raises
    ------
    InputError
        If there are fewer than 10 samples per parameter, or for a Stribeck model fewer than
        ``MIN_SLOW_SAMPLES`` samples slower than a tenth of the peak speed.
    """
    p = len(parameter_names(model))
    if samples.count < 10 * p:
        raise InputError(f'joint {samples.actuator}: {samples.count} moving samples are too '
                         f'few for the {p} parameters of {model}')
    if SHAPE[model]:
        slow_speed = 0.1 * samples.peak_speed
        slow = int(np.sum(np.abs(samples.u[samples.used]) < slow_speed))
        if slow < MIN_SLOW_SAMPLES:
            raise InputError(
                f'joint {samples.actuator}: only {slow} samples slower than {slow_speed:.3g} '
                f'(a tenth of its peak speed); the {model} model needs slow motion: add a slow '
                f'cosine (robot-ident excite --jointwise {samples.actuator})')


def initial_estimate(samples: FrictionSamples, model: str,
                     fixed: dict[str, float] | None = None) -> dict[str, float]:
    """Start values: linear least squares over a grid of the shape parameters.

    Parameters
    ----------
    samples : FrictionSamples
        The actuator's samples.
    model : str
        Friction model.
    fixed : dict of str to float, optional
        Parameters held at a value (``delta`` defaults to 2).

    Returns
    -------
    dict of str to float
        Every parameter of the model.
    """
    fixed = fixed or {}
    peak = samples.peak_speed
    grid = [{}]
    if SHAPE[model]:
        vs_values = [fixed['vs']] if 'vs' in fixed else VS_GRID * peak
        grid = [{'vs': vs, 'delta': fixed.get('delta', 2.0)} for vs in vs_values]
        if 'v_l' in SHAPE[model]:
            grid = [{**g, 'v_l': fixed.get('v_l', r * g['vs'])} for g in grid
                    for r in (V_L_RATIOS if 'v_l' not in fixed else (1.0,))]
    target = samples.tau[samples.used]
    best = None
    for shape in grid:
        phi = samples.filtered(basis(model, samples.u, shape))
        linear = np.linalg.lstsq(phi, target, rcond=None)[0]
        rss = float(np.sum((target - phi @ linear) ** 2))
        if best is None or rss < best[0]:
            best = rss, {**dict(zip(LINEAR[model], map(float, linear))), **shape}
    out = best[1]
    out.update({k: float(v) for k, v in fixed.items() if k in out})
    return {k: out[k] for k in parameter_names(model)}


def parameter_bounds(samples: FrictionSamples, names, start: dict) -> tuple[np.ndarray, ...]:
    """Physical bounds of the free parameters for the local search.

    ``fc, fs, fv >= 0``; ``vs, v_l`` within ``[1e-4, 1] ×`` peak speed; ``delta`` in
    [0.2, 5]; offset and the upper friction bounds from the torque scale (ten times the larger
    of the RMS friction torque and the start value).

    Parameters
    ----------
    samples : FrictionSamples
        One actuator's samples.
    names : sequence of str
        The free parameters.
    start : dict of str to float
        The initial estimate.

    Returns
    -------
    lower, upper : (k,) ndarray
    """
    peak = samples.peak_speed
    scale = 10 * max(float(np.sqrt(np.mean(samples.tau[samples.used] ** 2))),
                     *(abs(start[k]) for k in ('fc', 'fs', 'offset') if k in start))
    box = {'fc': (0.0, scale), 'fs': (0.0, scale), 'fv': (0.0, 10 * scale / peak),
           'offset': (-scale, scale), 'vs': (1e-4 * peak, peak), 'delta': (0.2, 5.0),
           'v_l': (1e-4 * peak, peak)}
    lower, upper = (np.array([box[k][i] for k in names]) for i in (0, 1))
    return lower, upper


def search_box(samples: FrictionSamples, names, start: dict, span: float):
    """The GA's search box around the initial estimate: each linear parameter within
    ± ``span`` × its magnitude (at least ``span`` × 5 % of the friction torque scale), each
    shape parameter within a factor ``1 + 2 span`` (``FrictionFitConfig.search_range``),
    inside ``parameter_bounds``.

    Parameters
    ----------
    samples : FrictionSamples
        One actuator's samples.
    names : sequence of str
        The free parameters.
    start : dict of str to float
        The initial estimate.
    span : float
        ``search_range``.

    Returns
    -------
    lower, upper : (k,) ndarray
    """
    lower, upper = parameter_bounds(samples, names, start)
    scale = 0.05 * max(float(np.sqrt(np.mean(samples.tau[samples.used] ** 2))),
                       *(abs(start[k]) for k in ('fc', 'fs') if k in start))
    lo, hi = [], []
    for k, low, high in zip(names, lower, upper):
        x = min(max(start[k], low), high)
        if k in SHAPE['improved-stribeck']:
            lo.append(x / (1 + 2 * span))
            hi.append(x * (1 + 2 * span))
        else:
            width = span * max(abs(x), scale / samples.peak_speed if k == 'fv' else scale)
            lo.append(x - width)
            hi.append(x + width)
    lo, hi = np.maximum(lo, lower), np.minimum(hi, upper)
    empty = lo >= hi                    # a start on a bound of a zero-width box: the bounds
    return np.where(empty, lower, lo), np.where(empty, upper, hi)


def fit_friction(samples: FrictionSamples, model: str, optimizer: str = 'lsq',
                 config: FrictionFitConfig | None = None) -> FrictionFit:
    """Fit a friction model to one actuator's samples.

    Parameters
    ----------
    samples : FrictionSamples
        The actuator's friction samples.
    model : str
        One of ``friction.models.FRICTION_MODELS``.
    optimizer : {'lsq', 'ga', 'sa-ga'}
        Nonlinear least squares, the GA or the SA-GA.
    config : FrictionFitConfig, optional
        Fixed parameters, GA settings, seed.

    Returns
    -------
    FrictionFit

    Raises
    ------
    InputError
        For an unknown optimiser or model, or samples that cannot determine the model
        (``check_samples``).

    References
    ----------
    .. [1] Zhang T., Hu L., Zou Y., "Identification of improved friction model for robot based
       on hybrid genetic algorithm", Journal of Zhejiang University (Engineering Science)
       55(5):801–809, 2021, doi:10.3785/j.issn.1008-973X.2021.05.001, §2.2–3.
    """
    if optimizer not in OPTIMIZERS:
        raise InputError(f'friction optimizer {optimizer!r} unknown (choose from '
                         f'{", ".join(OPTIMIZERS)})')
    config = config or FrictionFitConfig()
    check_samples(samples, model)
    problem = _Problem(samples, model, config.fixed)
    start = initial_estimate(samples, model, problem.fixed)
    x0 = np.array([start[k] for k in problem.free])
    t0 = time.perf_counter()
    notes = []
    if optimizer == 'lsq':
        x = _least_squares(problem, x0, samples, start, notes)
    else:
        lower, upper = search_box(samples, problem.free, start, config.search_range)
        settings = config.ga if optimizer == 'ga' else config.sa_ga
        cost = problem.repaired if config.repair else problem.rss
        result = minimize(cost, lower, upper, settings,
                          np.random.default_rng(config.seed), initial=x0[None])
        x = result.x
    seconds = time.perf_counter() - t0
    residual = problem.residual(x)
    rss = float(residual @ residual)
    params = problem.parameters(x)
    std = _standard_deviations(problem, x, rss)
    notes += undetermined(samples, model, params, std)
    return FrictionFit(samples.actuator, model, optimizer, params, std, rss,
                       float(np.sqrt(rss / len(residual))), len(residual), seconds,
                       problem.evaluations, notes)


def _least_squares(problem, x0, samples, start, notes):
    lower, upper = parameter_bounds(samples, problem.free, start)
    x0 = np.clip(x0, lower, upper)
    result = scipy.optimize.least_squares(problem.residual, x0, jac=problem.jacobian,
                                          bounds=(lower, upper), method='trf', x_scale='jac')
    for k, active, lo, hi in zip(problem.free, result.active_mask, lower, upper):
        if active != 0:
            notes.append(f'{k} at its bound [{lo:.4g}, {hi:.4g}] ({UNITS[k]})')
    return result.x


def _standard_deviations(problem, x, rss) -> dict[str, float]:
    jac = problem.jacobian(x)
    dof = max(len(jac) - jac.shape[1], 1)
    cov = problem.samples.correlation * rss / dof * np.linalg.pinv(jac.T @ jac)
    return {k: float(np.sqrt(max(cov[i, i], 0.0))) for i, k in enumerate(problem.free)}


def undetermined(samples: FrictionSamples, model: str, params: dict, std: dict) -> list[str]:
    """Warnings naming the parameters the data do not determine.

    ``vs`` and ``delta`` need samples slower than ``3 vs`` (outside the linear band),
    ``v_l`` samples inside ``|u| < v_l``; a band wider than ``vs`` holds the Stribeck hump, so
    ``fs`` and ``vs`` are then named; any parameter with a relative standard deviation above
    ``POOR_STD_PERCENT`` is named too.

    Parameters
    ----------
    samples : FrictionSamples
        One actuator's samples.
    model : str
        Friction model.
    params : dict of str to float
        Every parameter of the fit.
    std : dict of str to float
        Standard deviations of the fitted ones.

    Returns
    -------
    list of str
    """
    speed = np.abs(samples.u[samples.used])
    out = []
    if 'vs' in params:
        band = params.get('v_l', 0.0)
        count = int(np.sum((speed < 3 * params['vs']) & (speed >= band)))
        if count < MIN_DETERMINING:
            shaped = [k for k in ('vs', 'delta') if k in std]
            out += [f'{k} not determined: only {count} samples slower than 3·vs = '
                    f'{3 * params["vs"]:.4g} {UNITS["vs"]}' for k in shaped]
    if 'v_l' in params and params['v_l'] > params['vs'] and 'vs' in std:
        out += [f'{k} not determined: the linear band v_l = {params["v_l"]:.4g} is wider than '
                f'vs = {params["vs"]:.4g} {UNITS["vs"]} and holds the Stribeck hump'
                for k in ('fs', 'vs')]
    if 'v_l' in std:
        count = int(np.sum(speed < params['v_l']))
        if count < MIN_DETERMINING:
            out.append(f'v_l not determined: only {count} samples inside |u| < v_l = '
                       f'{params["v_l"]:.4g} {UNITS["v_l"]}')
    named = {w.split()[0] for w in out}
    for k, s in std.items():
        value = abs(params[k])
        if k not in named and (value == 0 or 100 * s / value > POOR_STD_PERCENT) \
                and k != 'offset':
            out.append(f'{k} poorly determined: {params[k]:.4g} ± {s:.2g} {UNITS[k]}')
    return out
