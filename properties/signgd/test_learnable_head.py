"""signgd.learnable_head (Appendix F.3): per draw the same data and init trained twice with SignGD,
head fixed and head trained, each to its own 1.25 t* (`_lh_runs`), and the c-fixed sigma_p ladder
with the head trained (`_lh_rung`).  The mechanism check's allowance 2 eta T_2 also keeps every
head sign: H(end) > 1/m_v - 2 eta T_2 > 0.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, Threshold, Tolerance, audits, check_at_least, check_close, check_trend,
                        examples, null, register, rival)
from properties.cache import run_cache
from properties.settings import size
from properties.signgd.common import (check_word, claim_rate, exact, L45_SENT, lemma45_stats,
                                      stage3_lemma_checks, stage3_lemma_rivals, THM32_SENTS)
from properties.signgd.setting import (CAP, condition31_c, H, LOG, M_V, RANGE, SEED, SETTING,
                                       signgd_draw_note, TAIL)
from properties.signgd.runs import all_noise_aligned, held_at_init, problem_and_init, training_off
from sim import signgd as sim

# the module's properties share the per-process _lh_runs and _value_scale_run: one xdist
# worker runs them all (computed once), not both (each worker computing them again)
pytestmark = pytest.mark.xdist_group("signgd-learnable-head")

CID = "signgd.learnable_head"
EXACT = exact("exact inequality / equality of deterministic statistics of the runs")
LH_SEEDS = 2
LH_CANON = (11, 30, 1.0, 1e-3, 6e-5)  # seed0, s, sigma_p, sigma_0, eta: the sheet's CPU setting
LH_FAST = (777, 30, 2.0, 7e-4, 7e-5)  # the fast corner of the sweep
LH_RUN = st.tuples(SEED, st.integers(20, 30), st.floats(1.0, 2.0), st.floats(7e-4, 1.3e-3),
                   st.floats(5e-5, 7e-5))
SIGN_KEYS = ("alpha", "beta", "a", "b")


def _summary(tr):
    q = sim.squeeze_L2(tr.q)
    T = sim.stage_times(tr)
    return dict(signs={k_: np.sign(q[k_]).astype(np.int8) for k_ in SIGN_KEYS}, T=T,
                s11=q["s11"], s21=q["s21"], H_end=tr.final.H.numpy().copy(),
                t_end=int(tr.t[-1]), eta=float(tr.settings["eta"]),
                vals={k_: q[k_] for k_ in SIGN_KEYS}, xi_l1=np.asarray(tr.xi_l1)[..., 0])


@functools.lru_cache(maxsize=4)
def _lh_runs(cfg):
    """(fixed-head summary, learnable-head summary) of one draw."""
    seed0, s, sigma_p, sigma_0, eta = cfg
    prob, p0 = problem_and_init([seed0 + k for k in range(LH_SEEDS)], s, sigma_p=sigma_p, sigma_0=sigma_0)
    return tuple(_summary(sim.train(prob, p0, eta=eta, steps=CAP, log_every=1, log=LOG,
                                    stop=all_noise_aligned, tail=TAIL, learnable_head=lh))
                 for lh in (False, True))


def fixed_head(cfg):
    return _lh_runs(tuple(cfg))[0]


def learnable_head(cfg):
    return _lh_runs(tuple(cfg))[1]


def head_frozen(cfg):
    """Null of the mechanism: the head not trained (the fixed-head run: H stays 1/m_v)."""
    return _lh_runs(tuple(cfg))[0]


@functools.lru_cache(maxsize=4)
def _value_scale_run(cfg):
    seed0, s, sigma_p, sigma_0, eta = cfg
    fixed = _lh_runs(cfg)[0]
    steps = int(np.max(fixed["T"]["T3"])) + 2
    seeds = [seed0 + k for k in range(LH_SEEDS)]
    prob, _ = problem_and_init(seeds, s, sigma_p=sigma_p, sigma_0=sigma_0)
    p0 = sim.init_params(seeds, d=prob.train.P.shape[-1], m_k=8, m_v=M_V, sigma_0=sigma_0,
                         head_init=sigma_0, device="cpu")
    return _summary(sim.train(prob, p0, eta=eta, steps=steps, log_every=1, log=LOG,
                              learnable_head=True))


def head_at_value_scale(cfg):
    """Null of 'the same stages': F.3's mechanism switched off: a learnable head initialised at
    the value scale sigma_0 instead of 1/m_v (F.3: 'the key ... lies in the different magnitudes
    of initialization'), run through the fixed-head run's last T_3 (+ 2 steps)."""
    return _value_scale_run(tuple(cfg))


def _lemma_view(cfg, hold=()):
    """The learnable-head run of `cfg` as common.stage3_lemma_checks reads it (the values `hold`
    at init), with the noise l2 norms and sigma_0 its rivals read."""
    seed0, s, sigma_p, sigma_0, eta = cfg
    r = learnable_head(cfg)
    prob, _ = problem_and_init([seed0 + k for k in range(LH_SEEDS)], s, sigma_p=sigma_p,
                               sigma_0=sigma_0)
    xi = prob.train.xi[..., 0, :]  # (S, n, d): the noise patch
    q = held_at_init(dict(r["vals"]), hold)
    return dict(q, T=r["T"], eta=r["eta"], xi_l1=r["xi_l1"], sigma_0=float(sigma_0),
                xi_l2=(xi ** 2).sum(-1).sqrt().numpy())


def learnable_untrained(cfg):
    """Null of 'the same stages': training off (the learnable-head run's signs and softmax at
    their init values, no stage event)."""
    return training_off(learnable_head(cfg), ("signs", "vals", "s11", "s21"))


def lemmas_untrained(cfg):
    """Null of the lemma checks: training off (alpha, beta, a, b at init, no stage event)."""
    return training_off(_lemma_view(tuple(cfg)), ("alpha", "beta", "a", "b"))


def learnable_lemmas(cfg):
    """Lemmas 4.3 (1) and 4.4 on the learnable-head run (its own stage times)."""
    return _lemma_view(tuple(cfg))


def lemmas_noise_frozen(cfg):
    """Null: the query and key noise a, b keep their init values (no Stage II growth)."""
    return _lemma_view(tuple(cfg), ("a", "b"))


def lemmas_signals_frozen(cfg):
    """Null: the query and key signals alpha, beta keep their init values (Stage III's votes
    not followed)."""
    return _lemma_view(tuple(cfg), ("alpha", "beta"))


# Theorem 3.2 (2) with the learnable head (issue 20): a ladder that grows the problem within
# Condition 3.1 -- the noise strength sigma_p x f with sigma_0 / f, so that the sheet's [D] clause
# c = sigma_0 s sigma_p sqrt(m_k) stays at the draw's value on every rung, and eta / f, so that the
# step in units of the init scale (eps = eta sqrt(s) / sigma_0) stays at the draw's value too --
# on the full simulator with the head trained (the reduced dynamics has a fixed head),
# LH_LADDER_SEEDS seeds per rung, each rung to its 1.25 t* (the stage runs' stop rule).  The
# first rung (f = 1) is the draw's own setting.
LH_SP = {"ci": (1, 2, 4), "ladder": (1, 2, 4, 8), "paper": (1, 2, 4, 8)}  # the factors f
LH_LADDER_SEEDS = 8
LH_LADDER_CAP = 60000  # as signgd.theorem3_2.item2's ladder (the slowest rung ends near 16000)
LH_TREND_FF = claim_rate(3)  # per draw: the claim share over the three ci draws
SENT2 = "The trained transformer has a constant-order test loss (Theorem 3.2 (2), with the head trained)"
OWN_SIZE = "at the draw's own size"  # the neighbouring reading of Theta(1): one size decides


@run_cache(maxsize=16)
def _lh_rung(cfg, f, n_seeds):
    """One rung of the c-fixed ladder: L_D(end), L_S(end) per seed and the run's last step."""
    seed0, s, sigma_p, sigma_0, eta = cfg
    prob, p0 = problem_and_init([seed0 + k for k in range(n_seeds)], s,
                                sigma_p=sigma_p * f, sigma_0=sigma_0 / f)
    tr = sim.train(prob, p0, eta=eta / f, steps=LH_LADDER_CAP, log_every=1,
                   log=("alpha", "a", "b", "train_loss"), stop=all_noise_aligned, tail=TAIL,
                   learnable_head=True)
    return tr.test_loss[-1].copy(), tr.q["train_loss"][-1].copy(), int(tr.t[-1])


def _lh_ladder(cfg, factors, n_seeds):
    seed0, s, sigma_p, sigma_0, eta = cfg
    rungs = [_lh_rung(tuple(cfg), float(f), n_seeds) for f in factors]
    return dict(sizes=tuple(float(sigma_p * f) for f in factors),
                loss=np.array([r[0] for r in rungs]), train=np.array([r[1] for r in rungs]),
                steps=tuple(r[2] for r in rungs), c=condition31_c(s, sigma_p, sigma_0))


def lh_test_loss_ladder(cfg):
    """Per rung (rows: sigma_p x f, sigma_0 / f, eta / f for f in LH_SP at the named size: c and
    eps at the draw's values) and seed (columns): L_D(end) (500 fresh test samples) with the head
    trained, at 1.25 t*."""
    return _lh_ladder(tuple(cfg), LH_SP[size()], LH_LADDER_SEEDS)


def lh_loss_on_training_set(cfg):
    """Null: the 'test' loss measured on the training samples (no held-out data)."""
    r = dict(lh_test_loss_ladder(cfg))
    r["loss"] = r["train"]
    return r


def head_law(h0, eta, t_end):
    """F.3: every head entry grows by eta per step once its gradient's sign is fixed."""
    return h0 + eta * t_end


def head_shrinks(h0, eta, t_end):
    """Rival: the head entries shrink by eta per step (the gradient against the init sign; the
    sign would flip after 1 / (m_v eta) steps)."""
    return h0 - eta * t_end


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Appendix F.3",
    statement="Training the linear head jointly (with SignGD) changes none of the above: the same "
              "stages and the same trained model (Theorem 3.2).",
    assumptions=SETTING.replace("fixed head 1/m_v", "head initialised at 1/m_v and trained by "
                                 "SignGD with the rest") + "; " + RANGE + f"; {LH_SEEDS} seeds "
                                 "per draw, each trained with the fixed and with the learnable "
                                 "head from the same init; the sheet's CPU setting and the fast "
                                 "corner explicit examples",
    prediction="(F.3's mechanism) every head entry keeps its sign and grows by eta per step once "
               "its gradient's sign is fixed: |H(end) - (1/m_v + eta t_end)| <= 2 eta T_2; (same "
               "stages) the signs of alpha, beta, a, b equal the fixed-head run's at every step "
               "through T_3 (so T_1, T_2, T_3 are equal); with the learnable head, >= 98% of "
               "pairs aligned at T_4^- - 1 (Table 2), Lemma 4.5 (fitted exponent >= 1, "
               "|s_11 - 1/2| 'near 1/2' up to T_4^-: the glossary's 0.05, as signgd.lemma4_5), "
               "T_4^+ < T_4 (Lemma 4.7), "
               "s_11, s_21 'near 0' (0.05) at the end (Thm 3.2 (4)); (Lemmas 4.3 (1), 4.4, "
               "with the head trained; common."
               "stage3_lemma_checks) median |a|, |b| at T_2 over T_2 eta ||xi_i||_1 'Theta(1)', "
               "median |alpha|, |beta| at T_4^- over eta T_4^- 'Theta(1)', every uneven vote "
               "followed at T_4^- - 1; (Thm 3.2 (2), within Condition 3.1) L_D(end) increasing "
               "along the ladder sigma_p x f, sigma_0 / f, eta / f (c = sigma_0 s sigma_p "
               "sqrt(m_k) and eps = eta sqrt(s) / sigma_0 at the draw's values on every rung; f in "
               f"{LH_SP['ci']}, {LH_SP['ladder']} under --size ladder; {LH_LADDER_SEEDS} seeds per "
               "rung) and 'constant order' (glossary: >= 0.1) for every seed at its largest rung",
    simulation="sim.signgd.train(learnable_head=True) vs learnable_head=False, " + H,
    metric="max over entries of |H(end) - (1/m_v + eta t_end)|; number of sign mismatches "
           "through T_3; per-seed stage times; the Stage IV statistics' extremes; per rung and "
           "seed L_D(end) on 500 fresh test samples",
    tolerance="the head: 2 eta T_2 (each SignGD step moves an entry by eta or 0; the allowance "
              "counts the steps before its sign is fixed) plus float64 round-off; the rest exact "
              "(deterministic statistics of the runs, at the fixed-head properties' levels); "
              "the c-fixed ladder's trend: per-seed slopes of log L_D(end) against log sigma_p, "
              f"seed-clustered, t on seeds - 1 dof, false-fail {LH_TREND_FF:.3g} per draw (the "
              "claim share 1e-4 over 3 draws)",
    reading="Theorem 3.2 (2) with the head trained is read as an asymptotic statement within "
            "Condition 3.1: the problem grows in the noise strength sigma_p (Condition 3.1's "
            "strong-noise direction) while the sheet's [D] clause c = sigma_0 s sigma_p sqrt(m_k) "
            "<< 1 keeps the draw's value (sigma_0 / f) and so does the step in init units (eta / "
            "f); 'Theta(1)' is the trend (L_D(end) increasing, not vanishing) and the glossary's "
            "'constant order' at the ladder's largest rung. The neighbouring reading 'at the "
            "draw's own size' reads the level at the first rung, where signgd.theorem3_2.item2 "
            "reads it: with the head trained it fails there on the sheet's CPU setting and on "
            "the drawn ci draw: the trained head lowers the test loss at this size, and the "
            "Theta(1) appears as the problem "
            "grows at fixed c. Automatic under the stop rule and "
            "not checked: T_4 reached, L_S(end) <= 1e-3 (and "
            "V_i / |V_mu| >= 2 follows from the value rows' sign dynamics, as in "
            "signgd.theorem3_2.item3). 'The same stages' read as the same sign dynamics through "
            "Stage III and the Stage IV lemmas' outcomes; the neighbouring reading, identical "
            "stage times throughout, is a rival: T_4^-, T_4^+, T_4 move. Alternatives: nulls "
            "'head frozen' (the mechanism property) and 'head at the value scale' (F.3's "
            "magnitude separation switched off, the stages property), 'untrained' and 'lemmas "
            "untrained' (training off: the checks of the sign trajectories and of every seed "
            "reaching T_2 and T_4^- meet no other alternative); rivals 'head shrinks' "
            "and 'identical stage times throughout'.",
    audit_gap="Lemma 4.1 is not re-checked with the learnable head beyond the equal T_1: its "
              "'from T_1 on' rests on T_1's definition, which was lost (signgd.lemma4_1). Lemma "
              "4.3 (2), Lemma 4.4's softmax and Lemma 4.6 (ii) are 'with high probability' "
              "statements, decided for SignGD only along the declared path of the stage lemmas "
              "(signgd.lemma4_3, signgd.lemma4_4, signgd.lemma4_6); no path is run with the head "
              "trained, so none is carried to the learnable head here (Lemma 4.6 (i), every key "
              "noise turned, is T_4^+ < T_4 here). Theorem 3.2 (2) fails under the neighbouring "
              "reading 'at the draw's own size' (property theorem3_2_item2_own_size).",
    asymptotic="the problem size (s sigma_p: Theorem 3.2 (2)'s Theta(1) test loss, and the "
               "w.h.p. stage statements F.3 carries over)",
    paper_setting="No setting of its own: App. F.3 is an argument with no experiment or numbers; "
                  "the sheet's CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = "
                  "6e-5), the sweep (s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], "
                  "eta in [5e-5, 7e-5]) and a sigma_p ladder x 1, 2, 4 are run with the head fixed "
                  "and trained.",
    alternatives=(
        null("head_frozen", head_frozen, "the head not trained (H stays 1/m_v)", replaces="head"),
        rival("head_shrinks", head_shrinks, "the head entries shrink by eta per step",
              replaces="head_law"),
        null("head_at_value_scale", head_at_value_scale, "F.3's magnitude separation switched "
             "off: the learnable head initialised at sigma_0 instead of 1/m_v",
             replaces="learnable"),
        null("test_on_training_set", lh_loss_on_training_set, "Theorem 3.2 (2)'s null: the "
             "'test' loss measured on the training samples (no held-out data)",
             replaces="lh_ladder"),
        null("untrained", learnable_untrained, "training off: the learnable-head run's signs "
             "and softmax at their init values, no stage event", replaces="learnable"),
        null("lemmas_untrained", lemmas_untrained, "training off for the lemma checks: alpha, "
             "beta, a, b at their init values, no stage event", replaces="lemmas"),
        null("noise_frozen", lemmas_noise_frozen, "Lemma 4.3 (1)'s null on the learnable-head "
             "run: the query and key noise keep their init values", replaces="lemmas"),
        null("signals_frozen", lemmas_signals_frozen, "Lemma 4.4's null on the learnable-head "
             "run: alpha, beta keep their init values", replaces="lemmas"),
        *stage3_lemma_rivals(),
        rival("identical_throughout", lambda: ("T1", "T2", "T3", "T4m", "T4p", "T4"),
              "neighbouring reading of 'the same stages': every stage time unchanged; it "
              "coincides with the truth on draws where the head's effect on Stage IV stays below "
              "one step in every seed (1 of the 3 ci draws), hence must_reject 1/2",
              replaces="same_times", must_reject=0.5),
    ),
))


def lh_draws(fn):
    return example(cfg=LH_CANON)(example(cfg=LH_FAST)(given(cfg=LH_RUN)(fn)))


@audits(CID)
@examples(1)
@lh_draws
def test_signgd_learnable_head_mechanism(world, cfg):
    r = world.simulation(learnable_head, "head", pure=True)(cfg)
    pred = world.prediction(head_law, "head_law")(1.0 / M_V, r["eta"], r["t_end"])
    T2 = np.where(np.isfinite(r["T"]["T2"]), r["T"]["T2"], r["t_end"])
    allow = float(2 * r["eta"] * T2.max())
    tol = Tolerance.derived(allow + Tolerance.roundoff(abs(pred), ops=r["t_end"]).value,
                            f"SignGD moves a head entry by eta or 0 per step: at most 2 eta per "
                            f"step short of eta t_end before its sign is fixed, bounded by T_2 "
                            f"(max {int(T2.max())}), plus round-off of t_end additions")
    check_close(CID, r["H_end"], np.full_like(r["H_end"], pred), tol,
                what=f"H(end) against 1/m_v + eta t_end = {pred:.5g} (min {r['H_end'].min():.5g}, "
                     f"max {r['H_end'].max():.5g})")


@audits(CID)
@examples(1)
@lh_draws
def test_signgd_learnable_head_stages(world, cfg):
    fixed = fixed_head(cfg)
    r = world.simulation(learnable_head, "learnable", pure=True)(cfg)
    same = world.prediction(lambda: ("T1", "T2", "T3"), "same_times")()
    K = int(np.max(fixed["T"]["T3"]))  # through the fixed run's last T_3
    n = min(K + 1, len(r["signs"]["a"]))
    mism = sum(int((r["signs"][k_][:n] != fixed["signs"][k_][:n]).sum()) for k_ in SIGN_KEYS)
    if n < K + 1:
        mism += 1  # the run stopped before T_3: its trajectory cannot be the same
    check_at_least(CID, -float(mism), EXACT,
                   what=f"sign mismatches of alpha, beta, a, b against the fixed head through "
                        f"step {K}: {mism}")
    diff = [f"{k_} {r['T'][k_]} vs {fixed['T'][k_]}" for k_ in same
            if not np.array_equal(r["T"][k_], fixed["T"][k_])]
    check_at_least(CID, -float(len(diff)), EXACT,
                   what="equal stage times " + ", ".join(same) + (": " + "; ".join(diff)
                                                                  if diff else ""))
    T = r["T"]
    order = float((T["T4p"] < T["T4"]).mean())
    check_at_least(CID, order - 1.0, EXACT, what=f"T_4^+ < T_4 in every seed ({T['T4p']} vs "
                                                  f"{T['T4']})")
    T4m = T["T4m"]
    if np.all(np.isfinite(T4m)):
        sg = r["signs"]
        al = min(float((sg["a"][int(t) - 1, j] == sg["b"][int(t) - 1, j]).mean())
                 for j, t in enumerate(T4m))
    else:
        al = 0.0
    check_at_least(CID, al - 0.98, EXACT, what=f"aligned at T_4^- - 1: {al:.3g} >= 0.98")
    p, _ = lemma45_stats(r["s21"], r["s11"], T4m)
    check_at_least(CID, p - 1.0, EXACT, what=f"Lemma 4.5: fitted exponent {p:.3g} >= 1")
    m = float(max(r["s11"][-1].max(), r["s21"][-1].max()))
    check_word(CID, m, "near 0", "<=", THM32_SENTS[4],
               what=f"Thm 3.2 (4): max s11, s21 (end) {m:.3g}")


def _ladder_desc(L):
    return (f"c = {L['c']:.3g} on every rung; medians over seeds: "
            + ", ".join(f"sigma_p = {a:g}: {np.median(v):.3g}" for a, v in zip(L["sizes"], L["loss"])))


@audits(CID)
@examples(1)
@lh_draws
def test_signgd_learnable_head_theorem3_2_item2(world, cfg):
    """Theorem 3.2 (2) with the learnable head, as an asymptotic statement within Condition 3.1:
    along the ladder that grows the noise strength sigma_p with c = sigma_0 s sigma_p sqrt(m_k)
    and eps = eta sqrt(s) / sigma_0 held at the draw's values, L_D(end) increases (rival
    exponents -1, a test loss that vanishes like 1 / size, and 0, no trend), and at the largest
    rung it is of constant order (glossary) for every seed."""
    L = world.simulation(lh_test_loss_ladder, "lh_ladder", pure=True)(cfg)
    check_trend(CID, L["sizes"], L["loss"].T, direction="increasing", false_fail=LH_TREND_FF,
                rivals=(-1.0, 0.0), name="Thm 3.2 (2) L_D(end) along the c-fixed ladder",
                what=f"learnable head: L_D(end) along sigma_p ({_ladder_desc(L)})")
    LD = L["loss"][-1]
    check_at_least(CID, float(LD.min()), Threshold.reading("constant order", SENT2),
                   name="Thm 3.2 (2) at the largest rung",
                   what=f"learnable head: min over seeds L_D(end) = {LD.min():.4g} at the largest "
                        f"rung sigma_p = {L['sizes'][-1]:g} (L_S(end) <= {L['train'][-1].max():.2g})")


@audits(CID, reading=OWN_SIZE,
        fails="with the head trained, L_D(end) at the draw's own setting is below Theorem 3.2 (2)'s "
              "one-size level 0.1 on the sheet's CPU setting (0.09; 0.49 with the fixed head) and "
              "on the drawn ci draw (0.012, c = 0.04)")
@examples(1)
@lh_draws
def test_signgd_learnable_head_theorem3_2_item2_own_size(cfg):
    """The neighbouring reading of Theta(1) 'at the draw's own size': the glossary's 'constant
    order' level at the ladder's first rung (the draw's own setting), as signgd.theorem3_2.item2
    places its one-size level.  One size decides nothing under the asymptotic policy; this
    reading is reported beside the literal one, not as its basis."""
    L = _lh_ladder(tuple(cfg), LH_SP[size()][:1], LH_LADDER_SEEDS)  # the first rung only
    LD = L["loss"][0]
    check_at_least(CID, float(LD.min()), Threshold.reading("constant order", SENT2),
                   name="Thm 3.2 (2) one size",
                   what=f"learnable head: min over seeds L_D(end) = {LD.min():.4g} at the draw's "
                        f"own sigma_p = {L['sizes'][0]:g} (L_S(end) <= {L['train'][0].max():.2g}; "
                        f"c = {L['c']:.3g})")


L45_FAILS = ("Lemma 4.5's 'near 1/2' at the glossary's level 0.05: with the head trained max |s_11 "
             "- 1/2| up to T_4^- reaches 0.060 on the ci draws, as SignGD's own is 0.067 "
             "(signgd.lemma4_5, reading-dependent); within the looser 0.1")


@audits(CID, fails=L45_FAILS)
@examples(1)
@lh_draws
def test_signgd_learnable_head_lemma4_5_near(cfg):
    """Lemma 4.5's 'near 1/2' (s_11 up to T_4^-) with the head trained, read with the glossary
    word at its three levels, as signgd.lemma4_5 reads it for SignGD (its own property, so the
    stage checks keep their alternatives)."""
    r = learnable_head(cfg)
    _, dev = lemma45_stats(r["s21"], r["s11"], r["T"]["T4m"])
    check_word(CID, dev, "near 1/2", "<=", L45_SENT,
               what=f"Lemma 4.5: max |s11 - 1/2| up to T_4^- = {dev:.3g} (learnable head)")


@audits(CID)
@examples(1)
@lh_draws
def test_signgd_learnable_head_lemmas(world, cfg):
    """Lemmas 4.3 (1) and 4.4 with the head trained, by the bodies of the SignGD properties
    (common.stage3_lemma_checks, as signgd.adam carries them to Adam): the noise at T_2 on its
    l1 rate, the signals at T_4^- on eta T_4^-, every uneven vote followed at T_4^- - 1."""
    q = world.simulation(learnable_lemmas, "lemmas", pure=True)(cfg)
    stage3_lemma_checks(CID, world, q, " (learnable head)")
