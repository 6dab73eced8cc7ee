"""joma.lemma3: Lemma 3 (Eqns 50-54), stationary points of Eqn 5 satisfy sum_j a_j F(r_j) = 0.

Audits the algebra of the PRINTED dynamics Eqn 5 / Eqn 50 (which Lemma 1 and Theorem 3's erratum
show is not the true Eqn 2 dynamics unless ||v|| = 1) with Lemma 2's F: the identity Eqn 53 at
random (v, xi), and sum_j a_j F(r_j) = 0 at scipy-found stationary points of the two-cluster Eqn 5.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st
from scipy import optimize

from properties import Claim, Tolerance, audits, check_close, examples, register, rival
from properties.joma.common import isotropic, seeds, unit
from theory import joma as th


def F_lemma2(r, t1, t2, breaks=()):
    return th.F_lemma2(r, t1, t2, breaks=breaks)


def f_without_theta2_0(r, t1, t2, breaks=()):
    return th.F_lemma2(r, t1, t2, include_constant=False, breaks=breaks)


def f_is_theta2(r, t1, t2, breaks=()):
    return t2(r)


register(Claim(
    id="joma.lemma3",
    kind="by_construction",  # Eqn 53 holds for any theta: algebra of the text (issues 19, 34)
    where="Lemma 3, Eqns 50-54 (proof), App. A.3.2",
    statement=("For homogeneous phi, any stationary point of Eqn 5 (with xi_dot of Eqn 50) "
               "satisfies sum_j a_j F(r_j) = 0, via ||v|| v^T v_dot = sum_j a_j F(r_j) - ||v|| xi "
               "xi_dot (Eqn 53)."),
    assumptions=("Printed dynamics Eqn 50 with theta from Eqns 41-42 (unit marginal), step psi "
                 "(leaky slopes), Gaussian / Student-t / ball; stationary points for C = 2 with "
                 "Student-t clusters (nu in [2, 5]), found by scipy root finding."),
    prediction="theory.joma.lemma3_lhs_printed, lemma3_rhs, two_cluster_stationary_point",
    simulation="algebra of Eqn 50 at random (v, xi); scipy.optimize.root on Eqn 50 = 0",
    metric="|LHS - RHS|; |sum_j a_j F(r_j)| at the root found",
    tolerance=("identity: quadrature (epsrel 1e-12) + round-off -> 1e-9 x scale; stationary: "
               "|sum a F| <= ||v|| (||v|| + |xi|) ||residual|| (Eqn 53) + 1e-9"),
    reading=("What is audited is the algebra of the PRINTED Eqns 5/50 plus Lemma 2: the identity "
             "holds whatever theta is (a check of the proof's rearrangement), and the stationary "
             "points are those of the printed two-cluster Eqn 5, which exist iff H(r) = r + "
             "theta2/theta1 takes a value twice; H is the mean residual life, increasing for "
             "log-concave p_n (Gaussian, ball: no stationary points), non-monotone for Student-t "
             "(stationary points exist; used here). For the TRUE dynamics (Eqn 2) the analogous "
             "identity is v^T v_dot + xi xi_dot = E[g phi(w^T f)] (Euler, degree-1 objective): "
             "noted, not audited; the stationary points of the true dynamics differ. The paper "
             "gives no numbers: explicit examples are small Gaussian / Student-t cases."),
    paper_setting="No setting of its own: Lemma 3 (App. A.3.2) is about every stationary point of "
                  "Eqn 5 for any homogeneous phi, and its two-cluster analysis (Eqns 55-59, Fig. "
                  "9) gives no numbers; the draws cover C in 2..4 clusters, M_C in 1..5, Gaussian "
                  "/ Student-t / ball, and two-cluster Student-t stationary points (nu in [2, 5]).",
    alternatives=(
        rival("f_without_theta2_0", f_without_theta2_0,
              "Eqn 49 without its constant theta_2(0)", replaces="F"),
        rival("f_is_theta2", f_is_theta2,
              "F read as theta_2 alone (the r theta_1 part dropped)", replaces="F"),
    ),
))


@audits("joma.lemma3", form="printed")
@examples(15)
@example(family="gaussian", m=3, c=2, sigma=1.0, nu=5, c_plus=1.0, c_minus=0.0, vnorm=1.5,
         xi=0.3, a=[0.7, -0.2, 0.0], total=1.0, total_abs=1.0, seed=0)
@given(family=st.sampled_from(["gaussian", "student_t", "ball"]), m=st.integers(1, 5),
       c=st.integers(2, 4), sigma=st.floats(0.3, 2.0), nu=st.integers(3, 8),
       c_plus=st.floats(0.2, 2.0), c_minus=st.floats(-1.0, 1.0), vnorm=st.floats(0.2, 3.0),
       xi=st.floats(-3, 3), a=st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       total=st.sampled_from([-1.0, 1.0]), total_abs=st.floats(0.2, 2.0), seed=seeds)
def test_lemma3_identity(world, family, m, c, sigma, nu, c_plus, c_minus, vnorm, xi, a, total,
                         total_abs, seed):
    """Eqn 53: ||v|| v^T v_dot + ||v|| xi xi_dot = sum_j a_j F(r_j) under printed Eqn 50."""
    a = np.array(a[:c - 1])
    a = np.append(a, total * total_abs - a.sum())  # |sum_j a_j| >= 0.2
    assume(abs(c_plus - c_minus) > 0.1)
    rng = np.random.default_rng(seed)
    dist = isotropic(family, m, sigma, nu)
    centers = rng.normal(size=(c, m))
    v = vnorm * unit(rng, m)
    t1 = lambda r: float(th.theta_step_closed(r, dist, c_minus, c_plus)[0])  # noqa: E731
    t2 = lambda r: float(th.theta_step_closed(r, dist, c_minus, c_plus)[1])  # noqa: E731
    lhs = th.lemma3_lhs_printed(v, xi, centers, a, t1, t2)
    kinks = [s for s in dist.support() if np.isfinite(s)]
    F = world.prediction(F_lemma2, "F")
    rhs = th.lemma3_rhs(v, xi, centers, a, lambda r: F(r, t1, t2, breaks=kinks))
    scale = 1.0 + float(np.sum(np.abs(a))) * (abs(c_plus) + abs(c_minus)) * (
        1 + np.max(np.abs(centers @ v + xi)) + sigma)
    check_close("joma.lemma3", [lhs], [rhs],
                Tolerance.derived(1e-9 * scale, "quadrature epsrel 1e-12 for F + float64 "
                                                "round-off, x scale of the sum"),
                what="Eqn 53")


@audits("joma.lemma3", form="printed")
@examples(8)
@example(m=2, sigma=1.0, nu=3.0, a_plus=1.0, delta=0.8, seed=1)
@given(m=st.integers(2, 4), sigma=st.floats(0.5, 2.0), nu=st.floats(2.0, 5.0),
       a_plus=st.floats(0.5, 2.0), delta=st.floats(0.3, 1.5), seed=seeds)
def test_lemma3_stationary(world, m, sigma, nu, a_plus, delta, seed):
    """Stationary points of printed Eqn 5/50 (2 Student-t clusters, ReLU) found by scipy root
    finding satisfy sum_j a_j F(r_j) = 0 (Eqn 54)."""
    rng = np.random.default_rng(seed)
    dist = isotropic("student_t", m, sigma, nu)
    xp, xm = rng.normal(size=m), rng.normal(size=m)
    assume(np.linalg.norm(xp - xm) > 0.5)
    t1 = lambda r: float(th.theta_step_closed(r, dist)[0])  # noqa: E731
    t2 = lambda r: float(th.theta_step_closed(r, dist)[1])  # noqa: E731
    rmin = th.mean_residual_argmin(t1, t2, -50 * sigma, 5 * sigma)
    built = th.two_cluster_stationary_point(xp, xm, a_plus, rmin + delta * sigma, t1, t2)
    assert built is not None, "H is non-monotone for Student-t: a stationary point must exist"
    v0, xi0, a_minus, _ = built
    centers, a = np.stack([xp, xm]), np.array([a_plus, a_minus])

    def rhs(z):
        vd, xd = th.printed_eqn50_rhs(z[:-1], z[-1], centers, a, t1, t2)
        return np.concatenate([vd, [xd]])

    z0 = np.concatenate([v0, [xi0]])
    start = z0 * (1 + 0.05 * rng.uniform(-1, 1, size=z0.size))
    sol = optimize.root(rhs, start, method="hybr", tol=1e-14)
    res = float(np.linalg.norm(rhs(sol.x)))
    # (hybr may flag 'xtol too small' at a converged root: judge by the residual)
    assume(res < 1e-9 and np.linalg.norm(sol.x[:-1]) > 1e-6)
    v, xi = sol.x[:-1], float(sol.x[-1])
    F = world.prediction(F_lemma2, "F")
    val = th.lemma3_rhs(v, xi, centers, a, lambda r: F(r, t1, t2))
    nv = float(np.linalg.norm(v))
    tol = Tolerance.derived(
        nv * (nv + abs(xi)) * res + 1e-9 * (1 + np.sum(np.abs(a)) * (1 + nv + abs(xi))),
        "Eqn 53: |sum a F| <= ||v|| (||v|| + |xi|) ||root residual|| + quadrature")
    check_close("joma.lemma3", [val], [0.0], tol, what="sum_j a_j F(r_j) at a stationary point")
