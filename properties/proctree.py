"""The audit's pytest process tree: started in its own session, stopped with the audit, never
orphaned.  The audit's side runs pytest (`_run_pytest`: its own session and process group, the
stop signals passed on, whatever is left of the group killed when it exits); pytest's side is the
parent-death guard (`pytest_configure`: this module is loaded into the audit's pytest with
`-p properties.proctree`), with which its controller and each xdist worker die with the audit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from properties.cli_common import ROOT

PARENT_ENV = "THEOREM_AUDIT_PARENT_PID"  # set for the pytest run: the guard below watches it
GRACE_S = 20.0  # after SIGINT, how long pytest may take to write its rows before SIGKILL
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _child_setup():  # pragma: no cover - runs in the child between fork and exec
    # an audit started with SIGINT ignored (`nohup`, `cmd &`, some job runners) must still be
    # able to stop its pytest with SIGINT: the child starts with the default dispositions
    for s in _STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def _kill_group(pgid: int, sig=signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Forked:
    """A pytest run in a fork of this process (the Popen calls `_run_pytest` uses)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired("pytest (forked)", timeout)
            time.sleep(0.01)
        return self.returncode


def _fork_pytest(args: list, env: dict) -> _Forked:
    """pytest.main(args) in a fork of this process, in its own session: the audit has imported
    torch, scipy, sympy, Hypothesis and the selected papers already, so a serial run starts in
    a fraction of a second instead of a fresh interpreter's seconds.  The child never returns."""
    import sys

    pid = os.fork()
    if pid:
        return _Forked(pid)
    code = 70
    try:  # pragma: no cover - the child
        os.setsid()
        _child_setup()
        os.chdir(ROOT)
        os.environ.clear()
        os.environ.update(env)
        import pytest
        code = int(pytest.main(list(args)))
    except BaseException:  # noqa: BLE001 -- the child must exit here, whatever happened
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _run_pytest(cmd, env, fork: bool = False) -> tuple[int, bool]:
    """Run pytest in its own session and process group; SIGINT, SIGTERM or SIGHUP here stop it
    (SIGINT first, so that pytest still writes the rows it has; SIGKILL to the whole group after
    GRACE_S or at a second signal).  When it exits, whatever is left of its group (xdist workers
    of a pytest that died) is killed.  Returns (exit code, interrupted).  fork=True: in a fork
    of this process (`cmd` is `python -m pytest ARGS`; the ARGS are run)."""
    env = dict(env, **{PARENT_ENV: str(os.getpid())})
    if fork:
        proc = _fork_pytest(cmd[3:], env)
    else:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True,
                                preexec_fn=_child_setup)  # noqa: PLW1509 -- signal() only
    state = {"interrupted": False, "deadline": None}

    def stop(signum, frame):
        if state["interrupted"]:  # a second signal: no more grace
            _kill_group(proc.pid)
            return
        state["interrupted"] = True
        state["deadline"] = time.monotonic() + GRACE_S
        _kill_group(proc.pid, signal.SIGINT)

    old = {}
    for s in _STOP_SIGNALS:
        if s == signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
            continue  # started with SIGINT ignored: keep ignoring it (SIGTERM still stops)
        old[s] = signal.signal(s, stop)
    try:
        while True:
            try:
                rc = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if state["deadline"] is not None and time.monotonic() > state["deadline"]:
                    _kill_group(proc.pid)
        return rc, state["interrupted"]
    finally:
        if proc.poll() is None:  # an exception here: do not leave pytest behind
            _kill_group(proc.pid)
            proc.wait()
        _kill_group(proc.pid)  # orphaned workers of its group, if any
        for s, h in old.items():
            signal.signal(s, h)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True


def _die_with_group():
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(137)


def pytest_configure(config):
    """The guard (this module is loaded into the audit's pytest with `-p properties.proctree`):
    the pytest controller and each xdist worker watch their parent, and when it is gone (the
    audit was killed with SIGKILL, or the controller was) kill their whole process group, so no
    worker trains on after its audit.  Inactive unless the audit started this pytest."""
    expected = os.environ.get(PARENT_ENV, "")
    if not expected.isdigit():
        return
    import threading

    parent = int(expected)
    if os.getppid() != parent:
        # not a child of the audit (an inherited variable): inert -- unless this is the session
        # the audit started (it is the leader) and the audit died before pytest got here
        if os.getsid(0) == os.getpid() and not _alive(parent):
            _die_with_group()
        return
    os.environ[PARENT_ENV] = str(os.getpid())  # the xdist workers this pytest starts watch it

    def watch():
        while True:
            if os.getppid() != parent:
                _die_with_group()
            time.sleep(1.0)

    threading.Thread(target=watch, name="theorem-audit-guard", daemon=True).start()
