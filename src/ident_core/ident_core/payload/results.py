"""PAYLOAD.yaml: an identified payload (``format: robot-ident/payload/1``).

The file mirrors :class:`PayloadFile`::

    format: robot-ident/payload/1
    robot: {name, urdf, urdf_sha256, kinematics_sha256, joints}
    frame: flange                   # the payload frame
    selected: global                # the method whose values follow
    mass: 1.4987                    # kg
    com: [0.0, 0.0, 0.0941]         # m, in `frame`
    inertia: [[...], [...], [...]]  # kg·m², about the COM, `frame` axes (null: not estimated)
    methods:
      global: {mass, com, inertia, std: {mass, com, inertia}, physically_consistent,
               projected, unexcited, equations, residual_std}
      ...
    failures: {static: "why it gave no estimate", ...}
    drive_gains: [...]              # with a known mass: joint torque = gain × recorded effort
    drive_gains_std: [...]          #   (1 where the data do not determine the gain)
    drive_gains_estimate: [...]     # the gains as estimated (drive_gains_std: their std there)
    drive_gains_undetermined: [...] # joints whose gain was kept at 1
    data: {unloaded: [...], loaded: [...], model: RESULT.yaml or null}
"""
from __future__ import annotations

from typing import Literal

from ..estimation.results import RobotSection, robot_section
from ..model.robot import RobotModel
from ..schema import Document, Matrix, Schema
from .identify import PayloadIdentification
from .parameters import PayloadEstimate

FORMAT = 'robot-ident/payload/1'


class PayloadStd(Schema):
    """Standard deviations of a payload estimate.

    Parameters
    ----------
    mass : float
        [kg].
    com : list of float
        (3,) [m].
    inertia : list of list of float or None
        (3, 3) [kg·m²]; None if the inertia was not estimated.
    """

    mass: float
    com: list[float]
    inertia: Matrix | None = None


class MethodEntry(Schema):
    """The payload by one method.

    Parameters
    ----------
    mass : float
        [kg].
    com : list of float
        (3,) centre of mass in the payload frame [m].
    inertia : list of list of float or None
        (3, 3) about the centre of mass, frame axes [kg·m²]; None if not estimated.
    std : PayloadStd
        Standard deviations.
    physically_consistent : bool
        Positive mass and positive semi-definite pseudo-inertia.
    projected : bool
        The unconstrained estimate was not consistent and was projected.
    unexcited : list of str
        Payload parameters the data did not determine.
    equations : int
        Joint equations used (base parameters for the parameter difference).
    residual_std : list of float
        Residual standard deviation per joint [N·m or N].
    """

    mass: float
    com: list[float]
    inertia: Matrix | None = None
    std: PayloadStd
    physically_consistent: bool
    projected: bool = False
    unexcited: list[str] = []
    equations: int = 0
    residual_std: list[float] = []


class PayloadData(Schema):
    """What the payload was identified from.

    Parameters
    ----------
    unloaded, loaded : list of str
        The runs.
    model : str or None
        RESULT.yaml of the robot, if used.
    """

    unloaded: list[str] = []
    loaded: list[str] = []
    model: str | None = None


class PayloadFile(Document):
    """The whole PAYLOAD.yaml (module docstring).

    Parameters
    ----------
    format : str
        ``robot-ident/payload/1``.
    robot : RobotSection
        The robot.
    frame : str
        The payload frame.
    selected : str
        The method of ``mass``, ``com`` and ``inertia``.
    mass : float
        [kg].
    com : list of float
        (3,) centre of mass in ``frame`` [m].
    inertia : list of list of float or None
        (3, 3) about the centre of mass, ``frame`` axes [kg·m²]; None if not estimated.
    methods : dict of str to MethodEntry
        Every method that gave an estimate.
    failures : dict of str to str
        Why the others did not.
    drive_gains, drive_gains_std : list of float or None
        With a known mass: joint torque = gain × recorded effort, per joint (1 where the data
        do not determine the gain), and the standard deviations (of the estimate there).
    drive_gains_estimate : list of float or None
        The gains as estimated.
    drive_gains_undetermined : list of str
        The joints whose gain the data do not determine (kept at 1).
    data : PayloadData
        The inputs.
    """

    kind = 'payload file'
    format: Literal[FORMAT]
    robot: RobotSection
    frame: str
    selected: str
    mass: float
    com: list[float]
    inertia: Matrix | None = None
    methods: dict[str, MethodEntry]
    failures: dict[str, str] = {}
    drive_gains: list[float] | None = None
    drive_gains_std: list[float] | None = None
    drive_gains_estimate: list[float] | None = None
    drive_gains_undetermined: list[str] = []
    data: PayloadData = PayloadData()


def method_entry(estimate: PayloadEstimate) -> MethodEntry:
    """The file entry of one estimate.

    Parameters
    ----------
    estimate : PayloadEstimate

    Returns
    -------
    MethodEntry
    """
    sd = estimate.std()
    inertia = estimate.inertia
    return MethodEntry(
        mass=estimate.mass, com=estimate.com.tolist(),
        inertia=None if inertia is None else inertia.tolist(),
        std=PayloadStd(mass=sd['mass'], com=sd['com'].tolist(),
                       inertia=None if sd['inertia'] is None else sd['inertia'].tolist()),
        physically_consistent=estimate.physically_consistent, projected=estimate.projected,
        unexcited=list(estimate.unexcited), equations=estimate.equations,
        residual_std=[float(x) for x in estimate.residual_std])


def payload_file(robot: RobotModel, identification: PayloadIdentification,
                 data: PayloadData) -> PayloadFile:
    """The PAYLOAD.yaml content of an identification.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    identification : PayloadIdentification
        The payload by each method.
    data : PayloadData
        The inputs.

    Returns
    -------
    PayloadFile
    """
    methods = {k: method_entry(v) for k, v in identification.estimates.items()}
    chosen = methods[identification.selected]
    gains = identification.drive_gains
    return PayloadFile(
        format=FORMAT,
        robot=robot_section(robot),
        frame=identification.frame.name, selected=identification.selected, mass=chosen.mass,
        com=chosen.com, inertia=chosen.inertia, methods=methods,
        failures=dict(identification.failures),
        drive_gains=None if gains is None else gains.gains.tolist(),
        drive_gains_std=None if gains is None else gains.std.tolist(),
        drive_gains_estimate=None if gains is None else gains.estimate.tolist(),
        drive_gains_undetermined=[] if gains is None else gains.undetermined, data=data)
