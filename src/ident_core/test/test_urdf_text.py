"""A URDF given as text (what robot_state_publisher publishes on /robot_description): the same
robot as from the file, its hash the file's, its source the topic; a RESULT.yaml identified on
it records the topic and the hash, and is read back with the URDF file given (the hash
checked)."""
import hashlib

import numpy as np
import pinocchio as pin
import pytest
import yaml
from datafiles import URDF

from ident_core.errors import InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify
from ident_core.estimation.results import read_result, result_file
from ident_core.excitation.collision import CollisionModel
from ident_core.excitation.config import default_config
from ident_core.model.inertial import collision_boxes
from ident_core.model.robot import load_robot, robot_from_urdf_text
from ident_core.model.urdf_export import identified_urdf

TOPIC = '/left/robot_description'


@pytest.fixture(scope='module')
def pair():
    """The six-axis robot from its file and from the file's text."""
    return load_robot(URDF), robot_from_urdf_text(URDF.read_text(), TOPIC)


def test_text_gives_the_files_robot_and_hash(pair):
    from_file, from_text = pair
    assert from_text.urdf is None and from_text.urdf_source == TOPIC
    assert from_text.urdf_reference() == TOPIC
    assert from_file.urdf_reference() == str(URDF.resolve())
    assert from_text.joint_names == from_file.joint_names
    for field in ('lower', 'upper', 'velocity_limit', 'effort_limit'):
        np.testing.assert_array_equal(getattr(from_text, field), getattr(from_file, field))
    np.testing.assert_array_equal(from_text.standard_parameters(),
                                  from_file.standard_parameters())
    assert from_text.kinematics_sha256() == from_file.kinematics_sha256()
    assert from_text.urdf_sha256() == from_file.urdf_sha256() == \
        hashlib.sha256(URDF.read_bytes()).hexdigest()


def test_collision_geometry_from_text(pair):
    """The collision shapes (identification's centre-of-mass boxes, the excitation's collision
    model) load from the text as from the file."""
    from_file, from_text = pair
    for a, b in zip(collision_boxes(from_file), collision_boxes(from_text)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b)
    config = default_config('test')
    config = config.updated(collision=config.collision.updated(self=True))
    q = np.zeros((1, from_file.n))
    assert CollisionModel(from_text, config).pair_names == \
        CollisionModel(from_file, config).pair_names
    assert CollisionModel(from_text, config).clearance(q).distance == \
        pytest.approx(CollisionModel(from_file, config).clearance(q).distance)
    full, geometry = from_text.geometry(pin.VISUAL)
    assert full.nq == from_file.model.nq and len(geometry.geometryObjects) > 0


def test_bad_text_names_the_topic():
    with pytest.raises(InputError, match=f'^{TOPIC}: the URDF is empty'):
        robot_from_urdf_text('  \n', TOPIC)
    with pytest.raises(InputError, match=f'^{TOPIC}: cannot parse URDF'):
        robot_from_urdf_text('<robot name="x"><link name="a"></robot>', TOPIC)
    mimic = URDF.read_text().replace(
        '<joint name="joint2" type="revolute">',
        '<joint name="joint2" type="revolute"><mimic joint="joint1"/>')
    with pytest.raises(InputError, match=f'^{TOPIC}: joint joint2 mimics joint1'):
        robot_from_urdf_text(mimic, TOPIC)


def test_result_of_a_topic_robot_reads_back_with_the_file(pair, make_synthetic, tmp_path):
    _from_file, from_text = pair
    model = identify(from_text, [make_synthetic(seed=3)], IdentificationConfig())
    path = result_file(model, []).write(tmp_path / 'RESULT.yaml')
    robot = yaml.safe_load(path.read_text())['robot']
    assert robot['urdf'] == TOPIC and robot['urdf_sha256'] == from_text.urdf_sha256()
    with pytest.raises(InputError, match=f"robot.urdf '{TOPIC}' is no file .*give the URDF"):
        read_result(path)
    again = read_result(path, URDF)                      # --urdf: the hash matches
    np.testing.assert_array_equal(again.values, model.values)
    assert read_result(path, from_text).robot is from_text
    changed = tmp_path / 'changed.urdf'
    changed.write_text(URDF.read_text() + '\n<!-- edited -->\n')
    with pytest.raises(InputError, match='robot.urdf_sha256 differs'):
        read_result(path, changed)
    # the URDF export works from the text (no file to read)
    text, report = identified_urdf(from_text, model.links(), model.actuator_values(),
                                   np.eye(from_text.n))
    assert report.path is None and 'robot-ident:' in text
    assert robot_from_urdf_text(text, 'exported').joint_names == from_text.joint_names
