"""The hand-written cases of tests/test_inputs.py: `CASES`, one `Case(fn, valid_kwargs, param,
bad_values)` per parameter, added with `_add(fn, valid, {param: bad_values})`: specific bad values
(a probability of 1.5, an index past the tree, a non-positive-definite covariance, ...) and
variants of a call, per module of sim/ and theory/; the devices every function that takes one is
fuzzed on.  The values derived from signatures (tests/inputs_discovery.py) are not repeated here.
"""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

import sim
import sim.joma as J
import sim.measure as M
import sim.signgd as SG
import sim.topic as ST
import sim.transformer as TR
import theory.joma as TJ
import theory.topic as TT

NAN, INF = math.nan, math.inf
BAD_POS_FLOAT = [NAN, INF, -INF, 0.0, -1.0]          # for a parameter that must be finite and > 0
BAD_FLOAT = [NAN, INF, -INF]                         # for a parameter that must be finite
BAD_SIZE = [0, -1, 2.5, True, 10 ** 12]              # for a size that must be a positive integer
BAD_GEN = [None, 0, "gen"]                         # a missing generator: an error, no global RNG


@dataclass(frozen=True)
class Case:
    fn: Callable
    valid: dict
    param: str
    bad: tuple
    args: tuple = field(default=())
    name: str = ""
    probes: tuple = ()  # values of `bad` that may also be handled (a finite result), see ABSURD

    def is_probe(self, value) -> bool:
        return any(value is q for q in self.probes)

    def label(self):
        return f"{self.name or public_name(self.fn)}({self.param}=...)"


def public_name(fn) -> str:
    """fn's dotted name under the shortest package that exposes it (sim.joma.solve_eqn3 for the
    function defined in sim.joma.eqn3: the packages re-export their modules' names)."""
    parts = fn.__module__.split(".")
    for i in range(1, len(parts) + 1):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is not None and getattr(mod, fn.__name__, None) is fn:
            return f"{mod.__name__}.{fn.__name__}"
    return f"{fn.__module__}.{fn.__name__}"


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


_add(sim.make_generator, dict(seed=0), {"seed": [-1, 2.5, None, "0", True, 2 ** 64]})
_add(_call_gamma, dict(alpha=1.0), {"alpha": [INF, NAN, 0.0, -1.0], "gen": [None, 0]},
     name="sim.gamma_sample")
_add(J.make_problem, dict(seeds=[0], M_C=3, K=2, d=5, N=8),
     {"M_C": BAD_SIZE, "K": BAD_SIZE, "N": BAD_SIZE, "d": [2, -1, 2.5, 10 ** 12],
      "tokens": BAD_SIZE, "concentration": BAD_POS_FLOAT, "A": BAD_POS_FLOAT,
      "seeds": [[-1], [], [2.5]], "attention": ["relu", None], "activation": ["tanh"]})
# initial states of the (S, d, M_C, K) = (1, 5, 3, 2) problem: NaN (not "past the blow-up"),
# wrong shape, not a tensor
BAD_W0 = [torch.full((1, 5, 2), NAN, dtype=torch.float64), torch.zeros(1, 5, 3), "W"]
BAD_Z0 = [torch.full((1, 3), NAN, dtype=torch.float64), torch.zeros(1, 4), [0.0, 0.0, 0.0]]
_add(_call_simulate_eqn2, dict(eta=0.1, horizon=1.0),
     {"eta": BAD_POS_FLOAT + [1e-12], "horizon": BAD_POS_FLOAT, "log_every": [0, -1, 2.5],
      "blowup": BAD_POS_FLOAT, "W0": BAD_W0, "z0": BAD_Z0}, name="sim.joma.simulate_eqn2")
_add(_call_softmax_budget, dict(eta=0.1, horizon=1.0),
     {"eta": BAD_POS_FLOAT + [1e-12], "horizon": BAD_POS_FLOAT, "W0": BAD_W0, "z0": BAD_Z0},
     name="sim.joma.simulate_eqn2_softmax_budget")
_add(J.solve_eqn3, dict(delta=[0.5, -0.2], horizon=0.5),
     {"rtol": [NAN, INF, 0.0, -1.0, 2.0], "atol": BAD_POS_FLOAT, "horizon": BAD_POS_FLOAT,
      "A": BAD_POS_FLOAT, "n_eval": [0, 1, 2.5, 10 ** 12], "delta": [[NAN], [], [[1.0]]],
      "c": [[NAN, 0.0], [0.0]], "v0": [[INF, 0.0], [0.0]]})
_add(J.simulate_eqn7, dict(mu=[1.0, 2.0], v0=[0.1, 0.1], t_end=1.0),
     {"t_end": BAD_POS_FLOAT + [1e300, 1e5],  # t_end x rate capped (rate e^2 here)
      "n_points": BAD_SIZE, "mu": [[NAN, 1.0], [-1.0, 1.0], [1.0]],
      "v0": [[INF, 0.1], [0.1]], "rtol": [NAN, 0.0, -1.0], "atol": [NAN, -1.0]})
_add(M.row_entropy, dict(probs=torch.tensor([[0.5, 0.5]])),
     {"probs": [torch.tensor([[NAN, 1.0]]), torch.tensor([[-0.5, 1.5]])]})
_add(M.stable_rank, dict(W=torch.eye(3)), {"W": [torch.full((3, 3), NAN), torch.zeros(0)]})
# ---- sim.joma (beyond Eqn. 2 / 3 / 7) ------------------------------------------------------------
def _j_state(W="ok", z="ok"):
    p = _eqn2()
    S, d, M_C, N, K = p.shape
    return p, _ok(W, lambda: torch.zeros(S, d, K, dtype=torch.float64)), \
        _ok(z, lambda: torch.zeros(S, M_C, dtype=torch.float64))


def _j_objective(p="ok", W="ok", z="ok"):
    p_, W_, z_ = _j_state(W, z)
    return J.objective(_ok(p, lambda: p_), W_, z_)


def _j_velocity(p="ok", W="ok", z="ok"):
    p_, W_, z_ = _j_state(W, z)
    return J.eqn2_velocity(_ok(p, lambda: p_), W_, z_)


def _j_scores(z="ok", X="ok", attention="exp", A=1.0):
    p_, _, z_ = _j_state()
    return J.attention_scores(_ok(z, lambda: z_), _ok(X, lambda: p_.X), attention, A)


BAD_STATE = {"W": [torch.full((1, 5, 2), NAN, dtype=torch.float64), torch.zeros(1, 5, 3), None],
             "z": [torch.full((1, 3), INF, dtype=torch.float64), torch.zeros(1, 4), None,
                   torch.full((1, 3), 1e3, dtype=torch.float64)]}  # exp(z) overflows
_add(_j_objective, {}, dict(BAD_STATE, p=[None, "p"]), name="sim.joma.objective")
_add(_j_velocity, {}, dict(BAD_STATE, p=[None]), name="sim.joma.eqn2_velocity")
_add(_j_scores, {}, {"z": BAD_STATE["z"], "X": [None, torch.zeros(1, 8)],
                     "attention": ["relu", None], "A": BAD_POS_FLOAT},
     name="sim.joma.attention_scores")
_add(J.eqn3_blowup_time, dict(delta=[0.5, -0.2]),
     {"delta": [[NAN], [], [[1.0]]], "c": [[NAN, 0.0], [0.0]], "v0": [[INF, 0.0]],
      "A": BAD_POS_FLOAT})
_HB = dict(p0=[0.5, 0.5], q0=[0.3, 0.7], rho=0.8, n_children=2, depth=3)
_add(J.make_hblt, dict(_HB),
     {"p0": [[NAN, 1.0], [0.5, 0.6], "p"], "q0": [[1.5, 0.5], [0.5]], "rho": [NAN, 1.5],
      "n_children": [0, 2.5, True], "depth": [0, 2.5, 10 ** 9], "n_root_children": [0, 10 ** 12]})


def _tree():
    return J.make_hblt(**_HB)


def _hb(fn, **fixed):
    def call(tree="ok", **kw):
        return fn(_ok(tree, _tree), **dict(fixed, **kw))
    call.__name__ = fn.__name__
    return call


BAD_TREE = [None, "tree"]
_add(_hb(J.hblt_exact_joint), {}, {"tree": BAD_TREE, "max_nodes": [0, 2.5, 100]},
     name="sim.joma.hblt_exact_joint")
_add(_hb(J.hblt_exact_pair_table), dict(a=1, b=2),
     {"tree": BAD_TREE, "a": [-1, 99, 2.5], "b": [None], "joint": ["j", (torch.zeros(1),)]},
     name="sim.joma.hblt_exact_pair_table")
_add(_hb(J.hblt_exact_conditional_table), dict(child=3, ancestor=1),
     {"tree": BAD_TREE, "child": [-1, 99], "ancestor": [2.5], "joint": ["j"]},
     name="sim.joma.hblt_exact_conditional_table")
_add(_hb(J.hblt_exact_leaf_cooccurrence), {}, {"tree": BAD_TREE, "joint": ["j", (1, 2)]},
     name="sim.joma.hblt_exact_leaf_cooccurrence")
_add(_hb(J.hblt_sample), dict(n=10, generator=_gen()),
     {"tree": BAD_TREE, "n": BAD_SIZE, "generator": BAD_GEN}, name="sim.joma.hblt_sample")
_add(J.empirical_leaf_cooccurrence, dict(sample=J.hblt_sample(_tree(), 10, _gen())),
     {"sample": [None, "s"]})
_add(J.random_embeddings, dict(d=5, m_c=3, gen=_gen()),
     {"d": [3, 2.5, True, 10 ** 12], "m_c": [0, 2.5, None], "gen": BAD_GEN})
_add(J.sample_isotropic_noise, dict(n_samples=10, n=3, family="student_t", gen=_gen()),
     {"n_samples": [1, 2.5, True, 10 ** 12], "n": BAD_SIZE, "family": ["cauchy", None],
      "gen": BAD_GEN, "sigma": BAD_POS_FLOAT + [True], "nu": [0, 2.5, 10 ** 9]})
_add(J.sample_mixture, dict(n_samples=10, centers=torch.zeros(2, 3), weights=[0.5, 0.5],
                            family="gaussian", gen=_gen()),
     {"n_samples": [1, 2.5, 10 ** 12], "centers": [torch.full((2, 3), NAN), torch.zeros(3)],
      "weights": [[NAN, 1.0], [0.5, 0.6], [1.0]], "family": ["cauchy"], "gen": BAD_GEN,
      "sigma": BAD_POS_FLOAT, "R": [torch.full((3, 3), NAN), torch.ones(3, 3)]})
for _fn in (J.phi, J.phi_prime):
    _add(_fn, dict(u=torch.linspace(-1, 1, 5)),
         {"u": [None, [0.1], torch.arange(3)], "c_minus": [NAN, "c"], "c_plus": [INF]})
_NODE = dict(w=torch.ones(1, 5, dtype=torch.float64), U_C=torch.eye(5, 3, dtype=torch.float64),
             u_q=torch.eye(5, dtype=torch.float64)[4], x=torch.rand(4, 3, dtype=torch.float64,
                                                                    generator=_gen()),
             g=torch.tensor([1.0, -1.0, 0.5, 0.0], dtype=torch.float64))
BAD_NODE = {"w": [torch.full((1, 5), NAN), torch.ones(1, 4)], "U_C": [torch.eye(4, 3), None],
            "u_q": [torch.ones(4, dtype=torch.float64)],
            "x": [torch.ones(1, 3, dtype=torch.float64), torch.full((4, 3), NAN)],
            "g": [torch.ones(3, dtype=torch.float64), None], "c_minus": [NAN], "c_plus": [INF]}
_add(J.eqn2_gradient, dict(_NODE), BAD_NODE)
_add(J.per_node_objective, dict(_NODE), BAD_NODE)
_add(J.lemma1_expectations, dict(v=torch.ones(1, 3, dtype=torch.float64),
                                 xi=torch.zeros(1, dtype=torch.float64), x=_NODE["x"],
                                 psi=torch.tanh),
     {"v": [torch.full((1, 3), NAN), torch.zeros(1, 3), torch.ones(1, 2)],
      "xi": [[NAN], torch.zeros(2)], "x": [None, torch.ones(1, 3, dtype=torch.float64)],
      "psi": [None, "psi"]})
_add(J.entropy_softmax_sq, dict(v=[0.1, 0.2]), {"v": [[NAN, 0.1], np.zeros(0), "v"]})
_add(J.stable_rank, dict(V=np.eye(3)), {"V": [np.full((3, 3), NAN), np.zeros(3), np.zeros((3, 3))]})
_T1 = dict(C=3, N_ch=2, n_latents=(4, 3), M=20, T=10, generator=_gen())
_add(J.make_table1_generator, dict(_T1),
     {"C": [1, 2.5, 10 ** 12], "N_ch": [0, 2.5], "n_latents": [(), (0, 4), 5, (10 ** 12,)],
      "M": [2, 2.5, 10 ** 12], "T": [0, 2.5, 10 ** 12], "rho": [NAN, 1.5, True],
      "structure": ["forest", None], "order": ["shuffled"], "generator": BAD_GEN})
_add(J.make_table1_generator, dict(_T1, structure="tree", rho=0.9, n_latents=(2,), n_top=3),
     {"n_top": [1, 2.5, 100]}, name="sim.joma.make_table1_generator[tree]")
_CH = [torch.tensor([[0, 1], [2, 3]]), torch.tensor([[0, 1], [1, 0]])]
_add(J.generator_from_children, dict(children=_CH, C=2, M=9, T=8),
     {"children": [[_CH[0]], [torch.full((2, 2), 99), _CH[1]], [_CH[0].double() + 0.5, _CH[1]],
                   "c"],
      "C": [1, 3, 2.5], "M": [2, 10 ** 12, None], "T": [0, 2.5], "rho": [NAN, 1.5],
      "order": ["shuffled"]})


def _t1_gen():
    return J.make_table1_generator(**_T1)


def _sample_hierarchy(g="ok", n=10, generator="ok"):
    return J.sample_hierarchy(_ok(g, _t1_gen), n, _ok(generator, _gen)).tokens


_add(_sample_hierarchy, {}, {"g": [None, "g"], "n": BAD_SIZE, "generator": BAD_GEN},
     name="sim.joma.sample_hierarchy")
_add(J.sibling_height, dict(g=_t1_gen()), {"g": [None, _tree()]})
_PROBS = torch.full((1, 2, 3, 3), 1 / 3)  # (N, H, T, T) uniform attention
_add(M.row_entropy, dict(probs=torch.tensor([[0.5, 0.5]])), {"check": ["yes", None]},
     name="sim.measure.row_entropy[check]")
_add(M.attention_entropy, dict(probs=_PROBS),
     {"probs": [torch.full((1, 2, 3, 3), NAN), None], "keep_dims": [-1, 5, 2.5, True],
      "query_mask": [torch.zeros(1, 2, 3, dtype=torch.bool), torch.ones(4, dtype=torch.bool), "m"]})


def _record_enter(modules="ok", select=None):
    with M.record(_ok(modules, lambda: {"relu": torch.nn.ReLU()}), select) as out:
        return dict(out)


_add(_record_enter, {}, {"modules": [None, {"x": 1}], "select": ["s", 5]},
     name="sim.measure.record")
_ACTS = torch.tensor([[[0.1, 0.2], [0.3, 0.0]], [[0.5, 0.1], [0.2, 0.4]], [[0.0, 0.9], [0.7, 0.3]]])
_add(M.max_over_sequence, dict(acts=_ACTS),
     {"acts": [torch.full((3, 2, 2), NAN), torch.zeros(2, 2), None],
      "mask": [torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.bool),
               torch.ones(4, 2, dtype=torch.bool)]})
_LAT = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
for _fn in (M.normalized_correlation, M.best_match_ncorr):
    _add(_fn, dict(acts=_ACTS[:, 0], latents=_LAT),
         {"acts": [torch.full((3, 2), INF), torch.zeros(1, 2), None],
          "latents": [torch.full((3, 2), NAN), torch.zeros(4, 2), [1.0]]})
_add(M.layer_ncorr, dict(hidden_by_layer=[_ACTS], latents_by_layer=[_LAT]),
     {"hidden_by_layer": [[], None, [torch.full((3, 2, 2), NAN)]],
      "latents_by_layer": [[_LAT, _LAT], "l"], "mask": [torch.ones(3, 2)]})
_GRP = torch.zeros(1, 3, 3, dtype=torch.long)
_KM = torch.ones(1, 3, 3, dtype=torch.bool)
_add(M.grouped_attention_logits, dict(probs=_PROBS, groups=_GRP, n_groups=2, key_mask=_KM),
     {"probs": [torch.full((1, 2, 3, 3), NAN), -_PROBS, torch.zeros(2, 3, 3)],
      "groups": [_GRP.double(), torch.zeros(1, 3, 2, dtype=torch.long), None],
      "n_groups": [0, -1, 2.5, 10 ** 12],
      "key_mask": [_KM.long(), torch.ones(1, 2, 3, dtype=torch.bool)]})
_add(TT.theorem2_wstar, dict(T_=4, v_=3, p_m_=0.15, p_c_=0.1, p_r_=0.1),
     {"T_": BAD_SIZE, "v_": BAD_SIZE, "p_m_": [NAN, -0.1, 1.5], "p_c_": [NAN, -0.1, 1.5],
      "p_r_": [NAN, -0.1, 1.5]})
_add(TJ.eq9_exact_mp, dict(e=0.1, h=2, depth=3),
     {"dps": [0, -5, 10 ** 9], "h": [0, -1, 2.5], "depth": [0, -1, 2.5]})


# ---- sim.signgd ----------------------------------------------------------------------------
BAD_SEEDS = [[-1], [], [2.5], None, "0", [2 ** 64]]


def _sg_prob(**kw):
    base = dict(n=2, s=2, d=8, sigma_p=1.0, n_test=2, device="cpu")
    return SG.make_problem([0], **dict(base, **kw))


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


# ---- sim.topic ----------------------------------------------------------------------------
BAD_PROB = [NAN, 0.0, 1.0, -0.1, INF, "0.1"]      # for a probability that must lie in (0, 1)
_TOPIC = dict(T=3, v=2, tau=2, p_m=0.2, p_c=0.1, p_r=0.1)
BAD_INT = BAD_SIZE[:4]                             # a positive integer with no size cap of its own
BAD_TOPIC = {"T": BAD_INT, "v": BAD_INT, "tau": [0, -1, 2.5, 4], "p_m": BAD_PROB,
             "p_c": BAD_PROB, "p_r": BAD_PROB + [0.95]}


def _mom():
    return ST.subset_moments(**_TOPIC)


def _docs():
    return ST.sample_documents(_gen(), 2, 3, 2, model="theory", tau=2, N=4)


def _tp_params(**kw):
    base = dict(sw=ST.Switches(onehot=True), device="cpu")
    return ST.init_params(_gen(), 1, 7, **dict(base, **kw))


def _tp_mask_tokens(gen="ok", words="ok", valid="ok", **kw):
    w, val = _docs()
    return ST.mask_tokens(_ok(gen, _gen), _ok(words, lambda: w), _ok(valid, lambda: val),
                          **dict(dict(p_m=0.2, p_c=0.1, p_r=0.1, n_words=6), **kw))


def _tp_init_params(gen="ok", **kw):
    return ST.init_params(_ok(gen, _gen), **dict(dict(S=1, n=7, d=3, device="cpu"), **kw))


def _tp_forward(p="ok", tokens="ok", valid="ok", sw=ST.Switches(onehot=True),  # noqa: B008
                return_attention=False):
    w, val = _docs()
    return ST.forward(_ok(p, _tp_params), _ok(tokens, lambda: w), _ok(valid, lambda: val), sw,
                      return_attention)


def _tp_mlm_loss(out="ok", words="ok", masked="ok", loss="squared"):
    w, val = _docs()
    return ST.mlm_loss(_ok(out, lambda: ST.forward(_tp_params(), w, val, ST.Switches(onehot=True))),
                       _ok(words, lambda: w), _ok(masked, lambda: val), loss)


def _tp_train(p="ok", gen="ok", **kw):
    return ST.train(_ok(p, _tp_params), _ok(gen, _gen),
                    **dict(dict(T=3, v=2, steps=1, batch=1, sw=ST.Switches(onehot=True),
                                N_range=(4, 6)), **kw))


def _tp_attention_stats(A="ok", tokens="ok", valid="ok", v=2, normalise_length=None):
    w, val = _docs()
    A_ = ST.forward(_tp_params(), w, val, ST.Switches(onehot=True), return_attention=True)[1]
    return ST.attention_stats(_ok(A, lambda: A_), _ok(tokens, lambda: w), _ok(valid, lambda: val),
                              v, normalise_length)


def _tp_infinite_loss(mom="ok", **kw):
    return ST.infinite_loss(**dict(dict(W=torch.zeros(7, 7), mom=_ok(mom, _mom)), **kw))


def _tp_mom_fn(fn):
    def call(mom="ok", **kw):
        return fn(mom=_ok(mom, _mom), **kw)
    call.__name__ = fn.__name__
    return call


def _tp_stage2(fn):
    def call(**kw):
        return fn(**kw)
    return call


def _block_apply_call(**kw):
    return ST.block_apply(**kw)(np.ones((1, 7)))


def _diag_apply_call(**kw):
    return ST.diag_apply(**kw)(np.ones((1, 7)))


BAD_MOM = [None, {"M": 1}, {"M": np.eye(3), "C": np.eye(3), "n": 7}]
BAD_TOKENS = [torch.zeros(2, 4), torch.zeros(4, dtype=torch.long), np.zeros((2, 4), dtype=int),
              None]
BAD_VALID = [torch.ones(2, 4), torch.ones(2, 3, dtype=torch.bool), None]
_add(ST.check_params, dict(_TOPIC), BAD_TOPIC)
_add(ST.topic_of, dict(n_words=6, v=2), {"n_words": [-1, 2.5, 10 ** 12, None], "v": BAD_SIZE[:4]})
_add(ST.masked_distribution, dict(P=np.array([[0.0, 0.5, 0.5]]), p_m=0.2, p_c=0.1, p_r=0.1),
     {"P": [np.array([[NAN, 0.5, 0.5]]), np.array([[0.0, -0.5, 1.5]]), np.zeros(1), "P"],
      "p_m": BAD_PROB, "p_c": BAD_PROB, "p_r": BAD_PROB + [0.95]})
_add(ST.subset_moments, dict(_TOPIC), dict(BAD_TOPIC, T=BAD_SIZE, v=BAD_SIZE,
                                           max_subsets=[0, -1, 2.5, 10 ** 12]))
_add(_tp_infinite_loss, {}, {"mom": BAD_MOM, "lam": [NAN, INF, -1.0],
                             "W": [torch.zeros(6, 6), None], "b": [torch.zeros(6), "b"]},
     name="sim.topic.infinite_loss")
_add(_tp_mom_fn(ST.ridge_minimiser), dict(lam=0.1), {"mom": BAD_MOM, "lam": BAD_POS_FLOAT},
     name="sim.topic.ridge_minimiser")
_add(_tp_mom_fn(ST.min_norm_minimiser), {}, {"mom": BAD_MOM}, name="sim.topic.min_norm_minimiser")
_add(_tp_mom_fn(ST.gd_infinite), dict(W0=np.zeros((7, 7)), steps=3, lr=0.1),
     {"mom": BAD_MOM, "steps": [-1, 2.5, 10 ** 12, None], "lr": BAD_POS_FLOAT,
      "lam": [NAN, INF, -1.0], "W0": [np.full((7, 7), NAN), np.zeros((6, 6)), np.zeros(7)]},
     name="sim.topic.gd_infinite")
_add(ST.sample_documents, dict(gen=_gen(), D=2, T=3, v=2, model="theory", tau=2, N=4),
     {"gen": BAD_GEN, "D": BAD_SIZE, "T": BAD_SIZE, "v": BAD_INT, "tau": [0, 2.5, 4, None],
      "N": BAD_SIZE + [None], "model": ["hmm", None]})
_add(ST.sample_documents, dict(gen=_gen(), D=2, T=3, v=2, model="lda", N_range=(4, 6)),
     {"dirichlet": BAD_POS_FLOAT, "N_range": [(5, 3), (0, 3), (1, 10 ** 12), (2.5, 3), 4, "ab"],
      "N": BAD_SIZE, "D": [10 ** 12]}, name="sim.topic.sample_documents[lda]")
_add(_tp_mask_tokens, {}, {"gen": BAD_GEN, "words": BAD_TOKENS, "valid": BAD_VALID,
                           "p_m": BAD_PROB, "p_c": BAD_PROB, "p_r": BAD_PROB + [0.95],
                           "n_words": BAD_SIZE[:4] + [None]}, name="sim.topic.mask_tokens")
_add(_tp_init_params, {}, {"gen": BAD_GEN, "S": BAD_SIZE, "n": [1, 0, 2.5, 10 ** 12], "d": BAD_SIZE,
                           "scale": BAD_POS_FLOAT, "positive": ["yes", None],
                           "sw": ["onehot", 1], "WV": [np.full((3, 3), NAN), np.zeros((4, 4))]},
     name="sim.topic.init_params")
_add(ST.trainable, dict(sw=ST.Switches()), {"sw": [None, "onehot"]})
_add(_tp_forward, {}, {"p": [None, {"WV": torch.zeros(1)}],
                       "tokens": BAD_TOKENS + [torch.full((2, 4), 99)],
                       "valid": BAD_VALID, "sw": ["onehot"], "return_attention": ["yes"]},
     name="sim.topic.forward")
_add(_tp_mlm_loss, {}, {"out": [None, torch.zeros(2, 4)], "words": BAD_TOKENS,
                        "masked": BAD_VALID, "loss": ["l1", None]}, name="sim.topic.mlm_loss")
_add(ST.ridge, dict(p={"WV": torch.ones(1, 2, 2)}, names=["WV"], lam=0.1),
     {"lam": [NAN, INF, -1.0, "0"], "names": ["WV", ["WK"]], "p": [None, {}]})
_P9 = ST.init_params(_gen(), 1, 9, sw=ST.Switches(onehot=True), device="cpu")  # n = 9, not T v + 1
_add(_tp_train, {}, {"p": [None, _P9], "gen": BAD_GEN,
                     "steps": [-1, 2.5, 10 ** 12, None], "batch": BAD_SIZE,
                     "lr": BAD_POS_FLOAT, "lam": [NAN, INF, -1.0], "log_every": [0, -1, 2.5],
                     "opt": ["rmsprop"], "loss": ["hinge"], "model": ["hmm"],
                     "shared_data": ["yes"], "sw": [None, "x"], "ridge_on": ["WV", ["nope"]],
                     "N_range": [(5, 3), (1, 10 ** 12)], "p_m": BAD_PROB, "p_c": BAD_PROB,
                     "p_r": BAD_PROB + [0.95], "T": BAD_SIZE, "v": BAD_SIZE},
     name="sim.topic.train")
_add(_tp_attention_stats, {}, {"A": [None, torch.zeros(1, 2, 4)], "tokens": BAD_TOKENS,
                               "valid": BAD_VALID, "v": BAD_SIZE[:4],
                               "normalise_length": [0.0, -1.0, NAN, INF]},
     name="sim.topic.attention_stats")
_add(ST.block_scores, dict(W=np.zeros((7, 7)), T=3, v=2),
     {"W": [np.full((7, 7), NAN), np.zeros((6, 6)), np.zeros(7)], "T": BAD_SIZE, "v": BAD_SIZE})
_add(_block_apply_call, dict(w_i0=0.1, diff=0.0, same=0.5, T=3, v=2),
     {"w_i0": BAD_FLOAT, "diff": BAD_FLOAT, "same": BAD_FLOAT + ["x"], "T": BAD_SIZE,
      "v": BAD_SIZE},
     name="sim.topic.block_apply")
_add(_diag_apply_call, dict(d_i0=0.1, d_ii=1.0), {"d_i0": BAD_FLOAT, "d_ii": BAD_FLOAT},
     name="sim.topic.diag_apply")
_S2 = dict(T=3, v=2, tau=2, p_m=0.2, p_c=0.1, p_r=0.1, alpha=np.ones(2), beta=np.ones(2))
_S2_BAD = dict(BAD_TOPIC, alpha=[[NAN], [-1.0], np.ones(3), "a"], beta=[[INF], [-0.5]],
               mask_query=["both", None])
_add(ST.stage2_loss, dict(_S2, W=np.eye(7)),
     dict(_S2_BAD, T=BAD_SIZE, v=BAD_SIZE, W=[np.full((7, 7), NAN), np.eye(6), None]))
_add(ST.stage2_loss_fast, dict(_S2, kind="block", coef=(0.1, 0.0, 0.5)),  # O(v): any T
     dict(_S2_BAD, v=BAD_SIZE, kind=["dense", None],
          coef=[(0.1, 0.0), (NAN, 0.0, 0.5), "abc", None]))


# ---- sim.transformer ----------------------------------------------------------------------
_TR = dict(seeds=[0], vocab=5, n_out=3, d=4, depth=1, heads=2, width=8, device="cpu")


def _tr_model():
    return TR.StackedTransformer(**_TR)


def _tr_batch(step):
    tok = torch.arange(6).reshape(1, 2, 3) % 5
    return tok, torch.tensor([[0, 1]]), torch.ones(1, 2, 3, dtype=torch.bool)


def _tr_train(model="ok", batch=_tr_batch, **kw):
    return TR.train(_ok(model, _tr_model), batch, **dict(dict(steps=2, lr=1e-3), **kw)).loss


def _tr_loss_per_seed(model="ok", h="ok", tokens="ok", labels="ok", mask="ok", task="label"):
    m = _tr_model()
    tok, lab, msk = _tr_batch(0)
    return TR.loss_per_seed(_ok(model, lambda: m), _ok(h, lambda: m(tok)), _ok(tokens, lambda: tok),
                            _ok(labels, lambda: lab), _ok(mask, lambda: msk), task)


def _tr_accuracy(model="ok", tokens="ok", labels="ok"):
    tok, lab, _ = _tr_batch(0)
    return TR.accuracy(_ok(model, _tr_model), _ok(tokens, lambda: tok), _ok(labels, lambda: lab))


_add(TR.StackedTransformer, dict(_TR),
     {"seeds": BAD_SEEDS, "vocab": [1, 0, 2.5, True, 10 ** 12], "n_out": [1, 0, 2.5, 10 ** 12],
      "d": [0, -1, 2.5, 3, 10 ** 12], "depth": BAD_SIZE, "heads": [0, -1, 2.5, 3],
      "width": BAD_SIZE, "norm": ["batch", None], "embed_scale": BAD_POS_FLOAT,
      "dtype": [torch.int64, "float32", None]}, name="sim.transformer.StackedTransformer")
_add(_tr_train, {}, {"model": [None, "m"], "batch": [None, 5], "steps": [0, -1, 2.5, 10 ** 12],
                     "lr": BAD_POS_FLOAT + [[1e-3, 1e-3], "x", None],
                     "task": ["mlm", None], "weight_decay": [NAN, INF, -1.0],
                     "log_every": [0, -1, 2.5], "probe": ["p", 5],
                     "betas": [(1.0, 0.999), (0.9, 1.0), (NAN, 0.9), (0.9,)],
                     "eps": [0.0, -1.0, NAN, INF]}, name="sim.transformer.train")
_add(_tr_loss_per_seed, {}, {"model": [None], "h": [None, torch.zeros(1, 2, 3, 5)],
                             "tokens": [None, torch.zeros(1, 2, 4, dtype=torch.long)],
                             "labels": [None, torch.zeros(1, 3, dtype=torch.long),
                                        torch.tensor([[0, 3]])],
                             "task": ["mlm", None]}, name="sim.transformer.loss_per_seed")
_add(_tr_loss_per_seed, dict(task="next", tokens=torch.arange(6).reshape(1, 2, 3) % 3),
     {"mask": [None, torch.ones(1, 2, 2, dtype=torch.bool)],
      "tokens": [torch.full((1, 2, 3), 4), torch.full((1, 2, 3), -1)]},
     name="sim.transformer.loss_per_seed[next]")
_add(_tr_accuracy, {}, {"model": [None], "tokens": [None, torch.zeros(2, 2, 3, dtype=torch.long)],
                        "labels": [None, torch.zeros(1, 3, dtype=torch.long)]},
     name="sim.transformer.accuracy")


def _one_per_valid_call(cases):
    """The cases with distinct reference calls (rows added together share theirs)."""
    seen, out = set(), []
    for c in cases:
        key = (c.fn, id(c.valid))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


# ---- devices: a typo, a number, a CUDA index this machine lacks ------------------------------------
BAD_DEVICE = ["gpu", "cuda:99", 5, "cpu:x"]
_DEVICE_FNS = (sim.make_generator, J.make_problem, J.make_hblt, J.random_embeddings,
               J.sample_isotropic_noise, SG.make_problem, SG.init_params, ST.init_params,
               TR.StackedTransformer)
_with_device = [c for c in _one_per_valid_call(CASES) if c.fn in _DEVICE_FNS]
_with_device.append(Case(ST.init_params, dict(gen=_gen(), S=1, n=7, d=3, device="cpu"), "device", ()))
for _c in _with_device:
    CASES.append(Case(_c.fn, _c.valid, "device", tuple(BAD_DEVICE), name=_c.name))

