"""Exceptions of the runner.

:class:`LaunchError` is the one exception type the runner reports: a launch file (or its command
line) that cannot run. :class:`SubstitutionError` comes from the pure parsing and evaluation
functions and is re-raised as :class:`LaunchError` with the location added.
"""


class LaunchError(Exception):
    """Configuration error, reported as one line before any process starts (exit code 2).

    ``str(error)`` is ``<file>: <where>: key '<key>': <message>``, leaving out the location
    parts that are empty.

    Parameters
    ----------
    message : str
        What is wrong.
    file : str, optional
        The launch file; may be empty.
    where : str, optional
        The entry, e.g. ``launch[3] (node 'sim')``; may be empty.
    key : str, optional
        The offending key path, e.g. ``param[1].value``; may be empty.
    """

    def __init__(self, message, file=None, where=None, key=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.where = where
        self.key = key

    def __str__(self):
        location = ': '.join(str(p) for p in (self.file, self.where) if p)
        key = f"key '{self.key}': " if self.key else ''
        return f'{location}: {key}{self.message}' if location else f'{key}{self.message}'


class SubstitutionError(ValueError):
    """A substitution that cannot be parsed or evaluated (re-raised as LaunchError).

    Also raised for parameter values that have no ROS parameter type. The message does not
    name the launch file, entry or key; the caller adds them when it re-raises.
    """
