"""The friction job: identify joint friction models on their own from whole recordings and write
FRICTION.yaml (``friction_from_recordings``; stribeck_friction_sa_ga_2020, docs/methods.md §8).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..estimation.results import read_result
from ..friction.fit import OPTIMIZERS
from ..friction.identify import FrictionConfig, FrictionIdentification, identify_friction
from ..friction.models import FRICTION_MODELS, PAPER_MODELS
from ..friction.results import FrictionFile, friction_file
from ..friction.samples import RigidBodyModel
from ..model.robot import RobotModel
from ..progress import Progress
from .inputs import RecordingOptions, load_recording, robot_model
from .outputs import output_path
from .report import ReportAfter, report_after

#: The friction model and the optimiser of an empty request.
DEFAULT_MODEL, DEFAULT_OPTIMIZER = 'improved-stribeck', 'lsq'


@dataclass
class FrictionOutcome:
    """What ``friction_from_recordings`` found and wrote.

    Parameters
    ----------
    identification : FrictionIdentification
        Every fit and the selected model per joint.
    content : FrictionFile
        What FRICTION.yaml holds.
    friction_path : Path
        FRICTION.yaml, as written.
    report : ReportAfter
        The report asked for: its page, or why it failed (FRICTION.yaml stands).
    """

    identification: FrictionIdentification
    content: FrictionFile
    friction_path: Path
    report: ReportAfter = field(default_factory=ReportAfter)

    @property
    def files(self) -> list[Path]:
        """The files written: FRICTION.yaml, then the report's page."""
        return [self.friction_path] + self.report.files


def friction_choices(friction_model: str = '', optimizer: str = '') -> tuple[tuple, tuple]:
    """The friction models and optimisers a request names.

    Parameters
    ----------
    friction_model : str
        One of ``friction.models.FRICTION_MODELS``; ``'all'``: ``PAPER_MODELS``; empty:
        ``DEFAULT_MODEL``.
    optimizer : str
        One of ``friction.fit.OPTIMIZERS``; ``'all'``: every one; empty: ``DEFAULT_OPTIMIZER``.

    Returns
    -------
    models, optimizers : tuple of str

    Raises
    ------
    InputError
        For a name not known, naming the field.
    """
    return (_choice('friction_model', friction_model, FRICTION_MODELS, DEFAULT_MODEL,
                    PAPER_MODELS),
            _choice('optimizer', optimizer, OPTIMIZERS, DEFAULT_OPTIMIZER, OPTIMIZERS))


def _choice(field: str, value: str, names: tuple, default: str, every: tuple) -> tuple:
    """The names a field asks for: ``''`` the default, ``'all'`` every one of ``every``;
    ``InputError`` naming the field for anything not in ``names``."""
    if not value:
        return (default,)
    if value == 'all':
        return tuple(every)
    if value not in names:
        raise InputError(f'{field} {value!r} unknown (choose from {", ".join(names)}, all; '
                         f'empty: {default})')
    return (value,)


def friction_from_recordings(data: Sequence[str | Path], config: FrictionConfig | None = None, *,
                             robot: RobotModel | str | Path | None = None,
                             model: str | Path | None = None,
                             ignore_urdf_change: bool = False,
                             joints: Sequence[str] | None = None,
                             friction_model: str = DEFAULT_MODEL,
                             optimizer: str = DEFAULT_OPTIMIZER,
                             validation: Sequence[str | Path] = (),
                             recordings: RecordingOptions | None = None,
                             out: str | Path | None = None,
                             report: str | Path | bool | None = None,
                             progress: Progress = None) -> FrictionOutcome:
    """Identify joint friction models after subtracting a rigid-body model, compare them on
    validation recordings, write FRICTION.yaml.

    Every recording is read whole, whatever ``recordings.excitation_window_only`` says:
    friction needs motion, not periodicity (standstills are left out per joint), and a
    joint-wise experiment has one description per stage.

    Parameters
    ----------
    data : sequence of str or Path
        Recordings, best joint-wise cosine experiments (``excite --jointwise``).
    config : FrictionConfig, optional
        Preprocessing and fitting settings (default: ``FrictionConfig()``).
    robot : RobotModel, str or Path, optional
        The robot, or its URDF; with ``model``, the URDF RESULT.yaml is read with.
    model : str or Path, optional
        RESULT.yaml whose rigid-body (and rotor-inertia) torque is subtracted; default the
        URDF's rigid-body model.
    ignore_urdf_change : bool
        Accept a URDF that differs from the one RESULT.yaml was identified with.
    joints : sequence of str, optional
        Joints to identify; default every one that moves.
    friction_model, optimizer : str
        As for ``friction_choices`` (``'all'``, a name, or empty for the default).
    validation : sequence of str or Path
        Recordings to compare the models on (residual sum of squares).
    recordings : RecordingOptions, optional
        Topics and damaged bags (default: ``RecordingOptions()``).
    out : str or Path, optional
        FRICTION.yaml to write; default ``<first recording>.friction.yaml``
        (``outputs.output_path``).
    report : str, Path or bool, optional
        Also write the HTML report of FRICTION.yaml into this folder; True: ``<stem>_report``
        beside it.
    progress : callable or object with ``update(n)``, optional
        Told of the reading and of each fit (``ident_core.progress``).

    Returns
    -------
    FrictionOutcome

    Raises
    ------
    InputError
        Without a robot or model, for an unknown model, optimiser or joint, a joint that never
        moves, a bad recording, or a model no optimiser could fit.
    """
    models, optimizers = friction_choices(friction_model, optimizer)
    robot_urdf = robot     # a file or a robot: RESULT.yaml's and the report's URDF
    if model:
        identified = read_result(model, robot_urdf, ignore_urdf_change)
        rigid = RigidBodyModel.from_identified(identified, str(model))
        robot = robot if isinstance(robot, RobotModel) else identified.robot
    elif robot:
        robot = robot_model(robot)
        rigid = RigidBodyModel.from_urdf(robot)
    else:
        raise InputError('friction: give --model RESULT.yaml or --urdf URDF')
    config = config or FrictionConfig()
    options = (recordings or RecordingOptions()).whole()
    names = robot.joint_names
    recorded = [load_recording(p, options, names, progress) for p in data]
    checks = [load_recording(p, options, names, progress) for p in validation]
    result = identify_friction(robot, recorded, rigid, joints, models, optimizers, config,
                               checks, progress=progress)
    content = friction_file(result, config)
    written = content.write(output_path('friction', data[0], out))
    return FrictionOutcome(result, content, written, report_after(
        written, report, progress, friction=written, urdf=robot_urdf,
        ignore_urdf_change=ignore_urdf_change, recover=options.recover))
