"""signgd.adam: Adam against SignGD (Section 3.2, App. B.3), on one cached run per draw and rate
(`comparisons.opt_runs`, shared with signgd.adam.beta0).

(iii) drops max(T_2, T_3) <= T_4^- and T_4^- < T_4^+ as definitions: T_2, T_3 are defined with
"or t >= T_4^-", T_4^- by a wrong-sign key noise at T_4^-, T_4^+ by none from T_4^+ on.
"""

from __future__ import annotations

import numpy as np
import pytest

from properties import (Claim, Tolerance, audits, check_at_least, check_close, examples, null,
                        register, rival)
from properties.signgd.common import (check_intervals, check_word, exact, L45_SENT, lemma45_stats,
                                      stage1_separation, stage3_lemma_checks, stage3_lemma_rivals,
                                      STAGE_ORDER_SENT)
from properties.signgd.comparisons import (ADAM_RATES, adam_at_signgd_horizon, adam_draws,
                                           adam_run, OPT_SEEDS, OPT_SETTING, RATE)
from properties.signgd.setting import signgd_draw_note
from properties.signgd.runs import attention_frozen_null, held_at_init

# signgd.adam and signgd.adam.beta0 share comparisons.opt_runs: one xdist worker runs both
# files (a second worker would wait on the run cache's lock for the same runs)
pytestmark = pytest.mark.xdist_group("signgd-adam")

CID = "signgd.adam"
EXACT = exact()

_SIZES = ("t", "xi_l1", "xi_l2", "eta", "sigma_0", "horizon", "T_signgd")


def _untrained(r):
    """A run dict with every logged quantity and the test loss at its init value, and no stage
    event (T all inf) where it has stage times."""
    out = {k_: (np.broadcast_to(v[:1], v.shape).copy() if isinstance(v, np.ndarray) and
                k_ not in _SIZES else v) for k_, v in r.items()}
    if "T" in r:
        out["T"] = {k_: np.full(np.shape(v), np.inf) for k_, v in r["T"].items()}
    if "horizon" in r:  # the stop rule (all key noise aligned) never fires
        out["horizon"] = out["t_key"] = np.inf
    return out


def adam_untrained(seed, eta=RATE):
    """Null: training off (every tracked quantity and the test loss keep their init values; no
    stage event happens)."""
    return _untrained(adam_run(seed, eta))


def adam_noise_frozen(seed, eta=RATE):
    """Null of Lemma 4.3 (1): the query and key noise a, b keep their init values (the rest of
    the Adam run, its stage times included, as trained)."""
    return held_at_init(adam_run(seed, eta), ("a", "b"))


def adam_signals_frozen(seed, eta=RATE):
    """Null of the Stage III checks: the query and key signals alpha, beta keep their init
    values (the rest of the Adam run, its stage times included, as trained)."""
    return held_at_init(adam_run(seed, eta), ("alpha", "beta"))


# Null: W_Q, W_K not trained: the softmax outputs keep their init values (the value and noise
# trajectories as trained)
adam_attention_frozen = attention_frozen_null(adam_run)


SIMILAR = ("Adam exhibits similar behaviors to SignGD in optimization and generalization "
           "(Section 3.2)")
# (ii)'s end-state words (issue 35: the words the statement uses): 'shares its convergence' is
# SignGD's convergence, Theorem 3.2 (1)'s '-> epsilon'; 'high test loss' its generalization,
# Theorem 3.2 (2)'s 'constant order'; memorisation and attention as signgd.theorem3_2.item3-4
CONVERGENCE = ("Adam ... shares its convergence and generalization (fast convergence, high test "
               "loss): SignGD's training loss converges to epsilon (Theorem 3.2 (1))")
HIGH_TEST_LOSS = ("Adam ... shares its convergence and generalization (fast convergence, high "
                  "test loss): SignGD's test loss is of constant order (Theorem 3.2 (2))")
# (the training loss's '-> epsilon' is its own property, test_signgd_adam_converges: a strict
# expected failure at the level, as Lemma 4.5's 'near 1/2' is; the other checks keep their
# alternatives)
END_WORDS = {"test_loss": ("constant order", ">=", HIGH_TEST_LOSS),
             "ratio": ("dominates", ">=", SIMILAR), "s21": ("near 0", "<=", SIMILAR)}


def adam_outcome():
    """(ii) Section 3.2's 'similar behaviours' at the end of training, per statistic an interval
    or a glossary word with the side it bounds (END_WORDS)."""
    return dict(key_aligned=(1.0, 1.0), **END_WORDS)


def gd_like_outcome():
    """Rival: the neighbouring optimizer's (GD's) side of Section 3.2: lower test loss and the
    attention basically not learned (the printed signgd.gd.qk_not_learned reading: |s_21 - 1/2|
    <= 0.1)."""
    return dict(adam_outcome(), test_loss=(0.0, 0.1), s21=(0.4, 0.6))


def adam_stages():
    """(iii) SignGD's stages up to the key-noise alignment; T_4 (query noise) left out."""
    return dict(order="dominates", key_turned=True, query_turned=None, aligned=0.98,
                min_exponent=1.0)


def signgd_stage4():
    """Rival: SignGD's Stage IV in full, every query noise aligned with sgn alpha by the end
    (T_4 finite), i.e. 'Adam = SignGD' without Section 3.2's exception."""
    return dict(adam_stages(), query_turned=True)


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Section 3.2 ('Adam exhibits similar behaviors to SignGD'), App. B.3",
    statement="Adam follows a similar four-stage dynamics as SignGD and shares its convergence and "
              "generalization (fast convergence, high test loss); SignGD is a proxy for Adam.",
    assumptions=OPT_SETTING.replace("eta = 6e-5", "SignGD eta in (3e-5, 6e-5, 1.2e-4)") +
                "; Adam beta = (0.9, 0.999), eps 1e-15, at each SignGD rate (the paper's Adam "
                f"hyperparameters were lost), {OPT_SEEDS} seeds per draw; each optimizer to its "
                "own end of training, 1.25 t* (SignGD: t* = all noise aligned; Adam: all key "
                "noise aligned, Section 3.2's exception leaving its negative query noise); seed "
                "11 (the sheet's CPU setting) and seed 12345 explicit examples",
    prediction="at each rate: (ii) at Adam's end of training: every key noise with sgn alpha "
               "(Lemma 4.6), L_S '-> epsilon' (the statement's 'shares its convergence': "
               "Theorem 3.2 (1)'s word), L_D of 'constant order' ('high test loss': Theorem 3.2 "
               "(2)'s), V_i 'dominates' |V_mu|, s_21 'near 0' (the glossary: 1e-3, 0.1, a factor "
               "2, 0.05), and "
               "the step with every key noise aligned within a 'Theta(1)' factor of SignGD's; "
               "(iii) stage by "
               "stage (every step, sim.signgd.stage_times with completed turns): min(T_2, T_3) "
               "'dominates' T_1 (glossary: a factor 2), T_4^+ finite, >= 98% of pairs aligned "
               "at T_4^- - 1 (Table 2), Lemma 4.5 "
               "(fitted exponent of -log(2 s_21) >= 1 on [T_4^-/4, T_4^-], |s_11 - 1/2| 'near "
               "1/2' up to T_4^-: the glossary's 0.05, as signgd.lemma4_5), "
               "Lemma 4.3 (1) (median |a|, |b| at T_2 over T_2 eta ||xi_i||_1 "
               "'Theta(1)'), Lemma 4.4 (median |alpha|, |beta| at T_4^- over eta T_4^- 'Theta(1)'; "
               "every uneven vote followed at T_4^- - 1); T_4 (query noise) not required "
               "(signgd.adam.query_noise)",
    simulation="sim.signgd.train(optimizer='adam') vs optimizer='signgd', same data and init",
    metric="(ii) fractions / extremes over seeds and pairs at the last step; (iii) per seed, "
           "medians over pairs, counts of votes",
    tolerance="exact inequalities at the readings' levels (deterministic statistics of the run): "
              "the SignGD properties' levels (the glossary's 'Theta(1)' for Lemmas 4.3 (1) and 4.4's "
              "magnitudes, as signgd.lemma4_3 and lemma4_4 read them; (ii)'s end state by the "
              "glossary words of signgd.gd.faster and theorem3_2.item2-4)",
    reading="'The end of training' read as each optimizer's own (literal; the issue's 'Adam's own "
            "horizon'); the neighbouring reading 'at SignGD's horizon' (the same step budget) "
            "fails at 1.2e-4 (Adam turns its last key noise later). (ii)'s key-noise alignment at "
            "the end is near-automatic under Adam's stop rule (only a turn reversed after t*_A "
            "could fail it); what could fail is the rule firing within the cap (T_4^+ finite) and "
            "its step's factor against SignGD's same event. "
            "Section 3.2's 'On the synthetic data, Adam follows a similar four-stage dynamics' and "
            "'shares ... convergence and generalization', read on Definition 2.1's data at three "
            "rates. Fig. 2's noisy-MNIST test losses are not reproduced: the data is not on this "
            "machine and App. B.1's Adam hyperparameters and noise levels were lost (signgd.gd."
            "generalizes makes the same reading for Fig. 2 (d)). (ii) s_11(end) is not required "
            "small (0.09 under Adam at this horizon). (iii) drops the definitional relations "
            "max(T_2, T_3) <= T_4^- < T_4^+; Lemma 4.4's vote is its corrected form (a), since "
            "the printed vote fails for SignGD itself on even splits (signgd.lemma4_4); Lemma "
            "4.3 (2) and 4.4's softmax are asymptotic and left to their SignGD ids. Alternatives: "
            "nulls training off, attention frozen, signals frozen (alpha, beta at init); rivals: "
            "the GD side of Section 3.2 (lower test loss, attention not learned) for (ii), "
            "SignGD's full Stage IV (query noise aligned too), the noise at its init scale or on "
            "an l2 rate (Lemma 4.3 (1)'s rivals), the signals still at init (Lemma 4.4's) for "
            "(iii).",
    paper_setting="The Adam runs of Sec. 3.2 / App. B.3 (Fig. 2 (a), (b), Figs. 6-8) lost their "
                  "setting and Adam's hyperparameters in extraction, and Fig. 2's noisy MNIST is "
                  "not available offline; the sheet's CPU data with Adam beta = (0.9, 0.999), eps "
                  "1e-15 at rates 3e-5, 6e-5, 1.2e-4 stands in.",
    alternatives=(
        null("untrained", adam_untrained, "training off: every quantity keeps its init value",
             replaces="adam"),
        null("attention_frozen", adam_attention_frozen, "W_Q, W_K not trained: the softmax "
             "outputs keep their init values", replaces="adam"),
        null("noise_frozen", adam_noise_frozen, "the query and key noise a, b keep their init "
             "values (no Stage II growth)", replaces="adam"),
        null("signals_frozen", adam_signals_frozen, "the query and key signals alpha, beta keep "
             "their init values (Stage III's votes not followed)", replaces="adam"),
        rival("gd_like", gd_like_outcome, "the neighbouring optimizer's prediction (Section 3.2, "
              "GD): lower test loss, attention basically not learned", replaces="outcome"),
        rival("signgd_stage4", signgd_stage4, "'SignGD is a proxy' without the exception: "
              "Adam's query noise aligns in Stage IV too (T_4 finite)", replaces="stages"),
        *stage3_lemma_rivals(),
    ),
))

SPEED = ("Adam exhibits similar behaviors to SignGD in optimization ... fast convergence "
         "(Section 3.2): the step with every key noise aligned, Adam's against SignGD's at the "
         "same rate")
AT_SIGNGD = "at SignGD's horizon"  # the neighbouring reading of 'the end of training'
AT_SIGNGD_FAILS = ("at lr 1.2e-4 Adam has not turned every key noise by SignGD's horizon (draw "
                   "seed 11: 15 of 16 neurons' key noise in seed 12 at step 1588; its T_4^+ is "
                   "2004): Adam's end of training comes later than SignGD's there")


def _end_stats(q):
    sa = np.sign(q["alpha"][-1])[..., None]
    return dict(key_aligned=float((np.sign(q["b"][-1]) == sa).mean()),
                test_loss=float(q["test_loss"][-1].min()),
                ratio=float((q["V"][-1] / np.abs(q["V_mu"][-1])[:, None]).min()),
                s21=float(q["s21"][-1].max()))


def _check_end(world, q, eta):
    check_intervals(CID, {f"{k_} (lr {eta:g})": v for k_, v in _end_stats(q).items()},
                    {f"{k_} (lr {eta:g})": v for k_, v in
                     world.prediction(adam_outcome, "outcome")().items()}, EXACT)


@audits(CID)
@examples(1)
@adam_draws
def test_signgd_adam_similar(world, seed):
    """(ii) at each rate of ADAM_RATES, at Adam's own end of training (1.25 t*_A); and the step
    with every key noise aligned within 'Theta(1)' of SignGD's (the shared 'fast
    convergence')."""
    for eta in ADAM_RATES:
        q = world.simulation(adam_run, "adam", pure=True)(seed, eta)
        _check_end(world, q, eta)
        ratio = float(q["t_key"]) / q["t_key_signgd"]
        r = max(ratio, 1 / ratio) if np.isfinite(ratio) and ratio > 0 else np.inf
        check_close(CID, r, 0.0, Tolerance.reading("Theta(1)", SPEED), name="speed",
                    what=f"(ii) the step with every key noise aligned, Adam {q['t_key']:g} "
                         f"against SignGD {q['t_key_signgd']:g} (lr {eta:g}): factor {r:.3g}")


@audits(CID, reading=AT_SIGNGD, fails=AT_SIGNGD_FAILS)
@examples(1)
@adam_draws
def test_signgd_adam_similar_at_signgd_horizon(world, seed):
    """(ii) read at SignGD's horizon (the same step budget) at each rate."""
    for eta in ADAM_RATES:
        q = world.simulation(adam_at_signgd_horizon, "adamT", pure=True)(seed, eta)
        _check_end(world, q, eta)


def _stage_checks(world, q, eta):
    """(iii) on one Adam run (rate eta): SignGD's stage relations that are not definitions."""
    pred = world.prediction(adam_stages, "stages")()
    T = q["T"]
    at = f" (lr {eta:g})"
    check_word(CID, stage1_separation(T), pred["order"], ">=", STAGE_ORDER_SENT,
               what=f"(iii) T_1 << min(T_2, T_3): min over seeds of min(T_2, T_3) / T_1 = "
                    f"{stage1_separation(T):.3g}{at} (T_1 {T['T1']}, T_2 {T['T2']}, T_3 "
                    f"{T['T3']})")
    for key, want in (("T4p", pred["key_turned"]), ("T4", pred["query_turned"])):
        if want is None:  # not predicted
            continue
        fin = np.isfinite(T[key])
        score = float(fin.mean()) - 1.0 if want else -float(fin.mean())
        check_at_least(CID, score, EXACT, what=f"(iii) {key} {'finite' if want else 'inf'} in "
                                               f"every seed{at}: {T[key]}")
    T4m = T["T4m"]
    if np.all(np.isfinite(T4m)):
        al = min(float((np.sign(q["a"][int(t) - 1, j]) == np.sign(q["b"][int(t) - 1, j])).mean())
                 for j, t in enumerate(T4m))
    else:
        al = 0.0  # no T_4^-: Stage III never ended, nothing aligned at its end
    check_at_least(CID, al - pred["aligned"], EXACT,
                   what=f"(iii) Table 2: min over seeds of the aligned fraction at T_4^- - 1 = "
                        f"{al:.3g} >= {pred['aligned']:g}{at}")
    p, _ = lemma45_stats(q["s21"], q["s11"], T4m)
    check_at_least(CID, p - pred["min_exponent"], EXACT,
                   what=f"(iii) Lemma 4.5: fitted exponent {p:.3g} >= {pred['min_exponent']:g}{at}")


@audits(CID)
@examples(1)
@adam_draws
def test_signgd_adam_stages(world, seed):
    """(iii) at each rate of ADAM_RATES."""
    for eta in ADAM_RATES:
        q = world.simulation(adam_run, "adam", pure=True)(seed, eta)
        _stage_checks(world, q, eta)
        stage3_lemma_checks(CID, world, q, f" (lr {eta:g})")


CONVERGE_FAILS = ("Theorem 3.2 (1)'s '-> epsilon' (1e-3) at Adam's own end of training: L_S is "
                  "2.5e-3 to 9.8e-3 on the ci draws (within the looser 1e-2): Adam's end of "
                  "training is set by its key-noise alignment, before its loss reaches epsilon")


@audits(CID, fails=CONVERGE_FAILS)
@examples(1)
@adam_draws
def test_signgd_adam_converges(seed):
    """(ii)'s training loss in the statement's words ('shares its convergence': Theorem 3.2 (1)'s
    '-> epsilon') at Adam's own end of training, at each rate, read at the word's three levels
    (its own property: a failure at the level is reported beside the checks that keep their
    alternatives)."""
    for eta in ADAM_RATES:
        q = adam_run(seed, eta)
        check_word(CID, float(q["train_loss"][-1].max()), "-> epsilon", "<=", CONVERGENCE,
                   what=f"(ii) max over seeds L_S at Adam's own end (lr {eta:g})")


L45_FAILS = ("Lemma 4.5's 'near 1/2' at the glossary's level 0.05: Adam's max |s_11 - 1/2| up to "
             "T_4^- is above 0.05 on every ci draw (worst 0.063, lr 3e-5), as SignGD's own is 0.067 (signgd.lemma4_5, "
             "reading-dependent); within the looser 0.1")


@audits(CID, fails=L45_FAILS)
@examples(1)
@adam_draws
def test_signgd_adam_lemma4_5_near(seed):
    """(iii)'s Lemma 4.5 'near 1/2' (s_11 up to T_4^-) at each rate, read with the glossary word
    at its three levels, as signgd.lemma4_5 reads it for SignGD (its own property: a failure at
    the level is the lemma's, not Adam's alone, and the stage checks keep their alternatives)."""
    for eta in ADAM_RATES:
        q = adam_run(seed, eta)
        _, dev = lemma45_stats(q["s21"], q["s11"], q["T"]["T4m"])
        check_word(CID, dev, "near 1/2", "<=", L45_SENT,
                   what=f"(iii) Lemma 4.5: max |s11 - 1/2| up to T_4^- = {dev:.3g} (lr {eta:g})")

