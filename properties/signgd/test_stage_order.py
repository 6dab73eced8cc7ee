"""signgd.stage_order: T_1 << T_2 << T_3 << T_4^- < T_4^+ < T_4, decided as an asymptotic
statement (issue 11).

Each '<<' is a ratio of stage times that the analysis sends to infinity along one parameter
(statement sheet, [D] scalings of the reduced dynamics):

* T_2 / T_1 ~ sqrt(m_v): T_1 = Theta(sigma_0 / (eta sqrt(s m_v))) (signgd.t1_closed_form) while
  T_2 = Theta(sigma_0 / (eta sqrt(s))) does not depend on m_v (signgd.t2_vs_t1's pair model);
* T_3 / T_2 ~ sqrt(s) (direction asserted, the rate reported: see the reading): a signal needs ~|alpha(0)| / eta ~ sigma_0 / eta steps to follow its vote,
  a noise pair ~|a(0)| / (eta ||xi||_1) ~ sigma_0 / (eta sqrt(s));
* T_4^- / T_3 ~ 1 / (sigma_0 s sigma_p sqrt(m_k)) (direction asserted, the rate reported): the softmax leaves 1/2 once m_k (eta s sigma_p
  t)^2 ~ 1, i.e. T_4^- ~ 1 / (eta s sigma_p sqrt(m_k)), against T_3 ~ sigma_0 / eta.

Each ratio is measured on a ladder of its parameter (three or four rungs, everything else fixed,
the step in units of a noise inner product's init scale eps = eta sqrt(s) / sigma_0 fixed so that
every rung is in the same discretisation regime; on the s ladder also kappa = sigma_0 s, so that
T_4^- / T_3 stays fixed while T_3 / T_2 moves) and decided by check_trend against the exponent
the analysis implies (1/2 for m_v; for s and sigma_0 the direction), per-seed ratios with
each seed's mean over the rungs removed (the rungs share their seeds) and the within-seed scatter
as the fit error.  T_3 is read as the first step with the majority vote complete.  The rest of the chain is not asymptotic:
T_4^- < T_4^+ holds by the definitions (T_4^- is a step at which a key noise still has the wrong
sign), and T_4^+ <= T_4 too (T_4 also needs the query noise); its strictness is Lemma 4.7's
content (signgd.lemma4_7), not re-audited here.

Simulation: the statement sheet's exact reduced dynamics (sim.signgd.reduced_dynamics), started
from the full model's init (sim.signgd.make_problem / init_params / tracked).  For this data
(orthogonal, pairwise-disjoint training supports, L = 2) it is the full model's SignGD
trajectory seen through the training set, step for step (signgd.reduced_dynamics, holds); it
costs no d-sized matmul, so every rung of a ladder runs in one batched numpy program (per-instance
eta) and a ladder over s up to 120 fits the CI budget.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import Phase, given
from hypothesis import strategies as st

from properties import Claim, audits, examples, loglog_slope, null, register
from properties.settings import size
from properties.signgd.common import RATE_HISTORY, claim_rate, paired_trend
from properties.signgd.runs import (MV_ROWS, condition31_c, condition31_note, SEED, SETTING, STAGES, as_trace, batched,
                                    explicit_draws, reduced_init, run_reduced_until)
from sim import signgd as sim

CID = "signgd.stage_order"
SO_SEEDS_BY_SIZE = {"ci": 12, "ladder": 24, "paper": 24}  # seeds per rung, by the named size
SO_EPS = 0.1  # eta sqrt(s) / sigma_0 on the s and sigma_0 ladders (T_1 of a few steps)
SO_MV_EPS = 0.02  # on the m_v ladder (Stage I long enough to resolve T_1 at m_v = 256)
SO_MV = (4, 16, 64, 256)
SO_S_BY_SIZE = {"ci": (15, 30, 60, 120), "ladder": (15, 30, 60, 120, 240),
                "paper": (15, 30, 60, 120, 240)}  # with sigma_0 = 1e-3 * 30 / s (kappa fixed)


def so_seeds() -> int:
    """Seeds per rung at the named size (`--size`): 12 at ci, 24 on the long ladder."""
    return SO_SEEDS_BY_SIZE[size()]


def so_s() -> tuple:
    """The s ladder at the named size: s = 15..120 at ci; to 240 on the long ladder."""
    return SO_S_BY_SIZE[size()]


SO_SEEDS = SO_SEEDS_BY_SIZE["ci"]
SO_S = SO_S_BY_SIZE["ci"]
SO_SIGMA0 = (5e-4, 1e-3, 2e-3)  # at s = 30
SO_CAP = 12000
SO_CANON = (11, 1.0)  # seed0, sigma_p: the sheet's CPU setting's sigma_p
SO_RUN = st.tuples(SEED, st.floats(1.0, 2.0))
# The three draws both properties read (the ladders are cached per draw): the sheet's sigma_p = 1
# with two seed ranges (seed0 = 113 is the config that showed T_3 saturating at T_4^-) and a
# drawn-looking sigma_p = 1.7
SO_DRAWS = (SO_CANON, (113, 1.0), (500, 1.7))
shared_draws = explicit_draws(SO_DRAWS)
DRAWS = 3  # the shared draws (SO_DRAWS), the only ones under ci
FALSE_FAIL = claim_rate(DRAWS, 3)  # per trend check: three per draw, the claim share over 3 draws
BOOT = 1000


def _init(seeds, s, sigma_p, sigma_0, eps, m_v=MV_ROWS):
    """The full model's init seen through the training set: the reduced dynamics' state."""
    return reduced_init(seeds, s, sigma_p, sigma_0, eps, m_v=m_v)


def _all_aligned(hist):
    ok = (np.sign(hist["a"]) == np.sign(hist["b"])).all((-1, -2, -3))
    return int(np.argmax(ok)) if ok.any() else None


class _AllTurned:
    """Stop rule: the step by which every instance has had its T_4^- (sim.signgd.stage_times'
    detector), evaluated only on the steps added since the last call (the detector at step k
    reads steps k - TURN_LOOKBACK - 1 .. k)."""

    def __init__(self):
        self.first, self.seen = None, 0

    def __call__(self, hist):
        lo = max(self.seen - sim.TURN_LOOKBACK - 1, 0)
        t4 = sim.stage_times(as_trace({k_: v[lo:] for k_, v in hist.items()}, lo))["T4m"]
        self.first = t4 if self.first is None else np.fmin(self.first, t4)
        self.seen = len(hist["alpha"])
        return float(self.first.max()) if np.isfinite(self.first).all() else None


def vote_time(hist):
    """(S,) first step at which the majority vote is complete for every neuron: sgn(alpha_s) =
    sgn(sum_i b_{s,i}) and sgn(beta_s) = -sgn(sum_i a_{s,i}) (Lemma 4.4's event), inf if never."""
    a, b = hist["a"], hist["b"]
    ok = ((np.sign(hist["alpha"]) == np.sign(b.sum(-1)))
          & (np.sign(hist["beta"]) == -np.sign(a.sum(-1)))).all(-1)
    return np.where(ok.any(0), np.argmax(ok, 0).astype(float), np.inf)


@functools.lru_cache(maxsize=4)
def ladders(seed0: int, sigma_p: float, n_seeds: int = SO_SEEDS, s_rungs: tuple = SO_S):
    """Stage times on the three ladders, SO_SEEDS seeds per rung (the same seeds on every rung).
    m_v ladder (and m_v = inf, v(0) = 0, for T_2(inf)): T_1 (sim.signgd.stage_times) and T_2 (sim.signgd.qk_alignment_time: the first step
    from which every pair agrees, the run stopped at 1.5 x the step with all pairs aligned, before
    Stage IV); s and sigma_0 ladders: stage_times' T_2, T_3, T_4^- (one program to the last T_4^-).
    Returns {ladder: dict(sizes, T1/T2/T3/T4m: (rungs, seeds))}."""
    seeds = [seed0 + k for k in range(n_seeds)]
    S = n_seeds
    out = {}
    st0 = batched([_init(seeds, 30, sigma_p, 1e-3, SO_MV_EPS, m_v=m) for m in SO_MV + (0,)])
    h = run_reduced_until(st0, _all_aligned, 0.5, SO_CAP)
    G = len(SO_MV) + 1
    T1 = sim.stage_times(as_trace(h))["T1"].reshape(G, S)
    T2 = sim.qk_alignment_time(as_trace(h)).reshape(G, S)
    out["m_v"] = dict(sizes=SO_MV, T1=T1[:-1], T2=T2[:-1], T2inf=T2[-1])
    cfg = [(s, 1e-3 * 30 / s) for s in s_rungs] + [(30, s0) for s0 in SO_SIGMA0]
    st1 = batched([_init(seeds, s, sigma_p, s0, SO_EPS) for s, s0 in cfg])
    h = run_reduced_until(st1, _AllTurned(), 0.0, SO_CAP, chunk=1000)
    T = {k_: v.reshape(len(cfg), S) for k_, v in sim.stage_times(as_trace(h)).items()}
    T["T3v"] = vote_time(h).reshape(len(cfg), S)
    k = len(s_rungs)
    out["s"] = dict(sizes=s_rungs, **{k_: T[k_][:k] for k_ in ("T1", "T2", "T3", "T3v", "T4m")})
    out["sigma_0"] = dict(sizes=SO_SIGMA0, **{k_: T[k_][k:] for k_ in ("T1", "T2", "T3", "T3v",
                                                                       "T4m")})
    return out


def sized_ladders(seed0, sigma_p):
    """ladders at the named size (`--size`): ci 12 seeds, s to 120; ladder 24 seeds, s to 240."""
    return ladders(seed0, sigma_p, so_seeds(), so_s())


# --------------------------------------------------------------------------------------------
# Alternatives
# --------------------------------------------------------------------------------------------
def stage_exponents():
    """The directions in which T_2 / T_1 (along m_v), T_3 / T_2 (along s) and T_4^- / T_3 (along
    sigma_0) grow (their [D] rates m_v^{1/2}, s^{1/2}, sigma_0^{-1} are reported, not asserted:
    see the reading); the trends' own rivals are the exponents 0 and 1 (m_v) / -2 (sigma_0)."""
    return {"m_v": "increasing", "s": "increasing", "sigma_0": "decreasing"}


TREND_RIVALS = {"m_v": (0.0, 1.0), "s": (0.0, 1.0), "sigma_0": (0.0, -2.0)}


REFERENCE = {"m_v": 16, "s": 30, "sigma_0": 1e-3}


def ladders_sizes_off(seed0, sigma_p):
    """Null: the ladder's parameter does not reach the dynamics: every rung is the reference
    rung's run (m_v = 16, s = 30, sigma_0 = 1e-3; the same seeds)."""
    L = sized_ladders(seed0, sigma_p)
    out = {}
    for k_, m in L.items():
        i = list(m["sizes"]).index(REFERENCE[k_])
        out[k_] = {f: (np.broadcast_to(v[i], v.shape).copy() if f.startswith("T") and f != "T2inf"
                       else v) for f, v in m.items()}
    return out


def so_draw_note(cfg):
    """Condition 3.1's [D] clause over the three ladders of a draw (seed0, sigma_p): the m_v
    ladder at s = 30, sigma_0 = 1e-3; the s ladder at sigma_0 s = 0.03; the sigma_0 ladder at
    s = 30."""
    sp = float(cfg[1])
    cs = ([condition31_c(30, sp, 1e-3), condition31_c(1.0, sp, 0.03)]
          + [condition31_c(30, sp, s0) for s0 in SO_SIGMA0])
    return condition31_note(cs, " over its three ladders")


register(Claim(
    draw_note=so_draw_note,
    id=CID, where="Section 4 (Stages I-IV), Lemmas 4.1-4.8",
    statement="T_1 << T_2 << T_3 << T_4^- < T_4^+ < T_4.",
    assumptions=SETTING.replace("n = 8, m_k = 8, m_v = 16", "n = 8, m_k = 8") +
                f"; ladders ({SO_SEEDS} seeds per rung, the same seeds on every rung, drawn "
                f"seed0 and sigma_p in [1, 2]): m_v in {SO_MV} at s = 30, sigma_0 = 1e-3, "
                f"eps = eta sqrt(s) / sigma_0 = {SO_MV_EPS}; s in {SO_S} with sigma_0 = 0.03 / s "
                f"at eps = {SO_EPS}; sigma_0 in {SO_SIGMA0} at s = 30, eps = {SO_EPS} (the CI size; "
                f"--size ladder: s in {SO_S_BY_SIZE['ladder']}, {SO_SEEDS_BY_SIZE['ladder']} "
                "seeds per rung)",
    prediction="[D] T_2 / T_1 ~ m_v^{1/2} along m_v (exponent asserted); T_3 / T_2 growing along "
               "s ([D] rate s^{1/2}) and T_4^- / T_3 growing as sigma_0 falls ([D] rate "
               "sigma_0^{-1} ~ 1 / (sigma_0 s sigma_p sqrt(m_k))): directions asserted, rates "
               "reported; T_4^- < T_4^+ <= T_4 by the definitions",
    simulation="sim.signgd.reduced_dynamics (exact for this data: signgd.reduced_dynamics) from "
               "the full model's init, every rung of a ladder in one batched program; stage "
               "times by sim.signgd.stage_times (T_2 of the m_v ladder by "
               "sim.signgd.qk_alignment_time, the run stopped at 1.5 x the step with all pairs "
               "aligned; the s and sigma_0 ladders run to the last seed's T_4^-)",
    metric="fitted log-log slope of each ratio along its ladder, per-seed ratios with each "
           "seed's mean over the rungs removed (paired rungs); T_3 = the first step at which "
           "the majority vote is complete (Lemma 4.4's event), or T_4^- if that comes first",
    tolerance="check_trend: each ratio's slope beyond t x its SE in the stated direction "
              "(within-seed residuals, S (rungs - 1) - 1 dof, false-fail "
              f"{FALSE_FAIL:.3g} per ratio and draw: the claim share 1e-4 over {DRAWS} draws x 3 "
              "ratios), else inconclusive; the trends' rivals (exponents 0 and 1 for m_v and s, "
              "0 and -2 for sigma_0) rejected where outside the slope's band; no allowance",
    reading=STAGES + ". The paper's own T_1 and T_3 were lost from the text (Section 4.3: "
            "'Recall [lost]. Let [lost], we call Stage III'; signgd.lemma4_1 for T_1): these "
            "are the suite's event readings of them. '<<' is asymptotic: each ratio must grow along the parameter the "
            "analysis sends it to infinity with, at the exponent it implies (asymptotic "
            "policy; one size decides nothing: at the CPU size, eps = 0.33, T_3 < T_2 in a "
            "share of seeds, which the old per-seed reading counted as a refutation). eps is "
            "held fixed on each ladder (the analysis's eta -> 0 limit at one discretisation), "
            "and on the s ladder also kappa = sigma_0 s (Condition 3.1's sigma_0 s sigma_p "
            "sqrt(m_k) << 1), else T_4^- / T_3 ~ 1/s would close Stage III as s grows. T_3 is "
            "the first step with the vote complete, not stage_times' 'from which the vote holds "
            "up to T_4^-': once s_21 starts to decay, before T_4^- (Lemma 4.5), the key signal "
            "follows -sgn(alpha_s) rather than -sgn(sum_i a_{s,i}), which differ for a neuron "
            "whose sums of query and key noise differ in sign, so that definition puts T_3 at "
            "T_4^- in up to half the seeds at every sigma_0. Found: T_1 << T_2 holds with "
            "exponent ~0.4-0.45 (the [D] 1/2 reported, not asserted: issue 20); T_4^- / "
            "T_3 grows as sigma_0 falls, but in ~20% of seeds at sigma_0 = 5e-4 the vote never "
            "completes before T_4^- (one neuron's signals never both follow their votes), which "
            "flattens the rate below sigma_0^-1 (fitted -0.6 to -0.8); T_3 / T_2 along s shows "
            "no significant trend at s = 15..120 (fitted exponents ~0.05-0.15 +- 0.8: T_2 "
            "grows with s too, from pairs chattering around zero, and T_3's spread across seeds "
            "is wide), so T_2 << T_3 is inconclusive: the claim is not-audited. Why T_2 grows "
            "with s (explorations after both looks, seeds no draw uses; no ladder changed): at "
            "eps = 0.1 (seeds 80000-80023, s = 15..480) T_2 grows along s as fast as T_3 "
            "(per-seed log-log slopes 0.37 +- 0.04 and 0.36 +- 0.07 SE; T_3 / T_2 -0.005 +- "
            "0.09), carried by a few pairs (0, 0, 12, 24 of 1536 at s = 15, 30, 120, 480 align "
            "after step 50, while 99% align by step 28-39 up to s = 120) whose query or key noise "
            "oscillates around zero, its sign flipping at most steps, for up to ~300 steps: a "
            "discrete-step effect of SignGD at a zero crossing that T_2's 'every pair' reading "
            "(the paper's E.5: 'for all neurons and samples') picks up. At eps = 0.03 (seeds "
            "81000-81015) T_2 is flat along s (0.085 +- 0.056) and T_3 / T_2 grows (0.33 +- "
            "0.11, t ~ 3: below this claim's critical value); at eps = 0.02 (seeds "
            "82000-82011) stage_times' T_4^- fires at Stage I reversals and T_3 = T_4^- in 8-10 "
            "of 12 seeds at s = 15, 30, so a smaller step is not a clean ladder either. A third "
            "design on this trend would be a third look at a question two designs left open; "
            "none was run. T_4^- < "
            "T_4^+ <= T_4 hold by the definitions (a wrong-sign key noise exists at T_4^-; T_4 "
            "also needs the query noise); the strictness of T_4^+ < T_4 is signgd.lemma4_7's.",
    history=("2026-12-03: migrated from a per-seed reading ('<<' as a factor >= 2 at the CPU "
             "size; printed form failing, corrected form max(T_2, T_3) <= T_4^- true by the "
             "definitions) to the asymptotic policy: three ladders, trends with exponents. The "
             "ladders, eps and kappa were fixed before the trend checks were run.",
             "2026-12-03: after the first runs, T_3 read as the first step with the vote "
             "complete (was stage_times' T_3, 'the vote holds from T_3 up to T_4^-'): a drawn "
             "config, (113, 1.0), failed the sigma_0 trend (slope -0.50 +- 0.40 against -1) "
             "because that T_3 equals T_4^- in 6 of 12 seeds at every sigma_0 (the vote breaks "
             "as s_21 decays just before T_4^-). At the same time T_3 / T_2 along s, which with "
             "that T_3 'passed' exponent 1/2 only through the saturation at s = 120, is now "
             "asserted as a direction (its measured exponent is below 1/2), its rate reported. "
             "Then T_3 is capped at T_4^- (the vote never completes before T_4^- in 2-3 of 12 "
             "seeds at sigma_0 = 5e-4, T_3 = inf otherwise) and T_4^- / T_3 along sigma_0 too is "
             "asserted as a direction, its rate reported (fitted -0.58 +- 0.39 against -1 on "
             "(113, 1.0)); the rival softmax_quadratic (an exponent -2) is dropped with it. "
             "Ladders, seeds, eps, false-fail unchanged.",
             "2026-12-04 (issue 20): T_2 / T_1 along m_v decided as a direction (increasing) with "
             "the trend rivals 0 and 1, instead of exponent 1/2 with mv_allowance (an allowance "
             "computed from the run being decided, 0.24; 1/4 and 1/3 passed it); the rivals "
             "no_separation / mean_value_linear became the trend rivals 0 / 1 (and 0 / -2 for "
             "sigma_0, 0 / 1 for s). A longer s ladder (s to 240, 24 seeds per rung) runs under "
             "--size ladder (fixed before it was run; result 2026-12-04: T_3 / T_2 along s = "
             "15..240 with 24 seeds still inconclusive, slopes -0.15, 0.07, 0.08 +- 0.36-0.51 on "
             "the three draws; T_2 / T_1 0.38-0.40 +- 0.03-0.05, T_4^- / T_3 -0.72 to -1.05, both "
             "decided). " + RATE_HISTORY + ": 1e-4 -> 1.1e-5 per "
             "trend check.",),
    asymptotic="m_v, s, sigma_0 (T_2/T_1 ~ m_v^1/2, T_3/T_2 ~ s^1/2, T_4^-/T_3 ~ sigma_0^-1)",
    plot=lambda path: _plot_stage_order(path),
    alternatives=(
        null("sizes_off", ladders_sizes_off, "the ladder's parameter switched off: every rung "
             "is the reference rung's run", replaces="ladders"),
    ),
))


def _ratio_trend(L, ex, k_, num, den, name):
    m = L[k_]
    T = dict(m, T3=np.minimum(m["T3v"], m["T4m"]))  # Stage III ends by T_4^- at the latest
    R = T[num] / T[den]
    rate = loglog_slope(m["sizes"], np.exp(np.log(R).mean(1)))
    paired_trend(CID, m["sizes"], R, direction=ex[k_], false_fail=FALSE_FAIL,
                 rivals=TREND_RIVALS[k_], name=f"{name} along {k_}",
                 what=f"{name} along {k_} (log-log slope of the geometric means {rate:.3g}; "
                      f"[D] rate {'1/2' if k_ == 's' else '-1'}; T_3 = T_4^- in "
                      f"{int((m['T3v'] >= m['T4m']).sum())} of {m['T3v'].size} seed-rungs)")


@audits(CID)
@examples(1, phases=[Phase.explicit])  # the shared draws only: both properties read their ladders
@shared_draws
@given(cfg=SO_RUN)
def test_signgd_stage_order(world, cfg):
    """T_1 << T_2 (along m_v) and T_3 << T_4^- (along sigma_0), directions with trend rivals."""
    L = world.simulation(sized_ladders, "ladders", pure=True)(*cfg)
    ex = world.prediction(stage_exponents, "exponents")()
    m = L["m_v"]
    paired_trend(CID, m["sizes"], m["T2"] / np.maximum(m["T1"], 1), direction=ex["m_v"],
                 rivals=TREND_RIVALS["m_v"], false_fail=FALSE_FAIL, name="T_2 / T_1 along m_v",
                 what=f"T_2 / T_1 along m_v (log-log slope of the geometric means "
                      f"{loglog_slope(m['sizes'], np.exp(np.log(m['T2'] / np.maximum(m['T1'], 1)).mean(1))):.3g}; "
                      "[D] rate 1/2)")
    _ratio_trend(L, ex, "sigma_0", "T4m", "T3", "T_4^- / T_3")


@audits(CID)
@examples(1, phases=[Phase.explicit])
@shared_draws
@given(cfg=SO_RUN)
def test_signgd_stage_order_t2_t3(cfg):
    """T_2 << T_3 along s (direction): inconclusive at s = 15..120 (see the reading).  No
    alternatives: a draw that decides nothing cannot reject one (the other property carries
    them)."""
    _ratio_trend(sized_ladders(*cfg), stage_exponents(), "s", "T3", "T2", "T_3 / T_2")


def _plot_stage_order(path):
    """The three ladders of the canonical draw: per-seed ratios (geometric mean, IQR band), the
    fitted log-log slope and the [D] rate."""
    from properties import figstyle

    L = ladders(*SO_CANON)
    panels = (("m_v", "value width m_v", "T2", "T1", "T_2 / T_1", 0.5),
              ("s", "noise support size s", "T3", "T2", "T_3 / T_2", 0.5),
              ("sigma_0", "init scale sigma_0", "T4m", "T3", "T_4^- / T_3", -1.0))
    with figstyle.figure(path, 1, 3, figsize=(14, 4.2)) as (fig, ax):
        for a_, (k_, xlabel, num, den, name, rate) in zip(ax, panels):
            m = L[k_]
            T = dict(m, T1=np.maximum(m["T1"], 1))
            if "T3v" in m:
                T["T3"] = np.minimum(m["T3v"], m["T4m"])
            R = T[num] / T[den]
            x = np.array(m["sizes"], float)
            gm = np.exp(np.log(R).mean(1))
            slope = loglog_slope(x, gm)
            a_.plot(x, gm, "o-", label=f"geometric mean over seeds (fitted slope {slope:.2f})")
            a_.fill_between(x, np.quantile(R, 0.25, 1), np.quantile(R, 0.75, 1), alpha=0.3,
                            label="interquartile range over seeds")
            a_.plot(x, gm[0] * (x / x[0]) ** rate, "k--", lw=0.8,
                    label=f"the sheet's rate [D]: slope {rate:g}")
            a_.set_xscale("log"), a_.set_yscale("log")
            figstyle.log_ticks(a_.xaxis, x)
            a_.yaxis.set_minor_formatter(__import__("matplotlib.ticker").ticker.NullFormatter())
            a_.set(xlabel=xlabel, ylabel=f"{name} (per seed)",
                   title=f"{name} along {k_} (the sheet: log-log slope {rate:g})")
            a_.legend(fontsize=7)
        fig.suptitle(f"signgd.stage_order: ladders of draw seed0, sigma_p = {SO_CANON} "
                     f"({SO_SEEDS} seeds per rung; T_1: value learned, T_2: noise signs aligned, "
                     "T_3: first step with the vote complete, capped at T_4^-; T_4^-: first "
                     "wrong-sign key noise turns)", fontsize=8)
