"""Conjectures anywhere on disk (issue 21), end to end: files outside the checkout, two named
alike in different folders with a same-named function, a false one and one whose property audits
a typo'd claim id.  The typo is a usage error before any work (exit 2, naming the file and the
close ids), whatever --only selects; without it every claim runs; the false conjecture's Rerun line, run as printed from another directory, reruns exactly
its failing draw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONJECTURE = '''
import os

from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register, rival


def sum_closed_form(n):
    return n * ({plus}) / 2


def dropped_last_term(n):
    return n * (n - 1) / 2


register(Claim(id="{cid}", where="test", statement="1 + ... + n = n ({plus}) / 2",
               assumptions="n >= 1", prediction="sum_closed_form", simulation="a loop",
               metric="abs", tolerance="float64 round-off",
               alternatives=(rival("dropped_last_term", dropped_last_term, "a dropped term"),)))


@audits("{audits}")
@examples(5)
@example(n=3)
@given(n=st.integers(1, 50))
def test_sum(world, n):
    log = os.environ.get("CONJECTURE_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{{n}}\\n")
    observed = float(sum(range(1, n + 1)))
    check_close("{cid}", observed, world.prediction(sum_closed_form)(n),
                Tolerance.roundoff(max(n * n, 1.0)))
'''


def _write(path: Path, cid: str, plus: str = "n + 1", audits: str | None = None) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONJECTURE.format(cid=cid, plus=plus, audits=audits or cid))
    return str(path)


def test_conjectures_outside_the_checkout(tmp_path):
    files = [_write(tmp_path / "a" / "conj.py", "conjecture.sum_a"),
             _write(tmp_path / "b" / "conj.py", "conjecture.sum_b"),          # same name
             _write(tmp_path / "c" / "false_sum.py", "conjecture.false_sum", plus="n")]
    report = tmp_path / "report"
    env = dict(os.environ, HYPOTHESIS_PROFILE="ci", PYTHONPATH=str(ROOT))
    env.pop("CONJECTURE_LOG", None)
    cmd = [sys.executable, "-m", "properties", "audit", "--only", "conjecture.*", "--report",
           str(report), "--no-plots", "--cache-dir", str(tmp_path / "cache"), "--conjecture",
           *files]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "audit: profile ci, size ci, device" in proc.stdout
    rows = {r["id"]: r for r in json.loads((report / "audit.json").read_text())["claims"]}
    # both same-named functions in same-named files ran, under their real paths
    for cid, d in (("conjecture.sum_a", "a"), ("conjecture.sum_b", "b")):
        assert rows[cid]["verdict"] == "holds", rows[cid]["detail"]
        assert rows[cid]["properties"][0]["test"] == f"{tmp_path / d / 'conj.py'}::test_sum"
        assert rows[cid]["file"] == str(tmp_path / d / "conj.py")
    # the false conjecture: its Rerun line works as printed from anywhere, on exactly its draw
    false = rows["conjecture.false_sum"]
    assert false["verdict"] == "refuted"
    draw = false["failing_draws"][0]["draw"]
    (rerun,) = false["rerun"]
    log = tmp_path / "draws.log"
    shell = rerun.replace(" python -m pytest", f" {sys.executable} -m pytest", 1)
    r = subprocess.run(shell, shell=True, cwd=tmp_path / "a", capture_output=True, text=True,
                       timeout=300, check=False,
                       env=dict(os.environ, CONJECTURE_LOG=str(log), PYTHONPATH=str(ROOT)))
    assert r.returncode == 1 and "ClaimMismatch" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert log.read_text().split() == [draw.split("=")[1]]


def test_a_typod_claim_id_is_a_usage_error_whatever_only_selects(tmp_path):
    """`@audits("conjecturr.sum_d")` (a typo in the prefix) in a file that registers
    `conjecture.sum_d`: exit 2 before any work, naming the file, the function and the close id,
    under an --only that the typo's prefix does not match."""
    typo = _write(tmp_path / "d" / "typo.py", "conjecture.sum_d", audits="conjecturr.sum_d")
    env = dict(os.environ, HYPOTHESIS_PROFILE="ci", PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "properties", "audit", "--only", "conjecture.*", "--report",
           str(tmp_path / "report"), "--no-plots", "--no-cache", "--conjecture", typo]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "typo.py: test_sum audits 'conjecturr.sum_d', which no Claim registers" in proc.stderr
    assert "did you mean 'conjecture.sum_d'?" in proc.stderr
    assert not (tmp_path / "report" / "audit.json").exists()
