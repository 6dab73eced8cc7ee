"""signgd.reduced_dynamics: a consistency check of the sheet's derivation [D]: the full model
(sim.signgd.train: analytic gradients of Eq. 1, softmax, fixed head) against the sheet's scalar
rules (sim.signgd.reduced_dynamics, numpy), step by step from the same init.  What could fail: a
sign rule of the derivation, the step sizes, the softmax logits in terms of the inner products.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, null, register, rival
from properties.signgd.setting import Case, SEED, SETTING
from sim import signgd as sim

CID = "signgd.reduced_dynamics"
STEPS = 1500
RED_CASE = st.tuples(st.lists(SEED, min_size=2, max_size=3, unique=True), st.integers(10, 30),
                     st.sampled_from([4, 6, 8]), st.floats(0.8, 2.0), st.floats(5e-4, 2e-3),
                     st.floats(3e-5, 1e-4))
PAPER_CASE = ([11, 12], 30, 8, 1.0, 1e-3, 6e-5)  # seeds, s, n, sigma_p, sigma_0, eta (CPU sheet)
LOGGED = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "margin")


@functools.lru_cache(maxsize=4)
def _full(case, optimizer):
    seeds, s, n, sigma_p, sigma_0, eta = case
    d = 1 + n * s + 40
    prob = sim.make_problem(list(seeds), n=n, s=s, d=d, sigma_p=sigma_p, disjoint=True, n_test=8,
                            device="cpu")
    p0 = sim.init_params(list(seeds), d=d, m_k=6, m_v=8, sigma_0=sigma_0, device="cpu")
    tr = sim.train(prob, p0, eta=eta, steps=STEPS, log=LOGGED, optimizer=optimizer)
    return dict(q=sim.squeeze_L2(tr.q), c=eta * tr.xi_l1[..., 0], eta=eta)


def full_signgd(case):
    """The full model under SignGD, logged every step."""
    return _full(Case.of(case), "signgd")


def full_gd(case):
    """Null: the full model under GD at the same eta, same data and init."""
    return _full(Case.of(case), "gd")


def _variant(alpha, beta, a, b, V_mu, V, c, eta, steps, *, value=2.0, beta_sign=-1.0, swap=False):
    """The sheet's scalar system with one rule changeable (value rate, the key signal's sign,
    the query and key noise rules swapped); the defaults are the sheet's rules."""
    alpha, beta, a, b = (np.array(x, dtype=np.float64) for x in (alpha, beta, a, b))
    V_mu, V, c = (np.array(x, dtype=np.float64) for x in (V_mu, V, c))
    sig = sim._sig
    hist = {k_: [] for k_ in ("alpha", "beta", "a", "b", "V_mu", "V", "s11", "s21", "margin")}
    for t in range(steps + 1):
        s11 = sig((alpha[:, :, None] * (beta[:, :, None] - b)).sum(1))
        s21 = sig((a * (beta[:, :, None] - b)).sum(1))
        s12, s22 = 1 - s11, 1 - s21
        m = (s11 + s21) * V_mu[:, None] + (s12 + s22) * V
        for k_, x in (("alpha", alpha), ("beta", beta), ("a", a), ("b", b), ("V_mu", V_mu),
                      ("V", V), ("s11", s11), ("s21", s21), ("margin", m)):
            hist[k_].append(x.copy())
        if t == steps:
            break
        g = sig(-m)
        Dl = V - V_mu[:, None]
        kq = (s11 * s12)[:, None, :] * alpha[:, :, None] + (s21 * s22)[:, None, :] * a
        da = c[:, None, :] * np.sign(Dl[:, None, :] * (b - beta[:, :, None]))
        db = c[:, None, :] * np.sign(Dl[:, None, :] * kq)
        if swap:
            da, db = db, da
        dal = eta * np.sign(((g * Dl * s11 * s12)[:, None, :] * (b - beta[:, :, None])).sum(-1))
        dbe = beta_sign * eta * np.sign(((g * Dl)[:, None, :] * kq).sum(-1))
        a, b, alpha, beta = a + da, b + db, alpha + dal, beta + dbe
        V_mu, V = V_mu + value * eta, V + value * c
    return {k_: np.stack(v_) for k_, v_ in hist.items()}


def half_step(*args):
    """Rival: every step halved (c_i / 2, eta / 2)."""
    *init, c, eta, steps = args
    return sim.reduced_dynamics(*init, c / 2, eta / 2, steps)


def value_rate_one_matrix(*args):
    return _variant(*args, value=1.0)


def key_signal_sign_flipped(*args):
    return _variant(*args, beta_sign=+1.0)


def query_key_rules_swapped(*args):
    return _variant(*args, swap=True)


register(Claim(
    id=CID, kind="consistency", where="Statement sheet, 'Exact reduced dynamics' [D] (Section 4)",
    statement="For orthogonal data with pairwise-disjoint training supports the full model's SignGD "
              "trajectory, seen through the tracked inner products, is the scalar system "
              "V_mu += 2 eta, V_i += 2 c_i, a += c sgn(D (b - beta)), "
              "b += c sgn(D (s11 s12 alpha + s21 s22 a)), alpha += eta sgn(sum_i g D s11 s12 (b - beta)), "
              "beta -= eta sgn(sum_i g D (s11 s12 alpha + s21 s22 a)).",
    assumptions=SETTING + "; L = 2.",
    prediction="sim.signgd.reduced_dynamics (independent numpy implementation of the sheet's rules)",
    simulation="sim.signgd.train (full model), every step",
    metric="max_abs over steps, seeds, neurons, samples of full - reduced (free-running from the "
           "same init), for alpha, beta, a, b, V_mu, V_i, s11, s21 and the margins",
    tolerance="float64 round-off: 20 x steps ops on the scale of the largest inner product",
    reading="Applies only where every noise coordinate belongs to one training sample and mu is "
            "orthogonal to all noise: the non-orthogonal and overlapping-support variants of "
            "Table 3 are outside it (there the sim is the only reference). In float64 the full "
            "model stops following it once a softmax output nears round-off (compared up to the "
            "first step with min(s, 1 - s) < 1e-12): s22 = 1 - s21 rounds to 1, the softmax "
            "backward A (g - A g) loses its zero row sum to cancellation and a query-noise "
            "gradient sign can flip; later still, underflow to exact 0 freezes coordinates "
            "(sgn(0) = 0). The same caveat bounds signgd.step_magnitude in time (its runs stop at "
            "150 steps). "
            "A simulator consistency check of the sheet's derivation (two independent "
            "implementations agree), not a claim of the paper.",
    paper_setting="No setting of its own: the sheet's reduced system [D] is derived for any "
                  "orthogonal data with disjoint training supports; the draws cover n in {4, 6, "
                  "8}, s in 10..30, sigma_p in [0.8, 2], sigma_0 in [5e-4, 2e-3], eta in [3e-5, "
                  "1e-4], with the sheet's CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = "
                  "1e-3, eta = 6e-5) as an explicit example.",
    alternatives=(
        rival("half_step", half_step, "a step of eta/2 (c_i / 2 on the noise)", replaces="reduced"),
        rival("value_rate_one_matrix", value_rate_one_matrix,
              "dropped factor 2: V_mu += eta, V_i += c_i", replaces="reduced"),
        rival("key_signal_sign_flipped", key_signal_sign_flipped,
              "sign slip: beta += eta sgn(...) instead of -=", replaces="reduced"),
        rival("query_key_rules_swapped", query_key_rules_swapped,
              "the query and key noise rules exchanged (a follows the key rule and b the query "
              "rule)", replaces="reduced"),
        null("gd_step", full_gd, "GD step instead of a sign step in the full model (same data, "
             "init and eta)", replaces="run"),
    ),
))


@audits(CID)
@examples(3)
@example(case=PAPER_CASE)
@given(case=RED_CASE)
def test_signgd_reduced_dynamics(world, case):
    r = world.simulation(full_signgd, "run", pure=True)(case)
    q, c, eta = r["q"], r["c"], r["eta"]
    red = world.prediction(sim.reduced_dynamics, "reduced")(
        q["alpha"][0], q["beta"][0], q["a"][0], q["b"][0], q["V_mu"][0], q["V"][0], c, eta, STEPS)
    # where the rules apply in float64: before any softmax output falls below ~1e4 eps (see the
    # reading); the window is read off the full model's run
    tiny = np.minimum(np.minimum(q["s21"], 1 - q["s21"]), np.minimum(q["s11"], 1 - q["s11"]))
    tiny = tiny.reshape(len(q["s21"]), -1).min(1) < 1e-12
    cut = int(np.argmax(tiny)) if tiny.any() else STEPS + 1
    scale = float(np.abs(q["a"]).max() + np.abs(q["V"]).max() + 1e-3)
    tol = Tolerance.roundoff(scale, ops=20 * STEPS)
    for k_ in ("alpha", "beta", "a", "b", "V_mu", "V", "s11", "s21", "margin"):
        check_close(CID, q[k_][:cut], red[k_][:cut], tol, what=k_)
