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
    """Describe an exit status for messages.

    Parameters
    ----------
    rc : int or None
        A ``Popen.returncode``: negative if the process was killed by a signal, None while it
        runs.

    Returns
    -------
    str
        The number, with the signal's name for a signal (``'-15 (SIGTERM)'``).
    """
    if rc is not None and rc < 0:
        try:
            return f'{rc} ({signal.Signals(-rc).name})'
        except ValueError:
            return str(rc)
    return str(rc)


class NodeProcess:
    """One node's process and what is known about it during a run.

    Parameters
    ----------
    spec : NodeSpec
        The node to run.

    Attributes
    ----------
    spec : NodeSpec
        The node to run.
    popen : subprocess.Popen or None
        The process, None until it is started.
    reader : threading.Thread or None
        The thread copying the node's output, None until it is started.
    returncode : int or None
        Exit status once the process has been reaped (127 if it could not be started).
    escalation : str or None
        ``'SIGTERM'`` or ``'SIGKILL'`` if the shutdown had to go beyond SIGINT, else None.
    label : str
        Label of the node (read-only property).
    running : bool
        Whether the process runs (read-only property).
    """

    def __init__(self, spec):
        self.spec = spec
        self.popen = None
        self.reader = None
        self.returncode = None
        self.escalation = None  # None | 'SIGTERM' | 'SIGKILL'

    @property
    def label(self):
        """Label of the node.

        Returns
        -------
        str
            Output prefix and name in messages (:attr:`NodeSpec.label`).
        """
        return self.spec.label

    @property
    def running(self):
        """Whether the process runs.

        Returns
        -------
        bool
            True if the process was started and has not been reaped yet.
        """
        return self.popen is not None and self.returncode is None

    def poll(self):
        """Check whether the process has exited, and reap it if so.

        Returns
        -------
        int or None
            :attr:`returncode`: the exit status, None while the process runs or before it is
            started.
        """
        if self.running:
            self.returncode = self.popen.poll()
        return self.returncode

    def signal(self, signum):
        """Send a signal to the node's process group, if the node runs.

        A process group that no longer exists is ignored; if the group may not be signalled,
        the signal goes to the node's process alone.

        Parameters
        ----------
        signum : int
            The signal number (e.g. ``signal.SIGINT``).
        """
        if not self.running:
            return
        try:
            os.killpg(self.popen.pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.popen.send_signal(signum)


class Runner:
    """Start, supervise and stop the nodes of a resolved launch description.

    Parameters
    ----------
    specs : list of NodeSpec
        The nodes, in start order.
    sigint_timeout : float, optional
        Seconds to wait after SIGINT before SIGTERM.
    sigterm_timeout : float, optional
        Seconds to wait after SIGTERM before SIGKILL, and after SIGKILL before giving up.
    out : io.TextIOBase, optional
        Stream for the nodes' output lines; default ``sys.stdout``.
    log : io.TextIOBase, optional
        Stream for the runner's own messages; default ``sys.stderr``.
    environ : mapping of {str: str}, optional
        Environment of the nodes (copied); default ``os.environ``. ``PYTHONUNBUFFERED=1`` is
        added unless set, so that Python nodes' lines appear when they are printed.

    Attributes
    ----------
    nodes : list of NodeProcess
        The nodes, in start order.
    sigint_timeout : float
        Seconds to wait after SIGINT before SIGTERM.
    sigterm_timeout : float
        Seconds to wait after SIGTERM before SIGKILL, and after SIGKILL.
    out : io.TextIOBase
        Stream for the nodes' output lines.
    log_stream : io.TextIOBase
        Stream for the runner's own messages.
    environ : dict of {str: str}
        Environment of the nodes.
    """

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
        """Write one runner message to the log stream, prefixed with ``[ident_launch] ``.

        Parameters
        ----------
        message : str
            The message, without trailing new line.
        """
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
        """Start all nodes, supervise them, shut down.

        The nodes are started in order. The run ends when every node has exited; it shuts the
        remaining nodes down (see :meth:`shutdown`) as soon as a node exits non-zero or by a
        signal, a node with ``on_exit: shutdown`` exits, a node cannot be started or the
        runner receives SIGINT or SIGTERM. In the main thread, handlers for SIGINT and SIGTERM
        are installed for the run and the previous ones restored afterwards. Processes a node
        left behind in its process group are killed.

        Returns
        -------
        int
            The exit status: 0 if every started node exited with status 0, else 1.
        """
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
        """Stop the running nodes: SIGINT, then SIGTERM, then SIGKILL.

        Each stage signals the process group of every node still running and waits until they
        have all exited: ``sigint_timeout`` seconds after SIGINT, ``sigterm_timeout`` after
        SIGTERM and after SIGKILL. Escalations are logged and recorded in
        :attr:`NodeProcess.escalation`. A new SIGINT/SIGTERM to the runner ends the wait of
        the current stage early. Nodes still running after the SIGKILL wait are reported.
        """
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
