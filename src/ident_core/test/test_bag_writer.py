"""BagRecorder (``data.bag.writer``) without DDS: CDR bytes in, a rosbag2 (MCAP) that rosbags
and ident_core read, with its ``recording.yaml``. The ExcitationTrajectory type comes from the
source tree's ``ident_msgs`` definition (no ROS install needed)."""
from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.data.bag import damage, lock, repair
from ident_core.data.bag.format import RECORDING_FILE, unique_bag_path, validate_experiment
from ident_core.data.bag.writer import BagRecorder, recording_typestore, start_recording
from ident_core.data.datasets import DataWarning, load_dataset
from ident_core.data.readers import excitation_window, read_joint_states

EXCITATION_MSG = (Path(__file__).resolve().parents[2] / 'ident_msgs' / 'msg'
                  / 'ExcitationTrajectory.msg')
JOINTS = [f'joint_{i}' for i in range(1, 7)]
T0 = 1_700_000_000 * 10**9          # ns, first header stamp
PERIOD = 1_000_000                  # ns
EXCITATION_TOPIC = '/excitation_node/trajectory'


@pytest.fixture(scope='module')
def typestore():
    return recording_typestore(EXCITATION_MSG)


def joint_state(typestore, stamp_ns: int, k: int) -> tuple[bytes, np.ndarray]:
    """CDR bytes of a JointState with stamp ``stamp_ns``; values depend on ``k``."""
    T = typestore.types
    values = np.array([k + 0.001 * j for j in range(18)], dtype=float).reshape(3, 6)
    msg = T['sensor_msgs/msg/JointState'](
        header=T['std_msgs/msg/Header'](
            stamp=T['builtin_interfaces/msg/Time'](sec=stamp_ns // 10**9,
                                                   nanosec=stamp_ns % 10**9),
            frame_id='base'),
        name=list(JOINTS), position=values[0], velocity=values[1], effort=values[2])
    return bytes(typestore.serialize_cdr(msg, 'sensor_msgs/msg/JointState')), values


def excitation(typestore, sec=5, period=20.0, periods=3, stage=1, stages=1) -> bytes:
    T = typestore.types
    msg = T['ident_msgs/msg/ExcitationTrajectory'](
        header=T['std_msgs/msg/Header'](
            stamp=T['builtin_interfaces/msg/Time'](sec=sec, nanosec=7), frame_id=''),
        name='fourier_a', joint_names=list(JOINTS), wf=2 * np.pi / period, harmonics=2,
        q0=np.zeros(6), a=np.arange(12, dtype=float), b=-np.arange(12, dtype=float),
        period=period, periods=periods, stage=stage, stages=stages)
    return bytes(typestore.serialize_cdr(msg, 'ident_msgs/msg/ExcitationTrajectory'))


N_WRITTEN = 500
GAP_AT = 200          # samples GAP_AT .. GAP_AT+2 are never written
GAP = 3
# The last message is received 80 ms after its stamp (late). Receive times stay increasing, as
# with in-order delivery: a bag is ordered by receive time.


def record(path: Path, typestore, nominal_period=0.001):
    """Write the standard test recording; returns (recorder, summary, expected stamps, values)."""
    rec = BagRecorder(path, 'run-1', typestore=typestore, excitation_topic=EXCITATION_TOPIC,
                      nominal_period=nominal_period, late_threshold=0.05).open()
    rec.write_excitation(excitation(typestore), T0 - 5_000_000)
    stamps, values = [], []
    k = 0
    while len(stamps) < N_WRITTEN:
        if GAP_AT <= k < GAP_AT + GAP:
            k += 1
            continue
        stamp = T0 + k * PERIOD
        raw, v = joint_state(typestore, stamp, k)
        delay = 80_000_000 if len(stamps) == N_WRITTEN - 1 else 300_000
        rec.write_joint_state(raw, stamp + delay)
        stamps.append(stamp)
        values.append(v)
        k += 1
    summary = rec.close()
    return rec, summary, np.array(stamps), np.array(values)


def test_counts_round_trip_and_summary(tmp_path, typestore):
    path = tmp_path / 'bags' / 'run-1_x'
    rec, summary, stamps, values = record(path, typestore)

    assert summary.joint_state_messages == N_WRITTEN
    assert summary.excitation_messages == 1
    assert summary.dropped == GAP
    assert summary.late == 1
    assert summary.out_of_order == 0
    assert summary.recording is False
    assert summary.nominal_period == pytest.approx(0.001)
    assert summary.duration == pytest.approx((stamps[-1] - stamps[0]) * 1e-9)
    meta = yaml.safe_load((path / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['storage_identifier'] == 'mcap' and meta['version'] == 9
    assert meta['message_count'] == N_WRITTEN + 1

    # rosbags: exact bytes, bag time = receive time, both topics
    from rosbags.rosbag2 import Reader
    with Reader(path) as reader:
        topics = {c.topic: c for c in reader.connections}
        assert set(topics) == {'/joint_states', EXCITATION_TOPIC}
        assert topics['/joint_states'].msgcount == N_WRITTEN
        assert topics[EXCITATION_TOPIC].msgtype == 'ident_msgs/msg/ExcitationTrajectory'
        js = [(t, typestore.deserialize_cdr(raw, c.msgtype)) for c, t, raw in reader.messages()
              if c.topic == '/joint_states']
        ex = [typestore.deserialize_cdr(raw, c.msgtype) for c, t, raw in reader.messages()
              if c.topic == EXCITATION_TOPIC]
    assert len(js) == N_WRITTEN
    got = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for _, m in js])
    np.testing.assert_array_equal(got, stamps)
    receive = np.array([t for t, _ in js])
    np.testing.assert_array_equal(receive - stamps,
                                  np.where(stamps == stamps[-1], 80_000_000, 300_000))
    assert js[7][1].header.frame_id == 'base' and list(js[7][1].name) == JOINTS
    assert ex[0].name == 'fourier_a' and ex[0].harmonics == 2 and ex[0].periods == 3
    np.testing.assert_array_equal(ex[0].a, np.arange(12.0))

    # ident_core readers
    log = read_joint_states(path, '/joint_states')
    assert log.names == JOINTS
    np.testing.assert_allclose(log.stamp, stamps * 1e-9, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(log.position, values[:, 0])
    np.testing.assert_array_equal(log.velocity, values[:, 1])
    np.testing.assert_array_equal(log.effort, values[:, 2])
    with warnings.catch_warnings():   # the 3-sample gap makes the intervals jitter
        warnings.simplefilter('ignore', DataWarning)
        ds = load_dataset(path)
    assert ds.samples == N_WRITTEN and ds.joint_names == JOINTS
    np.testing.assert_array_equal(ds.effort, values[:, 2])

    # recording.yaml
    doc = yaml.safe_load((path / RECORDING_FILE).read_text())
    assert doc['format'] == 'robot-ident/recording/1'
    assert doc['experiment'] == 'run-1'
    assert doc['path'] == str(path)
    assert doc['joint_state_messages'] == N_WRITTEN and doc['excitation_messages'] == 1
    assert doc['dropped'] == GAP and doc['late'] == 1 and doc['out_of_order'] == 0
    assert doc['nominal_period'] == pytest.approx(0.001)
    assert doc['nominal_period_source'] == 'parameter'
    assert doc['duration'] == pytest.approx(summary.duration)
    assert doc['recording'] is False
    for key in ('start_wall_time', 'stop_wall_time'):
        datetime.fromisoformat(doc[key])
    assert doc['start_wall_time'] <= doc['stop_wall_time']
    assert not [p for p in path.iterdir() if p.name.startswith('.')]   # no temporary left

    # idempotent close
    assert rec.close() == summary
    assert rec.close() == summary
    assert yaml.safe_load((path / RECORDING_FILE).read_text()) == doc


def test_estimated_period(tmp_path, typestore):
    _, summary, _, _ = record(tmp_path / 'est', typestore, nominal_period=0.0)
    assert summary.nominal_period == pytest.approx(0.001)
    assert summary.nominal_period_source == 'median'
    assert summary.dropped == GAP


def test_short_recording_estimates_from_all_intervals(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'short', 'short', typestore=typestore, nominal_period=0.0).open()
    for k in (0, 2, 4, 6, 12):      # period 2 ms, one gap of 2 missing samples
        rec.write_joint_state(joint_state(typestore, T0 + k * PERIOD, k)[0], T0 + k * PERIOD)
    summary = rec.close()
    assert summary.nominal_period == pytest.approx(0.002)
    assert summary.dropped == 2


def test_out_of_order_and_jitter(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'ooo', 'ooo', typestore=typestore).open()
    # jitter below half a period is no drop; a repeated and a backwards stamp are out of order
    for stamp in (0, 1_400_000, 2_000_000, 2_000_000, 1_500_000, 3_000_000, 5_600_000):
        rec.write_joint_state(joint_state(typestore, T0 + stamp, 0)[0], T0 + stamp)
    summary = rec.close()
    assert summary.joint_state_messages == 7
    assert summary.out_of_order == 2
    assert summary.dropped == 2          # 3.0 ms -> 5.6 ms: round(2.6) - 1
    assert summary.late == 0


def test_unique_bag_path_never_returns_an_existing_path(tmp_path, typestore):
    now = datetime(2026, 11, 5, 14, 3, 9)
    first = unique_bag_path(tmp_path, 'exp_A-1', now)
    assert first == tmp_path / 'exp_A-1_20261105-140309'
    assert not first.exists()
    taken = [first]
    first.mkdir()
    for _ in range(4):
        path = unique_bag_path(tmp_path, 'exp_A-1', now)
        assert not path.exists() and path not in taken
        taken.append(path)
        path.mkdir()
    assert [p.name for p in taken[1:]] == [f'exp_A-1_20261105-140309_{k}' for k in (2, 3, 4, 5)]
    (tmp_path / 'exp_A-1_20261105-140309_6').write_text('a file counts too')
    assert unique_bag_path(tmp_path, 'exp_A-1', now).name == 'exp_A-1_20261105-140309_7'
    # start_recording uses it and never writes into an existing folder
    rec = start_recording(tmp_path, 'exp_A-1', now, typestore=typestore)
    assert rec.path.name == 'exp_A-1_20261105-140309_7'
    rec.close()
    assert (rec.path / 'metadata.yaml').is_file()


def test_existing_folder_is_never_overwritten(tmp_path, typestore):
    path = tmp_path / 'old'
    path.mkdir()
    (path / 'keep.txt').write_text('data')
    with pytest.raises(FileExistsError, match='not overwriting'):
        BagRecorder(path, 'old', typestore=typestore).open()
    assert [p.name for p in path.iterdir()] == ['keep.txt']


@pytest.mark.parametrize('name', ['', 'a b', 'run/1', '../x', 'é', 'run.1', 'x' * 101, 'a;rm'])
def test_bad_experiment_names(tmp_path, name, typestore):
    with pytest.raises(ValueError, match='experiment name'):
        unique_bag_path(tmp_path, name)
    with pytest.raises(ValueError, match='experiment name'):
        BagRecorder(tmp_path / 'x', name, typestore=typestore)
    assert list(tmp_path.iterdir()) == []


def test_good_experiment_names():
    for name in ('a', 'Run_2-b', 'x' * 100, '0'):
        assert validate_experiment(name) == name


def test_bad_options(tmp_path, typestore):
    with pytest.raises(ValueError, match='nominal_period'):
        BagRecorder(tmp_path / 'a', 'a', typestore=typestore, nominal_period=-0.001)
    with pytest.raises(ValueError, match='late_threshold'):
        BagRecorder(tmp_path / 'a', 'a', typestore=typestore, late_threshold=0)


def test_life_cycle_errors(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'lc', 'lc', typestore=typestore)
    raw, _ = joint_state(typestore, T0, 0)
    with pytest.raises(RuntimeError, match='not open'):
        rec.write_joint_state(raw, T0)
    rec.open()
    assert rec.is_open and rec.summary().recording
    with pytest.raises(RuntimeError, match='already opened'):
        rec.open()
    with pytest.raises(ValueError, match='too short'):
        rec.write_joint_state(raw[:8], T0)
    rec.write_joint_state(raw, T0)
    summary = rec.close()
    assert summary.joint_state_messages == 1 and summary.duration == 0
    with pytest.raises(RuntimeError, match='not open'):
        rec.write_excitation(b'\x00\x01\x00\x00', T0)
    with pytest.raises(RuntimeError):
        rec.open()


def test_close_without_open_writes_nothing(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'never', 'never', typestore=typestore)
    summary = rec.close()
    assert summary.joint_state_messages == 0
    assert not (tmp_path / 'never').exists()


def test_empty_bag_is_complete(tmp_path, typestore):
    from rosbags.rosbag2 import Reader
    rec = BagRecorder(tmp_path / 'empty', 'empty', typestore=typestore).open()
    rec.close()
    with Reader(tmp_path / 'empty') as reader:
        assert reader.message_count == 0
        assert {c.topic for c in reader.connections} == {'/joint_states', EXCITATION_TOPIC}
    doc = yaml.safe_load((tmp_path / 'empty' / RECORDING_FILE).read_text())
    assert doc['joint_state_messages'] == 0 and doc['first_stamp'] is None


def test_bag_keeps_the_order_of_arrival(tmp_path, typestore):
    """A receive time earlier than the previous one (wall clock stepped back) is raised to it:
    readers return bags ordered by time stamp, and the order of arrival must survive."""
    from rosbags.rosbag2 import Reader
    rec = BagRecorder(tmp_path / 'order', 'order', typestore=typestore).open()
    receive = [T0 + 10, T0 + 20, T0 + 5, T0 + 30]
    for k, t in enumerate(receive):
        rec.write_joint_state(joint_state(typestore, T0 + k * PERIOD, k)[0], t)
    rec.write_excitation(excitation(typestore), T0 + 1)
    rec.close()
    with Reader(tmp_path / 'order') as reader:
        got = [(c.topic, t) for c, t, _ in reader.messages()]
    assert got == [('/joint_states', T0 + 10), ('/joint_states', T0 + 20),
                   ('/joint_states', T0 + 20), ('/joint_states', T0 + 30),
                   (EXCITATION_TOPIC, T0 + 30)]


def test_excitation_window_spans_every_stage_of_the_last_experiment(tmp_path, typestore):
    """A Fourier run, then a two-stage joint-wise experiment: the window is the second
    experiment's, from its first stage's start to the end of its last stage."""
    path = tmp_path / 'bags' / 'stages'
    rec = BagRecorder(path, 'stages', typestore=typestore, excitation_topic=EXCITATION_TOPIC).open()
    described = [(5, 20.0, 3, 1, 1), (100, 4.0, 3, 1, 2), (115, 12.0, 2, 2, 2)]
    for sec, period, periods, stage, stages in described:
        rec.write_excitation(excitation(typestore, sec, period, periods, stage, stages),
                             sec * 10**9)
    rec.close()
    start, end = excitation_window(path, EXCITATION_TOPIC)
    assert start == pytest.approx(100 + 7e-9)
    assert end == pytest.approx(115 + 7e-9 + 24.0)


# --- crash safety: what a killed recorder leaves ---------------------------------------------

def crash_copy(bag: Path, dest: Path) -> Path:
    """The bag folder as a SIGKILL would leave it now: the file content the process has handed
    to the OS (no ``metadata.yaml`` yet, the MCAP without footer)."""
    import shutil
    shutil.copytree(bag, dest)
    return dest


@pytest.mark.parametrize('flush_period', [0.1, 0.25])
def test_flushed_samples_survive_a_kill(tmp_path, typestore, flush_period):
    """At 1 kHz, every sample received more than ``flush_period`` before the 'kill' is in the
    file; what is missing is the newest samples only."""
    rec = BagRecorder(tmp_path / 'live', 'live', typestore=typestore,
                      flush_period=flush_period).open(T0)
    n = 2345
    for k in range(n):
        rec.write_joint_state(joint_state(typestore, T0 + k * PERIOD, k)[0],
                              T0 + k * PERIOD + 200_000)
    crashed = crash_copy(rec.path, tmp_path / 'crashed')
    rec.close()
    assert not (crashed / 'metadata.yaml').exists()
    with pytest.raises(ValueError, match='--recover'):
        read_joint_states(crashed, '/joint_states')
    with pytest.warns(DataWarning, match='unfinished rosbag2'):
        log = read_joint_states(crashed, '/joint_states', recover=True)
    k = np.rint((log.stamp - T0 * 1e-9) / 1e-3).astype(int)
    np.testing.assert_array_equal(k, np.arange(len(k)))           # a gapless prefix
    np.testing.assert_array_equal(log.position[:, 0], k)
    lost = n - len(k)
    assert 0 < lost <= flush_period / 1e-3


def test_a_timer_flush_writes_a_stream_that_stopped(tmp_path, typestore):
    """No message comes after the last one: ``flush(now)`` from the node's timer writes the
    held samples once the oldest is ``flush_period`` old, not before."""
    rec = BagRecorder(tmp_path / 'live', 'live', typestore=typestore, flush_period=0.25).open(T0)
    for k in range(100):
        rec.write_joint_state(joint_state(typestore, T0 + k * PERIOD, k)[0], T0 + k * PERIOD)
    assert not rec.flush(T0 + 249 * PERIOD)
    assert rec.flush(T0 + 250 * PERIOD)
    assert not rec.flush(T0 + 10**9)                      # nothing held any more
    crashed = crash_copy(rec.path, tmp_path / 'crashed')
    rec.close()
    with pytest.warns(DataWarning):
        log = read_joint_states(crashed, '/joint_states', recover=True)
    assert len(log.stamp) == 100


def test_an_open_bag_is_locked_not_damaged(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'bags' / 'live', 'live', typestore=typestore).open(T0)
    rec.write_joint_state(joint_state(typestore, T0, 0)[0], T0)
    mcap = rec.path / 'live.mcap'
    assert lock.is_being_written(mcap)
    assert damage.find_damaged_bags(tmp_path / 'bags') == []
    with pytest.raises(ValueError, match='still being recorded'):
        read_joint_states(rec.path, '/joint_states')
    with pytest.raises(ValueError, match='still being recorded'):
        repair.repair_bag(rec.path)
    rec.close()
    assert not lock.is_being_written(mcap)
    assert damage.bag_damage(rec.path) is None


# --- lost time: a stream that stops ----------------------------------------------------------

def feed(rec, typestore, ks, receive_offset=300_000):
    for k in ks:
        rec.write_joint_state(joint_state(typestore, T0 + k * PERIOD, k)[0],
                              T0 + k * PERIOD + receive_offset)


def test_a_publisher_that_dies_mid_run_counts_as_lost_time(tmp_path, typestore):
    """The issue: a 21 s run whose publisher died after 7 s reported 0 dropped. Start 0.5 s
    before the first sample, samples 0..6999 (one 1 s stamp gap in them), stop at 21 s."""
    start, stop = T0 - 500 * PERIOD, T0 + 21_000 * PERIOD
    rec = BagRecorder(tmp_path / 'run', 'run', typestore=typestore, gap_tolerance=0.1).open(start)
    feed(rec, typestore, range(0, 3000))
    feed(rec, typestore, range(4000, 7000))          # 1 s silent: 3000..3999 never sent
    feed(rec, typestore, [7000 + 60])                # a 60 ms hiccup: below the tolerance
    live = rec.summary()           # while recording: up to the latest message, no tail yet
    assert live.recording and live.gap_count == 2
    assert live.recording_time == pytest.approx((T0 + 7060 * PERIOD + 300_000 - start) * 1e-9)
    summary = rec.close(stop)

    received_last = T0 + 7060 * PERIOD + 300_000
    assert summary.joint_state_messages == 6001
    assert summary.dropped == 1000 + 60                # unchanged meaning: stamp gaps
    assert summary.recording_time == pytest.approx(21.5)
    assert summary.expected_samples == 21_500
    expected_gaps = [
        {'start': start * 1e-9, 'length': 0.5003},                                # silent head
        {'start': (T0 + 2999 * PERIOD + 300_000) * 1e-9, 'length': 1.0},         # stamp gap
        {'start': received_last * 1e-9, 'length': (stop - received_last) * 1e-9},  # dead tail
    ]
    assert summary.gap_count == 3
    for got, want in zip(summary.gaps, expected_gaps, strict=True):
        assert got['start'] == pytest.approx(want['start'], abs=1e-9)
        assert got['length'] == pytest.approx(want['length'], abs=1e-9)
    assert summary.longest_gap == pytest.approx(13.9397, abs=1e-9)
    assert summary.lost_seconds == pytest.approx(0.5003 + 1.0 + 13.9397, abs=1e-9)
    assert summary.lost_fraction == pytest.approx(15.44 / 21.5, abs=1e-6)

    doc = yaml.safe_load((rec.path / RECORDING_FILE).read_text())
    assert doc['expected_samples'] == 21_500 and doc['gap_count'] == 3
    assert doc['lost_seconds'] == pytest.approx(summary.lost_seconds)
    assert doc['longest_gap'] == pytest.approx(summary.longest_gap)
    assert [g['length'] for g in doc['gaps']] == pytest.approx([g['length'] for g in
                                                                 expected_gaps])


def test_a_complete_stream_loses_nothing(tmp_path, typestore):
    start = T0 - 2 * PERIOD
    rec = BagRecorder(tmp_path / 'ok', 'ok', typestore=typestore).open(start)
    feed(rec, typestore, range(3000))
    summary = rec.close(T0 + 3000 * PERIOD + 1_000_000)
    assert summary.gap_count == 0 and summary.gaps == []
    assert summary.lost_seconds == 0 and summary.longest_gap == 0
    assert summary.expected_samples == 3003 and summary.joint_state_messages == 3000


def test_a_recording_without_samples_is_all_lost(tmp_path, typestore):
    rec = BagRecorder(tmp_path / 'none', 'none', typestore=typestore).open(T0)
    summary = rec.close(T0 + 2 * 10**9)
    assert summary.gaps == [{'start': T0 * 1e-9, 'length': 2.0}]
    assert summary.lost_seconds == 2.0 and summary.expected_samples == 2000


def test_recording_diagnostic_reports_the_injected_drops_and_late_sample(tmp_path, typestore):
    """The standard recording (GAP samples never written, the last one received 80 ms after
    its stamp) as the recorder node reports it on /diagnostics."""
    from ident_core.monitoring.checks import recording_status
    from ident_core.monitoring.status import Level

    _rec, s, _stamps, _values = record(tmp_path / 'run-1_x', typestore)

    def status(fraction):
        return recording_status(
            recording=False, experiment=s.experiment,
            joint_state_messages=s.joint_state_messages, expected_samples=s.expected_samples,
            dropped=s.dropped, late=s.late, out_of_order=s.out_of_order,
            lost_seconds=s.lost_seconds, recording_time=s.recording_time, silence=None,
            late_threshold=s.late_threshold, lost_warning_fraction=fraction,
            stream_timeout=3.0)

    ok = status(0.01)                 # 3 of 503 dropped (0.6 %), 1 of 500 late (0.2 %)
    assert ok.level == Level.OK
    assert ok.values['dropped_samples'] == str(GAP) and ok.values['late_samples'] == '1'
    assert ok.values['out_of_order_samples'] == '0'
    assert ok.values['joint_state_messages'] == str(N_WRITTEN)
    warn = status(0.001)
    assert warn.level == Level.WARN
    assert warn.message == (f'last recording run-1: {GAP} samples dropped (0.60 % > 0.1 %); '
                            '1 late (> 0.05 s) and 0 out-of-order samples (0.20 % > 0.1 %)')
