"""Running the work units of a fleet (``records.Task``): what a worker runs and writes.

A task pickles, and ``run_task`` runs it anywhere the package is installed and the paths are
reachable. Three kinds, each calling one workflow:

``identify``  one recording → ``<robot>/<recording>/RESULT.yaml`` (``identify_recordings``)
``baseline``  the robot's first successful recordings together → ``<robot>/baseline/RESULT.yaml``
``validate``  one recording predicted by the baseline model (and, for a baseline recording, by
              the other baseline recordings' own models) → ``<robot>/<recording>/VALIDATION.yaml``

Every file is written atomically (``files.write_atomic``); the record (TASK.yaml, or
VALIDATION.yaml which is its own record) is written last, so a task whose worker is killed
leaves either nothing new or its complete files. A bad input (``IdentError``) is the task's
result: a record with status ``failed`` and the one line the CLI would print.
"""
from __future__ import annotations

import logging
import os
import time
import warnings
from pathlib import Path

import numpy as np

from ..errors import IdentError
from ..estimation.metrics import rmse
from ..threads import limit_blas_threads
from ..workflows.identify import identify_recordings, validate_recording
from .records import ActuatorParameters, ModelErrors, Task, TaskRecord

#: Whether this process has limited its BLAS threads (once per worker process).
_THREADS_LIMITED = []


def allocator_warning(environ) -> str:
    """Why this worker process runs the tasks slowly, if it was started with
    ``MALLOC_TRIM_THRESHOLD_`` set (Dask's nanny sets it to 64 kB by default).

    Any of glibc's ``MALLOC_*_`` tuning variables turns off its dynamic mmap threshold: every
    array above 128 kB is then mapped and unmapped again, and an identification or a validation
    runs 2–3× slower (measured on this project's fleet tasks).

    Parameters
    ----------
    environ : mapping of str to str
        The process's environment.

    Returns
    -------
    str
        The warning with the fix, or ``''``.
    """
    if 'MALLOC_TRIM_THRESHOLD_' not in environ:
        return ''
    return (f'this worker runs with MALLOC_TRIM_THRESHOLD_={environ["MALLOC_TRIM_THRESHOLD_"]} '
            "(Dask's nanny default): tasks run 2-3x slower; start the workers with "
            "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_ set to null in the Dask "
            'configuration (docs/fleet.md)')


def run_task(task: Task) -> TaskRecord:
    """Run a task and write its files; on a worker, or anywhere.

    BLAS is limited to ``threads.blas_threads()`` threads (one by default) in the process the
    first time. Temporary files that a killed run of the task left in its folder are removed
    first.

    Parameters
    ----------
    task : Task
        What to run, with the hash of its inputs.

    Returns
    -------
    TaskRecord
        As written to ``task.record_path``.

    Raises
    ------
    OSError
        If its files cannot be written (Dask retries the task).
    """
    if not _THREADS_LIMITED:
        limit_blas_threads()
        _THREADS_LIMITED.append(True)
        if warning := allocator_warning(os.environ):
            logging.getLogger(__name__).warning(warning)
    start = time.perf_counter()
    folder = Path(task.folder)
    for stale in folder.glob('.*.tmp'):
        stale.unlink(missing_ok=True)
    fields = {'task': task.kind, 'inputs_sha256': task.inputs_sha256, 'data': list(task.data)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            fields.update(_run(task))
            fields['status'] = 'ok'
        except IdentError as exc:
            fields.update(status='failed', reason=str(exc))
            if task.result_path is not None:
                task.result_path.unlink(missing_ok=True)      # not an older run's result
    fields['warnings'] = sorted({str(w.message) for w in caught})
    fields['seconds'] = time.perf_counter() - start
    record = TaskRecord(**fields)
    record.write(task.record_path)
    return record


def _run(task: Task) -> dict:
    """The record fields of a task's work."""
    if task.kind == 'validate':
        return {'validations': [_errors(label, model, task)
                                for label, model in task.models]}
    model = identify_recordings(task.urdf, list(task.data), task.config,
                                recordings=task.options, out=task.result_path).model
    values, std = model.actuator_values(), model.actuator_std()
    return {'fit_error_percent': float(model.stats['relative_error_percent']),
            'joints': list(model.robot.joint_names),
            'parameters': {k: ActuatorParameters(value=values[k], std=std[k]) for k in std}}


def _errors(label: str, model: str, task: Task) -> ModelErrors:
    """How one model predicts the task's recording."""
    v = validate_recording(model, task.data[0], recordings=task.options).validation
    torque_rms = np.sqrt(np.mean(v.measured ** 2, axis=0))
    error_rms = rmse(v.predicted, v.measured)
    with np.errstate(divide='ignore', invalid='ignore'):
        percent = 100 * error_rms / torque_rms
    return ModelErrors(model=label, relative_error_percent=v.metrics['relative_error_percent'],
                       error_percent=percent.tolist(), torque_rms=torque_rms.tolist())
