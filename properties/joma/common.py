"""Helpers shared by the JoMA claim files (strategies, problems and small exact helpers).

Imports no claim file (tests/test_layout.py).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from sim.joma import make_problem

SEEDS = st.lists(st.integers(0, 2**31 - 1), min_size=2, max_size=3, unique=True)


def ETAS(eta0):
    """The halving ladder of step sizes: 4 eta0, 2 eta0, eta0, eta0/2, eta0/4, eta0/8 (six
    sizes, so the fitted log-log slope has 4 residual degrees of freedom for its t band; the two
    coarse rungs cost 3/4 of one eta0 run together)."""
    return [4 * eta0, 2 * eta0, eta0, eta0 / 2, eta0 / 4, eta0 / 8]


def problem(draw_params, attention):
    """An Eqn. 2 problem from (seeds, M_C, K, extra_d, N, activation, A)."""
    seeds, M_C, K, extra_d, N, act, A = draw_params
    return make_problem(seeds, M_C=M_C, K=K, C=max(K, 2), d=M_C + 1 + extra_d, N=N,
                        attention=attention, activation=act, A=A, device="cpu")


# --------------------------------------------------------------------------------------------
# Section 5 / Appendix A.5 (HBLT): strategies and exact constants shared by Lemmas 7-8,
# Theorem 5 and Eqn. 9
# --------------------------------------------------------------------------------------------
rho_full = st.floats(-1.0, 1.0, allow_nan=False)


@st.composite
def signed_rho(draw, lo=0.1, hi=0.99):
    return draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(lo, hi))


@st.composite
def class_prior(draw, max_D=3):
    D = draw(st.integers(1, max_D))
    w = np.asarray(draw(st.lists(st.floats(0.05, 1.0), min_size=D, max_size=D)))
    return w / w.sum()


def eq9_c1(h, depth):
    """The exact eps coefficient H(2H-L)/(2L) of Eqn 108 at rho = rho_0 = 1-eps (a Fraction)."""
    return Fraction(h * (2 * h - depth), 2 * depth)


# --------------------------------------------------------------------------------------------
# Section 4 / Appendix A.3 (nonlinear activation, uniform attention): Monte Carlo helpers shared
# by Lemma 1, Theorem 3 and Lemmas 2-4
# --------------------------------------------------------------------------------------------
MC_FALSE_FAIL = 1e-6  # per Monte Carlo check (two-sided, Bonferroni over its coordinates)
seeds = st.integers(0, 2 ** 31 - 1)
vnorms = st.one_of(st.floats(0.3, 0.8), st.floats(1.25, 3.0))  # ||v|| away from 1


def mc_tol(k):
    """Threshold on the max |z| over k coordinates: false-fail MC_FALSE_FAIL per check."""
    from properties import Tolerance
    return Tolerance.monte_carlo(1.0, MC_FALSE_FAIL, k)


def orth(rng, m, n):
    return np.linalg.qr(rng.normal(size=(m, n)))[0]


def unit(rng, n):
    u = rng.normal(size=n)
    return u / np.linalg.norm(u)


def isotropic(family, n, sigma, nu):
    from theory import joma as th
    return th.Isotropic(family, n, sigma, nu)


def cat(pair):
    """(vector, scalar) -> one vector (the M + 1 coordinates of a Monte Carlo check)."""
    return np.concatenate([np.atleast_1d(pair[0]), [pair[1]]])


def M_np(r):
    """Definition 1's M(rho) as a float 2x2 array: theory.joma.M itself, evaluated at the number
    (so a claim that declares theory.joma.M calls it; ~0.1 ms a call)."""
    from theory import joma as th
    return np.asarray(th.M(float(r)).tolist(), dtype=float)


def p_np(r):
    """Definition 1's p(rho) as a float 2x1 array: theory.joma.p itself, evaluated at the number."""
    from theory import joma as th
    return np.asarray(th.p(float(r)).tolist(), dtype=float)


# --------------------------------------------------------------------------------------------
# Theorem 1 (Eqn. 2 runs): strategy, random initialisation, per-token statistics
# --------------------------------------------------------------------------------------------
T1_PARAMS = st.tuples(SEEDS, st.integers(2, 8), st.integers(1, 3), st.integers(0, 3),
                      st.sampled_from([16, 32, 64]), st.sampled_from(["linear", "relu"]),
                      st.floats(0.5, 2.0))


def random_init(p, seed, scale):
    """(W0, z0) with i.i.d. N(0, scale^2) entries from a local generator seeded by `seed`."""
    import torch
    S, d, M_C, N, K = p.shape
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(S, d, K, generator=g, dtype=torch.float64),
            scale * torch.randn(S, M_C, generator=g, dtype=torch.float64))


def token_stats(tr):
    """(s2, n2): s2 = sum_k v_kl^2, shape (T, S, M_C); n2 = sum_k ||v_k||^2, shape (T, S, 1)."""
    s2 = (tr.V ** 2).sum(-1)
    n2 = (tr.V ** 2).sum((-2, -1))[..., None]
    return s2, n2


def fd_grid(dist, pts=9):
    """The r-grid of the finite-difference checks of Lemmas 2 and 4 (inside the support)."""
    lim = 0.8 * dist.sigma if dist.family == "ball" else 3 * dist.std()
    return np.linspace(-lim, lim, pts)


# --------------------------------------------------------------------------------------------
# Section 7 (almost orthogonal embeddings): the JL draws and the Theorem 1 degradation curve
# --------------------------------------------------------------------------------------------
def jl_fail_count(M, eps, d, draws, seed):
    """Number of `draws` sets of M i.i.d. uniform unit vectors in R^d with some |u^T u'| > eps."""
    rng = np.random.default_rng(seed)
    n = 0
    for _ in range(draws):
        U = rng.standard_normal((M, d))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        G = np.abs(U @ U.T)
        np.fill_diagonal(G, 0)
        n += int(G.max() > eps)
    return n


def near_orthogonal_runs(seed=0, ts=(0.0, 0.00125, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08)):
    """Eqn. 2 (exp attention, linear phi, K = 2, M_C = 6, d = 40) with U_C's columns perturbed to
    coherence eps = max |u_l^T u_l' - 1[l = l']| (t = 0: orthonormal). Returns, per t, (eps, z,
    s2, Q_v) of the logged trajectory (t = 0 first)."""
    import dataclasses
    import math

    import torch

    from sim import make_generator
    from sim.joma import make_problem, simulate_eqn2
    p = make_problem([seed, seed + 1], M_C=6, K=2, d=40, N=32, attention="exp",
                     activation="linear", device="cpu")
    R = torch.randn(p.U_C.shape, generator=make_generator(seed + 2), dtype=torch.float64)
    out = []
    for t in ts:
        U = p.U_C + t * R / math.sqrt(p.U_C.shape[1])
        U = U / torch.linalg.norm(U, dim=1, keepdim=True)
        eps = float((U.transpose(1, 2) @ U - torch.eye(U.shape[2], dtype=U.dtype)).abs().max())
        tr = simulate_eqn2(dataclasses.replace(p, U_C=U), eta=0.01, horizon=1.0, log_every=10)
        out.append((eps, tr.z, (tr.V ** 2).sum(-1), tr.Qv))
    return out


# --------------------------------------------------------------------------------------------
# Section 4 qualitative claims (Eqn. 7): settings and curves, shared by properties and figures
# --------------------------------------------------------------------------------------------
def entropy_setting(d, n_sal, mu_sal, mu_non, eps):
    """mu: n_sal salient components mu_sal (list, each in [1.5, 2.5]) and d - n_sal non-salient
    ones mu_non (each in [0.5, 1.0]); v(0) = eps * 1 (uniform attention at t = 0)."""
    mu = np.concatenate([np.asarray(mu_sal[:n_sal], float), np.asarray(mu_non[:d - n_sal], float)])
    return mu, np.full(mu.shape, float(eps))


def entropy_curves(mu, v0, T=60.0, n=300, attention=True):
    """(t, entropy(softmax(v^2))(t), run) of Eqn. 7 on a log-spaced grid (rtol 1e-9)."""
    from sim.joma import entropy_softmax_sq, simulate_eqn7
    t = np.concatenate([[0.0], np.geomspace(1e-3, T, n)])
    run = simulate_eqn7(mu, v0, T, t_eval=t, attention=attention, rtol=1e-9, atol=1e-12)
    return run.t, entropy_softmax_sq(run.v), run


def rank_setting(K, b, n_sal, mu_sal, mu_on, mu_off, eps):
    """K nodes, d = n_sal + K b components. Salient components 0..n_sal-1 are shared by all
    nodes (value mu_sal); node k has its own block of b non-salient components at value mu_on,
    mu_off elsewhere. V(0) = eps * M (small initialisation along the targets M = [mu_1..mu_K])."""
    d = n_sal + K * b
    M = np.full((K, d), float(mu_off))
    M[:, :n_sal] = mu_sal
    for k in range(K):
        M[k, n_sal + k * b: n_sal + (k + 1) * b] = mu_on
    return M, eps * M


def rank_curves(M, V0, T=80.0, n=300, attention=True):
    """(t, stable rank of V(t), run) of Eqn. 7 with K nodes sharing one exp attention."""
    from sim.joma import simulate_eqn7, stable_rank
    t = np.concatenate([[0.0], np.geomspace(1e-3, T, n)])
    run = simulate_eqn7(M, V0, T, t_eval=t, attention=attention, rtol=1e-8, atol=1e-12,
                        method="LSODA" if attention else "DOP853")
    return run.t, stable_rank(np.swapaxes(run.v, -1, -2)), run


def invert_F(F, t, delta0, mu, *, floor=1e-300, rel=1e-12):
    """delta(t) from Eqn. 71 with the factor 1, F(delta(t), delta0, mu) = t (F: an Eqn. 70-type
    closed form in delta coordinates, theory.joma.F_delta or a rival of it), elementwise over
    the broadcast of t, delta0 and mu.  Bracketed Newton in u = ln delta (the first slope by a
    forward difference of F itself, then secant slopes; a bisection step wherever a step
    leaves the bracket), to |F - t| <= rel max(1, t); delta = 0 where even delta = floor is
    reached before t (v = mu to float64).  Returns (delta, the largest residual |F - t|)."""
    t, d0, m = (np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(t, delta0, mu))
    hi = np.log(d0)
    lo = np.full(t.shape, np.log(floor))
    beyond = F(np.full(t.shape, floor), d0, m) - t <= 0
    u = np.clip(hi - t, lo, hi)  # the attention-free solution delta0 e^{-t}: an upper bound
    tol = rel * np.maximum(1.0, t)
    G = np.where(beyond, 0.0, F(np.exp(u), d0, m) - t)
    h = 1e-7
    dG = (F(np.exp(u - h), d0, m) - (G + t)) / -h
    for _ in range(100):
        done = np.abs(G) <= tol
        if done.all():
            break
        lo = np.where(G > 0, u, lo)  # F too large: delta too small, u too small
        hi = np.where(G < 0, u, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            un = u - G / dG
        bad = ~np.isfinite(un) | (un <= lo) | (un >= hi) | ~(dG < 0)
        un = np.where(done, u, np.where(bad, 0.5 * (lo + hi), un))
        Gn = np.where(beyond | done, G, F(np.exp(un), d0, m) - t)
        with np.errstate(divide="ignore", invalid="ignore"):
            sec = (Gn - G) / (un - u)  # the secant slope: the next Newton step's
        dG = np.where(np.isfinite(sec) & (sec < 0), sec, dG)
        u, G = un, Gn
    delta = np.where(beyond, 0.0, np.exp(u))
    return delta, float(np.max(np.abs(G)))


def _from_minimum(t, curve, stride):
    """curve(indices) -> (values (n,), extra (n, ...), residual) on t[indices].  stride None: the
    whole grid.  Else the curve on every stride-th time first, then at full resolution from two
    strides before that coarse minimum on (a smooth curve's grid minimum lies within one stride
    of its coarse one); the times before are NaN (the checks read the minimum and what follows
    it only).  Returns (values (T,), extra, the largest residual)."""
    T = len(t)
    if stride is None:
        return curve(np.arange(T))
    coarse = np.unique(np.r_[np.arange(0, T, stride), T - 1])
    vals, _, res0 = curve(coarse)
    start = max(0, int(coarse[int(np.argmin(vals))]) - 2 * stride)
    fine, extra, res1 = curve(np.arange(start, T))
    out = np.full(T, np.nan)
    out[start:] = fine
    full = np.full((T,) + extra.shape[1:], np.nan)
    full[start:] = extra
    return out, full, max(res0, res1)


def entropy_theory(t, mu, v0, F, stride=None):
    """The theory's curve of joma.sec4.entropy_dynamics: with the factor 1 each component of
    Eqn. 7 follows Eqn. 71, F(delta_j(t), delta_j(0), mu_j) = t, so v_j(t) = mu_j (1 -
    delta_j(t)) from the closed form F alone (no integration), and H(t) = entropy(softmax(v^2)).
    stride: only from the curve's minimum on (_from_minimum; NaN before).  Returns (H (T,),
    v (T, d), the inversion's largest residual |F - t|)."""
    from sim.joma import entropy_softmax_sq
    mu = np.asarray(mu, float)
    t = np.asarray(t, float)
    d0 = (1 - np.asarray(v0, float) / mu)[None]

    def curve(idx):
        delta, res = invert_F(F, t[idx][:, None], d0, mu[None])
        v = mu * (1 - delta)
        return entropy_softmax_sq(v), v, res
    return _from_minimum(t, curve, stride)


def rank_theory(t, M, eps, F, stride=None):
    """The theory's curve of joma.sec4.rank_dynamics: K nodes sharing one exp attention from
    V(0) = eps M stay on V(t) = M diag(rho(t)) (v_kl = M_kl rho_l solves v_kl_dot = (M_kl - v_kl)
    exp(1/2 sum_k v_kl^2) with rho_l_dot = (1 - rho_l) exp(m_l^2 rho_l^2 / 2), m_l = ||M_:l||),
    so each rho_l follows Eqn. 71 with mu = m_l: F(1 - rho_l(t), 1 - eps, m_l) = t.  stride: as
    entropy_theory's.  Returns (stable rank (T,), the inversion's largest residual |F - t|)."""
    from sim.joma import stable_rank
    M = np.asarray(M, float)
    t = np.asarray(t, float)
    m = np.linalg.norm(M, axis=0)

    def curve(idx):
        delta, res = invert_F(F, t[idx][:, None], np.full(m.shape, 1.0 - eps)[None], m[None])
        V = M[None] * (1 - delta)[:, None, :]  # (n, K, d)
        return stable_rank(np.swapaxes(V, -1, -2)), delta, res
    sr, _, res = _from_minimum(t, curve, stride)
    return sr, res


# --------------------------------------------------------------------------------------------
# Fig. 2 (softmax attention): the estimate zhat_m(t), its two components, the correlation
# --------------------------------------------------------------------------------------------
def normalized_correlation(a, b):
    """Pearson correlation over the last axis (Fig. 2's normalized correlation)."""
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    return (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))


def zhat_full(s2, n2, bbar):
    """zhat_m(t) = 1/2 sum_k (v_k^2 - ||v_k||^2 bbar_m(t)) (Eqn. 19 with c = 0)."""
    return 0.5 * (s2 - n2 * bbar)


def zhat_component_1(s2, n2, bbar):
    """Fig. 2's caption: zhat_m1 = 1/2 sum_k v_k^2."""
    return 0.5 * s2


def zhat_component_2(s2, n2, bbar):
    """Fig. 2's caption: zhat_m2 = -1/2 sum_k ||v_k||^2 bbar_m."""
    return -0.5 * n2 * bbar


def fig2_correlations(tr, zhat):
    """(t, S) normalized correlation over tokens of zhat(t) and z(t), t > 0."""
    s2, n2 = token_stats(tr)
    return normalized_correlation(tr.z[1:], zhat(s2, n2, tr.bbar)[1:])


# --------------------------------------------------------------------------------------------
# Trained transformers (Sections 4-6): the size-ladder decision shared by
# joma.sec4.entropy_dynamics_trained, joma.sec4.rank_dynamics_trained and joma.sec5.lowest_first
# --------------------------------------------------------------------------------------------
# Base seeds of the explicit draws the three claims share (one stacked program per rung serves
# all three); under `ci` these are the draws, other profiles add generated ones.
DYN_DRAWS = (0, 1000, 2000)
# Seeds per block at each named size (issue 23: 4, so 8 per draw at size ci; issue 36: 12 at the
# long ladder, 24 per draw, where the trends decide: t_23 critical about 5.8 at 1e-5).  Every
# draw decides on 2 blocks (its own and the next draw's).
DYN_BLOCK = {"ci": 4, "ladder": 12, "paper": 12}
# The false-fail rate of one ladder trend (seed-clustered Student t): 2 printed properties x 3
# draws = 6 trends per claim, 6e-5 <= the claim share 1e-4 (fixed before the run).
DYN_TREND_FF = 1e-5
# float32 training, entropies / stable ranks / logits evaluated in float64 from float32
# activations: a change below 1e3 x eps32 x scale is indistinguishable from round-off
EPS32 = float(np.finfo(np.float32).eps)


def dyn_seeds_per_program():
    """Seeds per block at the named size (properties.check.size()): 4 at size ci (8 per draw),
    12 at the long ladder (24 per draw)."""
    from properties.check import size
    return DYN_BLOCK[size()]


def dyn_seeds(base):
    """The block of seeds of one draw (the same at every rung of the ladder)."""
    return tuple(range(int(base), int(base) + dyn_seeds_per_program()))


def dyn_seed_sets(base):
    """The seed blocks of one draw: its own and its partner's.  An explicit draw's partner is
    the next explicit draw (cyclically), so the three explicit draws use the three blocks twice
    each: every draw decides on 2 blocks (8 seeds per rung at size ci, 24 at the long ladder),
    and two draws share one block (they are not independent evidence; the false-fail
    accounting is a union bound, valid under dependence).  A generated draw's partner is the
    next block of seeds."""
    base = int(base)
    if base in DYN_DRAWS:
        partner = DYN_DRAWS[(DYN_DRAWS.index(base) + 1) % len(DYN_DRAWS)]
    else:
        partner = base + dyn_seeds_per_program()
    return dyn_seeds(base), dyn_seeds(partner)


def dyn_program(base):
    """The seeds of the stacked programs that hold the draw's seeds, as ONE tuple: for an
    explicit draw, every explicit draw's block (the three claims, their alternatives and the
    figures share these runs: one cache entry per program, rung and configuration); for a
    generated draw, its own two blocks.  How they are cut into programs: dyn_programs."""
    if int(base) in DYN_DRAWS:
        return tuple(s for b in DYN_DRAWS for s in dyn_seeds(b))
    return tuple(s for blk in dyn_seed_sets(base) for s in blk)


# Whether each block is its own stacked program (issue 36): at size ci one program per rung
# holds every block (the small rungs are overhead-bound: stacking pays); at the long ladder each
# block is a program of its own, so that the two workers of `-n 2` can train different blocks of
# one rung at once (one program of 36 seeds at d = 128 kept one worker busy while the other
# waited on its lock).  The seeds, the runs of each seed and the decision are the same.
DYN_SPLIT = {"ci": False, "ladder": True, "paper": True}


def dyn_programs(base):
    """The stacked programs (seed tuples) of dyn_program(base) at the named size: one program,
    or one per block (DYN_SPLIT)."""
    from properties.check import size
    prog = dyn_program(base)
    if not DYN_SPLIT[size()]:
        return (prog,)
    k = dyn_seeds_per_program()
    return tuple(prog[i:i + k] for i in range(0, len(prog), k))


def _worker_order(jobs, cost):
    """`jobs` in the order this xdist worker computes them: the jobs assigned to it by longest
    processing time first (deterministic, so every worker computes the same assignment), then
    the other workers' jobs, each worker's in reverse (the ones it reaches last), so that a
    worker that runs out of its own work takes what is least likely to be under way.  Outside
    xdist, largest first.  Only the order of computation changes: each job is one cache entry
    (computed once across processes under the run cache's lock) and the results are put back
    in canonical order by the caller."""
    import os
    order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i]))
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    w = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    w = int(w[2:]) if w.startswith("gw") and w[2:].isdigit() else 0
    if n <= 1:
        return [jobs[i] for i in order]
    load, mine = [0.0] * n, [[] for _ in range(n)]
    for i in order:
        j = min(range(n), key=lambda q: (load[q], q))
        load[j] += cost(jobs[i])
        mine[j].append(i)
    seq = list(mine[w % n])
    for q in range(1, n):
        seq += reversed(mine[(w + q) % n])
    return [jobs[i] for i in seq]


def dyn_merge(runs):
    """dynamics_run results of disjoint seed programs (same rung, same configuration) as one:
    seeds concatenated (ent, sr: axis 2; logits: axis 1)."""
    runs = list(runs)
    if len(runs) == 1:
        return runs[0]
    out = dict(runs[0])
    for k, ax in (("ent", 2), ("sr", 2), ("logits", 1)):
        out[k] = np.concatenate([r[k] for r in runs], axis=ax)
    out["seeds"] = tuple(s for r in runs for s in r["seeds"])
    return out


def dyn_collect(fn, base, order, seeds=None):
    """[(setting, run)] per rung of the ladder: `fn(program, setting, order)` (dynamics_run, a
    null of it, or the large-lr run) over every program of dyn_programs(base), computed in this
    worker's order (_worker_order: the two workers share a rung's blocks), merged per rung and
    cut to `seeds` (default: the draw's seeds, dyn_draw_seeds)."""
    from properties.joma.runs import ladder
    progs, rungs = dyn_programs(base), ladder()
    jobs = [(st_, p) for st_ in rungs for p in progs]
    got = {}
    for st_, p in _worker_order(jobs, lambda j: len(j[1]) * j[0].d ** 2 * j[0].steps):
        got[(st_, p)] = fn(p, st_, order)
    mine = dyn_draw_seeds(base) if seeds is None else seeds
    return [(st_, dyn_select(dyn_merge(got[(st_, p)] for p in progs), mine)) for st_ in rungs]


def dyn_select(run, seeds):
    """The part of a dynamics_run result (or a null's) that belongs to `seeds` (ent, sr: axis
    2; logits: axis 1), in the order given."""
    idx = [run["seeds"].index(int(s)) for s in seeds]
    out = dict(run)
    for k, ax in (("ent", 2), ("sr", 2), ("logits", 1)):
        out[k] = np.take(run[k], idx, axis=ax)
    out["seeds"] = tuple(int(s) for s in seeds)
    return out


def dyn_draw_seeds(base):
    """The seeds one draw decides on (its two blocks)."""
    return tuple(s for blk in dyn_seed_sets(base) for s in blk)


def dyn_rungs(world, base, order):
    """(setting, the draw's part of the rung's stacked runs) per rung of the ladder for one
    draw, through the world's slot "run" (a null replaces it)."""
    from properties.joma.runs import dynamics_run
    return dyn_collect(world.simulation(dynamics_run, "run", pure=True), base, order)


def dyn_phases():
    """Under `ci` only the shared explicit draws run (their runs are cached across the claims);
    other profiles also generate draws."""
    from hypothesis import Phase

    from properties.check import profile
    if profile() == "ci":
        return [Phase.explicit]
    return [Phase.explicit, Phase.reuse, Phase.generate]


def dyn_draws(draws=DYN_DRAWS):
    """The draws of a trained-transformer property, one decorator under its @audits: the CI
    budget (one generated draw beyond the explicit ones, generated only outside `ci`:
    dyn_phases), the explicit base seeds `draws` (shared with the sibling claims, whose cached
    runs they reuse) and the base-seed strategy."""
    from hypothesis import example, given

    from properties import examples

    def decorate(fn):
        fn = given(base=st.integers(0, 2**30))(fn)
        for base in reversed(draws):  # the order of a stack of @example lines, top first
            fn = example(base=base)(fn)
        return examples(1, phases=dyn_phases())(fn)
    return decorate


def ci_ladder():
    """True where the ladder is the CI one (d = 8, 16, 32: size `ci`, the default of the ci and
    dev profiles), on which the expected failures of the printed forms were measured."""
    from properties.check import size
    return size() == "ci"


def drop_and_rebound(curves, relative=False):
    """curves (t, S) -> per run: drop c(0) - min_t c, rebound c(T) - min_t c (relative: drop /
    c(0) and rebound / min_t c)."""
    c = np.asarray(curves, float)
    lo = c.min(0)
    drop, reb = c[0] - lo, c[-1] - lo
    if relative:
        drop, reb = drop / c[0], reb / lo
    return drop, reb


def mean_se(x, floor):
    """Mean over runs and its standard error (sd / sqrt(n), at least `floor`)."""
    x = np.asarray(x, float)
    se = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("inf")
    return float(x.mean()), max(se, float(floor))


# Table 1: base seeds of the explicit draws (3 seeds stacked per config per draw)
TABLE1_DRAWS = (0, 1000, 2000)
TABLE1_SEEDS_PER_DRAW = 3


def table1_seeds(base):
    return tuple(range(int(base), int(base) + TABLE1_SEEDS_PER_DRAW))
