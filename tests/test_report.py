"""Verdict rules of properties.report, on synthetic per-property rows."""

import pytest

from properties.check import (
    ClaimMismatch,
    NoPower,
    Tolerance,
    check_at_least,
    check_close,
    check_order,
)
from properties.registry import Claim, register
from properties import report as rep
from properties.report import build, table, verdict_for
from properties.world import rival

CLAIM = Claim(id="demo.claim", where="Thm 0", statement="s", assumptions="a", prediction="p",
              simulation="q", metric="m", tolerance="t", corrected="c", reason="r",
              alternatives=(rival("printed_form", lambda x: x, "the printed form"),))
_FAILURE = {"passed": "none", "xfailed": "mismatch", "skipped": "skipped"}


def row(form, outcome, msg="", err=1e-3, tol=1e-2, failure=None):
    return {"claim": "demo.claim", "form": form, "outcome": outcome, "message": msg,
            "messages": [msg] if msg else [],
            "failure": failure or _FAILURE.get(outcome, "mismatch" if "ClaimMismatch" in msg
                                               else "error"),
            "nodeid": f"x::test_{form}_{outcome}", "seconds": 0.5, "draws": 3,
            "takes_world": True, "thresholds": [],
            "alternatives": [{"name": "printed_form", "kind": "rival", "draws": 3,
                              "rejected_draws": 3, "rejected": True}],
            "records": {"demo.claim": {"max_error": err, "tolerance": tol, "examples": 3,
                                       "min_control_error": 1.0, "kind": "error<=tol"}}}


@pytest.mark.parametrize("rows,verdict", [
    ([row("printed", "passed")], "holds"),
    ([row("printed", "xfailed", "ClaimMismatch: x", 1.0), row("corrected", "passed")], "erratum"),
    ([row("printed", "xfailed", "ClaimMismatch: x", 1.0)], "refuted"),
    ([row("printed", "failed", "properties.check.ClaimMismatch: x", 1.0)], "refuted"),
    ([row("printed", "xfailed", "ClaimMismatch", 1.0), row("corrected", "failed", "ClaimMismatch")], "refuted"),
    ([row("printed", "failed", "NoPower: control not rejected")], "not-audited"),
    ([row("printed", "skipped", "thorough profile only")], "not-audited"),
    ([], "not-audited"),
])
def test_verdicts(rows, verdict):
    assert verdict_for(CLAIM, rows)["verdict"] == verdict


def test_erratum_headline_error_is_the_corrected_forms():
    r = verdict_for(CLAIM, [row("printed", "xfailed", "ClaimMismatch", 5.0), row("corrected", "passed", err=2e-3)])
    assert r["max_error"] == 2e-3 and r["printed_error"]["error"] == 5.0
    assert r["draws"] == 3


def test_unregistered_claims_are_reported_and_table_counts():
    rows = build({}, {"tests": [row("printed", "passed")]})
    assert rows[0]["id"] == "demo.claim" and "unregistered" in rows[0]["detail"]
    assert rows[0]["verdict"] == "not-audited" and "not-audited: 1" in table(rows)
    assert "holds: 1" in table(build({"demo.claim": CLAIM}, {"tests": [row("printed", "passed")]}))


def test_checks_raise_and_demand_power():
    with pytest.raises(ClaimMismatch):
        check_close("demo.x", [1.0], [2.0], Tolerance(0.1, "m"))
    with pytest.raises(NoPower):
        check_close("demo.x", [1.0], [1.0], Tolerance(0.1, "m"), control=[1.05])
    with pytest.raises(ClaimMismatch):
        check_at_least("demo.x", 0.5, 0.9, "m")
    with pytest.raises(NoPower):
        check_at_least("demo.x", 0.95, 0.9, "m", control=0.92)
    hs = [0.1, 0.05, 0.025, 0.0125]
    assert abs(check_order("demo.x", hs, [h for h in hs], 1.0, control_errors=[1.0] * 4) - 1) < 1e-12
    with pytest.raises(NoPower):  # a legacy control with the same order is still refused
        check_order("demo.x", hs, hs, 1.0, control_errors=[2 * h for h in hs])
    with pytest.raises(ClaimMismatch):
        check_order("demo.x", hs, [h ** 2 for h in hs], 1.0)
    with pytest.raises(ValueError):
        Tolerance(0.0, "m")
    with pytest.raises(ValueError):
        Tolerance.monte_carlo(1.0, false_fail=2.0)


def test_registry_rejects_conflicting_ids():
    register(CLAIM)
    register(CLAIM)  # same content: fine
    with pytest.raises(ValueError, match="already registered"):
        register(Claim(id="demo.claim", where="other", statement="s", assumptions="a",
                       prediction="p", simulation="q", metric="m", tolerance="t"))
    with pytest.raises(ValueError, match="paper.item"):
        Claim(id="nodot", where="", statement="", assumptions="", prediction="", simulation="",
              metric="", tolerance="")


def test_a_claim_with_an_audit_gap_is_never_holds():
    gap = Claim(id="demo.gap", where="Sec 4", statement="drops then rebounds", assumptions="a",
                prediction="p", simulation="q", metric="m", tolerance="t",
                audit_gap="the rebound is not asserted")
    rows = [dict(row("printed", "passed"), claim="demo.gap")]
    r = verdict_for(gap, rows)
    assert r["verdict"] == "not-audited" and "rebound is not asserted" in r["detail"]
    assert verdict_for(gap, [])["verdict"] == "not-audited"


def _doc(rows, **meta):
    return dict({"commit": "0123456789abcdef", "dirty": False, "profile": "ci",
                 "interrupted": False, "claims": rows}, **meta)


def _readme_row(cid, verdict, **kw):
    return dict({"id": cid, "verdict": verdict, "draws": 3, "file": f"properties/{cid}.py",
                 "alternatives": [{"rejected": True}, {"rejected": verdict != "not-audited"}],
                 "false_fail": 1e-4, "reason": None, "detail": ""}, **kw)


def test_readme_tables_are_generated_between_the_markers_and_idempotent():
    rows = [_readme_row("joma.a", "holds"),
            _readme_row("joma.b", "erratum", reason="The printed constant is off by 2. More."),
            _readme_row("signgd.c", "not-audited", detail="power not shown by an alternative: x")]
    text = f"# T\n\nbefore\n\n{rep.README_BEGIN}\nold | table\n{rep.README_END}\n\nafter\n"
    new = rep.update_readme(text, _doc(rows))
    assert new.startswith("# T\n\nbefore\n\n") and new.endswith("\n\nafter\n")
    assert "old | table" not in new and rep.update_readme(new, _doc(rows)) == new
    assert "| `joma` | 1 | 1 | 0 | 0 | 0 | 0 |" in new and "| all | 1 | 1 | 0 | 0 | 1 | 0 |" in new
    assert "[`joma.b`](properties/joma.b.py) | **erratum** | 3 | 2/2 | - | none | The printed constant is off by 2. (more in audit.md) |" in new
    assert "| **not-audited** | 3 | 1/2 | - | none | power not shown by an alternative: x |" in new
    assert "`0123456789`" in new and "`ci` profile" in new
    assert "interrupted" in rep.update_readme(text, _doc(rows, interrupted=True))
    with pytest.raises(ValueError, match="markers"):
        rep.update_readme("# no markers\n", _doc(rows))


def test_readme_why_is_the_first_sentence_not_an_abbreviation_and_says_when_cut():
    f = rep._first_sentence
    assert f("Short and whole.") == "Short and whole."
    assert f("partially audited: the item (Fig. 8) is not run. More text.") == (
        "partially audited: the item (Fig. 8) is not run. (more in audit.md)")
    assert f("first segment is here | second") == "first segment is here (more in audit.md)"
    long = "word " * 200
    out = f(long)
    assert len(out) < rep.README_WHY_CHARS + 30 and out.endswith("... (more in audit.md)")


def test_readme_refuses_a_partial_interrupted_non_ci_or_conjecture_report():
    suite = {"joma.a", "joma.b", "signgd.c"}
    rows = [_readme_row(c, "holds") for c in sorted(suite)]
    assert rep.readme_refusal(_doc(rows), suite) is None
    assert rep.readme_refusal(_doc(rows[:2]), suite) is None  # every claim of joma: its table
    assert "partial" in rep.readme_refusal(_doc(rows[:1]), suite)  # joma.b is missing
    assert "--only 'joma.*'" in rep.readme_refusal(_doc(rows[:1] + rows[2:]), suite)
    assert "no claim" in rep.readme_refusal(_doc([]), suite)
    assert "interrupted" in rep.readme_refusal(_doc(rows, interrupted=True), suite)
    assert "'dev' profile" in rep.readme_refusal(_doc(rows, profile="dev"), suite)
    assert "not the suite's" in rep.readme_refusal(
        _doc(rows + [_readme_row("conjecture.x", "holds")]), suite)


def test_readme_command_refuses_a_partial_report_and_leaves_the_readme(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "audit.json").write_text(json.dumps(_doc([_readme_row("joma.a", "holds")])))
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{rep.README_BEGIN}\nkept\n{rep.README_END}\n")
    before = readme.read_text()
    r = subprocess.run([sys.executable, "-m", "properties", "readme", "--report", str(tmp_path),
                        "--readme", str(readme)], cwd=root, capture_output=True, text=True,
                       timeout=300, check=False,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    assert r.returncode == 2 and "the report is partial" in r.stderr, r.stderr
    assert readme.read_text() == before


def _mismatch_row(nodeid, msgs):
    return {"claim": "demo.claim", "form": "printed", "outcome": "xfailed", "failure": "mismatch",
            "nodeid": nodeid, "seconds": 0.1, "draws": len(msgs), "takes_world": True,
            "expected_failure": "printed form fails", "path": "/abs/conj.py",
            "function": nodeid.split("::")[-1], "messages": ["ClaimMismatch: x"],
            "mismatched_draws": len(msgs), "failing_draw": f"n={len(msgs) - 1}",
            "mismatches": [{"draw": f"n={i}", "message": m} for i, m in enumerate(msgs)],
            "records": {"demo.claim": {"max_error": -1.6e4, "tolerance": 0.0, "examples": 3,
                                       "min_control_error": None, "kind": "score>=tol"}}}


def test_failing_draws_are_all_listed_worst_first_and_rerun_shows_the_numbers():
    from properties.settings import PYTEST_INI

    msgs = ["c: score -482 < threshold 0 (x)", "c: score -1.6e+04 < threshold 0 (x)",
            "c: trend inconclusive", "c: score -3 < threshold 0 (x)"]
    r = verdict_for(CLAIM, [_mismatch_row("/abs/conj.py::test_p", msgs)])
    assert [f["draw"] for f in r["failing_draws"]] == ["n=1", "n=0", "n=3", "n=2"]
    assert r["failing_draws"][0]["message"] == msgs[1]  # the headline's draw comes first
    cmds = rep.rerun_commands(r, "ci")
    assert len(cmds) == 1 and "THEOREM_AUDIT_DRAW=n=1 " in cmds[0]  # the worst draw
    assert cmds[0].startswith("cd ") and "--runxfail" in cmds[0]
    assert f" -c {PYTEST_INI} --rootdir " in cmds[0] and cmds[0].endswith("/abs/conj.py::test_p")
    md = rep.markdown([dict(r, rerun=cmds)], "ci", {})
    assert "**Failing draws** (4, worst first):" in md and "--runxfail" in md
    assert "<th>why</th>" in rep.html([r], "ci", {}, ".")
    assert rep.badness("m: max_abs error 2.94e+03 > tolerance 5.16 (mc)") == pytest.approx(
        2940 / 5.16)


def test_tiny_floors_print_as_zero_and_the_table_names_profile_size_device():
    assert rep._fmt(1e-300) == "0" and rep._fmt(2.5e-12) == "2.5e-12"
    rows = build({}, {"tests": [row("printed", "passed")]})
    out = table(rows, {"profile": "ci", "size": "ladder", "device": "cpu", "commit": "abc"})
    assert out.splitlines()[0] == "audit: profile ci, size ladder, device cpu, commit abc"


def test_a_typod_claim_id_is_a_broken_row_with_close_matches():
    typo = dict(row("printed", "failed", "PropertyError: the property audits 'demo.claimm', "
                                         "which no Claim registers", failure="error"),
                claim="demo.claimm")
    rows = build({"demo.claim": CLAIM}, {"tests": [typo]}, selected=lambda i: i == "demo.claim")
    bad = {r["id"]: r for r in rows}["demo.claimm"]
    assert "did you mean 'demo.claim'" in bad["detail"] and "no Claim registers" in bad["detail"]
    assert "broken: demo.claimm" in table(rows)
    assert "a property audits 'demo.claimm'" in {r["id"]: r for r in rows}["demo.claim"]["detail"]


def test_the_ladder_block_shows_where_the_ladder_decides_otherwise_and_stamps_both_reports():
    ci_rows = [_readme_row("joma.a", "holds"), _readme_row("topic.b", "holds"),
               _readme_row("signgd.c", "not-audited", detail="inconclusive at ci")]
    lad_rows = [_readme_row("topic.b", "not-audited", detail="no power at T = v = 10. More."),
                _readme_row("signgd.c", "not-audited", detail="inconclusive at the ladder")]
    ci_doc = _doc(ci_rows, size="ci")
    lad_doc = _doc(lad_rows, size="ladder", commit="fedcba9876543210")
    text = f"# T\n\n{rep.README_BEGIN}\nold\n{rep.README_END}\n\nafter\n"
    new = rep.update_readme(text, ci_doc, lad_doc)
    block = new[new.index(rep.LADDER_BEGIN):new.index(rep.LADDER_END)]
    assert new.index(rep.README_END) < new.index(rep.LADDER_BEGIN) and new.endswith("\n\nafter\n")
    assert "`fedcba9876`" in block and "`0123456789`" in block and "size `ladder`" in block
    assert ("| [`topic.b`](properties/topic.b.py) | **holds** | **not-audited** | 3 | 1/2 | - | "
            "no power at T = v = 10. (more in audit.md) |") in block
    assert "`signgd.c` (not-audited)" in block and "| [`signgd.c`]" not in block
    assert "2 claims run at the ladder, 1 with another verdict" in block
    assert "Not run at the ladder at this code: `joma` (1 claims)" in block
    assert "#### `topic.*` at `--size ladder`" in block and "#### `joma.*` at" not in block
    from properties.readme import ladder_stamps
    assert set(ladder_stamps(new)) == {"signgd", "topic"}
    # idempotent with both reports; without a ladder report the block is kept as it was
    assert rep.update_readme(new, ci_doc, lad_doc) == new
    assert rep.update_readme(new, ci_doc) == new
    with pytest.raises(ValueError, match="LADDER"):
        rep.update_readme(new.replace(rep.LADDER_END, ""), ci_doc, lad_doc)


def test_the_ladder_block_refuses_a_report_that_is_not_a_ci_profile_ladder_audit():
    suite = {"joma.a", "topic.b", "signgd.c"}
    rows = [_readme_row("topic.b", "holds")]
    assert rep.ladder_refusal(_doc(rows, size="ladder"), suite) is None  # partial is fine
    assert "not `ladder`" in rep.ladder_refusal(_doc(rows, size="ci"), suite)
    assert "'dev' profile" in rep.ladder_refusal(_doc(rows, size="ladder", profile="dev"), suite)
    assert "interrupted" in rep.ladder_refusal(_doc(rows, size="ladder", interrupted=True), suite)
    assert "no claim" in rep.ladder_refusal(_doc([], size="ladder"), suite)
    assert "not the suite's" in rep.ladder_refusal(
        _doc(rows + [_readme_row("conjecture.x", "holds")], size="ladder"), suite)
    # and the ci tables refuse a ladder report (it belongs in the ladder block)
    full = [_readme_row(c, "holds") for c in sorted(suite)]
    assert "--ladder-report" in rep.readme_refusal(_doc(full, size="ladder"), suite)


def test_readme_command_fills_the_ladder_block_and_refuses_a_ci_size_ladder_report(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    from properties.__main__ import load_registry
    from properties.registry import REGISTERED_IN

    # the suite's ids, as the command sees them: the claims registered under properties/, not
    # a unit test's
    suite = sorted(c for c in load_registry([]) if REGISTERED_IN.get(c, "").startswith("properties/"))
    ci, lad = tmp_path / "ci", tmp_path / "ladder"
    ci.mkdir()
    lad.mkdir()
    (ci / "audit.json").write_text(json.dumps(_doc([_readme_row(c, "holds") for c in suite],
                                                   size="ci")))
    (lad / "audit.json").write_text(json.dumps(_doc([_readme_row(suite[0], "not-audited")],
                                                    size="ladder")))
    from properties.readme import SUMMARY_BEGIN, SUMMARY_END

    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{SUMMARY_BEGIN}\nkept\n{SUMMARY_END}\n")
    tables = tmp_path / "docs" / "verdicts.md"

    def run(ladder_dir):
        return subprocess.run([sys.executable, "-m", "properties", "readme", "--report", str(ci),
                               "--ladder-report", str(ladder_dir), "--readme", str(readme)],
                              cwd=root, capture_output=True, text=True, timeout=300, check=False,
                              env=env)

    r = run(ci)  # a ci-size report as the ladder report: refused, README unchanged
    assert r.returncode == 2 and "not `ladder`" in r.stderr, r.stderr
    assert "kept" in readme.read_text() and not tables.exists()
    # malformed ladder reports: one line, exit 2, no traceback, the README unchanged
    bad = tmp_path / "bad"
    bad.mkdir()
    for text in ("not json {", "[1, 2]", '{"claims": 3}', json.dumps(_doc([{"verdict": "holds"}],
                 size="ladder")), json.dumps(_doc([{"id": suite[0]}], size="ladder"))):
        (bad / "audit.json").write_text(text)
        r = run(bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and "kept" in readme.read_text(), r.stderr
        assert "--ladder-report" in r.stderr or "readme:" in r.stderr, r.stderr  # never --report
    r = run(tmp_path / "nowhere")
    assert r.returncode == 2 and "--ladder-report" in r.stderr, r.stderr
    r = run(lad)
    assert r.returncode == 0, r.stderr
    text = tables.read_text()  # the tables and the ladder block: docs/verdicts.md
    assert rep.LADDER_BEGIN in text and f"[`{suite[0]}`](../" in text.split(rep.LADDER_BEGIN)[1]
    summary = readme.read_text()  # the README: its summary, at both sizes, linking the tables
    assert "kept" not in summary and "[docs/verdicts.md](docs/verdicts.md)" in summary
    paper = suite[0].split(".", 1)[0]
    assert f"| `{paper}` | ladder | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in summary


def _word_row(form, outcome, passes, worst, reading=None):
    r = row(form, outcome, "ClaimMismatch: x" if outcome == "xfailed" else "")
    r["readings"] = [{"word": "near 1/2", "kind": "error<=tol", "model": "m", "calls": 2,
                      "levels": {"level": 0.05, "stricter": 0.025, "looser": 0.1},
                      "passes": passes, "worst": worst, "worst_margin": 0.05 - worst}]
    if reading:
        r["reading"] = reading
    return r


def test_a_neighbouring_readings_rows_leave_the_literal_glossary_levels_alone():
    """The literal reading passes at every level of the word's bracket; a property under a
    neighbouring reading (another setting) fails at all of them: the claim is reading-dependent
    through that property, and the word's levels are the literal reading's (worst 0.01)."""
    ok = {"stricter": True, "level": True, "looser": True}
    bad = {"stricter": False, "level": False, "looser": False}
    r = verdict_for(CLAIM, [_word_row("printed", "passed", ok, 0.01),
                            _word_row("printed", "xfailed", bad, 0.45, reading="L = 2")])
    assert r["verdict"] == "reading-dependent"
    (word,) = r["readings"]
    assert word["worst"] == 0.01 and word["verdict_at"]["level"] == "passes"


def test_a_trend_refutation_stands_where_a_one_size_reading_flips():
    """A one-size check whose glossary word flips inside its bracket does not make a claim
    reading-dependent when another printed property refutes it by a trend over sizes that does
    not read that word; without the trend refutation, the flip decides."""
    flip = {"stricter": False, "level": False, "looser": True}
    one_size = _word_row("printed", "xfailed", flip, 0.078)
    trend = row("printed", "failed", "properties.check.ClaimMismatch: trend", 1.0)
    trend["nodeid"], trend["trend_mismatches"] = "x::test_ladder", 1
    r = verdict_for(CLAIM, [one_size, trend])
    assert r["verdict"] == "refuted"
    assert "every level of 'near 1/2''s bracket: test_ladder fails by a trend" in r["detail"]
    assert verdict_for(CLAIM, [one_size])["verdict"] == "reading-dependent"


def test_the_false_fail_shares_stay_within_the_goal():
    """Issue 34: the shares of the registered claims (CLAIM_SHARE each, a grant in its place)
    sum to at most FALSE_FAIL_GOAL; a grant names a registered claim and says why."""
    from properties.cli_common import load_registry
    from properties.policy import CLAIM_SHARE, FALSE_FAIL_GOAL, SHARE_GRANTS, share_of

    from properties.registry import paper_packages

    papers = set(paper_packages())
    # the suite's claims (a test worker's registry also holds the demo claims other tests add)
    registry = {i: c for i, c in load_registry([]).items() if i.split(".", 1)[0] in papers}
    assert sum(share_of(i) for i in registry) <= FALSE_FAIL_GOAL * (1 + 1e-12)
    for cid, (share, why) in SHARE_GRANTS.items():
        assert cid in registry and share > CLAIM_SHARE and why.strip()


def test_a_verdict_does_not_depend_on_the_order_its_rows_completed_in():
    """xdist finishes properties in any order: the verdict's detail lines (the README's why
    cell) and its ties come out the same whichever row arrived first."""
    a = row("printed", "xfailed", "ClaimMismatch: a first", 2.0)
    b = dict(row("printed", "xfailed", "ClaimMismatch: b second", 2.0), nodeid="x::test_b")
    one, two = verdict_for(CLAIM, [a, b]), verdict_for(CLAIM, [b, a])
    assert one["detail"] == two["detail"] and one["verdict"] == two["verdict"] == "refuted"


def test_an_inconclusive_neighbouring_reading_shows_its_numbers_and_leaves_the_verdict():
    """A property under a neighbouring reading whose trend decides nothing (Inconclusive) is not
    the verdict's basis, but its numbers are in the detail, after the basis's reasons."""
    basis = row("printed", "skipped", "Inconclusive: inconclusive: 3/24 runs", failure="inconclusive")
    alt = dict(row("printed", "skipped", "Inconclusive: inconclusive: 12/24 runs",
                   failure="inconclusive"), reading="final sign", nodeid="x::test_alt")
    r = verdict_for(CLAIM, [basis, alt])
    assert r["verdict"] == "not-audited"
    assert r["detail"].index("test_alt") > r["detail"].index("3/24 runs")
    assert "under the reading 'final sign', test_alt inconclusive: 12/24 runs" in r["detail"]


def test_a_property_outside_the_condition_reports_a_finding_and_never_decides():
    """A property run outside the statement's condition (outside_condition) that fails is a
    finding in the detail, not a refutation and not a flip of the reading: the verdict is the
    basis's (here the basis's trend, inconclusive; then a passing one); alone it decides
    nothing (no property of the basis)."""
    off = dict(row("printed", "xfailed", "ClaimMismatch: 0.078 from 1/2 at one size", 2.0),
               regime="the stage runs: fixed m_k", nodeid="x::test_one_size")
    basis = row("printed", "skipped", "Inconclusive: inconclusive: 0/24 runs",
                failure="inconclusive")
    r = verdict_for(CLAIM, [off, basis])
    assert r["verdict"] == "not-audited" and "0/24 runs" in r["detail"]
    assert ("outside the condition (the stage runs: fixed m_k): test_one_size fails: "
            "ClaimMismatch: 0.078 from 1/2 at one size (a finding about that regime, not the "
            "verdict's basis)") in r["detail"]
    assert verdict_for(CLAIM, [off])["verdict"] == "not-audited"
    assert verdict_for(CLAIM, [off])["detail"].startswith("no property inside the statement's")


def test_outside_condition_refuses_an_empty_regime_and_the_plugin_carries_it():
    from properties import outside_condition
    from properties.outcomes import regime_of

    for bad in ("", "  ", None, 3):
        with pytest.raises(ValueError):
            outside_condition(bad)

    @outside_condition("the stage runs")
    def prop():
        pass
    assert regime_of(prop) == "the stage runs" and regime_of(lambda: 0) is None
    assert regime_of(None) is None


def test_a_long_failure_message_keeps_its_head_and_its_tail():
    """A row keeps MESSAGE_CHARS of a message: the head names what failed and the first rungs'
    numbers, the tail the decision (the old tail-only cut lost the first rung)."""
    from properties.plugin import MESSAGE_CHARS, _clip

    m = "head: s = 30: 7/24 runs, " + "x" * 5000 + " tail: 458 runs would decide it"
    c = _clip(m)
    assert c.startswith("head: s = 30: 7/24") and c.endswith("458 runs would decide it")
    assert len(c) <= MESSAGE_CHARS + len(" [...] ") and _clip("short") == "short"
