"""Settings of an excitation optimisation (docs/methods.md §6) and their YAML file.

File format (every field optional; units SI, joint-indexed lists in URDF joint order)::

    harmonics: 6                 # N of eq. (14)
    period: 10.0                 # s (wf = 2π/period)
    periods: 4                   # periods the excitation node runs
    objective: cond              # cond | dopt
    samples: 100                 # regressor samples per period for the objectives
    start_at_rest: false         # constrain qd(0) = qdd(0) = 0 (else the node's quintic approach)
    regressor: {friction: coulomb-viscous-offset, rotor_inertia: false}
    locked_joints: {panda_finger_joint1: 0.0}   # joints held fixed (e.g. a gripper), rad or m
    limits:
      margin: 0.05               # fraction off each position end, velocity and acceleration
      acceleration: 20.0         # rad/s², one value or one per joint (URDFs have none)
      joints: {joint2: {lower: -2.0, velocity: 2.5}}   # overrides of URDF limits
      continuous_range: 3.14159  # rad: a continuous joint moves within ± this (unless joints)
      torque: false              # |tau| of the nominal model (RNEA) <= (1 - margin) effort limit
      effort: {joint1: 50.0}     # overrides of URDF effort limits, N·m or N
    collision:
      self: false                # self-collision of the URDF collision shapes
      min_distance: 0.01         # m, required clearance
      srdf: panda.srdf           # disabled pairs (relative to this file)
      package_dirs: []           # where package:// meshes are found (default: URDF folders)
      ignore: [[link1, link3]]   # further pairs not checked
      environment:               # fixed obstacles, in the base frame
        - {name: table, type: plane, normal: [0, 0, 1], offset: 0.0}    # solid n·x <= offset
        - {name: wall, type: box, size: [1, 0.1, 1], position: [0.6, 0, 0.5], rpy: [0, 0, 0]}
        - {name: post, type: sphere, radius: 0.1, position: [0.5, 0.5, 0.3]}
    optimizer:
      random: {candidates: 200}
      ga: {population: 40, generations: 50, elite: 2, ...}   # optim.evolution.GeneticConfig
      annealing: {temperature: 0.05, cooling: 0.9, ...}      # optim.evolution.AnnealingConfig
      local: {iterations: 60}

The GA runs with ``optimizer.ga``. The SA-GA takes its sizes (population, generations, elite,
mutation_scale, stall) from ``optimizer.ga``, the operators of stribeck_friction_sa_ga_2020
(``SAGAConfig``) and ``optimizer.annealing``.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Literal

import pydantic
from pydantic import Field, PositiveFloat, PositiveInt, PrivateAttr

from ..files import read_yaml
from ..model.regressor import RegressorSpec
from ..optim.evolution import AnnealingConfig, GeneticConfig, SAGAConfig
from ..schema import PerJoint, Schema, parse

OBJECTIVES = ('cond', 'dopt')
Vector3 = Annotated[list[float], Field(min_length=3, max_length=3)]


class JointLimitOverride(Schema):
    """Limits of one joint replacing the URDF's (or adding an acceleration limit).

    Parameters
    ----------
    lower, upper : float, optional
        Position limits [rad or m].
    velocity : float, optional
        [rad/s or m/s].
    acceleration : float, optional
        [rad/s² or m/s²].
    """

    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    acceleration: float | None = None


class LimitsConfig(Schema):
    """Joint and torque limits of the optimisation.

    Parameters
    ----------
    margin : float
        In [0, 0.5): fraction off each position end, velocity and acceleration limit.
    acceleration : float or list of float, optional
        [rad/s²], one value or one per joint (URDFs have none); required to optimise.
    joints : dict of str to JointLimitOverride
        Overrides of URDF limits.
    continuous_range : float
        A continuous joint (no URDF position limits) moves within ``±continuous_range`` [rad],
        margin applied, unless ``joints`` gives its ``lower`` or ``upper``.
    torque : bool
        Check the nominal model's joint torques (RNEA) against ``(1 − margin)`` × effort limit.
    effort : dict of str to float
        Overrides of URDF effort limits [N·m or N].
    """

    margin: float = Field(0.05, ge=0, lt=0.5)
    acceleration: PerJoint | None = None
    joints: dict[str, JointLimitOverride] = {}
    continuous_range: PositiveFloat = math.pi
    torque: bool = False
    effort: dict[str, float] = {}


class PlaneObstacle(Schema):
    """The solid half-space ``n·x <= offset`` (base frame).

    Parameters
    ----------
    type : 'plane'
    name : str, optional
    normal : list of float
        (3,) outward normal, non-zero.
    offset : float
        [m].
    """

    type: Literal['plane']
    name: str | None = None
    normal: Vector3
    offset: float

    @pydantic.field_validator('normal')
    @classmethod
    def _non_zero(cls, normal):
        if not any(normal):
            raise ValueError('normal must be a non-zero 3-vector')
        return normal


class BoxObstacle(Schema):
    """A box (base frame).

    Parameters
    ----------
    type : 'box'
    name : str, optional
    size : list of float
        (3,) edge lengths [m], positive.
    position : list of float
        (3,) centre [m].
    rpy : list of float
        (3,) orientation, roll-pitch-yaw [rad].
    """

    type: Literal['box']
    name: str | None = None
    size: Annotated[list[PositiveFloat], Field(min_length=3, max_length=3)]
    position: Vector3
    rpy: Vector3 = [0.0, 0.0, 0.0]


class SphereObstacle(Schema):
    """A sphere (base frame).

    Parameters
    ----------
    type : 'sphere'
    name : str, optional
    radius : float
        [m], positive.
    position : list of float
        (3,) centre [m].
    rpy : list of float
        (3,) orientation [rad] (no effect on a sphere, accepted for symmetry).
    """

    type: Literal['sphere']
    name: str | None = None
    radius: PositiveFloat
    position: Vector3
    rpy: Vector3 = [0.0, 0.0, 0.0]


Obstacle = Annotated[PlaneObstacle | BoxObstacle | SphereObstacle,
                     Field(discriminator='type')]


class CollisionConfig(Schema):
    """Collision checks of the optimisation (``excitation.collision``).

    Parameters
    ----------
    self : bool
        Check self-collision of the URDF collision shapes.
    min_distance : float
        Required clearance [m].
    srdf : str, optional
        SRDF with disabled pairs (absolute once loaded).
    package_dirs : list of str
        Where ``package://`` meshes are found (default: the URDF's folders).
    ignore : list of [str, str]
        Further pairs (links or shapes) not checked.
    environment : list of obstacles
        Fixed obstacles, base frame.
    """

    self: bool = False
    min_distance: PositiveFloat = 0.01
    srdf: str | None = None
    package_dirs: list[str] = []
    ignore: list[Annotated[tuple[str, str], Field(strict=False)]] = []
    environment: list[Obstacle] = []

    @property
    def enabled(self) -> bool:
        """True when any collision check is asked for."""
        return self.self or bool(self.environment)


class RandomConfig(Schema):
    """Random search.

    Parameters
    ----------
    candidates : int
        Feasible candidates drawn.
    """

    candidates: PositiveInt = 200


class LocalConfig(Schema):
    """Gradient-based refinement (SLSQP).

    Parameters
    ----------
    iterations : int
        Maximum iterations.
    """

    iterations: PositiveInt = 60


class OptimizerConfig(Schema):
    """Sizes and operators of the optimisers.

    Parameters
    ----------
    random : RandomConfig
    ga : GeneticConfig
        The GA; its sizes also serve the SA-GA.
    annealing : AnnealingConfig
        The VFSA stage of the SA-GA.
    local : LocalConfig
    """

    random: RandomConfig = RandomConfig()
    ga: GeneticConfig = GeneticConfig()
    annealing: AnnealingConfig = AnnealingConfig()
    local: LocalConfig = LocalConfig()

    def sa_ga(self) -> SAGAConfig:
        """The SA-GA: sizes of ``ga``, the paper's operators, ``annealing``.

        Returns
        -------
        SAGAConfig
        """
        ga = self.ga
        return SAGAConfig(population=ga.population, generations=ga.generations, elite=ga.elite,
                          mutation_scale=ga.mutation_scale, stall=ga.stall,
                          annealing=self.annealing)


class ExcitationConfig(Schema):
    """Everything an excitation optimisation needs besides the URDF (module docstring).

    Parameters
    ----------
    harmonics : int
        N of eq. (14), 1..50.
    period : float
        [s].
    periods : int
        Periods the excitation node runs.
    objective : {'cond', 'dopt'}
        Condition number or D-optimality of the base regressor.
    samples : int
        Regressor samples per period, at least ``2·harmonics + 1``.
    start_at_rest : bool
        Constrain ``qd(0) = qdd(0) = 0``.
    regressor : RegressorSpec
        The columns to be identified.
    locked_joints : dict of str to float
        Joints held fixed [rad or m].
    limits : LimitsConfig
    collision : CollisionConfig
    optimizer : OptimizerConfig

    Attributes
    ----------
    source : str
        Where the settings come from, for error messages (not a file field).
    """

    harmonics: int = Field(6, ge=1, le=50)
    period: float = Field(10.0, gt=0)
    periods: PositiveInt = 4
    objective: Literal[OBJECTIVES] = 'cond'
    samples: PositiveInt = 100
    start_at_rest: bool = False
    regressor: RegressorSpec = RegressorSpec()
    locked_joints: dict[str, float] = {}
    limits: LimitsConfig = LimitsConfig()
    collision: CollisionConfig = CollisionConfig()
    optimizer: OptimizerConfig = OptimizerConfig()
    _source: str = PrivateAttr('excitation config')

    @pydantic.model_validator(mode='after')
    def _enough_samples(self):
        if self.samples < 2 * self.harmonics + 1:
            raise ValueError(f'field samples ({self.samples}) must be at least 2·harmonics + 1 '
                             f'({2 * self.harmonics + 1})')
        return self

    @property
    def source(self) -> str:
        """Where the settings come from (file name), for error messages."""
        return self._source

    def from_source(self, source: str) -> ExcitationConfig:
        """The same settings, labelled with where they come from.

        Parameters
        ----------
        source : str
            File name or description.

        Returns
        -------
        ExcitationConfig
        """
        labelled = self.model_copy()
        labelled._source = source
        return labelled


def load_excitation_config(path: str | Path) -> ExcitationConfig:
    """Read an excitation config file (module docstring).

    Relative ``collision.srdf`` and ``collision.package_dirs`` are taken from the file's folder.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    ExcitationConfig

    Raises
    ------
    InputError
        If the file is missing or unreadable, or a field is unknown or invalid (naming the
        file and the field).
    """
    path = Path(path)
    return config_from_dict(read_yaml(path, 'excitation config') or {}, str(path),
                            base_dir=path.parent)


def config_from_dict(data, source: str, base_dir: Path | None = None) -> ExcitationConfig:
    """Build the settings from the content of a config file.

    Parameters
    ----------
    data : dict
        The parsed file.
    source : str
        Where it comes from, for error messages.
    base_dir : Path, optional
        Folder of relative paths (default: the working directory).

    Returns
    -------
    ExcitationConfig

    Raises
    ------
    InputError
        As ``load_excitation_config``.
    """
    config = parse(ExcitationConfig, data, source).from_source(source)
    base_dir = base_dir or Path('.')
    coll = config.collision
    srdf = str(base_dir / coll.srdf) if coll.srdf else None
    dirs = [str(base_dir / d) for d in coll.package_dirs]
    if srdf != coll.srdf or dirs != coll.package_dirs:
        config = config.updated(collision=coll.updated(srdf=srdf, package_dirs=dirs))
    return config


def default_config(source: str = 'default excitation settings') -> ExcitationConfig:
    """The settings of an empty config file.

    Parameters
    ----------
    source : str
        Label for error messages.

    Returns
    -------
    ExcitationConfig
    """
    return ExcitationConfig().from_source(source)
