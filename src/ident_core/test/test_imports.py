"""``robot-ident`` imports per verb, lazily: ``--help`` loads no numerical library, and
``identify`` loads neither the excitation design, the GA, the simulator and the motion code,
nor cvxpy (only pc-wls needs it) nor rosbags (only bags do), matplotlib or Dask. scipy.signal,
which brings scipy.stats, .interpolate and .optimize (about half a second, issue 26 §5), loads
at the first filtering: no verb's parser loads it, nor do ``export-urdf`` and
``estimate-torque``, which filter nothing. Each case runs in a fresh interpreter with the source
tree first on ``sys.path``."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1]
NUMERICAL = ('numpy', 'scipy', 'pinocchio', 'pydantic', 'yaml', 'threadpoolctl')
NOT_FOR_IDENTIFY = ('ident_core.excitation', 'ident_core.optim', 'ident_core.sim',
                    'ident_core.motion', 'cvxpy', 'rosbags', 'tqdm', 'matplotlib', 'dask',
                    'distributed')
#: Loaded by the first filtering (``data.signal_processing.lowpass``), not before.
FILTERING = ('scipy.signal', 'scipy.stats', 'scipy.interpolate', 'scipy.optimize')
SCRIPT = '''
import contextlib, io, json, sys
sys.path.insert(0, {source!r})
from ident_core.cli import build_parser, main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    {call}
print(json.dumps(sorted(sys.modules)))
'''


def _modules_after(call: str) -> set[str]:
    """The modules loaded by a fresh interpreter after running ``call``."""
    script = SCRIPT.format(source=str(SOURCE), call=call)
    out = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + '.') for n in names))


def test_help_loads_no_numerical_library():
    modules = _modules_after("build_parser(None).parse_args(['--help'])")
    assert 'ident_core.cli' in modules
    assert not _loaded(modules, NUMERICAL + NOT_FOR_IDENTIFY)
    assert sorted(m for m in modules if m.startswith('ident_core')) == [
        'ident_core', 'ident_core.cli', 'ident_core.errors', 'ident_core.threads']


def test_identify_parser_loads_only_what_identify_uses():
    modules = _modules_after("build_parser('identify').parse_args(['identify', '--help'])")
    assert 'ident_core.estimation.identification' in modules
    assert not _loaded(modules, NOT_FOR_IDENTIFY)
    assert 'ident_core.cli.excite' not in modules


def test_identify_run_loads_only_what_identify_uses(csv_case, urdf, tmp_path):
    out = tmp_path / 'result.yaml'
    argv = ['identify', '--urdf', str(urdf), '--data', str(csv_case.yaml), '--estimator', 'wls',
            '--out', str(out)]
    modules = _modules_after(f'assert main({argv!r}) == 0')
    assert out.is_file()
    assert 'threadpoolctl' in modules
    assert not _loaded(modules, NOT_FOR_IDENTIFY)
    assert 'scipy.signal' in modules       # the low-pass filter: identify needs it


@pytest.mark.parametrize('verb', ['identify', 'validate', 'export-urdf', 'estimate-torque',
                                  'payload', 'report'])
def test_verb_parsers_load_no_filtering(verb):
    modules = _modules_after(f"build_parser({verb!r}).parse_args([{verb!r}, '--help'])")
    assert not _loaded(modules, FILTERING)


@pytest.fixture
def result(csv_case, urdf, tmp_path, capsys):
    """RESULT.yaml of a WLS identification of ``csv_case`` (in this process)."""
    from ident_core.cli import main

    out = tmp_path / 'RESULT.yaml'
    assert main(['identify', '--urdf', str(urdf), '--data', str(csv_case.yaml), '--estimator',
                 'wls', '--out', str(out), '--no-progress']) == 0
    capsys.readouterr()
    return out


def test_export_urdf_loads_no_filtering(result, tmp_path):
    out = tmp_path / 'robot.urdf'
    argv = ['export-urdf', '--model', str(result), '--out', str(out), '--force']
    modules = _modules_after(f'assert main({argv!r}) == 0')
    assert out.is_file()
    assert not _loaded(modules, FILTERING + ('cvxpy', 'matplotlib'))


def test_estimate_torque_loads_no_filtering(result, csv_case, tmp_path):
    out = tmp_path / 'TORQUES.csv'
    argv = ['estimate-torque', '--model', str(result), '--data', str(csv_case.yaml), '--out',
            str(out)]
    modules = _modules_after(f'assert main({argv!r}) == 0')
    assert out.is_file()
    assert not _loaded(modules, FILTERING + ('cvxpy', 'matplotlib'))
