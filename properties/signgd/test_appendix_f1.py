"""signgd.appendix_f1: the 0-1 test error depends on the init scale sigma_0, small for small
sigma_0 and Theta(1) for large sigma_0.

Mechanism [D]: the test-noise inner products never move (no gradient reaches the test supports),
so the test margin's noise term keeps its init law ~ N(0, 2 sigma_0^2 s sigma_p^2 / m_v) while its
signal term grows ~ 2 eta t: the error rises with sigma_0.

What is decided: the dependence on sigma_0 as a trend over four sizes (check_trend, direction
increasing, binomial standard errors).  What is not: 'small' and 'Theta(1)' are magnitudes read at
one size each (<= 0.05 at sigma_0 = 1e-3, >= 0.1 at sigma_0 = 0.3); by the asymptotic policy (the
same as signgd.theorem3_2.item2's) a single-size reading of Theta(1) is not-audited, and the
numbers are reported.  Besides, the large-sigma_0 rungs (0.1, 0.3) are outside Condition 3.1's
sigma_0 s sigma_p sqrt(m_k) << 1 (= 8.5 and 25 here), which the statement's '(within Condition
3.1)' asks for.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from hypothesis import example, given

from properties import Claim, audits, check_at_least, check_trend, examples, null, register, rival
from properties.signgd.common import exact
from properties.signgd.runs import CANON, M_K, M_V, N_SAMPLES, SEED, SETTING
from sim import signgd as sim

CID = "signgd.appendix_f1"
F1_SIGMA0 = (1e-3, 1e-2, 1e-1, 3e-1)
F1_STEPS, F1_NTEST, F1_SEEDS = 2000, 200, 4
SMALL, LARGE = 0.05, 0.1  # the readings of 'small' and 'Theta(1)'
TREND_FF = 1e-4
READING = exact("the reading's level (an exact inequality of the measured error)")


@functools.lru_cache(maxsize=4)
def _f1_runs(seed0: int):
    seeds = [seed0 + k for k in range(F1_SEEDS)]
    _, _, s, sigma_p, _, eta, _ = CANON
    d = 1 + N_SAMPLES * s + 120
    prob = sim.make_problem(seeds * len(F1_SIGMA0), n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p,
                            disjoint=True, n_test=F1_NTEST, device="cpu")
    ps = [sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=s0, device="cpu") for s0 in F1_SIGMA0]
    p0 = sim.Params(*(torch.cat(z) for z in zip(*(p.tensors() for p in ps))))
    tr = sim.train(prob, p0, eta=eta, steps=F1_STEPS, log_every=F1_STEPS, log=("train_loss",))
    shape = (len(F1_SIGMA0), F1_SEEDS)
    return dict(err=tr.test_err[-1].reshape(shape).mean(1),
                err0=sim.test_metrics(prob, p0)[1].reshape(shape).mean(1),
                train_loss=tr.q["train_loss"][-1].reshape(shape))


def trained_errors(seed0):
    """Mean 0-1 test error over seeds and test samples per sigma_0 after F1_STEPS steps."""
    r = _f1_runs(seed0)
    return dict(err=r["err"], train_loss=r["train_loss"])


def untrained_errors(seed0):
    """Null: no training: the init model's 0-1 test error per sigma_0 (same data and init)."""
    r = _f1_runs(seed0)
    return dict(err=r["err0"], train_loss=r["train_loss"])


def increasing():
    return "increasing"


def decreasing():
    """Rival: the error falls with the init scale (the other direction)."""
    return "decreasing"


register(Claim(
    id=CID, where="Appendix F.1",
    statement="The 0-1 test error depends on the init scale sigma_0: small for small sigma_0, "
              "Theta(1) for large sigma_0 (within Condition 3.1).",
    assumptions=SETTING.replace("n = 8,", "n = 8, s = 30, sigma_p = 1, eta = 6e-5,") +
                f"; sigma_0 in {F1_SIGMA0}; {F1_STEPS} steps (L_S <= 1e-4 by then at every "
                f"sigma_0); {F1_SEEDS} seeds x {F1_NTEST} fresh test samples per sigma_0",
    prediction="mean 0-1 test error increasing in sigma_0 (trend over the four sizes); <= 0.05 "
               "at sigma_0 = 1e-3 and >= 0.1 at sigma_0 = 0.3 (single-size readings; observed "
               "~0, 0, 0.12, 0.31)",
    simulation="sim.signgd.train: the seeds' datasets repeated once per sigma_0, one batched run",
    metric="mean test 0-1 error over seeds and test samples, per sigma_0",
    tolerance="trend: weighted fit of the error against log sigma_0 with binomial SEs "
              "(sqrt(max(p (1 - p), 1/N) / N), N = seeds x test samples), slope beyond 3.89 x "
              "its SE (false-fail 1e-4); 'small' read as <= 0.05, 'Theta(1)' as >= 0.1 [R "
              "readings, exact inequalities]",
    reading="Mechanism [D]: test-noise inner products never move (no gradient reaches the test "
            "supports), so the test margin's noise term stays ~ N(0, 2 sigma_0^2 s sigma_p^2 / m_v) "
            "while the signal term grows ~ 2 eta t: the error rises with sigma_0. The dependence "
            "is decided by the trend (asymptotic policy); 'small' and 'Theta(1)' are read at one "
            "size each and are not-audited (one policy with signgd.theorem3_2.item2). The rungs "
            "0.1 and 0.3 are outside Condition 3.1 (sigma_0 s sigma_p sqrt(m_k) = 8.5, 25 >> 1). "
            "Alternatives: rival 'decreasing' (the other direction); null: no training (the "
            "init model's error, ~1/2 at every sigma_0).",
    audit_gap="'Small' and 'Theta(1)' are magnitudes read at one size each (<= 0.05 at sigma_0 "
              "= 1e-3, >= 0.1 at 0.3), with no ladder in the problem size; and the large-sigma_0 "
              "rungs lie outside Condition 3.1, which the statement assumes",
    history=("2026-12-03: migrated; the monotonicity check (each step may drop by at most "
             "4.75 SE) is replaced by check_trend over the four sizes; levels unchanged; 3 draws "
             "under ci (was 2).",),
    asymptotic='sigma_0 (small vs Theta(1) test error)',
    alternatives=(
        rival("decreasing", decreasing, "the error falls with the init scale (the other "
              "direction of the dependence)", replaces="direction"),
        null("untrained", untrained_errors, "no training: the init model's 0-1 test error",
             replaces="errors"),
    ),
))


@audits(CID)
@examples(2)
@example(seed=11)
@given(seed=SEED)
def test_signgd_appendix_f1(world, seed):
    r = world.simulation(trained_errors, "errors", pure=True)(seed)
    err = np.asarray(r["err"], dtype=np.float64)
    desc = ", ".join(f"{s0:g}: {e:.3g}" for s0, e in zip(F1_SIGMA0, err))
    check_at_least(CID, SMALL - float(err[0]), READING,
                   what=f"'small' at sigma_0 = {F1_SIGMA0[0]:g}: error {err[0]:.3g} <= {SMALL}")
    check_at_least(CID, float(err[-1]) - LARGE, READING,
                   what=f"'Theta(1)' at sigma_0 = {F1_SIGMA0[-1]:g}: error {err[-1]:.3g} >= {LARGE}")
    N = F1_SEEDS * F1_NTEST
    se = np.sqrt(np.maximum(err * (1 - err), 1.0 / N) / N)
    direction = world.prediction(increasing, "direction")()
    check_trend(CID, F1_SIGMA0, err, direction=direction, se=se, log_values=False,
                false_fail=TREND_FF, what=f"0-1 test error along sigma_0 ({desc})")
