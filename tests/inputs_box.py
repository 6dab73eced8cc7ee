"""The box of tests/test_inputs.py: every call of the input fuzz runs in a forked child boxed in
time (TIMEOUT s) and address space (HEADROOM bytes above the parent's), so that a hang, an
allocation attempt or a crash is reported as such instead of taking the test run down.

`boxed` boxes one call in a fresh fork; `boxed_many` runs calls that are expected to work in as
few forks as possible; `boxed_case` sends a bad call to one long-lived serving child (a fork of
this process costs ~30 ms: torch, scipy and sympy are mapped), which finds it by index in TABLES
(filled by tests/test_inputs.py before the first call).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import resource
import signal
import traceback

import numpy as np
import torch

TIMEOUT = 20.0           # s per call: a valid small call takes well under 1 s
HEADROOM = 2 * 2 ** 30   # bytes of address space a call may add (the caps are 2 GiB of float64)
TABLES: dict = {}  # table name -> its cases (tests.inputs_cases.Case): _serve finds them by index


class _Timeout(BaseException):
    """Raised by SIGALRM in a child that runs several calls (_child_many)."""


def _classify(fn, kwargs) -> tuple[str, str]:
    """fn(**kwargs)'s outcome, in the child: (outcome, message)."""
    try:
        out = fn(**kwargs)
        return ("accepted", _nonfinite(out))
    except ValueError as e:
        return ("ValueError", str(e))
    except MemoryError:
        return ("allocation", "MemoryError")
    except RuntimeError as e:  # torch reports a failed allocation as RuntimeError
        kind = "allocation" if "alloc" in str(e).lower() or "memory" in str(e).lower() else "RuntimeError"
        return (kind, str(e)[:300])
    except _Timeout:
        return ("hang", f"no answer within {TIMEOUT} s")
    except BaseException as e:  # noqa: BLE001 - report, do not crash the child silently
        return (type(e).__name__, "".join(traceback.format_exception_only(e))[:300])


def _raise_timeout(*_):
    raise _Timeout


def _enter_box(limit, alarm=False):
    """In a forked child: cap its address space at `limit` bytes, one torch thread, and (for a
    child that runs several calls, each under its own SIGALRM) the alarm raising _Timeout."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    torch.set_num_threads(1)
    if alarm:
        signal.signal(signal.SIGALRM, _raise_timeout)


def _classify_timed(fn, kwargs) -> tuple[str, str]:
    """_classify under a SIGALRM of TIMEOUT s (a hang comes back as 'hang')."""
    signal.alarm(int(math.ceil(TIMEOUT)))
    res = _classify(fn, kwargs)
    signal.alarm(0)
    return res


def _child(conn, fn, kwargs, limit):
    try:
        _enter_box(limit)
        conn.send(_classify(fn, kwargs))
    except BaseException as e:  # noqa: BLE001 - the box itself failed: report it
        conn.send((type(e).__name__, str(e)[:300]))
    finally:
        conn.close()


def _child_many(conn, calls, limit):
    """Run the (fn, kwargs) calls one after the other, each under a SIGALRM of TIMEOUT s, sending
    (index, outcome, message) after each: one fork for many calls that are expected to work."""
    try:
        _enter_box(limit, alarm=True)
        for i, (fn, kwargs) in enumerate(calls):
            conn.send((i,) + _classify_timed(fn, kwargs))
    finally:
        conn.close()


def _nonfinite(out) -> str:
    """'returned NaN/inf' if any array in the result is not finite, else 'finite result'."""
    def arrays(x):
        if isinstance(x, torch.Tensor):
            yield x.detach().cpu().double().numpy() if x.is_floating_point() else np.zeros(1)
        elif isinstance(x, np.ndarray) and x.dtype.kind == "f":
            yield x
        elif isinstance(x, float):
            yield np.array([x])
        elif isinstance(x, (list, tuple)):
            for y in x:
                yield from arrays(y)
        elif isinstance(x, dict):
            for y in x.values():
                yield from arrays(y)
        elif hasattr(x, "__dict__"):
            for y in vars(x).values():
                yield from arrays(y)
    return "returned NaN/inf" if any(not np.all(np.isfinite(a)) for a in arrays(out)) else "finite result"


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def boxed(fn, kwargs) -> tuple[str, str]:
    """Run fn(**kwargs) in a forked child boxed in time and memory: (outcome, message)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, kwargs, _vm_bytes() + HEADROOM))
    proc.start()
    child.close()
    if not parent.poll(TIMEOUT):
        proc.kill()
        proc.join()
        return "hang", f"no answer within {TIMEOUT} s"
    try:
        res = parent.recv()
    except EOFError:
        res = ("crash", f"child exited {proc.exitcode}")
    proc.join()
    return res


def boxed_many(calls) -> list[tuple[str, str]]:
    """boxed() for a list of (fn, kwargs) calls in as few forks as possible: one child runs them in
    turn (each under its own TIMEOUT); a call that hangs past the alarm or crashes the child is
    reported as such and the rest go on in a new child."""
    out: list = [None] * len(calls)
    start = 0
    while start < len(calls):
        ctx = mp.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child_many,
                           args=(child, calls[start:], _vm_bytes() + HEADROOM))
        proc.start()
        child.close()
        i = start
        while i < len(calls):
            if not parent.poll(TIMEOUT + 10):
                out[i] = ("hang", f"no answer within {TIMEOUT} s")
                proc.kill()
                break
            try:
                j, outcome, msg = parent.recv()
            except EOFError:
                proc.join()
                out[i] = ("crash", f"child exited {proc.exitcode}")
                break
            out[start + j] = (outcome, msg)
            i = start + j + 1
        proc.join()
        start = i + 1 if i < len(calls) else i
    return out


def _serve(conn, limit):
    """A boxed child that serves many calls: it reads (case index, bad-value index), runs that
    call under a SIGALRM of TIMEOUT s and an address-space limit, and answers (outcome, message).
    Forked once (a fork of this process costs ~30 ms: torch, scipy and sympy are mapped)."""
    try:
        _enter_box(limit, alarm=True)
        while True:
            try:
                table, i, j = conn.recv()
            except EOFError:
                return
            c = TABLES[table][i]
            conn.send(_classify_timed(c.fn, dict(c.valid, **{c.param: c.bad[j]})))
    finally:
        conn.close()


class _Server:
    """The parent's side of _serve: restarted after a hang (no answer within TIMEOUT + 10 s,
    e.g. stuck in C code the alarm cannot interrupt) or a crash."""

    proc = None
    conn = None

    @classmethod
    def call(cls, table: str, i: int, j: int) -> tuple[str, str]:
        if cls.proc is None or not cls.proc.is_alive():
            ctx = mp.get_context("fork")
            cls.conn, child = ctx.Pipe(duplex=True)
            cls.proc = ctx.Process(target=_serve, args=(child, _vm_bytes() + HEADROOM), daemon=True)
            cls.proc.start()
            child.close()
        cls.conn.send((table, i, j))
        if not cls.conn.poll(TIMEOUT + 10):
            cls.proc.kill()
            cls.proc.join()
            cls.proc = None
            return "hang", f"no answer within {TIMEOUT} s"
        try:
            return cls.conn.recv()
        except EOFError:
            cls.proc.join()
            code, cls.proc = cls.proc.exitcode, None
            return "crash", f"child exited {code}"


def boxed_case(case, value) -> tuple[str, str]:
    """The outcome of `case` with its parameter set to `value` (one of case.bad), run by the
    serving child."""
    if not _CASE_INDEX:
        _CASE_INDEX.update({id(c): (t, k) for t, cases in TABLES.items()
                            for k, c in enumerate(cases)})
    table, i = _CASE_INDEX[id(case)]
    j = next(k for k, v in enumerate(case.bad) if v is value)
    return _Server.call(table, i, j)


_CASE_INDEX: dict = {}  # id(case) -> (table, index): the serving child finds it by index
