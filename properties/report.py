"""Verdicts and the audit report (audit.json, audit.md, one PNG per claim that has a plot).

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

import json
import math
import re
from pathlib import Path
import os
import tempfile
from collections import defaultdict

from properties.registry import Claim, history_of

VERDICTS = ("holds", "erratum", "refuted", "reading-dependent", "not-audited", "consistency",
            "inconsistent")
PAPER_VERDICTS = VERDICTS[:5]                 # the paper's statements
CONSISTENCY_VERDICTS = ("consistency", "inconsistent")  # the simulator against its derivation
MIN_DRAWS = 3
SCHEMA_VERSION = 3
FALSE_FAIL_GOAL = 0.01
# The false-fail allocation, a rule stated before any run: every claim may spend at most an equal
# share of the goal, as if the suite held MAX_CLAIMS claims (1e-4 expected spurious failures per
# claim), so the run stays within the goal while it holds at most that many.  A claim whose
# checks spend more is not `holds`/`erratum`/`consistency` until its rates are lowered (and the
# change recorded in its history); rates are never lowered after seeing the verdict.
MAX_CLAIMS = 100
CLAIM_SHARE = FALSE_FAIL_GOAL / MAX_CLAIMS
NO_POWER = "power not shown by an alternative"
NO_CHECK_POWER = "faced no alternative"


def _failure(r) -> str:
    if r.get("failure"):
        return r["failure"]
    return {"passed": "none", "xfailed": "mismatch", "skipped": "skipped"}.get(r["outcome"], "error")


def false_fail_of(r) -> float:
    """Expected spurious failures of one property run (union bound over its checks); a printed
    form expected to fail does not count."""
    return 0.0 if r.get("expected_failure") else float(r.get("false_fail", 0.0) or 0.0)


def _agg(rows):
    """Worst record (error vs tolerance, and that record's legacy-control error)."""
    worst = None
    for r in rows:
        for rec in r.get("records", {}).values():
            if rec["max_error"] is None:
                continue
            if rec["kind"] == "score>=tol":
                key = rec["tolerance"] - rec["max_error"]  # smaller margin is worse
            elif rec["tolerance"] > 0:
                key = rec["max_error"] / rec["tolerance"]
            else:
                key = math.inf if rec["max_error"] > 0 else 0.0
            if worst is None or key > worst[0]:
                worst = (key, rec["max_error"], rec["tolerance"], rec["kind"],
                         rec["min_control_error"])
    return worst


def _alternatives(claim: Claim | None, deciding: list[dict], all_rows: list[dict]) -> list[dict]:
    """Per declared alternative: draws it ran on and whether every deciding property that could
    run it rejected it."""
    out = {}

    def blank(name, kind, source, why=None):
        return {"name": name, "kind": kind, "source": source, "draws": 0, "rejected_draws": 0,
                "not_told_apart": 0, "survived": 0, "excused": 0, "excused_why": why,
                "void": 0, "void_why": None,
                "rejected": False, "told_apart": False, "close_messages": [], "_seen": 0,
                "_ok": 0, "_apart": 0}

    if claim is not None:
        for a in claim.alternatives:
            out[a.name] = blank(a.name, a.kind, a.source, a.same_as_claim_why or None)
    for r in deciding:
        for a in r.get("alternatives", []):
            o = out.setdefault(a["name"], blank(a["name"], a["kind"], a.get("source", "")))
            o["excused"] += a.get("excused", 0)
            o["void"] += a.get("void", 0)
            o["void_why"] = o["void_why"] or a.get("void_why")
            if a["draws"] > 0:
                o["draws"] += a["draws"]
                o["rejected_draws"] += a["rejected_draws"]
                o["not_told_apart"] += a.get("not_told_apart", 0)
                o["survived"] += a.get("survived", 0)
                o["close_messages"] += a.get("close_messages", [])[:2]
                o["_seen"] += 1
                o["_ok"] += bool(a["rejected"])
                o["_apart"] += bool(a.get("told_apart", a["rejected"]))
    for o in out.values():
        o["rejected"] = o["_seen"] > 0 and o["_ok"] == o["_seen"]
        o["told_apart"] = o["_seen"] > 0 and o["_apart"] == o["_seen"]
        o["close_messages"] = o["close_messages"][:3]
        del o["_seen"], o["_ok"], o["_apart"]
    return list(out.values())


def declared_functions(prediction: str) -> tuple[list[str], list[str]]:
    """The functions of theory/ a claim's `prediction` names ("theory.joma.f, g, theory.topic.h":
    a bare name after a dotted one is in the same module), as dotted names; and the names that
    resolve to no function (constants, expressions, prose), which cannot be traced."""
    import importlib
    import re

    funcs, other = [], []
    module = None
    for piece in re.split(r"[,;/]| and ", prediction or ""):
        piece = piece.strip().strip("()")
        m = re.match(r"^(theory(?:\.[a-z_][a-z0-9_]*)+)\.([A-Za-z_][A-Za-z0-9_]*)\b", piece)
        if m:
            module, name = m.group(1), m.group(2)
        elif module and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", piece.split(" ")[0] or "-"):
            name = piece.split(" ")[0]
        else:
            continue
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            if m:
                other.append(f"{module}.{name}")
            continue
        (funcs if callable(obj) and getattr(obj, "__code__", None) is not None
         else other).append(f"{module}.{name}")
    return sorted(set(funcs)), sorted(set(other))


def _sources(claim: Claim | None, rows: list[dict]) -> dict | None:
    """One source of closed forms: the declared functions of theory/ that the claim's properties
    called (outside pure simulations and shared runs, on their first draw) and those never
    called (the checks then use some other copy of the formula)."""
    if claim is None or not any("theory_called" in r for r in rows):
        return None
    funcs, other = declared_functions(claim.prediction)
    called = {n for r in rows for n in r.get("theory_called", []) or []}
    return {"declared": funcs, "called": [f for f in funcs if f in called],
            "never_called": [f for f in funcs if f not in called], "not_traceable": other,
            "theory_called": sorted(called)[:40]}


def _need(must_reject: float, draws: int) -> int:
    return math.ceil(must_reject * draws - 1e-9)


def check_power(deciding: list[dict]) -> list[dict]:
    """Per deciding check (by name, per property): the alternatives it rejected on every draw it
    met them (its own power), and the trend rivals it rejected.  A check that rejected none
    `faced no alternative`: the verdict cannot rest on it."""
    out = []
    for r in deciding:
        if "named_checks" not in r:  # a row of an older schema: nothing to say per check
            continue
        alts = [a for a in r.get("alternatives", []) if a["draws"] > 0]
        for name, info in sorted(r["named_checks"].items()):
            # over the decisive draws on which the alternative met this check (a close draw
            # is reported against the alternative, not against each check; a check inside a
            # branch meets an alternative only on the draws that take the branch)
            def met(a, name=name):
                if "met_check" in a:
                    return a["met_check"].get(name, 0)
                return a["draws"] - a.get("not_told_apart", 0)  # an older row

            def need(a):
                return max(1, _need(a.get("must_reject", 1.0), met(a)))
            rejected = [f"{a['kind']}:{a['name']}" for a in alts
                        if met(a) > 0 and a.get("by_check", {}).get(name, 0) >= need(a)]
            partly = [f"{a['kind']}:{a['name']} ({a['by_check'][name]} of {met(a)})"
                      for a in alts if 0 < a.get("by_check", {}).get(name, 0) < need(a)]
            trend = [f"trend rival {label}" for label, ok in
                     sorted((r.get("trend_rivals") or {}).get(name, {}).items()) if ok]
            out.append({"test": _name(r), "check": name, "calls": info.get("calls", 0),
                        "what": info.get("what", ""), "rejected": rejected + trend,
                        "partly": partly, "faced": bool(rejected or trend),
                        "complement": list((r.get("trend_complement") or {}).get(name, []))})
    return out


def _readings(rows: list[dict]) -> list[dict]:
    """Per glossary word read by the claim's properties: the levels, whether every check passed
    at each, and whether the verdict would flip inside the bracket."""
    out: dict[str, dict] = {}
    for r in rows:
        for rd in r.get("readings", []) or []:
            o = out.setdefault(rd["word"], {"word": rd["word"], "kind": rd["kind"],
                                            "levels": rd["levels"], "source": rd["model"],
                                            "passes": {}, "worst": rd["worst"],
                                            "_margin": rd["worst_margin"], "calls": 0})
            o["calls"] += rd["calls"]
            for k, ok in rd["passes"].items():
                o["passes"][k] = o["passes"].get(k, True) and ok
            if rd["worst_margin"] < o["_margin"]:
                o["worst"], o["_margin"] = rd["worst"], rd["worst_margin"]
    for o in out.values():
        del o["_margin"]
        p = o["passes"]
        o["flips"] = len({p.get("stricter"), p.get("level"), p.get("looser")} - {None}) > 1
        o["verdict_at"] = {k: ("passes" if p.get(k) else "fails") for k in
                           ("stricter", "level", "looser") if k in p}
    return list(out.values())


def _resolution(verdict: str, deciding: list[dict]) -> dict | None:
    """The smallest discrepancy the verdict would have caught: over the deciding properties
    that ask for a prediction, the largest of their smallest relative perturbations of it
    rejected on every draw (`None` with the reason where one is not rejected even at x or / 10);
    a trend's exponent shift is reported beside it.  A property with no numeric prediction
    (nulls only, an ordering) is listed with why, and does not set the number."""
    if verdict not in ("holds", "erratum", "consistency", "inconsistent") or not deciding:
        return None
    from properties.world import perturbation_label
    per, notes, deltas, unresolved, one, found = [], [], [], [], [], []
    trend = [d for r in deciding for d in (r.get("trend_resolution") or {}).values()]
    for r in deciding:
        res = r.get("resolution")
        disc = r.get("discrepancy") or {}
        found += [{"test": _name(r), "check": k, **v} for k, v in disc.items()]
        if res is None:
            if not disc:
                notes.append(f"{_name(r)}: no prediction slot (world.prediction) to perturb")
            continue
        per.append({"test": _name(r), **res})
        if res.get("delta") is not None:
            deltas.append(res["delta"])
        elif res.get("one_sided"):
            one.append(res["one_sided"])
        elif "not rejected" in res.get("why", "") and not disc and not r.get("trend_resolution"):
            unresolved.append(f"{_name(r)}: {res['why']}")
        else:
            notes.append(f"{_name(r)}: {res['why']}"
                         + ("; its checks state the discrepancy they detect" if disc else
                            "; its trends state the exponent shift they reject"
                            if r.get("trend_resolution") else ""))
    out = {"delta": max(deltas) if deltas and not unresolved and not one else None,
           "trend_exponent": max(trend) if trend else None, "per_property": per,
           "discrepancy": [] if unresolved else _coarsest_per_unit(found)}
    if one and not unresolved:
        worst = max(one, key=lambda o: o["delta"])
        out["one_sided"] = worst
    if unresolved:
        out["why"] = "not resolved: " + "; ".join(unresolved)
    elif one:
        w = out["one_sided"]
        out["why"] = (f"one-sided (a bound): the prediction {'divided' if w['side'] == 'down' else 'multiplied'} "
                      f"by {1 + w['delta']:g} is rejected on every draw, the other side is not"
                      + (f"; two-sided properties resolve {max(deltas):g}" if deltas else ""))
    elif out["delta"] is not None:
        out["why"] = (f"the prediction {perturbation_label(out['delta'])} is rejected on every draw "
                      "by every deciding property that asks for one")
    elif out["trend_exponent"] is not None:
        out["why"] = f"a trend: the exponent moved by +-{out['trend_exponent']:.3g} is rejected"
    elif found:
        out["why"] = "its checks' smallest detected discrepancies (no relative perturbation " \
                     "applies)"
    else:
        out["why"] = "no relative perturbation applies"
    if out["discrepancy"]:
        out["why"] += "; detected: " + "; ".join(
            f"{d['unit']} {d['value']:.3g} ({d['check']} in {d['test']}: {d['model']})"
            for d in out["discrepancy"])
    if notes:
        out["why"] += " (" + "; ".join(notes) + ")"
    return out


def _coarsest_per_unit(found: list[dict]) -> list[dict]:
    """Per unit, the coarsest detected discrepancy over the deciding checks (the verdict's
    resolution in that unit is the weakest check's)."""
    out: dict[str, dict] = {}
    for d in found:
        if d["unit"] not in out or d["value"] > out[d["unit"]]["value"]:
            out[d["unit"]] = {"unit": d["unit"], "value": d["value"], "check": d["check"],
                              "test": d["test"], "model": d["model"]}
    return list(out.values())


def _gates(claim: Claim | None, deciding: list[dict], alts: list[dict],
           all_rows: list[dict] | None = None) -> list[str]:
    """Why a would-be `holds`/`erratum` is not earned (empty: earned).  The false-fail share
    counts every property of the claim as spent (neighbouring readings and the other form
    included; a printed form expected to fail spends nothing), not only the deciding ones."""
    why = []
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
                          if c.get("complement") else ""))
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
    if spent > CLAIM_SHARE * (1 + 1e-9):
        why.append(f"its checks spend {spent:.3g} expected spurious failures, above the claim's "
                   f"false-fail share {CLAIM_SHARE:g} (goal {FALSE_FAIL_GOAL} / {MAX_CLAIMS})")
    return why


def _unstated(rows: list[dict]) -> str:
    """The thresholds of `rows` that say nothing of where they come from ("" if none)."""
    u = {(t["value"], t["model"]) for r in rows for t in r.get("thresholds", [])
         if t.get("origin") == "unstated"
         or (t.get("origin") == "calibrated" and t.get("order_statistic") is False)}
    return "; ".join(f"{v:.3g} ({m})" for v, m in sorted(u)[:4]) + (
        f"; and {len(u) - 4} more" if len(u) > 4 else "")


def _name(r) -> str:
    return r["nodeid"].split("::")[-1]


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


def verdict_for(claim: Claim | None, rows: list[dict]) -> dict:
    # properties under a neighbouring reading are set apart from the verdict's basis (the
    # literal reading); they can only make it reading-dependent (below)
    alt_rows = [r for r in rows if r.get("reading")]
    all_rows, rows = rows, [r for r in rows if not r.get("reading")]
    printed = [r for r in rows if r["form"] == "printed"]
    corrected = [r for r in rows if r["form"] == "corrected"]
    errored = [r for r in all_rows if _failure(r) in ("error", "power", "unexpected-pass")]
    inconclusive = [r for r in rows if _failure(r) == "inconclusive"]
    detail, deciding = [], []

    def msgs(r):
        return r.get("messages") or ([r["message"]] if r.get("message") else [])

    if not rows:
        verdict, detail = "not-audited", ["no property collected for this claim"]
    elif errored:
        verdict = "not-audited"
        detail = [f"{_failure(r)} in {_name(r)}: {m}" for r in errored for m in msgs(r) or [""]]
    else:
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
            for m in msgs(r):
                detail.append(f"{_name(r)}: {m.splitlines()[0]}")
        for r in inconclusive:
            for m in msgs(r):
                detail.append(f"{_name(r)} inconclusive: {m}")
        skipped = sorted({m for r in rows if _failure(r) == "skipped" for m in msgs(r)})
        if skipped and verdict == "not-audited":
            detail.append("skipped: " + "; ".join(skipped))
    if claim is not None and claim.asymptotic and verdict in ("holds", "erratum", "refuted"):
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
            why = None
        if why:
            detail = [f"would be {verdict}, not earned: asymptotic in {claim.asymptotic}, but "
                      + why] + detail
            verdict, deciding = "not-audited", []
    if verdict == "refuted":
        unstated = _unstated([r for r in printed if _failure(r) == "mismatch"])
        if unstated:
            detail = ["would be refuted, not earned: the printed form failed against a "
                      "threshold without provenance (neither derived nor calibrated): "
                      + unstated] + detail
            verdict = "not-audited"
    rows = all_rows  # below: what the report lists (thresholds, failing draws, properties)
    alts = _alternatives(claim, deciding or [r for r in rows if r.get("takes_world")], rows)
    sources = _sources(claim, rows)
    if verdict in ("holds", "erratum"):
        why = _gates(claim, deciding, alts, rows)
        if sources and sources["never_called"]:
            why.append("declared prediction " + ", ".join(sources["never_called"]) + " of theory/ "
                       "is never called while the claim's properties run (one source of closed "
                       "forms: the checks must call what the claim declares)")
        if why:
            detail = [f"would be {verdict}, not earned: " + " | ".join(why)] + detail
            verdict = "not-audited"
    if claim is not None and claim.audit_gap and verdict in ("holds", "not-audited"):
        verdict = "not-audited"
        done = "its properties pass, but " if rows and not errored and not detail else ""
        detail = [d for d in detail if d != "no property collected for this claim"]
        detail.insert(0, f"partially audited: {done}{claim.audit_gap}")
    # the glossary words as the verdict's basis reads them: a neighbouring reading's properties
    # (audits(reading=...)) decide their own reading, not the literal one's levels
    readings = _readings([r for r in rows if not r.get("reading")])
    flips = [x for x in readings if x["flips"]]
    if flips and verdict == "refuted":
        # a refutation by a trend over sizes in a property that does not read the flipping word
        # stands at every level of its bracket: the flip does not change the verdict
        words = {x["word"] for x in flips}
        solid = [r for r in printed if _failure(r) == "mismatch" and r.get("trend_mismatches")
                 and not words & {rd["word"] for rd in r.get("readings") or []}]
        if solid:
            detail.append("refuted at every level of " + ", ".join(repr(w) for w in sorted(words))
                          + "'s bracket: " + ", ".join(_name(r) for r in solid) + " fails by a "
                          "trend over sizes that does not read it")
            flips = []
    if flips and verdict in ("holds", "erratum", "refuted"):
        detail = [f"would be {verdict} at the glossary's level, but the verdict flips inside the "
                  "reading's bracket: " + "; ".join(
                      f"{x['word']!r}: " + ", ".join(f"{k} {_fmt(x['levels'][k])} {v}"
                                                     for k, v in x["verdict_at"].items())
                      + f" (worst observed {_fmt(x['worst'])})" for x in flips)] + detail
        verdict = "reading-dependent"
    other = _other_readings(verdict, alt_rows) if not errored else []
    if other and verdict in ("holds", "erratum", "refuted"):
        detail = [f"{verdict} under the literal reading (the verdict's basis), but "
                  + "; ".join(other)] + detail
        verdict = "reading-dependent"
    if verdict == "not-audited" and not errored:
        # a neighbouring reading that decides where the basis does not: said, never the verdict
        decided = [f"under the reading '{r['reading']}' the {r['form']} form "
                   + ("holds" if _failure(r) == "none" else "fails")
                   + f" ({_name(r)}, {r.get('draws', 0)} draws; not the verdict's basis)"
                   for r in alt_rows if _failure(r) in ("none", "mismatch")]
        if decided and detail:  # beside the first reason (the table's why column shows it)
            detail = ["; ".join([detail[0]] + decided)] + detail[1:]
        else:
            detail += decided
    close = [a for a in alts if verdict in ("holds", "erratum") and not a["rejected"]
             and a.get("told_apart")]
    if close:
        detail.insert(0, "not told apart from " + ", ".join(
            f"{a['kind']}:{a['name']} on {a['not_told_apart']} of {a['draws']} draws"
            for a in close) + " (the property called those draws inconclusive or rejected "
            "them: the alternative comes within the check's resolution there)")
    if claim is not None and claim.kind == "by_construction":
        detail.insert(0, "a statement of the paper that is true by construction in this model: "
                         "its checks test the simulator's implementation of it, not the paper's "
                         "argument")
    if claim is not None and claim.kind == "consistency":
        verdict = {"holds": "consistency", "erratum": "inconsistent",
                   "refuted": "inconsistent"}.get(verdict, verdict)
        detail.insert(0, "a consistency check (the simulator against its own derivation, or "
                         "algebra of the printed text), not a verdict on the paper")
    # the headline error is that of the form the verdict rests on: the corrected form for an
    # erratum, the printed form otherwise (an erratum's printed failure is in `printed_error`)
    basis = corrected if verdict == "erratum" or (not printed and corrected) else (printed or rows)
    worst = _agg(basis)
    pworst = _agg(printed) if corrected and printed else None
    counted = deciding or [r for r in rows if r["outcome"] != "skipped"] or rows
    draws = min((r.get("draws", 0) for r in counted), default=0)
    thresholds = {}
    for r in rows:
        for t in r.get("thresholds", []):
            thresholds[(t["value"], t["origin"], t["model"])] = t
    failing = failing_draws(rows)
    trend_log = [dict(t, test=_name(r)) for r in rows for t in r.get("trend_log", [])]
    checks = check_power(deciding)
    paper_cited = sorted({w for r in rows for w in r.get("paper_settings", []) or
                          r.get("paper_examples", []) or []})
    paper_ran = sorted({w for r in rows for w in r.get("paper_ran", []) or []})
    row = {
        "id": claim.id if claim else rows[0]["claim"],
        "kind": claim.kind if claim else "paper",
        "verdict_label": verdict + (" (by construction in this model)" if claim is not None
                                    and claim.kind == "by_construction" and verdict == "holds"
                                    else "") + (" (not told apart from " + ", ".join(
            f"{a['kind']}:{a['name']}" for a in close) + ")" if close else ""),
        "resolution": _resolution(verdict, deciding),
        "checks": checks,
        "readings": readings,
        "sources": sources,
        "not_told_apart": [f"{a['kind']}:{a['name']}" for a in close],
        "paper_setting": {"cited": paper_cited, "ran": paper_ran,
                          "why_not": claim.paper_setting if claim else None,
                          "explicit_examples": max((r.get("explicit_examples", 0) for r in rows),
                                                   default=0)},
        "file": _file_of(claim, rows),
        "paper": claim.paper if claim else "",
        "where": claim.where if claim else "",
        "statement": claim.statement if claim else "",
        "assumptions": claim.assumptions if claim else "",
        "reading": claim.reading if claim else None,
        "simulation": claim.simulation if claim else "",
        "verdict": verdict,
        "max_error": None if worst is None else worst[1],
        "tolerance": None if worst is None else worst[2],
        "draws": draws,
        "alternatives": alts,
        "thresholds": sorted(thresholds.values(), key=lambda t: (t["origin"], t["value"])),
        "history": history_of(claim) if claim else [],
        "false_fail": sum(false_fail_of(r) for r in rows),
        "false_fail_share": CLAIM_SHARE,
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
        "properties": [{"test": r["nodeid"], "form": r["form"], "outcome": r["outcome"],
                        "failure": _failure(r), "draws": r.get("draws", 0),
                        "draw_params": r.get("draw_params", []),
                        "draw_notes": r.get("draw_notes", []),
                        "failing_draw": r.get("failing_draw"),
                        "worst_failing_draw": next((f["draw"] for f in failing
                                                    if f["nodeid"] == r["nodeid"]), None),
                        "expected_failure": bool(r.get("expected_failure")),
                        "path": r.get("path"), "function": r.get("function"),
                        "explicit_examples": r.get("explicit_examples", 0),
                        "seconds": round(r["seconds"], 3)} for r in rows],
    }
    if claim is None:
        row["verdict"] = "not-audited"
        row["detail"] = ("property carries an unregistered claim id | " + row["detail"]).rstrip(" |")
    return row


_BAD_ERROR = re.compile(r"error (-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|inf) > tolerance "
                        r"(-?[0-9.]+(?:e[-+]?[0-9]+)?|inf)")
_BAD_SCORE = re.compile(r"score (-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|-?inf) < threshold "
                        r"(-?[0-9.]+(?:e[-+]?[0-9]+)?|-?inf)")


def badness(message: str) -> float:
    """How far a failing check's message ("... error E > tolerance T", "... score S < threshold
    T") is past its threshold: E / T, or T - S; nan where the message says neither (a trend,
    an exception).  Orders the failing draws worst first."""
    m = _BAD_ERROR.search(message or "")
    if m:
        e, t = float(m.group(1)), float(m.group(2))
        if math.isnan(e):
            return math.inf
        return e / t if t > 0 else math.inf
    m = _BAD_SCORE.search(message or "")
    if m:
        sc, t = float(m.group(1)), float(m.group(2))
        return math.inf if math.isnan(sc) else t - sc
    return math.nan


def failing_draws(rows: list[dict]) -> list[dict]:
    """Every failing draw of the claim's properties (for a printed form expected to fail, each
    draw that refuted it, as the plugin lists them), worst first by `badness` within each
    property and across them; draws whose message carries no numbers come last."""
    out = []
    for r in rows:
        listed = r.get("mismatches") or []
        if listed:
            items = [(m.get("draw"), m.get("message", "")) for m in listed]
        elif r.get("failing_draw"):
            msgs = r.get("messages") or ([r["message"]] if r.get("message") else [""])
            items = [(r["failing_draw"], msgs[0].splitlines()[0] if msgs[0] else "")]
        else:
            continue
        for draw, msg in items:
            out.append({"test": _name(r), "nodeid": r["nodeid"], "draw": draw, "message": msg,
                        "badness": badness(msg),
                        "of": r.get("mismatched_draws") or len(items),
                        "draws": r.get("draws", 0)})
    out.sort(key=lambda f: (math.isnan(f["badness"]),
                            -f["badness"] if not math.isnan(f["badness"]) else 0.0))
    return out


def _failing_line(f: dict) -> str:
    return f"{f['test']}: {f['draw']}" + (f" -- {f['message']}" if f.get("message") else "")


def _file_of(claim: Claim | None, rows: list[dict]) -> str:
    """The file that holds the claim (its registration), else that of its first property."""
    from properties.registry import REGISTERED_IN
    if claim is not None and claim.id in REGISTERED_IN:
        return REGISTERED_IN[claim.id]
    return rows[0]["nodeid"].split("::")[0] if rows else ""


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


def _counts_line(counts: dict) -> str:
    """'holds: 3  erratum: 1 ...', the consistency checks apart."""
    paper = "  ".join(f"{v}: {counts[v]}" for v in PAPER_VERDICTS)
    if counts.get("by_construction"):
        paper += f" (holds by construction in this model: {counts['by_construction']})"
    cons = counts.get("consistency", 0) + counts.get("inconsistent", 0)
    return paper + (f"  | consistency checks (not the paper's verdicts): {counts['consistency']} "
                    f"pass, {counts['inconsistent']} fail" if cons else "")


def _fmt(x):
    if x is None:
        return "-"
    if isinstance(x, float) and 0 < abs(x) < 1e-250:  # a floor (max(t, 1e-300)), not a number
        return "0"
    if isinstance(x, float) and (x == 0 or 1e-3 <= abs(x) < 1e4):
        return f"{x:.4g}"
    return f"{x:.3g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _trend_line(t: dict) -> str:
    pts = ", ".join(f"{a:g}: {_fmt(b)}" for a, b in zip(t["sizes"], t["values"]))
    return (f"{t.get('test', '')}{': ' + t['what'] if t.get('what') else ''}: slope "
            f"{t['slope']:.4g} +- {t['band']:.3g} (expected {t['expected']}) over ({pts})")


def _alts_cell(r) -> str:
    a = r["alternatives"]
    return f"{sum(x['rejected'] for x in a)}/{len(a)}" if a else "0"


def resolution_cell(r) -> str:
    """'1e-06' / '3%' (relative perturbation of the prediction rejected on every draw),
    'exp +-0.12' (a trend's exponent shift), '0.021 test-loss gap' (the smallest discrepancy a
    check detects, properties.discrepancy), or '-' (none measured: see audit.md)."""
    res = r.get("resolution")
    if not res:
        return "-"
    parts = []
    def rel(d):
        return f"{d:.0%}" if d >= 0.01 else f"{d:.0e}".replace("e-0", "e-")

    if res.get("delta") is not None:
        parts.append(rel(res["delta"]))
    if res.get("one_sided"):
        o = res["one_sided"]
        parts.append((rel(o["delta"]) if o["delta"] < 1 else
                      f"{'/' if o['side'] == 'down' else 'x'}{1 + o['delta']:.3g}")
                     + f" ({'below' if o['side'] == 'down' else 'above'} only)")
    if res.get("trend_exponent") is not None:
        parts.append(f"exp +-{res['trend_exponent']:.2g}")
    parts += [f"{d['value']:.2g} {d['unit']}" for d in res.get("discrepancy") or ()]
    return ", ".join(parts) or "-"


def _alt_line(a: dict) -> str:
    """One alternative: how many draws rejected it, passed it, came too close, were excused."""
    state = ("rejected" if a["rejected"] else "not told apart" if a.get("told_apart")
             else "**not rejected**")
    parts = [f"rejected on {a['rejected_draws']} of {a['draws']} draws"]
    if a.get("not_told_apart"):
        parts.append(f"not told apart on {a['not_told_apart']}")
    if a.get("survived"):
        parts.append(f"passed the property on {a['survived']}")
    if a.get("excused"):
        parts.append(f"excused on {a['excused']} (declared beforehand: {a.get('excused_why')})")
    close = (" -- close: " + "; ".join(a["close_messages"][:2])) if a.get("close_messages") else ""
    return (f"`{a['kind']}:{a['name']}` ({a['source']}): {state}; " + ", ".join(parts) + close)


def why_of(r: dict) -> str:
    """The one-sentence why of a row (tables): an erratum's reason, else its detail."""
    if r["verdict"] == "erratum":
        return _first_sentence(r.get("reason") or "")
    if r["verdict"] in ("holds", "consistency") and not r.get("not_told_apart"):
        return ""
    return _first_sentence(r.get("detail") or r.get("reason") or "")


def _label(r) -> str:
    return r.get("verdict_label") or r["verdict"]


def _claim_sections(r) -> list[tuple[str, list[str]]]:
    """The per-claim facts that audit.md and audit.html both show, as (heading, lines)."""
    out = []
    if r.get("resolution"):
        res = r["resolution"]
        lines = [f"{resolution_cell(r)}: {res.get('why', '')}"]
        lines += [f"{p['test']}, relative perturbation: "
                  + (f"delta {p['delta']:g}" if p.get("delta") is not None else "none")
                  + f" ({p.get('why', '')})"
                  for p in res.get("per_property", [])]
        out.append(("Resolution (the smallest discrepancy the verdict would have caught)", lines))
    if r.get("checks"):
        out.append(("Power per deciding check (the alternatives each check rejected on every "
                    "draw it met them)",
                    [f"`{c['check']}` in {c['test']} ({c['calls']} calls): "
                     + (", ".join(c["rejected"]) if c["faced"] else f"**{NO_CHECK_POWER}**")
                     + (f"; partly: {', '.join(c['partly'])}" if c.get("partly") else "")
                     for c in r["checks"]]))
    if r.get("readings"):
        out.append(("Readings (glossary words, decided at the stricter, glossary and looser "
                    "level)",
                    [f"{x['word']!r}: " + ", ".join(f"{k} {_fmt(x['levels'][k])} {v}"
                                                    for k, v in x["verdict_at"].items())
                     + f"; worst observed {_fmt(x['worst'])}"
                     + (" -- **the verdict flips inside the bracket**" if x["flips"] else "")
                     + f" ({x['source']})" for x in r["readings"]]))
    ps = r.get("paper_setting")
    if ps:
        if ps.get("ran"):
            line = "ran: " + "; ".join(ps["ran"])
        elif ps.get("cited"):
            line = "cited but did not run: " + "; ".join(ps["cited"])
        elif ps.get("why_not"):
            line = f"not run: {ps['why_not']}"
        else:
            line = (f"not cited: {ps.get('explicit_examples', 0)} explicit @example(s), none "
                    "marked @paper_example(where=...)")
        out.append(("The paper's own setting", [line]))
    return out


def run_header(meta: dict | None, profile: str | None = None) -> str:
    """One line naming what the verdicts depend on: Hypothesis profile, size, device, commit."""
    meta = meta or {}
    parts = [f"profile {meta.get('profile') or profile or '?'}", f"size {meta.get('size') or '?'}",
             f"device {meta.get('device') or '?'}"]
    if meta.get("commit"):
        parts.append(f"commit {str(meta['commit'])[:10]}"
                     + (" (uncommitted changes)" if meta.get("dirty") else ""))
    return "audit: " + ", ".join(parts)


def paper_setting_cell(r) -> str:
    """The paper's own setting, in a word: ran, cited but not run, not run (the claim says why),
    or none (neither cited nor explained)."""
    ps = r.get("paper_setting") or {}
    if ps.get("ran"):
        return "ran"
    if ps.get("cited"):
        return "cited, not run"
    return "not run (why: report)" if ps.get("why_not") else "none"


def table(rows: list[dict], meta: dict | None = None) -> str:
    """The console table: one line per claim, nothing truncated (the citation and the detail
    are in audit.md).  For an erratum, the printed form's failure stands beside the corrected
    form's numbers.  With `meta` (the run's stamp) a header line names the profile, size and
    device; below the counts, each claim whose audit is broken (an error, no power, an expected
    failure that passed) gets its reason, so a typo'd claim id is explained where it is seen."""
    head = ("id", "verdict", "error", "tolerance", "printed form", "draws", "alts rejected",
            "resolution", "paper setting", "seconds")

    def printed(r):
        pe = r.get("printed_error")
        if r["verdict"] != "erratum" or not pe:
            return ""
        return f"fails: {_fmt(pe['error'])} vs {_fmt(pe['tolerance'])}"

    body = [(r["id"], _label(r),
             ("score " if r["comparison"] == "score>=tol" else "") + _fmt(r["max_error"]),
             ("min " if r["comparison"] == "score>=tol" else "") + _fmt(r["tolerance"]),
             printed(r), str(r["draws"]), _alts_cell(r), resolution_cell(r),
             paper_setting_cell(r), f"{r['seconds']:.1f}") for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]
    if meta is not None:
        out.insert(0, run_header(meta))
    s = summary(rows)
    out.append("")
    out.append(_counts_line(dict(s["counts"], by_construction=s["by_construction"])))
    ff = s["false_fail_budget"]
    out.append(f"expected spurious failures of this run (false-fail budget): {ff:.3g}"
               + ("" if ff <= FALSE_FAIL_GOAL else f"  (above the goal {FALSE_FAIL_GOAL})"))
    broken = [r for r in rows if any(p["failure"] in ("error", "power", "unexpected-pass")
                                     for p in r.get("properties", []))]
    for r in broken:
        out.append(f"broken: {r['id']}: {_first_sentence(r.get('detail') or '')}")
    return "\n".join(out)


def _notes(p: dict) -> list[str]:
    """A property row's draw notes, one per draw (empty where the claim has none, or where the
    row predates them)."""
    notes = list(p.get("draw_notes") or [])
    return notes + [""] * (len(p.get("draw_params") or []) - len(notes))


def markdown(rows: list[dict], profile: str, plots: dict[str, str], meta: dict | None = None) -> str:
    s = summary(rows)
    out = [f"# Audit report (Hypothesis profile `{profile}`)", ""]
    if meta:
        out += [run_header(dict(meta, profile=profile)).removeprefix("audit: ").capitalize()
                + ".", ""]
    if meta and meta.get("interrupted"):
        out += ["**This run was interrupted: the verdicts below are incomplete.**", ""]
    out += ["| paper | " + " | ".join(VERDICTS) + " |", "|---|" + "---|" * len(VERDICTS)]
    for p, c in sorted(s["papers"].items()):
        out.append(f"| {p} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    out += ["", f"Expected spurious failures of this run (false-fail budget): "
                f"{s['false_fail_budget']:.3g} (goal <= {FALSE_FAIL_GOAL}).", "",
            "| id | file | verdict | worst error / tolerance | draws | alternatives rejected | "
            "resolution | why | seconds |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cmp_ = ">=" if r["comparison"] == "score>=tol" else "<="
        out.append(f"| `{r['id']}` | `{r.get('file', '')}` | **{_label(r)}** | "
                   f"{_fmt(r['max_error'])} {cmp_} {_fmt(r['tolerance'])} | {r['draws']} | "
                   f"{_alts_cell(r)} | {resolution_cell(r)} | "
                   f"{why_of(r).replace('|', '/')} | {r['seconds']:.1f} |")
    out.append("")
    for r in rows:
        out += [f"## `{r['id']}` — {_label(r)}", "", f"*{r['paper']}, {r['where']}* — "
                f"`{r.get('file', '')}`", "",
                f"**As printed.** {r['statement']}", ""]
        if r["corrected"]:
            out += [f"**Corrected.** {r['corrected']}", ""]
        if r["reason"]:
            out += [f"**Why the printed form fails.** {r['reason']}", ""]
        if r.get("printed_error"):
            pe = r["printed_error"]
            out += [f"Printed form: worst error {_fmt(pe['error'])} against tolerance "
                    f"{_fmt(pe['tolerance'])}.", ""]
        out += [f"**Assumptions.** {r.get('assumptions', '')}", ""]
        if r.get("reading"):
            out += [f"**Reading.** {r['reading']}", ""]
        out += [f"**Simulation.** {r.get('simulation', '')}", ""]
        out += [f"**Tolerance / error model.** {r['tolerance_model']}", "",
                f"Worst observed: {_fmt(r['max_error'])} against {_fmt(r['tolerance'])}; "
                f"{r['draws']} distinct draws (fewest of the deciding properties).", ""]
        if r["alternatives"]:
            out.append("**Alternatives** (must be rejected by the same property on the same draws):")
            out += [f"- {_alt_line(a)}" for a in r["alternatives"]]
            out.append("")
        else:
            out += [f"**Alternatives:** none declared ({NO_POWER}).", ""]
        for head, lines in _claim_sections(r):
            out += [f"**{head}:**"] + [f"- {x}" for x in lines] + [""]
        if r["thresholds"]:
            out.append("**Thresholds:**")
            for t in r["thresholds"]:
                out.append(f"- {_fmt(t['value'])}: {t['origin']}, false-fail "
                           f"{_fmt(t['false_fail'])} per check ({t['model']})")
            out.append("")
        if r.get("trend_fits"):
            out.append("**Trends** (check_trend: fitted slope of the value against log size, per draw):")
            out += [f"- {_trend_line(t)}" for t in r["trend_fits"]]
            out.append("")
        if r["history"]:
            out.append("**History** (changed after the audit saw a failure):")
            out += [f"- {h}" for h in r["history"]]
            out.append("")
        if r["failing_draws"]:
            out += [f"**Failing draws** ({len(r['failing_draws'])}, worst first):"]
            out += [f"- `{f['test']}`: `{f['draw']}`" + (f" -- {f['message']}" if f.get("message")
                                                          else "") for f in r["failing_draws"]]
            out.append("")
        if r.get("rerun"):
            out += ["Rerun: " + "; ".join(f"`{c}`" for c in r["rerun"]), ""]
        for p in r["properties"]:
            if p.get("draw_params"):
                out += [f"Draws of `{p['test'].split('::')[-1]}`: "
                        + "; ".join(f"`{d}`" + (f" ({n})" if n else "") for d, n in
                                    zip(p["draw_params"][:8], _notes(p)))
                        + (f" (+{len(p['draw_params']) - 8} more)" if len(p["draw_params"]) > 8
                           else ""), ""]
        if r["detail"]:
            out += [f"Detail: {r['detail']}", ""]
        if r["id"] in plots:
            out += [f"![{r['id']}]({plots[r['id']]})", ""]
        out += ["Properties: " + ", ".join(f"`{p['test'].split('::')[-1]}` ({p['form']}: "
                                           f"{p['outcome']}, {p['draws']} draws)"
                                           for p in r["properties"]), ""]
    return "\n".join(out)


def rerun_commands(row: dict, profile: str) -> list[str]:
    """One shell command per failing (or erroring, or expected-to-fail) property of a claim row:
    it reruns exactly the worst failing draw when the draw can be replayed (THEOREM_AUDIT_DRAW),
    else the whole property.  It works as printed from any directory (it starts with `cd` to the
    checkout; a conjecture file outside it is named by its absolute path, with the checkout's
    pytest configuration), runs at the audit's size, and for a printed form expected to fail
    passes `--runxfail`, so that the failure's numbers are printed instead of "1 xfailed"."""
    import shlex

    from properties.settings import SIZE_ENV
    from properties.world import REPLAY_ENV, parse_draw

    root = Path(__file__).resolve().parent.parent
    out = []
    for p in row["properties"]:
        if p["failure"] in ("none", "skipped"):
            continue
        env = f"HYPOTHESIS_PROFILE={profile} "
        if os.environ.get(SIZE_ENV) and os.environ[SIZE_ENV] != "ci":
            env += f"{SIZE_ENV}={shlex.quote(os.environ[SIZE_ENV])} "
        d = p.get("worst_failing_draw") or p.get("failing_draw")
        if d:
            try:
                parse_draw(d)
                env = f"{REPLAY_ENV}={shlex.quote(d)} " + env
            except ValueError:
                pass
        test = p["test"]
        if test.startswith("::") and p.get("path"):  # a row of an older plugin: no path in it
            test = f"{p['path']}{test}"
        path = Path(test.split("::", 1)[0])
        inside = not path.is_absolute() or path.resolve() == root or root in path.resolve().parents
        opts = "-p no:cacheprovider" + ("" if inside else " -c pyproject.toml --rootdir .")
        if p.get("expected_failure"):
            opts += " --runxfail"
        out.append(f"cd {shlex.quote(str(root))} && {env}python -m pytest {opts} "
                   f"{shlex.quote(test)}")
    return out


def _atomic_write(path, text: str):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=os.path.basename(str(path)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write(rows, json_path, md_path, profile, plots, meta: dict | None = None):
    """audit.json, audit.md and (beside audit.md) the self-contained audit.html."""
    s = summary(rows)
    doc = {"schema_version": SCHEMA_VERSION, "profile": profile, **(meta or {}),
           "counts": s["counts"], "papers": s["papers"],
           "false_fail_budget": s["false_fail_budget"], "claims": rows}
    _atomic_write(json_path, json.dumps(doc, indent=1, default=str))
    _atomic_write(md_path, markdown(rows, profile, plots, meta))
    _atomic_write(os.path.join(os.path.dirname(str(md_path)), "audit.html"),
                  html(rows, profile, plots, os.path.dirname(str(md_path)), meta))


_CSS = """body{font-family:system-ui,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.claim{display:flex;gap:2em;
border-top:2px solid #ddd;padding:1em 0}.text{flex:1 1 55%;min-width:0}.fig{flex:1 1 45%}
.fig img{max-width:100%}pre{background:#f6f6f6;padding:6px;white-space:pre-wrap;word-break:break-all}
.holds{color:#1a7f37}.erratum{color:#9a6700}.refuted{color:#cf222e}.not-audited{color:#57606a}
.stamp{color:#57606a;font-size:90%}"""


def html(rows: list[dict], profile: str, plots: dict[str, str], report_dir, meta: dict | None = None) -> str:
    """audit.html: one self-contained page (figures embedded), each claim's figure beside its
    text, and for a failure the command that reruns exactly the failing draw."""
    import base64
    from html import escape as e
    from pathlib import Path

    meta = meta or {}
    s = summary(rows)
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Theorem audit</title>",
           f"<style>{_CSS}</style></head><body>", f"<h1>Audit report (profile <code>{e(profile)}</code>)</h1>"]
    if meta.get("interrupted"):
        out.append("<p><b>This run was interrupted: the verdicts below are incomplete.</b></p>")
    stamp = ", ".join(f"{k} {e(str(meta[k]))}" for k in ("commit", "device", "python", "seconds")
                      if meta.get(k) is not None)
    vers = ", ".join(f"{k} {v}" for k, v in (meta.get("versions") or {}).items() if v)
    out.append(f"<p class='stamp'>{stamp}{'; ' + e(vers) if vers else ''}"
               f"{' (uncommitted changes)' if meta.get('dirty') else ''}</p>")
    out.append("<table><tr><th>paper</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS) + "</tr>")
    for p, c in sorted(s["papers"].items()):
        out.append(f"<tr><td>{e(p)}</td>" + "".join(f"<td>{c[v]}</td>" for v in VERDICTS) + "</tr>")
    out.append("</table>")
    out.append(f"<p>Expected spurious failures of this run (false-fail budget): "
               f"{s['false_fail_budget']:.3g} (goal &le; {FALSE_FAIL_GOAL}).</p>")
    out.append("<table><tr><th>id</th><th>verdict</th><th>worst error / tolerance</th><th>printed form"
               "</th><th>draws</th><th>alternatives rejected</th><th>resolution</th><th>why</th>"
               "<th>file</th><th>seconds</th></tr>")
    for r in rows:
        cmp_ = "&ge;" if r["comparison"] == "score>=tol" else "&le;"
        pe = r.get("printed_error") if r["verdict"] == "erratum" else None
        out.append(f"<tr><td><a href='#{e(r['id'])}'><code>{e(r['id'])}</code></a></td>"
                   f"<td class='{r['verdict']}'><b>{e(_label(r))}</b></td>"
                   f"<td>{_fmt(r['max_error'])} {cmp_} {_fmt(r['tolerance'])}</td>"
                   f"<td>{'fails: ' + _fmt(pe['error']) + ' vs ' + _fmt(pe['tolerance']) if pe else ''}</td>"
                   f"<td>{r['draws']}</td><td>{_alts_cell(r)}</td><td>{resolution_cell(r)}</td>"
                   f"<td>{e(why_of(r))}</td><td><code>{e(r.get('file', ''))}</code></td>"
                   f"<td>{r['seconds']:.1f}</td></tr>")
    out.append("</table>")

    def para(label, text):
        return f"<p><b>{label}.</b> {e(str(text))}</p>" if text else ""

    for r in rows:
        t = [f"<h2 id='{e(r['id'])}'><code>{e(r['id'])}</code> &mdash; "
             f"<span class='{r['verdict']}'>{e(_label(r))}</span></h2>",
             f"<p><i>{e(r['paper'])}, {e(r['where'])}</i> &mdash; <code>{e(r.get('file', ''))}</code></p>",
             para("As printed", r["statement"]), para("Corrected", r["corrected"]),
             para("Why the printed form fails", r["reason"])]
        if r.get("printed_error"):
            pe = r["printed_error"]
            t.append(f"<p>Printed form: worst error {_fmt(pe['error'])} against tolerance "
                     f"{_fmt(pe['tolerance'])}.</p>")
        t += [para("Assumptions", r.get("assumptions")), para("Reading", r.get("reading")),
              para("Simulation", r.get("simulation")), para("Tolerance / error model", r["tolerance_model"]),
              f"<p>Worst observed: {_fmt(r['max_error'])} against {_fmt(r['tolerance'])}; "
              f"{r['draws']} distinct draws (fewest of the deciding properties).</p>"]
        if r["alternatives"]:
            t.append("<p><b>Alternatives</b> (rejected by the same property on the same draws):</p><ul>")
            t += [f"<li>{e(_alt_line(a))}</li>" for a in r["alternatives"]]
            t.append("</ul>")
        else:
            t.append(f"<p><b>Alternatives:</b> none declared ({NO_POWER}).</p>")
        for head, lines in _claim_sections(r):
            t.append(f"<p><b>{e(head)}:</b></p><ul>" + "".join(f"<li>{e(x)}</li>" for x in lines)
                     + "</ul>")
        if r["thresholds"]:
            t.append("<p><b>Thresholds:</b></p><ul>")
            t += [f"<li>{_fmt(x['value'])}: {x['origin']}, false-fail {_fmt(x['false_fail'])} per "
                  f"check ({e(str(x['model']))})</li>" for x in r["thresholds"]]
            t.append("</ul>")
        if r.get("trend_fits"):
            t.append("<p><b>Trends</b> (check_trend: fitted slope of the value against log size, "
                     "per draw):</p><ul>")
            t += [f"<li>{e(_trend_line(x))}</li>" for x in r["trend_fits"]]
            t.append("</ul>")
        if r["history"]:
            t.append("<p><b>History</b> (changed after the audit saw a failure):</p><ul>")
            t += [f"<li>{e(h)}</li>" for h in r["history"]]
            t.append("</ul>")
        if r["failing_draws"]:
            t.append(f"<p><b>Failing draws</b> ({len(r['failing_draws'])}, worst first):</p><ul>"
                     + "".join(f"<li><code>{e(f['test'])}</code>: <code>{e(str(f['draw']))}</code>"
                               + (f" &mdash; {e(f['message'])}" if f.get("message") else "")
                               + "</li>" for f in r["failing_draws"]) + "</ul>")
        if r.get("rerun"):
            t.append("<p><b>Rerun</b> (exactly the failing draw where it can be replayed):</p>")
            t += [f"<pre>{e(c)}</pre>" for c in r["rerun"]]
        for p in r["properties"]:
            if p.get("draw_params"):
                t.append(f"<p>Draws of <code>{e(p['test'].split('::')[-1])}</code>: "
                         + "; ".join(f"<code>{e(str(d))}</code>" + (f" ({e(n)})" if n else "")
                                     for d, n in zip(p["draw_params"], _notes(p))) + "</p>")
        t.append(para("Detail", r["detail"]))
        t.append("<p>Properties: " + ", ".join(
            f"<code>{e(p['test'].split('::')[-1])}</code> ({p['form']}: {p['outcome']}, {p['draws']} draws)"
            for p in r["properties"]) + "</p>")
        fig = ""
        if r["id"] in plots:
            try:
                data = base64.b64encode((Path(report_dir) / plots[r["id"]]).read_bytes()).decode()
                fig = f"<img alt='{e(r['id'])}' src='data:image/png;base64,{data}'>"
            except OSError:
                fig = f"<p>(figure {e(plots[r['id']])} missing)</p>"
        out.append(f"<div class='claim'><div class='text'>{''.join(t)}</div><div class='fig'>{fig}</div></div>")
    out.append("</body></html>")
    return "\n".join(out)


README_BEGIN = "<!-- audit-tables:begin (generated by `python -m properties readme`; do not edit) -->"
README_END = "<!-- audit-tables:end -->"


_ABBREV = ("Fig.", "Figs.", "e.g.", "i.e.", "Eq.", "Eqn.", "Eqns.", "al.", "vs.", "cf.", "Sec.",
           "Thm.", "approx.", "resp.")
README_WHY_CHARS = 280


def _first_sentence(text: str) -> str:
    """The README's `why`: the first segment of a detail (segments are joined by ' | '), up to
    its first sentence end (not an abbreviation's period) and at most README_WHY_CHARS at a word
    boundary; anything cut is flagged '(more in audit.md)'."""
    full = " ".join((text or "").split())
    text = full.split(" | ")[0]
    cut = len(text)
    for i, ch in enumerate(text):
        if ch == "." and (i + 1 == len(text) or text[i + 1] == " ") and i > 20:
            word = text[:i + 1].rsplit(" ", 1)[-1].lstrip("([{")
            if word in _ABBREV or (len(word) == 2 and word[0].isupper()):
                continue
            cut = i + 1
            break
    out = text[:cut]
    if len(out) > README_WHY_CHARS:
        out = out[:README_WHY_CHARS].rsplit(" ", 1)[0] + " ..."
    return out + (" (more in audit.md)" if len(out) < len(full) or out.endswith("...") else "")


def readme_section(doc: dict) -> str:
    """The README's verdict tables, generated from an audit.json: counts per paper (the
    consistency checks apart), then one table per paper (claim, verdict, draws, alternatives
    rejected, resolution, and why for an erratum or a claim not audited), its consistency checks
    in a table of their own.  The stamp says which commit, profile and size produced them."""
    rows = doc.get("claims", [])
    s = summary(rows)
    size = f", size `{doc['size']}`" if doc.get("size") else ""
    out = [README_BEGIN, "",
           f"Generated from the audit of commit `{str(doc.get('commit') or '?')[:10]}`"
           + (" (with uncommitted changes)" if doc.get("dirty") else "")
           + f" with the `{doc.get('profile', '?')}` profile{size}"
           + (" (**interrupted: incomplete**)" if doc.get("interrupted") else "")
           + f": {len(rows)} claims, false-fail budget {s['false_fail_budget']:.3g}"
           + (f"; {s['by_construction']} of the holds are paper statements true by "
              "construction in this model" if s["by_construction"] else "") + ".", "",
           "| paper | " + " | ".join(PAPER_VERDICTS) + " | consistency checks |",
           "|---|" + "---|" * (len(PAPER_VERDICTS) + 1)]
    papers = sorted(s["papers"])  # found from the claims' ids, never listed by hand

    def cons(c):
        n = c.get("consistency", 0) + c.get("inconsistent", 0)
        return f"{c.get('consistency', 0)} pass, {c.get('inconsistent', 0)} fail" if n else "0"

    for p in papers:
        c = s["papers"][p]
        out.append(f"| `{p}` | " + " | ".join(str(c[v]) for v in PAPER_VERDICTS)
                   + f" | {cons(c)} |")
    out.append("| all | " + " | ".join(str(s["counts"][v]) for v in PAPER_VERDICTS)
               + f" | {cons(s['counts'])} |")

    def line(r):
        why = why_of(r).replace("|", "\\|")
        f = r.get("file", "")
        cell = f"[`{r['id']}`]({f})" if f else f"`{r['id']}`"
        return (f"| {cell} | **{_label(r)}** | {r['draws']} | {_alts_cell(r)} | "
                f"{resolution_cell(r)} | {paper_setting_cell(r)} | {why} |")

    head = ["| claim | verdict | draws | alternatives rejected | resolution | paper's setting "
            "| why |", "|---|---|---|---|---|---|---|"]
    for p in papers:
        mine = sorted((r for r in rows if r["id"].split(".", 1)[0] == p), key=lambda r: r["id"])
        paper = [r for r in mine if r.get("kind", "paper") != "consistency"]
        checks = [r for r in mine if r.get("kind", "paper") == "consistency"]
        out += ["", f"#### `{p}.*`", ""] + head + [line(r) for r in paper]
        if checks:
            out += ["", f"Consistency checks of `{p}` (the simulator against its own derivation, "
                        "or algebra of the printed text; not verdicts on the paper):", ""]
            out += head + [line(r) for r in checks]
    out += ["", README_END]
    return "\n".join(out)


def readme_refusal(doc: dict, suite_ids) -> str | None:
    """Why the report `doc` (an audit.json) may not replace the README's verdict tables, or None:
    the tables are the whole suite's verdicts under `ci`, so a report that is interrupted, under
    another profile, missing some of the suite's claims (an --only run), or holding claims that
    are not the suite's (conjectures) is refused."""
    ids = {r["id"] for r in doc.get("claims", [])}
    suite = set(suite_ids)
    if doc.get("interrupted"):
        return "the report is of an interrupted run (incomplete)"
    if doc.get("profile") != "ci":
        return (f"the report is under the {doc.get('profile')!r} profile; the README's tables are "
                "the `ci` profile's (theorem-audit audit --profile ci)")
    if doc.get("size", "ci") != "ci":
        return (f"the report is at size {doc.get('size')!r}; the README's tables are size `ci`'s "
                "(a --size ladder report goes into the ladder block: readme --ladder-report DIR)")
    missing, extra = sorted(suite - ids), sorted(ids - suite)
    if missing:
        return (f"the report is partial: {len(missing)} of the suite's {len(suite)} claims are not "
                f"in it (e.g. {', '.join(missing[:3])}); run the whole audit (no --only)")
    if extra:
        return (f"the report holds {len(extra)} claims that are not the suite's "
                f"({', '.join(extra[:3])}: conjectures?); run the audit without --conjecture")
    return None


def update_readme(readme_text: str, doc: dict, ladder_doc: dict | None = None) -> str:
    """readme_text with the section between the markers replaced by `readme_section(doc)`, and,
    given a `--size ladder` report, the ladder block (`ladder_section(doc, ladder_doc)`) between
    its own markers, put right after the tables where the README has none yet; ValueError if the
    markers are missing or out of order.  Without `ladder_doc` an existing ladder block is kept
    as it is (its stamp names the two reports it was made from)."""
    b, e = readme_text.find(README_BEGIN), readme_text.find(README_END)
    if b < 0 or e < b:
        raise ValueError("readme: the markers README_BEGIN ... README_END are missing or out of "
                         "order")
    text = readme_text[:b] + readme_section(doc) + readme_text[e + len(README_END):]
    if ladder_doc is None:
        return text
    lb, le = text.find(LADDER_BEGIN), text.find(LADDER_END)
    if (lb < 0) != (le < 0) or le < lb:
        raise ValueError("readme: the markers LADDER_BEGIN ... LADDER_END are out of order or "
                         "one is missing")
    block = ladder_section(doc, ladder_doc)
    if lb < 0:
        at = text.find(README_END) + len(README_END)
        return text[:at] + "\n\n" + block + text[at:]
    return text[:lb] + block + text[le + len(LADDER_END):]


LADDER_BEGIN = ("<!-- audit-ladder:begin (generated by `python -m properties readme "
                "--ladder-report DIR`; do not edit) -->")
LADDER_END = "<!-- audit-ladder:end -->"


def ladder_refusal(doc: dict, suite_ids) -> str | None:
    """Why `doc` may not fill the README's ladder block, or None.  The block shows the verdicts
    of a `--size ladder` audit beside the `ci` tables: it must be an uninterrupted audit of the
    suite's own claims under the `ci` profile at size `ladder`.  It may be partial (an --only
    run of the claims whose ladders are affordable): the block says which claims ran."""
    ids = {r["id"] for r in doc.get("claims", [])}
    if doc.get("interrupted"):
        return "the ladder report is of an interrupted run (incomplete)"
    if doc.get("profile") != "ci":
        return (f"the ladder report is under the {doc.get('profile')!r} profile; the ladder block "
                "is the `ci` profile's (theorem-audit audit --profile ci --size ladder)")
    if doc.get("size") != "ladder":
        return (f"the ladder report is at size {doc.get('size')!r}, not `ladder` "
                "(theorem-audit audit --profile ci --size ladder)")
    if not ids:
        return "the ladder report holds no claim"
    extra = sorted(ids - set(suite_ids))
    if extra:
        return (f"the ladder report holds {len(extra)} claims that are not the suite's "
                f"({', '.join(extra[:3])}: conjectures?)")
    return None


def ladder_section(ci_doc: dict, ladder_doc: dict) -> str:
    """The README's ladder block: the claims of a `--size ladder` report whose verdict differs
    from the `ci` report's (claim, both verdicts, the ladder's draws, alternatives rejected,
    resolution and why), then those run at the ladder with the same verdict, and how many of the
    suite's claims the ladder audit did not run.  Both reports are stamped (commit, profile,
    size)."""
    def stamp(d):
        return (f"`{str(d.get('commit') or '?')[:10]}`"
                + (" (with uncommitted changes)" if d.get("dirty") else "")
                + f", `{d.get('profile', '?')}` profile, size `{d.get('size', '?')}`")

    ci = {r["id"]: r for r in ci_doc.get("claims", [])}
    rows = sorted(ladder_doc.get("claims", []), key=lambda r: r["id"])
    differ = [r for r in rows if r["id"] in ci and _label(ci[r["id"]]) != _label(r)]
    same = [r for r in rows if r["id"] in ci and _label(ci[r["id"]]) == _label(r)]
    new = [r for r in rows if r["id"] not in ci]
    out = [LADDER_BEGIN, "",
           f"Verdicts at `--size ladder` (the longer ladders and the papers' own settings that do "
           f"not fit CI), from the audit of commit {stamp(ladder_doc)}, beside the tables above "
           f"(commit {stamp(ci_doc)}): {len(rows)} claims run at the ladder, "
           f"{len(differ)} with another verdict.", ""]
    if differ or new:
        out += ["| claim | verdict at `ci` | verdict at `ladder` | draws | alternatives rejected "
                "| resolution | why (ladder) |", "|---|---|---|---|---|---|---|"]
        for r in differ + new:
            f = r.get("file", "")
            cell = f"[`{r['id']}`]({f})" if f else f"`{r['id']}`"
            was = f"**{_label(ci[r['id']])}**" if r["id"] in ci else "-"
            why = why_of(r).replace("|", "\\|")
            out.append(f"| {cell} | {was} | **{_label(r)}** | {r['draws']} | {_alts_cell(r)} | "
                       f"{resolution_cell(r)} | {why} |")
        out.append("")
    if same:
        out += ["Same verdict at both sizes: " + ", ".join(
            f"`{r['id']}` ({_label(r)})" for r in same) + ".", ""]
    unrun = sorted(set(ci) - {r["id"] for r in rows})
    if unrun:
        out += [f"Not run at the ladder ({len(unrun)} claims): their `ci` verdicts above stand "
                "alone.", ""]
    out.append(LADDER_END)
    return "\n".join(out)
