"""topic.empirical.attention_order: (a) with W^K, W^Q, W^V trained jointly, each word pays on
average more attention to words of the same topic than to words of different topics; (b) with
W^V diagonal (D^V) the order is partially reversed: same word > different topic > same topic
(different word) (Section 6, Appendix E.2, Tables 3 and 4).

Two properties, one per item, on the drawn generator seed (runs.lda_run, CI size T = v = 5,
documents N in 100..150, 200 held-out documents drawn before the init): the length-debiased
(Appendix E.3) mean attention per pair kind, as log ratios, each against a normal lower
prediction bound from 80 calibration elements on generator seeds 10000..10003 (disjoint from the
audit's 0..9999), false-fail 1e-4 per item and draw (5e-5 per ratio in (b)).
  (a) "joint" model: log(same topic / different topic);
  (b) "dv" model (W^V frozen to Definition 2's D^V): log(same word / different topic) and
      log(different topic / same topic).

Nulls (slot "attention"): "training_off" (zero steps: W^K, W^Q at their N(0, 0.01^2) init),
"uniform_attention" (the trained model read with W^K = W^Q = 0), "topics_relabelled" (the
trained model's attention, pairs classified by topic-scrambled word ids: word j of topic t ->
topic t + j mod T, so relabelled same-topic pairs are true different-topic pairs).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import attach_plot
from properties import Claim, audits, check_at_least, examples, null, register
from properties.topic.common import EMPIRICAL_AUDIT_SEEDS, EMPIRICAL_FALSE_FAIL, normal_bound
from properties.topic.figures import plot_attention_order
from properties.topic.runs import EMP, LDA_CALIBRATION, attention_order_scores

CID = "topic.empirical.attention_order"
AUDIT_SEEDS = EMPIRICAL_AUDIT_SEEDS
ITEM_A = (("joint", "same_topic/diff_topic"),)
ITEM_B = (("dv", "same_word/diff_topic"), ("dv", "diff_topic/same_topic"))


def attention(seed, model):
    """Log attention ratios of the trained `model` ("joint" or "dv") on held-out documents."""
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


def threshold(model, ratio, k):
    """Bound for one of the k log ratios of an item: false-fail 1e-4 per draw, split over k."""
    key = f"{model}:{ratio}"
    return normal_bound(LDA_CALIBRATION[key], LDA_CALIBRATION, side="lower",
                        what=f"log {ratio} attention, {model} model",
                        false_fail=EMPIRICAL_FALSE_FAIL / k)


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
               "different topic > same topic (different word), each log ratio at the level of "
               "the calibration runs",
    simulation="properties.topic.runs.lda_run('joint' / 'dv') + sim.topic.forward("
               "return_attention) + attention_stats(normalise_length=100) on 200 held-out "
               "documents per element",
    metric="log ratios of the length-debiased mean attention per pair kind (pairs of non-[MASK] "
           "positions; 'same topic' excludes the same word at another position)",
    tolerance="per log ratio, a normal lower prediction bound (false-fail 1e-4 per item and "
              "draw: 1e-4 for (a), 5e-5 for each ratio of (b)) from 80 calibration elements on "
              "generator seeds 10000..10003 (20 each), disjoint from the audit's 0..9999",
    reading="'On average' read as the length-debiased mean over held-out pairs (Appendix E.3: "
            "weights x N/100).  '>' read as an order at the level the calibration runs give; "
            "the nulls show that the property needs trained attention and the true topics.  "
            "(a) uses the jointly trained W^V (block-plus-diagonal here).  The calibrated bounds "
            "are, as ratios, 1.35 for (a) (calibration mean 1.99) and 6.0, 2.2 for (b) (means "
            "7.1, 2.5).  The explicit example is seed 0 with the paper's p_m, p_c, p_r.",
    history=(
        "2026-12-02 (old code, 17e18a7): (a) moved from documents N in 20..30 to the paper's N "
        "in 100..150 after (a) was not seen with short documents at 400 steps (ratio ~ 1.0).",
        "2026-12-02 (old code, 0d46842): the control changed from a uniformly random "
        "relabelling (ratio 1.37 at T = v = 5: not rejected) to the topic-scrambling "
        "relabelling kept here as the null topics_relabelled.",
        "2026-12-03: the thresholds 1.2 (a), 1.5 and 1.2 (b) (set from 2-3 seeds, 'a "
        "judgement') replaced by normal prediction bounds from 80 calibration elements (issue "
        "12); the number controls (relabelled ratio, 0.0) replaced by the nulls training_off, "
        "uniform_attention, topics_relabelled; one element per draw (was 3 batched seeds with "
        "a min).",
    ),
    alternatives=(
        null("training_off", training_off, "optimiser off: W^K, W^Q at their N(0, 0.01^2) init",
             replaces="attention"),
        null("uniform_attention", uniform_attention, "the trained model read with uniform "
             "attention (W^K = W^Q = 0)", replaces="attention"),
        null("topics_relabelled", topics_relabelled, "pairs classified by topic-scrambled word "
             "ids (relabelled same-topic pairs are true different-topic pairs)",
             replaces="attention"),
    ),
))
attach_plot(CID, plot_attention_order)


def _check(world, seed, model, ratios):
    s = world.simulation(attention, "attention", pure=True)(seed, model)
    what = ", ".join(f"{k} {np.exp(x[0]):.3f}" for k, x in s.items())
    for m, r in ratios:
        check_at_least(CID, float(s[r][0]), threshold(m, r, len(ratios)),
                       what=f"({model}) log {r} (ratios: {what}; T = v = {EMP['T']})")


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_attention_order_joint(world, seed):
    _check(world, seed, "joint", ITEM_A)


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_attention_order_diagonal_wv(world, seed):
    _check(world, seed, "dv", ITEM_B)
