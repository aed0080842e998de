"""Excitation trajectories as finite Fourier series (docs/methods.md §6;
payload_identification_2017 eq. (14); Swevers et al. 1997), and their YAML file format.

    q_i(t)   = q0_i + Σ_l a_il/(wf l) sin(wf l t) − b_il/(wf l) cos(wf l t)
    qd_i(t)  = Σ_l a_il cos(wf l t) + b_il sin(wf l t)
    qdd_i(t) = Σ_l −a_il wf l sin(wf l t) + b_il wf l cos(wf l t)          l = 1..N

File format (``format: robot-ident/excitation/1``, :class:`TrajectoryFile`)::

    name: payload_identification_2017_table1
    joint_names: [joint1, joint2]
    wf: 1.2566              # rad/s; or give period: 5.0 (s)
    periods: 4              # periods to run (default 1)
    q0: [0.0, -1.5]         # rad (m for prismatic joints)
    a: [[0.09, 0.06], [-0.03, -0.05]]   # joints x harmonics, rad/s
    b: [[-1.07, 0.10], [-0.38, -0.22]]
    source: free text       # optional
    # written by the optimiser (optional): objectives, margins, urdf_sha256
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

import numpy as np
import pydantic
from pydantic import Field, PositiveInt

from ..errors import InputError
from ..schema import Document, parse

FORMAT = 'robot-ident/excitation/1'
EXTRA_FIELDS = ('source', 'objectives', 'margins', 'urdf_sha256')


class TrajectoryFile(Document):
    """A trajectory file (module docstring); the ``format`` field may be left out.

    Parameters
    ----------
    format : str
        ``robot-ident/excitation/1``.
    name : str, optional
        Label (default: the file stem).
    joint_names : list of str
        (n,) joints in row order.
    wf : float, optional
        Base angular frequency [rad/s].
    period : float, optional
        ``2π / wf`` [s]; give ``wf`` or ``period`` (or both, equal).
    periods : int
        Periods to run.
    q0 : list of float
        (n,) offsets per joint [rad or m].
    a, b : list of list of float
        (n, N) coefficients, joints × harmonics [rad/s or m/s]: ``a`` of the sines, ``b`` of
        the cosines of q (module docstring).
    source, objectives, margins, urdf_sha256 : optional
        Provenance written by the optimiser, kept as they are.
    """

    kind = 'trajectory file'
    format: Literal[FORMAT] = FORMAT
    name: str | None = None
    joint_names: list[str] = Field(min_length=1)
    wf: float | None = Field(default=None, gt=0)
    period: float | None = Field(default=None, gt=0)
    periods: PositiveInt = 1
    q0: list[float]
    a: list[list[float]]
    b: list[list[float]]
    source: str | None = None
    objectives: dict | None = None
    margins: dict | None = None
    urdf_sha256: str | None = None

    @pydantic.model_validator(mode='after')
    def _frequency(self):
        if self.wf is None and self.period is None:
            raise ValueError('give field wf (rad/s) or period (s)')
        if self.wf is not None and self.period is not None \
                and not math.isclose(2 * math.pi / self.wf, self.period, rel_tol=1e-6):
            raise ValueError('fields wf and period disagree (period must be 2π/wf)')
        return self

    def plain(self) -> dict:
        """The content as written: the fields that are set, in their order.

        Returns
        -------
        dict
            ``model_dump()`` without the optional fields that are None.
        """
        return self.model_dump(exclude_none=True)


@dataclass
class FourierBasis:
    """Eq. (14) sampled at M times for N harmonics.

    Each of q − q0, qd and qdd is ``A a_iᵀ + B b_iᵀ`` per joint, with the (M, N) matrices of
    ``matrices``.

    Parameters
    ----------
    t : (M,) ndarray
        Sample times [s].
    step : float
        Spacing h of the samples [s] (0 if not equally spaced).
    s, c : (M, N) ndarray
        ``sin(wf l t)``, ``cos(wf l t)``.
    wl : (N,) ndarray
        ``wf·l`` [rad/s].
    """

    t: np.ndarray
    step: float
    s: np.ndarray
    c: np.ndarray
    wl: np.ndarray

    @classmethod
    def at(cls, wf: float, harmonics: int, t, step: float = 0.0) -> FourierBasis:
        """The basis at given times.

        Parameters
        ----------
        wf : float
            Base angular frequency [rad/s].
        harmonics : int
            N.
        t : float or (M,) array_like
            Times [s].
        step : float
            Their spacing [s] if equal (used by ``taylor``), else 0.

        Returns
        -------
        FourierBasis
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        wl = wf * np.arange(1, harmonics + 1)
        arg = np.outer(t, wl)
        return cls(t, step, np.sin(arg), np.cos(arg), wl)

    @classmethod
    def over_period(cls, wf: float, harmonics: int, samples: int) -> FourierBasis:
        """The basis at equally spaced times over one period, from t = 0.

        Parameters
        ----------
        wf : float
            Base angular frequency [rad/s].
        harmonics : int
            N.
        samples : int
            M.

        Returns
        -------
        FourierBasis
        """
        period = 2 * math.pi / wf
        return cls.at(wf, harmonics, np.arange(samples) * period / samples, period / samples)

    @cached_property
    def matrices(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """((A, B) of q − q0, (A, B) of qd, (A, B) of qdd), each (M, N): the derivatives of the
        samples with respect to the coefficients a_il and b_il."""
        s, c, wl = self.s, self.c, self.wl
        return (s / wl, -c / wl), (c, s), (-s * wl, c * wl)

    def motion(self, a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Samples of the motion of given coefficients (module docstring, eq. (14) [1]_).

        Parameters
        ----------
        a, b : (n, N) ndarray
            Coefficients of n joints for the basis's N harmonics [rad/s or m/s].

        Returns
        -------
        q_minus_q0, qd, qdd : (M, n) ndarray
            Positions less their offsets q0 [rad or m], velocities [rad/s or m/s] and
            accelerations [rad/s² or m/s²] of the n joints at the basis's M sample times.

        References
        ----------
        .. [1] Swevers J., Ganseman C., Tükel D. B., De Schutter J., Van Brussel H., "Optimal
           robot excitation and identification", IEEE Transactions on Robotics and Automation
           13(5):730–740, 1997, doi:10.1109/70.631234.
        """
        return tuple(pa @ a.T + pb @ b.T for pa, pb in self.matrices)

    def taylor(self, a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """How far q, qd, qdd can exceed their sampled extremes between samples.

        Parameters
        ----------
        a, b : (n, N) ndarray
            Coefficients [rad/s or m/s].

        Returns
        -------
        bq, bv, ba : (n,) ndarray
            ``sup|x''| h²/8`` per joint for samples ``step`` = h apart, with
            ``sup|x''| <= Σ_l |(a_l, b_l)| (wf l)^(k+1)`` (k = 0, 1, 2 for q, qd, qdd).
        """
        r = np.hypot(a, b)
        h2 = self.step ** 2 / 8
        return tuple(r @ self.wl ** (k + 1) * h2 for k in (0, 1, 2))


@dataclass
class FourierTrajectory:
    """A finite Fourier series per joint.

    Parameters
    ----------
    joint_names : list of str
        (n,) joints in row order.
    wf : float
        Base angular frequency [rad/s].
    q0 : (n,) ndarray
        Offsets [rad or m].
    a, b : (n, N) ndarray
        Coefficients [rad/s or m/s].
    periods : int
        Periods to run.
    name : str
        Label (file stem, paper table, ...).
    extra : dict
        Further fields kept from the file (objectives, margins, urdf_sha256, source).
    """

    joint_names: list[str]
    wf: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    periods: int = 1
    name: str = 'excitation'
    extra: dict = field(default_factory=dict)

    @property
    def harmonics(self) -> int:
        """Number of harmonics N."""
        return self.a.shape[1]

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    @property
    def period(self) -> float:
        """2π / wf [s]."""
        return 2 * math.pi / self.wf

    @property
    def duration(self) -> float:
        """Duration of all periods, ``periods × period`` [s]."""
        return self.periods * self.period

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Closed-form positions, velocities and accelerations of eq. (14).

        Parameters
        ----------
        t : float or (M,) array_like
            Times [s]; t = 0 is the start of a period.

        Returns
        -------
        q, qd, qdd : (M, n) ndarray
            M = 1 for a scalar t.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        f, qd, qdd = FourierBasis.at(self.wf, self.harmonics, t).motion(self.a, self.b)
        return self.q0 + f, qd, qdd

    @classmethod
    def from_file(cls, doc: TrajectoryFile, source: str | Path,
                  default_name: str = 'excitation') -> FourierTrajectory:
        """The trajectory of a trajectory file's content.

        Parameters
        ----------
        doc : TrajectoryFile
            The validated content.
        source : str or Path
            Where it comes from, for error messages.
        default_name : str
            Name when the content has none.

        Returns
        -------
        FourierTrajectory

        Raises
        ------
        InputError
            If ``q0``, ``a`` or ``b`` do not have a row per joint, ``a`` and ``b`` differ in
            shape or have no column, or a value is not finite (naming the source and the
            field).
        """
        n = len(doc.joint_names)
        q0, a, b = (_matrix(getattr(doc, key), key, source) for key in ('q0', 'a', 'b'))
        for key, arr in (('q0', q0), ('a', a), ('b', b)):
            if arr.shape[0] != n:
                raise InputError(f'{source}: field {key} has {arr.shape[0]} rows for {n} '
                                 'joints')
        if a.shape != b.shape or a.shape[1] == 0:
            raise InputError(f'{source}: fields a and b must both be joints x harmonics '
                             f'(N >= 1), got {a.shape} and {b.shape}')
        wf = doc.wf if doc.wf is not None else 2 * math.pi / doc.period
        extra = {k: getattr(doc, k) for k in EXTRA_FIELDS if getattr(doc, k) is not None}
        return cls(list(doc.joint_names), wf, q0, a, b, doc.periods, doc.name or default_name,
                   extra)

    def to_file(self) -> TrajectoryFile:
        """The trajectory file's content (``to_file().write(path)`` saves it).

        Returns
        -------
        TrajectoryFile
            The ``robot-ident/excitation/1`` fields (``wf`` and ``period``), then the ``extra``
            ones.
        """
        return TrajectoryFile(
            name=self.name, joint_names=list(self.joint_names), wf=float(self.wf),
            period=float(self.period), periods=int(self.periods), q0=self.q0.tolist(),
            a=self.a.tolist(), b=self.b.tolist(), **self.extra)


def load_trajectory(path: str | Path) -> FourierTrajectory:
    """Load a trajectory file (module docstring).

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    FourierTrajectory
        Named after the file's stem when the file gives no name.

    Raises
    ------
    InputError
        If the file is missing, not YAML, or a field has a wrong shape or value (naming the
        file and the field).
    """
    path = Path(path)
    return FourierTrajectory.from_file(TrajectoryFile.read(path), path, default_name=path.stem)


def trajectory_from_dict(data, source: str, default_name: str = 'excitation') \
        -> FourierTrajectory:
    """Build a trajectory from the content of a trajectory file.

    Parameters
    ----------
    data : dict
        The parsed file.
    source : str
        Where it comes from, for error messages.
    default_name : str
        Name when the content has none.

    Returns
    -------
    FourierTrajectory

    Raises
    ------
    InputError
        As ``load_trajectory``.
    """
    return FourierTrajectory.from_file(parse(TrajectoryFile, data, source), source, default_name)


def _matrix(rows, key: str, source: str) -> np.ndarray:
    """Rows of equal length as an array, finite."""
    if rows and isinstance(rows[0], list) and len({len(r) for r in rows}) > 1:
        raise InputError(f'{source}: field {key} must be a list of rows of equal length')
    arr = np.array(rows, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise InputError(f'{source}: field {key} holds NaN or infinite values')
    return arr
