"""FLEET.yaml (``format: robot-ident/fleet/1``): the robots of a fleet and their recordings.

::

    identification: {friction: coulomb-viscous-offset, rotor_inertia: true}  # optional
    recordings: {recover: false}          # optional: how to read them (RecordingOptions)
    drift: {baseline: 3}                  # optional: DriftConfig
    robots:
      - name: r1
        urdf: urdf/ur5.urdf
        recordings: [logs/r1/night*.yaml]  # globs: descriptions, .npz, rosbag2

Paths are relative to the manifest. ``load_fleet`` checks the manifest, the URDFs and that
every glob matches a recording, before any work; it orders each robot's recordings by their
start (``data.provenance.recording_start``) when every one has one, else by path.
"""
from __future__ import annotations

import datetime
import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..data.datasets import BAG_SUFFIXES
from ..data.provenance import recording_start
from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..files import check_readable
from ..schema import Document, Schema
from ..workflows.inputs import RecordingOptions

FORMAT = 'robot-ident/fleet/1'
#: Suffixes of the files a recording glob may match (bag folders too).
RECORDING_SUFFIXES = ('.yaml', '.yml', '.npz') + BAG_SUFFIXES
#: A robot's folder of its baseline model in FLEET_DIR (no recording may have this name).
BASELINE = 'baseline'


class DriftConfig(Schema):
    """How drift is judged (docs/fleet.md, ``fleet.drift``)."""

    baseline: int = Field(3, ge=2, description="A robot's first successful recordings that "
                          'make its baseline.')
    change_percent: float = Field(20.0, gt=0, description='Smallest change that raises an '
                                  'alert [% of the baseline value; of the joint\'s torque RMS '
                                  'for the offset].')
    z: float = Field(4.0, gt=0, description='Smallest significance that raises an alert: the '
                     'change over its standard deviation (baseline scatter and identification '
                     'standard deviations).')


class RobotEntry(Schema):
    """One robot of the fleet."""

    name: str = Field(pattern=r'^[A-Za-z0-9][A-Za-z0-9_.-]*$', description='Unique name, '
                      'also its folder in FLEET_DIR.')
    urdf: str = Field(description='Its URDF, relative to the manifest.')
    recordings: list[str] = Field(min_length=1, description='Globs of its recordings (dataset '
                                  'descriptions, .npz, rosbag2 folders or files), relative to '
                                  'the manifest.')


class FleetManifest(Document):
    """FLEET.yaml (module docstring)."""

    kind = 'fleet manifest'
    format: Literal[FORMAT] = Field(FORMAT, description='``robot-ident/fleet/1``.')
    identification: IdentificationConfig = Field(
        IdentificationConfig(), description='How every recording is identified.')
    recordings: RecordingOptions = Field(
        RecordingOptions(), description='How the recordings are read (a bag is cut to its '
        'excitation).')
    drift: DriftConfig = Field(DriftConfig(), description='How drift is judged.')
    robots: list[RobotEntry] = Field(min_length=1, description='The robots.')


@dataclass(frozen=True)
class FleetRecording:
    """A recording of a robot.

    Parameters
    ----------
    path : Path
        The file or bag folder.
    name : str
        Its name without suffix, the folder of its results.
    time : datetime.datetime or None
        Its start, when known.
    time_source : {'start_time', 'bag', 'order'}
        What orders it: the description's ``start_time``, the bag's first message, or the
        sorted paths (when any recording of the robot has no time).
    """

    path: Path
    name: str
    time: datetime.datetime | None
    time_source: str


@dataclass(frozen=True)
class FleetRobot:
    """A robot and its recordings, oldest first.

    Parameters
    ----------
    name : str
        Its name.
    urdf : Path
        Its URDF.
    recordings : tuple of FleetRecording
        Oldest first.
    """

    name: str
    urdf: Path
    recordings: tuple[FleetRecording, ...]


@dataclass(frozen=True)
class Fleet:
    """A manifest with its paths resolved and globs expanded.

    Parameters
    ----------
    path : Path
        The manifest.
    manifest : FleetManifest
        Its content.
    robots : tuple of FleetRobot
        In the manifest's order.
    """

    path: Path
    manifest: FleetManifest
    robots: tuple[FleetRobot, ...]


def load_fleet(path: str | Path) -> Fleet:
    """Read a fleet manifest and find its recordings.

    Parameters
    ----------
    path : str or Path
        FLEET.yaml.

    Returns
    -------
    Fleet

    Raises
    ------
    InputError
        For a bad manifest, a missing URDF, a glob that matches no recording, two robots of
        the same name or two recordings of a robot with the same name (naming the manifest and
        the field).
    """
    path = Path(path).absolute()
    manifest = FleetManifest.read(path)
    robots, names = [], set()
    for i, entry in enumerate(manifest.robots):
        where = f'{path}: robots[{i}]'
        if entry.name in names:
            raise InputError(f'{where}.name: robot {entry.name!r} is listed twice')
        names.add(entry.name)
        urdf = path.parent / entry.urdf
        try:
            check_readable(urdf, 'URDF')
        except InputError as exc:
            raise InputError(f'{where}.urdf: {exc}') from None
        found = []
        for k, pattern in enumerate(entry.recordings):
            matches = _recordings(path.parent, pattern)
            if not matches:
                raise InputError(f'{where}.recordings[{k}]: {pattern} matches no recording')
            found += [m for m in matches if m not in found]
        robots.append(FleetRobot(entry.name, urdf, _ordered(found, where)))
    return Fleet(path, manifest, tuple(robots))


def _recordings(folder: Path, pattern: str) -> list[Path]:
    """The recordings a glob matches, by path."""
    full = pattern if Path(pattern).is_absolute() else str(folder / pattern)
    return sorted(Path(p) for p in glob.glob(full, recursive=True)
                  if Path(p).is_dir() or Path(p).suffix in RECORDING_SUFFIXES)


def _ordered(paths: list[Path], where: str) -> tuple[FleetRecording, ...]:
    """Recordings by start time when every one has one, else by path."""
    seen = {}
    for p in paths:
        name = _name(p)
        if name == BASELINE:
            raise InputError(f'{where}.recordings: {p} may not be named {BASELINE!r} (the '
                             'folder of the baseline model)')
        if name in seen:
            raise InputError(f'{where}.recordings: {seen[name]} and {p} have the same name '
                             f'{name!r}')
        seen[name] = p
    starts = [_start(p) for p in paths]
    if all(t is not None for t, _ in starts):
        order = sorted(range(len(paths)), key=lambda i: (starts[i][0], str(paths[i])))
        return tuple(FleetRecording(paths[i], _name(paths[i]), *starts[i]) for i in order)
    return tuple(FleetRecording(p, _name(p), t, 'order') for p, (t, _) in zip(paths, starts))


def _start(path: Path):
    """(start, source); a recording that cannot be read has none (its task reports why)."""
    try:
        return recording_start(path)
    except InputError:
        return None, 'order'


def _name(path: Path) -> str:
    return path.name if path.is_dir() else path.stem
