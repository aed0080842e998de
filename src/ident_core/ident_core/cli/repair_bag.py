"""``robot-ident repair-bag``: make rosbag2 recordings that a killed recorder left unfinished
readable again (``data.bag.repair.repair_bag``; the original MCAP is kept)."""
from __future__ import annotations

import argparse

from ..data.bag.repair import repair_bag
from .progress import progress_bar


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``repair-bag``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The sub-parser of ``repair-bag``; its ``run`` default is set.
    """
    parser.add_argument('bags', nargs='+', metavar='BAG', help='rosbag2 folder to repair')
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Repair every bag, print one line each; 0 (errors raise, after the bags before)."""
    with progress_bar(args, 'repair-bag', len(args.bags), unit='bag') as bar:
        for bag in bar.each(args.bags, 'repairing'):
            done = repair_bag(bag)
            bar.update()
            topics = ', '.join(f'{n} {t}' for t, n in done.topics.items())
            print(f'{done.path}: {done.damage}; recovered {done.scan.seconds:.3f} s ({topics}) '
                  f'into {done.repaired.name}, {done.source.name} kept')
    return 0
