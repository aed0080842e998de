"""Settings of an excitation optimisation and their YAML file.

File format (every field optional; units SI, joint-indexed lists in URDF joint order)::

    harmonics: 6                 # N of eq. (14)
    period: 10.0                 # s (wf = 2π/period)
    periods: 4                   # periods the excitation node runs
    objective: cond              # cond | dopt
    samples: 100                 # regressor samples per period for the objectives
    start_at_rest: false         # constrain qd(0) = qdd(0) = 0 (else the node's quintic approach)
    regressor: {friction: viscous-coulomb-offset, rotor_inertia: false}
    locked_joints: {panda_finger_joint1: 0.0}   # joints held fixed (e.g. a gripper), rad or m
    limits:
      margin: 0.05               # fraction off each position end, velocity and acceleration
      acceleration: 20.0         # rad/s², one value or one per joint (URDFs have none)
      joints: {joint2: {lower: -2.0, velocity: 2.5}}   # overrides of URDF limits
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
      ga: {population: 40, generations: 50, elite: 2, ...}   # evolution.GeneticSettings
      annealing: {temperature: 0.05, cooling: 0.9, ...}      # evolution.Annealing (sa-ga)
      local: {iterations: 60}
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import yaml

from ..errors import InputError
from ..evolution import Annealing, GeneticSettings
from ..regressor import RegressorSpec

OBJECTIVES = ('cond', 'dopt')
OBSTACLE_TYPES = ('plane', 'box', 'sphere')
_TOP = {'harmonics', 'period', 'periods', 'objective', 'samples', 'start_at_rest', 'regressor',
        'locked_joints', 'limits', 'collision', 'optimizer'}
_LIMITS = {'margin', 'acceleration', 'joints', 'torque', 'effort'}
_COLLISION = {'self', 'min_distance', 'srdf', 'package_dirs', 'ignore', 'environment'}
_OPTIMIZER = {'random', 'ga', 'annealing', 'local'}


@dataclass
class ExcitationConfig:
    """Everything an excitation optimisation needs besides the URDF (see the module docstring
    for the meaning of each field). ``source`` names the file in error messages."""

    harmonics: int = 6
    period: float = 10.0
    periods: int = 4
    objective: str = 'cond'
    samples: int = 100
    start_at_rest: bool = False
    spec: RegressorSpec = field(default_factory=RegressorSpec)
    locked_joints: dict = field(default_factory=dict)
    margin: float = 0.05
    acceleration: float | list | None = None
    joint_limits: dict = field(default_factory=dict)
    torque: bool = False
    effort: dict = field(default_factory=dict)
    self_collision: bool = False
    min_distance: float = 0.01
    srdf: Path | None = None
    package_dirs: list = field(default_factory=list)
    ignore_pairs: list = field(default_factory=list)
    environment: list = field(default_factory=list)
    random_candidates: int = 200
    ga: GeneticSettings = field(default_factory=GeneticSettings)
    annealing: Annealing = field(default_factory=Annealing)
    local_iterations: int = 60
    source: str = 'excitation config'

    @property
    def collision(self) -> bool:
        """True when any collision check is asked for."""
        return self.self_collision or bool(self.environment)

    def with_changes(self, **changes) -> 'ExcitationConfig':
        """A copy with some fields replaced (None values are ignored), validated."""
        out = replace(self, **{k: v for k, v in changes.items() if v is not None})
        out.validate()
        return out

    def validate(self) -> None:
        """Raises InputError naming the source and the field at fault."""
        src = self.source
        if not (isinstance(self.harmonics, int) and 1 <= self.harmonics <= 50):
            raise InputError(f'{src}: field harmonics must be an integer in 1..50')
        for key in ('period', 'min_distance'):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InputError(f'{src}: field {key} must be a positive number, got {v!r}')
        for key in ('periods', 'samples', 'random_candidates', 'local_iterations'):
            v = getattr(self, key)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise InputError(f'{src}: field {key} must be a positive integer, got {v!r}')
        if self.samples < 2 * self.harmonics + 1:
            raise InputError(f'{src}: field samples must be at least 2·harmonics + 1')
        if self.objective not in OBJECTIVES:
            raise InputError(f'{src}: field objective {self.objective!r} unknown (choose from '
                             f'{", ".join(OBJECTIVES)})')
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) \
                or not 0 <= self.margin < 0.5:
            raise InputError(f'{src}: field limits.margin must be in [0, 0.5)')
        for i, obstacle in enumerate(self.environment):
            _check_obstacle(obstacle, f'{src}: collision.environment[{i}]')


def load_excitation_config(path: str | Path) -> ExcitationConfig:
    """Read a configuration file (module docstring).

    Raises:
        InputError: missing/unreadable file, unknown or invalid field (named with the file).
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise InputError(f'{path}: excitation config file not found') from None
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f'{path}: cannot read excitation config: {exc}') from None
    return config_from_dict(data, str(path), base_dir=path.parent)


def config_from_dict(data, source: str, base_dir: Path | None = None) -> ExcitationConfig:
    """Build a configuration from the file content; relative paths are taken from
    ``base_dir``.

    Raises:
        InputError: as ``load_excitation_config``.
    """
    if not isinstance(data, dict):
        raise InputError(f'{source}: an excitation config must hold a mapping')
    _known(data, _TOP, source, '')
    limits = _section(data, 'limits', _LIMITS, source)
    coll = _section(data, 'collision', _COLLISION, source)
    opt = _section(data, 'optimizer', _OPTIMIZER, source)
    base_dir = base_dir or Path('.')
    kw = {k: data[k] for k in ('harmonics', 'period', 'periods', 'objective', 'samples',
                               'start_at_rest') if k in data}
    if 'regressor' in data:
        reg = _mapping(data['regressor'], f'{source}: field regressor')
        _known(reg, {'friction', 'rotor_inertia'}, source, 'regressor.')
        try:
            kw['spec'] = RegressorSpec(**reg)
        except InputError as exc:
            raise InputError(f'{source}: field regressor: {exc}') from None
    kw['locked_joints'] = {str(k): _float(v, f'{source}: field locked_joints.{k}')
                           for k, v in _mapping(data.get('locked_joints', {}),
                                                f'{source}: field locked_joints').items()}
    kw.update({'margin': limits.get('margin', 0.05), 'acceleration': limits.get('acceleration'),
               'joint_limits': _mapping(limits.get('joints', {}), f'{source}: limits.joints'),
               'torque': bool(limits.get('torque', False)),
               'effort': _mapping(limits.get('effort', {}), f'{source}: limits.effort')})
    kw.update({'self_collision': bool(coll.get('self', False)),
               'min_distance': coll.get('min_distance', 0.01),
               'srdf': base_dir / coll['srdf'] if coll.get('srdf') else None,
               'package_dirs': [base_dir / p for p in coll.get('package_dirs', [])],
               'ignore_pairs': [tuple(p) for p in coll.get('ignore', [])],
               'environment': list(coll.get('environment', []))})
    if 'random' in opt:
        rnd = _mapping(opt['random'], f'{source}: optimizer.random')
        _known(rnd, {'candidates'}, source, 'optimizer.random.')
        kw['random_candidates'] = rnd.get('candidates', 200)
    if 'local' in opt:
        loc = _mapping(opt['local'], f'{source}: optimizer.local')
        _known(loc, {'iterations'}, source, 'optimizer.local.')
        kw['local_iterations'] = loc.get('iterations', 60)
    kw['ga'] = _settings(GeneticSettings, opt.get('ga', {}), source, 'optimizer.ga')
    kw['annealing'] = _settings(Annealing, opt.get('annealing', {}), source,
                                'optimizer.annealing')
    config = ExcitationConfig(source=source, **kw)
    config.validate()
    return config


def _settings(cls, data, source, where):
    data = _mapping(data, f'{source}: {where}')
    _known(data, {f.name for f in fields(cls)} - {'annealing'}, source, where + '.')
    data = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    try:
        return cls(**data)
    except (TypeError, InputError) as exc:
        raise InputError(f'{source}: {where}: {exc}') from None


def _section(data, key, known, source) -> dict:
    section = _mapping(data.get(key, {}), f'{source}: field {key}')
    _known(section, known, source, key + '.')
    return section


def _mapping(value, where) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f'{where} must be a mapping')
    return value


def _known(data, known, source, prefix) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InputError(f'{source}: unknown field(s) '
                         + ', '.join(prefix + str(k) for k in unknown))


def _float(value, where) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f'{where} must be a number, got {value!r}')
    return float(value)


def _check_obstacle(obstacle, where) -> None:
    if not isinstance(obstacle, dict) or obstacle.get('type') not in OBSTACLE_TYPES:
        raise InputError(f'{where}: needs type: one of {", ".join(OBSTACLE_TYPES)}')
    required = {'plane': ('normal', 'offset'), 'box': ('size', 'position'),
                'sphere': ('radius', 'position')}[obstacle['type']]
    allowed = set(required) | {'name', 'type', 'rpy'}
    unknown = sorted(set(obstacle) - allowed)
    if unknown:
        raise InputError(f'{where}: unknown field(s) {", ".join(unknown)}')
    for key in required:
        if key not in obstacle:
            raise InputError(f'{where}: field {key} missing')
