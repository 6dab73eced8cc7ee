"""`theorem-audit` (or `python -m properties`): run the claims' properties and report verdicts.

    theorem-audit audit [--profile ci|dev|thorough] [--only GLOBS] [--report DIR] [--json PATH]
                        [--conjecture FILE.py ...] [-n WORKERS] [--no-plots]
                        [--fail-on refuted|erratum|never]
                        [--shards none|paper|claim] [--executor local|slurm]
                        [--size ci|ladder|paper] [--device cpu|cuda]
                        [--cache-dir DIR | --no-cache] [--cache-limit 16G]
    theorem-audit list  [--report DIR] [--conjecture FILE.py ...]
    theorem-audit show  ID [--report DIR] [--conjecture FILE.py ...]
    theorem-audit readme [--report DIR] [--readme README.md] [--ladder-report DIR]
    theorem-audit new-paper NAME [--title T] [--claim ITEM]  # theory/, sim/, properties/NAME/
    theorem-audit new-claim ID                    # skeleton properties/<paper>/test_<item>.py

`audit` runs the properties in a pytest subprocess (so the CLI and CI share one code path); the
plugin writes one row per property and prints one progress line per claim as its last property
finishes; this command turns the rows into verdicts, prints the table and writes audit.json,
audit.md, a self-contained audit.html and the claims' plots into the report directory (the previous report there is kept as
audit.previous.json / .md / .html; a second audit into a directory that one is writing is refused).
Runs are kept in an on-disk cache (properties/cache.py: content-addressed by code version and
arguments), shared by the pytest workers, the shards and the figures; a second audit, or one
resumed after a crash, reads what is there.
`list` prints every claim id with the verdict of the last run in --report and its file; `show`
prints one claim and its last result; `readme` rewrites the README's verdict tables (between its
`audit-tables` markers) from the last report, so they are never written by hand; with
`--ladder-report DIR` also the ladder block (between its `audit-ladder` markers): the verdicts of
a `--size ladder` audit that differ from the `ci` tables, each block stamped with its report.

Exit status of `audit`:
  0  the audit ran; no claim's verdict reached --fail-on (default: refuted)
  1  a claim's verdict reached --fail-on (refuted or inconsistent; with --fail-on erratum also
     erratum)
  2  usage error, found before any work, one line on stderr: a bad argument (--only, -n,
     --cache-limit, --report, --json, the profile), a conjecture file that does not import,
     exits or re-registers an existing claim id, an unwritable or busy --report
  3  the audit itself is broken: a property errored, showed no power, or a printed form
     expected to fail passed; a property's result was lost (its xdist worker crashed or was
     killed, its shard's cluster job failed for good); or the report could not be written
     (the previous one is then left as it was).  The report says which
  130 interrupted (SIGINT, SIGTERM or SIGHUP): the report written is partial and marked as such
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import signal
import sys
from pathlib import Path

# The audit command and what the commands share live in their own modules; their names are
# re-exported here, where tests and scripts import them (`from properties.__main__ import X`).
from properties.cli_audit import (_REPORT_FILES, _UNITS, SCRATCH_PREFIX, SERIAL_UP_TO,  # noqa: F401
                                  Plan, Ran, _audit, _check_report_dir, _collect, _cuda, _decide,
                                  _draw, _exit_status, _figure_png, _file_mode, _fsync_file,
                                  _is_audit_json, _Lock, _lost_row, _plan, _pytest_paths,
                                  _remove_stale_scratch, _render, _run, _run_environment, _stamp,
                                  _trim, _workers, _write, check_outputs, check_profile,
                                  check_workers, cmd_audit, parse_size)
from properties.cli_common import (_LOADED_CONJECTURES, EXIT_BROKEN, EXIT_INTERRUPTED,  # noqa: F401
                                   EXIT_OK, EXIT_USAGE, EXIT_VERDICT, FAIL_ON, PAPER_MODULES, ROOT,
                                   UsageError, _check_conjecture_path, load_registry,
                                   only_conjectures, properties_by_claim, properties_per_claim,
                                   select)
from properties.proctree import (_STOP_SIGNALS, GRACE_S, PARENT_ENV, _alive,  # noqa: F401
                                 _child_setup, _die_with_group, _kill_group, _run_pytest)
from properties.registry import HARNESS_MODULES  # noqa: F401
from properties.shards import (_ENDED, MAX_RESUBMIT, ShardInterrupted, ShardJob,  # noqa: F401
                               _ended_without_result, _queue_state, _run_shards, _worst,
                               shard_groups)


def _last_run(report: Path) -> dict:
    """The claims of the last report in `report` by id ({} when there is none, or when its
    audit.json is not one: a malformed file is a note, never a traceback)."""
    p = report / "audit.json"
    if not p.exists():
        return {}
    try:
        doc = json.loads(p.read_text())
    except (ValueError, OSError, UnicodeDecodeError) as e:
        print(f"theorem-audit: note: {p} is unreadable ({type(e).__name__}); last verdicts "
              "not shown", file=sys.stderr)
        return {}
    claims = doc.get("claims") if isinstance(doc, dict) else None
    if not isinstance(claims, list):
        print(f"theorem-audit: note: {p} is not an audit report; last verdicts not shown",
              file=sys.stderr)
        return {}
    return {r["id"]: r for r in claims if isinstance(r, dict) and isinstance(r.get("id"), str)}


def cmd_list(args) -> int:
    from properties.registry import REGISTERED_IN
    registry = load_registry(args.conjecture)
    last = _last_run(Path(args.report))
    ids = sorted(registry)
    w = max(len(i) for i in ids) if ids else 2
    print(f"{'id'.ljust(w)}  {'last verdict'.ljust(12)}  file")
    for i in ids:
        print(f"{i.ljust(w)}  {str(last.get(i, {}).get('verdict', '-')).ljust(12)}  "
              f"{REGISTERED_IN.get(i, '')}")
    return EXIT_OK


def cmd_show(args) -> int:
    from properties.registry import REGISTERED_IN, STATEMENT_LABEL
    registry = load_registry(args.conjecture)
    if args.id not in registry:  # a conjecture of the last report: load its file from there
        known = _last_run(Path(args.report)).get(args.id, {}).get("file", "")
        if known and Path(known).is_absolute() and Path(known).is_file():
            registry = load_registry([known])
    if args.id not in registry:
        close = difflib.get_close_matches(args.id, sorted(registry), n=5, cutoff=0.5)
        raise UsageError(f"no claim {args.id!r}" + (f"; close matches: {', '.join(close)}"
                                                     if close else ""))
    c = registry[args.id]
    out = [f"{c.id} — {c.paper}, {c.where}", f"file: {REGISTERED_IN.get(c.id, '')}", "",
           f"{STATEMENT_LABEL[c.statement_kind]}: {c.statement}",
           f"Assumptions: {c.assumptions}"]
    for label, val in (("Corrected", c.corrected), ("Why the printed form fails", c.reason),
                       ("Reading", c.reading), ("Audit gap", c.audit_gap),
                       ("Asymptotic in", c.asymptotic)):
        if val:
            out.append(f"{label}: {val}")
    out += [f"Prediction: {c.prediction}", f"Simulation: {c.simulation}", f"Metric: {c.metric}",
            f"Tolerance: {c.tolerance}"]
    out.append("Alternatives: " + ("; ".join(f"{a.kind}:{a.name} ({a.source})"
                                             for a in c.alternatives) or "none declared"))
    from properties.registry import history_of
    for h in history_of(c):
        out.append(f"History: {h}")
    if c.kind == "by_construction":
        out.append("Kind: by_construction (a statement of the paper true by construction in "
                   "this model; counted in the paper's tally)")
    elif c.kind != "paper":
        out.append(f"Kind: {c.kind} (listed apart from the paper's verdicts)")
    last = _last_run(Path(args.report)).get(c.id)
    if last:
        out += ["", *_last_lines(last)]
    print("\n".join(out))
    return EXIT_OK


def _last_lines(last: dict) -> list[str]:
    """The last run of one claim, as lines; an entry of another schema or a malformed one
    shows what it can and says so."""
    from properties import report as rep

    try:
        res = rep.resolution_cell(last)
    except Exception:  # noqa: BLE001 -- a malformed entry
        res = "?"
    detail = last.get("detail")
    out = [f"Last run: {last.get('verdict_label') or last.get('verdict', '?')}, "
           f"{last.get('draws', '?')} draws, resolution {res}"
           + (f" — {detail}" if detail else "")]
    try:
        for head, lines in rep._claim_sections(last):
            out += [f"{head}:"] + [f"  {x}" for x in lines]
    except Exception:  # noqa: BLE001 -- a report of an older schema, or a malformed one
        out.append("(the rest of the last run's entry is not in this version's schema)")
    rerun = last.get("rerun")
    out += [f"Rerun: {cmd}" for cmd in (rerun if isinstance(rerun, list) else [])]
    return out


def cmd_readme(args) -> int:
    """Regenerate the README's verdict tables from a report's audit.json."""
    from properties import report as rep
    from properties.readme import update_files

    def load(flag, directory, refusal_of):
        src = Path(directory) / "audit.json"
        if not src.is_file():
            raise UsageError(f"{flag}: {src} does not exist; run `python -m properties audit` "
                             "first")
        try:
            doc = json.loads(src.read_text())
        except (ValueError, OSError, UnicodeDecodeError) as e:
            raise UsageError(f"{flag}: {src} is not readable JSON ({type(e).__name__})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
            raise UsageError(f"{flag}: {src} is not an audit report")
        refuse(flag, src, doc, refusal_of, None)  # what needs no claims: before they load
        return src, doc

    def refuse(flag, src, doc, refusal_of, ids):
        try:  # ids None: the report's own, so that only the refusals the suite plays no part in
            refusal = refusal_of(doc, {r["id"] for r in doc["claims"]} if ids is None else ids)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise UsageError(f"{flag}: {src} is not an audit report of this version "
                             f"({type(e).__name__}: {e})") from None
        if refusal:
            raise UsageError(f"readme: {src}: {refusal}; the README was not changed")

    src, doc = load("--report", args.report, rep.readme_refusal)
    lsrc, ladder = None, None
    if args.ladder_report is not None:
        lsrc, ladder = load("--ladder-report", args.ladder_report, rep.ladder_refusal)
    suite = load_registry([])  # the claims load (seconds) only for reports that could be ones
    refuse("--report", src, doc, rep.readme_refusal, suite)
    if ladder is not None:
        refuse("--ladder-report", lsrc, ladder, rep.ladder_refusal, suite)
        try:  # render it once here, so that a malformed row is blamed on the right report
            rep.readme_section(doc)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise UsageError(f"--report: {src} is not an audit report of this version "
                             f"({type(e).__name__}: {e})") from None
        try:
            rep.ladder_section(doc, ladder)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise UsageError(f"--ladder-report: {lsrc} is not an audit report of this version "
                             f"({type(e).__name__}: {e})") from None
    if args.drop_ladder and ladder is not None:
        raise UsageError("readme: --drop-ladder and --ladder-report exclude each other")
    readme = Path(args.readme)
    try:  # the tables in docs/verdicts.md beside the README, the README's summary of them
        files = update_files(readme, doc, ladder, suite, drop_ladder=args.drop_ladder)
    except OSError as e:
        raise UsageError(f"--readme {readme}: cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise UsageError(f"--readme {readme}: {e}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise UsageError(f"--report: {src} is not an audit report of this version "
                         f"({type(e).__name__}: {e})") from None
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        except OSError as e:
            raise UsageError(f"--readme {readme}: {path} cannot be written "
                             f"({e.strerror or e})") from None
    print(f"updated the verdict tables of {' and '.join(map(str, files))} from {src} "
          f"({len(doc.get('claims', []))} claims)"
          + (f" and its ladder block from {lsrc} ({len(ladder['claims'])} claims)"
             if ladder is not None else ""))
    return EXIT_OK


def cmd_new_paper(args) -> int:
    """Write the skeleton of a new paper (properties/scaffold.py)."""
    from properties import scaffold
    try:
        written = scaffold.new_paper(args.name, Path(args.root), title=args.title,
                                     first_claim=args.claim)
    except ValueError as e:
        raise UsageError(f"new-paper: {e}") from None
    print("wrote " + ", ".join(written))
    print(f"next: theorem-audit audit --only '{args.name}.*'  (a verdict on the example claim), "
          "then CONTRIBUTING.md, 'Adding a paper'")
    return EXIT_OK


def cmd_new_claim(args) -> int:
    """Write the skeleton of a new claim file (properties/scaffold.py)."""
    from properties import scaffold
    try:
        written = scaffold.new_claim(args.id, Path(args.root))
    except ValueError as e:
        raise UsageError(f"new-claim: {e}") from None
    print("wrote " + ", ".join(written))
    print(f"next: theorem-audit audit --only '{args.id}', fill in the TODOs, then "
          "python tests/test_statements.py --update")
    return EXIT_OK


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    # SIGTERM or SIGHUP before the pytest run starts (while the claims load) stops cleanly too:
    # exit 130, report lock released; during the run `_run_pytest` takes over the signals
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("theorem-audit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`theorem-audit list | head`): what it read was all it wanted.
        # Point stdout at /dev/null so that Python's flush at exit does not fail again
        # (the recipe of the Python docs, "Note on SIGPIPE")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 -- a bug of the audit itself: one line, exit 3
        if os.environ.get("THEOREM_AUDIT_DEBUG"):
            raise
        print(f"theorem-audit: internal error: {type(e).__name__}: {e} (set "
              "THEOREM_AUDIT_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_BROKEN
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class _JoinOnly(argparse.Action):
    """--only given more than once: the globs of every occurrence, joined (argparse's default
    kept only the last one silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        prev = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, values if prev is None else f"{prev},{values}")


def _main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="theorem-audit", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Exit status"):])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("audit", help="run the audit and write the report")
    a.add_argument("--profile", choices=["ci", "dev", "thorough"], default=None,
                   help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else ci under CI, else dev)")
    a.add_argument("--only", default=None, action=_JoinOnly,
                   help="glob(s) of claim ids, comma-separated, e.g. 'joma.*' (repeatable: the "
                        "globs of every --only are joined)")
    a.add_argument("--json", default=None, help="path of audit.json (default: REPORT/audit.json)")
    a.add_argument("-n", "--workers", default="auto", help="pytest-xdist workers (default auto; 0 = none)")
    a.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    a.add_argument("--shards", choices=["none", "paper", "claim"], default="none",
                   help="split the run: one pytest run per paper, or per claim file (claims of "
                        "one file share its runs); the rows merge into one report (default none)")
    a.add_argument("--executor", choices=["local", "slurm"], default="local",
                   help="where shards run: here one after another, or a submitit job array "
                        "(Slurm where available, else local processes; needs the [cluster] extra)")
    a.add_argument("--size", choices=["ci", "ladder", "paper"], default=None,
                   help="the named size of the runs: ci (2 CPU cores, minutes), ladder (the longer "
                        "size ladder, CPU), paper (the ladder plus the paper's own size, CUDA); "
                        "default ci, or under --profile thorough ladder (paper with CUDA)")
    a.add_argument("--device", choices=["cpu", "cuda"], default=None,
                   help="where the simulations run (default: CUDA when present, else the CPU)")
    a.add_argument("--cache-dir", default=None,
                   help="the on-disk run cache (default $THEOREM_AUDIT_CACHE_DIR, else "
                        ".theorem-audit-cache in the checkout, else ~/.cache/theorem-audit); "
                        "share one directory between shards on a cluster")
    a.add_argument("--no-cache", action="store_true",
                   help="compute every run afresh and store nothing on disk")
    a.add_argument("--cache-limit", default="16G",
                   help="after the audit, trim the run cache to this size, least recently used "
                        "first (joblib bytes_limit: 16G, 500M, ...; default 16G: the runs of the ci "
                        "and the three --size ladder audits take about 4G)")
    a.add_argument("--fail-on", choices=sorted(FAIL_ON), default="refuted",
                   help="exit 1 when a claim's verdict is this bad (default refuted)")
    for p in (a, sub.add_parser("list", help="claim ids, last verdict, file"),
              sub.add_parser("show", help="one claim and its last result")):
        p.add_argument("--report", default="audit_report", help="report directory (default audit_report)")
        p.add_argument("--conjecture", nargs="+", default=[], metavar="FILE.py",
                       help="researcher conjecture files, audited like built-in claims")
        if p.prog.endswith("show"):
            p.add_argument("id", help="claim id")
    r = sub.add_parser("readme", help="regenerate the README's verdict tables from a report")
    r.add_argument("--report", default="audit_report", help="report directory (default audit_report)")
    r.add_argument("--readme", default=str(ROOT / "README.md"), help="the README to update")
    r.add_argument("--ladder-report", default=None, metavar="DIR",
                   help="also fill the README's ladder block from a --size ladder report in DIR "
                        "(profile ci; may be an --only run): the claims whose verdict differs "
                        "there from --report's")
    r.add_argument("--drop-ladder", action="store_true",
                   help="empty the ladder block: no --size ladder audit of this code (a stale "
                        "block is not shown as current)")
    np_ = sub.add_parser("new-paper", help="write the skeleton files of a new paper")
    np_.add_argument("name", help="the paper's claim-id prefix (a lower-case identifier)")
    np_.add_argument("--title", default=None, help="display name, e.g. 'X (A et al., ICML 2025)'")
    np_.add_argument("--claim", default="theorem1", metavar="ITEM",
                     help="the first claim's item (e.g. theorem4_1; default theorem1)")
    nc = sub.add_parser("new-claim", help="write the skeleton claim file of a new claim id")
    nc.add_argument("id", help="the claim id, paper.item (the paper must exist)")
    for p in (np_, nc):
        p.add_argument("--root", default=str(ROOT), help="the checkout to write into")
    args = ap.parse_args(argv)
    try:
        return {"audit": cmd_audit, "list": cmd_list, "show": cmd_show,
                "readme": cmd_readme, "new-paper": cmd_new_paper,
                "new-claim": cmd_new_claim}[args.cmd](args)
    except UsageError as e:
        print(f"theorem-audit: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
