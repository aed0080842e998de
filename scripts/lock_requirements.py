"""Write the lock files requirements/*.txt from the chosen requirements requirements/*.in.

Every distribution that pip would install is pinned: the lock of a file ``X.in`` is its full
resolution, minus what the files it includes with ``-r`` already pin (``jazzy.in`` and
``kilted.in`` include ``common.txt``, so the suite's own dependencies are pinned once, and a ROS
wheel that wanted another version of one of them fails here instead of at set-up). Run it with a
Python 3.11 on Linux x86_64 (the platform the locks are for), from any folder:

    python3.11 scripts/lock_requirements.py            # every lock, common.txt first
    python3.11 scripts/lock_requirements.py jazzy      # one

Resolution only (``pip install --dry-run``): nothing is installed. ``requirements/lowest.txt`` is
not written here: it is installed with ``--no-deps``, because one of its wheels declares
numpy >= 2.2 though it runs on 1.26, which pip's resolver would refuse (its header says more).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parents[1] / 'requirements'
#: Locks in the order they are written (common.txt before the files that include it).
LOCKS = ['common', 'jazzy', 'kilted']
PLATFORM = (3, 11)


def _resolve(requirements: Path) -> dict[str, str]:
    """Every distribution pip would install for ``requirements``: name → version."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / 'report.json'
        subprocess.run([sys.executable, '-m', 'pip', 'install', '--dry-run', '--ignore-installed',
                        '--quiet', '--report', str(report), '-r', str(requirements)], check=True)
        install = json.loads(report.read_text())['install']
    return {i['metadata']['name']: i['metadata']['version'] for i in install}


def _included_pins(requirements: Path) -> set[str]:
    """Names pinned by the lock files that ``requirements`` includes with ``-r``."""
    names = set()
    for line in requirements.read_text().splitlines():
        if line.startswith('-r '):
            included = requirements.parent / line[3:].strip()
            names |= {pin.split('==')[0].lower() for pin in included.read_text().splitlines()
                      if '==' in pin and not pin.startswith('#')}
    return names


def write_lock(name: str) -> Path:
    """Resolve ``requirements/<name>.in`` and write ``requirements/<name>.txt``."""
    source = REQUIREMENTS / f'{name}.in'
    pins = _resolve(source)
    already = _included_pins(source)
    lines = [f'# Lock of {name}.in (written by scripts/lock_requirements.py: edit {name}.in, '
             'then run it).',
             f'# Python {PLATFORM[0]}.{PLATFORM[1]}, Linux x86_64.']
    lines += [line for line in source.read_text().splitlines() if line.startswith('-r ')]
    lines += [f'{dist}=={version}' for dist, version in sorted(pins.items(), key=lambda p:
              p[0].lower()) if dist.lower() not in already]
    lock = REQUIREMENTS / f'{name}.txt'
    lock.write_text('\n'.join(lines) + '\n')
    return lock


def main(argv: list[str]) -> int:
    if sys.version_info[:2] != PLATFORM:
        print(f'lock_requirements: run with Python {PLATFORM[0]}.{PLATFORM[1]} (the locks are '
              f'for it), not {sys.version.split()[0]}', file=sys.stderr)
        return 2
    for name in argv or LOCKS:
        if name not in LOCKS:
            print(f'lock_requirements: no lock {name!r} (one of {", ".join(LOCKS)})',
                  file=sys.stderr)
            return 2
        print(f'lock_requirements: {write_lock(name)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
