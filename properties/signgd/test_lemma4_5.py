"""signgd.lemma4_5 (Stage IV) on runs.stage2_run (16 seeds per draw, stopped at the last seed's
T_4^-, shared with signgd.table2 and signgd.lemma4_2): per seed the fitted exponent of
-log(2 s_21) in t and max |s_11 - 1/2| up to T_4^-, deterministic functions of the run.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given

from properties import (Claim, Tolerance, audits, check_at_least, check_close, examples, null,
                        register, rival)
from properties.signgd.common import exact
from properties.signgd.figures import plot_softmax
from properties.signgd.setting import SETTING, signgd_draw_note
from properties.signgd.runs import attention_frozen_null, S2_CANON, S2_RUN, S2_SEEDS, stage2_run

CID = "signgd.lemma4_5"
SENTENCE = "s_21 decays exponentially fast while s_11 stays near 1/2, until a time T_4^-"
EXACT = exact("exact inequality: the statistic is a deterministic function of the run (a "
              "least-squares exponent of the logged softmax, or its extreme)")


def lemma_roles():
    """As printed: s_21 decays (exponent of -log(2 s_21) in t at least 1), s_11 stays within
    1/2 at the glossary's reading of 'near 1/2'."""
    return dict(decays=("s21",), stays=("s11",), min_exponent=1.0)


def roles_swapped():
    """Rival: the signal query's softmax decays and the noise query's stays."""
    return dict(lemma_roles(), decays=("s11",), stays=("s21",))


def both_stay():
    """Rival: Lemma 4.3 (2)'s 'softmax outputs still 1/2 +- o(1)' carried up to T_4^-."""
    return dict(lemma_roles(), decays=(), stays=("s11", "s21"))


# Null: W_Q, W_K not trained (the attention is then a function of the fixed data only, so every
# softmax output keeps its init value); same horizon and T_4^- as the SignGD run
attention_frozen = attention_frozen_null(stage2_run)


def _exponent(y, t):
    """Least-squares slope of log y vs log t; -inf if y is not positive somewhere (then the
    quantity has not decayed below 1/2 there)."""
    if not np.all(y > 0):
        return -np.inf
    return float(np.polyfit(np.log(t), np.log(y), 1)[0])


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.5 (Stage IV), Section 4.1; Fig. 1 (c)",
    statement="The noise-signal softmax s_21 decays exponentially fast while s_11 stays near 1/2, "
              "until a time T_4^-.",
    assumptions=SETTING + f"; {S2_SEEDS} seeds per draw, s in [20, 30], sigma_p in [1, 2], "
                "sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]; the sheet's CPU setting is an "
                "explicit example",
    prediction="on [T_4^-/4, T_4^-]: -log(2 s_21) grows at least linearly in t (fitted exponent "
               "p >= 1 of -log(2 s21) vs t, every seed); max |s_11 - 1/2| <= 0.1 up to T_4^-",
    simulation="properties.signgd.runs.stage2_run: sim.signgd.train to the last seed's T_4^- "
               "(sim.signgd.stage_times' definition), every step",
    metric="p: least-squares slope of log(-log(2 mean_i s21)) vs log t on [T_4^-/4, T_4^-], min "
           "over seeds; max over t <= T_4^-, samples, seeds of |s11 - 1/2|",
    tolerance="deterministic statistics of the run: p >= 1 ('exponentially fast' = at least "
              "exponential, an exact inequality); s11 within the glossary reading 'near 1/2' "
              "(0.05, decided at 0.025 and 0.1 too)",
    reading="[R]: the decay rate's form was lost. In the reduced dynamics the logit of s21 is "
            "sum_s a (beta - b) ~ -m_k (t c)^2, so the decay is exp(-Theta(t^2)), faster than "
            "exponential; the check accepts any p >= 1. s11 'near 1/2' is the glossary reading "
            "(0.05; one level for every claim). The levels are the reading, not tolerances; the alternatives test which "
            "softmax decays: rivals 'roles swapped' (s_11 decays, s_21 stays) and 'both stay' "
            "(Lemma 4.3 (2)'s 1/2 +- o(1) carried to T_4^-); null: attention frozen (W_Q, W_K "
            "untrained).",
    plot=plot_softmax("signgd.lemma4_5"),
    paper_setting="Lemma 4.5 holds under Condition 3.1 (no numbers), and Fig. 1 (c)'s run (Table 3 "
                  "row (a), App. B.1) lost its numbers in extraction; the sheet's CPU setting (n = "
                  "8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) is an explicit example, the "
                  "draws cover s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta in "
                  "[5e-5, 7e-5], 16 seeds each.",
    alternatives=(
        rival("roles_swapped", roles_swapped, "the two softmax outputs' roles exchanged: s_11 "
              "decays, s_21 stays near 1/2", replaces="roles"),
        rival("both_stay", both_stay, "neighbouring reading: Lemma 4.3 (2)'s softmax 1/2 +- o(1) "
              "held up to T_4^- (nothing decays before Stage IV ends)", replaces="roles"),
        null("attention_frozen", attention_frozen, "W_Q, W_K not trained: every softmax output "
             "keeps its init value over the same horizon", replaces="run"),
    ),
))


@audits(CID, fails="s_11 leaves 1/2 by up to ~0.07 before T_4^- on some draws (0.067 on a drawn "
                   "config): outside the glossary's 'near 1/2' (0.05), inside its looser 0.1")
@examples(3)
@example(cfg=S2_CANON)
@given(cfg=S2_RUN)
def test_signgd_lemma4_5(world, cfg):
    r = world.simulation(stage2_run, "run", pure=True)(*cfg)
    roles = world.prediction(lemma_roles, "roles")()
    T4m = np.asarray(r["T"]["T4m"]).astype(int)
    for k_ in roles["decays"]:
        ps = []
        for j, T in enumerate(T4m):
            t = np.arange(max(T // 4, 1), T + 1)
            ps.append(_exponent(-np.log(2 * r[k_][t, j].mean(-1)), t))
        check_at_least(CID, min(ps) - roles["min_exponent"], EXACT,
                       what=f"{k_} decays: min over seeds of the fitted exponent {min(ps):.3g} "
                            f">= {roles['min_exponent']:g}")
    for k_ in roles["stays"]:
        dev = max(float(np.abs(r[k_][: T + 1, j] - 0.5).max()) for j, T in enumerate(T4m))
        check_close(CID, dev, 0.0, Tolerance.reading("near 1/2", SENTENCE), name=f"{k_} stays",
                    what=f"{k_} stays near 1/2 up to T_4^-: max |{k_} - 1/2| = {dev:.3g}")
