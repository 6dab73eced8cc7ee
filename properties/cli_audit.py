"""`theorem-audit audit` (properties/__main__.py): every argument is checked before any work (a
bad one is exit 2 with one line), then one pass -- plan, run, collect, decide, draw, write, trim --
each step a function.  The pytest runs are `properties.proctree`'s and the shards
`properties.shards`'s; the verdicts are `properties.verdict`'s and the report
`properties.report`'s.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from properties.cli_common import (EXIT_BROKEN, EXIT_INTERRUPTED, EXIT_OK, EXIT_VERDICT, FAIL_ON,
                                   PYTEST_INI, ROOT, UsageError, _check_conjecture_path,
                                   check_claim_ids, load_registry, only_conjectures, papers_of,
                                   properties_by_claim, select)
from properties.proctree import _run_pytest
from properties.shards import _run_shards, shard_groups


# --------------------------------------------------------------------------------------------
# Checking the arguments (before any work: every failure is exit 2 with one line)
# --------------------------------------------------------------------------------------------
_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}


def parse_size(text) -> int:
    """'4G', '500M', '50K', '4GB', '4GiB', '1.5G', '1000000' -> bytes (> 0); else UsageError."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise UsageError(f"--cache-limit: {text!r} is not a size (give e.g. 4G, 500M, 50K or a "
                         "number of bytes)")
    n = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if n <= 0:
        raise UsageError(f"--cache-limit: {text!r} must be a positive size (e.g. 4G)")
    return n


def check_workers(text) -> str:
    """-n: 'auto', 'logical' or a whole number >= 0 (0: no xdist)."""
    t = str(text).strip()
    if t in ("auto", "logical") or (t.isdigit() and int(t) < 10_000):
        return str(int(t)) if t.isdigit() else t
    raise UsageError(f"-n/--workers: {text!r} must be 'auto', 'logical' or a whole number >= 0")


def check_profile(profile) -> str:
    from properties.settings import PROFILES

    if profile not in PROFILES:
        raise UsageError(f"Hypothesis profile {profile!r} (from $HYPOTHESIS_PROFILE) is not one "
                         f"of {', '.join(PROFILES)}")
    return profile


_REPORT_FILES = ("audit.json", "audit.md", "audit.html")


def _is_audit_json(path: Path) -> bool:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and "schema_version" in doc and "claims" in doc


def check_outputs(report_arg: str, json_arg: str | None) -> tuple[Path, Path]:
    """The report directory and the audit.json path, checked: a writable directory; existing
    report files there are regular files (they are rotated to .previous); an explicit --json
    that exists is a regular file holding an earlier audit.json (nothing else is moved)."""
    if not str(report_arg).strip():
        raise UsageError("--report: give a directory (an empty path would write into the "
                         "working directory)")
    report = Path(report_arg)
    _check_report_dir(report)
    for name in _REPORT_FILES:
        p = report / name
        if (p.exists() or p.is_symlink()) and (p.is_symlink() or not p.is_file()):
            raise UsageError(f"--report: {p} exists and is not a regular file; the audit "
                             "rotates only report files it wrote")
    if json_arg is None:
        return report, report / "audit.json"
    if not str(json_arg).strip():
        raise UsageError("--json: give a file path")
    jp = Path(json_arg)
    if jp.exists() or jp.is_symlink():
        if jp.is_symlink() or not jp.is_file():
            raise UsageError(f"--json: {jp} exists and is not a regular file; refusing to move it")
        if not _is_audit_json(jp):
            raise UsageError(f"--json: {jp} exists and is not an audit report; remove it or "
                             "choose another path (only an earlier audit.json is rotated)")
    _check_report_dir(jp.parent, "--json")
    return report, jp


def _check_report_dir(report: Path, option: str = "--report"):
    try:
        report.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=report, prefix=".write-test-"):
            pass
    except OSError as e:
        raise UsageError(f"{option}: {report} is not a writable directory ({e.strerror or e})"
                         ) from None


class _Lock:
    """REPORT/.audit.lock holds the pid of the audit writing there.  A lock whose pid is gone,
    or that holds no pid at all (a crash or a full disk between creating and writing it), is
    stale: taken over with a note."""

    def __init__(self, report: Path):
        self.path = report / ".audit.lock"

    def __enter__(self):
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pid = self._holder()
                if pid is None:
                    continue  # removed as stale: try again
                raise UsageError(f"--report: another audit (pid {pid}) is writing to "
                                 f"{self.path.parent}; wait for it or choose another directory")
            try:
                os.write(fd, str(os.getpid()).encode())
                os.fsync(fd)
            except OSError as e:
                os.close(fd)
                self.path.unlink(missing_ok=True)
                raise UsageError(f"--report: cannot write the lock {self.path} "
                                 f"({e.strerror or e})") from None
            os.close(fd)
            _remove_stale_scratch(self.path.parent)
            return self
        raise UsageError(f"--report: cannot take the lock {self.path}")

    def _holder(self) -> int | None:
        """The live pid holding the lock, or None after removing a stale one."""
        try:
            text = self.path.read_text().strip()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise UsageError(f"--report: cannot read the lock {self.path} ({e.strerror or e})"
                             ) from None
        pid = int(text) if text.isdigit() else 0
        if pid > 0 and pid != os.getpid():
            try:
                os.kill(pid, 0)
                return pid
            except PermissionError:  # alive, another user's
                return pid
            except (ProcessLookupError, OverflowError):
                pass
        why = f"its audit (pid {pid}) is gone" if pid > 0 else "it holds no pid"
        print(f"theorem-audit: note: taking over the stale lock {self.path} ({why})",
              file=sys.stderr)
        self.path.unlink(missing_ok=True)
        return None

    def __exit__(self, *exc):
        self.path.unlink(missing_ok=True)


SCRATCH_PREFIX = ".audit-run-"


def _remove_stale_scratch(report: Path) -> None:
    """Scratch directories of earlier audits into `report` (the lock is held: none is live)."""
    import shutil

    for d in [*report.glob(SCRATCH_PREFIX + "*"), *report.glob(".shards-*")]:
        shutil.rmtree(d, ignore_errors=True)
    for f in report.glob(".tmp-*"):  # report.py's temporary files of a killed writer
        f.unlink(missing_ok=True)


# where an untracked file changes what an audit runs (a new paper's claims, closed forms, runs)
_CODE_DIRS = ("theory", "sim", "properties")


def _git_state(root: Path = ROOT) -> tuple[str | None, bool | None, list]:
    """The checkout's commit; whether it differs from it (a tracked file changed, or an
    untracked file under theory/, sim/ or properties/: a report of a new paper not yet added
    could not be reproduced from the commit); and those untracked files' names.  (None, None,
    []) outside a git checkout (an installed package)."""
    try:
        def git(*a):
            return subprocess.run(["git", *a], cwd=root, capture_output=True, text=True,
                                  timeout=10)
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None, None, []
        changed = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
        new = git("status", "--porcelain", "--untracked-files=all", "--",
                  *_CODE_DIRS).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None, None, []
    untracked = sorted(line[3:] for line in new if line.startswith("?? ")
                       and "__pycache__" not in line and not line.endswith(".pyc"))
    return head.stdout.strip() or None, bool(changed or untracked), untracked


def _stamp(profile: str) -> dict:
    def version(mod):
        try:
            return importlib.import_module(mod).__version__
        except Exception:  # noqa: BLE001 - a missing package is reported as such
            return None
    commit, dirty, untracked = _git_state()
    try:
        from sim import default_device
        device = str(default_device())
    except Exception:  # noqa: BLE001
        device = None
    from properties import cache
    from properties.check import size
    return {"commit": commit, "dirty": dirty, "untracked": untracked, "profile": profile,
            "size": size(),
            "device": device, "python": sys.version.split()[0],
            "run_cache": str(cache.cache_dir()) if cache.enabled() else None,
            "versions": {m: version(m) for m in ("torch", "hypothesis", "numpy", "scipy", "sympy",
                                                 "joblib")}}


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
    # every argument is checked before any work: a bad one is exit 2 with one line
    for c in args.conjecture:
        _check_conjecture_path(c)
    profile = check_profile(args.profile or os.environ.get("HYPOTHESIS_PROFILE")
                            or ("ci" if os.environ.get("CI") else "dev"))
    args.workers = check_workers(args.workers)
    args.cache_limit_bytes = None if args.no_cache else parse_size(args.cache_limit)
    if args.only is not None and not args.only.strip():
        raise UsageError("--only: give at least one claim id or glob (an empty --only would "
                         "run every claim)")
    report, json_path = check_outputs(args.report, args.json)
    run_env = _run_environment(args)
    env = dict(os.environ, HYPOTHESIS_PROFILE=profile, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               **run_env)
    os.environ["HYPOTHESIS_PROFILE"] = profile
    os.environ.update(run_env)  # the figures, drawn here, read the same cached runs
    with _Lock(report):
        # the profile (and one torch thread) before the claims load: a serial run is forked from
        # this process, and the properties' @settings take the profile loaded when they are made
        from properties.plugin import _setup_hypothesis_and_torch
        _setup_hypothesis_and_torch()
        try:
            registry = load_registry(args.conjecture,
                                     builtin=not only_conjectures(args.only, args.conjecture),
                                     papers=papers_of(args.only))
        except UsageError:
            raise
        except Exception as e:  # a property module that does not import: the audit is broken
            print(f"theorem-audit: loading the claims failed: {type(e).__name__}: {e}",
                  file=sys.stderr)
            return EXIT_BROKEN
        check_claim_ids(registry)
        chosen, pats = select(set(registry), args.only)
        args.broken_rows = _broken_rows(chosen)
        return _audit(args, profile, env, report, json_path, registry, chosen, pats)


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
    """What one pytest run collects: the conjecture files, and the folders of the papers that
    register the chosen claims (a one-paper audit does not collect the others; a
    conjecture-only audit does not import the suite); a paper module that does not import is
    left out (`--ignore`), so that it blocks only itself."""
    from properties.cli_common import BROKEN_MODULES
    from properties.registry import REGISTERED_IN

    paths = [str(Path(c).resolve()) for c in conjectures]
    dirs = sorted({str(Path(REGISTERED_IN.get(i, "properties/x")).parent) for i in ids
                   if REGISTERED_IN.get(i, "properties/").startswith("properties/")})
    if not conjectures and not dirs:
        dirs = ["properties"]
    paths[:0] = [str(ROOT / d) for d in dirs]
    return paths + [f"--ignore={ROOT / f}" for f in sorted(BROKEN_MODULES)]


# --------------------------------------------------------------------------------------------
# The audit: run, collect, decide, draw, write, trim -- one pass, each step a function
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Plan:
    """What will run: one pytest command per shard, where each writes its rows, the claims of
    each, and the names of the properties expected per claim."""
    cmds: list
    raws: list
    groups: list
    expect: dict


@dataclasses.dataclass
class Ran:
    """How the run went: pytest's (worst) exit code, whether a signal stopped it, the shards
    that failed for good (index -> why), and when it started."""
    rc: int
    interrupted: bool
    failed_shards: dict
    t0: float


def _plan(args, chosen, pats, scratch: Path) -> Plan:
    expect = {k: v for k, v in properties_by_claim().items() if k in set(chosen)}
    expect_path = scratch / "expect.json"
    expect_path.write_text(json.dumps({k: len(v) for k, v in expect.items()}))
    groups = shard_groups(chosen, args.shards)
    cmds, raws = [], []
    for k, ids in enumerate(groups):
        raw_k = scratch / f"raw-{k}.json"
        cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(PYTEST_INI),
               "--rootdir", str(ROOT), "--confcutdir", str(ROOT), "--audit-raw", str(raw_k), "--audit-expect",
               str(expect_path), "-p", "no:cacheprovider", "-p", "properties.proctree",
               *_pytest_paths(ids, args.conjecture)]
        if args.shards != "none":
            cmd += ["--claims", ",".join(ids)]
        elif pats:
            cmd += ["--claims", ",".join(pats)]
        workers = _workers(args.workers, {c: len(v) for c, v in expect.items()}, ids)
        if workers != "0":
            # a lost worker is not replaced: its test is reported crashed and the run ends, so
            # the audit names what it held instead of waiting (pytest-xdist #1323, #1378)
            cmd += ["-n", workers, "--max-worker-restart=0"]
        cmds.append(cmd)
        raws.append(raw_k)
    return Plan(cmds, raws, groups, expect)


def _run(plan: Plan, args, env, scratch: Path) -> Ran:
    t0 = time.time()
    if not plan.cmds:
        return Ran(5, False, {}, t0)
    if args.shards == "none":
        rc, interrupted = _run_pytest(plan.cmds[0], env, fork=_forkable(plan.cmds[0], args))
        return Ran(rc, interrupted, {}, t0)
    print(f"{len(plan.cmds)} shards ({args.shards}) on the {args.executor} executor")
    return Ran(*_run_shards(plan.cmds, env, args.executor, scratch), t0)


def _broken_rows(chosen) -> list[dict]:
    """A paper module that does not import: an error row (named after its file) where its paper
    is among the chosen claims' papers, a note on stderr where it is not.  Either way the other
    modules load and audit."""
    from properties.cli_common import BROKEN_MODULES

    papers = {i.split(".", 1)[0] for i in chosen}
    rows = []
    for path, why in sorted(BROKEN_MODULES.items()):
        parts = Path(path).with_suffix("").parts  # ("properties", paper, stem)
        paper, stem = (parts[1], parts[-1]) if len(parts) == 3 else (parts[-1], parts[-1])
        if paper not in papers:
            print(f"theorem-audit: note: {path} does not import ({why}); it is not in this "
                  "audit's selection", file=sys.stderr)
            continue
        claim = f"{paper}.{stem.removeprefix('test_')}"
        row = _lost_row(claim, "import", f"{path} does not import: {why}")
        row["messages"] = row["messages"][:0] + [f"{path} does not import: {why} (the other "
                                                 f"files of {paper} are audited)"]
        row["message"] = row["messages"][0]
        row["nodeid"] = f"{path}::<import>"
        rows.append(row)
    return rows


FORK_ENV = "THEOREM_AUDIT_FORK"  # "0": a serial run starts a fresh interpreter, as xdist does


def _forkable(cmd, args) -> bool:
    """A serial run (no xdist) is forked from the audit, which has imported everything it needs
    (properties.proctree._fork_pytest): the conjecture files outside the checkout too (the
    plugin finds them loaded under the name it gives them); a conjecture inside the checkout,
    which pytest imports under its package name, and xdist runs start a fresh interpreter."""
    inside = [c for c in args.conjecture
              if Path(c).resolve() == ROOT or ROOT in Path(c).resolve().parents]
    return ("-n" not in cmd and not inside and hasattr(os, "fork")
            and os.environ.get(FORK_ENV, "1") != "0")


def _lost_row(claim: str, test: str, why: str) -> dict:
    msg = f"lost: no result came back for {test} ({why})"
    return {"claim": claim, "form": "printed", "failure": "error", "outcome": "failed",
            "messages": [msg], "message": msg, "nodeid": f"{claim}::{test}", "seconds": 0.0,
            "records": {}, "draws": 0, "takes_world": False, "alternatives": [],
            "expected_failure": None}


def _collect(plan: Plan, ran: Ran) -> dict | None:
    """The rows the shards wrote.  A property expected but absent from an uninterrupted run (its
    xdist worker crashed or was killed, its shard's job failed for good, its pytest died) is an
    error row naming it: never silently missing.  None when an interrupted run wrote nothing."""
    tests = []
    for p in plan.raws:
        try:
            tests += json.loads(p.read_text())["tests"]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # absent or torn: its properties count as lost below
    if ran.interrupted:
        return {"tests": tests} if tests else None
    seen = {(t.get("claim"), str(t.get("nodeid", "")).split("::")[-1].split("[")[0])
            for t in tests}
    shard_of = {c: k for k, ids in enumerate(plan.groups) for c in ids}
    for claim, names in sorted(plan.expect.items()):
        for name in names:
            if (claim, name) in seen:
                continue
            k = shard_of.get(claim)
            why = (f"its shard {k} failed: {ran.failed_shards[k]}" if k in ran.failed_shards
                   else f"its pytest worker crashed or was killed, or pytest died "
                        f"(pytest exit {ran.rc})")
            tests.append(_lost_row(claim, name, why))
    return {"tests": tests}


def _decide(registry, chosen, raw: dict, ran: Ran, profile: str) -> tuple[list, dict]:
    from properties import report as rep

    rows = rep.build(registry, raw, lambda i: i in set(chosen))
    meta = dict(_stamp(profile), interrupted=ran.interrupted,
                seconds=round(time.time() - ran.t0, 1), command=" ".join(sys.argv))
    for r in rows:
        r["rerun"] = rep.rerun_commands(r, profile)
    return rows, meta


def _draw(args, rows, registry, stage: Path, meta: dict, interrupted: bool) -> dict:
    """The claims' figures, drawn into the staging directory (name -> file)."""
    plots = {}
    if args.no_plots or interrupted:
        return plots
    try:
        import matplotlib
    except ImportError:
        print("figures skipped: matplotlib is not installed "
              "(pip install 'theorem-audit[figures]')", file=sys.stderr)
        return plots
    from properties import cache

    matplotlib.use("Agg")
    t_fig, reused, trained = time.time(), 0, {}
    for r in rows:
        claim = registry.get(r["id"])
        if claim is not None and claim.plot is not None:
            name = r["id"].replace(".", "_") + ".png"
            before = cache.STATS["misses"]
            try:
                (stage / name).write_bytes(_figure_png(claim.plot, r["id"]))
                plots[r["id"]] = name
            except Exception as e:  # a broken figure must not hide the verdicts
                r["detail"] = (r["detail"] + f" | plot failed: {e!r}").lstrip(" |")
            computed = cache.STATS["misses"] - before  # the figure itself, then its runs
            reused += computed == 0
            if computed > 1:
                trained[r["id"]] = computed - 1
    # a figure draws from the runs the properties stored: `runs_computed` names any that had to
    # compute a run of its own (an --only selection that skipped the claim using it)
    meta["figures"] = {"drawn": len(plots), "seconds": round(time.time() - t_fig, 1),
                       "read_whole_from_cache": reused, "runs_computed": trained,
                       "cache": cache.enabled()}
    if trained:
        print(f"figures: {sum(trained.values())} runs were not in the cache and were "
              f"computed for {sorted(trained)}")
    return plots


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write(rows, plots, meta, profile, stage: Path, report: Path, json_path: Path) -> str | None:
    """Write the report new-then-rotate: every file is written complete in a staging directory
    beside its destination and fsynced; only then is each renamed into place, the old report
    kept as .previous (hard-linked before the rename, so that there is never a moment with
    neither).  A failure to write (a full disk) leaves the previous report as it was.  Returns
    None, or why the report could not be written."""
    import shutil

    from properties import report as rep

    mode = _file_mode()
    staged_json = stage / "audit.json"
    try:
        rep.write(rows, staged_json, stage / "audit.md", profile, plots, meta)
        moves = [(stage / n, report / n, False) for n in plots.values()]
        moves += [(stage / n, report / n, True) for n in ("audit.md", "audit.html")]
        src = staged_json
        if os.stat(stage).st_dev != os.stat(json_path.parent).st_dev:  # --json elsewhere
            src = json_path.with_name(f".{json_path.name}.new-{os.getpid()}")
            shutil.copyfile(staged_json, src)
        moves.append((src, json_path, True))
        for s, _, _ in moves:
            os.chmod(s, mode)
            _fsync_file(s)
    except OSError as e:
        for s in json_path.parent.glob(f".{json_path.name}.new-{os.getpid()}"):
            s.unlink(missing_ok=True)
        return f"{type(e).__name__}: {e.strerror or e}"
    for s, dst, rotate in moves:
        prev = dst.with_name(dst.stem + ".previous" + dst.suffix)
        keep = None
        if rotate and dst.is_file() and not dst.is_symlink():
            keep = dst.with_name(f".{prev.name}.new-{os.getpid()}")
            try:
                keep.unlink(missing_ok=True)
                os.link(dst, keep)
            except OSError:  # no hard links here: rename the old one first
                keep = None
                os.replace(dst, prev)
        os.replace(s, dst)
        if keep is not None:
            os.replace(keep, prev)
    return None


def _trim(args) -> None:
    if not args.no_cache:
        from properties import cache
        cache.reduce_size(args.cache_limit_bytes)


def _exit_status(rows, ran: Ran, write_error, args) -> int:
    if ran.interrupted:
        return EXIT_INTERRUPTED
    if write_error:
        return EXIT_BROKEN
    broken = [r["id"] for r in rows if any(p["failure"] in ("error", "power", "unexpected-pass")
                                           for p in r["properties"])]
    if broken:
        print(f"the audit is broken for: {', '.join(broken)} (see detail)", file=sys.stderr)
        return EXIT_BROKEN
    failing = [r["id"] for r in rows if r["verdict"] in FAIL_ON[args.fail_on]]
    if failing:
        print(f"--fail-on {args.fail_on}: {', '.join(failing)}", file=sys.stderr)
        return EXIT_VERDICT
    if ran.rc not in (0, 1, 5):
        print(f"pytest exited {ran.rc}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


def _audit(args, profile, env, report, json_path, registry, chosen, pats) -> int:
    import shutil

    from properties import report as rep

    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=report))
    try:
        plan = _plan(args, chosen, pats, scratch)
        ran = _run(plan, args, env, scratch)
        raw = _collect(plan, ran)
        if raw is not None:
            raw["tests"] += getattr(args, "broken_rows", [])
        if raw is None:
            print(f"pytest produced no audit rows (exit {ran.rc}): interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        rows, meta = _decide(registry, chosen, raw, ran, profile)
        stage = scratch / "stage"
        stage.mkdir()
        plots = _draw(args, rows, registry, stage, meta, ran.interrupted)
        write_error = _write(rows, plots, meta, profile, stage, report, json_path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _trim(args)
    print()
    print(rep.table(rows, meta))
    if write_error:
        print(f"theorem-audit: the report could not be written to {report} ({write_error}); "
              "the previous report there is untouched", file=sys.stderr)
    else:
        print(f"\nwrote {json_path}, {report / 'audit.md'}, {report / 'audit.html'} and "
              f"{len(plots)} plots ({time.time() - ran.t0:.0f} s, pytest exit {ran.rc})"
              + ("; INTERRUPTED: the report is partial" if ran.interrupted else ""))
    return _exit_status(rows, ran, write_error, args)
