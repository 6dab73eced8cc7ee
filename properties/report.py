"""Verdicts and the audit report (audit.json, audit.md, one PNG per claim that has a plot).

Verdict of a claim, from the outcomes of the properties that carry its id:
  holds        every property of the printed form passed (and there is at least one);
  erratum      every printed-form property failed as expected (strict xfail, ClaimMismatch)
               and every corrected-form property passed;
  refuted      the printed form failed (expected or not) and no corrected form passed;
  not-audited  no property ran (none collected, deselected, skipped) or one errored, or the
               claim declares an `audit_gap` (a part of the statement its properties do not
               establish), with the reason in `detail`.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

from properties.registry import Claim

VERDICTS = ("holds", "erratum", "refuted", "not-audited")


def _agg(rows):
    """Worst record (error vs tolerance, and that record's negative-control error) and the
    total number of checked examples over the records of `rows`."""
    worst, examples = None, 0
    for r in rows:
        for rec in r.get("records", {}).values():
            examples += rec["examples"]
            if rec["max_error"] is None:
                continue
            score = rec["kind"] == "score>=tol"
            if score:
                key = rec["max_error"] - rec["tolerance"]  # smaller margin is worse
                key = -key
            elif rec["tolerance"] > 0:
                key = rec["max_error"] / rec["tolerance"]
            else:
                key = math.inf if rec["max_error"] > 0 else 0.0
            if worst is None or key > worst[0]:
                worst = (key, rec["max_error"], rec["tolerance"], rec["kind"],
                         rec["min_control_error"])
    return worst, examples


def verdict_for(claim: Claim | None, rows: list[dict]) -> dict:
    printed = [r for r in rows if r["form"] == "printed"]
    corrected = [r for r in rows if r["form"] == "corrected"]
    outcomes = defaultdict(list)
    for r in rows:
        outcomes[(r["form"], r["outcome"])].append(r)
    ran = [r for r in rows if r["outcome"] != "skipped"]
    errored = [r for r in rows if r["outcome"] == "failed" and "ClaimMismatch" not in r["message"]]
    detail = []
    if not rows:
        verdict, detail = "not-audited", ["no property collected for this claim"]
    elif not ran:
        verdict = "not-audited"
        detail = ["skipped: " + "; ".join(sorted({r["message"] for r in rows}))]
    elif errored:
        verdict = "not-audited"
        detail = [f"property error in {r['nodeid']}: {r['message']}" for r in errored]
    else:
        p_pass = [r for r in printed if r["outcome"] == "passed"]
        p_fail = [r for r in printed if r["outcome"] in ("xfailed", "failed")]
        c_pass = [r for r in corrected if r["outcome"] == "passed"]
        c_fail = [r for r in corrected if r["outcome"] in ("failed", "xfailed", "xpassed")]
        if printed and len(p_pass) == len([r for r in printed if r["outcome"] != "skipped"]) and not c_fail:
            verdict = "holds"
        elif p_fail and corrected and not c_fail and c_pass:
            verdict = "erratum"
        elif p_fail:
            verdict = "refuted"
            if c_fail:
                detail.append("the corrected form failed too")
        else:
            verdict = "not-audited"
            detail.append("no property of the printed form ran")
        for r in p_fail + c_fail:
            if r["message"]:
                detail.append(f"{r['nodeid'].split('::')[-1]}: {r['message'].splitlines()[0]}")
    if claim is not None and claim.audit_gap and verdict in ("holds", "not-audited"):
        verdict = "not-audited"
        done = "its properties pass, but " if rows and ran and not errored else ""
        detail = [d for d in detail if d != "no property collected for this claim"]
        detail.insert(0, f"partially audited: {done}{claim.audit_gap}")
    # the headline error is that of the form the verdict rests on: the corrected form for an
    # erratum, the printed form otherwise (an erratum's printed failure is in `printed_error`)
    basis = corrected if verdict == "erratum" else (printed or rows)
    worst, _ = _agg(basis)
    _, examples = _agg(rows)
    pworst = _agg(printed)[0] if verdict == "erratum" else None
    ctrl = None if worst is None else worst[4]
    row = {
        "id": claim.id if claim else rows[0]["claim"],
        "paper": claim.paper if claim else "",
        "where": claim.where if claim else "",
        "statement": claim.statement if claim else "",
        "verdict": verdict,
        "max_error": None if worst is None else worst[1],
        "tolerance": None if worst is None else worst[2],
        "examples": examples,
        "seconds": round(sum(r["seconds"] for r in rows), 3),
        "detail": " | ".join(detail),
        "corrected": claim.corrected if claim else None,
        "reason": claim.reason if claim else None,
        "tolerance_model": claim.tolerance if claim else "",
        "comparison": None if worst is None else worst[3],
        "printed_error": None if pworst is None else {"error": pworst[1], "tolerance": pworst[2]},
        "control": ctrl,
        "properties": [{"test": r["nodeid"], "form": r["form"], "outcome": r["outcome"],
                        "seconds": round(r["seconds"], 3)} for r in rows],
    }
    if claim is None:
        row["detail"] = ("property carries an unregistered claim id | " + row["detail"]).rstrip(" |")
    return row


def build(registry: dict[str, Claim], raw: dict, selected=None) -> list[dict]:
    by_claim = defaultdict(list)
    for r in raw["tests"]:
        by_claim[r["claim"]].append(r)
    ids = sorted(set(registry) | set(by_claim))
    if selected is not None:
        ids = [i for i in ids if selected(i)]
    return [verdict_for(registry.get(i), by_claim.get(i, [])) for i in ids]


def _fmt(x):
    if x is None:
        return "-"
    if isinstance(x, float) and (x == 0 or 1e-3 <= abs(x) < 1e4):
        return f"{x:.4g}"
    return f"{x:.3g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def table(rows: list[dict]) -> str:
    head = ("id", "citation", "verdict", "error", "tolerance", "examples", "seconds")
    body = [(r["id"], r["where"][:44], r["verdict"],
             ("score " if r["comparison"] == "score>=tol" else "") + _fmt(r["max_error"]),
             ("min " if r["comparison"] == "score>=tol" else "") + _fmt(r["tolerance"]),
             str(r["examples"]), f"{r['seconds']:.1f}") for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    out = [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    out.append("")
    out.append("  ".join(f"{v}: {n}" for v, n in counts.items()))
    return "\n".join(out)


def markdown(rows: list[dict], profile: str, plots: dict[str, str]) -> str:
    out = [f"# Audit report (Hypothesis profile `{profile}`)", "",
           "| id | paper | where | verdict | worst error / tolerance | examples | seconds |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        cmp_ = ">=" if r["comparison"] == "score>=tol" else "<="
        out.append(f"| `{r['id']}` | {r['paper']} | {r['where']} | **{r['verdict']}** | "
                   f"{_fmt(r['max_error'])} {cmp_} {_fmt(r['tolerance'])} | {r['examples']} | "
                   f"{r['seconds']:.1f} |")
    out.append("")
    for r in rows:
        out += [f"## `{r['id']}` — {r['verdict']}", "", f"*{r['paper']}, {r['where']}*", "",
                f"**As printed.** {r['statement']}", ""]
        if r["corrected"]:
            out += [f"**Corrected.** {r['corrected']}", ""]
        if r["reason"]:
            out += [f"**Why the printed form fails.** {r['reason']}", ""]
        if r.get("printed_error"):
            pe = r["printed_error"]
            out += [f"Printed form: worst error {_fmt(pe['error'])} against tolerance "
                    f"{_fmt(pe['tolerance'])} (expected failure).", ""]
        out += [f"**Tolerance / error model.** {r['tolerance_model']}", "",
                f"Worst observed: {_fmt(r['max_error'])} against {_fmt(r['tolerance'])}; "
                f"the same check on the negative control: {_fmt(r['control'])}; "
                f"{r['examples']} checked examples.", ""]
        if r["detail"]:
            out += [f"Detail: {r['detail']}", ""]
        if r["id"] in plots:
            out += [f"![{r['id']}]({plots[r['id']]})", ""]
        out += ["Properties: " + ", ".join(f"`{p['test'].split('::')[-1]}` ({p['form']}: {p['outcome']})"
                                           for p in r["properties"]), ""]
    return "\n".join(out)


def write(rows, json_path, md_path, profile, plots):
    with open(json_path, "w") as f:
        json.dump({"profile": profile, "claims": rows}, f, indent=1)
    with open(md_path, "w") as f:
        f.write(markdown(rows, profile, plots))
