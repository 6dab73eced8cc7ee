"""pytest plugin that carries audit results from the (xdist) workers to the controller.

Each property carries `@pytest.mark.claim(id, form=...)` (via `properties.world.audits`).  After a
test's call phase the run state of `properties.world` (records, distinct draws, alternatives and
how often each was rejected, thresholds with their provenance, the false-fail sum) and the typed
failure (`mismatch`, `power`, `inconclusive`, `error`, `unexpected-pass`, each message of an
ExceptionGroup kept) are attached to the report's `user_properties` (which xdist ships back), and
the controller collects one row per test.  `--audit-raw PATH` writes those rows as JSON, which
`python -m properties audit` turns into verdicts; `--claims GLOB` selects claims by id.

Shrinking a failing property is bounded (`SHRINK_SECONDS`), so a refuted conjecture reports its
draw within a minute instead of five.

The plugin is registered by entry point (`pytest11` in pyproject.toml, as pytest-cov is), so an
installed theorem-audit is loaded in every pytest run; it is inert unless the audit is asked for:
`-p properties.plugin` (this repository's `addopts`), `--theorem-audit`, `theorem_audit = true` in
the ini file, or one of its run options (`--audit-raw`, `--claims`, `--audit-expect`).  Inert, it
only adds its options: no fixtures, no Hypothesis profile, no thread setting, no hooks that act.

A conjecture file outside the rootdir gets its absolute path as its node id (pytest would give it
an empty one: two such files with a same-named function would collide, and xdist would run only
one) and is imported under a name of its own (two files named alike do not clash).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import os
import sys
from pathlib import Path

import pytest

SHRINK_SECONDS = 60
PROFILE = None  # set in pytest_configure
EXAMPLE_DB_ENV = "THEOREM_AUDIT_EXAMPLE_DB"


def thorough_database():
    """The example database of the `thorough` profile: a directory (default
    `<repo>/.hypothesis/thorough-examples`, or $THEOREM_AUDIT_EXAMPLE_DB), shared by every worker
    and shard that sees it, so that a counterexample found once replays first in every later
    thorough run.  `ci` stays derandomized with no database; `dev` keeps none either."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    root = Path(__file__).resolve().parent.parent
    path = os.environ.get(EXAMPLE_DB_ENV) or str(root / ".hypothesis" / "thorough-examples")
    return DirectoryBasedExampleDatabase(path)


ACTIVE = False  # set in pytest_configure: the audit was asked for


def _asked(config) -> bool:
    """Whether this pytest run asked for the audit (else the plugin stays inert)."""
    plugins = getattr(config.known_args_namespace, "plugins", None) or []
    return bool("properties.plugin" in plugins or config.getoption("--theorem-audit")
                or _ini_flag(config) or config.getoption("--audit-raw")
                or config.getoption("--claims") or config.getoption("--audit-expect"))


def _ini_flag(config) -> bool:
    try:
        return bool(config.getini("theorem_audit"))
    except ValueError:  # pragma: no cover - the ini option is always registered below
        return False


def _setup_hypothesis_and_torch():
    """The plugin's global settings, applied in pytest_configure (not at import)."""
    global PROFILE
    from hypothesis import HealthCheck, settings

    from properties.settings import PROFILES
    # One BLAS/OpenMP thread per xdist worker (two workers on two cores otherwise oversubscribe).
    # .ci/run exports it before Python starts; this covers a bare `pytest -n auto`.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)  # one thread per xdist worker
    try:  # Hypothesis shrinks a failure for up to 300 s by default; bound it (private constant)
        from hypothesis.internal.conjecture import engine as _engine
        if hasattr(_engine, "MAX_SHRINKING_SECONDS"):
            _engine.MAX_SHRINKING_SECONDS = SHRINK_SECONDS
    except ImportError:  # pragma: no cover - a Hypothesis without that module: its own bound
        pass
    # Hypothesis mixes constants found in the source of every loaded local module into its draws
    # (hypothesis.internal.conjecture.providers): the derandomized `ci` draws would then move
    # with any edit of a float literal anywhere in the repository, and differ between a full run
    # and a one-file rerun.  The audit's draws are test data fixed by the profile and the
    # Hypothesis version alone, so local constants are switched off (private API, guarded).
    try:
        from hypothesis.internal.conjecture import providers as _providers
        if hasattr(_providers, "_get_local_constants") and hasattr(_providers, "Constants"):
            _providers._get_local_constants = _providers.Constants
    except ImportError:  # pragma: no cover - a Hypothesis without that module
        pass
    # `ci` extends Hypothesis' built-in ci profile (derandomized, no example database, blobs
    # printed) so that every worker and every run draws the same examples.
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large]
    # THEOREM_AUDIT_RANDOMIZE=1: the ci profile's budget, not derandomized (with pytest's
    # --hypothesis-seed=N), to show that no property is tuned to its fixed draws
    random_ci = os.environ.get("THEOREM_AUDIT_RANDOMIZE") == "1"
    settings.register_profile("ci", parent=settings.get_profile("ci"), deadline=None,
                              suppress_health_check=quiet,
                              **({"derandomize": False} if random_ci else {}))
    settings.register_profile("dev", deadline=None, max_examples=50, database=None,
                              suppress_health_check=quiet)
    settings.register_profile("thorough", deadline=None, max_examples=500,
                              database=thorough_database(), suppress_health_check=quiet)
    from properties.settings import profile
    PROFILE = profile()
    if PROFILE not in PROFILES:
        raise pytest.UsageError(f"HYPOTHESIS_PROFILE must be one of {PROFILES}, got {PROFILE!r}")
    os.environ["HYPOTHESIS_PROFILE"] = PROFILE  # properties.check.examples() scales by it
    settings.load_profile(PROFILE)


def _fixtures():
    """The fixtures of the audit, as a plugin object registered only when the audit is asked for
    (defined here, not at module level, so that the inert plugin module defines none)."""
    import types

    @pytest.fixture(scope="session")
    def world():
        """A property that takes `world` is run by `@audits` once in the claim's world and once
        per alternative; this placeholder is replaced on every draw."""
        from properties import world as _world
        return _world.WORLD_PLACEHOLDER

    @pytest.fixture(scope="session")
    def device():
        """CUDA when present, else CPU: every simulator takes this."""
        from sim import default_device
        return default_device()

    mod = types.ModuleType("theorem_audit_fixtures")
    mod.world, mod.device = world, device
    return mod


def pytest_report_header(config):
    if not ACTIVE:
        return None
    import torch

    from properties.settings import size
    from sim import default_device
    return (f"audit: hypothesis profile={PROFILE}, size={size()}, torch {torch.__version__}, "
            f"device={default_device()}")


class _ConjectureModule(pytest.Module):
    """A conjecture file outside the rootdir: imported under a name made from its absolute path
    (not its basename), so two conjecture files named alike in different folders both load."""

    def _getobj(self):
        from properties.cli_common import conjecture_module_name
        path = Path(self.path).resolve()
        name = conjecture_module_name(path)
        mod = sys.modules.get(name)
        if mod is None:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            try:
                spec.loader.exec_module(mod)
            except BaseException:
                del sys.modules[name]
                raise
        self.config.pluginmanager.consider_module(mod)
        return mod


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    """A module outside the rootdir gets its absolute path as its node id (see the docstring)."""
    if not ACTIVE:
        return None
    path = Path(module_path).resolve()
    root = Path(parent.config.rootpath).resolve()
    if path == root or root in path.parents:
        return None
    return _ConjectureModule.from_parent(parent, path=module_path, nodeid=str(path))


def pytest_addoption(parser):
    g = parser.getgroup("audit")
    g.addoption("--audit-raw", default=None, help="write per-test audit rows to this JSON file")
    g.addoption("--claims", default=None,
                help="comma-separated globs of claim ids; deselect properties of other claims")
    g.addoption("--audit-expect", default=None,
                help="JSON {claim id: number of properties}: print a line as each claim finishes")
    g.addoption("--theorem-audit", action="store_true", default=False,
                help="turn the theorem-audit plugin on (it is inert unless asked for)")
    parser.addini("theorem_audit", type="bool", default=False,
                  help="turn the theorem-audit plugin on for this project")


def _claim_mark(item):
    m = item.get_closest_marker("claim")
    if m is None:
        return None
    return m.args[0], m.kwargs.get("form", "printed")


def pytest_collection_modifyitems(config, items):
    if not ACTIVE:
        return
    from properties import world as _world
    for it in items:  # printed forms expected to fail at some sizes only: decided for this run
        by_size = getattr(getattr(it, "function", None), _world.FAILS_ATTR, None)
        reason = _world.fails_at(by_size) if by_size else None
        if reason:
            it.add_marker(pytest.mark.xfail(strict=True, raises=_world.ClaimMismatch,
                                            reason=reason))
    gpu = [it for it in items if it.get_closest_marker("gpu") is not None]
    if gpu:
        import torch
        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="needs a CUDA device (marker gpu); torch finds none")
            for it in gpu:
                it.add_marker(skip)
    globs = config.getoption("--claims")
    if not globs:
        return
    pats = [g.strip() for g in globs.split(",") if g.strip()]
    keep, drop = [], []
    for it in items:
        cm = _claim_mark(it)
        (keep if cm and any(fnmatch.fnmatchcase(cm[0], p) for p in pats) else drop).append(it)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if not ACTIVE:
        yield
        return
    from properties import check
    from properties import world as _world
    check.pop_records()  # nothing from an earlier test may leak into this one
    _world.pop_last_run()
    yield


def _kind(exc) -> str:
    from properties import check
    if isinstance(exc, check.ClaimMismatch):
        return "mismatch"
    if isinstance(exc, check.NoPower):
        return "power"
    if isinstance(exc, check.Inconclusive):
        return "inconclusive"
    if isinstance(exc, pytest.skip.Exception):
        return "skipped"
    if isinstance(exc, BaseExceptionGroup):
        kinds = {_kind(e) for e in exc.exceptions}
        return kinds.pop() if len(kinds) == 1 else "error"
    return "error"


def _messages(exc) -> list[str]:
    if isinstance(exc, BaseExceptionGroup):
        return [m for e in exc.exceptions for m in _messages(e)]
    text = getattr(exc, "msg", None) if isinstance(exc, pytest.skip.Exception) else str(exc)
    return [f"{type(exc).__name__}: {text or ''}".strip()]


def failure_of(call, rep) -> tuple[str, list[str]]:
    """The typed outcome of a test's phase: (kind, messages)."""
    if call.excinfo is not None:
        exc = call.excinfo.value
        return _kind(exc), _messages(exc)
    if rep.outcome == "failed":  # a strict xfail that passed
        return "unexpected-pass", [str(getattr(rep, "longrepr", "") or "XPASS(strict)")]
    return "none", []


def _short_longrepr(item, call, rep) -> None:
    """A property that failed with the harness's verdict (ClaimMismatch, NoPower, PropertyError)
    leads with its one-line summary and its message; the harness frames (about 50 lines) are
    kept for THEOREM_AUDIT_DEBUG=1.  Any other exception keeps pytest's full traceback."""
    from properties.check import ClaimMismatch, NoPower, PropertyError

    exc = call.excinfo
    if (rep.when != "call" or rep.outcome != "failed" or exc is None
            or not exc.errisinstance((ClaimMismatch, NoPower, PropertyError))
            or os.environ.get("THEOREM_AUDIT_DEBUG")):
        return
    text = str(exc.value).strip()
    lines = text.splitlines() or [""]
    notes = "".join(f"\n{n}" for n in getattr(exc.value, "__notes__", []))  # Hypothesis's draw
    path, line, name = item.location
    rest = "\n".join(lines[1:])
    rep.longrepr = (f"{exc.typename}: {lines[0]}" + (f"\n{rest}" if rest else "") + notes
                    + f"\n\n{path}:{(line or 0) + 1}: {name} (the harness traceback: rerun with "
                    "THEOREM_AUDIT_DEBUG=1)")


MESSAGE_CHARS = 3000  # of a failure message kept on the row: its head and its tail


def _clip(m: str, n: int = MESSAGE_CHARS) -> str:
    """A message kept to `n` characters: its head (what failed, and the first numbers) and its
    tail (the decision and what would decide it), the middle elided."""
    if len(m) <= n:
        return m
    return m[:n // 2] + " [...] " + m[-(n - n // 2):]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _short_longrepr(item, call, outcome.get_result())
    if not ACTIVE:
        return
    from properties import check
    from properties import world as _world
    from properties.outcomes import regime_of
    rep = outcome.get_result()
    cm = _claim_mark(item)
    if cm is None:
        return
    if rep.when == "call" or (rep.when == "setup" and rep.outcome != "passed"):
        run = _world.pop_last_run() if rep.when == "call" else None
        records = check.pop_records() if rep.when == "call" else {}
        row = run.as_row() if run is not None else {"records": records, "draws": 0,
                                                   "takes_world": False, "alternatives": []}
        kind, messages = failure_of(call, rep)
        xfail = item.get_closest_marker("xfail")
        row.update(_world.property_info(getattr(item, "function", None)))
        row["regime"] = regime_of(getattr(item, "function", None))
        row.update(claim=cm[0], form=cm[1], failure=kind, path=str(item.path),
                   function=getattr(item, "originalname", item.name),
                   messages=[_clip(m) for m in messages],
                   expected_failure=None if xfail is None else xfail.kwargs.get("reason", ""))
        rep.user_properties.append(("audit", json.dumps(row, default=str)))


class _Collector:
    def __init__(self, path, expect=None, config=None):
        self.path = path
        self.rows = []
        self.expect = expect or {}
        self.config = config
        self.done: dict[str, list] = {}

    def _progress(self, row):
        cid = row["claim"]
        if cid not in self.expect:
            return
        seen = self.done.setdefault(cid, [])
        seen.append(row["outcome"])
        if len(seen) == self.expect[cid]:
            tr = self.config.pluginmanager.get_plugin("terminalreporter") if self.config else None
            counts = ", ".join(f"{n} {o}" for o, n in sorted(
                {o: seen.count(o) for o in seen}.items()))
            line = (f"[{sum(len(v) == self.expect[k] for k, v in self.done.items())}/"
                    f"{len(self.expect)}] {cid}: {counts}")
            if tr is not None:
                tr.ensure_newline()
                tr.write_line(line)
            else:
                print(line, flush=True)

    def pytest_runtest_logreport(self, report):
        for key, val in report.user_properties:
            if key != "audit":
                continue
            row = json.loads(val)
            if hasattr(report, "wasxfail"):
                outcome = "xpassed" if report.outcome == "passed" else "xfailed"
            else:
                outcome = report.outcome  # passed / failed / skipped
            msg = ""
            if report.outcome in ("failed", "skipped") and report.longrepr is not None:
                crash = getattr(report.longrepr, "reprcrash", None)
                if crash is not None:
                    msg = crash.message
                elif isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
                    msg = str(report.longrepr[2])
                else:
                    msg = str(report.longrepr).strip().splitlines()[-1]
            # pytest-xdist 3.8 with --dist loadgroup appends "@<group>" to the node id of an
            # xdist_group test: the property's id is the node id without it
            nodeid = re.sub(r"@[^:@\[\]]+$", "", report.nodeid)
            row.update(nodeid=nodeid, outcome=outcome, seconds=report.duration,
                       message=msg[-2000:])
            self.rows.append(row)
            self._progress(row)

    def pytest_sessionfinish(self, session):
        if self.path:
            with open(self.path, "w") as f:
                json.dump({"tests": self.rows}, f, indent=1)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.rows:
            return
        from properties.report import false_fail_of
        budget = sum(false_fail_of(r) for r in self.rows)
        draws = sum(r.get("draws", 0) for r in self.rows)
        powered = sum(1 for r in self.rows if r.get("takes_world"))
        terminalreporter.write_line(
            f"audit: {len(self.rows)} properties ({powered} run against alternatives), {draws} "
            f"draws, expected spurious failures (false-fail budget) {budget:.3g}")


def pytest_configure(config):
    global ACTIVE
    ACTIVE = _asked(config)
    if not ACTIVE:
        return
    _setup_hypothesis_and_torch()
    config.pluginmanager.register(_fixtures(), "theorem-audit-fixtures")
    path = config.getoption("--audit-raw")
    expect = config.getoption("--audit-expect")
    expect = json.loads(open(expect).read()) if expect else None
    # only the controller (no `workerinput`) collects the rows (and writes them with --audit-raw)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Collector(path, expect, config), "audit-collector")
