"""joma.table1: Section 6, Table 1, every latent has a hidden MLP node of the same layer with high
normalized correlation (NCorr) with it; the correlation goes down a bit for a more complicated
model.

Runs: properties.joma.runs.table1_run at Table 1's two extreme configurations, trained and (the
null) at its initialisation on the same evaluation samples; audited is what training adds.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume

from properties import Claim, Threshold, audits, check_at_least, null, register
from properties.joma.common import EPS32, TABLE1_DRAWS, dyn_draws, table1_seeds
from properties.check import size
from properties.joma.figures import plot_table1
from properties.joma.runs import COMPLEX, SIMPLE, TABLE1_CI, table1_run, table1_setting

CID = "joma.table1"
NCORR_FLOOR = Threshold(1e3 * EPS32, "derived: float32 round-off of a correlation (|NCorr| <= "
                        "1): 1e3 x eps32", "derived")


def run_trained(seeds, config):
    """(S, 2) NCorr at s = 0, 1 after training."""
    return table1_run(seeds, config, table1_setting())["trained"]


def run_untrained(seeds, config):
    """Null: the same network at its initialisation (training off), the same samples."""
    return table1_run(seeds, config, table1_setting())["untrained"]


register(Claim(
    id=CID, where="Section 6, 'Validation of Alignment between latents and hidden nodes in MLP', "
                  "Table 1",
    statement="In the learned models, for each latent there exists at least one hidden node in "
              "the MLP of the same layer with high normalized correlation with it, in particular "
              "in the lowest layer (Table 1: NCorr(s=0) 0.94-1.00, NCorr(s=1) 0.55-0.81); when "
              "the generative model becomes more complicated (N_ch and N_s larger) the "
              "correlation goes down a bit.",
    assumptions="3-layer generative model (classes -> N_1 -> N_0 -> tokens), M = 100, T = 30, "
                "rho = 1, tokens sorted (the authors' generator); transformer trained by Adam on "
                f"the class label. CI: d = {TABLE1_CI.d}, {TABLE1_CI.depth} layers (s = 0, 1), "
                f"{TABLE1_CI.steps} steps, lr {TABLE1_CI.lr:g}, batch {TABLE1_CI.batch}, 3 seeds "
                "per config, configs (C, N_ch, N_s) = (20, 2, (10, 20)) and (50, 3, (20, 30)) "
                "(Table 1's extremes). The paper's size (d = 1024, 3 layers, lr 1e-5, 10k "
                "steps) is runs.TABLE1_PAPER, used by the same property under `thorough` when "
                "CUDA is present (never on a CPU; not run so far: no device was lent).",
    prediction="training adds alignment: NCorr(s=1) trained > untrained in every seed at the "
               "simplest config; the "
               "complexity drop NCorr_simple(s=1) - NCorr_complex(s=1) larger trained than "
               "untrained",
    simulation="properties.joma.runs.table1_run (sim.joma + sim.transformer + "
               "sim.measure.best_match_ncorr)",
    metric="per seed: mean over latents (those varying in the eval sample) of the best-matching "
           "neuron's NCorr; each neuron's max activation over real positions, centred over 256 "
           "eval samples",
    tolerance=f"every comparison by more than {NCORR_FLOOR.value:.2g} (float32 round-off of a "
              "correlation, derived); the comparisons are per seed and exact for those seeds "
              "(no false-fail budget)",
    reading="Generator: Table 1's N_s has MORE latents above than below ((10, 20)), impossible "
            "for a tree, so the literal reading is a layered DAG (sim.joma, structure='dag'); "
            "NCorr = Pearson correlation. At s = 0 an UNTRAINED network already reaches ~0.98 "
            "(with rho = 1 a lowest latent is on iff its tokens are present, and random ReLU "
            "neurons maxed over the sequence detect single tokens), so the s = 0 column of "
            "Table 1 is not evidence of learning and is reported, not asserted; what training "
            "adds is asserted at s = 1 and in the complexity trend.",
    audit_gap="the absolute NCorr values of Table 1 ('high': 0.94-1.00 at s = 0, 0.55-0.81 at "
              "s = 1) at the paper's size (d = 1024, 3 layers, 10k steps) are not reproduced "
              "(CUDA only, no device lent); at CI size the s = 0 level is reached without "
              "training, so 'in the learned models ... in particular in the lowest layer' is not "
              "distinguishable from the untrained network there. Prepared for a CUDA machine: "
              "`python -m properties audit --size paper --device cuda --only 'joma.table1' "
              "-n 0 --report /tmp/table1-paper` (one draw: the two configurations x 3 seeds at "
              "d = 1024, 3 layers, 10k steps; ~8 min on one H200 by a FLOP count); record its "
              "NCorr numbers here when run.",
    paper_setting="Table 1's setting (d = 1024, 3-layer transformer, Adam lr 1e-5, M = 100, T = "
                  "30, 5 seeds, 12 configurations; the text gives no step count) does not fit CI's "
                  "2 cores: it is prepared for CUDA only (runs.TABLE1_PAPER, not run yet); CI runs "
                  "Table 1's two extreme configurations at d = 32, 2 layers, 200 steps, 3 seeds.",
    alternatives=(
        null("untrained", run_untrained, "training off: the network at its initialisation, "
             "evaluated on the same samples", replaces="run"),
    ),
    plot=plot_table1,
))


@audits(CID)
@dyn_draws(TABLE1_DRAWS)
def test_table1_training_adds(world, base):
    # at size `paper` (d = 1024, 3 layers, 10k steps: CUDA only) one draw (2 configurations x 3
    # seeds, ~8 min on one H200 by a FLOP count) is what one device call affords: the others
    # are skipped there (the paper-size run records numbers; it does not meet the draw gate)
    assume(size() != "paper" or base == TABLE1_DRAWS[0])
    seeds = table1_seeds(base)
    run = world.simulation(run_trained, "run", pure=True)
    simple, complex_ = run(seeds, SIMPLE), run(seeds, COMPLEX)
    u_simple, u_complex = run_untrained(seeds, SIMPLE), run_untrained(seeds, COMPLEX)
    check_at_least(CID, float(np.min(simple[:, 1] - u_simple[:, 1])), NCORR_FLOOR,
                   what="C=20, N_ch=2 (simplest): trained - untrained NCorr(s=1), min over seeds")
    trend = (simple[:, 1] - complex_[:, 1]) - (u_simple[:, 1] - u_complex[:, 1])
    check_at_least(CID, float(trend.mean()), NCORR_FLOOR,
                   what="complexity drop of NCorr(s=1), trained minus untrained, seed mean")
