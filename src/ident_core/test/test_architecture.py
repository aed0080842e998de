"""The core stays pure Python: no ROS client library anywhere in ident_core."""
import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / 'ident_core'


def test_core_never_imports_rclpy():
    offenders = []
    for path in CORE.glob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f'{path.name}: {n}' for n in names if n.split('.')[0] == 'rclpy']
    assert not offenders
    assert len(list(CORE.glob('*.py'))) >= 10
