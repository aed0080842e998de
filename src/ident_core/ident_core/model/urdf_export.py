"""The identified robot as a URDF: the input URDF with the identified dynamics written in.

Everything of the input URDF is kept (visuals, collisions, limits, ``<ros2_control>``,
``<gazebo>``, comments inside ``<robot>``), except what the identification replaces:

``<link><inertial>``
    Each moving joint's child link gets the identified mass, centre of mass and inertia about
    the centre of mass in the link axes (``rpy="0 0 0"``), every number written with ``repr``
    (shortest exact decimal), so a reload reproduces the parameters to rounding. Every URDF
    consumer reads it. Pinocchio merges the links attached to a moving link by fixed joints
    into one rigid body (MuJoCo fuses them too, Drake welds them); the identified parameters
    are those of that whole body, so the links fixed to it lose their ``<inertial>`` (a
    comment says so) and the reloaded body is the identified one in any of them.
``<joint><dynamics damping friction>``
    Viscous (``fv``) and Coulomb (``fc``) friction. Read by Pinocchio (``model.damping``,
    ``model.friction``), MuJoCo's URDF import (joint ``damping`` and ``frictionloss``,
    ``src/xml/xml_urdf.cc``), Gazebo through SDFormat's URDF conversion (joint axis
    dynamics), and Drake (``damping``; it warns that ``friction`` is not supported,
    ``multibody/parsing/detail_urdf_parser.cc``). Without a friction model in the
    identification the input's ``<dynamics>`` is left as it was.
Rotor inertia
    No URDF tag is read by ros2_control (its ``component_parser.cpp`` reads only
    ``mechanical_reduction`` and ``offset`` of a ``<transmission>`` inside ``<ros2_control>``,
    for the hardware plugin), Pinocchio's URDF parser (``model.armature`` stays 0) or MuJoCo's
    URDF import (``armature`` stays 0). The one reader is Drake: a top-level ROS-style
    ``<transmission>`` (``transmission_interface/SimpleTransmission``) whose ``<actuator>``
    holds ``<drake:rotor_inertia value=.../>`` (motor side) and ``<drake:gear_ratio
    value=.../>``; Drake adds the reflected inertia ``gear_ratio² · rotor_inertia`` to the
    joint. One such transmission is written per joint (or an existing single-joint one is
    updated), with ``<mechanicalReduction>`` the gear ratio of the result's transmission
    (ROS ``transmission_interface`` semantics: motor = ratio × joint; Drake warns about values
    other than 1 and uses ``drake:gear_ratio``). Each joint also carries a comment with the
    joint-side (reflected) value ``Ia``: set it as Pinocchio's ``model.armature`` or MuJoCo's
    joint ``armature``. Drake creates joint actuators only from ``<transmission>`` elements, so
    the written transmissions also make the joints actuated in Drake.
Torque offsets
    No URDF tag; a comment on the joint.
Coupled transmissions
    With a coupled gear matrix (e.g. the Stäubli TX40 wrist, motor 6 turning with joints 5
    and 6) each actuator's values are written on its own joint with a comment giving the
    normalised gear row: URDF cannot express the coupling.

The identified values are joint-equivalent (``model.regressor``): for an uncoupled joint they
are the joint-side damping, Coulomb friction and reflected rotor inertia.
"""
from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import write_atomic
from .inertial import LinkInertial
from .robot import RobotModel
from .urdf_document import (
    MARK,
    UrdfDocument,
    comment,
    document_text,
    drop_marked,
    inertial_element,
    is_marked,
    number,
    read_robot_urdf,
    remove_own,
)

#: Actuator terms that a physical actuator has non-negative.
NON_NEGATIVE = ('Ia', 'fv', 'fc')


@dataclass
class UrdfExport:
    """What ``export_urdf`` wrote.

    Parameters
    ----------
    path : Path
        The URDF written.
    bodies : list of str
        Links whose ``<inertial>`` holds an identified body, joint order.
    cleared : list of str
        Links fixed to such a body whose ``<inertial>`` was removed.
    tags : list of str
        The other tags written (``<dynamics damping friction>``, ...).
    inconsistent : list of str
        Physical-consistency problems exported anyway (``force``).
    """

    path: Path
    bodies: list[str]
    cleared: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line saying what was written.

        Returns
        -------
        str
        """
        text = f'wrote {self.path}: <inertial> of {len(self.bodies)} bodies'
        if self.cleared:
            text += f' (removed from the fixed links {", ".join(self.cleared)})'
        text += ''.join(f', {t}' for t in self.tags)
        if self.inconsistent:
            text += f'; NOT physically consistent: {"; ".join(self.inconsistent)}'
        return text


def consistency_problems(links: list[LinkInertial], actuators: dict) -> list[str]:
    """The physical-consistency problems of an identified model.

    Parameters
    ----------
    links : list of LinkInertial
        The identified bodies.
    actuators : dict of str to (n,) array_like
        Joint-equivalent actuator values per term (``'Ia'``, ``'fv'``, ``'fc'``, ``'offset'``),
        joint order of ``links``.

    Returns
    -------
    list of str
        One entry per body that is not physically consistent (naming its link and joint) and
        per negative rotor inertia, viscous or Coulomb friction (naming the joint); empty when
        the model is physical.
    """
    problems = [f'body {k.link} (joint {k.joint}) '
                + (f'has mass {k.mass:.6g} kg' if k.mass <= 0 else
                   'has an inertia no rigid body has (pseudo-inertia not positive semi-definite)')
                for k in links if not k.physically_consistent]
    for term in NON_NEGATIVE:
        if term not in actuators:
            continue
        values = np.asarray(actuators[term], dtype=float)
        floor = -1e-9 * max(float(np.abs(values).max(initial=0.0)), 1.0)
        problems += [f'{term} of joint {k.joint} is {v:.6g} < 0'
                     for k, v in zip(links, values) if v < floor]
    return problems


def export_urdf(path: str | Path, robot: RobotModel, links: list[LinkInertial],
                actuators: dict, gear_matrix: np.ndarray, *, force: bool = False,
                source: str = 'the identified model') -> UrdfExport:
    """Write the robot's URDF with identified inertias, friction and rotor inertias.

    See the module docstring for the tags written and who reads them.

    Parameters
    ----------
    path : str or Path
        The URDF to write (atomically).
    robot : RobotModel
        The identified robot; its ``urdf`` is the template.
    links : list of LinkInertial
        (n,) identified bodies, joint order (``inertial.link_inertials``).
    actuators : dict of str to (n,) array_like
        Joint-equivalent actuator values per term in the model (``'Ia'`` [kg·m² or kg],
        ``'fv'`` [N·m·s/rad or N·s/m], ``'fc'`` [N·m or N], ``'offset'`` [N·m or N]), joint
        order; terms absent from the model are absent.
    gear_matrix : (n, n) ndarray
        ``R`` of the result's transmission (``q_motor = R q_joint``).
    force : bool
        Write a model that is not physically consistent.
    source : str
        Where the values come from (the result file), for comments and error messages.

    Returns
    -------
    UrdfExport

    Raises
    ------
    InputError
        If the model is not physically consistent and ``force`` is False (naming the bodies and
        joints), the robot was identified with locked joints, the links do not match the
        robot's joints, or the URDF cannot be read.
    """
    text, report = identified_urdf(robot, links, actuators, gear_matrix, force=force,
                                   source=source)
    report.path = write_atomic(path, text)
    return report


def identified_urdf(robot: RobotModel, links: list[LinkInertial], actuators: dict,
                    gear_matrix: np.ndarray, *, force: bool = False,
                    source: str = 'the identified model') -> tuple[str, UrdfExport]:
    """The text of the identified URDF (``export_urdf`` without writing it).

    Parameters
    ----------
    robot : RobotModel
        The identified robot; its ``urdf`` is the template.
    links : list of LinkInertial
        (n,) identified bodies, joint order.
    actuators : dict of str to (n,) array_like
        Joint-equivalent actuator values per term in the model, joint order.
    gear_matrix : (n, n) ndarray
        ``R`` of the result's transmission.
    force : bool
        Write a model that is not physically consistent.
    source : str
        Where the values come from, for comments and error messages.

    Returns
    -------
    text : str
        The URDF document.
    report : UrdfExport
        What it holds (``path`` is the template until written).

    Raises
    ------
    InputError
        As ``export_urdf``.
    """
    _check_model(robot, links, actuators, gear_matrix, source)
    problems = consistency_problems(links, actuators)
    if problems and not force:
        raise InputError(f'{source}: not physically consistent: '
                         f'{"; ".join(problems)} (--force exports it anyway)')
    prolog, root, drake = read_robot_urdf(robot)
    doc = _IdentifiedDocument(root, drake, source)
    report = UrdfExport(path=robot.urdf, bodies=[k.link for k in links], inconsistent=problems)
    inconsistent = {k.link for k in links if not k.physically_consistent}
    for k in links:
        report.cleared += doc.write_body(k, k.link in inconsistent)
    gear = np.asarray(gear_matrix, dtype=float)
    for m, k in enumerate(links):
        doc.write_joint(m, k.joint, robot.joint_names, actuators, gear)
    report.tags = _tags(actuators, robot.n)
    header = _header(source, actuators, report)
    return document_text(prolog, root, header), report


def _check_model(robot, links, actuators, gear_matrix, source) -> None:
    """Refuse what the URDF cannot represent or what does not belong to the robot."""
    if robot.locked_joints:
        raise InputError(f'{source}: identified with locked joints '
                         f'({", ".join(robot.locked_joints)}), whose bodies are merged into '
                         'their parents; a URDF export of such a model is not supported')
    if [k.joint for k in links] != list(robot.joint_names):
        raise InputError(f'{source}: bodies of joints {[k.joint for k in links]} do not match '
                         f'the moving joints {robot.joint_names} of {robot.urdf_source}')
    for term, values in actuators.items():
        if np.shape(values) != (robot.n,):
            raise InputError(f'{source}: {robot.n} {term} values expected, got '
                             f'{np.shape(values)}')
    if np.shape(gear_matrix) != (robot.n, robot.n):
        raise InputError(f'{source}: gear matrix must be {robot.n}×{robot.n}')


def _tags(actuators: dict, n: int) -> list[str]:
    """The tags written besides ``<inertial>``, for the report."""
    tags = []
    attrs = [a for t, a in (('fv', 'damping'), ('fc', 'friction')) if t in actuators]
    if attrs:
        tags.append(f'<dynamics {" ".join(attrs)}> of {n} joints')
    if 'Ia' in actuators:
        tags.append(f'rotor inertia in {n} <transmission> (drake:rotor_inertia, '
                    'drake:gear_ratio) and joint comments')
    if 'offset' in actuators:
        tags.append('torque offsets in joint comments')
    if 'vs' in actuators:
        tags.append('Stribeck parameters in joint comments')
    return tags


def _header(source: str, actuators: dict, report: UrdfExport) -> str:
    """The comment before ``<robot>`` explaining what was written."""
    lines = [f'{MARK} identified dynamics written by robot-ident export-urdf from {source}.',
             '<inertial> of each moving link: the identified mass, centre of mass and inertia '
             'about it (link axes) of the whole rigid body moved by its joint.']
    if report.cleared:
        lines.append(f'The links fixed to a moving link ({", ".join(report.cleared)}) carry '
                     'no <inertial>: their mass is in that body.')
    if 'fv' in actuators or 'fc' in actuators:
        lines.append('<dynamics damping friction>: identified viscous and Coulomb friction '
                     '(joint side; read by Pinocchio, MuJoCo, Gazebo; Drake reads damping).')
    if 'Ia' in actuators:
        lines.append('Rotor inertia: <transmission> actuators carry drake:rotor_inertia '
                     '(motor side) and drake:gear_ratio (read by Drake); the reflected '
                     'joint-side value Ia is in a comment on each joint (Pinocchio '
                     'model.armature, MuJoCo joint armature).')
    if 'offset' in actuators:
        lines.append('Torque offsets have no URDF tag: comments on the joints.')
    if 'vs' in actuators:
        lines.append('Stribeck friction (fs, vs, delta, v_l) has no URDF tag: comments on the '
                     'joints.')
    if report.inconsistent:
        lines.append('NOT physically consistent (exported with force): '
                     + '; '.join(report.inconsistent))
    wrapped = [w for line in lines for w in textwrap.wrap(line, 94, break_long_words=False,
                                                         break_on_hyphens=False)]
    return '<!-- ' + '\n     '.join(wrapped).replace('--', '- -') + ' -->'


class _IdentifiedDocument(UrdfDocument):
    """The URDF being rewritten with identified dynamics."""

    def write_body(self, body: LinkInertial, inconsistent: bool) -> list[str]:
        """Replace the body link's ``<inertial>``; remove those of the links fixed to it (the
        names of the links that had one, or had it removed by an earlier export)."""
        joint = self.joints.get(body.joint)
        child = None if joint is None else joint.find('child')
        if child is None or child.get('link') != body.link or body.link not in self.links:
            raise InputError(f'{self.source}: joint {body.joint} of the URDF does not carry '
                             f'link {body.link}')
        cleared = self.fixed_to(body.link)
        link = self.links[body.link]
        index = remove_own(link, 'inertial')
        note = (f'identified ({self.source}): the whole rigid body moved by {body.joint}'
                + (f', with the links fixed to it ({", ".join(cleared)})' if cleared else '')
                + (' - NOT physically consistent, exported with force' if inconsistent else ''))
        self.insert(link, index, comment(note), 2)
        self.insert(link, index + 1, inertial_element(body), 2)
        removed = []
        for name in cleared:
            fixed = self.links[name]
            if fixed.find('inertial') is not None or any(is_marked(e) for e in fixed):
                removed.append(name)
                self.insert(fixed, remove_own(fixed, 'inertial'), comment(
                    f'<inertial> removed: this link is fixed to {body.link}, whose identified '
                    '<inertial> holds the whole rigid body'), 2)
        return removed

    def write_joint(self, m: int, name: str, names: list[str], actuators: dict,
                    gear: np.ndarray) -> None:
        """``<dynamics>``, comments and the ``<transmission>`` of joint ``m``."""
        joint = self.joints[name]
        drop_marked(joint)
        units = _units(joint.get('type'))
        ratio = float(gear[m, m])
        notes = []
        if 'Ia' in actuators:
            ia = float(actuators['Ia'][m])
            notes.append(f'rotor inertia reflected to the joint Ia = {number(ia)} {units[0]} '
                         f'(= drake:rotor_inertia x drake:gear_ratio^2 of its <transmission>)')
        if 'offset' in actuators:
            notes.append(f'torque offset = {number(actuators["offset"][m])} {units[2]} '
                         '(no URDF tag)')
        if 'vs' in actuators:
            shape = ', '.join(f'{k} = {number(actuators[k][m])}'
                              for k in ('fs', 'vs', 'delta', 'v_l') if k in actuators)
            notes.append(f'Stribeck friction (robot-ident friction.models, no URDF tag): '
                         f'{shape}; <dynamics friction> is fc')
        row = gear[m] / ratio
        if np.count_nonzero(np.delete(row, m)):
            terms = ', '.join(f'{j}: {number(g)}' for j, g in zip(names, row) if g != 0)
            notes.append(f'its actuator is coupled, motor velocity / {number(ratio)} = '
                         f'sum of ({terms}) x joint velocity; URDF cannot express the '
                         'coupling, the actuator\'s own values are written on this joint')
        kids = list(joint)
        at = next((i for i, e in enumerate(kids) if e.tag == 'dynamics'), len(kids))
        for note in notes:
            self.insert(joint, at, comment(f'identified ({self.source}): {note}'), 2)
            at += 1
        self._write_dynamics(joint, actuators, m)
        if 'Ia' in actuators:
            self._write_transmission(name, float(actuators['Ia'][m]), ratio)

    def _write_dynamics(self, joint: ET.Element, actuators: dict, m: int) -> None:
        values = {a: actuators[t][m] for t, a in (('fv', 'damping'), ('fc', 'friction'))
                  if t in actuators}
        if not values:
            return
        dynamics = joint.find('dynamics')
        if dynamics is None:
            dynamics = ET.Element('dynamics')
            self.insert(joint, len(joint), dynamics, 2)
        for attr, value in values.items():
            dynamics.set(attr, number(value))

    def _write_transmission(self, joint: str, ia: float, ratio: float) -> None:
        """Update the joint's single-joint ``<transmission>`` or append a new one."""
        mine = [t for t in self.root.findall('transmission')
                if any(j.get('name') == joint for j in t.findall('joint'))]
        drake_tags = [(f'{{{self.drake}}}rotor_inertia', number(ia / ratio ** 2)),
                      (f'{{{self.drake}}}gear_ratio', number(abs(ratio)))]
        if len(mine) == 1 and len(mine[0].findall('joint')) == 1 \
                and len(mine[0].findall('actuator')) == 1:
            actuator = mine[0].find('actuator')
            for tag, value in drake_tags:
                old = actuator.find(tag)
                if old is None:
                    self.insert(actuator, len(actuator), ET.Element(tag, value=value), 3)
                else:
                    old.set('value', value)
            return
        if mine:       # a multi-joint transmission: leave it, the joint comment has Ia
            return
        taken = {t.get('name') for t in self.root.iter('transmission')}
        name = f'{joint}_transmission'
        trans = ET.Element('transmission', name=name if name not in taken else f'{name}_ident')
        ET.SubElement(trans, 'type').text = 'transmission_interface/SimpleTransmission'
        j = ET.SubElement(trans, 'joint', name=joint)
        ET.SubElement(j, 'hardwareInterface').text = 'hardware_interface/EffortJointInterface'
        actuator = ET.SubElement(trans, 'actuator', name=f'{joint}_motor')
        ET.SubElement(actuator, 'mechanicalReduction').text = number(ratio)
        for tag, value in drake_tags:
            ET.SubElement(actuator, tag, value=value)
        self.insert(self.root, len(self.root), trans, 1)


def _units(kind: str | None) -> tuple[str, str, str]:
    """Units of Ia, fv and fc/offset of a joint type."""
    if kind == 'prismatic':
        return 'kg', 'N s/m', 'N'
    return 'kg m^2', 'N m s/rad', 'N m'
