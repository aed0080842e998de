"""Friction identification on its own, the procedure of stribeck_friction_sa_ga_2020: friction
samples from (joint-wise) recordings, each model fitted by each optimiser per actuator, the
models compared on validation recordings (its Tables 1, 3 and 4; docs/methods.md §8).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from ..data.datasets import Dataset
from ..errors import IdentError, InputError
from ..estimation.config import IdentificationConfig
from ..model.robot import RobotModel
from ..progress import Progress, advance, describe, expect
from ..schema import Schema
from .fit import OPTIMIZERS, FrictionFit, FrictionFitConfig, fit_friction, residual_sum_of_squares
from .models import FRICTION_MODELS, check_model
from .samples import FrictionSamples, RigidBodyModel, friction_samples, merge_samples

#: Default low-pass cut-off for friction [Hz]: above identification's 10 Hz, since the model is
#: filtered the same way (parallel filtering) and the sharp features at reversal carry the
#: information on ``vs`` and ``v_l``.
FRICTION_CUTOFF_HZ = 30.0


class FrictionConfig(Schema):
    """How to identify friction from recordings."""

    cutoff_hz: PositiveFloat | None = Field(
        None, description='Low-pass cut-off of positions and torques [Hz]; None: '
        '``FRICTION_CUTOFF_HZ`` (30), or a fifth of the sample rate if that is lower.')
    filter_order: PositiveInt = Field(4, description='Butterworth order of one filter pass.')
    use_recorded_velocity: bool | None = Field(
        None, description='Filter the recorded velocity instead of differentiating q, as for '
        'identification (``IdentificationConfig``).')
    standstill_time: NonNegativeFloat = Field(
        0.1, description="[s]; a stretch this long slower than ``standstill_fraction`` × the "
        "actuator's peak speed is a standstill and left out.")
    standstill_fraction: float = Field(
        0.02, ge=0, lt=1, description='Fraction of the peak speed below which the actuator '
        'stands still (``standstill_time``).')
    fit: FrictionFitConfig = Field(FrictionFitConfig(), description='Fixed parameters, GA and '
                                   'SA-GA settings, seed.')

    def preprocessing(self, dataset: Dataset) -> IdentificationConfig:
        """The preprocessing settings for one recording.

        Parameters
        ----------
        dataset : Dataset

        Returns
        -------
        IdentificationConfig
        """
        cutoff = self.cutoff_hz
        if cutoff is None:
            steps = np.diff(dataset.t)
            steps = steps[steps > 0]
            rate = 1 / np.median(steps) if len(steps) else np.inf
            cutoff = min(FRICTION_CUTOFF_HZ, 0.2 * rate)
        return IdentificationConfig(cutoff_hz=cutoff, filter_order=self.filter_order,
                                    use_recorded_velocity=self.use_recorded_velocity)


@dataclass
class FrictionIdentification:
    """Every fit of every actuator, and the comparison on validation recordings.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    rigid_source : str
        The rigid-body model subtracted (RESULT.yaml or URDF).
    data, validation_data : list of str
        The recordings.
    samples : dict of str to FrictionSamples
        Per actuator.
    fits : dict of str to dict of str to dict of str to FrictionFit
        ``fits[joint][model][optimizer]``.
    failures : dict of str to str
        ``'joint model optimizer'`` → why it failed.
    validation_rss : dict of str to dict of str to float
        ``[joint][model]``: RSS of the joint torque on the validation recordings (Table 4).
    selected : dict of str to FrictionFit
        Per joint: the model with the lowest validation RSS (without validation data: the
        richest model fitted, in ``FRICTION_MODELS`` order), by its optimiser with the lowest
        RSS.
    """

    robot: RobotModel
    rigid_source: str
    data: list[str]
    validation_data: list[str]
    samples: dict[str, FrictionSamples]
    fits: dict[str, dict[str, dict[str, FrictionFit]]]
    failures: dict[str, str] = field(default_factory=dict)
    validation_rss: dict[str, dict[str, float]] = field(default_factory=dict)
    selected: dict[str, FrictionFit] = field(default_factory=dict)


def identify_friction(robot: RobotModel, datasets: Sequence[Dataset], rigid: RigidBodyModel,
                      joints: Sequence[str] | None = None,
                      models: Sequence[str] = ('improved-stribeck',),
                      optimizers: Sequence[str] = ('lsq',),
                      config: FrictionConfig | None = None,
                      validation: Sequence[Dataset] = (),
                      progress: Progress = None) -> FrictionIdentification:
    """Identify friction models of actuators from recordings.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : sequence of Dataset
        Recordings: joint-wise cosine experiments (``excite --jointwise``), or any motion.
    rigid : RigidBodyModel
        Rigid-body model whose torque is subtracted (identified, or the URDF's).
    joints : sequence of str, optional
        Actuators (joint names) to identify; default every one that moves.
    models : sequence of str
        Friction models (``friction.models.FRICTION_MODELS``).
    optimizers : sequence of str
        ``'lsq'``, ``'ga'``, ``'sa-ga'``.
    config : FrictionConfig, optional
        Preprocessing and fitting settings.
    validation : sequence of Dataset
        Recordings to compare the models on (RSS of the joint torque, Table 4).
    progress : callable or object with ``update(n)``, optional
        Told of one step per fit (joint × model × optimiser), described before it by
        ``'<joint>: <model> by <optimiser>'`` (``ident_core.progress``).

    Returns
    -------
    FrictionIdentification

    Raises
    ------
    InputError
        For no data, an unknown joint, model or optimiser, a joint that never moves, or a
        model that no optimiser could fit on some joint (with the reason).
    """
    config = config or FrictionConfig()
    if not datasets:
        raise InputError('friction: no recording given')
    for m in models:
        check_model(m)
    for o in optimizers:
        if o not in OPTIMIZERS:
            raise InputError(f'friction optimizer {o!r} unknown (choose from '
                             f'{", ".join(OPTIMIZERS)})')
    samples = collect_samples(robot, datasets, rigid, config)
    joints = list(joints or samples)
    for j in joints:
        robot.joint_index(j, 'friction')
        if j not in samples:
            raise InputError(f'friction: joint {j} never moves in '
                             f'{", ".join(d.source for d in datasets)} (a joint-wise '
                             f'experiment: robot-ident excite --jointwise {j})')
    out = FrictionIdentification(robot, rigid.source, [d.source for d in datasets],
                                 [d.source for d in validation],
                                 {j: samples[j] for j in joints}, {})
    expect(progress, len(joints) * len(models) * len(optimizers))
    for j in joints:
        out.fits[j] = {}
        for m in models:
            fits = {}
            for o in optimizers:
                describe(progress, f'{j}: {m} by {o}')
                try:
                    fits[o] = fit_friction(samples[j], m, o, config.fit)
                except IdentError as exc:
                    out.failures[f'{j} {m} {o}'] = str(exc)
                advance(progress)
            if not fits:
                raise InputError(out.failures[f'{j} {m} {optimizers[0]}'])
            out.fits[j][m] = fits
    if validation:
        out.validation_rss = validation_rss(robot, validation, rigid, out.fits, config)
    out.selected = {j: _select(out.fits[j], out.validation_rss.get(j)) for j in joints}
    return out


def collect_samples(robot: RobotModel, datasets: Sequence[Dataset], rigid: RigidBodyModel,
                    config: FrictionConfig) -> dict[str, FrictionSamples]:
    """The friction samples of every actuator that moves in the recordings.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    datasets : sequence of Dataset
        The recordings.
    rigid : RigidBodyModel
        Rigid-body model whose torque is subtracted.
    config : FrictionConfig
        Preprocessing and standstill settings.

    Returns
    -------
    dict of str to FrictionSamples
        Per actuator (joint name), the recordings merged.

    Raises
    ------
    InputError
        For bad data (``friction_samples``).
    """
    pieces = {}
    for d in datasets:
        for name, s in friction_samples(robot, d, rigid, config.preprocessing(d),
                                        config.standstill_time,
                                        config.standstill_fraction).items():
            pieces.setdefault(name, []).append(s)
    return {name: merge_samples(parts) for name, parts in pieces.items()}


def validation_rss(robot: RobotModel, datasets: Sequence[Dataset], rigid: RigidBodyModel,
                   fits: dict, config: FrictionConfig) -> dict[str, dict[str, float]]:
    """Residual sum of squares of the joint torque on other recordings, per joint and model
    (stribeck_friction_sa_ga_2020 Table 4): ``Σ (tau − rigid − friction)²`` over the moving
    samples, with each model's best fit.

    Parameters
    ----------
    robot : RobotModel
    datasets : sequence of Dataset
        Validation recordings (e.g. a 2-harmonic Fourier trajectory).
    rigid : RigidBodyModel
    fits : dict
        ``fits[joint][model][optimizer]``.
    config : FrictionConfig

    Returns
    -------
    dict of str to dict of str to float
        ``[joint][model]`` [(N·m)²]; joints that do not move in the recordings are absent.
    """
    samples = collect_samples(robot, datasets, rigid, config)
    out = {}
    for j, by_model in fits.items():
        if j not in samples:
            continue
        out[j] = {}
        for m, by_optimizer in by_model.items():
            best = min(by_optimizer.values(), key=lambda f: f.rss)
            out[j][m] = residual_sum_of_squares(samples[j], m, best.parameters)
    return out


def _select(by_model: dict, rss: dict | None) -> FrictionFit:
    model = min(rss, key=rss.get) if rss else max(by_model, key=FRICTION_MODELS.index)
    return min(by_model[model].values(), key=lambda f: f.rss)

