"""The evidence of a claim, aggregated from the rows its properties wrote (properties/plugin.py):
the typed outcome of each, the worst record, the alternatives and whether each was rejected, the
power of each deciding check, the glossary readings, the resolution (the smallest discrepancy the
verdict would have caught), the functions of theory/ called, the thresholds without provenance
and the failing draws, worst first.  `properties.verdict` decides from it and lists it in the
claim's row.
"""

from __future__ import annotations

import math
import re

from properties.policy import FLAT_SUFFIX, SATURATED_SUFFIX
from properties.registry import Claim


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
            flat = [f"{a['kind']}:{a['name']}" for a in alts
                    if a.get("by_check", {}).get(name + FLAT_SUFFIX, 0)]
            saturated = [f"{a['kind']}:{a['name']}" for a in alts
                         if a.get("by_check", {}).get(name + SATURATED_SUFFIX, 0)]
            trend = [f"trend rival {label}" for label, ok in
                     sorted((r.get("trend_rivals") or {}).get(name, {}).items()) if ok]
            out.append({"test": _name(r), "check": name, "calls": info.get("calls", 0),
                        "what": info.get("what", ""), "rejected": rejected + trend,
                        "partly": partly, "faced": bool(rejected or trend),
                        "complement": list((r.get("trend_complement") or {}).get(name, [])),
                        "flat": flat, "saturated": saturated})
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
                                            "worst_what": rd.get("worst_what"),
                                            "_margin": rd["worst_margin"], "calls": 0})
            o["calls"] += rd["calls"]
            for k, ok in rd["passes"].items():
                o["passes"][k] = o["passes"].get(k, True) and ok
            if rd["worst_margin"] < o["_margin"]:
                o["worst"], o["_margin"] = rd["worst"], rd["worst_margin"]
                o["worst_what"] = rd.get("worst_what")
    for o in out.values():
        del o["_margin"]
        if not o["worst_what"]:  # a value observed in a run (a statistic without its own label)
            del o["worst_what"]
        p = o["passes"]
        o["flips"] = len({p.get("stricter"), p.get("level"), p.get("looser")} - {None}) > 1
        o["verdict_at"] = {k: ("passes" if p.get(k) else "fails") for k in
                           ("stricter", "level", "looser") if k in p}
    return list(out.values())


def _resolution(verdict: str, deciding: list[dict]) -> dict | None:
    """The smallest discrepancy the verdict would have caught: its WEAKEST deciding check's.
    Per deciding property, the resolution worlds give each check's smallest relative
    perturbation of the prediction (the declared closed forms of theory/, or the slots) that it
    rejects on every draw (properties.world.Run.resolution_row); the verdict's number is the
    largest over the checks that depend on the prediction, a bound (a check resolved on one
    side only, or a `check_bound`) shows its slack, and a check that moves with the prediction
    but is rejected at no step of the grid leaves the verdict `not resolved`.  A trend's
    exponent shift and the discrepancies checks state (properties.discrepancy) are reported
    beside it, per unit the coarsest."""
    if verdict not in ("holds", "erratum", "consistency", "inconsistent") or not deciding:
        return None
    from properties.world import perturbation_label
    per, notes, deltas, unresolved, one, found, slack = [], [], [], [], [], [], []
    trend = [d for r in deciding for d in (r.get("trend_resolution") or {}).values()]
    for r in deciding:
        res = r.get("resolution")
        disc = r.get("discrepancy") or {}
        found += [{"test": _name(r), "check": k, **v} for k, v in disc.items()]
        slack += [{"test": _name(r), "check": k, "slack": v}
                  for k, v in (r.get("slack") or {}).items()]
        if res is None:
            if not disc and not r.get("slack"):
                notes.append(f"{_name(r)}: no prediction to perturb")
            continue
        per.append({"test": _name(r), **res})
        # a check that states its own resolution (a detected discrepancy, a trend's exponent
        # shift, a bound's slack) is resolved by it, not by a relative perturbation (a sign)
        own = set(disc) | set(r.get("trend_resolution") or {}) | set(r.get("slack") or {})
        if [c for c in res.get("unresolved") or () if c not in own]:
            unresolved.append(f"{_name(r)}: {res['why']}")
            continue
        if res.get("delta") is not None:
            deltas.append((res["delta"], f"{res.get('weakest', '?')} in {_name(r)}"))
        if res.get("one_sided"):
            one.append(dict(res["one_sided"], test=_name(r)))
        if res.get("delta") is None and not res.get("one_sided"):
            notes.append(f"{_name(r)}: {res['why']}"
                         + ("; its checks state the discrepancy they detect" if disc else
                            "; its trends state the exponent shift they reject"
                            if r.get("trend_resolution") else ""))
    worst = max(deltas) if deltas else None
    out = {"delta": None if unresolved or worst is None else worst[0],
           "weakest": None if unresolved or worst is None else worst[1],
           "trend_exponent": max(trend) if trend else None, "per_property": per,
           "unresolved": [u.split(":", 1)[0] for u in unresolved],
           "discrepancy": [] if unresolved else _coarsest_per_unit(found)}
    if one and not unresolved:
        out["one_sided"] = max(one, key=lambda o: o["delta"])
    if slack:
        w = max(slack, key=lambda x: x["slack"])  # the loosest bound: the weakest check
        out["bound_slack"] = w
    if unresolved:
        out["why"] = "not resolved: " + "; ".join(unresolved)
    elif out["delta"] is not None:
        out["why"] = (f"the prediction {perturbation_label(out['delta'])} is rejected on every draw "
                      f"by every deciding check that depends on it; the weakest: "
                      f"{out['weakest']}")
        if one:
            w = out["one_sided"]
            out["why"] += (f"; one-sided (a bound) in {w.get('check', '?')} ({w['test']}): "
                           f"{perturbation_label(w['delta'])} on one side only")
    elif one:
        w = out["one_sided"]
        out["why"] = (f"one-sided (a bound): the prediction "
                      f"{'divided' if w['side'] == 'down' else 'multiplied'} by "
                      f"{1 + w['delta']:g} is rejected on every draw by {w.get('check', '?')} "
                      f"({w['test']}), the other side is not")
    elif out["trend_exponent"] is not None:
        out["why"] = f"a trend: the exponent moved by +-{out['trend_exponent']:.3g} is rejected"
    elif found:
        out["why"] = "its checks' smallest detected discrepancies (no relative perturbation " \
                     "applies)"
    else:
        out["why"] = "no relative perturbation applies"
    if slack:
        w = out["bound_slack"]
        out["why"] += (f"; a bound's slack {w['slack']:.3g} ({w['check']} in {w['test']}: the "
                       "bound is resolved only to that)")
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


def _unstated(rows: list[dict]) -> str:
    """The thresholds of `rows` that say nothing of where they come from ("" if none)."""
    u = {(t["value"], t["model"]) for r in rows for t in r.get("thresholds", [])
         if t.get("origin") == "unstated"
         or (t.get("origin") == "calibrated" and t.get("order_statistic") is False)}
    return "; ".join(f"{v:.3g} ({m})" for v, m in sorted(u)[:4]) + (
        f"; and {len(u) - 4} more" if len(u) > 4 else "")


def _name(r) -> str:
    return r["nodeid"].split("::")[-1]


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


def _file_of(claim: Claim | None, rows: list[dict]) -> str:
    """The file that holds the claim (its registration), else that of its first property."""
    from properties.registry import REGISTERED_IN
    if claim is not None and claim.id in REGISTERED_IN:
        return REGISTERED_IN[claim.id]
    return rows[0]["nodeid"].split("::")[0] if rows else ""
