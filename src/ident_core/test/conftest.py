"""Run the tests against the source tree (edits need no rebuild)."""
import os
import sys

# Small matrices (excitation criteria): multithreaded BLAS only adds contention on 2 cores.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (HERE.parent, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


# --- Synthetic data of the project's test robot (test_bad_input.py, test_datasets.py) ---------
import warnings

import datafiles
import numpy as np
import pytest

from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset


@pytest.fixture(scope='session')
def urdf():
    """The project's 6-axis test robot (joints joint1 … joint6)."""
    assert datafiles.URDF.is_file(), datafiles.URDF
    return datafiles.URDF


@pytest.fixture(scope='session')
def six_axis(urdf):
    return load_robot(urdf)


@pytest.fixture(scope='session')
def truth(six_axis):
    """Perturbed URDF parameters plus random friction/offset: the simulated robot's truth."""
    return perturbed_parameters(six_axis, np.random.default_rng(1))


@pytest.fixture(scope='session')
def make_synthetic(six_axis, truth):
    """``make_synthetic(seed=3, duration=20, rate=100)`` → a synthetic ``Dataset`` (URDF joint
    order, 0.05 N·m torque noise), cached per session; do not modify its arrays."""
    cache = {}

    def make(seed: int = 3, duration: float = datafiles.DURATION, rate: float = datafiles.RATE):
        key = (seed, duration, rate)
        if key not in cache:
            cache[key] = synthetic_dataset(six_axis, truth, duration, rate, seed=seed,
                                           torque_noise=datafiles.TORQUE_NOISE)[0]
        return cache[key]
    return make


@pytest.fixture
def csv_case(tmp_path, make_synthetic) -> datafiles.CsvCase:
    """A valid description ``good.yaml`` of ``good.csv`` (header row, 20 s at 100 Hz), from which
    a test derives broken variants with ``csv_case.variant(name, ...)``."""
    return datafiles.make_csv_case(tmp_path, make_synthetic())


@pytest.fixture(autouse=True)
def _restore_showwarning():
    """``cli.main`` installs its own ``warnings.showwarning``; undo that after each test."""
    saved = warnings.showwarning
    yield
    warnings.showwarning = saved


# --- Fleets (test_fleet*.py) -------------------------------------------------------------------
@pytest.fixture(scope='session')
def dask_threads():
    """The address of an in-process Dask cluster: one worker, one thread (a serial run of the
    fleet's tasks in this process, without starting processes)."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()
