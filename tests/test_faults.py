"""Fault injection against `python -m properties audit` (issue 22): a lost xdist worker, a killed
or hung-up audit, an audit started with SIGINT ignored, a full disk at report time, stale locks,
`--json` targets that are not reports.  The end-to-end cases audit the probe conjecture
tests/conjectures/fault_probe.py (two claims of trivial properties, misbehaving on request), so
each takes seconds; the rest call the pipeline's functions in-process."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = str(ROOT / "tests" / "conjectures" / "fault_probe.py")


def _audit_cmd(report, *extra):
    return [sys.executable, "-m", "properties", "audit", "--only", "fault.*", "--no-plots",
            "--report", str(report), "--cache-dir", str(Path(report) / "runs"), *extra,
            "--conjecture", PROBE]


def _env(**kw):
    return dict(os.environ, HYPOTHESIS_PROFILE="ci", PYTHONPATH=str(ROOT), **kw)


def _processes_mentioning(text: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True,
                         check=False).stdout
    return [line for line in out.splitlines() if text in line and "ps -eo" not in line]


def _pytest_pid(marker: str) -> int | None:
    for line in _processes_mentioning(marker):
        if "-m pytest" in line:
            return int(line.split()[0])
    return None


def _session(sid) -> list[str]:
    """The live processes of session `sid` (none for None)."""
    if sid is None:
        return []
    out = subprocess.run(["ps", "-ww", "-eo", "pid,sid,stat,args"], capture_output=True, text=True,
                         check=False).stdout
    return [x for x in out.splitlines()[1:]
            if x.split()[1] == str(sid) and not x.split()[2].startswith("Z")]


def _reader(proc) -> list[str]:
    """The lines of proc.stdout as they come (read by a thread)."""
    import threading

    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")),
                     daemon=True).start()
    return lines


def _wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


# ------------------------------------------------------------------------------------------
# end to end
# ------------------------------------------------------------------------------------------
@pytest.mark.xdist_group("fault-audit")
def test_a_lost_worker_is_an_error_naming_its_claim_not_a_hang(tmp_path):
    """A worker SIGKILLed while running a property: the audit ends (no hang, pytest-xdist
    #1323/#1378), exits 3 and reports that claim as an error saying its result was lost, never
    as 'no property collected'; the other claim keeps its result."""
    t0 = time.monotonic()
    proc = subprocess.run(_audit_cmd(tmp_path, "-n", "2"), cwd=ROOT, capture_output=True,
                          text=True, timeout=240, env=_env(THEOREM_AUDIT_FAULT="kill"), check=False)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    assert time.monotonic() - t0 < 200
    rows = {r["id"]: r for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    lost = rows["fault.lost"]
    assert "lost: no result came back for test_lost" in lost["detail"], lost["detail"]
    assert "no property collected" not in lost["detail"]
    assert [p["failure"] for p in lost["properties"]] == ["error"]
    assert [p["failure"] for p in rows["fault.steady"]["properties"]] == ["none"]
    assert "the audit is broken for: fault.lost" in proc.stderr


@pytest.mark.xdist_group("fault-audit")
def test_a_killed_audit_takes_its_pytest_tree_along(tmp_path):
    """kill -9 of the audit (no handler can run): the parent-death guard in the pytest
    controller and its xdist worker kills their process group within seconds; the scratch
    directory it left is removed by the next audit into that report directory."""
    proc = subprocess.Popen(_audit_cmd(tmp_path, "-n", "1"), cwd=ROOT, env=_env(
        THEOREM_AUDIT_FAULT="sleep"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    marker = str(tmp_path / ".audit-run-")
    try:
        # pytest runs in its own session (sid = its pid); its xdist worker joins it
        assert _wait_for(lambda: len(_session(_pytest_pid(marker))) >= 2 or proc.poll() is not None,
                         120) and proc.poll() is None, proc.stdout.read()[-3000:]
        sid = _pytest_pid(marker)
        time.sleep(5)  # the worker is inside the sleeping property
        proc.kill()
        proc.wait(timeout=10)
        assert _wait_for(lambda: not _session(sid), 15), _session(sid)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert list(tmp_path.glob(".audit-run-*")), "a SIGKILLed audit cannot clean up itself"
    from properties.__main__ import _Lock
    with _Lock(tmp_path):  # the next audit: the stale lock is taken over, the scratch removed
        assert not list(tmp_path.glob(".audit-run-*"))


@pytest.mark.xdist_group("fault-audit")
def test_an_audit_started_with_sigint_ignored_stops_on_sighup(tmp_path):
    """Started with SIGINT ignored (as `cmd &` or nohup-like runners do), the audit still stops
    its pytest (the child gets default dispositions) on SIGHUP, handled like SIGTERM: exit 130,
    the report marked interrupted, no process left, the lock released."""
    def ignore_sigint():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(_audit_cmd(tmp_path, "-n", "0"), cwd=ROOT, preexec_fn=ignore_sigint,  # noqa: PLW1509
                            env=_env(THEOREM_AUDIT_FAULT="sleep"), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    marker = str(tmp_path / ".audit-run-")
    lines = _reader(proc)
    try:  # fault.steady has reported; fault.lost sleeps
        assert _wait_for(lambda: any("fault.steady: 1 passed" in x for x in lines), 150), lines
        time.sleep(1)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(lines)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert time.monotonic() - t0 < 30
    assert _wait_for(lambda: not _processes_mentioning(marker), 10)
    doc = json.loads((tmp_path / "audit.json").read_text())
    assert doc["interrupted"] is True
    assert not (tmp_path / ".audit.lock").exists()
    assert not list(tmp_path.glob(".audit-run-*"))


# ------------------------------------------------------------------------------------------
# in-process: the pipeline's steps
# ------------------------------------------------------------------------------------------
def test_an_empty_or_dead_lock_is_taken_over_with_a_note_and_a_live_one_refuses(tmp_path, capsys):
    from properties.__main__ import UsageError, _Lock

    lock = tmp_path / ".audit.lock"
    for stale in ("", "0", "garbage", "999999999"):
        lock.write_text(stale)
        (tmp_path / ".audit-run-old").mkdir(exist_ok=True)
        with _Lock(tmp_path):
            assert lock.read_text() == str(os.getpid())
            assert not (tmp_path / ".audit-run-old").exists()
        assert "taking over the stale lock" in capsys.readouterr().err
        assert not lock.exists()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(str(live.pid))
        with pytest.raises(UsageError, match=f"another audit \\(pid {live.pid}\\)"), _Lock(tmp_path):
            pass
        assert lock.read_text() == str(live.pid)  # left to its owner
    finally:
        live.kill()
        live.wait()


def _rows():
    from properties import report as rep
    from properties.registry import Claim

    claim = Claim(id="fault.write", where="-", statement="-", assumptions="-", prediction="-",
                  simulation="-", metric="-", tolerance="-")
    return rep.build({claim.id: claim}, {"tests": []})


def test_a_full_disk_at_report_time_keeps_the_previous_report(tmp_path, monkeypatch):
    """The new report is written complete (staged, fsynced) before anything is renamed: when a
    write fails (ENOSPC), the previous report stays whole and no staged file is left."""
    import errno

    from properties import report as rep
    from properties.__main__ import _write

    report = tmp_path / "r"
    report.mkdir()
    old = {n: f"old {n}" for n in ("audit.json", "audit.md", "audit.html")}
    for n, t in old.items():
        (report / n).write_text(t)
    real, calls = rep._atomic_write, []

    def full_disk(path, text):
        calls.append(path)
        if len(calls) == 2:  # the json went through, the markdown hits a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, text)

    monkeypatch.setattr(rep, "_atomic_write", full_disk)
    stage = report / ".audit-run-x" / "stage"
    stage.mkdir(parents=True)
    why = _write(_rows(), {}, {}, "ci", stage, report, report / "audit.json")
    assert why and "No space left" in why
    assert {n: (report / n).read_text() for n in old} == old
    assert not list(report.glob("*.previous.*")) and not list(report.glob(".*.new-*"))
    monkeypatch.setattr(rep, "_atomic_write", real)
    assert _write(_rows(), {}, {}, "ci", stage, report, report / "audit.json") is None
    assert (report / "audit.previous.md").read_text() == "old audit.md"
    assert json.loads((report / "audit.json").read_text())["claims"][0]["id"] == "fault.write"
    mask = os.umask(0)
    os.umask(mask)
    assert (report / "audit.json").stat().st_mode & 0o777 == 0o666 & ~mask  # not 0600


def test_json_targets_that_are_not_reports_are_refused(tmp_path):
    from properties.__main__ import UsageError, check_outputs

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("x")
    (tmp_path / "notes.json").write_text('{"mine": 1}')
    for target in (tmp_path / "mine", Path("/dev/null"), tmp_path / "notes.json"):
        with pytest.raises(UsageError, match="--json"):
            check_outputs(str(tmp_path / "r"), str(target))
    assert (tmp_path / "mine" / "precious.txt").exists() and not Path("/dev/null.previous").exists()
    (tmp_path / "old.json").write_text('{"schema_version": 3, "claims": []}')
    assert check_outputs(str(tmp_path / "r"), str(tmp_path / "old.json"))[1] == tmp_path / "old.json"
    (tmp_path / "r" / "audit.md").mkdir()
    with pytest.raises(UsageError, match="not a regular file"):
        check_outputs(str(tmp_path / "r"), None)
    for empty in ("", "  "):
        with pytest.raises(UsageError, match="--report"):
            check_outputs(empty, None)


def test_sizes_and_worker_counts_are_parsed_or_refused():
    from properties.__main__ import UsageError, check_workers, parse_size

    assert parse_size("4G") == 4 * 2 ** 30 == parse_size("4GB") == parse_size("4gib")
    assert parse_size("500M") == 500 * 2 ** 20 and parse_size("1000") == 1000
    assert parse_size("1.5K") == 1536
    for bad in ("abc", "0", "", "-1G", "4X", "G"):
        with pytest.raises(UsageError, match="--cache-limit"):
            parse_size(bad)
    assert check_workers("auto") == "auto" and check_workers("02") == "2"
    for bad in ("foo", "-1", "1.5", ""):
        with pytest.raises(UsageError, match="-n/--workers"):
            check_workers(bad)


def test_collect_names_lost_properties_and_failed_shards(tmp_path):
    from properties.__main__ import Plan, Ran, _collect

    raw = tmp_path / "raw-0.json"
    raw.write_text(json.dumps({"tests": [{"claim": "a.x", "nodeid": "f.py::test_x",
                                          "failure": "none"}]}))
    plan = Plan(cmds=[["-"], ["-"]], raws=[raw, tmp_path / "raw-1.json"],
                groups=[["a.x"], ["b.y"]], expect={"a.x": ["test_x", "test_x2"], "b.y": ["test_y"]})
    out = _collect(plan, Ran(rc=0, interrupted=False, failed_shards={1: "job 7 CANCELLED"}, t0=0))
    lost = {(t["claim"], t["nodeid"]): t["message"] for t in out["tests"] if t["failure"] == "error"}
    assert set(lost) == {("a.x", "a.x::test_x2"), ("b.y", "b.y::test_y")}
    assert "shard 1 failed: job 7 CANCELLED" in lost[("b.y", "b.y::test_y")]
    assert "worker crashed" in lost[("a.x", "a.x::test_x2")]
    # an interrupted run is partial, not lost: nothing is invented
    out = _collect(plan, Ran(rc=2, interrupted=True, failed_shards={}, t0=0))
    assert [t["claim"] for t in out["tests"]] == ["a.x"]
