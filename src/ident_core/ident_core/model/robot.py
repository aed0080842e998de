"""A URDF loaded with Pinocchio: joint names and limits, and the joint order of data columns.

Pinocchio is the dynamics engine (regressor, RNEA, ABA); this module only loads the model and
maps the joint order of a dataset onto Pinocchio's.

Positions are one angle (or length) per joint everywhere outside Pinocchio: in files,
messages and every array of the suite. A continuous (unbounded revolute) joint is the exception
inside Pinocchio, whose configuration holds ``(cos θ, sin θ)`` for it (``nq ≠ nv``):
``configuration`` and ``joint_angles`` are the one place that converts.
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import sys
import tempfile
import weakref
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import InputError
from ..files import check_readable

#: Pinocchio's joint models of one degree of freedom: revolute and prismatic (one configuration
#: coordinate, the angle or length), and continuous (``JointModelRUB*``,
#: ``JointModelRevoluteUnboundedUnaligned``: two, ``cos θ, sin θ``).
SUPPORTED_JOINTS = ('JointModelR', 'JointModelP', 'JointModelRevoluteUnaligned',
                    'JointModelPrismaticUnaligned', 'JointModelRUB',
                    'JointModelRevoluteUnboundedUnaligned')
#: Per model: which joints are continuous, and each joint's first configuration index.
_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass
class RobotModel:
    """A fixed-base serial or tree robot with 1-DOF revolute, continuous and prismatic joints.

    The Pinocchio ``model`` is a constant description: functions that compute with it take
    a ``pin.Data`` of their own (``model.createData()``).

    Parameters
    ----------
    urdf : Path or None
        The URDF file; None when the URDF came as text (``robot_from_urdf_text``).
    model : pinocchio.Model
        The kinematic tree, joint order ``joint_names``.
    joint_names : list of str
        (n,) names of the moving joints, in Pinocchio's order.
    lower, upper : (n,) ndarray
        Position limits [rad or m]; −∞ and +∞ for a continuous joint.
    velocity_limit : (n,) ndarray
        Velocity limits [rad/s or m/s].
    effort_limit : (n,) ndarray
        Effort limits [N·m or N].
    locked_joints : dict
        ``{joint: position}`` of URDF joints held fixed (not in ``model``) [rad or m].
    urdf_text : str
        The URDF document when it came as text; empty for a file (read from ``urdf``).
    urdf_source : str
        Where the URDF came from, for messages and result files: the file's path, or e.g. the
        topic ``/robot_description``.
    urdf_digest : str
        SHA-256 of the URDF (the file's bytes, or the text's UTF-8 encoding), taken when it was
        loaded.
    """

    urdf: Path | None
    model: pin.Model
    joint_names: list[str]
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    locked_joints: dict = field(default_factory=dict)
    urdf_text: str = ''
    urdf_source: str = ''
    urdf_digest: str = ''

    def __post_init__(self):
        if self.urdf is not None:
            self.urdf_source = self.urdf_source or str(self.urdf)
            self.urdf_digest = self.urdf_digest or _sha256(self.urdf.read_bytes())

    @property
    def n(self) -> int:
        """Number of moving joints."""
        return len(self.joint_names)

    @property
    def link_count(self) -> int:
        """Number of bodies carrying inertial parameters (one per joint)."""
        return self.model.njoints - 1

    @property
    def prismatic(self) -> np.ndarray:
        """(n,) bool: True for a prismatic joint (positions in m, efforts in N), False for a
        revolute one (rad, N·m)."""
        return np.array(['JointModelP' in self.model.joints[i].shortname()
                         for i in range(1, self.model.njoints)], dtype=bool)

    @property
    def continuous(self) -> np.ndarray:
        """(n,) bool: True for a continuous joint (a revolute joint without position limits,
        whose configuration in Pinocchio is ``(cos θ, sin θ)``)."""
        return _layout(self.model)[0].copy()

    def finite_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Position limits, ±π where the URDF gives none (or an empty range).

        Returns
        -------
        lower, upper : (n,) ndarray
            [rad or m].
        """
        ok = np.isfinite(self.lower) & np.isfinite(self.upper) & (self.lower < self.upper)
        return np.where(ok, self.lower, -np.pi), np.where(ok, self.upper, np.pi)

    def urdf_sha256(self) -> str:
        """SHA-256 of the URDF as loaded (``urdf_digest``), to detect that a result belongs to
        another model.

        Returns
        -------
        str
            64 hexadecimal digits.
        """
        return self.urdf_digest

    def urdf_reference(self) -> str:
        """What result files record as the robot's ``urdf``: the file's absolute path, or where
        the text came from (``urdf_source``, e.g. ``/robot_description``).

        Returns
        -------
        str
        """
        return str(self.urdf.resolve()) if self.urdf is not None else self.urdf_source

    def geometry(self, kind: pin.GeometryType, package_dirs: list[str] | None = None) -> tuple:
        """The URDF's collision or visual geometry, on the full (unreduced) model.

        Parameters
        ----------
        kind : pinocchio.GeometryType
            ``pin.COLLISION`` or ``pin.VISUAL``.
        package_dirs : list of str, optional
            Where ``package://`` meshes are found (Pinocchio also searches ``ROS_PACKAGE_PATH``
            and ``AMENT_PREFIX_PATH``).

        Returns
        -------
        full : pinocchio.Model
            The URDF's model without locked joints.
        geometry : pinocchio.GeometryModel
            Its shapes.

        Raises
        ------
        RuntimeError, ValueError
            Pinocchio's, e.g. for a mesh that is not found.
        """
        dirs = list(package_dirs or [])
        if self.urdf is not None:
            full = pin.buildModelFromUrdf(str(self.urdf))
            return full, pin.buildGeomFromUrdf(full, str(self.urdf), kind, package_dirs=dirs)
        full = pin.buildModelFromXML(self.urdf_text)
        return full, pin.buildGeomFromUrdfString(full, self.urdf_text, kind, package_dirs=dirs)

    def kinematics_sha256(self) -> str:
        """Fingerprint of the kinematic tree alone (inertias left out).

        The joint frames of every moving joint, in the base frame, at three fixed
        configurations, rounded to 1e-9, with the joint names and parents: URDFs that differ
        only in their inertial, visual or collision elements share it.

        Returns
        -------
        str
            64 hexadecimal digits.
        """
        model = self.model
        data = model.createData()
        digest = hashlib.sha256(' '.join(self.joint_names).encode())
        digest.update(np.array(model.parents, dtype=np.int64).tobytes())
        for scale in (0.0, 0.3, -0.7):
            q = scale * np.arange(1, model.nv + 1) / model.nv
            pin.forwardKinematics(model, data, configuration(model, q))
            for i in range(1, model.njoints):
                frame = np.round(data.oMi[i].homogeneous, 9) + 0.0      # no negative zeros
                digest.update(frame.tobytes())
        return digest.hexdigest()

    def standard_parameters(self) -> np.ndarray:
        """Standard inertial parameters of the URDF (docs/methods.md §1).

        Returns
        -------
        chi : (10·n,) ndarray
            Per link in Pinocchio's order ``[m, mc_x, mc_y, mc_z, I_xx, I_xy, I_yy, I_xz,
            I_yz, I_zz]`` [kg, kg·m, kg·m²], inertia about the joint frame origin.
        """
        return np.concatenate([self.model.inertias[i].toDynamicParameters()
                               for i in range(1, self.model.njoints)])

    def effort_units(self) -> list[str]:
        """The unit of each joint's effort, for display.

        Returns
        -------
        list of str
            (n,) ``'N'`` for a prismatic joint, ``'N·m'`` for a revolute one; joint order.
        """
        return ['N' if p else 'N·m' for p in self.prismatic]

    def joint_index(self, joint: str, source: str = '') -> int:
        """Index of a moving joint.

        Parameters
        ----------
        joint : str
            Its name.
        source : str, optional
            What asks, prefixed to the error message.

        Returns
        -------
        int

        Raises
        ------
        InputError
            If it is not a moving joint of the URDF (naming the joints it has).
        """
        if joint not in self.joint_names:
            raise InputError(f'{source + ": " if source else ""}joint {joint} is not a joint of '
                             f'{self.urdf_source} ({", ".join(self.joint_names)})')
        return self.joint_names.index(joint)

    def joint_order(self, names: list[str], source: str) -> np.ndarray:
        """Indices that reorder data columns given in ``names`` order into the model's order.

        Parameters
        ----------
        names : list of str
            Joint names of the data columns.
        source : str
            What the names come from, for the error message.

        Returns
        -------
        (n,) ndarray of int
            ``columns[:, idx]`` is in model order.

        Raises
        ------
        InputError
            If a name is not a moving joint of the URDF or is repeated, or a moving joint of
            the URDF is missing; the message names ``source`` and the joints.
        """
        unknown = [j for j in names if j not in self.joint_names]
        if unknown:
            raise InputError(f'{source}: joint(s) {", ".join(unknown)} not in URDF '
                             f'{self.urdf_source} '
                             f'(its moving joints: {", ".join(self.joint_names)})')
        repeated = sorted({j for j in names if names.count(j) > 1})
        if repeated:
            raise InputError(f'{source}: joint(s) listed twice: {", ".join(repeated)}')
        missing = [j for j in self.joint_names if j not in names]
        if missing:
            raise InputError(f'{source}: no data for joint(s) {", ".join(missing)} of URDF '
                             f'{self.urdf_source}; every moving joint needs position and effort')
        return np.array([names.index(j) for j in self.joint_names])


def load_robot(urdf: str | Path, locked_joints: dict | None = None) -> RobotModel:
    """Load a URDF file with Pinocchio (fixed base, gravity −9.81 m/s² along z of the base).

    Parameters
    ----------
    urdf : str or Path
        The file.
    locked_joints : dict, optional
        ``{joint: position}`` [rad or m] of joints held fixed, e.g. gripper fingers; their
        bodies are merged into their parents (``pin.buildReducedModel``).

    Returns
    -------
    RobotModel

    Raises
    ------
    InputError
        If the file is missing or unreadable, a locked joint is unknown, a joint is not a
        1-DOF revolute, continuous or prismatic joint (floating, planar, spherical), or a moving
        joint mimics another (``<mimic>``: lock it, or remove the element).
    """
    path = check_readable(urdf, 'URDF file')
    model = _parsed(lambda: pin.buildModelFromUrdf(str(path)), str(path))
    return _robot(model, locked_joints, str(path), _mimic_joints(lambda: ET.parse(path)),
                  urdf=path)


def robot_from_urdf_text(text: str, source: str = '/robot_description',
                         locked_joints: dict | None = None) -> RobotModel:
    """Load a URDF given as text, e.g. the ``robot_description`` a robot's stack publishes.

    Parameters
    ----------
    text : str
        The URDF document.
    source : str, optional
        Where it came from (the topic), for messages and result files (``urdf_source``).
    locked_joints : dict, optional
        As for ``load_robot``.

    Returns
    -------
    RobotModel
        ``urdf`` is None; ``urdf_sha256()`` is the SHA-256 of the text's UTF-8 encoding (that
        of a file holding exactly this text).

    Raises
    ------
    InputError
        As ``load_robot``, naming ``source``; also for an empty text.
    """
    if not text.strip():
        raise InputError(f'{source}: the URDF is empty')
    model = _parsed(lambda: pin.buildModelFromXML(text), source)
    return _robot(model, locked_joints, source, _mimic_joints(lambda: ET.ElementTree(
        ET.fromstring(text))), urdf_text=text, urdf_source=source,
                  urdf_digest=_sha256(text.encode('utf-8')))


def _parsed(build, source: str) -> pin.Model:
    """The model ``build()`` returns, or InputError with the parser's complaint."""
    with _stderr_captured() as parser_output:
        try:
            model = build()
        except (RuntimeError, ValueError) as exc:
            model, failure = None, str(exc).strip().splitlines()[0]
    if model is None:
        detail = _parser_error(''.join(parser_output))
        raise InputError(f'{source}: cannot parse URDF ({detail or failure})')
    return model


def _robot(model: pin.Model, locked_joints: dict | None, source: str, mimics: dict,
           urdf: Path | None = None, **fields) -> RobotModel:
    """A ``RobotModel`` of a parsed model: locked joints, checks of its joints, limits."""
    locked_joints = dict(locked_joints or {})
    if locked_joints:
        model = reduced_model(model, locked_joints, source)
    names = [model.names[i] for i in range(1, model.njoints)]
    for i, name in enumerate(names, start=1):
        kind = model.joints[i].shortname()
        if model.nvs[i] != 1 or model.nqs[i] > 2 or not kind.startswith(SUPPORTED_JOINTS):
            raise InputError(f'{source}: joint {name} is a {kind}; only 1-DOF revolute, '
                             'continuous and prismatic joints are supported')
    mimics = [(j, leader) for j, leader in mimics.items() if j in names]
    if mimics:
        joint, leader = mimics[0]
        raise InputError(f'{source}: joint {joint} mimics {leader} (<mimic>), which is not '
                         'supported: make it type="fixed" in the URDF (an excitation can '
                         'also hold it with locked_joints), or remove its <mimic> element to '
                         'treat it as an independent joint')
    if model.nv == 0:
        raise InputError(f'{source}: URDF has no moving joint')
    lower, upper = position_limits(model)
    return RobotModel(urdf=urdf, model=model, joint_names=names, lower=lower, upper=upper,
                      velocity_limit=np.array(model.velocityLimit),
                      effort_limit=np.array(model.effortLimit), locked_joints=locked_joints,
                      **fields)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _layout(model: pin.Model) -> tuple[np.ndarray, np.ndarray]:
    """(continuous (n,) bool, first configuration index (n,) int) of a model's joints, read
    once per model (Pinocchio's index vectors are slow to read element by element)."""
    layout = _LAYOUTS.get(model)
    if layout is None:
        layout = (np.array(list(model.nqs)[1:]) == 2, np.array(list(model.idx_qs)[1:]))
        _LAYOUTS[model] = layout
    return layout


def position_limits(model: pin.Model) -> tuple[np.ndarray, np.ndarray]:
    """Position limits of a model's joints, one per joint.

    Parameters
    ----------
    model : pinocchio.Model
        A model of 1-DOF joints (``load_robot``).

    Returns
    -------
    lower, upper : (n,) ndarray
        The URDF limits [rad or m]; −∞ and +∞ for a continuous joint.
    """
    continuous, iq = _layout(model)
    return (np.where(continuous, -np.inf, np.asarray(model.lowerPositionLimit)[iq]),
            np.where(continuous, np.inf, np.asarray(model.upperPositionLimit)[iq]))


def configuration(model: pin.Model, q) -> np.ndarray:
    """Pinocchio's configuration of joint positions.

    Parameters
    ----------
    model : pinocchio.Model
        A model of 1-DOF joints (``load_robot``), ``n = model.nv``.
    q : (..., n) array_like
        One position per joint [rad or m]; a continuous joint's angle may be wrapped or not.

    Returns
    -------
    (..., model.nq) ndarray
        ``q`` itself (as a float array) when no joint is continuous; else the angle of each
        continuous joint replaced by ``(cos θ, sin θ)``.
    """
    q = np.asarray(q, dtype=float)
    if model.nq == model.nv:
        return q
    continuous, iq = _layout(model)
    x = np.empty(q.shape[:-1] + (model.nq,))
    x[..., iq] = np.where(continuous, np.cos(q), q)
    x[..., iq[continuous] + 1] = np.sin(q[..., continuous])
    return x


def position_difference(model: pin.Model, q1, q0) -> np.ndarray:
    """Joint positions minus others, the short way round for a continuous joint.

    Parameters
    ----------
    model : pinocchio.Model
        A model of 1-DOF joints (``load_robot``), ``n = model.nv``.
    q1, q0 : (..., n) array_like
        Positions [rad or m].

    Returns
    -------
    (..., n) ndarray
        ``q1 − q0``; in [−π, π) for a continuous joint (``pin.difference`` of the
        configurations).
    """
    d = np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float)
    if model.nq == model.nv:
        return d
    return np.where(_layout(model)[0], wrapped_angle(d), d)


def wrapped_angle(angle):
    """Angles wrapped into [−π, π).

    Parameters
    ----------
    angle : array_like
        [rad].

    Returns
    -------
    ndarray
        ``angle`` less whole turns [rad].
    """
    return (np.asarray(angle, dtype=float) + np.pi) % (2 * np.pi) - np.pi


def unwrapped(model: pin.Model, q, previous) -> np.ndarray:
    """Joint positions with each continuous joint's angle moved by whole turns to within π of
    the previous sample's (a stream's ``numpy.unwrap``).

    Parameters
    ----------
    model : pinocchio.Model
        A model of 1-DOF joints (``load_robot``), ``n = model.nv``.
    q, previous : (n,) array_like
        Positions now and at the previous sample [rad or m].

    Returns
    -------
    (n,) ndarray
        ``q`` itself (as a float array) when no joint is continuous.
    """
    q = np.asarray(q, dtype=float)
    if model.nq == model.nv:
        return q
    return np.where(_layout(model)[0], previous + position_difference(model, q, previous), q)


def _joint_configuration(nq: int, q: float) -> list[float]:
    """The configuration of one joint at position ``q``: itself, or (cos, sin) for nq = 2."""
    return [math.cos(q), math.sin(q)] if nq == 2 else [q]


def joint_angles(model: pin.Model, x) -> np.ndarray:
    """Joint positions of a Pinocchio configuration (the inverse of ``configuration``).

    Parameters
    ----------
    model : pinocchio.Model
        A model of 1-DOF joints (``load_robot``), ``n = model.nv``.
    x : (..., model.nq) array_like
        Configuration.

    Returns
    -------
    (..., n) ndarray
        One position per joint [rad or m]; a continuous joint's angle in (−π, π].
    """
    x = np.asarray(x, dtype=float)
    if model.nq == model.nv:
        return x
    continuous, iq = _layout(model)
    q = x[..., iq]
    q[..., continuous] = np.arctan2(x[..., iq[continuous] + 1], x[..., iq[continuous]])
    return q


def _mimic_joints(parse) -> dict:
    """``{joint: the joint it mimics}`` of the ``<mimic>`` elements of the URDF ``parse()``
    reads (an ElementTree; Pinocchio's default model makes such a joint an independent one)."""
    try:
        root = parse().getroot()
    except ET.ParseError:                   # Pinocchio read it: a format ET does not (xacro)
        return {}
    return {joint.get('name'): mimic.get('joint') for joint in root.iter('joint')
            for mimic in joint.findall('mimic')}


@contextlib.contextmanager
def _stderr_captured():
    """What C++ code (urdfdom) writes to the process's stderr meanwhile, in the list it yields
    (filled when the block ends); the CLI's one-line error then names the fault instead."""
    sys.stderr.flush()
    saved, text = os.dup(2), []
    with tempfile.TemporaryFile(mode='w+') as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield text
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text.append(captured.read())


def _parser_error(text: str) -> str:
    """The XML error and line of urdfdom's message (``Error=XML_ERROR_... Line number=75``)."""
    match = re.search(r'Error=(\w+).*?Line number=(\d+)(?::\s*(.*))?', text)
    if match:
        return f'{match.group(1)} at line {match.group(2)}' + (
            f': {match.group(3).strip()}' if match.group(3) else '')
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ''


def reduced_model(model: pin.Model, locked_joints: dict, source: str, geometry=None):
    """A model (and geometry) with some joints fixed.

    Parameters
    ----------
    model : pinocchio.Model
        The full model.
    locked_joints : dict
        ``{joint: position}`` [rad or m].
    source : str
        The URDF, for the error message.
    geometry : pinocchio.GeometryModel, optional
        Reduced together with the model when given.

    Returns
    -------
    pinocchio.Model or (pinocchio.Model, pinocchio.GeometryModel)
        The reduced model, and the reduced geometry when ``geometry`` is given.

    Raises
    ------
    InputError
        If a name is not a 1-DOF joint of the model.
    """
    ids, q_ref = [], pin.neutral(model)
    for name, value in locked_joints.items():
        jid = model.getJointId(name) if model.existJointName(name) else 0
        if jid == 0 or model.nvs[jid] != 1 or model.nqs[jid] > 2:
            raise InputError(f'{source}: locked joint {name} is not a 1-DOF joint of the URDF')
        ids.append(jid)
        iq = model.idx_qs[jid]
        q_ref[iq:iq + model.nqs[jid]] = _joint_configuration(model.nqs[jid], float(value))
    if geometry is None:
        return pin.buildReducedModel(model, ids, q_ref)
    return pin.buildReducedModel(model, geometry, ids, q_ref)
