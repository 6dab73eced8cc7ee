"""signgd.lemma4_1 (Stage I) on one batched program per draw of L41_SEEDS seeds x m_v in L41_MV
(`_stage1`: each seed's m_v = 16 init with its value rows scaled by sqrt(16 / m_v), exact for the
trajectory: runs.TT_SETTING), every step to the last instance's T_1.  (3) is asymptotic in m_v
because T_1 and the value inits scale as m_v^-1/2 while the query/key noise moves eta ||xi_i||_1
per step.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, Tolerance, audits, check_at_least, check_close, check_trend,
                        examples, null, register, rival)
from properties.signgd.common import claim_rate, exact
from properties.signgd.setting import MV_ROWS, N_SAMPLES, SEED, SETTING, signgd_draw_note, STAGES
from properties.signgd.runs import d_positive, problem_and_init
from sim import signgd as sim

CID = "signgd.lemma4_1"
L41_SEEDS = 16
L41_MV = (1, 4, 16, 64)
L41_CAP = 2000
PAPER_CFG = (11, 30, 1.0, 1e-3, 0.33)  # seed0, s, sigma_p, sigma_0, eps: eta = 6e-5 (the sheet)
L41_RUN = st.tuples(SEED, st.integers(20, 30), st.floats(1.0, 2.0), st.floats(7e-4, 1.3e-3),
                    st.floats(0.02, 0.05))
DRAWS = 3  # under ci: the paper's CPU setting and two drawn
FALSE_FAIL = claim_rate(DRAWS, 3)  # per check; 3 random checks per draw: the claim share
EXACT = exact("exact inequality (deterministic event of the run)")


@functools.lru_cache(maxsize=4)
def _stage1(seed0, s, sigma_p, sigma_0, eps, frozen_values=False):
    eta = eps * sigma_0 / np.sqrt(s)
    seeds = [seed0 + k for k in range(L41_SEEDS)]
    G = len(L41_MV)
    prob, p0 = problem_and_init(seeds * G, s, d=1 + N_SAMPLES * s + s + 3, sigma_p=sigma_p,
                        sigma_0=sigma_0, m_v=MV_ROWS)
    scale = torch.tensor([np.sqrt(MV_ROWS / m) for m in L41_MV], dtype=torch.float64)
    p0 = sim.Params(p0.WQ, p0.WK, p0.WV * scale.repeat_interleave(L41_SEEDS)[:, None, None, None],
                    p0.H)
    if frozen_values:  # the null: W_V not trained (its init kept at every step)
        lr = dict(eta=eta, steps=0)
    else:
        lr = dict(eta=eta, steps=L41_CAP)
    tr = sim.train(prob, p0, log=("alpha", "beta", "a", "b", "V", "V_mu"), stop=d_positive,
                   tail=0.0, **lr)
    q = sim.squeeze_L2(tr.q)
    xi2 = (prob.train.xi ** 2).sum(-1).sqrt().numpy()[..., 0]  # (GS, n)
    T1 = sim.stage_times(tr)["T1"] if len(tr.t) > 1 else np.full(G * L41_SEEDS, np.inf)
    out = dict(T1=T1.reshape(G, L41_SEEDS), eta=float(eta), s=s, sigma_p=sigma_p, T=int(tr.t[-1]),
               xi_l1=tr.xi_l1[..., 0].reshape(G, L41_SEEDS, -1))
    T = int(tr.t[-1])
    out["dV"] = (q["V"][T] - q["V"][0]).reshape(G, L41_SEEDS, -1)
    for k_ in ("a", "b"):
        x = q[k_]
        k1 = np.where(np.isfinite(T1), T1, T).astype(int)
        disp = np.stack([np.abs(x[k1[j], j] - x[0, j]) for j in range(len(k1))])  # (GS, m_k, n)
        out["disp_" + k_] = (disp / (sigma_0 * xi2[:, None, :])).max((1, 2)).reshape(G, L41_SEEDS)
    out["V_T1"] = np.stack([q["V"][int(min(t, T)), j] for j, t in enumerate(T1)]).reshape(
        G, L41_SEEDS, -1)
    return out


def stage1_run(cfg):
    """The Stage I ladder of the draw (seeds x m_v), to the last instance's T_1."""
    return _stage1(*cfg)


def values_frozen(cfg):
    """Null: W_V not trained: V_i, V_mu keep their init values, no instance leaves Stage I."""
    return _stage1(*cfg, frozen_values=True)


def l1_rate(s, sigma_p, eta):
    """[D] E[V_i(t) - V_i(0)] / t = 2 eta E||xi||_1 = 2 sqrt(2/pi) eta s sigma_p."""
    return 2.0 * np.sqrt(2.0 / np.pi) * eta * s * sigma_p


def rate_without_constant(s, sigma_p, eta):
    """Rival: Theta's constant taken as 2 (the sqrt(2/pi) of E|N(0, 1)| dropped)."""
    return 2.0 * eta * s * sigma_p


def l2_rate(s, sigma_p, eta):
    """Rival: the value noise grows at 2 eta ||xi||_2 ~ 2 eta sqrt(s) sigma_p."""
    return 2.0 * eta * np.sqrt(s) * sigma_p


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.1 (Stage I), Section 4.1; Fig. 1 (a), (b)",
    statement="(1) The mean value noise shifts early and becomes linear: V_i(t) = Theta(t eta s "
              "sigma_p) from T_1 on; (2) the mean value signal is negligible next to it; (3) query "
              "and key noise barely move before T_1.",
    assumptions=SETTING.replace("m_v = 16", f"m_v in {L41_MV}").replace(
        "d = 1 + n s + 120", "d = 1 + n s + s + 3") + f"; {L41_SEEDS} seeds per m_v and draw "
                "(each seed's m_v = 16 init with its value rows scaled by sqrt(16 / m_v)); draws: "
                "the paper's CPU setting (s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) and "
                "s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta = eps sigma_0 / "
                "sqrt(s) with eps in [0.02, 0.05] (long Stage I's)",
    prediction="(1) E[V_i(t) - V_i(0)] = 2 sqrt(2/pi) t eta s sigma_p [D]; (3) the query/key "
               "noise's motion by T_1 in units of its init's standard deviation decreases with m_v "
               "(o(1) as m_v grows; ~ m_v^-1/2 while T_1 is many steps)",
    simulation="sim.signgd.train (full model), every step, to the last instance's T_1 (the first "
               "step with D_i > 0 for every sample, sim.signgd.stage_times)",
    metric="(1) pooled mean over samples, seeds, m_v of (V_i(T) - V_i(0)) / T against the rate; "
           "(3) per m_v the mean over seeds of max over (neuron, sample) of |x(T_1) - x(0)| / "
           "(sigma_0 ||xi_i||_2), x = a, b, and its trend in m_v",
    tolerance="(1) Monte Carlo: ||xi||_1 / (s sigma_p sqrt(2/pi)) has relative SE sqrt((pi/2 - 1) "
              "/ s) per sample, pooled over the 8 x 16 samples of each m_v's shared data (the "
              "m_v instances reuse the seeds' data); (3) check_trend direction 'decreasing', "
              "seed-clustered (a log-log slope per seed: each seed's data and init are run at "
              f"every m_v), Student t on {L41_SEEDS - 1} dof; "
              f"false-fail {FALSE_FAIL:.3g} per check (the claim share 1e-4 over {DRAWS} draws x "
              "3 checks)",
    reading="(3) 'barely move' read as o(1) in the value width m_v (Condition 3.1: m_v = "
            "Omega(polylog d)), the quantity that sets T_1: decided by the trend over four m_v. "
            "(1)'s rate and (2)'s ratio of rates are consistency checks of the linear value "
            "dynamics and the data's noise law. Alternatives: rivals 'rate without sqrt(2/pi)' and "
            "'l2 rate' for (1)'s constant; null 'W_V frozen' (no instance leaves Stage I). "
            + STAGES,
    audit_gap="(1)'s 'from T_1 on' and (2) are not audited: both depend on T_1's definition, lost "
              "in extraction. At the measured T_1 (the first step with D_i > 0 for every sample) "
              "the last sample to cross has V_i ~ V_mu, so (2) fails there by definition, and "
              "V_i(T_1) itself can be <= 0 when V_mu(0) < 0 (2 of 64 seeds at the paper's "
              "setting with m_v = 16, 5 of 64 at m_v = 4); the paper's T_1 may be later. (1)'s "
              "linear rate and (2)'s rate ratio hold by the exact linear value dynamics "
              "(signgd.step_magnitude) and are not evidence beyond it.",
    asymptotic="m_v (item (3): the query/key noise's motion by T_1 as the value width grows)",
    paper_setting="Lemma 4.1 holds under Condition 3.1 (asymptotic, no numbers), and Fig. 1 (a), "
                  "(b)'s run (Table 3 row (a), App. B.1) lost its numbers in extraction; the "
                  "sheet's CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) is "
                  "an explicit example, the draws cover s in [20, 30], sigma_p in [1, 2], sigma_0 "
                  "in [7e-4, 1.3e-3], m_v in {1, 4, 16, 64}.",
    alternatives=(
        rival("rate_without_constant", rate_without_constant, "Theta's constant read as 2 "
              "(sqrt(2/pi) dropped)", replaces="rate"),
        rival("l2_rate", l2_rate, "the value noise grows at 2 eta ||xi||_2 (l2 instead of l1)",
              replaces="rate"),
        null("values_frozen", values_frozen, "W_V not trained: the value noise does not move, "
             "Stage I does not end", replaces="run"),
    ),
))


@audits(CID)
@examples(2)
@example(cfg=PAPER_CFG)
@given(cfg=L41_RUN)
def test_signgd_lemma4_1(world, cfg):
    r = world.simulation(stage1_run, "run", pure=True)(cfg)
    rate = world.prediction(l1_rate, "rate")(r["s"], r["sigma_p"], r["eta"])
    done = float(np.isfinite(r["T1"]).mean())
    check_at_least(CID, done - 1.0, EXACT, what=f"every instance leaves Stage I within {L41_CAP} "
                                                f"steps ({done:.0%})")
    T = max(r["T"], 1)
    ratio = r["dV"] / T / rate
    n_per = r["xi_l1"][0].size  # the m_v instances share each seed's data
    se = np.sqrt((np.pi / 2 - 1) / r["s"]) / np.sqrt(n_per)
    check_close(CID, float(ratio.mean()), 1.0, Tolerance.monte_carlo(float(se), FALSE_FAIL),
                what=f"(1) mean (V_i(T) - V_i(0)) / T over the rate: {ratio.mean():.4f}")
    for k_ in ("a", "b"):
        d = r["disp_" + k_]  # (m_v, seeds): each seed's data and init at every m_v (paired)
        check_trend(CID, L41_MV, d.T, direction="decreasing", false_fail=FALSE_FAIL,
                    rivals=(0.0,), name=f"(3) {k_}",
                    what=f"(3) {k_}'s motion by T_1 / init std over m_v {L41_MV}: "
                         f"{np.round(d.mean(1), 3).tolist()}")
