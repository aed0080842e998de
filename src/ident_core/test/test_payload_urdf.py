"""The URDF with a payload fixed to the robot (``payload.urdf``): the payload's body is where
Pinocchio reads it, a second export replaces the first, and the rest of the URDF is kept."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from helpers import REPO

from ident_core.errors import InputError
from ident_core.model.inertial import LinkInertial
from ident_core.model.robot import load_robot
from ident_core.payload.urdf import urdf_with_fixed_body

URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
MASS = 2.5                                                   # kg
COM = np.array([0.01, -0.02, 0.05])                          # m, in the payload's frame
INERTIA = np.diag([0.004, 0.005, 0.003])                     # kg·m² about the COM
PLACEMENT = pin.SE3(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3), np.array([0.0, 0.0, 0.08]))


def body(mass=MASS):
    return LinkInertial('', 'payload', mass, COM, INERTIA, True)


def test_the_fixed_body_is_the_payload_pinocchio_reads(tmp_path):
    out = tmp_path / 'loaded.urdf'
    out.write_text(urdf_with_fixed_body(URDF, 'flange', 'payload', PLACEMENT, body(), 'a test'))
    before, after = load_robot(URDF), load_robot(out)
    flange = before.model.frames[before.model.getFrameId('flange')]
    payload = pin.Inertia(MASS, COM, INERTIA)
    expected = before.model.inertias[6] + flange.placement.act(PLACEMENT.act(payload))
    np.testing.assert_allclose(after.model.inertias[6].toDynamicParameters(),
                               expected.toDynamicParameters(), atol=1e-12)
    text = out.read_text()
    assert text.count('<link name="payload">') == 1 and 'robot-ident: payload: a test' in text
    assert '<!-- forearm up to 0.1 m from the wrist centre' in text       # comments kept


def test_a_second_export_replaces_the_first(tmp_path):
    first = tmp_path / 'first.urdf'
    first.write_text(urdf_with_fixed_body(URDF, 'flange', 'payload', PLACEMENT, body(1.0),
                                          'first'))
    again = urdf_with_fixed_body(first, 'flange', 'payload', PLACEMENT, body(), 'a test')
    assert again == urdf_with_fixed_body(URDF, 'flange', 'payload', PLACEMENT, body(),
                                         'a test')


def test_an_unknown_parent_link_is_refused():
    with pytest.raises(InputError, match="no link 'tool0' to fix 'payload' to"):
        urdf_with_fixed_body(URDF, 'tool0', 'payload', PLACEMENT, body(), 'a test')
