"""The dynamic model of torque estimation: an identified model (RESULT.yaml, with a payload
from PAYLOAD.yaml) or a URDF, as a Pinocchio model plus the actuator terms, evaluated one
sample at a time (docs/methods.md §12).

    tau = M(q) qdd + C(q, qd) qd + g(q) + Gᵀ [Ia ∘ (G qdd) + f(G qd)]

The rigid body is Pinocchio's (``rnea``, ``computeRNEADerivatives``, ``aba``, ``crba``,
``computeCoriolisMatrix``) with the identified standard parameters as the bodies' inertias;
the joint-side rotor inertia ``Gᵀ diag(Ia) G`` goes into ``model.armature`` when it is diagonal
(no coupled transmission), and its off-diagonal part is added here otherwise. ``G`` is the
normalised gear matrix of the regressor (``model.regressor``) and ``f`` the identified friction
model per actuator (``friction.models.JointFriction``).

As in Pinocchio, a :class:`DynamicModel` is a constant description and every function takes
the work space ``data`` (``DynamicModel.create_data()``) it may overwrite.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..estimation.identified_model import IdentifiedModel
from ..estimation.results import read_result
from ..friction.models import LINEAR, JointFriction
from ..model.robot import RobotModel, configuration, load_robot
from ..payload.frame import payload_frame
from ..payload.results import PayloadFile

#: Relative error allowed when an identified body is turned into a Pinocchio inertia and back.
ROUND_TRIP_TOLERANCE = 1e-6


@dataclass
class DynamicModel:
    """Inverse and forward dynamics of a robot with its actuators.

    Parameters
    ----------
    robot : RobotModel
        The robot (joint names and order, limits).
    model : pinocchio.Model
        Kinematics of ``robot.model`` with the bodies' inertias of the dynamic model (payload
        included) and the diagonal of the joint-side rotor inertia as ``armature``.
    rotor_coupling : (n, n) ndarray or None
        Off-diagonal part of the joint-side rotor inertia ``Gᵀ diag(Ia) G`` [kg·m²]; None when
        it is diagonal.
    gear : (n, n) ndarray
        Normalised gear matrix ``G``: actuator velocities are ``G qd``.
    friction : JointFriction
        Friction per actuator.
    source : str
        Where the model comes from, for messages.
    """

    robot: RobotModel
    model: pin.Model
    rotor_coupling: np.ndarray | None
    gear: np.ndarray
    friction: JointFriction
    source: str

    def __post_init__(self):
        self._direct = bool(np.array_equal(self.gear, np.eye(len(self.gear))))

    @property
    def n(self) -> int:
        """Number of joints."""
        return self.robot.n

    @property
    def direct(self) -> bool:
        """Whether every actuator drives its joint alone (``gear`` is the identity)."""
        return self._direct

    def create_data(self) -> pin.Data:
        """A work space for the functions of this module.

        Returns
        -------
        pinocchio.Data
        """
        return self.model.createData()

    def friction_torque(self, qd: np.ndarray) -> np.ndarray:
        """Joint friction torque.

        Parameters
        ----------
        qd : (n,) ndarray
            Joint velocities [rad/s or m/s].

        Returns
        -------
        (n,) ndarray
            ``Gᵀ f(G qd)`` [N·m or N].
        """
        if self._direct:
            return self.friction.torque(qd)
        return self.gear.T @ self.friction.torque(self.gear @ qd)

    def friction_derivative(self, qd: np.ndarray) -> np.ndarray:
        """Jacobian of the joint friction torque with respect to the joint velocities.

        Parameters
        ----------
        qd : (n,) ndarray
            Joint velocities [rad/s or m/s].

        Returns
        -------
        (n, n) ndarray
            ``Gᵀ diag(f'(G qd)) G`` [N·m·s/rad or N·s/m]; the Coulomb step counts as flat.
        """
        g = self.gear
        slope = self.friction.torque_and_slope(g @ qd)[1]
        return (g.T * slope) @ g


def inverse_dynamics(dm: DynamicModel, data: pin.Data, q, qd, qdd,
                     friction: bool = True) -> np.ndarray:
    """Joint torques of a motion.

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd, qdd : (n,) ndarray
        Joint positions, velocities and accelerations [rad, rad/s, rad/s² or m, m/s, m/s²].
    friction : bool
        Include the friction torque (else: the rigid body and rotor inertia only).

    Returns
    -------
    (n,) ndarray
        ``tau`` [N·m or N].
    """
    tau = pin.rnea(dm.model, data, configuration(dm.model, q), qd, qdd) \
        + (dm.friction_torque(qd) if friction else 0.0)
    if dm.rotor_coupling is not None:
        tau += dm.rotor_coupling @ qdd
    return tau


def inverse_dynamics_derivatives(dm: DynamicModel, data: pin.Data, q, qd, qdd,
                                 friction: bool = True) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial derivatives of the joint torques: the matrices of the first-order Taylor
    expansion of the inverse dynamics (scara_kalman_torque_estimation_2018, eq. (14)–(20)).

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd, qdd : (n,) ndarray
        The motion where the derivatives are taken.
    friction : bool
        Include the friction torque's slope (else: the rigid body and rotor inertia only).

    Returns
    -------
    dtau_dq, dtau_dqd, dtau_dqdd : (n, n) ndarray
        ``∂tau/∂q``, ``∂tau/∂qd`` (with ``friction``, the friction slope; the Coulomb step
        counts as flat) and ``∂tau/∂qdd`` (the mass matrix with the rotor inertia); arrays of
        ``data`` where they need no sum, valid until its next use.

    References
    ----------
    .. [1] Zhang T., Liang X., "Kalman filter-based SCARA robot joint torque estimation",
       Journal of Zhejiang University (Engineering Science) 52(5):951–959, 2018,
       DOI 10.3785/j.issn.1008-973X.2018.05.015, eq. (14)–(20).
    .. [2] Carpentier J., Mansard N., "Analytical derivatives of rigid body dynamics
       algorithms", Robotics: Science and Systems, 2018, DOI 10.15607/RSS.2018.XIV.038.
    """
    pin.computeRNEADerivatives(dm.model, data, configuration(dm.model, q), qd, qdd)
    dtau_dqd = data.dtau_dv + dm.friction_derivative(qd) if friction else data.dtau_dv
    return data.dtau_dq, dtau_dqd, _with_rotors(dm, data.M)


def forward_dynamics(dm: DynamicModel, data: pin.Data, q, qd, tau) -> np.ndarray:
    """Joint accelerations under given joint torques (scara_kalman_torque_estimation_2018,
    eq. (10)): the articulated-body algorithm, or the mass matrix with the coupled rotor
    inertia.

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd : (n,) ndarray
        Joint positions and velocities.
    tau : (n,) ndarray
        Joint torques [N·m or N].

    Returns
    -------
    (n,) ndarray
        ``qdd`` [rad/s² or m/s²].
    """
    drive = tau - dm.friction_torque(qd)
    if dm.rotor_coupling is None:
        return pin.aba(dm.model, data, configuration(dm.model, q), qd, drive).copy()
    return np.linalg.solve(mass_matrix(dm, data, q), drive - pin.nonLinearEffects(
        dm.model, data, configuration(dm.model, q), qd))


def mass_matrix(dm: DynamicModel, data: pin.Data, q) -> np.ndarray:
    """Joint-space inertia ``M(q)`` with the coupled rotor inertia (``pin.crba``).

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q : (n,) ndarray
        Joint positions.

    Returns
    -------
    (n, n) ndarray
        [kg·m² or kg]; an array of ``data`` without rotor inertia.
    """
    return _with_rotors(dm, pin.crba(dm.model, data, configuration(dm.model, q)))


def _with_rotors(dm: DynamicModel, mass: np.ndarray) -> np.ndarray:
    return mass if dm.rotor_coupling is None else mass + dm.rotor_coupling


def generalized_momentum(dm: DynamicModel, data: pin.Data, q, qd) -> np.ndarray:
    """Generalised momentum ``p = M(q) qd`` (rotor inertia included) [De Luca 2006].

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd : (n,) ndarray
        Joint positions and velocities.

    Returns
    -------
    (n,) ndarray
        [N·m·s or N·s].
    """
    return mass_matrix(dm, data, q) @ qd


def momentum_bias(dm: DynamicModel, data: pin.Data, q, qd) -> np.ndarray:
    """The torque that changes the generalised momentum without input:
    ``ṗ = tau + tau_ext − beta`` with ``beta = g(q) + f(qd) − C(q, qd)ᵀ qd`` [De Luca 2006].

    Parameters
    ----------
    dm : DynamicModel
        The model.
    data : pinocchio.Data
        Its work space; overwritten.
    q, qd : (n,) ndarray
        Joint positions and velocities.

    Returns
    -------
    (n,) ndarray
        ``beta`` [N·m or N].

    References
    ----------
    .. [1] De Luca A., Albu-Schäffer A., Haddadin S., Hirzinger G., "Collision detection and
       safe reaction with the DLR-III lightweight manipulator arm", IEEE/RSJ International
       Conference on Intelligent Robots and Systems (IROS), 2006, pp. 1623–1630,
       DOI 10.1109/IROS.2006.282053.
    """
    x = configuration(dm.model, q)
    coriolis = pin.computeCoriolisMatrix(dm.model, data, x, qd)
    return pin.computeGeneralizedGravity(dm.model, data, x) + dm.friction_torque(qd) \
        - coriolis.T @ qd


def dynamic_model_from_urdf(robot: RobotModel) -> DynamicModel:
    """The URDF's rigid body, without rotor inertia or friction.

    Parameters
    ----------
    robot : RobotModel

    Returns
    -------
    DynamicModel
    """
    return DynamicModel(robot, robot.model.copy(), None, np.eye(robot.n),
                        JointFriction('none', {}), f'URDF {robot.urdf_source}')


def dynamic_model_from_result(identified: IdentifiedModel, source: str,
                              payload: PayloadFile | None = None) -> DynamicModel:
    """An identified model: its standard parameters (rigid body, rotor inertia, friction with
    the Stribeck shape), with a payload mounted.

    Parameters
    ----------
    identified : IdentifiedModel
        From RESULT.yaml (``read_result``).
    source : str
        Its file, for messages.
    payload : PayloadFile, optional
        A payload (PAYLOAD.yaml) added to the body that carries its frame; without an inertia
        (static method) it counts as a point mass.

    Returns
    -------
    DynamicModel

    Raises
    ------
    InputError
        If the result has no standard parameters (an older RESULT.yaml), a body's parameters
        cannot be a Pinocchio inertia (a mass of zero with first moments), or the payload
        belongs to another robot or names an unknown frame.
    """
    if identified.standard is None:
        raise InputError(f'{source}: no standard_parameters (written by an older version; '
                         'identify again)')
    robot, reg = identified.robot, identified.regressor
    chi = np.asarray(identified.standard, dtype=float)
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = _inertia(chi[10 * (i - 1):10 * i], f'{source}: body of joint '
                                     f'{robot.joint_names[i - 1]}')
    if payload is not None:
        _mount(model, robot, payload, source)
    n, gear = robot.n, reg.gear

    def values(term):
        return np.array([chi[reg.actuator_index(term, m)] for m in range(n)])

    coupling = None
    if identified.config.rotor_inertia:
        rotor = (gear.T * values('Ia')) @ gear
        model.armature = np.diag(rotor).copy()
        off = rotor - np.diag(np.diag(rotor))
        coupling = off if np.any(off) else None
    kind = identified.config.friction
    parameters = {term: values(term) for term in LINEAR.get(kind, ())}
    parameters.update(reg.friction_shape)
    return DynamicModel(robot, model, coupling, gear, JointFriction(kind, parameters), source)


def _inertia(phi: np.ndarray, where: str) -> pin.Inertia:
    inertia = pin.Inertia.FromDynamicParameters(phi)
    back = inertia.toDynamicParameters()
    if not np.all(np.isfinite(back)) or np.abs(back - phi).max() > \
            ROUND_TRIP_TOLERANCE * max(1.0, np.abs(phi).max()):
        raise InputError(f'{where}: mass {phi[0]:.3g} kg with first moments '
                         f'{np.round(phi[1:4], 6).tolist()} kg·m is no rigid body Pinocchio '
                         'can represent')
    return inertia


def _mount(model: pin.Model, robot: RobotModel, payload: PayloadFile, source: str) -> None:
    if payload.robot.joints != robot.joint_names:
        raise InputError(f'{source}: the payload was identified for joints '
                         f'{payload.robot.joints}, the model has {robot.joint_names}')
    frame = payload_frame(robot, payload.frame)
    rotational = np.zeros((3, 3)) if payload.inertia is None else np.asarray(payload.inertia)
    body = pin.Inertia(payload.mass, np.asarray(payload.com, dtype=float), rotational)
    model.inertias[frame.joint] = model.inertias[frame.joint] + frame.placement.act(body)


def load_dynamic_model(model_file: str | Path | None = None,
                       urdf: str | Path | RobotModel | None = None,
                       payload_file: str | Path | None = None,
                       ignore_urdf_change: bool = False) -> DynamicModel:
    """The dynamic model of an identification result or of a URDF.

    Parameters
    ----------
    model_file : str or Path, optional
        RESULT.yaml.
    urdf : str, Path or RobotModel, optional
        The URDF (or the robot loaded, e.g. from ``/robot_description``) alone, without
        ``model_file``, or the one to use instead of the URDF the result records.
    payload_file : str or Path, optional
        PAYLOAD.yaml of a payload mounted now.
    ignore_urdf_change : bool, optional
        Accept a URDF other than the one the result was identified with (``read_result``).

    Returns
    -------
    DynamicModel

    Raises
    ------
    InputError
        If neither file is given, or for a bad file (``read_result``, ``PayloadFile.read``,
        ``dynamic_model_from_result``).
    """
    payload = None if payload_file is None else PayloadFile.read(payload_file)
    if model_file is not None:
        return dynamic_model_from_result(read_result(model_file, urdf, ignore_urdf_change),
                                         str(model_file), payload)
    if urdf is None:
        raise InputError('a dynamic model needs RESULT.yaml or a URDF')
    robot = urdf if isinstance(urdf, RobotModel) else load_robot(urdf)
    if payload is None:
        return dynamic_model_from_urdf(robot)
    dm = dynamic_model_from_urdf(robot)
    _mount(dm.model, robot, payload, str(payload_file))
    return dm
