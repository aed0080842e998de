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


def source_path(source: str) -> tuple[str, str]:
    """A source name split into the path of its recording and its tags.

    Parameters
    ----------
    source : str
        ``Dataset.source``.

    Returns
    -------
    path : str
        The file or bag (``source`` without its tags).
    tags : str
        The window and split tags that follow it, e.g. ``[/joint_states rows 1:9][first 70%]``;
        ``''`` for a plain path.
    """
    tag = WINDOW_TAG.fullmatch(source) or SPLIT_TAG.fullmatch(source)
    if tag is None:
        return source, ''
    path, tags = source_path(tag['source'])
    return path, tags + source[len(tag['source']):]


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
    path, tags = source_path(source)
    return (Path(path.rstrip('/')).name or path) + tags
