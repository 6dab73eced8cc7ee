"""A fuzz of malformed `theorem-audit` invocations (issue 22): every one is refused before any
work with the documented exit code and one line on stderr, never a traceback.

The invocations run in one subprocess (the claims load once), calling `properties.__main__.main`
in-process with the pytest runners replaced by a tripwire: an invocation that reached the run
would be reported as such."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DRIVER = r'''
import contextlib, io, json, os, sys, traceback
import properties.__main__ as m
import properties.cli_audit as audit

def tripwire(*a, **k):
    raise AssertionError("TRIPWIRE: the invocation reached the pytest run")
audit._run_pytest = audit._run_shards = tripwire  # where the audit's run step reads them

out = []
for case in json.loads(sys.argv[1]):
    saved = dict(os.environ)
    os.environ.update(case.get("env", {}))
    err, std = io.StringIO(), io.StringIO()
    escaped = None
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
        try:
            code = m.main(case["argv"])
        except SystemExit as e:  # argparse
            code = e.code
        except BaseException:
            code, escaped = None, traceback.format_exc()
    os.environ.clear()
    os.environ.update(saved)
    out.append({"argv": case["argv"], "code": code, "stderr": err.getvalue(),
                "stdout": std.getvalue(), "escaped": escaped})
print("RESULTS" + json.dumps(out))
'''


def _files(tmp: Path) -> dict:
    c = tmp / "conj"
    c.mkdir()
    files = {
        "syntax": "def broken(:\n",
        "raises": "raise RuntimeError('boom at import')\n",
        "exit0": "import sys\nsys.exit(0)\n",
        "exit3": "raise SystemExit(3)\n",
        "clash": ("from properties import Claim, register\n"
                  "register(Claim(id='joma.theorem2', where='x', statement='other', "
                  "assumptions='-', prediction='-', simulation='-', metric='-', tolerance='-'))\n"),
        "keyboard": "raise ImportError('no module named nowhere')\n",
    }
    paths = {}
    for k, text in files.items():
        (c / f"{k}.py").write_text(text)
        paths[k] = str(c / f"{k}.py")
    (c / "dir.py").mkdir()
    paths["dir"] = str(c / "dir.py")
    (c / "notpy.txt").write_text("x = 1\n")
    paths["notpy"] = str(c / "notpy.txt")
    paths["missing"] = str(c / "missing.py")
    return paths


MALFORMED_JSON = ["", "{", "[]", "null", "5", '"text"', '{"claims": 5}', '{"claims": [1, "x", null]}',
                  '{"claims": [{"id": 3}]}',
                  '{"claims": [{"id": "joma.theorem2", "verdict": 5, "rerun": "x", "draws": []}]}',
                  '{"claims": [{"id": "joma.theorem2", "properties": 7, "alternatives": "x"}]}',
                  "\xff\xfe garbage"]


def test_malformed_invocations_get_their_exit_code_and_one_line(tmp_path):
    conj = _files(tmp_path)
    report = tmp_path / "r"
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    (tmp_path / "notes.json").write_text('{"mine": 1}')
    (tmp_path / "userdir").mkdir()
    base = ["audit", "--report", str(report), "--no-plots", "--only", "joma.theorem2"]
    cases = []

    def usage(argv, env=None, expect="error"):
        cases.append({"argv": argv, "env": env or {}, "want": 2, "expect": expect})

    for n in ("foo", "-1", "1.5", "", "auto2"):
        usage(base + ["-n", n], expect="-n/--workers")
    for lim in ("abc", "0", "", "-5M", "4X", "1e9"):
        usage(base + ["--cache-limit", lim], expect="--cache-limit")
    usage(base, env={"HYPOTHESIS_PROFILE": "bogus"}, expect="profile")
    usage(base, env={"HYPOTHESIS_PROFILE": ""}, expect="")  # empty: falls back, so use a flag
    cases.pop()
    for only in ("", ",", " ", ", ,"):
        usage(["audit", "--report", str(report), "--only", only], expect="--only")
    usage(["audit", "--report", "", "--only", "joma.theorem2"], expect="--report")
    usage(["audit", "--report", str(blocker / "sub")], expect="--report")
    for j in ("", str(tmp_path / "userdir"), "/dev/null", str(tmp_path / "notes.json"),
              str(blocker / "x.json")):
        usage(base + ["--json", j], expect="--json")
    usage(base + ["--cache-dir", str(blocker / "sub")], expect="--cache-dir")
    for k in ("syntax", "raises", "exit0", "exit3", "clash", "keyboard", "dir", "notpy",
              "missing"):
        usage(base + ["--conjecture", conj[k]], expect="--conjecture")
        usage(["list", "--report", str(report), "--conjecture", conj[k]], expect="--conjecture")
        usage(["show", "joma.theorem2", "--report", str(report), "--conjecture", conj[k]],
              expect="--conjecture")
    for argv in (["audit", "--size", "huge"], ["audit", "--bogus"], [], ["nosuch"],
                 ["audit", "--report"], ["show"], ["audit", "--fail-on", "sometimes"],
                 ["readme", "--report", str(tmp_path / "nowhere")]):
        usage(argv, expect="")
    usage(["show", "nosuch.claim", "--report", str(report)], expect="no claim")

    # list / show with a malformed audit.json in the report: a note, exit 0; readme: exit 2
    bad_reports = []
    for k, text in enumerate(MALFORMED_JSON):
        d = tmp_path / f"bad{k}"
        d.mkdir()
        (d / "audit.json").write_text(text, encoding="latin-1")
        bad_reports.append(d)
        cases.append({"argv": ["list", "--report", str(d)], "want": 0, "expect": None})
        cases.append({"argv": ["show", "joma.theorem2", "--report", str(d)], "want": 0,
                      "expect": None})
        usage(["readme", "--report", str(d), "--readme", str(tmp_path / "README.md")],
              expect="")  # --report's file, or readme's refusal of the report
    good = tmp_path / "good"
    good.mkdir()
    (good / "audit.json").write_text(json.dumps({"schema_version": 3, "claims": []}))
    (tmp_path / "README.md").write_text("no markers here\n")
    usage(["readme", "--report", str(good), "--readme", str(tmp_path / "README.md")],
          expect="readme")
    usage(["readme", "--report", str(good), "--readme", str(tmp_path / "absent.md")],
          expect="readme")

    proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(cases)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), HYPOTHESIS_PROFILE="ci"))
    assert "RESULTS" in proc.stdout, proc.stderr[-3000:]
    results = json.loads(proc.stdout.split("RESULTS", 1)[1])
    assert len(results) == len(cases)
    bad = []
    for case, res in zip(cases, results):
        err = res["stderr"]
        problems = []
        if res["escaped"] or "Traceback" in err + res["stdout"]:
            problems.append("traceback")
        if "TRIPWIRE" in err + res["stdout"] + str(res["escaped"]):
            problems.append("reached the run")
        if res["code"] != case["want"]:
            problems.append(f"exit {res['code']} != {case['want']}")
        if case["want"] == 2:
            errors = [x for x in err.splitlines() if "error" in x]
            if len(errors) != 1:
                problems.append(f"{len(errors)} error lines")
            elif case["expect"] and case["expect"] not in errors[0]:
                problems.append(f"the error line does not name {case['expect']!r}")
        if "internal error" in err:
            problems.append("internal error")
        if problems:
            bad.append((case["argv"], case.get("env"), problems, err[-600:], res["escaped"]))
    assert not bad, "\n".join(map(str, bad))
    assert not report.exists() or not (report / "audit.json").exists()  # nothing ran
    assert not list(report.glob(".audit.lock")) if report.exists() else True


def test_only_given_twice_joins_its_globs():
    """argparse keeps only the last --only by default; the audit joins every occurrence."""
    import argparse

    from properties.__main__ import _JoinOnly
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None, action=_JoinOnly)
    assert ap.parse_args([]).only is None
    assert ap.parse_args(["--only", "joma.lemma4"]).only == "joma.lemma4"
    assert ap.parse_args(["--only", "joma.lemma4", "--only", "topic.*"]).only == \
        "joma.lemma4,topic.*"
