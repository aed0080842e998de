"""The life cycle of a node process (ident_ros.lifecycle.run), in child processes: a signal lets
the node finish; during teardown a signal ends the process at once; a teardown that hangs is
ended by the watchdog with the threads' tracebacks."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

NODE = textwrap.dedent('''
    import sys, time
    from ident_ros import lifecycle

    class Node(lifecycle.GracefulNode):
        def __init__(self):
            super().__init__('lifecycle_test')
            print('ready', flush=True)

        def request_shutdown(self):
            print('finishing', flush=True)
            self.finished = True

        def destroy_node(self):
            print('tearing down', flush=True)
            if sys.argv[1] == 'hang':
                time.sleep(3600)                # a middleware teardown that never returns
            super().destroy_node()

    sys.exit(lifecycle.run(Node))
''')
HANG_GUARD = 60.0          # s; only guards against a test that would never end


def _start(tmp_path: Path, mode: str) -> subprocess.Popen:
    from ident_ros.testing import reserve_domain

    script = tmp_path / 'node.py'
    script.write_text(NODE)
    env = dict(os.environ, ROS_DOMAIN_ID=str(reserve_domain()),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
    return subprocess.Popen([sys.executable, str(script), mode], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_line(proc: subprocess.Popen, line: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    for got in proc.stdout:
        if got.strip() == line:
            return
        assert time.monotonic() < deadline, f'no line {line!r}'
    pytest.fail(f'the node ended before printing {line!r}: {proc.stderr.read()[-2000:]}')


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail('the node process did not end')
    return proc.returncode, err


def test_signal_lets_the_node_finish_and_exit_0(tmp_path):
    proc = _start(tmp_path, 'clean')
    _wait_for_line(proc, 'ready')
    proc.send_signal(signal.SIGINT)
    _wait_for_line(proc, 'finishing')
    code, err = _finish(proc)
    assert code == 0, err


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_a_signal_during_teardown_ends_the_process(tmp_path, sig):
    proc = _start(tmp_path, 'hang')
    _wait_for_line(proc, 'ready')
    proc.send_signal(signal.SIGINT)
    _wait_for_line(proc, 'tearing down')
    proc.send_signal(sig)
    code, err = _finish(proc)
    assert code == -sig, err          # the default action, not a handler that only notes it


def test_a_hanging_teardown_is_ended_by_the_watchdog(tmp_path):
    proc = _start(tmp_path, 'hang')
    _wait_for_line(proc, 'ready')
    proc.send_signal(signal.SIGINT)
    _wait_for_line(proc, 'tearing down')
    code, err = _finish(proc)
    assert code == 1
    assert 'Timeout (' in err, err                 # faulthandler's report
    assert 'in destroy_node' in err                # the traceback shows where it hung
