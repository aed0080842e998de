"""The core stays pure Python and reads by area: no ROS client library anywhere in ident_core,
subpackages that import nothing on their own, no module of one area importing the CLI, and no
import cycle between its modules (imports inside functions included)."""
import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / 'ident_core'
AREAS = ('model', 'data', 'estimation', 'excitation', 'motion', 'friction', 'payload', 'optim',
         'sim', 'torque_estimation', 'monitoring', 'report', 'workflows', 'fleet', 'cli')


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


def _module_name(path: Path, root: Path) -> str:
    """The dotted name of a module file under ``root`` (the package folder)."""
    parts = path.relative_to(root.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Which modules of the package at ``root`` each of its modules imports.

    Every ``import`` and ``from ... import`` anywhere in a module counts (inside functions too);
    relative imports are resolved. An edge goes to the module imported, to each package on its
    dotted path (importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``), and, for
    ``from pkg import name``, to ``pkg.name`` when that is a module.
    """
    files = {_module_name(p, root): p for p in sorted(root.rglob('*.py'))}
    top = root.name
    graph = {}
    for name, path in files.items():
        package = name if path.name == '__init__.py' else name.rpartition('.')[0]
        targets = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split('.')[:len(package.split('.')) - node.level + 1]
                    module = '.'.join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ''
                targets.append(module)
                targets += [f'{module}.{a.name}' for a in node.names]
        edges = set()
        for target in targets:
            parts = target.split('.')
            edges |= {'.'.join(parts[:k]) for k in range(1, len(parts) + 1)}
        graph[name] = {t for t in edges if t in files and t != name and t.split('.')[0] == top}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm).

    Returns
    -------
    list of list of str
        Each cycle's modules, sorted; the list sorted.
    """
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_no_import_cycle_in_the_core():
    graph = import_graph(CORE)
    assert len(graph) >= 100 and 'ident_core.estimation.identification' in graph
    assert 'ident_core.estimation.blockwise' in graph['ident_core.estimation.identification']
    assert import_cycles(graph) == []


@pytest.mark.parametrize('files, cycle', [
    # a function-level relative import closes the loop
    ({'a.py': 'from .b import x\n', 'b.py': 'def f():\n    from . import a\n'},
     ['pkg.a', 'pkg.b']),
    # through a package __init__: the module imports its package, which imports it back
    ({'sub/__init__.py': 'from .m import y\n', 'sub/m.py': 'import pkg.sub.other\n',
      'sub/other.py': ''}, ['pkg.sub', 'pkg.sub.m']),
    # two levels up, ``from .. import module``
    ({'sub/__init__.py': '', 'sub/m.py': 'from .. import c\n', 'c.py': 'from .sub.m import z\n'},
     ['pkg.c', 'pkg.sub.m']),
    ({'a.py': 'from .b import x\n', 'b.py': 'import numpy\n'}, None),
])
def test_the_cycle_check_finds_cycles(tmp_path, files, cycle):
    root = tmp_path / 'pkg'
    for name, text in {'__init__.py': '', **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert import_cycles(import_graph(root)) == ([cycle] if cycle else [])
