"""The runs of the full simulator that several SignGD claims share (Li et al., ICLR 2025): the
cached stage runs and their nulls, the Stage IV per-pair events, Table 2's counts, the Stage I runs
to T_1, the Lemma 4.3 s ladder and the runs to T_4^- (Table 2, Lemma 4.2).  Data, not claims: no
Claim is registered here, and nothing here imports a claim file.  Imports go one way: setting.py
(what is run) and common.py (statistics) are read here; comparisons.py, the claim files and
figures.py read this module.  The exact reduced dynamics and the declared path of the stage
lemmas are in reduced.py and path.py.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from properties.cache import run_cache
from properties.check import Inconclusive
from properties.signgd.common import (at_steps, sign_patterns, sign_table, stage4_pairs,
                                      table_fractions)
from properties.signgd.setting import (CAP, L43_S, LOG, M_K, M_V, MV_ROWS, N_SAMPLES, SEED,
                                       SETTING, TAIL)
from sim import signgd as sim
from theory import signgd as th

# --------------------------------------------------------------------------------------------
# The stage runs (cached: the canonical run is shared by every property through @example)
# --------------------------------------------------------------------------------------------
def all_noise_aligned(q):
    """Stop rule of the stage runs: every query and key noise of every seed has the sign of its
    neuron's query signal (the event that defines T_4)."""
    sa = np.sign(q["alpha"])[..., None, None]
    return bool(((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all())



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
    tr, q, st_ = stage_run(*cfg)
    if np.any(st_["T4m"] <= st_["T1"] + sim.TURN_LOOKBACK):  # the detector's known misfire
        raise RuntimeError(f"{cfg}: T_4^- within TURN_LOOKBACK steps of T_1 (long Stage I)")
    q = held_at_init(q, hold)
    return dict(stage4_pairs(q, tr.t, st_["T4m"]), T4m=st_["T4m"], end=float(tr.t[-1]))


_stage4_events = functools.lru_cache(maxsize=8)(stage4_run_events)


def stage4_events(cfg):
    """Per-pair and per-seed Stage IV events of the stage run of `cfg` (cached)."""
    return _stage4_events(tuple(cfg))


TABLE2 = {  # rows: sign of (a, b) at init; columns: at the end of Stage II  [C numbers]
    "++": [486, 1, 0, 25], "+-": [244, 4, 9, 250], "-+": [223, 10, 4, 221], "--": [37, 2, 3, 481]}
COLS = ["++", "+-", "-+", "--"]


def table_at_end_of_stage3(cfg):
    """Table 2's count table of the stage run of `cfg`, counted at T_4^- - 1, and which seeds
    reached T_2."""
    tr, q, st_ = stage_run(*cfg)
    ok = np.isfinite(st_["T2"])
    t_end = st_["T4m"] - 1
    a1, b1 = at_steps(q["a"], t_end), at_steps(q["b"], t_end)
    return sign_table(q["a"][0], q["b"][0], a1, b1), ok


TABLE2_FR, TABLE2_N = table_fractions(np.array([TABLE2[k] for k in COLS]))
MV_GRID = (4, 16, 64, 256)  # the m_v of the trend; "inf" (v(0) = 0) is added as the limit
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
    M = np.stack([sign_table(q["a"][0][j], q["b"][0][j], a1[j], b1[j]) for j in range(len(seeds))])
    return dict(M=M, T=T, a0=q["a"][0], b0=q["b"][0], a1=a1, b1=b1, steps=int(tr.t[-1]),
                s11=q["s11"], s21=q["s21"])


def untrained_run(seed0, s, sigma_p, sigma_0, eta):
    """Null of signgd.table2 / lemma4_2: no training; the 'end' signs are the init signs."""
    seeds = [seed0 + k for k in range(S2_SEEDS)]
    prob, p0 = problem_and_init(seeds, s, sigma_p=sigma_p, sigma_0=sigma_0)
    q = sim.squeeze_L2(sim.tracked(prob, p0, keep=("a", "b")))
    return dict(M=np.stack([sign_table(q["a"][j], q["b"][j], q["a"][j], q["b"][j])
                            for j in range(len(seeds))]))


def random_sign_run(seed0, s, sigma_p, sigma_0, eta):
    """Null of signgd.table2 / lemma4_2: alignment without the mechanism: at the end both members
    of each pair take one fair random sign, independent of the init (seeded by the draw)."""
    r = stage2_run(seed0, s, sigma_p, sigma_0, eta)
    g = np.random.default_rng(seed0)
    e = g.choice([-1.0, 1.0], size=r["a0"].shape)
    return dict(M=np.stack([sign_table(r["a0"][j], r["b0"][j], e[j], e[j])
                            for j in range(e.shape[0])]))
