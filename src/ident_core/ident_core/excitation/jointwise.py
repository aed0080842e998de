"""Joint-wise cosine experiments for friction identification (stribeck_friction_sa_ga_2020 §2.2,
§4.3; docs/methods.md §8).

One joint moves, the others are held. The joint runs cosines ``q(t) = c − A cos(2π t / T)``
(start at rest) of two amplitudes and periods one after the other: a fast one covers the high
speeds, a slow one the low speeds where the Stribeck effect lives. Each cosine is a one-harmonic
Fourier series, so the experiment runs as the stages of an ``ExcitationPlan``.

File format (``format: robot-ident/jointwise/1``, :class:`JointwiseFile`)::

    name: jointwise_joint1
    joint: joint1
    joint_names: [joint1, joint2, ...]
    hold: [0.0, -0.5, ...]       # rad (m): every joint; the moving joint's entry is the centre c
    cosines:                     # run in this order
      - {amplitude: 0.8, period: 4.0, periods: 3}     # rad (m), s
      - {amplitude: 0.1, period: 12.0, periods: 2}
    # written by robot-ident excite (optional): source, margins, urdf_sha256
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, PositiveFloat, PositiveInt

from ..errors import ExcitationError, InputError
from ..files import read_yaml
from ..model.robot import RobotModel
from ..motion.plan import ExcitationPlan
from ..motion.segments import CHECK_STEP
from ..schema import Document, Schema, parse
from .config import JointLimitOverride, default_config
from .constraints import Constraints
from .fourier import FourierTrajectory, trajectory_from_dict

FORMAT = 'robot-ident/jointwise/1'
#: Default cosines: fraction of the usable half-range and of the velocity limit, periods run.
FAST = (0.8, 0.6, 3)
SLOW = (0.15, 0.03, 2)
#: Cosines of ``friction_experiment``: the fast one as ``FAST`` over less of the room (the joint
#: starts where it stands, often near a limit); the slow one's share of the room and periods.
FRICTION_FAST = (0.4, 0.6, 3)
FRICTION_SLOW = (0.1, 2)


class CosineSpec(Schema):
    """One cosine ``c − A cos(2π t / T)``, run for a number of periods.

    Parameters
    ----------
    amplitude : float
        A [rad or m].
    period : float
        T [s].
    periods : int
        Periods run.
    """

    amplitude: PositiveFloat
    period: PositiveFloat
    periods: PositiveInt = 1


class JointwiseFile(Document):
    """A joint-wise experiment file (module docstring); the ``format`` field may be left out
    when it is parsed as this type (``load_experiment`` tells the types by it).

    Parameters
    ----------
    format : str
        ``robot-ident/jointwise/1``.
    name : str, optional
        Label (default: the file stem).
    joint : str
        The moving joint.
    joint_names : list of str
        (n,) every joint.
    hold : list of float
        (n,) positions; the moving joint's entry is the cosines' centre [rad or m].
    cosines : list of CosineSpec
        Run in order.
    source, margins, urdf_sha256 : optional
        Provenance written by ``robot-ident excite``.
    """

    kind = 'joint-wise experiment file'
    format: Literal[FORMAT] = FORMAT
    name: str | None = None
    joint: str
    joint_names: list[str] = Field(min_length=1)
    hold: list[float]
    cosines: list[CosineSpec] = Field(min_length=1)
    source: str | None = None
    margins: dict | None = None
    urdf_sha256: str | None = None

    def plain(self) -> dict:
        """The content as written: the fields that are set, in their order.

        Returns
        -------
        dict
            ``model_dump()`` without the optional fields that are None.
        """
        return self.model_dump(exclude_none=True)


@dataclass
class JointwiseExperiment:
    """One joint moving on cosines, the others held.

    Parameters
    ----------
    joint : str
        The moving joint.
    joint_names : list of str
        (n,) every joint, in the order of ``hold``.
    hold : (n,) ndarray
        Positions of the held joints; the moving joint's entry is the cosines' centre
        [rad or m].
    cosines : list of CosineSpec
        Run in order.
    name : str
        Label.
    extra : dict
        Provenance kept from the file (source, margins, urdf_sha256).

    Raises
    ------
    InputError
        If ``joint`` is not in ``joint_names`` or ``hold`` has another length.
    """

    joint: str
    joint_names: list[str]
    hold: np.ndarray
    cosines: list[CosineSpec]
    name: str = 'jointwise'
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.hold = np.asarray(self.hold, dtype=float)
        if self.joint not in self.joint_names:
            raise InputError(f'joint-wise experiment {self.name!r}: joint {self.joint} is not '
                             f'among {", ".join(self.joint_names)}')
        if self.hold.shape != (len(self.joint_names),):
            raise InputError(f'joint-wise experiment {self.name!r}: hold needs '
                             f'{len(self.joint_names)} positions, got {len(self.hold)}')

    @property
    def index(self) -> int:
        """Index of the moving joint."""
        return self.joint_names.index(self.joint)

    def stages(self, held: np.ndarray | None = None) -> list[FourierTrajectory]:
        """The cosines as one-harmonic Fourier series (``ExcitationPlan`` stages).

        Parameters
        ----------
        held : (n,) array_like, optional
            Positions of the other joints (e.g. where the robot stands now); default ``hold``.
            The moving joint's centre is always ``hold``'s.

        Returns
        -------
        list of FourierTrajectory
        """
        q0 = self.hold.copy() if held is None else np.asarray(held, dtype=float).copy()
        q0[self.index] = self.hold[self.index]
        out = []
        for k, c in enumerate(self.cosines):
            wf = 2 * math.pi / c.period
            a, b = np.zeros((len(q0), 1)), np.zeros((len(q0), 1))
            b[self.index, 0] = c.amplitude * wf        # q = q0 − (b / wf) cos(wf t)
            out.append(FourierTrajectory(list(self.joint_names), wf, q0.copy(), a, b,
                                         c.periods, f'{self.name}_{k + 1}'))
        return out

    @property
    def duration(self) -> float:
        """Time of the cosines, transitions excluded [s]."""
        return sum(c.period * c.periods for c in self.cosines)

    @classmethod
    def from_file(cls, doc: JointwiseFile, source: str | Path,
                  default_name: str = 'jointwise') -> JointwiseExperiment:
        """The experiment of a joint-wise file's content.

        Parameters
        ----------
        doc : JointwiseFile
            The validated content.
        source : str or Path
            Where it comes from, for error messages.
        default_name : str
            Name when the content has none.

        Returns
        -------
        JointwiseExperiment

        Raises
        ------
        InputError
            If ``joint`` is not in ``joint_names`` or ``hold`` has another length (naming the
            source).
        """
        extra = {k: getattr(doc, k) for k in ('source', 'margins', 'urdf_sha256')
                 if getattr(doc, k) is not None}
        try:
            return cls(doc.joint, list(doc.joint_names), np.array(doc.hold), list(doc.cosines),
                       doc.name or default_name, extra)
        except InputError as exc:
            raise InputError(f'{source}: {exc}') from None

    def to_file(self) -> JointwiseFile:
        """The joint-wise file's content (``to_file().write(path)`` saves it).

        Returns
        -------
        JointwiseFile
            The ``robot-ident/jointwise/1`` fields, then the ``extra`` ones.
        """
        return JointwiseFile(name=self.name, joint=self.joint,
                             joint_names=list(self.joint_names), hold=self.hold.tolist(),
                             cosines=list(self.cosines), **self.extra)


def load_experiment(path: str | Path) -> FourierTrajectory | JointwiseExperiment:
    """Load an excitation file: a Fourier trajectory or a joint-wise experiment (by its
    ``format`` field).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    FourierTrajectory or JointwiseExperiment

    Raises
    ------
    InputError
        As ``load_trajectory``, or for a joint-wise file with a missing or wrong field (naming
        the file and the field).
    """
    path = Path(path)
    data = read_yaml(path, 'excitation file')
    if isinstance(data, dict) and data.get('format') == FORMAT:
        return JointwiseExperiment.from_file(parse(JointwiseFile, data, path), path, path.stem)
    return trajectory_from_dict(data, str(path), default_name=path.stem)


def default_cosines(lower: float, upper: float, velocity: float, acceleration: float,
                    centre: float, periods: tuple[int, int] | None = None, fast=FAST,
                    slow=SLOW) -> list[CosineSpec]:
    """A fast and a slow cosine that fit a joint's limits around a centre.

    The fast cosine spans ``fast[0]`` of the room on the narrower side of the centre and
    reaches ``fast[1]`` of the velocity limit (less if the acceleration limit binds); the slow
    one ``slow[0]`` of the room at ``slow[1]`` of the velocity limit.

    Parameters
    ----------
    lower, upper : float
        Position limits, margin applied [rad or m].
    velocity, acceleration : float
        Velocity and acceleration limits, margin applied.
    centre : float
        The cosines' centre.
    periods : (int, int), optional
        Periods of the fast and the slow cosine (default ``fast[2]``, ``slow[2]``).
    fast, slow : (float, float, int)
        Fraction of the half-range, fraction of the velocity limit, periods.

    Returns
    -------
    list of CosineSpec
        Fast, then slow.

    Raises
    ------
    InputError
        If the centre is not inside the limits.
    """
    room = min(centre - lower, upper - centre)
    if room <= 0:
        raise InputError(f'centre {centre:.4g} is not inside the limits [{lower:.4g}, '
                         f'{upper:.4g}]')
    out = []
    counts = periods or (fast[2], slow[2])
    for (share, speed_share, _), count in zip((fast, slow), counts):
        amplitude = share * room
        w = min(speed_share * velocity / amplitude, math.sqrt(0.6 * acceleration / amplitude))
        out.append(CosineSpec(amplitude=amplitude, period=2 * math.pi / w, periods=count))
    return out


def design_jointwise(constraints: Constraints, joint: str, hold=None,
                     cosines: list[CosineSpec] | None = None, name: str | None = None,
                     periods: tuple[int, int] | None = None) -> JointwiseExperiment:
    """A joint-wise experiment checked against every constraint of an excitation.

    Parameters
    ----------
    constraints : Constraints
        Limits (margin applied), torque limits and collision model of the robot.
    joint : str
        The moving joint.
    hold : (n,) array_like, optional
        Positions of all joints, the moving joint's entry its centre; default: every joint at 0
        (clipped into its limits), the moving joint in the middle of its range.
    cosines : list of CosineSpec, optional
        Default ``default_cosines``.
    name : str, optional
        Default ``jointwise_<joint>``.
    periods : (int, int), optional
        Periods of the default cosines.

    Returns
    -------
    JointwiseExperiment
        With ``margins`` (distance to each limit) and ``urdf_sha256`` in ``extra``.

    Raises
    ------
    InputError
        For an unknown joint or a hold of the wrong length.
    ExcitationError
        If the motion from ``hold`` through every cosine and back to rest violates a position,
        velocity, acceleration or torque limit, or comes closer to a collision than allowed.
    """
    robot, limits = constraints.robot, constraints.limits
    j = robot.joint_index(joint)
    if hold is None:
        hold = np.clip(np.zeros(robot.n), limits.lower, limits.upper)
        hold[j] = (limits.lower[j] + limits.upper[j]) / 2
    experiment = JointwiseExperiment(joint, list(robot.joint_names), hold, cosines or [],
                                     name or f'jointwise_{joint}')
    if cosines is None:
        experiment.cosines = default_cosines(limits.lower[j], limits.upper[j],
                                             limits.velocity[j], limits.acceleration[j],
                                             experiment.hold[j], periods)
    plan = ExcitationPlan(experiment.stages(), hold, limits)
    t = np.arange(0.0, plan.duration, CHECK_STEP * 10)
    motion = plan.sample(t)
    problem = constraints.dynamic_violation(t, *motion)
    if problem:
        raise ExcitationError(f'joint-wise experiment of {joint}: {problem}')
    experiment.extra = {'margins': constraints.margins(t, *motion),
                        'urdf_sha256': robot.urdf_sha256()}
    return experiment


def friction_constraints(robot: RobotModel, velocity, acceleration: float) -> Constraints:
    """Limits of joint-wise friction experiments: the URDF's positions (default margin), the
    given velocities and acceleration, no torque check (a nominal model has no friction).

    Parameters
    ----------
    robot : RobotModel
        The robot.
    velocity : (n,) array_like
        Velocity limit per joint [rad/s or m/s].
    acceleration : float
        Acceleration limit of every joint [rad/s² or m/s²].

    Returns
    -------
    Constraints
    """
    config = default_config('friction experiment limits')
    joints = {j: JointLimitOverride(velocity=float(v)) for j, v in zip(robot.joint_names,
                                                                       velocity)}
    limits = config.limits.updated(acceleration=acceleration, torque=False, joints=joints)
    return Constraints(robot, config.updated(limits=limits))


def friction_experiment(constraints: Constraints, joint: str, hold, slow_speed: float,
                        name: str | None = None) -> JointwiseExperiment:
    """The joint-wise friction experiment of one joint around where the robot stands: a fast
    cosine (``FRICTION_FAST``), then a slow one peaking at ``slow_speed``
    (``FRICTION_SLOW``), the other joints held.

    The slow cosine should peak at about 3·vs, where the Stribeck hump lives: on the
    simulated arm with the friction of stribeck_friction_sa_ga_2020 Table 3 (vs 0.013–0.028
    rad/s), a peak of 0.08 rad/s left too few samples on the hump (fs 2.8–4.5 % high) and
    0.04 rad/s recovered fs within 0.5 % (``benchmarks/bench_friction.py``).

    Parameters
    ----------
    constraints : Constraints
        ``friction_constraints``.
    joint : str
        The moving joint.
    hold : (n,) array_like
        Where every joint stands [rad or m]; the moving joint's cosines are centred there.
    slow_speed : float
        Peak speed of the slow cosine [rad/s or m/s].
    name : str, optional
        Default ``jointwise_<joint>``.

    Returns
    -------
    JointwiseExperiment

    Raises
    ------
    InputError
        For an unknown joint or a hold outside the limits.
    ExcitationError
        As ``design_jointwise``.
    """
    robot, limits = constraints.robot, constraints.limits
    j = robot.joint_index(joint)
    share, periods = FRICTION_SLOW
    cosines = default_cosines(limits.lower[j], limits.upper[j], limits.velocity[j],
                              limits.acceleration[j], hold[j], fast=FRICTION_FAST,
                              slow=(share, slow_speed / limits.velocity[j], periods))
    return design_jointwise(constraints, joint, hold, cosines, name)

