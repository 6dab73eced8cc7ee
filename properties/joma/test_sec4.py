"""JoMA Section 4, qualitative consequences of Eqn. 7 ("first ... then"): the attention entropy
drops and then rebounds (Fig. 4 right), and the stable rank of the lower layer drops and then
bounces back.

Reference: Eqn. 7 integrated by solve_ivp on a log-spaced grid of 301 times (entropy: DOP853,
rtol 1e-9; rank: K nodes sharing one exp attention, LSODA, rtol 1e-8).  Decided by the
asymptotic policy in time: split at the minimum of the curve, the early part must decrease and
the late part increase significantly (check_trend against log t, false-fail 1e-5 each), and both
the drop and the rebound must exceed a derived solver-error threshold.  Alternatives:
  rival other_order   (slot order) the other order, rise first and fall later (a trend rival);
  null  attention_off (slot run)   Eqn. 7 without its attention factor (v_dot = mu - v): the
                                   entropy then decreases monotonically and V(t) stays
                                   proportional to M (constant stable rank).
Draws where the data would let either alternative pass are not excluded: both are rejected on
every draw.  Thresholds: the drop and rebound must exceed 1e3 x the solver's relative tolerance
x the scale of the quantity (entropy <= ln 20 nats; stable rank <= K <= 4).
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, Threshold, Tolerance, audits, check_at_least, check_close,
                        check_trend, examples, null, register, rival)
from properties.joma.common import entropy_curves, entropy_setting, rank_curves, rank_setting
from properties.joma.figures import plot_entropy, plot_rank
from sim.joma import stable_rank

ENTROPY_FLOOR = 1e3 * 1e-9 * np.log(20.0)  # nats: 1e3 x rtol x scale
RANK_FLOOR = 1e3 * 1e-8 * 4.0              # stable-rank units


def drop_then_rise():
    return ("decreasing", "increasing")


def rise_then_drop():
    return ("increasing", "decreasing")


def _decide(cid, t, h, floor, floor_model, order, what):
    """Drop and rebound above the floor, then the two trends split at the minimum."""
    i = int(np.argmin(h))
    drop, rebound = float(h[0] - h[i]), float(h[-1] - h[i])
    th_floor = Threshold(floor, f"derived: {floor_model}", "derived")
    check_at_least(cid, drop, th_floor, what=f"{what}: drop h(0) - min h")
    check_at_least(cid, rebound, th_floor, what=f"{what}: rebound h(T) - min h")
    early, late = order
    check_trend(cid, t[1:i + 1], h[1:i + 1], direction=early, log_values=False, false_fail=1e-5,
                what=f"{what} before its minimum")
    check_trend(cid, t[i:], h[i:], direction=late, log_values=False, false_fail=1e-5,
                what=f"{what} after its minimum")


_ORDER_RIVAL = rival("other_order", rise_then_drop,
                     "the other order: rise first, fall later", replaces="order")

register(Claim(
    id="joma.sec4.entropy_dynamics", where="Section 4, Fig. 4 (right) caption",
    statement="Entropy of the attention (entropy(softmax(v^2))) drops when salient components "
              "are learned first, and then rebounces when other components catch up "
              "(dynamics Eqn. 7).",
    assumptions="Eqn. 7 with factor 1 from v(0) = eps 1, eps in [1e-3, 0.05]; d in [8, 20]; "
                "1-3 salient components mu_s in [1.5, 2.5], the others in [0.5, 1.0] (salience "
                "gap >= 0.5, drawn); horizon T = 60 (all components converged).",
    prediction="drop-then-rebound: H decreasing before its minimum and increasing after it "
               "(significant trends in log t), drop and rebound above the solver-error floor",
    simulation="sim.joma.simulate_eqn7 (rtol 1e-9) on a log-spaced grid of 301 times; "
               "sim.joma.entropy_softmax_sq",
    metric="check_trend slopes of H against log t on each side of argmin H; H(0) - min H and "
           "H(T) - min H",
    tolerance=f"floor {ENTROPY_FLOOR:.2g} nats = 1e3 x rtol 1e-9 x ln 20 (solver error); trends "
              "at false-fail 1e-5 (Student t on the residuals)",
    reading="'First ... then' is decided in time: the curve is split at its minimum and each "
            "side must trend the claimed way. Holds under the stated condition that the salient "
            "mu are O(1)-large (mu_s >= 1.5). With mu l2-normalised (||mu|| = 1, as mu = "
            "x_bar/||x_bar|| in Eqn. 6) the rebound exists but is ~1e-9 nats (e^{mu^2/2} hardly "
            "differs between components), invisible in a plot; Fig. 4 must use larger mu. The "
            "paper gives no numbers: the explicit example is the report figure's setting "
            "(d = 16, two salient mu = 2, eps = 0.01).",
    asymptotic="t (first ... then)",
    alternatives=(
        _ORDER_RIVAL,
        null("attention_off", lambda mu, v0: entropy_curves(mu, v0, attention=False),
             "mechanism off: v_dot = mu - v (no attention factor): the entropy of softmax(v^2) "
             "then decreases monotonically", replaces="run"),
    ),
    plot=plot_entropy,
))

register(Claim(
    id="joma.sec4.rank_dynamics", where="Section 4, 'Relationship with rank of MLP lower layer'",
    statement="The rank of lower layer matrix W will first drop since the weight components that "
              "correspond to high target value mu_j grow first, and then bounce back to higher "
              "rank when the components that correspond to low target value mu_j catch up later.",
    assumptions="K in 2..4 hidden nodes sharing one exp attention (Theorem 1: z = 1/2 sum_k "
                "v_k^2, v_k_dot = (mu_k - v_k) ∘ exp(z)); 1-3 shared salient components "
                "mu_s in [1.2, 1.6]; node k has its own block of b in 2..4 non-salient components "
                "at mu_on in [0.5, 0.8] and mu_off = 0.1 elsewhere; small initialisation along the"
                " targets V(0) = eps M, eps in [1e-3, 0.05]; horizon T = 80.",
    prediction="drop-then-bounce of the stable rank sr(V) = ||V||_F^2/||V||_2^2, V = [v_1..v_K]: "
               "decreasing before its minimum, increasing after it (significant trends in log t)",
    simulation="sim.joma.simulate_eqn7 with mu of shape (K, d) (LSODA, rtol 1e-8), "
               "sim.joma.stable_rank",
    metric="check_trend slopes of sr against log t on each side of argmin sr; sr(0) - min sr and "
           "sr(T) - min sr; sr(T) = sr(M) (converged)",
    tolerance=f"floor {RANK_FLOOR:.2g} = 1e3 x rtol 1e-8 x K_max 4 (solver error); trends at "
              "false-fail 1e-5; convergence sr(T) = sr(M) to 1e-6 (|delta| ~1e-10 at T = 80 "
              "times the condition of sr)",
    reading="Rank is read as the stable rank (a continuous rank); 'first ... then' is decided in "
            "time as for the entropy. Holds under the stated condition on the initialisation: "
            "V(0) small AND along the targets. With an isotropic random small initialisation "
            "the no-attention dynamics V(t) = M(1-e^{-t}) + V0 e^{-t} can itself dip and "
            "recover (by up to ~0.04 in stable rank, independent of the init scale eps), so a "
            "drop-and-bounce is then not specific to attention. The paper gives no numbers: the "
            "explicit example is the report figure's setting (K = 4, b = 4, one salient "
            "component 1.4, mu_on = 0.7, eps = 0.01).",
    asymptotic="t (first ... then)",
    alternatives=(
        _ORDER_RIVAL,
        null("attention_off", lambda M, V0: rank_curves(M, V0, attention=False),
             "mechanism off: v_k_dot = mu_k - v_k (no attention): V(t) stays proportional to M, "
             "constant stable rank", replaces="run"),
    ),
    plot=plot_rank,
))


@audits("joma.sec4.entropy_dynamics", form="printed")
@examples(12)
@example(d=16, n_sal=2, mu_sal=[2.0, 2.0, 2.0], mu_non=list(np.linspace(0.5, 1.0, 19)),
         eps=0.01)
@given(d=st.integers(8, 20), n_sal=st.integers(1, 3),
       mu_sal=st.lists(st.floats(1.5, 2.5), min_size=3, max_size=3),
       mu_non=st.lists(st.floats(0.5, 1.0), min_size=19, max_size=19),
       eps=st.floats(1e-3, 0.05))
def test_sec4_entropy_dynamics(world, d, n_sal, mu_sal, mu_non, eps):
    mu, v0 = entropy_setting(d, n_sal, mu_sal, mu_non, eps)
    t, H, _ = world.simulation(lambda m, v: entropy_curves(m, v), "run", pure=True)(mu, v0)
    _decide("joma.sec4.entropy_dynamics", t, H, ENTROPY_FLOOR,
            "1e3 x solver rtol 1e-9 x ln 20 nats", world.prediction(drop_then_rise, "order")(),
            "entropy")


@audits("joma.sec4.rank_dynamics", form="printed")
@examples(12)
@example(K=4, b=4, n_sal=1, mu_sal=1.4, mu_on=0.7, eps=0.01)
@given(K=st.integers(2, 4), b=st.integers(2, 4), n_sal=st.integers(1, 3),
       mu_sal=st.floats(1.2, 1.6), mu_on=st.floats(0.5, 0.8), eps=st.floats(1e-3, 0.05))
def test_sec4_rank_dynamics(world, K, b, n_sal, mu_sal, mu_on, eps):
    cid = "joma.sec4.rank_dynamics"
    M, V0 = rank_setting(K, b, n_sal, mu_sal, mu_on, 0.1, eps)
    t, S, _ = world.simulation(lambda m, v: rank_curves(m, v), "run", pure=True)(M, V0)
    # the horizon reaches convergence (final stable rank = sr(M))
    check_close(cid, S[-1], stable_rank(M.T),
                Tolerance.derived(1e-6, "converged: |delta| ~1e-10 x condition of sr"),
                what="converged to sr(M)")
    _decide(cid, t, S, RANK_FLOOR, "1e3 x solver rtol 1e-8 x K_max 4",
            world.prediction(drop_then_rise, "order")(), "stable rank")
