"""A fit that cannot be a model of the recording: swapped joint labels, efforts in another
unit or with the opposite sign (docs/methods.md §3, "Plausibility").

First, whatever the fit (a common scale fits a linear model as well as the right unit), the
efforts are compared with the URDF model's torques for a wrong unit or sign (``effort_scale``):
a correction that explains the data is refused, naming the ``effort.scale`` to set; one joint's
sign or scale only when the identification misses some joint by more than ``FIT_ERROR_LIMIT``
(its own relative error). (This comes first: a poor fit from a wrong sign can make a column
correlate with another joint's torque.)
Then, above ``FIT_ERROR_LIMIT`` relative error, each badly fitted torque column (its own error
above the limit too) is compared with the a-priori (URDF) model's torque of every joint on the
same motion: a column that follows another joint's model torque much better than its own names
the suspects (joint labels or columns swapped), and the identification is refused. Without such
a sign a poor fit is a warning. (The a-priori model has no friction: a well fitted column may
correlate poorly with it, which is why only the badly fitted ones are compared for swaps.) With
``ignore_plausibility`` every refusal is a warning and the model stands.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..data.plausibility import refuse
from ..errors import DataWarning
from . import metrics
from .effort_scale import Refit, diagnose_efforts, urdf_gains

#: Relative fit error [%] above which the recording is checked for swapped columns.
FIT_ERROR_LIMIT = 20.0
#: A column is a suspect when it correlates with another joint's a-priori torque at least this
#: much better than with its own.
CORRELATION_MARGIN = 0.3


def check_fit(predicted: np.ndarray, measured: np.ndarray, prior: np.ndarray,
              joint_names: list[str], sources: str, *, w: np.ndarray | None = None,
              free: np.ndarray | None = None, mask: np.ndarray | None = None,
              refit: Callable[[np.ndarray], np.ndarray] | None = None,
              ignore: bool = False) -> None:
    """Refuse or warn about a fit too poor to be a model of the recording.

    Parameters
    ----------
    predicted, measured : (N, n) ndarray
        Fitted and measured joint torques of the identification [N·m or N].
    prior : (N, n) ndarray
        The a-priori (URDF) model's joint torques on the same samples.
    joint_names : list of str
        (n,) the columns' joints.
    sources : str
        The recordings, for the message.
    w : (N, n, nb) ndarray, optional
        The base regressor of the identification.
    free : (nb,) ndarray of bool, optional
        Its actuator columns (friction, offset, rotor inertia), fitted with the URDF model's
        torque when the efforts are checked for units and signs (``effort_scale``).
    mask : (N, n) ndarray of bool, optional
        The joint equations the identification used.
    refit : callable, optional
        ``refit(tau) -> predicted``: the identification run on other torques (N, n), to test
        one joint's sign or scale when the fit exceeds ``FIT_ERROR_LIMIT``
        (``effort_scale.Refit``).
    ignore : bool
        Warn instead of refusing (``ignore_plausibility``).

    Raises
    ------
    InputError
        If a wrong unit or sign of the efforts explains the data
        (``effort_scale.diagnose_efforts``, naming the joints and the ``effort.scale`` to set),
        or the relative error exceeds ``FIT_ERROR_LIMIT`` and a badly fitted column follows
        another joint's a-priori torque better than its own by ``CORRELATION_MARGIN`` (naming
        the suspect joints and the per-joint fit errors); not with ``ignore``.

    Warns
    -----
    DataWarning
        If the relative error exceeds ``FIT_ERROR_LIMIT`` without such a sign, or for what
        would be refused, with ``ignore``.
    """
    error = metrics.relative_error_percent(predicted, measured)
    poor = error > FIT_ERROR_LIMIT
    spread = np.sqrt(np.mean(measured ** 2, axis=0))
    per_joint = 100 * metrics.rmse(predicted, measured) / np.where(spread > 0, spread, 1.0)
    faults = diagnose_efforts(urdf_gains(measured, prior, w, free, mask),
                              Refit(measured, predicted, refit) if poor and refit else None,
                              bool(np.any(per_joint > FIT_ERROR_LIMIT)))
    if faults:
        refuse(f'{sources}: ' + '; '.join(d.describe(joint_names) for d in faults), ignore)
        return
    if not poor:
        return
    errors = ', '.join(f'{j} {e:.0f} %' for j, e in zip(joint_names, per_joint))
    corr = np.abs(_correlation(measured, prior))
    suspects = [(j, int(np.argmax(corr[j]))) for j in range(len(joint_names))
                if per_joint[j] > FIT_ERROR_LIMIT
                and corr[j].max() - corr[j, j] >= CORRELATION_MARGIN]
    if suspects:
        signs = '; '.join(f'the effort of {joint_names[j]} follows the URDF model torque of '
                          f'{joint_names[k]} (correlation {corr[j, k]:.2f}, its own '
                          f'{corr[j, j]:.2f})' for j, k in suspects)
        refuse(f'{sources}: the identified model misses the torques by {error:.0f} % (per '
               f'joint: {errors}); {signs}: joint labels or columns swapped?', ignore)
        return
    warnings.warn(f'{sources}: the identified model misses the torques by {error:.0f} % (per '
                  f'joint: {errors}): check the effort columns, their units and the '
                  'transmission', DataWarning, stacklevel=2)


def _correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, n) correlation of every column of ``a`` with every column of ``b`` (0 for a
    constant column)."""
    a = a - a.mean(axis=0)
    b = b - b.mean(axis=0)
    norms = np.outer(np.linalg.norm(a, axis=0), np.linalg.norm(b, axis=0))
    return np.divide(a.T @ b, norms, out=np.zeros_like(norms), where=norms > 0)
