"""``ident_core.workflows``: one function per job from paths to the files written. A job runs
from nothing but pickled paths and settings in a fresh interpreter (as on a worker process)
and writes what it writes in-process; the CLI writes what the workflow writes; a bag is read
through one loader, cut to the excitation it describes unless asked to read it whole; the
default output names sit beside the recording."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import datafiles
import numpy as np
import pytest
import yaml

from ident_core.cli import main
from ident_core.data.readers import EXCITATION_TOPIC
from ident_core.data.sources import window_source
from ident_core.errors import DataWarning, InputError
from ident_core.estimation.config import IdentificationConfig
from ident_core.workflows.friction import friction_choices
from ident_core.workflows.identify import identify_recordings, validate_recording
from ident_core.workflows.inputs import RecordingOptions, load_recording, read_recording
from ident_core.workflows.outputs import output_path, report_folder

SOURCE = Path(__file__).resolve().parents[1]
CONFIG = IdentificationConfig(estimator='wls')
#: The excitation a test bag describes: from 4 s, three periods of 4 s (rows 400 to 1600 of a
#: 20 s recording at 100 Hz).
EXCITATION = (4.0, 4.0, 3)
RUN = '''
import pickle, sys
sys.path.insert(0, {source!r})
from ident_core.workflows.identify import identify_recordings
args, kwargs = pickle.loads(open({job!r}, 'rb').read())
outcome = identify_recordings(*args, **kwargs)
print(outcome.result_path)
'''


def test_default_output_names_sit_beside_the_recording(tmp_path):
    bag = tmp_path / 'runs' / 'arm_1'
    assert output_path('result', f'{bag}/') == Path(f'{bag}.result.yaml')
    assert output_path('result', bag, '') == Path(f'{bag}.result.yaml')
    assert output_path('result', bag, tmp_path / 'R.yaml') == tmp_path / 'R.yaml'
    assert output_path('payload', bag) == Path(f'{bag}.payload.yaml')
    assert output_path('friction', bag) == Path(f'{bag}.friction.yaml')
    assert output_path('torques', bag) == Path(f'{bag}.torques.csv')
    assert report_folder(tmp_path / 'RESULT.yaml') == tmp_path / 'RESULT_report'
    assert report_folder(tmp_path / 'RESULT.yaml', True) == tmp_path / 'RESULT_report'
    assert report_folder(tmp_path / 'RESULT.yaml', tmp_path / 'r') == tmp_path / 'r'


def test_identify_runs_from_pickled_paths_in_a_fresh_process(csv_case, urdf, tmp_path):
    """What a worker process of the fleet gets: the URDF and recordings by path, the settings
    as schemas, nothing else; it writes the same RESULT.yaml as the calling process."""
    kwargs = {'split': 0.7, 'recordings': RecordingOptions(), 'out': tmp_path / 'worker.yaml'}
    job = tmp_path / 'job.pickle'
    job.write_bytes(pickle.dumps(((str(urdf), [csv_case.yaml], CONFIG), kwargs)))
    run = subprocess.run([sys.executable, '-c', RUN.format(source=str(SOURCE), job=str(job))],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / 'worker.yaml')

    here = identify_recordings(urdf, [csv_case.yaml], CONFIG,
                               **{**kwargs, 'out': tmp_path / 'here.yaml'})
    assert here.files == [tmp_path / 'here.yaml']
    assert (tmp_path / 'worker.yaml').read_text() == (tmp_path / 'here.yaml').read_text()
    result = yaml.safe_load((tmp_path / 'here.yaml').read_text())
    assert result['identification']['data'] == [f'{csv_case.yaml}[first 70%]']
    assert [v['data'] for v in result['validation']] == [f'{csv_case.yaml}[last 30%]']


def test_the_cli_writes_what_the_workflow_writes(csv_case, urdf, tmp_path, capsys):
    other = csv_case.variant('other')
    outcome = identify_recordings(urdf, [csv_case.yaml], CONFIG, validation=[other],
                                  out=tmp_path / 'workflow.yaml')
    assert main(['identify', '--urdf', str(urdf), '--data', str(csv_case.yaml), '--validate',
                 str(other), '--estimator', 'wls', '--out', str(tmp_path / 'cli.yaml')]) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / 'cli.yaml').read_text() == outcome.result_path.read_text()
    assert f'result written to {tmp_path / "cli.yaml"}' in printed
    assert outcome.preprocessing[0] in printed and outcome.preprocessing[1] in printed
    assert len(outcome.validations) == 1

    checked = validate_recording(outcome.result_path, other, csv=tmp_path / 'pred.csv')
    assert checked.files == [tmp_path / 'pred.csv']
    assert checked.validation.metrics == outcome.validations[0].metrics
    table = np.loadtxt(tmp_path / 'pred.csv', delimiter=',', skiprows=1)
    np.testing.assert_allclose(table[:, 7:], checked.validation.predicted, rtol=1e-8)


def test_a_report_that_fails_leaves_the_result_standing(csv_case, urdf, tmp_path):
    blocked = tmp_path / 'blocked'
    blocked.write_text('a file where the report folder would go')
    outcome = identify_recordings(urdf, [csv_case.yaml], CONFIG, out=tmp_path / 'R.yaml',
                                  report=blocked)
    assert outcome.result_path.is_file() and outcome.report.page is None
    assert isinstance(outcome.report.failure, OSError)
    assert outcome.files == [tmp_path / 'R.yaml']


@pytest.fixture
def excitation_bag(make_synthetic, tmp_path) -> Path:
    """A 20 s bag at 100 Hz whose ExcitationTrajectory message describes ``EXCITATION``."""
    return datafiles.write_joint_state_bag(tmp_path / 'bag', make_synthetic(),
                                           excitation=EXCITATION)


def test_a_bag_is_cut_to_the_excitation_it_describes(excitation_bag, make_synthetic):
    whole = make_synthetic()
    start, period, periods = EXCITATION
    cut = read_recording(excitation_bag)
    inside = np.flatnonzero((whole.t >= start - 1e-9) & (whole.t <= start + periods * period
                                                         + 1e-9))
    assert cut.dataset.source == window_source(excitation_bag, '/joint_states', inside[0],
                                               inside[-1] + 1)
    np.testing.assert_allclose(cut.dataset.position, whole.position[inside], atol=1e-12)
    assert len(cut.stamps) == len(inside)

    entire = load_recording(excitation_bag, RecordingOptions(excitation_window_only=False))
    assert entire.source == str(excitation_bag) and len(entire.t) == len(whole.t)
    assert RecordingOptions().whole() == RecordingOptions(excitation_window_only=False)
    # a description of the same bag reads what it describes: the whole topic
    assert len(load_recording(datafiles.write_yaml(excitation_bag.parent / 'bag.yaml',
                                                   {'file': 'bag'})).t) == len(whole.t)


def test_a_bag_that_covers_too_little_of_its_excitation_is_refused(make_synthetic, tmp_path):
    bag = datafiles.write_joint_state_bag(tmp_path / 'short', make_synthetic(),
                                          excitation=(4.0, 20.0, 3))
    with pytest.raises(InputError, match='excitation window'):
        read_recording(bag)
    with pytest.warns(DataWarning, match='excitation window'):
        assert len(read_recording(bag, RecordingOptions(min_coverage=0.2)).dataset.t) > 0


def test_the_cli_cuts_bags_unless_asked_for_the_whole_recording(excitation_bag, urdf, tmp_path,
                                                                 capsys):
    base = ['identify', '--urdf', str(urdf), '--data', str(excitation_bag), '--estimator',
            'wls', '--out']
    assert main(base + [str(tmp_path / 'cut.yaml')]) == 0
    assert main(base + [str(tmp_path / 'whole.yaml'), '--whole-recording']) == 0
    capsys.readouterr()
    cut = yaml.safe_load((tmp_path / 'cut.yaml').read_text())['identification']
    whole = yaml.safe_load((tmp_path / 'whole.yaml').read_text())['identification']
    assert cut['data'] == [read_recording(excitation_bag).dataset.source]
    assert whole['data'] == [str(excitation_bag)]
    assert cut['samples'] < whole['samples']
    assert RecordingOptions().excitation_topic == EXCITATION_TOPIC


def test_friction_requests_name_their_models_and_optimisers():
    assert friction_choices() == (('improved-stribeck',), ('lsq',))
    assert friction_choices('coulomb-viscous', 'ga') == (('coulomb-viscous',), ('ga',))
    assert len(friction_choices('all', 'all')[1]) == 3
    with pytest.raises(InputError, match="friction_model 'dry' unknown"):
        friction_choices('dry')
