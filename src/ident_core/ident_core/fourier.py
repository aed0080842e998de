"""Excitation trajectories as finite Fourier series (methods §4, payload_identification_2017
eq. (14), Swevers 1997), and their YAML file format.

    q_i(t)   = q0_i + Σ_l a_il/(wf l) sin(wf l t) − b_il/(wf l) cos(wf l t)
    qd_i(t)  = Σ_l a_il cos(wf l t) + b_il sin(wf l t)
    qdd_i(t) = Σ_l −a_il wf l sin(wf l t) + b_il wf l cos(wf l t)          l = 1..N

File format (``format: robot-ident/excitation/1``)::

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

import numpy as np
import yaml

from .errors import InputError
from .results import write_atomic

FORMAT = 'robot-ident/excitation/1'
_KNOWN = {'format', 'name', 'joint_names', 'wf', 'period', 'periods', 'q0', 'a', 'b', 'source',
          'objectives', 'margins', 'urdf_sha256'}


@dataclass
class FourierBasis:
    """Eq. (14) sampled at times t (M,), for N harmonics: each of q − q0, qd and qdd is
    ``A a_iᵀ + B b_iᵀ`` per joint, with the (M, N) matrices of ``matrices``.

    Attributes:
        t: (M,) s. step: spacing h of the samples, s (0 if not equally spaced).
        s, c: (M, N) sin(wf l t), cos(wf l t). wl: (N,) wf·l, rad/s.
    """

    t: np.ndarray
    step: float
    s: np.ndarray
    c: np.ndarray
    wl: np.ndarray

    @classmethod
    def at(cls, wf: float, harmonics: int, t, step: float = 0.0) -> 'FourierBasis':
        """The basis at times t (M,) s."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        wl = wf * np.arange(1, harmonics + 1)
        arg = np.outer(t, wl)
        return cls(t, step, np.sin(arg), np.cos(arg), wl)

    @classmethod
    def over_period(cls, wf: float, harmonics: int, samples: int) -> 'FourierBasis':
        """``samples`` equally spaced times over one period, from t = 0."""
        period = 2 * math.pi / wf
        return cls.at(wf, harmonics, np.arange(samples) * period / samples, period / samples)

    @cached_property
    def matrices(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """((A, B) of q − q0, (A, B) of qd, (A, B) of qdd): the derivatives of the samples
        with respect to the coefficients a_il and b_il, each (M, N)."""
        s, c, wl = self.s, self.c, self.wl
        return (s / wl, -c / wl), (c, s), (-s * wl, c * wl)

    def motion(self, a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q − q0, qd, qdd), each (M, n), of coefficients a, b (n, N)."""
        return tuple(pa @ a.T + pb @ b.T for pa, pb in self.matrices)

    def taylor(self, a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n,) bounds on how far q, qd, qdd can exceed their sampled extremes between samples
        ``step`` apart: ``sup|x''| h²/8`` with ``sup|x''| <= Σ_l |(a_l, b_l)| (wf l)^(k+1)``."""
        r = np.hypot(a, b)
        h2 = self.step ** 2 / 8
        return tuple(r @ self.wl ** (k + 1) * h2 for k in (0, 1, 2))


@dataclass
class FourierTrajectory:
    """A finite Fourier series per joint.

    Attributes:
        joint_names: (n,) joints in row order.
        wf: base angular frequency, rad/s.
        q0: (n,) offsets, rad or m.
        a, b: (n, N) coefficients, rad/s or m/s.
        periods: periods to run.
        name: label (file stem, paper table, ...).
        extra: further fields kept from the file (objectives, margins, urdf_sha256, source).
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
    def n(self) -> int:
        return len(self.joint_names)

    @property
    def harmonics(self) -> int:
        return self.a.shape[1]

    @property
    def period(self) -> float:
        """2π / wf, s."""
        return 2 * math.pi / self.wf

    @property
    def duration(self) -> float:
        """periods × period, s."""
        return self.periods * self.period

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Closed-form positions, velocities and accelerations of eq. (14).

        Args:
            t: scalar or (M,) times, s (t = 0 is the start of a period).

        Returns:
            q, qd, qdd: (M, n) arrays (M = 1 for a scalar t).
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        f, qd, qdd = FourierBasis.at(self.wf, self.harmonics, t).motion(self.a, self.b)
        return self.q0 + f, qd, qdd

    def to_dict(self) -> dict:
        """The YAML content (plain Python types)."""
        out = {'format': FORMAT, 'name': self.name, 'joint_names': list(self.joint_names),
               'wf': float(self.wf), 'period': float(self.period), 'periods': int(self.periods),
               'q0': self.q0.tolist(), 'a': self.a.tolist(), 'b': self.b.tolist()}
        out.update(self.extra)
        return out

    def save(self, path: str | Path) -> Path:
        """Write the YAML file atomically."""
        return write_atomic(path, yaml.safe_dump(self.to_dict(), sort_keys=False, width=120,
                                                  default_flow_style=None, allow_unicode=True))


def load_trajectory(path: str | Path) -> FourierTrajectory:
    """Load a trajectory YAML file (format above).

    Raises:
        InputError: missing file, bad YAML, or a field with a wrong shape or value, naming the
            file and the field.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise InputError(f'{path}: trajectory file not found') from None
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f'{path}: cannot read trajectory: {exc}') from None
    return trajectory_from_dict(data, str(path), default_name=path.stem)


def trajectory_from_dict(data, source: str, default_name: str = 'excitation') -> FourierTrajectory:
    """Build a trajectory from the file content; ``source`` names it in errors.

    Raises:
        InputError: as ``load_trajectory``.
    """
    if not isinstance(data, dict):
        raise InputError(f'{source}: a trajectory file must hold a mapping')
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise InputError(f'{source}: unknown field(s) {", ".join(unknown)}')
    if data.get('format', FORMAT) != FORMAT:
        raise InputError(f'{source}: field format: {data["format"]!r} is not {FORMAT}')
    names = data.get('joint_names')
    if not isinstance(names, list) or not names or not all(isinstance(j, str) for j in names):
        raise InputError(f'{source}: field joint_names must be a list of joint names')
    n = len(names)
    wf = _frequency(data, source)
    a = _array(data, 'a', source, ndim=2)
    b = _array(data, 'b', source, ndim=2)
    q0 = _array(data, 'q0', source, ndim=1)
    for key, arr in (('q0', q0), ('a', a), ('b', b)):
        if arr.shape[0] != n:
            raise InputError(f'{source}: field {key} has {arr.shape[0]} rows for {n} joints')
    if a.shape != b.shape or a.shape[1] == 0:
        raise InputError(f'{source}: fields a and b must both be joints x harmonics (N >= 1), '
                         f'got {a.shape} and {b.shape}')
    periods = data.get('periods', 1)
    if not isinstance(periods, int) or isinstance(periods, bool) or periods < 1:
        raise InputError(f'{source}: field periods must be a positive integer, got {periods!r}')
    extra = {k: data[k] for k in ('source', 'objectives', 'margins', 'urdf_sha256') if k in data}
    return FourierTrajectory(list(names), wf, q0, a, b, periods,
                             str(data.get('name', default_name)), extra)


def _frequency(data, source) -> float:
    if 'wf' in data:
        wf = _number(data['wf'], source, 'wf')
        if 'period' in data and not math.isclose(2 * math.pi / wf,
                                                 _number(data['period'], source, 'period'),
                                                 rel_tol=1e-6):
            raise InputError(f'{source}: fields wf and period disagree (period must be 2π/wf)')
    elif 'period' in data:
        wf = 2 * math.pi / _number(data['period'], source, 'period')
    else:
        raise InputError(f'{source}: give field wf (rad/s) or period (s)')
    return wf


def _number(value, source, key) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
            or not math.isfinite(value):
        raise InputError(f'{source}: field {key} must be a positive number, got {value!r}')
    return float(value)


def _array(data, key, source, ndim) -> np.ndarray:
    if key not in data:
        raise InputError(f'{source}: field {key} missing')
    try:
        arr = np.array(data[key], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{source}: field {key} must hold numbers') from None
    if arr.ndim != ndim:
        raise InputError(f'{source}: field {key} must be a {"list" if ndim == 1 else "list of rows"}'
                         f' of numbers')
    if not np.all(np.isfinite(arr)):
        raise InputError(f'{source}: field {key} holds NaN or infinite values')
    return arr
