"""topic.empirical.wv_blockwise_l2: with one-hot embeddings frozen and uniform attention, the
trained W^V (with L2) has a block-wise pattern corresponding to the topics (Section 6, Figure 2).

One property: train W^V (runs.train_wv_blockwise: Adam with ridge on fresh LDA documents, CI size
T = v = 5, the paper's p_m, p_c, p_r) from the drawn generator seed and require its block
contrast (mean same-topic - mean different-topic entry, in units of Theorem 2's c3/v) to reach a
threshold set on 160 calibration elements from generator seeds 10000..10003 (disjoint from the
audit's 0..9999).

Nulls: "training_off" (zero optimiser steps: W^V at its N(0, 0.01^2) init), "topics_relabelled"
(the trained W^V read against a random relabelling of the word ids: the blocks no longer match
the topics).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

from properties import Claim, Tolerance, audits, check_at_least, examples, null, register
from properties.topic.runs import (WV_BLOCKWISE, WV_BLOCKWISE_CALIBRATION, block_contrast,
                                   train_wv_blockwise)

CID = "topic.empirical.wv_blockwise_l2"
AUDIT_SEEDS = range(0, 10000)
FALSE_FAIL = 1e-4  # per draw, under the normal model of the seed-to-seed variation


def training_off(seed):
    """Null: the optimiser switched off (zero steps)."""
    return train_wv_blockwise(seed, steps=0)


def topics_relabelled(seed):
    """Null: the trained W^V read against a random relabelling of the word ids."""
    W = train_wv_blockwise(seed)
    n = W.shape[-1]
    perm = np.r_[0, 1 + np.random.default_rng(seed).permutation(n - 1)]
    return W[:, perm][:, :, perm]


def threshold():
    """Lower prediction bound for one new element's block contrast: mean - t_{n-1} sd
    sqrt(1 + 1/n) of the calibration scores (normal model), one-sided false-fail FALSE_FAIL."""
    x = np.asarray(WV_BLOCKWISE_CALIBRATION["scores"], dtype=np.float64)
    cal = WV_BLOCKWISE_CALIBRATION["generator_seeds"]
    if max(cal.start, AUDIT_SEEDS.start) < min(cal.stop, AUDIT_SEEDS.stop):
        raise ValueError("calibration seeds must be disjoint from the audit's")
    n = x.size
    t = float(stats.t.isf(FALSE_FAIL, n - 1))
    value = float(x.mean() - t * x.std(ddof=1) * np.sqrt(1 + 1 / n))
    return Tolerance.derived(
        value, f"normal lower prediction bound from {n} calibration elements (generator seeds "
               f"[{cal.start}, {cal.stop}) x {WV_BLOCKWISE_CALIBRATION['elements_per_seed']}; "
               f"audit seeds [{AUDIT_SEEDS.start}, {AUDIT_SEEDS.stop})): mean {x.mean():.4f} - "
               f"t_{n - 1} {t:.2f} x sd {x.std(ddof=1):.4f}; calibration min {x.min():.4f}; "
               f"Shapiro-Wilk p = {stats.shapiro(x).pvalue:.2f}",
        FALSE_FAIL)


register(Claim(
    id=CID, where="Section 6 (Figure 2)",
    statement="With one-hot embeddings frozen and uniform attention (W^K = W^Q = 0), the trained "
              "W^V (with L2) has a block-wise pattern corresponding to the topics.",
    assumptions="LDA data (T = 10 topics in the paper; Dirichlet(0.1), N in 100..150), p_m = 0.15, "
                "p_c = p_r = 0.1, squared loss, Adam, ridge on W^V, finite documents.",
    prediction="block structure: the block contrast reaches the level of the calibration runs",
    simulation="properties.topic.runs.train_wv_blockwise (sim.topic.train(Switches(onehot, "
               "uniform)), Adam lr 0.02, ridge 1e-4, 300 steps, batch 32, T = v = 5)",
    metric="(mean same-topic off-diagonal - mean diff-topic entry of the word block) / (c3/v)",
    tolerance="normal lower prediction bound (false-fail 1e-4 per draw) from 160 calibration "
              "elements on generator seeds 10000..10003, disjoint from the audit's 0..9999",
    reading="'Block-wise' read as a same-topic vs different-topic contrast of W^V's word block "
            "as large as the calibration runs give (mean 0.93 c3/v); the nulls show that the "
            "property needs both the training and the true topic labels.  CI size T = v = 5 in "
            "every profile (the paper's T = v = 10 is not run); the explicit example is seed 0 "
            "with the paper's p_m, p_c, p_r and optimiser.  The threshold uses a normal model of "
            "the seed-to-seed variation instead of the distribution-free rank (the smallest of "
            "160 elements would cost 1/161 false-fails per draw).",
    history=(
        "2026-12-03: threshold 0.5 c3/v (set from 2-3 seeds, 'a judgement') replaced by a "
        "normal prediction bound on 160 calibration elements (issue finding); the number control "
        "(relabelled score) replaced by the nulls training_off and topics_relabelled; one "
        "element per draw (was 3 batched seeds with a min).",
    ),
    alternatives=(
        null("training_off", training_off, "optimiser off: W^V at its N(0, 0.01^2) init",
             replaces="train"),
        null("topics_relabelled", topics_relabelled, "topics relabelled at random: the block "
             "structure read against the wrong topics", replaces="train"),
    ),
))


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_wv_blockwise_l2(world, seed):
    W = world.simulation(train_wv_blockwise, "train", pure=True)(seed)
    score = float(block_contrast(W)[0])
    check_at_least(CID, score, threshold(),
                   what=f"block contrast {score:.4f} c3/v (T = v = {WV_BLOCKWISE['T']})")
