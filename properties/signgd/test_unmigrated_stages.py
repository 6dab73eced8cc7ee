"""Audit of "On the optimization and generalization of two-layer transformers with sign gradient
descent" (Li et al., ICLR 2025), part 3 of the claims not yet migrated: the stage order, T_2 vs T_1,
Lemma 4.3 (4) on continuum-regime runs, Theorem 3.2 (2) and Appendix F.1.

Simulation: `sim.signgd` (Definition 2.1 data, Eq. 1 model, full-batch SignGD, float64, seeds
batched).  Closed forms: `theory.signgd`.  The paper's math was lost in extraction; its rebuilt
forms live in ../shared/papers/signgd_li2025_statements.md ([C]/[R]/[D] tags).  Every run here is
in the sheet's CPU-sized setting (orthogonal data, disjoint training supports, test supports
apart): n = 8, s in [20, 30], sigma_p in [1, 2], m_k = 8, m_v = 16, sigma_0 ~ 1e-3, eta ~ 6e-5.
Under SignGD with the fixed head, m_v only enters through the init of the mean value vector.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, attach_plot, audits, check_at_least, check_close, examples, register
from sim import signgd as sim
from theory import signgd as th
from properties.signgd.runs import (  # noqa: F401  (shared runs and settings)
    SEED, N_SAMPLES, M_K, M_V, LOG, _SETTING, _RANGE, _STAGES, _all_noise_aligned, H, TAIL,
    _run, CAP, CANON, STAGE_RUN, stage_run, _at, _fin, TABLE2, COLS, _table, _table_fractions,
    _table_at_end_of_stage3, TABLE2_FR, TABLE2_N, MV_GRID, MV_ROWS, TT_SEEDS, TT_CAP, TT_CANON,
    TT_RUN, _TT_RANGE, _TT_SETTING, _problem, _aligned_qk, _tt_run, tt_run, L43_S, L43_SEEDS,
    L43_CANON, L43_RUN, L43_DELTA, L43_PRINTED, _L43_SETTING, _sign_patterns, _l43_runs,
    l43_run, OPT_SEEDS, OPT_LOG_EVERY, OPT_LOG, _OPT_SETTING, GD_TAIL, GD_RATES, GD_SIGMA_P,
    _gd_runs, _GD_SETTING, _T32)
from properties.signgd.common import _lemma45_checks  # noqa: F401  (shared with test_unmigrated_opt)
from properties.signgd.figures import _plot_l43, _plot_losses, _plot_softmax, _plot_table2  # noqa: E402,F401,E501


# --------------------------------------------------------------------------------------------
# Theorem 3.2
# --------------------------------------------------------------------------------------------
register(Claim(
    id="signgd.theorem3_2.item2", where="Theorem 3.2 (2)",
    statement="The trained transformer has a constant-order test loss.",
    prediction="L_D(end) >= 0.1 while L_S(end) <= 1e-3",
    metric="min over seeds of the test loss at the last step",
    tolerance="threshold 0.1 for 'Theta(1)' (the control: the training loss, which must fail it)",
    reading="Theta(1) read as bounded below by 0.1 at the end of training.",
    asymptotic="the problem size (a constant-order test loss)", **_T32))


@audits("signgd.theorem3_2.item2")
@examples(1)
@stage_run
def test_signgd_theorem3_2_item2(cfg):
    tr, q, st_ = _run(*cfg)
    check_at_least("signgd.theorem3_2.item2", float(tr.test_loss[-1].min()), 0.1, "L_D(end) >= 0.1",
                   control=float(q["train_loss"][-1].max()), what="test loss Theta(1)")
