"""signgd.longer_context (Appendix B.4, L > 2 patches) at L = 3: the 4000-step run `_lc_run` (2
seeds per draw: item (2), a comparison at one horizon, and the neighbouring reading 'at one
horizon') and the horizons run `_lc_horizons_at` (items (1), (3) as limits in t).  Draws: seed 11
(the sheet's CPU setting), seed 370 (a near-tie of two noise norms, found by the thorough
profile) and one drawn.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import example, given

from properties import (Claim, Threshold, audits, check_at_least, check_trend, examples, null,
                        register)
from properties.settings import size
from properties.signgd.common import claim_rate, exact
from properties.signgd.setting import M_K, M_V, N_SAMPLES, SEED, SETTING, signgd_draw_note
from properties.signgd.runs import attention_frozen_null, held_at_init
from sim import signgd as sim

# the module's properties share the per-process _lc_run: one xdist worker runs them
# all (computed once), not both (each worker computing them again)
pytestmark = pytest.mark.xdist_group("signgd-longer-context")

CID = "signgd.longer_context"
LC_L, LC_S, LC_STEPS = 3, 20, 4000
EXACT = exact()


@functools.lru_cache(maxsize=4)
def _lc_run(seed0: int):
    seeds = [seed0, seed0 + 1]
    d = 1 + N_SAMPLES * (LC_L - 1) * LC_S + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=LC_S, d=d, sigma_p=1.0, L=LC_L, disjoint=True,
                            n_test=8, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")
    tr = sim.train(prob, p0, eta=6e-5, steps=LC_STEPS, log_every=10,
                   log=("s12", "s22", "train_loss", "alpha", "a", "b"))
    return dict(t=tr.t, s12=tr["s12"], s22=tr["s22"], alpha=tr["alpha"], a=tr["a"], b=tr["b"])


def _dominant(r, k):
    """At logged index k: query / key noise of the dominant patch (S, m_k, n) and sgn alpha
    (S, m_k, 1).  Dominant = the signal query's largest noise weight at the end."""
    dom = r["s12"][-1].argmax(-1)  # (S, n)
    idx = np.broadcast_to(dom[:, None, :, None], r["a"][k].shape[:-1] + (1,))
    a = np.take_along_axis(r["a"][k], idx, -1)[..., 0]
    b = np.take_along_axis(r["b"][k], idx, -1)[..., 0]
    return a, b, np.sign(r["alpha"][k])[..., None]


def lc_run(seed):
    return _lc_run(seed)


# Items (1) and (3) as limits in t (issue 20: '3-4 horizons'): LC_H_SEEDS seeds per draw run to
# the last horizon, per-seed statistics that do not saturate read at each horizon.  Fixed after
# an exploration (seeds 11-18, 370-377, 5011-5018; in the history).
LC_H = (2000, 4000, 8000, 16000)
LC_H_SEEDS = {"ci": 8, "ladder": 24, "paper": 24}
LC_H_FF = claim_rate(3, checks=2)  # per draw and trend: the claim share over 3 draws, 2 trends
ONE_HOT = "each softmax row becomes one-hot on a single noise patch (Appendix B.4)"
ONE_HORIZON = "'becomes' / 'takes' read at one horizon: the last step of a 4000-step run"


def _horizon_stats(q, t, H):
    """Per horizon (rows) and seed (columns): `logodds`, the smallest over samples and attention
    rows (the signal query's and each noise query's) of the log-odds of the row's two largest
    weights (one-hot <=> -> inf; inf where the second weight underflows); `signal_gap`, 1 - the
    worst signal-query row's largest weight; `misaligned`, the fraction of the dominant patch's
    query/key noise pairs without the sign of alpha (dominant: the signal query's largest noise
    weight at the last horizon)."""
    r = dict(q, t=t)
    S = q["s12"].shape[1]
    out = {k_: [] for k_ in ("logodds", "signal_gap", "misaligned")}
    for h in H:
        k = int(np.searchsorted(t, h))
        sig = np.concatenate([q["s11"][k][..., None], q["s12"][k]], -1)  # (S, n, L)
        noi = np.concatenate([q["s21"][k][..., None], q["s22"][k]], -1)  # (S, n, L-1, L)
        lo = []
        for w in (sig.reshape(S, -1, sig.shape[-1]), noi.reshape(S, -1, noi.shape[-1])):
            ws = np.sort(w, -1)
            with np.errstate(divide="ignore"):
                lo.append((np.log(ws[..., -1]) - np.log(ws[..., -2])).min(-1))
        out["logodds"].append(np.minimum(*lo))
        out["signal_gap"].append(1.0 - sig.max(-1).min(-1))
        a, b, sa = _dominant(r, k)
        out["misaligned"].append(1.0 - ((np.sign(a) == sa) & (np.sign(b) == sa)).mean((1, 2)))
    return dict(sizes=tuple(float(h) for h in H), **{k_: np.array(v) for k_, v in out.items()})


@functools.lru_cache(maxsize=4)
def _lc_horizons_at(seed0: int, n_seeds: int):
    """The horizon statistics of one training run, trained and with the attention quantities
    held at init (the null), from the same trajectory."""
    seeds = [seed0 + k for k in range(n_seeds)]
    d = 1 + N_SAMPLES * (LC_L - 1) * LC_S + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=LC_S, d=d, sigma_p=1.0, L=LC_L, disjoint=True,
                            n_test=8, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")
    keys = ("s11", "s12", "s21", "s22", "alpha", "a", "b")
    # logged at the horizons only (their gcd; was every 10 steps: the same values, less work)
    tr = sim.train(prob, p0, eta=6e-5, steps=max(LC_H), log_every=math.gcd(*LC_H), log=keys)
    q = {k_: tr[k_] for k_ in keys}
    return (_horizon_stats(q, tr.t, LC_H), _horizon_stats(held_at_init(q, keys), tr.t, LC_H))


def lc_horizons(seed):
    """Items (1), (3) at the horizons LC_H (LC_H_SEEDS seeds from the draw's seed)."""
    return _lc_horizons_at(int(seed), LC_H_SEEDS[size()])[0]


def lc_horizons_frozen(seed):
    """Null: W_Q, W_K not trained: the softmax rows and the query/key noise and signal keep their
    init values at every horizon."""
    return _lc_horizons_at(int(seed), LC_H_SEEDS[size()])[1]


def lc_horizons_stopped(seed):
    """Null: training stopped at the first horizon: every later horizon holds its state."""
    r = dict(lc_horizons(seed))
    for k_ in ("logodds", "signal_gap", "misaligned"):
        r[k_] = np.broadcast_to(r[k_][:1], r[k_].shape).copy()
    return r


# Null: W_Q, W_K not trained: every softmax row keeps its init value (~1/3 per patch)
attention_frozen = attention_frozen_null(lc_run, ("s12", "s22"))


register(Claim(
    draw_note=functools.partial(signgd_draw_note, s=LC_S),
    id=CID, where="Appendix B.4",
    statement="With longer context (L > 2 patches: one signal, L - 1 noise) each softmax row "
              "becomes one-hot on a single noise patch; the noise-query outputs converge faster "
              "than the signal-query ones; the dominant query/key noise takes the sign of the "
              "query signal.",
    assumptions=SETTING.replace("n = 8,", f"L = {LC_L}, s = {LC_S}, sigma_p = 1, eta = 6e-5, "
                                 "sigma_0 = 1e-3, n = 8,") + f"; {LC_STEPS} steps (L_S ~ 1e-10 "
                                 "at the end); 2 seeds per draw; seeds 11 and 370 explicit examples",
    prediction="(1) at the end every row's largest weight on a noise key 'one-hot' (glossary: "
               ">= 0.9, bracket 0.99-0.8) for noise and signal queries; (2) per seed, the step at which the mean "
               "row maximum reaches 0.9 is earlier for noise-query rows than for signal-query "
               "rows; (3) at the end every query and key noise of the dominant patch has the sign "
               "of alpha",
    simulation="sim.signgd.train(L=3), logged every 10 steps",
    metric="(1) min over samples and rows of the max weight on noise keys at the end; (2) per "
           "seed, t_noise(0.9) < t_signal(0.9); (3) fraction of dominant-patch pairs with sgn alpha",
    tolerance="the glossary reading 'one-hot' (max weight >= 0.9, bracket 0.99-0.8); order "
              "exact (every seed); (3) every pair; the limits' trends seed-clustered",
    reading="L = 3 only: B.4's own L was lost, and the statement describes its experiment at "
            "one L. Items (1) and (3) are limits in t, decided over the horizons 2000, 4000, "
            "8000, 16000 (property limits; 8 seeds per draw at ci, 24 under --size ladder): (1) "
            "the per-seed smallest log-odds of a row's two largest weights (one-hot <=> it "
            "diverges; it does not saturate in float64 as 1 - max does) increasing in log t, "
            "and the signal row 'one-hot' at the last horizon; (3) the per-seed fraction "
            "of misaligned dominant pairs decreasing in log t (raw values: it reaches 0). The "
            "neighbouring reading 'at one horizon' (the last step of a 4000-step run, 2 seeds; "
            "the properties item1_printed / item3_printed) fails: slow convergence, not a "
            "counterexample. (1) fails where a sample's two noise patches have nearly equal "
            "||xi||_1: B.4's argument (F.2) rests on the norm gap. (3) fails for the query noise "
            "(Lemma 4.7's delay, stretched). The dominant patch is the signal query's largest "
            "noise weight at the end (it equals the noise queries' choice and the "
            "largest-||xi||_1 patch in every sample checked). Alternatives of item (2): "
            "null attention frozen (no row ever reaches 0.9); the opposite order (signal rows "
            "first) is the check's complement, not an alternative. Alternatives of the limits: "
            "nulls attention frozen (every statistic at its init value) and training stopped at "
            "the first horizon.",
    asymptotic="t (items (1), (3): 'becomes one-hot', 'takes the sign')",
    paper_setting="App. B.4's context length and the rest of its setting (Figs. 9-11) were lost in "
                  "extraction; it is run at L = 3, n = 8, s = 20, sigma_p = 1, sigma_0 = 1e-3, eta "
                  "= 6e-5, to horizons 2000..16000.",
    alternatives=(
        null("attention_frozen", attention_frozen, "W_Q, W_K not trained: every softmax row "
             "keeps its init value", replaces="run"),
        null("attention_frozen_horizons", lc_horizons_frozen, "W_Q, W_K not trained: the "
             "softmax rows and the query/key noise keep their init values at every horizon",
             replaces="horizons"),
        null("training_stopped", lc_horizons_stopped, "training stopped at the first horizon: "
             "the later horizons hold its state", replaces="horizons"),
    ),
))


def lc_draws(fn):
    return example(seed=11)(example(seed=370)(given(seed=SEED)(fn)))


@audits(CID, reading=ONE_HORIZON,
        fails="a near-tie of the two noise norms leaves the signal row split at the end "
                   "(seed 370: 0.51 / 0.49)")
@examples(1)
@lc_draws
def test_signgd_longer_context_item1_printed(seed):
    r = _lc_run(seed)
    noi = float(r["s22"][-1].max(-1).min())
    sig = float(r["s12"][-1].max(-1).min())
    check_at_least(CID, noi, Threshold.reading("one-hot", ONE_HOT), name="(1) noise rows",
                   what=f"(1) noise rows: min max weight {noi:.4g}")
    check_at_least(CID, sig, Threshold.reading("one-hot", ONE_HOT), name="(1) signal row",
                   what=f"(1) signal row: min max weight {sig:.4g}")


@audits(CID)
@examples(1)
@lc_draws
def test_signgd_longer_context_item2(world, seed):
    r = world.simulation(lc_run, "run", pure=True)(seed)
    first, second = world.prediction(lambda: ("noise", "signal"), "order")()
    t = r["t"]

    def t_reach(x):  # (T, S, ...) -> (S,) first logged step with the mean over rows >= 0.9
        m = x.reshape(x.shape[0], x.shape[1], -1).mean(-1) >= 0.9
        return np.where(m.any(0), t[m.argmax(0)], np.inf)

    tt = {"signal": t_reach(r["s12"].max(-1)), "noise": t_reach(r["s22"].max(-1))}
    frac = float((tt[first] < tt[second]).mean())
    check_at_least(CID, frac - 1.0, EXACT,
                   what=f"(2) t_{first}(0.9) < t_{second}(0.9) in every seed ({tt[first]} vs "
                        f"{tt[second]})")


@audits(CID, reading=ONE_HORIZON,
        fails="the dominant patch's query noise is ~79% aligned at the end")
@examples(1)
@lc_draws
def test_signgd_longer_context_item3_printed(seed):
    r = _lc_run(seed)
    a, b, sa = _dominant(r, -1)
    both = float(((np.sign(a) == sa) & (np.sign(b) == sa)).mean())
    check_at_least(CID, both - 1.0, EXACT,
                   what=f"(3) fraction of dominant query and key noise with sgn alpha {both:.3g} = 1")


@audits(CID)
@examples(1)
@lc_draws
def test_signgd_longer_context_limits(world, seed):
    """Items (1) and (3) as limits in t over the horizons LC_H: (1) the per-seed smallest
    log-odds of a row's two largest weights grows along t (log-log, increasing; rival 0: no
    limit), and at the last horizon the signal row is 'one-hot' (the glossary's reading of its
    largest weight); (3) the per-seed fraction of misaligned dominant pairs falls along t (raw
    values against log t, decreasing; rival 0)."""
    r = world.simulation(lc_horizons, "horizons", pure=True)(seed)
    sz = r["sizes"]
    fmt = ", ".join
    gap = float(r["signal_gap"][-1].max())
    check_at_least(CID, 1.0 - gap, Threshold.reading("one-hot", ONE_HOT),
                   name="(1) one-hot at the last horizon",
                   what=f"(1) signal row at t = {sz[-1]:g}: smallest largest weight (max 1 - "
                        f"largest {gap:.3g})")
    mis = r["misaligned"]
    check_trend(CID, sz, mis.T, direction="decreasing", log_values=False, false_fail=LC_H_FF,
                rivals=(0.0,), name="(3) misaligned along t",
                what="(3) misaligned dominant pairs along t (means: "
                     + fmt(f"{h:g}: {v.mean():.3g}" for h, v in zip(sz, mis)) + ")")
    lo = r["logodds"]  # (horizons, seeds)
    check_trend(CID, sz, lo.T, direction="increasing", false_fail=LC_H_FF, rivals=(0.0,),
                name="(1) log-odds along t",
                what="(1) smallest log-odds of a row's two largest weights along t (medians: "
                     + fmt(f"{h:g}: {np.median(v):.3g}" for h, v in zip(sz, lo)) + ")")
