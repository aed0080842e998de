"""Identification regressor: rigid body (Pinocchio) plus actuator columns (docs/methods.md §1).

    tau = Y(q, qd, qdd) · chi

``chi`` stacks, per link, the 10 standard inertial parameters in Pinocchio's order
``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (``pin.computeJointTorqueRegressor``), then, per
actuator, the optional rotor inertia ``Ia``, viscous ``fv`` and Coulomb ``fc`` friction and torque
``offset`` of payload_identification_2017 eq. (4), and for the (improved) Stribeck models the
static friction ``fs`` (stribeck_friction_sa_ga_2020). The Stribeck models are linear in
``fc, fs, fv, offset`` once their shape ``vs, delta, v_l`` per actuator is fixed
(``friction.models.basis``): the regressor holds that shape (``friction_shape``), and
identification searches it (``estimation.friction_shape``).

Actuator terms act on the motor side: with the normalised gear matrix ``G = diag(R)⁻¹ R``
(identity without a transmission, unit diagonal with coupling terms otherwise) and ``u = G qd``,
actuator ``m`` adds ``G[m]ᵀ (Ia_m (G[m]·qdd) + fv_m u_m + fc_m sign(u_m) + offset_m)`` to the
joint torques. The parameters are therefore joint-equivalent values (motor value × ratio²,
× |ratio| for Coulomb), the same numbers as joint-side parameters for uncoupled joints.
"""
from __future__ import annotations

import functools
from typing import Annotated, Literal

import numpy as np
import pinocchio as pin
import pydantic

from ..errors import InputError
from ..friction.models import LINEAR, SHAPE, basis
from ..schema import Schema
from .robot import RobotModel, configuration
from .transmission import Transmission

FRICTION_MODELS = ('none', 'coulomb-viscous', 'coulomb-viscous-offset', 'stribeck',
                   'improved-stribeck')
#: Friction models with shape parameters (vs, delta, v_l) outside the regressor.
STRIBECK_MODELS = ('stribeck', 'improved-stribeck')
#: Shape used when none is given (it only matters for the regressor's structure, e.g. the base
#: parameters; identification replaces it).
NOMINAL_SHAPE = {'vs': 0.05, 'delta': 2.0, 'v_l': 0.005}
#: Names of earlier versions; RESULT.yaml files that use them still load.
FRICTION_RENAMED = {'viscous-coulomb': 'coulomb-viscous',
                    'viscous-coulomb-offset': 'coulomb-viscous-offset'}


def _not_renamed(name):
    if name in FRICTION_RENAMED:
        raise ValueError(f'friction model {name!r} is now called {FRICTION_RENAMED[name]!r}')
    return name


#: A friction model name of the regressor (a renamed one is refused with its new name).
FrictionModel = Annotated[Literal[FRICTION_MODELS], pydantic.BeforeValidator(_not_renamed)]
INERTIAL_NAMES = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')


class RegressorSpec(Schema):
    """Which columns the identification model has.

    Parameters
    ----------
    friction : {'none', 'coulomb-viscous', 'coulomb-viscous-offset', 'stribeck', \
'improved-stribeck'}
        Friction model per actuator: none, ``fc sign(u) + fv u``, that plus a torque offset,
        or a Stribeck model (``friction.models``).
    rotor_inertia : bool
        Add one rotor inertia ``Ia`` column per actuator.
    """

    friction: FrictionModel = 'coulomb-viscous-offset'
    rotor_inertia: bool = False

    @property
    def actuator_terms(self) -> tuple[str, ...]:
        """Per-actuator parameter kinds, in column order (``Ia``, ``fv``, ``fc``, ``fs``,
        ``offset``)."""
        terms = ('Ia',) if self.rotor_inertia else ()
        if self.friction != 'none':
            terms += ('fv', 'fc')
        if self.friction in STRIBECK_MODELS:
            terms += ('fs',)
        if self.friction in ('coulomb-viscous-offset', 'improved-stribeck'):
            terms += ('offset',)
        return terms

    @property
    def shape_terms(self) -> tuple[str, ...]:
        """Shape parameters of the friction model per actuator (``vs``, ``delta``, ``v_l``)."""
        return SHAPE.get(self.friction, ())


class Regressor:
    """Stacked regressor of a robot for a given column specification.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    spec : RegressorSpec
        Which actuator columns to add.
    transmission : Transmission, optional
        Motor coupling of the actuator columns (identity if None).
    friction_shape : dict of str to (n,) array_like, optional
        Stribeck models: ``vs`` [rad/s], ``delta``, ``v_l`` [rad/s] per actuator (default
        ``NOMINAL_SHAPE``).

    Attributes
    ----------
    gear : (n, n) ndarray
        Normalised gear matrix ``G``; motor velocities are ``G qd``.
    names : list of str
        (p,) column names: ``m1 … Izz<n>``, then ``Ia1 …``, ``fv1 …``, ``fc1 …``, ``offset1 …``.
    """

    def __init__(self, robot: RobotModel, spec: RegressorSpec,
                 transmission: Transmission | None = None, friction_shape: dict | None = None):
        self.robot = robot
        self.spec = spec
        shape = friction_shape or NOMINAL_SHAPE
        self.friction_shape = {k: np.broadcast_to(np.asarray(shape[k], dtype=float),
                                                  (robot.n,)).copy() for k in spec.shape_terms}
        self.transmission = transmission or Transmission.identity(robot.n)
        gear = self.transmission.gear_matrix
        self.gear = gear / np.diag(gear)[:, None]
        n = robot.n
        self.names = [f'{p}{i}' for i in range(1, robot.link_count + 1) for p in INERTIAL_NAMES]
        self.names += [f'{t}{m}' for t in spec.actuator_terms for m in range(1, n + 1)]

    @property
    def n_inertial(self) -> int:
        """Number of inertial (rigid-body) columns, 10 per link."""
        return 10 * self.robot.link_count

    @property
    def n_columns(self) -> int:
        """Number of columns p."""
        return len(self.names)

    def compute(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Regressor of N samples.

        Parameters
        ----------
        q, qd, qdd : (N, n) ndarray
            Joint positions, velocities, accelerations [rad, rad/s, rad/s² or m, m/s, m/s²],
            model joint order.

        Returns
        -------
        Y : (N, n, p) ndarray
            ``tau[k] = Y[k] @ chi``.

        Raises
        ------
        InputError
            If the arrays have different or wrong shapes.
        """
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
        n = self.robot.n
        if not (q.ndim == 2 and q.shape[1] == n and q.shape == qd.shape == qdd.shape):
            raise InputError(f'regressor: q, qd, qdd must all be (N, {n}), got '
                             f'{q.shape}, {qd.shape}, {qdd.shape}')
        out = np.empty((len(q), n, self.n_columns))
        model, inertial = self.robot.model, self.n_inertial
        data = model.createData()
        x = configuration(model, q)
        for k in range(len(q)):
            out[k, :, :inertial] = pin.computeJointTorqueRegressor(model, data, x[k], qd[k],
                                                                   qdd[k])
        out[:, :, inertial:] = self.actuator_columns(qd, qdd)
        return out

    def actuator_columns(self, qd: np.ndarray, qdd: np.ndarray,
                         columns: np.ndarray | None = None) -> np.ndarray:
        """The actuator part of the regressor (the columns after the inertial ones).

        Parameters
        ----------
        qd, qdd : (N, n) ndarray
            Joint velocities and accelerations.
        columns : (k,) array_like of int, optional
            Only these columns (indices into the actuator part); default all.

        Returns
        -------
        (N, n, p − 10·n_links) or (N, n, k) ndarray
            Column of actuator m on joint j: ``G[m, j]`` × motor quantity m.
        """
        g = self.gear
        u = qd @ g.T
        kinds = {'Ia': lambda: qdd @ g.T, 'fv': lambda: u, 'fc': lambda: np.sign(u),
                 'offset': lambda: np.ones_like(u)}
        if self.spec.friction in STRIBECK_MODELS:
            phi = functools.cache(lambda: basis(self.spec.friction, u, self.friction_shape))
            kinds.update({k: (lambda i=i: phi()[..., i])
                          for i, k in enumerate(LINEAR[self.spec.friction])})
        n, terms = self.robot.n, self.spec.actuator_terms
        wanted = np.arange(len(terms) * n) if columns is None else np.asarray(columns)
        values = {terms[t]: kinds[terms[t]]() for t in sorted(set(wanted // n))}
        motor = np.empty((len(qd), len(wanted)))
        for k, c in enumerate(wanted):
            motor[:, k] = values[terms[c // n]][:, c % n]
        return motor[:, None, :] * g[wanted % n].T[None, :, :]

    def actuator_index(self, term: str, actuator: int) -> int:
        """Column index of an actuator parameter.

        Parameters
        ----------
        term : {'Ia', 'fv', 'fc', 'fs', 'offset'}
            Parameter kind.
        actuator : int
            0-based actuator index.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If the regressor has no such column.
        """
        return self.names.index(f'{term}{actuator + 1}')
