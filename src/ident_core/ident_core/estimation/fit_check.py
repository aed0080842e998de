"""A fit too poor to be a model of the recording: swapped joint labels and other column
mistakes (docs/methods.md §4).

Above ``FIT_ERROR_LIMIT`` relative error, each badly fitted torque column (its own error above
the limit too) is compared with the a-priori (URDF) model's torque of every joint on the same
motion: a column that follows another joint's model torque much better than its own names the
suspects (joint labels or columns swapped), and the identification is refused; without such a
sign the poor fit is a warning. (The a-priori model has no friction: a well fitted column may
correlate poorly with it, which is why only the badly fitted ones are compared.)
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DataWarning, InputError
from . import metrics

#: Relative fit error [%] above which the recording is checked for swapped columns.
FIT_ERROR_LIMIT = 20.0
#: A column is a suspect when it correlates with another joint's a-priori torque at least this
#: much better than with its own.
CORRELATION_MARGIN = 0.3


def check_fit(predicted: np.ndarray, measured: np.ndarray, prior: np.ndarray,
              joint_names: list[str], sources: str) -> None:
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

    Raises
    ------
    InputError
        If the relative error exceeds ``FIT_ERROR_LIMIT`` and a badly fitted column follows
        another joint's a-priori torque better than its own by ``CORRELATION_MARGIN`` (naming
        the suspect joints and the per-joint fit errors).

    Warns
    -----
    DataWarning
        If the relative error exceeds ``FIT_ERROR_LIMIT`` without such a sign.
    """
    error = metrics.relative_error_percent(predicted, measured)
    if error <= FIT_ERROR_LIMIT:
        return
    spread = np.sqrt(np.mean(measured ** 2, axis=0))
    per_joint = 100 * metrics.rmse(predicted, measured) / np.where(spread > 0, spread, 1.0)
    errors = ', '.join(f'{j} {e:.0f} %' for j, e in zip(joint_names, per_joint))
    corr = np.abs(_correlation(measured, prior))
    suspects = [(j, int(np.argmax(corr[j]))) for j in range(len(joint_names))
                if per_joint[j] > FIT_ERROR_LIMIT
                and corr[j].max() - corr[j, j] >= CORRELATION_MARGIN]
    if suspects:
        signs = '; '.join(f'the effort of {joint_names[j]} follows the URDF model torque of '
                          f'{joint_names[k]} (correlation {corr[j, k]:.2f}, its own '
                          f'{corr[j, j]:.2f})' for j, k in suspects)
        raise InputError(f'{sources}: the identified model misses the torques by {error:.0f} % '
                         f'(per joint: {errors}); {signs}: joint labels or columns swapped?')
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
