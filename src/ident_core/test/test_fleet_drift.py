"""The drift of a simulated fleet (docs/fleet.md): two kinds of robots, three of each, one joint
of one robot of each kind wearing (Coulomb friction rising 8 % of its value a night from the
fourth night), every friction scattering 2 % night to night (temperature). Every injected
change is found within two recordings of the night its true value crosses the threshold, and
no healthy robot or joint raises an alert."""
from __future__ import annotations

import numpy as np
import pytest
from fleetfiles import worn_fleet

from ident_core.fleet.drift import DriftFile
from ident_core.fleet.engine import identify_fleet
from ident_core.fleet.manifest import load_fleet
from ident_core.fleet.page import write_fleet_report


@pytest.fixture(scope='module')
def worn(tmp_path_factory, dask_threads):
    folder = tmp_path_factory.mktemp('worn')
    fleet = worn_fleet(folder)
    run = identify_fleet(load_fleet(fleet.manifest), folder / 'out', scheduler=dask_threads)
    assert not run.failed, [o.record.reason for o in run.failed]
    return fleet, write_fleet_report(folder / 'out')


def test_every_worn_joint_is_found_within_two_recordings_of_crossing(worn):
    fleet, report = worn
    settings = report.analysis.file.settings
    for spec in fleet.specs:
        if spec.wear is None:
            continue
        joint = f'joint{spec.wear.joint + 1}'
        fc = np.array([truth.fc[spec.wear.joint] for truth in fleet.truth[spec.name]])
        baseline = fc[:settings.baseline].mean()
        crossing = int(np.argmax(fc >= (1 + settings.change_percent / 100) * baseline))
        assert fc[crossing] >= (1 + settings.change_percent / 100) * baseline
        found = [a for a in report.analysis.alerts if (a.robot, a.joint, a.quantity, a.basis)
                 == (spec.name, joint, 'fc', 'robot')]
        assert found, f'{spec.name} {joint}: no alert (alerts: {report.analysis.alerts})'
        names = [p.stem for p in fleet.recordings[spec.name]]
        assert names.index(found[0].first_recording) <= crossing + 2
        assert found[0].current > found[0].baseline and found[0].change_percent >= 20
        assert found[0].z >= settings.z


def test_no_alert_on_a_healthy_robot_or_joint(worn):
    fleet, report = worn
    worn_joints = {(s.name, f'joint{s.wear.joint + 1}') for s in fleet.specs if s.wear}
    assert report.analysis.alerts
    for alert in report.analysis.alerts:
        assert (alert.robot, alert.joint) in worn_joints, alert


def test_drift_yaml_and_the_page(worn):
    fleet, report = worn
    drift = DriftFile.read(report.drift_path)
    assert drift.alerts == report.analysis.alerts
    assert [a.z for a in drift.alerts] == sorted((a.z for a in drift.alerts), reverse=True)
    assert [r.name for r in drift.robots] == [s.name for s in fleet.specs]
    assert all(r.baseline == ['night01', 'night02', 'night03'] and not r.failed
               for r in drift.robots)
    page = report.page.read_text()
    for section in ('Fleet', 'Alerts', 'Trends of the flagged robots', 'Failures'):
        assert f'>{section}</h2>' in page
    flagged = {a.robot for a in drift.alerts}
    assert page.count('<img ') == len(flagged)
    assert page.count('class="poor"') >= len({(a.robot, a.joint) for a in drift.alerts})
