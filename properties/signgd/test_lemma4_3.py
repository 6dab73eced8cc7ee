"""signgd.lemma4_3 (end of Stage II), items (1) and (2) (items (3), (4): test_lemma4_3_item3.py,
test_lemma4_3_item4.py), at T_2 on the stage runs (runs.stage_run, the shared Theorem 3.2 draws)
and on the declared path (path.path_run).  Item (1): each step moves the noise by exactly
eta ||xi_i||_1 (signgd.step_magnitude), so |x(T_2)| / (T_2 eta ||xi_i||_1) <= 1 + |x(0)| /
(T_2 eta ||xi_i||_1); the lower end is what could fail (noise that wanders in Stage II).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given

from properties import (Claim, Tolerance, audits, check_at_least, check_close, null,
                        outside_condition, register, rival)
from properties.readings import lookup
from properties.signgd.common import (L43_SENT, at_steps, check_path_whp, check_theta,
                                      claim_rate, exact, rival_ratio)
from properties.signgd.path import PATH_T2, path_run
from properties.signgd.runs import attention_frozen_null, held_at_init, stage_run
from properties.signgd.setting import (H, PATH_CLAUSES, PATH_DRAWS, RANGE, SETTING,
                                       STAGE_RUN, STAGES, Config, ci_draws, path_draws,
                                       shared_draws, signgd_draw_note)
from sim import signgd as sim

CID = "signgd.lemma4_3"
EXACT = exact()
SOFTMAX = "softmax outputs still 1/2 +- o(1)"
WHP_FF = claim_rate(len(PATH_DRAWS))  # per draw: item (2)'s check_whp, the claim share
NEAR = lookup("near 1/2").level  # a softmax output 'near 1/2': within 0.05 (the glossary)
# The stage runs break Condition 3.1's noise clause: what they find is about that regime
STAGE_REGIME = ("the stage runs, sigma_p = 1-2 against the noise clause's sigma_p = Omega(d^{1/4} "
                "n^3), ~2.2e3 at d = 361, n = 8; the item is decided on the declared path by ")


def _end_of_stage2(cfg, hold=()):
    """|a|, |b|, s_11, s_21 at each seed's T_2 (the logged quantities `hold` held at init), with
    the scales the predictions read."""
    cfg = Config(*cfg)
    tr, q, st_ = stage_run(*cfg)
    q = held_at_init(q, hold)
    prob = sim.make_problem(cfg.seeds, n=8, s=cfg.s, d=cfg.d, sigma_p=cfg.sigma_p, disjoint=True,
                            n_test=8, device="cpu")
    xi_l2 = (prob.train.xi ** 2).sum(-1).sqrt().numpy()[..., 0]
    ok = np.isfinite(st_["T2"])
    T2 = st_["T2"][ok]
    out = dict(T2=T2, eta=float(cfg.eta), sigma_0=float(cfg.sigma_0),
               xi_l1=tr.xi_l1[..., 0][ok], xi_l2=xi_l2[ok], s=int(cfg.s),
               sigma_p=float(cfg.sigma_p), n_seeds=int(ok.size))
    for k_ in ("a", "b"):
        out[k_] = np.abs(at_steps(q[k_][:, ok], T2))  # (S', m_k, n)
    for k_ in ("s11", "s21"):
        out[k_] = at_steps(q[k_][:, ok], T2)
    return out


_state = functools.lru_cache(maxsize=8)(_end_of_stage2)


def end_of_stage2(cfg):
    """|a|, |b|, s_11, s_21 at each seed's T_2, with the scales the predictions read."""
    return _state(tuple(cfg))


# Null: W_Q, W_K not trained: a, b, s_11, s_21 keep their init values (same T_2)
attention_frozen = attention_frozen_null(_end_of_stage2, ("a", "b", "s11", "s21"))


def l1_scale(r):
    """(1): the scale T_2 eta ||xi_i||_1 (~ T_2 eta s sigma_p sqrt(2/pi)), (S', 1, n)."""
    return r["T2"][:, None, None] * r["eta"] * r["xi_l1"][:, None, :]


def init_scale(r):
    """Rival: the query/key noise still at its init scale sigma_0 ||xi_i||_2 at T_2."""
    return r["sigma_0"] * r["xi_l2"][:, None, :]


def l2_scale(r):
    """Rival: Theta(T_2 eta sqrt(s) sigma_p): the noise moving eta ||xi_i||_2 per step."""
    return r["T2"][:, None, None] * r["eta"] * r["xi_l2"][:, None, :]


def path_stage2(seed0, kappa_p):
    """Per rung of the declared path (a list): |a|, |b| at each seed's T_2 with the scales the
    predictions read (as end_of_stage2 gives them for a stage run)."""
    P = path_run(seed0, kappa_p)
    return [dict(T2=P["T2"][i], eta=float(P["eta"][i][0]), sigma_0=float(P["sigma_0"][i][0]),
                 xi_l1=P["c"][i] / P["eta"][i][:, None], xi_l2=P["xi_l2"][i], a=P["a_T2"][i],
                 b=P["b_T2"][i]) for i in range(len(P["sizes"]))]  # one eta, sigma_0 per rung


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.3 (end of Stage II), Section 4.1",
    statement="(1) |a_{s,i}(T_2)|, |b_{s,i}(T_2)| = Theta(T_2 eta s sigma_p); (2) softmax outputs "
              "still 1/2 +- o(1); (3) the sums sum_i a_{s,i} and sum_i b_{s,i} are bounded away "
              "from 0; (4) the query and key signals alpha_s, beta_s are still at their init.",
    assumptions=SETTING + "; " + RANGE + "; draws: setting.T32_EXAMPLES (the sheet's CPU setting, "
                "8 seeds, and the slow and fast corners, 4 seeds); dev / thorough add drawn ones",
    prediction="(1) median over pairs and seeds of |x(T_2)| / (T_2 eta ||xi_i||_1) 'Theta(1)' "
               "(glossary: max(r, 1/r) <= 3), x = a, b (the noise moves eta ||xi||_1 per step); "
               "(2) max over samples and seeds of |s - 1/2| 'near 1/2' (glossary: 0.05) at T_2, "
               "s = s_11, s_21; along the declared path (path.path_run): (1)'s per-seed median "
               "ratio 'Theta(1)' on every rung; (2) with high probability: the probability that a "
               "run has a sample with |s - 1/2| > 0.05 at T_2 vanishing (check_whp)",
    simulation=H + "; T_2 by sim.signgd.stage_times; the path: the exact reduced dynamics from "
               "the full model's init (path.path_run), T_2 with ties as ties (path.PATH_T2)",
    metric="(1) the ratio's median over pairs and seeds; (2) max over samples and seeds; on the "
           "path, per run: any sample beyond 'near 1/2' at T_2",
    tolerance="deterministic statistics of the run: (1) the glossary's 'Theta(1)' (a factor 3 of "
              "1, bracket 2-5; a rival scale within that factor of the lemma's is not told apart "
              "on its draw); (2) the glossary reading 'near 1/2' (0.05, bracket [0.025, 0.1]) at "
              "one size; on the path check_whp (Cochran-Armitage along the path, Clopper-Pearson "
              "at the largest rung against one minus the glossary's 'high', 0.1), false-fail "
              f"{WHP_FF:.3g} per draw (the claim share over {len(PATH_DRAWS)} draws)",
    reading="[R] forms. This id audits items (1) and (2); items (3) and (4) have their own ids, "
            "signgd.lemma4_3.item3 and signgd.lemma4_3.item4. Alternatives (item (1)'s "
            "properties): rivals 'init scale' (|x(T_2)| at sigma_0 ||xi_i||_2), 'l2 rate' (T_2 "
            "eta ||xi_i||_2); null 'attention frozen'. "
            "Item (2) at 0.05 fails at the fast corner of the sweep: a strict expected failure at "
            "one size, not a refutation of an "
            "o(1) statement (asymptotic policy). Issue 35: '1/2 +- o(1)' is decided with high "
            "probability on the declared path of the stage lemmas (per run: any sample with "
            "|s_11 - 1/2| or |s_21 - 1/2| > 0.05 at T_2; the glossary's 'near 1/2' at its level, "
            "not its bracket): " + PATH_CLAUSES + "; " + PATH_T2 + ". On the path (2) is not told "
            "apart from its closest mistake, the attention frozen (every softmax output at its "
            "init value): '1/2 +- o(1)' at T_2 is true of an attention that never trains, so "
            "that null passes the check (--size ladder audit of 49fef91: on 3 of 3 draws) and "
            "no alternative could fail it; the property runs without alternatives, its check "
            "credited with none, and reports the null's runs beside. " + STAGES,
    audit_gap="items (3) and (4) are not established by this id's properties: they are audited "
              "as signgd.lemma4_3.item3 (erratum) and signgd.lemma4_3.item4 (a trend in s).",
    asymptotic="the problem size along the declared path (item (1)'s Theta, item (2)'s o(1), "
               "with high probability)",
    paper_setting="Lemma 4.3 holds under Condition 3.1 (asymptotic, no numbers), and Table 3 row "
                  "(a), the setting of Figs. 1-2 and Table 2 (App. B.1), lost its numbers in "
                  "extraction; the sheet's CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = "
                  "1e-3, eta = 6e-5) and the sweep's slow and fast corners (s in [20, 30], sigma_p "
                  "in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]) stand in at one "
                  "size; the declared path (s = 30..120 at ci, to 240 under --size ladder) "
                  "decides it.",
    alternatives=(
        rival("init_scale", init_scale, "the query/key noise still at its init scale "
              "sigma_0 ||xi_i||_2 at T_2 (item (4)'s 'still at init' said of the noise)",
              replaces="prediction"),
        rival("l2_rate", l2_scale, "Theta(T_2 eta sqrt(s) sigma_p): an l2 rate instead of l1",
              replaces="prediction"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: a, b and the softmax keep "
             "their init values", replaces="run"),
    ),
))


@outside_condition(STAGE_REGIME + "test_signgd_lemma4_3_path")
@audits(CID)
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_3_magnitude(world, cfg):
    """Item (1) at T_2."""
    r = world.simulation(end_of_stage2, "run", pure=True)(cfg)
    check_at_least(CID, float(r["T2"].size - r["n_seeds"]), EXACT, what="every seed reaches T_2")
    scale = world.prediction(l1_scale)(r)
    rr = rival_ratio(scale, l1_scale(r))
    for k_ in ("a", "b"):
        med = float(np.median(r[k_] / scale))
        check_theta(CID, med, L43_SENT, name=f"(1) {k_}", rival_ratio=rr,
                    what=f"(1) median |{k_}(T_2)| / scale")


@outside_condition(STAGE_REGIME + "test_signgd_lemma4_3_softmax_path")
@audits(CID, fails="at the fast corner of the sweep (cfg (777, 4, 30, 2.0, 7e-4, 7e-5)) s_21 is "
                   "0.078 from 1/2 at T_2: '1/2 +- o(1)' read as 0.05 at one size")
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_3_softmax(cfg):
    """Item (2) at T_2, at one size (not a trend: the claim is asymptotic, so a failure here is
    reported, not a refutation)."""
    r = end_of_stage2(cfg)
    for k_ in ("s11", "s21"):
        dev = float(np.abs(r[k_] - 0.5).max())
        check_close(CID, dev, 0.0, Tolerance.reading("near 1/2", SOFTMAX), name=f"(2) {k_}",
                    what=f"(2) max |{k_}(T_2) - 1/2| = {dev:.3g}")


@pytest.mark.xdist_group("signgd-path")
@audits(CID)
@path_draws
def test_signgd_lemma4_3_path(world, cfg):
    """Item (1) along the declared path (path.path_run, shared with signgd.lemma4_4, lemma4_6,
    lemma4_7, stage_order): Theta(T_2 eta s sigma_p): every seed's median of |x(T_2)| / (T_2 eta
    ||xi_i||_1) 'Theta(1)' on every rung, the farthest from 1 checked."""
    R = world.simulation(path_stage2, "path", pure=True)(*cfg)
    ratios, rr = [], []
    for r in R:
        scale = world.prediction(l1_scale)(r)
        rr.append(rival_ratio(scale, l1_scale(r)))
        ratios.append(np.median(np.concatenate([r["a"] / scale, r["b"] / scale], 1)
                                .reshape(len(r["T2"]), -1), -1))
    ratios = np.array(ratios)  # (rungs, seeds)
    worst = float(ratios.ravel()[np.argmax(np.maximum(ratios, 1 / ratios))])
    rival_r = None if rr[0] is None else float(np.median(rr))
    desc = ", ".join(f"rung {i + 1}: {v.min():.3g}-{v.max():.3g}" for i, v in enumerate(ratios))
    check_theta(CID, worst, L43_SENT, name="(1) Theta along the path", rival_ratio=rival_r,
                what=f"(1) per-seed median |x(T_2)| / (T_2 eta ||xi_i||_1) on every rung of the "
                     f"path, the farthest from 1 ({desc})")


@pytest.mark.xdist_group("signgd-path")
@audits(CID)
@path_draws
def test_signgd_lemma4_3_softmax_path(cfg):
    """Item (2), 1/2 +- o(1), with high probability along the declared path: per run, any sample
    whose s_11 or s_21 is more than 'near 1/2' from 1/2 at T_2 (check_whp).  No world: its
    closest mistake, the attention frozen, passes the check (the reading says why), so no
    alternative is run; the frozen runs are reported beside."""
    P = path_run(*cfg)
    dev = np.array(P["dev_T2"])  # (rungs, S, n)
    over = dev > NEAR

    def runs_beyond(key):  # per rung: the runs with a sample beyond 'near 1/2' at P[key]'s time
        return (np.array(P[key]) > NEAR).any(-1).sum(-1)

    frozen, strict = runs_beyond("dev_0"), runs_beyond("dev_T2_strict")  # init, strict T_2
    check_path_whp(CID, P, over.any(-1), items=(over.sum(-1), np.ones_like(dev).sum(-1)),
                   unit="samples", false_fail=WHP_FF, name="(2) o(1) along the path",
                   what=f"(2) runs with a sample's s_11 or s_21 more than {NEAR:g} from 1/2 "
                        f"at T_2 (medians of the max |s - 1/2|: " + ", ".join(
                            f"s = {s_}: {np.median(d_.max(-1)):.3g}"
                            for s_, d_ in zip(P["sizes"], dev)) + "; median T_2 / T_4^-: "
                        + ", ".join(f"{np.median(a_ / b_):.3g}"
                                    for a_, b_ in zip(P["T2"], P["T4m"]))
                        + "; median pairs tied at T_2: "
                        + ", ".join(f"{np.median(x_):g}" for x_ in P["tied_T2"])
                        + "; median stage_times' T_2 / T_4^-: "
                        + ", ".join(f"{np.median(a_ / b_):.2f}"
                                    for a_, b_ in zip(P["T2_strict"], P["T4m"]))
                        + "; runs beyond it at stage_times' T_2: "
                        + ", ".join(f"{k_}/{over.shape[1]}" for k_ in strict)
                        + "; not told apart from the attention frozen, whose runs beyond it "
                        "(the softmax at init): "
                        + ", ".join(f"{k_}/{over.shape[1]}" for k_ in frozen) + ")")
