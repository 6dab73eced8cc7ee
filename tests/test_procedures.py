"""The harness's decision procedures, each shown by simulation: its false-fail rate at the
boundary it decides and the smallest departure it detects (with probability 0.95), as
tests/test_discrepancy.py does for the noncentral t; and the power rules of a direction check (a
rival counts only where it could have passed).  The rules that need a claim world are in
tests/test_power_rules.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from properties import check as C
from properties.check import ClaimMismatch, Inconclusive, Tolerance

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


def _assert_first_count_with_power(text, slope, se, seeds, ff):
    """The count of seeds per size that seeds_needed's `text` names is the first at which the
    noncentral t detects `slope` with power 0.8 at the rate `ff` (two-sided), the per-seed
    scatter taken as se sqrt(seeds); returns it."""
    n = int(text.split("about ")[1].split(" ")[0])
    sd = se * math.sqrt(seeds)

    def power(k):
        return stats.nct.sf(stats.t.isf(ff / 2, k - 1), k - 1, slope / (sd / math.sqrt(k)))
    assert power(n) >= 0.8 > power(n - 1)
    return n


def test_the_per_seed_slope_is_linregress_s_own_and_seeds_needed_the_first_count_reached():
    """check_trend's fast per-seed slope gives linregress's value bit for bit (a tie at the
    boundary of a direction check must not move), and seeds_needed names the smallest count of
    its grid whose noncentral-t power reaches 0.8."""
    from properties.trend import _ols_slope, seeds_needed

    rng = np.random.default_rng(5)
    for i in range(300):
        x = np.log(np.sort(rng.uniform(1.0, 1e3, int(rng.integers(3, 7)))))
        y = (np.full(x.size, 0.69) + (1e-17 * rng.normal(size=x.size) if i % 2 else 0.0)
             if i % 5 == 0 else rng.normal(size=x.size) * 10 ** rng.uniform(-8, 2))
        assert _ols_slope(x, y) == stats.linregress(x, y).slope
    _assert_first_count_with_power(seeds_needed(0.2, 0.1, 8, 1e-3, "increasing"),
                                   0.2, 0.1, 8, 1e-3)


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
    with pytest.raises(ClaimMismatch, match="exactly flat"):
        C.check_trend("proc.flat", SIZES, flat, direction="increasing")
    sink = C.Sink(soft=True)
    with C.recording(sink):
        C.check_trend("proc.flat", SIZES, flat, direction="decreasing", name="f")
    assert sink.failed and not sink.undecided
    # in an alternative's world it is rejected under a name of its own: a series constant by
    # construction could not have passed the check, so the check is not credited with it
    from properties.policy import FLAT_SUFFIX
    assert [n for n, _ in sink.failed] == ["check_trend f" + FLAT_SUFFIX]
    # one series (residual error model): a constant has no residual either (linregress's SE is
    # 0 / 0 there), so it is rejected too, while a series with any spread keeps its t band
    with pytest.raises(ClaimMismatch, match="exactly flat"):
        C.check_trend("proc.flat", SIZES, np.full(SIZES.size, 0.69), direction="increasing")
    sink = C.Sink(soft=True)
    with C.recording(sink):
        C.check_trend("proc.flat", SIZES, 0.69 + 1e-6 * np.sin(SIZES), direction="increasing",
                      name="g")
    assert sink.undecided and not sink.failed
    # an exponent (or an exponent bound) other than 0 fails a flat series whatever the data:
    # in an alternative's world under FLAT_SUFFIX too; a series with spread keeps the plain name
    for kw in (dict(exponent=0.5), dict(exponent=-0.5, side="not_above")):
        sink = C.Sink(soft=True)
        with C.recording(sink):
            C.check_trend("proc.flat", SIZES, flat, name="e", **kw)
        assert [n for n, _ in sink.failed] == ["check_trend e" + FLAT_SUFFIX], kw
    sink = C.Sink(soft=True)
    with C.recording(sink):
        C.check_trend("proc.flat", SIZES, 1 + 1e-3 * np.sin(np.arange(20.0)).reshape(5, 4),
                      exponent=0.5, name="e")
    assert [n for n, _ in sink.failed] == ["check_trend e"]


def test_a_check_met_only_by_a_flat_series_faced_no_alternative():
    """The power per check (evidence.check_power): a direction check whose only rejection was
    of an exactly flat series (recorded under FLAT_SUFFIX) faced no alternative, and says which
    alternative met it flat; the same rejection under the check's own name is power."""
    from properties.evidence import check_power
    from properties.policy import FLAT_SUFFIX

    def row(rejected_as):
        return {"nodeid": "t::test_p", "named_checks": {"d": {"calls": 3}},
                "alternatives": [{"kind": "null", "name": "frozen", "draws": 3,
                                  "rejected_draws": 3, "met_check": {"d": 3},
                                  "by_check": {rejected_as: 3}}]}
    (flat,) = check_power([row("d" + FLAT_SUFFIX)])
    assert not flat["faced"] and flat["flat"] == ["null:frozen"]
    (real,) = check_power([row("d")])
    assert real["faced"] and real["rejected"] == ["null:frozen"] and not real["flat"]
    # the same for a 'with high probability' check that met a world where every item fails
    from properties.policy import SATURATED_SUFFIX
    (sat,) = check_power([row("d" + SATURATED_SUFFIX)])
    assert not sat["faced"] and sat["saturated"] == ["null:frozen"] and not real["saturated"]


def test_a_direction_rival_counts_only_on_the_claimed_side():
    y = SIZES ** 0.5 * np.exp(np.random.default_rng(2).normal(0, 0.01, (6, SIZES.size)))
    sink = C.Sink()
    with C.recording(sink):
        C.check_trend("proc.side", SIZES, y, direction="increasing", rivals=(0.0, -1.0, 1.0),
                      name="up")
    # 0 and -1 are the test's complement (rejected whenever it passes); 1 could have passed
    assert sink.trend_rivals["check_trend up"] == {"exponent 1": True}
    assert sink.trend_complement["check_trend up"] == {"exponent 0", "exponent -1"}


def test_clustered_slope_is_check_trends_seed_clustered_slope_and_refuses_bad_arrays():
    from properties.trend import clustered_slope
    rng = np.random.default_rng(5)
    sizes = [10.0, 20.0, 40.0, 80.0]
    v = np.exp(-0.5 * np.log(sizes) + rng.normal(0, 0.1, (7, 4)))
    slope, se, dof = clustered_slope(sizes, v)
    tr = C.check_trend("proc.cs", sizes, v, direction="decreasing", false_fail=1e-3)
    assert (slope, se, dof) == (tr.slope, tr.stderr, 6)
    with pytest.raises(ValueError, match="values"):
        clustered_slope(sizes, v[:1])
    with pytest.raises(ValueError, match="values"):
        clustered_slope(sizes, -v)
    with pytest.raises(ValueError, match="sizes"):
        clustered_slope([10.0, 10.0, 40.0, 80.0], v)


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
    assert band < 0.5  # below half the gap to the rival orders p - 1, p + 1: decided
    with pytest.raises(ClaimMismatch):
        C.check_order("proc.order", HS, err, p + 2 * band + 1e-9)


@settings(max_examples=60, deadline=None, database=None)
@given(p=st.sampled_from([1.0, 2.0]), a=st.floats(0.01, 0.3), phase=st.floats(0.0, 6.3))
def test_check_order_never_fails_a_true_order_under_an_oscillating_next_order_term(p, a, phase):
    """C h^p (1 + a (h / h_0) cos(phase + 0.8 log2 h)): the next-order term is O(h) but its sign
    drifts from rung to rung (a kink crossed at a different fraction of a step at each size).
    The last increments of the local slopes then say less of the distance left: the spread of
    the last three alone fails 7% of such curves (as it failed drawn ReLU cases of
    joma.theorem1.exp, local slopes 0.9994, 0.9944, 0.9975, 0.9984, 0.9987); three times it
    passes the true order."""
    err = [h ** p * (1 + a * (h / HS[0]) * math.cos(phase + 0.8 * math.log2(h))) for h in HS]
    sink = C.Sink()
    with C.recording(sink):
        C.check_order("proc.osc", HS, err, p, name="o")
    assert sink.order_bands[("check_order o", 0)] < 0.5  # still tells p from p - 1 and p + 1


def test_order_band_covers_a_slow_next_order_term_the_failed_draws_and_a_coarse_transient():
    """3 x the spread of the last three local slopes covers the distance left where a monotone
    next-order term shrinks by r <= sqrt(3)/2 per rung (here relative power 0.3, r = 0.81: the
    spread alone would not), the drawn ReLU cases of joma.theorem1 on which the spread alone
    failed, and still decides a ladder that settled after a transient at coarse rungs."""
    def curve(local):
        e = [1e-3]
        for s in local:
            e.append(e[-1] * 2.0 ** -s)
        return e

    for local in ([0.9994, 0.9944, 0.9975, 0.9984, 0.9987],   # wander (exp, ReLU)
                  [1.024, 1.011, 1.0012, 1.0021, 1.0025],      # wander, moving away first
                  [1.0031, 1.0021, 1.0016, 1.0013, 1.0011]):  # slow approach, made up
        slope, band, model = C.order_band(HS, curve(local))
        assert abs(slope - 1) <= band < 0.05 and "3 x spread" in model
    slope, band, _ = C.order_band(HS, curve([1.199, 1.926, 0.9998, 0.9999, 1.0]))
    assert abs(slope - 1) <= band < 1e-3  # settled after a transient: still decided
    err = [h * (1 + 0.3 * (h / HS[0]) ** 0.3) for h in HS]
    slope, band, model = C.order_band(HS, err)
    from properties.trend import ORDER_FACTOR
    spread = band / ORDER_FACTOR
    assert abs(slope - 1) <= band and abs(slope - 1) > spread


def test_check_order_is_inconclusive_where_the_local_slopes_still_accelerate():
    """A ladder not yet in the asymptotic range (a joma.theorem1.exp draw: local slopes 0.524,
    0.523, 0.534, 0.564, 0.621 on the way to 1) is no evidence against the order: the last
    three increments grow, the model's premise fails on the data, and the check refines
    instead of failing."""
    err = [1e-3]
    for s in (0.5238, 0.5231, 0.534, 0.5644, 0.6211):
        err.append(err[-1] * 2.0 ** -s)
    assert C.order_band(HS, err)[1] == float("inf")
    with pytest.raises(Inconclusive, match="accelerate"):
        C.check_order("proc.early", HS, err, 1.0)


def test_refine_order_ladder_halves_until_the_band_decides_and_stops_at_its_cap():
    from properties.trend import refine_order_ladder

    def err(h):  # accelerating on the six rungs (an O(1) term fading as h^2), settled below
        return h * (1 + 3e4 * h ** 2) ** -0.25

    hs = [0.1 / 2 ** k for k in range(6)]
    assert C.order_band(hs, [err(h) for h in hs])[1] == float("inf")
    calls = []
    out_h, out_e = refine_order_ladder(hs, [err(h) for h in hs],
                                       lambda h: calls.append(h) or err(h))
    assert len(calls) >= 1 and out_h[6:] == calls and C.order_band(out_h, out_e)[1] <= 0.5
    capped, _ = refine_order_ladder(hs, [err(h) for h in hs], err, band_at_most=1e-12, most=7)
    assert len(capped) == 7
    with pytest.raises(ValueError, match="most"):
        refine_order_ladder(hs, [err(h) for h in hs], err, most=5)


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


# --- Monte Carlo estimate against a closed form (vector / matrix) ---------------------------
from properties import procedures as P  # noqa: E402


def test_check_mc_mean_false_fails_at_its_family_rate_and_detects_its_stated_departure():
    rng = np.random.default_rng(7)
    mu = np.array([[1.0, 2.0], [3.0, -1.5]])  # a 2 x 2 matrix-valued quantity
    ff, S, reps = 0.1, 12, 2000
    fails = 0
    for _ in range(reps):
        x = mu + rng.normal(0, 0.5, (S, 2, 2))
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_mc_mean("proc.mc", x, mu, false_fail=ff, name="m")
        fails += bool(sink.failed)
        assert sink.false_fail == ff  # the family-wise rate, not per coordinate
    assert abs(fails / reps - ff) < 4 * math.sqrt(ff / reps) + 0.01  # Sidak: at most ff
    # the recorded smallest relative departure, applied to the coordinate it names, is caught
    sink = C.Sink()
    with C.recording(sink):
        P.check_mc_mean("proc.mc", mu + rng.normal(0, 0.5, (S, 2, 2)), mu, false_fail=ff,
                        name="m")
    (d,) = sink.discrepancy.values()
    se = 0.5 / math.sqrt(S)
    crit = stats.t.isf(P.sidak(ff, 4) / 2, S - 1)
    assert d["value"] == pytest.approx((crit + stats.t.isf(0.05, S - 1)) * se / 3.0, rel=0.5)
    caught = 0
    for _ in range(500):
        x = mu * np.array([[1, 1], [1 + (crit + stats.t.isf(0.05, S - 1)) * se / 3.0, 1]]) \
            + rng.normal(0, 0.5, (S, 2, 2))
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_mc_mean("proc.mc", x, mu, false_fail=ff, name="m")
        caught += bool(sink.failed)
    assert caught / 500 > 0.9


def test_check_mc_mean_asks_for_replicates_and_matching_shapes():
    with pytest.raises(ValueError, match="at least 3"):
        P.check_mc_mean("proc.mc", np.ones((2, 3)), np.ones(3), false_fail=0.01)
    with pytest.raises(ValueError, match="shape"):
        P.check_mc_mean("proc.mc", np.ones((5, 3)), np.ones(2), false_fail=0.01)


# --- a one-sided bound shows its slack ------------------------------------------------------
def test_check_bound_records_its_slack_and_fails_past_the_bound():
    sink = C.Sink()
    with C.recording(sink):
        slack = P.check_bound("proc.bound", [0.5, 0.7], 1.0, name="b")
    assert slack == pytest.approx(0.3) and sink.slack["check_bound b"] == pytest.approx(0.3)
    with pytest.raises(ClaimMismatch, match="bound violated"):
        P.check_bound("proc.bound", 1.2, 1.0)
    with pytest.raises(ClaimMismatch):  # with seed noise: the upper confidence bound decides
        P.check_bound("proc.bound", 0.9, 1.0, se=0.1, dof=4, false_fail=0.01)


# --- with high probability along a path -----------------------------------------------------
def test_check_whp_holds_when_failures_vanish_and_is_refuted_when_they_do_not():
    rng = np.random.default_rng(11)
    sizes = [30, 60, 120, 240]
    falling = [rng.random(200) < p for p in (0.3, 0.1, 0.02, 0.0)]
    out = P.check_whp("proc.whp", sizes, falling, 0.1, false_fail=1e-3)
    assert out["upper"] < 0.1
    flat = [rng.random(200) < 0.3 for _ in sizes]
    with pytest.raises(ClaimMismatch, match="does not vanish"):
        P.check_whp("proc.whp", sizes, flat, 0.1, false_fail=1e-3)
    few = [rng.random(6) < p for p in (0.2, 0.1, 0.0, 0.0)]
    with pytest.raises(Inconclusive, match="runs there would put"):
        P.check_whp("proc.whp", sizes, few, 0.1, false_fail=1e-3)


def test_check_whp_false_fails_below_its_rate_on_a_path_at_the_level():
    """At the boundary (failure probability equal to the level at the largest rung, flat),
    a refutation needs the lower bound above the level: rare (at most the rate)."""
    rng = np.random.default_rng(12)
    refuted, reps = 0, 300
    for _ in range(reps):
        runs = [rng.random(100) < 0.1 for _ in range(4)]
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_whp("proc.whp", [1, 2, 4, 8], runs, 0.1, false_fail=0.05)
        refuted += bool(sink.failed)
    assert refuted / reps < 0.05 + 4 * math.sqrt(0.05 / reps)


def test_check_whp_spends_its_rate_over_its_looks():
    """looks=k: each look decides at false_fail / k (Bonferroni over the looks at a path whose
    seeds were extended after an undecided look): the largest rung's interval widens, a bound
    just below the level at one look is undecided at three; bad `looks` is a ValueError."""
    sizes = [30, 60, 120, 240]
    runs = [np.arange(256) < k for k in (67, 52, 69, 7)]  # falling; 7/256 at the largest rung
    one = P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=3e-5)
    assert one["state"] == "holds" and one["upper"] < 0.1
    with pytest.raises(Inconclusive, match="spent over 3 looks"):
        P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=3e-5, looks=3)
    three = P._cp(7, 256, 3e-5 / 2 / 3)
    assert three.high > 0.1 > one["upper"]
    for bad in (0, -1, 1.5, True, 101, "2"):
        with pytest.raises(ValueError, match="looks"):
            P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=3e-5, looks=bad)


def test_check_whp_does_not_count_a_world_where_every_item_fails_as_power():
    """In an alternative's world (a soft sink) a refutation where every item of every run fails
    (a frozen noise that never turns) is recorded under SATURATED_SUFFIX, not as the check's
    power; one where some item holds is a plain rejection; bad `items` is a ValueError."""
    from properties.policy import SATURATED_SUFFIX

    sizes, n = [30, 60, 120], 64
    runs = [np.ones(n, bool)] * 3  # every run fails at every rung
    every = ([np.full(n, 4)] * 3, [np.full(n, 4)] * 3)
    some = ([np.full(n, 3)] * 3, [np.full(n, 4)] * 3)
    for items, name in ((every, "check_whp w" + SATURATED_SUFFIX), (some, "check_whp w"),
                        (None, "check_whp w")):
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=1e-3, name="w", items=items)
        assert [f for f, _ in sink.failed] == [name]
    with pytest.raises(ClaimMismatch):  # outside an alternative's world: the claim's failure
        P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=1e-3, items=every)
    for bad in (([1], [1]), (every[0],), (every[0][:2], every[1]),
                (every[0], [np.full(n - 1, 4)] * 3)):  # a rung's two arrays of unlike shape
        with pytest.raises(ValueError, match="items"):
            P.check_whp("proc.whp", sizes, runs, 0.1, false_fail=1e-3, items=bad)


def test_cochran_armitage_matches_its_definition():
    z = P.cochran_armitage([0, 1, 2], [1, 5, 9], [10, 10, 10])
    assert z > 3 and P.cochran_armitage([0, 1, 2], [0, 0, 0], [5, 5, 5]) == 0.0


# --- order of event times, ties as ties -----------------------------------------------------
def test_event_order_counts_ties_as_ties():
    out = P.check_event_order("proc.order", [1, 2, 3, 4], [2, 2, 5, np.inf], false_fail=1e-3)
    assert out == {"a_first": 3, "b_first": 0, "ties": 1}
    with pytest.raises(ClaimMismatch, match="b came first on 1"):
        P.check_event_order("proc.order", [1, 3], [2, 2], false_fail=1e-3)
    with pytest.raises(Inconclusive, match="every item tied"):
        P.check_event_order("proc.order", [2, 2], [2, 2], false_fail=1e-3)




def test_an_inconclusive_direction_trend_says_how_many_seeds_would_decide_it():
    """Issue 38: 'not significantly increasing' names the seeds per size at which the slope it
    saw would be detected (power 0.8 at the check's rate), and which way that would point; the
    number is the noncentral-t one, and more seeds than that are needed for a smaller slope."""
    from properties.check import Inconclusive, check_trend
    from properties.trend import seeds_needed

    gen = np.random.default_rng(3)
    values = np.exp(0.05 * np.log([4.0, 8.0, 16.0]) + gen.normal(0, 0.3, (5, 3)))
    with pytest.raises(Inconclusive, match="seeds per size"):
        check_trend("demo.claim", [4, 8, 16], values, direction="increasing", false_fail=1e-4)
    text = seeds_needed(0.3, 0.1, 4, 1e-4, "increasing")
    n = _assert_first_count_with_power(text, 0.3, 0.1, 4, 1e-4)
    assert "claimed direction" in text and "refutation" in seeds_needed(-0.3, 0.1, 4, 1e-4,
                                                                        "increasing")
    assert int(seeds_needed(0.1, 0.1, 4, 1e-4, "increasing").split("about ")[1].split(" ")[0]) > n


def test_mean_at_least_rate_detection_and_undecided():
    """check_mean_at_least: at the boundary (true mean = level) it refutes with probability at
    most its rate (simulated), it passes a mean above the level by its stated detection with
    probability >= 0.95, and an undecided mean is Inconclusive with the seeds that would decide
    it, never a refutation."""
    from scipy import stats

    from properties.check import ClaimMismatch, Inconclusive
    from properties.procedures import check_mean_at_least

    gen = np.random.default_rng(11)
    S, ff, reps = 8, 0.05, 4000
    below = 0
    for _ in range(reps):
        try:
            check_mean_at_least("demo.claim", 0.9 + gen.normal(0, 0.1, S), 0.9, false_fail=ff)
        except ClaimMismatch:
            below += 1
        except Inconclusive:
            pass
    assert below / reps <= ff + 3 * math.sqrt(ff * (1 - ff) / reps)
    crit = stats.t.isf(ff, S - 1)
    shift = (crit + stats.t.isf(0.05, S - 1)) * 0.1 / math.sqrt(S)
    passed = 0
    for _ in range(reps):
        try:
            check_mean_at_least("demo.claim", 0.9 + shift + gen.normal(0, 0.1, S), 0.9,
                                false_fail=ff)
            passed += 1
        except (ClaimMismatch, Inconclusive):
            pass
    assert passed / reps >= 0.94
    with pytest.raises(Inconclusive, match="seeds per size"):
        check_mean_at_least("demo.claim", [0.88, 0.91, 0.9, 0.89], 0.9, false_fail=1e-4)
    with pytest.raises(ClaimMismatch, match="significantly below"):
        check_mean_at_least("demo.claim", [0.5, 0.51, 0.49, 0.5], 0.9, false_fail=1e-4)


def test_check_bound_names_the_failing_value_of_a_matrix():
    """A violated bound on a 2-D value names the offending entry (no IndexError from a flat
    argmin into an N-D array)."""
    v = np.array([[0.1, 0.2], [0.3, 1.5]])
    with pytest.raises(ClaimMismatch, match=r"1\.5 vs bound 1"):
        P.check_bound("proc.bound", v, 1.0)


# --- orders on paired runs, against calibrated noise, beyond permutations -------------------
def test_check_paired_order_rate_and_detected_difference_by_simulation():
    """A true mean difference of 0 passes at most at the rate (it is then undecided or, rarely,
    'the other way'); a true difference of the detected size passes with probability >= 0.95;
    a difference significantly the other way is a mismatch."""
    rng = np.random.default_rng(21)
    S, ff = 12, 0.01
    passed = 0
    for _ in range(1000):  # 10 passes expected at the rate; 25 is beyond 4.7 sd of the count
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_paired_order("proc.paired", rng.normal(0, 1, S), false_fail=ff, order="A > B",
                                 unit="u")
        passed += not sink.failed and not sink.undecided
    assert passed / 1000 < ff * 2.5
    sink = C.Sink(soft=True)  # the detected difference is a property of the design
    with C.recording(sink):
        P.check_paired_order("proc.paired", rng.normal(0, 1, S), false_fail=ff, order="A > B",
                             unit="u", name="o")
    shift = sink.discrepancy["check_mean_at_least o"]["value"]
    caught = 0
    for _ in range(300):
        try:
            P.check_paired_order("proc.paired", rng.normal(shift, 1, S), false_fail=ff,
                                 order="A > B", unit="u")
            caught += 1
        except Inconclusive:
            pass
    assert caught / 300 > 0.9
    with pytest.raises(ClaimMismatch, match="significantly below"):
        P.check_paired_order("proc.paired", rng.normal(-3, 1, S), false_fail=ff, order="A > B",
                             unit="u")


def test_check_above_noise_rate_by_simulation_and_it_reads_only_the_spread():
    rng = np.random.default_rng(22)
    n, ff = 40, 0.02
    fails = 0
    for _ in range(2000):
        x = rng.normal(0, 1, n + 1)  # a new element exchangeable with the calibration ones
        try:
            P.check_above_noise("proc.noise", float(x[0]), x[1:], false_fail=ff)
            fails += 1  # a mean-0 element passed: a false pass at the rate
        except ClaimMismatch:
            pass
    assert fails / 2000 < ff * 2
    x = rng.normal(0, 1, n)
    P.check_above_noise("proc.noise", 4.0, x + 100.0, false_fail=ff)  # the mean is not read
    with pytest.raises(ValueError, match="noise"):
        P.check_above_noise("proc.noise", 4.0, [1.0, 2.0], false_fail=ff)


def test_check_beyond_permutations_exact_level_by_simulation():
    """Exchangeable with its P relabellings, a statistic passes with probability 1/(P + 1)."""
    rng = np.random.default_rng(23)
    Pn, passed = 19, 0
    for _ in range(4000):
        x = rng.normal(size=Pn + 1)
        try:
            P.check_beyond_permutations("proc.perm", float(x[0]), x[1:], kind="relabellings")
            passed += 1
        except ClaimMismatch:
            pass
    assert abs(passed / 4000 - 1 / (Pn + 1)) < 0.015


def test_check_paired_order_rejects_an_alternative_whose_data_do_not_show_the_order():
    """In an alternative's (soft) world a paired order not significantly above 0 is a failed
    check (the null could not have given the claim's verdict); check_mean_at_least by default
    leaves it undecided (not told apart)."""
    rng = np.random.default_rng(24)
    d = rng.normal(0, 1, 12)
    d -= d.mean() - 0.1  # mean 0.1: not significantly above at t_11(0.99) x SE ~ 0.8
    sink = C.Sink(soft=True)
    with C.recording(sink):
        P.check_paired_order("proc.paired", d, false_fail=0.01, order="A > B", unit="u")
    assert sink.failed and not sink.undecided
    sink = C.Sink(soft=True)
    with C.recording(sink):
        P.check_mean_at_least("proc.mean", d, 0.0, false_fail=0.01)
    assert sink.undecided and not sink.failed


def test_check_count_at_most_rate_and_power_from_the_binomial():
    """Failures among 40 trials against a guaranteed p = 0.05: fails at most at its rate 1e-3 on
    counts simulated at the guarantee, fails a count beyond the quantile, records
    the smallest per-trial probability it detects, and cannot fail where allowed = trials."""
    rng = np.random.default_rng(15)
    sink = C.Sink(soft=True)
    with C.recording(sink):
        allowed = [P.check_count_at_most("proc.count", int(k), 40, 0.05, false_fail=1e-3)
                   for k in rng.binomial(40, 0.05, 2000)]
    assert len(sink.failed) / 2000 < 1e-3 + 4 * math.sqrt(1e-3 / 2000)
    assert set(allowed) == {int(stats.binom.isf(1e-3, 40, 0.05))}
    assert sink.discrepancy  # the smallest per-trial probability it detects
    with pytest.raises(ClaimMismatch):
        P.check_count_at_most("proc.count", allowed[0] + 1, 40, 0.05, false_fail=1e-3)
    assert P.check_count_at_most("proc.count", 40, 40, 1.0, false_fail=1e-3) == 40
    with pytest.raises(ValueError, match="count"):
        P.check_count_at_most("proc.count", 41, 40, 0.05, false_fail=1e-3)
    with pytest.raises(ValueError, match="p must"):
        P.check_count_at_most("proc.count", 1, 40, float("nan"), false_fail=1e-3)


def _detected(sink):
    (rec,) = sink.discrepancy.values()
    return rec["value"]


def test_event_order_count_and_whp_detect_their_stated_departure_by_simulation():
    """The smallest departure each count-based procedure says it detects is detected: at that
    per-item (per-trial, per-run) probability the statement is not passed in at least 1 -
    FALSE_PASS of simulated data (here with 4 SE of simulation slack over 400 draws)."""
    from properties.discrepancy import FALSE_PASS

    rng = np.random.default_rng(16)
    reps = 400
    slack = 4 * math.sqrt(FALSE_PASS * (1 - FALSE_PASS) / reps)

    def not_passed_rate(call):
        bad = 0
        for _ in range(reps):
            sink = C.Sink(soft=True)
            with C.recording(sink):
                out = call()
            bad += bool(sink.failed) or (isinstance(out, dict) and out.get("state") != "holds"
                                         and "state" in out)
        return bad / reps

    # event order: 30 untied items, b-first with the detected probability
    sink = C.Sink()
    with C.recording(sink):
        P.check_event_order("proc.order", np.zeros(30), np.ones(30), false_fail=1e-3)
    p = _detected(sink)
    rate = not_passed_rate(lambda: P.check_event_order(
        "proc.order", np.zeros(30), np.where(rng.random(30) < p, -1.0, 1.0), false_fail=1e-3))
    assert rate >= 1 - FALSE_PASS - slack
    # count at most: 40 trials guaranteed at p = 0.05, failing with the detected probability
    sink = C.Sink()
    with C.recording(sink):
        P.check_count_at_most("proc.count", 0, 40, 0.05, false_fail=1e-3)
    q = _detected(sink)
    assert q > 0.05
    rate = not_passed_rate(lambda: P.check_count_at_most(
        "proc.count", int(rng.binomial(40, q)), 40, 0.05, false_fail=1e-3))
    assert rate >= 1 - FALSE_PASS - slack
    # whp: 60 runs per rung, flat at the detected per-run failure probability at the top rung
    sizes = [16, 32, 64]
    sink = C.Sink(soft=True)
    with C.recording(sink):
        P.check_whp("proc.whp", sizes, [np.zeros(60, bool)] * 3, 0.1, false_fail=1e-3)
    r = _detected(sink)
    rate = not_passed_rate(lambda: P.check_whp(
        "proc.whp", sizes, [rng.random(60) < r for _ in sizes], 0.1, false_fail=1e-3))
    assert rate >= 1 - FALSE_PASS - slack


def test_check_whp_decides_its_glossary_words_across_their_brackets():
    """`reading`: per-run values of a word's statistic, a run failing beyond the word's level;
    `level` a word for the share of runs: both brackets are decided, and a refutation that
    does not survive the looser level of the per-run word is recorded as flipping there."""
    rng = np.random.default_rng(14)
    sizes = [16, 32, 64]
    # H_T / H_0 per run: most runs between 0.1 and 0.2 (not 'extremely sparse' at the glossary
    # level 0.1, but at the looser 0.2 they are), at every rung alike
    vals = [rng.uniform(0.11, 0.19, 60) for _ in sizes]
    sink = C.Sink(soft=True)
    with C.recording(sink):
        out = P.check_whp("proc.whp", sizes, vals, "most", false_fail=1e-3,
                          reading="extremely sparse")
    assert out["state"] == "refuted" and sink.failed
    es, most = sink.readings["extremely sparse"], sink.readings["most"]
    assert es["passes"] == {"level": False, "stricter": False, "looser": True}
    assert most["passes"] == {"level": False, "stricter": False, "looser": False}
    # every run well inside the word's stricter level: holds at every level of both brackets
    # (200 runs per rung: with none failing, 60 leave even the level undecided (79 needed), and
    # the stricter 0.95 needs about twice that)
    sink = C.Sink()
    with C.recording(sink):
        out = P.check_whp("proc.whp", sizes, [rng.uniform(0.0, 0.04, 200) for _ in sizes],
                          "most", false_fail=1e-3, reading="extremely sparse")
    assert out["state"] == "holds"
    assert all(sink.readings[w]["passes"] == {"level": True, "stricter": True, "looser": True}
               for w in ("extremely sparse", "most"))
    with pytest.raises(ValueError, match="reading"):
        P.check_whp("proc.whp", sizes, [np.array([np.nan])] * 3, "most", false_fail=1e-3,
                    reading="extremely sparse")


def test_check_whp_reports_the_statistic_its_bracket_is_decided_on():
    """The share word's bracket is decided on confidence bounds, rung by rung: one failing run
    of 256 at the smallest rung (none elsewhere, no significant fall) holds at 'high' (0.9) and
    fails its stricter 0.95 there, and the report names that rung's bound, not the largest
    rung's observed share (1.0, which the stricter level would pass)."""
    from properties.evidence import _readings
    from properties.verdict import _worst_of

    sizes = [30, 60, 120, 240]
    runs = [np.arange(256) == 0] + [np.zeros(256, bool)] * 3
    sink = C.Sink()
    with C.recording(sink):
        assert P.check_whp("proc.whp", sizes, runs, "high", false_fail=3e-5)["state"] == "holds"
    (x,) = _readings([{"readings": list(sink.readings.values())}])
    assert x["verdict_at"] == {"stricter": "fails", "level": "passes", "looser": "passes"}
    lower = 1 - stats.binomtest(1, 256).proportion_ci(1 - 1.5e-5, method="exact").high
    assert x["worst"] == pytest.approx(lower) and 0.9 < lower < 0.95
    assert "binding rung 30 (255 of 256 runs)" in _worst_of(x)


def test_check_whp_on_a_path_with_unfollowed_clauses_does_not_refute():
    """A failure that does not vanish on a path that leaves a clause of the condition is not a
    refutation (Inconclusive, the clause named); a rival failing there is still rejected."""
    rng = np.random.default_rng(13)
    sizes = [30, 60, 120]
    flat = [rng.random(100) < 0.5 for _ in sizes]
    with pytest.raises(Inconclusive, match="does not follow eta small"):
        P.check_whp("proc.whp", sizes, flat, 0.1, false_fail=1e-3, unfollowed="eta small")
    sink = C.Sink(soft=True)
    with C.recording(sink):
        P.check_whp("proc.whp", sizes, flat, 0.1, false_fail=1e-3, unfollowed="eta small")
    assert sink.failed


def _bound_fails(true_slope, seeds, ff, reps, rng, side="not_above", bound=-0.5):
    """How often check_trend(exponent=bound, side=side) fails on seeds x sizes values whose true
    log-log exponent is `true_slope` (per-seed noise on the log values)."""
    lx, fails = np.log(SIZES), 0
    for _ in range(reps):
        y = np.exp(true_slope * lx[None, :] + rng.normal(0, 0.3, (seeds, SIZES.size)))
        sink = C.Sink(soft=True)
        with C.recording(sink):
            C.check_trend("proc.bound", SIZES, y, exponent=bound, side=side, false_fail=ff,
                          name="b")
        fails += bool(sink.failed)
    return fails


def test_an_exponent_bound_false_fails_at_its_one_sided_rate_and_detects_its_resolution():
    """check_trend(exponent=e, side='not_above'): at a true exponent e it fails at its rate (all
    of it on the one side it tests), inside the bound it passes, and a true exponent beyond the
    bound by the recorded resolution of a draw at the bound is caught most of the time."""
    rng = np.random.default_rng(41)
    ff, seeds, reps = 0.1, 8, 3000
    at = _bound_fails(-0.5, seeds, ff, reps, rng)
    assert abs(at / reps - ff) < 4 * math.sqrt(ff / reps), at  # the one-sided rate, spent
    assert _bound_fails(-1.5, seeds, ff, 500, rng) == 0  # well inside the bound: never fails
    lx = np.log(SIZES)
    se_slope = 0.3 / math.sqrt(float(np.sum((lx - lx.mean()) ** 2))) / math.sqrt(seeds)
    detect = (stats.t.isf(ff, seeds - 1) + stats.t.isf(0.05, seeds - 1)) * se_slope
    assert _bound_fails(-0.5 + detect, seeds, ff, 1000, rng) / 1000 > 0.93
    # the mirror side fails below the bound, never above it
    assert _bound_fails(-0.5 - detect, seeds, ff, 500, rng, side="not_below") / 500 > 0.93
    assert _bound_fails(0.5, seeds, ff, 200, rng, side="not_below") == 0


def test_an_exponent_bound_credits_only_stricter_rival_bounds():
    """A rival bound counts where it could have passed: a faster rate (below an upper bound on
    the exponent); a looser bound is the check's complement.  Bad sides refuse."""
    y = SIZES ** -0.6 * np.exp(np.random.default_rng(3).normal(0, 0.01, (6, SIZES.size)))
    sink = C.Sink()
    with C.recording(sink):
        C.check_trend("proc.b", SIZES, y, exponent=-0.5, side="not_above",
                      rivals=(-1.0, 0.0, -0.6), name="b")
    assert sink.trend_rivals["check_trend b"] == {"exponent -1": True, "exponent -0.6": False}
    assert sink.trend_complement["check_trend b"] == {"exponent 0"}
    with pytest.raises(ClaimMismatch):
        C.check_trend("proc.b", SIZES, SIZES ** -0.2, exponent=-0.5, side="not_above")
    for bad in (dict(exponent=-0.5, side="below"), dict(direction="increasing", side="not_above"),
                dict(exponent=-0.5, side="not_above", false_fail=0.6)):
        with pytest.raises(ValueError):
            C.check_trend("proc.b", SIZES, y, **bad)


def test_check_estimate_false_fails_at_its_rate_on_each_side_and_detects_its_departure():
    """At the boundary (a true mean equal to the prediction) a one-sided 'not below' check fails
    at its rate; the two-sided one at its rate too (both tails); a true shortfall of the
    detected size is caught with probability >= 0.95."""
    rng = np.random.default_rng(31)
    S, ff, n = 10, 0.05, 2000
    for side in ("not_below", "two-sided"):
        fails = 0
        for _ in range(n):
            m, se, dof = P.clustered_mean(rng.normal(0, 1, S))
            sink = C.Sink(soft=True)
            with C.recording(sink):
                P.check_estimate("proc.est", m, 0.0, se=se, dof=dof, side=side, false_fail=ff)
            fails += bool(sink.failed)
        assert fails / n < ff * 1.35, (side, fails)  # 100 expected: 135 is 3.6 sd above
        assert fails / n > ff * 0.65, (side, fails)  # the rate is spent, not wasted
    sink = C.Sink(soft=True)
    with C.recording(sink):
        P.check_estimate("proc.est", 0.0, 0.0, se=1 / math.sqrt(S), dof=S - 1, side="not_below",
                         false_fail=ff, unit="u", name="d")
    shift = next(v["value"] for v in sink.discrepancy.values())
    caught = 0
    for _ in range(400):
        m, se, dof = P.clustered_mean(rng.normal(-shift, 1, S))
        sink = C.Sink(soft=True)
        with C.recording(sink):
            P.check_estimate("proc.est", m, 0.0, se=se, dof=dof, side="not_below", false_fail=ff)
        caught += bool(sink.failed)
    assert caught / 400 > 0.9
    # the mirror side, a prediction's own SE in quadrature, a reading, and bad input
    with pytest.raises(ClaimMismatch):
        P.check_estimate("proc.est", 1.0, 0.0, se=0.1, side="not_above", false_fail=ff)
    P.check_estimate("proc.est", 0.5, 0.0, se=0.1, predicted_se=0.3, false_fail=ff)
    with pytest.raises(ClaimMismatch):
        P.check_estimate("proc.est", 0.5, 0.0, se=0.1, false_fail=ff)
    P.check_estimate("proc.est", 0.9, se=0.01, side="not_below", false_fail=ff,
                     reading=("high", "attention becomes high"))
    for bad in (dict(side="up"), dict(false_fail=0.7), dict(comparisons=0), dict(dof=0),
                dict(se=-1.0), dict(reading=("high", "x")),
                dict(side="not_above", reading=("high", "attention becomes high"))):
        kw = dict(se=0.1, false_fail=ff) | bad
        with pytest.raises(ValueError):
            P.check_estimate("proc.est", 0.5, 0.0, **kw)


def test_clustered_ratio_is_the_pooled_ratio_with_the_delta_method_se():
    num = np.array([[1.0, 2.0], [3.0, 2.0], [2.0, 2.0]])
    den = np.array([[2.0, 4.0], [4.0, 4.0], [2.0, 4.0]])
    f, se, dof = P.clustered_ratio(num, den)
    assert dof == 2 and np.allclose(f, [6 / 8, 0.5]) and se[1] == 0.0
    resid = num[:, 0] - 0.75 * den[:, 0]
    assert np.isclose(se[0], math.sqrt(1.5 * (resid ** 2).sum()) / 8)
    with pytest.raises(ValueError):
        P.clustered_ratio(num[:1], den[:1])
    with pytest.raises(ValueError):
        P.clustered_mean([1.0])


def test_clustered_fractions_floors_a_boundary_fraction_and_reports_the_design_effect():
    """A fraction of 1 on every seed has clustered SE 0: its SE is the plus-four binomial SE of
    its pooled items times the largest design effect of the others; elsewhere the clustered SE
    of clustered_ratio, with its design effect (at least 1)."""
    num = np.array([[10.0, 3.0], [12.0, 9.0], [11.0, 1.0]])
    den = np.array([[10.0, 10.0], [12.0, 10.0], [11.0, 10.0]])
    f, se, dof, deff = P.clustered_fractions(num, den)
    f0, se0, dof0 = P.clustered_ratio(num, den)
    assert dof == dof0 == 2 and np.allclose(f, f0) and f[0] == 1.0
    assert se[1] == pytest.approx(se0[1]) and se0[0] == 0.0
    assert deff[1] == pytest.approx(se0[1] ** 2 / (f[1] * (1 - f[1]) / 30)) and deff[1] > 1
    pt = (33 + 2) / (33 + 4)
    assert deff[0] == deff[1]
    assert se[0] == pytest.approx(np.sqrt(pt * (1 - pt) / 37 * deff[1]))
