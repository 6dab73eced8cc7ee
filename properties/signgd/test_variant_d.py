"""signgd.variant_d: Appendix B.2 / Table 3 row (d), Fig. 5: 'our theoretical results hold
empirically' for non-orthogonal non-sparse (s = 200, d = 241) data.

Table 3's numbers were lost (the sheet keeps only the row names), so what is read is the printed
outcome, the same for every row: the theory's statements hold on this data.  The claim's
statement lists the items re-checked; the property encodes each with the orthogonal-sparse
properties' levels (common.VARIANT_OUTCOME), on runs.variant_run (2 seeds per draw, logged
every step to 1.25 t*).

What is automatic and left out of the checks: the stop rule ends the run at 1.25 t*, t* the first
step with every noise aligned with sgn alpha, so 'every key and query noise with sgn alpha at the
end (T_4 reached)' holds by construction of the horizon (not asserted, reported as such); of the
stage order, max(T_2, T_3) <= T_4^- (T_2, T_3 are defined with 'or t >= T_4^-') and T_4^- <
T_4^+ (a wrong-sign key noise at T_4^-, none from T_4^+ on) are definitions.  What could fail and
is checked: Theorem 3.2 (1)-(4) at the end, Lemma 4.1's Theta constant, T_1 <= min(T_2, T_3) / 2,
T_4^+ < T_4 (Lemma 4.7: query noise after key noise), Lemma 4.5.
"""

from __future__ import annotations

from hypothesis import example, given

from properties import Claim, Threshold, audits, examples, null, register, rival
from properties.signgd.common import VARIANT_OUTCOME, check_intervals, variant_stats
from properties.signgd.runs import (_SETTING, OPT_SEEDS, SEED, VARIANTS, variant_attention_frozen,
                                    variant_run, variant_untrained)
from theory import signgd as th

CID = "signgd.variant_d"
NAME = "d"
EXACT = Threshold(0.0, "exact inequality at the orthogonal-sparse properties' level "
                       "(deterministic statistic of the run)", "derived", 0.0)
_DESC = "non-orthogonal non-sparse (s = 200, d = 241)"
_ITEMS = ("Thm 3.2 (1) L_S(end) <= 1e-3; (2) L_D(end) >= 0.1; (3) V_i / |V_mu| >= 2; "
          "(4) s_11, s_21 <= 0.05; Lemma 4.6/4.8 every key and query noise with sgn alpha at "
          "the end (T_4 reached); stage by stage: Lemma 4.1 (1) V_i(t) - V_i(0) = "
          "Theta(t eta s sigma_p) (the pooled ratio to 2 sqrt(2/pi) t eta s sigma_p in "
          "[0.3, 2], the bracket signgd.lemma4_3 uses for a Theta constant); the corrected "
          "stage order of signgd.stage_order; Lemma 4.5 (s_21 decays at least exponentially "
          "up to T_4^-, |s_11 - 1/2| <= 0.1 there); Lemmas 4.6/4.7 (T_4^- < T_4^+ < T_4)")


def run(seed):
    return variant_run(NAME, seed)


def untrained(seed):
    """Null: training off (every quantity at init, no stage event)."""
    return variant_untrained(NAME, seed)


def attention_frozen(seed):
    """Null: W_Q, W_K not trained (the softmax outputs keep their init values)."""
    return variant_attention_frozen(NAME, seed)


def sqrt_s_slope(eta, s, sigma_p):
    """Rival: Lemma 4.1's rate with ||xi||_2 ~ sqrt(s) sigma_p in place of ||xi||_1 ~ s sigma_p."""
    return th.lemma41_slope(eta, s, sigma_p) / s ** 0.5


def no_s_slope(eta, s, sigma_p):
    """Rival: Lemma 4.1's rate with the factor s dropped (Theta(t eta sigma_p))."""
    return th.lemma41_slope(eta, s, sigma_p) / s


register(Claim(
    id=CID, where="Appendix B.2, Table 3 row (d), Fig. 5",
    statement=f"'Our theoretical results hold empirically' for {_DESC} data. Re-checked: "
              + _ITEMS + ".",
    assumptions=_SETTING.replace("orthogonal data (mu = e_1, noise supports in [d] minus {1}), "
                                 "pairwise-disjoint training supports (d = 1 + n s + 120), "
                                 "test supports apart", _DESC + ", supports drawn "
                                 "independently per sample (overlapping)") +
                f"; sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5; {OPT_SEEDS} seeds per draw (seeds "
                "11 and 12345 explicit examples); horizon 1.25 t*",
    prediction="each listed item that is not automatic, at the orthogonal-sparse properties' "
               "levels: L_S(end) <= 1e-3, L_D(end) >= 0.1, V_i / |V_mu| >= 2, s_11, s_21 <= 0.05 "
               "(end); Lemma 4.1 constant in [0.3, 2]; T_1 <= min(T_2, T_3) / 2 and T_4^+ < T_4 "
               "in every seed; Lemma 4.5 fitted exponent >= 1, |s_11 - 1/2| <= 0.1 up to T_4^-",
    simulation=f"runs.variant_run: sim.signgd.make_problem(orthogonal={VARIANTS[NAME][0]}, "
               "disjoint=False), sim.signgd.train logged every step; sim.signgd.stage_times",
    metric="the listed items' extremes over seeds, samples and pairs (common.variant_stats)",
    tolerance="exact inequalities at the levels of signgd.theorem3_2.item1-4, lemma4_5 and the "
              "Theta bracket [0.3, 2] (deterministic statistics of the run)",
    reading="Table 3's numbers were lost: what is read is the printed outcome, the same for every "
            "row ('our theoretical results hold empirically'); the variants keep the CPU setting "
            "and change only orthogonality / sparsity. The exact claims (step magnitudes, the "
            "reduced dynamics, Lemma 4.1's constant 2 sqrt(2/pi)) do not apply (noise increments "
            "are sums of signs over shared coordinates). Automatic, not asserted: the end "
            "alignment of every noise (the stop rule ends the run after it) and the definitional "
            "parts of the stage order (max(T_2, T_3) <= T_4^- < T_4^+). Measured (seeds 11-14, "
            "earlier session): Lemma 4.1 constant ~0.38; T_2 ~ T_3 ~ T_4^-; aligned fraction at T_4^- - 1: 0.97-0.98 (Table 2's 98% is borderline). Alternatives: nulls training off and attention frozen; "
            "rivals Lemma 4.1 with sqrt(s) (an l2 rate) and without s.",
    audit_gap="Lemma 4.2 / Table 2 (measured, see the reading; not asserted per variant), "
              "Lemma 4.3 and Lemma 4.4 are not re-checked per variant; the end alignment "
              "(Lemmas 4.6/4.8) is automatic under the stop rule.",
    history=("2026-12-03 (issue 11, migration): the end-alignment check (automatic under the "
             "stop rule) and the definitional stage relations dropped; legacy controls replaced "
             "by the alternatives; 2 -> 3 draws; levels unchanged.",),
    alternatives=(
        null("untrained", untrained, "training off: every quantity keeps its init value",
             replaces="run"),
        null("attention_frozen", attention_frozen, "W_Q, W_K not trained: the softmax outputs "
             "keep their init values", replaces="run"),
        rival("sqrt_s_rate", sqrt_s_slope, "Lemma 4.1 with ||xi||_2 ~ sqrt(s) sigma_p (an l2 "
              "rate) in place of s sigma_p", replaces="slope"),
        rival("no_s_rate", no_s_slope, "Lemma 4.1 with the factor s dropped", replaces="slope"),
    ),
))


@audits(CID)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_variant_d(world, seed):
    r = world.simulation(run, "run", pure=True)(seed)
    slope = world.prediction(th.lemma41_slope, "slope")
    check_intervals(CID, variant_stats(r, slope), VARIANT_OUTCOME, EXACT)
