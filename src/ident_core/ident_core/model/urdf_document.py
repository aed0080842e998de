"""Rewriting a URDF while keeping everything else of it: its prolog comments, the comments and
processing instructions inside ``<robot>``, its namespace prefixes and its indentation.

The identified URDF (``urdf_export``) and the URDF with a payload fixed to the robot
(``payload.urdf``) are written through this: a document read by ``read_urdf``, changed through
``UrdfDocument`` (new elements indented like their siblings, removed ones leaving the layout
intact), its own comments marked with ``MARK`` so that writing again replaces them, and
``document_text`` to serialise it. Numbers are written with ``repr`` (the shortest decimal that
reads back as the same double).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .inertial import LinkInertial
from .robot import RobotModel

#: Namespace of Drake's URDF extensions (``xmlns:drake``).
DRAKE_NS = 'http://drake.mit.edu'
#: Every comment robot-ident writes into a URDF starts with this, so that a rewrite replaces it.
MARK = 'robot-ident:'
_PROLOG_ITEM = re.compile(r'\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)', re.S)


def read_urdf(urdf: str | Path) -> tuple[list[str], ET.Element, str]:
    """Read a URDF for rewriting.

    Parameters
    ----------
    urdf : str or Path
        The file (its ``<?xml encoding?>`` is honoured).

    Returns
    -------
    prolog : list of str
        The comments, processing instructions and DOCTYPE before ``<robot>``, without the XML
        declaration and without the comments robot-ident wrote (``MARK``).
    root : xml.etree.ElementTree.Element
        ``<robot>``, with its comments and processing instructions.
    drake : str
        The namespace of the document's ``drake:`` prefix (``DRAKE_NS`` if undeclared).

    Raises
    ------
    InputError
        If the file cannot be read, decoded or parsed, or its root is no ``<robot>``.
    """
    try:
        raw = Path(urdf).read_bytes()
    except OSError as exc:
        raise InputError(f'{urdf}: cannot read the URDF ({exc.strerror})') from None
    declared = re.match(rb'<\?xml[^>]*encoding=["\']([A-Za-z0-9._-]+)["\']', raw)
    encoding = declared.group(1).decode() if declared else 'utf-8'
    try:
        text = raw.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        raise InputError(f'{urdf}: cannot decode the URDF as {encoding}') from None
    return parse_urdf(text, str(urdf))


def read_robot_urdf(robot: RobotModel) -> tuple[list[str], ET.Element, str]:
    """``read_urdf`` of a robot's URDF: its file, or the text it came as.

    Parameters
    ----------
    robot : RobotModel
        Loaded from a file (``robot.urdf``) or from text (``robot.urdf_text``, e.g. a
        ``robot_description`` message).

    Returns
    -------
    prolog, root, drake
        As ``read_urdf`` returns them, whichever the source.

    Raises
    ------
    InputError
        If the file or the text cannot be read as a URDF (naming the file or the source).
    """
    if robot.urdf is not None:
        return read_urdf(robot.urdf)
    return parse_urdf(robot.urdf_text, robot.urdf_source)


def parse_urdf(text: str, source: str) -> tuple[list[str], ET.Element, str]:
    """A URDF document's text read for rewriting (``read_urdf``).

    Parameters
    ----------
    text : str
        The document.
    source : str
        Where it came from, for messages.

    Returns
    -------
    prolog, root, drake
        As ``read_urdf``.

    Raises
    ------
    InputError
        If it cannot be parsed, or its root is no ``<robot>``.
    """
    urdf = source
    prolog, pos = [], 0
    while (item := _PROLOG_ITEM.match(text, pos)) is not None:
        pos = item.end()
        if not re.match(r'<\?xml\s', item.group(1)) and MARK not in item.group(1):
            prolog.append(item.group(1))
    try:
        namespaces = _declared_namespaces(text)
        parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True, insert_pis=True))
        root = ET.fromstring(text, parser=parser)
    except ET.ParseError as exc:
        hint = ('; declare the prefix on <robot>, e.g. xmlns:drake="http://drake.mit.edu"'
                if 'unbound prefix' in str(exc) else '')
        raise InputError(f'{urdf}: cannot parse the URDF as XML ({exc}{hint})') from None
    if root.tag != 'robot':
        raise InputError(f'{urdf}: the root element is <{root.tag}>, not <robot>')
    for prefix, uri in namespaces.items():
        if prefix and not re.fullmatch(r'ns\d+', prefix):
            ET.register_namespace(prefix, uri)
    drake = namespaces.get('drake', DRAKE_NS)
    ET.register_namespace('drake', drake)
    return prolog, root, drake


def document_text(prolog: list[str], root: ET.Element, header: str | None = None) -> str:
    """The text of a rewritten URDF.

    Parameters
    ----------
    prolog : list of str
        ``read_urdf``'s prolog.
    root : xml.etree.ElementTree.Element
        ``<robot>``.
    header : str, optional
        A comment written after the prolog, before ``<robot>``.

    Returns
    -------
    str
        XML declaration, prolog, header, the document; one item per line.
    """
    return '\n'.join(['<?xml version="1.0"?>', *prolog, *([header] if header else []),
                      ET.tostring(root, encoding='unicode')]) + '\n'


class UrdfDocument:
    """A URDF element tree being rewritten.

    Parameters
    ----------
    root : xml.etree.ElementTree.Element
        ``<robot>`` (``read_urdf``).
    drake : str
        The namespace of ``drake:`` tags.
    source : str
        Where the written values come from, for comments and error messages.

    Attributes
    ----------
    unit : str
        The document's indentation step.
    links, joints : dict of str to Element
        ``<link>`` and ``<joint>`` elements by name.
    """

    def __init__(self, root: ET.Element, drake: str, source: str):
        self.root = root
        self.drake = drake
        self.unit = _indent_unit(root)
        self.source = source
        self.links = {e.get('name'): e for e in root.findall('link')}
        self.joints = {e.get('name'): e for e in root.findall('joint')}

    def fixed_to(self, link: str) -> list[str]:
        """Links attached to a link through fixed joints only.

        Parameters
        ----------
        link : str
            The link.

        Returns
        -------
        list of str
            Depth first.
        """
        out = []
        for joint in self.joints.values():
            parent, child = joint.find('parent'), joint.find('child')
            if joint.get('type') == 'fixed' and parent is not None and child is not None \
                    and parent.get('link') == link and child.get('link') in self.links:
                out.append(child.get('link'))
                out += self.fixed_to(child.get('link'))
        return out

    def insert(self, parent: ET.Element, index: int, elem: ET.Element, depth: int) -> None:
        """Insert an element with the document's indentation.

        Parameters
        ----------
        parent : Element
            Where.
        index : int
            Position among ``parent``'s children (past the end: appended).
        elem : Element
            The new element.
        depth : int
            Its nesting depth (1 for a child of ``<robot>``).
        """
        inner, outer = '\n' + self.unit * depth, '\n' + self.unit * (depth - 1)
        if len(elem):
            ET.indent(elem, space=self.unit, level=depth)
        kids = list(parent)
        if not kids:
            parent.text, elem.tail = inner, outer
        elif index >= len(kids):
            elem.tail = kids[-1].tail if (kids[-1].tail or '').strip() == '' else outer
            kids[-1].tail = inner
        else:
            elem.tail = inner
        parent.insert(index, elem)


def inertial_element(body: LinkInertial) -> ET.Element:
    """``<inertial>`` of a body.

    Parameters
    ----------
    body : LinkInertial
        Mass [kg], centre of mass [m] and inertia about it [kg·m²] in the link's axes.

    Returns
    -------
    Element
        COM origin (``rpy="0 0 0"``), mass, inertia about the COM (link axes).
    """
    inertial = ET.Element('inertial')
    ET.SubElement(inertial, 'origin', xyz=' '.join(number(c) for c in body.com),
                  rpy='0 0 0')
    ET.SubElement(inertial, 'mass', value=number(body.mass))
    i = body.inertia
    ET.SubElement(inertial, 'inertia', ixx=number(i[0, 0]), ixy=number(i[0, 1]),
                  ixz=number(i[0, 2]), iyy=number(i[1, 1]), iyz=number(i[1, 2]),
                  izz=number(i[2, 2]))
    return inertial


def number(x: float) -> str:
    """Shortest decimal that reads back as the same double.

    Parameters
    ----------
    x : float

    Returns
    -------
    str
    """
    return repr(float(x))


def rpy(rotation: np.ndarray) -> np.ndarray:
    """URDF roll, pitch, yaw of a rotation matrix (Pinocchio's ``matrixToRpy``).

    Parameters
    ----------
    rotation : (3, 3) array_like

    Returns
    -------
    (3,) ndarray
        [rad], without negative zeros.
    """
    return pin.rpy.matrixToRpy(np.asarray(rotation, dtype=float)) + 0.0     # no -0.0


def comment(text: str) -> ET.Element:
    """A comment of robot-ident (starting with ``MARK``).

    Parameters
    ----------
    text : str
        Its text (``--``, not allowed in XML comments, becomes ``- -``).

    Returns
    -------
    Element
    """
    return ET.Comment(f' {MARK} {text} '.replace('--', '- -'))


def is_marked(elem: ET.Element) -> bool:
    """Whether an element is a comment robot-ident wrote.

    Parameters
    ----------
    elem : Element

    Returns
    -------
    bool
    """
    return elem.tag is ET.Comment and (elem.text or '').lstrip().startswith(MARK)


def remove_own(parent: ET.Element, tag: str) -> int:
    """Remove an element's children of one tag and robot-ident's comments.

    Parameters
    ----------
    parent : Element
    tag : str
        E.g. ``inertial``.

    Returns
    -------
    int
        The index the first removed child had (0 if none).
    """
    gone = [e for e in parent if e.tag == tag or is_marked(e)]
    at = list(parent).index(gone[0]) if gone else 0
    for e in gone:
        remove(parent, e)
    return at


def drop_marked(parent: ET.Element) -> bool:
    """Remove the comments an earlier rewrite wrote into an element.

    Parameters
    ----------
    parent : Element

    Returns
    -------
    bool
        Whether there were any.
    """
    marked = [e for e in parent if is_marked(e)]
    for e in marked:
        remove(parent, e)
    return bool(marked)


def remove(parent: ET.Element, elem: ET.Element) -> None:
    """Remove a child, keeping the whitespace layout of its siblings.

    Parameters
    ----------
    parent : Element
    elem : Element
        One of ``parent``'s children.
    """
    kids = list(parent)
    i = kids.index(elem)
    if 0 < i == len(kids) - 1:
        kids[i - 1].tail = elem.tail
    parent.remove(elem)


def _declared_namespaces(text: str) -> dict[str, str]:
    """``{prefix: uri}`` of the document's namespace declarations (first one per prefix)."""
    parser = ET.XMLPullParser(events=('start-ns',))
    parser.feed(text)
    parser.close()
    found: dict[str, str] = {}
    for _, (prefix, uri) in parser.read_events():
        found.setdefault(prefix, uri)
    return found


def _indent_unit(root: ET.Element) -> str:
    """The document's indentation step, from the whitespace before the first child."""
    last = (root.text or '').split('\n')[-1]
    return last if last and not last.strip() else '  '
