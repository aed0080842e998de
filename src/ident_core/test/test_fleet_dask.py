"""The fleet on real Dask processes: a ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1, one of them SIGKILLed while it runs a task: Dask runs its tasks again on the other,
and every result equals a serial run's, with no partial file left. Then the same fleet through
the embedded ``LocalCluster`` of ``robot-ident fleet identify``."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from fleetfiles import small_fleet

from ident_core.cli import main
from ident_core.fleet.engine import Engine, identify_fleet
from ident_core.fleet.manifest import load_fleet
from ident_core.fleet.tasks import allocator_warning

SOURCE = Path(__file__).resolve().parents[1]
#: Guards against a hang only; the tests wait on events.
TIMEOUT = 120.0


@pytest.fixture(scope='module')
def fleet(tmp_path_factory, dask_threads):
    """Two SCARA robots, three nights each (14 tasks), and its serial run."""
    folder = tmp_path_factory.mktemp('fleet')
    fleet = small_fleet(folder, robots=2, nights=3, baseline=2)
    run = identify_fleet(load_fleet(fleet.manifest), folder / 'serial', scheduler=dask_threads)
    assert run.ran == 14 and not run.failed
    return fleet, folder / 'serial'


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two workers (no nanny: a killed worker stays dead), as processes."""
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(     # this source, this test's module
        [str(SOURCE), str(Path(__file__).parent), os.environ.get('PYTHONPATH', '')])}
    port = _free_port()
    address = f'tcp://127.0.0.1:{port}'
    processes = [subprocess.Popen(
        [sys.executable, '-m', 'distributed.cli.dask_scheduler', '--host', '127.0.0.1',
         '--port', str(port), '--no-dashboard'], env=env, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for name in ('w1', 'w2'):
            processes.append(subprocess.Popen(
                [sys.executable, '-m', 'distributed.cli.dask_worker', address, '--name', name,
                 '--nthreads', '1', '--no-nanny', '--host', '127.0.0.1', '--no-dashboard'],
                env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield address, processes
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
            p.wait()


def test_a_worker_killed_mid_run_loses_nothing(fleet, cluster, tmp_path):
    from distributed import Client

    (simulated, serial), (address, processes) = fleet, cluster
    client = Client(address, timeout=TIMEOUT)
    try:
        client.wait_for_workers(2, timeout=TIMEOUT)
        pids = client.run(os.getpid)
        victim = next(a for a, pid in pids.items() if pid == processes[1].pid)
        out = tmp_path / 'out'
        codes = []
        runner = threading.Thread(target=lambda: codes.append(main(
            ['fleet', 'identify', '--manifest', str(simulated.manifest), '--out', str(out),
             '--scheduler', address, '--no-progress'])))
        runner.start()
        deadline = time.monotonic() + TIMEOUT
        while not client.run(_executing, workers=[victim])[victim]:
            assert runner.is_alive(), 'the run ended before the worker ran a task'
            assert time.monotonic() < deadline, 'no task started on the worker'
            time.sleep(0.01)
        os.kill(processes[1].pid, signal.SIGKILL)
        runner.join(TIMEOUT)
        assert not runner.is_alive(), 'the run did not end'
        assert processes[1].wait(TIMEOUT) == -signal.SIGKILL
        assert list(client.run(os.getpid)) == [a for a in pids if a != victim]
    finally:
        client.close()
    assert codes == [0]
    _same_results(out, serial)


def test_the_embedded_local_cluster_is_the_default(fleet, tmp_path, capsys):
    simulated, serial = fleet
    out = tmp_path / 'out'
    assert main(['fleet', 'identify', '--manifest', str(simulated.manifest), '--out', str(out),
                 '--workers', '2', '--no-progress']) == 0
    printed = capsys.readouterr().out
    assert '14 tasks run, 0 unchanged, 0 failed' in printed
    assert '0 drift alerts' in printed
    _same_results(out, serial)
    assert (out / 'drift.yaml').is_file() and (out / 'report' / 'index.html').is_file()


def test_the_embedded_workers_keep_glibc_s_dynamic_mmap_threshold():
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers by default, which makes the tasks
    2–3× slower; the embedded cluster's workers run without it, and a worker with it says so."""
    with Engine(workers=1) as engine:
        environment = engine.connect().run(os.environ.get, 'MALLOC_TRIM_THRESHOLD_')
    assert list(environment.values()) == [None]
    assert allocator_warning({}) == ''
    assert 'MALLOC_TRIM_THRESHOLD_=65536' in allocator_warning({'MALLOC_TRIM_THRESHOLD_': '65536'})


def _executing(dask_worker) -> int:
    """Tasks running on a worker now (run there by ``Client.run``)."""
    return dask_worker.state.executing_count


def _same_results(out: Path, serial: Path) -> None:
    """Every result and record of ``out`` equals the serial run's (less the task times), and
    no temporary file is left."""
    files = sorted(p.relative_to(serial) for p in serial.rglob('*.yaml')
                   if p.name in ('RESULT.yaml', 'TASK.yaml', 'VALIDATION.yaml'))
    # per robot: identify 2 files a night, the baseline 2, validate 1 a night
    assert len(files) == 2 * (3 * 2 + 2 + 3)
    for name in files:
        assert (out / name).is_file(), name
        if name.name == 'RESULT.yaml':
            assert (out / name).read_text() == (serial / name).read_text(), name
        else:
            mine, theirs = (yaml.safe_load((d / name).read_text()) for d in (out, serial))
            del mine['seconds'], theirs['seconds']
            assert mine == theirs, name
    assert not [p for p in out.rglob('*') if p.name.endswith('.tmp')]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
