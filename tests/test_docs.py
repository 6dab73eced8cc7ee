"""The README as a first reading, the pages in docs/, and what is generated into them: the verdict
tables (one paper's table from a complete audit of that paper, stamped with its claims' code
version, and a test that catches a stale one) and the reference page from docstrings."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from properties import readme as rd
from properties.scaffold import reference_page

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
VERDICTS = ROOT / rd.VERDICTS_FILE
PAGES = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


# --------------------------------------------------------------------------------------------
# The README and the pages
# --------------------------------------------------------------------------------------------
def test_the_readme_is_a_first_reading():
    text = README.read_text()
    assert len(text.encode()) <= 15 * 1024, f"README.md is {len(text.encode())} bytes"
    assert "pytest -n auto" in text
    assert "python -m properties audit --profile ci --report" in text
    assert rd.SUMMARY_BEGIN in text and rd.SUMMARY_END in text
    # the generated tables live in docs/verdicts.md, not in the README
    assert rd.README_BEGIN not in text and rd.LADDER_BEGIN not in text
    verdicts = VERDICTS.read_text()
    assert verdicts.index(rd.README_BEGIN) < verdicts.index(rd.README_END)
    assert verdicts.index(rd.README_END) < verdicts.index(rd.LADDER_BEGIN)
    for page in ("cli", "report", "verdicts", "findings", "conjectures", "reference", "profiles",
                 "layout", "speed"):
        assert f"(docs/{page}.md)" in text, f"the README does not point to docs/{page}.md"


_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    bad = []
    for target in _LINK.findall(page.read_text()):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            bad.append(target)
    assert not bad, f"{page.name}: links that do not resolve: {bad}"


def test_the_readme_conjecture_audits(tmp_path):
    """The README's conjecture, copied out as a user would, audits to `holds` with both
    alternatives rejected."""
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1
    assert len(blocks[0].strip().splitlines()) <= 30  # "a conjecture in about 20 lines"
    conj = tmp_path / "my_conjecture.py"
    conj.write_text(blocks[0])
    env = {k: v for k, v in os.environ.items() if k != "THEOREM_AUDIT_RANDOMIZE"}
    r = subprocess.run([sys.executable, "-m", "properties", "audit", "--conjecture", str(conj),
                        "--only", "conjecture.*", "--profile", "ci", "-n", "0", "--no-plots",
                        "--report", str(tmp_path / "report"), "--cache-dir",
                        str(tmp_path / "runs")], cwd=ROOT, capture_output=True, text=True,
                       timeout=600, env=dict(env, HYPOTHESIS_PROFILE="ci"), check=False)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    (row,) = json.loads((tmp_path / "report" / "audit.json").read_text())["claims"]
    assert row["verdict"] == "holds" and all(a["rejected"] for a in row["alternatives"])
    assert len(row["alternatives"]) == 2


# --------------------------------------------------------------------------------------------
# The reference page, from docstrings
# --------------------------------------------------------------------------------------------
def test_the_reference_page_is_current():
    page = ROOT / rd.REFERENCE_FILE
    assert page.is_file() and page.read_text() == reference_page(), (
        "docs/reference.md is stale: run `python -m properties.readme reference`")


def test_the_reference_page_covers_the_vocabulary():
    import properties
    from theory import validate

    text = reference_page()
    for name in properties.__all__:
        assert f"`{name}" in text, name
    for name in ("run_cache", "finite_array", "number", "integer", "seeds", "closed_form"):
        assert f"### `{name}(" in text, name
    assert callable(validate.finite_array)
    assert "hashable" in text  # run_cache's arguments: lru_cache needs hashable ones
    assert "- `Tolerance.monte_carlo(" in text and "(static method)" in text
    assert " at 0x" not in text  # no address: the page is the same on every run


# --------------------------------------------------------------------------------------------
# The verdict tables: per-paper stamps, one-paper updates, code versions, staleness
# --------------------------------------------------------------------------------------------
def _row(cid, verdict, **kw):
    return dict({"id": cid, "verdict": verdict, "draws": 3, "file": f"properties/{cid}.py",
                 "alternatives": [{"rejected": True}], "false_fail": 1e-4, "reason": None,
                 "detail": ""}, **kw)


def _doc(rows, commit="0123456789abcdef", versions=None, **meta):
    return dict({"commit": commit, "dirty": False, "profile": "ci", "size": "ci",
                 "interrupted": False, "claims": rows, "code_versions": versions or {}}, **meta)


SUITE = {"joma.a", "joma.b", "signgd.c"}
V1 = {"joma": "1" * 40, "signgd": "2" * 40}


def _full_tables():
    rows = [_row("joma.a", "holds"), _row("joma.b", "erratum", reason="Off by 2. More."),
            _row("signgd.c", "not-audited", detail="inconclusive")]
    empty = f"# V\n\n{rd.README_BEGIN}\n{rd.README_END}\n\ntail\n"
    return rd.update_readme(empty, _doc(rows, versions=V1), suite_ids=SUITE)


def test_a_complete_report_of_one_paper_replaces_that_papers_table_only():
    full = _full_tables()
    assert set(rd.paper_stamps(full)) == {"joma", "signgd"}
    one = _doc([_row("signgd.c", "holds")], commit="fedcba9876543210",
               versions={"signgd": "3" * 40})
    assert rd.readme_refusal(one, SUITE) is None  # every claim of signgd
    new = rd.update_readme(full, one, suite_ids=SUITE)
    joma = full[full.index('<!-- audit-paper {'):full.index("#### `signgd.*`")]
    joma = joma[:joma.rindex("<!-- audit-paper")]
    assert joma in new  # joma's table, stamp and all, is as it was
    stamps = rd.paper_stamps(new)
    assert stamps["joma"]["commit"] == "0123456789abcdef"
    assert stamps["signgd"]["commit"] == "fedcba9876543210"
    assert stamps["signgd"]["code_version"] == "3" * 40
    assert "| [`signgd.c`](properties/signgd.c.py) | **holds** |" in new
    assert "| [`signgd.c`](properties/signgd.c.py) | **not-audited** |" not in new
    # the counts are every table's: joma's from its stamp, signgd's from the new report
    assert "| `joma` | 1 | 1 | 0 | 0 | 0 | 0 |" in new and "| all | 2 | 1 | 0 | 0 | 0 | 0 |" in new
    assert "Generated from 2 audits" in new and "`fedcba9876` (signgd)" in new
    assert new.endswith("\n\ntail\n") and rd.update_readme(new, one, suite_ids=SUITE) == new
    # a report of the whole suite replaces every table
    again = rd.update_readme(new, _doc([_row(c, "holds") for c in sorted(SUITE)],
                                       versions=V1), suite_ids=SUITE)
    assert "Generated from the audit of commit `0123456789`" in again
    # a report of some of a paper's claims is refused; tables without stamps take no one-paper
    # report (they are regenerated once from the whole suite)
    assert "partial" in rd.readme_refusal(_doc([_row("joma.a", "holds")]), SUITE)
    old = f"{rd.README_BEGIN}\n| old | table |\n{rd.README_END}\n"
    with pytest.raises(ValueError, match="whole suite"):
        rd.update_readme(old, one, suite_ids=SUITE)


def test_the_ladder_block_keeps_the_parts_of_papers_a_ladder_report_does_not_hold():
    full = _full_tables()
    lad1 = _doc([_row("joma.a", "not-audited"), _row("signgd.c", "not-audited")],
                commit="aaaaaaaaaa", size="ladder", versions=V1)
    t1 = rd.update_readme(full, _doc([_row(c, "holds") for c in sorted(SUITE)], versions=V1),
                          lad1, suite_ids=SUITE)
    assert set(rd.ladder_stamps(t1)) == {"joma", "signgd"}
    lad2 = _doc([_row("signgd.c", "holds")], commit="bbbbbbbbbb", size="ladder", versions=V1)
    t2 = rd.update_readme(t1, _doc([_row("signgd.c", "holds")], versions=V1), lad2,
                          suite_ids=SUITE)
    lad = rd.ladder_stamps(t2)
    assert lad["joma"]["commit"] == "aaaaaaaaaa" and lad["signgd"]["commit"] == "bbbbbbbbbb"
    assert lad["signgd"]["differ"] == 0 and lad["joma"]["differ"] == 1
    summary = rd.summary_section(t2)
    assert "| `joma` | ladder | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in summary
    assert "| all | ladder | 2 | 1 | 0 | 0 | 0 | 1 | 0 |" in summary
    assert "| all | ci | 3 | 3 | 0 | 0 | 0 | 0 | 0 |" in summary


def test_stale_stamps_compares_each_stamp_with_the_claims_code_now():
    text = _full_tables()
    assert rd.stale_stamps(text, V1.__getitem__, set(V1)) == []
    now = dict(V1, joma="9" * 40)
    out = rd.stale_stamps(text, now.__getitem__, set(V1))
    assert len(out) == 1 and "`joma` is stale" in out[0] and "9999999999" in out[0]
    assert any("`topic` has no verdict table" in x
               for x in rd.stale_stamps(text, V1.get, set(V1) | {"topic"}))
    assert any("no longer has" in x for x in rd.stale_stamps(text, V1.get, {"joma"}))
    lad = _doc([_row("joma.a", "holds")], commit="aaaaaaaaaa", size="ladder",
               versions={"joma": "0" * 40})
    with_ladder = rd.update_readme(text, _doc([_row("joma.a", "holds"), _row("joma.b", "holds")],
                                              versions=V1), lad, suite_ids=SUITE)
    out = rd.stale_stamps(with_ladder, V1.__getitem__, set(V1))
    assert len(out) == 1 and "ladder part of `joma` is stale" in out[0]
    # blocks generated before stamps are stale, whatever the code
    old = f"{rd.README_BEGIN}\n| old |\n{rd.README_END}\n{rd.LADDER_BEGIN}\nx\n{rd.LADDER_END}\n"
    assert "no per-paper stamps" in rd.stale_stamps(old, V1.__getitem__, set(V1))[0]


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c",
                    "commit.gpgsign=false", *args], cwd=repo, check=True, capture_output=True)


def test_the_code_version_counts_the_code_a_papers_runs_depend_on(tmp_path):
    files = {"sim/__init__.py": "", "sim/toyp.py": "from theory.toyp import y\n",
             "theory/__init__.py": "", "theory/toyp.py": "y = 2\n", "properties/check.py": "c\n",
             "sim/other.py": "z = 3\n", "theory/other.py": "w = 4\n",
             "properties/report.py": "r\n", "properties/verdict.py": "v\n",
             "properties/procedures.py": "def p():\n    from theory import helper\n",
             "theory/helper.py": "h = 1\n", "properties/toyp/__init__.py": "",
             "properties/toyp/test_theorem1.py": "def f():\n    from sim import toyp\n",
             "properties/toyp/figures.py": "f\n",
             "properties/toyp/calibration.json": "{}\n", "properties/other/test_a.py": "o\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "x")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    v0 = rd.paper_code_version("toyp", root=tmp_path)
    assert rd.paper_code_version("toyp", head, root=tmp_path) == v0  # the commit = the tree
    assert rd.paper_code_version("toyp", "f" * 40, root=tmp_path) is None  # no such commit
    assert rd.paper_code_version("toyp", "--help", root=tmp_path) is None  # never an option
    for rel in ("properties/toyp/figures.py", "properties/report.py", "properties/other/test_a.py",
                "sim/other.py", "theory/other.py"):  # figures, the renderer, another paper,
        # and sim/ and theory/ modules the paper's modules never import: the same version
        (tmp_path / rel).write_text("changed\n")
        assert rd.paper_code_version("toyp", root=tmp_path) == v0, rel
    for rel in ("sim/toyp.py", "theory/toyp.py", "sim/__init__.py", "properties/check.py",
                "properties/verdict.py", "properties/procedures.py", "theory/helper.py",
                "properties/toyp/test_theorem1.py", "properties/toyp/calibration.json"):
        before = rd.paper_code_version("toyp", root=tmp_path)
        text = (tmp_path / rel).read_text()  # an edit that keeps the file's imports
        (tmp_path / rel).write_text(text + ("# changed\n" if rel.endswith(".py") else " "))
        assert rd.paper_code_version("toyp", root=tmp_path) != before, rel
    assert rd.paper_code_version("toyp", head, root=tmp_path) == v0  # the commit's, still
    # a report's stamp: the commit's code for a clean run, the tree's for a dirty one
    assert rd._code_version_of({"commit": head, "dirty": False}, "toyp")[1] == "commit"
    assert rd._code_version_of({"commit": head, "dirty": True}, "toyp")[1] == "working tree"
    assert rd._code_version_of({"code_versions": {"toyp": "v"}}, "toyp") == ("v", "report")


def test_the_readme_command_writes_both_files_and_takes_one_papers_report(tmp_path):
    """`python -m properties readme`: a whole-suite report fills docs/verdicts.md beside the
    README and the README's summary; then a complete report of one paper replaces its table."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    suite = json.loads(subprocess.run(
        [sys.executable, "-c", ("import json; from properties.__main__ import load_registry; "
         "print(json.dumps(sorted(load_registry([]))))")], cwd=ROOT, capture_output=True,
        text=True, timeout=300, check=True, env=env).stdout)
    papers = sorted({c.split(".", 1)[0] for c in suite})
    full, one = tmp_path / "full", tmp_path / "one"
    full.mkdir()
    one.mkdir()
    (full / "audit.json").write_text(json.dumps(_doc([_row(c, "holds") for c in suite])))
    mine = [c for c in suite if c.startswith(papers[-1] + ".")]
    (one / "audit.json").write_text(json.dumps(_doc([_row(c, "not-audited") for c in mine],
                                                    commit="fedcba9876543210")))
    readme = tmp_path / "README.md"
    readme.write_text(f"# R\n\n{rd.SUMMARY_BEGIN}\nold\n{rd.SUMMARY_END}\n")

    def run(report):
        return subprocess.run([sys.executable, "-m", "properties", "readme", "--report",
                               str(report), "--readme", str(readme)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300, check=False, env=env)

    r = run(one)  # no tables yet (no docs/verdicts.md): the first, one paper's
    assert r.returncode == 0, r.stderr
    assert set(rd.paper_stamps((tmp_path / "docs" / "verdicts.md").read_text())) == {papers[-1]}
    r = run(full)
    assert r.returncode == 0, r.stderr
    tables = (tmp_path / "docs" / "verdicts.md").read_text()
    assert set(rd.paper_stamps(tables)) == set(papers)
    assert f"[`{suite[0]}`](../properties/{suite[0]}.py)" in tables
    r = run(one)
    assert r.returncode == 0, r.stderr
    after = (tmp_path / "docs" / "verdicts.md").read_text()
    stamps = rd.paper_stamps(after)
    assert stamps[papers[-1]]["commit"] == "fedcba9876543210"
    assert all(stamps[p]["commit"] == "0123456789abcdef" for p in papers[:-1])
    assert readme.read_text() == rd.update_summary(readme.read_text(), after)
    assert f"| `{papers[-1]}` | ci | {len(mine)} | 0 | 0 | 0 | 0 | {len(mine)} |" in \
        readme.read_text()


def test_every_harness_module_is_counted_in_the_code_version_or_decides_nothing():
    """Each flat module of properties/ is run harness (cache._SHARED_HARNESS), decision harness
    (verdict.DECISION_HARNESS: counted in the README stamps' code version) or listed as deciding
    nothing (verdict.NOT_DECIDING): a new module has to be put in one of the lists."""
    from properties.cache import _SHARED_HARNESS
    from properties.verdict import DECISION_HARNESS, NOT_DECIDING

    flat = {p.name for p in (ROOT / "properties").glob("*.py")}
    lists = (set(_SHARED_HARNESS), set(DECISION_HARNESS), set(NOT_DECIDING))
    assert flat == set().union(*lists), sorted(flat ^ set().union(*lists))
    assert sum(len(x) for x in lists) == len(flat)  # no module in two lists


def test_readme_blocks_current():
    """The verdict tables and the ladder block in docs/verdicts.md are of the claims' code as it
    is now (each stamped code version equals `paper_code_version` of the working tree), every
    paper has a table, and the README's summary is the one the tables give.  After an edit of
    sim/, theory/ or a paper's files: audit again and run `python -m properties readme`."""
    from properties.registry import paper_packages

    text = VERDICTS.read_text()
    stale = rd.stale_stamps(text, rd.paper_code_version, set(paper_packages()))
    assert not stale, "docs/verdicts.md is stale:\n" + "\n".join(stale)
    readme = README.read_text()
    assert readme == rd.update_summary(readme, text), (
        "the README's summary is not the one docs/verdicts.md gives: run python -m properties "
        "readme")


def test_drop_ladder_empties_a_stale_ladder_block_and_it_is_not_stale():
    """`readme --drop-ladder`: with no --size ladder audit of this code, the ladder block says
    so (every paper 'not run at the ladder at this code') instead of showing a stale one, and
    the stale check accepts that empty block (it has nothing to be stale)."""
    full = _full_tables()
    lad = _doc([_row("joma.a", "not-audited")], commit="aaaaaaaaaa", size="ladder",
               versions={"joma": "0" * 40})
    every = _doc([_row(c, "holds") for c in sorted(SUITE)], versions=V1)
    with_ladder = rd.update_readme(full, every, lad, suite_ids=SUITE)
    assert any("ladder part of `joma` is stale" in x
               for x in rd.stale_stamps(with_ladder, V1.__getitem__, set(V1)))
    dropped = rd.update_readme(with_ladder, every, None, suite_ids=SUITE, drop_ladder=True)
    block = rd._between(dropped, rd.LADDER_BEGIN, rd.LADDER_END)
    assert rd.ladder_stamps(dropped) == {} and "####" not in block
    assert "Not run at the ladder at this code: `joma` (2 claims), `signgd` (1 claims)" in block
    assert rd.stale_stamps(dropped, V1.__getitem__, set(V1)) == []
