"""The fleet's drift report: drift.yaml and one self-contained HTML page (``write_fleet_report``)
with the fleet table (robot × joint, coloured by the worst z), the alerts, per flagged robot
the trend of each flagged quantity over its recordings with its baseline band, and the failures.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import write_atomic
from ..report.figures import new_figure, png_data_uri
from ..report.html import Figure, Section, Table, render_page
from .drift import DRIFT, PAGE, REPORT, DriftAnalysis, Series, analyse_drift
from .statistics import drift_scale

#: Units of the quantities, for the figures.
UNITS = {'fc': 'N·m', 'fv': 'N·m·s/rad', 'offset': 'N·m', 'Ia': 'kg·m²',
         'validation_error': '%'}


@dataclass
class FleetReport:
    """What ``write_fleet_report`` wrote.

    Parameters
    ----------
    analysis : DriftAnalysis
        The drift found.
    drift_path : Path
        drift.yaml.
    page : Path
        The HTML page.
    """

    analysis: DriftAnalysis
    drift_path: Path
    page: Path


def write_fleet_report(fleet_dir: str | Path, out_dir: str | Path | None = None) -> FleetReport:
    """Write ``FLEET_DIR/drift.yaml`` and the fleet page.

    Parameters
    ----------
    fleet_dir : str or Path
        FLEET_DIR, with fleet.yaml.
    out_dir : str or Path, optional
        The page's folder (default ``FLEET_DIR/report``).

    Returns
    -------
    FleetReport

    Raises
    ------
    InputError
        If FLEET_DIR holds no valid fleet.yaml (``drift.analyse_drift``).
    """
    fleet_dir = Path(fleet_dir)
    analysis = analyse_drift(fleet_dir)
    drift_path = analysis.file.write(fleet_dir / DRIFT)
    page = Path(out_dir) if out_dir else fleet_dir / REPORT
    written = write_atomic(page / PAGE, render_page('Fleet drift report', sections(analysis)))
    return FleetReport(analysis, drift_path, written)


def sections(analysis: DriftAnalysis) -> list[Section]:
    """The sections of the fleet page.

    Parameters
    ----------
    analysis : DriftAnalysis
        The drift of the fleet.

    Returns
    -------
    list of Section
    """
    index, drift = analysis.index, analysis.file
    settings = drift.settings
    recordings = sum(len(r.recordings) for r in index.robots)
    stamp = datetime.datetime.now().astimezone().isoformat(timespec='seconds')
    overview = Section('fleet', 'Fleet', paragraphs=[
        f'{len(index.robots)} robots, {recordings} recordings, {len(analysis.alerts)} alerts. '
        f'Baseline: the first {settings.baseline} successful recordings of each robot. An '
        f'alert needs a change of at least {settings.change_percent:g} % (of the baseline '
        f"value; of the joint's torque RMS for the offset) with z ≥ {settings.z:g} against "
        'the baseline scatter and the identification standard deviations, or against the '
        'robots of the same URDF (robust z). Cells: the largest z of the joint at the latest '
        'recording; red: an alert, orange: significant but small, green: within the baseline.',
        f'Written {stamp} by robot-ident fleet report from {index.manifest}.'],
        tables=_fleet_tables(analysis))
    alerts = Section('alerts', 'Alerts', tables=[Table(
        ['robot', 'joint', 'quantity', 'against', 'baseline', 'current', 'change %', 'z',
         'since'],
        [[a.robot, a.joint, a.quantity, a.basis, a.baseline, a.current, a.change_percent, a.z,
          a.first_recording] for a in analysis.alerts],
        row_classes=['poor'] * len(analysis.alerts), caption='sorted by z')])
    if not analysis.alerts:
        alerts.paragraphs.append('No alert.')
    trends = Section('trends', 'Trends of the flagged robots')
    for robot in dict.fromkeys(a.robot for a in analysis.alerts):
        flagged = {(a.joint, a.quantity) for a in analysis.alerts if a.robot == robot}
        series = [s for s in analysis.series if s.robot == robot
                  and (s.joint, s.quantity) in flagged]
        if series:
            trends.figures.append(trend_figure(robot, series, settings))
    if not trends.figures:
        trends.paragraphs.append('No robot flagged.')
    failures = [(r.name, f.recording, f.reason) for r in drift.robots for f in r.failed]
    failed = Section('failures', 'Failures', tables=[Table(
        ['robot', 'recording', 'reason'], [list(f) for f in failures])] if failures else [],
        paragraphs=[] if failures else ['No failure.'])
    return [overview, alerts, trends, failed]


def trend_figure(robot: str, series: list[Series], settings) -> Figure:
    """The flagged quantities of a robot over its recordings, with their baseline bands.

    Parameters
    ----------
    robot : str
        The robot.
    series : list of Series
        Its flagged series.
    settings : DriftConfig
        The thresholds (the band: no alert inside).

    Returns
    -------
    Figure
    """
    fig, axes = new_figure(9.0, 2.1 * len(series) + 0.4, nrows=len(series), squeeze=False)
    for ax, s in zip(axes[:, 0], series):
        base = s.baseline
        x_base = [p.order + 1 for p in base]
        x = [p.order + 1 for p in s.points]
        ax.plot(x_base, [p.value for p in base], 'o', color='tab:green', label='baseline')
        ax.plot(x, [p.value for p in s.points], 'o-', color='tab:blue', label='recordings')
        alerted = [(xi, p.value) for xi, p, a in zip(x, s.points, s.alert or []) if a]
        if alerted:
            ax.plot(*zip(*alerted), 'o', color='tab:red', label='alert')
        if np.isfinite(s.mean):
            half = _band(s, settings)
            ax.axhline(s.mean, color='tab:green', lw=1, ls='--')
            ax.axhspan(s.mean - half, s.mean + half, color='tab:green', alpha=0.12,
                       label='no alert')
        ax.set_ylabel(f'{s.quantity} ({UNITS.get(s.quantity, "")})')
        ax.set_title(f'{robot} {s.joint} {s.quantity}', fontsize=9)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel('recording (oldest first)')
    axes[0, 0].legend(fontsize=7, loc='upper left')
    fig.tight_layout()
    return Figure(png_data_uri(fig), f'{robot}: flagged quantities over its recordings; '
                  'green band: no alert against the baseline')


def _band(s: Series, settings) -> float:
    """Half-width of the no-alert band: an alert needs both the change and the z."""
    scale = drift_scale(s.scatter, max(len(s.baseline), 1)) if np.isfinite(s.scatter) else 0.0
    large = settings.change_percent / 100 * (s.reference if np.isfinite(s.reference) else 0.0)
    return float(max(large, settings.z * scale))


def _fleet_tables(analysis: DriftAnalysis) -> list[Table]:
    """One table per kind of robot: robot × joint, the worst z."""
    alerted = {(a.robot, a.joint) for a in analysis.alerts}
    z_min = analysis.file.settings.z
    groups = {}
    for robot, drift in zip(analysis.index.robots, analysis.file.robots):
        groups.setdefault(tuple(drift.joints), []).append((robot, drift))
    tables = []
    for joints, members in groups.items():
        rows, classes = [], []
        for robot, drift in members:
            ok = sum(r.status in ('ok', 'skipped') for r in robot.recordings)
            rows.append([robot.name, Path(robot.urdf).name, f'{ok}/{len(robot.recordings)}',
                         ', '.join(drift.baseline) or 'pending', *drift.worst_z])
            classes.append(['', '', 'poor' if ok < len(robot.recordings) else '', ''] + [
                'poor' if (robot.name, j) in alerted else 'uncertain' if z >= z_min
                else 'trusted' for j, z in zip(joints, drift.worst_z)])
        tables.append(Table(['robot', 'URDF', 'identified', 'baseline', *joints], rows,
                            cell_classes=classes, caption='worst z per joint'))
    return tables
