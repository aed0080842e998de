"""Messages of ident_core results and states: identified parameters, friction and payload
results, RViz markers of bodies, payloads and collisions, the recorder's ``RecordingInfo``, the
simulator's ``JointState`` and the torque estimator's ``Collision``. Trajectory messages are in
``trajectories``."""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Inertia
from rclpy.time import Time as ClockTime
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from ident_core.data.bag.summary import RecordingSummary
from ident_core.friction.fit import FrictionFit
from ident_core.friction.identify import FrictionIdentification
from ident_core.friction.models import parameter_names
from ident_core.model.inertial import LinkInertial, equivalent_box, link_equivalent_box
from ident_core.payload.identify import PayloadIdentification
from ident_core.payload.parameters import PayloadEstimate
from ident_core.torque_estimation.collision import Collision as CollisionEvent
from ident_msgs.msg import (
    Collision,
    FrictionParameters,
    FrictionResult,
    IdentifiedParameters,
    Payload,
    RecordingInfo,
)

#: Namespace and ids of the payload markers: each result replaces the markers of the last one.
PAYLOAD_MARKER_NAMESPACE = 'payload'
COM_MARKER_ID = 0
BOX_MARKER_ID = 1
#: Diameter of the sphere at the centre of mass [m].
COM_MARKER_DIAMETER = 0.02
#: Smallest side drawn for the equivalent box [m] (RViz refuses a zero scale).
MIN_BOX_SIDE = 1e-3
#: Namespaces of the per-link inertia markers: identified bodies and the URDF's a-priori ones.
IDENTIFIED_MARKER_NAMESPACE = 'identified'
URDF_MARKER_NAMESPACE = 'urdf'
#: Colours (r, g, b) of the per-link markers: identified orange, URDF blue; a body that is not
#: physically consistent gets a red text instead of its box.
IDENTIFIED_COLOR = (1.0, 0.55, 0.0)
URDF_COLOR = (0.2, 0.5, 0.9)
WARNING_COLOR = (1.0, 0.1, 0.1)
#: Opacity of the equivalent-inertia boxes (the robot and the other boxes show through).
BOX_ALPHA = 0.4
#: Height of the texts [m].
TEXT_HEIGHT = 0.03
#: Namespace of the collision markers, and diameter of their sphere [m].
COLLISION_MARKER_NAMESPACE = 'collision'
COLLISION_MARKER_DIAMETER = 0.08


def parameters_msg(result: dict, stamp: Time, result_path: str = '') -> IdentifiedParameters:
    """The ``IdentifiedParameters`` message of an identification result.

    Parameters
    ----------
    result : dict
        RESULT.yaml content (``ResultFile.model_dump()``); ``robot``, ``config``,
        ``base_parameters``, ``actuators``, ``identification`` and ``validation`` are used.
    stamp : builtin_interfaces.msg.Time
        Header stamp.
    result_path : str
        Where RESULT.yaml was written.

    Returns
    -------
    ident_msgs.msg.IdentifiedParameters
        Friction (Stribeck shape included) and rotor inertia are NaN where the model has none
        or they are regrouped;
        RMSE and relative error of the first validation, else of the identification fit.
    """
    msg = IdentifiedParameters()
    msg.header.stamp = stamp
    msg.robot_name = result['robot'].get('name', '')
    msg.joint_names = list(result['robot']['joints'])
    params = result['base_parameters']
    msg.base_parameter_names = [p['name'] for p in params]
    msg.base_parameter_values = [float(p['value']) for p in params]
    msg.base_parameter_std = [float(p['std']) for p in params]
    msg.base_parameter_rel_std_percent = [float(p['rel_std_percent']) for p in params]
    actuators = result['actuators']
    nan = float('nan')
    msg.friction_model = result['config']['friction']
    for field, key in (('viscous_friction', 'fv'), ('coulomb_friction', 'fc'),
                       ('torque_offset', 'offset'), ('rotor_inertia', 'Ia'),
                       ('stribeck_static', 'fs'), ('stribeck_velocity', 'vs'),
                       ('stribeck_exponent', 'delta'), ('reversal_band', 'v_l')):
        values = actuators.get(key) or [None] * len(msg.joint_names)
        setattr(msg, field, [nan if v is None else float(v) for v in values])
    ident = result['identification']
    msg.condition_number = float(ident['condition_number'])
    validation = result['validation'][0] if result['validation'] else None
    source = validation or {'rmse': ident['residual_rms'],
                            'relative_error_percent': ident['relative_error_percent']}
    msg.rmse = [float(x) for x in source['rmse']]
    msg.relative_error_percent = float(source['relative_error_percent'])
    msg.estimator = result['config']['estimator']
    msg.samples = int(ident['samples'])
    msg.result_path = result_path
    return msg


def friction_msg(fit: FrictionFit) -> FrictionParameters:
    """The ``FrictionParameters`` message of one joint's friction fit.

    Parameters
    ----------
    fit : FrictionFit
        A friction model of one actuator (``fit.actuator``, its joint name) fitted by one
        optimiser: every parameter of the model, the standard deviations of the fitted ones.

    Returns
    -------
    ident_msgs.msg.FrictionParameters
        Parameters in the display order of ``friction.models.parameter_names`` (fc, fs, vs,
        delta, fv, offset, v_l as the model has them) [N·m, rad/s, N·m·s/rad; prismatic joints
        N, m/s, N·s/m]; standard deviation NaN for a parameter held fixed.
    """
    names = parameter_names(fit.model)
    return FrictionParameters(
        joint=fit.actuator, model=fit.model, optimizer=fit.optimizer,
        parameter_names=list(names), values=[float(fit.parameters[n]) for n in names],
        std=[float(fit.std.get(n, math.nan)) for n in names], rss=float(fit.rss),
        rms=float(fit.rms), samples=int(fit.samples), warnings=[str(w) for w in fit.warnings])


def friction_result_msg(result: FrictionIdentification, stamp: Time) -> FrictionResult:
    """The ``FrictionResult`` message of a friction identification: the selected model of
    every joint identified.

    Parameters
    ----------
    result : FrictionIdentification
        The identification (``selected``: one fit per joint).
    stamp : builtin_interfaces.msg.Time
        Header stamp (time of the identification).

    Returns
    -------
    ident_msgs.msg.FrictionResult
        One ``FrictionParameters`` per joint (``friction_msg``), in the robot's joint order.
    """
    msg = FrictionResult(rigid_body_model=result.rigid_source)
    msg.header.stamp = stamp
    msg.joints = [friction_msg(result.selected[j]) for j in result.robot.joint_names
                  if j in result.selected]
    return msg


def friction_summary(msg: FrictionResult, failures: int) -> str:
    """The one-line answer of ``~/identify_friction``: the selected model of every joint.

    Parameters
    ----------
    msg : ident_msgs.msg.FrictionResult
        ``friction_result_msg`` of the identification.
    failures : int
        Fits that failed.

    Returns
    -------
    str
        ``'<joint>: <model> by <optimiser>, rms <rms> N·m; ...'``, and how many fits failed.
    """
    return '; '.join(f'{j.joint}: {j.model} by {j.optimizer}, rms {j.rms:.3g} N·m'
                     for j in msg.joints) + (f' ({failures} fit(s) failed)' if failures else '')


def payload_msg(estimate: PayloadEstimate, stamp: Time,
                drive_gains: np.ndarray | None = None, drive_gains_std: np.ndarray | None = None,
                undetermined: list[str] = ()) -> Payload:
    """The ``Payload`` message of one payload estimate.

    Parameters
    ----------
    estimate : PayloadEstimate
        Mass [kg], centre of mass (3,) [m] in the payload frame ``estimate.frame``, inertia
        (3, 3) about it [kg·m²] or None, and their standard deviations.
    stamp : builtin_interfaces.msg.Time
        Header stamp (time of the identification).
    drive_gains, drive_gains_std : (n,) ndarray, optional
        Drive gains of the identification (known mass) and their standard deviations
        [dimensionless].
    undetermined : list of str
        The joints whose gain the data do not determine (kept at 1).

    Returns
    -------
    ident_msgs.msg.Payload
        ``header.frame_id`` the payload frame; inertia and its standard deviations NaN where not
        estimated (the static method).
    """
    sd = estimate.std()
    msg = Payload()
    msg.header.stamp = stamp
    msg.header.frame_id = estimate.frame
    msg.method = estimate.method
    msg.inertia = _inertia_msg(estimate.mass, estimate.com, estimate.inertia)
    msg.std = _inertia_msg(sd['mass'], sd['com'], sd['inertia'])
    msg.physically_consistent = bool(estimate.physically_consistent)
    msg.unexcited = list(estimate.unexcited)
    msg.drive_gains = [] if drive_gains is None else [float(g) for g in drive_gains]
    msg.drive_gains_std = [] if drive_gains_std is None else [float(s) for s in drive_gains_std]
    msg.drive_gains_undetermined = list(undetermined)
    return msg


def payload_msgs(result: PayloadIdentification, stamp: Time) -> tuple[list[Payload], Payload]:
    """The ``Payload`` messages of a payload identification.

    Parameters
    ----------
    result : PayloadIdentification
        The estimate of every method that succeeded, the selected one, the drive gains.
    stamp : builtin_interfaces.msg.Time
        Header stamp (time of the identification).

    Returns
    -------
    methods : list of ident_msgs.msg.Payload
        One per estimate (``payload_msg``), in ``payload.methods.METHODS`` order.
    selected : ident_msgs.msg.Payload
        The one of the selected method.
    """
    g = result.drive_gains
    gains = () if g is None else (g.gains, g.std, g.undetermined)
    methods = [payload_msg(e, stamp, *gains) for e in result.estimates.values()]
    return methods, methods[list(result.estimates).index(result.selected)]


def payload_summary(result: PayloadIdentification) -> str:
    """The one-line answer of ``~/identify_payload``.

    Parameters
    ----------
    result : PayloadIdentification
        The identification.

    Returns
    -------
    str
        ``'<mass> kg by the <method> method (<k> of <n> methods succeeded)'``.
    """
    chosen = result.result
    tried = len(result.estimates) + len(result.failures)
    return (f'{chosen.mass:.4g} kg by the {result.selected} method '
            f'({len(result.estimates)} of {tried} methods succeeded)')


def _inertia_msg(mass: float, com: np.ndarray, inertia: np.ndarray | None) -> Inertia:
    msg = Inertia(m=float(mass))
    msg.com.x, msg.com.y, msg.com.z = (float(c) for c in com)
    matrix = np.full((3, 3), math.nan) if inertia is None else np.asarray(inertia, dtype=float)
    for name, (i, j) in (('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
                         ('iyz', (1, 2)), ('izz', (2, 2))):
        setattr(msg, name, float(matrix[i, j]))
    return msg


def recording_info_msg(summary: RecordingSummary, stamp_ns: int,
                       recording: bool | None = None) -> RecordingInfo:
    """The ``RecordingInfo`` message of a recording's summary.

    Parameters
    ----------
    summary : RecordingSummary
        The recorder's summary (``recording.yaml``).
    stamp_ns : int
        Time of the report [ns].
    recording : bool, optional
        Replaces ``summary.recording`` (a bag that could not be finished is no longer
        recording).

    Returns
    -------
    ident_msgs.msg.RecordingInfo
        The counts, times [s] and the listed gaps (starts and lengths [s]) of the summary.
    """
    s = summary
    msg = RecordingInfo()
    msg.header.stamp = ClockTime(nanoseconds=stamp_ns).to_msg()
    msg.path = s.path
    msg.experiment = s.experiment
    msg.recording = s.recording if recording is None else recording
    msg.joint_state_messages = s.joint_state_messages
    msg.excitation_messages = s.excitation_messages
    msg.dropped = s.dropped
    msg.late = s.late
    msg.nominal_period = float(s.nominal_period)
    msg.duration = float(s.duration)
    msg.recording_time = float(s.recording_time)
    msg.expected_samples = s.expected_samples
    msg.lost_seconds = float(s.lost_seconds)
    msg.longest_gap = float(s.longest_gap)
    msg.gap_count = s.gap_count
    msg.gap_starts = [float(g['start']) for g in s.gaps]
    msg.gap_lengths = [float(g['length']) for g in s.gaps]
    return msg


def joint_state_msg(stamp_ns: int, joint_names, position: np.ndarray, velocity: np.ndarray,
                    effort: np.ndarray) -> JointState:
    """A ``JointState`` of every joint.

    Parameters
    ----------
    stamp_ns : int
        Header stamp [ns].
    joint_names : sequence of str
        (n,) names.
    position, velocity, effort : (n,) ndarray
        [rad or m], [rad/s or m/s], [N·m or N].

    Returns
    -------
    sensor_msgs.msg.JointState
    """
    msg = JointState()
    msg.header.stamp = ClockTime(nanoseconds=stamp_ns).to_msg()
    msg.name = list(joint_names)
    msg.position = position.tolist()
    msg.velocity = velocity.tolist()
    msg.effort = effort.tolist()
    return msg


def collision_msg(event: CollisionEvent, joint: str, threshold: float, stamp: Time) -> Collision:
    """The ``Collision`` message of a detected collision.

    Parameters
    ----------
    event : ident_core.torque_estimation.collision.Collision
        The detection (``onset`` [s], ``external_torque`` [N·m or N]).
    joint : str
        The joint's name.
    threshold : float
        Its threshold [N·m or N].
    stamp : builtin_interfaces.msg.Time
        Stamp of the sample that confirmed it.

    Returns
    -------
    ident_msgs.msg.Collision
    """
    msg = Collision(joint=joint, external_torque=event.external_torque,
                    threshold=float(threshold))
    msg.header.stamp = stamp
    msg.onset = ClockTime(nanoseconds=int(round(event.onset * 1e9))).to_msg()
    return msg


def payload_markers(estimate: PayloadEstimate, link: str, placement: pin.SE3) -> MarkerArray:
    """RViz markers of a payload: a sphere at its centre of mass and its equivalent-inertia box.

    The box is the homogeneous box of the same mass and inertia (``equivalent_box``), centred on
    the centre of mass and aligned with the principal axes. Both markers are in namespace
    ``PAYLOAD_MARKER_NAMESPACE`` with fixed ids, so the markers of a new result replace the
    old ones; without an inertia (static method) the box is deleted.

    Parameters
    ----------
    estimate : PayloadEstimate
        The payload, in its payload frame.
    link : str
        The URDF link of the body that carries the payload frame (a TF frame;
        ``payload.geometry.frame_in_link``).
    placement : pinocchio.SE3
        The payload frame in ``link`` (translation [m]).

    Returns
    -------
    visualization_msgs.msg.MarkerArray
        Expressed in ``link``, zero stamps (the latest transform of the moving link) and
        ``frame_locked``: the markers move with the link.
    """
    ns = PAYLOAD_MARKER_NAMESPACE
    com = placement.rotation @ estimate.com + placement.translation
    sphere = _sphere(ns, COM_MARKER_ID, link, com, COM_MARKER_DIAMETER, (0.9, 0.1, 0.1))
    if estimate.inertia is None:
        box = _marker(ns, link, BOX_MARKER_ID, Marker.CUBE, com, np.eye(3))
        box.action = Marker.DELETE
    else:
        sides, axes = equivalent_box(estimate.mass, estimate.inertia)
        box = _box(ns, BOX_MARKER_ID, link, com, sides, placement.rotation @ axes,
                   (0.2, 0.5, 0.9), 0.5)
    return MarkerArray(markers=[sphere, box])


def inertia_markers(identified: list[LinkInertial], urdf: list[LinkInertial]) -> MarkerArray:
    """RViz markers of the bodies: per link its centre of mass and equivalent-inertia box,
    identified and from the URDF.

    The array starts with a DELETEALL, so that it alone describes the display (a late RViz gets
    the last one). Per body ``k`` (joint order) of each list, in namespace
    ``IDENTIFIED_MARKER_NAMESPACE`` (colour ``IDENTIFIED_COLOR``) or ``URDF_MARKER_NAMESPACE``
    (``URDF_COLOR``): id ``2k`` a sphere at the centre of mass and id ``2k + 1`` the
    homogeneous box of the same mass and principal moments (``link_equivalent_box``; opacity
    ``BOX_ALPHA``), centred on the centre of mass along the principal axes. A body without
    such a box (no mass, or not physically consistent) gets, as id ``2k + 1``, a red text
    saying which at its link origin, and its sphere only where its centre of mass is defined
    (mass > 0).

    Parameters
    ----------
    identified : list of LinkInertial
        The identified bodies (``estimation.results.result_links``); empty: URDF only.
    urdf : list of LinkInertial
        The URDF's bodies (``model.inertial.link_inertials`` of the URDF's standard
        parameters).

    Returns
    -------
    visualization_msgs.msg.MarkerArray
        Every marker in its body's link frame (a TF frame), zero stamps and ``frame_locked``:
        the markers move with the links.
    """
    clear = Marker(action=Marker.DELETEALL)
    markers = [clear]
    for ns, color, bodies in ((URDF_MARKER_NAMESPACE, URDF_COLOR, urdf),
                              (IDENTIFIED_MARKER_NAMESPACE, IDENTIFIED_COLOR, identified)):
        for k, body in enumerate(bodies):
            box = link_equivalent_box(body)
            com_defined = body.mass > 0 and bool(np.all(np.isfinite(body.com)))
            if com_defined:
                markers.append(_sphere(ns, 2 * k, body.link, body.com, COM_MARKER_DIAMETER,
                                       color))
            if box is not None:
                markers.append(_box(ns, 2 * k + 1, body.link, body.com, *box, color, BOX_ALPHA))
            else:
                why = 'no mass' if body.mass == 0 else 'not physically consistent'
                markers.append(_text(ns, 2 * k + 1, body.link, np.zeros(3),
                                     f'{body.link} ({ns}): {why}, mass {body.mass:.3g} kg',
                                     WARNING_COLOR))
    return MarkerArray(markers=markers)


def collision_markers(collisions: list[tuple[str, str, float, str]]) -> MarkerArray:
    """RViz markers of the collisions in progress: per joint a red sphere and a text at the
    link it moves.

    The array starts with a DELETEALL, so that it alone describes the display; without
    collisions it is only that (the collision has ended).

    Parameters
    ----------
    collisions : list of tuple
        ``(link, joint, external_torque, unit)`` per joint in collision: the link the joint
        moves (its child link, a TF frame), the joint's name, its external torque [N·m or N]
        and the unit to show (``'N·m'`` or ``'N'``).

    Returns
    -------
    visualization_msgs.msg.MarkerArray
        Namespace ``COLLISION_MARKER_NAMESPACE``; per collision ``k`` id ``2k`` the sphere
        (diameter ``COLLISION_MARKER_DIAMETER``) at the link origin and id ``2k + 1`` the
        text ``<joint>: <torque> <unit>`` above it; zero stamps, ``frame_locked``.
    """
    ns = COLLISION_MARKER_NAMESPACE
    markers = [Marker(action=Marker.DELETEALL)]
    for k, (link, joint, torque, unit) in enumerate(collisions):
        markers.append(_sphere(ns, 2 * k, link, np.zeros(3), COLLISION_MARKER_DIAMETER,
                               WARNING_COLOR, alpha=0.7))
        markers.append(_text(ns, 2 * k + 1, link, np.array([0.0, 0.0, COLLISION_MARKER_DIAMETER]),
                             f'{joint}: {torque:.3g} {unit}', WARNING_COLOR))
    return MarkerArray(markers=markers)


def _sphere(ns: str, marker_id: int, link: str, position: np.ndarray, diameter: float,
            color: tuple, alpha: float = 1.0) -> Marker:
    sphere = _marker(ns, link, marker_id, Marker.SPHERE, position, np.eye(3))
    sphere.scale.x = sphere.scale.y = sphere.scale.z = float(diameter)
    _color(sphere, color, alpha)
    return sphere


def _box(ns: str, marker_id: int, link: str, position: np.ndarray, sides: np.ndarray,
         rotation: np.ndarray, color: tuple, alpha: float) -> Marker:
    box = _marker(ns, link, marker_id, Marker.CUBE, position, rotation)
    box.scale.x, box.scale.y, box.scale.z = (float(max(s, MIN_BOX_SIDE)) for s in sides)
    _color(box, color, alpha)
    return box


def _text(ns: str, marker_id: int, link: str, position: np.ndarray, text: str,
          color: tuple) -> Marker:
    marker = _marker(ns, link, marker_id, Marker.TEXT_VIEW_FACING, position, np.eye(3))
    marker.text = text
    marker.scale.z = TEXT_HEIGHT
    _color(marker, color, 1.0)
    return marker


def _color(marker: Marker, color: tuple, alpha: float) -> None:
    marker.color.r, marker.color.g, marker.color.b = (float(c) for c in color)
    marker.color.a = float(alpha)


def _marker(ns: str, link: str, marker_id: int, kind: int, position: np.ndarray,
            rotation: np.ndarray) -> Marker:
    marker = Marker(ns=ns, id=marker_id, type=kind, action=Marker.ADD, frame_locked=True)
    marker.header.frame_id = link
    p = marker.pose.position
    p.x, p.y, p.z = (float(x) for x in position)
    q = pin.Quaternion(np.asarray(rotation, dtype=float)).normalized()
    o = marker.pose.orientation
    o.x, o.y, o.z, o.w = float(q.x), float(q.y), float(q.z), float(q.w)
    return marker
