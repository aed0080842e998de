"""``robot-ident export-urdf``: the identified robot as a URDF (``model.urdf_export``): the
input URDF with the identified inertias, friction and rotor inertias written in."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..estimation.identified_model import IdentifiedModel
from ..estimation.results import read_result
from ..model.urdf_export import export_urdf


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``export-urdf``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-parser of ``export-urdf``; its ``run`` default is set.
    """
    parser.add_argument('--model', required=True, metavar='RESULT.yaml')
    parser.add_argument('--out', required=True, metavar='ROBOT.urdf',
                        help='the URDF to write (not the input URDF)')
    parser.add_argument('--urdf', help='start from this URDF instead of the one recorded in the '
                        'result')
    parser.add_argument('--force', action='store_true',
                        help='export a model that is not physically consistent')
    parser.add_argument('--ignore-urdf-change', action='store_true',
                    help='use a URDF that differs from the one RESULT.yaml was identified with')
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Read the result, export, print one line; 0 (errors raise)."""
    model = read_result(args.model, args.urdf, args.ignore_urdf_change)
    if Path(args.out).resolve() == model.robot.urdf.resolve():
        raise InputError(f'{args.out}: is the input URDF of {args.model}; write the identified '
                         'URDF to another file')
    done = export_urdf(args.out, model.robot, model.links(), actuator_values(model, args.model),
                       model.transmission.gear_matrix, force=args.force, source=str(args.model))
    print(done.summary())
    return 0


def actuator_values(model: IdentifiedModel, source: str) -> dict[str, np.ndarray]:
    """The model's joint-equivalent actuator parameters, from its standard parameters.

    Parameters
    ----------
    model : IdentifiedModel
        An identified model with ``standard`` parameters.
    source : str
        The result file, for the error message.

    Returns
    -------
    dict of str to (n,) ndarray
        Per actuator term of the model (``'Ia'``, ``'fv'``, ``'fc'``, ``'offset'``), one value
        per actuator (joint order). Unlike ``IdentifiedModel.actuator_values`` none is missing:
        a term regrouped with others has its share of the standard parameters.

    Raises
    ------
    InputError
        If the model has no standard parameters (a result written by an earlier version).
    """
    if model.standard is None:
        raise InputError(f'{source}: no standard_parameters (written by an earlier version of '
                         'robot-ident); re-identify with this version to export a URDF')
    reg = model.regressor
    values = {term: np.array([model.standard[reg.actuator_index(term, m)]
                              for m in range(model.robot.n)])
              for term in model.config.spec.actuator_terms}
    values.update(reg.friction_shape)
    return values
