"""topic.empirical.attention_order: (a) with W^K, W^Q, W^V trained jointly, each word pays on
average more attention to words of the same topic than to words of different topics; (b) with
W^V diagonal (D^V) the order is partially reversed: same word > different topic > same topic
(different word) (Section 6, Appendix E.2, Tables 3 and 4).

Two properties, one per item, on the drawn generator seed (runs.lda_run, CI size T = v = 5,
documents N in 100..150, 200 held-out documents drawn before the init): the length-debiased
(Appendix E.3) mean attention per pair kind, as log ratios, each an order against 0 shown with
its own seed error: log ratio >= t_79 x s x sqrt(1 + 1/80), s the sd of the same statistic over
80 calibration elements on generator seeds 10000..10003 (disjoint from the audit's 0..9999; the
noise only -- their mean, the effect, is not used), one-sided level 2e-5 per draw for (a) and
2e-6 per ratio and draw for (b) (9.6e-5 of the claim's 1e-4 share under ci).
  (a) "joint" model: log(same topic / different topic);
  (b) "dv" model (W^V frozen to Definition 2's D^V): log(same word / different topic) and
      log(different topic / same topic).

Nulls (slot "attention"): "training_off" (zero steps: W^K, W^Q at their N(0, 0.01^2) init),
"uniform_attention" (the trained model read with W^K = W^Q = 0: (a)'s mechanism, trained
attention, switched off), "topics_relabelled" (the trained model's attention, pairs classified
by topic-scrambled word ids: word j of topic t -> topic t + j mod T, so relabelled same-topic
pairs are true different-topic pairs), "wv_block_uniform" ((b)'s mechanism, the diagonal W^V,
switched off: W^V frozen to Theorem 2's block-uniform W* instead of D^V, the rest as in (b)).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import attach_plot
from properties import Claim, audits, examples, null, register
from properties.topic.common import EMPIRICAL_AUDIT_SEEDS, order_beyond_seed_noise
from properties.topic.figures import plot_attention_order
from properties.topic.runs import EMP, LDA_CALIBRATION, attention_order_scores

CID = "topic.empirical.attention_order"
AUDIT_SEEDS = EMPIRICAL_AUDIT_SEEDS
ITEM_A = (("joint", "same_topic/diff_topic"),)
ITEM_B = (("dv", "same_word/diff_topic"), ("dv", "diff_topic/same_topic"))
# levels per check and draw (4 draws under ci): (a) 2e-5 (8e-5 in all), (b) 2e-6 per ratio
# (1.6e-5): (b)'s ratios sit 20-50 sd of their seed noise above 0, (a)'s only ~7 sd
LEVEL_A, LEVEL_B = 2e-5, 2e-6


def attention(seed, model):
    """Log attention ratios of the trained `model` ("joint", "dv") on held-out documents."""
    return attention_order_scores(model, seed)


def training_off(seed, model):
    """Null: the optimiser switched off (zero steps)."""
    return attention_order_scores(model, seed, steps=0)


def uniform_attention(seed, model):
    """Null: the trained model with uniform attention (W^K = W^Q = 0 switched in)."""
    return attention_order_scores(model, seed, uniform=True)


def topics_relabelled(seed, model):
    """Null: the trained model's attention, pairs classified by topic-scrambled word ids."""
    return attention_order_scores(model, seed, relabel=True)


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
                "T = v = 5 (the paper's T = v = 10 is not run).",
    prediction="the attention orders (a) same topic > different topic, (b) same word > "
               "different topic > same topic (different word): each log ratio > 0 beyond its "
               "own seed error",
    simulation="properties.topic.runs.lda_run('joint' / 'dv') + sim.topic.forward("
               "return_attention) + attention_stats(normalise_length=100) on 200 held-out "
               "documents per element",
    metric="log ratios of the length-debiased mean attention per pair kind (pairs of non-[MASK] "
           "positions; 'same topic' excludes the same word at another position)",
    tolerance="per log ratio: t_79 x the sd of the statistic over 80 calibration elements "
              "(seeds 10000..10003, disjoint; noise only) x sqrt(1 + 1/80), one-sided level "
              "2e-5 per draw for (a), 2e-6 per ratio and draw for (b), normal model of the "
              "seed-to-seed spread",
    reading="'On average' read as the length-debiased mean over held-out pairs (Appendix E.3: "
            "weights x N/100).  '>' read as the order itself: log ratio > 0, shown on the "
            "draw beyond the seed-to-seed spread of the same statistic (an untrained model's "
            "chance order of ~1e-5 in log ratio is far inside it); the nulls show that the property needs trained attention, the true topics "
            "and, for (b), the diagonal W^V.  (a) uses the jointly trained W^V "
            "(block-plus-diagonal here).  The explicit example is seed 0 with the paper's p_m, "
            "p_c, p_r.",
    paper_setting="the paper's T = v = 10 (Sec. 6) is not run: the order is tested against "
                  "the seed-to-seed noise of the statistic, measured at T = v = 5 only (80 "
                  "calibration elements); at T = v = 10 that noise would need its own "
                  "calibration runs (~14 s + 8 s per element for the joint and D^V models on "
                  "one core, measured 2026-12-04), not made in this session",
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


def _check(world, seed, model, ratios, level):
    if model == "dv":
        model = world.simulation(frozen_wv, "frozen_wv")()
    s = world.simulation(attention, "attention", pure=True)(seed, model)
    what = ", ".join(f"{k} {np.exp(x[0]):.3f}" for k, x in s.items())
    for m, r in ratios:
        order_beyond_seed_noise(CID, float(s[r][0]), LDA_CALIBRATION[f"{m}:{r}"],
                                LDA_CALIBRATION, level=level,
                                what=f"({model}) log {r} (ratios: {what}; T = v = {EMP['T']})")


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_attention_order_joint(world, seed):
    _check(world, seed, "joint", ITEM_A, LEVEL_A)


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_attention_order_diagonal_wv(world, seed):
    _check(world, seed, "dv", ITEM_B, LEVEL_B)
