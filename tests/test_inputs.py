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
import types
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
import sim.signgd as SG
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


# ---- sim.signgd ----------------------------------------------------------------------------
BAD_SEEDS = [[-1], [], [2.5], None, "0", [2 ** 64]]


def _sg_prob(**kw):
    return SG.make_problem([0], **dict(dict(n=2, s=2, d=8, sigma_p=1.0, n_test=2, device="cpu"), **kw))


def _sg_params(**kw):
    return SG.init_params([0], **dict(dict(d=8, m_k=1, m_v=2, sigma_0=0.1, device="cpu"), **kw))


def _ok(x, make):
    return make() if isinstance(x, str) and x == "ok" else x


def _sg_forward(P="ok", p="ok"):
    return SG.forward(_ok(P, lambda: _sg_prob().train.P), _ok(p, _sg_params))


def _sg_gradients(P="ok", y="ok", p="ok"):
    return SG.gradients(_ok(P, lambda: _sg_prob().train.P), _ok(y, lambda: _sg_prob().train.y),
                        _ok(p, _sg_params))[0]


def _sg_tracked(prob="ok", p="ok", keep=SG.TRACKED):
    return SG.tracked(_ok(prob, _sg_prob), _ok(p, _sg_params), keep=keep)


def _sg_test_metrics(prob="ok", p="ok"):
    return SG.test_metrics(_ok(prob, _sg_prob), _ok(p, _sg_params))


def _sg_train(prob="ok", params="ok", **kw):
    return SG.train(_ok(prob, _sg_prob), _ok(params, _sg_params), **kw)


def _sg_trace():
    return SG.train(_sg_prob(), _sg_params(), eta=0.01, steps=3, log=SG.STAGE_LOG)


def _sg_stage_times(tr="ok"):
    return SG.stage_times(_ok(tr, _sg_trace))


def _sg_qk_alignment_time(tr="ok"):
    return SG.qk_alignment_time(_ok(tr, _sg_trace))


def _sg_events(tr="ok"):
    return SG.events(_ok(tr, _sg_trace))["stage"]


BAD_TRACE = [None, {"a": 1}, types.SimpleNamespace(t=[0, 1], q={}), "tr"]
_add(SG.make_problem, dict(seeds=[0], n=2, s=2, d=8, sigma_p=1.0, n_test=2, device="cpu"),
     {"seeds": BAD_SEEDS, "n": BAD_SIZE, "s": [0, -1, 2.5, 8, True, [0], [2, 2]],
      "d": [1, -1, 2.5, 10 ** 12], "L": [1, 0, 2.5, 10 ** 12], "n_test": BAD_SIZE,
      "sigma_p": BAD_POS_FLOAT + [True], "orthogonal": ["yes", 1, None], "disjoint": ["no", 0]})
_add(SG.init_params, dict(seeds=[0], d=8, m_k=1, m_v=2, sigma_0=0.1, device="cpu"),
     {"seeds": BAD_SEEDS, "d": [1, -1, 2.5, 10 ** 12], "m_k": BAD_SIZE,
      "m_v": BAD_SIZE + [[0], [2, 2], [10 ** 12]], "sigma_0": BAD_POS_FLOAT + [[NAN], [0.1, 0.1]],
      "head_init": [NAN, INF, "1"]})
_add(_sg_forward, {}, {"P": [torch.zeros(1, 2, 2, 3), np.zeros((1, 2, 2, 8)), None],
                       "p": [None, "x"]}, name="sim.signgd.forward")
_add(SG.loss_of, dict(f=torch.zeros(1, 2), y=torch.ones(1, 2)),
     {"f": [torch.zeros(1, 3), None], "y": [torch.ones(2), [1.0, 1.0]]})
_add(_sg_gradients, {}, {"P": [torch.zeros(1, 2, 2, 3), None], "y": [torch.ones(1, 3), None],
                         "p": [None]}, name="sim.signgd.gradients")
_add(_sg_tracked, {}, {"prob": [None, "x"], "p": [None, _sg_params(d=9)],
                       "keep": [("nope",), "alpha", 5]}, name="sim.signgd.tracked")
_add(SG.squeeze_L2, dict(tr={"a": np.zeros((1, 1, 1, 2, 1))}), {"tr": [None, [1], "x"]})
_add(_sg_test_metrics, {}, {"prob": [None], "p": [None, _sg_params(d=9)]},
     name="sim.signgd.test_metrics")
_add(_sg_train, dict(eta=0.1, steps=2),
     {"eta": BAD_POS_FLOAT, "steps": [-1, 2.5, True, 10 ** 12, None],
      "optimizer": ["sgd", None], "log_every": [0, -1, 2.5], "test_every": [0, -1, 2.5],
      "learnable_head": ["yes", None], "adam_eps": [0.0, -1.0, NAN, INF],
      "betas": [(1.0, 0.999), (0.9, 1.0), (NAN, 0.9), (0.9,), "ab", (-0.1, 0.9)],
      "log": [("nope",), "alpha", 5], "stop": ["x", 5], "tail": [NAN, INF, -1.0],
      "sign_zero": [2, 0.5, NAN, True], "stop_seed": ["x"], "checkpoints": [[-1], [5], [2.5], "5"],
      "test_at": [[100], [None]], "prob": [None], "params": [None, _sg_params(d=9)]},
     name="sim.signgd.train")
_add(SG.reduced_dynamics, dict(alpha=np.zeros((1, 1)), beta=np.zeros((1, 1)), a=np.zeros((1, 1, 2)),
                               b=np.zeros((1, 1, 2)), V_mu=np.zeros(1), V=np.zeros((1, 2)),
                               c=np.full((1, 2), 0.1), eta=0.1, steps=3),
     {"eta": BAD_POS_FLOAT + [[0.1, 0.1]], "steps": [-1, 2.5, 10 ** 12],
      "alpha": [[[NAN]], np.zeros((2, 1)), np.zeros(1)], "beta": [[[INF]], np.zeros((1, 2))],
      "a": [np.full((1, 1, 2), INF), np.zeros((1, 1, 3))], "b": [np.zeros((1, 2))],
      "V_mu": [[NAN], np.zeros(2)], "V": [np.zeros((1, 3)), [[NAN, 0.0]]],
      "c": [np.full((1, 2), NAN), "c"]})
_add(_sg_stage_times, {}, {"tr": BAD_TRACE}, name="sim.signgd.stage_times")
_add(_sg_qk_alignment_time, {}, {"tr": BAD_TRACE}, name="sim.signgd.qk_alignment_time")
_add(_sg_events, {}, {"tr": BAD_TRACE}, name="sim.signgd.events")


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


def _one_per_valid_call(cases):
    """The cases with distinct reference calls (rows added together share theirs)."""
    seen, out = set(), []
    for c in cases:
        key = (c.fn, id(c.valid))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


# Bad values drawn per case: at least the longest `bad` list, so that Hypothesis (which stops
# once a small finite space is exhausted) tries every value of every case in one run.
EXAMPLES_PER_CASE = max(len(c.bad) for c in CASES)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the box forks")
@pytest.mark.parametrize("case", _one_per_valid_call(CASES),
                         ids=lambda c: c.name or c.fn.__module__ + "." + c.fn.__name__)
def test_the_valid_call_works(case):
    """The reference call of each case is accepted (else the bad values prove nothing)."""
    outcome, msg = boxed(case.fn, dict(case.valid))
    assert outcome == "accepted", f"{case.label()}: the valid call gives {outcome}: {msg}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the box forks")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label())
@settings(max_examples=EXAMPLES_PER_CASE, deadline=None)
@given(data=st.data())
def test_bad_input_is_a_value_error_naming_the_parameter(case, data):
    value = data.draw(st.sampled_from(case.bad), label=case.param)
    outcome, msg = boxed(case.fn, dict(case.valid, **{case.param: value}))
    assert outcome == "ValueError", f"{case.label()} with {case.param}={value!r}: {outcome}: {msg}"
    assert case.param.rstrip("_") in msg, (
        f"{case.label()} with {case.param}={value!r}: the message does not name {case.param}: {msg}")


def _short(v) -> str:
    """A one-line repr of a bad value (tensors and arrays by type and shape)."""
    if isinstance(v, (torch.Tensor, np.ndarray)):
        return f"{type(v).__name__}{tuple(v.shape)}"
    r = " ".join(repr(v).split())
    return r if len(r) <= 60 else r[:57] + "..."


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
        msg = " ".join(msg.split())
        print(("ok  " if ok else "BAD ") + f"{c.label()} {c.param}={_short(v)}: {out}: {msg[:120]}")
    print(f"{bad} bad of {sum(len(c.bad) for c in CASES)}")
