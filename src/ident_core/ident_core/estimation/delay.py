"""The delay between a recording's torques and its positions (docs/methods.md §3, *Torque
delay*): its estimate jointly with the parameters, the decision to compensate it, and the
torques shifted by it (``TorqueSignal``, ``estimate_delays``, ``DelayFit``).

A logger or a bus stamps the torques late or early relative to the positions (a PDO a few
cycles late, a current-loop filter, two interfaces read at different moments). With the
torques late by ``d``, the logged torque is ``tau_m(t) = tau(t − d)``, so the model
``tau(t) = W(t) beta`` holds for ``tau_m(t + d)``; to first order in a correction ``δ`` of a
delay ``d0``,

    tau_m(t + d0 + δ) ≈ tau_m(t + d0) + δ · τ̇_m(t + d0),

which is linear in ``(beta, δ)``: one column ``−τ̇_m(t + d0)`` per recording joins the
regressor, weighted least squares gives ``δ`` with its standard deviation, and the step is
repeated from ``d0 + δ`` (Gauss–Newton on the separable problem) until it is below a hundredth
of a sample period.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.signal_processing import decimate_parallel
from ..data.sources import short_source
from ..errors import IdentError, InputError
from .estimators import estimate

#: The delay is compensated when its confidence interval at this many standard deviations
#: excludes zero (3: 99.7 % for a Gaussian estimate)...
SIGNIFICANCE = 3.0
#: ...and compensating lowers the weighted residual RMS of its recording by at least this
#: fraction. Errors of the model that correlate with the torque's derivative imitate a small
#: delay: on a synthetic arm whose rotor inertias the model leaves out, −19 ms (±0.3) lowered
#: the residual by 3.9 %; the delays of real loggers lower it by 9–11 % (TX40, 2.2 ms) and
#: more (simulated PDO lags: 33 % at one sample, 92 % at 20 ms).
MIN_IMPROVEMENT = 0.05
#: Largest delay searched, in cut-off periods (100 ms at 10 Hz); the segments are trimmed by
#: three (``preprocessing.TRIM_PERIODS``), so the shifted torques never leave a segment.
MAX_CUTOFF_PERIODS = 1.0
#: Gauss–Newton steps at most, and the step [sample periods] below which the delay has settled.
MAX_STEPS = 20
SETTLED_PERIODS = 0.01


@dataclass
class TorqueSignal:
    """The filtered torques of a recording at its full rate, and the rows its regression keeps:
    the torques at those rows for any delay.

    Parameters
    ----------
    fs : float
        Sample rate [Hz].
    segments : list of (L, n) ndarray
        Filtered torques of each segment, every sample [N·m or N].
    rows : list of (K,) ndarray of int
        Per segment, the samples the regression keeps (``regression.kept_rows``).
    factor : int
        Decimation factor; with ``plain`` False the rows are all trimmed samples and pass
        ``decimate_parallel`` after the shift.
    plain : bool
        Whether taking ``rows`` is the whole decimation.
    cutoff_hz : float
        Preprocessing cut-off [Hz].
    order : int
        Butterworth order of one pass.
    """

    fs: float
    segments: list
    rows: list
    factor: int = 1
    plain: bool = True
    cutoff_hz: float = 10.0
    order: int = 4

    def __post_init__(self):
        self._splines = [None] * len(self.segments)

    @property
    def max_delay(self) -> float:
        """Largest delay searched [s] (``MAX_CUTOFF_PERIODS`` cut-off periods)."""
        return MAX_CUTOFF_PERIODS / self.cutoff_hz

    def at(self, delay: float, derivative: bool = False) -> np.ndarray:
        """The torques at the kept rows with a delay compensated.

        Parameters
        ----------
        delay : float
            [s]; positive: the torques were logged late, ``tau(t) = tau_m(t + delay)``.
        derivative : bool
            Return the time derivative of the shifted torques instead [N·m/s or N/s].

        Returns
        -------
        (K, n) ndarray
            Over all segments, decimated like the regression rows. A zero delay gives the
            stored samples exactly.
        """
        parts = []
        for i, (x, rows) in enumerate(zip(self.segments, self.rows)):
            if delay == 0 and not derivative:
                value = x[rows]
            else:
                if self._splines[i] is None:        # on the sample index: knots 0, 1, …
                    # deliberately lazy: scipy.interpolate only for a delay (start-up time)
                    from scipy.interpolate import make_interp_spline

                    self._splines[i] = make_interp_spline(np.arange(len(x)), x, k=3, axis=0)
                spline = self._splines[i]
                value = spline(rows + delay * self.fs, nu=int(derivative))
                if derivative:
                    value = value * self.fs
            if not self.plain:
                value = decimate_parallel([value], self.factor, self.fs, self.cutoff_hz,
                                          self.order)[0]
            parts.append(value)
        return np.concatenate(parts)


@dataclass
class DelayFit:
    """The torque delay of one recording.

    Parameters
    ----------
    source : str
        The recording.
    delay : float or None
        Estimate [s]; positive: torques logged late. None: not determined.
    std : float or None
        Its standard deviation [s].
    improvement : float
        Relative fall of the recording's weighted residual RMS when the delay is compensated
        (0.1: 10 % lower).
    compensated : bool
        Whether the torques are shifted by ``delay``.
    given : bool
        The delay was set, not estimated.
    reason : str
        Why it was not determined, when ``delay`` is None.
    """

    source: str
    delay: float | None
    std: float | None = None
    improvement: float = 0.0
    compensated: bool = False
    given: bool = False
    reason: str = ''

    @property
    def applied(self) -> float:
        """The shift applied to the torques [s] (0 when not compensated)."""
        return self.delay if self.compensated else 0.0

    @property
    def noteworthy(self) -> bool:
        """Whether the preprocessing summary mentions it: compensated, given, not determined,
        or significant (``SIGNIFICANCE``) though not compensated; a delay indistinguishable
        from zero goes only into RESULT.yaml."""
        return self.compensated or self.given or self.delay is None \
            or abs(self.delay) > SIGNIFICANCE * self.std

    def summary(self) -> str:
        """One line for the preprocessing summary.

        Returns
        -------
        str
        """
        source = short_source(self.source)
        if self.given:
            return f'{source}: torques shifted by the given delay {_ms(self.delay)}'
        if self.delay is None:
            return f'{source}: torque delay not estimated ({self.reason})'
        found = f'torque delay {_ms(self.delay)} ± {abs(self.std) * 1e3:.2g} ms'
        if self.compensated:
            return (f'{source}: {found} (torques logged {_direction(self.delay)}): '
                    f'compensated, residual {100 * self.improvement:.3g} % lower')
        why = 'not significant' if abs(self.delay) <= SIGNIFICANCE * self.std else \
            f'residual only {100 * self.improvement:.2g} % lower'
        return f'{source}: {found}: {why}, not compensated'

    def report(self) -> dict:
        """The entry of RESULT.yaml (``results.TorqueDelayEntry``).

        Returns
        -------
        dict
        """
        return {'data': self.source, 'delay_s': self.delay, 'std_s': self.std,
                'compensated': self.compensated, 'given': self.given,
                'residual_improvement': float(self.improvement)}


def _ms(delay: float) -> str:
    return f'{delay * 1e3:+.3g} ms'


def _direction(delay: float) -> str:
    return 'late' if delay > 0 else 'early'


def given_delays(sources: list[str], delay: float) -> list[DelayFit]:
    """The fits of a delay set in the configuration.

    Parameters
    ----------
    sources : list of str
        The recordings.
    delay : float
        [s].

    Returns
    -------
    list of DelayFit
        Compensated when non-zero.
    """
    return [DelayFit(s, delay, 0.0, compensated=delay != 0, given=True) for s in sources]


def estimate_delays(w: np.ndarray, signals: list[TorqueSignal], sources: list[str],
                    mask: np.ndarray | None = None) -> list[DelayFit]:
    """Estimate the torque delay of each recording jointly with the parameters, and decide
    whether to compensate it (module docstring).

    Parameters
    ----------
    w : (N, n, nb) ndarray
        Stacked base regressor of the recordings, in order.
    signals : list of TorqueSignal
        One per recording; their rows, stacked, are the rows of ``w``.
    sources : list of str
        The recordings' names.
    mask : (N, n) ndarray of bool, optional
        False for joint equations to leave out.

    Returns
    -------
    list of DelayFit
        One per recording. Compensated when ``|d| > SIGNIFICANCE σ_d`` and compensating lowers
        the recording's residual RMS (weighted per joint as the first fit's residuals) by at
        least ``MIN_IMPROVEMENT``; not determined (None) when the least squares fail or the
        estimate leaves the searched range.

    References
    ----------
    .. [1] Golub G. H., Pereyra V., "Separable nonlinear least squares: the variable projection
       method and its applications", Inverse Problems 19(2):R1–R26, 2003,
       doi:10.1088/0266-5611/19/2/201 (a Gauss–Newton step on the nonlinear parameter with the
       linear ones solved anew).
    """
    n_rec = len(signals)
    ends = np.cumsum([0] + [len(s.at(0.0)) for s in signals])
    delays = np.zeros(n_rec)
    limit = np.array([s.max_delay for s in signals])
    try:
        for _ in range(MAX_STEPS):
            tau = _stacked(signals, delays)
            dot = _stacked(signals, delays, derivative=True)
            columns = np.zeros((len(tau), tau.shape[1], n_rec))
            for k in range(n_rec):
                columns[ends[k]:ends[k + 1], :, k] = -dot[ends[k]:ends[k + 1]]
            est = estimate(np.concatenate([w, columns], axis=2), tau, 'wls', mask=mask)
            step = est.values[w.shape[2]:]
            delays = delays + step
            if np.any(np.abs(delays) > limit):
                return [DelayFit(s, None, reason=f'the estimate leaves ±{x * 1e3:.3g} ms')
                        for s, x in zip(sources, limit)]
            if np.all(np.abs(step) * np.array([s.fs for s in signals]) < SETTLED_PERIODS):
                break
        std = est.std[w.shape[2]:]
        improvement = _improvement(w, signals, delays, mask, ends)
    except (IdentError, InputError, np.linalg.LinAlgError) as exc:
        return [DelayFit(s, None, reason=str(exc)) for s in sources]
    return [DelayFit(s, float(d), float(sd), float(g),
                     bool(abs(d) > SIGNIFICANCE * sd and g >= MIN_IMPROVEMENT))
            for s, d, sd, g in zip(sources, delays, std, improvement)]


def _stacked(signals: list[TorqueSignal], delays: np.ndarray, derivative: bool = False):
    return np.concatenate([s.at(float(d), derivative) for s, d in zip(signals, delays)])


def _improvement(w, signals, delays, mask, ends) -> np.ndarray:
    """Per recording, the relative fall of its residual RMS from the fit without delays to the
    fit with them, both weighted by the first fit's residual deviations."""
    rms = []
    weights = None
    for d in (np.zeros_like(delays), delays):
        tau = _stacked(signals, d)
        residual = tau - w @ estimate(w, tau, 'wls', mask=mask).values
        if mask is not None:
            residual = residual * mask
        if weights is None:
            weights = 1.0 / np.maximum(np.sqrt(np.mean(residual ** 2, axis=0)), 1e-300)
        rms.append(np.array([np.sqrt(np.mean((residual[a:b] * weights) ** 2))
                             for a, b in zip(ends[:-1], ends[1:])]))
    return 1.0 - rms[1] / np.maximum(rms[0], 1e-300)


def shifted_rows(signals: list[TorqueSignal], fits: list[DelayFit]) -> np.ndarray:
    """The stacked torque rows with each recording's delay compensated.

    Parameters
    ----------
    signals : list of TorqueSignal
    fits : list of DelayFit
        One per signal.

    Returns
    -------
    (N, n) ndarray
    """
    return _stacked(signals, np.array([f.applied for f in fits]))
