"""Accuracy on the real recordings (data/ or ../shared/data): KUKA LWR4+ splits, Stäubli TX40 70/30.

Prints the validation metrics of each split and estimator (OLS, WLS, pc-wls; FloBaRoID's
definitions), the physical consistency and total mass of the bodies, and the TX40 friction and
rotor-inertia estimates next to the reference identification (TX40_config_reference_params.yaml).

    python benchmarks/bench_real_data.py [--data FOLDER_OF_THE_SETS]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import yaml

from ident_core.data.datasets import load_dataset
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate
from ident_core.model.robot import load_robot
from ident_core.threads import limit_blas_threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'scripts'))
from data_dirs import recording_dir  # data/, then ../shared/data

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO / 'config' / 'datasets'


def kuka(folder: Path) -> None:
    os.environ['DATA_DIR'] = str(folder)
    robot = load_robot(folder / 'kuka_lwr4.urdf')
    runs = {i: load_dataset(DATASETS / 'kuka_lwr4' / f'measurements_{i}.yaml', robot.joint_names)
            for i in (1, 2, 3)}
    urdf_mass = robot.standard_parameters()[0::10].sum()
    print('KUKA LWR4+ (FloBaRoID m1 → m2: 2.81 % relative, NRMS 0.18 %, abs. 0.72 N·m)')
    print(f'{"split":<12} {"estimator":<9} {"rel. err %":>10} {"NRMS %":>8} {"abs. N·m":>9} '
          f'{"cond":>7} {"physical":>8} {"mass kg":>8} {"time s":>7}')
    for train, test in (((1,), 2), ((1,), 3), ((3,), 1), ((1, 2), 3)):
        for estimator in ('ols', 'wls', 'pc-wls'):
            t0 = time.perf_counter()
            model = identify(robot, [runs[i] for i in train],
                             IdentificationConfig(estimator=estimator))
            m = validate(model, runs[test]).metrics
            links = model.links()
            physical = sum(k.physically_consistent for k in links)
            split = '+'.join(f'm{i}' for i in train) + f' → m{test}'
            print(f'{split:<12} {estimator:<9} {m["relative_error_percent"]:>10.2f} '
                  f'{m["nrms_percent"]:>8.3f} {m["absolute_error"]:>9.3f} '
                  f'{model.stats["condition_number"]:>7.0f} {physical:>6}/{len(links)} '
                  f'{sum(k.mass for k in links):>8.2f} {time.perf_counter() - t0:>7.2f}')
    print(f'URDF total mass {urdf_mass:.2f} kg; "mass": sum of the identified body masses '
          "(OLS/WLS: the standard parameters nearest to the URDF's)")


def tx40(folder: Path) -> None:
    os.environ['TX40_DIR'] = str(folder)
    robot = load_robot(folder / 'tx40_mdh_modified.urdf')
    first, last = load_dataset(DATASETS / 'staubli_tx40' / 'tx40.yaml').split(0.7)
    t0 = time.perf_counter()
    model = identify(robot, [first], IdentificationConfig(rotor_inertia=True))
    m = validate(model, last).metrics
    elapsed = time.perf_counter() - t0
    wls = validate(identify(robot, [first], IdentificationConfig(rotor_inertia=True,
                                                                 estimator='wls')), last)
    print(f'\nStäubli TX40, identify on the first 70 %, validate on the last 30 % '
          f'({model.config.estimator}, {elapsed:.2f} s, '
          f'cond {model.stats["condition_number"]:.0f}, '
          f'{sum(k.physically_consistent for k in model.links())}/{robot.n} bodies physical; '
          f'WLS: {wls.metrics["relative_error_percent"]:.2f} %)')
    print(f'relative error {m["relative_error_percent"]:.2f} %, NRMS {m["nrms_percent"]:.3f} %, '
          f'abs. error {m["absolute_error"]:.3f}, RMSE per joint '
          + ' '.join(f'{x:.3f}' for x in m['rmse']))
    ref = yaml.safe_load((folder / 'TX40_config_reference_params.yaml').read_text())
    ref = ref['identification']['robot_params'][0]
    act = model.actuator_values()
    print('\njoint  viscous fv (ref)    Coulomb fc (ref)    offset (ref)       rotor Ia (ref)')
    for j in range(robot.n):
        cells = []
        for ours, theirs in ((act['fv'][j], ref['fv'][j]), (act['fc'][j], ref['fs'][j]),
                             (act['offset'][j], ref['offset'][j]), (act['Ia'][j], ref['Ia'][j])):
            mine = 'regrouped' if ours is None else f'{ours:.4g}'
            cells.append(f'{mine:>9} ({theirs:<6g})')
        print(f'{j + 1:>5}  ' + '  '.join(cells))
    print(f'reference coupled motor-6 terms: Iam6 {ref["Iam6"]}, fvm6 {ref["fvm6"]}, '
          f'fsm6 {ref["fsm6"]}; here actuator 6 is motor 6, acting on joints 5 and 6 '
          '(regressor.py), so its Ia6, fv6, fc6 stand for both.')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--data', type=Path, help='folder of kuka_lwr4/ and staubli_tx40/ '
                        '(default: data/, else ../shared/data; scripts/data_dirs.py)')
    args = parser.parse_args()
    limit_blas_threads()
    found = False
    kuka_dir, tx40_dir = (args.data / name if args.data else recording_dir(name)
                          for name in ('kuka_lwr4', 'staubli_tx40'))
    if (kuka_dir / 'measurements_1.npz').is_file():
        kuka(kuka_dir)
        found = True
    if (tx40_dir / 'curr_data.csv').is_file():
        tx40(tx40_dir)
        found = True
    if not found:
        print(f'bench_real_data: no recordings in {kuka_dir} or {tx40_dir} (run '
              'scripts/fetch_data.sh)', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
