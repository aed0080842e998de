"""Joint friction models with analytic derivatives (docs/methods.md §8;
stribeck_friction_sa_ga_2020 eq. (5)–(7)).

    coulomb-viscous:         tau_f = fc sign(u) + fv u
    coulomb-viscous-offset:  tau_f = fc sign(u) + fv u + offset
    stribeck:                tau_f = [fc + (fs − fc) exp(−|u/vs|^delta)] sign(u) + fv u
    improved-stribeck:       the Stribeck model + offset for |u| >= v_l; inside |u| < v_l the
                             straight line from ``offset`` at u = 0 to the value at ±v_l, so the
                             torque is continuous at velocity reversal

``u`` is the velocity of the joint (or of the actuator, for motor-side friction behind a
transmission). Every model is linear in ``fc, fs, fv, offset`` once the shape parameters
``vs, delta, v_l`` are fixed: ``tau_f = Φ(u; shape) · linear``. :func:`basis` gives Φ, which
the identification regressor uses as friction columns; :func:`friction_torque` and
:func:`friction_jacobian` give the torque and its derivatives with respect to the velocity and
to every parameter. All functions broadcast over samples and joints: ``u`` may be (N,) or
(N, n) with parameters scalars or (n,) arrays.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

FRICTION_MODELS = ('coulomb-viscous', 'coulomb-viscous-offset', 'stribeck', 'improved-stribeck')
#: The three models compared by stribeck_friction_sa_ga_2020 (Table 4), in its order.
PAPER_MODELS = ('coulomb-viscous', 'stribeck', 'improved-stribeck')
#: Parameters each model is linear in, in basis-column order.
LINEAR = {'coulomb-viscous': ('fc', 'fv'), 'coulomb-viscous-offset': ('fc', 'fv', 'offset'),
          'stribeck': ('fc', 'fs', 'fv'), 'improved-stribeck': ('fc', 'fs', 'fv', 'offset')}
#: Shape (nonlinear) parameters of each model.
SHAPE = {'coulomb-viscous': (), 'coulomb-viscous-offset': (), 'stribeck': ('vs', 'delta'),
         'improved-stribeck': ('vs', 'delta', 'v_l')}
#: Display order of all parameters (the columns of the paper's Table 3).
ORDER = ('fc', 'fs', 'vs', 'delta', 'fv', 'offset', 'v_l')
#: Units of each parameter for a revolute joint (prismatic: N, m/s).
UNITS = {'fc': 'N·m', 'fs': 'N·m', 'vs': 'rad/s', 'delta': '', 'fv': 'N·m·s/rad',
         'offset': 'N·m', 'v_l': 'rad/s'}


def check_model(model: str) -> str:
    """Return ``model`` if it is a friction model name.

    Parameters
    ----------
    model : str
        The name.

    Returns
    -------
    str
        ``model``.

    Raises
    ------
    InputError
        Naming the valid models.
    """
    if model not in FRICTION_MODELS:
        raise InputError(f'friction model {model!r} unknown (choose from '
                         f'{", ".join(FRICTION_MODELS)})')
    return model


def parameter_names(model: str) -> tuple[str, ...]:
    """All parameters of a model, in the display order of ``ORDER``.

    Parameters
    ----------
    model : str
        One of ``FRICTION_MODELS``.

    Returns
    -------
    tuple of str
    """
    names = LINEAR[check_model(model)] + SHAPE[model]
    return tuple(p for p in ORDER if p in names)


def _exponential(speed, shape):
    """``e = exp(−(s/vs)^delta)`` and its derivatives with respect to s, vs and delta."""
    vs, delta = shape['vs'], shape['delta']
    ratio = speed / vs
    power = ratio ** delta
    e = np.exp(-power)
    with np.errstate(divide='ignore', invalid='ignore'):
        d_speed = np.where(speed > 0, -e * delta * power / np.where(speed > 0, speed, 1), 0.0)
        d_delta = np.where(speed > 0, -e * power * np.log(np.where(speed > 0, ratio, 1)), 0.0)
    d_vs = e * delta * power / vs
    return e, d_speed, d_vs, d_delta


def basis(model: str, u, shape: dict | None = None) -> np.ndarray:
    """Friction basis Φ: ``tau_f = Φ · [the model's LINEAR parameters]``.

    Parameters
    ----------
    model : str
        One of ``FRICTION_MODELS``.
    u : (...,) array_like
        Velocities [rad/s or m/s].
    shape : dict of str to float or (n,) ndarray, optional
        ``vs`` [rad/s], ``delta``, ``v_l`` [rad/s] as the model needs (``SHAPE``).

    Returns
    -------
    (..., k) ndarray
        One column per linear parameter.
    """
    return _basis(model, u, shape, derivatives=False)[0]


def _basis(model, u, shape, derivatives=True):
    """Φ, and with ``derivatives`` also dΦ/du and dΦ/d(shape parameter) per shape parameter."""
    check_model(model)
    u = np.asarray(u, dtype=float)
    sign, one = np.sign(u), np.ones_like(u)
    if model in ('coulomb-viscous', 'coulomb-viscous-offset'):
        cols = [sign, u] + ([one] if model == 'coulomb-viscous-offset' else [])
        d_u = [np.zeros_like(u), one, np.zeros_like(u)][:len(cols)]
        return np.stack(cols, -1), (np.stack(d_u, -1) if derivatives else None), {}
    speed = np.abs(u)
    shape = _shape(model, shape)
    if not derivatives:
        e = _gauss(speed, shape)
        cols = [sign * (1 - e), sign * e, u]
        if model == 'improved-stribeck':
            el = _gauss(shape['v_l'], shape)
            inside, line = speed < shape['v_l'], u / shape['v_l']
            cols = [np.where(inside, (1 - el) * line, cols[0]),
                    np.where(inside, el * line, cols[1]), u, one]
        return np.stack(cols, -1), None, {}
    zero = np.zeros_like(u)
    e, de_ds, de_dvs, de_ddelta = _exponential(speed, shape)
    cols = [sign * (1 - e), sign * e, u]
    d_u = [-de_ds, de_ds, one]
    d_shape = {'vs': [-sign * de_dvs, sign * de_dvs, zero],
               'delta': [-sign * de_ddelta, sign * de_ddelta, zero]}
    if model == 'improved-stribeck':
        v_l = shape['v_l']
        el, del_ds, del_dvs, del_ddelta = _exponential(v_l * one, shape)
        inside = speed < v_l
        line = u / v_l
        cols = [np.where(inside, c, o) for c, o in zip(((1 - el) * line, el * line), cols)] \
            + [u, one]
        d_u = [np.where(inside, c, o) for c, o in zip(((1 - el) / v_l, el / v_l), d_u)] \
            + [one, zero]
        for name, d_el in (('vs', del_dvs), ('delta', del_ddelta)):
            d_shape[name] = [np.where(inside, c, o) for c, o in
                             zip((-d_el * line, d_el * line), d_shape[name])] + [zero, zero]
        d_line = -line / v_l
        d_shape['v_l'] = [np.where(inside, -del_ds * line + (1 - el) * d_line, 0.0),
                          np.where(inside, del_ds * line + el * d_line, 0.0), zero, zero]
    return (np.stack(cols, -1), np.stack(d_u, -1),
            {k: np.stack(v, -1) for k, v in d_shape.items()})


def _shape(model, shape):
    names = SHAPE[model]
    if shape is None or any(k not in shape for k in names):
        raise InputError(f'friction model {model}: needs {", ".join(names)}')
    out = {k: np.asarray(shape[k], dtype=float) for k in names}
    for k in ('vs', 'v_l'):
        if k in out and np.any(out[k] <= 0):
            raise InputError(f'friction model {model}: {k} must be positive')
    if np.any(out['delta'] <= 0):
        raise InputError(f'friction model {model}: delta must be positive')
    return out


def friction_torque(model: str, u, parameters: dict) -> tuple[np.ndarray, np.ndarray]:
    """Friction torque and its derivative with respect to velocity.

    Parameters
    ----------
    model : str
        One of ``FRICTION_MODELS``.
    u : (...,) array_like
        Velocities [rad/s or m/s].
    parameters : dict of str to float or (n,) ndarray
        Every parameter of the model (``parameter_names``).

    Returns
    -------
    tau : (...,) ndarray
        Friction torque [N·m or N].
    dtau_du : (...,) ndarray
        ``d tau / d u`` [N·m·s/rad or N·s/m].

    Raises
    ------
    InputError
        For an unknown model, a missing parameter, or ``vs``, ``delta``, ``v_l`` not positive.

    References
    ----------
    .. [1] Zhang T., Hu L., Zou Y., "Identification of improved friction model for robot based
       on hybrid genetic algorithm", Journal of Zhejiang University (Engineering Science)
       55(5):801–809, 2021, doi:10.3785/j.issn.1008-973X.2021.05.001, eq. (5)–(7).
    """
    phi, d_u, _ = _basis(model, u, parameters)
    linear = _linear(model, parameters)
    return np.sum(phi * linear, -1), np.sum(d_u * linear, -1)


def friction_torque_only(model: str, u, parameters: dict) -> np.ndarray:
    """``friction_torque`` without the derivative (the cost of the genetic optimisers).

    Parameters
    ----------
    model : str
        One of ``FRICTION_MODELS``.
    u : (...,) array_like
        Velocities [rad/s or m/s].
    parameters : dict of str to float or (n,) ndarray
        Every parameter of the model.

    Returns
    -------
    (...,) ndarray
        Friction torque [N·m or N].
    """
    check_model(model)
    u = np.asarray(u, dtype=float)
    p = {k: np.asarray(v, dtype=float) for k, v in parameters.items()}
    _linear(model, p)
    if not SHAPE[model]:
        return p['fc'] * np.sign(u) + p['fv'] * u + p.get('offset', 0.0) * (
            model == 'coulomb-viscous-offset')
    shape = _shape(model, p)
    speed = np.abs(u)
    tau = np.sign(u) * (p['fc'] + (p['fs'] - p['fc']) * _gauss(speed, shape)) + p['fv'] * u
    if model == 'stribeck':
        return tau
    v_l = shape['v_l']
    edge = p['fc'] + (p['fs'] - p['fc']) * _gauss(v_l, shape) + p['fv'] * v_l
    return np.where(speed < v_l, edge * u / v_l, tau) + p['offset']


def _gauss(speed, shape):
    """``exp(−(s/vs)^delta)``, squaring instead of a power for the usual delta = 2."""
    ratio = speed / shape['vs']
    delta = shape['delta']
    return np.exp(-(ratio * ratio if np.all(delta == 2) else ratio ** delta))


def _linear(model, parameters):
    missing = [k for k in LINEAR[check_model(model)] if k not in parameters]
    if missing:
        raise InputError(f'friction model {model}: needs {", ".join(missing)}')
    return np.stack(np.broadcast_arrays(*(np.asarray(parameters[k], float)
                                          for k in LINEAR[model])), -1)


def friction_jacobian(model: str, u, parameters: dict) -> np.ndarray:
    """Derivatives of the friction torque with respect to the model's parameters.

    Parameters
    ----------
    model : str
        One of ``FRICTION_MODELS``.
    u : (N,) array_like
        Velocities of one joint [rad/s or m/s].
    parameters : dict of str to float
        Every parameter of the model.

    Returns
    -------
    (N, p) ndarray
        ``d tau / d parameter`` in the order of ``parameter_names(model)``.

    Raises
    ------
    InputError
        As ``friction_torque``.
    """
    phi, _, d_shape = _basis(model, u, parameters)
    linear = _linear(model, parameters)
    columns = {k: phi[..., i] for i, k in enumerate(LINEAR[model])}
    columns.update({k: np.sum(d * linear, -1) for k, d in d_shape.items()})
    return np.stack([columns[k] for k in parameter_names(model)], -1)


class JointFriction:
    """One friction model with fixed parameters, evaluated sample by sample: ``friction_torque``
    with the constants worked out once, for loops at the control rate (simulator, torque
    estimation).

    Parameters
    ----------
    model : {'none', 'coulomb-viscous', 'coulomb-viscous-offset', 'stribeck', \
'improved-stribeck'}
        The model (``none``: no friction).
    parameters : dict of str to float or (n,) ndarray
        Every parameter of the model (``parameter_names``), per joint or actuator.

    Raises
    ------
    InputError
        As ``friction_torque``.

    References
    ----------
    .. [1] Zhang T., Hu L., Zou Y., "Identification of improved friction model for robot based
       on hybrid genetic algorithm", Journal of Zhejiang University (Engineering Science)
       55(5):801–809, 2021, doi:10.3785/j.issn.1008-973X.2021.05.001, eq. (5)–(7).
    """

    def __init__(self, model: str, parameters: dict):
        self.model = model
        if model == 'none':
            return
        p = {k: np.asarray(v, dtype=float) for k, v in parameters.items()}
        _linear(model, p)
        self._fc, self._fv = p['fc'], p['fv']
        self._offset = p['offset'] if model in ('coulomb-viscous-offset',
                                                'improved-stribeck') else 0.0
        if not SHAPE[model]:
            return
        shape = _shape(model, p)
        self._rise = p['fs'] - p['fc']
        self._inv_vs, self._delta = 1.0 / shape['vs'], shape['delta']
        self._square = bool(np.all(self._delta == 2))
        self._rise_slope = self._rise * self._delta * self._inv_vs
        if model == 'improved-stribeck':
            self._v_l = shape['v_l']
            edge = p['fc'] + self._rise * _gauss(self._v_l, shape) + p['fv'] * self._v_l
            self._band_slope = edge / self._v_l

    def torque(self, u) -> np.ndarray:
        """Friction torque.

        Parameters
        ----------
        u : (n,) or (N, n) ndarray
            Velocities [rad/s or m/s].

        Returns
        -------
        (n,) or (N, n) ndarray
            [N·m or N].
        """
        return self._evaluate(u, False)[0]

    def torque_and_slope(self, u) -> tuple[np.ndarray, np.ndarray]:
        """Friction torque and its derivative with respect to velocity.

        Parameters
        ----------
        u : (n,) or (N, n) ndarray
            Velocities [rad/s or m/s].

        Returns
        -------
        tau : (n,) or (N, n) ndarray
            Friction torque [N·m or N].
        dtau_du : (n,) or (N, n) ndarray
            ``d tau / d u`` [N·m·s/rad or N·s/m]; the Coulomb step counts as flat.
        """
        return self._evaluate(u, True)

    def _evaluate(self, u, slope: bool):
        if self.model == 'none':
            zero = np.zeros_like(u, dtype=float)
            return zero, zero.copy()
        if not SHAPE[self.model]:
            return (self._fc * np.sign(u) + self._fv * u + self._offset,
                    self._fv + 0.0 * u if slope else None)
        speed = np.abs(u)
        ratio = speed * self._inv_vs
        e = np.exp(-(ratio * ratio) if self._square else -ratio ** self._delta)
        tau = np.sign(u) * (self._fc + self._rise * e) + self._fv * u
        rate = None if not slope else self._fv - self._rise_slope * e * (
            ratio if self._square else ratio ** (self._delta - 1))
        if self.model == 'improved-stribeck':
            inside = speed < self._v_l
            if inside.any():
                tau = np.where(inside, self._band_slope * u, tau)
                rate = None if not slope else np.where(inside, self._band_slope, rate)
        return tau + self._offset, rate


#: Friction models the simulator can integrate (continuous at reversal).
SIMULATED_MODELS = ('coulomb-viscous', 'improved-stribeck')


@dataclass
class Friction:
    """True friction of n simulated joints: the improved Stribeck model; every coefficient is
    an (n,) array.

    With ``model='coulomb-viscous'`` the Stribeck part vanishes (``fs = fc``), the linear band
    through ``offset`` inside ``|qd| < v_l`` stays, so that the torque is continuous.

    Parameters
    ----------
    fc : (n,) ndarray
        Coulomb friction [N·m or N].
    fv : (n,) ndarray
        Viscous friction [N·m·s/rad or N·s/m].
    offset : (n,) ndarray
        Torque offset [N·m or N].
    v_l : (n,) ndarray
        Half-width of the linear band around zero velocity [rad/s or m/s], > 0.
    model : {'coulomb-viscous', 'improved-stribeck'}
        The friction model.
    fs : (n,) ndarray, optional
        Static (breakaway) friction [N·m or N], improved Stribeck model only.
    vs : (n,) ndarray, optional
        Stribeck velocity [rad/s or m/s], > 0, improved Stribeck model only.
    delta : (n,) ndarray, optional
        Stribeck exponent, > 0, improved Stribeck model only.

    Raises
    ------
    InputError
        For an unknown model, missing Stribeck coefficients, or ``v_l``, ``vs``, ``delta`` not
        positive.
    """

    fc: np.ndarray
    fv: np.ndarray
    offset: np.ndarray
    v_l: np.ndarray
    model: str = 'coulomb-viscous'
    fs: np.ndarray | None = None
    vs: np.ndarray | None = None
    delta: np.ndarray | None = None

    def __post_init__(self):
        if self.model not in SIMULATED_MODELS:
            hint = ' (the improved model is called improved-stribeck)' \
                if self.model == 'stribeck' else ''
            raise InputError(f'simulated friction model {self.model!r} unknown (choose from '
                             f'{", ".join(SIMULATED_MODELS)}){hint}')
        if self.model == 'coulomb-viscous':
            self.fs, self.vs, self.delta = self.fc, np.ones_like(self.fc), np.ones_like(self.fc)
        elif any(x is None for x in (self.fs, self.vs, self.delta)):
            raise InputError('friction: the improved-stribeck model needs fs, vs and delta per '
                             'joint')
        if np.any(self.v_l <= 0) or np.any(self.vs <= 0) or np.any(self.delta <= 0):
            raise InputError('friction: v_l, vs and delta must be positive')
        self._law = JointFriction('improved-stribeck', self.parameters)

    @property
    def parameters(self) -> dict[str, np.ndarray]:
        """The improved Stribeck parameters, (n,) each."""
        return {k: np.asarray(getattr(self, k), dtype=float) for k in ORDER}

    def torque(self, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Friction torque and its derivative with respect to velocity: the improved Stribeck
        model (``JointFriction``; several calls per simulator step).

        Parameters
        ----------
        qd : (n,) or (N, n) ndarray
            Joint velocities [rad/s or m/s].

        Returns
        -------
        tau : (n,) or (N, n) ndarray
            Friction torque [N·m or N].
        dtau : (n,) or (N, n) ndarray
            ``d tau / d qd`` [N·m·s/rad or N·s/m].
        """
        return self._law.torque_and_slope(qd)
