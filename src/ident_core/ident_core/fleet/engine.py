"""The Dask client of a fleet run, and the run itself (``identify_fleet``).

By default an embedded ``distributed.LocalCluster``: one worker process per core, one thread
each (the tasks hold the GIL; BLAS runs on one thread, ``tasks.run_task``). With a scheduler's
address (``tcp://HOST:PORT``), the workers of an existing cluster (``dask scheduler`` /
``dask worker``, dask-jobqueue, dask-kubernetes). The cluster is started only when some task
has to run: a resumed run with nothing new starts none.

Dask's own fault tolerance is used as it is: the tasks of a worker that dies are run again on
another (``distributed.scheduler.allowed-failures``, 3 by default: a task that kills its worker
that often, e.g. by exhausting its memory, fails with ``KilledWorker``); a task that raises
something other than bad input (``IdentError``, a result of the task) is retried once
(``RETRIES``, e.g. a write to shared storage that failed). A task that still fails fails alone:
the run goes on.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..progress import Progress, advance, describe, expect
from .hashing import FileHashes
from .index import INDEX, FleetIndex, fleet_index
from .manifest import Fleet
from .plan import Outcome, RobotPlan, reusable
from .records import Task, TaskRecord

#: The file hashes a run remembers for the next, in FLEET_DIR (``hashing.FileHashes``).
HASHES = '.file-hashes.json'
#: Retries of a task that raised an unexpected error (a lost worker is not counted here).
RETRIES = 1
#: Dask configuration of the embedded cluster's workers: without the ``MALLOC_TRIM_THRESHOLD_``
#: that Dask's nanny sets by default (``distributed.nanny.pre-spawn-environ``). Setting it turns
#: off glibc's dynamic mmap threshold, so every array above 128 kB is mapped and unmapped again;
#: a task then runs 2–3× slower (``tasks.allocator_warning``).
WORKER_ENVIRONMENT = {'distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_': None}


@dataclass
class FleetRun:
    """What a fleet run did.

    Parameters
    ----------
    index : FleetIndex
        fleet.yaml, as written.
    ran : int
        Tasks run now.
    reused : int
        Tasks done by an earlier run.
    outcomes : list of Outcome
        Every task's, in completion order.
    """

    index: FleetIndex
    ran: int = 0
    reused: int = 0
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        """The tasks that failed (now or, inputs unchanged, before)."""
        return [o for o in self.outcomes if not o.ok]


class Engine:
    """A Dask client, connected on first use.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler; None: an embedded ``LocalCluster``.
    workers : int, optional
        Worker processes of the embedded cluster (default: the cores of this machine).
    """

    def __init__(self, scheduler: str | None = None, workers: int | None = None):
        self.scheduler, self.workers = scheduler, workers
        self.client = None
        self._cluster = None
        self._completed = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def submit(self, task: Task):
        """Submit a task.

        Parameters
        ----------
        task : Task
            Run by ``tasks.run_task`` on a worker.

        Returns
        -------
        distributed.Future
            Of its ``TaskRecord``.
        """
        # the workflows (and matplotlib) are imported only when a task runs: a resumed run
        # with nothing new does without them
        from .tasks import run_task

        future = self.connect().submit(run_task, task, key=task.key, pure=False,
                                       retries=RETRIES)
        self._completed.add(future)
        return future

    @property
    def completed(self):
        """The submitted futures as they finish, those submitted meanwhile included.

        Returns
        -------
        distributed.as_completed or tuple
            Empty when nothing was submitted.
        """
        return self._completed if self._completed is not None else ()

    def connect(self):
        """The client, connecting (or starting the embedded cluster) first if needed.

        Returns
        -------
        distributed.Client

        Raises
        ------
        InputError
            If the scheduler cannot be reached.
        """
        if self.client is None:
            # distributed takes about a second to import: only when a task runs
            import dask.config
            from distributed import Client, LocalCluster, as_completed

            if self.scheduler:
                try:
                    self.client = Client(self.scheduler)
                except (OSError, ValueError) as exc:
                    raise InputError(f'--scheduler {self.scheduler}: cannot connect '
                                     f'({exc})') from None
            else:
                with dask.config.set(WORKER_ENVIRONMENT):
                    self._cluster = LocalCluster(
                        n_workers=self.workers or os.cpu_count() or 1, threads_per_worker=1,
                        processes=True, dashboard_address=None, silence_logs=logging.ERROR)
                self.client = Client(self._cluster)
            self._completed = as_completed()
        return self.client

    def close(self) -> None:
        """Disconnect; stop the embedded cluster."""
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        self.client = self._cluster = self._completed = None


def identify_fleet(fleet: Fleet, out_dir: str | Path, *, scheduler: str | None = None,
                   workers: int | None = None, progress: Progress = None) -> FleetRun:
    """Identify every recording of a fleet, each robot's baseline model and the validations
    with it, on Dask; write ``out_dir/fleet.yaml``.

    Parameters
    ----------
    fleet : Fleet
        The manifest, loaded (``manifest.load_fleet``).
    out_dir : str or Path
        FLEET_DIR.
    scheduler : str, optional
        Address of a running Dask scheduler; None: an embedded ``LocalCluster``.
    workers : int, optional
        Worker processes of the embedded cluster (default: the cores).
    progress : callable or object with ``update(n)``, optional
        Told of every task (``ident_core.progress``).

    Returns
    -------
    FleetRun
    """
    out_dir = Path(out_dir)
    hashes = FileHashes(out_dir / HASHES)
    plans = {robot.name: RobotPlan(robot, fleet.manifest, out_dir, hashes)
             for robot in fleet.robots}
    run = FleetRun(index=None)
    with Engine(scheduler, workers) as engine:
        tasks = {}

        def settle(outcome: Outcome) -> None:
            run.outcomes.append(outcome)
            run.reused += outcome.reused
            run.ran += not outcome.reused
            advance(progress)
            plan = plans[outcome.task.robot]
            plan.record(outcome)
            offer(plan.ready())

        def offer(new: list[Task]) -> None:
            expect(progress, len(new))
            for task in new:
                record = reusable(task)
                if record is not None:
                    settle(Outcome(task, record, reused=True))
                    continue
                future = engine.submit(task)
                tasks[future.key] = task

        for plan in plans.values():
            offer(plan.ready())
        for future in engine.completed:
            task = tasks.pop(future.key)
            describe(progress, f'{task.kind} {task.robot}/{task.name}')
            settle(Outcome(task, _record(future, task)))
    hashes.save()
    run.index = fleet_index(fleet, plans.values())
    run.index.write(out_dir / INDEX)
    return run


def _record(future, task: Task) -> TaskRecord:
    """A finished future's record; a task that raised fails with the error's one line."""
    try:
        return future.result()
    except Exception as exc:   # KilledWorker, or an unexpected error after the retries
        return TaskRecord(task=task.kind, inputs_sha256='', status='failed',
                          reason=f'{type(exc).__name__}: {exc}', data=list(task.data))
