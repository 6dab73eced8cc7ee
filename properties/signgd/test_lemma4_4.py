"""signgd.lemma4_4 (Stage III, majority voting) on the stage runs (runs.stage_run, the shared
Theorem 3.2 draws) at one size, and with high probability on the declared path (path.path_run).
Why the printed vote fails at one size: a near-tie neuron can follow the weighted vote
sgn sum_i g_i D_i s_11 s_12 (b_{s,i} - beta_s) of its update instead (the weights carry ||xi_i||_1,
whose relative spread sqrt((pi/2 - 1) / s) vanishes as s grows).  Why issue 20's corrected form
(every uneven vote followed) is withdrawn: on the path beta_s follows -sgn(sum_i g_i D_i s_21 s_22
a_{s,i}) once s_21 decays in some samples before T_4^- (alpha_s, ~1/sigma_p of the noise, adds a
negligible term), which reweights the plain sum.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given

from properties import (Claim, Tolerance, audits, check_at_least, check_close,
                        null, outside_condition, register, rival)
from properties.readings import lookup
from properties.signgd.common import (L44_SENT, at_steps, check_path_whp, check_theta, claim_rate,
                                      exact, off_vote_neurons, rival_ratio, split_votes)
from properties.signgd.path import PATH_T3E, path_run
from properties.signgd.runs import attention_frozen_null, held_at_init, stage_run
from properties.signgd.setting import (H, PATH_CLAUSES, PATH_DRAWS, RANGE, SETTING, STAGE_RUN,
                                       STAGES, Config, ci_draws, path_draws, shared_draws,
                                       signgd_draw_note)

CID = "signgd.lemma4_4"
EXACT = exact()
SOFTMAX = "the softmax outputs stay near 1/2"
# per draw and check on the path: the vote, its 'final sign' reading and the softmax (check_whp);
# the stage runs' checks are exact (rate 0)
PATH_FF = claim_rate(len(PATH_DRAWS), checks=3)
NEAR = lookup("near 1/2").level  # a softmax output 'near 1/2': within 0.05 (the glossary)
# The stage runs break Condition 3.1's noise clause: what they find is about that regime
STAGE_REGIME = ("the stage runs, sigma_p = 1-2 against the noise clause's sigma_p = Omega(d^{1/4} "
                "n^3), ~2.2e3 at d = 361, n = 8; the item is decided on the declared path by ")


def _signals(cfg, hold=()):
    """|alpha|, |beta| at init and at T_4^- per seed and neuron (the logged quantities `hold`
    held at init)."""
    cfg = Config(*cfg)
    _, q, st_ = stage_run(*cfg)
    q = held_at_init(q, hold)
    T4m = st_["T4m"].astype(float)
    out = dict(T=T4m, eta=float(cfg.eta))
    for k_ in ("alpha", "beta"):
        out[k_ + "0"] = np.abs(q[k_][0])
        out[k_] = np.abs(at_steps(q[k_], T4m))
    return out


_sig = functools.lru_cache(maxsize=8)(_signals)


def signals_at_T4m(cfg):
    """|alpha|, |beta| at init and at T_4^- per seed and neuron (the end of Stage III)."""
    return _sig(tuple(cfg))


# Null: W_Q, W_K not trained (the signals keep their init values); same T_4^-
attention_frozen = attention_frozen_null(_signals, ("alpha", "beta"))


def at_end_of_stage3():
    """The softmax read at T_3 (the first step with the vote complete, capped at T_4^-)."""
    return "dev_T3"


def at_turn():
    """Rival: the softmax read at T_4^-, where Lemma 4.5 has s_21 decay (Stage III's 'near 1/2'
    carried into Stage IV)."""
    return "dev_T4m"


def path_attention_frozen(seed0, kappa_p):
    """Null of the path's vote checks: W_Q, W_K untrained: alpha, beta keep their init values
    (the query and key noise, and so the votes, as trained)."""
    P = path_run(seed0, kappa_p)
    return dict(P, off_even=P["off_even_frozen"], off_uneven=P["off_uneven_frozen"],
                final_off_vote=P["final_off_vote_frozen"])


FINAL_SIGN = ("'determines the sign' read as the final sign (the paper's gloss after Lemma 4.4: "
              "'the final sign of the query & key signals [is] determined by sum of key & query "
              "noise')")


def linear_growth(eta, T, x0):
    """The lemma: |x(T)| = Theta(T eta): the scale eta T."""
    return eta * T * np.ones_like(x0)


def still_at_init(eta, T, x0):
    """Rival: the signals still at their init at T_4^- (Lemma 4.3 (4) carried through Stage
    III): the scale |x(0)|."""
    return np.maximum(x0, 1e-300)


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.4 (Stage III, majority voting), Section 4.1; Fig. 1 (d)",
    statement="In Stage III the sign of each query signal alpha_s follows sgn(sum_i b_{s,i}) and "
              "each key signal beta_s follows -sgn(sum_i a_{s,i}); |alpha|, |beta| = Theta(T_3 eta); "
              "the softmax outputs stay near 1/2.",
    assumptions=SETTING + "; " + RANGE + "; draws: setting.T32_EXAMPLES (the sheet's CPU setting, "
                "8 seeds, and the slow and fast corners, 4 seeds); dev / thorough add drawn ones",
    prediction="the voted signs hold for every neuron at T_4^- - 1; |alpha_s(T)|, |beta_s(T)| "
               "= Theta(eta T) at T = T_4^- (envelope |x(0)| + eta T, median ratio 'Theta(1)'); "
               "softmax within the glossary's 'near 1/2' (0.05) of 1/2 at T_3; along the declared "
               "path (path.path_run), with high probability: no neuron off its vote at the end "
               "of Stage III (path.PATH_T3E), "
               "no sample beyond 'near 1/2' at T_3 (the first step with the vote complete, capped "
               "at T_4^-)",
    simulation=H + "; T_3, T_4^- by sim.signgd.stage_times; the path: the exact reduced dynamics "
               "from the full model's init (path.path_run)",
    metric="number of neurons not following their vote at T_4^- - 1 (all seeds); for alpha and "
           "beta: max over neurons of |x(T)| - |x(0)| - eta T and the median over neurons of "
           "|x(T)| / (eta T) ('Theta(1)'), at T = T_4^-; max |s - 1/2| at T_3",
    tolerance="vote count 0 (exact); envelope to float64 round-off; median ratio: the glossary's 'Theta(1)' (a factor 3 of 1, bracket 2-5; a rival scale within that factor of the lemma's is not told apart on its draw); softmax: the glossary reading 'near "
              "1/2'; on the path check_whp (Cochran-Armitage along the path, Clopper-Pearson at the "
              "largest rung against one minus the glossary's 'high', 0.1), false-fail "
              f"{PATH_FF:.3g} per check and draw (the claim share 1e-4 over 3 draws x 3 checks)",
    reading="[R] forms; 'near 1/2' is the glossary reading (0.05). A neuron whose vote sum_i b_{s,i} is "
            "close to 0 (n = 8 is even: near-ties happen) can settle late; T_3 = T_4^- then. "
            "Alternatives of the magnitude property: rival 'still at init', null 'attention "
            "frozen'. Issue 35: the vote and the softmax are decided with "
            "high probability along the declared path: " + PATH_CLAUSES + "; the softmax there "
            "is read at T_3 = the first step with the vote complete (signgd.stage_order's T_3), "
            "capped at T_4^-, not stage_times' T_3 (which a vote broken as s_21 decays puts at "
            "T_4^-); alternatives on the path: null 'attention frozen' (alpha, beta at init) for "
            "the votes, rival 'at T_4^-' for the softmax. The corrected form (every uneven vote "
            "followed) fails on the declared path and is withdrawn (the failing votes are key "
            "signals reweighted by s_21's decay in some samples before T_4^-). On the path the "
            "vote is read at " + PATH_T3E + " (until 2026-12-06 at T_4^- - 1, inside Stage IV's "
            "decay of s_21, where the key signal follows -sgn(alpha_s): that count is reported "
            "beside). The neighbouring reading " + FINAL_SIGN + " is decided on the path "
            "too: per run, a neuron whose alpha_s or beta_s at the end is off its vote at the "
            "end of Stage III (the query signal reverses in Stage IV in about half the runs, "
            "docs/findings.md). Null on the path's vote checks: attention frozen (alpha, beta "
            "at init). " + STAGES,
    audit_gap="Theta(T_3 eta) is audited as the exact envelope |x(T)| <= |x(0)| + eta T for every "
              "neuron (automatic: constant step magnitude) plus the glossary's 'Theta(1)' (a "
              "factor 3) for the median neuron, not for every neuron: a near-tie neuron that follows its vote late "
              "sits lower (0.35 in the canonical run, seed 15), and no fitted scaling of "
              "|alpha(T_3)| against T_3 eta over a sweep is made. The softmax's 'near 1/2' is "
              "read at one size on the stage runs and with high probability on the declared path.",
    reason="The vote part fails at CPU size for near-tied neurons (Lemma 4.3 (3)'s 'sums bounded "
           "away from 0' does not hold for every neuron with n = 8): refuted as printed for all "
           "neurons at this size. The softmax part fails through the same neurons: the logit of "
           "s_21 is ~ -sum_s a_{s,i} b_{s,i} ~ -m_k (t c)^2, so |s_21 - 1/2| ~ m_k (T_3 c)^2 / 4 "
           "and a vote that settles late (T_3 = 107, 414 against a typical 30) leaves s_21 far "
           "from 1/2 at T_3. One size: not a refutation of the asymptotic statement. On the "
           "declared path (issue 35), read at the end of Stage III (path.PATH_T3E), the share of "
           "runs with a neuron off its vote falls along the path and is undecided at the "
           "largest rung (the --size ladder audit of 319352a: 51-61, 26-30, 13-24, 19-21 of 256 "
           "runs over the three draws; ~2500 runs at s = 240 would decide it); read at T_4^- - "
           "1, inside Stage IV, some neuron is off its vote in most runs at every rung.",
    asymptotic="d along the declared path (s, m_k, m_v and sigma_p grow with d, c held: the "
               "probability that a run has a failure must vanish)",
    paper_setting="Lemma 4.4 holds under Condition 3.1 (asymptotic, no numbers), and Fig. 1 (d)'s "
                  "run (Table 3 row (a), App. B.1) lost its numbers in extraction; the sheet's CPU "
                  "setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) and the "
                  "sweep's slow and fast corners (s in [20, 30], sigma_p in [1, 2], sigma_0 in "
                  "[7e-4, 1.3e-3], eta in [5e-5, 7e-5]) stand in at one size; the declared path "
                  "(s = 30..120 at ci, to 240 under --size ladder) decides it.",
    alternatives=(
        rival("still_at_init", still_at_init, "the signals still at their init at T_4^- (Lemma "
              "4.3 (4) carried through Stage III)", replaces="scale"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: the signals keep their "
             "init values (same T_4^-)", replaces="run"),
        null("attention_frozen_path", path_attention_frozen, "on the path, W_Q, W_K untrained: "
             "alpha, beta keep their init values (the votes as trained)", replaces="path"),
        rival("at_t4_minus", at_turn, "the softmax on the path read at T_4^- (Stage III's 'near 1/2' "
              "carried to where Lemma 4.5 has s_21 decay)", replaces="when"),
    ),
))


@outside_condition(STAGE_REGIME + "test_signgd_lemma4_4_vote_path")
@audits(CID, fails="a neuron whose vote sum_i b_{s,i} is a near-tie (n = 8 is even) has not "
                   "followed its vote by T_4^- (1 of 64 neurons in the canonical run)")
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_4_vote(cfg):
    _, q, st_ = stage_run(*cfg)
    t_end = st_["T4m"] - 1
    v = split_votes(*(at_steps(q[k_], t_end) for k_ in ("alpha", "beta", "a", "b")))
    off = off_vote_neurons(v["off"])
    n_ = v["off"].size // 2
    check_at_least(CID, -float(off.sum()), EXACT,
                   what=f"{off.sum()} of {n_} neurons not following their vote at T_4^- - 1")


@audits(CID)
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_4_magnitude(world, cfg):
    r = world.simulation(signals_at_T4m, "run", pure=True)(cfg)
    for k_ in ("alpha", "beta"):
        x0, xT, T = r[k_ + "0"], r[k_], r["T"][:, None]
        over = float(np.max(xT - x0 - r["eta"] * T))  # each step moves x by eta at most
        check_close(CID, max(over, 0.0), 0.0, Tolerance.roundoff(float(xT.max()), ops=1e4),
                    what=f"|{k_}(T)| <= |{k_}(0)| + eta T (automatic: constant step magnitude)")
        scale = world.prediction(linear_growth, "scale")(r["eta"], T, x0)
        med = float(np.median(xT / scale))
        check_theta(CID, med, L44_SENT, name=f"Theta {k_}",
                    rival_ratio=rival_ratio(scale, linear_growth(r["eta"], T, x0)),
                    what=f"median |{k_}(T)| / scale (Theta(T eta), typical neuron)")


@outside_condition(STAGE_REGIME + "test_signgd_lemma4_4_softmax_path")
@audits(CID, fails="with T_3 measured as the step from which every neuron follows its vote, a late "
                   "(near-tie) vote delays T_3 until s_21 has left 1/2 (canonical run: "
                   "|s_21 - 1/2| = 0.49 at T_3 = T_4^- = 414 in seed 15, 0.086 at T_3 = 107 in "
                   "seed 18)")
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_4_softmax(cfg):
    _, q, st_ = stage_run(*cfg)
    T3 = st_["T3"]
    ok = np.isfinite(T3)
    dev = max(float(np.abs(at_steps(q[k_][:, ok], T3[ok]) - 0.5).max()) for k_ in ("s11", "s21"))
    check_close(CID, dev, 0.0, Tolerance.reading("near 1/2", SOFTMAX),
                what=f"max |s - 1/2| at T_3 = {dev:.3g}")


@pytest.mark.xdist_group("signgd-path")
@audits(CID)
@path_draws
def test_signgd_lemma4_4_vote_path(world, cfg):
    """The vote with high probability along the declared path: per run, no neuron off its vote
    at the end of Stage III (path.PATH_T3E; check_whp); the count at T_4^- - 1 beside."""
    P = world.simulation(path_run, "path", pure=True)(*cfg)
    off = P["off_even"] + P["off_uneven"]  # votes not followed per run (a neuron has two)
    check_path_whp(CID, P, off > 0, items=(P["off_vote"], P["neurons"]), unit="neurons",
                   false_fail=PATH_FF, name="vote along the path",
                   what="runs with a neuron off its vote at the end of Stage III (median step: "
                        + ", ".join(f"{np.median(x_):g}" for x_ in P["T3e"]) + "; at T_4^- - 1, "
                        "inside Stage IV, runs with a neuron off its vote: "
                        + ", ".join(f"{int((x_ > 0).sum())}/{x_.size}" for x_ in P["off_vote_T4m"])
                        + ")")


@pytest.mark.xdist_group("signgd-path")
@audits(CID, reading=FINAL_SIGN)
@path_draws
def test_signgd_lemma4_4_final_sign_path(world, cfg):
    """Item (1) read with the paper's gloss, 'the final sign of the query & key signals' is the
    vote's, with high probability along the declared path: per run, no neuron whose alpha_s or
    beta_s at the end of the run is off its vote at the end of Stage III (check_whp)."""
    P = world.simulation(path_run, "path", pure=True)(*cfg)
    off = P["final_off_vote"]
    check_path_whp(CID, P, off > 0, items=(off, P["neurons"]), unit="neurons",
                   false_fail=PATH_FF, name="final sign along the path",
                   what="runs with a neuron whose final alpha_s or beta_s is off its vote at the "
                        "end of Stage III (runs with a neuron whose alpha_s changes sign after "
                        "T_4^-: " + ", ".join(f"{int((f_ > 0).sum())}/{f_.size}"
                                              for f_ in P["flip"]) + ")")


@pytest.mark.xdist_group("signgd-path")
@audits(CID)
@path_draws
def test_signgd_lemma4_4_softmax_path(world, cfg):
    """The softmax near 1/2 in Stage III with high probability along the declared path: per run,
    no sample whose s_11 or s_21 is more than 'near 1/2' from 1/2 at T_3 (check_whp).  Its own
    slot ("path_softmax"): the votes' null does not reach it."""
    P = world.simulation(path_run, "path_softmax", pure=True)(*cfg)
    dev = np.array(P[world.prediction(at_end_of_stage3, "when")()])  # (rungs, S, n)
    over = dev > NEAR
    check_path_whp(CID, P, over.any(-1), items=(over.sum(-1), np.ones_like(dev).sum(-1)),
                   unit="samples", false_fail=PATH_FF, name="softmax along the path",
                   what=f"runs with a sample's s_11 or s_21 more than {NEAR:g} from 1/2 at T_3 "
                        "(medians of the max |s - 1/2|: " + ", ".join(
                            f"s = {s_}: {np.median(d_.max(-1)):.3g}"
                            for s_, d_ in zip(P["sizes"], dev)) + ")")
