"""Exceptions raised by ident_core.

Every error meant for a user names the file, field, row or joint at fault in its message; the CLI
prints that message on one line and exits with code 2.
"""


class IdentError(ValueError):
    """Base class of all errors the core raises on bad input or an unsolvable problem."""


class InputError(IdentError):
    """A file, field, row or joint of the input is missing or invalid."""


class ExcitationError(IdentError):
    """An excitation problem: the data do not excite some base parameters (rank deficient
    identification matrix), or an excitation motion cannot be run within the joint limits."""


class DataWarning(UserWarning):
    """A recoverable problem with the data (dropped rows, a gap, a poor fit); the CLI prints it
    as one ``robot-ident: warning:`` line."""
