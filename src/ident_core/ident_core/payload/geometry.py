"""Geometry of a payload for display: the equivalent-inertia box, and the URDF link whose frame
carries the payload frame (docs/methods.md §11)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..model.inertial import body_links
from ..model.robot import RobotModel
from .frame import PayloadFrame


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


def frame_in_link(robot: RobotModel, frame: PayloadFrame) -> tuple[str, pin.SE3]:
    """The URDF link of the body that carries the payload frame, and the frame in it.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    frame : PayloadFrame
        The payload frame.

    Returns
    -------
    link : str
        The body's link (a frame ``robot_state_publisher`` broadcasts).
    placement : pinocchio.SE3
        The payload frame in that link's frame.
    """
    return body_links(robot)[frame.joint - 1], pin.SE3(frame.placement)
