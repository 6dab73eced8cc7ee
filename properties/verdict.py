"""The decision: the verdict of each claim from the rows of its properties (`verdict_for`), and
the run's rows and counts (`build`, `summary`).  The evidence it reads is aggregated in
`properties.evidence`; the policy it applies is `properties.policy`; rendering the rows is
`properties.report`'s.

Outcomes are typed by the plugin (`failure`: none, mismatch, power, inconclusive, skipped,
error, unexpected-pass), never matched by substring.  Verdict of a claim, from the properties
that carry its id:

  holds        every printed-form property that ran passed (at least one ran, none was
               inconclusive) and no corrected-form property failed;
  erratum      the printed form failed by `ClaimMismatch` and every corrected-form property
               ran and passed;
  refuted      the printed form failed by `ClaimMismatch` and no corrected form was
               established;
  not-audited  nothing decided: no property ran, a property errored (each message is kept),
               a printed property was inconclusive or all were skipped, or a gate below failed,
               or the claim declares an `audit_gap`.

A property run outside the statement's condition (`properties.outcomes.outside_condition`) is
no part of the basis: its outcome is a finding about that regime, listed in the detail.

Gates on `holds` and `erratum` (the earned-verdict rules; each failure names itself in
`detail`): every deciding property (the printed ones for holds, the corrected ones for an
erratum) ran against the claim's alternatives, and every declared alternative was rejected
("power not shown by an alternative" otherwise); each deciding property saw at least
`MIN_DRAWS` distinct draws, one of them an explicit `@example` (the paper's own setting); every
threshold it used says where it comes from (derived or calibrated).  Gates on `refuted`: the
threshold the printed form failed against has a provenance too.  A claim marked `asymptotic`
is decided only by a trend (`check_trend`) over at least three sizes: one size gives
`not-audited`, whichever way it points.
"""

from __future__ import annotations

import math
from collections import defaultdict

from properties.evidence import (_agg, _alternatives, _failure, _file_of, _name, _readings,
                                 _resolution, _sources, _unstated, check_power, failing_draws,
                                 false_fail_of)
from properties.policy import (share_of, CLAIM_SHARE, FALSE_FAIL_GOAL, MAX_CLAIMS, MIN_DRAWS, NO_CHECK_POWER,
                               NO_POWER, VERDICTS)
from properties.registry import Claim, history_of

# The harness modules that turn runs into verdicts, beside the run cache's (cache._SHARED_HARNESS):
# an edit of a decision procedure, a verdict rule, or the power, rate and resolution accounting
# can change a verdict without re-keying any run, so it makes every README table stale too.
DECISION_HARNESS = ("__init__.py", "procedures.py", "trend.py", "verdict.py", "evidence.py",
                    "outcomes.py", "resolution.py", "discrepancy.py", "policy.py", "diagnosis.py",
                    "trace.py", "plugin.py")
# The flat modules of properties/ that decide nothing: rendering, the command line, the process
# tree, the scaffolding.  tests/test_docs.py checks that every flat module is in one of the lists
# (readme._code_member reads DECISION_HARNESS for the README stamps' code version).
NOT_DECIDING = ("__main__.py", "bench.py", "cli_audit.py", "cli_common.py", "figstyle.py",
                "proctree.py", "readme.py", "report.py", "scaffold.py", "shards.py")


def _gates(claim: Claim | None, deciding: list[dict], alts: list[dict],
           all_rows: list[dict] | None = None) -> list[str]:
    """Why a would-be `holds`/`erratum` is not earned (empty: earned).  The false-fail share
    counts every property of the claim as spent (neighbouring readings and the other form
    included; a printed form expected to fail spends nothing), not only the deciding ones."""
    why = []
    cf = [r["resolution"] for r in deciding
          if (r.get("resolution") or {}).get("mode") == "closed form"]
    if cf and all(x.get("no_dependence") for x in cf):
        why.append("no deciding check depends on the declared closed form of theory/ (perturbed "
                   "x or / 10 wherever the body calls it, no check's values move): the checks "
                   "decide on a copy of the formula, not on what the claim declares")
    if claim is None or not claim.alternatives:
        why.append(f"{NO_POWER}: the claim declares no rival or null")
    else:
        unpowered = [r["nodeid"].split("::")[-1] for r in deciding if not r.get("takes_world")]
        if unpowered:
            why.append(f"{NO_POWER}: " + ", ".join(unpowered) + " does not run against the "
                       "claim's alternatives (no `world` argument)")
        missed = [a for a in alts if not a["rejected"] and not a.get("told_apart")]
        for a in missed:
            why.append(f"{NO_POWER}: {a['kind']}:{a['name']} was "
                       + (f"no alternative on every draw it ran (the property is broken for "
                          f"it: {a['void_why']})" if a["draws"] == 0 and a.get("void") else
                          f"excused on every draw ({a['excused_why']})" if a["draws"] == 0
                          and a.get("excused") else "never run by a deciding property"
                          if a["draws"] == 0 else
                          f"rejected on {a['rejected_draws']} of {a['draws']} draws"))
        for a in alts:
            if a.get("void") and a["draws"] > 0:
                why.append(f"{NO_POWER}: {a['kind']}:{a['name']} was no alternative on "
                           f"{a['void']} draw(s) ({a['void_why']})")
        lone = [c for c in check_power(deciding) if not c["faced"]]
        for c in lone[:4]:
            why.append(f"check {c['check']} in {c['test']} {NO_CHECK_POWER}"
                       + (f" on every draw (only {', '.join(c['partly'])})" if c["partly"] else "")
                       + (f" (its rivals {', '.join(c['complement'])} are the direction test's "
                          "own complement, rejected whenever it passes: not power)"
                          if c.get("complement") else "")
                       + (f" ({', '.join(c['flat'])} met it only as an exactly flat series, "
                          "which it rejects whatever the data: not power)"
                          if c.get("flat") else "")
                       + (f" ({', '.join(c['saturated'])} met it only with every item of every "
                          "run failing, the farthest data it could meet: not power)"
                          if c.get("saturated") else ""))
        if len(lone) > 4:
            why.append(f"and {len(lone) - 4} more checks {NO_CHECK_POWER}")
    few = [(r["nodeid"].split("::")[-1], r.get("draws", 0)) for r in deciding
           if r.get("draws", 0) < MIN_DRAWS]
    if few:
        from properties.settings import profile
        prof = profile()
        hint = ("" if prof != "dev" else "; the `dev` profile draws half the `ci` budget, at "
                "random: rerun with --profile ci (HYPOTHESIS_PROFILE=ci), the profile the "
                "README's verdicts come from")
        why.append("too few draws: " + ", ".join(f"{n} saw {d} distinct draw(s)" for n, d in few)
                   + f" (at least {MIN_DRAWS} needed{hint})")
    no_example = [_name(r) for r in deciding if r.get("hypothesis") and not r.get("explicit_examples")]
    if no_example:
        why.append("no explicit @example (the paper's own setting) in " + ", ".join(no_example))
    unstated = _unstated(deciding)
    if unstated:
        why.append("threshold without provenance (neither derived nor calibrated, or "
                   "calibrated by hand rather than as an order statistic): " + unstated)
    spent = sum(false_fail_of(r) for r in (deciding if all_rows is None else all_rows))
    share = share_of(claim.id) if claim is not None else CLAIM_SHARE
    if spent > share * (1 + 1e-9):
        why.append(f"its checks spend {spent:.3g} expected spurious failures, above the claim's "
                   f"false-fail share {share:g} ("
                   + ("granted in properties.policy.SHARE_GRANTS" if share != CLAIM_SHARE else
                      f"goal {FALSE_FAIL_GOAL} / {MAX_CLAIMS}") + ")")
    return why


def _other_readings(verdict: str, alt_rows: list[dict]) -> list[str]:
    """Where a property under a neighbouring reading (`audits(reading=...)`) decides otherwise
    than the literal reading's verdict: one line per such reading (empty: no flip)."""
    out = []
    for r in alt_rows:
        f = _failure(r)
        if f == "mismatch" and verdict == "holds":
            out.append(f"under the reading '{r['reading']}' the {r['form']} form fails "
                       f"({_name(r)})")
        elif f == "none" and r["form"] == "printed" and verdict in ("erratum", "refuted"):
            out.append(f"under the reading '{r['reading']}' the printed form holds "
                       f"({_name(r)}, {r.get('draws', 0)} draws)")
    return out


def _msgs(r) -> list[str]:
    """The failure messages of a property row (several for an ExceptionGroup)."""
    return r.get("messages") or ([r["message"]] if r.get("message") else [])


def _inconclusive_msgs(r) -> list[str]:
    """An inconclusive row's messages without the exception's name and the harness's own
    prefix (the detail line says 'inconclusive' once)."""
    return [m.removeprefix("Inconclusive: ").removeprefix("inconclusive: ") for m in _msgs(r)]


def _basis_verdict(rows: list[dict], printed: list[dict], corrected: list[dict],
                   errored: list[dict]) -> tuple[str, list[str], list[dict]]:
    """The verdict that the outcomes of the basis's properties (`rows`: the literal reading's,
    `printed` and `corrected` their two forms) give before any gate: (verdict, detail lines,
    the deciding properties).  A property that errored (`errored`, of every reading) decides
    nothing; a printed form that failed by a mismatch makes an erratum when every corrected form
    ran and passed, else a refutation; a printed form that passed everywhere holds."""
    detail, deciding = [], []
    inconclusive = [r for r in rows if _failure(r) == "inconclusive"]
    if errored:  # any property's error (outside the basis too) is the reason
        return ("not-audited",
                [f"{_failure(r)} in {_name(r)}: {m}" for r in errored for m in _msgs(r) or [""]],
                deciding)
    if not rows:
        return "not-audited", ["no property collected for this claim"], deciding
    p_ran = [r for r in printed if r["outcome"] != "skipped" or _failure(r) == "inconclusive"]
    p_fail = [r for r in printed if _failure(r) == "mismatch"]
    p_pass = [r for r in printed if _failure(r) == "none"]
    c_ran = [r for r in corrected if r["outcome"] != "skipped"]
    c_pass = [r for r in corrected if _failure(r) == "none"]
    c_bad = [r for r in corrected if _failure(r) in ("mismatch", "inconclusive")]
    if p_fail:
        if corrected and c_ran and len(c_pass) == len(corrected) and not c_bad:
            verdict, deciding = "erratum", c_pass
        else:
            verdict = "refuted"
            if c_bad or (corrected and len(c_pass) < len(corrected)):
                detail.append("the corrected form was not established")
    elif not p_ran:
        verdict = "not-audited"
        detail.append("no property of the printed form ran (all skipped)")
    elif [r for r in printed if _failure(r) == "inconclusive"]:
        verdict = "not-audited"
        detail.append("the printed form's trend was inconclusive (numbers below)")
    elif len(p_pass) == len(p_ran) and not c_bad:
        verdict, deciding = "holds", p_pass
    else:
        verdict = "not-audited"
        detail.append("a corrected-form property failed while the printed form passed")
    for r in p_fail + [r for r in c_bad if _failure(r) == "mismatch"]:
        for m in _msgs(r):
            detail.append(f"{_name(r)}: {m.splitlines()[0]}")
    for r in inconclusive:
        detail += [f"{_name(r)} inconclusive: {m}" for m in _inconclusive_msgs(r)]
    skipped = sorted({m for r in rows if _failure(r) == "skipped" for m in _msgs(r)})
    if skipped and verdict == "not-audited":
        detail.append("skipped: " + "; ".join(skipped))
    return verdict, detail, deciding


def _asymptotic_rule(claim: Claim | None, verdict: str, detail: list[str], deciding: list[dict],
                     printed: list[dict]) -> tuple[str, list[str], list[dict]]:
    """A claim marked `asymptotic` is decided only by a trend (`check_trend`) over sizes: a
    holds, erratum or refutation decided at one size (or, for a refutation, failing only in
    checks at single sizes) is `not-audited`, with no deciding properties, saying what it would
    have been."""
    if claim is None or not claim.asymptotic or verdict not in ("holds", "erratum", "refuted"):
        return verdict, detail, deciding
    basis_rows = deciding if verdict != "refuted" else [
        r for r in printed if _failure(r) == "mismatch"]
    w = _agg(basis_rows)
    nums = "" if w is None else f" (worst {_fmt(w[1])} against {_fmt(w[2])})"
    if not any(r.get("trends", 0) for r in basis_rows):
        why = (f"decided at one size{nums}; a trend over at least three values of "
               f"{claim.asymptotic} (check_trend) is needed")
    elif (verdict == "refuted" and all("trend_mismatches" in r for r in basis_rows)
          and not any(r["trend_mismatches"] for r in basis_rows)):
        # one size alone decides nothing, whichever way it points: an asymptotic claim is
        # refuted only by a trend over sizes against it, not by a check at one size
        why = (f"the printed form failed only in checks at single sizes{nums}, never in a "
               f"trend over {claim.asymptotic} against the statement")
    else:
        return verdict, detail, deciding
    return ("not-audited", [f"would be {verdict}, not earned: asymptotic in {claim.asymptotic}, "
                            "but " + why] + detail, [])


def _refutation_provenance(verdict: str, detail: list[str],
                           printed: list[dict]) -> tuple[str, list[str]]:
    """A refutation stands only where the threshold the printed form failed against says where
    it comes from (derived or calibrated); else `not-audited`, saying so."""
    if verdict != "refuted":
        return verdict, detail
    unstated = _unstated([r for r in printed if _failure(r) == "mismatch"])
    if not unstated:
        return verdict, detail
    return "not-audited", ["would be refuted, not earned: the printed form failed against a "
                           "threshold without provenance (neither derived nor calibrated): "
                           + unstated] + detail


def _earned(claim: Claim | None, verdict: str, detail: list[str], deciding: list[dict],
            alts: list[dict], sources: dict | None, rows: list[dict]) -> tuple[str, list[str]]:
    """The earned-verdict gates on a would-be `holds` or `erratum` (`_gates`, and the one source
    of closed forms: every function of theory/ the claim declares is called by its properties);
    a gate that fails makes it `not-audited`, naming every failed gate."""
    if verdict not in ("holds", "erratum"):
        return verdict, detail
    why = _gates(claim, deciding, alts, rows)
    if sources and sources["never_called"]:
        why.append("declared prediction " + ", ".join(sources["never_called"]) + " of theory/ "
                   "is never called while the claim's properties run (one source of closed "
                   "forms: the checks must call what the claim declares)")
    if not why:
        return verdict, detail
    return "not-audited", [f"would be {verdict}, not earned: " + " | ".join(why)] + detail


def _audit_gap(claim: Claim | None, verdict: str, detail: list[str], rows: list[dict],
               errored: list[dict]) -> tuple[str, list[str]]:
    """A claim that declares an `audit_gap` is at most `not-audited` (`partially audited`, first
    in the detail; its properties' passing said where nothing else went wrong)."""
    if claim is None or not claim.audit_gap or verdict not in ("holds", "not-audited"):
        return verdict, detail
    done = "its properties pass, but " if rows and not errored and not detail else ""
    detail = [d for d in detail if d != "no property collected for this claim"]
    detail.insert(0, f"partially audited: {done}{claim.audit_gap}")
    return "not-audited", detail


def _reading_flips(verdict: str, detail: list[str], readings: list[dict],
                   printed: list[dict]) -> tuple[str, list[str]]:
    """The glossary words as the verdict's basis reads them: where the verdict flips inside a
    word's bracket (stricter, glossary, looser level), a holds, erratum or refutation is
    `reading-dependent` -- except a refutation by a trend over sizes in a property that does
    not read the flipping word, which stands at every level of its bracket."""
    flips = [x for x in readings if x["flips"]]
    if flips and verdict == "refuted":
        words = {x["word"] for x in flips}
        solid = [r for r in printed if _failure(r) == "mismatch" and r.get("trend_mismatches")
                 and not words & {rd["word"] for rd in r.get("readings") or []}]
        if solid:
            detail.append("refuted at every level of " + ", ".join(repr(w) for w in sorted(words))
                          + "'s bracket: " + ", ".join(_name(r) for r in solid) + " fails by a "
                          "trend over sizes that does not read it")
            flips = []
    if not flips or verdict not in ("holds", "erratum", "refuted"):
        return verdict, detail
    return "reading-dependent", [
        f"would be {verdict} at the glossary's level, but the verdict flips inside the "
        "reading's bracket: " + "; ".join(
            f"{x['word']!r}: " + ", ".join(f"{k} {_fmt(x['levels'][k])} {v}"
                                           for k, v in x["verdict_at"].items())
            + f" ({_worst_of(x)})" for x in flips)] + detail


def _worst_of(x: dict) -> str:
    """A reading's worst case as the report shows it: the value observed, or the labelled
    statistic its levels were decided on (check_whp: a confidence bound at the binding rung)."""
    return (f"worst: {x['worst_what']}" if x.get("worst_what")
            else f"worst observed {_fmt(x['worst'])}")


def _neighbouring_readings(verdict: str, detail: list[str], alt_rows: list[dict],
                           errored: list[dict]) -> tuple[str, list[str]]:
    """The properties under a neighbouring reading (`audits(reading=...)`, `alt_rows`): one that
    decides otherwise than a holds, erratum or refutation makes it `reading-dependent`; one that
    decides where the basis gave `not-audited` is said beside the first reason, never the
    verdict.  Nothing is read from them when a property errored."""
    other = _other_readings(verdict, alt_rows) if not errored else []
    if other and verdict in ("holds", "erratum", "refuted"):
        detail = [f"{verdict} under the literal reading (the verdict's basis), but "
                  + "; ".join(other)] + detail
        verdict = "reading-dependent"
    if verdict == "not-audited" and not errored:
        decided = [f"under the reading '{r['reading']}' the {r['form']} form "
                   + ("holds" if _failure(r) == "none" else "fails")
                   + f" ({_name(r)}, {r.get('draws', 0)} draws; not the verdict's basis)"
                   for r in alt_rows if _failure(r) in ("none", "mismatch")]
        if decided and detail:  # beside the first reason (the table's why column shows it)
            detail = ["; ".join([detail[0]] + decided)] + detail[1:]
        else:
            detail += decided
    # one that decides nothing (its trend inconclusive) still shows its numbers, after the rest
    for r in alt_rows:
        if _failure(r) == "inconclusive":
            detail += [f"under the reading '{r['reading']}', {_name(r)} inconclusive: {m}"
                       for m in _inconclusive_msgs(r)]
    return verdict, detail


def _regime_findings(detail: list[str], regime_rows: list[dict],
                     errored: list[dict]) -> list[str]:
    """The properties run outside the statement's condition (`outside_condition`): each one's
    outcome appended as a finding about that regime, never the verdict's basis (nothing is read
    from them when a property errored: the error is the verdict's reason)."""
    if errored:
        return detail
    found = []
    for r in regime_rows:
        f, where = _failure(r), f"outside the condition ({r['regime']}): {_name(r)}"
        if f == "mismatch":
            first = next(iter(_msgs(r)), "").splitlines()
            found.append(f"{where} fails: {first[0] if first else ''} (a finding about that "
                         "regime, not the verdict's basis)")
        elif f == "none":
            found.append(f"{where} holds ({r.get('draws', 0)} draws; a finding about that "
                         "regime, not the verdict's basis)")
        elif f == "inconclusive":
            found += [f"{where} inconclusive: {m}" for m in _inconclusive_msgs(r)]
    return detail + found


def _close_why(a: dict, width: int = 240) -> str:
    """The first reason an alternative was not told apart (its first close message, with its
    draw), shortened: ' (why)', or '' when none was kept."""
    msgs = a.get("close_messages") or []
    if not msgs:
        return ""
    m = " ".join(msgs[0].split())
    return f" ({m[:width - 3] + '...' if len(m) > width else m})"


def _kind_and_closeness(claim: Claim | None, verdict: str, detail: list[str],
                        alts: list[dict]) -> tuple[str, list[str], list[dict]]:
    """What the detail says first, and the verdict's name by the claim's kind: the alternatives
    a holds or erratum did not tell apart (returned too: the row names them), a claim true by
    construction in this model, and a consistency check, whose holds is `consistency` and whose
    erratum or refutation is `inconsistent` (not verdicts on the paper)."""
    close = [a for a in alts if verdict in ("holds", "erratum") and not a["rejected"]
             and a.get("told_apart")]
    if close:
        detail.insert(0, "not told apart from " + ", ".join(
            f"{a['kind']}:{a['name']} on {a['not_told_apart']} of {a['draws']} draws"
            + _close_why(a) for a in close) + " (the property called those draws inconclusive "
            "or rejected them, or the alternative is a refinement consistent with the claim "
            "there)")
    if claim is not None and claim.kind == "by_construction":
        detail.insert(0, "a statement of the paper that is true by construction in this model: "
                         "its checks test the simulator's implementation of it, not the paper's "
                         "argument")
    if claim is not None and claim.kind == "consistency":
        verdict = {"holds": "consistency", "erratum": "inconsistent",
                   "refuted": "inconsistent"}.get(verdict, verdict)
        detail.insert(0, "a consistency check (the simulator against its own derivation, or "
                         "algebra of the printed text), not a verdict on the paper")
    return verdict, detail, close


def _verdict_label(claim: Claim | None, verdict: str, close: list[dict]) -> str:
    """The verdict as the tables show it: marked when true by construction in this model, and
    naming the alternatives it did not tell apart."""
    return verdict + (" (by construction in this model)" if claim is not None
                      and claim.kind == "by_construction" and verdict == "holds"
                      else "") + (" (not told apart from " + ", ".join(
        f"{a['kind']}:{a['name']}" for a in close) + ")" if close else "")


def _paper_setting(claim: Claim | None, rows: list[dict]) -> dict:
    """The paper's own setting: the draws that cite it, those that ran, why it is not run."""
    paper_cited = sorted({w for r in rows for w in r.get("paper_settings", []) or
                          r.get("paper_examples", []) or []})
    paper_ran = sorted({w for r in rows for w in r.get("paper_ran", []) or []})
    return {"cited": paper_cited, "ran": paper_ran,
            "why_not": claim.paper_setting if claim else None,
            "explicit_examples": max((r.get("explicit_examples", 0) for r in rows), default=0)}


def _thresholds(rows: list[dict]) -> list[dict]:
    """The distinct thresholds the claim's properties used, by origin then value."""
    thresholds = {}
    for r in rows:
        for t in r.get("thresholds", []):
            thresholds[(t["value"], t["origin"], t["model"])] = t
    return sorted(thresholds.values(), key=lambda t: (t["origin"], t["value"]))


def _property_entries(rows: list[dict], failing: list[dict]) -> list[dict]:
    """One entry per property of the claim: its form, outcome, draws and worst failing draw."""
    return [{"test": r["nodeid"], "form": r["form"], "outcome": r["outcome"],
             "failure": _failure(r), "draws": r.get("draws", 0),
             "draw_params": r.get("draw_params", []),
             "draw_notes": r.get("draw_notes", []),
             "failing_draw": r.get("failing_draw"),
             "worst_failing_draw": next((f["draw"] for f in failing
                                         if f["nodeid"] == r["nodeid"]), None),
             "expected_failure": bool(r.get("expected_failure")),
             "path": r.get("path"), "function": r.get("function"),
             "explicit_examples": r.get("explicit_examples", 0),
             "seconds": round(r["seconds"], 3)} for r in rows]


def _row(claim: Claim | None, verdict: str, detail: list[str], rows: list[dict],
         printed: list[dict], corrected: list[dict], deciding: list[dict], alts: list[dict],
         sources: dict | None, readings: list[dict], close: list[dict]) -> dict:
    """The claim's row of the report (audit.json): the verdict and its detail, and what the
    report lists beside it, from every property row of the claim (`rows`)."""
    # the headline error is that of the form the verdict rests on: the corrected form for an
    # erratum, the printed form otherwise (an erratum's printed failure is in `printed_error`)
    basis = corrected if verdict == "erratum" or (not printed and corrected) else (printed or rows)
    worst = _agg(basis)
    pworst = _agg(printed) if corrected and printed else None
    counted = deciding or [r for r in rows if r["outcome"] != "skipped"] or rows
    draws = min((r.get("draws", 0) for r in counted), default=0)
    failing = failing_draws(rows)
    trend_log = [dict(t, test=_name(r)) for r in rows for t in r.get("trend_log", [])]
    row = {
        "id": claim.id if claim else rows[0]["claim"],
        "kind": claim.kind if claim else "paper",
        "verdict_label": _verdict_label(claim, verdict, close),
        "resolution": _resolution(verdict, deciding),
        "checks": check_power(deciding),
        "readings": readings,
        "sources": sources,
        "not_told_apart": [f"{a['kind']}:{a['name']}" for a in close],
        "paper_setting": _paper_setting(claim, rows),
        "file": _file_of(claim, rows),
        "paper": claim.paper if claim else "",
        "where": claim.where if claim else "",
        "statement": claim.statement if claim else "",
        "statement_kind": claim.statement_kind if claim else "printed",
        "assumptions": claim.assumptions if claim else "",
        "reading": claim.reading if claim else None,
        "simulation": claim.simulation if claim else "",
        "verdict": verdict,
        "max_error": None if worst is None else worst[1],
        "tolerance": None if worst is None else worst[2],
        "draws": draws,
        "alternatives": alts,
        "thresholds": _thresholds(rows),
        "history": history_of(claim) if claim else [],
        "false_fail": sum(false_fail_of(r) for r in rows),
        "false_fail_share": share_of(claim.id) if claim else CLAIM_SHARE,
        "failing_draws": failing,
        "trend_fits": trend_log,
        "seconds": round(sum(r["seconds"] for r in rows), 3),
        "detail": " | ".join(detail),
        "corrected": claim.corrected if claim else None,
        "reason": claim.reason if claim else None,
        "tolerance_model": claim.tolerance if claim else "",
        "comparison": None if worst is None else worst[3],
        "printed_error": None if pworst is None else {"error": pworst[1], "tolerance": pworst[2]},
        "control": None if worst is None else worst[4],
        "properties": _property_entries(rows, failing),
    }
    if claim is None and rows and all(str(r.get("nodeid", "")).endswith("::<import>")
                                      for r in rows):
        row["verdict"] = "not-audited"  # a paper module that does not import (its message)
    elif claim is None:
        row["verdict"] = "not-audited"
        row["detail"] = ("property carries an unregistered claim id | " + row["detail"]).rstrip(" |")
    return row


def verdict_for(claim: Claim | None, rows: list[dict]) -> dict:
    """The report row of one claim (`None`: an id no Claim registers) from the rows of its
    properties, by the rules of the module docstring, one step each: the basis's outcomes, the
    asymptotic rule, the refutation's provenance, the earned-verdict gates, the audit gap, the
    glossary readings' flips, the neighbouring readings, the claim's kind; then the row."""
    # in the order of their node ids, not of their completion (xdist): the detail lines and
    # every tie between properties come out the same in every run of the same code
    rows = sorted(rows, key=lambda r: str(r.get("nodeid", "")))
    # properties under a neighbouring reading are set apart from the verdict's basis (the
    # literal reading); they can only make it reading-dependent (below)
    alt_rows = [r for r in rows if r.get("reading")]
    # properties run outside the statement's condition report findings, never the basis
    regime_rows = [r for r in rows if r.get("regime") and not r.get("reading")]
    literal = [r for r in rows if not r.get("reading") and not r.get("regime")]
    printed = [r for r in literal if r["form"] == "printed"]
    corrected = [r for r in literal if r["form"] == "corrected"]
    errored = [r for r in rows if _failure(r) in ("error", "power", "unexpected-pass")]
    verdict, detail, deciding = _basis_verdict(literal, printed, corrected, errored)
    if not literal and regime_rows and not errored:
        detail = ["no property inside the statement's condition (only findings outside it)"]
    verdict, detail, deciding = _asymptotic_rule(claim, verdict, detail, deciding, printed)
    verdict, detail = _refutation_provenance(verdict, detail, printed)
    # from here on every row counts (neighbouring readings included): what the report lists
    alts = _alternatives(claim, deciding or [r for r in rows if r.get("takes_world")], rows)
    sources = _sources(claim, rows)
    verdict, detail = _earned(claim, verdict, detail, deciding, alts, sources, rows)
    verdict, detail = _audit_gap(claim, verdict, detail, rows, errored)
    # the glossary words as the verdict's basis reads them: a neighbouring reading's properties
    # (audits(reading=...)) decide their own reading, not the literal one's levels
    readings = _readings(literal)
    verdict, detail = _reading_flips(verdict, detail, readings, printed)
    verdict, detail = _neighbouring_readings(verdict, detail, alt_rows, errored)
    detail = _regime_findings(detail, regime_rows, errored)
    verdict, detail, close = _kind_and_closeness(claim, verdict, detail, alts)
    return _row(claim, verdict, detail, rows, printed, corrected, deciding, alts, sources,
                readings, close)


def build(registry: dict[str, Claim], raw: dict, selected=None) -> list[dict]:
    by_claim = defaultdict(list)
    for r in raw["tests"]:
        by_claim[r["claim"]].append(r)
    ids = sorted(set(registry) | set(by_claim))
    if selected is not None:
        # a property that audits an id no Claim registers (a typo) is always a row of its own:
        # its rows passed the run's --claims globs, and its error makes the audit broken (exit 3)
        ids = [i for i in ids if selected(i) or i not in registry]
    out = []
    strays = sorted(i for i in by_claim if i not in registry)
    for i in ids:
        row = verdict_for(registry.get(i), by_claim.get(i, []))
        _diagnosis(row, by_claim.get(i, []))
        if i in registry and not by_claim.get(i):
            import difflib
            near = difflib.get_close_matches(i, strays, n=3, cutoff=0.6)
            if near:  # its property probably names it with a typo
                row["detail"] += (f" (a property audits {', '.join(repr(c) for c in near)}, "
                                  "which no Claim registers: a typo of this id?)")
        if i not in registry:
            import difflib
            close = difflib.get_close_matches(i, sorted(registry), n=3, cutoff=0.6)
            if close:
                row["detail"] = row["detail"].replace(
                    "property carries an unregistered claim id",
                    f"property carries an unregistered claim id (did you mean "
                    f"{', '.join(repr(c) for c in close)}?)", 1)
        out.append(row)
    return out


def _diagnosis(row: dict, rows: list[dict]) -> None:
    """The near misses of the declared closed forms that the data accept where the printed form
    failed (properties.diagnosis), in the row and, for a refutation or an erratum, its detail."""
    from properties import diagnosis

    acc: dict = {}
    failing = 0
    for r in rows:
        if r.get("form", "printed") != "printed":
            continue
        failing += r.get("mismatched_draws") or (1 if r.get("failing_draw") else 0)
        for name, d in (r.get("diagnosis") or {}).items():
            slot = acc.setdefault(name, {"draws": 0, "near_misses": 0, "accepted": {},
                                         "sympy_form": d.get("sympy_form", False)})
            slot["draws"] += d.get("draws", 0)
            slot["near_misses"] = max(slot["near_misses"], d.get("near_misses", 0))
            for lab, k in (d.get("accepted") or {}).items():
                slot["accepted"][lab] = slot["accepted"].get(lab, 0) + k
    if not acc:
        return
    row["diagnosis"] = acc
    if row.get("verdict") in ("refuted", "erratum"):
        text = diagnosis.summary_text(acc, failing)
        row["detail"] = (row.get("detail", "") + " | " + text).lstrip(" |")


def summary(rows: list[dict]) -> dict:
    """Counts per paper and the run's false-fail budget."""
    papers = defaultdict(lambda: {v: 0 for v in VERDICTS})
    for r in rows:
        papers[r["id"].split(".", 1)[0]][r["verdict"]] += 1
    return {"counts": {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS},
            "papers": dict(papers),
            "paper_claims": sum(r.get("kind", "paper") != "consistency" for r in rows),
            "by_construction": sum(r.get("kind", "paper") == "by_construction"
                                   and r["verdict"] == "holds" for r in rows),
            "consistency_checks": sum(r.get("kind", "paper") == "consistency" for r in rows),
            "false_fail_budget": sum(r["false_fail"] for r in rows)}


def _fmt(x):
    """A number as the report prints it (in a verdict's detail and in every renderer)."""
    if x is None:
        return "-"
    if isinstance(x, float) and 0 < abs(x) < 1e-250:  # a floor (max(t, 1e-300)), not a number
        return "0"
    if isinstance(x, float) and (x == 0 or 1e-3 <= abs(x) < 1e4):
        return f"{x:.4g}"
    return f"{x:.3g}" if isinstance(x, float) and math.isfinite(x) else str(x)
