"""Options of the verbs that read recordings: damaged bags (``--recover``) and which part of a
rosbag2 (``--whole-recording``), as a ``workflows.inputs.RecordingOptions``."""
from __future__ import annotations

import argparse

from ..workflows.inputs import RecordingOptions

#: Help of the ``--recover`` option of the verbs that read recordings.
RECOVER_HELP = ('read rosbag2 recordings that a killed recorder left unfinished up to the damage '
                '(warns how many seconds were read)')
#: Help of the ``--ignore-plausibility`` option of the verbs that identify.
IGNORE_PLAUSIBILITY_HELP = ('use recordings that fail a plausibility check (positions far outside '
                            'the URDF limits, a constant effort column, swapped effort labels, '
                            'efforts in another unit or with the opposite sign of the URDF '
                            'model) as logged, with a warning')
#: Help of the ``--whole-recording`` option.
WHOLE_RECORDING_HELP = ('read rosbag2 recordings whole (default: only the periodic excitation '
                        'the ExcitationTrajectory message stored in the bag describes, as the '
                        'identification node does)')


def add_recording_arguments(parser: argparse.ArgumentParser, window: bool = True) -> None:
    """Add ``--recover`` and, with ``window``, ``--whole-recording``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The verb's sub-parser.
    window : bool
        Whether the verb cuts bags to their excitation (identify, validate, payload); friction
        and torque estimation read recordings whole.
    """
    parser.add_argument('--recover', action='store_true', help=RECOVER_HELP)
    if window:
        parser.add_argument('--whole-recording', action='store_true',
                            help=WHOLE_RECORDING_HELP)


def recording_options(args: argparse.Namespace) -> RecordingOptions:
    """The recording options the command line gives.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options: ``recover`` and, when the verb has it, ``whole_recording``.

    Returns
    -------
    RecordingOptions
    """
    return RecordingOptions(recover=args.recover,
                            excitation_window_only=not getattr(args, 'whole_recording', False))
