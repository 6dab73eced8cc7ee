"""JoMA Sections 4 and 6 (Fig. 7): the stable rank of the MLP lower layer W1 first drops (salient
components learned first) and then bounces back when the non-salient components catch up (top
layers; bottom layers may only drop).

Simulation: properties.joma.runs.dynamics_run, a decoder-only transformer (sim.transformer,
post-LN, 2 layers, Adam, float32) trained on next-token prediction on Table 1's simplest
generator (C = 20, N_ch = 2, N_s = (10, 20), rho = 1), one stacked program per rung for every
seed of the three explicit draws (12 at size ci, 36 at the long ladder), each draw deciding on
its 2 blocks (8 / 24 seeds); Wikitext (Figs. 6, 8) is not available offline.  Both token
orders are encoded: SORTED (the generator as printed: the authors' released generator writes
the set of tokens in ascending order) and RANDOM
(a random permutation per sample, adopted by the old module after the sorted order showed no
rebound: see the claim's history).  The runs are the entropy claim's (cached, shared).

Decision (asymptotic policy, in the model size d): at every rung of the ladder (ci: d = 8, 16,
32; ladder: 16, 32, 64, 128, plus the paper's d = 1024 when CUDA is present) the top layer's
stable rank must drop in every seed (relative drop above float32 round-off); the relative
bounce-back sr(T) / min_t sr(t) - 1 (mean over seeds, with its standard error) must then grow
significantly with d (check_trend,
direction increasing, on the per-seed values: seed-clustered Student t, false-fail 1e-5): a bounce-back that vanishes with size refutes, a flat one is
inconclusive (reported with its numbers).
Alternatives (same draws, same body):
  null untrained         (slot run) every logged time is the initialisation (training off);
  null attention_frozen  (slot run) Wq, Wk of every block held at their initialisation.
"""

from __future__ import annotations

import numpy as np

from properties import (Claim, Threshold, attach_plot, audits, check_at_least, check_trend,
                        register)
from properties.joma.common import DYN_TREND_FF, EPS32, drop_and_rebound, dyn_draws, dyn_rungs
from properties.joma.figures import plot_dynamics_trained
from properties.joma.runs import DYN_NULLS, DYN_SETTING

CID = "joma.sec4.rank_dynamics_trained"
SR_FLOOR = Threshold(1e3 * EPS32, "derived: float32 round-off of W1, 1e3 x eps32 relative "
                     "(the stable rank is computed in float64 from float32 weights)", "derived")


register(Claim(
    id=CID,
    where="Section 4 ('Relationship with rank of MLP lower layer'), Section 6, Fig. 7",
    statement="The stable rank of the MLP lower layer W (projection into hidden nodes) first "
              "drops (salient components learned first) and then bounces back when the "
              "non-salient components catch up (salient for top layers; bottom layers may only "
              "drop).",
    assumptions=DYN_SETTING,
    prediction="at every rung the top layer's stable rank drops (every seed); the relative "
               "bounce-back sr(T) / min_t sr(t) - 1 grows with d toward the paper's size",
    simulation="properties.joma.runs.dynamics_run (sim.measure.stable_rank of blocks[l].W1, "
               "10 probes + the initialisation)",
    metric="stable rank ||W1||_F^2 / ||W1||_2^2 of the top block; per seed 1 - min_t sr / sr(0) "
           "and sr(T) / min_t sr - 1; per rung the mean bounce-back with its standard error; "
           "weighted slope against log d",
    tolerance=f"drop: every seed's relative drop above {SR_FLOOR.value:.2g} (float32 round-off, "
              "derived); "
              "trend: check_trend direction increasing on the per-seed values (seeds x rungs: "
              "one slope per seed, seed-clustered Student t on seeds - 1 dof: 7 at size ci, 23 "
              "at the long ladder), "
              "false-fail 1e-5 per trend (6 trends per claim: 6e-5 within the share "
              "1e-4), trend rival: slope 0",
    reading="'Rank' = stable rank (the paper's Fig. 7 quantity, there measured on OPT / Pythia "
            "checkpoints, which are not available offline); 'top layers' = the last of the 2 "
            "layers. Asymptotic in the model size, decided by the trend of the bounce-back over "
            "the ladder. Earlier (old module) measurements at d = 32: the bounce-back was 0-7.5% "
            "(mostly 0) at rho = 1 random order; 0-31% at rho 0.7-0.9, not robust; at 1600 steps "
            "the stable rank keeps falling (median drop 60-66%).",
    reason="Issue 23, 8 seeds per draw (4 per program; first run 2026-12-04): in random order "
           "too the top layer's stable rank does not drop at d = 8 in some seed (relative drop "
           "0 on draws 1000 and 2000, not on draw 0: by elimination a seed of 2000-2003, most "
           "likely the added 2003), so both printed properties fail the per-rung drop check at "
           "the smallest rung only (sorted: all 3 draws, as before); the bounce-back trend "
           "(draw 0) is -0.030 +- 0.19 (0.052 / 0.045 / 0.011 at d = 8 / 16 / 32: falling, not "
           "significant). The harness reports this refuted although every failure is at one "
           "size (d = 8), which the asymptotic policy does not earn (with 6 seeds the same "
           "one-size failure of the sorted order was 'would be refuted, not earned'). "
           "Issue 23 (seed-clustered t, 6 seeds per draw, false-fail 1e-5): random order, the "
           "relative bounce-back is 0.04 / 0.03-0.06 / 0.001-0.005 at d = 8 / 16 / 32 on the "
           "three draws (slopes -0.027 .. -0.032 +- 0.20-0.25): falling, not significantly; so "
           "the refutation below is not earned at CI size and the claim is not-audited. Before "
           "issue 23 (normal critical value on 3-seed SEs): "
           "On the ci ladder (d = 8, 16, 32; 400 Adam steps; 3 seeds per rung; 3 shared draws) "
           "the top layer's stable rank drops (random order: 28-32% at d = 32) but does not "
           "bounce back at the larger sizes: random order, the relative bounce-back sr(T) / "
           "min_t sr - 1 falls with d (draw 1000: 0.032 / 0.061 / 0 at d = 8 / 16 / 32, slope "
           "-0.055 +- 0.037, significantly decreasing; at d = 32 the minimum is the last probe "
           "in every seed); sorted order, at d = 8 the stable rank does not drop at all in some "
           "seed. So within the audited sizes the bounce-back is a small-model effect that "
           "vanishes with d, not a trend toward the paper's claim. The paper's evidence (Fig. 7) "
           "is from OPT / Pythia checkpoints, which this audit does not have.",
    asymptotic="the model size d",
    paper_setting="Fig. 7 measures the stable rank of OPT-2.7B and Pythia-70M/1.4B/6.9B "
                  "checkpoints on Wikitext103, which are not available offline (nor trainable on "
                  "CI's 2 cores); 2-layer transformers on Table 1's generator at d = 8, 16, 32 "
                  "(size ci) stand in.",
    alternatives=(
        *DYN_NULLS,
    ),
))


def decide(world, base, order):
    """Every rung: the top layer's stable rank drops in every seed; then the bounce-back's
    trend in d, seed-clustered (one slope per seed over the rungs; Student t on seeds - 1 dof)."""
    sizes, reb_cols = [], []
    for st_, r in dyn_rungs(world, base, order):
        drop, reb = drop_and_rebound(r["sr"][:, -1], relative=True)
        check_at_least(CID, float(drop.min()), SR_FLOOR,
                       what=f"{order}, d = {st_.d}: top-layer relative drop, min over seeds")
        sizes.append(st_.d)
        reb_cols.append(reb)
    check_trend(CID, sizes, np.array(reb_cols).T, direction="increasing", log_values=False,
                false_fail=DYN_TREND_FF, rivals=(0.0,),
                what=f"{order} order: top-layer relative bounce-back vs d")


SORTED_FAILS = ("sorted order, ci ladder: at d = 8 the top layer's stable rank does not drop "
                "below its initial value in some seed (relative drop 0), on every shared draw")
RANDOM_FAILS = ("random order, ci ladder: with 8 seeds per draw the top layer's stable rank "
                "does not drop at d = 8 in some seed on draws 1000 and 2000 (relative drop 0); "
                "the bounce-back falls with d (0.05 / 0.04 / 0.01 at d = 8 / 16 / 32 on draw 0), "
                "not significantly at size ci")


@audits(CID, fails={"ci": SORTED_FAILS})
@dyn_draws()
def test_sec4_rank_dynamics_trained_sorted(world, base):
    """The generator as printed (tokens in ascending order)."""
    decide(world, base, "sorted")


@audits(CID, fails={"ci": RANDOM_FAILS})
@dyn_draws()
def test_sec4_rank_dynamics_trained_random(world, base):
    """Tokens in a random order per sample (the order the old module adopted)."""
    decide(world, base, "random")


attach_plot(CID, plot_dynamics_trained("sr", "top-layer stable rank of W1"))
