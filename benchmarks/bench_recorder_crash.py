"""Samples lost when the recorder is killed (SIGKILL) while recording 1 kHz joint_states.

Each run starts ``recorder_node`` in a fresh domain and folder, publishes six-joint JointState
messages at 1 kHz from this process (message k stamped t0 + k ms), starts a recording, lets
``--seconds`` plus a random 0–1 s of samples go (so the kill falls anywhere between two
flushes), kills the recorder with SIGKILL, reads the unfinished bag with recovery
(``read_joint_states(recover=True)``) and counts the samples published before the kill that are
not in it (all at the end: the recovered ones are checked gapless). Then it repairs the bag
(``repair_bag``) and times that. Usage (after ``source scripts/env.sh``):

    python benchmarks/bench_recorder_crash.py [--kills 10] [--seconds 1] [--flush-period S]

``--flush-period 10 --seconds 5`` shows what the recorder lost before it flushed (rosbags' 1 MiB
chunks, about 3.6 s of these messages).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
EXECUTABLE = (REPO / f"install-{os.environ.get('ROS_DISTRO', 'jazzy')}" / 'ident_node' / 'lib'
              / 'ident_node' / 'recorder_node')   # scripts/env.sh's distribution
PERIOD_NS = 1_000_000
TIMEOUT = 30.0                     # s, a guard against a hang


class Rig:
    """A 1 kHz JointState publisher and the recorder's ~/start client in this process."""

    def __init__(self, rclpy, context):
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        from ident_msgs.srv import StartRecording
        from ident_ros.qos import JOINT_STATES_QOS

        self.node = rclpy.create_node('bench_crash_publisher', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.pub = self.node.create_publisher(JointState, '/joint_states', JOINT_STATES_QOS)
        self.start = self.node.create_client(StartRecording, '/recorder/start')
        self.msg = JointState(name=[f'joint_{i}' for i in range(1, 7)])
        self.published, self.t0, self.active = 0, None, False
        self.node.create_timer(1e-3, self._tick)

    def _tick(self):
        if not self.active:
            return
        now = time.time_ns()
        self.t0 = now if self.t0 is None else self.t0
        due = min((now - self.t0) // PERIOD_NS + 1, self.published + 20)
        while self.published < due:
            k = self.published
            stamp = self.t0 + k * PERIOD_NS
            self.msg.header.stamp.sec, self.msg.header.stamp.nanosec = divmod(stamp, 10**9)
            self.msg.position = [0.001 * k + j for j in range(6)]
            self.msg.velocity = [1.0] * 6
            self.msg.effort = [-0.001 * k] * 6
            self.pub.publish(self.msg)
            self.published += 1

    def spin_until(self, condition, what: str):
        deadline = time.monotonic() + TIMEOUT
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f'timeout waiting for {what}')
            self.executor.spin_once(timeout_sec=0.01)


def one_kill(rclpy, context, out: Path, samples: int, params: list[str]) -> dict:
    """Record, SIGKILL after ``samples`` samples, recover; the figures of one run."""
    from ident_core.data.bag.repair import repair_bag
    from ident_core.data.readers import read_joint_states
    from ident_core.errors import InputError
    from ident_msgs.srv import StartRecording

    args = [a for p in (f'output_dir:={out}', *params) for a in ('-p', p)]
    log = (out.parent / f'{out.name}.log').open('w')
    proc = subprocess.Popen([str(EXECUTABLE), '--ros-args', *args], stdout=log,
                            stderr=subprocess.STDOUT)
    rig = Rig(rclpy, context)
    try:
        rig.spin_until(lambda: rig.start.service_is_ready()
                       and rig.pub.get_subscription_count() >= 1, 'the recorder')
        rig.active = True
        future = rig.start.call_async(StartRecording.Request(experiment='crash'))
        rig.spin_until(future.done, 'the ~/start reply')
        bag = Path(future.result().path)
        k_start = rig.published
        rig.spin_until(lambda: rig.published >= k_start + samples, 'the samples')
        proc.kill()
        last_sent = rig.published - 1
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        rig.node.destroy_node()
        log.close()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            got = read_joint_states(bag, '/joint_states', recover=True)
    except InputError:          # nothing reached the file
        return {'sent': last_sent + 1 - k_start, 'recovered': 0,
                'lost': last_sent + 1 - k_start, 'repair_s': 0.0, 'repaired': 0}
    k = np.rint((got.stamp - rig.t0 * 1e-9) * 1e3).astype(np.int64)
    assert np.all(np.diff(k) == 1), 'the recovered samples have a gap'
    start = time.perf_counter()
    repaired = repair_bag(bag)
    repair_s = time.perf_counter() - start
    return {'sent': last_sent + 1 - int(k[0]), 'recovered': len(k),
            'lost': int(last_sent - k[-1]), 'repair_s': repair_s,
            'repaired': repaired.scan.messages}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--kills', type=int, default=10)
    parser.add_argument('--flush-period', type=float, help='recorder parameter flush_period, s '
                        '(default: the recorder default)')
    parser.add_argument('--seconds', type=float, default=1.0, help='recorded at least this '
                        'long before the kill (plus a random 0-1 s), s')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    import rclpy

    domain = 150 + os.getpid() % 50
    os.environ.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    params = [] if args.flush_period is None else [f'flush_period:={args.flush_period}']
    rng = np.random.default_rng(args.seed)
    work = Path(tempfile.mkdtemp(prefix='bench_recorder_crash_'))
    rows = []
    try:
        print(f'recorder_node, 1 kHz six-joint JointState, SIGKILL {args.kills} times '
              f'(flush_period: {args.flush_period or "default"})')
        print(' run  published  recovered  lost  lost ms  repaired  repair ms')
        for i in range(args.kills):
            samples = int(args.seconds * 1000) + int(rng.integers(0, 1000))
            r = one_kill(rclpy, context, work / f'run{i}', samples, params)
            rows.append(r)
            print(f'{i:4d}  {r["sent"]:9d}  {r["recovered"]:9d}  {r["lost"]:4d}  '
                  f'{r["lost"] * PERIOD_NS * 1e-6:7.0f}  {r["repaired"]:8d}  '
                  f'{r["repair_s"] * 1e3:9.0f}')
    finally:
        rclpy.try_shutdown(context=context)
        shutil.rmtree(work, ignore_errors=True)
    lost = np.array([r['lost'] for r in rows]) * PERIOD_NS * 1e-9
    print(f'lost on SIGKILL: mean {lost.mean() * 1e3:.0f} ms, max {lost.max() * 1e3:.0f} ms, '
          f'min {lost.min() * 1e3:.0f} ms over {len(rows)} kills '
          f'(samples published before the kill and not in the recovered bag)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
