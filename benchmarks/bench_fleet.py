"""Fleet identification on Dask (issue 27 §5): 48 recordings, 6 robots × 8 nights, 20 s at 1 kHz,
of 6- and 7-joint arms (the project's 6-axis arm and the KUKA LWR4+ when its recordings are
there, else 6-axis arms only), WLS with Coulomb-viscous-offset friction and rotor inertia;
102 tasks (48 identifications, 6 baselines, 48 validations).

Runs, on the same simulated fleet:

1. every task called directly in this process, one after the other (the workflow functions
   through ``tasks.run_task``): the reference time;
2. the same tasks on a ``LocalCluster`` of 1 worker, then of 2 workers (one thread each, the
   embedded cluster's settings), started and warmed up first: the engine's overhead (the
   1-worker run's wall time not spent inside a task, over the time inside the tasks; against
   (1) too, which the load of other jobs blurs), the throughput of 2 workers against 1, and
   the peak memory (VmHWM) of each worker;
3. ``robot-ident fleet identify`` as a user runs it (embedded cluster: one worker per core,
   start-up, imports and the drift report included), then again with nothing changed.

Targets (2-core machine): 2 workers ≥ 1.8× the throughput of 1; engine overhead ≤ 5 % per
task; peak memory ≤ 600 MB per worker; the resumed run ≤ 5 % of the first. Prints the load
average before and after, and what the machine gives two CPU-bound processes against one at
the time (2.0 on two idle cores: the ceiling of the speed-up); exit code 1 if a target is
missed.

    python benchmarks/bench_fleet.py [--nights 8] [--seconds 20] [--rate 1000] [--keep DIR]
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ident_core.fleet.engine import WORKER_ENVIRONMENT, identify_fleet
from ident_core.fleet.manifest import load_fleet
from ident_core.fleet.plan import Outcome, RobotPlan
from ident_core.fleet.records import RECORD, VALIDATION, TaskRecord
from ident_core.fleet.tasks import run_task
from ident_core.sim.fleet import RobotSpec, Wear, simulate_fleet
from ident_core.threads import limit_blas_threads

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'scripts'))
from data_dirs import recording_dir  # noqa: E402  (data/, then ../shared/data)

ARM6 = REPO / 'urdf' / 'six_axis_3kg.urdf'
KUKA = recording_dir('kuka_lwr4') / 'kuka_lwr4.urdf'
IDENTIFICATION = {'friction': 'coulomb-viscous-offset', 'rotor_inertia': True,
                  'estimator': 'wls'}
#: ``robot-ident`` (its console script's code).
CLI = 'import sys; from ident_core.cli import main; sys.exit(main())'
TARGETS = {'speed-up': 1.8, 'overhead %': 5.0, 'peak MB': 600.0, 'resume %': 5.0}


class PeakMemory:
    """The peak resident memory (VmHWM) of some processes, read every 0.2 s until stopped."""

    def __init__(self, pids):
        self.pids, self.peak = list(pids), {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self):
        while not self._stop.wait(0.2):
            for pid in self.pids:
                try:
                    status = Path(f'/proc/{pid}/status').read_text()
                except OSError:
                    continue
                kb = int(next(line.split()[1] for line in status.splitlines()
                              if line.startswith('VmHWM')))
                self.peak[pid] = max(self.peak.get(pid, 0), kb / 1024)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return self.peak


def direct(fleet, out: Path) -> tuple[float, float, int]:
    """Every task in this process, in the order the engine would offer them: wall time, time
    inside the tasks, tasks."""
    start, inside, count = time.perf_counter(), 0.0, 0
    for robot in fleet.robots:
        plan = RobotPlan(robot, fleet.manifest, out)
        todo = plan.ready()
        while todo:
            task = todo.pop(0)
            record = run_task(task)
            plan.record(Outcome(task, record))
            inside += record.seconds
            count += 1
            todo += plan.ready()
    return time.perf_counter() - start, inside, count


def ceiling(seconds: float = 1.0) -> float:
    """What two processes get from this machine now: the speed-up of two CPU-bound loops
    over one (2.0 on two idle cores; less when other jobs share them)."""
    from concurrent.futures import ProcessPoolExecutor

    n = _spin_size(seconds)
    start = time.perf_counter()
    _spin(n)
    one = time.perf_counter() - start
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, [1, 1]))                  # start the processes first
        start = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        two = time.perf_counter() - start
    return 2 * one / two


def _spin_size(seconds: float) -> int:
    start, n = time.perf_counter(), 10**6
    _spin(n)
    return int(n * seconds / (time.perf_counter() - start))


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def on_cluster(fleet, out: Path, workers: int) -> tuple[float, float, dict]:
    """The fleet on a warm LocalCluster: wall time, time inside the tasks (sum over the
    workers), peak MB per worker."""
    import dask.config
    from distributed import Client, LocalCluster

    with dask.config.set(WORKER_ENVIRONMENT), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.run(_warm_up)
        memory = PeakMemory(client.run(os.getpid).values())
        start = time.perf_counter()
        run = identify_fleet(fleet, out, scheduler=cluster.scheduler_address)
        elapsed = time.perf_counter() - start
        peak = memory.stop()
    assert not run.failed, [o.record.reason for o in run.failed]
    return elapsed, sum(o.record.seconds for o in run.outcomes), peak


def _warm_up():
    """Import the tasks' modules on a worker (what its first task would do)."""
    import ident_core.fleet.tasks  # noqa: F401


def cli(manifest: Path, out: Path) -> float:
    """``robot-ident fleet identify`` in a new process: its wall time."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, '-c', CLI, 'fleet', 'identify',
                           '--manifest', str(manifest), '--out', str(out), '--no-progress'],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f'fleet identify failed ({done.returncode}): {done.stderr}{done.stdout}')
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nights', type=int, default=8)
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--keep', metavar='DIR', help='write the fleet here and keep it')
    args = parser.parse_args()
    limit_blas_threads()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix='bench_fleet_'))
    try:
        return run(args, folder)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def run(args, folder: Path) -> int:
    print(f'load average before: {" ".join(f"{x:.2f}" for x in os.getloadavg())} '
          f'({os.cpu_count()} cores)')
    kinds = [ARM6, KUKA if KUKA.is_file() else ARM6]
    specs = [RobotSpec(f'arm{i + 1}', kinds[i // 3], Wear(1) if i == 4 else None)
             for i in range(6)]
    start = time.perf_counter()
    simulated = simulate_fleet(folder / 'plant', specs, args.nights, duration=args.seconds,
                               rate=args.rate, identification=IDENTIFICATION)
    fleet = load_fleet(simulated.manifest)
    joints = sorted({len(_joints(r)) for r in fleet.robots})
    print(f'{sum(len(r.recordings) for r in fleet.robots)} recordings of {len(specs)} robots '
          f'({"/".join(map(str, joints))} joints), {args.seconds:g} s at {args.rate:g} Hz, '
          f'simulated in {time.perf_counter() - start:.1f} s')

    limit = ceiling()
    print(f'this machine now: two CPU-bound processes run {limit:.2f}× as fast as one')
    t_direct, in_direct, tasks = direct(fleet, folder / 'direct')
    print(f'direct, one process:   {t_direct:7.1f} s for {tasks} tasks '
          f'({t_direct / tasks * 1000:.0f} ms a task)')
    t1, in_one, peak1 = on_cluster(fleet, folder / 'one', 1)
    t2, in_two, peak2 = on_cluster(fleet, folder / 'two', 2)
    # the engine's share: the wall time of the 1-worker run not spent inside a task
    overhead = 100 * (t1 - in_one) / in_one
    against_direct = 100 * (t1 - t_direct) / t_direct
    speed_up = t1 / t2
    peak = max([*peak1.values(), *peak2.values()])
    print(f'LocalCluster 1 worker: {t1:7.1f} s, {in_one:.1f} s inside the tasks: engine '
          f'{overhead:+.1f} % ({(t1 - in_one) / tasks * 1000:+.0f} ms a task); '
          f'{against_direct:+.1f} % against the direct run')
    print(f'LocalCluster 2 workers:{t2:7.1f} s, {in_two:.1f} s inside the tasks: throughput '
          f'{speed_up:.2f}× one worker ({speed_up / limit:.0%} of what the machine gave two '
          f'processes before); both workers inside a task {in_two / (2 * t2):.0%} of the '
          f'time (on idle cores: {2 * in_two / (2 * t2):.2f}×)')
    print('peak memory per worker: ' + ', '.join(f'{mb:.0f} MB' for mb in
                                                 [*peak1.values(), *peak2.values()]))
    first = cli(simulated.manifest, folder / 'cli')
    inside = sum(TaskRecord.read(p).seconds for name in (RECORD, VALIDATION)
                 for p in (folder / 'cli').rglob(name))
    resumed = cli(simulated.manifest, folder / 'cli')
    resume = 100 * resumed / first
    print(f'robot-ident fleet identify: first run {first:.1f} s ({inside:.1f} s inside the '
          f'tasks), resumed with nothing changed {resumed:.2f} s ({resume:.1f} % of the first)')
    print(f'load average after: {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
    checks = [('2 workers / 1 worker throughput', speed_up, '>=', TARGETS['speed-up']),
              ('engine overhead per task %', overhead, '<=', TARGETS['overhead %']),
              ('peak memory per worker MB', peak, '<=', TARGETS['peak MB']),
              ('resumed run % of the first', resume, '<=', TARGETS['resume %'])]
    missed = 0
    for label, value, op, target in checks:
        ok = value >= target if op == '>=' else value <= target
        missed += not ok
        print(f'{"ok  " if ok else "MISS"} {label}: {value:.2f} (target {op} {target:g})')
    return 1 if missed else 0


def _joints(robot) -> list[str]:
    import yaml
    return yaml.safe_load(robot.recordings[0].path.read_text())['joints']


if __name__ == '__main__':
    sys.exit(main())
