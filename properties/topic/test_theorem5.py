"""topic.theorem5: with W^V frozen to Definition 2's D^V, the optimal attention values satisfy
(1 + c4 p_m p_r) v tau / (100 c4) < beta* < c7 (1/(c4 p_m p_r) + 1) v T and
alpha* < c4 beta* / (v - 1) (Assumptions 1-4: asymptotic, T, tau -> inf, tau = o(T)).

Decided on a ladder tau in {16, 32, 64, 128, 256}, T = tau^k (k in {2, 3}), both [MASK]
readings, (alpha*, beta*) the optimum over (log alpha, log beta) (grid + Nelder-Mead,
common.ab_star): beta* must grow with tau (check_trend, direction increasing; the lower bound is
linear in tau) and the three inequalities must hold at the three largest sizes.

Alternatives: null "uniform_attention" (alpha = beta = 1: attention not optimised); rival
"direction_decreasing" (beta* decreasing in tau, the other direction); rival
"alpha_order_reversed" (alpha* > c4 beta*/(v - 1): same-topic attention dominating same-word
attention, the order Theorem 3 finds for the block-wise W*).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import attach_plot
from properties import (Claim, Threshold, audits, check_at_least, check_trend, examples, null,
                        register, rival)
from properties.topic.common import PAPER_P, S2_MODEL, ab_star
from properties.topic.figures import plot_theorem5
from theory import topic as th

CID = "topic.theorem5"
TAUS = (16, 32, 64, 128, 256)
TOP = 3
BETA_REL = 1e-4  # beta* located to this relative precision (Nelder-Mead xatol 1e-8 in log)


def ab_ladder(v, k, p_m, p_c, p_r, mq):
    return [ab_star(int(t ** k), v, t, p_m, p_c, p_r, mq) for t in TAUS]


def ab_one(v, k, p_m, p_c, p_r, mq):
    """Null: attention not optimised (alpha = beta = 1)."""
    return [(1.0, 1.0)] * len(TAUS)


def alpha_side(ratio_b, a):
    """log margin of alpha* < c4 beta*/(v-1) (ratio_b = c4 beta*/(v-1))."""
    return math.log(ratio_b / a)


def alpha_side_reversed(ratio_b, a):
    """Rival: the reversed order alpha* > c4 beta*/(v-1)."""
    return math.log(a / ratio_b)


@st.composite
def assumption4(draw):
    p_m = draw(st.floats(0.05, 0.45))
    p_c = draw(st.floats(0.05, 0.45))
    return p_m, p_c, p_c


register(Claim(
    id=CID, where="Theorem 5 (Section 5.3, Appendix D.4)",
    statement="With W^V frozen to D^V, the optimal (alpha, beta) satisfy "
              "(1 + c4 p_m p_r) v tau / (100 c4) < beta < c7 (1/(c4 p_m p_r) + 1) v T and "
              "alpha < c4 beta / (v - 1), c7 = 1/(c4 (sqrt(v-1) - 1/c4 - 1)).",
    assumptions="Assumptions 1-4 (as in Theorem 3); " + S2_MODEL,
    prediction="theory.topic.theorem5_bounds",
    simulation="sim.topic.stage2_loss_fast(kind='diag') minimised over (log alpha, log beta) "
               "(grid + Nelder-Mead, properties.topic.common.ab_star)",
    metric="trend of beta* over tau (T = tau^k); min over the three largest sizes of the log "
           "margins of the three inequalities",
    tolerance="trend: direction with se = beta*'s location precision 1e-4 (false-fail 1e-6); "
              "the inequalities: margin >= 0 (the statement's strict inequalities)",
    reading="[R] form of the bounds.  Asymptotic in tau (T = tau^k, k in {2, 3}, so tau = "
            "o(T)), v in {10, 20} (> (c4 + 1)^2 + 1 under Assumption 4), both [MASK] readings. "
            "The bounds are loose (beta* sits 300-2200 x above the lower bound and >= 15 x "
            "below the upper one on the ladder), so rivals that only move a bound by a "
            "constant or by tau are not separable; the alternatives are the untrained "
            "attention, the other trend direction and the reversed alpha order.  alpha* often "
            "runs to the grid's lower edge (alpha* -> 0), where its inequality holds a fortiori.",
    asymptotic="tau",
    history=(
        "2026-12-03: decided on a tau ladder 16..256 with T = tau^k, k in {2, 3} (was: one "
        "size per draw, tau in {8..128}, T in tau^2 x {1, 4, 16}).",
    ),
    alternatives=(
        null("uniform_attention", ab_one, "attention not optimised: alpha = beta = 1",
             replaces="optimum"),
        rival("direction_decreasing", lambda: "decreasing", "beta* decreasing in tau (the other "
              "direction)", replaces="direction"),
        rival("alpha_order_reversed", alpha_side_reversed, "alpha* > c4 beta*/(v-1): "
              "same-topic attention dominating (Theorem 3's order for the block-wise W*)",
              replaces="alpha_side"),
    ),
))
attach_plot(CID, plot_theorem5)


@audits(CID)
@examples(5)
@example(pp=PAPER_P, v=10, k=2.0, mq="uniform")
@given(pp=assumption4(), v=st.sampled_from([10, 20]), k=st.sampled_from([2.0, 3.0]),
       mq=st.sampled_from(["uniform", "token"]))
def test_theorem5_bounds_on_a_ladder(world, pp, v, k, mq):
    p_m, p_c, p_r = pp
    ab = world.simulation(ab_ladder, "optimum", pure=True)(v, k, p_m, p_c, p_r, mq)
    side = world.prediction(alpha_side, "alpha_side")
    margins = []
    for t, (a, b) in zip(TAUS, ab):
        lo, hi, ratio = th.theorem5_bounds(int(t ** k), t, v, p_m, p_c, p_r)
        margins.append(min(math.log(b / lo), math.log(hi / b), side(ratio * b, a)))
    desc = ", ".join(f"tau={t}: ({a:.3g}, {b:.4g})" for t, (a, b) in zip(TAUS, ab))
    check_at_least(CID, min(margins[-TOP:]), Threshold(
        0.0, "the statement's strict inequalities (beta bounds and alpha < c4 beta/(v-1))",
        "derived"), what=f"log margins {np.round(margins, 3)} ({mq}, k={k}; (alpha*, beta*) {desc})")
    check_trend(CID, TAUS, [b for a, b in ab],
                direction=world.prediction(lambda: "increasing", "direction")(),
                se=[BETA_REL] * len(TAUS), false_fail=1e-6,
                what=f"beta* grows with tau ({mq}, k={k})")
