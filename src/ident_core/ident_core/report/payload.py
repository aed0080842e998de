"""The identified payload: mass, centre of mass and inertia with their uncertainty, and a 3-D
sketch of the centre of mass in the payload frame."""
from __future__ import annotations

import numpy as np

from ..payload.results import PayloadFile
from . import figures
from .html import Figure, Table


def payload_table(content: PayloadFile) -> Table:
    """Every method's estimate with its standard deviations.

    Parameters
    ----------
    content : PayloadFile
        PAYLOAD.yaml.

    Returns
    -------
    Table
    """
    rows, classes = [], []
    for name, m in content.methods.items():
        inertia = np.diag(m.inertia) if m.inertia is not None else [None] * 3
        inertia_std = np.diag(m.std.inertia) if m.std.inertia is not None else [None] * 3
        rows.append([name, m.mass, m.std.mass, *m.com, *m.std.com, *inertia, *inertia_std,
                     m.physically_consistent])
        classes.append('trusted' if name == content.selected else '')
    axes = ('x', 'y', 'z')
    return Table(['method', 'mass kg', 'σ kg', *[f'com {a} m' for a in axes],
                  *[f'σ {a} m' for a in axes], 'Ixx', 'Iyy', 'Izz', 'σ Ixx', 'σ Iyy', 'σ Izz',
                  'consistent'], rows, classes,
                 f'payload in frame {content.frame} (inertia about the centre of mass, kg·m²); '
                 f'selected: {content.selected}')


def com_figure(content: PayloadFile) -> Figure:
    """3-D sketch of the payload frame with every method's centre of mass and its ±2σ bars.

    Parameters
    ----------
    content : PayloadFile

    Returns
    -------
    Figure
    """
    fig, ax = figures.new_figure(6.5, 6, subplot_kw={'projection': '3d'})
    coms = np.array([m.com for m in content.methods.values()] + [content.com])
    size = max(0.05, 1.3 * float(np.abs(coms).max()))
    for axis, color in zip(np.eye(3), ('tab:red', 'tab:green', 'tab:blue')):
        ax.quiver(0, 0, 0, *(0.6 * size * axis), color=color, lw=2)
    for name, m in content.methods.items():
        selected = name == content.selected
        c, s = np.asarray(m.com), 2 * np.asarray(m.std.com)
        ax.scatter(*c, s=60 if selected else 25, marker='o' if selected else '^',
                   label=f'{name}: {m.mass:.3g} kg', depthshade=False)
        for i in range(3):
            a, b = c.copy(), c.copy()
            a[i] -= s[i]
            b[i] += s[i]
            ax.plot(*np.column_stack([a, b]), color='0.3', lw=1)
        if selected:
            ax.plot(*np.column_stack([np.zeros(3), c]), color='0.5', ls=':', lw=1)
    ax.set_xlim(-size, size)
    ax.set_ylim(-size, size)
    ax.set_zlim(-size, size)
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.set_zlabel('z [m]')
    ax.legend(fontsize=7, loc='upper left')
    return Figure(figures.png_data_uri(fig),
                  f'centre of mass in the {content.frame} frame (red, green, blue: x, y, z axes) '
                  'by every method, with ±2σ bars; the selected method is the large dot')
