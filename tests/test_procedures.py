"""The harness's decision procedures, each shown by simulation: its false-fail rate at the
boundary it decides and the smallest departure it detects (with probability 0.95), as
tests/test_discrepancy.py does for the noncentral t; and the power rules (a rival counts only
where it could have passed; an alternative that returns the claim world's own run is none)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from properties import check as C
from properties import world as W
from properties.check import ClaimMismatch, Inconclusive, Tolerance
from properties.registry import REGISTRY, Claim, null, register
from properties.report import NO_CHECK_POWER, NO_POWER, verdict_for

SIZES = np.array([16.0, 32.0, 64.0, 128.0])


# --- Monte Carlo against a closed form: the family-wise rate over the comparisons ------------
def test_monte_carlo_spends_its_rate_over_all_its_comparisons():
    ff, k, n = 0.05, 4, 40000
    tol = Tolerance.monte_carlo(1.0, false_fail=ff, comparisons=k)
    assert tol.false_fail == ff
    z = np.random.default_rng(0).standard_normal((n, k))  # k estimates at their SE, claim true
    rate = float(np.mean(np.any(np.abs(z) > tol.value, axis=1)))
    assert abs(rate - ff) < 4 * math.sqrt(ff / n) + ff * 0.03  # Bonferroni: just below ff


# --- direction of a trend over seeds --------------------------------------------------------
def _direction_outcomes(true_slope, seeds, ff, reps, rng):
    """Pass / fail / undecided counts of check_trend(direction='increasing') on seeds x sizes
    values with per-seed slope noise."""
    out = {"pass": 0, "fail": 0, "undecided": 0}
    lx = np.log(SIZES)
    for _ in range(reps):
        y = true_slope * lx[None, :] + rng.normal(0, 0.3, (seeds, SIZES.size))
        sink = C.Sink(soft=True)
        with C.recording(sink):
            C.check_trend("proc.dir", SIZES, y, direction="increasing", log_values=False,
                          false_fail=ff, name="d")
        out["fail" if sink.failed else "undecided" if sink.undecided else "pass"] += 1
    return out, sink


def test_a_direction_check_false_passes_at_its_rate_and_detects_its_stated_slope():
    rng = np.random.default_rng(1)
    ff, seeds, reps = 0.1, 8, 3000
    # at the boundary (slope 0) it calls the slope increasing at most ff / 2 of the time
    at0, _ = _direction_outcomes(0.0, seeds, ff, reps, rng)
    assert at0["pass"] / reps < ff / 2 + 4 * math.sqrt(ff / 2 / reps)
    # the smallest slope it detects, from the design (noncentral t): recorded, then caught at
    # 0.95 or more
    sink = C.Sink()
    lx = np.log(SIZES)
    y = rng.normal(0, 0.3, (seeds, SIZES.size))
    with C.recording(sink), pytest.raises(Inconclusive):
        C.check_trend("proc.dir", SIZES, y, direction="increasing", log_values=False,
                      false_fail=ff, name="d")
    se_slope = 0.3 / math.sqrt(float(np.sum((lx - lx.mean()) ** 2))) / math.sqrt(seeds)
    crit = stats.t.isf(ff / 2, seeds - 1)
    detect = (crit + stats.t.isf(0.05, seeds - 1)) * se_slope
    at_detect, _ = _direction_outcomes(detect, seeds, ff, reps, rng)
    assert at_detect["pass"] / reps > 0.93
    (recorded,) = sink.trend_resolution.values()
    assert recorded == pytest.approx(detect, rel=0.5)  # from that draw's SE: same order


def test_a_flat_sequence_with_no_spread_is_rejected_not_left_undecided():
    flat = np.ones((5, SIZES.size))
    with pytest.raises(ClaimMismatch, match="significantly"):
        C.check_trend("proc.flat", SIZES, flat, direction="increasing")
    sink = C.Sink(soft=True)
    with C.recording(sink):
        C.check_trend("proc.flat", SIZES, flat, direction="decreasing", name="f")
    assert sink.failed and not sink.undecided


def test_a_direction_rival_counts_only_on_the_claimed_side():
    y = SIZES ** 0.5 * np.exp(np.random.default_rng(2).normal(0, 0.01, (6, SIZES.size)))
    sink = C.Sink()
    with C.recording(sink):
        C.check_trend("proc.side", SIZES, y, direction="increasing", rivals=(0.0, -1.0, 1.0),
                      name="up")
    # 0 and -1 are the test's complement (rejected whenever it passes); 1 could have passed
    assert sink.trend_rivals["check_trend up"] == {"exponent 1": True}
    assert sink.trend_complement["check_trend up"] == {"exponent 0", "exponent -1"}


# --- order of a deterministic sequence -----------------------------------------------------
HS = [0.1 / 2 ** k for k in range(6)]


@settings(max_examples=60, deadline=None, database=None)
@given(p=st.sampled_from([1.0, 2.0]), c=st.floats(0.1, 10.0), a=st.floats(-2.0, 2.0))
def test_check_order_never_fails_a_true_order_and_its_band_is_its_resolution(p, c, a):
    """C h^p (1 + a h): no false failure (rate 0: nothing random), and the order moved by more
    than the band is rejected on the same sequence."""
    err = [c * h ** p * (1 + a * h) for h in HS]
    sink = C.Sink()
    with C.recording(sink):
        C.check_order("proc.order", HS, err, p, name="o")
    band = sink.order_bands[("check_order o", 0)]
    assert band < 0.1
    with pytest.raises(ClaimMismatch):
        C.check_order("proc.order", HS, err, p + 2 * band + 1e-9)


def test_check_order_is_inconclusive_where_its_band_cannot_tell_neighbouring_orders():
    rng = np.random.default_rng(3)
    err = [h * math.exp(rng.normal(0, 0.8)) for h in HS]  # a ragged curve
    with pytest.raises(Inconclusive, match="half the gap"):
        C.check_order("proc.ragged", HS, err, 1.0)


def test_check_order_rivals_meet_the_claim_worlds_band():
    """In an alternative's world the band is the claim world's, never the rival's own."""
    err = [h * (1 + 0.5 * h) for h in HS]
    claim_sink = C.Sink()
    with C.recording(claim_sink):
        C.check_order("proc.ref", HS, err, 1.0, name="o")
    band = claim_sink.order_bands[("check_order o", 0)]
    alt = C.Sink(soft=True)
    alt.reference = claim_sink
    smooth = [h ** 1.0001 for h in HS]  # the rival world's own curve would give a tiny band
    with C.recording(alt):
        C.check_order("proc.ref", HS, smooth, 1.0 + 2 * band, name="o")
    assert alt.failed and "claim world's band" in alt.failed[0][1]


# --- an alternative that returns what the claim's world computed ----------------------------
from properties.cache import run_cache  # noqa: E402


@run_cache(maxsize=4)
def _shared(seed: int, on: bool = True):
    rng = np.random.default_rng(seed)
    return rng.normal(size=3) * (2.0 if on else 1.0)


def _mechanism_off(seed):
    return _shared(seed, on=False)


CID = "proc.reference_run"
if CID not in REGISTRY:
    register(Claim(id=CID, where="-", statement="s", assumptions="a", prediction="p",
                   simulation="s", metric="m", tolerance="t",
                   alternatives=(null("off", _mechanism_off, "the mechanism off: the same run "
                                      "as the reference", replaces="run"),)))


@W.audits(CID)
@settings(max_examples=3, database=None, derandomize=True, deadline=None)
@given(seed=st.integers(0, 100))
def prop_reference(world, seed):
    on = world.simulation(_shared, "run", pure=True)(seed)
    ref = _shared(seed, on=False)  # the reference run, outside any slot
    C.check_at_least(CID, float(np.abs(on - ref).max()), C.Tolerance.roundoff(10.0),
                     name="differs")


def test_a_null_that_is_the_reference_run_is_no_alternative(monkeypatch, tmp_path):
    monkeypatch.setenv("THEOREM_AUDIT_NO_CACHE", "1")
    prop_reference(world=W.WORLD_PLACEHOLDER)
    run = W.pop_last_run()
    row = run.as_row()
    (alt,) = row["alternatives"]
    assert alt["void"] == 3 and alt["draws"] == 0 and alt["rejected_draws"] == 0
    assert "compares a run with itself" in alt["void_why"]
    row.update(nodeid="t::prop_reference", form="printed", outcome="passed", failure="none",
               hypothesis=True, explicit_examples=1, seconds=0.0)
    v = verdict_for(REGISTRY[CID], [row])
    assert v["verdict"] == "not-audited" and NO_POWER in v["detail"]
    assert "no alternative on every draw" in v["detail"]
    assert NO_CHECK_POWER in v["detail"]
