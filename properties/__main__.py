"""`theorem-audit` (or `python -m properties`): run the claims' properties and report verdicts.

    theorem-audit audit [--profile ci|dev|thorough] [--only GLOBS] [--report DIR] [--json PATH]
                        [--conjecture FILE.py ...] [-n WORKERS] [--no-plots]
                        [--fail-on refuted|erratum|never]
                        [--shards none|paper|claim] [--executor local|slurm]
                        [--size ci|ladder|paper] [--device cpu|cuda]
                        [--cache-dir DIR | --no-cache] [--cache-limit 4G]
    theorem-audit list  [--report DIR] [--conjecture FILE.py ...]
    theorem-audit show  ID [--report DIR] [--conjecture FILE.py ...]
    theorem-audit readme [--report DIR] [--readme README.md]
    theorem-audit new-paper NAME [--title TITLE]  # skeleton: theory/, sim/, properties/NAME/
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
`audit-tables` markers) from the last report, so they are never written by hand.

Exit status of `audit`:
  0  the audit ran; no claim's verdict reached --fail-on (default: refuted)
  1  a claim's verdict reached --fail-on (refuted or inconsistent; with --fail-on erratum also
     erratum)
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
# `inconsistent` (a consistency check of the simulator against its own derivation failed) is as
# bad as `refuted`: the simulation the verdicts rest on disagrees with its own derivation.
FAIL_ON = {"refuted": {"refuted", "inconsistent"},
           "erratum": {"refuted", "inconsistent", "erratum"}, "never": set()}


class UsageError(Exception):
    pass


_LOADED_CONJECTURES: list = []


def load_registry(conjectures, builtin: bool = True):
    """Import every paper module (flat modules and each paper package's files; not with
    builtin=False) and the researcher's conjecture files; return the claim registry."""
    from properties.registry import REGISTRY

    for mod in PAPER_MODULES if builtin else ():
        importlib.import_module(f"properties.{mod}")
    for i, path in enumerate(conjectures):
        spec = importlib.util.spec_from_file_location(f"_conjecture_{i}_{Path(path).stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED_CONJECTURES.append(module)
    return REGISTRY


def only_conjectures(only: str | None, conjectures) -> bool:
    """Whether the --only globs can match no built-in claim: each names a prefix (before its
    first dot, no wildcard) that is no paper package.  Then the suite is not imported at all
    (a one-claim conjecture audit starts in a second, not in the suite's import time)."""
    from properties.registry import paper_packages

    if not only or not conjectures:
        return False
    pats = [p.strip() for p in only.split(",") if p.strip()]
    papers = set(paper_packages(ROOT))
    for p in pats:
        prefix = p.split(".", 1)[0]
        if "." not in p or any(ch in prefix for ch in "*?[") or prefix in papers:
            return False
    return bool(pats)


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
    from properties import cache
    from properties.check import size
    return {"commit": commit, "dirty": dirty, "profile": profile, "size": size(),
            "device": device, "python": sys.version.split()[0],
            "run_cache": str(cache.cache_dir()) if cache.enabled() else None,
            "versions": {m: version(m) for m in ("torch", "hypothesis", "numpy", "scipy", "sympy",
                                                 "joblib")}}


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


def _run_environment(args) -> dict:
    """The environment of the runs, from --size, --device, --cache-dir, --no-cache (checked
    before any work: a bad size, an absent CUDA device or an unwritable cache is a usage error)."""
    from properties import cache
    from properties.check import SIZE_ENV
    from sim import DEVICE_ENV

    out = {}
    if args.size:
        out[SIZE_ENV] = args.size
    if args.device:
        out[DEVICE_ENV] = args.device
        if args.device == "cuda":
            import torch
            if not torch.cuda.is_available():
                raise UsageError(f"--device cuda: torch {torch.__version__} finds no CUDA device")
    if args.size == "paper" and (args.device == "cpu" or not args.device and not _cuda()):
        raise UsageError("--size paper (JoMA d = 1024, 3 layers, 10k steps) needs a CUDA device; "
                         "use --size ci or ladder on a CPU")
    if args.no_cache:
        out[cache.OFF_ENV] = "1"
    else:
        d = Path(args.cache_dir).expanduser().resolve() if args.cache_dir else cache.cache_dir()
        try:
            d.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=d):
                pass
        except OSError as e:
            raise UsageError(f"--cache-dir {str(d)!r} is not writable ({e.strerror}); choose "
                             "another or pass --no-cache") from None
        out[cache.DIR_ENV] = str(d)
    return out


def _render(plot) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "figure.png"
        plot(str(path))
        return path.read_bytes()


def _figure_png(plot, claim_id: str) -> bytes:
    """A claim's figure as PNG bytes, through the run cache: keyed by the plot function's code
    version (its figures.py, the paper's runs and sim/ and theory/), what it closes over, the
    claim, and the matplotlib version and audit style it is drawn with.  The runs it reads come
    from the same cache, so a figure never trains on its own."""
    import matplotlib

    from properties import cache, figstyle

    style = figstyle.STYLE.read_bytes() if figstyle.STYLE.exists() else b""
    key = cache.key_of(plot, (), {}, "figure", claim_id, cache.closure_values(plot),
                       matplotlib.__version__, style)
    return cache.call(key, _render, (plot,))


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()


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
    run_env = _run_environment(args)
    env = dict(os.environ, HYPOTHESIS_PROFILE=profile, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               **run_env)
    os.environ["HYPOTHESIS_PROFILE"] = profile
    os.environ.update(run_env)  # the figures, drawn here, read the same cached runs
    with _Lock(report):
        try:
            registry = load_registry(args.conjecture,
                                     builtin=not only_conjectures(args.only, args.conjecture))
        except Exception as e:  # a property module that does not import: the audit is broken
            print(f"theorem-audit: loading the claims failed: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return EXIT_BROKEN
        chosen, pats = select(set(registry), args.only)
        return _audit(args, profile, env, report, json_path, registry, chosen, pats)


def shard_groups(chosen: list[str], mode: str) -> list[list[str]]:
    """The claim ids of each shard.  `none`: one shard; `paper`: one per paper prefix; `claim`:
    one per claim file, so that claims registered in one file (which share its cached runs) run
    in the same shard."""
    from properties.registry import REGISTERED_IN

    if mode == "none":
        return [list(chosen)] if chosen else []
    key = ((lambda i: i.split(".", 1)[0]) if mode == "paper"
           else (lambda i: REGISTERED_IN.get(i, i)))
    groups: dict[str, list[str]] = {}
    for i in chosen:
        groups.setdefault(key(i), []).append(i)
    return [sorted(g) for _, g in sorted(groups.items())]


def _shard_job(cmd: list[str], env: dict) -> int:
    """What a cluster job runs: one shard's pytest command (its rows go to --audit-raw)."""
    return subprocess.run(cmd, env=env, cwd=ROOT).returncode


def _run_shards(cmds, env, executor: str, folder: Path) -> tuple[int, bool]:
    """Run the shards' pytest commands: `local` one after another in this machine's process
    group handling; `slurm` as a submitit job array (AutoExecutor: Slurm where there is one,
    local processes otherwise).  Returns (worst exit code, interrupted)."""
    if executor == "local":
        rcs, interrupted = [], False
        for c in cmds:
            rc, interrupted = _run_pytest(c, env)
            rcs.append(rc)
            if interrupted:
                break
        return _worst(rcs), interrupted
    try:
        import submitit
    except ImportError:
        raise UsageError("--executor slurm needs submitit: pip install 'theorem-audit[cluster]'") from None
    ex = submitit.AutoExecutor(folder=str(folder / "submitit"))
    ex.update_parameters(timeout_min=int(os.environ.get("THEOREM_AUDIT_TIMEOUT_MIN", "120")),
                         cpus_per_task=int(os.environ.get("THEOREM_AUDIT_CPUS", "2")),
                         name="theorem-audit")
    jobs = []
    with ex.batch():
        for c in cmds:
            jobs.append(ex.submit(_shard_job, c, env))
    try:
        return _worst([j.result() for j in jobs]), False
    except KeyboardInterrupt:
        for j in jobs:
            j.cancel(check=False)
        return 2, True


def _worst(rcs) -> int:
    """pytest exit codes of several shards as one: an error (2-4) beats failures (1) beats
    nothing collected (5) beats success."""
    order = {0: 0, 5: 1, 1: 2}
    return max(rcs, key=lambda r: order.get(r, 3), default=5)


# `-n auto` (the default) runs this few properties in the pytest process itself: starting xdist
# workers (each importing the suite) costs more than it saves on a handful of properties
SERIAL_UP_TO = 6


def _workers(workers, expect: dict, ids) -> str:
    """The -n of one pytest run: as asked, except that `auto` for at most SERIAL_UP_TO properties
    is 0 (no xdist start-up: a one-claim conjecture audit gives its verdict in seconds)."""
    if str(workers) == "auto" and sum(expect.get(i, 0) for i in ids) <= SERIAL_UP_TO:
        return "0"
    return str(workers)


def _pytest_paths(ids, conjectures) -> list[str]:
    """What one pytest run collects: the conjecture files, and properties/ only when one of the
    chosen claims is registered there (a conjecture-only audit does not import the suite)."""
    from properties.registry import REGISTERED_IN

    paths = [str(Path(c).resolve()) for c in conjectures]
    if not conjectures or any(REGISTERED_IN.get(i, "properties/").startswith("properties/")
                              for i in ids):
        paths.insert(0, str(ROOT / "properties"))
    return paths


def _audit(args, profile, env, report, json_path, registry, chosen, pats) -> int:
    from properties import report as rep

    expect = {k: v for k, v in properties_per_claim().items() if k in set(chosen)}
    groups = shard_groups(chosen, args.shards)
    work = Path(tempfile.mkdtemp(prefix=".shards-", dir=report)) if args.shards != "none" else None
    with tempfile.TemporaryDirectory() as tmp:
        base = work or Path(tmp)
        expect_path = base / "expect.json"
        expect_path.write_text(json.dumps(expect))
        cmds, raws = [], []
        for k, ids in enumerate(groups):
            raw_k = base / f"raw-{k}.json"
            cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(ROOT / "pyproject.toml"),
                   "--rootdir", str(ROOT), "--audit-raw", str(raw_k), "--audit-expect",
                   str(expect_path), "-p", "no:cacheprovider",
                   *_pytest_paths(ids, args.conjecture)]
            if args.shards != "none":
                cmd += ["--claims", ",".join(ids)]
            elif pats:
                cmd += ["--claims", ",".join(pats)]
            workers = _workers(args.workers, expect, ids)
            if workers not in ("0", 0):
                cmd += ["-n", str(workers)]
            cmds.append(cmd)
            raws.append(raw_k)
        t0 = time.time()
        if args.shards == "none":
            rc, interrupted = _run_pytest(cmds[0], env) if cmds else (5, False)
        else:
            print(f"{len(cmds)} shards ({args.shards}) on the {args.executor} executor")
            rc, interrupted = _run_shards(cmds, env, args.executor, work)
        present = [p for p in raws if p.exists()]
        if not present:
            print(f"pytest produced no audit rows (exit {rc})"
                  + (": interrupted" if interrupted else ""), file=sys.stderr)
            return EXIT_INTERRUPTED if interrupted else EXIT_BROKEN
        missing = [k for k, p in enumerate(raws) if not p.exists()]
        if missing:
            print(f"shards {missing} produced no audit rows: the report is partial",
                  file=sys.stderr)
        interrupted = interrupted or bool(missing)
        raw = {"tests": [t for p in present for t in json.loads(p.read_text())["tests"]]}
        if work is not None:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
        interrupted = interrupted or rc == 2  # pytest's own exit code for an interrupt

        rows = rep.build(registry, raw, lambda i: i in set(chosen))
        meta = dict(_stamp(profile), interrupted=interrupted, seconds=round(time.time() - t0, 1),
                    command=" ".join(sys.argv))
        for r in rows:
            r["rerun"] = rep.rerun_commands(r, profile)
        plots = {}
        try:
            import matplotlib
        except ImportError:
            matplotlib = None
            if not args.no_plots:
                print("figures skipped: matplotlib is not installed "
                      "(pip install 'theorem-audit[figures]')", file=sys.stderr)
        if not args.no_plots and not interrupted and matplotlib is not None:
            from properties import cache

            matplotlib.use("Agg")
            t_fig, reused, trained = time.time(), 0, {}
            for r in rows:
                claim = registry.get(r["id"])
                if claim is not None and claim.plot is not None:
                    name = r["id"].replace(".", "_") + ".png"
                    before = cache.STATS["misses"]
                    try:
                        (report / name).write_bytes(_figure_png(claim.plot, r["id"]))
                        plots[r["id"]] = name
                    except Exception as e:  # a broken figure must not hide the verdicts
                        r["detail"] = (r["detail"] + f" | plot failed: {e!r}").lstrip(" |")
                    computed = cache.STATS["misses"] - before  # the figure itself, then its runs
                    reused += computed == 0
                    if computed > 1:
                        trained[r["id"]] = computed - 1
            # a figure draws from the runs the properties stored: `runs_computed` names any that
            # had to compute a run of its own (an --only selection that skipped the claim using it)
            meta["figures"] = {"drawn": len(plots), "seconds": round(time.time() - t_fig, 1),
                               "read_whole_from_cache": reused, "runs_computed": trained,
                               "cache": cache.enabled()}
            if trained:
                print(f"figures: {sum(trained.values())} runs were not in the cache and were "
                      f"computed for {sorted(trained)}")
        for path in (json_path, report / "audit.md", report / "audit.html"):
            if path.exists():
                os.replace(path, path.with_name(path.stem + ".previous" + path.suffix))
        rep.write(rows, json_path, report / "audit.md", profile, plots, meta)
    if not args.no_cache:
        from properties import cache
        cache.reduce_size(args.cache_limit)
    print()
    print(rep.table(rows, meta))
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
    if c.kind != "paper":
        out.append(f"Kind: {c.kind} (listed apart from the paper's verdicts)")
    last = _last_run(Path(args.report)).get(c.id)
    if last:
        from properties import report as rep
        out += ["", f"Last run: {last.get('verdict_label') or last['verdict']}, "
                    f"{last.get('draws', '?')} draws, resolution {rep.resolution_cell(last)}"
                    + (f" — {last['detail']}" if last.get("detail") else "")]
        try:
            for head, lines in rep._claim_sections(last):
                out += [f"{head}:"] + [f"  {x}" for x in lines]
        except (KeyError, TypeError):  # a report of an older schema
            pass
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
    refusal = rep.readme_refusal(doc, load_registry([]))
    if refusal:
        raise UsageError(f"readme: {src}: {refusal}; the README was not changed")
    readme = Path(args.readme)
    try:
        text = rep.update_readme(readme.read_text(), doc)
    except ValueError as e:
        raise UsageError(f"--readme {readme}: {e}") from None
    readme.write_text(text)
    print(f"updated the verdict tables of {readme} from {src} ({len(doc.get('claims', []))} claims)")
    return EXIT_OK


def cmd_new_paper(args) -> int:
    """Write the skeleton of a new paper (properties/scaffold.py)."""
    from properties import scaffold
    try:
        written = scaffold.new_paper(args.name, Path(args.root), title=args.title)
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
    a.add_argument("--cache-limit", default="4G",
                   help="after the audit, trim the run cache to this size, least recently used "
                        "first (joblib bytes_limit: 4G, 500M, ...; default 4G)")
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
    np_ = sub.add_parser("new-paper", help="write the skeleton files of a new paper")
    np_.add_argument("name", help="the paper's claim-id prefix (a lower-case identifier)")
    np_.add_argument("--title", default=None, help="display name, e.g. 'X (A et al., ICML 2025)'")
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
