"""The installed recorder_node over real DDS: a 1 kHz JointState publisher in this process, the
recorder in a child process (its own ROS_DOMAIN_ID, localhost discovery)."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

WORKSPACE = Path(__file__).resolve().parents[3]
# This workspace's installed copy (colcon build of the ROS 2 distribution set up, see
# scripts/env.sh), else the one on PATH.
EXECUTABLE = (WORKSPACE / f"install-{os.environ.get('ROS_DISTRO', 'jazzy')}" / 'ident_node' / 'lib'
              / 'ident_node' / 'recorder_node')
if not EXECUTABLE.is_file() and shutil.which('recorder_node'):
    EXECUTABLE = Path(shutil.which('recorder_node'))
pytestmark = pytest.mark.skipif(
    not EXECUTABLE.is_file(),
    reason=f'recorder_node not installed ({EXECUTABLE}); run bash scripts/setup.sh')

JOINTS = [f'joint_{i}' for i in range(1, 7)]
PERIOD_NS = 1_000_000
# s, guards against a hang only: on a busy 2-core machine the recorder alone takes 6-7 s to start.
DISCOVERY_TIMEOUT = 60.0
# Unique per test session: random in 100..189, shifted by the pid; each test adds its own offset
# (below 10) so that a recorder of an earlier test is never discovered.
DOMAIN_BASE = 100 + (random.randrange(90) + os.getpid()) % 90


class Publisher:
    """A node publishing JointState at 1 kHz from a timer: message k has header stamp
    t0 + k ms; a callback that runs late publishes the missed messages (at most 20)."""

    def __init__(self, rclpy, context, recorder='/recorder'):
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        from ident_msgs.srv import StartRecording, StopRecording
        from ident_ros.qos import JOINT_STATES_QOS

        self.node = rclpy.create_node('js_test_publisher', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.pub = self.node.create_publisher(JointState, '/joint_states', JOINT_STATES_QOS)
        self.start_client = self.node.create_client(StartRecording, f'{recorder}/start')
        self.stop_client = self.node.create_client(StopRecording, f'{recorder}/stop')
        self.msg = JointState()
        self.msg.name = list(JOINTS)
        self.published = 0          # messages published so far (= next k)
        self.t0 = None
        self.active = False
        self.node.create_timer(PERIOD_NS * 1e-9, self._tick)

    def stamp_ns(self, k: int) -> int:
        return self.t0 + k * PERIOD_NS

    def _tick(self):
        if not self.active:
            return
        now = time.time_ns()
        if self.t0 is None:
            self.t0 = now
        due = min((now - self.t0) // PERIOD_NS + 1, self.published + 20)
        msg = self.msg
        while self.published < due:
            k = self.published
            stamp = self.stamp_ns(k)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
            x = 0.001 * k
            msg.position = [x + j for j in range(6)]
            msg.velocity = [1.0 + j for j in range(6)]
            msg.effort = [-x - j for j in range(6)]
            self.pub.publish(msg)
            self.published += 1

    def spin_until(self, condition, timeout: float, what: str):
        from ident_ros.testing import spin_until

        spin_until(self.executor, condition, what, timeout)

    def call(self, client, request, timeout=5.0):
        future = client.call_async(request)
        self.spin_until(future.done, timeout, f'{client.srv_name} reply')
        return future.result()

    def wait_delivered(self) -> int:
        """Wait until the recorder has acknowledged every message published so far (reliable:
        then they are in its subscription's queue, which a stop or a signal drains into the
        bag); returns how many that is. Publishing pauses meanwhile (this thread)."""
        from rclpy.duration import Duration

        published = self.published
        assert self.pub.wait_for_all_acked(Duration(seconds=DISCOVERY_TIMEOUT)), \
            f'the recorder did not acknowledge the {published} messages published'
        return published

    def connect(self, proc):
        """Wait for the recorder's services and its joint_states subscription."""
        def ready():
            assert proc.poll() is None, f'recorder exited with {proc.returncode}'
            return (self.start_client.service_is_ready() and self.stop_client.service_is_ready()
                    and self.pub.get_subscription_count() >= 1)
        self.spin_until(ready, DISCOVERY_TIMEOUT, 'the recorder (services, subscription)')


_domain_offset = iter(range(10))


@pytest.fixture
def ros(monkeypatch):
    """(rclpy, context, env of the child) in a ROS domain of this test alone."""
    import rclpy

    domain = str(DOMAIN_BASE + next(_domain_offset))
    monkeypatch.setenv('ROS_DOMAIN_ID', domain)
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(domain))
    try:
        yield rclpy, context, env
    finally:
        rclpy.try_shutdown(context=context)


def arm_urdf(folder: Path) -> Path:
    """A URDF whose moving joints are ``JOINTS`` (the recorder's robot model)."""
    from ident_ros.testing import write_chain_urdf

    return write_chain_urdf(folder / 'arm.urdf', JOINTS)


def start_recorder(env, out: Path, log: Path, *params: str) -> subprocess.Popen:
    """The recorder writing to ``out``; ``params``: more ``name:=value`` parameters."""
    urdf = arm_urdf(log.parent)
    args = [a for p in (f'output_dir:={out}', f'urdf_file:={urdf}', *params)
            for a in ('-p', p)]
    with log.open('w') as f:
        return subprocess.Popen([str(EXECUTABLE), '--ros-args', *args],
                                env=env, stdout=f, stderr=subprocess.STDOUT)


def stop_process(proc: subprocess.Popen):
    """End the recorder: SIGINT (it leaves the DDS graph cleanly), SIGKILL after 5 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def read_bag(path: Path):
    """(header stamps ns, positions (N, 6), summary dict) of the bag's /joint_states."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    typestore = get_typestore(Stores.ROS2_KILTED)
    stamps, positions = [], []
    with Reader(path) as reader:
        conns = [c for c in reader.connections if c.topic == '/joint_states']
        for conn, _t, raw in reader.messages(connections=conns):
            msg = typestore.deserialize_cdr(raw, conn.msgtype)
            stamps.append(msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec)
            positions.append(msg.position)
    return np.array(stamps), np.array(positions), \
        yaml.safe_load((path / 'recording.yaml').read_text())


def assert_complete(stamps, positions, t0):
    """Every 1 ms sample between the first and the last one is there, once, in order."""
    assert len(stamps) > 0
    k = (stamps - t0) // PERIOD_NS
    np.testing.assert_array_equal(stamps, t0 + k * PERIOD_NS)
    np.testing.assert_array_equal(np.diff(k), 1)     # no gaps, duplicates or reordering
    np.testing.assert_allclose(positions[:, 2], 0.001 * k + 2)
    return k


def test_start_stop_records_every_sample(ros, tmp_path):
    rclpy, context, env = ros
    from ident_msgs.msg import RecordingInfo
    from ident_msgs.srv import StartRecording, StopRecording
    from ident_ros.qos import LATCHED_HISTORY_QOS

    out = tmp_path / 'bags'
    proc = start_recorder(env, out, tmp_path / 'recorder.log')
    pub = None
    reports = []
    try:
        pub = Publisher(rclpy, context)
        pub.node.create_subscription(RecordingInfo, '/recorder/recordings', reports.append,
                                     LATCHED_HISTORY_QOS)
        pub.connect(proc)
        pub.active = True
        pub.spin_until(lambda: pub.published >= 200, 5, '200 messages before the start')

        reply = pub.call(pub.start_client, StartRecording.Request(experiment='dds_test'))
        k_start_reply = pub.published
        assert reply.success, reply.message
        bag = Path(reply.path)
        assert bag.parent == out and bag.name.startswith('dds_test_')
        refused = pub.call(pub.start_client, StartRecording.Request(experiment='again'))
        assert not refused.success and 'already recording' in refused.message

        t_start = time.monotonic()
        pub.spin_until(lambda: pub.published >= k_start_reply + 2000, 10, '2000 messages')
        rate = (pub.published - k_start_reply) / (time.monotonic() - t_start)
        # The stop request can overtake joint_states still in transit (another DDS reader): the
        # recorder promises only those in its queue when it stops.
        k_stop_request = pub.wait_delivered()
        reply = pub.call(pub.stop_client, StopRecording.Request())
        assert reply.success, reply.message
        info = reply.info
        refused = pub.call(pub.stop_client, StopRecording.Request())
        assert not refused.success and 'not recording' in refused.message
        pub.spin_until(lambda: len(reports) >= 2, 5, 'two reports on ~/recordings')
    finally:
        if pub is not None:
            pub.node.destroy_node()
        stop_process(proc)

    stamps, positions, summary = read_bag(bag)
    k = assert_complete(stamps, positions, pub.t0)
    published_between = set(range(k_start_reply, k_stop_request))
    assert published_between <= set(k.tolist()), 'a message published while recording is missing'
    assert len(stamps) >= k_stop_request - k_start_reply
    assert info.recording is False and info.path == str(bag) and info.experiment == 'dds_test'
    assert info.joint_state_messages == len(stamps) == summary['joint_state_messages']
    assert info.dropped == 0 == summary['dropped']
    assert info.excitation_messages == 0
    assert info.duration == pytest.approx((stamps[-1] - stamps[0]) * 1e-9)
    # lost time: the report and recording.yaml agree (the figures depend on the machine's load:
    # a recorder stalled > 100 ms right after the start would see a silent head; and the
    # publisher pauses before the stop, until the recorder has acknowledged)
    assert info.recording_time == pytest.approx(summary['recording_time'])
    assert info.expected_samples == summary['expected_samples'] \
        == round(info.recording_time / 0.001)
    assert info.lost_seconds == pytest.approx(summary['lost_seconds'])
    assert info.gap_count == summary['gap_count'] == len(info.gap_starts) \
        == len(info.gap_lengths)
    assert [(r.recording, r.path) for r in reports] == [(True, str(bag)), (False, str(bag))]
    assert reports[1].joint_state_messages == info.joint_state_messages
    assert reports[1].dropped == 0 and reports[1].late == info.late
    print(f'\nrecorded {len(stamps)} of {pub.published} published at {rate:.0f} Hz, '
          f'dropped {info.dropped}, late {info.late} (> 50 ms), '
          f'between start reply and stop request: {k_stop_request - k_start_reply}, '
          f'expected {info.expected_samples}, lost {info.lost_seconds:.3f} s')


def test_sigint_mid_stream_finishes_the_bag(ros, tmp_path):
    rclpy, context, env = ros
    from ident_msgs.srv import StartRecording

    out = tmp_path / 'bags'
    proc = start_recorder(env, out, tmp_path / 'recorder.log')
    pub = None
    try:
        pub = Publisher(rclpy, context)
        pub.connect(proc)
        pub.active = True
        reply = pub.call(pub.start_client, StartRecording.Request(experiment=''))
        assert reply.success, reply.message
        bag = Path(reply.path)
        assert bag.name.startswith('experiment_')
        k_start_reply = pub.published
        pub.spin_until(lambda: pub.published >= k_start_reply + 1000, 10, '1000 messages')
        # What the recorder promises on a signal: the messages in its subscription's queue are
        # in the bag. Messages still in transit when it handles the signal are not (the signal
        # does not travel with them), so the test signals once those before k_signal are in
        # the queue; publishing goes on until the recorder has exited.
        k_signal = pub.wait_delivered()
        t_signal = time.monotonic()
        proc.send_signal(signal.SIGINT)
        pub.spin_until(lambda: proc.poll() is not None, 10, 'the recorder to exit after SIGINT')
        exit_time = time.monotonic() - t_signal
        assert proc.returncode == 0, (tmp_path / 'recorder.log').read_text()
    finally:
        if pub is not None:
            pub.node.destroy_node()
        stop_process(proc)

    stamps, positions, summary = read_bag(bag)
    k = assert_complete(stamps, positions, pub.t0)
    assert set(range(k_start_reply, k_signal)) <= set(k.tolist())
    assert summary['joint_state_messages'] == len(stamps)
    assert summary['dropped'] == 0 and summary['recording'] is False
    log = (tmp_path / 'recorder.log').read_text()
    assert 'signal 2' in log and 'stopped experiment' in log, log
    print(f'\nSIGINT: exit after {exit_time:.2f} s, {len(stamps)} messages, '
          f'dropped {summary["dropped"]}, late {summary["late"]}')


def test_autostart_from_params_file_with_excitation_and_sigterm(ros, tmp_path):
    """A parameter file with autostart; a latched excitation description ends up in the bag;
    SIGTERM finishes it."""
    rclpy, context, env = ros
    from rclpy.duration import Duration
    from rosbags.rosbag2 import Reader

    from ident_msgs.msg import ExcitationTrajectory
    from ident_ros.qos import LATCHED_QOS
    from ident_ros.typestore import recording_typestore

    node = rclpy.create_node('excitation_test_publisher', context=context)
    excitation = node.create_publisher(ExcitationTrajectory, '/excitation_node/trajectory',
                                       LATCHED_QOS)
    msg = ExcitationTrajectory(name='fourier_test', joint_names=JOINTS, wf=0.5, harmonics=1,
                               q0=[0.0] * 6, a=[0.1] * 6, b=[0.2] * 6, period=12.566, periods=2)
    excitation.publish(msg)
    out = tmp_path / 'bags'
    log = tmp_path / 'recorder.log'
    params = tmp_path / 'recorder.yaml'
    params.write_text(yaml.safe_dump({'recorder': {'ros__parameters': {
        'output_dir': str(out), 'autostart': True, 'autostart_experiment': 'auto_1',
        'urdf_file': str(arm_urdf(tmp_path))}}}))
    with log.open('w') as f:
        proc = subprocess.Popen([str(EXECUTABLE), '--ros-args', '--params-file', str(params)],
                                env=env, stdout=f, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + DISCOVERY_TIMEOUT
        while excitation.get_subscription_count() < 1:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        # reliable: acknowledged means in the recorder's reader, which a stop drains
        assert excitation.wait_for_all_acked(Duration(seconds=DISCOVERY_TIMEOUT)), \
            'the recorder never acknowledged the excitation description'
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, log.read_text()
    finally:
        node.destroy_node()
        stop_process(proc)

    (bag,) = out.iterdir()
    assert bag.name.startswith('auto_1_')
    summary = yaml.safe_load((bag / 'recording.yaml').read_text())
    assert summary['excitation_messages'] == 1 and summary['joint_state_messages'] == 0
    assert summary['excitation_topic'] == '/excitation_node/trajectory'
    typestore = recording_typestore()
    with Reader(bag) as reader:
        (got,) = [typestore.deserialize_cdr(raw, c.msgtype) for c, _, raw in reader.messages()]
    assert got.name == 'fourier_test' and got.harmonics == 1 and list(got.b) == [0.2] * 6
    assert 'signal 15' in log.read_text()


@pytest.mark.parametrize('args, fragment', [
    (['-p', 'late_threshold:=0.0'], 'late_threshold: Input should be greater than 0'),
    (['-p', 'nominal_period:=abc'], 'nominal_period: Input should be a valid number'),
    (['-p', 'autostart:=true', '-p', 'autostart_experiment:=a/b'], "contains '/'"),
])
def test_bad_parameters_exit_2(tmp_path, tmp_path_factory, args, fragment):
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_BASE + next(_domain_offset)),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    urdf = arm_urdf(tmp_path_factory.mktemp('urdf'))
    result = subprocess.run(
        [str(EXECUTABLE), '--ros-args', '-p', f'output_dir:={tmp_path}',
         '-p', f'urdf_file:={urdf}', *args],
        env=env, capture_output=True, text=True, timeout=20)
    assert result.returncode == 2, result.stderr
    assert 'Traceback' not in result.stderr and fragment in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


# On disk before the kill: about 1 s of 1 kHz six-joint JointState messages (~290 bytes each).
WRITTEN_BEFORE_KILL = 300_000
MAX_LOSS = 0.5          # s, the requirement (flush_period defaults to 0.25 s)


def test_sigkill_loses_at_most_half_a_second_and_a_restart_repairs(ros, tmp_path):
    """SIGKILL while recording at 1 kHz: the unfinished bag, read with recovery, holds every
    sample up to at most 0.5 s before the last one published before the kill; a recorder
    started on the same output_dir repairs it (original kept) into a bag read as any other."""
    rclpy, context, env = ros
    from ident_core.data.bag.damage import bag_damage
    from ident_core.data.datasets import DataWarning
    from ident_core.data.readers import read_joint_states
    from ident_msgs.srv import StartRecording

    out = tmp_path / 'bags'
    proc = start_recorder(env, out, tmp_path / 'recorder.log')
    restarted = pub = None
    try:
        pub = Publisher(rclpy, context)
        pub.connect(proc)
        pub.active = True
        reply = pub.call(pub.start_client, StartRecording.Request(experiment='crash'))
        assert reply.success, reply.message
        bag = Path(reply.path)
        mcap = bag / f'{bag.name}.mcap'
        k_start_reply = pub.published
        pub.spin_until(lambda: mcap.stat().st_size > WRITTEN_BEFORE_KILL, 20,
                       f'{WRITTEN_BEFORE_KILL} bytes in {mcap.name}')
        # The file grows when a chunk is flushed; killing 240 samples later hits the recorder
        # when it holds almost a full flush period (the worst case), not right after a flush.
        k_flushed = pub.published
        pub.spin_until(lambda: pub.published >= k_flushed + 240, 10, '240 more samples')
        proc.kill()
        last_sent = pub.published - 1       # the publisher runs in this thread only
        proc.wait(timeout=10)
        pub.active = False

        assert bag_damage(bag) is not None
        with pytest.warns(DataWarning, match='unfinished rosbag2'):
            log = read_joint_states(bag, '/joint_states', recover=True)
        k = np.rint((log.stamp - pub.t0 * 1e-9) * 1e3).astype(np.int64)
        np.testing.assert_array_equal(np.diff(k), 1)          # no gap, no duplicate
        np.testing.assert_allclose(log.position[:, 2], 0.001 * k + 2)
        assert k[0] <= k_start_reply
        lost = (last_sent - k[-1]) * PERIOD_NS * 1e-9
        assert 0 <= lost <= MAX_LOSS, f'{lost:.3f} s lost'

        restarted = start_recorder(env, out, tmp_path / 'restarted.log')
        pub.spin_until(lambda: (bag / 'recording.yaml').exists() or restarted.poll() is not None,
                       30, 'the restarted recorder to repair the bag')
        assert restarted.poll() is None, (tmp_path / 'restarted.log').read_text()
    finally:
        if pub is not None:
            pub.node.destroy_node()
        stop_process(proc)
        if restarted is not None:
            stop_process(restarted)

    assert bag_damage(bag) is None
    repaired = read_joint_states(bag, '/joint_states')        # no recovery needed any more
    np.testing.assert_array_equal(repaired.stamp, log.stamp)
    summary = yaml.safe_load((bag / 'recording.yaml').read_text())
    assert summary['recovered'] is True and summary['joint_state_messages'] == len(k)
    assert summary['recovered_seconds'] == pytest.approx(log.receive[-1] - log.receive[0])
    assert mcap.is_file() and (bag / f'{bag.name}.recovered.mcap').is_file()
    assert f'repaired {bag}' in (tmp_path / 'restarted.log').read_text()
    print(f'\nSIGKILL after {last_sent + 1 - k_start_reply} samples: {len(k)} recovered, '
          f'{lost * 1e3:.0f} ms lost before the kill')


class Logger:
    """Stands in for the node's logger: keeps (level, text)."""

    def __init__(self):
        self.lines = []

    def info(self, text, **_):
        self.lines.append(('info', text))

    def warning(self, text, **_):
        self.lines.append(('warning', text))

    error = warning


def test_a_stream_that_stops_is_reported_and_warned(ros, tmp_path):
    """The node in this process, its clock and joint_states driven by the test: 2 s of samples,
    then the publisher is gone for 5 s before ~/stop. The report and recording.yaml count the
    silent tail as lost time and the node warns."""
    rclpy, context, _ = ros
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from ident_node.recorder_node import RecorderNode
    from ident_ros.conversions import recording_info_msg

    node = RecorderNode(context=context, parameter_overrides=[
        Parameter('output_dir', value=str(tmp_path / 'bags')),
        Parameter('urdf_file', value=str(arm_urdf(tmp_path)))])
    log, now = Logger(), [1_800_000_000 * 10**9]
    node.get_logger = lambda: log
    node._now_ns = lambda: now[0]
    try:
        bag = node.start('silent_tail')
        t_start = now[0]
        msg = JointState(name=list(JOINTS), position=[0.0] * 6)
        for k in range(2000):
            now[0] = t_start + (k + 1) * PERIOD_NS
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now[0], 10**9)
            node._on_joint_state(serialize_message(msg))
        last = now[0]
        now[0] += 5 * 10**9
        summary = node.stop()
    finally:
        node.destroy_node()
    assert summary.joint_state_messages == 2000 and summary.dropped == 0
    assert summary.expected_samples == 7000
    assert summary.gaps == [{'start': pytest.approx(last * 1e-9), 'length': pytest.approx(5.0)}]
    assert summary.lost_seconds == pytest.approx(5.0) and summary.longest_gap == pytest.approx(5)
    warnings = [text for level, text in log.lines if level == 'warning']
    assert len(warnings) == 1 and str(bag.path) in warnings[0]
    assert '2000 of 7000 expected joint_states; 5.000 s of 7.000 s (71.4 %)' in warnings[0]
    info = recording_info_msg(summary, now[0])
    assert info.expected_samples == 7000 and info.gap_count == 1
    assert list(info.gap_lengths) == pytest.approx([5.0]) and info.lost_seconds == \
        pytest.approx(5.0)
    doc = yaml.safe_load((bag.path / 'recording.yaml').read_text())
    assert doc['lost_seconds'] == pytest.approx(5.0) and doc['expected_samples'] == 7000
