"""The drift statistics (docs/methods.md §13): a value against its own baseline, and against
the robots of the same kind.

Against the baseline of B values ``b_i`` with identification standard deviations ``σ_i``, a
new value ``x`` with ``σ_x``::

    m = mean(b)
    s² = max(var(b, ddof=1), mean(σ_i²), floor²)       # baseline scatter
    z = |x − m| / sqrt(s² (1 + 1/B) + σ_x²)

``s²`` is the night-to-night scatter the baseline shows (temperature, the excitation's noise);
it cannot be below the identification's own variance, nor below ``floor``, the scatter that
the robots of the same kind show on average (three values alone can agree by chance); for an
error, which is the magnitude of a fluctuation, not below ``MAGNITUDE_SCATTER`` times its mean.
``s²/B`` is the uncertainty of the mean. Against the fleet, with the robots' latest values
``x_r``::

    z_r = |x_r − median(x)| / max(1.4826 · MAD(x), floor)

(1.4826 · MAD estimates a standard deviation, robust to the outlier it looks for; ``floor``:
the robots' scatter and identification standard deviations). An alert needs both a large
change and a significant one (``is_alert``): the change alone would fire on noisy parameters,
the significance alone on well-identified ones that moved by an irrelevant amount.
"""
from __future__ import annotations

import numpy as np

#: 1.4826 · MAD is the standard deviation of a normal sample.
MAD_SCALE = 1.4826
#: Standard deviation over mean of the magnitude |e| of a zero-mean normal e: sqrt(π/2 − 1).
#: An error (the baseline model's on a recording) is such a magnitude; its baseline scatter is
#: taken as at least this fraction of its baseline mean.
MAGNITUDE_SCATTER = float(np.sqrt(np.pi / 2 - 1))


def baseline_scatter(values, std=None, floor: float = 0.0) -> float:
    """The night-to-night scatter of a baseline.

    Parameters
    ----------
    values : (B,) array_like
        The baseline values, B ≥ 2.
    std : (B,) array_like, optional
        Their identification standard deviations (NaN: unknown, ignored).
    floor : float
        Least scatter (the fleet's, ``pooled_scatter``).

    Returns
    -------
    float
        ``sqrt(max(var(values, ddof=1), mean(std²), floor²))``.
    """
    values = np.asarray(values, dtype=float)
    variance = float(np.var(values, ddof=1)) if len(values) > 1 else 0.0
    sd = np.asarray([] if std is None else std, dtype=float)
    sd = sd[np.isfinite(sd)]
    identification = float(np.mean(sd ** 2)) if len(sd) else 0.0
    return float(np.sqrt(max(variance, identification, floor ** 2)))


def drift_scale(scatter: float, count: int, std: float = 0.0) -> float:
    """The spread a new value is judged against: ``sqrt(scatter² (1 + 1/B) + std²)``.

    Parameters
    ----------
    scatter : float
        The baseline scatter (``baseline_scatter``).
    count : int
        Values in the baseline, B.
    std : float, optional
        The new value's identification standard deviation.

    Returns
    -------
    float
    """
    return np.sqrt(scatter ** 2 * (1 + 1 / count) + std ** 2)


def drift_z(value: float, std: float, mean: float, scatter: float, count: int) -> float:
    """The significance of a value's change from its baseline.

    Parameters
    ----------
    value : float
        The new value.
    std : float
        Its identification standard deviation (NaN: 0).
    mean : float
        The baseline mean.
    scatter : float
        The baseline scatter (``baseline_scatter``).
    count : int
        Values in the baseline, B.

    Returns
    -------
    float
        ``|value − mean| / sqrt(scatter² (1 + 1/B) + std²)``; inf when that is 0 and the
        value differs, 0 when it does not.
    """
    scale = drift_scale(scatter, count, 0.0 if not np.isfinite(std) else std)
    change = abs(value - mean)
    if scale == 0:
        return float('inf') if change > 0 else 0.0
    return float(change / scale)


def robust_z(values, floor: float = 0.0) -> tuple[float, float, np.ndarray]:
    """How far each value lies from the others: robust z-scores.

    Parameters
    ----------
    values : (R,) array_like
        One value per robot.
    floor : float
        Least scale.

    Returns
    -------
    median : float
    scale : float
        ``max(1.4826 · MAD, floor)``.
    z : (R,) ndarray
        ``|values − median| / scale`` (inf where the scale is 0 and a value differs).
    """
    values = np.asarray(values, dtype=float)
    median = float(np.median(values))
    scale = max(MAD_SCALE * float(np.median(np.abs(values - median))), floor)
    change = np.abs(values - median)
    with np.errstate(divide='ignore', invalid='ignore'):
        z = np.where(change > 0, change / scale, 0.0) if scale > 0 else \
            np.where(change > 0, np.inf, 0.0)
    return median, scale, z


def pooled_scatter(scatters, references) -> float:
    """The relative scatter robots of one kind share: ``sqrt(mean((s_r / ref_r)²))``.

    Parameters
    ----------
    scatters : (R,) array_like
        Each robot's baseline scatter (sample standard deviation).
    references : (R,) array_like
        Each robot's reference value (``|baseline mean|``, the torque RMS for an offset).

    Returns
    -------
    float
        The relative scatter (a fraction); 0 without a usable robot.
    """
    s, ref = np.asarray(scatters, dtype=float), np.asarray(references, dtype=float)
    keep = np.isfinite(s) & np.isfinite(ref) & (ref > 0)
    return float(np.sqrt(np.mean((s[keep] / ref[keep]) ** 2))) if keep.any() else 0.0


def is_alert(change: float, reference: float, z: float, change_percent: float,
             z_min: float) -> bool:
    """Whether a change is both large and significant.

    Parameters
    ----------
    change : float
        The new value minus the baseline.
    reference : float
        What the change is a percentage of (``|baseline|``, the torque RMS for an offset); 0:
        any change is large.
    z : float
        Its significance (``drift_z``, ``robust_z``).
    change_percent : float
        Least change [% of ``reference``].
    z_min : float
        Least significance.

    Returns
    -------
    bool
    """
    large = abs(change) >= change_percent / 100 * reference
    return bool(large and z >= z_min)
