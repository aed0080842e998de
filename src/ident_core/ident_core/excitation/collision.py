"""Distances to collision of a robot along a trajectory (docs/methods.md §6): the URDF collision
shapes (Pinocchio's geometry model, coal for the distances) against each other and against fixed
obstacles.

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
from ..model.robot import RobotModel, configuration, position_limits, reduced_model
from .config import BoxObstacle, ExcitationConfig, PlaneObstacle

STRUCTURAL_SAMPLES = 200


@dataclass
class Clearance:
    """Smallest distance over a set of configurations.

    Parameters
    ----------
    distance : float
        [m]; negative: penetration.
    pair : (str, str)
        The two shapes.
    sample : int
        Index of the configuration where it occurs.
    """

    distance: float
    pair: tuple[str, str]
    sample: int


class CollisionModel:
    """Collision shapes of a robot plus fixed obstacles.

    The models are constant; ``clearance`` creates its own work space, so one instance can be
    shared between threads.

    Parameters
    ----------
    robot : RobotModel
        The robot (locked joints are honoured).
    config : ExcitationConfig
        ``collision`` settings.

    Attributes
    ----------
    model : pinocchio.Model
        The kinematic model (reduced by the locked joints).
    geom : pinocchio.GeometryModel
        Robot shapes (meshes as convex hulls) and obstacles, with the checked pairs.
    robot_shapes : int
        Number of robot shapes (the obstacles follow).
    always_in_contact : list of (str, str)
        Robot shape pairs dropped because they overlap in every sampled configuration.

    Raises
    ------
    InputError
        If the URDF has no collision shape although self-collision is asked for, a mesh cannot
        be loaded, the SRDF is missing, an ignore pair names an unknown link, or no pair is left
        to check (each names the config file and field).
    """

    def __init__(self, robot: RobotModel, config: ExcitationConfig):
        src, coll = config.source, config.collision
        dirs = list(coll.package_dirs) or _package_dirs(robot.urdf)
        try:
            full, geom = robot.geometry(pin.COLLISION, dirs)
        except (RuntimeError, ValueError) as exc:
            raise InputError(f'{robot.urdf_source}: cannot load the collision shapes '
                             f'({str(exc).strip().splitlines()[0]}); set collision.package_dirs '
                             f'in {src}') from None
        model = full
        if robot.locked_joints:
            model, geom = reduced_model(full, robot.locked_joints, robot.urdf_source, geom)
        if coll.self and not len(geom.geometryObjects):
            raise InputError(f'{robot.urdf_source}: no collision shapes, self-collision cannot '
                             'be checked')
        _convex_hulls(geom)
        self.robot_shapes = len(geom.geometryObjects)
        for i, obstacle in enumerate(coll.environment):
            geom.addGeometryObject(_obstacle(obstacle, i))
        self.model, self.geom = model, geom
        self._pairs(model, geom, config)

    def _pairs(self, model, geom, config) -> None:
        coll = config.collision
        geom.addAllCollisionPairs()
        if coll.srdf is not None:
            if not Path(coll.srdf).is_file():
                raise InputError(f'{config.source}: collision.srdf {coll.srdf} not found')
            pin.removeCollisionPairs(model, geom, coll.srdf)
        ignore = {frozenset(p) for p in coll.ignore}
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
        lo, hi = position_limits(model)
        lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
        always = np.array([max(p.first, p.second) < robot_shapes for p in geom.collisionPairs])
        for _ in range(STRUCTURAL_SAMPLES):
            pin.computeDistances(model, data, geom, geom_data,
                                 configuration(model, rng.uniform(lo, hi)))
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
        return config.collision.self and not adjacent

    @property
    def pair_names(self) -> list[tuple[str, str]]:
        """(pairs,) names of the shapes of every checked pair."""
        objs = self.geom.geometryObjects
        return [(objs[p.first].name, objs[p.second].name) for p in self.geom.collisionPairs]

    def clearance(self, q: np.ndarray) -> Clearance:
        """Smallest distance over configurations.

        Parameters
        ----------
        q : (M, n) ndarray
            Configurations, model joint order.

        Returns
        -------
        Clearance
        """
        best = Clearance(np.inf, ('', ''), -1)
        objs = self.geom.geometryObjects
        data, geom_data = self.model.createData(), pin.GeometryData(self.geom)
        for k, qk in enumerate(configuration(self.model, q)):
            i = pin.computeDistances(self.model, data, self.geom, geom_data, qk)
            d = geom_data.distanceResults[i].min_distance
            if d < best.distance:
                p = self.geom.collisionPairs[i]
                best = Clearance(float(d), (objs[p.first].name, objs[p.second].name), k)
        return best


def _package_dirs(urdf: Path | None) -> list[str]:
    """The URDF's folder and its parents: ``package://NAME/...`` resolves when ``NAME`` is a
    folder in one of them (none for a URDF that came as text: Pinocchio's search of
    ``ROS_PACKAGE_PATH`` and ``AMENT_PREFIX_PATH``)."""
    return [] if urdf is None else [str(p) for p in list(urdf.resolve().parents)[:6]]


def _convex_hulls(geom) -> None:
    for obj in geom.geometryObjects:
        if isinstance(obj.geometry, coal.BVHModelBase):
            obj.geometry.buildConvexRepresentation(False)
            obj.geometry = obj.geometry.convex


def _obstacle(spec: PlaneObstacle | BoxObstacle, index: int) -> pin.GeometryObject:
    """The Pinocchio geometry object of an obstacle of the config (validated there)."""
    if isinstance(spec, PlaneObstacle):
        normal = np.asarray(spec.normal, float)
        shape = coal.Halfspace(normal / np.linalg.norm(normal), spec.offset)
        placement = pin.SE3.Identity()
    else:
        rotation = pin.rpy.rpyToMatrix(*np.asarray(spec.rpy, float))
        placement = pin.SE3(rotation, np.asarray(spec.position, float))
        shape = coal.Box(*spec.size) if isinstance(spec, BoxObstacle) \
            else coal.Sphere(spec.radius)
    return pin.GeometryObject(spec.name or f'obstacle{index}', 0, 0, placement, shape)
