"""signgd.lemma4_3.item3 (erratum) on runs.l43_runs.  The corrected form's reference is exact: the
expected count of near-tie neurons is the sum over neurons of the event's probability under i.i.d.
fair signs on the neuron's own magnitudes, enumerated over all 2^n = 256 sign patterns (no
sampling); only the count is random, a sum of independent Bernoullis.
"""

from __future__ import annotations

from math import comb

import numpy as np
from hypothesis import example, given

from properties import (Claim, Tolerance, audits, check_at_least, check_close, examples, null,
                        register, rival)
from properties.signgd.common import claim_rate, exact
from properties.signgd.figures import plot_l43
from properties.signgd.setting import N_SAMPLES, signgd_draw_note
from properties.signgd.runs import L43_CANON, L43_DELTA, L43_PRINTED, L43_RUN, l43_runs, L43_SETTING

# The properties' bodies keep the run's old name: under `ci` Hypothesis seeds a property's
# generated draws by its source text, so renaming it there would change the draws.
_l43_runs = l43_runs

CID = "signgd.lemma4_3.item3"
DRAWS = 4  # the corrected form's draws under ci: the canonical one and three drawn
FALSE_FAIL = claim_rate(DRAWS)  # per draw: the claim share 1e-4 over the 4 draws
EXACT = exact("exact inequality at the printed reading's level (deterministic statistic of the "
              "run)")


def _pooled(runs):
    z = np.concatenate([r["z_b"].ravel() for r in runs.values()])
    p = np.concatenate([r["p_b"].ravel() for r in runs.values()])
    return z, p


def random_sign_count(runs):
    """The correction: expected count = sum over neurons of the enumerated probabilities."""
    return float(_pooled(runs)[1].sum())


def printed_count(runs):
    """Rival (the printed form): bounded away from 0, no near-tie neuron."""
    return 0.0


def equal_magnitude_count(runs):
    """Rival: a random-sign sum of n equal magnitudes (the spread of |b_{s,i}| dropped):
    P(|2 k - n| < delta sqrt(n)), k ~ Binomial(n, 1/2), for every neuron."""
    n = N_SAMPLES
    pe = sum(comb(n, k) for k in range(n + 1) if abs(2 * k - n) < L43_DELTA * np.sqrt(n)) / 2 ** n
    return float(pe * _pooled(runs)[0].size)


def aligned_with_alpha(seed0, sigma_p, sigma_0, eps):
    """Null: the same magnitudes at T_2 with every key noise given the sign of its query signal
    alpha_s(T_2) (the vote of Stage III and the turn of Stage IV already done)."""
    out = {}
    for s, r in l43_runs(seed0, sigma_p, sigma_0, eps).items():
        b = np.abs(r["b"]) * np.sign(r["alpha"])[..., None]
        out[s] = dict(r, b=b, z_b=np.abs(b.sum(-1)) / np.sqrt((b ** 2).sum(-1)))
    return out


register(Claim(
    draw_note=signgd_draw_note,
    id=CID, where="Lemma 4.3 (3) (end of Stage II), Section 4.1",
    statement="At T_2 the sums sum_i a_{s,i} and sum_i b_{s,i} are bounded away from 0 (for every "
              "neuron s).",
    assumptions=L43_SETTING,
    prediction=f"printed: |sum_i b_(s,i)(T_2)| >= {L43_PRINTED} ||b_s(T_2)||_2 for every neuron "
               "and seed",
    simulation="sim.signgd.train (full model), every step (properties.signgd.runs.l43_runs)",
    metric="printed: min over neurons and seeds of |sum_i b_{s,i}| / ||b_s||_2 at T_2; "
           f"corrected: the count of neurons with |sum_i b| < {L43_DELTA} ||b||_2 against its "
           "expectation under random signs",
    tolerance=f"printed: exact inequality at the reading's level {L43_PRINTED} (of the "
              "root-sum-square, ~1/30 of the sum of the magnitudes); corrected: Monte Carlo, the "
              "count is a sum of independent Bernoullis with the enumerated p's, two-sided, "
              f"false-fail {FALSE_FAIL:g} per draw (the claim share 1e-4 over {DRAWS} draws)",
    corrected=f"[D] At T_2 a neuron's aligned pairs carry independent fair signs (Lemma 4.2, Table "
              f"2), so sum_i b_(s,i) is a random-sign sum, not bounded away from 0: the fraction of "
              f"neurons with |sum_i b_(s,i)| < {L43_DELTA} ||b_s||_2 equals the mean over neurons of "
              "P(|sum_i eps_i |b_(s,i)|| < delta ||b_s||) for i.i.d. fair signs eps_i (exact "
              "enumeration over the 2^n patterns)",
    reason="The sign of each pair after alignment is that of its larger-magnitude member at init "
           "(or its shared init sign), independent across samples; a sum of n = 8 independent-sign "
           "terms falls within 0.1 ||b||_2 of zero with probability ~8%, so with m_k x seeds "
           "neurons some are always near a tie (the same near-tie neurons break Lemma 4.4's vote).",
    reading="The count's error model: neurons independent across seeds and rows (their init "
            "signs are), the enumerated p's exact. The query-noise sums follow the key-noise "
            "ones (aligned signs) and are only reported. Rivals: the printed form (no near-tie "
            "neuron), the equal-magnitude (binomial) random-sign sum; null: the key noise given "
            "sgn alpha_s at T_2. The Gaussian approximation is not distinguishable at n = 8 "
            "(expected 101 vs 96 of 512 neurons, SE 8.8, in the canonical draw) and is not "
            "claimed against.",
    plot=plot_l43("signgd.lemma4_3.item3"),
    paper_setting="Lemma 4.3 (3) holds under Condition 3.1 (no numbers), and Table 3 row (a), the "
                  "setting of Figs. 1-2 and Table 2 (App. B.1), lost its numbers in extraction; "
                  "the draws cover s in {20, 40, 80, 160} at eps = eta sqrt(s) / sigma_0 in [0.01, "
                  "0.03], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], 16 seeds per s.",
    alternatives=(
        rival("printed_bounded_away", printed_count, "the printed form: no neuron's sum near 0",
              replaces="reference"),
        rival("equal_magnitudes", equal_magnitude_count, "the random-sign sum with the "
              "magnitudes' spread dropped (binomial: P = C(8,4)/2^8 at delta = 0.25)",
              replaces="reference"),
        null("aligned_with_alpha", aligned_with_alpha, "the key noise at T_2 given the sign of "
             "its query signal (Stages III-IV done): a coherent, not a random-sign, sum",
             replaces="runs"),
    ),
))


@audits(CID, fails="near-tie neurons: |sum_i b| << ||b||_2 for some s")
@examples(1)  # the printed form is not deciding for the erratum; its draws are listed
@example(cfg=L43_CANON)
@given(cfg=L43_RUN)
def test_signgd_lemma4_3_item3_printed(cfg):
    z, _ = _pooled(_l43_runs(*cfg))
    check_at_least(CID, float(z.min()) - L43_PRINTED, EXACT,
                   what=f"printed (3): min |sum_i b| / ||b||_2 = {z.min():.3g} >= {L43_PRINTED}")


@audits(CID, form="corrected")
@examples(3)
@example(cfg=L43_CANON)
@given(cfg=L43_RUN)
def test_signgd_lemma4_3_item3_corrected(world, cfg):
    runs = world.simulation(_l43_runs, "runs", pure=True)(*cfg)
    z, p = _pooled(runs)
    count = float((z < L43_DELTA).sum())
    expected = world.prediction(random_sign_count, "reference")(runs)
    sd = float(np.sqrt((p * (1 - p)).sum()))  # the error model: random signs on these magnitudes
    check_close(CID, count, expected, Tolerance.monte_carlo(sd, FALSE_FAIL),
                what=f"neurons with |sum_i b| < {L43_DELTA} ||b||_2: {count:g} of {z.size}")
