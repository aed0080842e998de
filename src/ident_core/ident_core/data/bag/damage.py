"""What a recorder that died without closing its bag (SIGKILL, out of memory, power loss)
leaves: a bag folder without ``metadata.yaml`` whose MCAP ends without its footer. This tells
such a bag from a complete one and from one still being written (``lock``), and finds them."""
from __future__ import annotations

from pathlib import Path

from ...errors import InputError
from ...files import read_yaml
from .format import METADATA_FILE, RECOVERED_SUFFIX
from .lock import is_being_written
from .mcap import has_footer


def bag_damage(path: str | Path) -> str | None:
    """Why a rosbag2 cannot be read as it is, if it is an MCAP bag left unfinished.

    Parameters
    ----------
    path : str or Path
        A bag folder or an ``.mcap`` file.

    Returns
    -------
    str or None
        A short reason (``no metadata.yaml and x.mcap has no footer``), or None for a complete
        bag and for anything that is no MCAP bag at all (the normal readers report those).
    """
    path = Path(path)
    if path.is_file():
        if path.suffix == '.mcap' and not has_footer(path):
            return f'{path.name} has no footer'
        return None
    if not path.is_dir():
        return None
    if not (path / METADATA_FILE).is_file():
        mcap = damaged_mcap(path)
        if mcap is None:
            return None
        ending = 'has no footer' if not has_footer(mcap) else 'is complete'
        return f'no {METADATA_FILE} and {mcap.name} {ending}'
    for mcap in _listed_files(path):
        if mcap.suffix == '.mcap' and not has_footer(mcap):
            return f'{mcap.name} has no footer' if mcap.exists() else f'{mcap.name} is missing'
    return None


def damaged_mcap(folder: Path) -> Path | None:
    """The original MCAP of a bag folder: the one ``metadata.yaml`` lists, else the only
    ``*.mcap`` that is no ``*.recovered.mcap``.

    Parameters
    ----------
    folder : Path
        The bag folder.

    Returns
    -------
    Path or None
        None if there is none.

    Raises
    ------
    InputError
        If the folder holds several candidates.
    """
    if (folder / METADATA_FILE).is_file():
        listed = [p for p in _listed_files(folder) if p.suffix == '.mcap']
        return listed[0] if listed else None
    found = sorted(p for p in folder.glob('*.mcap') if not p.name.endswith(RECOVERED_SUFFIX))
    if len(found) > 1:
        raise InputError(f'{folder}: several MCAP files ({", ".join(p.name for p in found)}) '
                         f'and no {METADATA_FILE}; cannot tell which one to read')
    return found[0] if found else None


def _listed_files(folder: Path) -> list[Path]:
    try:
        info = read_yaml(folder / METADATA_FILE, 'rosbag2 metadata')
        names = info['rosbag2_bagfile_information']['relative_file_paths']
        return [folder / Path(str(n)).name for n in names]
    except (InputError, KeyError, TypeError):
        return []


def damage_message(path: str | Path, damage: str) -> str:
    """The one-line error for a damaged bag read without recovery.

    Parameters
    ----------
    path : str or Path
        The bag.
    damage : str
        ``bag_damage(path)``.

    Returns
    -------
    str
    """
    mcap = path if Path(path).is_file() else damaged_mcap(Path(path))
    if mcap is not None and is_being_written(mcap):
        return f'{path}: rosbag2 still being recorded ({damage}); stop the recording first'
    return (f'{path}: damaged rosbag2 ({damage}: its recorder did not close it); read the '
            'complete part with --recover (node parameter recover) or repair it with '
            '"robot-ident repair-bag"')


def find_damaged_bags(directory: str | Path) -> list[tuple[Path, str]]:
    """The unfinished MCAP bags among the folders of ``directory`` that no writer holds.

    Parameters
    ----------
    directory : str or Path
        E.g. the recorder's ``output_dir``.

    Returns
    -------
    list of (Path, str)
        Bag folder and ``bag_damage`` reason, sorted by name.
    """
    found = []
    for folder in sorted(p for p in Path(directory).iterdir() if p.is_dir()):
        try:
            damage = bag_damage(folder)
            mcap = damaged_mcap(folder) if damage else None
        except InputError as exc:
            found.append((folder, str(exc)))
            continue
        if damage and not (mcap is not None and is_being_written(mcap)):
            found.append((folder, damage))
    return found
