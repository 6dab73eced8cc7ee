"""The noise floors of the topic.empirical orders (properties/topic/common.py): the relabelled
statistics reduce to the audited statistic at the identity labelling, their level is exact, and
the seed-noise bound uses the calibration spread only (not its mean)."""

from __future__ import annotations

import numpy as np
import pytest

from properties.check import ClaimMismatch
from properties.procedures import check_beyond_permutations
from properties.topic import common
from sim import topic as sm


def _block_W(T, v, same, diff, diag, rng, noise=0.0):
    n = T * v
    topic = np.arange(n) // v
    W = np.where(topic[:, None] == topic[None, :], same, diff) + noise * rng.normal(size=(n, n))
    W[np.arange(n), np.arange(n)] = diag
    out = np.zeros((n + 1, n + 1))
    out[1:, 1:] = W
    return out


def test_permutations_for_level():
    for level in (2e-5, 1.6e-5, 1.2e-5, 1e-3):
        P = common.permutations_for(level)
        assert 1 / (P + 1) <= level * (1 + 1e-12) and 1 / P > level
    with pytest.raises(ValueError, match="level"):
        common.permutations_for(0.0)


def test_relabelled_contrasts_are_the_statistic_of_relabelled_weights():
    rng = np.random.default_rng(0)
    T, v = 4, 3
    W = rng.normal(size=(T * v + 1, T * v + 1))
    got = common.relabelled_contrasts(W, T, v, 50, seed=7)
    # recompute each from the labelling the same generator draws
    r2 = np.random.default_rng(7)
    lab = r2.permuted(np.broadcast_to(np.arange(T * v) // v, (50, T * v)), axis=1)
    for k in range(50):
        order = np.argsort(lab[k], kind="stable")  # words grouped by their new topic
        perm = np.r_[0, 1 + order]
        sc = sm.block_scores(W[perm][:, perm], T, v)
        assert got[k] == pytest.approx(sc["same_topic"] - sc["diff_topic"], abs=1e-12)


def test_within_topic_diagonal_keeps_block_sums_and_moves_the_diagonal():
    rng = np.random.default_rng(1)
    T, v = 3, 4
    W = _block_W(T, v, 1.0, 0.0, 3.0, rng)
    noise = common.within_topic_diagonal(W, T, v, 200, seed=3)
    sc = sm.block_scores(W, T, v)
    obs = sc["diag"] - sc["same_topic"]
    assert obs == pytest.approx(2.0)
    assert noise.max() <= obs + 1e-12  # no permutation puts more mass on the diagonal
    assert noise.min() < obs  # and most move it off


def test_beyond_permutations_passes_structure_and_rejects_noise():
    rng = np.random.default_rng(2)
    T, v = 5, 5
    W = _block_W(T, v, 1.0, 0.0, 1.0, rng, noise=0.05)
    P = 999
    sc = sm.block_scores(W, T, v)
    score = float(sc["same_topic"] - sc["diff_topic"])
    check_beyond_permutations("topic.empirical.wv_blockwise_l2", score,
                              common.relabelled_contrasts(W, T, v, P, 5), what="t", kind="k")
    Wn = rng.normal(size=W.shape)  # no structure: exchangeable with its relabellings
    scn = sm.block_scores(Wn, T, v)
    with pytest.raises(ClaimMismatch):
        check_beyond_permutations("topic.empirical.wv_blockwise_l2",
                                  float(scn["same_topic"] - scn["diff_topic"]) - 10.0,
                                  common.relabelled_contrasts(Wn, T, v, P, 5), what="t",
                                  kind="k")


def test_order_beyond_seed_noise_reads_only_the_spread():
    cal = {"generator_seeds": (10000, 10004), "elements_per_seed": 20}
    x = np.random.default_rng(3).normal(0.0, 0.1, 80)
    # the same spread around a mean of 0 or of 100 gives the same threshold
    for shift in (0.0, 100.0):
        common.order_beyond_seed_noise("topic.empirical.attention_order", 0.6, x + shift, cal,
                                       level=2e-5, what="t")
        with pytest.raises(ClaimMismatch):
            common.order_beyond_seed_noise("topic.empirical.attention_order", 0.3, x + shift,
                                           cal, level=2e-5, what="t")
    with pytest.raises(ValueError, match="disjoint"):
        common.order_beyond_seed_noise("topic.empirical.attention_order", 0.6, x,
                                       {"generator_seeds": (0, 4), "elements_per_seed": 20},
                                       level=2e-5, what="t")
