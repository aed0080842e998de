"""Distances to collision of a robot along a trajectory: the URDF collision shapes (Pinocchio's
geometry model, coal for the distances) against each other and against fixed obstacles.

Pairs checked: every pair of shapes on different bodies, except shapes on the same or on
adjacent bodies (parent and child joints), pairs disabled in an SRDF, pairs listed in
``collision.ignore``, pairs of two fixed shapes, and pairs of robot shapes that overlap in every
one of ``STRUCTURAL_SAMPLES`` random configurations within the joint limits (shapes that always
intersect by construction, e.g. a forearm cylinder through a wrist, as MoveIt's set-up assistant
disables them; listed in ``always_in_contact``). Self-collision pairs are only checked when
``collision.self`` is on; obstacles are checked against every moving shape. Meshes are replaced by
their convex hulls (conservative, and 10–100× faster than triangle meshes).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..robot_model import RobotModel, reduced_model
from .config import ExcitationConfig

STRUCTURAL_SAMPLES = 200


@dataclass
class Clearance:
    """Smallest distance over a set of configurations.

    Attributes:
        distance: m (negative: penetration). pair: the two shapes. sample: index of the
        configuration where it occurs.
    """

    distance: float
    pair: tuple[str, str]
    sample: int


class CollisionModel:
    """Collision shapes of ``robot`` plus the obstacles of ``config``.

    Raises:
        InputError: the URDF has no collision shape although self-collision is asked for, a
            mesh cannot be loaded, an SRDF is missing, an ignore pair names an unknown link, or
            an obstacle is malformed (each names the config file and field).
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        src = config.source
        full = pin.buildModelFromUrdf(str(robot.urdf))
        dirs = [str(p) for p in config.package_dirs] or _package_dirs(robot.urdf)
        try:
            geom = pin.buildGeomFromUrdf(full, str(robot.urdf), pin.COLLISION,
                                        package_dirs=dirs)
        except (RuntimeError, ValueError) as exc:
            raise InputError(f'{robot.urdf}: cannot load the collision shapes '
                             f'({str(exc).strip().splitlines()[0]}); set collision.package_dirs '
                             f'in {src}') from None
        model = full
        if robot.locked_joints:
            model, geom = reduced_model(full, robot.locked_joints, str(robot.urdf), geom)
        if config.self_collision and not len(geom.geometryObjects):
            raise InputError(f'{robot.urdf}: no collision shapes, self-collision cannot be checked')
        _convex_hulls(geom)
        self.robot_shapes = len(geom.geometryObjects)
        for i, obstacle in enumerate(config.environment):
            geom.addGeometryObject(_obstacle(obstacle, f'{src}: collision.environment[{i}]', i))
        self.model, self.geom = model, geom
        self._pairs(model, geom, config)
        self.data = model.createData()
        self.geom_data = pin.GeometryData(geom)

    def _pairs(self, model, geom, config) -> None:
        geom.addAllCollisionPairs()
        if config.srdf is not None:
            if not Path(config.srdf).is_file():
                raise InputError(f'{config.source}: collision.srdf {config.srdf} not found')
            pin.removeCollisionPairs(model, geom, str(config.srdf))
        ignore = {frozenset(p) for p in config.ignore_pairs}
        links = {model.frames[o.parentFrame].name for o in geom.geometryObjects}
        unknown = sorted({name for p in ignore for name in p} - links
                         - {o.name for o in geom.geometryObjects})
        if unknown:
            raise InputError(f'{config.source}: collision.ignore names unknown link(s) '
                             f'{", ".join(unknown)}')
        keep = []
        for pair in geom.collisionPairs:
            a, b = geom.geometryObjects[pair.first], geom.geometryObjects[pair.second]
            if self._checked(model, a, b, pair, config, ignore):
                keep.append((pair.first, pair.second))
        geom.removeAllCollisionPairs()
        for first, second in keep:
            geom.addCollisionPair(pin.CollisionPair(first, second))
        always = self._always_in_contact(model, geom, self.robot_shapes)
        self.always_in_contact = [(geom.geometryObjects[p.first].name,
                                   geom.geometryObjects[p.second].name)
                                  for i, p in enumerate(geom.collisionPairs) if always[i]]
        keep = [k for k, a in zip(keep, always) if not a]
        geom.removeAllCollisionPairs()
        for first, second in keep:
            geom.addCollisionPair(pin.CollisionPair(first, second))
        if not keep:
            raise InputError(f'{config.source}: collision checks are on but no pair of shapes '
                             f'is left to check')

    @staticmethod
    def _always_in_contact(model, geom, robot_shapes) -> np.ndarray:
        """(pairs,) bool: a pair of robot shapes that overlaps in every random configuration
        (pairs with an obstacle are never dropped: touching it always is an error)."""
        rng = np.random.default_rng(0)
        data, geom_data = model.createData(), pin.GeometryData(geom)
        lo = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -np.pi)
        hi = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, np.pi)
        always = np.array([max(p.first, p.second) < robot_shapes for p in geom.collisionPairs])
        for _ in range(STRUCTURAL_SAMPLES):
            pin.computeDistances(model, data, geom, geom_data, rng.uniform(lo, hi))
            always &= np.array([r.min_distance < 0 for r in geom_data.distanceResults])
            if not always.any():
                break
        return always

    def _checked(self, model, a, b, pair, config, ignore) -> bool:
        ja, jb = a.parentJoint, b.parentJoint
        if ja == jb or (ja == 0 and jb == 0):
            return False
        names = {frozenset((a.name, b.name)),
                 frozenset((model.frames[a.parentFrame].name, model.frames[b.parentFrame].name))}
        if names & ignore:
            return False
        obstacle = max(pair.first, pair.second) >= self.robot_shapes
        if obstacle:
            return True
        adjacent = model.parents[ja] == jb or model.parents[jb] == ja
        return config.self_collision and not adjacent

    @property
    def pair_names(self) -> list[tuple[str, str]]:
        """Names of the shapes of every checked pair."""
        objs = self.geom.geometryObjects
        return [(objs[p.first].name, objs[p.second].name) for p in self.geom.collisionPairs]

    def clearance(self, q: np.ndarray) -> Clearance:
        """Smallest distance over configurations ``q`` (M, n), model joint order."""
        best = Clearance(np.inf, ('', ''), -1)
        objs = self.geom.geometryObjects
        for k, qk in enumerate(np.asarray(q, float)):
            i = pin.computeDistances(self.model, self.data, self.geom, self.geom_data, qk)
            d = self.geom_data.distanceResults[i].min_distance
            if d < best.distance:
                p = self.geom.collisionPairs[i]
                best = Clearance(float(d), (objs[p.first].name, objs[p.second].name), k)
        return best


def _package_dirs(urdf: Path) -> list[str]:
    """The URDF's folder and its parents: ``package://NAME/...`` resolves when ``NAME`` is a
    folder in one of them."""
    return [str(p) for p in list(urdf.resolve().parents)[:6]]


def _convex_hulls(geom) -> None:
    for obj in geom.geometryObjects:
        if isinstance(obj.geometry, coal.BVHModelBase):
            obj.geometry.buildConvexRepresentation(False)
            obj.geometry = obj.geometry.convex


def _obstacle(spec: dict, where: str, index: int) -> pin.GeometryObject:
    try:
        kind = spec['type']
        if kind == 'plane':
            normal = np.asarray(spec['normal'], float)
            if normal.shape != (3,) or np.linalg.norm(normal) == 0:
                raise ValueError('normal must be a non-zero 3-vector')
            shape = coal.Halfspace(normal / np.linalg.norm(normal), float(spec['offset']))
            placement = pin.SE3.Identity()
        else:
            position = np.asarray(spec['position'], float).reshape(3)
            rotation = pin.rpy.rpyToMatrix(*np.asarray(spec.get('rpy', [0, 0, 0]), float))
            placement = pin.SE3(rotation, position)
            if kind == 'box':
                size = np.asarray(spec['size'], float).reshape(3)
                if np.any(size <= 0):
                    raise ValueError('size must be positive')
                shape = coal.Box(*size)
            else:
                if not float(spec['radius']) > 0:
                    raise ValueError('radius must be positive')
                shape = coal.Sphere(float(spec['radius']))
    except (TypeError, ValueError, KeyError) as exc:
        raise InputError(f'{where}: {exc}') from None
    return pin.GeometryObject(str(spec.get('name', f'obstacle{index}')), 0, 0, placement, shape)
