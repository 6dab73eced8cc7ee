"""topic.empirical.attention_order: the attention orders of Section 6 / App. E.2 (Tables 3, 4),
one property per item: (a) the jointly trained model, (b) W^V frozen to D^V (slot "frozen_wv").

Runs: runs.attention_order_scores on runs.lda_run (200 held-out documents drawn from the seed
before the init).  "topics_relabelled" maps word j of topic t to topic t + j mod T.  The levels
use 9.5e-5 of the claim's 1e-4 share with the paper's draw at ladder, 7.6e-5 under ci.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import attach_plot
from properties import (Claim, audits, check_paired_order, examples, null, paper_example,
                        register)
from properties.topic.common import (EMPIRICAL_AUDIT_SEEDS, PAPER_TV, PAPER_WHERE,
                                     order_beyond_seed_noise, paper_size_gate,
                                     run_tv)
from properties.topic.figures import plot_attention_order
from properties.topic.runs import EMP, LDA_CALIBRATION, attention_order_scores

CID = "topic.empirical.attention_order"
AUDIT_SEEDS = EMPIRICAL_AUDIT_SEEDS
ITEM_A = (("joint", "same_topic/diff_topic"),)
ITEM_B = (("dv", "same_word/diff_topic"), ("dv", "diff_topic/same_topic"))
# levels per check and draw (4 draws under ci, 5 with the paper's T = v = 10 at ladder): (a)
# 1.5e-5 (7.5e-5 in all at ladder), (b) 2e-6 per ratio (2e-5): (b)'s ratios sit 20-50 sd of
# their seed noise above 0, (a)'s only ~7 sd.  (a) was 2e-5 until 2026-12-06 (issue 37), lowered
# to fit the share when the paper's draw was added, not after a failure.
LEVEL_A, LEVEL_B = 1.5e-5, 2e-6
TV10_ELEMENTS = 12  # i.i.d. elements of the T = v = 10 draw, trained in one program


def elements(tv):
    """Elements per draw: one at the CI size (its noise calibrated), TV10_ELEMENTS at the paper's
    T = v = 10 (decided on their own spread)."""
    return 1 if tv == EMP["T"] else TV10_ELEMENTS


def attention(seed, model, tv=EMP["T"]):
    """Log attention ratios of the trained `model` ("joint", "dv") on held-out documents."""
    return attention_order_scores(model, seed, S=elements(tv), tv=run_tv(tv))


def training_off(seed, model, tv=EMP["T"]):
    """Null: the optimiser switched off (zero steps)."""
    return attention_order_scores(model, seed, S=elements(tv), steps=0, tv=run_tv(tv))


def uniform_attention(seed, model, tv=EMP["T"]):
    """Null: the trained model with uniform attention (W^K = W^Q = 0 switched in)."""
    return attention_order_scores(model, seed, S=elements(tv), uniform=True, tv=run_tv(tv))


def topics_relabelled(seed, model, tv=EMP["T"]):
    """Null: the trained model's attention, pairs classified by topic-scrambled word ids."""
    return attention_order_scores(model, seed, S=elements(tv), relabel=True, tv=run_tv(tv))


def frozen_wv():
    """(b)'s model: W^V frozen to Definition 2's diagonal D^V (runs.LDA_MODELS["dv"])."""
    return "dv"


def wv_block_uniform():
    """Null for (b): W^V frozen to Theorem 2's block-uniform W* instead of the diagonal D^V."""
    return "wstar"


register(Claim(
    id=CID, where="Section 6 and Appendix E.2 (Tables 3, 4)",
    statement="(a) When W^K, W^Q, W^V are trained jointly, each word pays on average more "
              "attention to words of the same topic than to words of different topics. (b) When "
              "W^V is diagonal (D^V), the order is partially reversed: same word > different "
              "topic > same topic (different word).",
    assumptions="LDA data (Dirichlet(0.1), N in 100..150), p_m = 0.15, p_c = p_r = 0.1, biases "
                "b^K, b^Q, b^V (Section 6); one-hot W^E, squared loss, Adam lr 0.01, batch 8, "
                "N(0, 0.01^2) init; (a) 300 steps, W^K, W^Q, W^V trained jointly; (b) W^V frozen "
                "to Definition 2's D^V, W^K, W^Q, biases, b^pred trained, 200 steps; CI size "
                "T = v = 5 (the paper's T = v = 10 runs at --size ladder, the joint model "
                "trained 2100 steps, runs.LDA_PAPER_STEPS).",
    prediction="the attention orders (a) same topic > different topic, (b) same word > "
               "different topic > same topic (different word): each log ratio > 0 beyond its "
               "own seed error",
    simulation="properties.topic.runs.lda_run('joint' / 'dv') + sim.topic.forward("
               "return_attention) + attention_stats(normalise_length=100) on 200 held-out "
               "documents per element",
    metric="log ratios of the length-debiased mean attention per pair kind (pairs of non-[MASK] "
           "positions; 'same topic' excludes the same word at another position)",
    tolerance="per log ratio, T = v = 5: t_79 x the sd of the statistic over 80 calibration "
              "elements (seeds 10000..10003, disjoint; noise only) x sqrt(1 + 1/80), normal "
              "model of the seed-to-seed spread; T = v = 10: the mean over 12 i.i.d. elements >= "
              "t_11 x its seed-clustered SE; one-sided level 1.5e-5 per draw for (a), 2e-6 per "
              "ratio and draw for (b)",
    reading="'On average' read as the length-debiased mean over held-out pairs (Appendix E.3: "
            "weights x N/100).  '>' read as the order itself: log ratio > 0, shown on the "
            "draw beyond the seed-to-seed spread of the same statistic (an untrained model's "
            "chance order of ~1e-5 in log ratio is far inside it); the nulls show that the property needs trained attention, the true topics "
            "and, for (b), the diagonal W^V.  (a) uses the jointly trained W^V "
            "(block-plus-diagonal here).  The explicit example is seed 0 with the paper's p_m, "
            "p_c, p_r.",
    paper_setting="the paper's T = v = 10 (Sec. 6) runs as the explicit @paper_example at "
                  "--size ladder / paper (seed 0): there the seed-to-seed noise of the statistic "
                  "was never calibrated (80 calibration elements at T = v = 5 only), so the draw "
                  "trains 12 i.i.d. elements in one program and decides each order on their own "
                  "spread (one-sided seed-clustered t_11); the joint model trains 2100 steps at T "
                  "= v = 10 (runs.LDA_PAPER_STEPS, the convergence rule of its training loss), "
                  "the D^V and W* models the steps the same rule gives them.  At ci it is "
                  "skipped for cost (the joint model's 2100 steps for 12 elements: minutes on one "
                  "core)",
    alternatives=(
        null("training_off", training_off, "optimiser off: W^K, W^Q at their N(0, 0.01^2) init",
             replaces="attention"),
        null("uniform_attention", uniform_attention, "the trained model read with uniform "
             "attention (W^K = W^Q = 0)", replaces="attention"),
        null("topics_relabelled", topics_relabelled, "pairs classified by topic-scrambled word "
             "ids (relabelled same-topic pairs are true different-topic pairs)",
             replaces="attention"),
        null("wv_block_uniform", wv_block_uniform, "(b)'s mechanism off: W^V frozen to "
             "Theorem 2's block-uniform W* instead of the diagonal D^V", replaces="frozen_wv"),
    ),
))
attach_plot(CID, plot_attention_order)


def _check(world, seed, tv, model, ratios, level):
    paper_size_gate(tv)
    if model == "dv":
        model = world.simulation(frozen_wv, "frozen_wv")()
    s = world.simulation(attention, "attention", pure=True)(seed, model, tv)
    if tv == EMP["T"]:  # one element against its calibrated seed noise
        what = ", ".join(f"{k} {np.exp(x[0]):.3f}" for k, x in s.items())
        for m, r in ratios:
            order_beyond_seed_noise(CID, float(s[r][0]), LDA_CALIBRATION[f"{m}:{r}"],
                                    LDA_CALIBRATION, level=level,
                                    what=f"({model}) log {r} (ratios: {what}; T = v = {tv})")
        return
    # the paper's T = v = 10: the elements' own spread (no calibration there)
    what = ", ".join(f"{k} {np.exp(x.mean()):.3f}" for k, x in s.items())
    for m, r in ratios:
        check_paired_order(CID, s[r], false_fail=level, order=r.replace("/", " > "),
                           unit="log ratio",
                           what=f"({model}) log {r} (mean ratios: {what}; T = v = {tv})")


@audits(CID)
@examples(3)
@example(seed=0, tv=EMP["T"])
@paper_example(where=PAPER_WHERE, seed=0, tv=PAPER_TV)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1), tv=st.just(EMP["T"]))
def test_empirical_attention_order_joint(world, seed, tv):
    _check(world, seed, tv, "joint", ITEM_A, LEVEL_A)


@audits(CID)
@examples(3)
@example(seed=0, tv=EMP["T"])
@paper_example(where=PAPER_WHERE, seed=0, tv=PAPER_TV)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1), tv=st.just(EMP["T"]))
def test_empirical_attention_order_diagonal_wv(world, seed, tv):
    _check(world, seed, tv, "dv", ITEM_B, LEVEL_B)
