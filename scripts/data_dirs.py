"""Where the public robot recordings are: the one place the tests and benchmarks look them up.

The order is the Makefile's: the folder named by the data set's environment variable (the
Makefile exports ``DATA_DIR`` and ``TX40_DIR``), else ``data/<set>`` of the repository (what
``scripts/fetch_data.sh`` writes), else ``../shared/data/<set>`` beside the repository.

    import sys; sys.path.insert(0, str(REPO / 'scripts'))
    from data_dirs import recording_dir
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Data set name -> environment variable that names its folder.
VARIABLES = {'kuka_lwr4': 'DATA_DIR', 'staubli_tx40': 'TX40_DIR'}
#: The message of a data set that is not found (``{name}``, ``{places}``).
MISSING = '{name} recordings not found in {places} (run scripts/fetch_data.sh)'


def candidates(name: str) -> list[Path]:
    """The folders searched for data set ``name``, in order.

    Parameters
    ----------
    name : str
        ``'kuka_lwr4'`` or ``'staubli_tx40'``.

    Returns
    -------
    list of Path
        The environment variable's folder alone when it is set, else ``data/<name>`` of the
        repository and ``../shared/data/<name>``.
    """
    variable = VARIABLES.get(name)
    if variable and os.environ.get(variable):
        return [Path(os.environ[variable])]
    return [REPO / 'data' / name, REPO.parent / 'shared' / 'data' / name]


def recording_dir(name: str) -> Path:
    """The folder of data set ``name``: the first of ``candidates`` that exists, else the
    first candidate (where ``scripts/fetch_data.sh`` would put it).

    Parameters
    ----------
    name : str
        ``'kuka_lwr4'`` or ``'staubli_tx40'``.

    Returns
    -------
    Path
    """
    places = candidates(name)
    return next((p for p in places if p.is_dir()), places[0])


def missing_reason(name: str) -> str:
    """A one-line reason to skip when data set ``name`` is absent.

    Parameters
    ----------
    name : str
        ``'kuka_lwr4'`` or ``'staubli_tx40'``.

    Returns
    -------
    str
    """
    return MISSING.format(name=name, places=' or '.join(str(p) for p in candidates(name)))
