"""A new paper is found and checked like the built-in ones (issue 21).

In a temporary copy of the harness (no built-in paper, so it runs in seconds), `new-paper` writes
a paper; the statement test then asks for its pin, the layout test passes, and a misplaced claim
(registered outside its item's file, with no property and no alternative) fails the layout test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _copy_harness(dst: Path) -> Path:
    """The harness without the built-in papers: properties/*.py, theory and sim's package files,
    the layout and statement tests, an empty statements.json."""
    (dst / "properties").mkdir(parents=True)
    for f in (ROOT / "properties").iterdir():
        if f.is_file() and f.suffix in (".py", ".mplstyle", ".ini"):
            shutil.copy(f, dst / "properties" / f.name)
    for pkg, files in (("theory", ("__init__.py", "validate.py", "mutate.py", "skeleton.py")),
                       ("sim", ("__init__.py", "skeleton.py"))):
        (dst / pkg).mkdir()
        for name in files:
            shutil.copy(ROOT / pkg / name, dst / pkg / name)
    (dst / "tests").mkdir()
    for name in ("test_layout.py", "test_statements.py"):
        shutil.copy(ROOT / "tests" / name, dst / "tests" / name)
    (dst / "tests" / "statements.json").write_text("{}\n")
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(ROOT / name, dst / name)
    return dst


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


CHECKS = ("-m", "pytest", "-q", "tests/test_layout.py",
          "tests/test_statements.py")


def test_a_new_paper_is_checked_by_the_layout_and_statement_tests(tmp_path):
    root = _copy_harness(tmp_path / "repo")
    r = _run(root, "-m", "properties", "new-paper", "toyp", "--title", "Toy (A. Author, 2026)")
    assert r.returncode == 0, r.stderr
    assert (root / "properties" / "toyp" / "test_theorem1.py").is_file()
    r = _run(root, *CHECKS)
    assert r.returncode == 1, r.stdout[-3000:]
    assert "claims without a pinned statement: ['toyp.theorem1']" in r.stdout
    r = _run(root, "tests/test_statements.py", "--update")
    assert r.returncode == 0, r.stderr
    r = _run(root, *CHECKS)
    assert r.returncode == 0, r.stdout[-3000:]
    # the display name comes from the package; the paper order of the tables is derived
    r = _run(root, "-c", "from properties.__main__ import load_registry; "
                         "print(load_registry([])['toyp.theorem1'].paper)")
    assert r.stdout.strip() == "Toy (A. Author, 2026)", r.stderr
    # a misplaced claim: registered in runs.py, with no property and no alternative
    (root / "properties" / "toyp" / "runs.py").write_text(
        "from properties import Claim, register\n"
        "register(Claim(id='toyp.lemma9', where='Lemma 9', statement='s', assumptions='a',\n"
        "               prediction='p', simulation='s', metric='m', tolerance='t'))\n")
    r = _run(root, "tests/test_statements.py", "--update")
    r = _run(root, *CHECKS)
    assert r.returncode == 1, r.stdout[-3000:]
    assert "claims outside their item's file: toyp.lemma9 -> properties/toyp/runs.py" in r.stdout
    assert "toyp.lemma9: no printed-form property" in r.stdout
    assert "toyp.lemma9: no alternative declared" in r.stdout


def test_new_claim_refuses_a_bad_id_and_an_existing_file(tmp_path):
    from properties import scaffold

    root = tmp_path / "repo"
    with pytest.raises(ValueError, match="run `theorem-audit new-paper toyp` first"):
        scaffold.new_claim("toyp.theorem1", root)
    for bad in ("toyp", "Toyp.x", "toyp.Theorem 1", "check.x", "conjecture.x"):
        with pytest.raises(ValueError, match="claim id|paper name"):
            scaffold.new_claim(bad, root)
    written = scaffold.new_paper("toyp", root)
    assert written[-1] == "properties/toyp/test_theorem1.py"
    assert scaffold.new_claim("toyp.lemma4_3.item3", root) == [
        "properties/toyp/test_lemma4_3_item3.py"]
    with pytest.raises(ValueError, match="exists already"):
        scaffold.new_claim("toyp.lemma4_3.item3", root)
    with pytest.raises(ValueError, match="exists already"):
        scaffold.new_paper("toyp", root)


def test_new_paper_takes_the_first_claim_and_title_and_its_skeletons_run_at_any_time(tmp_path):
    """`new-paper icllin --claim theorem4_1 --title T`: the first claim is icllin.theorem4_1,
    the display name is T with no TODO left, every generated line is within the project's 100
    columns; after the paper's theory/ and sim/ files are rewritten (the example functions
    gone), a second `new-claim` skeleton still runs as written: the audit gives verdicts."""
    root = _copy_harness(tmp_path / "repo")
    title = ("Trained linear self-attention learns ridge regression in context (A. Author, "
             "B. Author and C. Author, NeurIPS 2026)")
    r = _run(root, "-m", "properties", "new-paper", "icllin", "--claim", "theorem4_1",
             "--title", title)
    assert r.returncode == 0, r.stderr
    init = (root / "properties" / "icllin" / "__init__.py").read_text()
    assert "TODO" not in init
    for f in [*(root / "properties" / "icllin").glob("*.py"), root / "theory" / "icllin.py",
              root / "sim" / "icllin.py"]:
        long = [n for n, line in enumerate(f.read_text().splitlines(), 1) if len(line) > 100]
        assert not long, f"{f}: lines {long} exceed 100 columns"
    assert (root / "properties" / "icllin" / "test_theorem4_1.py").is_file()
    r = _run(root, "-c", "from properties.__main__ import load_registry; "
                         "print(load_registry([])['icllin.theorem4_1'].paper)")
    assert r.stdout.strip() == title, r.stderr
    # the paper's life goes on: its example closed form and simulation are replaced
    (root / "theory" / "icllin.py").write_text('"""The closed forms of the paper."""\n')
    (root / "sim" / "icllin.py").write_text('"""The simulations of the paper."""\n')
    r = _run(root, "-m", "properties", "new-claim", "icllin.lemma2")
    assert r.returncode == 0, r.stderr
    r = _run(root, "-m", "properties", "audit", "--profile", "ci", "--only", "icllin.*",
             "--no-plots", "--no-cache", "--report", str(tmp_path / "report"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "icllin.lemma2" in r.stdout and "icllin.theorem4_1" in r.stdout


def test_the_contributing_vector_valued_example_audits_with_no_standard_error(tmp_path):
    """CONTRIBUTING's worked example (a trained vector-valued claim), written out as a user
    would, audits to `holds` with both alternatives rejected; its claim file computes no
    standard error, critical value or band (check_mc_mean does)."""
    import json
    import re

    text = (ROOT / "CONTRIBUTING.md").read_text()
    blocks = re.findall(r"```python\n# file: (\S+)\n(.*?)```", text, re.S)
    assert [b[0] for b in blocks] == ["theory/ridge1.py", "sim/ridge1.py",
                                      "properties/ridge1/test_lemma1.py"]
    root = _copy_harness(tmp_path / "repo")
    for rel, code in blocks:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(code)
    (root / "properties" / "ridge1" / "__init__.py").write_text('"""Audit of ridge1: a toy."""\n')
    claim = blocks[2][1]
    assert not re.search(r"\bstd\b|sqrt|\bse\b|isf|ppf|Tolerance", claim)
    r = _run(root, "-m", "properties", "audit", "--profile", "ci", "--only", "ridge1.*",
             "--no-plots", "--no-cache", "--report", str(tmp_path / "report"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (row,) = json.loads((tmp_path / "report" / "audit.json").read_text())["claims"]
    assert row["verdict"] == "holds", row["detail"]
