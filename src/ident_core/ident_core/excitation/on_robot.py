"""An excitation optimised for the robot that will run it (the excitation node's ``~/optimize``).

The settings come from an excitation config with the runner's acceleration limits instead of the
config's and a margin of at least the runner's, so that the optimised trajectory passes the
runner's own check of every sample (``motion.plan.period_violations``) before anything moves;
the request may replace the objective, the harmonics and the period. The trajectory is named
after the file it is written to.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import ExcitationError, InputError
from ..model.robot import RobotModel
from ..motion.limits import JointLimits
from ..motion.plan import period_violations
from .config import ExcitationConfig
from .optimize import ExcitationResult, optimize_excitation
from .problem import ExcitationProblem


def optimizer_settings(config: ExcitationConfig, acceleration, margin: float, objective: str = '',
                       harmonics: int = 0, period: float = 0.0) -> ExcitationConfig:
    """The settings of an optimisation by the node.

    Parameters
    ----------
    config : ExcitationConfig
        The node's optimiser settings (``optimizer_config``).
    acceleration : (n,) array_like
        The node's acceleration limits [rad/s²], replacing the config's.
    margin : float
        The node's margin; the config's is raised to it if smaller.
    objective : str
        The request's objective ('' keeps the config's).
    harmonics : int
        The request's harmonics (0 keeps the config's).
    period : float
        The request's period [s] (0 keeps the config's).

    Returns
    -------
    ExcitationConfig

    Raises
    ------
    InputError
        For invalid values (naming the field), or ``locked_joints`` in ``config`` (the node
        runs every joint of its URDF).
    """
    if config.locked_joints:
        raise InputError(f'{config.source}: locked_joints cannot be used by the excitation '
                         f'node, it runs every joint of its URDF')
    limits = config.limits.updated(acceleration=[float(a) for a in acceleration],
                                   margin=max(config.limits.margin, margin))
    return config.updated(limits=limits, objective=objective or None,
                          harmonics=int(harmonics) or None, period=float(period) or None)


def trajectory_name(text: str) -> str:
    """``text`` usable as a trajectory and experiment name.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        ``text`` with every character other than letters, digits, '-' and '_' replaced by '-'.
    """
    return re.sub(r'[^A-Za-z0-9_-]', '-', text)


def default_trajectory_path(directory: str | Path, urdf: Path, optimizer: str, objective: str,
                            seed: int) -> Path:
    """Where an optimised trajectory goes when the request names no file.

    Parameters
    ----------
    directory : str or Path
        The node's ``optimized_trajectory_dir``.
    urdf : Path
        The robot's URDF (its stem names the file).
    optimizer, objective : str
        Of the optimisation.
    seed : int
        Of the optimisation.

    Returns
    -------
    Path
        ``<directory>/<urdf stem>_<optimizer>_<objective>_seed<seed>.yaml``, characters other
        than letters, digits, '-' and '_' in the first three parts replaced by '-'.
    """
    return Path(directory) / (trajectory_name(f'{urdf.stem}_{optimizer}_{objective}')
                              + f'_seed{seed}.yaml')


def optimize_within_limits(robot: RobotModel, config: ExcitationConfig, limits: JointLimits,
                           optimizer: str, seed: int, budget: float,
                           path: str | Path) -> tuple[ExcitationResult, Path]:
    """Optimise an excitation, check it against the runner's limits and write it.

    Parameters
    ----------
    robot : RobotModel
        The robot.
    config : ExcitationConfig
        ``optimizer_settings``.
    limits : JointLimits
        The runner's limits, margin applied (any joint order).
    optimizer : str
        One of ``excitation.optimize.OPTIMIZERS``.
    seed : int
        Random seed.
    budget : float
        Wall-clock budget [s].
    path : str or Path
        The trajectory file to write (its stem, as ``trajectory_name``, names the trajectory).

    Returns
    -------
    result : ExcitationResult
    path : Path
        The file written.

    Raises
    ------
    ExcitationError
        If no feasible trajectory was found, or the optimised one exceeds ``limits`` (a config
        whose ``limits.joints`` widen a URDF limit).
    InputError
        For invalid settings.
    """
    result = optimize_excitation(ExcitationProblem(robot, config), optimizer, seed, budget,
                                 name=trajectory_name(Path(path).stem))
    problems = period_violations(result.trajectory, limits)
    if problems:
        raise ExcitationError(f'the optimised trajectory exceeds the limits of this node '
                              f'({problems[0]}); does limits.joints of {config.source} '
                              f'widen a URDF limit?')
    return result, result.trajectory.to_file().write(path)
