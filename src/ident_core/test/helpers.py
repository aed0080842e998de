"""Shared paths, small URDFs and the bad-file check of the ident_core tests."""
import sys
from pathlib import Path

import pytest
import yaml

from ident_core.errors import InputError

REPO = Path(__file__).resolve().parents[3]
ARM6 = REPO / 'urdf' / 'six_axis_3kg.urdf'
sys.path.insert(0, str(REPO / 'scripts'))
from data_dirs import missing_reason, recording_dir  # data/, then ../shared/data

KUKA_DIR = recording_dir('kuka_lwr4')
TX40_DIR = recording_dir('staubli_tx40')
KUKA_MISSING = missing_reason('kuka_lwr4')
TX40_MISSING = missing_reason('staubli_tx40')


def one_joint_urdf(tmp_path, axis='0 0 1', name='pendulum'):
    """A single revolute joint (z axis vertical, gravity along -z) with an offset centre of mass."""
    path = tmp_path / f'{name}.urdf'
    path.write_text(f'''<?xml version="1.0"?>
<robot name="{name}">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="{axis}"/>
    <limit lower="-3" upper="3" velocity="3" effort="50"/>
  </joint>
  <link name="l1">
    <inertial><origin xyz="0.2 0.05 0.1"/><mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>
</robot>
''')
    return path


def load_error(load, doc: dict, path: Path) -> str:
    """Write ``doc`` as YAML to ``path``, load it, and return the message of the InputError
    raised, after checking that it names the file."""
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message, message
    return message
