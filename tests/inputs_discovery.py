"""Discovery for tests/test_inputs.py: every public callable of sim/ and theory/ (a new paper's
modules too, walked with pkgutil), a valid call for each (VALID, else its defaults, else
VALUE_BY_NAME) and, per parameter, bad values derived from its valid value, default, annotation
and name (`derived_bad`); `AUTO` holds the resulting cases.  EXEMPT lists what is not fuzzed,
each with its reason.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import numbers
import re
import sys

import numpy as np
import torch

import sim.signgd as SG
import sim.topic as ST
import theory.joma as TJ

import tests.inputs_cases_theory  # noqa: F401 (theory/'s hand-written cases join CASES)
from tests.inputs_cases import (_docs, _eqn2, _gen, _mom, _sg_params, _sg_prob, _t1_gen,
                                 _tp_params, _tr_batch, _tr_model, _tree, BAD_DEVICE, BAD_GEN,
                                 Case, CASES, INF, NAN, public_name)

# ---- discovery: every public callable of sim/ and theory/, bad inputs from its signature --------
# A new module under sim/ or theory/ (a new paper's) is walked like the others: each public
# function or class defined there (not imported) gets a valid call (VALID, else its defaults,
# else VALUE_BY_NAME) and, for each parameter, bad values derived from the parameter's valid value,
# default, annotation and name (`derived_bad`).  One with no valid call fails
# test_every_public_function_has_a_valid_call: add one to VALID (or a reason to EXEMPT).

PACKAGES = ("sim", "theory")

# Not fuzzed, with the reason (a module name exempts every callable defined in it).
EXEMPT = {
    "theory.validate": "the checks themselves: their ValueError names the caller's parameter (the "
                       "`name` argument), by design; every check is exercised through its callers",
    "sim.bench.main": "the command line of `python -m sim.bench`: a bad argv is argparse's usage "
                      "message and exit status 2, as for any command",
    "sim.signgd.Data": "a record inside sim.signgd.Problem (built by make_problem); the functions "
                       "that take a Problem check it",
    "sim.signgd.Checkpoint": "a record inside sim.signgd.Trace (built by train)",
    "sim.transformer.StackedLayerNorm": "a layer of StackedTransformer, which checks S, d and "
                                        "dtype before building it",
    "sim.transformer.Block": "a layer of StackedTransformer, which checks S, d, heads, width, "
                             "dtype and norm before building it",
}


def _is_lambdified(v) -> bool:
    code = getattr(v, "__code__", None)
    return code is not None and code.co_filename.startswith("<lambdifygenerated")


def _shortest(modname: str, key: str, obj) -> str:
    """modname.key under the shortest package that exposes obj as `key` (packages re-export)."""
    parts = modname.split(".")
    for i in range(1, len(parts) + 1):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is not None and getattr(mod, key, None) is obj:
            return f"{mod.__name__}.{key}"
    return f"{modname}.{key}"


IMPORT_ERRORS: dict = {}  # module -> why it does not import (test_every_module_imports)


def _modules():
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        yield pkg
        for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".",
                                       onerror=lambda n: IMPORT_ERRORS.setdefault(n, "no import")):
            if not any(p.startswith("_") for p in m.name.split(".")):
                try:
                    yield importlib.import_module(m.name)
                except Exception as e:  # noqa: BLE001 - one broken module fails one test only
                    IMPORT_ERRORS[m.name] = f"{type(e).__name__}: {e}"


def discover() -> dict:
    """Public name -> callable, for every public callable attribute of every module under sim/
    and theory/ that is defined in that module (functions, classes, instances of its classes,
    closed forms built by lambdify or theory.validate.closed_form), once per object (an alias such
    as theory.joma.hblt.M = transition_matrix is the same function)."""
    out, seen = {}, set()
    for mod in _modules():
        items = sorted(vars(mod).items(), key=lambda kv: (getattr(kv[1], "__name__", None) != kv[0],
                                                          kv[0]))
        for key, v in items:
            if key.startswith("_") or inspect.ismodule(v) or not callable(v) or id(v) in seen:
                continue
            own = getattr(v, "__module__", None)
            if own != mod.__name__ and not _is_lambdified(v):
                continue
            seen.add(id(v))
            out[_shortest(mod.__name__, key, v)] = v
    return dict(sorted(out.items()))


def _exempt_reason(name: str, obj) -> str | None:
    for k, why in EXEMPT.items():
        if name == k or name.startswith(k + "."):
            return why
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "an exception type: raised, not called with input"
    if _record_of(name, obj):
        return f"a result record: returned by {_record_of(name, obj)}, which builds it"
    if not _params(obj) and not _names_of_closed_form(obj):
        return "takes no argument"
    return None


def _record_of(name, obj) -> str:
    """The public function of obj's module whose declared return type obj is (a dataclass
    holding results), or ''."""
    import dataclasses
    if not (inspect.isclass(obj) and dataclasses.is_dataclass(obj)):
        return ""
    mod = sys.modules[obj.__module__]
    for k, f in vars(mod).items():
        if k.startswith("_") or not inspect.isfunction(f) or f.__module__ != mod.__name__:
            continue
        ret = f.__annotations__.get("return")
        ret = ret if isinstance(ret, str) else getattr(ret, "__name__", "")
        if ret.strip("'\"") == obj.__name__:
            return f"{mod.__name__}.{k}"
    return ""


def _names_of_closed_form(fn) -> tuple:
    """The argument names a closed form built by theory.validate.closed_form or
    theory.joma.lambdify_invariant takes by keyword (its signature is (*args, **kwargs))."""
    try:
        names = inspect.getclosurevars(fn).nonlocals.get("names")
    except (TypeError, ValueError):
        return ()
    return tuple(names) if isinstance(names, (list, tuple)) else ()


def _params(fn) -> dict:
    """fn's named parameters (name -> inspect.Parameter), self and *args / **kwargs left out."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {k: p for k, p in sig.parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


# Valid values by parameter name, for a discovered callable with no VALID entry whose parameters
# without a default are all here (fresh generators are made per valid call).
VALUE_BY_NAME = {
    "d": 4, "n": 3, "N": 4, "T": 3, "v": 2, "S": 1, "K": 2, "M": 9, "C": 2, "M_C": 3, "depth": 2,
    "width": 8, "heads": 1, "vocab": 5, "n_out": 3, "tau": 2, "steps": 3, "batch": 1, "seed": 0,
    "seeds": [0], "eta": 0.1, "lr": 0.01, "horizon": 0.3, "t": 1, "x": 0.5, "y": 0.5, "r": 0.5,
    "x0": 0.5, "a": 1.0, "sigma": 1.0, "eps": 0.1, "device": "cpu", "p_m": 0.2, "p_c": 0.1,
    "p_r": 0.1,
}
_FRESH = {"gen", "generator"}

# ---- bad values by kind ----
# names whose value must be > 0 (0 and -1 are bad) or >= 0 (-1 is bad): in sim/ (sizes, rates,
# scales, times, tolerances) and in theory/ (where most names are the paper's real variables,
# only sizes and levels; a closed form declares its own, closed_form(positive=...))
POSITIVE = {
    "sim": {"eta", "lr", "horizon", "t_end", "sigma", "sigma_p", "sigma_0", "scale",
            "embed_scale", "concentration", "dirichlet", "A", "rtol", "blowup", "adam_eps",
            "eps", "k", "n", "d", "N", "T", "S", "K", "M_C", "M", "C", "v", "tau", "D", "depth",
            "width", "heads", "vocab", "n_out", "batch", "log_every", "test_every",
            "n_samples", "n_points", "n_eval", "max_nodes", "max_subsets", "n_children",
            "n_root_children", "N_ch", "m_k", "m_v", "m_c", "n_test", "n_groups",
            "n_top", "lookback", "reps", "seeds", "s"},
    "theory": {"h", "H", "L", "depth", "k", "T_", "v_", "tau_", "dps", "order", "sigma"},
}
INTERVALS = {"log_every", "test_every"}  # steps between logs: any large value logs once (no probe)
NONNEGATIVE = {"sim": {"lam", "weight_decay", "tail", "seed", "keep_dims", "atol", "steps",
                       "n_words"},
               "theory": set()}
# An integer far too large (10**12) is a probe, not a bad value by itself: it must be refused
# (a ValueError naming the parameter) or handled (a finite result, no allocation, no hang) --
# a closed form in T or a log interval may take it.
ABSURD = 10 ** 12
FREE_STR = {"where", "what", "name", "why", "label", "title", "doc"}  # any string is valid
# (name, parameter) -> why a parameter is not fuzzed by the derived values
NOT_FUZZED = {
    ("sim.topic.sample_documents", "N_range"): "unused by model='theory' (the valid call); "
                                                "fuzzed by the sample_documents[lda] case",
    ("sim.topic.sample_documents", "dirichlet"): "unused by model='theory' (the valid call); "
                                                  "fuzzed by the sample_documents[lda] case",
    ("sim.joma.make_table1_generator", "n_top"): "unused by structure='dag' (the valid call); "
                                                  "fuzzed by the make_table1_generator[tree] case",
    ("sim.joma.sample_mixture", "nu"): "unused by family='gaussian' (the valid call); fuzzed on "
                                        "sample_isotropic_noise (family='student_t')",
    ("sim.transformer.loss_per_seed", "mask"): "unused by task='label' (the valid call); fuzzed "
                                                "by the loss_per_seed[next] case",
    ("theory.mutate.sympy_form", "fn"): "a question (does fn carry a sympy form?): any object, "
                                        "None for one without",
}
# (name, parameter) -> why +-inf is a valid value of that (float) parameter (NaN is still bad)
INF_OK = {
    ("theory.joma.RELU", "x"): "psi(+-inf) is psi's limit there (Lemma 1 reads psi(+-inf))",
}
# Public functions whose valid call returns NaN or inf by design (a sentinel), with the reason.
SENTINEL_RESULTS = {
    "sim.joma.make_hblt": "rho = NaN at the depth-1 nodes (no parent edge)",
    "sim.measure.grouped_attention_logits": "NaN for a group with no valid key",
    "sim.signgd.stage_times": "inf for a stage the run never reaches",
    "sim.signgd.qk_alignment_time": "inf where the run never aligns",
    "sim.signgd.events": "inf for an event the run never reaches",
    "theory.joma.two_cluster_stationary_point": "see KNOWN_NONFINITE below (theta1 underflows on "
                                                "the reference input)",
}
# (name, parameter) -> why any shape of that argument is valid (no wrong-shape value)
SHAPE_FREE = {
    ("sim.gamma_sample", "alpha"): "elementwise: any shape",
    ("sim.joma.phi", "u"): "elementwise: any shape",
    ("sim.joma.phi_prime", "u"): "elementwise: any shape",
    ("sim.joma.stable_rank", "V"): "any matrix (a stack of them)",
    ("sim.measure.stable_rank", "W"): "any matrix",
    ("sim.joma.entropy_softmax_sq", "v"): "any length",
    ("sim.joma.solve_eqn3", "delta"): "any number of components",
    ("sim.joma.eqn3_blowup_time", "delta"): "any number of components",
    ("sim.measure.normalized_correlation", "acts"): "any number of units",
    ("sim.measure.normalized_correlation", "latents"): "any number of latents",
    ("sim.measure.best_match_ncorr", "acts"): "any number of units",
    ("sim.measure.best_match_ncorr", "latents"): "any number of latents",
    ("sim.measure.max_over_sequence", "acts"): "any number of units",
    ("sim.joma.make_table1_generator", "n_latents"): "any number of levels",
    ("theory.signgd.value_mu", "V_mu0"): "broadcasts against t",
    ("theory.signgd.value_mu", "t"): "broadcasts against V_mu0",
    ("theory.signgd.value_noise", "t"): "broadcasts against V_i0 and xi_l1",
    ("theory.signgd.crossing_time", "V_mu0"): "broadcasts against V_i0 and xi_l1",
    ("theory.joma.theorem2_ratio_check", "deltas"): "broadcasts against vs",
    ("sim.joma.sample_mixture", "centers"): "(C, M): any dimension M (R defaults to I_M)",
    ("sim.topic.masked_distribution", "P"): "any vocabulary size",
    ("sim.topic.mlm_loss", "out"): "(S, D, N, n): any n above the largest word",
    ("sim.topic.stage2_loss", "alpha"): "alpha and beta broadcast to the grid G",
    ("sim.topic.stage2_loss", "beta"): "alpha and beta broadcast to the grid G",
    ("sim.topic.stage2_loss_fast", "alpha"): "alpha and beta broadcast to the grid G",
    ("sim.topic.stage2_loss_fast", "beta"): "alpha and beta broadcast to the grid G",
    ("sim.transformer.accuracy", "tokens"): "(S, N, T): any sequence length T",
    ("theory.joma.lemma1_printed", "R"): "(n, m): any m",
    ("theory.joma.lemma1_corrected", "R"): "(n, m): any m",
    ("theory.joma.lemma1_printed_alt", "R"): "(n, m): any m",
}


def _ann(p) -> str:
    a = p.annotation
    if a is inspect.Parameter.empty:
        return ""
    return a if isinstance(a, str) else getattr(a, "__name__", str(a))


def _nan_inside(x):
    """x with its first entry NaN (a float tensor, array or nested list of numbers), or None."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point() or x.numel() == 0:
            return None
        y = x.detach().clone()
        y.view(-1)[0] = NAN
        return y
    if isinstance(x, np.ndarray):
        if x.dtype.kind != "f" or x.size == 0:
            return None
        y = x.copy()
        y.reshape(-1)[0] = NAN
        return y
    if isinstance(x, (list, tuple)) and x:
        first = x[0]
        if isinstance(first, numbers.Real) and not isinstance(first, bool):
            return type(x)([NAN, *x[1:]])
        inner = _nan_inside(first)
        return None if inner is None else type(x)([inner, *x[1:]])
    return None


def _wrong_shape(x):
    """x with one entry fewer along its last axis (or one axis more when that axis has one
    entry): a shape that disagrees with the other arguments or with what the function needs."""
    if isinstance(x, (torch.Tensor, np.ndarray)):
        if x.ndim == 0:
            return None
        return x[..., :-1] if x.shape[-1] >= 2 else x[..., None]
    if isinstance(x, (list, tuple)) and x:
        if isinstance(x[0], (list, tuple)):
            inner = _wrong_shape(x[0])
            return None if inner is None else type(x)([inner, *x[1:]])
        return type(x)(x[:-1]) if len(x) >= 2 else type(x)([list(x)])
    return None


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _numbers_only(x) -> bool:
    if isinstance(x, (list, tuple)):
        return bool(x) and all(_numbers_only(y) for y in x)
    return _is_number(x)


def _package(name: str) -> str:
    return name.split(".")[0]


def derived_bad(name: str, param: str, p, valid, has_valid: bool, positive=None) -> tuple:
    """(bad values, probes) for `param` of the callable `name`, derived from its valid value (or
    default), its annotation and its name.  `positive`: the closed form's own positive names
    (theory.validate.closed_form), which replace the POSITIVE table."""
    ann = _ann(p) if p is not None else ""
    default = p.default if p is not None else inspect.Parameter.empty
    v = valid if has_valid else (None if default is inspect.Parameter.empty else default)
    maybe_none = [] if default is None else [None]  # None is a valid value where it is the default
    pkg = _package(name)
    key = param.rstrip("_") if pkg == "sim" else param
    pos = param in positive if positive is not None else key in POSITIVE.get(pkg, ())
    nonneg = key in NONNEGATIVE.get(pkg, ())
    if param in _FRESH or isinstance(v, torch.Generator) or "Generator" in ann:
        return list(BAD_GEN), []
    if param == "device" or "device" in ann:
        return list(BAD_DEVICE), []
    if param == "dtype" or isinstance(v, torch.dtype):
        return [torch.int64, "float64"], []
    if "Callable" in ann or (callable(v) and not inspect.isclass(v) and not isinstance(v, type)
                             and not isinstance(v, (torch.Tensor, np.ndarray))):
        return [5] + maybe_none, []
    if isinstance(v, bool) or (v is None and re.search(r"\bbool\b", ann)):
        return ["yes"] + maybe_none, []
    is_int = isinstance(v, numbers.Integral) and not isinstance(v, bool)
    if (is_int and (re.search(r"\bint\b", ann) or pos or nonneg)) or (
            v is None and re.search(r"\bint\b", ann)):
        bad = [2.5, True] + ([0, -1] if pos else [-1] if nonneg else []) + maybe_none
        return bad, ([ABSURD] if key not in ("seed", *INTERVALS) else [])
    if _is_number(v) or (v is None and re.search(r"\bfloat\b", ann)):
        bad = [NAN] if (name, param) in INF_OK else [NAN, INF, -INF]
        return bad + ([0.0, -1.0] if pos else [-1.0] if nonneg else []) + maybe_none, []
    if isinstance(v, str):
        return ([] if param in FREE_STR else ["nope"] + maybe_none), []
    if type(v).__module__.startswith("sympy"):  # a sympy expression: a string may be one too
        return [NAN] + maybe_none, []
    if isinstance(v, (torch.Tensor, np.ndarray)) or _numbers_only(v):
        bad = [_nan_inside(v)]
        if (name, param) not in SHAPE_FREE:
            bad.append(_wrong_shape(v))
        if _is_covariance(param, v):
            bad.append(-v if isinstance(v, (torch.Tensor, np.ndarray)) else -np.asarray(v))
        return [b for b in bad if b is not None] + maybe_none + ["x"], []
    if v is None:  # an optional argument left at its default: a value of the wrong type
        return (["x"] if "str" not in ann else []), []
    return ["x"] + maybe_none, []


def _is_covariance(param: str, v) -> bool:
    """A covariance-like parameter (named cov..., Sigma or Lambda) whose valid value is a square
    symmetric matrix: its negative is not positive definite (must be a ValueError naming it, not
    a LinAlgError from a Cholesky factor; theory.validate.covariance)."""
    if not ("cov" in param.lower() or param in ("Sigma", "Lambda")):
        return False
    a = v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v, dtype=float)
    return a.ndim == 2 and a.shape[0] == a.shape[1] >= 1 and np.allclose(a, a.T)


def _enter(fn):
    """A context-manager function (`with fn(...) as x`) called and entered: its checks run when
    it is entered."""
    def call(**kw):
        with fn(**kw) as out:
            return out
    call.__name__ = getattr(fn, "__name__", "call")
    return call


def _is_contextmanager(fn) -> bool:
    return inspect.isgeneratorfunction(inspect.unwrap(fn)) and hasattr(fn, "__wrapped__")


DISCOVERED = discover()


# Valid calls of the public functions the hand-written cases above reach through a wrapper
# (the cases whose fn is the public function itself give theirs: `_valid_from_cases`).
def _sg_trace_valid():
    return SG.train(_sg_prob(), _sg_params(), eta=0.01, steps=3, log=SG.STAGE_LOG)


_P, _TREE, _T1G = _eqn2(), _tree(), _t1_gen()
_SGP, _SGPAR, _TRM = _sg_prob(), _sg_params(), _tr_model()
_SGTR, _MOM, (_W, _VAL), _TPP = _sg_trace_valid(), _mom(), _docs(), _tp_params()
_TOK, _LAB, _MSK = _tr_batch(0)
VALID = {
    "sim.gamma_sample": dict(alpha=torch.tensor([1.0], dtype=torch.float64), gen=_gen()),
    "sim.joma.simulate_eqn2": dict(p=_P, eta=0.1, horizon=1.0),
    "sim.joma.simulate_eqn2_softmax_budget": dict(p=_eqn2(attention="softmax"), eta=0.1,
                                                  horizon=1.0),
    "sim.joma.objective": dict(p=_P, W=torch.zeros(1, 5, 2, dtype=torch.float64),
                               z=torch.zeros(1, 3, dtype=torch.float64)),
    "sim.joma.eqn2_velocity": dict(p=_P, W=torch.zeros(1, 5, 2, dtype=torch.float64),
                                   z=torch.zeros(1, 3, dtype=torch.float64)),
    "sim.joma.attention_scores": dict(z=torch.zeros(1, 3, dtype=torch.float64), X=_P.X,
                                      attention="exp"),
    "sim.joma.hblt_exact_joint": dict(tree=_TREE),
    "sim.joma.hblt_exact_pair_table": dict(tree=_TREE, a=1, b=2),
    "sim.joma.hblt_exact_conditional_table": dict(tree=_TREE, child=3, ancestor=1),
    "sim.joma.hblt_exact_leaf_cooccurrence": dict(tree=_TREE),
    "sim.joma.hblt_sample": dict(tree=_TREE, n=10, generator=_gen()),
    "sim.joma.sample_hierarchy": dict(g=_T1G, n=10, generator=_gen()),
    "sim.measure.record": dict(modules={"relu": torch.nn.ReLU()}),
    "sim.signgd.forward": dict(P=_SGP.train.P, p=_SGPAR),
    "sim.signgd.gradients": dict(P=_SGP.train.P, y=_SGP.train.y, p=_SGPAR),
    "sim.signgd.tracked": dict(prob=_SGP, p=_SGPAR),
    "sim.signgd.test_metrics": dict(prob=_SGP, p=_SGPAR),
    "sim.signgd.train": dict(prob=_SGP, params=_SGPAR, eta=0.1, steps=2),
    "sim.signgd.stage_times": dict(tr=_SGTR),
    "sim.signgd.qk_alignment_time": dict(tr=_SGTR),
    "sim.signgd.events": dict(tr=_SGTR),
    "sim.signgd.turn_lookback": dict(eps=0.1),
    "sim.topic.infinite_loss": dict(W=torch.zeros(7, 7), mom=_MOM),
    "sim.topic.ridge_minimiser": dict(mom=_MOM, lam=0.1),
    "sim.topic.min_norm_minimiser": dict(mom=_MOM),
    "sim.topic.gd_infinite": dict(W0=np.zeros((7, 7)), mom=_MOM, steps=3, lr=0.1),
    "sim.topic.block_apply": dict(w_i0=0.1, diff=0.0, same=0.5, T=3, v=2),
    "sim.topic.diag_apply": dict(d_i0=0.1, d_ii=1.0),
    "sim.topic.mask_tokens": dict(gen=_gen(), words=_W, valid=_VAL, p_m=0.2, p_c=0.1, p_r=0.1,
                                  n_words=6),
    "sim.topic.init_params": dict(gen=_gen(), S=1, n=7, d=3, device="cpu"),
    "sim.topic.forward": dict(p=_TPP, tokens=_W, valid=_VAL, sw=ST.Switches(onehot=True)),
    "sim.topic.mlm_loss": dict(out=ST.forward(_TPP, _W, _VAL, ST.Switches(onehot=True)), words=_W,
                               masked=_VAL),
    "sim.topic.train": dict(p=_tp_params(), gen=_gen(), T=3, v=2, steps=1, batch=1,
                            sw=ST.Switches(onehot=True), N_range=(4, 6)),
    "sim.topic.attention_stats": dict(
        A=ST.forward(_TPP, _W, _VAL, ST.Switches(onehot=True), return_attention=True)[1],
        tokens=_W, valid=_VAL, v=2),
    "sim.transformer.train": dict(model=_tr_model(), batch=_tr_batch, steps=2, lr=1e-3),
    "sim.transformer.loss_per_seed": dict(model=_TRM, h=_TRM(_TOK), tokens=_TOK, labels=_LAB,
                                          mask=_MSK, task="label"),
    "sim.transformer.accuracy": dict(model=_TRM, tokens=_TOK, labels=_LAB),
    "sim.bench.run": dict(seeds=1, steps=1, device="cpu", M_C=3, K=2, d=5, N=8),
    "sim.bench.transformer_flops": dict(N=2, T=3, d=4, depth=1, width=8, n_out=3),
    "sim.bench.matmul_rate": dict(S=1, N=2, T=3, d=4, depth=1, width=8, n_out=3, device="cpu",
                                  reps=1),
    "sim.bench.run_transformer": dict(seeds=1, steps=1, device="cpu", d=4, depth=1, N=2, T=3,
                                      vocab=3, n_out=3, repeats=1),
    "sim.bench.run_signgd": dict(seeds=1, steps=1, device="cpu", s=2, n=2),
    "theory.joma.RELU": dict(x=0.5),

    "theory.joma.theorem2_corrected_value": dict(t=0.5, A=1.0),
}


def _mutate_valid() -> dict:
    """Valid calls of theory.mutate (sympy forms in, perturbed forms out), if it is there."""
    try:
        from theory import mutate as TMU
    except ImportError:
        return {}
    N = TJ.sp.Symbol("N", positive=True)
    f = TMU.symbolic((N,), 1 / N)
    return {"theory.mutate.symbolic": dict(args=(N,), expr=1 / N),
            "theory.mutate.with_sympy_form": dict(args=(N,), expr=1 / N),
            "theory.mutate.mutations": dict(args=(N,), expr=1 / N),
            "theory.mutate.sympy_form": dict(fn=f),
            "theory.mutate.mutated_function": dict(fn=f, expr=2 / N)}


VALID.update(_mutate_valid())


def _valid_from_cases() -> dict:
    """id(public callable) -> the valid kwargs of its first hand-written case that calls it
    directly (not through a wrapper of this file)."""
    out = {}
    for c in CASES:
        if c.fn.__module__ != __name__:
            out.setdefault(id(c.fn), c.valid)
    return out


_VALID_BY_ID = _valid_from_cases()


def valid_call(name: str, fn):
    """(kwargs, how) of a valid call of the discovered callable `name`: its VALID entry, else
    its defaults (every parameter has one), else VALUE_BY_NAME; (None, why not) if none."""
    if name in VALID:
        return VALID[name], "VALID"
    if id(fn) in _VALID_BY_ID:
        return _VALID_BY_ID[id(fn)], "a hand-written case"
    params = _params(fn) or {n: None for n in _names_of_closed_form(fn)}
    need = [k for k, p in params.items() if p is None or p.default is inspect.Parameter.empty]
    if not need:
        return {}, "defaults"
    if all(k in VALUE_BY_NAME or k in _FRESH for k in need):
        return {k: (_gen() if k in _FRESH else VALUE_BY_NAME[k]) for k in need}, "VALUE_BY_NAME"
    return None, f"no value for {', '.join(k for k in need if k not in VALUE_BY_NAME)}"


def _value_key(v):
    if isinstance(v, (torch.Tensor, np.ndarray)):
        a = v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v
        return (type(v).__name__, tuple(a.shape), str(a.dtype),
                bool(a.dtype.kind == "f" and np.isnan(a).any()))
    return (type(v).__name__, repr(v))


def _hand_values() -> dict:
    """(public name, parameter) -> keys of the bad values the hand-written cases give it."""
    out: dict = {}
    for c in CASES:
        keys = {_value_key(v) for v in c.bad}
        out.setdefault((c.name.split("[")[0] or public_name(c.fn), c.param), set()).update(keys)
        out.setdefault((id(c.fn), c.param), set()).update(keys)
    return out


def _auto_cases():
    """The derived cases (one per parameter of each discovered callable with a valid call),
    the names with no valid call, and the exempt names with their reasons."""
    hand = _hand_values()
    cases, missing, exempt = [], {}, {}
    for name, fn in DISCOVERED.items():
        why = _exempt_reason(name, fn)
        if why:
            exempt[name] = why
            continue
        valid, how = valid_call(name, fn)
        if valid is None:
            missing[name] = how
            continue
        call = _enter(fn) if _is_contextmanager(fn) else fn
        params = _params(fn) or {n: None for n in _names_of_closed_form(fn)}
        try:
            positive = inspect.getclosurevars(fn).nonlocals.get("positive")
        except (TypeError, ValueError):
            positive = None
        for param, p in params.items():
            if (name, param) in NOT_FUZZED:
                continue
            bad, probes = derived_bad(name, param, p, valid.get(param), param in valid,
                                      None if positive is None else tuple(positive))
            seen = set(hand.get((name, param), ())) | hand.get((id(fn), param), set())
            keep, keep_probes = [], []
            for b in bad + probes:
                k = _value_key(b)
                if k not in seen:
                    seen.add(k)
                    keep.append(b)
                    if b in probes:
                        keep_probes.append(b)
            if keep:
                cases.append(Case(call, valid, param, tuple(keep), name=name,
                                  probes=tuple(keep_probes)))
    return cases, missing, exempt


AUTO, NO_VALID_CALL, EXEMPTED = _auto_cases()
