"""Friction curves: torque against velocity per joint, the samples and every fitted model."""
from __future__ import annotations

import numpy as np

from ..friction.models import friction_torque_only
from ..friction.results import FrictionFile
from ..friction.samples import FrictionSamples
from . import figures
from .html import Figure, Table

#: Line styles of the friction models, the selected one drawn thicker.
MODEL_STYLES = {'coulomb-viscous': ':', 'coulomb-viscous-offset': ':', 'stribeck': '--',
                'improved-stribeck': '-'}


def friction_figure(content: FrictionFile, samples: dict[str, FrictionSamples]) -> Figure:
    """Friction torque against velocity, a panel per joint: the used samples (measured minus
    rigid-body torque) and the curve of every model fitted (by its best optimiser).

    Parameters
    ----------
    content : FrictionFile
        FRICTION.yaml.
    samples : dict of str to FrictionSamples
        Per joint, as the identification compared them (``friction.identify.collect_samples``);
        a joint without samples shows only its curves.

    Returns
    -------
    Figure
    """
    joints = list(content.joints)
    columns = min(3, len(joints))
    rows = -(-len(joints) // columns)
    fig, axes = figures.new_figure(11, 0.6 + 3.2 * rows, nrows=rows, ncols=columns,
                                   squeeze=False)
    for ax, joint in zip(axes.flat, joints):
        entry = content.joints[joint]
        s = samples.get(joint)
        peak = entry.peak_speed
        if s is not None and s.count:
            u, tau = s.u[s.used], s.tau[s.used]
            k = figures.stride(len(u))
            ax.plot(u[k], tau[k], '.', ms=2, color=figures.COLORS['measured'],
                    label='samples')
            peak = max(peak, float(np.abs(u).max()))
        grid = np.linspace(-peak, peak, 801)
        for model, by_optimizer in entry.fits.items():
            best = min(by_optimizer.values(), key=lambda f: f.rss)
            selected = model == entry.selected.model
            ax.plot(grid, friction_torque_only(model, grid, best.parameters),
                    MODEL_STYLES.get(model, '-'), lw=2.2 if selected else 1.1,
                    label=model + (' (selected)' if selected else ''))
        ax.set_title(joint, fontsize=10)
        ax.set_xlabel('velocity [rad/s]')
        ax.set_ylabel('friction torque [N·m]')
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(joints):]:
        ax.set_visible(False)
    return Figure(figures.png_data_uri(fig),
                  'friction torque against velocity: samples (measured minus the rigid-body '
                  f'model {content.rigid_body_model}) and the fitted models')


def friction_table(content: FrictionFile) -> Table:
    """The selected model and its parameters per joint.

    Parameters
    ----------
    content : FrictionFile

    Returns
    -------
    Table
    """
    names = ('fc', 'fs', 'vs', 'delta', 'fv', 'offset', 'v_l')
    rows = [[joint, e.selected.model, e.selected.optimizer,
             *[e.parameters.get(n) for n in names]] for joint, e in content.joints.items()]
    return Table(['joint', 'model', 'optimiser', *names], rows,
                 caption='selected friction model per joint (N·m, rad/s)')
