"""FRICTION.yaml: friction identified on its own, per joint, model and optimiser
(docs/methods.md §8).

    format: robot-ident/friction/1
    robot: {urdf, urdf_sha256, joints, kinematics_sha256}
    rigid_body_model: RESULT.yaml or the URDF whose torque was subtracted
    data: [...]                     # the recordings
    validation_data: [...]
    config: {...}                   # FrictionConfig
    joints:
      joint1:
        samples: 27654
        peak_speed: 1.89            # rad/s
        selected: {model: improved-stribeck, optimizer: lsq}
        parameters: {fc: ..., fs: ..., vs: ..., delta: ..., fv: ..., offset: ..., v_l: ...}
        fits:
          improved-stribeck:
            lsq: {parameters: {...}, std: {...}, rss, rms, samples, seconds, evaluations,
                  warnings: [...]}
        validation_rss: {coulomb-viscous: 629.0, stribeck: 537.0, improved-stribeck: 449.0}
    failures: {"joint1 stribeck ga": why}
"""
from __future__ import annotations

from typing import Literal

from ..estimation.results import RobotSection, robot_section
from ..schema import Document, Schema
from .fit import FrictionFit
from .identify import FrictionConfig, FrictionIdentification
from .models import FRICTION_MODELS

FORMAT = 'robot-ident/friction/1'
FrictionModel = Literal[FRICTION_MODELS]


class FitEntry(Schema):
    """One model fitted by one optimiser (``FrictionFit``).

    Parameters
    ----------
    parameters, std : dict of str to float
        Values and standard deviations (fixed parameters have none).
    rss, rms : float
        Residual sum of squares [(N·m)²] and RMS residual [N·m].
    samples, evaluations : int
        Samples compared, cost evaluations.
    seconds : float
        Time of the fit [s].
    warnings : list of str
        Parameters the data do not determine, bounds reached.
    """

    parameters: dict[str, float]
    std: dict[str, float]
    rss: float
    rms: float
    samples: int
    seconds: float
    evaluations: int
    warnings: list[str] = []


class Selection(Schema):
    """The model and optimiser of a joint's ``parameters``.

    Parameters
    ----------
    model : str
        Friction model.
    optimizer : str
        ``lsq``, ``ga`` or ``sa-ga``.
    """

    model: FrictionModel
    optimizer: str


class JointEntry(Schema):
    """Everything identified for one joint (actuator).

    Parameters
    ----------
    samples : int
        Samples compared.
    peak_speed : float
        99th percentile of the speed [rad/s or m/s].
    selected : Selection
        Model and optimiser of ``parameters``.
    parameters : dict of str to float
        The selected fit's parameters.
    fits : dict
        ``[model][optimizer]`` → FitEntry.
    validation_rss : dict of str to float
        Per model, on the validation recordings.
    """

    samples: int
    peak_speed: float
    selected: Selection
    parameters: dict[str, float]
    fits: dict[FrictionModel, dict[str, FitEntry]]
    validation_rss: dict[FrictionModel, float] = {}


class FrictionFile(Document):
    """The whole FRICTION.yaml (module docstring).

    Parameters
    ----------
    format : str
        ``robot-ident/friction/1``.
    robot : RobotSection
        The robot.
    rigid_body_model : str
        RESULT.yaml or URDF whose torque was subtracted.
    data, validation_data : list of str
        The recordings.
    config : FrictionConfig
        The settings.
    joints : dict of str to JointEntry
        Per joint.
    failures : dict of str to str
        ``'joint model optimizer'`` → why it failed.
    """

    kind = 'friction file'
    format: Literal[FORMAT]
    robot: RobotSection
    rigid_body_model: str
    data: list[str]
    validation_data: list[str] = []
    config: FrictionConfig
    joints: dict[str, JointEntry]
    failures: dict[str, str] = {}


def fit_entry(fit: FrictionFit) -> FitEntry:
    """The file entry of a fit.

    Parameters
    ----------
    fit : FrictionFit

    Returns
    -------
    FitEntry
    """
    return FitEntry(parameters=fit.parameters, std=fit.std, rss=fit.rss, rms=fit.rms,
                    samples=fit.samples, seconds=round(fit.seconds, 3),
                    evaluations=fit.evaluations, warnings=fit.warnings)


def friction_file(result: FrictionIdentification, config: FrictionConfig) -> FrictionFile:
    """The FRICTION.yaml content of an identification.

    Parameters
    ----------
    result : FrictionIdentification
    config : FrictionConfig
        The settings it ran with.

    Returns
    -------
    FrictionFile
    """
    joints = {}
    for j, by_model in result.fits.items():
        chosen = result.selected[j]
        joints[j] = JointEntry(
            samples=result.samples[j].count, peak_speed=result.samples[j].peak_speed,
            selected=Selection(model=chosen.model, optimizer=chosen.optimizer),
            parameters=chosen.parameters,
            fits={m: {o: fit_entry(f) for o, f in fits.items()} for m, fits in by_model.items()},
            validation_rss=result.validation_rss.get(j, {}))
    return FrictionFile(format=FORMAT, robot=robot_section(result.robot),
                        rigid_body_model=result.rigid_source, data=result.data,
                        validation_data=result.validation_data, config=config, joints=joints,
                        failures=result.failures)
