"""topic.theorem2: under mild L2 (ridge lambda -> 0) the optimal W^V is the printed block-uniform
W*, the minimum-Frobenius-norm member of the Lemma 1 family: (A) C M^+ = W* exactly; (B) the
ridge minimiser C (M + lambda I)^-1 converges to W* at rate lambda^1 (check_trend, four lambdas).

The W* rivals run in (A) only: a rival within ~1e-9 of W* (e.g. the c2^2 + v denominator when c2
is large) is below the smallest ridge error of (B) and cannot be told apart there.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given

from properties import attach_plot
from properties import (Claim, Tolerance, audits, check_close, check_trend, examples, null,
                        register, rival)
from properties.topic.common import PAPER, SEED, SETTING, constants, mu_range, setup, small_model
from properties.topic.figures import plot_theorem2
from sim import topic as sm
from theory import topic as th

CID = "topic.theorem2"


def wstar(m):
    """Theorem 2's W* as printed (theory.topic.theorem2_wstar)."""
    T, v, tau, p_m, p_c, p_r = m
    return th.theorem2_wstar(T, v, p_m, p_c, p_r)


def _block(T, v, wi0, diff, same):
    n = T * v + 1
    topic = np.r_[0, (np.arange(1, n) - 1) // v + 1]
    W = np.full((n, n), diff)
    W[topic[:, None] == topic[None, :]] = same
    W[1:, 0] = wi0
    W[0, :] = 0.0
    return W


def _printed_blocks(m, c1, c2, c3, denom_tv=True, i0_sign=-1.0):
    T, v = m[0], m[1]
    den = c2 ** 2 + (T * v if denom_tv else v)
    diff = -(c1 * c2 + c3) / den
    return _block(T, v, (c2 * c3 + i0_sign * c1 * T * v) / den, diff, diff + c3 / v)


def wstar_c1_dropped(m):
    c1, c2, c3 = constants(m)
    return _printed_blocks(m, 0.0, c2, c3)


def wstar_denominator_v(m):
    return _printed_blocks(m, *constants(m), denom_tv=False)


def wstar_i0_sign(m):
    return _printed_blocks(m, *constants(m), i0_sign=1.0)


def wstar_dv(m):
    T, v, tau, p_m, p_c, p_r = m
    return th.definition2_dv(T, v, p_m, p_c, p_r)


def min_norm(m, seed):
    """The lambda -> 0 limit of the ridge minimisers: C M^+ (seed unused)."""
    return sm.min_norm_minimiser(setup(m))


def unregularised_minimiser(m, seed):
    """Null: L2 off, a minimiser C M^+ + Z (I - M M^+) with a random Z."""
    mom = setup(m)
    n = mom["n"]
    Mp = np.linalg.pinv(mom["M"], rcond=1e-12, hermitian=True)
    Z = np.random.default_rng(seed).normal(0, 1, (n, n))
    return mom["C"] @ Mp + Z @ (np.eye(n) - mom["M"] @ Mp)


def ridge_errors(m, lams, W):
    """||C (M + lambda I)^-1 - W||_F for each lambda."""
    mom = setup(m)
    return [float(np.linalg.norm(sm.ridge_minimiser(mom, lam) - W)) for lam in lams]


WSTAR_RIVALS = (
    rival("dv_member", wstar_dv, "Definition 2's D^V: another member of the family, not the "
          "minimum-norm one", replaces="wstar"),
    rival("c1_dropped", wstar_c1_dropped, "W* with c1 = 0 (Theorem 1's bias absorbs it)",
          replaces="wstar"),
    rival("denominator_v", wstar_denominator_v, "denominator c2^2 + v instead of c2^2 + Tv",
          replaces="wstar"),
    rival("i0_sign", wstar_i0_sign, "W*_i0 = (c2 c3 + c1 Tv)/(c2^2 + Tv): sign slip",
          replaces="wstar"),
)

register(Claim(
    id=CID, where="Theorem 2 (Section 5.2, Appendix C)",
    statement="Under mild L2 regularisation the optimal W^V has W*_0j = 0; W*_i0 = "
              "(c2 c3 - c1 Tv)/(c2^2 + Tv); W*_il = -(c1 c2 + c3)/(c2^2 + Tv) for l not in "
              "topic(i); W*_il = that + c3/v for l in topic(i).",
    assumptions=SETTING + ", b^pred = 0, ridge lambda ||W^V||_F^2 with lambda -> 0.",
    prediction="theory.topic.theorem2_wstar (printed; the sympy derivation of the minimum-norm "
               "family member it agrees with is a unit test of theory/, tests/test_topic.py, "
               "not called by the properties)",
    simulation="sim.topic.ridge_minimiser C (M + lambda I)^-1 and min_norm_minimiser C M^+",
    metric="max_abs(C M^+ - W*); log-log slope of ||C (M + lambda I)^-1 - W*||_F against "
           "lambda = mu_min 10^-k, k = 2..5",
    tolerance="round-off (x cond of M on its range) for C M^+; ridge path: check_trend, slope "
              "1 within the worst-case slope error of a deterministic sequence (the solve's "
              "relative round-off on each error, carried to the slope) + allowance "
              "lambda_max/mu_min (the exact error is lambda ||W* M^+ (I + lambda M^+)^-1||_F, "
              "whose ratio to lambda moves by at most that factor over the grid)",
    reading="'Mild L2' read as lambda -> 0 (ridge lambda ||W||_F^2; with the unsquared norm the "
            "minimisers trace the same curve, so the limit is the same minimum-norm member). "
            "b^pred = 0 (not trained).  The interval claims for c1, c2, c3 are audited separately "
            "as topic.theorem2.ranges.  The limit identity (A) is exact; the convergence (B) is "
            "decided by a trend over four lambdas (asymptotic in lambda).",
    asymptotic="lambda",
    paper_setting="No setting of its own: Theorem 2 (Sec. 5.2) holds for every T, v, tau < T and "
                  "masking probabilities under Assumption 1; the draws cover T in 2..6, v in 1..4, "
                  "p_m in [0.05, 0.9], p_c, p_r in [0.02, 0.6], and Sec. 6's T = v = 10, p_m = "
                  "0.15, p_c = p_r = 0.1 is an explicit example at tau = 3 (its LDA documents have "
                  "no fixed tau).",
    alternatives=WSTAR_RIVALS + (
        rival("rate_half", lambda: 0.5, "ridge error ~ lambda^(1/2) (another exponent)",
              replaces="rate"),
        rival("rate_two", lambda: 2.0, "ridge error ~ lambda^2 (another exponent)",
              replaces="rate"),
        null("no_l2", unregularised_minimiser, "L2 off: an unregularised minimiser with a "
             "random null-space component", replaces="minimiser"),
    ),
))
attach_plot(CID, plot_theorem2)


@audits(CID)
@examples(10)
@example(m=PAPER, seed=0)
@given(m=small_model(), seed=SEED)
def test_theorem2_wstar_is_min_norm_minimiser(world, m, seed):
    mom = setup(m)
    n = mom["n"]
    W0 = world.simulation(min_norm, "minimiser", pure=True)(m, seed)
    Ws = world.prediction(wstar, "wstar")(m)
    cond = float(np.linalg.cond(mom["M"] + np.eye(n) - mom["M"] @ np.linalg.pinv(mom["M"])))
    tol = Tolerance.roundoff(float(np.abs(Ws).max() + 1) * cond, ops=10 * n)
    check_close(CID, W0, Ws, tol, what="C M^+ = printed W*")


@audits(CID)
@examples(6)
@example(m=PAPER)
@given(m=small_model())
def test_theorem2_ridge_path(world, m):
    mom = setup(m)
    mu_min, mu_max = mu_range(mom)
    lams = [mu_min * 10.0 ** -k for k in (2, 3, 4, 5)]
    Ws = wstar(m)  # the printed W* itself: its rivals are decided by the exact property above
    errs = world.simulation(ridge_errors, "ridge", pure=True)(m, lams, Ws)
    # the errors are deterministic: their only error is the solve's round-off, at most
    # 10 eps cond(M + lambda I) ||W||_F absolute, i.e. that / err relative; the largest over the
    # grid, carried to the worst-case slope error (check_trend's deterministic-sequence model)
    eps = np.finfo(np.float64).eps
    wn = float(np.linalg.norm(Ws)) + 1.0
    rel = max(10 * eps * (mu_max + lam) / lam * wn / e for lam, e in zip(lams, errs))
    roundoff = Tolerance.derived(rel, "the ridge solve's round-off, 10 eps cond(M + lambda I) "
                                      "||W||_F / error, the largest over the lambdas")
    allow = Tolerance.derived(max(lams) / mu_min,
                              f"finite-lambda curvature lambda_max/mu_min = {max(lams) / mu_min:g}")
    check_trend(CID, lams, errs, exponent=world.prediction(lambda: 1.0, "rate")(),
                value_error=roundoff, allowance=allow,
                what="ridge minimiser -> W* at rate lambda")
