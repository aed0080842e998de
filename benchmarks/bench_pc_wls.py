"""Physically consistent identification on simulated arms with known truth (issue 10).

For the 7-DOF test arm and the 6-axis demo arm (true parameters: the URDF's perturbed by up to
20 %, 0.3 N·m torque noise, 30 s at 200 Hz of a 5-harmonic Fourier trajectory), prints per
estimator the share of base parameters within 3σ of the truth, the physically consistent
bodies, and per body the identified mass against the truth together with the range of masses
that the data and physics allow: every mass with a consistent body set whose base parameters lie
in the 99 % confidence ellipsoid of the estimate (min and max of ``m_i`` subject to the
pseudo-inertia LMIs; unbounded above means the data do not determine that mass).

    python benchmarks/bench_pc_wls.py [--seed 0]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.stats

from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.model.inertial import pseudo_inertia_basis
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset
from ident_core.threads import limit_blas_threads

REPO = Path(__file__).resolve().parents[1]
ARMS = {'seven_axis': REPO / 'src/ident_core/test/data/seven_axis.urdf',
        'six_axis_3kg': REPO / 'urdf/six_axis_3kg.urdf'}


def mass_ranges(model) -> list[tuple[float, float]]:
    """(min, max) mass per body over consistent standard parameters whose base parameters lie
    in the 99 % confidence ellipsoid of the model's (inf: unbounded)."""
    import cvxpy as cp

    b = model.base.matrix()
    chi = cp.Variable(b.shape[1])
    basis = pseudo_inertia_basis().reshape(10, 16).T
    information = np.linalg.inv(np.diag(model.std ** 2))
    ellipsoid = cp.quad_form(b @ chi - model.values, information)
    constraints = [ellipsoid <= scipy.stats.chi2.ppf(0.99, model.base.count)]
    for i in range(model.robot.link_count):
        j = cp.Variable((4, 4), symmetric=True)
        constraints += [cp.vec(j, order='C') == basis @ chi[10 * i:10 * i + 10], j >> 0]
    out = []
    for i in range(model.robot.link_count):
        bounds = []
        for sense in (cp.Minimize, cp.Maximize):
            problem = cp.Problem(sense(chi[10 * i]), constraints)
            problem.solve(solver=cp.CLARABEL)
            bounds.append(np.inf if problem.status == cp.UNBOUNDED else float(problem.value))
        out.append((bounds[0], bounds[1]))
    return out


def run(name: str, urdf: Path, seed: int) -> None:
    robot = load_robot(urdf)
    truth = perturbed_parameters(robot, np.random.default_rng(seed))
    data, _ = synthetic_dataset(robot, truth, 30, 200, seed=seed + 3, torque_noise=0.3)
    true_mass = truth.inertial[0::10]
    print(f'\n{name}: {robot.n} joints, true total mass {true_mass.sum():.2f} kg')
    for estimator in ('wls', 'pc-wls'):
        model = identify(robot, [data], IdentificationConfig(estimator=estimator,
                                                             rotor_inertia=True))
        beta = model.base.project(truth.vector(model.config.spec.actuator_terms))
        within = 100 * np.mean(np.abs(model.values - beta) <= 3 * model.std)
        links = model.links()
        physical = sum(k.physically_consistent for k in links)
        print(f'  {estimator:<7} {within:5.1f} % of {model.base.count} base parameters within 3σ,'
              f' {physical}/{len(links)} bodies physically consistent')
    print(f'  {"body":<8}{"truth kg":>9}{"pc-wls":>9}{"error %":>9}   data-consistent range kg')
    for k, m, (lo, hi) in zip(links, true_mass, mass_ranges(model)):
        print(f'  {k.link:<8}{m:>9.3f}{k.mass:>9.3f}{100 * (k.mass / m - 1):>9.1f}   '
              f'[{max(lo, 0):.3f}, {hi:.3f}]')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    with limit_blas_threads():
        for name, urdf in ARMS.items():
            run(name, urdf, args.seed)
    return 0


if __name__ == '__main__':
    sys.exit(main())
