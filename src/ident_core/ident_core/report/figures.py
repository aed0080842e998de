"""What every report figure shares: sizes, colors, PNG data URIs.

Figures are ``matplotlib.figure.Figure`` objects rendered by the Agg canvas, never through
``pyplot``: no global figure registry (nothing to leak when a figure fails half-way), safe in a
node's worker thread, and the importing process's backend is left alone.
"""
from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure as MplFigure

#: Most points drawn per line; longer signals are thinned by striding (the figure cannot show
#: more at its width, and drawing them costs seconds per figure).
MAX_POINTS = 4000
#: Dots per inch of the PNG images.
DPI = 90
#: Colors of the quantities, the same in every figure.
COLORS = {'measured': '0.7', 'identified': 'tab:blue', 'urdf': 'tab:orange',
           'true': 'black', 'filtered': 'tab:blue', 'limit': 'tab:red'}
#: Colors of the trust classes (``parameters.trust``).
TRUST_COLORS = {'trusted': 'tab:green', 'uncertain': 'tab:orange', 'poor': 'tab:red'}


def stride(length: int, max_points: int = MAX_POINTS) -> slice:
    """The slice that thins a signal to at most ``max_points`` samples.

    Parameters
    ----------
    length : int
        Samples of the signal.
    max_points : int
        Most samples kept.

    Returns
    -------
    slice
        ``slice(None, None, k)`` with the smallest such ``k``.
    """
    return slice(None, None, max(1, -(-length // max_points)))


def joint_figure(rows: int, columns: int = 1, row_height: float = 1.9,
                 width: float = 11.0, sharex: str | bool = 'col', **kwargs):
    """A figure of one row of axes per joint, by default sharing the x axis within a column.

    Parameters
    ----------
    rows, columns : int
        Grid of axes.
    row_height, width : float
        [inch].
    sharex : str or bool
        As in ``Figure.subplots``.
    **kwargs
        Passed to ``Figure.subplots``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : (rows, columns) ndarray of Axes
    """
    height = 0.8 + row_height * rows
    fig = MplFigure(figsize=(width, height))
    axes = fig.subplots(rows, columns, squeeze=False, sharex=sharex, **kwargs)
    # fixed margins [inch] instead of a tight bounding box: the layout pass of a tight box
    # draws every axis twice, half the time of a report
    fig.subplots_adjust(left=0.9 / width, right=1 - 0.15 / width, bottom=0.55 / height,
                        top=1 - 0.3 / height, hspace=0.45, wspace=0.3 if columns > 2 else 0.2)
    return fig, axes


def png_data_uri(fig, tight: bool = True) -> str:
    """Render a figure to a PNG ``data:`` URI.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    tight : bool
        Crop to a tight bounding box (False for ``joint_figure``, which has fixed margins).

    Returns
    -------
    str
        ``data:image/png;base64,...``.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=DPI, bbox_inches='tight' if tight else None)
    return 'data:image/png;base64,' + base64.b64encode(buffer.getvalue()).decode('ascii')


def new_figure(width: float, height: float, **kwargs):
    """A figure with one set of axes, a grid (``nrows=``, ``ncols=``) or a 3-D one
    (``subplot_kw={'projection': '3d'}``).

    Parameters
    ----------
    width, height : float
        [inch].
    **kwargs
        Passed to ``Figure.subplots``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    ax : Axes or ndarray of Axes
    """
    fig = MplFigure(figsize=(width, height))
    return fig, fig.subplots(**kwargs)

