"""What a researcher meets first (issue 38): no silent mistakes in the stamp, the Rerun line and
the CLI's output; each a small, fast check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from properties.cli_audit import _git_state

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd, *a):
    subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def test_untracked_code_marks_the_stamp_dirty_with_its_names(tmp_path):
    """A report of a tree whose new paper is untracked cannot be reproduced from its commit: the
    stamp is dirty and names the files; an untracked file elsewhere (a report) is not code."""
    (tmp_path / "theory").mkdir()
    (tmp_path / "theory" / "old.py").write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "first")
    commit, dirty, untracked = _git_state(tmp_path)
    assert commit and dirty is False and untracked == []
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "audit.json").write_text("{}")
    assert _git_state(tmp_path)[1:] == (False, [])
    (tmp_path / "properties" / "newpaper").mkdir(parents=True)
    (tmp_path / "properties" / "newpaper" / "test_theorem1.py").write_text("")
    assert _git_state(tmp_path)[1:] == (True, ["properties/newpaper/test_theorem1.py"])


def test_outside_a_checkout_the_stamp_has_no_commit(tmp_path):
    assert _git_state(tmp_path) == (None, None, [])


def test_rerun_uses_the_audits_interpreter_and_configuration():
    from properties.report import rerun_commands
    from properties.settings import PYTEST_INI

    row = {"properties": [{"failure": "mismatch", "test": "properties/topic/test_x.py::test_y",
                           "expected_failure": None}]}
    (cmd,) = rerun_commands(row, "ci")
    assert f"{sys.executable} -m pytest -c {PYTEST_INI}" in cmd
    assert " python -m" not in cmd


@pytest.mark.parametrize("command", ["list", "show topic.theorem2"])
def test_piped_into_head_exits_quietly(command):
    """`theorem-audit list | head -1`: the closed pipe ends the command quietly with exit 0."""
    proc = subprocess.run(f"{sys.executable} -m properties {command} | head -1; "
                          "echo rc=${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stdout.rstrip().endswith("rc=0"), proc.stdout + proc.stderr
    assert "BrokenPipe" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


def test_a_module_that_does_not_import_blocks_only_itself(monkeypatch, capsys):
    """A half-written claim file: the other modules load; the audit of its paper gets an error
    row naming the file and why, an audit of another paper a note; pytest leaves it out."""
    from properties import cli_audit, cli_common

    monkeypatch.setattr(cli_common, "BROKEN_MODULES", {})
    monkeypatch.setattr(cli_common, "PAPER_MODULES", ["topic.test_theorem2",
                                                      "nopaper.test_half_written"])
    registry = cli_common.load_registry([])
    assert "topic.theorem2" in registry
    (path, why), = cli_common.BROKEN_MODULES.items()
    assert path == "properties/nopaper/test_half_written.py" and "ModuleNotFoundError" in why
    (row,) = cli_audit._broken_rows(["nopaper.theorem1"])
    assert row["claim"] == "nopaper.half_written" and row["failure"] == "error"
    assert "properties/nopaper/test_half_written.py does not import" in row["message"]
    assert cli_audit._broken_rows(["topic.theorem2"]) == []
    assert "does not import" in capsys.readouterr().err
    paths = cli_audit._pytest_paths(["topic.theorem2"], [])
    assert paths[0].endswith("properties/topic")
    assert paths[-1] == f"--ignore={ROOT / 'properties/nopaper/test_half_written.py'}"


def test_only_loads_and_collects_the_selected_papers():
    from properties.cli_common import papers_of

    assert papers_of("topic.theorem2,joma.*") == {"topic", "joma"}
    assert papers_of("*.theorem1") is None and papers_of(None) is None


@pytest.mark.parametrize("debug", [False, True])
def test_a_failing_property_leads_with_its_summary(debug):
    """A ClaimMismatch prints its one-line summary first and no harness frames; the traceback
    is there with THEOREM_AUDIT_DEBUG=1."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "THEOREM_AUDIT_DEBUG"}
    if debug:
        env["THEOREM_AUDIT_DEBUG"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:randomly",
                           "tests/conjectures/false_softmax_logits.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout
    body = out.split("test_softmax_logits_nonnegative _", 1)[1].split("\n", 1)[1]
    if debug:
        assert "properties/world.py" in body
    else:
        assert body.startswith("ClaimMismatch: conjecture.softmax_logits_nonnegative: max_abs")
        assert "properties/world.py" not in body and "seed=0" in body


def test_a_paraphrased_or_derived_statement_is_not_shown_as_printed():
    from properties import Claim
    from properties.report import _statement_label

    c = dict(id="demo.x", where="w", statement="s", assumptions="a", prediction="p",
             simulation="s", metric="m", tolerance="t")
    assert Claim(**c).statement_kind == "printed"
    with pytest.raises(ValueError, match="statement_kind"):
        Claim(**c, statement_kind="verbatim")
    assert _statement_label({"statement_kind": "printed"}) == "As printed"
    assert _statement_label({"statement_kind": "paraphrased"}).startswith("Paraphrased")
    assert _statement_label({"statement_kind": "derived"}).startswith("Derived")
