"""Shared runs and settings of the SignGD audit (Li et al., ICLR 2025): the cached stage runs, the
problem setup, Table 2's counts and the batched runs several claims read.  Data, not claims: no
Claim is registered here, and nothing here imports a claim file (properties/signgd/test_*.py
import from this module).

Every run is in the statement sheet's CPU-sized setting (orthogonal data, disjoint training
supports, test supports apart): n = 8, s in [20, 30], sigma_p in [1, 2], m_k = 8, m_v = 16,
sigma_0 ~ 1e-3, eta ~ 6e-5, unless a run says otherwise.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import NamedTuple

import numpy as np
import torch
from hypothesis import Phase, example, given
from hypothesis import strategies as st

from properties import examples
from properties.cache import run_cache
from properties.check import Inconclusive, profile
from properties.settings import size
from sim import signgd as sim
from theory import signgd as th

SEED = st.integers(0, 2**31 - 1)
N_SAMPLES = 8
M_K, M_V = 8, 16
LOG = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "train_loss")
SETTING = ("Definition 2.1, orthogonal data (mu = e_1, noise supports in [d] minus {1}), "
            "pairwise-disjoint training supports (d = 1 + n s + 120), test supports apart, "
            "n = 8, m_k = 8, m_v = 16, fixed head 1/m_v, logistic loss, full-batch SignGD, "
            "sgn(0) = 0, float64")
RANGE = "sweep: s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]"
STAGES = "; ".join(f"{k}: {v}" for k, v in sim.STAGE_DEFINITIONS.items())


# --------------------------------------------------------------------------------------------
# Runs (cached: the canonical run is shared by every property through @example)
# --------------------------------------------------------------------------------------------
def all_noise_aligned(q):
    """Stop rule of the stage runs: every query and key noise of every seed has the sign of its
    neuron's query signal (the event that defines T_4)."""
    sa = np.sign(q["alpha"])[..., None, None]
    return bool(((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all())


H = ("sim.signgd.train to 1.25 t* (t*: first step with every seed's noise aligned; cap "
     "12000 steps)")
TAIL = 0.25  # the run continues to 1.25 t*, t* = first step with all noise of all seeds aligned


@run_cache(maxsize=8)
def stage_run(seed0: int, n_seeds: int, s: int, sigma_p: float, sigma_0: float, eta: float,
              cap: int, log=LOG, learnable_head: bool = False):
    """Stage run with a horizon set by the draw: it stops at 1.25 t*, where t* is the first step
    at which every seed has all its noise aligned with sgn alpha (T_4 of the slowest seed), so a
    slow draw (small s sigma_p eta) is run as far into Stage IV as a fast one; `cap` bounds it
    (reaching the cap leaves T_4 = inf for the slow seeds, which lemma4_8 then reports)."""
    seeds = [seed0 + k for k in range(n_seeds)]
    d = 1 + N_SAMPLES * s + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True,
                            device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=sigma_0, device="cpu")
    tr = sim.train(prob, p0, eta=eta, steps=cap, log_every=1, test_every=100, log=log,
                   stop=all_noise_aligned, tail=TAIL, learnable_head=learnable_head)
    return tr, sim.squeeze_L2(tr.q), sim.stage_times(tr) if "a" in log else None


CAP = 12000
T32 = dict(assumptions=SETTING + "; " + RANGE + "; end of training = 1.25 t*, t* the first "
                        "step with every seed's noise aligned (after T_4 of every seed)",
           simulation=H + ", test loss on 500 fresh samples every 100 steps")
# Theorem 3.2's draws shared by its items (the long 1.25 t* runs are cached across properties):
# the sheet's CPU setting and the slow and fast corners of the sweep
T32_EXAMPLES = ((11, 8, 30, 1.0, 1e-3, 6e-5, 12000), (12345, 4, 20, 1.0, 1.3e-3, 5e-5, 12000),
                (777, 4, 30, 2.0, 7e-4, 7e-5, 12000))
CANON = (11, 8, 30, 1.0, 1e-3, 6e-5, CAP)  # the sheet's CPU setting, 8 seeds
STAGE_RUN = st.tuples(SEED, st.just(4), st.integers(20, 30), st.floats(1.0, 2.0),
                      st.floats(7e-4, 1.3e-3), st.floats(5e-5, 7e-5), st.just(CAP))


# --------------------------------------------------------------------------------------------
# Configurations.  A draw stays a plain tuple: the report writes it as `cfg=(11, 8, 30, ...)`,
# THEOREM_AUDIT_DRAW replays it as that literal, and its fingerprint (the on-disk key of the
# draw's simulations) names the type.  A property reads the fields through `Config(*cfg)` (and
# likewise S2Config, EpsConfig, L43Config, Case), which accepts a plain tuple or a config.
# --------------------------------------------------------------------------------------------
class Config(NamedTuple):
    """A stage run's configuration: stage_run's arguments in order (CANON, T32_EXAMPLES, a draw
    of STAGE_RUN)."""

    seed0: int
    n_seeds: int
    s: int
    sigma_p: float
    sigma_0: float
    eta: float
    cap: int = CAP

    @property
    def seeds(self) -> list[int]:
        return [self.seed0 + k for k in range(self.n_seeds)]

    @property
    def d(self) -> int:
        """The stage run's dimension 1 + n s + 120."""
        return 1 + N_SAMPLES * self.s + 120


class S2Config(NamedTuple):
    """stage2_run's (and the learnable-head runs') draw: S2_CANON, a draw of S2_RUN."""

    seed0: int
    s: int
    sigma_p: float
    sigma_0: float
    eta: float


class EpsConfig(NamedTuple):
    """A draw with the step in units of a noise inner product's init scale, eps = eta sqrt(s) /
    sigma_0 (TT_CANON, TT_RUN, signgd.lemma4_1's draws); eta(self) is the step it sets."""

    seed0: int
    s: int
    sigma_p: float
    sigma_0: float
    eps: float

    @property
    def eta(self) -> float:
        return float(self.eps * self.sigma_0 / np.sqrt(self.s))


class L43Config(NamedTuple):
    """l43_runs' draw (L43_CANON, L43_RUN): s is the ladder L43_S, so it is not drawn."""

    seed0: int
    sigma_p: float
    sigma_0: float
    eps: float


class Case(NamedTuple):
    """A small-model draw of the simulator consistency checks (signgd.step_magnitude,
    signgd.reduced_dynamics): seeds (Hypothesis draws a list), s, n, sigma_p, sigma_0, eta."""

    seeds: tuple
    s: int
    n: int
    sigma_p: float
    sigma_0: float
    eta: float

    @classmethod
    def of(cls, case) -> Case:
        """A hashable Case from a draw (seeds as a tuple): an lru_cache key."""
        return cls(tuple(case[0]), *case[1:])


# --------------------------------------------------------------------------------------------
# Draw decorators
# --------------------------------------------------------------------------------------------
def explicit_draws(draws, name="cfg"):
    """Decorator: an @example(name=draw) for each of `draws`, the first outermost (the order
    Hypothesis runs them in)."""
    def deco(fn):
        for cfg in draws:
            fn = example(**{name: cfg})(fn)
        return fn
    return deco


shared_draws = explicit_draws(T32_EXAMPLES)
shared_draws.__doc__ = ("The three explicit draws of runs.T32_EXAMPLES (the sheet's CPU setting "
                        "first), shared with signgd.theorem3_2 and lemmas 4.3, 4.4, 4.6-4.8.")


def ladder_draws(fn):
    """The draws of the s ladder (S_LADDER_DRAWS: seed0, sigma_p), explicit only: each ladder
    is its own batched run over S_LADDER_SEEDS seeds per rung (signgd.lemma4_3, 4.4, 4.6)."""
    return examples(1, phases=[Phase.explicit])(
        explicit_draws(S_LADDER_DRAWS)(given(cfg=STAGE_RUN)(fn)))


def ci_draws(fn):
    """Under `ci` only the explicit (shared) draws run: each stage run costs ~20-40 s of CPU and
    is shared with signgd.theorem3_2 and lemmas 4.3, 4.4, 4.6-4.8; dev and thorough add drawn
    ones."""
    return examples(1, phases=[Phase.explicit])(fn) if profile() == "ci" else examples(1)(fn)


# --------------------------------------------------------------------------------------------
# Nulls: attention frozen (W_Q, W_K not trained)
# --------------------------------------------------------------------------------------------
ATTENTION = ("s11", "s21")  # the softmax outputs of the two-patch model


def held_at_init(r, keys=ATTENTION):
    """A copy of the dict `r` with each of `keys` (logged (T, ...) arrays) held at its init value
    (index 0) at every logged step; the other entries as they are."""
    out = dict(r)
    for k_ in keys:
        out[k_] = np.broadcast_to(r[k_][:1], r[k_].shape).copy()
    return out


def training_off(r, keys):
    """Null 'training off' of a run dict `r`: held_at_init of `keys` (a key naming a dict of
    logged arrays holds each of them) and no stage event (its stage times "T" all inf)."""
    out = held_at_init(r, [k_ for k_ in keys if not isinstance(r[k_], dict)])
    for k_ in keys:
        if isinstance(r[k_], dict):
            out[k_] = held_at_init(r[k_], tuple(r[k_]))
    out["T"] = {k_: np.full(np.shape(v), np.inf) for k_, v in r["T"].items()}
    return out


def attention_frozen_null(fn, keys=ATTENTION):
    """Null factory: W_Q, W_K not trained.  Returns a function with `fn`'s arguments that is `fn`
    with the attention quantities `keys` held at their init values (held_at_init): passed as
    fn(*args, hold=keys) where fn takes `hold` (it holds them in the logged quantities it reads,
    before its statistics), else held in the dict of logged arrays fn returns.  The rest of the
    run is as trained (same data, init, horizon and stage times)."""
    takes_hold = "hold" in inspect.signature(fn).parameters

    def null_run(*args):
        return fn(*args, hold=keys) if takes_hold else held_at_init(fn(*args), keys)

    # a pure null's on-disk key names its function's module (its code version): fn's
    null_run.__module__ = fn.__module__
    null_run.__qualname__ = null_run.__name__ = f"attention_frozen_{fn.__name__}"
    null_run.__doc__ = (f"Null: W_Q, W_K not trained: {', '.join(keys)} keep their init values "
                        f"(the rest of {fn.__name__} as trained).")
    return null_run


# --------------------------------------------------------------------------------------------
# Stage IV per-pair events of the stage runs (signgd.lemma4_6, signgd.lemma4_7)
# --------------------------------------------------------------------------------------------
def stage4_run_events(cfg, hold=()):
    """Per-pair and per-seed Stage IV events (common.stage4_pairs) of the stage run of `cfg`
    (the logged quantities `hold` held at init: see attention_frozen_null), with the run's T_4^-
    and its last step `end`.  RuntimeError where a seed's T_4^- falls within TURN_LOOKBACK steps
    of T_1 (the detector's known misfire on a long Stage I)."""
    from properties.signgd.common import stage4_pairs

    tr, q, st_ = stage_run(*cfg)
    if np.any(st_["T4m"] <= st_["T1"] + sim.TURN_LOOKBACK):  # the detector's known misfire
        raise RuntimeError(f"{cfg}: T_4^- within TURN_LOOKBACK steps of T_1 (long Stage I)")
    q = held_at_init(q, hold)
    return dict(stage4_pairs(q, tr.t, st_["T4m"]), T4m=st_["T4m"], end=float(tr.t[-1]))


_stage4_events = functools.lru_cache(maxsize=8)(stage4_run_events)


def stage4_events(cfg):
    """Per-pair and per-seed Stage IV events of the stage run of `cfg` (cached)."""
    return _stage4_events(tuple(cfg))


def at_steps(x, times):
    """x: (T, S, ...) -> (S, ...) taken at per-seed logged steps `times` (ints)."""
    return np.stack([x[int(t), j] for j, t in enumerate(times)])


TABLE2 = {  # rows: sign of (a, b) at init; columns: at the end of Stage II  [C numbers]
    "++": [486, 1, 0, 25], "+-": [244, 4, 9, 250], "-+": [223, 10, 4, 221], "--": [37, 2, 3, 481]}
COLS = ["++", "+-", "-+", "--"]


def _table(a0, b0, a1, b1):
    def lab(a, b):
        return np.where(a > 0, np.where(b > 0, 0, 1), np.where(b > 0, 2, 3))
    r, c = lab(a0, b0).ravel(), lab(a1, b1).ravel()
    M = np.zeros((4, 4), dtype=int)
    np.add.at(M, (r, c), 1)
    return M


def table_fractions(M):
    """aligned; P(keep|++); P(++|+-); P(++|-+); P(keep|--); positive share among aligned."""
    M = np.asarray(M, float)
    tot = M.sum()
    al = M[:, 0].sum() + M[:, 3].sum()
    return np.array([al / tot, M[0, 0] / M[0].sum(), M[1, 0] / (M[1, 0] + M[1, 3]),
                     M[2, 0] / (M[2, 0] + M[2, 3]), M[3, 3] / M[3].sum(), M[:, 0].sum() / al]), \
        np.array([tot, M[0].sum(), M[1, 0] + M[1, 3], M[2, 0] + M[2, 3], M[3].sum(), al])

def table_at_end_of_stage3(cfg):
    tr, q, st_ = stage_run(*cfg)
    ok = np.isfinite(st_["T2"])
    t_end = st_["T4m"] - 1
    a1, b1 = at_steps(q["a"], t_end), at_steps(q["b"], t_end)
    return _table(q["a"][0], q["b"][0], a1, b1), ok

TABLE2_FR, TABLE2_N = table_fractions(np.array([TABLE2[k] for k in COLS]))
MV_GRID = (4, 16, 64, 256)  # the m_v of the trend; "inf" (v(0) = 0) is added as the limit
MV_ROWS = 16  # one m_v = 16 init per seed, its value rows rescaled by sqrt(16 / m_v)
TT_SEEDS = 24
TT_CAP = 6000
TT_CANON = (11, 30, 1.0, 1e-3, 0.01)  # seed0, s, sigma_p, sigma_0, eps = eta sqrt(s) / sigma_0
TT_RUN = st.tuples(SEED, st.integers(20, 30), st.floats(1.0, 2.0), st.floats(7e-4, 1.3e-3),
                   st.floats(0.01, 0.03))
TT_RANGE = ("sweep: s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], "
             "eta = eps sigma_0 / sqrt(s) with eps in [0.01, 0.03] (the step in units of the init "
             "scale of a noise inner product: T_1 >= ~5 steps at the largest m_v)")
TT_SETTING = (SETTING.replace("m_v = 16", f"m_v in {MV_GRID} and the limit m_v -> inf") +
               f"; {TT_SEEDS} seeds per draw; each seed's m_v = {MV_ROWS} init with its value rows "
               "scaled by sqrt(16 / m_v) (exact: the trajectory depends on W_V only through the "
               "mean value v, tests/test_signgd.py::test_value_rows_enter_only_through_mean_value, "
               "and v(0) then has the m_v model's law N(0, 2 sigma_0^2 / m_v)); m_v = inf is v(0) = 0")


def problem_and_init(seeds, s, *, d=None, sigma_p=1.0, sigma_0=1e-3, n_test=8, m_v=M_V):
    """Orthogonal data with disjoint training supports and the Eq. 1 init, on the CPU: the setup
    shared by the runs below (d defaults to 1 + n s + 120)."""
    d = 1 + N_SAMPLES * s + 120 if d is None else d
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True,
                            n_test=n_test, device="cpu")
    return prob, sim.init_params(seeds, d=d, m_k=M_K, m_v=m_v, sigma_0=sigma_0, device="cpu")


def _aligned_qk(q):
    return bool((np.sign(q["a"]) == np.sign(q["b"])).all())


@run_cache(maxsize=4)
def tt_runs(seed0: int, s: int, sigma_p: float, sigma_0: float, eps: float):
    """All seeds x (MV_GRID + inf) in one batched run to 1.5 x the first step at which every
    query/key noise pair of every run agrees in sign.  Returns per grid point (T1, T2) arrays
    (n_grid + 1, seeds), the closed-form T1 and the run's eta."""
    eta = eps * sigma_0 / np.sqrt(s)
    seeds = [seed0 + k for k in range(TT_SEEDS)]
    G = len(MV_GRID) + 1
    prob, p0 = problem_and_init(seeds * G, s, d=1 + N_SAMPLES * s + s + 3, sigma_p=sigma_p,
                        sigma_0=sigma_0, m_v=MV_ROWS)
    scale = torch.tensor([np.sqrt(MV_ROWS / m) for m in MV_GRID] + [0.0], dtype=torch.float64)
    scale = scale.repeat_interleave(TT_SEEDS)[:, None, None, None]
    p0 = sim.Params(p0.WQ, p0.WK, p0.WV * scale, p0.H)
    tr = sim.train(prob, p0, eta=eta, steps=TT_CAP, log=("alpha", "beta", "a", "b", "V", "V_mu"),
                   stop=_aligned_qk, tail=0.5)
    T1, T2 = sim.stage_times(tr)["T1"], sim.qk_alignment_time(tr)
    q = sim.squeeze_L2(tr.q)
    pred = th.stage1_end(q["V_mu"][0], q["V"][0], eta, tr.xi_l1[..., 0])
    return (T1.reshape(G, TT_SEEDS), T2.reshape(G, TT_SEEDS),
            pred.reshape(G, TT_SEEDS), eta, tr.xi_l1[..., 0], q["V"][0], q["V_mu"][0])


def tt_run(fn):
    return example(cfg=TT_CANON)(given(cfg=TT_RUN)(fn))

L43_S = (20, 40, 80, 160)  # s = 320 is left out: see the item (4) reading
L43_SEEDS = 16
L43_CANON = (11, 1.0, 1e-3, 0.02)  # seed0, sigma_p, sigma_0, eps = eta sqrt(s) / sigma_0
L43_RUN = st.tuples(SEED, st.floats(1.0, 2.0), st.floats(7e-4, 1.3e-3), st.floats(0.01, 0.03))
L43_DELTA = 0.25  # |sum_i b_{s,i}| < delta ||b_s||_2: "near 0" for the corrected item (3)
L43_PRINTED = 0.1  # "bounded away from 0" read as |sum_i b_{s,i}| >= 0.1 ||b_s||_2, every neuron
L43_SETTING = (SETTING + f"; s in {L43_S} (every profile) at a fixed eps = eta sqrt(s) / sigma_0 (the step in "
                "units of a noise inner product's init scale), d = 1 + n s + s + 3; "
                f"{L43_SEEDS} seeds per s; sweep: sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], "
                "eps in [0.01, 0.03]; T_2 by sim.signgd.qk_alignment_time (runs to 1.5 x the first "
                "step with all pairs aligned)")


def sign_patterns(n):
    return np.array([[1 - 2 * ((k >> i) & 1) for i in range(n)] for k in range(2 ** n)], float)


@run_cache(maxsize=4)
def l43_runs(seed0: int, sigma_p: float, sigma_0: float, eps: float):
    """Per s in L43_S: the query/key signals' motion by T_2 in units of sigma_0 (S, m_k) and the
    normalised sums z = |sum_i x_{s,i}(T_2)| / ||x_s(T_2)||_2 for x = a, b (S, m_k) with, for each
    neuron, the probability that random independent signs on the same magnitudes give z < delta
    (exact enumeration over the 2^n sign patterns)."""
    seeds = [seed0 + k for k in range(L43_SEEDS)]
    out = {}
    pats = sign_patterns(N_SAMPLES)
    for s in L43_S:
        eta = eps * sigma_0 / np.sqrt(s)
        prob, p0 = problem_and_init(seeds, s, d=1 + N_SAMPLES * s + s + 3, sigma_p=sigma_p,
                            sigma_0=sigma_0)
        tr = sim.train(prob, p0, eta=eta, steps=TT_CAP, log=("alpha", "beta", "a", "b"),
                       stop=_aligned_qk, tail=0.5)
        T2 = sim.qk_alignment_time(tr)
        if not np.isfinite(T2).all():
            # a run that does not reach T_2 within the step budget decides nothing about the
            # statement at T_2: this draw is inconclusive (not a crash; the budget is not moved)
            raise Inconclusive(f"s = {s}: some seed did not align within {TT_CAP} steps "
                               f"(sigma_p {sigma_p:g}, sigma_0 {sigma_0:g}, eps {eps:g}): "
                               "T_2 not reached, nothing at T_2 to audit on this draw")
        q = sim.squeeze_L2(tr.q)
        T2 = T2.astype(int)
        r = {k_: at_steps(q[k_], T2) for k_ in ("alpha", "beta", "a", "b")}
        r["dalpha"] = np.abs(r["alpha"] - q["alpha"][0]) / sigma_0
        r["dbeta"] = np.abs(r["beta"] - q["beta"][0]) / sigma_0
        for k_ in ("a", "b"):
            x = r[k_]  # (S, m_k, n)
            nrm = np.sqrt((x ** 2).sum(-1))
            r["z_" + k_] = np.abs(x.sum(-1)) / nrm
            sums = np.abs(np.abs(x) @ pats.T) / nrm[..., None]  # (S, m_k, 2^n)
            r["p_" + k_] = (sums < L43_DELTA).mean(-1)
        r["tau2"] = T2 * eta / sigma_0
        out[s] = r
    return out


def l43_run(fn):
    return example(cfg=L43_CANON)(given(cfg=L43_RUN)(fn))

# --------------------------------------------------------------------------------------------
# Condition 3.1 per draw (issue 20: 'say per draw whether Condition 3.1 holds')
# --------------------------------------------------------------------------------------------
def condition31_c(s, sigma_p, sigma_0, m_k=M_K) -> float:
    """The sheet's [D] form of Condition 3.1's sigma_0 clause reads sigma_0 s sigma_p sqrt(m_k)
    << 1: this quantity c."""
    return float(sigma_0 * s * sigma_p * np.sqrt(m_k))


def condition31_note(cs, where: str = "") -> str:
    """What a draw says of Condition 3.1's [D] clause c << 1, c = sigma_0 s sigma_p sqrt(m_k)
    over the values `cs` the draw runs (its rungs), '<< 1' read with the glossary's 'small'
    (level and bracket); the clause's own text was lost (the sheet gives only this form)."""
    from properties.readings import lookup

    r = lookup("small")
    cs = [float(c) for c in np.atleast_1d(cs)]
    lo, hi = min(cs), max(cs)
    if hi <= r.stricter:
        v = "holds at every level"
    elif hi <= r.level:
        v = "holds"
    elif lo > r.looser:
        v = "fails"
    elif hi <= r.looser:
        v = "holds only at the looser level"
    else:
        v = "holds on part of the rungs"
    if hi != lo and v != "holds on part of the rungs":
        v = "at its largest, " + v
    rng = f"{lo:.3g}" if hi == lo else f"{lo:.3g}-{hi:.3g}"
    return (f"Condition 3.1 [D]: c = sigma_0 s sigma_p sqrt(m_k) = {rng}{where}: {v} ('<< 1' "
            f"read as 'small', {r.level:g}, bracket {r.stricter:g}-{r.looser:g})")


def _grid(x):
    return np.atleast_1d(np.asarray(x, dtype=float))


def signgd_draw_note(*, s=30, sigma_p=1.0, sigma_0=1e-3, **kw) -> str:
    """The Condition 3.1 note of a SignGD draw (a Claim's draw_note), by the draw's layout: cfg
    of a stage run (Config, 7 fields), of the 5-field sweeps (seed0, s, sigma_p, sigma_0, eta
    or eps), of the stage lemmas' s ladder (seed0, sigma_p: sigma_0 s held at
    S_LADDER_KAPPA), of the Lemma 4.3 s ladder (seed0, sigma_p, sigma_0, eps: s in L43_S); a
    bare seed runs the setting given by the keywords (default: the sheet's CPU setting; a
    tuple is a grid the draw runs)."""
    cfg = kw.get("cfg")
    if cfg is not None:
        cfg = tuple(cfg)
        if len(cfg) == 7:
            c = Config(*cfg)
            return condition31_note(condition31_c(c.s, c.sigma_p, c.sigma_0))
        if len(cfg) == 5:
            return condition31_note(condition31_c(cfg[1], cfg[2], cfg[3]))
        if len(cfg) == 2:
            return condition31_note(condition31_c(1.0, cfg[1], S_LADDER_KAPPA),
                                    " on every rung (sigma_0 s held)")
        if len(cfg) == 4:
            return condition31_note([condition31_c(s_, cfg[1], cfg[2]) for s_ in L43_S],
                                    f" along s in {L43_S}")
        return f"Condition 3.1 [D]: not evaluated (no layout for a draw of {len(cfg)} fields)"
    cs = [condition31_c(a, b, c) for a in _grid(s) for b in _grid(sigma_p) for c in _grid(sigma_0)]
    return condition31_note(cs, "" if len(cs) == 1 else " over the draw's grid")


OPT_SEEDS, OPT_LOG_EVERY = 2, 10
OPT_LOG = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "train_loss")
OPT_SETTING = SETTING.replace("n = 8,", "n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5,")
GD_TAIL = 8000  # GD steps of the rate fit (signgd.gd.faster)
GD_RATES = (0.1, 1.0)  # 0.1: the paper's GD rate on MNIST (App. B.1); its synthetic rate was lost
GD_SIGMA_P = (1.0, 2.0)


@run_cache(maxsize=4)
def gd_runs(seed0: int, sigma_p: float):
    """SignGD (6e-5) and GD (GD_RATES), each stopped at the first logged step with L_S <= 0.05
    for every seed; and SignGD vs GD at the common rate 1e-4 (Fig. 2 (c)) for 1000 steps."""
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    s = 30
    d = 1 + N_SAMPLES * s + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")
    stop = lambda q: bool(q["train_loss"].max() <= 0.05)  # noqa: E731
    kw = dict(log_every=OPT_LOG_EVERY, log=("s11", "s21", "alpha", "train_loss"), stop=stop)
    out = {"signgd": sim.train(prob, p0, eta=6e-5, steps=CAP, **kw)}
    for lr in GD_RATES:
        out[lr] = sim.train(prob, p0, eta=lr, steps=CAP, optimizer="gd", **kw)
    for k_ in ("signgd",) + GD_RATES:  # per-test-sample losses (paired across optimizers)
        f, _ = sim.forward(prob.test.P, out[k_].final)
        out[k_].settings["test_losses"] = torch.nn.functional.softplus(-prob.test.y * f).numpy()
    kw = dict(log_every=OPT_LOG_EVERY, log=("train_loss",), steps=1000, eta=1e-4)
    out["fair"] = (sim.train(prob, p0, **kw), sim.train(prob, p0, optimizer="gd", **kw))
    return out


GD_SETTING = SETTING.replace("n = 8,", "n = 8, s = 30, sigma_0 = 1e-3,")
GD_L, GD_L_S = 3, 20  # Appendix B.4's longer context, as signgd.longer_context runs it
GD_L_SETTING = SETTING.replace("n = 8,", f"n = 8, L = {GD_L} (one signal, {GD_L - 1} noise "
                               f"patches), s = {GD_L_S}, sigma_p = 1, sigma_0 = 1e-3,").replace(
    "d = 1 + n s + 120", "d = 1 + n (L - 1) s + 120")


@run_cache(maxsize=4)
def gd_runs_long_context(seed0: int):
    """Appendix B.4's setting (L = GD_L): GD at GD_RATES and SignGD (6e-5), each stopped at the
    first logged step (every 10) with L_S <= 0.05 for every seed, from the same data and init
    (OPT_SEEDS seeds).  Per optimizer: the max over seeds, samples and every attention row's
    entries of |s - 1/L| at the stop and at init, and the stop step."""
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    d = 1 + N_SAMPLES * (GD_L - 1) * GD_L_S + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=GD_L_S, d=d, sigma_p=1.0, L=GD_L,
                            disjoint=True, n_test=8, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")

    def stop(q):
        return bool(q["train_loss"].max() <= 0.05)

    out = {}
    for opt, lr in [("gd", lr_) for lr_ in GD_RATES] + [("signgd", 6e-5)]:
        tr = sim.train(prob, p0, eta=lr, steps=CAP, optimizer=opt, log_every=OPT_LOG_EVERY,
                       log=("s11", "s12", "s21", "s22", "train_loss"), stop=stop)
        dev = [max(float(np.abs(np.asarray(tr[k_][i]) - 1.0 / GD_L).max())
                   for k_ in ("s11", "s12", "s21", "s22")) for i in (-1, 0)]
        out[lr if opt == "gd" else "signgd"] = dict(dev=dev[0], dev0=dev[1], t=int(tr.t[-1]),
                                                    loss=float(tr["train_loss"][-1].max()))
    return out


# --------------------------------------------------------------------------------------------
# Stage I only: runs that stop at T_1 (signgd.t1_closed_form)
# --------------------------------------------------------------------------------------------
T1_MV_GRID = (1, 4, 16, 64, 0)  # m_v of v(0)'s law; 0 stands for m_v = inf (v(0) = 0)
T1_SEEDS = 16
T1_CAP = 3000  # eps = eta sqrt(s) / sigma_0 >= 0.01 puts T_1 below ~300 steps (m_v = 1)


def d_positive(q):
    """Stop rule of the Stage I runs: D_i = V_i - V_mu > 0 for every sample of every instance."""
    return bool((q["V"][..., 0] - q["V_mu"][:, None] > 0).all())


@run_cache(maxsize=8)
def t1_run(seed0: int, s: int, sigma_p: float, sigma_0: float, eta: float,
           optimizer: str = "signgd", cap: int = T1_CAP):
    """T1_SEEDS seeds x T1_MV_GRID in one batched run of the full model (each seed's m_v = 16
    init with its value rows scaled by sqrt(16 / m_v), 0 for m_v = inf), logged every step, to
    the first step at which every instance has D_i > 0 for all samples (cap `cap`).  Returns a
    dict: T1 measured by sim.signgd.stage_times (G x seeds), and the init the closed form reads:
    V_mu0 (G x seeds), V0, xi_l1 (G x seeds x n), and eta."""
    seeds = [seed0 + k for k in range(T1_SEEDS)]
    G = len(T1_MV_GRID)
    prob, p0 = problem_and_init(seeds * G, s, d=1 + N_SAMPLES * s + s + 3, sigma_p=sigma_p,
                        sigma_0=sigma_0, m_v=MV_ROWS)
    scale = torch.tensor([np.sqrt(MV_ROWS / m) if m else 0.0 for m in T1_MV_GRID],
                         dtype=torch.float64).repeat_interleave(T1_SEEDS)[:, None, None, None]
    p0 = sim.Params(p0.WQ, p0.WK, p0.WV * scale, p0.H)
    tr = sim.train(prob, p0, eta=eta, steps=cap, optimizer=optimizer,
                   log=("alpha", "beta", "a", "b", "V", "V_mu"), stop=d_positive, tail=0.0)
    q = sim.squeeze_L2(tr.q)
    shape = (G, T1_SEEDS)
    return dict(T1=sim.stage_times(tr)["T1"].reshape(shape),
                V_mu0=q["V_mu"][0].reshape(shape), V0=q["V"][0].reshape(shape + (-1,)),
                xi_l1=tr.xi_l1[..., 0].reshape(shape + (-1,)), eta=float(eta),
                steps=int(tr.t[-1]))


# --------------------------------------------------------------------------------------------
# Stages I-III only: runs that stop at the last seed's T_4^- (signgd.table2, signgd.lemma4_2)
# --------------------------------------------------------------------------------------------
S2_SEEDS = 16  # seeds per draw: the independent units of the pair counts' error model
S2_CANON = (11, 30, 1.0, 1e-3, 6e-5)  # seed0, s, sigma_p, sigma_0, eta: the sheet's CPU setting
S2_RUN = st.tuples(SEED, st.integers(20, 30), st.floats(1.0, 2.0), st.floats(7e-4, 1.3e-3),
                   st.floats(5e-5, 7e-5))


class _PastT4m:
    """Stop rule: True once every seed has had its T_4^- event, detected online exactly as
    sim.signgd.stage_times detects it (a wrong-sign key noise that moved away from sgn alpha for
    TURN_LOOKBACK steps, alpha's sign unchanged, turns towards it)."""

    def __init__(self):
        self.K = sim.TURN_LOOKBACK
        self.b, self.sa, self.done = [], [], None

    def __call__(self, q):
        b, sa = q["b"][..., 0], np.sign(q["alpha"])[..., None]  # (S, m_k, n), (S, m_k, 1)
        self.b.append(b), self.sa.append(sa)
        K = self.K
        self.b, self.sa = self.b[-(K + 2):], self.sa[-(K + 2):]
        if self.done is None:
            self.done = np.zeros(b.shape[0], dtype=bool)
        if len(self.b) == K + 2:
            B, SA = self.b, self.sa  # B[-1] = b(k), B[-1 - j] = b(k - j)
            db = lambda j: np.sign(B[-1 - j] - B[-2 - j])  # noqa: E731  db[k - 1 - j]
            away = np.ones(b.shape, dtype=bool)
            for j in range(1, K + 1):
                away &= (db(j) == -SA[-1]) & (SA[-1 - j] == SA[-1])
            turning = (np.sign(b) != SA[-1]) & (db(0) == SA[-1]) & away
            self.done |= turning.any((-1, -2))
        return bool(self.done.all())


@run_cache(maxsize=8)
def stage2_run(seed0: int, s: int, sigma_p: float, sigma_0: float, eta: float,
               n_seeds: int = S2_SEEDS, optimizer: str = "signgd"):
    """n_seeds seeds of the CPU setting (m_k = 8, m_v = 16, d = 1 + n s + 120), logged every step
    to the step at which the last seed has had its T_4^- (cap CAP).  Returns per-seed Table 2
    counts at T_4^- - 1 (the end of Stage III, after Stage II): M (seeds, 4, 4), rows the sign of
    (a, b) at init, columns at T_4^- - 1, both in the order ++, +-, -+, --; the stage times; the
    init and end signs; s11, s21 (steps x seeds x n) over the run."""
    seeds = [seed0 + k for k in range(n_seeds)]
    prob, p0 = problem_and_init(seeds, s, sigma_p=sigma_p, sigma_0=sigma_0)
    tr = sim.train(prob, p0, eta=eta, steps=CAP, optimizer=optimizer,
                   log=("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21"), stop=_PastT4m(),
                   tail=0.0)
    q, T = sim.squeeze_L2(tr.q), sim.stage_times(tr)
    if not np.isfinite(T["T4m"]).all():
        raise RuntimeError(f"stage2_run{(seed0, s, sigma_p, sigma_0, eta)}: some seed had no "
                           f"T_4^- within {CAP} steps")
    t_end = T["T4m"].astype(int) - 1
    a1, b1 = at_steps(q["a"], t_end), at_steps(q["b"], t_end)
    M = np.stack([_table(q["a"][0][j], q["b"][0][j], a1[j], b1[j]) for j in range(len(seeds))])
    return dict(M=M, T=T, a0=q["a"][0], b0=q["b"][0], a1=a1, b1=b1, steps=int(tr.t[-1]),
                s11=q["s11"], s21=q["s21"])


def untrained_run(seed0, s, sigma_p, sigma_0, eta):
    """Null of signgd.table2 / lemma4_2: no training; the 'end' signs are the init signs."""
    seeds = [seed0 + k for k in range(S2_SEEDS)]
    prob, p0 = problem_and_init(seeds, s, sigma_p=sigma_p, sigma_0=sigma_0)
    q = sim.squeeze_L2(sim.tracked(prob, p0, keep=("a", "b")))
    return dict(M=np.stack([_table(q["a"][j], q["b"][j], q["a"][j], q["b"][j])
                            for j in range(len(seeds))]))


def random_sign_run(seed0, s, sigma_p, sigma_0, eta):
    """Null of signgd.table2 / lemma4_2: alignment without the mechanism: at the end both members
    of each pair take one fair random sign, independent of the init (seeded by the draw)."""
    r = stage2_run(seed0, s, sigma_p, sigma_0, eta)
    g = np.random.default_rng(seed0)
    e = g.choice([-1.0, 1.0], size=r["a0"].shape)
    return dict(M=np.stack([_table(r["a0"][j], r["b0"][j], e[j], e[j])
                            for j in range(e.shape[0])]))


# --------------------------------------------------------------------------------------------
# signgd.gd.faster: rate runs (the trend in t) and the figure's runs at the common rate 1e-4
# --------------------------------------------------------------------------------------------
RATE_LADDER = {  # optimizer: (lr, horizon, the T of the ladder; the statistic reads L(T) and L(T/2))
    "gd": (1.0, 4000, tuple(int(round(500 * 2 ** (k / 2))) // 20 * 20 for k in range(7))),
    "signgd": (6e-5, 4000, tuple(range(1000, 4001, 500))),
}


@run_cache(maxsize=4)
def rate_runs(seed0: int):
    """Per optimizer of RATE_LADDER: max over the OPT_SEEDS seeds of L_S(t), logged every 10 steps
    to the horizon, on the sheet's CPU setting (s = 30, sigma_p = 1, sigma_0 = 1e-3), same data
    and init for both.  Returns {opt: (t, L)}."""
    prob, p0 = problem_and_init([seed0 + k for k in range(OPT_SEEDS)], 30)
    out = {}
    for opt, (lr, T, _) in RATE_LADDER.items():
        tr = sim.train(prob, p0, eta=lr, steps=T, optimizer=opt, log_every=10, log=("train_loss",))
        out[opt] = (tr.t.copy(), tr["train_loss"].max(-1))
    return out


# --------------------------------------------------------------------------------------------
# Table 3 variants (b)-(d) (Appendix B.2): signgd.variant_b, variant_c, variant_d
# --------------------------------------------------------------------------------------------
VARIANTS = {  # name: (orthogonal, s, d)
    "b": (False, 30, 1 + N_SAMPLES * 30 + 120),  # non-orthogonal, sparse
    "c": (True, 200, 241),  # orthogonal, non-sparse (s close to d)
    "d": (False, 200, 241),  # non-orthogonal, non-sparse
}
VAR_ETA, VAR_SIGMA_P, VAR_SIGMA_0 = 6e-5, 1.0, 1e-3


@run_cache(maxsize=6)
def variant_run(name: str, seed0: int):
    """OPT_SEEDS seeds of variant `name` (supports drawn independently per sample, overlapping),
    SignGD logged every step to 1.25 t* (the stage runs' stop rule).  Returns what the variant
    claims read: per-step s11, s21 (steps, seeds, n); V, V_mu, L_S at init and end; L_D at init
    and end (500 test samples); the stage times; the horizon; s, eta, sigma_p."""
    if name not in VARIANTS:
        raise ValueError(f"name must be one of {sorted(VARIANTS)}, got {name!r}")
    orth, s, d = VARIANTS[name]
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=VAR_SIGMA_P, orthogonal=orth,
                            disjoint=False, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=VAR_SIGMA_0, device="cpu")
    tr = sim.train(prob, p0, eta=VAR_ETA, steps=CAP, log_every=1, log=LOG,
                   stop=all_noise_aligned, tail=TAIL)
    q = sim.squeeze_L2(tr.q)
    ends = lambda x: x[[0, -1]].copy()  # noqa: E731
    return dict(s11=q["s11"], s21=q["s21"], V=ends(q["V"]), V_mu=ends(q["V_mu"]),
                train_loss=ends(q["train_loss"]),
                test_loss=np.stack([sim.test_metrics(prob, p0)[0], tr.test_loss[-1]]),
                T=sim.stage_times(tr), t_end=int(tr.t[-1]), s=s, eta=VAR_ETA, sigma_p=VAR_SIGMA_P)


def variant_untrained(name: str, seed0: int):
    """Null of the variant claims: training off (every quantity at its init value, no stage
    event)."""
    return training_off(variant_run(name, seed0),
                        ("s11", "s21", "V", "V_mu", "train_loss", "test_loss"))


variant_attention_frozen = attention_frozen_null(variant_run)
variant_attention_frozen.__doc__ = ("Null of the variant claims: W_Q, W_K not trained: the softmax "
                                    "outputs keep their init values (the value trajectories as "
                                    "trained).")


# --------------------------------------------------------------------------------------------
# The exact reduced dynamics (sim.signgd.reduced_dynamics) from the full model's init: cheap
# ladders in s, m_k, sigma_0 (signgd.stage_order, signgd.lemma4_6, ...).  For orthogonal data with
# pairwise-disjoint training supports and L = 2 it is the full model's SignGD trajectory seen
# through the training set, step for step (signgd.reduced_dynamics).
# --------------------------------------------------------------------------------------------
REDUCED_KEYS = ("alpha", "beta", "a", "b", "V_mu", "V")


class ReducedState(NamedTuple):
    """The reduced dynamics' state and constants: alpha, beta (S, m_k); a, b (S, m_k, n); V_mu
    (S,); V (S, n); c = eta ||xi_i||_1 (S, n); eta (S,)."""

    alpha: np.ndarray
    beta: np.ndarray
    a: np.ndarray
    b: np.ndarray
    V_mu: np.ndarray
    V: np.ndarray
    c: np.ndarray
    eta: np.ndarray


def reduced_setup(seeds, s, sigma_p, sigma_0, eps, *, m_v=MV_ROWS, m_k=M_K, d=None, n_test=1):
    """(state, prob, p0): the full model's problem and init (sim.signgd.make_problem /
    init_params, the problem_and_init setup, n_test test samples per seed) and the reduced
    dynamics' state they give (reduced_init)."""
    eta = eps * sigma_0 / np.sqrt(s)
    d = 1 + N_SAMPLES * s + s + 3 if d is None else d
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True,
                            n_test=n_test, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=m_k, m_v=MV_ROWS, sigma_0=sigma_0, device="cpu")
    if m_v != MV_ROWS:
        p0 = sim.Params(p0.WQ, p0.WK, p0.WV * (np.sqrt(MV_ROWS / m_v) if m_v else 0.0), p0.H)
    q = sim.squeeze_L2(sim.tracked(prob, p0, keep=REDUCED_KEYS))
    xi1 = prob.train.xi.abs().sum(-1)[..., 0].numpy()
    state = ReducedState(q["alpha"], q["beta"], q["a"], q["b"], q["V_mu"], q["V"], eta * xi1,
                         np.full(len(seeds), eta))
    return state, prob, p0


def reduced_init(seeds, s, sigma_p, sigma_0, eps, *, m_v=MV_ROWS, m_k=M_K, d=None):
    """The full model's init (sim.signgd.make_problem / init_params, the problem_and_init setup)
    seen through the training set: the reduced dynamics' state, with eta = eps sigma_0 / sqrt(s).
    d defaults to 1 + n s + s + 3; m_v other than MV_ROWS rescales the value rows (exact: W_V
    enters only through the mean value; m_v = 0 stands for m_v = inf, v(0) = 0)."""
    return reduced_setup(seeds, s, sigma_p, sigma_0, eps, m_v=m_v, m_k=m_k, d=d)[0]


def heldout_margins(prob, p0, alpha, beta, V_mu):
    """The test margins y f (S, n_test) of prob.test at a reduced state (alpha, beta (S, m_k),
    V_mu (S,)), exactly: no gradient reaches the test supports (disjoint from the training
    ones), so the test noise inner products keep their init values a', b', V' (of p0), and the
    margin is (s11' + s21') V_mu + (2 - s11' - s21') V' with s11' = sigma(sum_s alpha_s (beta_s -
    b'_s)), s21' = sigma(sum_s a'_s (beta_s - b'_s))."""
    n_test = int(prob.test.y.shape[1])
    tq = sim.squeeze_L2(sim.tracked(dataclasses.replace(prob, train=prob.test, n=n_test), p0,
                                    keep=("a", "b", "V")))
    s11, s21 = reduced_softmax(alpha, beta, tq["a"], tq["b"])
    return (s11 + s21) * V_mu[:, None] + (2.0 - s11 - s21) * tq["V"]


def reduced_softmax(alpha, beta, a, b):
    """s_11, s_21 (S, n) from the inner products (alpha, beta (S, m_k); a, b (S, m_k, n)): the
    statement sheet's logit s_11 = sum_s alpha_s (beta_s - b_{s,i}), logit s_21 = sum_s a_{s,i}
    (beta_s - b_{s,i}) (orthogonal data, L = 2)."""
    bt = beta[:, :, None] - b
    return (1.0 / (1.0 + np.exp(-(alpha[:, :, None] * bt).sum(1))),
            1.0 / (1.0 + np.exp(-(a * bt).sum(1))))


VOTE_RULES = ("sum", "majority")


def split_votes(alpha, beta, a, b, rule="sum"):
    """The 2 m_k votes per instance of Lemma 4.4 (alpha_s by sgn sum_i b_{s,i}, then beta_s by
    -sgn sum_i a_{s,i}; alpha, beta (S, m_k); a, b (S, m_k, n)), each (S, 2 m_k): `off`, the
    vote not followed; `even`, the voters' signs split evenly (n / 2 each: possible for even n).
    A neuron follows its vote where neither of its two is off.  rule="majority" counts the
    voters' signs instead of summing their values (a rival reading of the vote)."""
    if rule not in VOTE_RULES:
        raise ValueError(f"rule: {rule!r} is not one of {VOTE_RULES}")
    n_ = b.shape[-1]
    if rule == "sum":
        vb, va = b.sum(-1), a.sum(-1)
    else:
        vb, va = np.sign(b).sum(-1), np.sign(a).sum(-1)
    return dict(off=np.concatenate([np.sign(alpha) != np.sign(vb),
                                    np.sign(beta) != -np.sign(va)], -1),
                even=np.concatenate([(b > 0).sum(-1) * 2 == n_, (a > 0).sum(-1) * 2 == n_], -1))


def off_vote_neurons(off):
    """Per instance, the neurons off their vote (either of their two votes off; `off` as
    split_votes gives it)."""
    m = off.shape[-1] // 2
    return (off[..., :m] | off[..., m:]).sum(-1)


def batched(states) -> ReducedState:
    """One ReducedState of several (instances concatenated: one batched program)."""
    return ReducedState(*(np.concatenate([st_[i] for st_ in states]) for i in range(8)))


def as_trace(hist, t0=0):
    """A reduced-dynamics history as the Trace-like object sim.signgd.stage_times reads (logged
    every step from t0)."""
    import types

    q = dict(alpha=hist["alpha"], beta=hist["beta"], a=hist["a"][..., None],
             b=hist["b"][..., None], V=hist["V"][..., None], V_mu=hist["V_mu"])
    return types.SimpleNamespace(t=t0 + np.arange(len(hist["alpha"])), q=q)


def run_reduced_until(state, stop, tail, cap, chunk=500):
    """The reduced dynamics in chunks until stop(hist) gives a step t* (or None), then to
    ceil((1 + tail) t*); returns the history of the tracked inner products (REDUCED_KEYS, steps
    0..).  RuntimeError if the stop event has not come within `cap` steps.  The history grows in
    a buffer that doubles when full (stop reads views of it; the history returned is views of
    it), so a long run copies each step a bounded number of times rather than once per chunk."""
    state = list(state)
    buf, n, t_star, done = None, 0, None, 0
    while True:
        h = sim.reduced_dynamics(*state[:7], state[7], chunk)
        new = {k_: h[k_] if buf is None else h[k_][1:] for k_ in REDUCED_KEYS}
        m = len(new["alpha"])
        if buf is None or n + m > len(buf["alpha"]):
            size = max(2 * (n + m), 4 * m)
            grown = {k_: np.empty((size,) + v.shape[1:], dtype=v.dtype) for k_, v in new.items()}
            if buf is not None:
                for k_ in REDUCED_KEYS:
                    grown[k_][:n] = buf[k_][:n]
            buf = grown
        for k_ in REDUCED_KEYS:
            buf[k_][n:n + m] = new[k_]
        n += m
        done += chunk
        state = [h[k_][-1] for k_ in REDUCED_KEYS] + state[6:]
        if t_star is None:
            t_star = stop({k_: buf[k_][:n] for k_ in REDUCED_KEYS})
        if t_star is not None and done >= np.ceil((1 + tail) * t_star):
            end = int(np.ceil((1 + tail) * t_star)) + 1
            return {k_: buf[k_][:end] for k_ in REDUCED_KEYS}  # views: the buffer is >= half full
        if done >= cap:
            raise RuntimeError(f"the reduced run did not reach its stop event within {cap} steps")


def first_all_noise_aligned(hist):
    """Stop rule of reduced runs into Stage IV: the first step at which every query and key noise
    of every instance has the sign of its neuron's query signal (T_4 of the slowest), or None."""
    sa = np.sign(hist["alpha"])[..., None]
    ok = ((np.sign(hist["a"]) == sa) & (np.sign(hist["b"]) == sa)).all((-1, -2, -3))
    return int(np.argmax(ok)) if ok.any() else None


# The ladder in s into Stage IV shared by signgd.lemma4_4 (the vote at T_4^- - 1) and
# signgd.lemma4_6 (the key-noise turns): per named size (`--size`), sigma_0 s and eta sqrt(s) /
# sigma_0 held at the sheet's CPU setting's values (s = 30: sigma_0 = 1e-3, eta = 6e-5 exactly)
S_LADDER = {"ci": (30, 60, 120), "ladder": (30, 60, 120, 240), "paper": (30, 60, 120, 240)}
S_LADDER_SEEDS = {"ci": 8, "ladder": 96, "paper": 96}
# the first seed's offset from the draw's seed0: the --size ladder seeds (fixed 2026-12-05 for the
# confirmatory run, after the 24-seed ladder seed0 + 0..23 was inconclusive) are disjoint from
# those of every earlier run
S_LADDER_SEED_OFFSET = {"ci": 0, "ladder": 1000, "paper": 1000}
S_LADDER_CHUNK = 24  # seeds per batched reduced run (bounds the history: steps x 24 x m_k x n)
S_LADDER_KAPPA = 0.03  # sigma_0 s
S_LADDER_EPS = sim.CPU_EPS  # eta sqrt(s) / sigma_0 at the CPU setting = 0.329
S_LADDER_DRAWS = ((11, 1.0), (12345, 1.0), (777, 2.0))  # seed0, sigma_p
S_LADDER_CAP = 60000


def seed_batches(first, n_seeds, chunk=S_LADDER_CHUNK):
    """The seeds first, first + 1, ..., first + n_seeds - 1 in lists of at most `chunk` (one
    batched reduced run each: the chunk bounds the history, steps x chunk x m_k x n)."""
    return [list(range(first + j0, first + min(n_seeds, j0 + chunk)))
            for j0 in range(0, n_seeds, chunk)]


def _stage4_batch(seeds, s, sigma_p, sigma_0, m_k=M_K):
    """One batch of a stage-lemma ladder on the reduced dynamics from the full model's init (d =
    1 + n s + max(120, s + 3), eps = S_LADDER_EPS), run to 1.25 x the first step with all noise
    aligned: (state at init, history, trace, stage times, common.stage4_pairs events)."""
    from properties.signgd.common import stage4_pairs

    st_ = reduced_init(seeds, s, sigma_p, sigma_0, S_LADDER_EPS, m_k=m_k,
                       d=1 + N_SAMPLES * s + max(120, s + 3))
    h = run_reduced_until(st_, first_all_noise_aligned, TAIL, S_LADDER_CAP, chunk=1000)
    tr = as_trace(h)
    times = sim.stage_times(tr)
    return st_, h, tr, times, stage4_pairs(h, tr.t, times["T4m"])


@functools.lru_cache(maxsize=4)
def _stage4_ladder(seed0, sigma_p, n_seeds, rungs):
    keys = ("wrong", "back", "off_vote", "neurons", "steps", "even", "off_even", "off_uneven",
            "off_even_frozen", "off_uneven_frozen", "T2", "l43_ratio", "l43_dev")
    out = {k_: [] for k_ in keys}
    for s in rungs:
        sigma_0 = S_LADDER_KAPPA / s
        rung = {k_: [] for k_ in out}
        for seeds in seed_batches(seed0, n_seeds):
            st_, h, tr, times, ev = _stage4_batch(seeds, s, sigma_p, sigma_0)
            T4m = times["T4m"]
            # signgd.lemma4_3 (1), (2) at each seed's T_2: the median over pairs of |x(T_2)| /
            # (T_2 eta ||xi_i||_1), x = a, b, and the max over samples of |s_11 - 1/2|, |s_21 -
            # 1/2| (the softmax from the reduced state, as sim.signgd.reduced_dynamics has it)
            j = np.arange(len(seeds))
            T2 = np.where(np.isfinite(times["T2"]), times["T2"], len(tr.t) - 1).astype(int)
            a2, b2 = h["a"][T2, j], h["b"][T2, j]  # (S, m_k, n)
            scale = np.maximum(T2, 1)[:, None, None] * st_.c[:, None, :]
            rung["T2"].append(T2)
            rung["l43_ratio"].append(np.median(np.concatenate([np.abs(a2) / scale,
                                                               np.abs(b2) / scale], 1)
                                               .reshape(len(seeds), -1), -1))
            s11, s21 = reduced_softmax(h["alpha"][T2, j], h["beta"][T2, j], a2, b2)
            rung["l43_dev"].append(np.maximum(np.abs(s11 - 0.5).max(-1),
                                              np.abs(s21 - 0.5).max(-1)))
            w = ev["wrong_b"]
            rung["wrong"].append(w.sum((1, 2)))
            rung["back"].append((w & (ev["back_b"] > 0)).sum((1, 2)))
            k = (np.where(np.isfinite(T4m), T4m, len(tr.t)) - 1).astype(int)
            a, b = h["a"][k, j], h["b"][k, j]
            rung["steps"].append(int(tr.t[-1]))
            rung["neurons"].append(np.full(len(seeds), a.shape[1]))
            # the votes at T_4^- - 1, with alpha, beta as trained and at init (the null)
            for tag, al, be in (("", h["alpha"][k, j], h["beta"][k, j]),
                                ("_frozen", h["alpha"][0], h["beta"][0])):
                v = split_votes(al, be, a, b)
                off, even = v["off"], v["even"]
                if not tag:
                    rung["off_vote"].append(off_vote_neurons(off))
                    rung["even"].append(even.sum(-1))
                rung["off_even" + tag].append((off & even).sum(-1))
                rung["off_uneven" + tag].append((off & ~even).sum(-1))
        for k_ in out:
            out[k_].append(max(rung[k_]) if k_ == "steps" else np.concatenate(rung[k_]))
    return dict(sizes=tuple(rungs), **{k_: np.array(v) for k_, v in out.items()})


S_LADDER_FRESH = 2000  # the seed offset of a corrected form's ladder (seeds no printed run used)


def stage4_ladder(seed0, sigma_p, fresh=False):
    """The ladder in s on the reduced dynamics from the full model's init (d = 1 + n s +
    max(120, s + 3)), each rung run to 1.25 x the first step with all noise aligned (stage_run's
    stop rule), at the named size.  Per rung (rows) and seed (columns): `wrong`, the key noises
    with the wrong sign at T_4^-; `back`, those that move away from sgn alpha after their turn
    (signgd.lemma4_6 (ii)); `off_vote`, the neurons not following their vote at T_4^- - 1
    (signgd.lemma4_4); `neurons` (m_k); of the 2 m_k votes per seed (alpha_s by sum_i b_{s,i},
    beta_s by -sum_i a_{s,i}) at T_4^- - 1: `even`, those whose voters' signs split evenly
    (n / 2 each), `off_even` / `off_uneven`, those off their vote among the even / uneven ones,
    and `off_even_frozen` / `off_uneven_frozen` the same with alpha, beta at their init values
    (the null 'attention frozen'); per seed `T2` and, at T_2, `l43_ratio` (the median over
    pairs of |x(T_2)| / (T_2 eta ||xi_i||_1), x = a, b) and `l43_dev` (the max over samples of
    |s_11 - 1/2|, |s_21 - 1/2|: signgd.lemma4_3 (1), (2)); and per rung the run's `steps` (the
    longest of its
    batches of S_LADDER_CHUNK seeds, each run to its own stop).  The seeds are seed0 +
    S_LADDER_SEED_OFFSET + 0, 1, ... at the named size (+ S_LADDER_FRESH with fresh=True: a
    corrected form's own seeds)."""
    first = int(seed0) + S_LADDER_SEED_OFFSET[size()] + (S_LADDER_FRESH if fresh else 0)
    return _stage4_ladder(first, float(sigma_p), S_LADDER_SEEDS[size()], S_LADDER[size()])


# The ladder in m_k of signgd.lemma4_6 (issue 20: 'does the failing fraction vanish as s or m_k
# grows?'): s = 30 (the CPU setting's), m_k in MK_LADDER, sigma_0 = S_LADDER_KAPPA / s x
# sqrt(8 / m_k) so that Condition 3.1's [D] clause c = sigma_0 s sigma_p sqrt(m_k) keeps the s
# ladder's value on every rung, and eps = eta sqrt(s) / sigma_0 = S_LADDER_EPS.  Its seeds,
# seed0 + MK_LADDER_SEED_OFFSET + k, were used by no earlier run (fixed before it ran).
MK_LADDER = {"ci": (2, 4, 8, 16), "ladder": (2, 4, 8, 16, 32), "paper": (2, 4, 8, 16, 32)}
MK_LADDER_SEEDS = {"ci": 24, "ladder": 96, "paper": 96}
MK_LADDER_S = 30
MK_LADDER_SEED_OFFSET = 4000


@functools.lru_cache(maxsize=4)
def _mk_ladder(first, sigma_p, n_seeds, rungs):
    s = MK_LADDER_S
    wrong, back, steps = [], [], []
    for m_k in rungs:
        sigma_0 = S_LADDER_KAPPA / s * float(np.sqrt(8.0 / m_k))
        w_, b_, st = [], [], 0
        for seeds in seed_batches(first, n_seeds):
            _, _, tr, _, ev = _stage4_batch(seeds, s, sigma_p, sigma_0, int(m_k))
            w = ev["wrong_b"]
            w_.append(w.sum((1, 2)))
            b_.append((w & (ev["back_b"] > 0)).sum((1, 2)))
            st = max(st, int(tr.t[-1]))
        wrong.append(np.concatenate(w_)), back.append(np.concatenate(b_)), steps.append(st)
    return dict(sizes=tuple(rungs), wrong=np.array(wrong), back=np.array(back),
                steps=tuple(steps))


def mk_ladder(seed0, sigma_p):
    """signgd.lemma4_6's ladder in m_k on the reduced dynamics (MK_LADDER at the named size,
    MK_LADDER_SEEDS seeds per rung, batches of S_LADDER_CHUNK each run to its own stop, 1.25 x
    the first step with all noise aligned): per rung (rows) and seed (columns) `wrong`, the key
    noises with the wrong sign at T_4^-, and `back`, those that move away from sgn alpha after
    their turn; per rung the longest batch's `steps`."""
    return _mk_ladder(int(seed0) + MK_LADDER_SEED_OFFSET, float(sigma_p), MK_LADDER_SEEDS[size()],
                      MK_LADDER[size()])
