"""The one exception type of the runner: a launch file (or its command line) that cannot run."""


class LaunchError(Exception):
    """Configuration error, reported as one line before any process starts (exit code 2).

    ``file`` is the launch file, ``where`` the entry (``launch[3] (node 'sim')``) and ``key`` the
    offending key path (``param[1].value``); each may be empty.
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
    """A substitution that cannot be parsed or evaluated (re-raised as LaunchError)."""
