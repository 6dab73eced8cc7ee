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
# T_1 in closed form, and T_2 vs T_1 as a scaling trend in m_v
# --------------------------------------------------------------------------------------------

register(Claim(
    id="signgd.t2_vs_t1", where="Section 4 (stage order T_1 << T_2), Lemmas 4.1-4.3; "
                                "Condition 3.1 (m_v = Omega(polylog d))",
    statement="T_1 << T_2: Stage I (mean value noise overtakes the signal) ends long before "
              "Stage II (query/key noise sign alignment) does.",
    assumptions=_TT_SETTING + "; " + _TT_RANGE,
    prediction="[D] the separation is in m_v alone: T_1 = Theta(sigma_0 / (eta sqrt(s m_v))) "
               "(signgd.t1_closed_form) while T_2 = T_2(inf) + R with 0 <= R <= 2 T_1 (pair model, "
               "theory.signgd.T2_DELAY_FACTOR), T_2(inf) the v(0) = 0 run: for every m_v of the "
               "grid, -1 <= median_seeds(T_2 - T_2(inf)) <= 2 median_seeds(T_1) (the -1: the "
               "v(0) = 0 run stands still at step 0, sgn D_i(0) = 0, so T_1(inf) = 1), so "
               "T_2 / T_1 = Theta(sqrt(m_v)) -> inf",
    simulation="sim.signgd.train (full model), every step, all seeds x m_v in one batch, to 1.5 x "
               "the first step with all pairs aligned; T_1 by sim.signgd.stage_times, T_2 by "
               "sim.signgd.qk_alignment_time (first step from which every pair agrees in sign "
               "through the end of the run)",
    metric="per m_v: median over seeds of T_2(m_v) - T_2(inf), against "
           "[-T_1(inf), 2 median T_1(m_v)]",
    tolerance="the pair model's delay bound (derived; per seed it can fail where alpha or beta "
              "decides a near-zero crossing, which the median over seeds absorbs); no extra "
              "slack. Control: 'T_2 / T_1 = Theta(1) along m_v' (T_2 shrinking with T_1 from "
              "m_v = 4) must leave the bracket at m_v = 256",
    reading="The printed '<<' holds, but only as m_v grows: the ratio T_2 / T_1 is Theta(1) along "
            "eta, sigma_0, s and sigma_p (their exponents cancel: both are sigma_0 / (eta sqrt(s)) "
            "times order statistics) and grows as sqrt(m_v) (measured medians ~4.5, ~7, ~13, ~24 at "
            "m_v = 4, 16, 64, 256 in the canonical draw; local log-log slopes rising towards 1/2 "
            "as the O(T_1 / T_2) delay term shrinks). The paper's m_v = Omega(polylog d) is what "
            "makes Stage I short. Outside the continuum regime (eps = eta sqrt(s) / sigma_0 "
            "~ 0.3, the sheet's CPU setting) T_1 is 1-3 steps and T_2 is inflated by pairs that "
            "chatter around zero (a + b is conserved while they disagree), so the sweep keeps "
            "eps <= 0.03.",
    plot=lambda path: _plot_t2_vs_t1(path),
    asymptotic='m_v (T_2 / T_1 ~ sqrt(m_v))',
))


@audits("signgd.t2_vs_t1")
@examples(1)
@tt_run
def test_signgd_t2_vs_t1(cfg):
    T1, T2, _, _, _, _, _ = _tt_run(*cfg)
    cid = "signgd.t2_vs_t1"
    assert np.isfinite(T2).all(), "some run did not align within the cap"
    T2inf = T2[-1]
    med_T1 = np.median(T1[:-1], axis=1)
    theta1 = np.median(T2[0]) * med_T1 / med_T1[0]  # control: T_2 / T_1 constant along m_v
    lo = -float(np.median(T1[-1]))  # the v(0) = 0 run stands still at step 0: sgn D_i(0) = 0
    for k, m in enumerate(MV_GRID):
        excess = float(np.median(T2[k] - T2inf))
        hi = th.T2_DELAY_FACTOR * float(med_T1[k])
        ctrl_lo = float(np.median(theta1[k] - T2inf)) if k == len(MV_GRID) - 1 else None
        check_at_least(cid, excess, lo, "median T_2 - T_2(inf) >= -T_1(inf)",
                       what=f"m_v = {m}, lower", control=ctrl_lo)
        check_at_least(cid, hi - excess, 0.0, "median T_2 - T_2(inf) <= 2 median T_1",
                       what=f"m_v = {m}, upper")


def _plot_t2_vs_t1(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    T1, T2, _, eta, _, _, _ = _tt_run(*TT_CANON)
    mv = np.array(MV_GRID, float)
    r = T2[:-1] / np.maximum(T1[:-1], 1)  # T_1 = 0 when every D_i(0) > 0
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot(mv, np.median(T1[:-1], 1), "o-", label="T_1 (median)")
    ax[0].plot(mv, np.median(T2[:-1], 1), "s-", label="T_2 (median)")
    ax[0].axhline(np.median(T2[-1]), color="C1", ls=":", label="T_2, m_v = inf")
    ax[0].plot(mv, np.median(T1[0]) * (mv / mv[0]) ** -0.5, "k--", lw=0.8, label="m_v^-1/2")
    ax[1].plot(mv, np.median(r, 1), "o-", label="median T_2 / max(T_1, 1)")
    ax[1].fill_between(mv, np.quantile(r, 0.25, 1), np.quantile(r, 0.75, 1), alpha=0.3)
    ax[1].plot(mv, np.median(r[0]) * (mv / mv[0]) ** 0.5, "k--", lw=0.8, label="m_v^1/2")
    for a_ in ax:
        a_.set_xscale("log"), a_.set_yscale("log"), a_.set_xlabel("m_v"), a_.legend()
    ax[0].set_ylabel("steps")
    fig.suptitle(f"signgd.t2_vs_t1: s = {TT_CANON[1]}, sigma_p = {TT_CANON[2]}, sigma_0 = "
                 f"{TT_CANON[3]}, eta = {eta:.2e}, {TT_SEEDS} seeds (IQR band)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


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


# --------------------------------------------------------------------------------------------
# Appendix F.1: 0-1 test error against the init scale
# --------------------------------------------------------------------------------------------
F1_SIGMA0 = (1e-3, 1e-2, 1e-1, 3e-1)
F1_STEPS, F1_NTEST, F1_SEEDS = 2000, 200, 4
register(Claim(
    id="signgd.appendix_f1", where="Appendix F.1",
    statement="The 0-1 test error depends on the init scale sigma_0: small for small sigma_0, "
              "Theta(1) for large sigma_0 (within Condition 3.1).",
    assumptions=_SETTING.replace("n = 8,", "n = 8, s = 30, sigma_p = 1, eta = 6e-5,") +
                f"; sigma_0 in {F1_SIGMA0}; {F1_STEPS} steps (L_S <= 1e-4 by then at every "
                f"sigma_0); {F1_SEEDS} seeds x {F1_NTEST} fresh test samples per sigma_0",
    prediction="mean 0-1 test error non-decreasing in sigma_0 (up to Monte Carlo), <= 0.05 at "
               "sigma_0 = 1e-3 and >= 0.1 at sigma_0 = 0.3 (observed ~0, 0, 0.12, 0.31)",
    simulation="sim.signgd.train: the seeds' datasets repeated once per sigma_0, one batched run",
    metric="mean test 0-1 error over seeds and test samples, per sigma_0",
    tolerance="monotonicity: each step may drop by at most 4.75 x its binomial SE (Monte Carlo, "
              "false-fail 1e-6); 'small' read as <= 0.05, 'Theta(1)' as >= 0.1 [R readings]",
    reading="Mechanism [D]: test-noise inner products never move (no gradient reaches the test "
            "supports), so the test margin's noise term stays ~ N(0, 2 sigma_0^2 s sigma_p^2 / m_v) "
            "while the signal term grows ~ 2 eta t: the error rises with sigma_0.",
    audit_gap="'Theta(1)' is read as >= 0.1 at a single size; no size sweep.",
    asymptotic='sigma_0 (small vs Theta(1) test error)',
))


@functools.lru_cache(maxsize=2)
def _f1_errors(seed0: int):
    seeds = [seed0 + k for k in range(F1_SEEDS)]
    _, _, s, sigma_p, _, eta, _ = CANON
    d = 1 + N_SAMPLES * s + 120
    prob = sim.make_problem(seeds * len(F1_SIGMA0), n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p,
                            disjoint=True, n_test=F1_NTEST, device="cpu")
    ps = [sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=s0, device="cpu") for s0 in F1_SIGMA0]
    p0 = sim.Params(*(torch.cat(z) for z in zip(*(p.tensors() for p in ps))))
    tr = sim.train(prob, p0, eta=eta, steps=F1_STEPS, log_every=F1_STEPS, log=("train_loss",))
    return tr.test_err[-1].reshape(len(F1_SIGMA0), F1_SEEDS).mean(1), tr.q["train_loss"][-1]


@audits("signgd.appendix_f1")
@examples(1)
@example(seed=11)
@given(seed=SEED)
def test_signgd_appendix_f1(seed):
    err, loss = _f1_errors(seed)
    cid = "signgd.appendix_f1"
    N = F1_SEEDS * F1_NTEST
    se = np.sqrt(np.maximum(err * (1 - err), 1.0 / N) / N) * np.sqrt(2)
    z = Tolerance.monte_carlo(1.0, 1e-6, comparisons=len(F1_SIGMA0) - 1).value
    drop = np.diff(err) + z * se[1:]
    check_at_least(cid, float(drop.min()), 0.0, "error non-decreasing in sigma_0 (Monte Carlo)",
                   control=float((np.diff(err[::-1]) + z * se[::-1][1:]).min()),  # reversed sweep
                   what="trend with sigma_0")
    check_at_least(cid, 0.05 - float(err[0]), 0.0, "error <= 0.05 at sigma_0 = 1e-3",
                   control=0.05 - float(err[-1]), what="small sigma_0")
    check_at_least(cid, float(err[-1]), 0.1, "error >= 0.1 at sigma_0 = 0.3",
                   control=float(err[0]), what="large sigma_0")
