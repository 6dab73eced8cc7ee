"""The audit report: the console table, audit.json, audit.md and the self-contained audit.html
(one PNG per claim that has a plot, drawn by the CLI), and the command that reruns a failing draw.

The verdicts are decided in `properties.verdict` (from the evidence of `properties.evidence`,
under the policy of `properties.policy`); the README's tables are written by `properties.readme`.
Their public names are re-exported here, where the CLI, the plugin and the tests import them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

# re-exported: `from properties.report import X` keeps working for the names that moved
from properties.evidence import (_BAD_ERROR, _BAD_SCORE, _agg, _alternatives,  # noqa: F401
                                 _coarsest_per_unit, _failure, _file_of, _name, _need, _readings,
                                 _resolution, _sources, _unstated, badness, check_power,
                                 declared_functions, failing_draws, false_fail_of)
from properties.policy import (CLAIM_SHARE, CONSISTENCY_VERDICTS, FALSE_FAIL_GOAL,  # noqa: F401
                               MAX_CLAIMS, MIN_DRAWS, NO_CHECK_POWER, NO_POWER, PAPER_VERDICTS,
                               SCHEMA_VERSION, VERDICTS)
from properties.readme import (_ABBREV, LADDER_BEGIN, LADDER_END, README_BEGIN,  # noqa: F401
                               README_END, README_WHY_CHARS, _first_sentence, ladder_refusal,
                               ladder_section, readme_refusal, readme_section, update_readme)
from properties.registry import Claim, history_of  # noqa: F401
from properties.verdict import (_fmt, _gates, _other_readings, _worst_of, build, summary,  # noqa: F401
                                verdict_for)


def _failing_line(f: dict) -> str:
    return f"{f['test']}: {f['draw']}" + (f" -- {f['message']}" if f.get("message") else "")


def _counts_line(counts: dict) -> str:
    """'holds: 3  erratum: 1 ...', the consistency checks apart."""
    paper = "  ".join(f"{v}: {counts[v]}" for v in PAPER_VERDICTS)
    if counts.get("by_construction"):
        paper += f" (holds by construction in this model: {counts['by_construction']})"
    cons = counts.get("consistency", 0) + counts.get("inconsistent", 0)
    return paper + (f"  | consistency checks (not the paper's verdicts): {counts['consistency']} "
                    f"pass, {counts['inconsistent']} fail" if cons else "")


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

    if res.get("unresolved"):  # the JSON says "not resolved": so does the cell
        parts.append("not resolved")

    rels = []  # the weakest check first: the verdict's resolution is its weakest check's
    if res.get("delta") is not None:
        rels.append((res["delta"], rel(res["delta"])))
    if res.get("one_sided"):
        o = res["one_sided"]
        rels.append((o["delta"], (rel(o["delta"]) if o["delta"] < 1 else
                                  f"{'/' if o['side'] == 'down' else 'x'}{1 + o['delta']:.3g}")
                     + f" ({'below' if o['side'] == 'down' else 'above'} only)"))
    parts += [text for _, text in sorted(rels, key=lambda x: -x[0])]
    if res.get("bound_slack"):
        parts.append(f"bound slack {rel(max(res['bound_slack']['slack'], 0.0))}")
    if res.get("trend_exponent") is not None:
        parts.append(f"exp +-{res['trend_exponent']:.2g}")
    parts += [f"{d['value']:.2g} {d['unit']}"  # the weakest first, in a fixed order
              for d in sorted(res.get("discrepancy") or (), key=lambda d: (-d["value"], d["unit"]))]
    return ", ".join(parts) or "-"


def _alt_line(a: dict) -> str:
    """One alternative: how many draws rejected it, passed it, came too close, were excused."""
    if not a.get("draws") and not a.get("excused") and not a.get("survived"):
        # never run: the claim's own form failed on every draw (no alternatives then), or the
        # property never asked for the slot it replaces -- neither rejected nor accepted
        return (f"`{a['kind']}:{a['name']}` ({a['source']}): did not run (no draw of the claim's "
                "own form passed, so no alternative was tried)")
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
                     + f"; {_worst_of(x)}"
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
                     + (" (uncommitted changes)" if meta.get("dirty") else "")
                     + _untracked_note(meta))
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
                f"**{_statement_label(r)}.** {r['statement']}", ""]
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


def _statement_label(r: dict) -> str:
    """'As printed', 'Paraphrased (...)' or 'Derived (...)': how the statement text stands to
    the paper (Claim.statement_kind)."""
    from properties.registry import STATEMENT_LABEL
    return STATEMENT_LABEL.get(r.get("statement_kind") or "printed", "As printed")


def _untracked_note(meta: dict) -> str:
    """The untracked files of theory/, sim/, properties/ that the stamp's commit lacks."""
    new = meta.get("untracked") or []
    if not new:
        return ""
    more = f" and {len(new) - 3} more" if len(new) > 3 else ""
    return f" (untracked, not in the commit: {', '.join(new[:3])}{more})"


def rerun_commands(row: dict, profile: str) -> list[str]:
    """One shell command per failing (or erroring, or expected-to-fail) property of a claim row:
    it reruns exactly the worst failing draw when the draw can be replayed (THEOREM_AUDIT_DRAW),
    else the whole property.  It works as printed from any directory (it starts with `cd` to the
    checkout; a conjecture file outside it is named by its absolute path), with the audit's own
    interpreter and pytest configuration (properties/pytest-audit.ini, shipped in the package, so
    a wheel's report reruns too), runs at the audit's size, and for a printed form expected to fail
    passes `--runxfail`, so that the failure's numbers are printed instead of "1 xfailed"."""
    import shlex

    from properties.settings import PYTEST_INI as ini
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
        opts = (f"-c {shlex.quote(str(ini))} --rootdir {shlex.quote(str(root))} "
                "-p no:cacheprovider")
        if p.get("expected_failure"):
            opts += " --runxfail"
        out.append(f"cd {shlex.quote(str(root))} && {env}{shlex.quote(sys.executable)} -m pytest "
                   f"{opts} {shlex.quote(test)}")
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
               f"{' (uncommitted changes)' if meta.get('dirty') else ''}"
               f"{e(_untracked_note(meta))}</p>")
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
             para(_statement_label(r), r["statement"]), para("Corrected", r["corrected"]),
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
