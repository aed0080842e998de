"""The core stays pure Python and reads by area: no ROS client library anywhere in ident_core,
subpackages that import nothing on their own, and no module of one area importing the CLI."""
import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / 'ident_core'
AREAS = ('model', 'data', 'estimation', 'excitation', 'motion', 'friction', 'payload', 'optim',
         'sim', 'torque_estimation', 'monitoring', 'report', 'cli')


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append('.' * node.level + (node.module or ''))
    return names


def test_core_never_imports_rclpy():
    modules = sorted(CORE.rglob('*.py'))
    offenders = [f'{p.relative_to(CORE)}: {n}' for p in modules for n in _imports(p)
                 if n.split('.')[0] in ('rclpy', 'rosidl_runtime_py', 'ament_index_python')]
    assert not offenders
    assert len(modules) >= 10


def test_core_is_organised_by_area():
    for area in AREAS:
        assert (CORE / area / '__init__.py').is_file(), area
    flat = sorted(p.name for p in CORE.glob('*.py'))
    assert flat == ['__init__.py', 'errors.py', 'files.py', 'progress.py', 'schema.py',
                    'threads.py']


def test_subpackages_import_nothing_on_their_own():
    """``import ident_core.<area>`` must stay cheap; callers import the module they use
    (the CLI package imports only argparse-level modules)."""
    for init in CORE.rglob('__init__.py'):
        imports = _imports(init)
        if init.parent.name == 'cli':
            assert all(n in ('argparse', 'importlib', 'sys', 'warnings', '__future__',
                             '..errors', '..threads', '..files') for n in imports), imports
        else:
            assert imports == [], (init, imports)


def test_only_the_cli_imports_the_cli():
    offenders = [str(p.relative_to(CORE)) for p in CORE.rglob('*.py')
                 if p.parent.name != 'cli' and any('cli' in n.split('.') for n in _imports(p))]
    assert not offenders
