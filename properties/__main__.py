"""`theorem-audit` (or `python -m properties`): run the claims' properties and report verdicts.

    theorem-audit audit [--profile ci|dev|thorough] [--only GLOBS] [--report DIR] [--json PATH]
                        [--conjecture FILE.py ...] [-n WORKERS] [--no-plots]
                        [--fail-on refuted|erratum|never]
                        [--shards none|paper|claim] [--executor local|slurm]
                        [--size ci|ladder|paper] [--device cpu|cuda]
                        [--cache-dir DIR | --no-cache] [--cache-limit 4G]
    theorem-audit list  [--report DIR] [--conjecture FILE.py ...]
    theorem-audit show  ID [--report DIR] [--conjecture FILE.py ...]
    theorem-audit readme [--report DIR] [--readme README.md] [--ladder-report DIR]
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
import dataclasses
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
    builtin=False) and the researcher's conjecture files; return the claim registry.  A
    conjecture file that does not import (a syntax error, an exception, a `sys.exit`, a claim id
    that is already registered with other content) is a UsageError naming the file; a paper
    module that does not import propagates (the audit itself is broken)."""
    from properties.registry import REGISTRY

    for mod in PAPER_MODULES if builtin else ():
        importlib.import_module(f"properties.{mod}")
    for i, path in enumerate(conjectures):
        _check_conjecture_path(path)
        name = f"_conjecture_{i}_{Path(path).stem}"
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except KeyboardInterrupt:
            raise
        except SystemExit as e:
            raise UsageError(f"--conjecture {path}: it calls sys.exit({e.code!r}) when imported; "
                             "a conjecture file must only register claims and define properties"
                             ) from None
        except SyntaxError as e:
            raise UsageError(f"--conjecture {path}: syntax error at line {e.lineno}: {e.msg}"
                             ) from None
        except BaseException as e:  # noqa: BLE001 -- any failure at import is the file's
            raise UsageError(f"--conjecture {path}: importing it failed: "
                             f"{type(e).__name__}: {e}") from None
        _LOADED_CONJECTURES.append(module)
    return REGISTRY


def _check_conjecture_path(path: str) -> None:
    if not path or not path.endswith(".py") or not Path(path).is_file():
        raise UsageError(f"--conjecture: {path!r} is not a .py file")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UsageError(f"--conjecture: {path!r} cannot be read ({e.strerror or e})") from None


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
    return {k: len(v) for k, v in properties_by_claim().items()}


def properties_by_claim() -> dict[str, list[str]]:
    """The names of the @audits properties of each claim, from the loaded modules."""
    names: dict[str, list[str]] = {}
    mods = [m for name, m in sys.modules.items() if name.startswith("properties.")]
    for m in mods + _LOADED_CONJECTURES:
        for obj in list(vars(m).values()):
            for mark in getattr(obj, "pytestmark", []) if callable(obj) else []:
                if getattr(mark, "name", "") == "claim" and getattr(obj, "__module__", "") == m.__name__:
                    names.setdefault(mark.args[0], []).append(getattr(obj, "__name__", "?"))
    return names


def select(ids, only: str | None):
    """The ids matched by the comma-separated globs `only`; a glob that matches nothing is a
    UsageError naming close matches."""
    if only is None:
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


# --------------------------------------------------------------------------------------------
# The pytest process tree: started in its own session, stopped with the audit, never orphaned
# --------------------------------------------------------------------------------------------
PARENT_ENV = "THEOREM_AUDIT_PARENT_PID"  # set for the pytest run: the guard below watches it
GRACE_S = 20.0  # after SIGINT, how long pytest may take to write its rows before SIGKILL
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _child_setup():  # pragma: no cover - runs in the child between fork and exec
    # an audit started with SIGINT ignored (`nohup`, `cmd &`, some job runners) must still be
    # able to stop its pytest with SIGINT: the child starts with the default dispositions
    for s in _STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def _kill_group(pgid: int, sig=signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _run_pytest(cmd, env) -> tuple[int, bool]:
    """Run pytest in its own session and process group; SIGINT, SIGTERM or SIGHUP here stop it
    (SIGINT first, so that pytest still writes the rows it has; SIGKILL to the whole group after
    GRACE_S or at a second signal).  When it exits, whatever is left of its group (xdist workers
    of a pytest that died) is killed.  Returns (exit code, interrupted)."""
    env = dict(env, **{PARENT_ENV: str(os.getpid())})
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, start_new_session=True,
                            preexec_fn=_child_setup)  # noqa: PLW1509 -- signal() only
    state = {"interrupted": False, "deadline": None}

    def stop(signum, frame):
        if state["interrupted"]:  # a second signal: no more grace
            _kill_group(proc.pid)
            return
        state["interrupted"] = True
        state["deadline"] = time.monotonic() + GRACE_S
        _kill_group(proc.pid, signal.SIGINT)

    old = {}
    for s in _STOP_SIGNALS:
        if s == signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
            continue  # started with SIGINT ignored: keep ignoring it (SIGTERM still stops)
        old[s] = signal.signal(s, stop)
    try:
        while True:
            try:
                rc = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if state["deadline"] is not None and time.monotonic() > state["deadline"]:
                    _kill_group(proc.pid)
        return rc, state["interrupted"]
    finally:
        if proc.poll() is None:  # an exception here: do not leave pytest behind
            _kill_group(proc.pid)
            proc.wait()
        _kill_group(proc.pid)  # orphaned workers of its group, if any
        for s, h in old.items():
            signal.signal(s, h)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True


def _die_with_group():
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(137)


def pytest_configure(config):
    """The guard (this module is loaded into the audit's pytest with `-p properties.__main__`):
    the pytest controller and each xdist worker watch their parent, and when it is gone (the
    audit was killed with SIGKILL, or the controller was) kill their whole process group, so no
    worker trains on after its audit.  Inactive unless the audit started this pytest."""
    expected = os.environ.get(PARENT_ENV, "")
    if not expected.isdigit():
        return
    import threading

    parent = int(expected)
    if os.getppid() != parent:
        # not a child of the audit (an inherited variable): inert -- unless this is the session
        # the audit started (it is the leader) and the audit died before pytest got here
        if os.getsid(0) == os.getpid() and not _alive(parent):
            _die_with_group()
        return
    os.environ[PARENT_ENV] = str(os.getpid())  # the xdist workers this pytest starts watch it

    def watch():
        while True:
            if os.getppid() != parent:
                _die_with_group()
            time.sleep(1.0)

    threading.Thread(target=watch, name="theorem-audit-guard", daemon=True).start()


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
        try:
            registry = load_registry(args.conjecture,
                                     builtin=not only_conjectures(args.only, args.conjecture))
        except UsageError:
            raise
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


class ShardInterrupted(RuntimeError):
    """A cluster job's pytest was stopped by a signal (scancel, preemption): the job did not
    complete, and the audit resubmits it."""


class ShardJob:
    """What a cluster job runs: one shard's pytest command (its rows go to --audit-raw), with the
    same process-tree handling as a local run.  `checkpoint` makes it requeueable: on a
    preemption or time-out signal submitit requeues it, and the rerun reads every run the first
    attempt stored from the shared run cache."""

    def __call__(self, cmd: list[str], env: dict) -> int:
        rc, interrupted = _run_pytest(cmd, env)
        if interrupted:
            raise ShardInterrupted(f"the shard's pytest was stopped by a signal (exit {rc})")
        return rc

    def checkpoint(self, cmd, env):
        import submitit

        return submitit.helpers.DelayedSubmission(ShardJob(), cmd, env)


MAX_RESUBMIT = 2  # a shard job that ends without a result is submitted again this many times
_ENDED = {"CANCELLED", "FAILED", "NODE_FAIL", "PREEMPTED", "TIMEOUT", "BOOT_FAIL", "DEADLINE",
          "OUT_OF_MEMORY", "COMPLETED", "SPECIAL_EXIT", "REVOKED"}


def _queue_state(job) -> str | None:
    """A Slurm job's state from squeue ('' once it has left the queue), or None where that
    cannot be told (not a Slurm job, no squeue).  submitit reads job states with sacct, which
    a cluster without job accounting lacks: there a cancelled job would stay UNKNOWN forever."""
    if type(job).__name__ != "SlurmJob":
        return None
    try:
        out = subprocess.run(["squeue", "-h", "-j", str(job.job_id), "-o", "%T"],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode not in (0, 1):
        return None
    return out.stdout.strip().split("\n")[0].strip().upper() if out.stdout.strip() else ""


def _ended_without_result(job, seen: dict, k: int) -> bool:
    """True once squeue has said, on three checks a few seconds apart, that `job` ended (or left
    the queue) while no result of it has appeared."""
    now = time.monotonic()
    last, count = seen.get(k, (0.0, 0))
    if now - last < 3.0:
        return False
    state = _queue_state(job)
    ended = state is not None and (state == "" or state in _ENDED)
    seen[k] = (now, count + 1 if ended else 0)
    return ended and count + 1 >= 3 and not job.paths.result_pickle.exists()


def _run_shards(cmds, env, executor: str, folder: Path) -> tuple[int, bool, dict]:
    """Run the shards' pytest commands: `local` one after another in this machine's process
    group handling; `slurm` as a submitit job array (AutoExecutor: Slurm where there is one,
    local processes otherwise).  A job that ends without a result (cancelled, preempted, its
    node lost) is submitted again, up to MAX_RESUBMIT times ($THEOREM_AUDIT_MAX_RESUBMIT); one
    that still fails is given up.  Returns (worst exit code, interrupted, {shard index: why it
    failed for good})."""
    if executor == "local":
        rcs, interrupted = [], False
        for c in cmds:
            rc, interrupted = _run_pytest(c, env)
            rcs.append(rc)
            if interrupted:
                break
        return _worst(rcs), interrupted, {}
    try:
        import submitit
    except ImportError:
        raise UsageError("--executor slurm needs submitit: pip install 'theorem-audit[cluster]'") from None
    max_resubmit = int(os.environ.get("THEOREM_AUDIT_MAX_RESUBMIT", MAX_RESUBMIT))
    ex = submitit.AutoExecutor(folder=str(folder / "submitit"))
    ex.update_parameters(timeout_min=int(os.environ.get("THEOREM_AUDIT_TIMEOUT_MIN", "120")),
                         cpus_per_task=int(os.environ.get("THEOREM_AUDIT_CPUS", "2")),
                         name=os.environ.get("THEOREM_AUDIT_JOB_NAME", "theorem-audit"))
    try:
        with ex.batch():
            jobs = {k: ex.submit(ShardJob(), c, env) for k, c in enumerate(cmds)}
    except Exception as e:  # noqa: BLE001 -- sbatch refused the array: no controller, a bad
        # partition or account; nothing was submitted, so there is nothing to cancel
        text = str(e).strip().splitlines()
        raise UsageError(f"--executor slurm: the cluster refused the shards' job array "
                         f"({type(e).__name__}: {text[0] if text else 'no message'}); is its "
                         "controller up (sinfo)? --executor local runs the shards here") from None
    pending, rcs, failed, tries, seen = dict(jobs), {}, {}, {k: 0 for k in jobs}, {}
    try:
        while pending:
            for k, job in list(pending.items()):
                why = None
                if job.done():
                    try:
                        rcs[k] = job.result()
                    except Exception as e:  # noqa: BLE001 -- the job ended without a result
                        text = str(e).strip().splitlines()
                        why = f"job {job.job_id} {type(e).__name__}: {text[0] if text else ''}"
                elif _ended_without_result(job, seen, k):
                    why = f"job {job.job_id} left the queue without a result"
                else:
                    continue
                del pending[k]
                seen.pop(k, None)
                if why is None:
                    continue
                if tries[k] < max_resubmit:
                    tries[k] += 1
                    print(f"shard {k}: {why}; submitting it again ({tries[k]}/{max_resubmit}; "
                          "the runs it stored are read from the run cache)", file=sys.stderr)
                    pending[k] = ex.submit(ShardJob(), cmds[k], env)
                else:
                    failed[k] = why
                    print(f"shard {k}: {why}; given up", file=sys.stderr)
            time.sleep(0.5)
    except KeyboardInterrupt:
        for j in pending.values():
            j.cancel(check=False)
        return 2, True, failed
    return _worst(rcs.values()), False, failed


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
        cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(ROOT / "pyproject.toml"),
               "--rootdir", str(ROOT), "--audit-raw", str(raw_k), "--audit-expect",
               str(expect_path), "-p", "no:cacheprovider", "-p", "properties.__main__",
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
        rc, interrupted = _run_pytest(plan.cmds[0], env)
        return Ran(rc, interrupted, {}, t0)
    print(f"{len(plan.cmds)} shards ({args.shards}) on the {args.executor} executor")
    return Ran(*_run_shards(plan.cmds, env, args.executor, scratch), t0)


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
        try:
            refusal = refusal_of(doc, suite)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise UsageError(f"{flag}: {src} is not an audit report of this version "
                             f"({type(e).__name__}: {e})") from None
        if refusal:
            raise UsageError(f"readme: {src}: {refusal}; the README was not changed")
        return src, doc

    suite = load_registry([])
    src, doc = load("--report", args.report, rep.readme_refusal)
    lsrc, ladder = None, None
    if args.ladder_report is not None:
        lsrc, ladder = load("--ladder-report", args.ladder_report, rep.ladder_refusal)
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
    readme = Path(args.readme)
    try:
        text = rep.update_readme(readme.read_text(), doc, ladder)
    except OSError as e:
        raise UsageError(f"--readme {readme}: cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise UsageError(f"--readme {readme}: {e}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise UsageError(f"--report: {src} is not an audit report of this version "
                         f"({type(e).__name__}: {e})") from None
    try:
        readme.write_text(text)
    except OSError as e:
        raise UsageError(f"--readme {readme}: cannot be written ({e.strerror or e})") from None
    print(f"updated the verdict tables of {readme} from {src} ({len(doc.get('claims', []))} claims)"
          + (f" and its ladder block from {lsrc} ({len(ladder['claims'])} claims)"
             if ladder is not None else ""))
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
    # SIGTERM or SIGHUP before the pytest run starts (while the claims load) stops cleanly too:
    # exit 130, report lock released; during the run `_run_pytest` takes over the signals
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("theorem-audit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
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
    r.add_argument("--ladder-report", default=None, metavar="DIR",
                   help="also fill the README's ladder block from a --size ladder report in DIR "
                        "(profile ci; may be an --only run): the claims whose verdict differs "
                        "there from --report's")
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
