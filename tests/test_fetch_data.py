"""scripts/fetch_data.sh against a local copy of the recordings (no network: ``--from``), and
where the Makefile looks for them (data/ first, then ../shared/data)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / 'scripts' / 'fetch_data.sh'
MANIFEST = REPO / 'scripts' / 'data_manifest.txt'
SHARED = REPO.parent / 'shared' / 'data'


def _entries() -> list[tuple[str, str, str]]:
    """(sha256, url, dest) of every manifest line."""
    lines = [x.split() for x in MANIFEST.read_text().splitlines()]
    return [tuple(x) for x in lines if x and not x[0].startswith('#')]


ENTRIES = _entries()
have_shared = pytest.mark.skipif(
    not all((SHARED / dest).is_file() for _, _, dest in ENTRIES),
    reason=f'the recordings are not all in {SHARED} (nothing to fetch from without network)')


def _fetch(*args) -> subprocess.CompletedProcess:
    return subprocess.run(['bash', str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_manifest_pins_commits_and_checksums():
    assert len(ENTRIES) == 8
    for sha, url, dest in ENTRIES:
        assert len(sha) == 64 and int(sha, 16) >= 0
        assert url.startswith('https://raw.githubusercontent.com/')
        commit = url.split('/')[5]
        assert len(commit) == 40 and int(commit, 16) >= 0, url
        assert dest.split('/')[0] in ('kuka_lwr4', 'staubli_tx40')


@pytest.fixture
def source(tmp_path) -> Path:
    """A copy of the shared recordings (files of the manifest only)."""
    out = tmp_path / 'mirror'
    for _, _, dest in ENTRIES:
        (out / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / dest, out / dest)
    return out


@have_shared
def test_fetch_places_verified_files_and_a_second_run_fetches_nothing(tmp_path, source):
    dest = tmp_path / 'data'
    first = _fetch('--dest', dest, '--from', source)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ''
    for sha, _, name in ENTRIES:
        assert _sha256(dest / name) == sha, name
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob('*') if p.is_file()) \
        == sorted(name for _, _, name in ENTRIES)
    assert '8 fetched, 0 already there' in first.stdout
    stamps = {p: p.stat().st_mtime_ns for p in dest.rglob('*')}
    second = _fetch('--dest', dest, '--from', f'file://{source}')
    assert second.returncode == 0, second.stderr
    assert '0 fetched, 8 already there' in second.stdout
    assert '<-' not in second.stdout
    assert {p: p.stat().st_mtime_ns for p in dest.rglob('*')} == stamps


@have_shared
def test_a_corrupted_file_is_refused_and_nothing_of_it_is_left(tmp_path, source):
    bad = source / 'staubli_tx40' / 'curr_data.csv'
    data = bytearray(bad.read_bytes())
    data[1000] ^= 0x01
    bad.write_bytes(bytes(data))
    dest = tmp_path / 'data'
    run = _fetch('--dest', dest, '--from', source)
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith('fetch_data.sh: error: staubli_tx40/curr_data.csv: SHA-256 mismatch')
    assert not (dest / 'staubli_tx40' / 'curr_data.csv').exists()
    assert [p.name for p in (dest / 'staubli_tx40').iterdir()] == ['pos_read_data.csv']
    # a file already there with a wrong checksum is fetched again
    (dest / 'staubli_tx40' / 'pos_read_data.csv').write_text('not the recording')
    shutil.copyfile(SHARED / 'staubli_tx40' / 'curr_data.csv', bad)
    again = _fetch('--dest', dest, '--from', source)
    assert again.returncode == 0, again.stderr
    assert '4 fetched, 4 already there' in again.stdout   # the rest of the TX40 set too
    assert _sha256(dest / 'staubli_tx40' / 'pos_read_data.csv') == next(
        s for s, _, d in ENTRIES if d == 'staubli_tx40/pos_read_data.csv')


def test_a_bad_option_is_one_line_and_exit_2(tmp_path):
    run = _fetch('--dest', tmp_path, '--frm', tmp_path)
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["fetch_data.sh: error: unknown argument '--frm' (see "
                                       '--help)']
    assert not any(tmp_path.iterdir())


def test_a_missing_source_file_is_named(tmp_path):
    run = _fetch('--dest', tmp_path / 'data', '--from', tmp_path / 'nowhere')
    assert run.returncode == 1
    [line] = run.stderr.splitlines()                 # one line, with the copy's reason
    assert line.startswith(f'fetch_data.sh: error: kuka_lwr4/measurements_1.npz: cannot get '
                           f'{tmp_path}/nowhere/kuka_lwr4/measurements_1.npz (cp: ')
    assert line.endswith('No such file or directory)')
    assert not [p for p in (tmp_path / 'data').rglob('*') if p.is_file()]


# --- where the Makefile and the tests look -------------------------------------------------------

@pytest.fixture
def layout(tmp_path) -> Path:
    """A repository (its Makefile) beside an empty shared/data."""
    repo = tmp_path / 'repo'
    repo.mkdir()
    shutil.copyfile(REPO / 'Makefile', repo / 'Makefile')
    return repo


def _make_n(repo: Path, target: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ('DATA_DIR', 'TX40_DIR', 'MAKEFLAGS')}
    return subprocess.run(['make', '-n', '-C', str(repo), target], capture_output=True,
                          text=True, env=env, timeout=60)


def _touch(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text('x')


KUKA = ['kuka_lwr4.urdf', 'measurements_1.npz', 'measurements_2.npz', 'measurements_3.npz']
TX40 = ['tx40_mdh_modified.urdf', 'pos_read_data.csv', 'curr_data.csv']


@pytest.mark.skipif(shutil.which('make') is None, reason='make not installed')
@pytest.mark.parametrize('target, folder, names', [('demo-kuka', 'kuka_lwr4', KUKA),
                                                    ('demo-tx40', 'staubli_tx40', TX40)])
def test_make_looks_in_data_then_in_shared_data(layout, target, folder, names):
    shared = layout.parent / 'shared' / 'data' / folder
    local = layout / 'data' / folder
    missing = _make_n(layout, target)
    assert missing.returncode == 2
    assert len(missing.stderr.splitlines()) == 1, missing.stderr
    assert f'recordings not found in {shared}: run scripts/fetch_data.sh' in missing.stderr
    _touch(shared, names)
    from_shared = _make_n(layout, target)
    assert from_shared.returncode == 0, from_shared.stderr
    assert f'--urdf {shared}/{names[0]}' in from_shared.stdout
    _touch(local, names)
    from_local = _make_n(layout, target)
    assert from_local.returncode == 0, from_local.stderr
    assert f'--urdf {local}/{names[0]}' in from_local.stdout
    (local / names[-1]).unlink()                   # an interrupted fetch: named, not used
    partial = _make_n(layout, target)
    assert partial.returncode == 2 and f'not found in {local}: run' in partial.stderr


def test_the_tests_look_in_data_then_in_shared_data(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / 'scripts'))
    import data_dirs

    monkeypatch.delenv('DATA_DIR', raising=False)
    monkeypatch.setattr(data_dirs, 'REPO', tmp_path / 'repo')
    local, shared = tmp_path / 'repo' / 'data' / 'kuka_lwr4', tmp_path / 'shared/data/kuka_lwr4'
    assert data_dirs.candidates('kuka_lwr4') == [local, shared]
    assert data_dirs.recording_dir('kuka_lwr4') == local          # neither: where fetch puts it
    shared.mkdir(parents=True)
    assert data_dirs.recording_dir('kuka_lwr4') == shared
    local.mkdir(parents=True)
    assert data_dirs.recording_dir('kuka_lwr4') == local
    assert 'run scripts/fetch_data.sh' in data_dirs.missing_reason('kuka_lwr4')
    monkeypatch.setenv('DATA_DIR', str(tmp_path / 'elsewhere'))
    assert data_dirs.recording_dir('kuka_lwr4') == tmp_path / 'elsewhere'
