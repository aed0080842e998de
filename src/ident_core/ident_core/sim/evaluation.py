"""Evaluation of an identification against a simulator's ground truth (docs/methods.md §9):
identified base parameters vs the true ones projected on the same base, and validation against
the noise-free applied torques.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..data.datasets import Dataset, load_bag
from ..errors import InputError
from ..estimation.identification import validate
from ..estimation.identified_model import IdentifiedModel
from ..files import read_yaml
from ..model.robot import RobotModel
from .simulator import GROUND_TRUTH_FORMAT

#: Friction parameters judged together against the truth (issue 12's goals: 2 % and 10 %).
GOAL_PARAMETERS = {'linear': ('fc', 'fs', 'fv', 'offset'), 'shape': ('vs', 'v_l')}


@dataclass
class GroundTruth:
    """The ground truth of a simulator run.

    Parameters
    ----------
    parameters : dict
        ``ground_truth.yaml`` (``RobotSimulator.ground_truth``).
    log : dict of str to ndarray
        ``truth_log.npz``: stamp_ns (M,), q, qd, qdd, torque (M, n), joint_names (n,).
    """

    parameters: dict
    log: dict


def load_ground_truth(directory: str | Path) -> GroundTruth:
    """Read a simulator's ground-truth folder.

    Parameters
    ----------
    directory : str or Path
        Holds ``ground_truth.yaml`` and ``truth_log.npz``.

    Returns
    -------
    GroundTruth

    Raises
    ------
    InputError
        For missing files or a wrong format, naming the file.
    """
    directory = Path(directory)
    path = directory / 'ground_truth.yaml'
    parameters = read_yaml(path, 'ground truth')
    try:
        with np.load(directory / 'truth_log.npz') as npz:
            log = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise InputError(f'{directory}: cannot read the ground truth ({exc})') from None
    if not isinstance(parameters, dict) or parameters.get('format') != GROUND_TRUTH_FORMAT:
        raise InputError(f'{path}: not a {GROUND_TRUTH_FORMAT} file')
    return GroundTruth(parameters, log)


@dataclass
class Comparison:
    """Identified vs true base parameters.

    Parameters
    ----------
    names : list of str
        (nb,) base parameter names.
    values, std : (nb,) ndarray
        Identified values and standard deviations.
    true : (nb,) ndarray
        True values projected on the same base.
    """

    names: list[str]
    values: np.ndarray
    std: np.ndarray
    true: np.ndarray

    @property
    def z(self) -> np.ndarray:
        """(nb,) z-scores ``(value − true) / std``."""
        with np.errstate(divide='ignore', invalid='ignore'):
            return (self.values - self.true) / self.std

    def fraction_within(self, k: float = 3.0) -> float:
        """Share of base parameters within k standard deviations of the truth.

        Parameters
        ----------
        k : float

        Returns
        -------
        float
            In [0, 1].
        """
        return float(np.mean(np.abs(self.z) <= k))

    def table(self, width: int = 48) -> str:
        """Plain-text table: name, identified, std, true, z.

        Parameters
        ----------
        width : int
            Width of the name column.

        Returns
        -------
        str
        """
        lines = [f'{"base parameter":<{width}} {"identified":>12} {"std":>10} {"true":>12} '
                 f'{"z":>6}']
        for name, v, s, t, z in zip(self.names, self.values, self.std, self.true, self.z):
            short = name if len(name) <= width else name[:width - 1] + '…'
            lines.append(f'{short:<{width}} {v:12.5g} {s:10.2g} {t:12.5g} {z:6.2f}')
        return '\n'.join(lines)


def compare(model: IdentifiedModel, truth: GroundTruth) -> Comparison:
    """Project the true standard parameters on the model's base parameters and compare.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    truth : GroundTruth
        The simulator's truth.

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        If the model's standard parameters are not those of the ground truth (e.g. identified
        without rotor inertia, or another robot).
    """
    standard = truth.parameters['standard_parameters']
    if list(standard['names']) != list(model.base.standard_names):
        raise InputError('the identified model has other standard parameters than the ground '
                         'truth (identify with rotor inertia and coulomb-viscous-offset '
                         'friction to compare with the simulator)')
    true = model.base.project(np.asarray(standard['values'], dtype=float))
    return Comparison(list(model.base.names), model.values, model.std, true)


def noise_free_dataset(dataset: Dataset, stamps: np.ndarray, truth: GroundTruth) -> Dataset:
    """A dataset with its efforts replaced by the simulator's noise-free torques.

    Parameters
    ----------
    dataset : Dataset
        A recording of the simulated robot.
    stamps : (N,) ndarray
        Absolute header stamps of its samples [s] (``dataset.t`` starts at 0).
    truth : GroundTruth
        The simulator's truth.

    Returns
    -------
    Dataset
        Efforts = the noise-free applied joint torques at the same stamps.

    Raises
    ------
    InputError
        If a sample has no ground-truth sample, or the joints differ.
    """
    log = truth.log
    if len(stamps) != dataset.samples:
        raise InputError(f'{dataset.source}: {len(stamps)} stamps for {dataset.samples} samples')
    names = [str(j) for j in log['joint_names']]
    if sorted(names) != sorted(dataset.joint_names):
        raise InputError(f'{dataset.source}: joints differ from the ground truth\'s')
    t_true = log['stamp_ns'] * 1e-9
    dt = float(np.median(np.diff(t_true))) if len(t_true) > 1 else 1.0
    k = np.clip(np.searchsorted(t_true, stamps), 1, max(len(t_true) - 1, 1))
    k = np.where(np.abs(t_true[k - 1] - stamps) < np.abs(t_true[k] - stamps), k - 1, k)
    miss = np.abs(t_true[k] - stamps) > dt / 4
    if np.any(miss):
        raise InputError(f'{dataset.source}: {int(miss.sum())} samples have no ground-truth '
                         'sample with the same stamp')
    idx = [names.index(j) for j in dataset.joint_names]
    torque = log['torque'][k][:, idx]
    return replace(dataset, source=f'{dataset.source} (noise-free torque)', effort=torque)


def true_torques(dataset: Dataset, stamps: np.ndarray, truth: GroundTruth,
                 robot: RobotModel) -> np.ndarray:
    """The simulator's noise-free (true) joint torques at every sample of a recording of its
    run.

    Parameters
    ----------
    dataset : Dataset
        A recording of the simulated robot.
    stamps : (N,) ndarray
        Absolute header stamps of its samples [s].
    truth : GroundTruth
        The simulator's truth (``load_ground_truth``).
    robot : RobotModel
        The model whose joint order the columns follow.

    Returns
    -------
    (N, n) ndarray
        [N·m or N].

    Raises
    ------
    InputError
        As ``noise_free_dataset``.
    """
    return noise_free_dataset(dataset, stamps, truth).aligned(robot).effort


def validate_bag_noise_free(model: IdentifiedModel, bag: str | Path, truth: GroundTruth,
                            topic: str = '/joint_states',
                            window: tuple[float, float] | None = None) -> dict:
    """Validate a model on a recording against the simulator's noise-free torques.

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    bag : str or Path
        JointState recording of the simulated robot.
    truth : GroundTruth
        The simulator's truth.
    topic : str
        JointState topic.
    window : (float, float), optional
        Header-stamp window to use (see ``datasets.load_bag``).

    Returns
    -------
    dict
        ``metrics.all_metrics`` of the prediction against the noise-free torques,
        preprocessed like measured ones.

    Raises
    ------
    InputError
        For an unreadable bag, or samples without ground truth.
    """
    dataset, stamps = load_bag(bag, topic, window=window)
    return validate(model, noise_free_dataset(dataset, stamps, truth)).metrics


def compare_friction(fits: dict, truth: dict) -> dict:
    """Every optimiser's parameters of one model against the truth.

    Parameters
    ----------
    fits : dict of str to dict of str to FitEntry or FrictionFit
        ``[joint][optimizer]``: fits of one model (``parameters``, ``rss``, ``seconds``,
        ``warnings``).
    truth : dict of str to dict of str to float
        ``[joint][parameter]``: the true friction.

    Returns
    -------
    dict
        ``[joint][optimizer]``: ``parameters``, ``error_percent`` (100 (value − true) / |true|
        per parameter; NaN where the truth is 0), ``rss``, ``seconds``, ``warnings``.
    """
    out = {}
    for joint, by_optimizer in fits.items():
        true = truth[joint]
        out[joint] = {}
        for optimizer, fit in by_optimizer.items():
            errors = {name: (100 * (value - true[name]) / abs(true[name])
                             if true.get(name) else math.nan)
                      for name, value in fit.parameters.items()}
            out[joint][optimizer] = {'parameters': dict(fit.parameters),
                                     'error_percent': errors, 'rss': float(fit.rss),
                                     'seconds': float(fit.seconds),
                                     'warnings': list(fit.warnings)}
    return out


def worst_errors(rows: dict) -> dict:
    """The largest error of the linear and of the shape parameters over joints and optimisers.

    Parameters
    ----------
    rows : dict
        ``compare_friction``.

    Returns
    -------
    dict
        ``linear`` (fc, fs, fv, offset) and ``shape`` (vs, v_l): ``error`` (largest |error|,
        %), ``joint``, ``optimizer``, ``parameter``; a NaN error counts as the largest.
    """
    out = {}
    for kind, names in GOAL_PARAMETERS.items():
        worst = {'error': -1.0, 'joint': None, 'optimizer': None, 'parameter': None}
        for joint, by_optimizer in rows.items():
            for optimizer, row in by_optimizer.items():
                for name in names:
                    error = abs(row['error_percent'].get(name, math.nan))
                    error = math.inf if math.isnan(error) else error
                    if error > worst['error']:
                        worst = {'error': error, 'joint': joint, 'optimizer': optimizer,
                                 'parameter': name}
        out[kind] = worst
    return out
