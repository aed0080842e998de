"""Names of the recordings a dataset came from (``Dataset.source``), as RESULT.yaml and
PAYLOAD.yaml record them: a path, the window of a rosbag2 topic ``BAG[topic rows a:b]``
(``window_source``), or a part of either from ``Dataset.split`` (``...[first 70%]``);
``datasets.load_source`` reads any of them back."""
from __future__ import annotations

import re
from pathlib import Path

#: Source name of a part of a dataset (``Dataset.split``).
SPLIT_TAG = re.compile(r'(?P<source>.*)\[(?P<part>first|last) (?P<percent>[0-9.]+)%\]')
#: Source name of the window of a rosbag2 topic (``window_source``).
WINDOW_TAG = re.compile(r'(?P<source>.*)\[(?P<topic>\S+) rows (?P<start>\d+):(?P<stop>\d+)\]')


def window_source(path: str | Path, topic: str, start: int, stop: int) -> str:
    """The source name of the messages ``[start, stop)`` of a rosbag2 topic (``load_bag``
    with a window): ``path[topic rows start:stop]``, read back by ``load_source``.

    Parameters
    ----------
    path : str or Path
        The rosbag2.
    topic : str
        The JointState topic.
    start, stop : int
        Message indices on that topic.

    Returns
    -------
    str
    """
    return f'{path}[{topic} rows {start}:{stop}]'


def short_source(source: str) -> str:
    """A source name without its folders, for messages: ``BAG[/joint_states rows 1:9]``,
    ``run.yaml[first 70%]``.

    Parameters
    ----------
    source : str
        ``Dataset.source``.

    Returns
    -------
    str
    """
    tag = WINDOW_TAG.fullmatch(source) or SPLIT_TAG.fullmatch(source)
    if tag:
        return short_source(tag['source']) + source[len(tag['source']):]
    return Path(source.rstrip('/')).name or source
