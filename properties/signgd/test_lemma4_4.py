"""signgd.lemma4_4 (Stage III, majority voting): the query/key signals take the signs voted by the
key/query noise sums; |alpha|, |beta| = Theta(T_3 eta); the softmax stays near 1/2.

An asymptotic statement (w.h.p. as the problem grows; 'Theta', 'near'): under the asymptotic
policy one size decides nothing, whichever way it points.  At the CPU size (n = 8, s in [20, 30])
on the stage runs (runs.stage_run, the shared Theorem 3.2 draws):

* vote (printed, strict expected failure): every neuron follows its vote at T_4^- - 1.  Fails: a
  neuron whose vote sum_i b_{s,i} is a near-tie (signgd.lemma4_3.item3: random-sign sums) can
  follow the weighted vote sgn sum_i g_i D_i s_11 s_12 (b_{s,i} - beta_s) of its update instead
  (the weights carry ||xi_i||_1, whose relative spread sqrt((pi/2 - 1) / s) vanishes as s grows).
* magnitude (printed, passes): the envelope |x(T)| <= |x(0)| + eta T (exact, by the constant step
  magnitude: automatic, not evidence) and the median neuron's |x(T)| / (eta T) 'Theta(1)' at
  T = T_4^- (what could fail: signals that wander instead of growing linearly).  Alternatives: rival
  'still at init' (Lemma 4.3 (4) carried to T_4^-: |x(T)| at its init), null 'attention frozen'.
* softmax (printed, strict expected failure): within 0.05 of 1/2 at T_3; fails where a late
  (near-tie) vote delays T_3 into Stage IV.
* ladder (issue 20): the vote decided as a trend in s on the exact reduced dynamics
  (runs.stage4_ladder, shared with signgd.lemma4_6: s in runs.S_LADDER at the CPU setting's
  sigma_0 s and eta sqrt(s) / sigma_0): the per-seed fraction of neurons off their vote at
  T_4^- - 1 must fall along s (seed-clustered per-seed slopes, Student t; rival exponent 0).
  Under --size ladder (96 seeds) it rises significantly: the printed vote is refuted there.
* corrected form (issue 20, [D]): every neuron off its vote is one whose voters' signs split
  evenly (4 of 8 each way; found on exploration seeds 5011-5034, s = 30..240: 42 of 42).  An
  even split's plain sum is a difference of l1 norms whose relative size vanishes as s grows,
  while the signal follows the weighted vote of its update, so such a vote is followed with a
  probability falling towards 1/2.  Properties: (a) every uneven vote followed at T_4^- - 1, on
  the stage runs and at every rung of the ladder on its own seeds (runs.S_LADDER_FRESH); (b) the
  off-vote fraction among even splits rising along s.  Null: alpha, beta at init.  Not told
  apart: the majority of the voters' signs in place of the sign of their sum, which is
  the same on every uneven vote here (a 5-3 split's margin is ~1/4 of the sum of magnitudes,
  their relative spread ~ sqrt((pi/2 - 1) / s) <= 0.14): run as the rival 'majority of signs'
  on the stage-run property and reported not told apart (issue 20's referee pass).
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given

from properties import (Claim, Tolerance, audits, check_at_least, check_close, check_trend,
                        null, register, rival)
from properties.signgd.common import (L44_SENT, check_theta, claim_rate, exact, majority_rule,
                                      rival_ratio, votes_by_rule)
from properties.signgd.runs import (Config, H, RANGE, SETTING, STAGES, STAGE_RUN, S_LADDER_DRAWS,
                                    at_steps, attention_frozen_null, ci_draws, held_at_init,
                                    ladder_draws, off_vote_neurons, shared_draws, stage4_ladder,
                                    split_votes, stage_run, signgd_draw_note)

CID = "signgd.lemma4_4"
EXACT = exact()
SOFTMAX = "the softmax outputs stay near 1/2"
TREND_FF = claim_rate(len(S_LADDER_DRAWS), checks=2)  # per draw and trend (printed, corrected)


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


def _vote_split(cfg, frozen=False):
    """At T_4^- - 1 of each seed of the stage runs, alpha, beta and the voters a, b (alpha, beta
    at init: frozen), from which split_votes counts the 2 m_k votes per seed (alpha_s by sum_i
    b_{s,i}, beta_s by -sum_i a_{s,i}): whether the voters' signs split evenly and whether the
    vote is not followed."""
    _, q, st_ = stage_run(*cfg)
    t_end = st_["T4m"] - 1
    al, be = at_steps(q["alpha"], t_end), at_steps(q["beta"], t_end)
    if frozen:
        al, be = q["alpha"][0], q["beta"][0]
    return dict(alpha=al, beta=be, a=at_steps(q["a"], t_end), b=at_steps(q["b"], t_end))


def vote_split(cfg):
    """The votes at the end of Stage III of the stage runs, split by even / uneven voters."""
    return _vote_split(tuple(cfg))


def vote_split_frozen(cfg):
    """Null of the corrected form: W_Q, W_K untrained: alpha, beta keep their init values."""
    return _vote_split(tuple(cfg), frozen=True)


def vote_ladder(cfg):
    """The corrected form's ladder: runs.stage4_ladder on its own seeds (fresh=True)."""
    return stage4_ladder(*cfg, fresh=True)


def vote_ladder_frozen(cfg):
    """Null of the corrected form on the ladder: alpha, beta at their init values."""
    L = dict(vote_ladder(cfg))
    L["off_even"], L["off_uneven"] = L["off_even_frozen"], L["off_uneven_frozen"]
    return L


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
    assumptions=SETTING + "; " + RANGE + "; draws: runs.T32_EXAMPLES (the sheet's CPU setting, "
                "8 seeds, and the slow and fast corners, 4 seeds); dev / thorough add drawn ones",
    prediction="the voted signs hold for every neuron at T_4^- - 1; |alpha_s(T)|, |beta_s(T)| "
               "= Theta(eta T) at T = T_4^- (envelope |x(0)| + eta T, median ratio 'Theta(1)'); "
               "softmax within the glossary's 'near 1/2' (0.05) of 1/2 at T_3; the fraction of "
               "neurons off their vote falling along s (ladder)",
    simulation=H + "; T_3, T_4^- by sim.signgd.stage_times",
    metric="number of neurons not following their vote at T_4^- - 1 (all seeds); for alpha and "
           "beta: max over neurons of |x(T)| - |x(0)| - eta T and the median over neurons of "
           "|x(T)| / (eta T) ('Theta(1)'), at T = T_4^-; max |s - 1/2| at T_3",
    tolerance="vote count 0 (exact); envelope to float64 round-off; median ratio: the glossary's 'Theta(1)' (a factor 3 of 1, bracket 2-5; a rival scale within that factor of the lemma's is not told apart on its draw); softmax: the glossary reading 'near "
              "1/2'; the vote trend: per-seed slopes of the off-vote fraction against log s, "
              f"seed-clustered, t on seeds - 1 dof, false-fail {TREND_FF:.3g} per draw (the "
              "claim share 1e-4 over 3 draws)",
    reading="[R] forms; 'near 1/2' is the glossary reading (0.05). A neuron whose vote sum_i b_{s,i} is "
            "close to 0 (n = 8 is even: near-ties happen) can settle late; T_3 = T_4^- then. "
            "Alternatives of the magnitude property: rival 'still at init', null 'attention "
            "frozen'. " + STAGES,
    audit_gap="Theta(T_3 eta) is audited as the exact envelope |x(T)| <= |x(0)| + eta T for every "
              "neuron (automatic: constant step magnitude) plus the glossary's 'Theta(1)' (a "
              "factor 3) for the median neuron, not for every neuron: a near-tie neuron that follows its vote late "
              "sits lower (0.35 in the canonical run, seed 15), and no fitted scaling of "
              "|alpha(T_3)| against T_3 eta over a sweep is made. The softmax's 'near 1/2' is "
              "read at one size (T_3 of the stage runs). The vote is decided on the s ladder "
              "(property ladder; its numbers in the check): inconclusive at ci (8 seeds, s = "
              "30..120), refuted under --size ladder (96 seeds, s = 30..240: 18, 43, 56, 62 / 27, "
              "6, 34, 48 / 15, 13, 31, 45 of 768 neurons off their vote on the three draws, "
              "slopes +0.017 to +0.027, significant on 2 of 3). The corrected form's (b), the "
              "off-vote fraction among even splits rising along s, is inconclusive at both "
              "sizes (--size ladder, its own 96 seeds: 29/216 -> 61/180, 19/194 -> 44/154, "
              "22/190 -> 50/210 from s = 30 to 240, t = 3.3-4.0 against a critical 4.54); its "
              "(a), every uneven vote followed, holds on every rung and seed at both sizes.",
    reason="The vote part fails at CPU size for near-tied neurons (Lemma 4.3 (3)'s 'sums bounded "
           "away from 0' does not hold for every neuron with n = 8): refuted as printed for all "
           "neurons at this size. The softmax part fails through the same neurons: the logit of "
           "s_21 is ~ -sum_s a_{s,i} b_{s,i} ~ -m_k (t c)^2, so |s_21 - 1/2| ~ m_k (T_3 c)^2 / 4 "
           "and a vote that settles late (T_3 = 107, 414 against a typical 30) leaves s_21 far "
           "from 1/2 at T_3. One size: not a refutation of the asymptotic statement. Under "
           "--size ladder the vote's off fraction rises along s significantly (a trend against "
           "the statement): refuted there; every neuron off its vote is an even split of its "
           "voters' signs (the corrected form).",
    corrected="[D] A vote whose voters' signs do not split evenly is followed: at T_4^- - 1 every "
              "alpha_s has sgn(sum_i b_{s,i}) where the signs of b_{s,1..n} are not n/2 each, and "
              "every beta_s has -sgn(sum_i a_{s,i}) where those of a_{s,1..n} are not. An even "
              "split (n = 8 is even) is not decided by the plain sum: after Stage II every pair "
              "grows by its own eta ||xi_i||_1 per step, so an even split's sum is a difference of "
              "two sums of n/2 l1 norms, whose relative size ~ sqrt((pi/2 - 1) / s) vanishes as s "
              "grows, while the signal's update follows the weighted vote sgn sum_i g_i D_i s_11 "
              "s_12 (b_{s,i} - beta_s), whose weights differ at O(1); such a vote is followed with "
              "a probability that falls towards 1/2: the off-vote fraction among even splits rises "
              "along s.",
    asymptotic="s (the noise sparsity, which grows with d in Condition 3.1: the weights of the "
               "signals' update concentrate as s grows)",
    paper_setting="Lemma 4.4 holds under Condition 3.1 (asymptotic, no numbers), and Fig. 1 (d)'s "
                  "run (Table 3 row (a), App. B.1) lost its numbers in extraction; the sheet's CPU "
                  "setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) and the "
                  "sweep's slow and fast corners (s in [20, 30], sigma_p in [1, 2], sigma_0 in "
                  "[7e-4, 1.3e-3], eta in [5e-5, 7e-5]) stand in, with an s ladder 30..120 at ci.",
    alternatives=(
        rival("still_at_init", still_at_init, "the signals still at their init at T_4^- (Lemma "
              "4.3 (4) carried through Stage III)", replaces="scale"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: the signals keep their "
             "init values (same T_4^-)", replaces="run"),
        rival("majority_of_signs", majority_rule, "the vote read as the majority of the "
              "voters' signs instead of the sign of their sum (corrected form (a)); the two "
              "agree on every uneven vote at this size, so it is not told apart",
              replaces="vote_rule"),
        null("attention_frozen_votes", vote_split_frozen, "the corrected form's null: W_Q, W_K "
             "untrained, alpha, beta at init against the votes at T_4^- - 1 (stage runs)",
             replaces="votes"),
        null("attention_frozen_ladder", vote_ladder_frozen, "the corrected form's null on the "
             "ladder: alpha, beta at init against the votes at T_4^- - 1", replaces="vote_ladder"),
    ),
))


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


LADDER_FAILS = ("under --size ladder (96 seeds, s = 30..240) the off-vote fraction rises "
                "significantly along s on 2 of the 3 draws (all of its neurons are even splits: "
                "the corrected form)")


@audits(CID, fails={"ladder": LADDER_FAILS, "paper": LADDER_FAILS})
@ladder_draws
def test_signgd_lemma4_4_vote_ladder(cfg):
    """The vote w.h.p.: the per-seed fraction of neurons off their vote at T_4^- - 1 falls as s
    grows (reduced dynamics, runs.stage4_ladder)."""
    L = stage4_ladder(*cfg)
    frac = L["off_vote"] / L["neurons"]  # (rungs, seeds)
    desc = ", ".join(f"s = {s_}: {int(o.sum())} of {int(n.sum())}"
                     for s_, o, n in zip(L["sizes"], L["off_vote"], L["neurons"]))
    check_trend(CID, L["sizes"], frac.T, direction="decreasing", log_values=False,
                false_fail=TREND_FF, rivals=(0.0,), name="vote off fraction along s",
                what=f"neurons off their vote at T_4^- - 1 ({desc})")


@audits(CID, form="corrected")
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_4_vote_corrected(world, cfg):
    """The corrected form (a) on the stage runs: every vote whose voters' signs do not split evenly
    is followed at T_4^- - 1."""
    r = world.simulation(vote_split, "votes", pure=True)(cfg)
    v = votes_by_rule(CID, world, r["alpha"], r["beta"], r["a"], r["b"], at=" on this draw")
    even, off = v["even"], v["off"]
    check_at_least(CID, -float((off & ~even).sum()), EXACT, name="uneven votes followed",
                   what=f"{int((off & ~even).sum())} of {int((~even).sum())} uneven votes not "
                        f"followed at T_4^- - 1 ({int((off & even).sum())} of "
                        f"{int(even.sum())} even splits off)")


@audits(CID, form="corrected")
@ladder_draws
def test_signgd_lemma4_4_vote_ladder_corrected(world, cfg):
    """The corrected form on the ladder in s (its own seeds): (a) every uneven vote followed at
    every rung; (b) the per-seed off-vote fraction among even splits rising along s (towards
    1/2; rival exponent 0, the plain vote deciding even splits as it decides the others)."""
    L = world.simulation(vote_ladder, "vote_ladder", pure=True)(cfg)
    desc = ", ".join(f"s = {s_}: {int(o.sum())} of {int(n.sum() * 2 - e.sum())}"
                     for s_, o, n, e in zip(L["sizes"], L["off_uneven"], L["neurons"], L["even"]))
    check_at_least(CID, -float(L["off_uneven"].sum()), EXACT, name="uneven votes followed along s",
                   what=f"uneven votes not followed at T_4^- - 1 ({desc})")
    frac = L["off_even"] / np.maximum(L["even"], 1)  # (rungs, seeds); 0 where a seed has none
    desc = ", ".join(f"s = {s_}: {int(o.sum())} of {int(e.sum())}"
                     for s_, o, e in zip(L["sizes"], L["off_even"], L["even"]))
    check_trend(CID, L["sizes"], frac.T, direction="increasing", log_values=False,
                false_fail=TREND_FF, rivals=(0.0,), name="even splits off along s",
                what=f"off-vote fraction among even splits ({desc})")
