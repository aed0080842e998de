"""``write_report``: the sections of an identification report from its result files."""
from __future__ import annotations

import datetime
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..data.datasets import load_source
from ..data.sources import short_source, source_path
from ..errors import DataWarning, InputError
from ..estimation.identified_model import IdentifiedModel
from ..estimation.results import ResultFile, ValidationEntry, read_result
from ..files import check_readable, write_atomic
from ..friction.identify import collect_samples
from ..friction.results import FrictionFile
from ..friction.samples import RigidBodyModel
from ..model.robot import RobotModel, load_robot
from ..payload.results import PayloadFile
from ..progress import Progress, advance, describe, expect
from . import friction, parameters, payload, torque_estimates, torques
from .html import Section, Table, render_page

#: The report's file in its folder.
PAGE = 'index.html'


@dataclass
class ReportInputs:
    """The files a report shows; each is optional, at least one is given.

    Parameters
    ----------
    model : str or Path, optional
        RESULT.yaml of ``identify``.
    payload : str or Path, optional
        PAYLOAD.yaml of ``payload``.
    friction : str or Path, optional
        FRICTION.yaml of ``friction``.
    torques : str or Path, optional
        TORQUES.csv of ``estimate-torque`` (``true_<joint>`` columns, if any, are drawn too).
    urdf : str, Path or RobotModel, optional
        Use this URDF (or robot) instead of the one the result files name.
    ignore_urdf_change : bool
        Accept a URDF whose content differs from the one RESULT.yaml was identified with.
    recover : bool
        Read recordings a killed recorder left unfinished up to the damage.
    """

    model: str | Path | None = None
    payload: str | Path | None = None
    friction: str | Path | None = None
    torques: str | Path | None = None
    urdf: str | Path | RobotModel | None = None
    ignore_urdf_change: bool = False
    recover: bool = False


def write_report(out_dir: str | Path, inputs: ReportInputs,
                 progress: Progress = None) -> Path:
    """Write the report of an identification as ``out_dir/index.html``.

    The page holds, for what ``inputs`` names: measured against predicted torque (identified
    and URDF model) on every identification and validation recording of RESULT.yaml with
    residual histograms and spectra; the base parameters with their standard deviations
    coloured by trust, the condition number, the standard parameters per link with their
    physical consistency; the excitation against the URDF limits; friction curves with their
    samples; the payload with its uncertainty and a 3-D sketch of its centre of mass; and the
    torque estimator's filtered against raw (and true) torque. Images are embedded: the page
    needs no other file and no network. A recording that cannot be found or read is named on
    the page and in a ``DataWarning``; the rest of the report is written.

    Parameters
    ----------
    out_dir : str or Path
        The report's folder (created).
    inputs : ReportInputs
        The result files.
    progress : callable or object with ``update(n)``, optional
        Told of each section and recording (``ident_core.progress``).

    Returns
    -------
    Path
        ``out_dir/index.html``.

    Raises
    ------
    InputError
        If no input is given, or an input file is missing or malformed (naming it).
    """
    files = [f for f in (inputs.model, inputs.payload, inputs.friction, inputs.torques) if f]
    if not files:
        raise InputError('report: give at least one of --model, --payload, --friction, '
                         '--torques')
    for path in files:
        check_readable(path, 'input')
    expect(progress, len(files))
    sections = [_overview(inputs)]
    title = 'Identification report'
    if inputs.model:
        describe(progress, 'identified model')
        model = read_result(inputs.model, inputs.urdf, inputs.ignore_urdf_change)
        document = ResultFile.read(inputs.model)
        title = f'Identification report: {document.robot.name}'
        sections += model_sections(model, document.validation, Path(inputs.model).parent,
                                   inputs.recover, progress)
        advance(progress)
    if inputs.friction:
        describe(progress, 'friction')
        sections.append(friction_section(FrictionFile.read(inputs.friction), inputs))
        advance(progress)
    if inputs.payload:
        describe(progress, 'payload')
        sections.append(payload_section(inputs.payload))
        advance(progress)
    if inputs.torques:
        describe(progress, 'torque estimates')
        sections.append(torque_estimate_section(inputs.torques))
        advance(progress)
    out = Path(out_dir) / PAGE
    return write_atomic(out, render_page(title, sections))


def model_sections(model: IdentifiedModel, validation: list[ValidationEntry], folder: Path,
                   recover: bool = False, progress: Progress = None) -> list[Section]:
    """The torque, parameter and excitation sections of an identified model.

    Parameters
    ----------
    model : IdentifiedModel
        Read from RESULT.yaml.
    validation : list of ValidationEntry
        RESULT.yaml's validations (their recordings are shown as validation sets).
    folder : Path
        RESULT.yaml's folder: recordings named relative to it are looked for there too.
    recover : bool
        Read unfinished rosbag2 recordings up to the damage.
    progress : callable or object with ``update(n)``, optional
        Told of each recording (``ident_core.progress``).

    Returns
    -------
    list of Section
    """
    joints = model.robot.joint_names
    st = model.stats
    summary = Section('model', 'Identified model', paragraphs=[
        f'{model.base.count} base parameters of {model.robot.urdf_source}, '
        f'estimator {model.config.estimator}, friction {model.config.friction}, rotor inertia '
        f'{"yes" if model.config.rotor_inertia else "no"}; {st.get("samples", 0)} samples; '
        f'condition number of the base regressor {st.get("condition_number", float("nan")):.4g}'
        f'; relative fit error {st.get("relative_error_percent", float("nan")):.3g} %.'],
        tables=[_validation_table(validation)])
    section = Section('torques', 'Measured and predicted torques')
    excitation = Section('excitation', 'Excitation trajectory')
    comparisons = []
    data, decimation = st.get('data', []), st.get('decimation', [])
    roles = [('identification', source, decimation[i] if i < len(decimation) else 1)
             for i, source in enumerate(data)]
    roles += [('validation', v.data, 1) for v in validation]
    expect(progress, len(roles))
    for role, source, factor in roles:
        describe(progress, f'{role} recording {short_source(source)}')
        c = _compare(model, role, source, factor, folder, recover, section.warnings)
        advance(progress)
        if c is None:
            continue
        comparisons.append(c)
        section.figures += [torques.torque_figure(c, model.robot),
                            torques.residual_figure(c, model.robot)]
        if role == 'identification':
            excitation.figures.append(torques.trajectory_figure(c, model.robot))
    if comparisons:
        section.tables.append(torques.error_table(comparisons, joints))
    section.paragraphs.append('Grey: measured torque; blue: the identified model; orange '
                              'dashed: the a-priori URDF model (no friction, no rotor '
                              'inertia). Both models see the same filtered signals.')
    params = Section('parameters', 'Parameters', figures=[
        parameters.base_parameter_figure(model)], tables=[parameters.base_parameter_table(model)],
        figures_first=True)
    if model.standard is not None:
        table, inconsistent = parameters.link_table(model)
        params.tables.append(table)
        params.warnings += inconsistent
    if not excitation.figures:
        excitation.warnings.append('no identification recording could be read')
    return [summary, section, params, excitation]


def friction_section(content: FrictionFile, inputs: ReportInputs) -> Section:
    """The friction section: curves with their samples and the selected models.

    Parameters
    ----------
    content : FrictionFile
        FRICTION.yaml.
    inputs : ReportInputs
        For the URDF override and ``recover``.

    Returns
    -------
    Section
    """
    section = Section('friction', 'Friction', tables=[friction.friction_table(content)])
    samples = {}
    try:
        samples = _friction_samples(content, inputs)
    except InputError as exc:
        section.warnings.append(f'samples not shown: {exc}')
        warnings.warn(f'report: friction samples not shown: {exc}', DataWarning, stacklevel=2)
    section.figures.append(friction.friction_figure(content, samples))
    section.warnings += [f'{key}: {why}' for key, why in content.failures.items()]
    return section


def payload_section(path: str | Path) -> Section:
    """The payload section: every method's estimate and the 3-D sketch of the centre of mass.

    Parameters
    ----------
    path : str or Path
        PAYLOAD.yaml.

    Returns
    -------
    Section

    Raises
    ------
    InputError
        If the file is not a valid PAYLOAD.yaml.
    """
    content = PayloadFile.read(path)
    section = Section('payload', 'Payload', paragraphs=[
        f'{content.mass:.4g} kg, centre of mass {_vector(content.com)} m in {content.frame} '
        f'(method {content.selected}).'], tables=[payload.payload_table(content)],
        figures=[payload.com_figure(content)])
    section.warnings += [f'{method}: {why}' for method, why in content.failures.items()]
    return section


def torque_estimate_section(path: str | Path) -> Section:
    """The torque-estimator section: filtered against raw (and true) torque.

    Parameters
    ----------
    path : str or Path
        TORQUES.csv.

    Returns
    -------
    Section

    Raises
    ------
    InputError
        If the file is not a valid TORQUES.csv.
    """
    log = torque_estimates.read_torques(path)
    return Section('torque-estimator', 'Torque estimator',
                   tables=[torque_estimates.torque_estimate_table(log)],
                   figures=[torque_estimates.torque_estimate_figure(log)])


def _overview(inputs: ReportInputs) -> Section:
    rows = [[kind, str(path)] for kind, path in (
        ('model', inputs.model), ('payload', inputs.payload), ('friction', inputs.friction),
        ('torques', inputs.torques)) if path]
    stamp = datetime.datetime.now().astimezone().isoformat(timespec='seconds')
    return Section('overview', 'Inputs', paragraphs=[f'Written {stamp} by robot-ident report.'],
                   tables=[Table(['input', 'file'], rows)])


def _validation_table(validation: list[ValidationEntry]) -> Table:
    rows = [[v.data, v.relative_error_percent, v.nrms_percent, v.absolute_error]
            for v in validation]
    return Table(['validation recording', 'rel. error %', 'NRMS %', 'abs. error N·m'], rows,
                 caption='validation metrics recorded in RESULT.yaml')


def _compare(model, role, source, factor, folder, recover, notes):
    try:
        dataset = load_source(_located(source, folder), model.robot.joint_names,
                              recover=recover)
        return torques.compare_torques(model, dataset, role, factor)
    except InputError as exc:
        notes.append(f'{role} recording not shown: {exc}')
        warnings.warn(f'report: {role} recording not shown: {exc}', DataWarning, stacklevel=3)
        return None


def _located(source: str, folder: Path) -> str:
    """A source name whose path is looked for as given, else relative to ``folder``."""
    path, tags = source_path(source)
    if not Path(path).exists() and (folder / path).exists():
        path = str(folder / path)
    return path + tags


def _friction_samples(content: FrictionFile, inputs: ReportInputs) -> dict:
    source = content.rigid_body_model
    if source.startswith('URDF '):
        robot = inputs.urdf if isinstance(inputs.urdf, RobotModel) else \
            load_robot(inputs.urdf or source[len('URDF '):])
        rigid = RigidBodyModel.from_urdf(robot)
    else:
        model = read_result(source, inputs.urdf, inputs.ignore_urdf_change)
        robot, rigid = model.robot, RigidBodyModel.from_identified(model, source)
    data = [load_source(p, robot.joint_names, recover=inputs.recover) for p in content.data]
    return collect_samples(robot, data, rigid, content.config)


def _vector(x) -> str:
    return '(' + ', '.join(f'{v:.4g}' for v in x) + ')'
