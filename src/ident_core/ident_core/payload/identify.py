"""Payload identification by one or all methods, as the CLI and the identification node run it
(docs/methods.md §11)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..data.datasets import Dataset
from ..errors import IdentError, InputError
from ..estimation.config import IdentificationConfig
from ..estimation.identified_model import IdentifiedModel
from ..model.robot import RobotModel
from ..progress import Progress, advance, describe, expect
from .drive_gains import DriveGains, estimate_drive_gains
from .frame import PayloadFrame, payload_frame
from .methods import (
    METHODS,
    PayloadConfig,
    identify_global,
    identify_model_based,
    identify_parameter_difference,
    identify_torque_difference,
)
from .parameters import PayloadEstimate, consistent_payload
from .static import identify_static

#: What each method needs besides the loaded runs.
NEEDS = {'global': 'unloaded runs (--unloaded)',
         'torque-difference': 'unloaded runs of the same trajectory (--unloaded)',
         'parameter-difference': 'unloaded runs of the same trajectory (--unloaded)',
         'model': 'an identified model (--model)',
         'static': 'an identified model (--model) or unloaded runs at the same poses'}


@dataclass
class PayloadIdentification:
    """The payload identified by one or several methods.

    Parameters
    ----------
    frame : PayloadFrame
        The payload frame.
    estimates : dict of str to PayloadEstimate
        Physically consistent estimate per method that succeeded, in ``METHODS`` order.
    failures : dict of str to str
        Why a method asked for did not give an estimate.
    selected : str
        The method reported as the result: the first of ``METHODS`` that succeeded.
    drive_gains : DriveGains or None
        With a known payload mass.
    """

    frame: PayloadFrame
    estimates: dict[str, PayloadEstimate]
    failures: dict[str, str] = field(default_factory=dict)
    selected: str = ''
    drive_gains: DriveGains | None = None

    @property
    def result(self) -> PayloadEstimate:
        """The selected estimate."""
        return self.estimates[self.selected]


def identify_payload(robot: RobotModel, loaded: list[Dataset], method: str = 'all', *,
                     frame: str | None = None, unloaded: list[Dataset] | None = None,
                     model: IdentifiedModel | None = None,
                     config: IdentificationConfig | None = None,
                     known_mass: float | None = None,
                     progress: Progress = None) -> PayloadIdentification:
    """Identify a payload.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    loaded : list of Dataset
        Runs with the payload.
    method : str
        One of ``METHODS``, or ``'all'``: every method the inputs allow.
    frame : str, optional
        Payload frame (``payload_frame``); default the last joint's.
    unloaded : list of Dataset, optional
        Runs without the payload.
    model : IdentifiedModel, optional
        The robot's identified model, for the ``model`` and ``static`` methods.
    config : IdentificationConfig, optional
        Robot model columns and filtering of the methods with unloaded runs; default
        ``PayloadConfig()``.
    known_mass : float, optional
        The payload's mass [kg]: identify drive gains first (``drive_gains``) and apply them
        to every run.
    progress : callable or object with ``update(n)``, optional
        Told of one step per method tried, and one for the drive gains (``ident_core.progress``).

    Returns
    -------
    PayloadIdentification

    Raises
    ------
    InputError
        For an unknown method or frame, a method without its inputs, no loaded runs, a model
        of another robot, a known mass without unloaded runs, or bad data.
    IdentError
        If the method asked for fails, or with ``'all'`` every method fails (naming each
        reason).
    """
    if method != 'all' and method not in METHODS:
        raise InputError(f'unknown payload method {method!r} (choose {", ".join(METHODS)} or '
                         'all)')
    if not loaded:
        raise InputError('payload: no loaded run given')
    if model is not None and model.robot.joint_names != robot.joint_names:
        raise InputError(f'the model has joints {model.robot.joint_names}, the URDF '
                         f'{robot.joint_names}')
    unloaded = list(unloaded or [])
    config = config or PayloadConfig()
    target = payload_frame(robot, frame)
    gains = None
    if known_mass is not None:
        if not unloaded:
            raise InputError('--known-mass needs unloaded runs (--unloaded): the drive gains '
                             "are identified together with the robot's parameters")
        expect(progress, 1)
        describe(progress, 'drive gains')
        gains = estimate_drive_gains(robot, unloaded, loaded, target, config, known_mass)
        advance(progress)
        unloaded = [gains.apply(d, robot) for d in unloaded]
        loaded = [gains.apply(d, robot) for d in loaded]
    inputs = {'global': bool(unloaded), 'torque-difference': bool(unloaded),
              'parameter-difference': bool(unloaded), 'model': model is not None,
              'static': model is not None or bool(unloaded)}
    if method != 'all' and not inputs[method]:
        raise InputError(f'the {method} method needs {NEEDS[method]}')
    chosen = [m for m in METHODS if inputs[m]] if method == 'all' else [method]
    if not chosen:
        raise InputError('a payload needs a reference without it: unloaded runs (--unloaded) or '
                         'an identified model (--model)')
    out = PayloadIdentification(target, {}, drive_gains=gains)
    expect(progress, len(chosen))
    for name in chosen:
        describe(progress, name)
        try:
            out.estimates[name] = consistent_payload(_run(name, robot, loaded, target, unloaded,
                                                          model, config))
        except IdentError as exc:
            if method != 'all':
                raise
            out.failures[name] = str(exc)
        advance(progress)
    if not out.estimates:
        raise IdentError('no payload method succeeded: ' + '; '.join(
            f'{k}: {v}' for k, v in out.failures.items()))
    out.selected = next(m for m in METHODS if m in out.estimates)
    return out


def _run(method, robot, loaded, frame, unloaded, model, config) -> PayloadEstimate:
    if method == 'global':
        return identify_global(robot, unloaded, loaded, frame, config)
    if method == 'torque-difference':
        return identify_torque_difference(robot, unloaded, loaded, frame, config)
    if method == 'parameter-difference':
        return identify_parameter_difference(robot, unloaded, loaded, frame, config)
    if method == 'model':
        return identify_model_based(model, loaded, frame)
    if model is not None:
        return identify_static(robot, loaded, frame, model.config, model=model)
    return identify_static(robot, loaded, frame, config, unloaded=unloaded)
