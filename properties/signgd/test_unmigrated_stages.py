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
# Lemma 4.3 (3) and (4), on runs in the continuum regime (uses _aligned_qk, TT_CAP above)
# --------------------------------------------------------------------------------------------




register(Claim(
    id="signgd.lemma4_3.item4", where="Lemma 4.3 (4) (end of Stage II), Section 4.1",
    statement="At T_2 the query and key signals alpha_s, beta_s are still at their init.",
    assumptions=_L43_SETTING,
    prediction="[R] read as o(1) relative motion, audited as a trend: [D] |alpha(T_2) - alpha(0)| "
               "<= eta T_2 and eta T_2 / sigma_0 = Theta(s^{-1/2}) to leading order "
               "(signgd.t2_vs_t1), so the median motion in units of sigma_0 (the init scale of "
               "alpha) decays in s with a log-log exponent of at most -1/2",
    simulation="sim.signgd.train (full model), every step",
    metric="fitted log-log slope over s of median_{seeds, neurons} |alpha(T_2) - alpha(0)| / sigma_0 "
           "(and the same for beta)",
    tolerance="Monte Carlo, one-sided: fitted exponent <= -1/2 + 3.29 x its standard error "
              "(bootstrap over seeds, 2000 resamples, fixed generator; false-fail 1e-3); control: "
              "exponent 0 ('a fixed fraction of the init', the reading that fails at CPU size) "
              "must be rejected. One-sided because the finite-s correction is one-sided: a "
              "two-sided check around -1/2 failed under the thorough profile at s up to 320 "
              "(exponent -0.573, tolerance 0.072, cfg (23638096, 1.0, 7e-4, 0.0117)); the "
              "measured exponents (-0.52 to -0.57) are steeper, consistent with beta's pull on "
              "near-zero crossings, |beta| / |b| ~ s^{-1/2}, fading as s grows (not derived "
              "further)",
    reading="At the CPU size s = 20-30 the signals have moved ~0.4-0.5 sigma_0 by T_2 (their init "
            "is ~0.7 sigma_0 in median), so 'still at init' holds only asymptotically, through "
            "s (Condition 3.1 ties s to d); the o(1) term is shown to shrink as s^{-1/2}. The "
            "grid stops at s = 160: under the thorough profile a draw at s = 320 (cfg (16189, "
            "1.5, 8.2e-4, 0.0147)) had a seed with a pair still unaligned after 6000 steps. In "
            "discrete time a disagreeing pair with |a(0) + b(0)| < c_i jumps over zero each step "
            "(a + b is conserved while they disagree) and waits for beta to break the tie, so "
            "T_2 has a heavy tail that grows with s at fixed eps; the suite's T_2 (every pair "
            "aligned) is then not reached within the cap.",
    plot=lambda path: _plot_l43(path),
    asymptotic="s (the signals' motion shrinks with s)",
))


@audits("signgd.lemma4_3.item4")
@examples(1)
@l43_run
def test_signgd_lemma4_3_item4(cfg):
    from properties.check import loglog_slope
    runs = _l43_runs(*cfg)
    xs = np.array(L43_S, float)
    g = np.random.default_rng(12345)
    for k_ in ("dalpha", "dbeta"):
        M = np.stack([runs[s][k_] for s in L43_S])  # (n_s, S, m_k)
        slope = loglog_slope(xs, np.median(M.reshape(len(xs), -1), 1))
        boot = []
        for _ in range(2000):
            idx = g.integers(0, M.shape[1], M.shape[1])
            boot.append(loglog_slope(xs, np.median(M[:, idx].reshape(len(xs), -1), 1)))
        tol = Tolerance.monte_carlo(float(np.std(boot)), 1e-3)
        bound = -0.5 + tol.value  # one-sided: decays at least as fast as s^-1/2
        check_at_least("signgd.lemma4_3.item4", bound - slope, 0.0,
                       f"fitted exponent <= -1/2 + {tol.value:.3g} ({tol.model})",
                       control=bound - 0.0, what=f"exponent of median |{k_[1:]}(T_2) - "
                                                 f"{k_[1:]}(0)| in s")


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
