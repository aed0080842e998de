"""Friction torque samples: measured torque minus the rigid-body torque of a known model
(stribeck_friction_sa_ga_2020 eq. (4); docs/methods.md §8).

    tau_f = tau − [Y(q, qd, qdd) chi]_rigid body + rotor inertia

Each recording is preprocessed as for identification (time base, zero-phase low-pass of q and
tau, central differences); the friction model is evaluated at the velocity of the sharp columns
(``Processed.sharp_velocity``, not smoothed by the cut-off). The filter smooths the friction
jump at a velocity reversal in the measured torque, so a friction model is compared with the
data only after the same filter (parallel filtering, :meth:`FrictionSamples.filtered`): that
keeps the samples near reversal, where the Stribeck effect and the linear band live, free of
filter bias.

Behind a transmission, friction acts per actuator: with the normalised gear matrix ``G`` the
joint torques are ``Gᵀ f(G qd)``, so actuator ``m`` sees ``(G⁻ᵀ tau_f)_m`` at velocity
``(G qd)_m``. An actuator whose peak speed stays below ``HELD_FRACTION`` of the fastest
actuator's in the recording is held (a controller holding a joint creeps a little). Samples
are kept where the actuator moves: a standstill (slower than ``standstill_fraction`` of the
local peak speed, the highest within ``LOCAL_WINDOW``, for at least ``standstill_time``) is
left out, since friction at rest is whatever holds the joint; the brief passes through zero at a
reversal stay. The local peak keeps a slow cosine after a fast one: against the recording's
peak, most of it would look like standstill.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.ndimage

from ..data.datasets import Dataset
from ..data.signal_processing import lowpass
from ..errors import InputError
from ..estimation.config import IdentificationConfig
from ..estimation.identified_model import IdentifiedModel
from ..estimation.preprocessing import preprocess
from ..model.regressor import Regressor, RegressorSpec
from ..model.robot import RobotModel
from ..model.transmission import Transmission

#: Samples per cut-off period kept for friction (sample rate ≥ 50 × cut-off).
RATE_PER_CUTOFF = 50
#: Speed below which an actuator counts as not moving in a recording [rad/s or m/s].
MOVING_SPEED = 1e-3
#: An actuator slower than this fraction of the fastest one in a recording is held.
HELD_FRACTION = 0.05
#: Width of the window of the local peak speed of the standstill test [s].
LOCAL_WINDOW = 2.0


@dataclass
class RigidBodyModel:
    """The rigid-body (and rotor-inertia) part of a dynamic model.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    parameters : (p,) ndarray
        Standard parameters of ``regressor`` (inertial, then rotor inertias if any).
    rotor_inertia : bool
        Whether ``parameters`` ends with one rotor inertia per actuator.
    source : str
        Where the parameters come from (RESULT.yaml or the URDF).
    """

    robot: RobotModel
    parameters: np.ndarray
    rotor_inertia: bool
    source: str

    @classmethod
    def from_urdf(cls, robot: RobotModel) -> RigidBodyModel:
        """The URDF's inertial parameters, no rotor inertia.

        Parameters
        ----------
        robot : RobotModel

        Returns
        -------
        RigidBodyModel
        """
        return cls(robot, robot.standard_parameters(), False, f'URDF {robot.urdf_source}')

    @classmethod
    def from_identified(cls, model: IdentifiedModel, source: str) -> RigidBodyModel:
        """The standard parameters behind an identified model, without its friction.

        Parameters
        ----------
        model : IdentifiedModel
            With standard parameters.
        source : str
            Its file, for messages.

        Returns
        -------
        RigidBodyModel

        Raises
        ------
        InputError
            If the model has no standard parameters (a RESULT.yaml of an older version).
        """
        if model.standard is None:
            raise InputError(f'{source}: no standard_parameters (written by an older version; '
                             'identify again)')
        reg = model.regressor
        columns = list(range(reg.n_inertial))
        if model.config.rotor_inertia:
            columns += [reg.actuator_index('Ia', m) for m in range(model.robot.n)]
        return cls(model.robot, np.asarray(model.standard)[columns],
                   model.config.rotor_inertia, source)

    def torque(self, q, qd, qdd, transmission: Transmission) -> np.ndarray:
        """Rigid-body and rotor-inertia joint torques.

        Parameters
        ----------
        q, qd, qdd : (N, n) ndarray
            Joint positions, velocities, accelerations.
        transmission : Transmission
            Coupling of the rotor inertias.

        Returns
        -------
        (N, n) ndarray
            [N·m or N].
        """
        spec = RegressorSpec(friction='none', rotor_inertia=self.rotor_inertia)
        return Regressor(self.robot, spec, transmission).compute(q, qd, qdd) @ self.parameters


@dataclass
class FrictionSamples:
    """Friction samples of one actuator, from one or more recordings.

    Parameters
    ----------
    actuator : str
        Its joint's name.
    u : (M,) ndarray
        Actuator velocity, joint-equivalent [rad/s or m/s].
    tau : (M,) ndarray
        Measured friction torque, filtered [N·m or N].
    used : (M,) ndarray of bool
        Samples compared with a model (moving, away from segment ends).
    segments : list of (int, int)
        ``[start, stop)`` rows filtered as one piece.
    fs : float
        Sample rate [Hz].
    cutoff_hz : float
        Low-pass cut-off of the measured torque [Hz].
    order : int
        Butterworth order of one pass.
    sources : list of str
        The recordings.
    """

    actuator: str
    u: np.ndarray
    tau: np.ndarray
    used: np.ndarray
    segments: list[tuple[int, int]]
    fs: float
    cutoff_hz: float
    order: int
    sources: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Number of used samples."""
        return int(self.used.sum())

    @property
    def correlation(self) -> float:
        """Used samples per independent one: the filtered residuals are correlated over
        ``fs / (2.5 cutoff)`` samples (the automatic decimation of identification)."""
        return max(1.0, self.fs / (2.5 * self.cutoff_hz))

    @property
    def peak_speed(self) -> float:
        """99th percentile of the used samples' speed [rad/s or m/s]."""
        return float(np.percentile(np.abs(self.u[self.used]), 99)) if self.count else 0.0

    def filtered(self, x: np.ndarray) -> np.ndarray:
        """A model output passed through the measured torque's low-pass, at the used samples.

        Parameters
        ----------
        x : (M,) or (M, k) ndarray
            Model values at every sample.

        Returns
        -------
        (M_used,) or (M_used, k) ndarray
        """
        out = np.empty_like(x)
        for a, b in self.segments:
            out[a:b] = lowpass(x[a:b], self.fs, self.cutoff_hz, self.order)
        return out[self.used]


def friction_samples(robot: RobotModel, dataset: Dataset, rigid: RigidBodyModel,
                     config: IdentificationConfig, standstill_time: float = 0.1,
                     standstill_fraction: float = 0.02) -> dict[str, FrictionSamples]:
    """Friction samples of every actuator that moves in a recording.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    dataset : Dataset
        A recording (a joint-wise cosine experiment, or any motion).
    rigid : RigidBodyModel
        The rigid-body model subtracted from the measured torque.
    config : IdentificationConfig
        Cut-off, filter order, recorded velocity (as for identification).
    standstill_time : float
        [s]; a stretch this long below ``standstill_fraction`` × peak speed is a standstill.
    standstill_fraction : float
        Fraction of the actuator's peak speed in that recording.

    Returns
    -------
    dict of str to FrictionSamples
        Per actuator (joint name) that moves, joint order.

    Raises
    ------
    InputError
        For bad data (``preprocess``).
    """
    p = preprocess(dataset, robot, config)
    transmission = dataset.transmission_for(robot)
    gear = Regressor(robot, RegressorSpec(friction='none'), transmission).gear
    step = max(1, int(p.fs // (RATE_PER_CUTOFF * p.cutoff_hz)))
    fs = p.fs / step
    peaks = np.percentile(np.abs(p.qd @ gear.T), 99, axis=0)
    moving_joints = peaks >= max(MOVING_SPEED, HELD_FRACTION * peaks.max())
    pieces: dict[str, list] = {}
    for a, b in p.spans():
        rows = np.arange(a, b, step)
        q, qd, qdd, tau = (x[rows] for x in (p.q, p.qd, p.qdd, p.tau))
        measured = (tau - rigid.torque(q, qd, qdd, transmission)) @ np.linalg.inv(gear)
        u = p.sharp_velocity[rows] @ gear.T
        inner = np.zeros(len(rows), bool)
        trim = math.ceil(p.trim / step)
        inner[trim:len(rows) - trim] = True
        for m in np.flatnonzero(moving_joints):
            name = robot.joint_names[m]
            kept = inner & _outside_standstill(u[:, m], fs, standstill_time, standstill_fraction)
            pieces.setdefault(name, []).append(FrictionSamples(
                name, u[:, m], measured[:, m], kept, [(0, len(rows))], fs, p.cutoff_hz,
                p.order, [p.source]))
    return {name: merge_samples(pieces[name]) for name in robot.joint_names if name in pieces}


def merge_samples(parts: list[FrictionSamples]) -> FrictionSamples:
    """One actuator's samples from several segments or recordings as one set.

    Parameters
    ----------
    parts : list of FrictionSamples
        Of the same actuator.

    Returns
    -------
    FrictionSamples

    Raises
    ------
    InputError
        If the parts have different sample rates or cut-offs after preprocessing.
    """
    first = parts[0]
    if len({(round(p.fs, 6), p.cutoff_hz, p.order) for p in parts}) > 1:
        sources = ', '.join(dict.fromkeys(s for p in parts for s in p.sources))
        raise InputError(f'friction samples of {first.actuator}: the recordings {sources} have '
                         'different sample rates or cut-offs after preprocessing; give one '
                         'cut-off (--cutoff-hz) or record at one rate')
    offsets = np.cumsum([0] + [len(p.u) for p in parts])
    return FrictionSamples(
        first.actuator, *(np.concatenate([getattr(p, k) for p in parts])
                          for k in ('u', 'tau', 'used')),
        segments=[(a + o, b + o) for p, o in zip(parts, offsets) for a, b in p.segments],
        fs=first.fs, cutoff_hz=first.cutoff_hz, order=first.order,
        sources=list(dict.fromkeys(s for p in parts for s in p.sources)))


def _outside_standstill(u, fs, standstill_time, fraction):
    """Mask of the samples outside standstills (module docstring)."""
    speed = np.abs(u)
    local_peak = scipy.ndimage.maximum_filter1d(speed, max(1, int(LOCAL_WINDOW * fs)))
    slow = speed < np.maximum(fraction * local_peak, 0.5 * MOVING_SPEED)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], slow.astype(int), [0]])))
    keep = np.ones(len(u), bool)
    for start, stop in zip(edges[::2], edges[1::2]):
        if stop - start >= standstill_time * fs:
            keep[start:stop] = False
    return keep
