"""pytest plugin that carries audit results from the (xdist) workers to the controller.

Each property carries `@pytest.mark.claim(id, form=...)` (via `properties.check.audits`).  After a
test's call phase the records made by `properties.check` are attached to the report's
`user_properties` (which xdist ships back), and the controller collects one row per test:
claim id, form, outcome, records, seconds.  `--audit-raw PATH` writes those rows as JSON, which
`python -m properties audit` turns into verdicts; `--claims GLOB` selects claims by id.
"""

from __future__ import annotations

import os

# One BLAS/OpenMP thread per xdist worker (two workers on two cores otherwise oversubscribe).
# .ci/run exports it before Python starts; this covers a bare `pytest -n auto`.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import fnmatch  # noqa: E402
import json  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from properties import check  # noqa: E402

torch.set_num_threads(1)

# --- Hypothesis profiles -------------------------------------------------------------------
# `ci` extends Hypothesis' built-in ci profile (derandomized, no example database, blobs
# printed) so that every worker and every run draws the same examples.
settings.register_profile(
    "ci", parent=settings.get_profile("ci"), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", deadline=None, max_examples=50, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
if PROFILE not in ("ci", "dev", "thorough"):
    raise ValueError(f"HYPOTHESIS_PROFILE must be ci, dev or thorough, got {PROFILE!r}")
os.environ["HYPOTHESIS_PROFILE"] = PROFILE  # properties.check.examples() scales by it
settings.load_profile(PROFILE)


@pytest.fixture(scope="session")
def device():
    """CUDA when present, else CPU: every simulator takes this."""
    from sim import default_device
    return default_device()


def pytest_report_header(config):
    from sim import default_device
    return f"audit: hypothesis profile={PROFILE}, torch {torch.__version__}, device={default_device()}"


def pytest_addoption(parser):
    g = parser.getgroup("audit")
    g.addoption("--audit-raw", default=None, help="write per-test audit rows to this JSON file")
    g.addoption("--claims", default=None,
                help="comma-separated globs of claim ids; deselect properties of other claims")


def _claim_mark(item):
    m = item.get_closest_marker("claim")
    if m is None:
        return None
    return m.args[0], m.kwargs.get("form", "printed")


def pytest_collection_modifyitems(config, items):
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
    check.pop_records()  # nothing from an earlier test may leak into this one
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    cm = _claim_mark(item)
    if cm is None:
        return
    if rep.when == "call" or (rep.when == "setup" and rep.outcome != "passed"):
        records = check.pop_records() if rep.when == "call" else {}
        xfail = item.get_closest_marker("xfail")
        rep.user_properties.append(("audit", json.dumps({
            "claim": cm[0], "form": cm[1], "records": records,
            "expected_failure": None if xfail is None else xfail.kwargs.get("reason", ""),
        })))


class _Collector:
    def __init__(self, path):
        self.path = path
        self.rows = []

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
            row.update(nodeid=report.nodeid, outcome=outcome, seconds=report.duration,
                       message=msg[-2000:])
            self.rows.append(row)

    def pytest_sessionfinish(self, session):
        with open(self.path, "w") as f:
            json.dump({"tests": self.rows}, f, indent=1)


def pytest_configure(config):
    path = config.getoption("--audit-raw")
    # only the controller (no `workerinput`) writes the file
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Collector(path), "audit-collector")
