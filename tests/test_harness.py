"""The earned-verdict rules of the harness, each on a tiny synthetic property.

Properties are built with the real `@audits` / `@given` stack and called directly (as pytest
would call them); their run state (`properties.world.LAST_RUN`) becomes a report row, and the
verdict comes from `properties.report.verdict_for`.  One end-to-end run through pytest and the
plugin (typed outcomes, xfail semantics, ExceptionGroup messages) is at the bottom.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy import stats
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from properties import (Claim, ClaimMismatch, Inconclusive, NoPower, PropertyError, Threshold,
                        Tolerance, audits, check_close, check_order, check_trend, null,
                        register, rival)
from properties import world as W
from properties.report import MIN_DRAWS, NO_POWER, build, summary, verdict_for


@pytest.fixture(autouse=True)
def _no_run_cache(monkeypatch):
    """The harness's rules are tested on fresh computations (tests/test_cache.py tests the
    on-disk cache itself)."""
    monkeypatch.setenv("THEOREM_AUDIT_NO_CACHE", "1")

ROOT = Path(__file__).resolve().parent.parent
EXACT = Tolerance.roundoff(1.0)


def truth(x):
    return 2.0 * x


def halved(x):  # a dropped factor
    return x


def also_true(x):  # a "rival" that is the truth in disguise: cannot be rejected
    return x + x


def simulate(x):
    return 2.0 * x


def untrained(x):  # a null: the mechanism switched off
    return 0.0 * x


def claim(cid, alternatives=(), **kw):
    c = Claim(id=cid, where="synthetic", statement="y = 2x", assumptions="x real",
              prediction="truth", simulation="simulate", metric="abs", tolerance="round-off",
              alternatives=alternatives, **kw)
    register(c)
    return c


def run_row(test, **call_kwargs):
    """Call a property as pytest would; return (exception or None, report row)."""
    W.pop_last_run()
    exc = None
    if "world" in inspect.signature(test).parameters:
        call_kwargs.setdefault("world", W.WORLD_PLACEHOLDER)
    try:
        test(**call_kwargs)
    except BaseException as e:  # noqa: BLE001 - the outcome is the subject of the test
        exc = e
    run = W.pop_last_run()
    row = run.as_row() if run is not None else {}
    row.update(W.property_info(test))
    kind = ("none" if exc is None else "mismatch" if isinstance(exc, ClaimMismatch) else
            "power" if isinstance(exc, NoPower) else
            "inconclusive" if isinstance(exc, Inconclusive) else "error")
    outcome = "passed" if exc is None else "skipped" if isinstance(exc, Inconclusive) else "failed"
    row.update(claim=run.claim_id if run else "?", form=run.form if run else "printed",
               outcome=outcome, failure=kind, nodeid=f"t::{test.__name__}", seconds=0.0,
               messages=[str(exc)] if exc else [], expected_failure=run.fails if run else None)
    if run is not None and run.fails and kind == "mismatch":
        row["outcome"] = "xfailed"
    return exc, row


XS = st.floats(0.5, 10.0)
CI3 = settings(max_examples=8, database=None, derandomize=True, deadline=None)


# --- alternatives ---------------------------------------------------------------------------
C_POWER = claim("harness.power", (rival("dropped_factor", halved, "drops the factor 2"),
                                  null("untrained", untrained, "training off")))


@audits("harness.power")
@CI3
@example(x=2.0)
@given(x=XS)
def prop_power(world, x):
    y = world.simulation(simulate)(x)
    check_close("harness.power", y, world.prediction(truth)(x), EXACT)


def test_rejected_alternatives_make_an_earned_holds():
    exc, row = run_row(prop_power)
    assert exc is None
    assert row["draws"] >= MIN_DRAWS
    alts = {a["name"]: a for a in row["alternatives"]}
    assert alts["dropped_factor"]["rejected"] and alts["untrained"]["rejected"]
    assert alts["dropped_factor"]["draws"] == row["draws"]  # on the same draws
    v = verdict_for(C_POWER, [row])
    assert v["verdict"] == "holds", v["detail"]
    assert {a["name"] for a in v["alternatives"] if a["rejected"]} == {"dropped_factor", "untrained"}


C_WEAK = claim("harness.weak", (rival("disguised_truth", also_true, "x + x equals 2x"),))


@audits("harness.weak")
@CI3
@given(x=XS)
def prop_weak(world, x):
    check_close("harness.weak", simulate(x), world.prediction(truth)(x), EXACT)


def test_an_alternative_that_passes_is_a_power_failure():
    exc, row = run_row(prop_weak)
    assert isinstance(exc, NoPower) and "disguised_truth" in str(exc)
    v = verdict_for(C_WEAK, [row])
    assert v["verdict"] == "not-audited"
    assert not v["alternatives"][0]["rejected"]


C_LEGACY = claim("harness.legacy")


@audits("harness.legacy")
@CI3
@given(x=XS)
def prop_legacy(x):
    y = simulate(x)
    # a control computed from the observed value: rejected whenever the check passes
    check_close("harness.legacy", y, truth(x), EXACT, control=-y)


def test_an_observed_derived_control_does_not_show_power():
    exc, row = run_row(prop_legacy)
    assert exc is None and row["draws"] >= MIN_DRAWS
    v = verdict_for(C_LEGACY, [row])
    assert v["verdict"] == "not-audited" and NO_POWER in v["detail"]


C_WRONGKIND = claim("harness.wrongkind", (null("as_prediction", halved, "a null in a theory slot",
                                               replaces="prediction"),))


@audits("harness.wrongkind")
@CI3
@given(x=XS)
def prop_wrongkind(world, x):
    check_close("harness.wrongkind", simulate(x), world.prediction(truth)(x), EXACT)


def test_a_null_cannot_replace_a_prediction():
    exc, _ = run_row(prop_wrongkind)
    assert isinstance(exc, PropertyError) and "rival is needed" in str(exc)


C_UNUSED = claim("harness.unused", (rival("other_slot", halved, "slot never asked for",
                                          replaces="exponent"),))


@audits("harness.unused")
@CI3
@given(x=XS)
def prop_unused(world, x):
    check_close("harness.unused", simulate(x), world.prediction(truth)(x), EXACT)


def test_an_alternative_the_property_never_runs_shows_no_power():
    exc, _ = run_row(prop_unused)
    assert isinstance(exc, NoPower) and "replaces a slot" in str(exc)


def test_pure_simulations_are_computed_once_per_draw():
    calls = []

    def sim(x):
        calls.append(x)
        return 2.0 * x

    cid = "harness.memo"
    claim(cid, (rival("dropped_factor", halved, "drops the factor 2"),))

    @audits(cid)
    @settings(max_examples=4, database=None, derandomize=True, deadline=None)
    @given(x=XS)
    def prop(world, x):
        y = world.simulation(sim, pure=True)(np.array([x]))
        check_close(cid, y, world.prediction(truth)(np.array([x])), EXACT)

    exc, row = run_row(prop)
    assert exc is None
    assert len(calls) == row["draws"]  # the rival reused the claim world's run


# --- draws and printed forms -----------------------------------------------------------------
C_FEW = claim("harness.few", (rival("dropped_factor", halved, "drops the factor 2"),))


@audits("harness.few")
@settings(max_examples=1, database=None, derandomize=True, deadline=None)
@given(x=XS)
def prop_few(world, x):
    check_close("harness.few", simulate(x), world.prediction(truth)(x), EXACT)


def test_one_draw_is_not_enough_for_holds():
    exc, row = run_row(prop_few)
    assert exc is None and row["draws"] == 1
    v = verdict_for(C_FEW, [row])
    assert v["verdict"] == "not-audited" and "too few draws" in v["detail"]


def test_draws_are_distinct_parameter_draws_not_calls():
    cid = "harness.constant"
    claim(cid, (rival("dropped_factor", halved, "drops the factor 2"),))
    seen = []

    @audits(cid)
    @settings(max_examples=10, database=None, derandomize=True, deadline=None)
    @given(x=st.sampled_from([1.0, 3.0]))
    def prop(world, x):
        seen.append(x)
        check_close(cid, simulate(x), world.prediction(truth)(x), EXACT)

    exc, row = run_row(prop)
    assert exc is None and row["draws"] == len(set(seen)) == 2 < len(seen) + 1


C_PRINTED = claim("harness.printed_fails", corrected="y = 2x for x < 5", reason="synthetic")


@audits("harness.printed_fails", fails="y = 2x fails beyond 5")
@settings(max_examples=30, database=None, derandomize=True, deadline=None)
@example(x=6.0)
@example(x=7.0)
@example(x=1.0)
@given(x=XS)
def prop_printed_fails(x):
    y = simulate(x) + (1.0 if x > 5 else 0.0)
    check_close("harness.printed_fails", y, truth(x), EXACT)


def test_a_printed_form_expected_to_fail_runs_all_draws_and_lists_them():
    exc, row = run_row(prop_printed_fails)
    assert isinstance(exc, ClaimMismatch)
    assert row["mismatched_draws"] >= 2 and "x=6.0" in str(exc) and "x=7.0" in str(exc)
    assert row["draws"] > row["mismatched_draws"]  # it went on after the first mismatch


C_CRASH = claim("harness.crash")


@audits("harness.crash", fails="synthetic")
@settings(max_examples=5, database=None, derandomize=True, deadline=None)
@example(x=6.0)
@example(x=2.0)
@given(x=XS)
def prop_crash_after_mismatch(x):
    if x < 5:
        raise RuntimeError("the simulation crashed on this draw")
    check_close("harness.crash", simulate(x) + 1.0, truth(x), EXACT)


def test_a_crash_after_a_mismatch_surfaces():
    exc, row = run_row(prop_crash_after_mismatch)
    # not a ClaimMismatch, so the strict xfail (raises=ClaimMismatch) does not accept it
    assert not isinstance(exc, ClaimMismatch)
    assert "crashed" in str(exc) or isinstance(exc, BaseExceptionGroup)
    assert row["failing_draw"] is not None


# --- property errors -------------------------------------------------------------------------
claim("harness.nocheck")


@audits("harness.nocheck")
@CI3
@given(x=XS)
def prop_nocheck(x):
    if x > 100:  # never: the property checks nothing
        check_close("harness.nocheck", x, x, EXACT)


def test_a_property_that_checks_nothing_is_an_error():
    exc, _ = run_row(prop_nocheck)
    assert isinstance(exc, PropertyError) and "made no check" in str(exc)


@audits("harness.never_registered")
@CI3
@given(x=XS)
def prop_unregistered(x):
    check_close("harness.never_registered", x, x, EXACT)


def test_a_property_of_an_unregistered_claim_is_an_error():
    exc, _ = run_row(prop_unregistered)
    assert isinstance(exc, PropertyError) and "no Claim registers" in str(exc)


# --- verdict rules on rows -------------------------------------------------------------------
def _row(form, outcome, failure, **kw):
    r = {"claim": "harness.power", "form": form, "outcome": outcome, "failure": failure,
         "nodeid": f"t::{form}_{outcome}", "seconds": 0.1, "messages": [], "records": {},
         "draws": 5, "takes_world": True, "thresholds": [],
         "alternatives": [{"name": "dropped_factor", "kind": "rival", "draws": 5,
                           "rejected_draws": 5, "rejected": True},
                          {"name": "untrained", "kind": "null", "draws": 5,
                           "rejected_draws": 5, "rejected": True}]}
    r.update(kw)
    return r


def test_a_deciding_property_needs_an_explicit_example():
    v = verdict_for(C_POWER, [_row("printed", "passed", "none", hypothesis=True,
                                   explicit_examples=0)])
    assert v["verdict"] == "not-audited" and "explicit @example" in v["detail"]
    assert verdict_for(C_POWER, [_row("printed", "passed", "none", hypothesis=True,
                                      explicit_examples=1)])["verdict"] == "holds"


def test_skipped_printed_forms_are_not_holds():
    rows = [_row("printed", "skipped", "skipped", messages=["GPU only"]),
            _row("corrected", "passed", "none")]
    assert verdict_for(C_POWER, rows)["verdict"] == "not-audited"


def test_outcomes_are_typed_not_matched_by_substring():
    # a mismatch message that does not name ClaimMismatch is still a mismatch ...
    assert verdict_for(C_POWER, [_row("printed", "failed", "mismatch", messages=["y != 2x"])]
                       )["verdict"] == "refuted"
    # ... and an error whose text mentions ClaimMismatch is still an error
    v = verdict_for(C_POWER, [_row("printed", "failed", "error",
                                   messages=["KeyError: 'ClaimMismatch'"])])
    assert v["verdict"] == "not-audited" and "KeyError" in v["detail"]


def test_several_distinct_failures_are_each_reported():
    v = verdict_for(C_POWER, [_row("printed", "failed", "error",
                                   messages=["ValueError: first", "ZeroDivisionError: second"])])
    assert "first" in v["detail"] and "second" in v["detail"]


def test_an_inconclusive_printed_form_is_not_audited_with_its_numbers():
    v = verdict_for(C_POWER, [_row("printed", "skipped", "inconclusive",
                                   messages=["1 size(s) only (16: 0.3)"])])
    assert v["verdict"] == "not-audited" and "16: 0.3" in v["detail"]
    assert "inconclusive" in v["detail"] and "all skipped" not in v["detail"]


def test_unstated_thresholds_block_holds():
    t = {"value": 0.1, "origin": "unstated", "false_fail": 0.0, "model": "a judgement"}
    v = verdict_for(C_POWER, [_row("printed", "passed", "none", thresholds=[t])])
    assert v["verdict"] == "not-audited" and "provenance" in v["detail"]


def test_an_erratum_needs_power_on_its_corrected_form():
    c = claim("harness.erratum", (rival("printed_form", halved, "the printed form"),),
              corrected="c", reason="r")
    alt = [{"name": "printed_form", "kind": "rival", "draws": 4, "rejected_draws": 4,
            "rejected": True}]
    rows = [_row("printed", "xfailed", "mismatch", claim=c.id, alternatives=[], takes_world=False),
            _row("corrected", "passed", "none", claim=c.id, alternatives=alt)]
    assert verdict_for(c, rows)["verdict"] == "erratum"
    rows[1] = dict(rows[1], takes_world=False, alternatives=[])
    v = verdict_for(c, rows)
    assert v["verdict"] == "not-audited" and NO_POWER in v["detail"]


def test_history_is_reported():
    c = claim("harness.history", (rival("dropped_factor", halved, "drops the factor 2"),),
              history=("2026-12-02: threshold 0.3 -> 0.2 after a draw gave 0.293",))
    v = verdict_for(c, [_row("printed", "passed", "none", claim=c.id,
                             alternatives=[{"name": "dropped_factor", "kind": "rival",
                                            "draws": 3, "rejected_draws": 3, "rejected": True}])])
    assert v["history"] == ["2026-12-02: threshold 0.3 -> 0.2 after a draw gave 0.293"]


# --- thresholds and the false-fail budget ----------------------------------------------------
def test_the_false_fail_sum_is_right():
    cid = "harness.budget"
    claim(cid, (rival("dropped_factor", halved, "drops the factor 2"),))
    # one check spends its whole rate over its comparisons: 1e-4 recorded per check (each
    # comparison is made at 5e-5, Bonferroni)
    tol = Tolerance.monte_carlo(1.0, false_fail=1e-4, comparisons=2)

    @audits(cid)
    @settings(max_examples=6, database=None, derandomize=True, deadline=None)
    @given(x=st.integers(1, 1000))  # x = 0 would make the rival coincide with the truth
    def prop(world, x):
        check_close(cid, 2.0 * x, world.prediction(truth)(x), tol)
        check_close(cid, 2.0 * x, world.prediction(truth)(x), EXACT)  # deterministic: 0

    exc, row = run_row(prop)
    assert exc is None
    calls = sum(r["examples"] for r in row["records"].values()) // 2
    assert math.isclose(row["false_fail"], calls * 1e-4, rel_tol=1e-12)
    rows = build({cid: W._claim(cid)}, {"tests": [row]})
    assert math.isclose(summary(rows)["false_fail_budget"], calls * 1e-4, rel_tol=1e-12)
    # a printed form expected to fail adds nothing to the budget
    assert summary(build({cid: W._claim(cid)}, {"tests": [dict(row, expected_failure="x")]})
                   )["false_fail_budget"] == 0


def test_thresholds_say_where_they_come_from():
    assert Tolerance.roundoff().origin == "derived" and Tolerance.roundoff().false_fail == 0
    mc = Tolerance.monte_carlo(0.1, false_fail=1e-3, comparisons=4)
    # the rate the check spends over its 4 comparisons, each at 2.5e-4 two-sided
    assert mc.origin == "derived" and math.isclose(mc.false_fail, 1e-3)
    assert math.isclose(mc.value, 0.1 * stats.norm.isf(2.5e-4 / 2))
    assert Tolerance(0.1, "a number").origin == "unstated"
    cal = Tolerance.calibrated([0.1, 0.3, 0.2, 0.25], calibration_seeds=range(10**6, 10**6 + 4),
                               audit_seeds=range(0, 10**6), noise="seed-to-seed error")
    assert cal.value == 0.3 and cal.origin == "calibrated" and math.isclose(cal.false_fail, 1 / 5)
    low = Tolerance.calibrated([0.9, 0.95, 0.97], calibration_seeds=range(100, 103),
                               audit_seeds=range(0, 100), side="lower", rank=1,
                               noise="a null's spread")
    assert low.value == 0.9
    with pytest.raises(ValueError, match="disjoint"):
        Tolerance.calibrated([0.1], calibration_seeds=range(0, 10), audit_seeds=range(5, 20),
                             noise="x")
    with pytest.raises(ValueError, match="rank"):
        Tolerance.calibrated([0.1], calibration_seeds=range(0, 1), audit_seeds=range(5, 20), rank=2,
                             noise="x")
    with pytest.raises(ValueError, match="origin"):
        Threshold(0.1, "m", origin="guessed")
    with pytest.raises(ValueError, match="false_fail"):
        Threshold(0.1, "m", "derived", false_fail=1.5)


# --- check_order and check_trend -------------------------------------------------------------
def test_an_exact_claim_passes_check_order():
    hs = [0.1, 0.05, 0.025, 0.0125]
    assert math.isnan(check_order("harness.x", hs, [0.0, 1e-17, 0.0, 3e-18], 1.0))
    assert abs(check_order("harness.x", hs, hs, 1.0) - 1.0) < 1e-12
    with pytest.raises(ClaimMismatch):
        check_order("harness.x", hs, [h ** 2 for h in hs], 1.0)


def test_check_trend_decides_by_three_sizes_or_not_at_all():
    n = np.array([16.0, 32.0, 64.0, 128.0])
    rng = np.random.default_rng(5)
    y = 3.0 * n ** -0.5 * np.exp(rng.normal(0, 0.01, n.size))
    t = check_trend("harness.x", n, y, exponent=-0.5)
    assert abs(t.slope + 0.5) < 0.05
    with pytest.raises(ClaimMismatch):  # the rival exponent -1 is rejected on the same data
        check_trend("harness.x", n, y, exponent=-1.0)
    with pytest.raises(ClaimMismatch):  # a rival direction too
        check_trend("harness.x", n, y, direction="increasing")
    check_trend("harness.x", n, y, direction="decreasing")
    with pytest.raises(Inconclusive, match="at least three"):
        check_trend("harness.x", [32.0, 32.0], [0.5, 0.6], direction="decreasing")
    flat = np.array([1.0, 1.02, 0.98, 1.01])
    with pytest.raises(Inconclusive, match="not significantly"):
        check_trend("harness.x", n, flat, direction="decreasing")
    with pytest.raises(ValueError, match="exactly one"):
        check_trend("harness.x", n, y)


# --- end to end through pytest and the plugin ------------------------------------------------
SYNTHETIC = '''
from hypothesis import given, settings, example
from hypothesis import strategies as st
from properties import Claim, Tolerance, audits, check_close, register, rival

T = Tolerance.roundoff()
register(Claim(id="e2e.item", where="w", statement="s", assumptions="a", prediction="p",
               simulation="q", metric="m", tolerance="t", corrected="c", reason="r",
               alternatives=(rival("dropped", lambda x: x, "dropped factor 2"),)))
S = settings(max_examples=5, database=None, derandomize=True, deadline=None)

@audits("e2e.item", fails="printed form is off by one")
@S
@given(x=st.integers(0, 9))
def test_printed(x):
    check_close("e2e.item", 2 * x + 1, 2 * x, T)

@audits("e2e.item", form="corrected")
@S
@example(x=3)
@given(x=st.integers(1, 9))
def test_corrected(world, x):
    check_close("e2e.item", 2 * x, world.prediction(lambda v: 2 * v)(x), T)

@audits("e2e.item", form="corrected")
@settings(max_examples=5, database=None, derandomize=True, deadline=None,
          report_multiple_bugs=True)
@example(x=7)
@example(x=11)
@given(x=st.integers(1, 50))
def test_two_bugs(world, x):
    if x == 7:
        raise ValueError("first bug")
    if x == 11:
        raise ZeroDivisionError("second bug")
    check_close("e2e.item", 2 * x, world.prediction(lambda v: 2 * v)(x), T)
'''


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    d = tmp_path_factory.mktemp("e2e")
    (d / "test_synthetic.py").write_text(SYNTHETIC)
    raw = d / "raw.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HYPOTHESIS_PROFILE="ci")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "properties.plugin",
                           "-p", "no:cacheprovider", "--audit-raw", str(raw), "-o",
                           "addopts=", str(d / "test_synthetic.py")],
                          cwd=d, env=env, capture_output=True, text=True, timeout=300)
    return proc, {r["nodeid"].split("::")[-1]: r for r in json.loads(raw.read_text())["tests"]}


def test_plugin_types_outcomes(e2e):
    proc, rows = e2e
    assert rows["test_printed"]["outcome"] == "xfailed"
    assert rows["test_printed"]["failure"] == "mismatch"
    assert rows["test_corrected"]["failure"] == "none" and rows["test_corrected"]["draws"] >= 3
    assert rows["test_corrected"]["alternatives"][0]["rejected"]
    assert "false-fail budget" in proc.stdout


def test_plugin_keeps_every_message_of_an_exception_group(e2e):
    _, rows = e2e
    r = rows["test_two_bugs"]
    assert r["failure"] == "error"
    text = " ".join(r["messages"])
    assert "first bug" in text and "second bug" in text
    v = verdict_for(None, [r])
    assert "first bug" in v["detail"] and "second bug" in v["detail"]


def test_an_asymptotic_claim_is_not_decided_at_one_size():
    c = claim("harness.asym", (rival("dropped_factor", halved, "drops the factor 2"),),
              asymptotic="d")
    one_size = _row("printed", "passed", "none", claim=c.id, trends=0,
                    alternatives=[{"name": "dropped_factor", "kind": "rival", "draws": 3,
                                   "rejected_draws": 3, "rejected": True}])
    v = verdict_for(c, [one_size])
    assert v["verdict"] == "not-audited" and "asymptotic in d" in v["detail"]
    # against the paper at one size: not refuted either
    v = verdict_for(c, [dict(one_size, outcome="xfailed", failure="mismatch")])
    assert v["verdict"] == "not-audited" and "would be refuted" in v["detail"]
    # a trend decides it
    assert verdict_for(c, [dict(one_size, trends=1)])["verdict"] == "holds"
    assert verdict_for(c, [dict(one_size, trends=1, outcome="xfailed", failure="mismatch")]
                       )["verdict"] == "refuted"


def test_check_trend_is_counted_for_the_policy():
    cid = "harness.trend"
    claim(cid, (rival("exponent_one", lambda: -1.0, "exponent -1 instead of -1/2",
                      replaces="exponent"),), asymptotic="n")

    @audits(cid)
    @settings(max_examples=3, database=None, derandomize=True, deadline=None)
    @example(seed=0)
    @given(seed=st.integers(0, 2**31 - 1))
    def prop(world, seed):
        n = np.array([16.0, 32.0, 64.0, 128.0])  # 8 seeds x 4 sizes: seed-clustered t
        y = n ** -0.5 * np.exp(np.random.default_rng(seed).normal(0, 0.01, (8, n.size)))
        check_trend(cid, n, y, exponent=world.prediction(lambda: -0.5, "exponent")(),
                    false_fail=1e-5)

    exc, row = run_row(prop)
    assert exc is None and row["trends"] >= 3
    assert verdict_for(W._claim(cid), [row])["verdict"] == "holds"


def test_a_refutation_against_an_unstated_threshold_is_not_earned():
    t = {"value": 0.9, "origin": "unstated", "false_fail": 0.0, "model": "'high' read as 0.9"}
    v = verdict_for(C_POWER, [_row("printed", "xfailed", "mismatch", thresholds=[t])])
    assert v["verdict"] == "not-audited" and "would be refuted" in v["detail"]
    t = dict(t, origin="derived")
    assert verdict_for(C_POWER, [_row("printed", "xfailed", "mismatch", thresholds=[t])]
                       )["verdict"] == "refuted"


def test_st_data_draws_are_counted_by_what_was_drawn_and_not_replayed():
    cid = "harness.data"
    claim(cid)

    @audits(cid)
    @settings(max_examples=5, database=None, derandomize=True, deadline=None)
    @given(data=st.data())
    def prop(data):
        x = data.draw(st.integers(1, 1000))
        check_close(cid, simulate(x), truth(x), EXACT)

    exc, row = run_row(prop)
    assert exc is None and row["draws"] >= 3  # distinct by the drawn values, not one repr

    cid2 = "harness.data_world"
    claim(cid2, (rival("dropped_factor", halved, "drops the factor 2"),))

    @audits(cid2)
    @settings(max_examples=3, database=None, derandomize=True, deadline=None)
    @given(data=st.data())
    def prop2(world, data):
        x = data.draw(st.integers(1, 1000))
        check_close(cid2, simulate(x), world.prediction(truth)(x), EXACT)

    exc, _ = run_row(prop2)
    assert isinstance(exc, PropertyError) and "st.data()" in str(exc)


def test_a_property_inconclusive_on_every_draw_is_inconclusive_not_a_power_failure():
    cid = "harness.all_inconclusive"
    claim(cid, (rival("exponent_one", lambda: -1.0, "exponent -1", replaces="exponent"),),
          asymptotic="n")

    @audits(cid)
    @settings(max_examples=3, database=None, derandomize=True, deadline=None)
    @given(seed=st.integers(0, 100))
    def prop(world, seed):
        check_trend(cid, [16.0], [0.3], exponent=world.prediction(lambda: -0.5, "exponent")())

    exc, row = run_row(prop)
    assert isinstance(exc, Inconclusive) and "three" in str(exc.msg)
    assert verdict_for(W._claim(cid), [row])["verdict"] == "not-audited"


def test_parse_draw_reads_the_reports_draws_and_refuses_what_cannot_be_replayed():
    from properties.world import parse_draw

    assert parse_draw("seed=11, cfg=(1, 2.0, 'x')") == {"seed": 11, "cfg": (1, 2.0, "x")}
    for bad in ("seed=np.float64(1.0)", "seed=1, cfg=(1, 2...", "11", "data=data(...)"):
        with pytest.raises(ValueError, match="THEOREM_AUDIT_DRAW"):
            parse_draw(bad)


def test_thorough_profile_keeps_counterexamples_in_a_shared_directory(tmp_path, monkeypatch):
    from hypothesis.database import DirectoryBasedExampleDatabase

    from properties import plugin

    monkeypatch.setenv(plugin.EXAMPLE_DB_ENV, str(tmp_path / "db"))
    db = plugin.thorough_database()
    assert isinstance(db, DirectoryBasedExampleDatabase) and str(db.path) == str(tmp_path / "db")
    db.save(b"key", b"value")
    assert list(plugin.thorough_database().fetch(b"key")) == [b"value"]  # another process/shard
    assert settings.get_profile("ci").database is None  # ci stays derandomized, no database


def test_the_report_shows_each_trends_sizes_values_and_fitted_slope():
    from properties import check
    from properties import report as rep

    sink = check.Sink()
    with check.recording(sink):
        check.check_trend("harness.power", [4, 16, 64], [2.0, 4.1, 7.9], exponent=0.5,
                          allowance=Tolerance.derived(0.05, "finite-size term"), what="ratio vs m")
    assert len(sink.trend_log) == 1 and sink.trend_log[0]["what"] == "ratio vs m"
    assert abs(sink.trend_log[0]["slope"] - 0.5) < 0.02
    row = verdict_for(C_POWER, [_row("printed", "passed", "none", trends=1,
                                     trend_log=sink.trend_log)])
    assert row["trend_fits"][0]["sizes"] == [4.0, 16.0, 64.0]
    md = rep.markdown([row], "ci", {})
    assert "**Trends**" in md and "ratio vs m: slope 0.4" in md and "expected exponent 0.5" in md
