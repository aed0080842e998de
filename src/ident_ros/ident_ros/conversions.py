"""Conversions between ident_msgs messages and ident_core objects."""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Time

from ident_core.excitation.fourier import FourierTrajectory, trajectory_from_dict
from ident_msgs.msg import ExcitationTrajectory, IdentifiedParameters


def trajectory_to_msg(trajectory: FourierTrajectory, stamp: Time,
                      periods: int) -> ExcitationTrajectory:
    """The message describing a trajectory run for some periods.

    Parameters
    ----------
    trajectory : FourierTrajectory
        The trajectory.
    stamp : builtin_interfaces.msg.Time
        Start of the first period (t = 0 of the series).
    periods : int
        Periods run.

    Returns
    -------
    ident_msgs.msg.ExcitationTrajectory
    """
    msg = ExcitationTrajectory()
    msg.header.stamp = stamp
    msg.name = trajectory.name
    msg.joint_names = list(trajectory.joint_names)
    msg.wf = float(trajectory.wf)
    msg.harmonics = trajectory.harmonics
    msg.q0 = [float(x) for x in trajectory.q0]
    msg.a = [float(x) for x in trajectory.a.ravel()]
    msg.b = [float(x) for x in trajectory.b.ravel()]
    msg.period = float(trajectory.period)
    msg.periods = int(periods)
    return msg


def trajectory_from_msg(msg: ExcitationTrajectory) -> FourierTrajectory:
    """The trajectory a message describes.

    Parameters
    ----------
    msg : ident_msgs.msg.ExcitationTrajectory

    Returns
    -------
    FourierTrajectory

    Raises
    ------
    InputError
        For inconsistent array sizes or values (naming the field).
    """
    n, h = len(msg.joint_names), msg.harmonics
    shape_ok = len(msg.a) == len(msg.b) == n * h
    data = {'name': msg.name or 'excitation', 'joint_names': list(msg.joint_names),
            'wf': msg.wf, 'periods': max(1, msg.periods), 'q0': list(msg.q0),
            'a': np.reshape(msg.a, (n, h)).tolist() if shape_ok else list(msg.a),
            'b': np.reshape(msg.b, (n, h)).tolist() if shape_ok else list(msg.b)}
    if msg.period and not math.isclose(msg.period, 2 * math.pi / msg.wf if msg.wf else 0,
                                       rel_tol=1e-6):
        data['period'] = msg.period
    return trajectory_from_dict(data, 'ExcitationTrajectory message')


def parameters_msg(result: dict, stamp: Time) -> IdentifiedParameters:
    """The ``IdentifiedParameters`` message of an identification result.

    Parameters
    ----------
    result : dict
        RESULT.yaml content (``ResultFile.model_dump()``); ``robot``, ``config``,
        ``base_parameters``, ``actuators``, ``identification`` and ``validation`` are used.
    stamp : builtin_interfaces.msg.Time
        Header stamp.

    Returns
    -------
    ident_msgs.msg.IdentifiedParameters
        Friction and rotor inertia are NaN where the model has none or they are regrouped;
        RMSE and relative error of the first validation, else of the identification fit.
    """
    msg = IdentifiedParameters()
    msg.header.stamp = stamp
    msg.robot_name = result['robot'].get('name', '')
    msg.joint_names = list(result['robot']['joints'])
    params = result['base_parameters']
    msg.base_parameter_names = [p['name'] for p in params]
    msg.base_parameter_values = [float(p['value']) for p in params]
    msg.base_parameter_std = [float(p['std']) for p in params]
    msg.base_parameter_rel_std_percent = [float(p['rel_std_percent']) for p in params]
    actuators = result['actuators']
    nan = float('nan')
    for field, key in (('viscous_friction', 'fv'), ('coulomb_friction', 'fc'),
                       ('torque_offset', 'offset'), ('rotor_inertia', 'Ia')):
        values = actuators.get(key) or [None] * len(msg.joint_names)
        setattr(msg, field, [nan if v is None else float(v) for v in values])
    ident = result['identification']
    msg.condition_number = float(ident['condition_number'])
    validation = result['validation'][0] if result['validation'] else None
    source = validation or {'rmse': ident['residual_rms'],
                            'relative_error_percent': ident['relative_error_percent']}
    msg.rmse = [float(x) for x in source['rmse']]
    msg.relative_error_percent = float(source['relative_error_percent'])
    msg.estimator = result['config']['estimator']
    msg.samples = int(ident['samples'])
    return msg
