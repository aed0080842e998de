"""Base parameters with their standard deviations, coloured by trust, and the standard
parameters per link with the physical-consistency check."""
from __future__ import annotations

import numpy as np

from ..estimation.estimators import TRUSTED_STD_PERCENT
from ..estimation.identified_model import IdentifiedModel
from ..friction.fit import POOR_STD_PERCENT
from ..model.inertial import link_inertials
from . import figures
from .html import Figure, Table


def trust(rel_std_percent: np.ndarray) -> list[str]:
    """Trust class of each parameter by its relative standard deviation.

    Parameters
    ----------
    rel_std_percent : (k,) ndarray
        100 σ / |value| [%].

    Returns
    -------
    list of str
        ``trusted`` (below ``TRUSTED_STD_PERCENT``), ``uncertain``, or ``poor`` (above
        ``POOR_STD_PERCENT``, the limit of the friction fits); a non-finite value is ``poor``.

    References
    ----------
    .. [1] M. Gautier, "Numerical calculation of the base inertial parameters of robots",
       Journal of Robotic Systems 8(4), 485–506, 1991. DOI: 10.1002/rob.4620080405
    """
    r = np.asarray(rel_std_percent, dtype=float)
    return ['trusted' if x < TRUSTED_STD_PERCENT else 'uncertain' if x <= POOR_STD_PERCENT
            else 'poor' for x in np.where(np.isfinite(r), r, np.inf)]


def base_parameter_figure(model: IdentifiedModel) -> Figure:
    """Each base parameter with ±2σ bars, and its relative standard deviation coloured by
    trust.

    Parameters
    ----------
    model : IdentifiedModel

    Returns
    -------
    Figure
    """
    nb = model.base.count
    classes = trust(model.rel_std_percent)
    colors = [figures.TRUST_COLORS[c] for c in classes]
    fig, (left, right) = figures.new_figure(11, 0.8 + 0.16 * nb, ncols=2, sharey=True,
                                            gridspec_kw={'width_ratios': [3, 2]})
    y = np.arange(nb)
    left.errorbar(model.values, y, xerr=2 * model.std, fmt='none', ecolor='0.4', lw=1)
    left.scatter(model.values, y, c=colors, s=14, zorder=3)
    nonzero = np.abs(model.values[model.values != 0])
    left.set_xscale('symlog', linthresh=float(np.percentile(nonzero, 10)) if nonzero.size
                    else 1e-3)
    left.axvline(0, color='0.7', lw=0.8)
    left.set_yticks(y, [_short(n) for n in model.base.names], fontsize=7)
    left.invert_yaxis()
    left.set_xlabel('value ± 2σ (symlog)')
    rel = np.where(np.isfinite(model.rel_std_percent), model.rel_std_percent, 1e4)
    right.barh(y, np.clip(rel, 1e-3, 1e4), color=colors)
    right.set_xscale('log')
    for limit in (TRUSTED_STD_PERCENT, POOR_STD_PERCENT):
        right.axvline(limit, color='0.3', ls=':', lw=1)
    right.set_xlabel('relative standard deviation [%]')
    return Figure(figures.png_data_uri(fig),
                  f'{nb} base parameters; green: relative standard deviation below '
                  f'{TRUSTED_STD_PERCENT:g} %, orange: up to {POOR_STD_PERCENT:g} %, red: above '
                  '(the data hardly determine them)')


def base_parameter_table(model: IdentifiedModel) -> Table:
    """Base parameters, standard deviations and trust.

    Parameters
    ----------
    model : IdentifiedModel

    Returns
    -------
    Table
    """
    classes = trust(model.rel_std_percent)
    rows = [[i + 1, name, v, s, r, c] for i, (name, v, s, r, c) in enumerate(
        zip(model.base.names, model.values, model.std, model.rel_std_percent, classes))]
    return Table(['#', 'base parameter', 'value', 'std', 'rel. std %', 'trust'], rows, classes)


def link_table(model: IdentifiedModel) -> tuple[Table, list[str]]:
    """Mass, centre of mass and principal moments per link, identified against the URDF, with
    the physical-consistency check (positive mass, positive semi-definite pseudo-inertia).

    Parameters
    ----------
    model : IdentifiedModel

    Returns
    -------
    table : Table
    warnings : list of str
        One per link that is not physically consistent.

    References
    ----------
    .. [1] P. M. Wensing, S. Kim, J.-J. E. Slotine, "Linear Matrix Inequalities for
       Physically Consistent Inertial Parameter Identification: A Statistical Perspective on
       the Mass Distribution", IEEE Robotics and Automation Letters 3(1), 60–67, 2018.
       DOI: 10.1109/LRA.2017.2729659
    """
    identified = model.links()
    urdf = link_inertials(model.robot, model.robot.standard_parameters())
    rows, classes, warnings = [], [], []
    for k, u in zip(identified, urdf):
        moments = np.linalg.eigvalsh(k.inertia)
        rows.append([k.link, 'identified', k.mass, *k.com, *moments, k.physically_consistent])
        rows.append([u.link, 'URDF', u.mass, *u.com, *np.linalg.eigvalsh(u.inertia),
                     u.physically_consistent])
        classes += ['' if k.physically_consistent else 'poor', '']
        if not k.physically_consistent:
            warnings.append(f'{k.link}: the identified inertial parameters are not physically '
                            f'consistent (mass {k.mass:.4g} kg, smallest principal moment '
                            f'{moments[0]:.3g} kg·m²)')
    return Table(['link', 'model', 'mass kg', 'com x m', 'com y m', 'com z m', 'I1 kg·m²',
                  'I2 kg·m²', 'I3 kg·m²', 'consistent'], rows, classes,
                 'standard parameters per link (link frame; principal moments about the centre '
                 'of mass)'), warnings


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else name[:width - 1] + '…'
