"""Geometry of a payload for display: the URDF link whose frame carries the payload frame
(docs/methods.md §11); the equivalent-inertia box is ``model.inertial.equivalent_box``."""
from __future__ import annotations

import pinocchio as pin

from ..model.inertial import body_links
from ..model.robot import RobotModel
from .frame import PayloadFrame


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
