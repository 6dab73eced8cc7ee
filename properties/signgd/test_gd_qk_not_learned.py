"""signgd.gd.qk_not_learned: 'for GD ... the query and key parameters are basically not learned,
even with a large learning rate' (Appendix B.4), an erratum at L = 2.

Statistic per draw and GD rate: max over seeds and samples of |s_21 - 1/2| at the first logged
step with L_S <= 0.05 (the paper's convergence criterion).  The printed reading: 'basically
not learned' = within the glossary's 'near 1/2' (0.05; was 0.1) of the uniform attention.  The
correction uses the same level, reversed, at both GD rates.  No new number: the earlier corrected thresholds (0.3, then 0.2 after a
draw gave 0.293) were levels read off the runs; the printed reading's own 0.1 needs neither a
derivation nor a calibration (issue 11).  Both comparisons are exact inequalities of a
deterministic statistic of the run.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given

from properties import (Claim, Threshold, Tolerance, attach_plot, audits, check_at_least,
                        check_close, examples, null, register, rival)
from properties.readings import lookup
from properties.signgd.figures import plot_gd_qk_not_learned
from properties.signgd.runs import GD_RATES, GD_SETTING, SEED, gd_runs

CID = "signgd.gd.qk_not_learned"
LEVEL = lookup("near 1/2").level  # 'basically not learned' = |s_21 - 1/2| 'near 1/2' (glossary)
SENTENCE = ("For gradient descent, while the loss converges fast, the query and key parameters "
            "are basically not learned")


def attention_dev(seed):
    """Per GD rate: max over the draw's seeds and samples of |s_21 - 1/2| at GD's stop."""
    r = gd_runs(seed, 1.0)
    return {lr: float(np.abs(r[lr]["s21"][-1] - 0.5).max()) for lr in GD_RATES}


def attention_frozen(seed):
    """Null: W_Q, W_K not trained (the softmax keeps its init value whatever the stop step)."""
    r = gd_runs(seed, 1.0)
    return {lr: float(np.abs(r[lr]["s21"][0] - 0.5).max()) for lr in GD_RATES}


def learned():
    """The correction: per GD rate, the interval the statistic lies in: (0.1, 1/2]."""
    return {lr: (LEVEL, 0.5) for lr in GD_RATES}


def printed():
    """Rival (the printed form): [0, 0.1] at every GD rate."""
    return {lr: (0.0, LEVEL) for lr in GD_RATES}


def learned_only_at_large_rate():
    """Rival: 'even with a large learning rate' read the other way: learned at lr 1 only, not at
    the paper's MNIST rate 0.1."""
    return {lr: ((0.0, LEVEL) if lr < 1.0 else (LEVEL, 0.5)) for lr in GD_RATES}


register(Claim(
    id=CID, where="Appendix B.4 (last sentence), App. B.3",
    statement="For gradient descent, while the loss converges fast, the query and key parameters "
              "are basically not learned, even with a large learning rate.",
    assumptions=GD_SETTING + ", sigma_p = 1, L = 2; GD lr in " + str(GD_RATES) + ", stopped at "
                "L_S <= 0.05 (logged every 10 steps), 2 seeds per draw; seed 11 (the canonical "
                "draw) is an explicit example",
    prediction="at the GD stop, max over samples |s_21 - 1/2| 'near 1/2' (glossary: <= 0.05; "
               "attention still ~uniform)",
    simulation="sim.signgd.train(optimizer='gd') (properties.signgd.runs.gd_runs)",
    metric="max over seeds and samples of |s_21 - 1/2| at the stop step, per GD rate",
    tolerance="'basically not learned' read as the glossary's 'near 1/2' of the uniform "
              "attention (0.05, bracket [0.025, 0.1]); both forms compared at that level and at "
              "the bracket's ends (deterministic statistic)",
    corrected="Under GD the attention is learned by the time the loss has converged: at "
              "L_S <= 0.05, max |s_21 - 1/2| beyond the glossary's 'near 1/2' (0.05; the printed "
              "reading's level, reversed) at both "
              "GD rates (0.1 and 1); only a GD rate too small to converge (1e-4, "
              "signgd.gd.faster) leaves W_Q, W_K at init.",
    reason="At both GD rates (0.1, 1) the training loss reaches 0.05 in 50-410 steps and by then "
           "the noise query attends to the noise key (s_21 ~ 0.05, |s_21 - 1/2| ~ 0.45; |d alpha| "
           "~0.15 against an init of 1e-3). The rate trend (0.45 at lr 0.1, 0.46 at lr 1) shows "
           "this is not a step-size artefact. The paper's rate and setting (B.4: L > 2) were lost; "
           "audited at L = 2.",
    reading="Alternatives of the corrected form: the printed form ([0, 0.1] at both rates), "
            "'learned only at the large rate' (the other reading of 'even with a large learning "
            "rate'); null: attention frozen (the softmax at its init, ~1e-6 from 1/2).",
    history=("2026-12-03 (earlier session): corrected threshold 0.3 -> 0.2 after a thorough-"
             "profile draw (seed 8799998) gave 0.293 at lr 1 (levels measured 0.29-0.46).",
             "2026-12-03 (issue 11): corrected threshold 0.2 -> 0.1, the printed reading's own "
             "level reversed, instead of deriving or calibrating a level read off the runs (a "
             "calibration at a false-fail rate this run can afford would need ~1000 calibration "
             "runs); the 'ratio >= 0.8' rate check (an unstated level) is dropped, the rate "
             "question is the learned_only_at_large_rate rival.",
             "2026-12-04 (issue 20): the level is the glossary's 'near 1/2' (0.05, bracket "
             "[0.025, 0.1]; was a hand-set 0.1, the glossary's looser end): one level "
             "everywhere; the observed 0.29-0.46 is beyond every level of the bracket.",),
    alternatives=(
        rival("printed", printed, "the printed form: |s_21 - 1/2| near 1/2 at both rates",
              replaces="interval"),
        rival("learned_only_at_large_rate", learned_only_at_large_rate, "neighbouring reading of "
              "'even with a large learning rate': not learned at lr 0.1, learned at lr 1",
              replaces="interval"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: the softmax keeps its "
             "init value", replaces="dev"),
    ),
))
attach_plot(CID, plot_gd_qk_not_learned)


@audits(CID, fails="under GD the attention moves (|s_21 - 1/2| ~ 0.45) before the loss reaches "
                   "0.05, at lr 0.1 and 1")
@examples(1)
@example(seed=11)
@given(seed=SEED)
def test_signgd_gd_qk_not_learned_printed(seed):
    for lr, v in attention_dev(seed).items():
        check_close(CID, v, 0.0, Tolerance.reading("near 1/2", SENTENCE), name=f"lr {lr} near 1/2",
                    what=f"GD lr {lr}: |s_21 - 1/2| = {v:.3g}")


@audits(CID, form="corrected")
@examples(3)
@example(seed=11)
@given(seed=SEED)
def test_signgd_gd_qk_not_learned_corrected(world, seed):
    dev = world.simulation(attention_dev, "dev", pure=True)(seed)
    interval = world.prediction(learned, "interval")()
    for lr, v in dev.items():
        lo, hi = interval[lr]
        if lo > 0:  # learned: s_21 beyond the glossary's 'near 1/2' of the uniform attention
            check_at_least(CID, v, Threshold.reading("near 1/2", SENTENCE), name=f"lr {lr} learned",
                           what=f"GD lr {lr}: |s_21 - 1/2| = {v:.3g} beyond 'near 1/2'")
        if hi < 0.5:  # not learned: within it (|s_21 - 1/2| <= 1/2 always)
            check_close(CID, v, 0.0, Tolerance.reading("near 1/2", SENTENCE),
                        name=f"lr {lr} not learned", what=f"GD lr {lr}: |s_21 - 1/2| = {v:.3g}")
