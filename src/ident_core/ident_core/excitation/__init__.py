"""Optimal excitation trajectories (methods §4): finite Fourier series whose stacked base
regressor is well conditioned, within joint, torque and collision constraints."""
from .config import ExcitationConfig, config_from_dict, load_excitation_config
from .optimize import OPTIMIZERS, ExcitationResult, optimize_excitation
from .problem import ExcitationProblem

__all__ = ['ExcitationConfig', 'ExcitationProblem', 'ExcitationResult', 'OPTIMIZERS',
           'config_from_dict', 'load_excitation_config', 'optimize_excitation']
