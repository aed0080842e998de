"""Measured against predicted joint torques: the identified model and the a-priori URDF model
on every identification and validation recording, with residual histograms and spectra."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal

from ..data.datasets import Dataset
from ..data.sources import short_source
from ..estimation import metrics
from ..estimation.identified_model import IdentifiedModel, prior_standard_parameters
from ..estimation.preprocessing import Processed, preprocess
from ..estimation.regression import regression_data
from ..model.robot import RobotModel
from . import figures
from .html import Figure, Table

#: Most samples per recording that a report evaluates the regressor at; longer recordings are
#: decimated (with the identification's anti-alias filter) before.
MAX_SAMPLES = 20000


@dataclass
class TorqueComparison:
    """Torques of one recording: measured, predicted by the identified and by the URDF model.

    Parameters
    ----------
    source : str
        The recording.
    role : str
        ``identification`` or ``validation``.
    processed : Processed
        The preprocessed recording (positions, velocities, accelerations of the excitation).
    t : (M,) ndarray
        Time of the compared samples [s].
    fs : float
        Their sample rate [Hz].
    measured, identified, urdf : (M, n) ndarray
        Joint torques [N·m or N].
    """

    source: str
    role: str
    processed: Processed
    t: np.ndarray
    fs: float
    measured: np.ndarray
    identified: np.ndarray
    urdf: np.ndarray

    @property
    def residual(self) -> np.ndarray:
        """(M, n) measured minus identified torque [N·m or N]."""
        return self.measured - self.identified

    def relative_error_percent(self, predicted: np.ndarray) -> float:
        """``metrics.relative_error_percent`` of a prediction of these torques.

        Parameters
        ----------
        predicted : (M, n) ndarray

        Returns
        -------
        float
            [%].
        """
        return metrics.relative_error_percent(predicted, self.measured)


def compare_torques(model: IdentifiedModel, dataset: Dataset, role: str,
                    factor: int = 1) -> TorqueComparison:
    """Predict a recording's torques with the identified and with the URDF model.

    The recording is preprocessed as for identification (``preprocess``) and decimated by
    ``factor`` (the identification's own factor reproduces its fit error; validation uses 1)
    or more, to at most ``MAX_SAMPLES`` samples; both models are evaluated on the same base
    regressor. The URDF model is the a-priori standard parameters projected on the base
    parameters (``prior_standard_parameters``: no friction, no rotor inertia).

    Parameters
    ----------
    model : IdentifiedModel
        The identified model.
    dataset : Dataset
        The recording.
    role : str
        ``identification`` or ``validation``.
    factor : int
        Decimation factor (the parallel decimation of ``regression_data``).

    Returns
    -------
    TorqueComparison

    Raises
    ------
    InputError
        For bad data (``preprocess``).
    """
    p = preprocess(dataset, model.robot, model.config)
    factor = max(factor, math.ceil(len(p.t) / MAX_SAMPLES))
    regressor = model.regressor
    w, tau = regression_data(regressor, model.base, p, factor)
    prior = model.base.project(prior_standard_parameters(regressor))
    t = np.concatenate([p.t[a + p.trim:b - p.trim][::factor] for a, b in p.spans()])
    return TorqueComparison(dataset.source, role, p, t, p.fs / factor, tau, w @ model.values,
                            w @ prior)


def torque_figure(c: TorqueComparison, robot: RobotModel) -> Figure:
    """Measured, identified-model and URDF-model torque against time, a row per joint.

    Parameters
    ----------
    c : TorqueComparison
    robot : RobotModel
        Joint names and units.

    Returns
    -------
    Figure
    """
    joints, units = robot.joint_names, robot.effort_units()
    fig, axes = figures.joint_figure(len(joints))
    k = figures.stride(len(c.t))
    rms = metrics.rmse(c.identified, c.measured)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(c.t[k], c.measured[k, j], color=figures.COLORS['measured'], lw=2.6,
                label='measured')
        ax.plot(c.t[k], c.identified[k, j], color=figures.COLORS['identified'], lw=0.9,
                label='identified model')
        ax.plot(c.t[k], c.urdf[k, j], color=figures.COLORS['urdf'], lw=0.9, ls='--',
                label='URDF model')
        ax.set_ylabel(f'{joints[j]}\n[{units[j]}]')
        ax.set_title(f'{joints[j]}: RMS residual {rms[j]:.3g} {units[j]}', fontsize=9,
                     loc='left')
    axes[0, 0].legend(loc='upper right', fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel('time [s]')
    return Figure(figures.png_data_uri(fig, tight=False),
                  f'{c.role} recording {c.source}: measured torque, the identified model '
                  f'({c.relative_error_percent(c.identified):.2f} % relative error) and the URDF '
                  f'model ({c.relative_error_percent(c.urdf):.1f} %)')


def residual_figure(c: TorqueComparison, robot: RobotModel) -> Figure:
    """Histogram and amplitude spectrum of the identified model's residual, a row per joint.

    The spectrum is drawn up to twice the preprocessing cut-off (the torques are low-pass
    filtered there). A white, Gaussian residual means the model explains what the data can;
    peaks in the spectrum at the excitation's harmonics point at unmodelled dynamics (friction
    shape, elasticity, a wrong transmission).

    Parameters
    ----------
    c : TorqueComparison
    robot : RobotModel
        Joint names and units.

    Returns
    -------
    Figure
    """
    joints, units = robot.joint_names, robot.effort_units()
    fig, axes = figures.joint_figure(len(joints), 2, row_height=1.6, sharex=False)
    r = c.residual
    for j in range(len(joints)):
        h, s = axes[j, 0], axes[j, 1]
        h.hist(r[:, j], bins=60, color=figures.COLORS['identified'], alpha=0.8)
        h.set_ylabel(f'{joints[j]}\ncount')
        f, pxx = signal.welch(r[:, j], fs=c.fs, nperseg=min(len(r), 1024))
        shown = f <= min(f[-1], 2 * c.processed.cutoff_hz)
        amplitude = np.sqrt(pxx[shown])
        s.semilogy(f[shown], amplitude, color=figures.COLORS['identified'], lw=0.9)
        if np.any(amplitude > 0):
            s.set_ylim(0.5 * amplitude[amplitude > 0].min(), 2 * amplitude.max())
        s.set_ylabel(f'{units[j]}/√Hz')
        h.set_xlabel(f'residual [{units[j]}]', fontsize=8)
    axes[-1, 1].set_xlabel('frequency [Hz]')
    return Figure(figures.png_data_uri(fig, tight=False),
                  f'{c.role} recording {c.source}: residual (measured − identified) histogram '
                  'and amplitude spectral density')


def error_table(comparisons: list[TorqueComparison], joints: list[str]) -> Table:
    """RMS error per joint of both models on every recording.

    Parameters
    ----------
    comparisons : list of TorqueComparison
    joints : list of str
        (n,) joint names.

    Returns
    -------
    Table
    """
    rows = []
    for c in comparisons:
        for label, predicted in (('identified', c.identified), ('URDF', c.urdf)):
            rows.append([c.role, short_source(c.source), label, c.relative_error_percent(predicted),
                         *metrics.rmse(predicted, c.measured)])
    return Table(['set', 'recording', 'model', 'rel. error %', *[f'{j} RMS' for j in joints]],
                 rows, caption='RMS torque error per joint [N·m or N]')


def trajectory_figure(c: TorqueComparison, robot: RobotModel) -> Figure:
    """The excitation as executed: position, velocity and acceleration per joint against the
    URDF's position and velocity limits (non-finite or zero ones are not drawn).

    Parameters
    ----------
    c : TorqueComparison
        An identification recording.
    robot : RobotModel
        Joint names, units and limits.

    Returns
    -------
    Figure
    """
    p, joints = c.processed, robot.joint_names
    t, signals = p.trimmed(p.t), [p.trimmed(x) for x in (p.q, p.qd, p.qdd)]
    fig, axes = figures.joint_figure(len(joints), 3, row_height=1.5)
    k = figures.stride(len(t))
    for j in range(len(joints)):
        length = 'm' if robot.prismatic[j] else 'rad'
        for col, (x, unit) in enumerate(zip(signals, ('', '/s', '/s²'))):
            axes[j, col].plot(t[k], x[k, j], color=figures.COLORS['identified'], lw=0.9)
            axes[j, col].set_ylabel(f'{joints[j]} [{length}{unit}]', fontsize=8)
        limits = ((0, (robot.lower[j], robot.upper[j])),
                  (1, (-robot.velocity_limit[j], robot.velocity_limit[j])))
        for col, pair in limits:
            for v in pair:
                if np.isfinite(v) and v != 0:
                    axes[j, col].axhline(v, color=figures.COLORS['limit'], ls=':', lw=1)
    for col, title in enumerate(('position', 'velocity', 'acceleration')):
        axes[0, col].set_title(title, fontsize=10)
        axes[-1, col].set_xlabel('time [s]')
    return Figure(figures.png_data_uri(fig, tight=False),
                  f'excitation in {c.source} (filtered and trimmed as for identification); red '
                  'dotted: '
                  'URDF position and velocity limits')

