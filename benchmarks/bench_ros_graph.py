"""End-to-end figures of the ROS 2 graph on the simulated 6-axis arm.

Runs the demo launch (simulator, recorder, excitation and identification nodes, demo client) in
a fresh domain and output folder and prints: end-to-end time, JointState rate and timing as
recorded (interval between receive times, latency receive − header stamp), recorder drops, and
the identification summary. Usage (after ``source scripts/env.sh``):

    python benchmarks/bench_ros_graph.py [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

REPO = Path(__file__).resolve().parents[1]


def timing(bag: Path) -> dict:
    """Receive-time intervals and latencies (ms) of the bag's JointState messages."""
    stamps, receive = [], []
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        conns = [c for c in reader.connections if c.topic == '/joint_states']
        for conn, t_ns, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            stamps.append(msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec)
            receive.append(t_ns)
    stamps, receive = np.array(stamps), np.array(receive)
    interval = np.diff(receive) * 1e-6
    latency = (receive - stamps) * 1e-6
    duration = (stamps[-1] - stamps[0]) * 1e-9
    return {'messages': len(stamps), 'rate_hz': (len(stamps) - 1) / duration,
            'interval_ms': np.percentile(interval, [50, 99, 100]),
            'interval_std_ms': float(np.std(interval)),
            'latency_ms': np.percentile(latency, [50, 99, 100])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--keep', type=Path, help='output folder to keep (default: temporary)')
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix='bench_ros_graph_'))
    env = dict(os.environ, ROS_DOMAIN_ID=str(150 + os.getpid() % 50),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    start = time.monotonic()
    proc = subprocess.run(['ident_launch', 'ident_bringup', 'sim.launch.yaml', 'demo:=true',
                           f'output_dir:={out}'], cwd=REPO, env=env, capture_output=True,
                          text=True)
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        print(proc.stdout[-5000:], proc.stderr[-3000:])
        print(f'demo failed (exit code {proc.returncode})')
        return 1
    summary = yaml.safe_load((out / 'summary.yaml').read_text())
    print(f'end-to-end (launch → shutdown): {elapsed:.1f} s; demo client: '
          f'{summary["demo_seconds"]:.1f} s')
    for name, bag in summary['bags'].items():
        info = yaml.safe_load((Path(bag) / 'recording.yaml').read_text())
        t = timing(Path(bag))
        print(f'{name}: {t["messages"]} JointState at {t["rate_hz"]:.2f} Hz; receive interval '
              f'p50/p99/max {t["interval_ms"][0]:.3f}/{t["interval_ms"][1]:.3f}/'
              f'{t["interval_ms"][2]:.1f} ms (std {t["interval_std_ms"]:.3f} ms); latency '
              f'p50/p99/max {t["latency_ms"][0]:.2f}/{t["latency_ms"][1]:.2f}/'
              f'{t["latency_ms"][2]:.1f} ms; recorder dropped {info["dropped"]}, late '
              f'(> 50 ms) {info["late"]}')
    print(f'identification: {100 * summary["within_3_std"]:.1f} % of '
          f'{summary["base_parameters"]} base parameters within 3 std (max |z| '
          f'{summary["max_abs_z"]:.2f}); validation vs noise-free torque: relative error '
          f'{summary["validation_noise_free"]["relative_error_percent"]:.3f} %')
    print(f'outputs in {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
