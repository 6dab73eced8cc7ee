"""signgd.table2: Table 2's six fractions against runs.stage2_run, each against its own error.  One
error model on both sides because the paper's 2000 pairs are no more independent than the
simulation's (they share neurons and samples too): the paper's binomial SE is inflated by the
simulation's design effect of the same fraction on the same draw (for the aligned fraction, whose
simulated variance is 0, the largest of the other five).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, audits, check_estimate, clustered_fractions, examples, null,
                        register, rival)
from properties.signgd.common import claim_rate, FRACTION_NAMES, table_parts
from properties.signgd.figures import plot_table2
from properties.signgd.setting import SEED, SETTING, signgd_draw_note
from properties.signgd.runs import (COLS, random_sign_run, S2_CANON, S2_SEEDS, stage2_run,
                                    TABLE2, untrained_run)

CID = "signgd.table2"
DRAWS = 4  # under ci: the canonical draw and three drawn
# the draws: the stand-in setting (S2_CANON's s, sigma_p, sigma_0, eta) on drawn seeds
STAND_IN = st.tuples(SEED, *(st.just(v) for v in S2_CANON[1:]))
FALSE_FAIL = claim_rate(DRAWS)  # per draw, over the six fractions: the claim share over 4 draws
TABLE2_M = np.array([TABLE2[k] for k in COLS], dtype=np.float64)


def _paper_side(M):
    """Fractions of a printed (4, 4) table and their binomial SEs (pairs taken as independent:
    the table gives counts only)."""
    num, den = table_parts(M)
    f = num / den
    return f, np.sqrt(f * (1 - f) / den)


def printed_table():
    """Table 2 as printed: six fractions and the binomial SE of each."""
    return _paper_side(TABLE2_M)


def corrected_table():
    """The correction: aligned fraction 1 (every pair aligned at the end of Stage II); the five
    conditional fractions as printed, with their binomial SEs."""
    f, se = _paper_side(TABLE2_M)
    return np.r_[1.0, f[1:]], np.r_[0.0, se[1:]]


def aligned_080_table():
    """Rival (issue 11's example): the printed table with the aligned fraction 0.80."""
    f, se = _paper_side(TABLE2_M)
    return np.r_[0.80, f[1:]], np.r_[np.sqrt(0.8 * 0.2 / TABLE2_M.sum()), se[1:]]


def keep_half_table():
    """Rival: agreeing pairs keep their init sign with probability 1/2 (no memory: 'either sign
    with probability 1/2' read for every pair, not only for the disagreeing ones)."""
    f, se = corrected_table()
    f = f.copy()
    f[1] = f[4] = 0.5
    return f, se


def follow_query_table():
    """Rival: a disagreeing pair takes the query noise's init sign (P(++|+-) = 1, P(++|-+) = 0)."""
    f, se = corrected_table()
    f = f.copy()
    f[2], f[3] = 1.0, 0.0
    return f, se


def resolve_positive_table():
    """Rival (a positive share that could pass the other checks' reading of 'either sign'):
    Lemma 4.2's 'a disagreeing pair resolves to either sign with conditional probability at
    least about 1/2' read as every disagreeing pair resolving to ++, so that P(++|+-) = P(++|-+)
    = 1 and the positive share of the aligned pairs is ~0.74 instead of ~1/2 (Table 2's rows
    with each disagreeing row's -- column moved to ++)."""
    M = TABLE2_M.copy()
    for row in (1, 2):
        M[row, 0] += M[row, 3]
        M[row, 3] = 0.0
    return _paper_side(M)


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Table 2 (Section 3.1), 2000 (neuron, sample) pairs",
    statement="Sign of (a, b) at init vs at the end of Stage II: ++ -> (486, 1, 0, 25); "
              "+- -> (244, 4, 9, 250); -+ -> (223, 10, 4, 221); -- -> (37, 2, 3, 481) over "
              "(++, +-, -+, --); column sums 990, 17, 16, 977.",
    assumptions=SETTING + " (Table 3 row (a)'s numbers were lost, so the CPU setting stands in); "
                f"{S2_SEEDS} seeds per draw, every draw at the sheet's CPU setting (s = 30, "
                "sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5), the drawn ones on other seeds: Table 2 "
                "is one run's table, so its counts are compared in one stand-in setting (the "
                "sweep's other settings are Lemma 4.2's draws, not Table 2's)",
    prediction="Table 2's fractions: aligned 0.984; P(keep|++) 0.949; P(++|+-) 0.494; "
               "P(++|-+) 0.502; P(keep|--) 0.920; positive share of aligned 0.503",
    simulation="properties.signgd.runs.stage2_run: sim.signgd.train to the last seed's T_4^- "
               "(detected online as sim.signgd.stage_times does), pairs counted per seed at "
               "T_4^- - 1 (after Stage II, before Stage IV)",
    metric="per fraction: |simulated (pooled over seeds) - Table 2|",
    tolerance="Monte Carlo, per fraction, one error model on both sides: sqrt((t_{J-1} "
              "SE_sim)^2 + (z SE_paper)^2), SE_sim cluster-robust over the J = 16 seeds (ratio "
              "estimator, Student t on 15 df), SE_paper the binomial SE of Table 2's counts times "
              "the square root of the simulation's design effect of that fraction on the draw "
              "(>= 1; the aligned fraction: the largest of the other five); family-wise "
              f"false-fail {FALSE_FAIL:g} per draw over the six fractions (Bonferroni; {DRAWS} "
              "draws: the claim share 1e-4)",
    paper_setting="Table 2's setting (Table 3 row (a): n, d, s, sigma_p, sigma_0, eta, m_k, m_v) "
                  "was lost in extraction; the sheet's CPU setting stands in",
    audit_gap="Table 2's setting (Table 3 row (a)) was lost, so the comparison is made in a "
              "stand-in CPU setting and decides nothing about the paper's own run: agreement "
              "there is not evidence for the printed counts, nor a disagreement against them. "
              "The aligned fraction is 1.000 in every draw by the count's time (T_4^- - 1, after "
              "T_2 in every seed), so it could not fail. The simulated fractions are in the "
              "checks (canonical draw: aligned 1.000, P(keep|++) and P(keep|--) ~0.94, "
              "P(++|+-) and P(++|-+) ~0.5, positive share ~0.5): the five conditional fractions "
              "agree with Table 2's within one error model on both sides.",
    reading="Fractions, not raw counts. The end of Stage II is counted at T_4^- - 1 (Stage III "
            "moves the signals, not the noise signs; T_2 <= T_4^- - 1 when T_2 is finite). "
            "The aligned fraction = 1 in the correction is the finiteness of T_2, not a "
            "separate measurement; the five conditional fractions are the evidence. Rivals: "
            "the printed table; the aligned fraction 0.80 (issue 11); keep = 1/2 (no memory); "
            "disagreeing pairs follow the query; disagreeing pairs resolve to ++ (a positive "
            "share ~0.74: issue 35, the positive-share check's own rival). Nulls: no training; aligned pairs with a "
            "fair random sign independent of the init.",
    plot=lambda path: plot_table2(path),
    alternatives=(
        rival("aligned_080", aligned_080_table, "issue 11: an aligned fraction of 0.80, which "
              "the old single tolerance accepted", replaces="table"),
        rival("keep_half", keep_half_table, "neighbouring reading: 'either sign with "
              "probability 1/2' for every pair, P(keep | agree) = 1/2", replaces="table"),
        rival("follow_query", follow_query_table, "a disagreeing pair takes the query noise's "
              "init sign: P(++|+-) = 1, P(++|-+) = 0", replaces="table"),
        rival("resolve_positive", resolve_positive_table, "every disagreeing pair resolves to ++ "
              "('either sign with probability at least about 1/2' read at its bound): positive "
              "share of the aligned pairs ~0.74", replaces="table"),
        null("untrained", untrained_run, "training off: the end signs are the init signs",
             replaces="run"),
        null("random_sign", random_sign_run, "alignment without memory: both members take one "
             "fair random sign, independent of the init", replaces="run"),
    ),
))


def _compare(world_or_none, cfg, table_fn):
    run_fn = stage2_run if world_or_none is None else world_or_none.simulation(
        stage2_run, "run", pure=True)
    pred_fn = table_fn if world_or_none is None else world_or_none.prediction(table_fn, "table")
    r = run_fn(*cfg)
    num, den = table_parts(r["M"])
    # seed-clustered (pairs within a seed share it), with the harness's repairs of a fraction
    f, se, dof, deff = clustered_fractions(num, den)
    fp, sep = pred_fn()
    for k, name in enumerate(FRACTION_NAMES):
        # the table's own SE: its counts' binomial x sqrt(design effect), in quadrature
        check_estimate(CID, f[k], fp[k], se=float(se[k]), dof=dof,
                       predicted_se=float(sep[k]) * float(np.sqrt(deff[k])),
                       false_fail=FALSE_FAIL, comparisons=6, unit="fraction of pairs", name=name,
                       what=f"{name}: simulated {f[k]:.3f}, Table 2 {fp[k]:.3f} (design effect "
                            f"{deff[k]:.2f})")


@audits(CID)
@examples(3)
@example(cfg=S2_CANON)
@given(cfg=STAND_IN)
def test_signgd_table2(world, cfg):
    _compare(world, cfg, printed_table)
