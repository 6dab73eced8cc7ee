"""What the three Table 3 variant claims (Appendix B.2: signgd.variant_b, _c, _d) share: the
printed items re-checked, the Claim built for a variant, and the property body.  Each claim file
keeps its own registration and property (one file per claim item); only the row's name, place,
data description and measured numbers differ.  The reasoning (what is automatic, what could
fail) is in test_variant_b.py's docstring."""

from __future__ import annotations

import functools

from properties import Claim, null, rival
from properties.signgd.common import (VARIANT_OUTCOME, check_intervals, check_theta, exact,
                                      rival_ratio, stage3_lemma_checks, stage3_lemma_rivals,
                                      variant_stats)
from properties.signgd.comparisons import (OPT_SEEDS, VARIANTS, variant_attention_frozen,
                                           variant_run, variant_signals_frozen, variant_untrained)
from properties.signgd.setting import SETTING
from theory import signgd as th

EXACT = exact("exact inequality at the orthogonal-sparse properties' level (deterministic "
              "statistic of the run)")
_DESC = "non-orthogonal sparse (supports from all of [d], s = 30, d = 361)"
ITEMS = ("Thm 3.2 (1) L_S(end) <= 1e-3; (2) L_D(end) >= 0.1; (3) V_i / |V_mu| >= 2; "
          "(4) s_11, s_21 <= 0.05; Lemma 4.6/4.8 every key and query noise with sgn alpha at "
          "the end (T_4 reached); stage by stage: Lemma 4.1 (1) V_i(t) - V_i(0) = "
          "Theta(t eta s sigma_p) (the pooled ratio to 2 sqrt(2/pi) t eta s sigma_p in "
          "[0.3, 2], the bracket signgd.lemma4_3 uses for a Theta constant); the corrected "
          "stage order of signgd.stage_order; Lemma 4.5 (s_21 decays at least exponentially "
          "up to T_4^-, |s_11 - 1/2| <= 0.1 there); Lemmas 4.6/4.7 (T_4^- < T_4^+ < T_4)")


def sqrt_s_slope(eta, s, sigma_p):
    """Rival: Lemma 4.1's rate with ||xi||_2 ~ sqrt(s) sigma_p in place of ||xi||_1 ~ s sigma_p."""
    return th.lemma41_slope(eta, s, sigma_p) / s ** 0.5


def no_s_slope(eta, s, sigma_p):
    """Rival: Lemma 4.1's rate with the factor s dropped (Theta(t eta sigma_p))."""
    return th.lemma41_slope(eta, s, sigma_p) / s


def variant_claim(cid: str, name: str, where: str, desc: str, measured: str) -> Claim:
    """The Claim of Table 3 row `name` (described as `desc`, measured numbers `measured`)."""
    untrained = functools.partial(variant_untrained, name)
    attention_frozen = functools.partial(variant_attention_frozen, name)
    signals_frozen = functools.partial(variant_signals_frozen, name)
    return Claim(
        id=cid, where=where,
        statement=f"'Our theoretical results hold empirically' for {desc} data. Re-checked: "
                  + ITEMS + ".",
        assumptions=SETTING.replace("orthogonal data (mu = e_1, noise supports in [d] minus {1}), "
                                     "pairwise-disjoint training supports (d = 1 + n s + 120), "
                                     "test supports apart", desc + ", supports drawn "
                                     "independently per sample (overlapping)") +
                    f"; sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5; {OPT_SEEDS} seeds per draw (seeds "
                    "11 and 12345 explicit examples); horizon 1.25 t*",
        prediction="each listed item that is not automatic, read with the glossary words of the "
                   "orthogonal-sparse properties (the statement's numbers are their levels): "
                   "L_S(end) '-> epsilon' (1e-3), L_D(end) of 'constant order' (0.1), V_i "
                   "'dominates' |V_mu| (2), s_11, s_21 'near 0' (0.05) at the end; Lemma 4.1's "
                   "constant 'Theta(1)' (a factor 3; the statement's [0.3, 2] was the suite's "
                   "earlier hand-set bracket); min(T_2, T_3) 'dominates' T_1 (2) and T_4^+ < T_4 "
                   "in every seed; Lemma 4.5 fitted exponent >= 1, |s_11 - 1/2| 'near 1/2' (0.05) "
                   "up to T_4^-; and (issue 35) the lemmas this data is said to follow, re-checked "
                   "as signgd.adam and signgd.learnable_head carry them (common."
                   "stage3_lemma_checks): Lemma 4.3 (1) (median |a|, |b| at T_2 over T_2 eta "
                   "||xi_i||_1 'Theta(1)'), Lemma 4.4 (median |alpha|, |beta| at T_4^- over eta "
                   "T_4^- 'Theta(1)'; every uneven vote followed at T_4^- - 1)",
        simulation=f"comparisons.variant_run: sim.signgd.make_problem(orthogonal={VARIANTS[name][0]}, "
                   "disjoint=False), sim.signgd.train logged every step; sim.signgd.stage_times",
        metric="the listed items' extremes over seeds, samples and pairs (common.variant_stats)",
        tolerance="exact inequalities at the levels of signgd.theorem3_2.item1-4, lemma4_5 and the "
                  "glossary's 'Theta(1)' for Lemma 4.1's constant (deterministic statistics of the run)",
        reading="Table 3's numbers were lost: what is read is the printed outcome, the same for every "
                "row ('our theoretical results hold empirically'); the variants keep the CPU setting "
                "and change only orthogonality / sparsity. The exact claims (step magnitudes, the "
                "reduced dynamics, Lemma 4.1's constant 2 sqrt(2/pi)) do not apply (noise increments "
                "are sums of signs over shared coordinates). Automatic, not asserted: the end "
                "alignment of every noise (the stop rule ends the run after it) and the definitional "
                "parts of the stage order (max(T_2, T_3) <= T_4^- < T_4^+). Measured (seeds 11-14, "
                "earlier session): " + measured + " Alternatives: nulls training off and attention frozen; "
                "rivals Lemma 4.1 with sqrt(s) (an l2 rate) and without s; for Lemmas 4.3 (1) "
                "and 4.4 (issue 35) their rivals as signgd.adam has them (the noise at its init "
                "scale or on an l2 rate, the majority of signs, the signals at init) and the null "
                "'signals frozen'. On this data a noise inner product does not move by exactly "
                "eta ||xi_i||_1 per step (the sign vector of the gradient is shared across "
                "overlapping supports), so Lemma 4.3 (1)'s rate is read as the Theta the lemma "
                "states, not as the exact step.",
        audit_gap="Lemma 4.2 / Table 2 (measured, see the reading; not asserted per variant); "
                  "Lemma 4.3 (2)-(4) and Lemma 4.4's softmax (asymptotic, left to their SignGD "
                  "ids); the end alignment (Lemmas 4.6/4.8) is automatic under the stop rule.",
        paper_setting=f"Table 3 row ({name})'s numbers (App. B.2) were lost in extraction (only "
                      "its orthogonality flag survives); the sheet's CPU setting (n = 8, sigma_p "
                      "= 1, sigma_0 = 1e-3, eta = 6e-5) with " + desc + " data stands in.",
        alternatives=(
            null("untrained", untrained, "training off: every quantity keeps its init value",
                 replaces="run"),
            null("attention_frozen", attention_frozen, "W_Q, W_K not trained: the softmax outputs "
                 "keep their init values", replaces="run"),
            rival("sqrt_s_rate", sqrt_s_slope, "Lemma 4.1 with ||xi||_2 ~ sqrt(s) sigma_p (an l2 "
                  "rate) in place of s sigma_p", replaces="slope"),
            rival("no_s_rate", no_s_slope, "Lemma 4.1 with the factor s dropped", replaces="slope"),
            null("untrained_lemmas", untrained, "the lemmas' run with training off (no stage "
                 "event: nothing at T_2 or T_4^-)", replaces="lemma_run"),
            null("signals_frozen", signals_frozen, "the query and key signals alpha, beta keep "
                 "their init values (Stage III's votes not followed)", replaces="lemma_run"),
            *stage3_lemma_rivals(),
        ),
    )


L41 = "Lemma 4.1 (1) constant"
L41_SENT = "V_i = Theta(t eta s sigma_p) (Lemma 4.1 (1))"


def variant_check(cid: str, name: str, world, seed):
    """The property body: the variant's run (or a null's), Lemma 4.1's slope (or a rival's), and
    every listed statistic inside its orthogonal-sparse interval."""
    r = world.simulation(functools.partial(variant_run, name), "run", pure=True)(seed)
    slope = world.prediction(th.lemma41_slope, "slope")
    stats = variant_stats(r, slope)
    const = stats.pop(L41)
    check_intervals(cid, stats, VARIANT_OUTCOME, EXACT)
    args = (r["eta"], r["s"], r["sigma_p"])
    check_theta(cid, const, L41_SENT, name="Lemma 4.1 (1)", what=L41,
                rival_ratio=rival_ratio(slope(*args), th.lemma41_slope(*args)))


def variant_lemma_check(cid: str, name: str, world, seed):
    """The lemmas the variant is said to follow, re-checked as signgd.adam and learnable_head
    carry them (issue 35): Lemma 4.3 (1) at T_2 and Lemma 4.4 at T_4^- on the variant's run (or a
    null's), common.stage3_lemma_checks."""
    r = world.simulation(functools.partial(variant_run, name), "lemma_run", pure=True)(seed)
    stage3_lemma_checks(cid, world, r, f" (variant {name})")


# The lemma property's expected failure on the two non-sparse rows (c, d), measured on both
NON_SPARSE_LEMMA_FAILS = (
    "Lemma 4.3 (1) at the glossary's 'Theta(1)' (a factor 3): the median |a(T_2)| is ~0.25-0.3 "
    "of T_2 eta ||xi_i||_1 (a factor 3.4-4.1; within the looser 5) on this non-sparse data (s = "
    "200 of d = 241): with supports that overlap, the gradient's sign on a shared coordinate is "
    "the samples' sum, so a noise inner product moves by less than eta ||xi_i||_1 per step")
