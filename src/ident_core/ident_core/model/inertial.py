"""Standard inertial parameters of one body: pseudo-inertia, physical consistency, and the
mass / centre of mass / inertia form of a URDF ``<inertial>`` (docs/methods.md §1).

A body's 10 standard parameters ``phi = [m, mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz, I_yz,
I_zz]`` (Pinocchio's order, inertia about the body frame origin) are those of a physical rigid
body exactly when its pseudo-inertia matrix

    J(phi) = [[Σ, h], [hᵀ, m]],   Σ = ½ tr(I) 1 − I,   h = m c

is positive semi-definite (Wensing, Kim & Slotine 2018). ``J`` is linear in ``phi``, so
``J(phi) ⪰ 0`` is a linear matrix inequality, the constraint of ``estimation.pc_wls``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .robot import RobotModel

#: Relative tolerance of the consistency check on the smallest eigenvalue of J.
CONSISTENCY_TOLERANCE = 1e-9


def pseudo_inertia(phi: np.ndarray) -> np.ndarray:
    """The pseudo-inertia matrix of a body's standard parameters.

    Parameters
    ----------
    phi : (10,) ndarray
        ``[m, mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` [kg, kg·m, kg·m²].

    Returns
    -------
    J : (4, 4) ndarray
        Symmetric; upper-left block in kg·m², last column kg·m, corner kg.

    References
    ----------
    .. [1] Wensing P. M., Kim S., Slotine J.-J. E., "Linear matrix inequalities for physically
       consistent inertial parameter identification: a statistical perspective on the mass
       distribution", IEEE Robotics and Automation Letters 3(1):60–67, 2018,
       doi:10.1109/LRA.2017.2729659.
    """
    return pin.PseudoInertia.FromDynamicParameters(np.asarray(phi, dtype=float)).toMatrix()


def pseudo_inertia_basis() -> np.ndarray:
    """The linear map from standard parameters to the pseudo-inertia.

    Returns
    -------
    E : (10, 4, 4) ndarray
        ``J(phi) = Σ_k phi_k E[k]``.
    """
    return np.array([pseudo_inertia(e) for e in np.eye(10)])


def physically_consistent(phi: np.ndarray, tolerance: float = CONSISTENCY_TOLERANCE) -> bool:
    """Whether standard parameters belong to a physical rigid body.

    Parameters
    ----------
    phi : (10,) ndarray
        Standard parameters of one body (``pseudo_inertia``).
    tolerance : float
        The smallest eigenvalue of ``J`` may be ``-tolerance·‖J‖`` (rounding).

    Returns
    -------
    bool
        True when the mass is positive and ``J(phi) ⪰ 0`` (equivalently: positive mass, and an
        inertia about the centre of mass that is positive semi-definite and satisfies the
        triangle inequalities).
    """
    j = pseudo_inertia(phi)
    scale = max(np.abs(j).max(), np.finfo(float).tiny)
    return bool(phi[0] > 0 and np.linalg.eigvalsh(j)[0] >= -tolerance * scale)


@dataclass
class LinkInertial:
    """A body's inertial parameters as in a URDF ``<inertial>``.

    Parameters
    ----------
    joint : str
        The moving joint that carries the body.
    link : str
        The URDF link of that joint (the body's frame).
    mass : float
        [kg].
    com : (3,) ndarray
        Centre of mass in the link frame [m].
    inertia : (3, 3) ndarray
        Inertia about the centre of mass, link-frame axes [kg·m²].
    physically_consistent : bool
        See ``physically_consistent``.
    """

    joint: str
    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    physically_consistent: bool


def link_inertials(robot: RobotModel, inertial: np.ndarray) -> list[LinkInertial]:
    """Mass, centre of mass and inertia of every body from stacked standard parameters.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    inertial : (10·link_count,) ndarray
        Standard parameters per body, Pinocchio order (``Regressor`` columns).

    Returns
    -------
    list of LinkInertial
        One per moving joint. A body of zero or negative mass has no centre of mass: ``com``
        is then ``mc / m`` where defined, else zeros.
    """
    links = body_links(robot)
    out = []
    for i, (joint, link) in enumerate(zip(robot.joint_names, links)):
        phi = np.asarray(inertial[10 * i:10 * i + 10], dtype=float)
        out.append(LinkInertial(joint, link, *mass_com_inertia(phi), physically_consistent(phi)))
    return out


def mass_com_inertia(phi: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre of mass and inertia about the centre of mass of standard parameters.

    Parameters
    ----------
    phi : (10,) ndarray
        ``[m, mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` [kg, kg·m, kg·m²],
        inertia about the frame origin.

    Returns
    -------
    mass : float
        [kg].
    com : (3,) ndarray
        ``mc / m`` [m]; zeros for a zero mass.
    inertia : (3, 3) ndarray
        About the centre of mass, frame axes (parallel-axis theorem) [kg·m²].
    """
    phi = np.asarray(phi, dtype=float)
    mass = float(phi[0])
    com = phi[1:4] / mass if mass != 0 else np.zeros(3)
    skew = pin.skew(com)
    return mass, com, inertia_matrix(phi[4:]) + mass * skew @ skew


def body_links(robot: RobotModel) -> list[str]:
    """The URDF link that each moving joint carries (the frame of its body).

    Parameters
    ----------
    robot : RobotModel
        The robot.

    Returns
    -------
    list of str
        (n,) link names, joint order.
    """
    model = robot.model
    names = {}
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint > 0 \
                and frame.parentJoint not in names and frame.placement.isIdentity():
            names[frame.parentJoint] = frame.name
    return [names.get(j, model.names[j]) for j in range(1, model.njoints)]


def inertia_matrix(six) -> np.ndarray:
    """The symmetric inertia matrix of its six entries.

    Parameters
    ----------
    six : (6,) array_like
        ``[I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` (Pinocchio's order, the last six standard
        parameters of a body; also a URDF payload's ``ixx ixy iyy ixz iyz izz``) [kg·m²].

    Returns
    -------
    (3, 3) ndarray
    """
    ixx, ixy, iyy, ixz, iyz, izz = np.asarray(six, dtype=float)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def equivalent_box(mass: float, inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The homogeneous box with the same mass and inertia about its centre.

    A box of sides ``a, b, c`` has principal moments ``m (b² + c²)/12`` etc.; so
    ``a² = 6 (I_2 + I_3 − I_1) / m`` for principal moments ``I_1..3``. A side whose square comes
    out negative (an inertia that breaks the triangle inequality) is 0.

    Parameters
    ----------
    mass : float
        [kg], positive.
    inertia : (3, 3) ndarray
        About the centre of mass [kg·m²].

    Returns
    -------
    sides : (3,) ndarray
        Along the principal axes [m].
    rotation : (3, 3) ndarray
        Columns: the principal axes in the inertia's frame (a proper rotation).
    """
    moments, axes = np.linalg.eigh((inertia + inertia.T) / 2)
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    total = moments.sum()
    sides = np.sqrt(np.clip(6 * (total - 2 * moments) / mass, 0.0, None))
    return sides, axes


def link_equivalent_box(body: LinkInertial) -> tuple[np.ndarray, np.ndarray] | None:
    """The equivalent-inertia box of a body, if it is a physical rigid body.

    Parameters
    ----------
    body : LinkInertial
        Mass [kg], centre of mass (3,) [m] and inertia (3, 3) about it [kg·m²], in the link
        frame, and their physical consistency.

    Returns
    -------
    sides : (3,) ndarray
        Along the principal axes [m] (``equivalent_box``).
    rotation : (3, 3) ndarray
        Columns: the principal axes in the link frame (a proper rotation).

        None instead of the pair when the body has no such box: a mass ≤ 0, a centre of mass
        or inertia that is not finite, or parameters that are not physically consistent (an
        inertia that is not positive semi-definite or breaks the triangle inequalities).
    """
    inertia = np.asarray(body.inertia, dtype=float)
    if not (body.physically_consistent and body.mass > 0
            and np.all(np.isfinite(body.com)) and np.all(np.isfinite(inertia))):
        return None
    return equivalent_box(body.mass, inertia)


def collision_boxes(robot: RobotModel, package_dirs: list[str] | None = None) -> list:
    """Axis-aligned box around the collision geometry of each body, in the body frame.

    Parameters
    ----------
    robot : RobotModel
        The robot (its URDF's ``<collision>`` elements).
    package_dirs : list of str, optional
        Where ``package://`` meshes are found.

    Returns
    -------
    list of ((3,), (3,)) or None
        (n,) lower and upper corner [m] per moving joint's body (shapes of links fixed to it
        included); None for a body without collision geometry.

    Raises
    ------
    InputError
        If the collision geometry cannot be loaded (e.g. a mesh is not found).
    """
    from .robot import reduced_model

    try:
        full, geometry = robot.geometry(pin.COLLISION, package_dirs)
    except (RuntimeError, ValueError) as exc:
        raise InputError(f'{robot.urdf_source}: cannot load the collision geometry '
                         f'({str(exc).strip().splitlines()[0]})') from None
    if robot.locked_joints:
        _, geometry = reduced_model(full, robot.locked_joints, robot.urdf_source, geometry)
    boxes: list = [None] * robot.n
    for obj in geometry.geometryObjects:
        if obj.parentJoint == 0:
            continue
        obj.geometry.computeLocalAABB()
        lo, hi = obj.geometry.aabb_local.min_, obj.geometry.aabb_local.max_
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                            for z in (lo[2], hi[2])])
        points = corners @ obj.placement.rotation.T + obj.placement.translation
        k = obj.parentJoint - 1
        new = (points.min(axis=0), points.max(axis=0))
        boxes[k] = new if boxes[k] is None else (np.minimum(boxes[k][0], new[0]),
                                                  np.maximum(boxes[k][1], new[1]))
    return boxes
