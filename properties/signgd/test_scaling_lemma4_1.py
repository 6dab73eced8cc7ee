"""signgd.scaling_lemma4_1: Lemma 4.1 (1)'s Theta(t eta s sigma_p) as fitted log-log exponents of
the mean value noise's growth, on a one-at-a-time sweep (`_sweep`).  The exponents in t and eta are
1 by the exact linear value dynamics, in sigma_p because the same draws scale exactly with sigma_p;
the exponent in s is that of E ||xi||_1 = sqrt(2/pi) s sigma_p (Definition 2.1's data model).
"""

from __future__ import annotations

import functools
import os

import numpy as np
from hypothesis import example, given

from properties import (Claim, Tolerance, audits, check_close, examples, loglog_slope, null,
                        register, rival)
from properties.signgd.common import claim_rate
from properties.signgd.setting import M_V, N_SAMPLES, SEED, SETTING
from sim import signgd as sim

CID = "signgd.scaling_lemma4_1"
_THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
SC_BASE = dict(s=20, sigma_p=1.0, eta=6e-5)
SC_T = 20
SC_SWEEP = ({"s": (10, 20, 40, 80, 160), "sigma_p": (0.25, 0.5, 1.0, 2.0, 4.0),
             "eta": (1.5e-5, 3e-5, 6e-5, 1.2e-4, 2.4e-4), "t": (5, 10, 20, 40, 80)} if _THOROUGH else
            {"s": (10, 20, 40), "sigma_p": (0.5, 1.0, 2.0), "eta": (3e-5, 6e-5, 1.2e-4),
             "t": (5, 10, 20)})
SC_SEEDS = 4
DRAWS = 3  # under ci: seed 11 and two drawn seeds
FALSE_FAIL = claim_rate(DRAWS)  # the s exponent's Monte Carlo check, per draw (share over 3 draws)
PAPER_SEED = 11


@functools.lru_cache(maxsize=64)
def _increment(seed0, s, sigma_p, eta, ts, frozen=False):
    """mean over seeds and samples of V_i(t) - V_i(0) at the steps ts."""
    seeds = [seed0 + k for k in range(SC_SEEDS)]
    d = 1 + N_SAMPLES * s + s + 3
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True, n_test=8,
                            device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=2, m_v=M_V, sigma_0=1e-3, device="cpu")
    if frozen:
        return np.zeros(len(ts))
    tr = sim.train(prob, p0, eta=eta, steps=max(ts), log=("V",))
    V = sim.squeeze_L2(tr.q)["V"]
    return np.array([float((V[t] - V[0]).mean()) for t in ts])


def _sweep(seed, frozen):
    b = SC_BASE
    out = {"t": _increment(seed, b["s"], b["sigma_p"], b["eta"], SC_SWEEP["t"], frozen)}
    for var in ("eta", "s", "sigma_p"):
        out[var] = np.array([_increment(seed, **{**b, var: x}, ts=(SC_T,), frozen=frozen)[0]
                             for x in SC_SWEEP[var]])
    return out


def increments(seed):
    """Per swept variable: the mean value noise's increment at each value (the others at
    SC_BASE, t = 20)."""
    return _sweep(seed, False)


def values_frozen(seed):
    """Null: W_V not trained: V_i keeps its init value (increment 0)."""
    return _sweep(seed, True)


def lemma_exponents():
    return {"t": 1.0, "eta": 1.0, "s": 1.0, "sigma_p": 1.0}


def l2_rate():
    """Rival: V_i grows at 2 eta ||xi_i||_2, ~ sqrt(s) sigma_p."""
    return {"t": 1.0, "eta": 1.0, "s": 0.5, "sigma_p": 1.0}


def signal_rate():
    """Rival: V_i grows at the value signal's rate 2 eta (no memorisation of the noise)."""
    return {"t": 1.0, "eta": 1.0, "s": 0.0, "sigma_p": 0.0}


def quadratic_in_t():
    """Rival: growth quadratic in t (the query/key inner products' products in Stage IV)."""
    return {"t": 2.0, "eta": 1.0, "s": 1.0, "sigma_p": 1.0}


register(Claim(
    id=CID, kind="by_construction", where="Lemma 4.1 (1): V_i(t) = Theta(t eta s sigma_p)",
    statement="The mean value noise grows as Theta(t eta s sigma_p) in Stage I.",
    assumptions=SETTING.replace("m_k = 8", "m_k = 2") + f"; one-at-a-time sweep around s = 20, "
                f"sigma_p = 1, eta = 6e-5, t = 20: {SC_SWEEP} (CI; the thorough profile sweeps 5 "
                f"points each); {SC_SEEDS} seeds x 8 samples per point; d = 1 + n s + s + 3; "
                f"seed {PAPER_SEED} (the canonical seed) is an explicit example",
    prediction="fitted log-log exponent of mean_i (V_i(t) - V_i(0)) in each of t, eta, s, sigma_p "
               "equals 1",
    simulation="sim.signgd.train logged at the swept t",
    metric="|fitted exponent - 1| per variable",
    tolerance="t, eta, sigma_p: float64 round-off (the same draws scale exactly: V_i moves by "
              "2 eta ||xi_i||_1 and xi scales with sigma_p); s: Monte Carlo, the log of the mean "
              "||xi||_1 over 8 x seeds samples has SE sqrt((pi/2 - 1) / (8 S s)), propagated "
              f"through the least-squares slope, false-fail {FALSE_FAIL:.3g} per draw (the claim share "
              f"1e-4 over {DRAWS} draws)",
    reading="A simulator consistency check (the exact linear value dynamics and the data's "
            "noise law), not evidence for the paper's Lemma 4.1 beyond signgd.step_magnitude; "
            "exponents, not the constant (the constant 2 sqrt(2/pi) is checked in "
            "signgd.lemma4_1). Rivals: l2 rate (s^1/2), the value signal's rate (s^0 sigma_p^0), "
            "quadratic in t; null: W_V frozen.",
    paper_setting="Lemma 4.1 (1) is a scaling under Condition 3.1 with no numbers, and Fig. 1 (a), "
                  "(b)'s run (Table 3 row (a)) lost its numbers in extraction; the sweep varies s "
                  "(10..40), sigma_p (0.5..2), eta (3e-5..1.2e-4) and t (5..20) one at a time "
                  "around s = 20, sigma_p = 1, eta = 6e-5, t = 20.",
    alternatives=(
        rival("l2_rate", l2_rate, "V_i grows at 2 eta ||xi_i||_2 (an l2 norm instead of l1): "
              "exponent 1/2 in s", replaces="exponents"),
        rival("signal_rate", signal_rate, "V_i grows at the value signal's rate 2 eta: exponent "
              "0 in s and sigma_p", replaces="exponents"),
        rival("quadratic_in_t", quadratic_in_t, "growth quadratic in t", replaces="exponents"),
        null("values_frozen", values_frozen, "W_V not trained: no increment", replaces="run"),
    ),
))


@audits(CID)
@examples(2)
@example(seed=PAPER_SEED)
@given(seed=SEED)
def test_signgd_scaling_lemma4_1(world, seed):
    inc = world.simulation(increments, "run", pure=True)(seed)
    expo = world.prediction(lemma_exponents, "exponents")()
    for var in ("t", "eta", "s", "sigma_p"):
        xs, ys = np.asarray(SC_SWEEP[var], float), np.asarray(inc[var], float)
        slope = loglog_slope(xs, ys) if np.all(ys > 0) else np.nan
        if var == "s":
            lx = np.log(xs)
            w = (lx - lx.mean()) / ((lx - lx.mean()) ** 2).sum()
            se_y = np.sqrt((np.pi / 2 - 1) / (N_SAMPLES * SC_SEEDS * xs))
            tol = Tolerance.monte_carlo(float(np.sqrt((w ** 2 * se_y ** 2).sum())), FALSE_FAIL)
        else:
            tol = Tolerance.roundoff(1.0, ops=1e5)
        check_close(CID, slope, expo[var], tol, what=f"exponent in {var}: {slope:.6g}")
