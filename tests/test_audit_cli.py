"""End-to-end test of `python -m properties audit` with a true and a false conjecture."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


CONJECTURES = [str(ROOT / "examples" / "conjecture_exp_logits.py"),
               str(ROOT / "tests" / "conjectures" / "false_softmax_logits.py")]


# the child audits run the derandomized ci profile even where this suite runs randomized
# (THEOREM_AUDIT_RANDOMIZE=1): these tests compare audits with each other
def _ci_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "THEOREM_AUDIT_RANDOMIZE"}
    return dict(env, HYPOTHESIS_PROFILE="ci")


def _audit_conjectures(report, *extra):
    cmd = [sys.executable, "-m", "properties", "audit", "--only", "conjecture.*", "-n", "0",
           "--report", str(report), "--no-plots", *extra, "--conjecture", *CONJECTURES]
    return subprocess.run(cmd, cwd=ROOT, env=_ci_env(),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def single_run(tmp_path_factory):
    """The reference audit, computing every run afresh into its own run cache."""
    report = tmp_path_factory.mktemp("single")
    return _audit_conjectures(report, "--cache-dir", str(report / "runs")), report


@pytest.mark.xdist_group("conjecture-audit")
def test_audit_reports_true_and_false_conjecture(single_run):
    proc, tmp_path = single_run
    assert proc.returncode == 1, "a refuted conjecture makes the audit exit 1 (--fail-on refuted)"
    rows = {r["id"]: r for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    assert set(rows) == {"conjecture.exp_logits_nonnegative", "conjecture.softmax_logits_nonnegative"}
    true, false = rows["conjecture.exp_logits_nonnegative"], rows["conjecture.softmax_logits_nonnegative"]
    assert true["verdict"] == "holds" and true["draws"] >= 3, true["detail"]
    assert true["max_error"] <= true["tolerance"]
    assert {a["name"] for a in true["alternatives"] if a["rejected"]} == {
        "flow_invariant_bound", "softmax_attention"}
    assert all(t["origin"] == "derived" for t in true["thresholds"])
    assert false["verdict"] == "refuted" and false["max_error"] > false["tolerance"]
    assert "ClaimMismatch" in false["detail"]
    for key in ("id", "paper", "where", "statement", "verdict", "max_error", "tolerance",
                "draws", "alternatives", "thresholds", "history", "seconds", "detail"):
        assert key in true
    doc = json.loads((tmp_path / "audit.json").read_text())
    assert doc["schema_version"] == 3 and doc["false_fail_budget"] == 0.0
    assert false["failing_draws"], "the report shows the draw that failed"
    assert "conjecture.exp_logits_nonnegative" in proc.stdout and "refuted" in proc.stdout
    # one progress line per claim as its last property finishes
    assert "conjecture.exp_logits_nonnegative: 1 passed" in proc.stdout
    assert doc["commit"] and doc["versions"]["torch"] and doc["profile"] == "ci"
    assert doc["interrupted"] is False
    assert false["rerun"] and "false_softmax_logits.py::test_softmax_logits_nonnegative" in false["rerun"][0]
    # the rerun command replays exactly the failing draw (one draw, no search, no shrinking)
    draw = false["failing_draws"][0]["draw"]
    assert false["rerun"][0].startswith(f"cd {ROOT} && THEOREM_AUDIT_DRAW=")
    assert draw.split("=")[1] in false["rerun"][0]
    cmd = false["rerun"][0].replace(" python -m pytest", f" {sys.executable} -m pytest", 1)
    rerun = subprocess.run(cmd + " -q -s", shell=True, cwd=ROOT, capture_output=True,
                           text=True, timeout=300, env=_ci_env())
    assert rerun.returncode == 1 and "ClaimMismatch" in rerun.stdout, rerun.stdout[-2000:]
    assert "1 failed" in rerun.stdout and "Falsifying example" not in rerun.stdout
    assert (tmp_path / "audit.md").read_text().count("## `conjecture.") == 2
    # a claim's draw_note is reported beside each draw (json, markdown)
    prop = false["properties"][0]
    assert len(prop["draw_notes"]) == len(prop["draw_params"]) >= 1
    assert all(n.startswith("test note: seed mod 7 = ") for n in prop["draw_notes"])
    assert "(test note: seed mod 7 = " in (tmp_path / "audit.md").read_text()
    page = (tmp_path / "audit.html").read_text()
    assert page.count("<div class='claim'>") == 2 and "THEOREM_AUDIT_DRAW=" in page


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "properties", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          env=_ci_env())


def test_only_that_matches_nothing_is_a_usage_error_naming_close_matches(tmp_path):
    proc = _cli("audit", "--only", "joma.theorm2", "--report", str(tmp_path))
    assert proc.returncode == 2 and "matches no claim" in proc.stderr
    assert "joma.theorem2" in proc.stderr
    proc = _cli("audit", "--only", "joma.theorem2,nosuch.*", "--report", str(tmp_path))
    assert proc.returncode == 2 and "'nosuch.*'" in proc.stderr
    assert not (tmp_path / "audit.json").exists()  # nothing ran


def test_an_unwritable_report_fails_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = _cli("audit", "--only", "joma.*", "--report", str(blocker / "sub"))
    assert proc.returncode == 2 and "not a writable directory" in proc.stderr


def test_a_busy_report_directory_is_refused(tmp_path):
    (tmp_path / ".audit.lock").write_text(str(os.getpid()))  # this test's process is alive
    proc = _cli("audit", "--only", "joma.*", "--report", str(tmp_path))
    assert proc.returncode == 2 and "another audit" in proc.stderr
    (tmp_path / ".audit.lock").write_text("999999999")  # a stale lock is taken over
    proc = _cli("list", "--report", str(tmp_path))
    assert proc.returncode == 0


def test_list_and_show(tmp_path):
    proc = _cli("list", "--report", str(tmp_path))
    assert proc.returncode == 0 and "joma.theorem5" in proc.stdout and "signgd." in proc.stdout
    proc = _cli("show", "joma.theorem5", "--report", str(tmp_path))
    assert proc.returncode == 0 and "As printed:" in proc.stdout and "Assumptions:" in proc.stdout
    proc = _cli("show", "joma.theorm5", "--report", str(tmp_path))
    assert proc.returncode == 2 and "joma.theorem5" in proc.stderr


def test_an_interrupted_audit_exits_130(tmp_path):
    import signal
    import time
    proc = subprocess.Popen([sys.executable, "-m", "properties", "audit", "--only",
                             "conjecture.*", "-n", "0", "--no-plots", "--report", str(tmp_path),
                             "--conjecture", str(ROOT / "examples" / "conjecture_exp_logits.py")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_ci_env())
    # the signal must come after the audit installed its handlers (under a loaded machine the
    # interpreter's start and imports alone can take seconds): wait for the report lock it takes
    # once they are in place, then a little more, into the pytest run
    lock, t0 = tmp_path / ".audit.lock", time.monotonic()
    while not lock.exists() and proc.poll() is None and time.monotonic() - t0 < 120:
        time.sleep(0.05)
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 1:  # the run had already finished: nothing to interrupt
        return
    assert proc.returncode == 130, (proc.returncode, err[-500:])
    if (tmp_path / "audit.json").exists():
        assert json.loads((tmp_path / "audit.json").read_text())["interrupted"] is True
    assert not (tmp_path / ".audit.lock").exists()


def _comparable(row):
    keep = ("id", "verdict", "max_error", "tolerance", "draws", "thresholds", "history",
            "false_fail", "failing_draws", "comparison")
    out = {k: row.get(k) for k in keep}
    out["alternatives"] = [(a["name"], a["rejected"], a["draws"], a["rejected_draws"])
                           for a in row["alternatives"]]
    out["properties"] = [(p["test"], p["outcome"], p["failure"], p["draws"], p["draw_params"])
                         for p in row["properties"]]
    return out


@pytest.mark.xdist_group("conjecture-audit")
def test_a_sharded_audit_equals_the_single_run(single_run, tmp_path):
    proc1, report1 = single_run
    proc = _audit_conjectures(tmp_path, "--shards", "claim", "--executor", "local", "--no-cache")
    assert proc.returncode == proc1.returncode == 1, proc.stderr[-2000:]
    assert "2 shards (claim) on the local executor" in proc.stdout
    one = {r["id"]: _comparable(r) for r in json.loads((report1 / "audit.json").read_text())["claims"]}
    many = {r["id"]: _comparable(r) for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    assert many == one  # verdicts, errors, draws, alternatives: number for number
    assert not list(tmp_path.glob(".shards-*"))  # the shards' scratch files are gone


def test_shard_groups_keep_a_files_claims_together():
    from properties.__main__ import load_registry, shard_groups
    from properties.registry import REGISTERED_IN

    ids = sorted(i for i in load_registry([]) if i.startswith(("joma.theorem1", "joma.theorem2", "topic.")))
    assert shard_groups(ids, "none") == [ids]
    by_paper = shard_groups(ids, "paper")
    assert [g[0].split(".")[0] for g in by_paper] == ["joma", "topic"]
    by_file = shard_groups(ids, "claim")
    assert sorted(i for g in by_file for i in g) == ids
    assert all(len({REGISTERED_IN[i] for i in g}) == 1 for g in by_file)
    assert ["joma.theorem2", "joma.theorem2.onehot"] in by_file


@pytest.mark.xdist_group("conjecture-audit")
def test_the_slurm_executor_falls_back_to_local_jobs_and_agrees(single_run, tmp_path):
    pytest.importorskip("submitit")  # the [cluster] extra; without Slurm, AutoExecutor runs locally
    if shutil.which("sbatch") and subprocess.run(["sinfo", "-h"], capture_output=True).returncode:
        pytest.skip("a Slurm is installed but its controller does not answer: AutoExecutor "
                    "submits to it (tests/test_slurm.py covers a Slurm that answers)")
    proc1, report1 = single_run
    proc = _audit_conjectures(tmp_path, "--shards", "paper", "--executor", "slurm", "--no-cache")
    assert proc.returncode == proc1.returncode == 1, proc.stderr[-2000:]
    one = {r["id"]: _comparable(r) for r in json.loads((report1 / "audit.json").read_text())["claims"]}
    many = {r["id"]: _comparable(r) for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    assert many == one


@pytest.mark.xdist_group("conjecture-audit")
def test_a_warm_cache_audit_equals_the_cold_one(single_run, tmp_path):
    """Issue 13: a second audit reads the first one's runs from the on-disk cache and reports the
    same verdicts and numbers; with the cache turned off it computes them again, equally."""
    proc1, report1 = single_run
    stored = list((report1 / "runs").rglob("output.pkl"))
    assert stored, "the cold audit stored its pure simulations"
    mtimes = {p: p.stat().st_mtime_ns for p in stored}
    proc = _audit_conjectures(tmp_path, "--cache-dir", str(report1 / "runs"))
    assert proc.returncode == proc1.returncode == 1, proc.stderr[-2000:]
    one = {r["id"]: _comparable(r) for r in json.loads((report1 / "audit.json").read_text())["claims"]}
    warm = {r["id"]: _comparable(r) for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    assert warm == one
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())  # read, not rewritten
    doc = json.loads((tmp_path / "audit.json").read_text())
    assert doc["run_cache"] == str((report1 / "runs").resolve()) and doc["size"] == "ci"


def test_run_options_are_checked_before_the_run(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = _cli("audit", "--only", "joma.theorem2", "--report", str(tmp_path / "r"),
                "--cache-dir", str(blocker / "sub"))
    assert proc.returncode == 2 and "--cache-dir" in proc.stderr and "not writable" in proc.stderr
    proc = _cli("audit", "--only", "joma.theorem2", "--report", str(tmp_path / "r"),
                "--size", "paper", "--device", "cpu")
    assert proc.returncode == 2 and "--size paper" in proc.stderr and "CUDA" in proc.stderr
    proc = _cli("audit", "--only", "joma.theorem2", "--report", str(tmp_path / "r"),
                "--size", "huge")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_matplotlib_is_optional_for_the_claims():
    """The figures are an optional extra (`theorem-audit[figures]`): loading every claim file
    imports no matplotlib, so an install without it audits and reports without figures."""
    code = ("import sys; from properties.__main__ import load_registry; load_registry([]); "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr[-2000:]


def test_a_refused_slurm_submission_is_a_usage_error(tmp_path, monkeypatch):
    """sbatch present but the cluster refusing the array (no controller, a bad partition): a
    one-line usage error naming --executor, not an internal error."""
    submitit = pytest.importorskip("submitit")
    from properties import __main__ as m

    class Refusing:
        def __init__(self, folder):
            pass

        def update_parameters(self, **kw):
            pass

        def batch(self):
            import contextlib
            return contextlib.nullcontext()

        def submit(self, *a, **kw):
            raise submitit.core.utils.FailedJobError(
                "sbatch: error: Batch job submission failed: Unable to contact slurm controller\n"
                "second line")

    monkeypatch.setattr(submitit, "AutoExecutor", Refusing)
    with pytest.raises(m.UsageError, match=r"^--executor slurm: the cluster refused .*"
                                           r"FailedJobError: sbatch: error: .*controller up"):
        m._run_shards([["pytest"]], {}, "slurm", tmp_path)
