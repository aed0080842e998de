"""The BLAS thread limit: one thread unless ROBOT_IDENT_BLAS_THREADS says otherwise, on every
BLAS library loaded (numpy's and scipy's OpenBLAS, or one system BLAS), and a bad value is one
CLI error line."""
import pytest
import scipy.linalg  # noqa: F401  (loads scipy's BLAS next to numpy's)
from threadpoolctl import threadpool_info, threadpool_limits

from ident_core.cli import main
from ident_core.errors import InputError
from ident_core.threads import ENVIRONMENT_VARIABLE, blas_threads, limit_blas_threads


def _blas_threads() -> list[int]:
    return [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']


def test_one_thread_unless_the_variable_says_otherwise(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert blas_threads() == 1
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, ' 2 ')
    assert blas_threads() == 2


@pytest.mark.parametrize('value', ['0', '-1', 'two', '1.5', '²'])
def test_bad_thread_count_is_refused(monkeypatch, value):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, value)
    with pytest.raises(InputError, match=ENVIRONMENT_VARIABLE):
        blas_threads()


def test_limit_holds_for_every_blas_library_and_is_restored(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert _blas_threads()                       # numpy's BLAS at least
    with threadpool_limits(limits=2, user_api='blas'):
        outside = _blas_threads()
        with limit_blas_threads():
            assert _blas_threads() == [1] * len(outside)
        assert _blas_threads() == outside


def test_cli_reports_a_bad_thread_count(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, 'many')
    code = main(['validate', '--model', str(tmp_path / 'RESULT.yaml'), '--data',
                 str(tmp_path / 'data.yaml')])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith('robot-ident: error: ROBOT_IDENT_BLAS_THREADS must be a positive '
                          "integer, got 'many'"), err
