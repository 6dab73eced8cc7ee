"""Bad input gets a ValueError naming the parameter, before any work: a Hypothesis fuzz test over
the public simulator and closed-form API.

Each case is a public function, a small valid call, and for one parameter a set of invalid
values (NaN, inf, negative or zero sizes, non-integers, absurd sizes, a missing generator, ...).
Every call runs in a forked child boxed in time (`TIMEOUT` s) and address space (`HEADROOM`
bytes above the parent's), so a hang, an allocation attempt or a crash is reported as such
instead of taking the test run down.  The call must raise `ValueError` whose message names the
parameter; anything else (accepted, NaN returned, another exception, hang, allocation) fails.

Add a row to `CASES` for a new public function: `Case(fn, valid_kwargs, param, bad_values)`.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import resource
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import sim
import sim.joma as J
import sim.measure as M
import theory.joma as TJ
import theory.topic as TT

TIMEOUT = 20.0           # s per call: a valid small call takes well under 1 s
HEADROOM = 2 * 2 ** 30   # bytes of address space a call may add (the caps are 2 GiB of float64)

NAN, INF = math.nan, math.inf
BAD_POS_FLOAT = [NAN, INF, -INF, 0.0, -1.0]          # for a parameter that must be finite and > 0
BAD_FLOAT = [NAN, INF, -INF]                         # for a parameter that must be finite
BAD_SIZE = [0, -1, 2.5, True, 10 ** 12]              # for a size that must be a positive integer


@dataclass(frozen=True)
class Case:
    fn: Callable
    valid: dict
    param: str
    bad: tuple
    args: tuple = field(default=())
    name: str = ""

    def label(self):
        return f"{self.name or self.fn.__module__ + '.' + self.fn.__name__}({self.param}=...)"


def _gen():
    return sim.make_generator(0)


def _eqn2(**kw):
    return J.make_problem([0], M_C=3, K=2, d=5, N=8, **kw)


def _call_simulate_eqn2(**kw):
    return J.simulate_eqn2(_eqn2(), **kw)


def _call_softmax_budget(**kw):
    return J.simulate_eqn2_softmax_budget(_eqn2(attention="softmax"), **kw)


def _call_gamma(alpha, gen="ok"):
    return sim.gamma_sample(torch.tensor([alpha], dtype=torch.float64),
                            _gen() if gen == "ok" else gen)


CASES: list[Case] = []


def _add(fn, valid, bad_by_param, name=""):
    for param, bad in bad_by_param.items():
        CASES.append(Case(fn, valid, param, tuple(bad), name=name))


_add(sim.make_generator, dict(seed=0), {"seed": [-1, 2.5, None, "0"]})
_add(_call_gamma, dict(alpha=1.0), {"alpha": [INF, NAN, 0.0, -1.0], "gen": [None, 0]},
     name="sim.gamma_sample")
_add(J.make_problem, dict(seeds=[0], M_C=3, K=2, d=5, N=8),
     {"M_C": BAD_SIZE, "K": BAD_SIZE, "N": BAD_SIZE, "d": [2, -1, 2.5, 10 ** 12],
      "tokens": BAD_SIZE, "concentration": BAD_POS_FLOAT, "A": BAD_POS_FLOAT,
      "seeds": [[-1], [], [2.5]], "attention": ["relu", None], "activation": ["tanh"]})
_add(_call_simulate_eqn2, dict(eta=0.1, horizon=1.0),
     {"eta": BAD_POS_FLOAT + [1e-12], "horizon": BAD_POS_FLOAT, "log_every": [0, -1, 2.5],
      "blowup": BAD_POS_FLOAT}, name="sim.joma.simulate_eqn2")
_add(_call_softmax_budget, dict(eta=0.1, horizon=1.0),
     {"eta": BAD_POS_FLOAT + [1e-12], "horizon": BAD_POS_FLOAT},
     name="sim.joma.simulate_eqn2_softmax_budget")
_add(J.solve_eqn3, dict(delta=[0.5, -0.2], horizon=0.5),
     {"rtol": [NAN, INF, 0.0, -1.0, 2.0], "atol": BAD_POS_FLOAT, "horizon": BAD_POS_FLOAT,
      "A": BAD_POS_FLOAT, "n_eval": [0, 1, 2.5, 10 ** 12], "delta": [[NAN], [], [[1.0]]],
      "c": [[NAN, 0.0], [0.0]], "v0": [[INF, 0.0], [0.0]]})
_add(J.simulate_eqn7, dict(mu=[1.0, 2.0], v0=[0.1, 0.1], t_end=1.0),
     {"t_end": BAD_POS_FLOAT, "n_points": BAD_SIZE, "mu": [[NAN, 1.0], [-1.0, 1.0], [1.0]],
      "v0": [[INF, 0.1], [0.1]], "rtol": [NAN, 0.0, -1.0], "atol": [NAN, -1.0]})
_add(M.row_entropy, dict(probs=torch.tensor([[0.5, 0.5]])),
     {"probs": [torch.tensor([[NAN, 1.0]]), torch.tensor([[-0.5, 1.5]])]})
_add(M.stable_rank, dict(W=torch.eye(3)), {"W": [torch.full((3, 3), NAN), torch.zeros(0)]})
_add(TT.theorem2_wstar, dict(T_=4, v_=3, p_m_=0.15, p_c_=0.1, p_r_=0.1),
     {"T_": BAD_SIZE, "v_": BAD_SIZE, "p_m_": [NAN, -0.1, 1.5], "p_c_": [NAN, -0.1, 1.5],
      "p_r_": [NAN, -0.1, 1.5]})
_add(TJ.eq9_exact_mp, dict(e=0.1, h=2, depth=3),
     {"dps": [0, -5, 10 ** 9], "h": [0, -1, 2.5], "depth": [0, -1, 2.5]})


def _child(conn, fn, kwargs, limit):
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        torch.set_num_threads(1)
        out = fn(**kwargs)
        conn.send(("accepted", _nonfinite(out)))
    except ValueError as e:
        conn.send(("ValueError", str(e)))
    except MemoryError:
        conn.send(("allocation", "MemoryError"))
    except RuntimeError as e:  # torch reports a failed allocation as RuntimeError
        kind = "allocation" if "alloc" in str(e).lower() or "memory" in str(e).lower() else "RuntimeError"
        conn.send((kind, str(e)[:300]))
    except BaseException as e:  # noqa: BLE001 - report, do not crash the child silently
        conn.send((type(e).__name__, "".join(traceback.format_exception_only(e))[:300]))
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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the box forks")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label())
def test_the_valid_call_works(case):
    """The reference call of each case is accepted (else the bad values prove nothing)."""
    outcome, msg = boxed(case.fn, dict(case.valid))
    assert outcome == "accepted", f"{case.label()}: the valid call gives {outcome}: {msg}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the box forks")
@settings(max_examples=120, deadline=None)
@given(st.sampled_from(CASES).flatmap(lambda c: st.tuples(st.just(c), st.sampled_from(c.bad))))
def test_bad_input_is_a_value_error_naming_the_parameter(case_and_value):
    case, value = case_and_value
    outcome, msg = boxed(case.fn, dict(case.valid, **{case.param: value}))
    assert outcome == "ValueError", f"{case.label()} with {case.param}={value!r}: {outcome}: {msg}"
    assert case.param.rstrip("_") in msg, (
        f"{case.label()} with {case.param}={value!r}: the message does not name {case.param}: {msg}")


def every_bad_call():
    """All (case, value) pairs: `python -m tests.test_inputs` prints the outcome of each."""
    for c in CASES:
        for v in c.bad:
            yield c, v


if __name__ == "__main__":
    bad = 0
    for c, v in every_bad_call():
        out, msg = boxed(c.fn, dict(c.valid, **{c.param: v}))
        ok = out == "ValueError" and c.param.rstrip("_") in msg
        bad += not ok
        print(("ok  " if ok else "BAD ") + f"{c.label()} {c.param}={v!r}: {out}: {msg[:120]}")
    print(f"{bad} bad of {sum(len(c.bad) for c in CASES)}")
