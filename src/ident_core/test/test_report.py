"""robot-ident report: the page's sections, figures and numbers against the identification's own
(synthetic 6-axis arm with known parameters), TORQUES.csv parsing, trust classes."""
import base64
import os
import re
import shutil
import signal
import subprocess

import datafiles
import matplotlib.image as mpimg
import numpy as np
import pytest
import yaml

from ident_core.cli import main
from ident_core.errors import InputError
from ident_core.estimation.results import ResultFile
from ident_core.report.parameters import trust
from ident_core.report.torque_estimates import read_torques

PNG = b'\x89PNG\r\n\x1a\n'


def images(page: str) -> list[bytes]:
    """The PNG bytes of every image of a page (all must be data URIs)."""
    sources = re.findall(r'<img src="([^"]*)"', page)
    assert all(s.startswith('data:image/png;base64,') for s in sources)
    return [base64.b64decode(s.split(',', 1)[1]) for s in sources]


def rows(page: str, first_cell: str) -> list[list[str]]:
    """The cells of the table rows whose first cell is ``first_cell``."""
    out = []
    for row in re.findall(r'<tr[^>]*>(.*?)</tr>', page):
        cells = re.findall(r'<td[^>]*>(.*?)</td>', row)
        if cells and cells[0] == first_cell:
            out.append(cells)
    return out


@pytest.fixture(scope='module')
def identified(tmp_path_factory, make_synthetic):
    """RESULT.yaml identified by the CLI on one synthetic run, validated on another, with
    ``--report``: (result path, page text)."""
    folder = tmp_path_factory.mktemp('report')
    train = datafiles.write_npz(folder / 'train.npz', make_synthetic(seed=3))
    check = datafiles.write_npz(folder / 'check.npz', make_synthetic(seed=4))
    out = folder / 'RESULT.yaml'
    assert main(['identify', '--urdf', str(datafiles.URDF), '--data', str(train), '--validate',
                 str(check), '--estimator', 'wls', '--out', str(out), '--report',
                 str(folder / 'report')]) == 0
    return out, (folder / 'report' / 'index.html').read_text()


def test_identify_report_shows_every_section_and_figure(identified):
    _, page = identified
    for key in ('overview', 'model', 'torques', 'parameters', 'excitation'):
        assert f'<section id="{key}">' in page
    pngs = images(page)
    # 2 recordings × (torques, residuals) + base parameters + excitation of the training run
    assert len(pngs) == 6
    assert all(p.startswith(PNG) and len(p) > 10_000 for p in pngs)
    assert 'http' not in page.replace('http-equiv', '')     # no network resource


def test_report_errors_agree_with_the_identification(identified):
    """The page's error of the identified model on each recording is the one identify wrote
    (same preprocessing, decimation and regressor; the page rounds to 4 digits); the URDF model,
    whose parameters are perturbed by 20 % from the truth, predicts far worse."""
    result, page = identified
    doc = ResultFile.read(result)
    assert doc.identification.decimation[0] > 1
    fit = {cells[2]: float(cells[3]) for cells in rows(page, 'identification')}
    assert fit['identified'] == pytest.approx(doc.identification.relative_error_percent,
                                              rel=5e-4)
    check = {cells[2]: float(cells[3]) for cells in rows(page, 'validation')}
    assert check['identified'] == pytest.approx(doc.validation[0].relative_error_percent,
                                                rel=5e-4)
    assert check['URDF'] > 5 * check['identified']


def test_report_marks_the_link_table_and_trust(identified):
    result, page = identified
    doc = ResultFile.read(result)
    consistent = [k.physically_consistent for k in doc.links]
    shown = [cells[-1] == 'yes' for cells in re.findall(
        r'<tr[^>]*>((?:<td[^>]*>[^<]*</td>)+)</tr>', page) for cells in [re.findall(
            r'<td[^>]*>(.*?)</td>', cells)] if len(cells) == 10 and cells[1] == 'identified']
    assert shown == consistent
    assert page.count('class="poor"') >= sum(not c for c in consistent)


def test_a_missing_recording_is_named_and_the_rest_written(identified, tmp_path, capsys):
    result, _ = identified
    doc = yaml.safe_load(result.read_text())
    doc['validation'][0]['data'] = str(tmp_path / 'gone.npz')
    doc['identification']['data'] = ['moved.npz']
    moved = tmp_path / 'RESULT.yaml'
    moved.write_text(yaml.safe_dump(doc))
    assert main(['report', '--model', str(moved), '--out', str(tmp_path / 'r')]) == 0
    page = (tmp_path / 'r' / 'index.html').read_text()
    notes = re.findall(r'<p class="warning">([^<]*)</p>', page)
    assert any(n.startswith('identification recording not shown: moved.npz') for n in notes)
    assert any(n.startswith(f'validation recording not shown: {tmp_path / "gone.npz"}')
               for n in notes)
    assert 'gone.npz' in capsys.readouterr().err
    assert len(images(page)) == 1                       # the base parameters
    assert 'no identification recording could be read' in page


def test_report_without_input_or_into_a_file_is_refused(tmp_path, capsys):
    assert main(['report', '--out', str(tmp_path / 'r')]) == 2
    assert 'give at least one of --model' in capsys.readouterr().err
    blocker = tmp_path / 'file'
    blocker.write_text('')
    torques = tmp_path / 'TORQUES.csv'
    torques.write_text('t,measured_a,filtered_a\n0,1,1\n')
    assert main(['report', '--torques', str(torques), '--out', str(blocker / 'r')]) == 2
    assert f'--out {blocker / "r"}: {blocker} is a file' in capsys.readouterr().err


def test_torque_estimates_with_truth(tmp_path):
    """RMS errors of raw and filtered torque against the true one: closed form."""
    t = np.arange(1000) / 1000.0
    true = np.sin(2 * np.pi * t)
    raw = true + np.where(np.arange(1000) % 2, 0.2, -0.2)       # RMS error 0.2
    filtered = true + 0.05                                       # RMS error 0.05
    path = tmp_path / 'TORQUES.csv'
    np.savetxt(path, np.column_stack([t, raw, filtered, 0 * t, true]), delimiter=',',
               header='t,measured_j1,filtered_j1,external_j1,true_j1', comments='')
    assert main(['report', '--torques', str(path), '--out', str(tmp_path / 'r')]) == 0
    page = (tmp_path / 'r' / 'index.html').read_text()
    cells = rows(page, 'j1')[0]
    assert [float(c) for c in cells[2:]] == pytest.approx([0.2, 0.05], rel=1e-3)
    assert len(images(page)) == 1


@pytest.mark.parametrize('text, message', [
    ('time,measured_a,filtered_a\n0,1,1\n', 'expected a header t,measured_<joint>'),
    ('t,measured_a,external_a\n0,1,1\n', 'column filtered_a is missing'),
    ('t,measured_a,filtered_a\n0,1,1\n1,nan,1\n', 'row 3 holds a value that is not a finite'),
    ('t,measured_a,filtered_a\n0,1\n', 'TORQUES.csv: '),
    ('t,measured_a,filtered_a\n', 'no rows after the header'),
])
def test_bad_torques_file_names_the_fault(tmp_path, text, message):
    path = tmp_path / 'TORQUES.csv'
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        read_torques(path)


def test_trust_classes():
    assert trust(np.array([0.5, 9.9, 10.0, 50.0, 50.1, np.inf, np.nan])) == [
        'trusted', 'trusted', 'uncertain', 'uncertain', 'poor', 'poor', 'poor']


# --- the page in a browser --------------------------------------------------------------------

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
# Headless, as root in a sandbox-less container, and without the background connections a
# closed network refuses.
CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--hide-scrollbars']
# Counts the images, and those that did not load, once the page has loaded.
IMAGE_CHECK = ('<script>window.addEventListener("load", () => {const i = [...document.images];'
               'document.body.setAttribute("data-images", i.length + " " + i.filter('
               'x => !(x.complete && x.naturalWidth > 0)).length)});</script></body>')


def chromium(tmp_path, *args) -> str:
    """Run headless Chromium with its own empty profile, in a session of its own (a hung one
    is killed with all its processes); its standard output."""
    proc = subprocess.Popen([CHROMIUM, *CHROMIUM_FLAGS, f'--user-data-dir={tmp_path / "profile"}',
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)        # a guard against a hang only
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    return out


def loaded_images(tmp_path, page: str) -> tuple[int, int]:
    """(images, images that failed to load) of a page opened in Chromium."""
    probe = tmp_path / 'probe.html'
    probe.write_text(page.replace('</body>', IMAGE_CHECK))
    dom = chromium(tmp_path, '--dump-dom', probe.as_uri())
    found = re.search(r'data-images="(\d+) (\d+)"', dom)
    assert found, 'the page did not finish loading'
    return int(found[1]), int(found[2])


@pytest.mark.skipif(CHROMIUM is None, reason='Chromium is not installed (Debian: apt install '
                    'chromium)')
def test_report_page_in_headless_chromium(identified, tmp_path):
    """Every image of the page loads in a real browser, and the page is not blank; a broken
    image is caught by the same check."""
    _, page = identified
    assert loaded_images(tmp_path, page) == (6, 0)
    start = page.index('base64,') + len('base64,')
    assert loaded_images(tmp_path, page[:start] + 'AAAA' + page[start + 40:]) == (6, 1)
    shot = tmp_path / 'page.png'
    (tmp_path / 'index.html').write_text(page)
    chromium(tmp_path, f'--screenshot={shot}', '--window-size=1200,1600',
             (tmp_path / 'index.html').as_uri())
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1600, 1200)
    assert np.mean(pixels.min(axis=2) < 0.9) > 0.05       # more than 5 % is not white
