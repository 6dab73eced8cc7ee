"""signgd.lemma4_8 (end of Stage IV): at T_4 every query and key noise has the sign of its neuron's
query signal; the training loss has not yet converged (Theta(1)).

(1) On the stage runs (runs.stage_run, the shared Theorem 3.2 draws; per-seed events by
common.stage4_pairs).  What the stop rule makes automatic: the run stops 0.25 t* after the first
step t* with every noise of every seed aligned, and T_4 is by definition the step from which
every noise is aligned; so 'at T_4 every noise is aligned' is true whenever T_4 is finite, and
the old check 'T_4 within the cap' was that.  What could fail, and is checked: that the
alignment is reached at all within the cap (under Adam with beta's near 1 the paper says the
negative query noise never aligns), and that it is kept over the tail (T_4 <= t* for every
seed: no noise changes sign again in the 0.25 t* steps after t*).  Alternatives: the rival
'query noise stays' (Adam's Stage IV, Section 3.2: the query noise wrong at T_4^- does not
align, so the aligned fraction of query noise at the end is its fraction at T_4^-) and the null
'attention frozen' (nothing aligns).

(2) 'Theta(1)' is not audited (the audit gap): at CPU size (m_k = 8) L_S(T_4) ~ 1e-6.  It rises
with m_k (~1e-3 at 32, ~3e-2 at 128), but a trend over 2 seeds per m_k was inconclusive (see the
claim's history) and a decisive one costs more than CI allows; the numbers are in the gap.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given

from properties import Claim, audits, check_at_least, null, register, rival
from properties.signgd.common import exact, stage4_pairs
from properties.signgd.runs import (H, RANGE, SETTING, STAGES, STAGE_RUN, attention_frozen_null,
                                    ci_draws, held_at_init, shared_draws, stage_run)

CID = "signgd.lemma4_8"
EXACT = exact("exact inequality between step numbers / fractions (deterministic events of the run)")


def _end_state(cfg, hold=()):
    """Per seed: T_4 (from the per-pair events), the stop rule's t*, the last step, and the
    aligned fraction of query noise at the end and at T_4^- (the logged quantities `hold` held
    at init)."""
    tr, q, st_ = stage_run(*cfg)
    q, t, T4m = held_at_init(q, hold), tr.t, st_["T4m"]
    ev = stage4_pairs(q, t, T4m)
    sa = np.sign(q["alpha"])[..., None]
    al = ((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all((-1, -2, -3))
    t_star = float(t[np.argmax(al)]) if al.any() else np.inf
    k4 = np.minimum(np.asarray(T4m, dtype=int), len(t) - 1)
    q4 = np.stack([(np.sign(q["a"][k, j]) == sa[k, j]).mean() for j, k in enumerate(k4)])
    return dict(T4=np.maximum(ev["Tq"], ev["Tk"]), t_star=t_star, end=float(t[-1]),
                query_end=(np.sign(q["a"][-1]) == sa[-1]).mean((-1, -2)), query_T4m=q4)


_state = functools.lru_cache(maxsize=8)(_end_state)


def end_state(cfg):
    """Per seed: T_4 (from the per-pair events), the stop rule's t*, the last step, and the
    aligned fraction of query noise at the end and at T_4^-."""
    return _state(tuple(cfg))


# Null: W_Q, W_K not trained (alpha, a, b keep their init values); same horizon and T_4^-
attention_frozen = attention_frozen_null(_end_state, ("alpha", "a", "b"))


def all_aligned(state):
    """The lemma: every query noise has sgn alpha at the end (fraction 1 per seed)."""
    return np.ones_like(state["query_end"])


def query_noise_stays(state):
    """Rival: Adam's Stage IV (Section 3.2): the query noise wrong at T_4^- does not align; the
    query noise's aligned fraction at the end is the one at T_4^-."""
    return state["query_T4m"]


register(Claim(
    id=CID, where="Lemma 4.8 (end of Stage IV), Section 4.1",
    statement="At T_4 every query and key noise has the sign of its neuron's query signal; the "
              "training loss has not yet converged (Theta(1)).",
    assumptions=SETTING + "; " + RANGE + "; draws: runs.T32_EXAMPLES (the sheet's CPU "
                "setting, 8 seeds, and the slow and fast corners, 4 seeds; dev / thorough add "
                "drawn ones)",
    prediction="(1) T_4 <= t* (reached, and kept through the tail of 0.25 t*) for every seed, and "
               "every query noise aligned at the end; (2) L_S(T_4) = Theta(1) (not audited)",
    simulation=H + "; T_4 from common.stage4_pairs (= sim.signgd.stage_times' T4)",
    metric="(1) min over seeds of t* - T_4 (T_4 = inf: never aligned); the query noise's aligned "
           "fraction at the last step per seed against the prediction",
    tolerance="(1) exact (integer steps, fractions of a deterministic run)",
    reading="(1) 'at T_4 every noise aligned' holds by the definition of T_4 and the stop rule "
            "whenever T_4 is finite (not evidence); the content checked is that alignment is "
            "reached within the cap and kept through the tail (T_4 <= t*). Alternatives: rival "
            "'query noise stays' (Adam's Stage IV), null 'attention frozen'. " + STAGES,
    audit_gap="(2) is not audited: at CI size (m_k = 8) L_S(T_4) ~ 1e-6 (4e-8 to 6e-6 over 3 "
              "draws x 2 seeds: seeds 11-12 and two drawn pairs). It rises with m_k (1.2e-3 to 2.1e-3 at "
              "m_k = 32, 2.4e-2 to 3.4e-2 at m_k = 128, same seeds; T_4 shrinks ~ 1/m_k), "
              "consistent with the sheet's note that Theta(1) shows only for m_k in the hundreds, "
              "but neither the level nor a significant trend is established (see history). (1) "
              "holds largely by construction (see reading).",
    history=("2026-12-03 (earlier session): (2) was a strict xfail at m_k = 8 (loss ~1e-6), a size "
             "artefact, replaced by the m_k trend (8, 32, 128; 2 seeds each, run to t*).",
             "2026-12-03 (issue 11): (1)'s 'T_4 within the cap' (automatic under the stop rule) "
             "extended by 'T_4 <= t*' (alignment kept through the tail) with a rival and a null; "
             "(2)'s check 'log_4 of the loss ratio per 4x m_k >= 1' (a level without provenance) "
             "was replaced by check_trend direction 'increasing' over the 6 (m_k, seed) points of "
             "a draw (residual SE, t on 4 df, false-fail 1e-4): inconclusive on all 3 draws "
             "(slopes 4.0 +- 12.6, 3.6 +- 8.2, 3.1 +- 4.7; the m_k = 8 losses spread over two "
             "decades between seeds); the property was then removed (117 s of CI for a gap item) "
             "and its numbers moved to the audit gap."),
    alternatives=(
        rival("query_noise_stays", query_noise_stays, "Adam's Stage IV (Section 3.2): the query "
              "noise wrong at T_4^- does not align", replaces="aligned"),
        null("attention_frozen", attention_frozen, "W_Q, W_K untrained: alpha, a, b keep their "
             "init values (same horizon and T_4^-)", replaces="state"),
    ),
))


@audits(CID)
@ci_draws
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_lemma4_8_signs(world, cfg):
    st_ = world.simulation(end_state, "state", pure=True)(cfg)
    with np.errstate(invalid="ignore"):  # inf - inf: nothing aligned (the null)
        slack = st_["t_star"] - st_["T4"]
    worst = float(slack.min()) if np.all(np.isfinite(slack)) else -np.inf
    check_at_least(CID, worst, EXACT, what=f"(1) T_4 <= t* = {st_['t_star']:g} for every seed "
                                           f"(T_4: {st_['T4'].tolist()})")
    pred = world.prediction(all_aligned, "aligned")(st_)
    dev = float(np.abs(st_["query_end"] - pred).max())
    check_at_least(CID, -dev, EXACT, what=f"(1) query noise aligned at the end: "
                                          f"{np.round(st_['query_end'], 3).tolist()}")
