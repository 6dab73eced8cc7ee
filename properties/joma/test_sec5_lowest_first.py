"""JoMA Section 5 (after Theorem 5, Fig. 5(b, c)): the learning dynamics first focuses on
associating the tokens in the same lowest hierarchy as the query, then reaches out to tokens
whose common latent ancestor is higher.

Simulation: the shared trained-transformer runs of properties.joma.runs.dynamics_run (the
entropy and rank claims' runs: Table 1's simplest generator, rho = 1, 2 layers, Adam lr 3e-3,
400 steps, one stacked program per rung for every seed of the three explicit draws, each draw
deciding on 2 blocks of them: 8 seeds per rung at size ci, 24 at the long ladder), measured in
the bottom attention layer: the centred
attention logit of each key group, grouped by sibling height H (H = 1: key under the same s = 0
latent as the query; H = 2: only a common s = 1 latent; H = 3: only the class).  Both token
orders are encoded (SORTED as printed in the authors' generator; RANDOM, the order the old
module used).

Decision (asymptotic policy, in the model size d): at every rung the bottom layer's attention
must become structured by H in every seed (the spread max_H - min_H of the group logits grows by
more than float32 round-off over training); the early lead of the lowest group, L = mean over
the first half of training of logit(H = 1) - max(logit(H = 2), logit(H = 3)) (mean over seeds
with its standard error), must then grow significantly with d toward the paper's size
(check_trend, direction increasing, on the per-seed values: seed-clustered Student t, false-fail 1e-5); flat is inconclusive, reported with its
numbers.
Alternatives (same draws, same body):
  null untrained         (slot run) every logged time is the initialisation (training off);
  null attention_frozen  (slot run) Wq, Wk of every block held at their initialisation.
"""

from __future__ import annotations

import numpy as np

from properties import (Claim, Threshold, attach_plot, audits, check_at_least, check_trend,
                        register)
from properties.joma.common import DYN_TREND_FF, EPS32, dyn_draws, dyn_rungs
from properties.joma.figures import plot_lowest_first
from properties.joma.runs import DYN_NULLS, DYN_SETTING

CID = "joma.sec5.lowest_first"
LOGIT_FLOOR = Threshold(1e3 * EPS32 * 10, "derived: float32 round-off, 1e3 x eps32 x 10 nats "
                        "(centred log-probabilities of 30 keys)", "derived")


register(Claim(
    id=CID, where="Section 5 (after Theorem 5, Fig. 5(b, c))",
    statement="The learning dynamics first focuses on associating the tokens in the same lowest "
              "hierarchy as the query m (they co-occur a lot with m), then gradually reaches out "
              "to tokens l' whose common latent ancestor is higher.",
    assumptions=DYN_SETTING + " Measured in the bottom attention layer.",
    prediction="at every rung the bottom-layer attention becomes structured by H (every seed); "
               "the early lead of the H = 1 group grows with d toward the paper's size",
    simulation="properties.joma.runs.dynamics_run (sim.measure.grouped_attention_logits with "
               "sim.joma.sibling_height), the entropy claim's runs",
    metric="per seed: centred layer-0 logits by H (mean over 64 eval samples, real query rows, "
           "real earlier keys), logged 10 times; structure = growth of max_H - min_H over "
           "training; early lead = mean over the first half of the logged times of logit(H=1) "
           "- max(logit(H=2), logit(H=3)); per rung the mean lead with its standard error",
    tolerance=f"structure: every seed above {LOGIT_FLOOR.value:.2g} (float32 round-off, "
              "derived); "
              "trend: check_trend direction increasing on the per-seed values (seeds x rungs: "
              "one slope per seed, seed-clustered Student t on seeds - 1 dof: 7 at size ci, 23 "
              "at the long ladder), "
              "false-fail 1e-5 per trend (6 trends per claim: 6e-5 within the share "
              "1e-4), trend rival: slope 0",
    reading="Fig. 5(b, c) illustrates the reduced JoMA dynamics (audited by joma.theorem5 and "
            "the sec5 claims); here the statement is read in trained transformers, the lowest "
            "hierarchy being H = 1. The runs are shared with the sec4 claims (rho = 1, where the "
            "DAG generator still has a co-occurrence hierarchy: a key under the query's own "
            "s = 0 latent is on whenever that latent is). Earlier (old module) at d = 32, "
            "rho = 0.8, random order, 64 runs: H = 1 was the first group over 0.2 nats in 41% "
            "(chance ~1/3), H = 3 tended to come last, H = 1 and H = 2 were not ordered.",
    reason="Issue 23, 8 seeds per draw (first run 2026-12-04): still inconclusive: random "
           "order slopes -0.26 +- 1.87 / -0.22 +- 1.85 / -0.24 +- 0.46 (lead -0.08 / -0.06..-0.13 "
           "/ -0.38..-0.46 nats at d = 8 / 16 / 32), sorted -0.13 +- 1.36 / -0.33 +- 1.49 / "
           "-0.18 +- 1.51. "
           "Issue 23 (seed-clustered t, 6 seeds per draw, false-fail 1e-5): the early lead of "
           "H = 1 is negative at every rung on every draw and falls with d (random order: "
           "-0.07..-0.09 / -0.06..-0.15 / -0.14..-0.38 nats at d = 8 / 16 / 32; sorted: "
           "-0.07..-0.15 / -0.19..-0.46 / -0.31..-0.56), but no trend is significant: "
           "not-audited. Before issue 23 (normal critical value on 3-seed SEs): "
           "On the ci ladder (d = 8, 16, 32; rho = 1; 400 Adam steps; 3 seeds per rung; 3 "
           "shared draws) the bottom-layer attention does become structured by H, but not "
           "lowest-first: in random order the H = 1 group's early lead over the higher groups "
           "is negative at every size and falls with d (draw 0: -0.08 / -0.07 / -0.45 nats at "
           "d = 8 / 16 / 32, slope significantly negative; the same on a second draw); in "
           "sorted order it is negative too (-0.04 .. -0.70) with no significant trend. The "
           "keys that gain attention early are the class-discriminative H = 2 / H = 3 ones. "
           "With the attention weights Wq, Wk frozen the H = 1 group leads slightly instead "
           "(+0.04 .. +0.13 at d = 32), so the learned attention moves away from it.",
    asymptotic="the model size d",
    paper_setting="Section 5 and Fig. 5(b, c) give no numerical setting (a qualitative account of "
                  "learning on HBLT data); 2-layer transformers on Table 1's generator (C = 20, "
                  "N_ch = 2, (N_0, N_1) = (10, 20), M = 100, T = 30) at d = 8, 16, 32 (size ci) "
                  "stand in.",
    alternatives=(
        *DYN_NULLS,
    ),
))


def decide(world, base, order):
    """Every rung: bottom-layer attention structured by H in every seed; then the trend in d of
    the lowest group's early lead, seed-clustered (one slope per seed over the rungs; Student t
    on seeds - 1 dof)."""
    sizes, lead_cols = [], []
    for st_, r in dyn_rungs(world, base, order):
        lg = r["logits"][:, :, 1:4]  # (t, seed, H = 1..3)
        spread = np.nanmax(lg, -1) - np.nanmin(lg, -1)  # (t, seed)
        check_at_least(CID, float(np.min(spread.max(0) - spread[0])), LOGIT_FLOOR,
                       what=f"{order}, d = {st_.d}: growth of the H-group spread, min over seeds")
        half = lg.shape[0] // 2
        lead = np.nanmean(lg[1:half + 1, :, 0] - np.nanmax(lg[1:half + 1, :, 1:], -1), 0)
        sizes.append(st_.d)
        lead_cols.append(lead)
    check_trend(CID, sizes, np.array(lead_cols).T, direction="increasing", log_values=False,
                false_fail=DYN_TREND_FF, rivals=(0.0,),
                what=f"{order} order: early lead of H = 1 (nats) vs d")


@audits(CID)
@dyn_draws()
def test_sec5_lowest_first_sorted(world, base):
    """The generator as printed (tokens in ascending order)."""
    decide(world, base, "sorted")


RANDOM_FAILS = ("random order, ci ladder: the early lead of H = 1 is negative and falls with d "
                "on every draw; with the seed-clustered t it is not significant at size ci "
                "(inconclusive); a draw where it is refutes")


@audits(CID, fails={"ci": RANDOM_FAILS})
@dyn_draws()
def test_sec5_lowest_first_random(world, base):
    """Tokens in a random order per sample (the order the old module adopted)."""
    decide(world, base, "random")


attach_plot(CID, plot_lowest_first)
