"""The Slurm path of `--shards ... --executor slurm` against a real Slurm (issue 22).

Opt-in: runs where `sinfo` answers (a cluster, or the single-node Slurm that `.ci/slurm install
&& .ci/slurm start` sets up as root) and submitit is installed; skipped otherwise.  A shard whose
job is cancelled while it runs (as a preemption without requeue does) is submitted again and
resumes from the run cache; one that fails for good is an error naming its claims (exit 3)."""

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = str(ROOT / "tests" / "conjectures" / "fault_probe.py")


@functools.lru_cache(maxsize=1)
def _slurm_up() -> bool:
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return False
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                             timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and any(s in out.stdout for s in ("idle", "mixed", "alloc"))


pytestmark = pytest.mark.xdist_group("slurm")


@pytest.fixture(autouse=True, scope="module")
def _needs_slurm():
    """Skip where no Slurm answers.  Asked when the module's first test runs, once, on the one
    worker of its xdist group, not when it is collected: where `sinfo` is installed but no
    controller answers, the probe waits for its timeout (~9 s), which every worker (and every
    pytest that collects tests/) paid before."""
    if not _slurm_up():
        pytest.skip("no Slurm answers (sinfo); see .ci/slurm")


def _audit(tmp_path, name, **env):
    pytest.importorskip("submitit")
    cmd = [sys.executable, "-m", "properties", "audit", "--only", "fault.*", "--no-plots",
           "-n", "0", "--shards", "claim", "--executor", "slurm", "--report", str(tmp_path),
           "--cache-dir", str(tmp_path / "runs"), "--conjecture", PROBE]
    full = dict(os.environ, HYPOTHESIS_PROFILE="ci", PYTHONPATH=str(ROOT),
                THEOREM_AUDIT_JOB_NAME=name, THEOREM_AUDIT_CPUS="1", **env)
    return subprocess.Popen(cmd, cwd=ROOT, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _cancel_when(pred, name, timeout=180):
    """scancel the jobs called `name` once pred() holds; the number of jobs cancelled."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not pred():
        time.sleep(0.5)
    assert pred(), "the shard never reached its sleeping property"
    ids = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True,
                         text=True, check=False).stdout.split()
    for i in ids:
        subprocess.run(["scancel", i], check=False)
    return len(ids)


def test_a_cancelled_shard_is_submitted_again_and_completes(tmp_path):
    mark = tmp_path / "slept"
    name = f"ta-requeue-{os.getpid()}"
    proc = _audit(tmp_path, name, THEOREM_AUDIT_FAULT="sleep-once",
                  THEOREM_AUDIT_FAULT_MARK=str(mark))
    try:
        assert _cancel_when(mark.exists, name) >= 1
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "submitting it again (1/2" in err, err[-3000:]
    assert proc.returncode == 0, (proc.returncode, err[-3000:])
    rows = {r["id"]: r for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    assert all(p["failure"] == "none" for r in rows.values() for p in r["properties"])
    assert rows["fault.lost"]["draws"] == 2 and not json.loads(
        (tmp_path / "audit.json").read_text())["interrupted"]


def test_a_shard_that_fails_for_good_is_an_error_naming_its_claims(tmp_path):
    mark = tmp_path / "slept"
    name = f"ta-fail-{os.getpid()}"
    proc = _audit(tmp_path, name, THEOREM_AUDIT_FAULT="sleep-once",
                  THEOREM_AUDIT_FAULT_MARK=str(mark), THEOREM_AUDIT_MAX_RESUBMIT="0")
    try:
        assert _cancel_when(mark.exists, name) >= 1
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, (proc.returncode, err[-3000:])
    assert "given up" in err and "INTERRUPTED" not in out
    rows = {r["id"]: r for r in json.loads((tmp_path / "audit.json").read_text())["claims"]}
    # fault.lost's result is lost with its shard (fault.steady, in the same claim file, may
    # have reported before the cancel, or be lost with it too)
    assert "its shard 0 failed" in rows["fault.lost"]["detail"], rows["fault.lost"]["detail"]
