"""The harness's power and resolution rules, on tiny synthetic claims: an alternative that
returns the claim world's own run is none; the resolution perturbs the declared theory/ function
where the deciding checks call it; a check the perturbation moves but never rejects is not
resolved; a rival within the check's tolerance, or a refinement that passes a draw, is not told
apart (not a survival, not a power failure); a bound shows its loosest slack.  The procedures'
own rates and detected departures are in tests/test_procedures.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory.topic as _tt
from properties import check as C
from properties import procedures as P
from properties import world as W
from properties.cache import run_cache
from properties.check import Tolerance
from properties.registry import REGISTRY, Claim, null, register
from properties.report import NO_CHECK_POWER, NO_POWER, verdict_for


# --- an alternative that returns what the claim's world computed ----------------------------
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


# --- the declared closed form is what the resolution perturbs -------------------------------


for _cid in ("proc.closed_form", "proc.copy"):
    if _cid not in REGISTRY:
        register(Claim(id=_cid, where="-", statement="s", assumptions="a",
                       prediction="theory.topic.c3", simulation="s", metric="m", tolerance="t",
                       alternatives=(null("off", lambda: 0.0, "no signal", replaces="run"),)))

C3 = _tt.c3(0.15, 0.1, 0.1)


@W.audits("proc.closed_form")
@settings(max_examples=3, database=None, derandomize=True, deadline=None)
@given(k=st.integers(0, 10))
def prop_calls_theory(world, k):
    obs = world.simulation(lambda: C3 * (1 + 0.01 * k / 10), "run")()
    C.check_close("proc.closed_form", obs, _tt.c3(0.15, 0.1, 0.1),  # the declared function
                  Tolerance.derived(0.02 * C3, "2%"), name="c3")


@W.audits("proc.copy")
@settings(max_examples=3, database=None, derandomize=True, deadline=None)
@given(k=st.integers(0, 10))
def prop_calls_copy(world, k):
    obs = world.simulation(lambda: C3 * (1 + 0.01 * k / 10), "run")()
    C.check_close("proc.copy", obs, 1.1560693641618498, Tolerance.derived(0.02 * C3, "2%"),
                  name="c3")
    _tt.c3(0.15, 0.1, 0.1)  # called (the trace sees it), but the check uses the copy


def test_the_resolution_perturbs_the_declared_theory_function_where_it_is_called():
    prop_calls_theory(world=W.WORLD_PLACEHOLDER)
    res = W.pop_last_run().as_row()["resolution"]
    assert res["mode"] == "closed form" and res["per_check"]["check_close c3"]["up"] == 0.03
    prop_calls_copy(world=W.WORLD_PLACEHOLDER)
    res = W.pop_last_run().as_row()["resolution"]
    assert res["mode"] == "closed form" and res.get("no_dependence")
    assert res["independent"] == ["check_close c3"]


# --- the resolution a check earns: a loose check, a close rival, a refinement -------------
if "proc.loose" not in REGISTRY:
    register(Claim(id="proc.loose", where="-", statement="s", assumptions="a",
                   prediction="theory.topic.c3", simulation="s", metric="m", tolerance="t",
                   alternatives=(null("off", lambda: -1e4, "no signal", replaces="run"),)))


@W.audits("proc.loose")
@settings(max_examples=3, database=None, derandomize=True, deadline=None)
@given(k=st.integers(0, 10))
def prop_loose_check(world, k):
    obs = world.simulation(lambda: 7.0 + k, "run")()
    C.check_close("proc.loose", obs, _tt.c3(0.15, 0.1, 0.1) + 5.0,
                  Tolerance.derived(1e3, "a tolerance far looser than the closed form"),
                  name="loose")


def test_a_check_that_moves_with_the_closed_form_but_is_never_rejected_is_not_resolved():
    from properties.report import resolution_cell
    prop_loose_check(world=W.WORLD_PLACEHOLDER)
    row = W.pop_last_run().as_row()
    assert row["resolution"]["unresolved"] == ["check_close loose"]
    row.update(nodeid="t::prop_loose_check", form="printed", outcome="passed", failure="none",
               hypothesis=True, explicit_examples=1, seconds=0.0)
    v = verdict_for(REGISTRY["proc.loose"], [row])
    # the JSON and the README cell say the same
    assert v["resolution"]["why"].startswith("not resolved")
    assert resolution_cell(v) == "not resolved"


# --- a rival within the check's tolerance of the claim's own prediction ---------------------
if "proc.close_rival" not in REGISTRY:
    register(Claim(id="proc.close_rival", where="-", statement="s", assumptions="a",
                   prediction="p", simulation="s", metric="m", tolerance="t",
                   alternatives=(W.rival("near", lambda x: x + (0.5 if x == 3 else 10.0),
                                         "off by 10, but by 0.5 at x = 3", replaces="pred"),)))


@W.audits("proc.close_rival")
@settings(max_examples=4, database=None, derandomize=True, deadline=None)
@given(x=st.sampled_from([1, 2, 3, 4]))
def prop_close_rival(world, x):
    C.check_close("proc.close_rival", float(x), world.prediction(lambda x: float(x), "pred")(x),
                  Tolerance.derived(1.0, "a unit tolerance"), name="c")


def test_a_rival_within_the_checks_tolerance_of_the_claim_is_not_told_apart_not_a_survival():
    prop_close_rival(world=W.WORLD_PLACEHOLDER)  # no NoPower: the close draw is not a pass
    (alt,) = W.pop_last_run().as_row()["alternatives"]
    assert alt["not_told_apart"] >= 1 and alt["survived"] == 0 and alt["told_apart"]
    assert "within twice the check's tolerance" in alt["close_messages"][0]


# --- a refinement: a rival whose region lies inside the claim's (a tighter bound) -----------
def _lower_bound_claim(cid, alt):
    if cid not in REGISTRY:
        register(Claim(id=cid, where="-", statement="x >= 0", assumptions="a", prediction="p",
                       simulation="s", metric="m", tolerance="t", alternatives=(alt,)))

    @W.audits(cid)
    @settings(max_examples=3, database=None, derandomize=True, deadline=None)
    @given(x=st.sampled_from([0.5, 2.0, 3.0]))
    def prop(world, x):
        lo = world.prediction(lambda: 0.0, "lo")()
        C.check_at_least(cid, x - lo, Tolerance.roundoff(), name="lower")

    return prop


def _raised(): return 1.0


def test_a_refinement_that_passes_a_draw_is_not_told_apart_there_not_a_power_failure():
    """A lower bound's closest mistake is a higher bound: it is rejected where the measurement
    falls between the two (x = 0.5), and where it lies above both (x = 2, 3) that draw does not
    tell them apart; declared with `rival` instead, the same passes are a power failure."""
    from properties import NoPower, refinement

    prop = _lower_bound_claim("proc.refined", refinement("raised", _raised, "bound 1",
                                                         replaces="lo"))
    prop(world=W.WORLD_PLACEHOLDER)  # no NoPower
    (alt,) = W.pop_last_run().as_row()["alternatives"]
    assert alt["draws"] == 3 and alt["rejected_draws"] == 1 and alt["survived"] == 0
    assert alt["not_told_apart"] == 2 and alt["told_apart"] and not alt["rejected"]
    assert "refinement" in alt["close_messages"][0]
    plain = _lower_bound_claim("proc.refined_as_rival", W.rival("raised", _raised, "bound 1",
                                                                replaces="lo"))
    with pytest.raises(NoPower, match="passed the property on 2 of 3"):
        plain(world=W.WORLD_PLACEHOLDER)
    W.pop_last_run()


def test_a_refinement_is_a_rival():
    from properties import refinement
    from properties.outcomes import Refinement

    with pytest.raises(ValueError, match="refines nothing"):
        Refinement("n", "null", "run", _raised, "a null")
    assert refinement("r", _raised, "src").label == "rival:r"


# --- a bound's slack and the resolution row -----------------------------------------------
def test_a_bound_slack_is_its_largest_across_draws_and_the_verdict_shows_the_loosest_bound():
    """Within a draw a check's slack is its smallest; across draws (one sink per draw merged
    into the run's) the largest, since the tightened bound is rejected on every draw only
    beyond it; the verdict's cell shows the loosest of its deciding bounds (the weakest check,
    issue 34), not the tightest."""
    run = C.Sink()
    for vals in ([0.5, 0.7], [0.2, 0.4]):
        draw = C.Sink()
        with C.recording(draw):
            P.check_bound("proc.bound", vals, 1.0, name="b")
        run.merge(draw)
    assert run.slack["check_bound b"] == pytest.approx(0.6)
    from properties.evidence import _resolution
    rows = [{"nodeid": "f.py::t_tight", "resolution": None, "slack": {"check_bound a": 0.05}},
            {"nodeid": "f.py::t_loose", "resolution": None, "slack": {"check_bound b": 0.6}}]
    out = _resolution("holds", rows)
    assert out["bound_slack"]["slack"] == pytest.approx(0.6)
    assert out["bound_slack"]["check"] == "check_bound b"


def test_resolution_row_with_unresolved_one_sided_and_two_sided_checks_together():
    """An unresolved check beside a two-sided and a one-sided one (was KeyError 'one_sided'):
    the row names the unresolved check and keeps the resolved checks' parts, for the evidence
    to excuse the unresolved one where it states its own resolution (a trend, a bound)."""
    r = W.Run("proc.mixed", "printed", None, False)
    inf = float("inf")
    r.resolution = [{"mode": "closed form", "checks": ["two", "one", "none"], "independent": [],
                     "up": {"two": 0.1, "one": 0.2, "none": inf},
                     "down": {"two": 0.1, "one": inf, "none": inf}}] * 3
    out = r.resolution_row()
    assert out["unresolved"] == ["none"] and out["delta"] == pytest.approx(0.1)
    assert out["one_sided"]["check"] == "one" and "not rejected" in out["why"]
