"""A simulated fleet with known drift, for the fleet's tests, benchmark and demo (docs/fleet.md).

Robots of a few kinds (URDFs) replay the same excitation every night. Each robot's true
parameters scatter around its kind's (``spread``, manufacturing); every night its friction
scatters by a few percent (``temperature``); a worn joint's Coulomb friction rises by ``wear``
of its first value per night after ``onset`` nights. Each night is written as an ``.npz`` and a
dataset description with its ``start_time``, and the fleet as a FLEET.yaml.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import yaml

from ..model.robot import load_robot
from .synthetic import TrueParameters, fourier_trajectory, perturbed_parameters, simulate_torques

#: The first night's start.
FIRST_NIGHT = datetime.datetime(2026, 3, 2, 22, 0, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Wear:
    """Coulomb friction of one joint rising night after night.

    Parameters
    ----------
    joint : int
        0-based joint index.
    per_night : float
        Rise per night, a fraction of the first night's value.
    onset : int
        Nights before it starts (the rise is ``per_night·(night − onset + 1)`` from night
        ``onset`` on, 0-based).
    """

    joint: int
    per_night: float = 0.06
    onset: int = 3


@dataclass(frozen=True)
class RobotSpec:
    """One simulated robot.

    Parameters
    ----------
    name : str
        Its name.
    urdf : Path
        Its kind.
    wear : Wear, optional
        Its worn joint; None: healthy.
    """

    name: str
    urdf: Path
    wear: Wear | None = None


@dataclass
class SimulatedFleet:
    """What ``simulate_fleet`` wrote, and the truth.

    Parameters
    ----------
    manifest : Path
        FLEET.yaml.
    truth : dict of str to list of TrueParameters
        Per robot, per night.
    recordings : dict of str to list of Path
        Per robot, per night: the dataset description.
    specs : list of RobotSpec
        The robots.
    """

    manifest: Path
    truth: dict[str, list[TrueParameters]] = field(default_factory=dict)
    recordings: dict[str, list[Path]] = field(default_factory=dict)
    specs: list[RobotSpec] = field(default_factory=list)


def simulate_fleet(folder: str | Path, robots: list[RobotSpec], nights: int, *,
                   duration: float = 4.0, rate: float = 100.0, spread: float = 0.05,
                   temperature: float = 0.02, torque_noise: float = 0.05, seed: int = 0,
                   identification: dict | None = None, drift: dict | None = None
                   ) -> SimulatedFleet:
    """Write the nightly recordings of a simulated fleet and its manifest.

    Parameters
    ----------
    folder : str or Path
        Where: ``FLEET.yaml``, ``logs/<robot>/night<k>.npz`` and ``.yaml``.
    robots : list of RobotSpec
        The robots.
    nights : int
        Recordings per robot.
    duration : float
        Of a recording [s].
    rate : float
        Sample rate [Hz].
    spread : float
        Relative scatter of a robot's actuator parameters around its kind's (uniform ±).
    temperature : float
        Relative standard deviation of a night's friction (``fc``, ``fv``) around the robot's.
    torque_noise : float
        Standard deviation of the torque noise [N·m or N].
    seed : int
        Seed of everything.
    identification : dict, optional
        The manifest's ``identification`` section (default: Coulomb-viscous-offset friction
        and rotor inertia).
    drift : dict, optional
        The manifest's ``drift`` section.

    Returns
    -------
    SimulatedFleet
    """
    folder = Path(folder)
    rng = np.random.default_rng(seed)
    fleet = SimulatedFleet(folder / 'FLEET.yaml', specs=list(robots))
    kinds = {}
    for spec in robots:
        if spec.urdf not in kinds:
            robot = load_robot(spec.urdf)
            t = np.arange(int(round(duration * rate))) / rate
            motion = fourier_trajectory(robot, t, rng, period=duration)
            kinds[spec.urdf] = (robot, t, motion, perturbed_parameters(robot, rng))
    entries = []
    for spec in robots:
        robot, t, (q, qd, qdd), nominal = kinds[spec.urdf]
        own = _scattered(nominal, rng, spread)
        fleet.truth[spec.name], fleet.recordings[spec.name] = [], []
        for night in range(nights):
            truth = _night(own, rng, temperature, spec.wear, night)
            tau = simulate_torques(robot, truth, q, qd, qdd)
            tau = tau + torque_noise * rng.standard_normal(tau.shape)
            path = _write_night(folder / 'logs' / spec.name, night, robot.joint_names, t, q, qd,
                                tau)
            fleet.truth[spec.name].append(truth)
            fleet.recordings[spec.name].append(path)
        entries.append({'name': spec.name, 'urdf': str(Path(spec.urdf).absolute()),
                        'recordings': [f'logs/{spec.name}/night*.yaml']})
    manifest = {'format': 'robot-ident/fleet/1',
                'identification': identification or {'friction': 'coulomb-viscous-offset',
                                                     'rotor_inertia': True},
                'drift': drift or {}, 'robots': entries}
    fleet.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return fleet


def _scattered(nominal: TrueParameters, rng, spread: float) -> TrueParameters:
    """A robot of a kind: its actuator parameters scattered around the kind's."""
    n = len(nominal.fc)

    def scale():
        return rng.uniform(1 - spread, 1 + spread, n)
    return replace(nominal, Ia=nominal.Ia * scale(), fv=nominal.fv * scale(),
                   fc=nominal.fc * scale(), offset=nominal.offset * scale())


def _night(own: TrueParameters, rng, temperature: float, wear: Wear | None,
           night: int) -> TrueParameters:
    """A robot's parameters on one night: friction scattered, the worn joint's raised."""
    n = len(own.fc)
    fc = own.fc * (1 + temperature * rng.standard_normal(n))
    fv = own.fv * (1 + temperature * rng.standard_normal(n))
    if wear is not None and night >= wear.onset:
        fc[wear.joint] += own.fc[wear.joint] * wear.per_night * (night - wear.onset + 1)
    return replace(own, fc=fc, fv=fv)


def _write_night(folder: Path, night: int, joints, t, q, qd, tau) -> Path:
    """``night<k>.npz`` and its description ``night<k>.yaml`` with the night's start."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f'night{night + 1:02d}'
    np.savez(folder / f'{name}.npz', times=t, positions=q, velocities=qd, torques=tau)
    start = FIRST_NIGHT + datetime.timedelta(days=night)
    description = {'joints': list(joints), 'file': f'{name}.npz', 'time': {'key': 'times'},
                   'position': {'key': 'positions'}, 'velocity': {'key': 'velocities'},
                   'effort': {'key': 'torques'}, 'start_time': start.isoformat()}
    path = folder / f'{name}.yaml'
    path.write_text(yaml.safe_dump(description, sort_keys=False))
    return path
