"""``robot-ident fleet``: the manifest and its one-line errors before any work, the content
hashes and the resume (only what changed reruns), a failed task failing alone, a recorder bag
as a recording, and the drift statistics on closed-form cases."""
from __future__ import annotations

import datetime
import math
import os
import shutil

import datafiles
import numpy as np
import pytest
import yaml
from datafiles import assert_one_line_error
from fleetfiles import IDENTIFICATION, SCARA, small_fleet

from ident_core.cli import main
from ident_core.errors import InputError
from ident_core.fleet import statistics as stats
from ident_core.fleet.drift import DriftFile
from ident_core.fleet.engine import identify_fleet
from ident_core.fleet.hashing import FileHashes, recording_sha256
from ident_core.fleet.index import FleetIndex
from ident_core.fleet.manifest import load_fleet
from ident_core.fleet.tasks import TaskRecord
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset


def _manifest(folder, robots, **sections):
    path = folder / 'FLEET.yaml'
    path.write_text(yaml.safe_dump({**sections, 'robots': robots}, sort_keys=False))
    return path


# --- manifest -----------------------------------------------------------------------------------
def test_recordings_are_ordered_by_their_start_else_by_path(tmp_path):
    fleet = small_fleet(tmp_path, robots=1, nights=3)
    # the nights' start times run against their names: the times decide
    paths = fleet.recordings['scara1']
    for k, path in enumerate(paths):
        spec = yaml.safe_load(path.read_text())
        spec['start_time'] = f'2026-03-0{5 - k}T22:00:00'          # no zone: UTC
        path.write_text(yaml.safe_dump(spec))
    robot = load_fleet(fleet.manifest).robots[0]
    assert [r.name for r in robot.recordings] == ['night03', 'night02', 'night01']
    assert robot.recordings[0].time == datetime.datetime(2026, 3, 3, 22, tzinfo=datetime.UTC)
    assert {r.time_source for r in robot.recordings} == {'start_time'}
    # one recording without a time: the sorted paths decide, for every recording
    spec = yaml.safe_load(paths[1].read_text())
    del spec['start_time']
    paths[1].write_text(yaml.safe_dump(spec))
    robot = load_fleet(fleet.manifest).robots[0]
    assert [r.name for r in robot.recordings] == ['night01', 'night02', 'night03']
    assert {r.time_source for r in robot.recordings} == {'order'}


@pytest.mark.parametrize('case, fragments', [
    ('unknown field', ['FLEET.yaml', 'unknown field robots[0].urdff']),
    ('missing URDF', ['FLEET.yaml', 'robots[0].urdf', 'nowhere.urdf', 'not found']),
    ('glob matching nothing', ['FLEET.yaml', 'robots[0].recordings[1]', 'logs/none*.yaml',
                               'matches no recording']),
    ('robot twice', ['FLEET.yaml', 'robots[1].name', "'r1' is listed twice"]),
    ('bad setting', ['FLEET.yaml', 'identification.estimator']),
    ('baseline of one', ['FLEET.yaml', 'drift.baseline']),
])
def test_a_bad_manifest_is_one_line_and_exit_2_before_any_work(case, fragments, tmp_path,
                                                               capsys):
    fleet = small_fleet(tmp_path, robots=1, nights=2)
    robot = {'name': 'r1', 'urdf': str(SCARA), 'recordings': ['logs/scara1/*.yaml']}
    sections = {}
    if case == 'unknown field':
        robots = [{**robot, 'urdff': 'x'}]
    elif case == 'missing URDF':
        robots = [{**robot, 'urdf': 'nowhere.urdf'}]
    elif case == 'glob matching nothing':
        robots = [{**robot, 'recordings': ['logs/scara1/*.yaml', 'logs/none*.yaml']}]
    elif case == 'robot twice':
        robots = [robot, robot]
    elif case == 'bad setting':
        robots, sections = [robot], {'identification': {'estimator': 'magic'}}
    else:
        robots, sections = [robot], {'drift': {'baseline': 1}}
    manifest = _manifest(fleet.manifest.parent, robots, **sections)
    out = tmp_path / 'out'
    rc = main(['fleet', 'identify', '--manifest', str(manifest), '--out', str(out),
               '--no-progress'])
    assert_one_line_error(rc, capsys, *fragments)
    assert not out.exists()


def test_two_recordings_of_one_name_are_refused(tmp_path):
    """A glob that matches a description and its .npz names two recordings ``night01``."""
    small_fleet(tmp_path, robots=1, nights=1)
    with pytest.raises(InputError, match=r"robots\[0\]\.recordings: .*night01.npz and "
                       r".*night01.yaml have the same name 'night01'"):
        load_fleet(_manifest(tmp_path, [{'name': 'r1', 'urdf': str(SCARA),
                                         'recordings': ['logs/scara1/night01.*']}]))


# --- hashing, resume, failures ------------------------------------------------------------------
def test_the_hash_covers_the_bytes_a_recording_is_read_from_not_its_place(tmp_path):
    fleet = small_fleet(tmp_path, robots=1, nights=1)
    description = fleet.recordings['scara1'][0]
    digest = recording_sha256(description)
    moved = tmp_path / 'moved'
    shutil.copytree(description.parent, moved)
    assert recording_sha256(moved / description.name) == digest
    data = description.with_suffix('.npz')
    remembered = FileHashes(tmp_path / 'hashes.json')
    assert recording_sha256(description, remembered) == digest
    remembered.save()
    remembered = FileHashes(tmp_path / 'hashes.json')
    assert recording_sha256(description, remembered) == digest and not remembered.changed
    stat = data.stat()                              # touched, same bytes: read again
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert recording_sha256(description, remembered) == digest and remembered.changed
    assert recording_sha256(description) == digest
    arrays = dict(np.load(data))
    arrays['torques'][5, 1] += 1e-9
    np.savez(data, **arrays)
    assert recording_sha256(description) != digest


def test_a_rerun_does_only_new_or_changed_tasks(tmp_path, dask_threads):
    fleet = small_fleet(tmp_path, robots=2, nights=3, baseline=2)
    out = tmp_path / 'out'
    first = identify_fleet(load_fleet(fleet.manifest), out, scheduler=dask_threads)
    # per robot: 3 identifications, a baseline, 3 validations
    assert (first.ran, first.reused, len(first.failed)) == (14, 0, 0)
    result = out / 'scara1' / 'night03' / 'RESULT.yaml'
    stamp = result.stat().st_mtime_ns

    assert (out / '.file-hashes.json').is_file()
    again = identify_fleet(load_fleet(fleet.manifest), out, scheduler=dask_threads)
    assert (again.ran, again.reused) == (0, 14)
    assert result.stat().st_mtime_ns == stamp
    assert {r.status for robot in again.index.robots for r in robot.recordings} == {'skipped'}

    # scara1's third night changes (not in its baseline): its identification and validation
    arrays = dict(np.load(fleet.recordings['scara1'][2].with_suffix('.npz')))
    arrays['torques'] *= 1.01
    np.savez(fleet.recordings['scara1'][2].with_suffix('.npz'), **arrays)
    changed = identify_fleet(load_fleet(fleet.manifest), out, scheduler=dask_threads)
    assert sorted((o.task.kind, o.task.robot, o.task.name) for o in changed.outcomes
                  if not o.reused) == [('identify', 'scara1', 'night03'),
                                       ('validate', 'scara1', 'night03')]
    # its first night changes: the baseline and every validation of scara1 too
    arrays = dict(np.load(fleet.recordings['scara1'][0].with_suffix('.npz')))
    arrays['torques'] *= 1.01
    np.savez(fleet.recordings['scara1'][0].with_suffix('.npz'), **arrays)
    changed = identify_fleet(load_fleet(fleet.manifest), out, scheduler=dask_threads)
    assert sorted((o.task.kind, o.task.name) for o in changed.outcomes if not o.reused) == [
        ('baseline', 'baseline'), ('identify', 'night01'), ('validate', 'night01'),
        ('validate', 'night02'), ('validate', 'night03')]
    assert {o.task.robot for o in changed.outcomes if not o.reused} == {'scara1'}


def test_a_failed_task_fails_alone_with_its_reason_and_exit_1(tmp_path, dask_threads, capsys):
    fleet = small_fleet(tmp_path, robots=1, nights=4, baseline=2)
    broken = fleet.recordings['scara1'][1]
    spec = yaml.safe_load(broken.read_text())
    broken.write_text(yaml.safe_dump({**spec, 'file': 'missing.npz'}))
    out = tmp_path / 'out'
    command = ['fleet', 'identify', '--manifest', str(fleet.manifest), '--out', str(out),
               '--scheduler', dask_threads, '--no-progress']
    rc = main(command)
    printed = capsys.readouterr().out
    assert rc == 1
    index = FleetIndex.read(out / 'fleet.yaml')
    entries = {r.name: r for r in index.robots[0].recordings}
    assert entries['night02'].status == 'failed'
    assert 'missing.npz' in entries['night02'].reason and '\n' not in entries['night02'].reason
    assert f'failed scara1/night02: {entries["night02"].reason}' in printed
    assert not (out / 'scara1' / 'night02' / 'RESULT.yaml').exists()
    # the baseline is the first two successful nights
    assert index.robots[0].baseline.recordings == ['night01', 'night03']
    assert all(entries[n].status == 'ok' and entries[n].validation_error_percent > 0
               for n in ('night01', 'night03', 'night04'))
    drift = DriftFile.read(out / 'drift.yaml')
    assert [(f.recording, f.reason) for f in drift.robots[0].failed] == [
        ('night02', entries['night02'].reason)]
    assert 'night02' in (out / 'report' / 'index.html').read_text()
    # unchanged: the failure stands without a rerun, the report is not rewritten
    page = (out / 'report' / 'index.html').stat().st_mtime_ns
    assert main(command) == 1
    assert '0 tasks run' in capsys.readouterr().out
    assert (out / 'report' / 'index.html').stat().st_mtime_ns == page
    assert TaskRecord.read(out / 'scara1' / 'night02' / 'TASK.yaml').status == 'failed'


def test_a_recorder_bag_is_read_as_it_is(tmp_path, dask_threads):
    """The recorder's rosbag2: timed by its first message, cut to the excitation its stored
    ExcitationTrajectory describes."""
    robot = load_robot(SCARA)
    for k in range(2):
        dataset = _dataset(robot, 8.0, seed=k)
        dataset.t = dataset.t + 86400 * k                    # one night later
        datafiles.write_joint_state_bag(tmp_path / 'bags' / f'run{k + 1}', dataset,
                                        excitation=(86400 * k + 2.0, 2.0, 2))
    manifest = _manifest(tmp_path, [{'name': 'r1', 'urdf': str(SCARA),
                                     'recordings': ['bags/run*']}],
                         identification=IDENTIFICATION, drift={'baseline': 2})
    fleet = load_fleet(manifest)
    assert [(r.name, r.time_source) for r in fleet.robots[0].recordings] == [
        ('run1', 'bag'), ('run2', 'bag')]
    # the bag's first message, received 1 to 3 ms after its stamp (write_joint_state_bag)
    start = datetime.datetime.fromtimestamp(1_700_000_000, datetime.UTC)
    lag = (fleet.robots[0].recordings[0].time - start).total_seconds()
    assert 0.001 <= lag <= 0.003
    run = identify_fleet(fleet, tmp_path / 'out', scheduler=dask_threads)
    assert not run.failed
    result = yaml.safe_load((tmp_path / 'out' / 'r1' / 'run1' / 'RESULT.yaml').read_text())
    # 2 periods of 2 s from 2 s: rows 200 to 600 at 100 Hz
    assert result['identification']['data'] == [
        f'{tmp_path / "bags" / "run1"}[/joint_states rows 200:601]']


def _dataset(robot, duration, seed=0):
    truth = perturbed_parameters(robot, np.random.default_rng(seed))
    return synthetic_dataset(robot, truth, duration, 100.0, seed=seed, torque_noise=0.05)[0]


# --- statistics ---------------------------------------------------------------------------------
def test_baseline_scatter_is_the_largest_of_sample_identification_and_floor():
    assert stats.baseline_scatter([1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert stats.baseline_scatter([1.0, 2.0, 3.0], [3.0, 3.0, math.nan]) == pytest.approx(3.0)
    assert stats.baseline_scatter([2.0, 2.0], [0.1, 0.1], floor=0.5) == pytest.approx(0.5)


def test_drift_z_in_closed_form():
    # |5 − 2| / sqrt(1² (1 + 1/3) + 0.5²)
    assert stats.drift_z(5.0, 0.5, 2.0, 1.0, 3) == pytest.approx(3 / math.sqrt(4 / 3 + 0.25))
    assert stats.drift_z(2.0, math.nan, 2.0, 0.0, 3) == 0.0
    assert stats.drift_z(2.5, math.nan, 2.0, 0.0, 3) == math.inf


def test_robust_z_finds_the_outlier_against_median_and_mad():
    median, scale, z = stats.robust_z([1.0, 1.1, 0.9, 1.0, 3.0])
    assert median == 1.0
    assert scale == pytest.approx(1.4826 * 0.1)
    assert z[-1] == pytest.approx(2.0 / (1.4826 * 0.1))
    assert stats.robust_z([1.0, 1.0, 1.0, 2.0], floor=0.5)[2][-1] == pytest.approx(2.0)


def test_pooled_scatter_and_the_scatter_of_a_magnitude():
    assert stats.pooled_scatter([0.1, 0.2, math.nan], [1.0, 1.0, 1.0]) == \
        pytest.approx(math.sqrt((0.01 + 0.04) / 2))
    # |e|, e ~ N(0, 1): mean sqrt(2/π), standard deviation sqrt(1 − 2/π)
    e = np.abs(np.random.default_rng(0).standard_normal(200_000))
    assert pytest.approx(e.std() / e.mean(), rel=0.01) == stats.MAGNITUDE_SCATTER


def test_an_alert_needs_a_large_and_a_significant_change():
    assert stats.is_alert(0.25, 1.0, 5.0, 20, 4)
    assert not stats.is_alert(0.15, 1.0, 50.0, 20, 4)        # significant, small
    assert not stats.is_alert(0.5, 1.0, 3.0, 20, 4)          # large, within the scatter
    assert stats.is_alert(-0.3, 1.0, 4.0, 20, 4)             # a fall counts as a rise
