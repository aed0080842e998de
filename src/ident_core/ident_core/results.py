"""RESULT.yaml: an identified model and its validations, written atomically.

Schema (``format: robot-ident/result/1``)::

    robot: {name, urdf: /abs/path.urdf, urdf_sha256: ..., joints: [...]}
    settings: {friction, rotor_inertia, estimator, cutoff_hz, filter_order,
               use_recorded_velocity, decimate, rank_tolerance, seed}
    transmission: {gear_matrix, joint_offset, torque_scale}
    base_parameters: [{name, value, std, rel_std_percent}, ...]
    base_definition: {tolerance, standard_names, independent, dependent, k_d}
    actuators: {joints: [...], Ia: [...], fv: [...], fc: [...], offset: [...]}  # null: regrouped
    identification: {data, samples, base_parameter_count, condition_number, rank_gap,
                     residual_rms (N·m per joint), relative_error_percent}
    validation: [{data, relative_error_percent, rmse (N·m per joint), nrms_percent,
                  absolute_error}, ...]
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import yaml

from .base_parameters import BaseParameters
from .errors import InputError
from .identification import IdentifiedModel, Settings
from .robot_model import load_robot
from .transmission import Transmission

FORMAT = 'robot-ident/result/1'


def result_dict(model: IdentifiedModel, validations: list[dict]) -> dict:
    """The RESULT.yaml content as plain Python types."""
    return {
        'format': FORMAT,
        'robot': {'name': model.robot.model.name, 'urdf': str(model.robot.urdf.resolve()),
                  'urdf_sha256': model.robot.urdf_sha256(),
                  'joints': list(model.robot.joint_names)},
        'settings': model.settings.to_dict(),
        'transmission': model.transmission.to_dict(),
        'base_parameters': [
            {'name': n, 'value': float(v), 'std': float(s), 'rel_std_percent': float(r)}
            for n, v, s, r in zip(model.base.names, model.values, model.std,
                                  model.rel_std_percent)],
        'base_definition': model.base.to_dict(),
        'actuators': {'joints': list(model.robot.joint_names), **model.actuator_values()},
        'identification': _plain(model.stats),
        'validation': [_plain(v) for v in validations],
    }


def write_result(path: str | Path, model: IdentifiedModel, validations: list[dict]) -> Path:
    """Write RESULT.yaml atomically (temporary file + rename; an existing file is replaced
    only once the new one is complete)."""
    return write_atomic(path, yaml.safe_dump(result_dict(model, validations), sort_keys=False,
                                             allow_unicode=True, width=120))


def write_atomic(path: str | Path, text: str | bytes) -> Path:
    """Write ``text`` (str, or bytes written as they are) to ``path`` through a temporary file
    in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.', suffix='.tmp')
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)            # mkstemp creates 0600 files
        with os.fdopen(fd, 'wb' if isinstance(text, bytes) else 'w') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_result(path: str | Path, urdf: str | Path | None = None) -> IdentifiedModel:
    """Load an identified model from RESULT.yaml.

    Args:
        path: the result file. urdf: use this URDF instead of the recorded path.

    Raises:
        InputError: missing file, wrong format, missing field, URDF missing or with other joints.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f'{path}: file not found')
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise InputError(f'{path}: invalid YAML ({str(exc).splitlines()[0]})') from None
    if not isinstance(doc, dict) or doc.get('format') != FORMAT:
        raise InputError(f'{path}: not a robot-ident result (format: {FORMAT} expected)')
    try:
        robot = load_robot(urdf or doc['robot']['urdf'])
        if robot.joint_names != doc['robot']['joints']:
            raise InputError(f'{path}: URDF {robot.urdf} has joints {robot.joint_names}, the '
                             f'result was identified for {doc["robot"]["joints"]}')
        base = BaseParameters.from_dict(doc['base_definition'])
        params = doc['base_parameters']
        tr = doc['transmission']
        return IdentifiedModel(
            robot=robot, settings=Settings(**doc['settings']),
            transmission=Transmission(np.array(tr['gear_matrix'], dtype=float),
                                      np.array(tr['joint_offset'], dtype=float),
                                      np.array(tr['torque_scale'], dtype=float)),
            base=base, values=np.array([p['value'] for p in params], dtype=float),
            std=np.array([p['std'] for p in params], dtype=float),
            stats=doc.get('identification') or {})
    except (KeyError, TypeError) as exc:
        raise InputError(f'{path}: missing or malformed field {exc}') from None


def _plain(value):
    """numpy scalars/arrays → Python floats/lists, recursively."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value
