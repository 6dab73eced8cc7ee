"""joma.theorem1.{linear,exp,zero_init,softmax}: Theorem 1's invariants (linear, exp and softmax
attention) and its zero-initialisation sentence, on the literal Eqn. 2 (sim.joma.simulate_eqn2,
simulate_eqn2_softmax_budget).  The conservation is the paper's claim, not a consequence of how the
quantities are defined: it comes from the coupling dz ~ v o dv of the gradient steps, which the null
attention_frozen switches off; the rivals (other invariants) drift by O(1), slope ~ 0.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, example, given, reject
from hypothesis import strategies as st

from properties import (Claim, Tolerance, audits, check_close, check_order, examples, null,
                        register, rival)
from properties.joma.common import (ETAS, T1_PARAMS, problem, random_init,
                                    token_stats)
from properties import attach_plot
from properties.joma.figures import plot_theorem1, plot_theorem1_softmax
from properties.trend import refine_order_ladder
from sim.joma import BlowUpError, simulate_eqn2, simulate_eqn2_softmax_budget
from theory import joma as th

_T1_SETTING = ("Eqn. 2 with orthonormal U_C (d x M_C), unit u_q orthogonal to U_C, K hidden nodes, "
               "phi linear or ReLU, stationary g_{h_k}[i] = 1[y_i = k] - 1/C (Assumption 1), "
               "W and z_m trained together by simultaneous gradient steps")
_ORDER_TOL = ("discretization: gradient steps of size eta approximate the flow with O(eta) "
              "error over a fixed horizon; log-log slope of the invariant's drift vs eta "
              "(eta = 4 eta0 .. eta0/8, six sizes; halved further, to eta0/64 at most, while "
              "the band is above 0.5 or infinite: refine_order_ladder) within 1 +- the "
              "harness's deterministic order band (check_order: 3 x the spread of the last "
              "three local slopes + carried round-off; rate 0); plus the "
              "exact discrete-time identity (drift corrected by the accumulated squared "
              "increments) to float64 round-off. The exact identity audits the discrete "
              "counterpart (theory's flow form cancels in it); the flow form itself is decided "
              "by the slope")

lam = th.lambdify_invariant
FLOW = {"linear": th.theorem1_linear, "exp": th.theorem1_exp}
DISCRETE = {"linear": th.theorem1_linear_discrete, "exp": th.theorem1_exp_discrete}
exp_form = lam(th.THEOREM1_EXP)            # z - s2/2
linear_form = lam(th.THEOREM1_LINEAR)      # z^2 - s2
dropped_half = lam(th.THEOREM1_EXP_WRONG)  # z - s2


def simulate(p, **kw):
    """simulate_eqn2, discarding draws whose horizon runs past the blow-up of exp attention:
    those parameters are outside the theorem's assumptions (the simulator rejects them)."""
    try:
        return simulate_eqn2(p, **kw)
    except BlowUpError:
        reject()


def simulate_attention_frozen(p, **kw):
    """Null: the same steps with z held at z(0) (self-attention not trained)."""
    return simulate(p, freeze_z=True, **kw)


def _nulls():
    return null("attention_frozen", simulate_attention_frozen,
                "mechanism off: z held at z(0) (self-attention not trained), W trained as before",
                replaces="run")


register(Claim(
    id="joma.theorem1.linear", where="Theorem 1 (linear attention), Section 3; proof Eqns. 11-15",
    statement="Linear attention (sigma(x) = x, A = 1): the dynamics of Eqn. 2 satisfies "
              "z_m^2(t) = sum_k v_k^2(t) + c, with v_k := U_C^T w_k.",
    assumptions=_T1_SETTING + "; random (nonzero) initialisation.",
    prediction="theory.joma.THEOREM1_LINEAR (and THEOREM1_LINEAR_DISCRETE)",
    simulation="sim.joma.simulate_eqn2(attention='linear')",
    metric="max over tokens, seeds, logged times of |I(t) - I(0)|",
    tolerance=_ORDER_TOL,
    reading="Squares are elementwise. Zero initialisation is a stationary point for linear "
            "attention (b = z o x = 0 and g_f = 0), so the theorem is audited from random inits. "
            "The paper gives no numbers for linear attention: the explicit example is the "
            "report figure's setting (M_C = 6, K = 2, ReLU, init scale 0.4, t = 1). The "
            "measured resolution is not applicable: an invariant is defined up to a factor, so "
            "the prediction scaled by 1 +- delta is conserved as well (the rivals, other "
            "relative weights of z^2 and sum v^2, are rejected).",
    paper_setting="No setting of its own: Theorem 1 holds for Eqn 2 with any data, K and "
                  "initialisation, and Fig. 2 (the only run) gives no numbers; the draws cover M_C "
                  "in 2..8, K in 1..3, N in {16, 32, 64}, phi linear or ReLU, random inits of "
                  "scale 0.1-0.6.",
    alternatives=(
        rival("exp_form", exp_form, "exp attention's invariant z = 1/2 sum_k v_k^2 + c",
              replaces="invariant"),
        rival("dropped_square", dropped_half, "the square on z dropped: z = sum_k v_k^2 + c",
              replaces="invariant"),
        _nulls(),
    ),
    plot=plot_theorem1("linear"),
))
register(Claim(
    id="joma.theorem1.exp", where="Theorem 1 (exp attention), Section 3; proof Eqns. 13-15",
    statement="Exp attention (sigma = exp, A const): the dynamics of Eqn. 2 satisfies "
              "z_m(t) = 1/2 sum_k v_k^2(t) + c.",
    assumptions=_T1_SETTING + "; random initialisation; horizon before the blow-up of exp attention.",
    prediction="theory.joma.THEOREM1_EXP (and THEOREM1_EXP_DISCRETE)",
    simulation="sim.joma.simulate_eqn2(attention='exp')",
    metric="max over tokens, seeds, logged times of |I(t) - I(0)|",
    tolerance=_ORDER_TOL,
    reading="The paper gives no numbers: the explicit example is the report figure's setting. "
            "The measured resolution is not applicable here: an invariant is defined up to a "
            "factor, so the prediction scaled by 1 +- delta is conserved as well and no delta "
            "is rejected (the rivals, other relative weights of z and sum v^2, are).",
    paper_setting="No setting of its own: Theorem 1 holds for Eqn 2 with any data, K and "
                  "initialisation, and Fig. 2 (the only run) gives no numbers; the draws cover M_C "
                  "in 2..8, K in 1..3, N in {16, 32, 64}, phi linear or ReLU, A in [0.5, 2], "
                  "random inits of scale 0.1-0.6.",
    alternatives=(
        rival("linear_form", linear_form, "linear attention's invariant z^2 = sum_k v_k^2 + c",
              replaces="invariant"),
        rival("dropped_half", dropped_half, "the 1/2 dropped: z = sum_k v_k^2 + c",
              replaces="invariant"),
        _nulls(),
    ),
    plot=plot_theorem1("exp"),
))
register(Claim(
    id="joma.theorem1.zero_init", where="Theorem 1, last sentence (Section 3)",
    # c = I(0) = 0 at zero init by the definition of c, and the trajectory check repeats
    # joma.theorem1.exp from one more initial point: algebra of the printed text plus a
    # repetition, not separate evidence (issue 23); a numbered statement of the paper, so
    # reported in its tally as holding by construction (issue 34)
    kind="by_construction",
    statement="Under zero initialization (w_k(0) = 0, z_m(0) = 0), the time-independent constant c = 0.",
    assumptions=_T1_SETTING + "; exp attention (for linear attention and for ReLU, zero init is a "
                              "stationary point of Eqn. 2, so the statement holds trivially).",
    prediction="theory.joma.THEOREM1_EXP with c = 0: z_m(t) = 1/2 sum_k v_k^2(t)",
    simulation="sim.joma.simulate_eqn2(attention='exp', zero init)",
    metric="|z_m(T) - 1/2 sum_k v_k^2(T)| vs eta; exact discrete identity with c = 0",
    tolerance=_ORDER_TOL,
    reading="Holds by construction in this model: given the invariant, c = I(0) = 0 at zero "
            "init by definition, and the trajectory check is joma.theorem1.exp's from one more "
            "initial point. The content checked is that z_m(t) = 1/2 sum_k v_k^2(t) holds "
            "along the trajectory that starts at zero (exp attention moves from there). The explicit example is a small problem with "
            "linear phi (the paper's Section 3.1 setting).",
    paper_setting="No setting of its own: Theorem 1's last sentence holds for any Eqn 2 problem "
                  "started at zero; the draws cover M_C in 2..8, K in 1..3, N in {16, 32, 64}, "
                  "linear phi, exp attention, A in [0.5, 2].",
    alternatives=(
        rival("linear_form", linear_form, "linear attention's z^2 = sum_k v_k^2 (c = 0)",
              replaces="invariant"),
        rival("dropped_half", dropped_half, "the 1/2 dropped: z = sum_k v_k^2", replaces="invariant"),
        _nulls(),
    ),
))


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------
INIT = dict(params=T1_PARAMS, init_seed=st.integers(0, 2**31 - 1), scale=st.floats(0.1, 0.6),
            horizon=st.floats(0.5, 1.5))
PAPER_T1 = dict(params=([0, 1, 2], 6, 2, 2, 32, "relu", 1.0), init_seed=0, scale=0.4, horizon=1.0)


def _assume_moves(tr):
    """Discard draws where nothing moves (every ReLU unit inactive on every sample: a fixed
    point of Eqn. 2, where any invariant holds trivially and no check can tell forms apart).
    Decided on V only, which moves whenever the draw is not at that fixed point (z is held by
    the null)."""
    assume(np.abs(tr.V[-1] - tr.V[0]).max() > 1e-9)


def _exact(world, kind, params, init_seed, scale, horizon):
    p = problem(params, kind)
    W0, z0 = random_init(p, init_seed, scale)
    tr = world.simulation(simulate, "run", pure=True)(p, eta=horizon / 200, horizon=horizon,
                                                      W0=W0, z0=z0, log_every=20)
    _assume_moves(tr)
    s2, _ = token_stats(tr)
    inv = world.prediction(FLOW[kind], "invariant")
    # the claimed form's own discrete correction (Q terms), added to the invariant in the slot:
    # theory's flow form cancels in it (I = DISCRETE), so this audits the discrete counterpart
    # only, while a rival in the slot does not cancel (rival + DISCRETE - FLOW drifts); the flow
    # form itself is decided by _order's slope
    corr = (DISCRETE[kind](z=tr.z, s2=s2, Q_v=tr.Qv, Q_z=tr.Qz) - FLOW[kind](z=tr.z, s2=s2))
    I = inv(z=tr.z, s2=s2) + corr
    scale_ = float(np.abs(tr.z).max() ** 2 + s2.max() + 1)
    check_close(f"joma.theorem1.{kind}", I - I[0], np.zeros_like(I),
                Tolerance.roundoff(scale_, ops=20 * 200), what="exact discrete-time identity")


def _order(world, kind, params, init_seed, scale, horizon):
    p = problem(params, kind)
    W0, z0 = random_init(p, init_seed, scale)
    run = world.simulation(simulate, "run", pure=True)
    inv = world.prediction(FLOW[kind], "invariant")

    def rung(eta):
        tr = run(p, eta=eta, horizon=horizon, W0=W0, z0=z0)
        _assume_moves(tr)
        s2, _ = token_stats(tr)
        I = inv(z=tr.z, s2=s2)
        return np.abs(I - I[0])[-1].max()

    etas = ETAS(horizon / 40)
    # where the six rungs are not yet asymptotic (the harness's band infinite or too wide to
    # decide), the ladder is halved further, to eta0 / 64 at most (harness rule; 2026-12-07)
    etas, err = refine_order_ladder(etas, [rung(eta) for eta in etas], rung)
    check_order(f"joma.theorem1.{kind}", etas, err, 1.0, what="flow invariant drift vs eta")


@audits("joma.theorem1.linear")
@examples(8)
@example(**PAPER_T1)
@given(**INIT)
def test_theorem1_linear_discrete_identity(world, params, init_seed, scale, horizon):
    _exact(world, "linear", params, init_seed, scale, horizon)


@audits("joma.theorem1.linear")
@examples(4)
@example(**PAPER_T1)
@given(**INIT)
def test_theorem1_linear_order(world, params, init_seed, scale, horizon):
    _order(world, "linear", params, init_seed, scale, horizon)


@audits("joma.theorem1.exp")
@examples(8)
@example(**PAPER_T1)
@given(**INIT)
def test_theorem1_exp_discrete_identity(world, params, init_seed, scale, horizon):
    _exact(world, "exp", params, init_seed, scale, horizon)


@audits("joma.theorem1.exp")
@examples(4)
@example(**PAPER_T1)
@given(**INIT)
def test_theorem1_exp_order(world, params, init_seed, scale, horizon):
    _order(world, "exp", params, init_seed, scale, horizon)


@audits("joma.theorem1.zero_init")
@examples(4)
@example(params=([0, 1], 4, 1, 1, 32, "linear", 1.0), horizon=1.0)
@given(params=T1_PARAMS.map(lambda t: (*t[:5], "linear", t[6])), horizon=st.floats(0.5, 1.5))
def test_theorem1_zero_init(world, params, horizon):
    p = problem(params, "exp")
    run = world.simulation(simulate, "run", pure=True)
    inv = world.prediction(th.theorem1_exp, "invariant")
    etas, err = ETAS(horizon / 40), []
    for eta in etas:
        tr = run(p, eta=eta, horizon=horizon)  # zero initialisation
        s2, _ = token_stats(tr)
        I = inv(z=tr.z, s2=s2)  # c = 0: I(t) must be 0 (not just constant)
        err.append(np.abs(I)[-1].max())
        exact = I + (th.theorem1_exp_discrete(z=tr.z, s2=s2, Q_v=tr.Qv) - th.theorem1_exp(z=tr.z, s2=s2))
        check_close("joma.theorem1.zero_init", exact, np.zeros_like(exact),
                    Tolerance.roundoff(float(np.abs(tr.z).max() + 1), ops=10 * len(tr.t) * 40),
                    what="exact discrete identity with c = 0")
    check_order("joma.theorem1.zero_init", etas, err, 1.0, what="z - 1/2 sum v^2 vs eta")


# --------------------------------------------------------------------------------------------
# Softmax attention (Eqn. 19)
# --------------------------------------------------------------------------------------------
# The corrected form's order band to reach by halving the eta ladder further (issue 36: the order
# resolved to a band of at most 0.3 on every draw), at most down to eta0 / 64
SOFTMAX_ORDER_BAND = 0.3


def _stats(V):
    """s2_m = sum_k v_k^2 and n2 = sum_k ||v_k||^2 of V (..., M_C, K), as theory names them."""
    return (V ** 2).sum(-1), (V ** 2).sum((-2, -1))[..., None]


def eqn19(z, V, bbar):
    """Eqn. 19's invariant, theory.joma.theorem1_softmax_eqn19 (z - 1/2 sum_k (v_k^2 - ||v_k||^2
    bbar)) on V (..., M_C, K)."""
    s2, n2 = _stats(V)
    return th.theorem1_softmax_eqn19(z=z, s2=s2, n2=n2, bbar=bbar)


def printed_softmax(z, V, bbar):
    """Rival: Theorem 1 as printed, theory.joma.theorem1_softmax_printed (no 1/2 on bbar)."""
    s2, n2 = _stats(V)
    return th.theorem1_softmax_printed(z=z, s2=s2, n2=n2, bbar=bbar)


def sign_flipped_softmax(z, V, bbar):
    """Rival, built from Eqn. 19: its bbar term with the other sign (bbar -> -bbar)."""
    s2, n2 = _stats(V)
    return th.theorem1_softmax_eqn19(z=z, s2=s2, n2=n2, bbar=-bbar)


def budget_attention_frozen(p, **kw):
    """Null: the same steps with z held at z(0)."""
    return simulate_eqn2_softmax_budget(p, freeze_z=True, **kw)


register(Claim(
    id="joma.theorem1.softmax", where="Theorem 1 (softmax attention), Section 3; proof Eqns. 16-19",
    statement="Softmax attention: if bbar_m := E_{q=m}[b] is constant over time and "
              "E[sum_k g h'_k b b^T] = bbar_m E[sum_k g h'_k b], then "
              "z_m(t) = 1/2 sum_k v_k^2(t) - ||v_k(t)||_2^2 bbar_m + c.",
    assumptions=_T1_SETTING + "; softmax attention; zero and random initialisation.",
    prediction="theory.joma.theorem1_softmax_printed / theorem1_softmax_eqn19 (the sympy "
               "THEOREM1_SOFTMAX_PRINTED / THEOREM1_SOFTMAX_EQN19, lambdified)",
    simulation="sim.joma.simulate_eqn2(attention='softmax') (printed form, direction 1); "
               "sim.joma.simulate_eqn2_softmax_budget (the same steps, with the two assumption "
               "violations accumulated per token)",
    metric="printed: the component along 1, |1^T(z(t) - z(0)) - predicted|, max over seeds and "
           "times; corrected: every one of the M_C directions, max over tokens and seeds of "
           "|I19(T) - I19(0) - (-viol_E + viol_b)| against eta",
    tolerance="printed: float64 round-off (softmax conserves 1^T z exactly, also in discrete time, "
              "because 1^T(diag(b) - b b^T) = 0 when 1^T b = 1); corrected: discretization "
              "O(eta), the finest local slope 1 within the harness's deterministic order band "
              "(3 x the spread of the last three local slopes + carried round-off; rate 0) over "
              "eta = 4 eta0 .. eta0/8 (check_order), the ladder halved further (to eta0/64 at "
              "most) while that band is above 0.3",
    corrected="z_m(t) = 1/2 sum_k (v_k^2(t) - ||v_k(t)||_2^2 bbar_m) + c  (the proof's Eqn. 19; "
              "Fig. 2's caption uses this form too: zhat_m2 = -1/2 sum_k ||v_k||^2 bbar_m)",
    reason="The printed form drops the 1/2 on the bbar term. Since 1^T bbar_m = 1 and "
           "sum_l v_{kl}^2 = ||v_k||^2, the printed form implies d(1^T z)/dt = -1/2 d(sum_k ||v_k||^2)/dt, "
           "but softmax attention conserves 1^T z exactly; Eqn. 19 implies 0 (sympy: "
           "theory.joma.softmax_sum_drift). The printed form fails whatever bbar_m does.",
    reading="The sum over k is read as applying to both terms (the literal alternative, a single "
            "k in the second term, fails the same check). Eqn. 2's data (Assumption 1) do not "
            "satisfy the theorem's two assumptions, so Eqn. 19 cannot be compared with z "
            "directly in all directions (along 1 it holds whatever they do, since softmax "
            "conserves 1^T z). The corrected "
            "property checks the implication itself in all M_C directions: along the run, "
            "d/dt[z - 1/2 sum_k (v_k^2 - ||v_k||^2 bbar)] = -sum_k (E[g h'_k b b^T] - bbar "
            "E[g h'_k b]^T) v_k + 1/2 sum_k ||v_k||^2 d(bbar)/dt, whose two terms vanish exactly "
            "under the two assumptions; their integrals (viol_E, viol_b) are measured on the same "
            "steps and Eqn. 19's drift must equal -viol_E + viol_b to O(eta). In the "
            "Assumption-1 setting, where the assumptions fail, Eqn. 19 is not a good "
            "approximation of z in all directions (measured: see the history); see "
            "joma.theorem1.softmax_fig2 for the correlation reading.",
    paper_setting="No setting of its own: Theorem 1 (softmax) is stated for any data meeting its "
                  "two assumptions, and Fig. 2 gives no numbers; the draws cover M_C in 2..8, K in "
                  "1..3, N in {16, 32, 64}, phi linear or ReLU, zero and random inits, horizon "
                  "2-6.",
    alternatives=(
        rival("printed_no_half", printed_softmax,
              "Theorem 1 as printed: ||v_k||^2 bbar_m without the 1/2", replaces="invariant"),
        rival("sign_flipped", sign_flipped_softmax,
              "the bbar term with the other sign: + 1/2 ||v_k||^2 bbar_m", replaces="invariant"),
        null("attention_frozen", budget_attention_frozen,
             "mechanism off: z held at z(0) (self-attention not trained), W trained as before",
             replaces="run"),
    ),
))
attach_plot("joma.theorem1.softmax", plot_theorem1_softmax)

SOFTMAX_INIT = st.one_of(st.none(), st.tuples(st.integers(0, 2**31 - 1), st.floats(0.1, 0.6)))
# zero init with ReLU is a stationary point (h' = 0), where nothing moves: use linear phi there
SOFTMAX_CASES = st.tuples(T1_PARAMS, SOFTMAX_INIT).map(
    lambda pi: ((*pi[0][:5], "linear", pi[0][6]) if pi[1] is None else pi[0], pi[1]))
# Fig. 2's setting as far as the text gives it: softmax, linear phi, zero initialisation
PAPER_SOFTMAX = dict(case=(([0, 1], 4, 2, 1, 32, "linear", 1.0), None), horizon=4.0)


@audits("joma.theorem1.softmax", form="printed",
        fails="the printed form drops the 1/2 on ||v_k||^2 bbar_m and so predicts "
              "d(1^T z)/dt = -1/2 d(sum_k ||v_k||^2)/dt, while softmax conserves 1^T z exactly")
@examples(4)
@example(**PAPER_SOFTMAX)
@given(case=SOFTMAX_CASES, horizon=st.floats(2.0, 6.0))
def test_theorem1_softmax_printed(case, horizon):
    params, init = case
    p = problem(params, "softmax")
    W0, z0 = (None, None) if init is None else random_init(p, *init)
    tr = simulate_eqn2(p, eta=horizon / 200, horizon=horizon, W0=W0, z0=z0, log_every=20)
    s2, n2 = token_stats(tr)
    observed = tr.z.sum(-1) - tr.z[0].sum(-1)  # 1^T (z(t) - z(0))
    shift = th.theorem1_softmax_printed(z=0 * tr.z, s2=s2, n2=n2, bbar=tr.bbar)
    printed = -(shift.sum(-1) - shift[0].sum(-1))  # 1^T z(t) implied by the printed invariant
    check_close("joma.theorem1.softmax", observed, printed,
                Tolerance.roundoff(float(np.abs(tr.z).max() + n2.max() + 1), ops=10 * 200),
                what="component along 1")


@audits("joma.theorem1.softmax", form="corrected")
@examples(6)
@example(**PAPER_SOFTMAX)
# a drawn ReLU case whose ladder ETAS is not yet asymptotic (local slopes 1.22, 1.20, 1.93: a unit
# switching at step-dependent times), kept so the ladder's refinement is exercised on every run
@example(case=(([326, 529, 274], 2, 3, 0, 32, "relu", 0.8898661022721341),
               (78, 0.5893751006834214)), horizon=5.149522404662724)
@given(case=SOFTMAX_CASES, horizon=st.floats(2.0, 6.0))
def test_theorem1_softmax_corrected_all_directions(world, case, horizon):
    """Eqn. 19 in every direction: its drift equals the integrated violations of the theorem's
    two assumptions (measured on the same steps), to the O(eta) error of the steps."""
    params, init = case
    p = problem(params, "softmax")
    W0, z0 = (None, None) if init is None else random_init(p, *init)
    run = world.simulation(simulate_eqn2_softmax_budget, "run", pure=True)
    inv = world.prediction(eqn19, "invariant")
    etas, err, size = ETAS(horizon / 40), [], 1.0

    def rung(eta):
        nonlocal size
        r = run(p, eta=eta, horizon=horizon, W0=W0, z0=z0)
        assume(np.abs(r["V"] - r["V0"]).max() > 1e-9)  # not the all-inactive ReLU fixed point
        drift = inv(r["z"], r["V"], r["bbar"]) - inv(r["z0"], r["V0"], r["bbar0"])
        size = max(size, float(np.abs(r["z"]).max() + (r["V"] ** 2).sum((-2, -1)).max()
                               + np.abs(r["viol_E"]).max() + np.abs(r["viol_b"]).max() + 1))
        return np.abs(drift - (-r["viol_E"] + r["viol_b"])).max()

    def roundoff(hs):
        # each value's float64 round-off: the sums over the finest rung's horizon / eta steps
        # (~20 operations a step) on numbers of the size of z, sum ||v||^2 and the two
        # violation budgets (a bound for every rung)
        return Tolerance.roundoff(size, ops=20 * round(horizon / min(hs)))

    etas = ETAS(horizon / 40)
    err = [rung(eta) for eta in etas]
    # A deterministic sequence: the harness's order band (3 x the spread of the last three
    # local slopes, plus each value's round-off carried to them).  Where a ReLU unit switches at a
    # step-dependent time the coarse rungs are not yet asymptotic (local slopes 1.2, 1.2, 1.9 on
    # a drawn ReLU case): the ladder is halved further, by a rule fixed beforehand, until the
    # band is at most SOFTMAX_ORDER_BAND or the step is eta0 / 64 (three more rungs at most);
    # the order is then decided on the whole ladder, rate 0
    etas, err = refine_order_ladder(etas, err, rung, value_error=roundoff,
                                    band_at_most=SOFTMAX_ORDER_BAND)
    check_order("joma.theorem1.softmax", etas, err, 1.0, value_error=roundoff(etas),
                what="Eqn. 19 drift minus the assumption violations, all M_C directions")
