"""Unfinished rosbag2 (MCAP) bags, as a killed recorder leaves them: detected, read with
``recover=True`` up to the damage, repaired beside the untouched original, refused with one
line (exit 2) without ``--recover``."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from datafiles import URDF, assert_one_line_error

from ident_core.cli import main
from ident_core.data.bag import damage, repair
from ident_core.data.datasets import DataWarning, load_dataset
from ident_core.data.readers import read_joint_states
from ident_core.errors import InputError

T0 = 1_700_000_000 * 10**9
CHUNK = 100                 # messages per chunk of the bags written here


def write_chunked_bag(path: Path, dataset) -> tuple[Path, list[int]]:
    """A complete rosbag2 of ``dataset`` (one JointState per sample, receive time = stamp + 1 ms)
    with a chunk closed every ``CHUNK`` messages; returns the folder and the MCAP size after
    each chunk (where a recorder killed then would have stopped)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    typestore = get_typestore(Stores.ROS2_KILTED)
    T = typestore.types
    msgtype = 'sensor_msgs/msg/JointState'
    ends = []
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/joint_states', msgtype, typestore=typestore)
        for k, t in enumerate(dataset.t):
            stamp = T0 + int(round(t * 1e9))
            msg = T[msgtype](
                header=T['std_msgs/msg/Header'](
                    stamp=T['builtin_interfaces/msg/Time'](sec=stamp // 10**9,
                                                           nanosec=stamp % 10**9),
                    frame_id=''),
                name=list(dataset.joint_names), position=np.array(dataset.position[k]),
                velocity=np.zeros(0), effort=np.array(dataset.effort[k]))
            writer.write(conn, stamp + 1_000_000, typestore.serialize_cdr(msg, msgtype))
            if (k + 1) % CHUNK == 0:
                writer.storage.close_chunk()
                writer.storage.bio.flush()
                ends.append(writer.storage.bio.tell())
    return path, ends


def crashed(complete: Path, dest: Path, size: int) -> Path:
    """A copy of the bag folder without ``metadata.yaml``, its MCAP cut after ``size`` bytes."""
    dest.mkdir()
    (dest / f'{dest.name}.mcap').write_bytes((complete / f'{complete.name}.mcap')
                                              .read_bytes()[:size])
    return dest


@pytest.fixture(scope='module')
def source(tmp_path_factory, make_synthetic):
    """(complete bag, chunk ends, dataset): 20 s at 100 Hz, 2000 messages in 20 chunks."""
    dataset = make_synthetic()
    path, ends = write_chunked_bag(tmp_path_factory.mktemp('src') / 'full', dataset)
    return path, ends, dataset


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize('chunks, extra, salvaged', [
    (15, 0, 1500),            # killed between chunks
    (15, 9, 1500),            # inside the next chunk's record header
    (15, 15_000, None),       # inside the next (uncompressed) chunk: its complete messages too
])
def test_recover_reads_every_complete_message(source, tmp_path, chunks, extra, salvaged):
    full, ends, dataset = source
    bag = crashed(full, tmp_path / 'bag', ends[chunks - 1] + extra)
    assert 'no metadata.yaml' in damage.bag_damage(bag)
    with pytest.raises(InputError, match='--recover') as err:
        read_joint_states(bag, '/joint_states')
    assert '\n' not in str(err.value) and str(bag) in str(err.value)
    with pytest.warns(DataWarning, match=r'unfinished rosbag2 .* (\d+) /joint_states messages'):
        log = read_joint_states(bag, '/joint_states', recover=True)
    n = len(log.stamp)
    if salvaged is not None:
        assert n == salvaged
    else:
        assert chunks * CHUNK < n < (chunks + 1) * CHUNK
    np.testing.assert_array_equal(log.position, dataset.position[:n])
    np.testing.assert_array_equal(log.effort, dataset.effort[:n])
    np.testing.assert_allclose(log.stamp - T0 * 1e-9, dataset.t[:n], atol=1e-6)


def test_warning_states_the_seconds_read(source, tmp_path):
    full, ends, dataset = source
    bag = crashed(full, tmp_path / 'bag', ends[9] + 5)
    with pytest.warns(DataWarning) as record:
        load_dataset(bag, recover=True)
    text = ' '.join(str(w.message) for w in record)
    span = dataset.t[999] - dataset.t[0]
    assert f'1000 /joint_states messages, {span:.3f} s' in text and 'is lost' in text


def test_repair_keeps_the_original_and_reads_as_any_bag(source, tmp_path):
    full, ends, dataset = source
    bag = crashed(full, tmp_path / 'exp_20250101-120000', ends[11] + 1234)
    original = bag / f'{bag.name}.mcap'
    before = digest(original)
    found = damage.find_damaged_bags(tmp_path)
    assert [f for f, _ in found] == [bag]

    result = repair.repair_bag(bag)

    assert digest(original) == before
    assert result.repaired == bag / 'exp_20250101-120000.recovered.mcap'
    assert result.topics == {'/joint_states': result.scan.messages}
    assert damage.bag_damage(bag) is None and damage.find_damaged_bags(tmp_path) == []
    assert not [p for p in bag.iterdir() if p.name.startswith('.')]
    log = read_joint_states(bag, '/joint_states')           # no recover, no warning needed
    n = len(log.stamp)
    assert n == result.scan.messages and 1200 <= n < 1300
    np.testing.assert_array_equal(log.position, dataset.position[:n])
    summary = yaml.safe_load((bag / 'recording.yaml').read_text())
    assert summary['recovered'] is True and summary['experiment'] == 'exp'
    assert summary['joint_state_messages'] == n
    assert summary['recovered_seconds'] == pytest.approx(dataset.t[n - 1] - dataset.t[0])
    assert summary['original_file'] == original.name
    with pytest.raises(InputError, match='nothing to repair'):
        repair.repair_bag(bag)


def test_a_repair_cut_short_loses_nothing_and_is_done_again(source, tmp_path, monkeypatch):
    full, ends, _ = source
    bag = crashed(full, tmp_path / 'bag', ends[4] + 100)
    before = digest(bag / 'bag.mcap')

    def crash(*args):
        raise OSError('disk full')
    monkeypatch.setattr(repair, '_write_metadata', crash)
    with pytest.raises(OSError, match='disk full'):
        repair.repair_bag(bag)
    monkeypatch.undo()
    assert digest(bag / 'bag.mcap') == before
    assert damage.bag_damage(bag) is not None            # still damaged: done again
    result = repair.repair_bag(bag)
    assert result.scan.messages == 500
    assert sorted(p.name for p in bag.iterdir()) == [
        'bag.mcap', 'bag.recovered.mcap', 'metadata.yaml', 'recording.yaml']


def test_a_bag_without_a_complete_message_is_reported(source, tmp_path):
    full, ends, _ = source
    bag = crashed(full, tmp_path / 'bag', 200)
    with pytest.raises(InputError, match='no complete message'):
        repair.repair_bag(bag)
    assert sorted(p.name for p in bag.iterdir()) == ['bag.mcap']


def test_complete_bags_and_other_folders_are_not_damaged(source, tmp_path):
    full, _, _ = source
    assert damage.bag_damage(full) is None
    assert damage.bag_damage(tmp_path) is None            # no bag at all
    (tmp_path / 'notes').mkdir()
    assert damage.find_damaged_bags(tmp_path) == []


def test_cli_refuses_then_recovers_then_repairs(source, tmp_path, capsys):
    full, ends, _ = source
    bag = crashed(full, tmp_path / 'bag', ends[14] + 5)
    out = tmp_path / 'RESULT.yaml'
    identify = ['identify', '--urdf', str(URDF), '--data', str(bag), '--out', str(out)]
    assert_one_line_error(main(identify), capsys, str(bag), 'damaged rosbag2', '--recover')
    assert not out.exists()

    assert main(identify + ['--recover']) == 0
    err = capsys.readouterr().err
    assert 'robot-ident: warning:' in err and '1500 /joint_states messages' in err
    assert yaml.safe_load(out.read_text())['identification']['samples'] > 0

    assert main(['repair-bag', str(bag)]) == 0
    printed = capsys.readouterr().out
    assert 'recovered' in printed and 'bag.recovered.mcap' in printed
    assert main(identify[:-1] + [str(tmp_path / 'R2.yaml')]) == 0
    assert capsys.readouterr().err == ''
    assert_one_line_error(main(['repair-bag', str(bag)]), capsys, 'nothing to repair')


def test_partial_copy_of_a_complete_bag_is_damaged(source, tmp_path):
    """metadata.yaml present but its MCAP cut (a copy that did not finish)."""
    full, ends, _ = source
    bag = tmp_path / 'copy'
    shutil.copytree(full, bag)
    data = (bag / 'full.mcap').read_bytes()
    (bag / 'full.mcap').write_bytes(data[:ends[2]])
    assert damage.bag_damage(bag) == 'full.mcap has no footer'
    result = repair.repair_bag(bag)
    assert result.scan.messages == 300
    assert (bag / 'metadata.damaged.yaml').is_file()
    assert len(read_joint_states(bag, '/joint_states').stamp) == 300
