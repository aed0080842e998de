"""Progress reports of the core (``ident_core.progress``) and the bars of ``robot-ident``
(``cli/progress.py``): increments sum to the work announced; bars go to stderr, only on a
terminal, and are cleared before an error line."""
import io
import sys

import numpy as np
import pytest

from ident_core.cli import main
from ident_core.estimation import blockwise
from ident_core.estimation.config import IdentificationConfig
from ident_core.estimation.identification import identify, validate

CONFIG = IdentificationConfig(estimator='wls')


class Recorder:
    """A progress receiver that keeps what it is told (like a tqdm bar: total, update,
    set_description)."""

    def __init__(self):
        self.total, self.steps, self.texts = 0, [], []

    def update(self, n):
        self.steps.append(n)

    def set_description(self, text):
        self.texts.append(text)


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks small enough that a 20 s recording at 100 Hz takes several of each."""
    monkeypatch.setattr(blockwise, 'BLOCK_ROWS', 300)
    monkeypatch.setattr(blockwise, 'REGRESSOR_ROWS', 100)


def test_identify_reports_increments_summing_to_the_total(six_axis, make_synthetic,
                                                         small_blocks):
    data = [make_synthetic(3), make_synthetic(4)]
    told = Recorder()
    model = identify(six_axis, iter(data), CONFIG, progress=told)
    # per recording: 2000 grid samples in blocks of 300 -> 7 blocks in each of the two passes;
    # then the regressor's rows in blocks of 100 (per recording), one step for the estimator
    rows = model.stats['samples']
    assert 2 * 2 * 7 + rows / 100 + 1 <= told.total <= 2 * 2 * 7 + rows / 100 + 2 + 1
    assert sum(told.steps) == told.total and all(n == 1 for n in told.steps)
    assert [d.source for d in data] == told.texts[:1] + told.texts[1:2]
    plain = []
    again = identify(six_axis, iter(data), CONFIG, progress=plain.append)
    assert sum(plain) == told.total
    np.testing.assert_array_equal(again.values, identify(six_axis, data, CONFIG).values)
    check = Recorder()
    validate(model, make_synthetic(5), progress=check)
    assert check.total == sum(check.steps) == 2


def test_a_bar_is_drawn_on_a_terminal_stderr_never_on_stdout(csv_case, urdf, tmp_path,
                                                             capsys, monkeypatch):
    args = ['identify', '--urdf', str(urdf), '--data', str(csv_case.yaml), '--estimator',
            'wls', '--out', str(tmp_path / 'r.yaml')]
    assert main(args) == 0                        # not a terminal: no bar
    captured = capsys.readouterr()
    assert captured.err == '' and 'result written to' in captured.out
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', terminal)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert 'identify' in terminal.getvalue() and '100%|' in terminal.getvalue()
    assert '%|' not in out and '\r' not in out and 'result written to' in out
    terminal.seek(0)
    terminal.truncate()
    assert main(args + ['--no-progress']) == 0
    assert terminal.getvalue() == ''


def test_a_bar_is_cleared_before_the_error_line(csv_case, urdf, tmp_path, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', terminal)
    rc = main(['identify', '--urdf', str(urdf), '--data', str(csv_case.yaml), '--split',
               '1.5', '--out', str(tmp_path / 'r.yaml')])
    assert rc == 2
    text = terminal.getvalue()
    assert 'identify' in text.split('robot-ident: error:')[0]      # the bar was drawn ...
    last = text.split('\r')[-1]                                     # ... then erased
    assert last == 'robot-ident: error: --split must be in (0, 1), got 1.5\n'
    assert text.split('\r')[-2].strip() == ''
