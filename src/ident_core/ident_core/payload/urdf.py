"""The robot's URDF with an identified payload fixed to it (``robot-ident payload
--export-urdf``): a new link holding the payload's ``<inertial>``, fixed to the link that carries
the payload frame; everything else of the URDF is kept (``model.urdf_document``)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import InputError
from ..model.inertial import LinkInertial
from ..model.robot import RobotModel
from ..model.urdf_document import (
    DRAKE_NS,
    UrdfDocument,
    comment,
    document_text,
    inertial_element,
    is_marked,
    number,
    read_robot_urdf,
    read_urdf,
    remove,
    rpy,
)


def urdf_with_fixed_body(urdf: str | Path | RobotModel, parent: str, name: str, placement,
                         body: LinkInertial, note: str) -> str:
    """The text of a URDF with a rigid body fixed to one of its links (e.g. a payload).

    Adds ``<joint name="{name}_joint" type="fixed">`` from ``parent`` to a new
    ``<link name="{name}">`` holding ``<inertial>``; an earlier body of that name (and its
    joint) is replaced. Everything else of the URDF is kept.

    Parameters
    ----------
    urdf : str, Path or RobotModel
        The URDF file, or a robot (its URDF file or text).
    parent : str
        The link the body is fixed to.
    name : str
        The new link's name.
    placement : pinocchio.SE3
        The new link's frame in ``parent``'s.
    body : LinkInertial
        Mass, centre of mass and inertia about it, in the new link's frame (``joint`` unused).
    note : str
        A comment written before the joint (where the values come from).

    Returns
    -------
    str
        The URDF document.

    Raises
    ------
    InputError
        If the URDF cannot be read, or has no link ``parent``.
    """
    if isinstance(urdf, RobotModel):
        prolog, root, _ = read_robot_urdf(urdf)
        urdf = urdf.urdf_source
    else:
        prolog, root, _ = read_urdf(Path(urdf))
    doc = UrdfDocument(root, DRAKE_NS, str(urdf))
    if parent not in doc.links:
        raise InputError(f'{urdf}: no link {parent!r} to fix {name!r} to')
    for old in [doc.links.get(name), doc.joints.get(f'{name}_joint')]:
        if old is not None:
            remove(root, old)
    for marked in [e for e in root if is_marked(e) and name in (e.text or '')]:
        remove(root, marked)
    joint = ET.Element('joint', name=f'{name}_joint', type='fixed')
    ET.SubElement(joint, 'parent', link=parent)
    ET.SubElement(joint, 'child', link=name)
    ET.SubElement(joint, 'origin', xyz=' '.join(number(x) for x in placement.translation),
                  rpy=' '.join(number(x) for x in rpy(placement.rotation)))
    link = ET.Element('link', name=name)
    link.append(inertial_element(body))
    end = len(list(root))
    doc.insert(root, end, comment(f'{name}: {note}'), 1)
    doc.insert(root, end + 1, joint, 1)
    doc.insert(root, end + 2, link, 1)
    return document_text(prolog, root)
