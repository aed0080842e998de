"""Every package declares what its code imports: a ROS package imported by a node is an
``exec_depend`` of its package.xml (a full ROS 2 install resolves dependencies from there, not
from this workspace), and third-party Python modules appear under their rosdep keys."""
from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / 'src'
# Python modules that are not ROS packages → their rosdep key (None: pip only, no rosdep key)
ROSDEP = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
          'pinocchio': 'pinocchio', 'coal': 'pinocchio', 'pydantic': 'python3-pydantic',
          'tqdm': 'python3-tqdm', 'threadpoolctl': 'python3-threadpoolctl', 'cvxpy': None,
          'rosbags': None, 'setuptools': None, 'pytest': None, 'matplotlib': 'python3-matplotlib',
          'dask': None, 'distributed': None}
PYTHON_PACKAGES = sorted(p.parent for p in SRC.glob('*/setup.py'))


def _imported_modules(package_dir: Path) -> set[str]:
    modules = set()
    for path in (package_dir / package_dir.name).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {a.name.split('.')[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split('.')[0])
    return modules - set(sys.stdlib_module_names) - {'__future__', package_dir.name}


def _declared(package_dir: Path) -> set[str]:
    root = ET.parse(package_dir / 'package.xml').getroot()
    return {e.text.strip() for e in root if e.tag in ('depend', 'exec_depend')}


@pytest.mark.parametrize('package', PYTHON_PACKAGES, ids=[p.name for p in PYTHON_PACKAGES])
def test_imports_are_declared_dependencies(package):
    needed = set()
    for module in _imported_modules(package):
        if module in ROSDEP:
            if ROSDEP[module]:
                needed.add(ROSDEP[module])
        else:
            needed.add(module)            # a ROS package: module name = package name
    missing = sorted(needed - _declared(package))
    assert not missing, f'{package.name}/package.xml lacks exec_depend {missing}'


def test_bringup_depends_on_every_node_package():
    bringup = _declared(SRC / 'ident_bringup')
    nodes = {p.name for p in PYTHON_PACKAGES if 'rclpy' in _imported_modules(p)
             and (p / 'setup.cfg').is_file() and 'install_scripts' in (p / 'setup.cfg').read_text()}
    assert nodes == {'ident_node', 'excitation_node', 'ident_sim', 'torque_estimator'}
    assert nodes <= bringup, sorted(nodes - bringup)
