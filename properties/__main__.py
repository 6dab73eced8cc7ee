"""`theorem-audit` (or `python -m properties`): run the claims' properties and report verdicts.

    theorem-audit audit [--profile ci|dev|thorough] [--only GLOBS] [--report DIR] [--json PATH]
                        [--conjecture FILE.py ...] [-n WORKERS] [--no-plots]
                        [--fail-on refuted|erratum|never]
    theorem-audit list  [--report DIR] [--conjecture FILE.py ...]
    theorem-audit show  ID [--report DIR] [--conjecture FILE.py ...]
    theorem-audit readme [--report DIR] [--readme README.md]

`audit` runs the properties in a pytest subprocess (so the CLI and CI share one code path); the
plugin writes one row per property and prints one progress line per claim as its last property
finishes; this command turns the rows into verdicts, prints the table and writes audit.json,
audit.md, a self-contained audit.html and the claims' plots into the report directory (the previous report there is kept as
audit.previous.json / .md / .html; a second audit into a directory that one is writing is refused).
`list` prints every claim id with the verdict of the last run in --report and its file; `show`
prints one claim and its last result; `readme` rewrites the README's verdict tables (between its
`audit-tables` markers) from the last report, so they are never written by hand.

Exit status of `audit`:
  0  the audit ran; no claim's verdict reached --fail-on (default: refuted)
  1  a claim's verdict reached --fail-on (refuted; with --fail-on erratum also erratum)
  2  usage error: bad --only or --conjecture, an unwritable or busy --report (nothing was run)
  3  the audit itself is broken: a property errored, showed no power, or a printed form
     expected to fail passed (the report says which)
  130 interrupted (SIGINT / SIGTERM): the report written is partial and marked as such
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from properties.registry import HARNESS_MODULES  # noqa: E402

PAPER_MODULES = sorted(
    [p.stem for p in (ROOT / "properties").glob("*.py") if p.stem not in HARNESS_MODULES]
    + [f"{p.parent.name}.{p.stem}" for p in (ROOT / "properties").glob("*/*.py")
       if (p.parent / "__init__.py").exists() and p.stem != "__init__"])

EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_BROKEN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
FAIL_ON = {"refuted": {"refuted"}, "erratum": {"refuted", "erratum"}, "never": set()}


class UsageError(Exception):
    pass


_LOADED_CONJECTURES: list = []


def load_registry(conjectures):
    """Import every paper module (flat modules and each paper package's files) and the
    researcher's conjecture files; return the claim registry."""
    from properties.registry import REGISTRY

    for mod in PAPER_MODULES:
        importlib.import_module(f"properties.{mod}")
    for i, path in enumerate(conjectures):
        spec = importlib.util.spec_from_file_location(f"_conjecture_{i}_{Path(path).stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED_CONJECTURES.append(module)
    return REGISTRY


def properties_per_claim() -> dict[str, int]:
    """How many @audits properties each claim has, from the loaded modules (for progress)."""
    counts: dict[str, int] = {}
    mods = [m for name, m in sys.modules.items() if name.startswith("properties.")]
    for m in mods + _LOADED_CONJECTURES:
        for obj in list(vars(m).values()):
            for mark in getattr(obj, "pytestmark", []) if callable(obj) else []:
                if getattr(mark, "name", "") == "claim" and getattr(obj, "__module__", "") == m.__name__:
                    counts[mark.args[0]] = counts.get(mark.args[0], 0) + 1
    return counts


def select(ids, only: str | None):
    """The ids matched by the comma-separated globs `only`; a glob that matches nothing is a
    UsageError naming close matches."""
    if not only:
        return sorted(ids), None
    pats = [p.strip() for p in only.split(",") if p.strip()]
    if not pats:
        raise UsageError("--only: give at least one claim id or glob")
    for p in pats:
        if not any(fnmatch.fnmatchcase(i, p) for i in ids):
            close = difflib.get_close_matches(p.rstrip("*."), sorted(ids), n=5, cutoff=0.5)
            papers = sorted({i.split(".", 1)[0] + ".*" for i in ids})
            raise UsageError(f"--only: {p!r} matches no claim"
                             + (f"; close matches: {', '.join(close)}" if close else
                                f"; papers: {', '.join(papers)}"))
    chosen = sorted(i for i in ids if any(fnmatch.fnmatchcase(i, p) for p in pats))
    return chosen, pats


def _check_report_dir(report: Path):
    try:
        report.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=report, prefix=".write-test-"):
            pass
    except OSError as e:
        raise UsageError(f"--report: {report} is not a writable directory ({e.strerror or e})")


class _Lock:
    """REPORT/.audit.lock holds the pid of the audit writing there."""

    def __init__(self, report: Path):
        self.path = report / ".audit.lock"

    def __enter__(self):
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                return self
            except FileExistsError:
                try:
                    pid = int(self.path.read_text().strip() or 0)
                    os.kill(pid, 0)
                except (ValueError, ProcessLookupError, PermissionError, FileNotFoundError):
                    self.path.unlink(missing_ok=True)  # a stale lock: its audit is gone
                    continue
                raise UsageError(f"--report: another audit (pid {pid}) is writing to "
                                 f"{self.path.parent}; wait for it or choose another directory")
        raise UsageError(f"--report: cannot take the lock {self.path}")

    def __exit__(self, *exc):
        self.path.unlink(missing_ok=True)


def _stamp(profile: str) -> dict:
    def version(mod):
        try:
            return importlib.import_module(mod).__version__
        except Exception:  # noqa: BLE001 - a missing package is reported as such
            return None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                    cwd=ROOT, capture_output=True, text=True,
                                    timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = None, None
    try:
        from sim import default_device
        device = str(default_device())
    except Exception:  # noqa: BLE001
        device = None
    return {"commit": commit, "dirty": dirty, "profile": profile, "device": device,
            "python": sys.version.split()[0],
            "versions": {m: version(m) for m in ("torch", "hypothesis", "numpy", "scipy", "sympy")}}


def _run_pytest(cmd, env) -> tuple[int, bool]:
    """Run pytest in its own process group; SIGINT/SIGTERM here stop it (SIGINT, so that pytest
    still writes the rows it has). Returns (exit code, interrupted)."""
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True)
    interrupted = False

    def stop(signum, frame):
        nonlocal interrupted
        interrupted = True
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                rc = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                continue
        return rc, interrupted
    finally:
        if proc.poll() is None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        for s, h in old.items():
            signal.signal(s, h)


def cmd_audit(args) -> int:
    from properties import report as rep

    for c in args.conjecture:
        if not Path(c).is_file() or not c.endswith(".py"):
            raise UsageError(f"--conjecture: {c!r} is not a .py file")
    profile = args.profile or os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    report = Path(args.report)
    _check_report_dir(report)
    json_path = Path(args.json) if args.json else report / "audit.json"
    if args.json:
        _check_report_dir(json_path.parent)
    env = dict(os.environ, HYPOTHESIS_PROFILE=profile, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    os.environ["HYPOTHESIS_PROFILE"] = profile
    with _Lock(report):
        try:
            registry = load_registry(args.conjecture)
        except Exception as e:  # a property module that does not import: the audit is broken
            print(f"theorem-audit: loading the claims failed: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return EXIT_BROKEN
        chosen, pats = select(set(registry), args.only)
        return _audit(args, profile, env, report, json_path, registry, chosen, pats)


def _audit(args, profile, env, report, json_path, registry, chosen, pats) -> int:
    from properties import report as rep

    expect = {k: v for k, v in properties_per_claim().items() if k in set(chosen)}
    with tempfile.TemporaryDirectory() as tmp:
        raw_path, expect_path = Path(tmp) / "raw.json", Path(tmp) / "expect.json"
        expect_path.write_text(json.dumps(expect))
        cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(ROOT / "pyproject.toml"),
               "--rootdir", str(ROOT), "--audit-raw", str(raw_path), "--audit-expect",
               str(expect_path), "-p", "no:cacheprovider",
               str(ROOT / "properties"), *[str(Path(c).resolve()) for c in args.conjecture]]
        if pats:
            cmd += ["--claims", ",".join(pats)]
        if args.workers not in ("0", 0):
            cmd += ["-n", str(args.workers)]
        t0 = time.time()
        rc, interrupted = _run_pytest(cmd, env)
        if not raw_path.exists():
            print(f"pytest produced no audit rows (exit {rc})"
                  + (": interrupted" if interrupted else ""), file=sys.stderr)
            return EXIT_INTERRUPTED if interrupted else EXIT_BROKEN
        raw = json.loads(raw_path.read_text())
        interrupted = interrupted or rc == 2  # pytest's own exit code for an interrupt

        rows = rep.build(registry, raw, lambda i: i in set(chosen))
        meta = dict(_stamp(profile), interrupted=interrupted, seconds=round(time.time() - t0, 1),
                    command=" ".join(sys.argv))
        for r in rows:
            r["rerun"] = rep.rerun_commands(r, profile)
        plots = {}
        if not args.no_plots and not interrupted:
            import matplotlib

            matplotlib.use("Agg")
            for r in rows:
                claim = registry.get(r["id"])
                if claim is not None and claim.plot is not None:
                    name = r["id"].replace(".", "_") + ".png"
                    try:
                        claim.plot(str(report / name))
                        plots[r["id"]] = name
                    except Exception as e:  # a broken figure must not hide the verdicts
                        r["detail"] = (r["detail"] + f" | plot failed: {e!r}").lstrip(" |")
        for path in (json_path, report / "audit.md", report / "audit.html"):
            if path.exists():
                os.replace(path, path.with_name(path.stem + ".previous" + path.suffix))
        rep.write(rows, json_path, report / "audit.md", profile, plots, meta)
    print()
    print(rep.table(rows))
    print(f"\nwrote {json_path}, {report / 'audit.md'}, {report / 'audit.html'} and {len(plots)} plots "
          f"({time.time() - t0:.0f} s, pytest exit {rc})"
          + ("; INTERRUPTED: the report is partial" if interrupted else ""))
    if interrupted:
        return EXIT_INTERRUPTED
    broken = [r["id"] for r in rows if any(p["failure"] in ("error", "power", "unexpected-pass")
                                           for p in r["properties"])]
    if broken:
        print(f"the audit is broken for: {', '.join(broken)} (see detail)", file=sys.stderr)
        return EXIT_BROKEN
    failing = [r["id"] for r in rows if r["verdict"] in FAIL_ON[args.fail_on]]
    if failing:
        print(f"--fail-on {args.fail_on}: {', '.join(failing)}", file=sys.stderr)
        return EXIT_VERDICT
    if rc not in (0, 1, 5):
        print(f"pytest exited {rc}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


def _last_run(report: Path) -> dict:
    p = report / "audit.json"
    if not p.exists():
        return {}
    try:
        return {r["id"]: r for r in json.loads(p.read_text()).get("claims", [])}
    except (json.JSONDecodeError, OSError):
        return {}


def cmd_list(args) -> int:
    from properties.registry import REGISTERED_IN
    registry = load_registry(args.conjecture)
    last = _last_run(Path(args.report))
    ids = sorted(registry)
    w = max(len(i) for i in ids) if ids else 2
    print(f"{'id'.ljust(w)}  {'last verdict'.ljust(12)}  file")
    for i in ids:
        print(f"{i.ljust(w)}  {last.get(i, {}).get('verdict', '-').ljust(12)}  "
              f"{REGISTERED_IN.get(i, '')}")
    return EXIT_OK


def cmd_show(args) -> int:
    from properties.registry import REGISTERED_IN
    registry = load_registry(args.conjecture)
    if args.id not in registry:
        close = difflib.get_close_matches(args.id, sorted(registry), n=5, cutoff=0.5)
        raise UsageError(f"no claim {args.id!r}" + (f"; close matches: {', '.join(close)}"
                                                     if close else ""))
    c = registry[args.id]
    out = [f"{c.id} — {c.paper}, {c.where}", f"file: {REGISTERED_IN.get(c.id, '')}", "",
           f"As printed: {c.statement}", f"Assumptions: {c.assumptions}"]
    for label, val in (("Corrected", c.corrected), ("Why the printed form fails", c.reason),
                       ("Reading", c.reading), ("Audit gap", c.audit_gap),
                       ("Asymptotic in", c.asymptotic)):
        if val:
            out.append(f"{label}: {val}")
    out += [f"Prediction: {c.prediction}", f"Simulation: {c.simulation}", f"Metric: {c.metric}",
            f"Tolerance: {c.tolerance}"]
    out.append("Alternatives: " + ("; ".join(f"{a.kind}:{a.name} ({a.source})"
                                             for a in c.alternatives) or "none declared"))
    for h in c.history:
        out.append(f"History: {h}")
    last = _last_run(Path(args.report)).get(c.id)
    if last:
        out += ["", f"Last run: {last['verdict']}, {last.get('draws', '?')} draws"
                    + (f" — {last['detail']}" if last.get("detail") else "")]
        out += [f"Rerun: {cmd}" for cmd in last.get("rerun", [])]
    print("\n".join(out))
    return EXIT_OK


def cmd_readme(args) -> int:
    """Regenerate the README's verdict tables from a report's audit.json."""
    from properties import report as rep

    src = Path(args.report) / "audit.json"
    if not src.is_file():
        raise UsageError(f"--report: {src} does not exist; run `python -m properties audit` first")
    doc = json.loads(src.read_text())
    readme = Path(args.readme)
    try:
        text = rep.update_readme(readme.read_text(), doc)
    except ValueError as e:
        raise UsageError(f"--readme {readme}: {e}") from None
    readme.write_text(text)
    print(f"updated the verdict tables of {readme} from {src} ({len(doc.get('claims', []))} claims)")
    return EXIT_OK


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    # SIGTERM before the pytest run starts (while the claims load) stops cleanly too: exit 130,
    # report lock released; during the run `_run_pytest` takes over both signals
    old_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("theorem-audit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, old_term)


def _main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="theorem-audit", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Exit status"):])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("audit", help="run the audit and write the report")
    a.add_argument("--profile", choices=["ci", "dev", "thorough"], default=None,
                   help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else ci under CI, else dev)")
    a.add_argument("--only", default=None, help="glob(s) of claim ids, comma-separated, e.g. 'joma.*'")
    a.add_argument("--json", default=None, help="path of audit.json (default: REPORT/audit.json)")
    a.add_argument("-n", "--workers", default="auto", help="pytest-xdist workers (default auto; 0 = none)")
    a.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
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
    args = ap.parse_args(argv)
    try:
        return {"audit": cmd_audit, "list": cmd_list, "show": cmd_show,
                "readme": cmd_readme}[args.cmd](args)
    except UsageError as e:
        print(f"theorem-audit: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
