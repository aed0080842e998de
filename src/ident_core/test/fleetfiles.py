"""Small simulated fleets of the fleet tests (``ident_core.sim.fleet``): WLS, short recordings,
so that a fleet of tens of tasks identifies in seconds."""
from __future__ import annotations

from pathlib import Path

import datafiles

from ident_core.sim.fleet import RobotSpec, Wear, simulate_fleet

SCARA = datafiles.REPO / 'urdf' / 'scara_3dof.urdf'
ARM6 = datafiles.REPO / 'urdf' / 'six_axis_3kg.urdf'
#: Fast and exact enough: WLS, Coulomb-viscous-offset friction and rotor inertia.
IDENTIFICATION = {'friction': 'coulomb-viscous-offset', 'rotor_inertia': True,
                  'estimator': 'wls'}


def small_fleet(folder: Path, robots: int = 2, nights: int = 3, baseline: int = 2, seed: int = 0):
    """SCARA robots (3 joints), 2.5 s at 100 Hz a night; baseline of ``baseline`` nights."""
    specs = [RobotSpec(f'scara{i + 1}', SCARA) for i in range(robots)]
    return simulate_fleet(folder, specs, nights, duration=2.5, rate=100.0, seed=seed,
                          identification=IDENTIFICATION, drift={'baseline': baseline})


def worn_fleet(folder: Path, nights: int = 7, seed: int = 0):
    """Two kinds, three robots each; one joint of one robot of each kind wears (Coulomb
    friction +8 % of its value per night from the fourth night); 5 s at 100 Hz a night."""
    specs = [RobotSpec('scara1', SCARA), RobotSpec('scara2', SCARA, Wear(0, 0.08, 3)),
             RobotSpec('scara3', SCARA), RobotSpec('arm1', ARM6), RobotSpec('arm2', ARM6),
             RobotSpec('arm3', ARM6, Wear(2, 0.08, 3))]
    return simulate_fleet(folder, specs, nights, duration=5.0, rate=100.0, seed=seed,
                          identification=IDENTIFICATION)
