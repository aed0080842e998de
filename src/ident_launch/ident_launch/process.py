"""Starting, watching and stopping the node processes of a resolved launch description.

Every node runs in its own session/process group with stdin detached; stdout and stderr are
merged and streamed line by line to our stdout as ``[label] line`` (one reader thread per node).
Signals go to the node's process group. Shutdown: SIGINT to every running node, wait
``sigint_timeout``, SIGTERM to the rest, wait ``sigterm_timeout``, SIGKILL. A second SIGINT/SIGTERM
to the runner during shutdown skips the remaining wait of the current stage.
"""

import os
import signal
import subprocess
import sys
import threading
import time

POLL = 0.05


def describe_returncode(rc):
    if rc is not None and rc < 0:
        try:
            return f'{rc} ({signal.Signals(-rc).name})'
        except ValueError:
            return str(rc)
    return str(rc)


class NodeProcess:
    def __init__(self, spec):
        self.spec = spec
        self.popen = None
        self.reader = None
        self.returncode = None
        self.escalation = None  # None | 'SIGTERM' | 'SIGKILL'

    @property
    def label(self):
        return self.spec.label

    @property
    def running(self):
        return self.popen is not None and self.returncode is None

    def poll(self):
        if self.running:
            self.returncode = self.popen.poll()
        return self.returncode

    def signal(self, signum):
        if not self.running:
            return
        try:
            os.killpg(self.popen.pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.popen.send_signal(signum)


class Runner:
    def __init__(self, specs, sigint_timeout=10.0, sigterm_timeout=5.0, out=None, log=None,
                 environ=None):
        self.nodes = [NodeProcess(s) for s in specs]
        self.sigint_timeout = sigint_timeout
        self.sigterm_timeout = sigterm_timeout
        self.out = out if out is not None else sys.stdout
        self.log_stream = log if log is not None else sys.stderr
        self.environ = dict(os.environ if environ is None else environ)
        # Python nodes write to a pipe: unbuffered so lines appear when they are printed.
        self.environ.setdefault('PYTHONUNBUFFERED', '1')
        self._lock = threading.Lock()
        self._signals = []  # received signal numbers (appended by the handler)

    # -- output --------------------------------------------------------------------------------
    def _write(self, stream, text):
        with self._lock:
            try:
                stream.write(text)
                stream.flush()
            except (BrokenPipeError, ValueError):
                pass

    def log(self, message):
        self._write(self.log_stream, f'[ident_launch] {message}\n')

    def _pump(self, node):
        prefix = f'[{node.label}] '
        pipe = node.popen.stdout
        try:
            for raw in iter(pipe.readline, b''):
                line = raw.decode('utf-8', errors='replace').rstrip('\r\n')
                self._write(self.out, prefix + line + '\n')
        except (OSError, ValueError):
            pass
        finally:
            try:
                pipe.close()
            except OSError:
                pass

    # -- signals -------------------------------------------------------------------------------
    def _on_signal(self, signum, frame):
        self._signals.append(signum)

    def _install_handlers(self):
        previous = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, self._on_signal)
        return previous

    # -- life cycle ----------------------------------------------------------------------------
    def _start(self, node):
        cmd = node.spec.cmd
        node.popen = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, env=self.environ, close_fds=True)
        node.reader = threading.Thread(target=self._pump, args=(node,), daemon=True,
                                       name=f'output-{node.label}')
        node.reader.start()
        self.log(f"started '{node.label}' (pid {node.popen.pid})")

    def _reaped(self, node):
        self.log(f"'{node.label}' exited with code {describe_returncode(node.returncode)}")

    def run(self):
        """Start all nodes, supervise them, shut down; return the exit status (0 or 1)."""
        previous = self._install_handlers() if threading.current_thread() is \
            threading.main_thread() else {}
        try:
            return self._run()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _run(self):
        reason = None
        for node in self.nodes:
            if self._signals:
                break
            try:
                self._start(node)
            except OSError as exc:
                self.log(f"cannot start '{node.label}' ({node.spec.cmd[0]}): {exc}")
                node.returncode = 127
                reason = f"'{node.label}' could not be started"
                break
        handled_signals = 0
        while reason is None:
            if len(self._signals) > handled_signals:
                handled_signals = len(self._signals)
                reason = f'received {signal.Signals(self._signals[-1]).name}'
                break
            for node in self.nodes:
                if node.running and node.poll() is not None:
                    self._reaped(node)
                    if node.returncode != 0:
                        reason = f"'{node.label}' failed"
                    elif node.spec.shutdown_on_exit:
                        reason = f"'{node.label}' exited (on_exit: shutdown)"
                    if reason:
                        break
            if reason is None and not any(n.running for n in self.nodes):
                break
            if reason is None:
                time.sleep(POLL)
        if reason is not None and any(n.running for n in self.nodes):
            self.log(f'{reason}: shutting down')
            self.shutdown()
        self._cleanup()
        return self._summary()

    def _wait(self, timeout):
        """Wait until no node runs, ``timeout`` passes or a new signal arrives."""
        signals_before = len(self._signals)
        deadline = time.monotonic() + timeout
        while True:
            for node in self.nodes:
                if node.running and node.poll() is not None:
                    self._reaped(node)
            if not any(n.running for n in self.nodes):
                return
            if time.monotonic() >= deadline or len(self._signals) > signals_before:
                return
            time.sleep(POLL)

    def shutdown(self):
        stages = ((signal.SIGINT, self.sigint_timeout),
                  (signal.SIGTERM, self.sigterm_timeout),
                  (signal.SIGKILL, self.sigterm_timeout))
        for signum, timeout in stages:
            running = [n for n in self.nodes if n.running]
            if not running:
                return
            if signum != signal.SIGINT:
                before = 'SIGINT' if signum == signal.SIGTERM else 'SIGTERM'
                for node in running:
                    node.escalation = signum.name
                    self.log(f"'{node.label}' did not exit after {before}: "
                             f'sending {signum.name}')
            for node in running:
                node.signal(signum)
            self._wait(timeout)
        for node in self.nodes:
            if node.running:
                self.log(f"'{node.label}' (pid {node.popen.pid}) did not exit even after SIGKILL")

    def _cleanup(self):
        """Kill what a node left behind in its process group; let the readers finish."""
        for node in self.nodes:
            if node.popen is None or node.running:
                continue
            try:
                os.killpg(node.popen.pid, 0)
            except (ProcessLookupError, PermissionError):
                continue
            self.log(f"'{node.label}' left processes behind in its process group: killing them")
            try:
                os.killpg(node.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 2.0
        for node in self.nodes:
            if node.reader is not None:
                node.reader.join(max(0.0, deadline - time.monotonic()))

    def _summary(self):
        failed = [n for n in self.nodes
                  if n.returncode is not None and n.returncode != 0
                  or (n.popen is not None and n.returncode is None)]
        for node in self.nodes:
            if node.escalation:
                self.log(f"'{node.label}' needed {node.escalation} to stop")
        for node in failed:
            self.log(f"FAILED: '{node.label}' exit code {describe_returncode(node.returncode)}")
        if failed:
            return 1
        return 0
