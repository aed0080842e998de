"""Torque estimation over a recording, sample by sample as the node does it live, and, for
analysis, smoothed over the whole recording (docs/methods.md §12)."""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..data.datasets import Dataset
from ..data.plausibility import check_efforts, check_positions
from ..errors import InputError
from ..excitation.fourier import FourierTrajectory
from ..progress import Progress, advance, expect
from ..schema import per_joint
from .collision import Collision, CollisionDetector
from .config import TorqueEstimatorConfig
from .dynamics import DynamicModel
from .estimator import TorqueEstimator
from .smoother import smooth_torques

#: The reference motion at a time, or None where there is none.
Reference = Callable[[float], 'tuple[np.ndarray, np.ndarray, np.ndarray] | None']
#: Samples between two progress reports of ``estimate_torques``.
PROGRESS_BLOCK = 1000


@dataclass
class TorqueEstimates:
    """The estimates of a recording.

    Parameters
    ----------
    source : str
        The recording.
    method : str
        The method.
    joint_names : list of str
        (n,) model joint order.
    t : (M,) ndarray
        Stamps of the samples (repeated stamps left out) [s].
    measured, filtered, external : (M, n) ndarray
        Measured, estimated and external joint torques [N·m or N].
    collisions : list of Collision
        Collisions detected (``collision_threshold``).
    repeats : int
        Rows left out because their stamp repeated the previous one.
    noise : dict of str to list of float
        ``kalman``: the final noise estimates per joint (``StateNoise.summary``; with a
        reference, also the paper's filter's estimated ``W`` and ``V`` as
        ``reference_process_noise`` and ``reference_measurement_noise``).
    rows : (M,) ndarray of int or None
        Rows of the recording the samples come from.
    true : (M, n) ndarray or None
        True joint torques, when known (a simulated robot: ``sim.evaluation``).
    smoothed : (M, n) ndarray or None
        The smoothed joint torques (``smoother``), when asked for [N·m or N].
    """

    source: str
    method: str
    joint_names: list[str]
    t: np.ndarray
    measured: np.ndarray
    filtered: np.ndarray
    external: np.ndarray
    collisions: list[Collision] = field(default_factory=list)
    repeats: int = 0
    noise: dict = field(default_factory=dict)
    rows: np.ndarray | None = None
    true: np.ndarray | None = None
    smoothed: np.ndarray | None = None


def estimate_torques(dm: DynamicModel, dataset: Dataset, config: TorqueEstimatorConfig,
                     reference: Reference | None = None, progress: Progress = None,
                     smooth: bool = False) -> TorqueEstimates:
    """Run a torque estimator over a recording, and the smoother if asked.

    Parameters
    ----------
    dm : DynamicModel
        The dynamic model.
    dataset : Dataset
        The recording (joint space).
    config : TorqueEstimatorConfig
        Method and settings.
    reference : callable, optional
        ``reference(t)``: the reference motion ``(q, qd, qdd)`` in model joint order at a
        stamp, or None (then the state filter estimates without one).
    progress : callable or object with ``update(n)``, optional
        Told of the samples done, a block of ``PROGRESS_BLOCK`` at a time; the increments
        sum to the number of samples, twice with ``smooth`` (``ident_core.progress``).
    smooth : bool
        Also smooth the torques over the whole recording (``smoother.smooth_torques``, from
        the noise estimates of the causal pass when the method is ``kalman``).

    Returns
    -------
    TorqueEstimates

    Raises
    ------
    InputError
        If the recording's joints are not the model's, an effort column is constant or
        positions lie far outside the URDF limits, a value is not finite (naming the row and
        joint), or the stamps go back in time.
    """
    data = dataset.aligned(dm.robot)
    check_efforts(data)
    check_positions(data, dm.robot)
    estimator = TorqueEstimator(dm, config)
    detector = CollisionDetector(per_joint(config.collision_threshold, dm.n,
                                           'collision_threshold'), config.collision_time)
    rows, filtered, external, collisions = [], [], [], []
    passes = 2 if smooth else 1
    expect(progress, passes * len(data.t))
    for k, t in enumerate(data.t):
        if k and k % PROGRESS_BLOCK == 0:
            advance(progress, PROGRESS_BLOCK)
        try:
            estimate = estimator.step(float(t), data.position[k], data.effort[k],
                                      None if reference is None else reference(float(t)))
        except InputError as exc:
            raise InputError(f'{data.source}: row {data.first_row + k + 1}: {exc}') from None
        if estimate is None:
            continue
        rows.append(k)
        filtered.append(estimate.filtered)
        external.append(estimate.external)
        collisions += detector.update(float(t), estimate.external)
    advance(progress, len(data.t) - (len(data.t) - 1) // PROGRESS_BLOCK * PROGRESS_BLOCK
            if len(data.t) else 0)
    rows = np.array(rows, dtype=int)
    smoothed = None
    if smooth:
        told = []

        def smoothing(k):
            if k and k % PROGRESS_BLOCK == 0:
                advance(progress, PROGRESS_BLOCK)
                told.append(PROGRESS_BLOCK)

        flt = estimator.kalman
        smoothed = smooth_torques(dm, config, np.diff(data.t[rows], prepend=data.t[rows[:1]]),
                                  data.position[rows], data.effort[rows],
                                  None if flt is None else flt.noise, smoothing)
        advance(progress, len(data.t) - sum(told))
    return TorqueEstimates(data.source, config.method, list(dm.robot.joint_names),
                           data.t[rows], data.effort[rows], np.array(filtered),
                           np.array(external), collisions, estimator.repeats,
                           _noise(estimator), rows, smoothed=smoothed)


def _noise(estimator: TorqueEstimator) -> dict:
    """The final noise estimates of the Kalman filters (``TorqueEstimates.noise``)."""
    if estimator.kalman is None:
        return {}
    noise = estimator.kalman.noise.summary()
    paper = estimator.reference_kalman
    if paper is not None and paper.noise is not None:
        w, v = paper.noise.covariances()
        noise.update(reference_process_noise=w.tolist(), reference_measurement_noise=v.tolist())
    return noise


def torques_csv(result: TorqueEstimates) -> str:
    """TORQUES.csv: time, then measured, filtered, external (smoothed, true) torque per joint.

    Parameters
    ----------
    result : TorqueEstimates

    Returns
    -------
    str
        The CSV text (header ``t,measured_<joint>...,filtered_<joint>...,external_<joint>...``,
        then ``smoothed_<joint>...`` when ``result.smoothed`` is there and ``true_<joint>...``
        when ``result.true`` is known).
    """
    kinds = [('measured', result.measured), ('filtered', result.filtered),
             ('external', result.external)]
    for kind in ('smoothed', 'true'):
        if getattr(result, kind) is not None:
            kinds.append((kind, getattr(result, kind)))
    header = ['t'] + [f'{kind}_{j}' for kind, _ in kinds for j in result.joint_names]
    buffer = io.StringIO()
    np.savetxt(buffer, np.column_stack([result.t] + [x for _, x in kinds]), delimiter=',',
               header=','.join(header), comments='', fmt='%.9g')
    return buffer.getvalue()


def fourier_reference(trajectory: FourierTrajectory, joint_names: list[str], start: float,
                      periods: int | None = None) -> Reference:
    """The reference motion of a Fourier excitation trajectory run from a given stamp.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The trajectory (its joints in any order).
    joint_names : list of str
        (n,) the model's joint order.
    start : float
        Stamp of the start of its first period [s].
    periods : int, optional
        Periods run (default: the trajectory's).

    Returns
    -------
    callable
        ``reference(t)``: ``(q, qd, qdd)`` in ``joint_names`` order while the trajectory runs,
        None before and after.

    Raises
    ------
    InputError
        If the trajectory does not name exactly the model's joints.
    """
    if sorted(trajectory.joint_names) != sorted(joint_names):
        raise InputError(f'reference trajectory {trajectory.name!r}: joints '
                         f'{", ".join(trajectory.joint_names)} are not the model\'s '
                         f'({", ".join(joint_names)})')
    order = [list(trajectory.joint_names).index(j) for j in joint_names]
    end = start + (periods or trajectory.periods) * trajectory.period

    def reference(t: float):
        if not start <= t <= end:
            return None
        return tuple(x[0, order] for x in trajectory.evaluate(np.array([t - start])))

    return reference
