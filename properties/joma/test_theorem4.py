"""joma.theorem4: Theorem 4 (Eqn. 8; proof Eqns. 68-87), salient components of Eqn. 7 converge
first.

Eqn. 7 by solve_ivp (sim.joma.simulate_eqn7, DOP853, rtol 1e-11), in v (delta >= ~1e-6) and, for
long horizons, in the deviation e = v - mu (delta down to ~1e-240), with the factor 1 and with a
non-constant positive factor (a time change).  The Lambda -> 0 trend draws max mu in [1.8, 2.2],
where every component converges within the horizon (see the history).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st
from scipy import integrate

from properties import (Claim, Tolerance, audits, check_bound, check_close, check_trend,
                        examples, null, register, rival)
from properties.joma.figures import plot_theorem4
from sim.joma import simulate_eqn7
from theory import joma as th

RTOL = 1e-11
# The trend's rival on the claimed side (a direction check credits only those): |Lambda| falling
# like 1/ln^2, as it would if lambda_jk itself vanished like 1/ln(delta_k0/delta_k).  The proof's
# mechanism is lambda_jk -> rho_k(inf) - rho_j(inf) != 0 with |lambda| <= C, so |Lambda| ~ 1/ln.
LAMBDA_RIVAL_EXPONENT = -2.0
DELTA_FLOOR_V = 1e-6  # v-state runs stop before delta < ~1e-6 (1 - v/mu keeps precision)


def F_abs(delta, delta0, mu):
    """Rival: Eqn. 70 with e^{-mu|x|/2} in place of e^{-mu^2 x^2/2}."""
    return th.F_delta(delta, delta0, mu, integrand_power=1.0)


def F_eqn70(delta, delta0, mu):
    return th.F_delta(delta, delta0, mu)


def ratio_mu2(mu_j, mu_k, Lam):
    return th.eqn8_ratio(mu_j, mu_k, Lam, exponent=1.0)


def lambda_unscaled(lam, mu_k, delta_k, delta_k0):
    """Rival: lambda_jk itself in place of Lambda_jk = lambda_jk e^{mu_k^2/2}/ln(delta_k0/delta_k)."""
    return lam


def zeta_sign_flipped(r, r0, mu):
    """Rival: Eqn. 76 with the sign of its second term flipped."""
    r, r0, mu = (np.asarray(a, float) for a in (r, r0, mu))
    from scipy.special import erf
    return (np.sqrt(np.pi / 2) * (erf(r * mu / np.sqrt(2)) - erf(r0 * mu / np.sqrt(2)))
            - (np.exp(-r0 ** 2 * mu ** 2 / 2) - np.exp(-r ** 2 * mu ** 2 / 2)) / mu)


def simulate_attention_shared(mu, v0, t_end, factor=None, **kw):
    """Null: Eqn. 7 with the per-component attention exp(v_j^2/2) replaced by one common factor
    exp(max_j v_j^2/2) for every component (the selectivity switched off, the speed kept): a
    time change of v_dot = mu - v, so every ln(delta_j0/delta_j) is the same and lambda_jk
    grows without bound."""
    def common(t, V):
        base = 1.0 if factor is None else float(factor(t, V))
        # the exponent capped at 700 (e^709 is float64's largest): the solver's trial states can
        # lie far outside the path (which stays between v0 and mu); there the capped factor
        # only makes the step fail and shrink (a randomized draw overflowed math.exp here)
        return base * math.exp(min(0.5 * float(np.max(np.asarray(V) ** 2)), 700.0))
    return simulate_eqn7(mu, v0, t_end, attention=False, factor=common, **kw)


def simulate_attention_off(mu, v0, t_end, **kw):
    """Null: Eqn. 7 without the attention factor exp(v^2/2) (v_dot = mu - v)."""
    return simulate_eqn7(mu, v0, t_end, attention=False, **kw)


register(Claim(
    id="joma.theorem4", where="Section 4, Theorem 4 / Eqn. 8; proof Appendix A.4.1 (Eqns. 68-87)",
    statement="Let delta_j(t) := 1 - v_j(t)/mu_j. For the dynamics v_dot ∝ (mu - v) ∘ exp(v^2/2) "
              "(Eqn. 7): ln(delta_j(0)/delta_j(t)) / ln(delta_k(0)/delta_k(t)) = "
              "e^{mu_j^2/2}/e^{mu_k^2/2} (1 + Lambda_jk(t)) with Lambda_jk(t) = lambda_jk(t) "
              "e^{mu_k^2/2} ln^{-1}(delta_k(0)/delta_k(t)), |lambda_jk(t)| <= C_jk depending only "
              "on delta_j(0), delta_k(0). So when |delta_k(t)| << |delta_k(0)| exp[-C_jk "
              "exp(mu_k^2)], |Lambda(t)| << 1. (Proof: F(r_j(t), r_j(0), mu_j) = F(r_k(t), "
              "r_k(0), mu_k) (Eqn. 71), F(r,r0,mu) = int_{r0}^r e^{-mu^2x^2/2}/(1-x) dx (Eqn. 70);"
              " |zeta| <= M(r0) = sqrt(2pi) + max(2|r0|, |r0|+1) (Eqn. 77); |F - e^{-mu^2/2} "
              "ln((1-r0)/(1-r))| <= M(r0) (Eqns. 82-83); lambda_jk = e^{-mu_j^2/2} "
              "ln(delta_j0/delta_j) - e^{-mu_k^2/2} ln(delta_k0/delta_k), |lambda_jk| <= "
              "M(r_j(0)) + M(r_k(0)) (Eqn. 87).)",
    assumptions="mu > 0 componentwise (the proof's case); r_j(0) = v_j(0)/mu_j != 1; any positive "
                "common scalar factor in '∝'. Simulations: d in 2..8, mu_j in (0.2, 3] with one "
                "component in [0.2, 1] and one in [1.8, 3], r_j(0) in [-1, 0.9]; the bound "
                "derivation is also checked for r0 in [1.1, 2] (r0 > r > 1). The Lambda -> 0 "
                "trend: mu_j in (0.2, 2.2], max mu in [1.8, 2.2].",
    prediction="theory.joma.F_delta, zeta, M_bound, log_ratio (Eqn. 81 in delta form), "
               "lambda_jk, Lambda_jk, eqn8_ratio, "
               "lambda_bound, rho_delta",
    simulation="sim.joma.simulate_eqn7 (solve_ivp DOP853, rtol 1e-11; state='v' literally "
               "with delta >= ~1e-6, and state='deviation' (e = v - mu) for long horizons)",
    metric="Eqn. 71: max_abs over t > 0 and j of F_j(t) / mean_j F_j(t) - 1 (v state), of "
           "F_j(t) - mean_j F_j(t) (deviation state), and F_j(t) - t with the factor 1;"
           " Eqn. 8: max_abs of observed/predicted ratio - 1; bound: |lambda_jk(t)| <= C_jk at "
           "every t and pair (check_bound, its slack recorded); Lambda -> 0: log-log slope of "
           "|Lambda_jk| against "
           "ln(delta_k0/delta_k) over its last two octaves (check_trend, decreasing); "
           "derivation: M(r0)/|zeta| >= 1, M(r0)/|F - e^{-mu^2/2} ln| >= 1, Eqn. 79 by quadrature",
    tolerance="ODE solver model 100 x rtol x scale: scale = max|F| (deviation state) or "
              "max_t,j max(|v|,1)/(mu_j |delta_j|) (v state: an error dv in v moves F by "
              "~dv/(mu delta)); round-off for algebraic identities; quadrature 1e-9 relative; "
              "the bound on lambda: a deterministic comparison with the printed bound itself "
              "(check_bound; solver errors < 1e-9 relative); trend: a deterministic sequence, "
              "the solver error propagated to the slope (value_error: no false-fail rate), "
              "rivals exponent 0 (Lambda not vanishing: the direction test's complement) and "
              "exponent -2 (|Lambda| ~ 1/ln^2, as if lambda_jk itself vanished; on the claimed "
              "side, so credited as power)",
    reading="Eqn. 7 is simulated as printed, with the common factor 1 and with a non-constant "
            "positive factor c(t, v) = (1.2 + sin(omega t)) / (1 + |v|^2/d) (a time change: the "
            "invariant Eqn. 71 holds with F_j(t) = int_0^t c). Lambda_jk is the proof's "
            "(Eqn. 87 with the printed Lambda), so Eqn. 8 itself is an identity; its content is "
            "Eqn. 71 (checked to solver tolerance), the bound |lambda_jk| <= M(r_j0) + M(r_k0) "
            "(checked on every output time; the bound is loose) and "
            "Lambda -> 0 (lambda(t) converges to rho_k(inf) - rho_j(inf) while ln(delta_k0/"
            "delta_k) grows, so |Lambda| falls like 1/ln(delta_k0/delta_k)). "
            "The printed sufficient condition |delta_k| << |delta_k0| exp[-C exp(mu_k^2)] is "
            "correct but stronger than needed: |Lambda| <= C e^{mu_k^2/2}/ln(delta_k0/delta_k), "
            "so |delta_k| << |delta_k0| exp[-C exp(mu_k^2/2)] already suffices (not an erratum). "
            "In Eqn. 77 the middle term sqrt2(|r0|+|r|)/sqrt2 is looser than Lemma 5 gives "
            "(max(|r|,|r0|)/2), still valid since |r| <= max(|r0|, 1) along the monotone "
            "trajectory. The paper gives no numbers: the explicit example is the report "
            "figure's seven targets mu = 0.3 .. 2.2, r0 = 0.05. The bound "
            "|lambda_jk| <= C_jk is loose, so no rival constant can be "
            "told apart, and its power is that of the boundedness it states: the null "
            "attention_shared (one common factor exp(max_j v_j^2/2), selectivity off) makes "
            "lambda grow with the common clock and breaks it on every draw (attention_off "
            "only on the long-horizon draws). The proof's inequalities Eqns. 77, 82, 83 are "
            "asserted (algebra of the proof; no close alternative fails them), not checks.",
    asymptotic="ln(delta_k(0)/delta_k(t)) (t -> inf)",
    paper_setting="No setting of its own: Theorem 4 holds for any mu > 0 and r_j(0) != 1, and Fig. "
                  "4 (left) gives no numbers (the proof's only one is M(r_0) ~ 4.0066 at |r_0| = "
                  "1/2, after Eqn 83); the draws cover d in 2..8, mu_j in (0.2, 3], r_j(0) in [-1, "
                  "0.9] (r_0 in [1.1, 2] too for the bound).",
    alternatives=(
        rival("abs_integrand", F_abs, "Eqn. 70 with e^{-mu|x|/2} in place of e^{-mu^2 x^2/2}",
              replaces="F"),
        rival("exponent_mu2", ratio_mu2, "Eqn. 8 with e^{mu^2} in place of e^{mu^2/2}",
              replaces="ratio"),
        rival("lambda_unscaled", lambda_unscaled, "lambda_jk in place of Lambda_jk in Eqn. 8",
              replaces="Lambda"),
        rival("zeta_sign_flipped", zeta_sign_flipped,
              "Eqn. 76 with the sign of its second term flipped", replaces="zeta"),
        null("attention_off", simulate_attention_off,
             "mechanism off: Eqn. 7 without its attention factor (v_dot = mu - v)",
             replaces="run"),
        null("attention_shared", simulate_attention_shared,
             "selectivity off: one common attention factor exp(max_j v_j^2/2) for every "
             "component in place of exp(v_j^2/2) (as fast, not selective)", replaces="run"),
    ),
    plot=plot_theorem4,
))


@st.composite
def speed_problem(draw, mu_max=3.0):
    d = draw(st.integers(2, 8))
    mu = [draw(st.floats(0.2, 1.0)), draw(st.floats(1.8, mu_max))]
    mu += [draw(st.floats(0.2, mu_max)) for _ in range(d - 2)]
    r0 = [draw(st.floats(-1.0, 0.9)) for _ in range(d)]
    return np.asarray(mu), np.asarray(r0)


PAPER_MU = np.array([0.3, 0.7, 1.0, 1.3, 1.6, 1.9, 2.2])
PAPER_T4 = dict(prob=(PAPER_MU, np.full(PAPER_MU.shape, 0.05)), omega=1.0, use_factor=False)


def _factor(omega):
    def c(t, v):
        return (1.2 + math.sin(omega * t)) / (1.0 + float(np.mean(v * v)))
    return c


def _lambda_tables(run, mu, Lambda):
    D, D0 = run.delta[1:], run.delta[0]
    lam = th.lambda_jk(D[:, :, None], D0[:, None], mu[:, None], D[:, None, :], D0[None, :],
                       mu[None, :])
    Lam = Lambda(lam, mu[None, None, :], D[:, None, :], D0[None, :])
    Lj = th.log_ratio(D, D0)
    return lam, Lam, Lj


def _long_run(world, mu, r0, omega, use_factor):
    cmax = 2.2 if use_factor else 1.0
    T = 550.0 / (cmax * math.exp(mu.max() ** 2 / 2))
    fac = _factor(omega) if use_factor else None
    return world.simulation(simulate_eqn7, "run", pure=True)(mu, r0 * mu, T, n_points=200, factor=fac,
                                                  state="deviation", rtol=RTOL, atol=1e-300)


def _eqn71_and_eqn8(world, cid, run, mu):
    """Eqn. 71 to solver tolerance and Eqn. 8's ratio; returns (lam, Lam, Lj, off)."""
    Fv = world.prediction(F_eqn70, "F")(run.delta, run.delta[0], mu)
    ref = np.broadcast_to(Fv.mean(axis=1, keepdims=True), Fv.shape)
    check_close(cid, Fv, ref, Tolerance.solver(RTOL, float(np.abs(Fv).max())),
                what="Eqn. 71 (deviation)")
    lam, Lam, Lj = _lambda_tables(run, mu, world.prediction(th.Lambda_jk, "Lambda"))
    off = ~np.eye(mu.size, dtype=bool)
    obs = (Lj[:, :, None] / Lj[:, None, :])[:, off]
    pred = world.prediction(th.eqn8_ratio, "ratio")(mu[:, None], mu[None, :], Lam)[:, off]
    check_close(cid, obs / pred - 1, np.zeros_like(obs), Tolerance.roundoff(1.0, 1e4),
                what="Eqn. 8 ratio")
    return lam, Lam, Lj, off, Fv


@audits("joma.theorem4", form="printed")
@examples(12)
@example(**PAPER_T4)
@given(prob=speed_problem(), omega=st.floats(0.5, 20.0), use_factor=st.booleans())
def test_theorem4_invariant(world, prob, omega, use_factor):
    """Eqn. 71 on the literal v-state integration of Eqn. 7 (with factor 1: F_j(t) = t)."""
    cid = "joma.theorem4"
    mu, r0 = prob
    delta0 = 1 - r0
    # horizon: the fastest component stays above DELTA_FLOOR_V (its rate is <= c_max e^{mu^2/2})
    cmax = 2.2 if use_factor else 1.0
    jf = int(np.argmax(mu))
    T = math.log(abs(delta0[jf]) / DELTA_FLOOR_V) / (cmax * math.exp(mu[jf] ** 2 / 2))
    fac = _factor(omega) if use_factor else None
    run = world.simulation(simulate_eqn7, "run", pure=True)(mu, r0 * mu, T, n_points=120, factor=fac,
                                                 rtol=RTOL, atol=1e-13)
    Fv = world.prediction(F_eqn70, "F")(run.delta, run.delta[0], mu)
    scale = float(np.max(np.maximum(np.abs(run.v), 1.0) / (mu * np.abs(run.delta))))
    tol = Tolerance.solver(RTOL, scale)
    ref = Fv.mean(axis=1, keepdims=True)
    # Eqn. 71: F_j(t) equal across j, on every draw, as the ratio F_j(t) / mean_j F_j(t) = 1 for
    # t > 0 (F = 0 at t = 0), the solver model relative to a lower bound of the common value
    # int_0^t c >= t_1 c_min (c >= 0.2 / (1 + max_t mean v^2) with the factor, 1 without).  The
    # equality is homogeneous in F (an invariant is defined up to a factor), so the ratio does
    # not depend on a relative perturbation of the closed form: the resolution finds it
    # independent of it, not unresolved.  With the factor 1 the common value itself is known,
    # F_j(t) = int_0^t 1 ds = t: a check of its own, which does resolve the closed form on the
    # draws where the factor is 1
    c_min = 0.2 / (1.0 + float(np.max(np.mean(run.v ** 2, axis=1)))) if use_factor else 1.0
    check_close(cid, Fv[1:] / ref[1:], np.ones_like(Fv[1:]),
                Tolerance.solver(RTOL, scale / (float(run.t[1]) * c_min)),
                what="Eqn. 71 (v state)", name="Eqn. 71 (v state)")
    if not use_factor:
        check_close(cid, Fv, np.broadcast_to(run.t[:, None], Fv.shape), tol, what="F_j(t) = t",
                    name="Eqn. 71 (v state): F_j(t) = t")


@audits("joma.theorem4", form="printed")
@examples(12)
@example(**PAPER_T4)
@given(prob=speed_problem(), omega=st.floats(0.5, 20.0), use_factor=st.booleans())
def test_theorem4_printed(world, prob, omega, use_factor):
    """Eqn. 71 and Eqn. 8 on the long-horizon (deviation state) run; Eqn. 86 = 87; the bound
    |lambda_jk| <= M(r_j0) + M(r_k0) at every output time."""
    cid = "joma.theorem4"
    mu, r0 = prob
    run = _long_run(world, mu, r0, omega, use_factor)
    lam, Lam, Lj, off, Fv = _eqn71_and_eqn8(world, cid, run, mu)
    D, D0 = run.delta[1:], run.delta[0]
    rho = th.rho_delta(D, D0, mu)
    lam86 = rho[:, None, :] - rho[:, :, None]
    check_close(cid, lam86[:, off], lam[:, off], Tolerance.solver(RTOL, float(np.abs(Fv).max())),
                what="Eqn. 86 = 87")
    C = th.lambda_bound(r0[:, None], r0[None, :])
    # a one-sided bound at every output time and pair: the harness's procedure records its slack
    # (observed |lambda| <~ 0.15 C: the bound is loose; solver error on lambda < 1e-9 relative)
    lam_off = np.abs(lam[:, off])
    check_bound(cid, lam_off.ravel(), np.broadcast_to(C[off], lam_off.shape).ravel(),
                side="upper", what="|lambda_jk(t)| <= C_jk = M(r_j0) + M(r_k0), every t and pair")


@audits("joma.theorem4", form="printed")
@examples(6)
@example(**PAPER_T4)
@given(prob=speed_problem(mu_max=2.2), omega=st.floats(0.5, 20.0), use_factor=st.booleans())
def test_theorem4_lambda_vanishes(world, prob, omega, use_factor):
    """Lambda -> 0: for the pair with the largest |lambda_jk(T)|, |Lambda_jk| decreases
    significantly against ln(delta_k0/delta_k) over its last two octaves (5 points)."""
    cid = "joma.theorem4"
    mu, r0 = prob
    run = _long_run(world, mu, r0, omega, use_factor)
    lam, Lam, Lj, off, Fv = _eqn71_and_eqn8(world, cid, run, mu)
    lamT = np.where(off, np.abs(lam[-1]), -1.0)
    j, k = np.unravel_index(int(np.argmax(lamT)), lamT.shape)
    targets = Lj[-1, k] * np.array([1 / 4, 2 ** -1.5, 1 / 2, 2 ** -0.5, 1.0])
    idx = sorted({int(np.argmin(np.abs(Lj[:, k] - x))) for x in targets})
    assume(len(idx) >= 3)
    # a deterministic sequence (one ODE solution): the slope's error is the solver's, propagated
    # (value_error), not a fit residual.  |Lambda| = |lambda| e^{mu_k^2/2} / ln(delta_k0/delta_k):
    # the solver moves F by <= 100 rtol max|F| (Tolerance.solver), hence each e^{-mu^2/2} ln
    # term of lambda by as much, so |lambda| by <= 2x that, relative to the smallest |lambda|
    # on the points; ln(delta_k0/delta_k) by e^{mu_k^2/2} x that, relative to the smallest ln.
    f_err = Tolerance.solver(RTOL, float(np.abs(Fv).max())).value
    lam_pts, ln_pts = np.abs(lam[idx, j, k]), Lj[idx, k]
    rel = (2 * f_err / float(lam_pts.min())
           + f_err * math.exp(mu[k] ** 2 / 2) / float(ln_pts.min()))
    check_trend(cid, ln_pts, np.abs(Lam[idx, j, k]), direction="decreasing",
                rivals=(0.0, LAMBDA_RIVAL_EXPONENT),
                value_error=Tolerance.derived(rel, "ODE solver: 100 x rtol x max|F| on each "
                                                   "e^{-mu^2/2} ln term, relative to the "
                                                   "smallest |lambda| and ln on the points"),
                what=f"|Lambda_{j}{k}| vs ln(delta_k0/delta_k)")


@audits("joma.theorem4", form="printed")
@examples(15)
@example(r0s=[0.05, 0.5, -0.5, 1.5], mus=[0.3, 1.0, 2.2, 1.5], fr=[0.5, 1.0, 0.1, 0.7])
@given(r0s=st.lists(st.one_of(st.floats(-1.0, 0.9), st.floats(1.1, 2.0)), min_size=4, max_size=16),
       mus=st.lists(st.floats(1e-3, 3.0), min_size=4, max_size=16),
       fr=st.lists(st.floats(0.05, 1.0), min_size=4, max_size=16))
def test_theorem4_bound_derivation(world, r0s, mus, fr):
    """Eqns. 76-83: |zeta| <= M(r0), Eqn. 79 (quadrature), |F - e^{-mu^2/2} ln| <= M(r0)."""
    cid = "joma.theorem4"
    n = min(len(r0s), len(mus), len(fr))
    r0 = np.asarray(r0s[:n])
    m = np.asarray(mus[:n])
    # r between r0 and 1 (exclusive of 1): delta = delta0 * (1e-8)^fr
    delta0 = 1 - r0
    delta = delta0 * np.power(1e-8, np.asarray(fr[:n]))
    r = 1 - delta
    zeta = world.prediction(th.zeta, "zeta")
    # The inequalities of the proof (Eqns. 77, 82, 83) are loose (observed <~ 0.15 of the
    # bound), so no close alternative could fail them (the rival zeta_sign_flipped passes
    # them too): they are asserted as algebra of the proof, not checks a verdict rests on.
    # They use theory's zeta itself (not the slot), so alternatives and the resolution's
    # perturbations of the slot do not enter them.
    Mv = th.M_bound(r0)
    resid = th.F_delta(delta, delta0, m) - np.exp(-m ** 2 / 2) * np.log(delta0 / delta)
    z = np.abs(th.zeta(r, r0, m))
    assert np.all(Mv >= z), f"Eqn. 77 violated: M(r0) {Mv} < |zeta| {z}"
    assert np.all(Mv >= np.abs(resid)), f"Eqn. 83 violated: M(r0) {Mv} < |resid| {resid}"
    # sharper (Eqn. 82 + Lemma 6): |resid| <= max_{x in [0, mu]} |zeta(r, r0, x)| G(mu)
    xs = np.linspace(1e-9, 1.0, 401)[None, :] * m[:, None]
    zmax = np.max(np.abs(th.zeta(r[:, None], r0[:, None], xs)), axis=1)
    assert np.all(zmax * th.G(m) * (1 + 1e-6) + 1e-12 >= np.abs(resid)), \
        f"Eqn. 82 violated: max|zeta| G(mu) {zmax * th.G(m)} < |resid| {resid}"
    # Eqn. 79: e^{mu^2/2} F - F(r, r0, 0) = int_0^mu zeta(r, r0, x) e^{x^2/2} dx
    # F(r, r0, 0) = ln((1-r0)/(1-r)) (Eqn. 81) in delta form: 1 - r would cancel for r ~ 1
    lhs = np.exp(m ** 2 / 2) * th.F_delta(delta, delta0, m) - th.log_ratio(delta, delta0)
    rhs = [integrate.quad(lambda t: float(zeta(ri, r0i, max(t, 1e-12))) * math.exp(t * t / 2),
                          0, mi, epsabs=1e-13, epsrel=1e-12)[0]
           for ri, r0i, mi in zip(r, r0, m)]
    scale = float(max(1.0, np.max(np.abs(lhs))))
    check_close(cid, lhs, np.asarray(rhs),
                Tolerance.derived(1e-9 * scale, "quadrature epsrel 1e-12 + Gauss-Legendre F, "
                                                "relative to |lhs|"), what="Eqn. 79")
