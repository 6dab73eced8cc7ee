"""signgd.lemma4_2 on runs.stage2_run, pairs counted per seed at T_4^- - 1, every fraction pooled
over seeds with a seed-clustered SE (pairs of one seed share neurons and samples).  The pooled
P(++ | disagree) is 1/2 exactly by the init's sign symmetry (w_Q,s, w_K,s) -> -(w_Q,s, w_K,s), so
it cannot fail; which member's sign a disagreeing pair takes can.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given

from properties import (Claim, audits, check_estimate, clustered_ratio, examples, null, register,
                        rival)
from properties.signgd.common import claim_rate
from properties.signgd.setting import SETTING, signgd_draw_note
from properties.signgd.runs import (random_sign_run, S2_CANON, S2_RUN, S2_SEEDS, stage2_run,
                                    untrained_run)

CID = "signgd.lemma4_2"
DRAWS = 4  # under ci: the explicit canonical draw and three drawn ones
FALSE_FAIL = claim_rate(DRAWS)  # per draw, over the three checks: the claim share over 4 draws
KEEP = ("pairs that agree at init keep their sign and grow")


def lemma_levels():
    """The lemma as read: aligned >= 0.98 (Table 2's 98%), query-sign share of disagreeing = 1/2
    ('keep' is the glossary's reading, not a level of the lemma's numbers)."""
    return dict(aligned=0.98, follow_query=0.5)


def follow_query_levels():
    """Rival: a disagreeing pair takes the query noise's init sign."""
    return dict(lemma_levels(), follow_query=1.0)


def follow_key_levels():
    """Rival: a disagreeing pair takes the key noise's init sign."""
    return dict(lemma_levels(), follow_query=0.0)


def _parts(M):
    """Per seed (J, 3): numerators and denominators of aligned, keep | agree, and follow the
    query | disagree (rows ++, +-, -+, --; columns the same at the end)."""
    M = np.asarray(M, dtype=np.float64)
    aligned = M[:, :, 0].sum(-1) + M[:, :, 3].sum(-1)
    keep = M[:, 0, 0] + M[:, 3, 3]
    agree = M[:, 0].sum(-1) + M[:, 3].sum(-1)
    fq = M[:, 1, 0] + M[:, 2, 3]  # +- -> ++ and -+ -> -- follow the query noise
    dis = M[:, 1, 0] + M[:, 1, 3] + M[:, 2, 0] + M[:, 2, 3]
    return (np.stack([aligned, keep, fq], -1),
            np.stack([M.sum((-1, -2)), agree, dis], -1))


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.2 (Stage II), Section 4.1",
    statement="Query and key noise align their signs per (neuron, sample): pairs that agree at "
              "init keep their sign and grow; pairs that disagree resolve to either sign with "
              "conditional probability at least about 1/2 each.",
    assumptions=SETTING + f"; {S2_SEEDS} seeds per draw, s in [20, 30], sigma_p in [1, 2], "
                "sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]; the sheet's CPU setting "
                "(s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) is an explicit example",
    prediction="after Stage II: sgn a = sgn b for >= 98% of pairs; P(keep | agree) >= 0.9; "
               "P(end sign = sgn a(0) | disagree) = 1/2",
    simulation="properties.signgd.runs.stage2_run (shared with signgd.table2): sim.signgd.train "
               "to the last seed's T_4^-, pairs counted per seed at T_4^- - 1",
    metric="aligned fraction, P(keep | agree at init), P(query's init sign | disagree at init), "
           "each pooled over seeds",
    tolerance="Monte Carlo: cluster-robust SE over the 16 seeds (ratio estimator), t on 15 df, "
              f"family-wise false-fail {FALSE_FAIL:g} per draw over the three checks (Bonferroni; "
              f"{DRAWS} draws: the claim share 1e-4); the two inequalities one-sided at their "
              "levels (keep: the glossary reading 'keep their sign' minus the noise term), the 1/2 "
              "two-sided",
    reading="'At least about 1/2 each' is read per row: a disagreeing pair takes the query "
            "noise's init sign with probability 1/2 (the pooled P(++ | disagree) = 1/2 holds by "
            "the init's sign symmetry and is not a check). 'Keep' read as >= 0.9 (Table 2: 93%; "
            "the literal every-pair reading is contradicted by the paper's own table and by the "
            "simulation, ~5% of agreeing pairs flip): the glossary reading 'keep their sign' (0.9, "
            "bracket [0.8, 0.95]). 'Grow' is not checked here (signgd.lemma4_3 "
            "(1) audits the magnitudes at T_2). T_2 is measured (definition in "
            "signgd.stage_order).",
    paper_setting="Lemma 4.2 holds under Condition 3.1 (no numbers), and Table 2's run (2000 "
                  "pairs; Table 3 row (a), App. B.1) lost its setting in extraction; the sheet's "
                  "CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) is an "
                  "explicit example, the draws cover s in [20, 30], sigma_p in [1, 2], sigma_0 in "
                  "[7e-4, 1.3e-3], eta in [5e-5, 7e-5], 16 seeds each.",
    alternatives=(
        rival("follow_query", follow_query_levels, "a disagreeing pair takes the query noise's "
              "init sign (the query decides)", replaces="levels"),
        rival("follow_key", follow_key_levels, "a disagreeing pair takes the key noise's init "
              "sign (the key decides)", replaces="levels"),
        null("untrained", untrained_run, "training off: the end signs are the init signs",
             replaces="run"),
        null("random_sign", random_sign_run, "alignment without memory: both members take one "
             "fair random sign, independent of the init", replaces="run"),
    ),
))


@audits(CID)
@examples(3)
@example(cfg=S2_CANON)
@given(cfg=S2_RUN)
def test_signgd_lemma4_2(world, cfg):
    r = world.simulation(stage2_run, "run", pure=True)(*cfg)
    lv = world.prediction(lemma_levels, "levels")()
    num, den = _parts(r["M"])
    f, se, dof = clustered_ratio(num, den)  # seed-clustered: pairs within a seed share it
    se = np.nan_to_num(se)
    rates = dict(false_fail=FALSE_FAIL, comparisons=3, dof=dof, unit="fraction of pairs")
    check_estimate(CID, f[0], lv["aligned"], se=se[0], side="not_below", name="aligned",
                   what=f"aligned after Stage II: {f[0]:.3f} >= {lv['aligned']:g}", **rates)
    check_estimate(CID, f[1], se=se[1], side="not_below", reading=("keep their sign", KEEP),
                   name="keep", what=f"P(keep | agree at init) {f[1]:.3f}", **rates)
    check_estimate(CID, f[2], lv["follow_query"], se=se[2], name="follow_query",
                   what=f"P(query's init sign | disagree) {f[2]:.3f} = {lv['follow_query']:g}",
                   **rates)
