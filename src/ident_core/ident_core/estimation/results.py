"""RESULT.yaml: an identified model and its validations (``format: robot-ident/result/1``).

The file mirrors :class:`ResultFile`::

    robot: {name, urdf: /abs/path.urdf or /robot_description, urdf_sha256, kinematics_sha256,
            joints: [...]}
    config: {friction, rotor_inertia, estimator, cutoff_hz, ...}     # IdentificationConfig
    transmission: {gear_matrix, joint_offset, torque_scale}
    base_parameters: [{name, value, std, rel_std_percent}, ...]
    base_definition: {tolerance, standard_names, independent, dependent, k_d}
    actuators: {joints: [...], Ia: [...], fv: [...], fc: [...], fs: [...], offset: [...],
                vs: [...], delta: [...], v_l: [...]}    # null: regrouped; fs..v_l: Stribeck
    standard_parameters: [...]     # (p,) in base_definition.standard_names order
    links: [{joint, link, mass, com, inertia, physically_consistent}, ...]  # body frames
    identification: {data, samples, equations_left_out, decimation, base_parameter_count,
                     condition_number, rank_gap, residual_rms, relative_error_percent,
                     preprocessing, prior_weight, prior_weight_scores, std_method,
                     torque_delay: [{data, delay_s, std_s, compensated, given,
                                     residual_improvement}, ...]}
    validation: [{data, relative_error_percent, rmse, nrms_percent, absolute_error,
                  torque_delay}, ...]

``links`` is derived from ``standard_parameters`` for reading (``read_result`` uses the latter).
For OLS and WLS the standard parameters are one choice among those with the same base parameters
(the nearest to the URDF's), and ``physically_consistent`` is that choice's.

Files written before the vocabulary was settled (``settings`` for ``config``, friction models
``viscous-coulomb[-offset]``) still load.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pydantic

from ..errors import InputError
from ..model.base_parameters import BaseParameters
from ..model.inertial import LinkInertial
from ..model.regressor import FRICTION_RENAMED
from ..model.robot import RobotModel, load_robot
from ..model.transmission import Transmission
from ..schema import Document, Matrix, Schema
from .config import IdentificationConfig
from .identified_model import IdentifiedModel

FORMAT = 'robot-ident/result/1'


class RobotSection(Schema):
    """The robot a result belongs to.

    Parameters
    ----------
    name : str
        Robot name of the URDF.
    urdf : str
        Absolute path of the URDF file, or where a URDF given as text came from (the topic,
        e.g. ``/robot_description``; such a result is read with the URDF given).
    urdf_sha256 : str
        Hash of the URDF (of the file, or of the text's UTF-8 encoding).
    kinematics_sha256 : str
        ``RobotModel.kinematics_sha256`` (empty in older files: not checked).
    joints : list of str
        Moving joints, the order of every per-joint list in the file.
    """

    name: str = ''
    urdf: str
    urdf_sha256: str = ''
    kinematics_sha256: str = ''
    joints: list[str]


class TransmissionSection(Schema):
    """``Transmission`` as lists (see ``model.transmission``).

    Parameters
    ----------
    gear_matrix : list of list of float
        (n, n) ``R``.
    joint_offset : list of float
        (n,) [rad or m].
    torque_scale : list of float
        (n,) drive gains.
    """

    gear_matrix: Matrix
    joint_offset: list[float]
    torque_scale: list[float]


class BaseParameterEntry(Schema):
    """One identified base parameter.

    Parameters
    ----------
    name : str
        Readable name (independent column and the regrouped ones).
    value, std : float
        Estimate and standard deviation (SI units of the parameter).
    rel_std_percent : float
        ``100·std/|value|`` [%].
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)   # std of 0 is inf %, ...

    name: str
    value: float
    std: float
    rel_std_percent: float


class BaseDefinition(Schema):
    """``BaseParameters`` as lists (see ``model.base_parameters``).

    Parameters
    ----------
    tolerance : float
        Relative QR rank tolerance.
    standard_names : list of str
        (p,) standard parameter names.
    independent, dependent : list of int
        Column indices.
    k_d : list of list of float
        (nb, nd) regrouping coefficients.
    """

    tolerance: float
    standard_names: list[str]
    independent: list[int]
    dependent: list[int]
    k_d: Matrix

    @pydantic.model_validator(mode='after')
    def _consistent(self):
        p, nb, nd = len(self.standard_names), len(self.independent), len(self.dependent)
        if any(not 0 <= i < p for i in self.independent + self.dependent):
            raise ValueError(f'independent and dependent must be column indices below {p}')
        if len(self.k_d) != nb or any(len(row) != nd for row in self.k_d):
            raise ValueError(f'k_d must be {nb} rows (independent) of {nd} (dependent)')
        return self


class ActuatorSection(Schema):
    """Rotor inertia and friction per actuator (None where regrouped).

    Parameters
    ----------
    joints : list of str
        Joint order.
    Ia, fv, fc, fs, offset : list of float or None, optional
        [kg·m², N·m·s/rad, N·m, N·m, N·m] per actuator; absent when not in the model.
    vs, delta, v_l : list of float, optional
        Stribeck models: the shape per actuator [rad/s, -, rad/s] (``friction.models``).
    """

    joints: list[str]
    Ia: list[float | None] | None = None
    fv: list[float | None] | None = None
    fc: list[float | None] | None = None
    fs: list[float | None] | None = None
    offset: list[float | None] | None = None
    vs: list[float] | None = None
    delta: list[float] | None = None
    v_l: list[float] | None = None


class TorqueDelayEntry(Schema):
    """The torque delay of one recording (``delay.DelayFit``).

    Parameters
    ----------
    data : str
        The recording.
    delay_s : float or None
        Delay of the torques behind the positions [s] (positive: logged late); None: not
        determined.
    std_s : float or None
        Its standard deviation [s] (0 for a given delay).
    compensated : bool
        Whether the torques were shifted by it.
    given : bool
        Set in the configuration (``torque_delay``), not estimated.
    residual_improvement : float
        Relative fall of the recording's weighted residual RMS with the delay compensated.
    """

    data: str
    delay_s: float | None = None
    std_s: float | None = None
    compensated: bool = False
    given: bool = False
    residual_improvement: float = 0.0


class IdentificationStats(Schema):
    """Statistics of the identification fit.

    Parameters
    ----------
    data : list of str
        The datasets.
    samples : int
        Rows of the stacked regressor.
    equations_left_out : int
        Joint equations masked near velocity reversals.
    decimation : list of int
        Decimation factor per dataset.
    base_parameter_count : int
        nb.
    condition_number : float
        Of the stacked base regressor.
    rank_gap : float
        Of the base-parameter QR.
    residual_rms : list of float
        Per joint [N·m or N].
    relative_error_percent : float
        Of the fit [%].
    preprocessing : list of str
        What the preprocessing did to each dataset (time base, recorded velocity), one line
        each.
    prior_weight : float, optional
        pc-wls: weight of the prior toward the URDF.
    prior_weight_scores : dict of str to float
        pc-wls: held-out weighted residual sum of squares per candidate prior weight.
    std_method : str, optional
        How the standard deviations were obtained, when not by the estimator's own formula.
    friction_search : dict, optional
        Stribeck models: how the friction shape was searched (method, evaluations, projected
        residual at the grid start and at the end).
    torque_delay : list of TorqueDelayEntry
        The torque delay of each recording (absent in older files and with
        ``torque_delay: none``).
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)   # condition number, rank gap

    data: list[str] = []
    samples: int = 0
    equations_left_out: int = 0
    decimation: list[int] = []
    base_parameter_count: int = 0
    condition_number: float = float('nan')
    rank_gap: float = float('inf')
    residual_rms: list[float] = []
    relative_error_percent: float = float('nan')
    preprocessing: list[str] = []
    prior_weight: float | None = None
    prior_weight_scores: dict[str, float] = {}
    std_method: str | None = None
    friction_search: dict | None = None
    torque_delay: list[TorqueDelayEntry] = []


class LinkEntry(Schema):
    """The identified inertial parameters of one body, as in a URDF ``<inertial>``.

    Parameters
    ----------
    joint : str
        The moving joint carrying the body.
    link : str
        Its URDF link (the body frame).
    mass : float
        [kg].
    com : list of float
        (3,) centre of mass in the link frame [m].
    inertia : list of list of float
        (3, 3) inertia about the centre of mass, link axes [kg·m²].
    physically_consistent : bool
        Positive mass and positive semi-definite pseudo-inertia.
    """

    model_config = pydantic.ConfigDict(allow_inf_nan=True)   # COM of a zero mass

    joint: str
    link: str
    mass: float
    com: list[float]
    inertia: Matrix
    physically_consistent: bool


class ValidationEntry(Schema):
    """Metrics of the model on one validation dataset (``metrics.all_metrics``).

    Parameters
    ----------
    data : str
        The dataset.
    relative_error_percent : float
        [%].
    rmse : list of float
        Per joint [N·m or N].
    nrms_percent : float or None
        [%]; None without effort limits.
    absolute_error : float
        [N·m or N].
    torque_delay : TorqueDelayEntry or None
        The recording's own torque delay, estimated as in the identification (absent in older
        files).
    """

    data: str
    relative_error_percent: float
    rmse: list[float]
    nrms_percent: float | None
    absolute_error: float
    torque_delay: TorqueDelayEntry | None = None


class ResultFile(Document):
    """The whole RESULT.yaml (module docstring); ``ResultFile.read`` validates it without
    loading the robot (``read_result`` loads the model).

    Parameters
    ----------
    format : str
        ``robot-ident/result/1``.
    robot : RobotSection
    config : IdentificationConfig
        How the model was identified (``settings`` in older files).
    transmission : TransmissionSection
    base_parameters : list of BaseParameterEntry
    base_definition : BaseDefinition
    actuators : ActuatorSection
    standard_parameters : list of float, optional
        (p,) standard parameters behind the base parameters (``IdentifiedModel.standard``).
    links : list of LinkEntry
        Per body, from the standard parameters.
    identification : IdentificationStats
    validation : list of ValidationEntry
    """

    kind = 'result'
    format: Literal[FORMAT]
    robot: RobotSection
    config: IdentificationConfig
    transmission: TransmissionSection
    base_parameters: list[BaseParameterEntry]
    base_definition: BaseDefinition
    actuators: ActuatorSection
    standard_parameters: list[float] | None = None
    links: list[LinkEntry] = []
    identification: IdentificationStats = IdentificationStats()
    validation: list[ValidationEntry] = []

    @pydantic.model_validator(mode='after')
    def _sizes(self):
        n, tr = len(self.robot.joints), self.transmission
        if np.shape(tr.gear_matrix) != (n, n) or len(tr.joint_offset) != n \
                or len(tr.torque_scale) != n:
            raise ValueError(f'transmission must hold a {n}×{n} gear_matrix and {n} '
                             f'joint_offset and torque_scale values ({n} joints)')
        shape = self.config.spec.shape_terms
        if any(getattr(self.actuators, k) is None or len(getattr(self.actuators, k)) != n
               for k in shape):
            raise ValueError(f'actuators: the {self.config.friction} friction model needs '
                             f'{", ".join(shape)} with {n} values each')
        if len(self.base_parameters) != len(self.base_definition.independent):
            raise ValueError(f'{len(self.base_parameters)} base_parameters for the '
                             f'{len(self.base_definition.independent)} of base_definition')
        p = len(self.base_definition.standard_names)
        if self.standard_parameters is not None and len(self.standard_parameters) != p:
            raise ValueError(f'{len(self.standard_parameters)} standard_parameters for the {p} '
                             'standard_names of base_definition')
        return self

    @pydantic.model_validator(mode='before')
    @classmethod
    def _earlier_names(cls, doc):
        """Files written before the vocabulary was settled: ``settings`` for ``config`` and
        friction models named ``viscous-coulomb[-offset]``."""
        if isinstance(doc, dict) and 'settings' in doc and 'config' not in doc:
            doc = {('config' if k == 'settings' else k): v for k, v in doc.items()}
            config = doc['config']
            if isinstance(config, dict) and isinstance(config.get('friction'), str):
                doc['config'] = {**config, 'friction': FRICTION_RENAMED.get(
                    config['friction'], config['friction'])}
        return doc

    def plain(self) -> dict:
        """The content as written: ``actuators`` without the entries the model does not have.

        Returns
        -------
        dict
            ``model_dump()`` less the None values of ``actuators``.
        """
        document = self.model_dump()
        document['actuators'] = {k: v for k, v in document['actuators'].items() if v is not None}
        return document


def robot_section(robot: RobotModel) -> RobotSection:
    """The ``robot`` section of a result file (RESULT.yaml, PAYLOAD.yaml).

    Parameters
    ----------
    robot : RobotModel
        The robot.

    Returns
    -------
    RobotSection
    """
    return RobotSection(name=robot.model.name, urdf=robot.urdf_reference(),
                        urdf_sha256=robot.urdf_sha256(),
                        kinematics_sha256=robot.kinematics_sha256(),
                        joints=list(robot.joint_names))


def recorded_robot(path: str | Path, section: RobotSection,
                   urdf: str | Path | RobotModel | None = None) -> RobotModel:
    """The robot of a result file: ``urdf`` when given, else the file its ``robot.urdf``
    records.

    Parameters
    ----------
    path : str or Path
        The result file, for messages.
    section : RobotSection
        Its ``robot`` section.
    urdf : str, Path or RobotModel, optional
        The URDF file or the robot to use instead.

    Returns
    -------
    RobotModel
        Not checked against ``section`` (``read_result`` does).

    Raises
    ------
    InputError
        If the URDF cannot be loaded, or none is given and the recorded one is no file (a
        result identified on a ``robot_description`` topic records the topic).
    """
    if isinstance(urdf, RobotModel):
        return urdf
    if urdf:
        return load_robot(urdf)
    if not Path(section.urdf).is_file():
        raise InputError(f'{path}: robot.urdf {section.urdf!r} is no file (a robot '
                         'description from a topic, or a moved file): give the URDF (--urdf) '
                         'with the recorded robot.urdf_sha256')
    return load_robot(section.urdf)


def result_file(model: IdentifiedModel, validations: list[dict]) -> ResultFile:
    """The RESULT.yaml content of a model.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    validations : list of dict
        ``Validation.report()`` per validation dataset.

    Returns
    -------
    ResultFile
    """
    robot = model.robot
    return ResultFile(
        format=FORMAT,
        robot=robot_section(robot),
        config=model.config,
        transmission=TransmissionSection(**model.transmission.to_dict()),
        base_parameters=[BaseParameterEntry(name=n, value=float(v), std=float(s),
                                            rel_std_percent=float(r))
                         for n, v, s, r in zip(model.base.names, model.values, model.std,
                                               model.rel_std_percent)],
        base_definition=BaseDefinition(**model.base.to_dict()),
        actuators=ActuatorSection(joints=list(robot.joint_names), **model.actuator_values()),
        standard_parameters=None if model.standard is None else model.standard.tolist(),
        links=[LinkEntry(joint=k.joint, link=k.link, mass=k.mass, com=k.com.tolist(),
                         inertia=k.inertia.tolist(),
                         physically_consistent=k.physically_consistent)
               for k in model.links()],
        identification=IdentificationStats(**_plain(model.stats)),
        validation=[ValidationEntry(**_plain(v)) for v in validations])


def read_result(path: str | Path, urdf: str | Path | RobotModel | None = None,
                ignore_urdf_change: bool = False) -> IdentifiedModel:
    """Load an identified model from RESULT.yaml.

    Parameters
    ----------
    path : str or Path
        The result file.
    urdf : str, Path or RobotModel, optional
        Use this URDF (or robot, e.g. from ``/robot_description``) instead of the recorded
        path; needed when the result records a topic, not a file.
    ignore_urdf_change : bool, optional
        Accept a URDF whose content differs from the one the result was identified with
        (same joints and kinematics).

    Returns
    -------
    IdentifiedModel

    Raises
    ------
    InputError
        If the file is missing, not a result, a field is missing or malformed, or the URDF is
        missing, has other joints or other kinematics, or (unless ``ignore_urdf_change``)
        differs from the recorded one by its SHA-256 (naming the file and the field).
    """
    doc = ResultFile.read(path)
    robot = recorded_robot(path, doc.robot, urdf)
    recorded = doc.robot.urdf_sha256
    source = robot.urdf_source
    if recorded and not ignore_urdf_change and recorded != robot.urdf_sha256():
        raise InputError(f'{path}: URDF {source} is not the file the result was identified '
                         'with (robot.urdf_sha256 differs); --ignore-urdf-change uses it anyway')
    if robot.joint_names != doc.robot.joints:
        raise InputError(f'{path}: URDF {source} has joints {robot.joint_names}, the result '
                         f'was identified for {doc.robot.joints}')
    kinematics = doc.robot.kinematics_sha256
    if kinematics and kinematics != robot.kinematics_sha256():
        raise InputError(f'{path}: URDF {source} places or orients its joints differently '
                         'from the URDF the result was identified with')
    tr = doc.transmission
    base = BaseParameters.from_dict(doc.base_definition.model_dump())
    return IdentifiedModel(
        robot=robot, config=doc.config,
        transmission=Transmission(np.array(tr.gear_matrix, dtype=float),
                                  np.array(tr.joint_offset, dtype=float),
                                  np.array(tr.torque_scale, dtype=float)),
        base=base, values=np.array([p.value for p in doc.base_parameters]),
        std=np.array([p.std for p in doc.base_parameters]),
        stats=doc.identification.model_dump(),
        standard=None if doc.standard_parameters is None else np.array(doc.standard_parameters),
        friction_shape={k: np.array(getattr(doc.actuators, k), dtype=float)
                        for k in doc.config.spec.shape_terms} or None)


def result_links(result: dict) -> list[LinkInertial]:
    """The identified bodies of a RESULT.yaml content (its ``links``).

    Parameters
    ----------
    result : dict
        RESULT.yaml content (``ResultFile.model_dump()``); ``links`` is used.

    Returns
    -------
    list of LinkInertial
        One per entry of ``links`` (empty when the result holds no standard parameters): mass
        [kg], centre of mass (3,) [m] and inertia (3, 3) about it [kg·m²] in the link frame.
    """
    return [LinkInertial(joint=k['joint'], link=k['link'], mass=float(k['mass']),
                         com=np.array(k['com'], dtype=float),
                         inertia=np.array(k['inertia'], dtype=float),
                         physically_consistent=bool(k['physically_consistent']))
            for k in result.get('links') or []]


def _plain(value):
    """numpy scalars and arrays → Python floats, ints and lists, recursively."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
