"""End-to-end test of `python -m properties audit` with a true and a false conjecture."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_audit_reports_true_and_false_conjecture(tmp_path):
    env = dict(os.environ, HYPOTHESIS_PROFILE="ci")
    cmd = [sys.executable, "-m", "properties", "audit", "--only", "conjecture.*", "-n", "0",
           "--report", str(tmp_path), "--no-plots",
           "--conjecture", str(ROOT / "examples" / "conjecture_exp_logits.py"),
           str(ROOT / "tests" / "conjectures" / "false_softmax_logits.py")]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0, "a refuted conjecture must make the audit exit non-zero"
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
    assert doc["schema_version"] == 2 and doc["false_fail_budget"] == 0.0
    assert false["failing_draws"], "the report shows the draw that failed"
    assert "conjecture.exp_logits_nonnegative" in proc.stdout and "refuted" in proc.stdout
    assert (tmp_path / "audit.md").read_text().count("## `conjecture.") == 2
