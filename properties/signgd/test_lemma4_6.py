"""signgd.lemma4_6: after T_4^-, every key noise whose sign differs from its neuron's query signal
turns and aligns with it (by T_4^+).  Refuted at CPU size in the reading with content.

Runs: the stage runs (runs.stage_run: 1.25 t*, t* the first step with every seed's noise aligned) on
the shared Theorem 3.2 draws (runs.T32_EXAMPLES); per-pair events by common.stage4_pairs (the
same events as signgd.lemma4_7).

* The literal reading holds by construction and is not evidence: a wrong-sign key noise exists
  at T_4^- and T_4^- is the first turn (definition), the run stops 0.25 t* after every noise is
  aligned (stop rule), and T_4^+ is the step from which every key noise is aligned (definition).
  The old end-of-run checks (T_4^- < T_4^+ <= end; every key noise aligned at the end) were these
  facts.  Property `literal` still checks them (a run that hit the cap fails) and runs the
  alternatives: the rival 'query noise' (the statement made of the query noise, rejected
  wherever the query noise completes after T_4^+, Lemma 4.7) and the null 'attention frozen'
  (W_Q, W_K untrained: no key noise turns).
* The reading with content (the paper's Lemma 4.6 (1): the wrong-sign key noise moves towards
  sgn alpha from its turn until it is aligned): from its turn on, every wrong-sign key noise
  moves towards sgn alpha at every step until it has sgn alpha for good.  Fails at CPU size
  (strict expected failure): in the canonical run 2 of 164 wrong-sign key noises move away
  again, one after 444 steps towards alpha (it stalls at |b| ~ 0.15-0.23, from 0.79, for ~300
  steps: the sample's s_21 recovers from 0.006 to 0.010 while its wrong-sign query noise a keeps
  growing, and the query-noise term s_21 s_22 a of the key-noise gradient balances the signal
  term s_11 s_12 alpha), one because alpha_s
  itself changes sign after T_4^- (a late majority vote, Lemma 4.4); at the fast corner 2 of 76,
  both of one neuron whose key noises reverse and whose alpha_s then flips to their side.
* Issue 20: the lemma is a high-probability statement under Condition 3.1 (s grows with d), so
  (ii) is decided on a ladder in s: the per-seed fraction of wrong-sign key noises that move away
  again after their turn, on the exact reduced dynamics (sim.signgd.reduced_dynamics, cheap) from
  the full model's init, s in runs.S_LADDER with sigma_0 s and eps = eta sqrt(s) / sigma_0 held at the
  sheet's CPU setting's values (s = 30: sigma_0 = 1e-3, eta = 6e-5 exactly), and must fall along
  s (check_trend, seed-clustered: per-seed slopes, Student t).  The full simulator is the
  cross-check at the s = 30 rung of the canonical draw (the same seeds as runs.stage_run: the
  same counts, 2 of 164).
* The ladder in m_k (issue 20's other direction): s = 30, m_k in runs.MK_LADDER with c =
  sigma_0 s sigma_p sqrt(m_k) held (sigma_0 x sqrt(8 / m_k)), on seeds no earlier run used; the
  same failing fraction must fall along m_k.  Both ladders are properties of the printed form.
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given

from properties import (Claim, attach_plot, audits, check_at_least, check_trend, null,
                        register, rival)
from properties.settings import size
from properties.signgd.common import claim_rate, exact
from properties.signgd.figures import plot_lemma4_6
from properties.signgd.runs import (CANON, H, RANGE, SETTING, STAGES, STAGE_RUN, S_LADDER_DRAWS,
                                    S_LADDER_SEED_OFFSET, attention_frozen_null, ci_draws,
                                    ladder_draws, shared_draws, stage4_events, stage4_ladder,
                                    stage4_run_events, signgd_draw_note, mk_ladder)

CID = "signgd.lemma4_6"
EXACT = exact("exact inequality between integer counts / step numbers (deterministic events of "
              "the run)")

# A neighbouring reading of 'with high probability under Condition 3.1', set apart from the
# verdict's basis (both ladders) and named after the basis had been run (report: said beside a
# not-audited verdict, never the verdict)
MK_READING = "'with high probability' along m_k alone (the ladder inside Condition 3.1)"

# the rate of each trend per draw: the claim share over 3 draws x 2 ladders (s and m_k)
TREND_FF = claim_rate(2 * len(S_LADDER_DRAWS))


# Null: W_Q, W_K not trained (alpha, a, b keep their init values); same horizon and T_4^-
attention_frozen = attention_frozen_null(stage4_run_events, ("alpha", "a", "b"))


def key_noise():
    """The lemma: the key noise b is what turns and aligns by T_4^+."""
    return "b"


def query_noise():
    """Rival: the same statement made of the query noise a (Lemma 4.7's roles)."""
    return "a"


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.6 (Stage IV), Section 4.1; Fig. 1 (d)",
    statement="After T_4^-, every key noise whose sign differs from the query signal turns and "
              "aligns with it (by T_4^+).",
    assumptions=SETTING + "; " + RANGE + "; draws: runs.T32_EXAMPLES (the sheet's CPU setting, "
                "8 seeds, and the slow and fast corners, 4 seeds); dev / thorough add drawn ones "
                "(4 seeds)",
    prediction="every key noise b_(s,i) with sgn b != sgn alpha_s at T_4^- (i) turns: moves "
               "towards sgn alpha at some step >= T_4^-; (ii) from its turn on moves towards "
               "sgn alpha at every step until it has sgn alpha for good; (iii) has sgn alpha from "
               "T_4^+ on, T_4^+ <= end of run",
    simulation=H + "; T_4^- by sim.signgd.stage_times; per-pair turn and alignment steps by "
               "properties.signgd.common.stage4_pairs",
    metric="(i) number of wrong-sign key noises at T_4^- that never turn; (ii) number of them "
           "that move away from sgn alpha between their turn and their alignment; (iii) max over "
           "them of (alignment step - T_4^+), and T_4^+ - last step",
    tolerance="exact: integer counts and event times of a deterministic run (0 / <= 0)",
    reason="(ii) fails at CPU size: in the canonical run 2 of 164 wrong-sign key noises move away "
           "from sgn alpha after their turn (one stalls at |b| ~ 0.2 for ~300 steps after "
           "moving towards alpha for 444: the sample's s_21 recovers, 0.006 -> 0.010, its "
           "wrong-sign query noise keeps growing, and the query-noise term s_21 s_22 a of the "
           "key-noise gradient balances the signal term s_11 s_12 alpha; one follows "
           "alpha_s, whose sign changes after T_4^- in a late majority vote); at the fast corner "
           "(cfg (777, 4, 30, 2.0, 7e-4, 7e-5)) 2 of 76, both of one neuron: after 99-109 steps "
           "towards alpha its key noises reverse for 16-18 steps and then alpha_s flips to their "
           "side, so they 'align' by the signal's flip, not by a turn. (i) and (iii) hold by "
           "construction and are not evidence.",
    reading="(i) + (iii) are the literal reading, true by the stop rule and the definitions of "
            "T_4^- and T_4^+ (a simulator/definition consistency check). (ii) is the reading with "
            "content, the paper's Lemma 4.6 (1) (its formula was lost: the key noise's update "
            "has the sign of alpha from T_4^- on) per pair from its own turn. Alternatives of "
            "the literal property: rival 'query noise' (Lemma 4.7's roles), null 'attention "
            "frozen'. (ii) is asymptotic in the directions Condition 3.1 grows: along s (m_k = 8) "
            "and along m_k (s = 30, c held); each ladder is a property of the printed form, so "
            "the claim is decided only where both trends are. Explorations after the m_k ladder "
            "(seeds no audit draw uses; no ladder, rate or rule changed): the failing key noises "
            "are sustained reversals (they move away for 2 to ~7000 steps after their turn), "
            "not one-step chattering; at s = 30, m_k = 8 the failing fraction does not fall as "
            "the step does (seeds 91000-91047, eps = 0.33, 0.16, 0.082, 0.041 with T_4^-'s "
            "lookback in the analysis's time units, sim.signgd.turn_lookback: 9 of 932, 15 of "
            "1005, 17 of 1033, 18 of 1046), nor along s at m_k = 4 (seeds 92000-92047, c held, "
            "s = 30, 60, 120, 240: 30 of 463, 31 of 511, 31 of 491, 28 of 482; per-seed slope "
            "-0.001 +- 0.008), while along m_k it vanishes (0 of ~3700-7900 at m_k >= 16). The "
            "reversals are carried by the key width m_k, the sum over neurons in s_21 (one "
            "neuron's query-noise term lets s_21 recover), not by s or the step: more seeds on "
            "the s ladder are not expected to decide it. Neighbouring reading (set apart, "
            "said beside the verdict): " + MK_READING + ". " + STAGES,
    asymptotic="s and m_k (the noise sparsity and the key width, which grow with d under "
               "Condition 3.1: the failing fraction of (ii) must vanish along each)",
    paper_setting="Lemma 4.6 holds under Condition 3.1 (asymptotic, no numbers), and Fig. 1 (d)'s "
                  "run (Table 3 row (a), App. B.1) lost its numbers in extraction; the sheet's CPU "
                  "setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) and the "
                  "sweep's slow and fast corners (s in [20, 30], sigma_p in [1, 2], sigma_0 in "
                  "[7e-4, 1.3e-3], eta in [5e-5, 7e-5]) stand in, with ladders in s (30..120) and "
                  "m_k (2..16) at ci.",
    alternatives=(
        rival("query_noise", query_noise, "the statement made of the query noise (Lemma 4.7's "
              "roles): wrong-sign query noise turns and aligns by T_4^+", replaces="who"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: alpha, a, b keep their "
             "init values (same horizon and T_4^-)", replaces="run"),
    ),
))
attach_plot(CID, plot_lemma4_6)


@audits(CID)
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_6_literal(world, cfg):
    """The literal reading: (i) every wrong-sign key noise at T_4^- turns after T_4^-; (iii) it
    has sgn alpha from T_4^+ on, and T_4^+ is within the run.  By construction (stop rule,
    definitions of T_4^- and T_4^+) for the key noise; not for the rival's query noise."""
    ev = world.simulation(stage4_events, "run", pure=True)(cfg)
    x = world.prediction(key_noise, "who")()
    name = {"a": "query", "b": "key"}[x]
    wrong = ev["wrong_" + x]
    never = int((wrong & ~np.isfinite(ev["turn_" + x])).sum())
    check_at_least(CID, -float(never), EXACT,
                   what=f"(i) {never} of {int(wrong.sum())} wrong-sign {name} noises at T_4^- never "
                        "turn")
    with np.errstate(invalid="ignore"):
        late = float(np.where(wrong, ev["align_" + x] - ev["Tk"][:, None, None], -np.inf).max())
    check_at_least(CID, -late if not np.isnan(late) else -np.inf, EXACT,
                   what=f"(iii) wrong-sign {name} noise aligned by T_4^+ (worst: {late:g} steps "
                        "after it)")
    check_at_least(CID, float(ev["end"] - ev["Tk"].max()), EXACT,
                   what="(iii) T_4^+ within the run (by construction of the stop rule)")


@audits(CID)
@ladder_draws
def test_signgd_lemma4_6_ladder(cfg):
    """The paper's Lemma 4.6 (1) read as: from its turn on, every wrong-sign key noise moves
    towards sgn alpha at every step until it is aligned for good -- with high probability, so the
    per-seed fraction of wrong-sign key noises that move away again must fall along s."""
    seed0, sigma_p = cfg
    L = stage4_ladder(seed0, sigma_p)
    if ((seed0, sigma_p) == (CANON[0], CANON[3]) and L["sizes"][0] == 30
            and S_LADDER_SEED_OFFSET[size()] == 0):
        # cross-check at one rung: the full simulator's stage run on the same seeds (8 of them;
        # under --size ladder the ladder's seeds are others, S_LADDER_SEED_OFFSET)
        ev = stage4_events(CANON)
        n = CANON[1]
        full = (int(ev["wrong_b"].sum()), int((ev["wrong_b"] & (ev["back_b"] > 0)).sum()))
        red = (int(L["wrong"][0, :n].sum()), int(L["back"][0, :n].sum()))
        assert full == red, f"reduced dynamics {red} != full simulator {full} at s = 30"
    frac = L["back"] / np.maximum(L["wrong"], 1)  # (rungs, seeds)
    desc = ", ".join(f"s = {s_}: {int(b_.sum())} of {int(w_.sum())}"
                     for s_, b_, w_ in zip(L["sizes"], L["back"], L["wrong"]))
    check_trend(CID, L["sizes"], frac.T, direction="decreasing", log_values=False,
                false_fail=TREND_FF, rivals=(0.0,), name="(ii) failing fraction along s",
                what=f"(ii) fraction of wrong-sign key noises moving away after their turn ({desc})")


def _mk_trend(cfg):
    seed0, sigma_p = cfg
    L = mk_ladder(seed0, sigma_p)
    frac = L["back"] / np.maximum(L["wrong"], 1)  # (rungs, seeds)
    desc = ", ".join(f"m_k = {m_:g}: {int(b_.sum())} of {int(w_.sum())}"
                     for m_, b_, w_ in zip(L["sizes"], L["back"], L["wrong"]))
    check_trend(CID, L["sizes"], frac.T, direction="decreasing", log_values=False,
                false_fail=TREND_FF, rivals=(0.0,), name="(ii) failing fraction along m_k",
                what=f"(ii) fraction of wrong-sign key noises moving away after their turn, along "
                     f"m_k at s = 30 ({desc})")


@pytest.mark.xdist_group("signgd-lemma4_6-mk")
@audits(CID)
@ladder_draws
def test_signgd_lemma4_6_mk_ladder(cfg):
    """Lemma 4.6 (1) read as the s ladder reads it, along the key width m_k (Condition 3.1: m_k =
    Omega(polylog d)) at s = 30 with c = sigma_0 s sigma_p sqrt(m_k) held: the per-seed fraction
    of wrong-sign key noises that move away from sgn alpha after their turn must fall."""
    _mk_trend(cfg)


@pytest.mark.xdist_group("signgd-lemma4_6-mk")
@audits(CID, reading=MK_READING)
@ladder_draws
def test_signgd_lemma4_6_inside_condition(cfg):
    """The neighbouring reading: 'with high probability' decided along m_k alone, the ladder that
    stays inside Condition 3.1 (the s ladder at fixed m_k leaves m_k = Omega(polylog d) as d
    grows).  The same trend as test_signgd_lemma4_6_mk_ladder on the same (cached) ladder; set
    apart from the verdict's basis, which asks both ladders: it can only be said beside it."""
    _mk_trend(cfg)
