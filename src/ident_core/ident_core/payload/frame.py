"""The frame a payload is identified in, and its regressor (docs/methods.md §11).

A payload rigidly fixed to the body of joint ``j`` adds its inertia, carried from the payload
frame ``F`` to the joint frame by Pinocchio's ``SE3.act``, to that body. Its standard parameters
``chi_L = [m, m·c (3), I (6)]`` in ``F`` (Pinocchio's order, inertia about the origin of ``F``)
map linearly onto the body's, ``phi_j += T chi_L``, so the joint torques it causes are
``W_L chi_L`` with ``W_L = Y_j T``, ``Y_j`` the 10 columns of body ``j`` in the joint torque
regressor (``pin.computeJointTorqueRegressor``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..model.regressor import INERTIAL_NAMES
from ..model.robot import RobotModel

#: Names of the payload parameters, in ``chi_L`` order (those of a body in the regressor).
PAYLOAD_NAMES = INERTIAL_NAMES


@dataclass(frozen=True)
class PayloadFrame:
    """Where the payload is fixed and how its parameters reach the robot's body.

    Parameters
    ----------
    name : str
        The frame ``F`` (a frame of the Pinocchio model: joint, link or fixed-joint name).
    joint : int
        Pinocchio index (1-based) of the moving joint whose body carries ``F``.
    placement : pinocchio.SE3
        ``F`` in that joint's frame.
    transform : (10, 10) ndarray
        ``T``: the body's standard parameters change by ``T chi_L``.
    """

    name: str
    joint: int
    placement: pin.SE3
    transform: np.ndarray

    @property
    def columns(self) -> slice:
        """The 10 columns of the carrying body in the regressor (``Regressor.names``)."""
        return slice(10 * (self.joint - 1), 10 * self.joint)

    def regressor(self, full: np.ndarray) -> np.ndarray:
        """The payload regressor from a robot regressor.

        Parameters
        ----------
        full : (N, n, p) ndarray
            Regressor of the robot (``Regressor.compute``), standard columns.

        Returns
        -------
        W_L : (N, n, 10) ndarray
            ``tau_payload = W_L @ chi_L``.
        """
        return full[:, :, self.columns] @ self.transform


def payload_frame(robot: RobotModel, name: str | None = None) -> PayloadFrame:
    """Resolve the payload frame of a robot.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    name : str, optional
        A frame of the model: a joint name (``panda_joint7``), a link name (``tool0``,
        ``flange``) or a fixed joint's name; default: the frame of the last moving joint.

    Returns
    -------
    PayloadFrame

    Raises
    ------
    InputError
        If the model has no such frame, or the frame is on the fixed base (no moving body
        carries it).
    """
    model = robot.model
    name = name or model.names[model.njoints - 1]
    if not model.existFrame(name):
        frames = sorted({f.name for f in model.frames if f.parentJoint > 0})
        raise InputError(f'payload frame {name!r} is not a frame of {robot.urdf_source} '
                         f'(frames on moving bodies: {", ".join(frames)})')
    frame = model.frames[model.getFrameId(name)]
    if frame.parentJoint == 0:
        raise InputError(f'payload frame {name!r} is on the fixed base of {robot.urdf_source}: '
                         'no joint moves it')
    placement = pin.SE3(frame.placement)
    return PayloadFrame(name, int(frame.parentJoint), placement, _transform(placement))


def _transform(placement: pin.SE3) -> np.ndarray:
    """T with ``T phi_F = placement.act(phi_F)`` in standard parameters (linear: by columns,
    from a unit body plus each unit vector)."""
    def carried(phi):
        return placement.act(pin.Inertia.FromDynamicParameters(phi)).toDynamicParameters()

    unit = np.array([1.0, 0, 0, 0, 1, 0, 1, 0, 0, 1])
    origin = carried(unit)
    return np.column_stack([carried(unit + e) - origin for e in np.eye(10)])
