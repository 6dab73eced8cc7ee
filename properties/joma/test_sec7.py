"""JoMA Section 7, 'Deal with almost orthogonal embeddings': d >= 8 eps^-2 log M suffices for M
almost orthogonal embeddings (Johnson-Lindenstrauss), and Theorem 1 then has eps-related terms.

Two properties:
  * JL: M i.i.d. uniform unit vectors in R^d, d = ceil(8 eps^-2 ln M); over 20 sets, the number
    with some |u^T u'| > eps must not exceed the 1e-6 binomial quantile of the exact union bound
    C(M,2) I_{1-eps^2}((d-1)/2, 1/2) at that d (a derived threshold, false-fail 1e-6);
  * Theorem 1 (exp attention, linear phi) with U_C's columns perturbed to coherence eps: the exact
    discrete invariant z - 1/2 sum v^2 + Q_v/2 is constant to round-off at eps = 0 and drifts at
    first order in eps (check_order, slope 1 within the fit's t band over t = 0.08 x 2^-k, k = 0..6) -- the audit's
    reading of 'additional eps-related terms' (the paper leaves them to future work).
Alternatives:
  rival constant_1    (slot dimension) d = ceil(eps^-2 ln M), the constant 8 dropped to 1;
  rival dropped_half  (slot invariant) z - sum v^2 (Theorem 1's 1/2 dropped): not conserved even
                                       for orthonormal embeddings.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import special

from properties import (Claim, Tolerance, audits, check_close, check_count_at_most,
                        check_order, examples, register, rival)
from properties.joma.common import jl_fail_count, near_orthogonal_runs
from properties.joma.figures import plot_near_orthogonal
from theory import joma as th

JL_DRAWS = 20


def jl_dimension(M, eps):
    """The printed sufficient dimension 8 eps^-2 ln M, as a real number (the body rounds it up
    to an integer dimension): a number the resolution can scale, where the integer ceil could
    not be (a scaled int is no dimension)."""
    return 8 * math.log(M) / eps ** 2


def dimension_used(bound):
    """The integer dimension a real bound d >= bound asks for: its ceiling (at least 2)."""
    return max(2, math.ceil(bound))


def degradation_order():
    """The audit's reading of 'additional eps-related terms': the invariant's drift is first
    order in the coherence eps."""
    return 1.0


def degradation_second_order():
    """Rival: the first-order eps terms cancel (|u^T u'| enters squared), drift O(eps^2)."""
    return 2.0


def invariant(z, s2, Qv):
    return th.theorem1_exp_discrete(z=z, s2=s2, Q_v=Qv)


register(Claim(
    id="joma.sec7.near_orthogonal", where="Section 7, 'Deal with almost orthogonal embeddings'",
    statement="For M embedding vectors to achieve almost orthogonality |u_l^T u_l'| <= eps, only "
              "d >= 8 eps^-2 log M is needed (Johnson-Lindenstrauss); Theorem 1 then has "
              "additional eps-related terms.",
    assumptions="JL part: u_l i.i.d. uniform on the unit sphere of R^d, d = ceil(8 eps^-2 ln M), "
                "eps in [0.2, 0.5], M in [10, 200]. Theorem 1 part: Eqn. 2, exp attention, "
                "linear phi, U_C's columns unit-norm with coherence eps (U = normalise(Q + t R), "
                "Q orthonormal, R Gaussian).",
    prediction="JL: all pairs within eps with probability >= 1 - C(M,2) I_{1-eps^2}((d-1)/2, 1/2) "
               "(exact sphere tail + union bound); Theorem 1: the exact discrete invariant "
               "z - 1/2 sum_k v_k^2 + Q_v/2 (theory.joma.theorem1_exp_discrete) drifts by O(eps)",
    simulation="numpy random sphere embeddings; sim.joma.simulate_eqn2 with p.U_C replaced",
    metric="JL: number of the 20 draws with max_{l != l'} |u_l^T u_l'| > eps; Theorem 1: max "
           "drift of the invariant vs coherence eps (log-log slope)",
    tolerance="JL: binomial 1e-6 quantile of the union-bound failure probability at the "
              "printed d (false-fail 1e-6). Theorem 1: the finest local slope 1 within the harness's deterministic order band (check_order: 3 x the spread of the last three local slopes + carried round-off; rate 0) over 7 coherences (t = 0.08 x 2^-k, k = 0..6); "
              "orthonormal U_C: float64 round-off.",
    reading="log = natural log (the JL literature's). With log10 the bound gives d 2.3x smaller "
            "and a union bound above 1 for M >= 100 (reported in the plot, not asserted). "
            "Measured degradation: the invariant's drift grows linearly in the coherence, "
            "~0.4 eps relative to |z| in the CI setting (plot), i.e. the 'additional "
            "eps-related terms' are first order in eps. The paper gives no numbers: the explicit "
            "examples are M = 100, eps = 0.3 (JL) and seed 0 (Theorem 1). The JL part is a "
            "sufficiency statement ('only d >= 8 eps^-2 log M is needed'): the check shows the "
            "printed d suffices and the constant 1 does not; a constant between (e.g. 4) "
            "also suffices in most configurations, which the statement does not deny, so the "
            "audit resolves the constant only from below (it does not show 8 is needed).",
    paper_setting="No setting of its own: Section 7's JL bound d >= 8 eps^-2 log M is stated for "
                  "all M and eps, and the eps-terms of Theorem 1 are left to future work; the "
                  "draws cover M in 10..200, eps in [0.2, 0.5], and coherences t = 0.08 x 2^-k, k "
                  "= 0..6.",
    alternatives=(
        rival("constant_1", lambda M, eps: math.log(M) / eps ** 2,
              "the JL constant 8 dropped to 1: d = eps^-2 ln M", replaces="dimension"),
        rival("second_order", degradation_second_order,
              "the eps-related terms of second order (first-order terms cancelling): drift "
              "O(eps^2)", replaces="degradation_order"),
        rival("dropped_half", lambda z, s2, Qv: z - s2,
              "Theorem 1's invariant with its 1/2 dropped (z - sum v^2)", replaces="invariant"),
    ),
    plot=plot_near_orthogonal,
))


@audits("joma.sec7.near_orthogonal")
@examples(3)
@example(seed=0, M=100, eps=0.3)
@given(seed=st.integers(0, 2**31 - 1), M=st.integers(10, 200), eps=st.floats(0.2, 0.5))
def test_sec7_near_orthogonal_jl(world, seed, M, eps):
    # the printed bound: the guarantee the threshold comes from (called directly, not through
    # the slot, so a rival or a scaled prediction moves the dimension tried, not the threshold)
    d = dimension_used(jl_dimension(M, eps))
    p = min(1.0, math.comb(M, 2) * float(special.betainc((d - 1) / 2, 0.5, 1 - eps ** 2)))
    d_used = dimension_used(world.prediction(jl_dimension, "dimension")(M, eps))
    n = jl_fail_count(M, eps, d_used, JL_DRAWS, seed)
    check_count_at_most("joma.sec7.near_orthogonal", n, JL_DRAWS, p, false_fail=1e-6,
                        unit="sets", what="JL d >= 8 eps^-2 ln M: sets with some "
                                          "|u^T u'| > eps")


@audits("joma.sec7.near_orthogonal")
@examples(3)
@example(seed=0)
@given(seed=st.integers(0, 2**20))
def test_sec7_near_orthogonal_theorem1_degradation(world, seed):
    runs = near_orthogonal_runs(seed)
    inv = world.prediction(invariant, "invariant")
    drifts = []
    for eps, z, s2, Qv in runs:
        I = inv(z, s2, Qv)
        drifts.append((eps, float(np.abs(I - I[0]).max()), float(np.abs(z).max())))
    _, d0, zmax = drifts[0]
    check_close("joma.sec7.near_orthogonal", d0, 0.0,
                Tolerance.roundoff(max(zmax, 1e-3), ops=2000),
                what="orthonormal U_C: exact invariant")
    rows = np.array(drifts[1:])
    check_order("joma.sec7.near_orthogonal", rows[:, 0], rows[:, 1],
                world.prediction(degradation_order, "degradation_order")(),
                what="invariant drift vs coherence eps")
