"""The bad-input corpus (``tests/bad_inputs/cases.yaml``): every case is refused by
``robot-ident`` with exit code 2 and ONE stderr line ``robot-ident: error: ...`` that names the
file and the field at fault, no traceback (not even C++ parser noise on the file descriptor), and
no output file.

Each case derives its broken input from one valid recording: a synthetic 20 s, 100 Hz log of
``urdf/six_axis_3kg.urdf`` with known parameters (CSV + description ``good.yaml``), its
identification ``RESULT.yaml`` and the URDF. The case's ``recording``, ``description``, ``csv``,
``urdf`` and ``result`` entries say what to break (see ``_write_case``); ``argv`` is the command
line with the placeholders ``{base}`` (folder of the valid files), ``{case}`` (the case's files
without extension), ``{urdf}``, ``{files}`` (tests/bad_inputs/files) and ``{out}`` (the output,
which must not exist afterwards); ``expect`` holds the fragments of the error line.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from ident_core.cli import main
from ident_core.model.robot import load_robot
from ident_core.sim.synthetic import perturbed_parameters, synthetic_dataset

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / 'tests' / 'bad_inputs'
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
CASES = yaml.safe_load((CORPUS / 'cases.yaml').read_text())
IDENTIFY = ['identify', '--urdf', '{urdf}', '--data', '{case}.yaml', '--out', '{out}']
DURATION, RATE, TORQUE_NOISE = 20.0, 100.0, 0.05     # s, Hz, N·m


class Recording:
    """The valid recording's arrays and the writers of its CSV and description."""

    def __init__(self, t, q, tau, joints):
        self.t, self.q, self.tau, self.joints = t, q, tau, joints

    def header(self) -> list[str]:
        return ['t'] + [f'q_{j}' for j in self.joints] + [f'tau_{j}' for j in self.joints]

    def description(self, csv_name: str) -> dict:
        return {'joints': list(self.joints), 'file': csv_name, 'time': {'column': 't'},
                'position': {'columns': [f'q_{j}' for j in self.joints]},
                'effort': {'columns': [f'tau_{j}' for j in self.joints]}}

    def write_csv(self, path: Path, t, q, tau, header: list[str]) -> None:
        np.savetxt(path, np.column_stack([t, q, tau]), delimiter=',', header=','.join(header),
                   comments='', fmt='%.17g')


@pytest.fixture(scope='module')
def base(tmp_path_factory) -> tuple[Path, Recording]:
    """The folder of the valid files: good.csv, good.yaml, RESULT.yaml."""
    folder = tmp_path_factory.mktemp('base')
    robot = load_robot(URDF)
    truth = perturbed_parameters(robot, np.random.default_rng(1))
    d = synthetic_dataset(robot, truth, DURATION, RATE, seed=3, torque_noise=TORQUE_NOISE)[0]
    rec = Recording(d.t, d.position, d.effort, list(d.joint_names))
    rec.write_csv(folder / 'good.csv', rec.t, rec.q, rec.tau, rec.header())
    (folder / 'good.yaml').write_text(yaml.safe_dump(rec.description('good.csv')))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        assert main(['identify', '--urdf', str(URDF), '--data', str(folder / 'good.yaml'),
                     '--out', str(folder / 'RESULT.yaml')]) == 0
    return folder, rec


def test_the_corpus_is_large_and_names_file_and_field():
    names = [c['name'] for c in CASES]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert all(len(c['expect']) >= 2 for c in CASES), 'each case names a file and a field'


@pytest.mark.parametrize('case', CASES, ids=[c['name'] for c in CASES])
def test_bad_input_is_refused_in_one_line(case, base, tmp_path, capfd):
    if case.get('skip_as_root') and os.geteuid() == 0:
        pytest.skip('root reads and writes files whatever their permissions')
    folder, rec = base
    stem = tmp_path / case['name']
    out = tmp_path / 'out' / case.get('out_name', 'OUTPUT')
    out.parent.mkdir()
    _write_case(case, stem, folder, rec)
    fill = dict(base=folder, case=stem, urdf=URDF, files=CORPUS / 'files', out=out,
                tmp=tmp_path, name=case['name'])
    argv = [a.format(**fill) for a in case.get('argv', IDENTIFY)]
    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')           # a refusal may follow a warning; not checked
        try:
            rc = main(argv)
        except SystemExit as exc:                 # argparse refuses a bad option value
            rc = exc.code
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines()
             if line.strip() and not line.startswith('robot-ident: warning:')]
    assert rc == 2, err
    assert 'Traceback' not in err, err
    assert len(lines) == 1, err
    assert lines[-1].startswith(('robot-ident: error:', 'usage: robot-ident')) or \
        'robot-ident' in lines[-1], err
    for fragment in case['expect']:
        assert fragment.format(**fill) in lines[0], f'{fragment!r} not in {lines[0]!r}'
    assert not out.exists() and not any(out.parent.iterdir()), 'an output was written'


def _write_case(case: dict, stem: Path, folder: Path, rec: Recording) -> None:
    """Write the case's broken files: ``<stem>.csv`` + ``<stem>.yaml`` (``recording``,
    ``description``, ``csv``), ``<stem>.urdf`` (``urdf``), ``<stem>.result.yaml`` (``result``)."""
    if any(k in case for k in ('recording', 'description', 'csv')):
        t, q, tau = _broken_arrays(case.get('recording', {}), rec)
        csv_path = stem.with_suffix('.csv')
        _write_broken_csv(case.get('csv', {}), csv_path, rec, t, q, tau)
        spec = rec.description(csv_path.name)
        edits = case.get('description', {})
        spec.update(edits.get('set', {}))
        for key in edits.get('remove', []):
            del spec[key]
        stem.with_suffix('.yaml').write_text(yaml.safe_dump(spec, sort_keys=False))
    if 'urdf' in case:
        _write_replaced(URDF, stem.with_suffix('.urdf'), case['urdf'])
    if 'result' in case:
        _write_replaced(folder / 'RESULT.yaml', stem.with_suffix('.result.yaml'), case['result'])


def _broken_arrays(edits: dict, rec: Recording):
    t = rec.t * edits.get('time_scale', 1.0)
    q = rec.q * edits.get('position_scale', 1.0)
    tau = rec.tau.copy()
    rows = edits.get('rows', len(t))
    for a, b in edits.get('swap_effort', []):
        tau[:, [a, b]] = tau[:, [b, a]]
    for j, value in edits.get('constant_effort', {}).items():
        tau[:, j] = value
    for j, factor in edits.get('effort_scale', {}).items():
        tau[:, j] *= factor
    for j, value in edits.get('hold', {}).items():
        q[:, j] = value
    arrays = {'t': t, 'q': q, 'tau': tau}
    for name, row, joint, value in edits.get('set', []):
        a = arrays[name]
        a[(row, joint) if a.ndim == 2 else row] = float(value)
    return t[:rows], q[:rows], tau[:rows]


def _write_broken_csv(edits: dict, path: Path, rec: Recording, t, q, tau) -> None:
    header = rec.header() + edits.get('extra_header', [])
    header = header[:len(header) - edits.get('drop_header', 0)]
    rec.write_csv(path, t, q, tau, header)
    text = path.read_text()
    for old, new in edits.get('replace', []):
        text = text.replace(old, new, 1)
    if 'cut_row' in edits:                    # [data row, cells kept]: a row cut short
        lines = text.split('\n')
        row, cells = edits['cut_row']
        lines[row + 1] = ','.join(lines[row + 1].split(',')[:cells])
        text = '\n'.join(lines)
    path.write_text(text)


def _write_replaced(source: Path, target: Path, edits: dict) -> None:
    text = source.read_text()
    for old, new in edits.get('replace', []):
        assert old in text, f'{old!r} not in {source.name}'
        text = text.replace(old, new, 1)
    if 'cut_before' in edits:                 # a file cut at a line, whatever its length
        line = f"\n{edits['cut_before']}"
        assert line in text, f'{line!r} not in {source.name}'
        text = text[:text.index(line) + 1]
    target.write_text(text)
