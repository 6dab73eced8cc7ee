"""The layout rule of the audit: a report row leads to its claim's file in one hop.

- Every claim of a paper is registered in `properties/<paper>/test_<item>.py`, where <item> is the
  claim id after the paper prefix, dots as underscores, cut at a dot boundary
  (`joma.theorem2.onehot` may live in `test_theorem2.py`).  (The migration's escape hatch,
  `test_unmigrated*.py`, is closed: every claim is on the earned-verdict harness.)
- Every claim has a printed-form property in its own file and declares at least one
  alternative.
- Run and figure modules (`runs.py`, `figures.py`, `common.py`) import no claim file, and no
  claim file imports another (what two claims share lives in runs.py / common.py).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from properties.__main__ import load_registry
from properties.registry import REGISTERED_IN, paper_packages

ROOT = Path(__file__).resolve().parent.parent
# the papers are found (every package properties/<name>/), never listed: a new paper's claims are
# checked here exactly like the built-in ones
PAPERS = tuple(paper_packages(ROOT))


def _ours(cid: str) -> bool:
    """A claim of the suite's papers: its prefix is a paper package, or a file under properties/
    registers it (a claim a unit test registers in tests/ is not one)."""
    return cid.split(".", 1)[0] in PAPERS or REGISTERED_IN.get(cid, "").startswith("properties/")


def _properties_by_file():
    """(claim id, form) of every @audits property, per module file."""
    out = {}
    for paper in PAPERS:
        for f in sorted((ROOT / "properties" / paper).glob("test_*.py")):
            mod = importlib.import_module(f"properties.{paper}.{f.stem}")
            marks = []
            for obj in vars(mod).values():
                for m in getattr(obj, "pytestmark", []):
                    if m.name == "claim":
                        marks.append((m.args[0], m.kwargs.get("form", "printed")))
            out[f"properties/{paper}/{f.name}"] = marks
    return out


def test_every_claim_lives_in_its_items_file():
    reg = load_registry([])
    wrong = []
    for cid in reg:
        paper, _, item = cid.partition(".")
        if not _ours(cid):
            continue
        f = Path(REGISTERED_IN[cid])
        ok_dir = f.parent == Path("properties") / paper
        stem = f.stem.removeprefix("test_")
        flat = item.replace(".", "_")
        ok_name = flat == stem or any(
            ".".join(item.split(".")[:k]).replace(".", "_") == stem
            for k in range(1, item.count(".") + 1))
        if not (ok_dir and f.name.startswith("test_") and ok_name):
            wrong.append(f"{cid} -> {f}")
    assert not wrong, "claims outside their item's file: " + ", ".join(wrong)


def test_migrated_claims_have_a_printed_property_and_alternatives():
    reg = load_registry([])
    props = _properties_by_file()
    bad = []
    for cid, claim in reg.items():
        f = REGISTERED_IN.get(cid, "")
        if not _ours(cid):
            continue
        forms = {form for c, form in props.get(f, []) if c == cid}
        if "printed" not in forms:
            bad.append(f"{cid}: no printed-form property in {f}")
        if not claim.alternatives:
            bad.append(f"{cid}: no alternative declared")
    assert not bad, "; ".join(bad)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_runs_and_figures_import_no_claim_file():
    bad = []
    for paper in PAPERS:
        d = ROOT / "properties" / paper
        for f in sorted(d.glob("*.py")):
            imported = {n for n in _imports(f) if n.startswith(f"properties.{paper}.test_")}
            if f.stem in ("runs", "figures", "common") and imported:
                bad.append(f"{f.name} imports {sorted(imported)}")
            if f.stem.startswith("test_") and imported - {f"properties.{paper}.{f.stem}"}:
                bad.append(f"{f.name} imports another claim file {sorted(imported)}")
    assert not bad, "; ".join(bad)


def test_audit_pytest_ini_matches_pyproject():
    """The audit's pytest configuration ships in the package (properties/pytest-audit.ini: a
    wheel has no pyproject.toml) and says what pyproject.toml says, less testpaths; it is in the
    wheel's package data."""
    import configparser
    import tomllib

    from properties.settings import PYTEST_INI

    root = Path(__file__).resolve().parents[1]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    opts = pyproject["tool"]["pytest"]["ini_options"]
    ini = configparser.ConfigParser()
    ini.read(PYTEST_INI)
    assert ini["pytest"]["addopts"].split() == opts["addopts"].split()
    assert [m.strip() for m in ini["pytest"]["markers"].strip().splitlines()] == opts["markers"]
    assert ini["pytest"]["filterwarnings"].strip().splitlines() == opts["filterwarnings"]
    assert "*.ini" in pyproject["tool"]["setuptools"]["package-data"]["properties"]


def test_every_top_level_module_is_the_harness_s_or_a_paper_s():
    """A module of properties/ outside registry.HARNESS_MODULES is taken for a one-file paper
    (the CLI's --only lists it, conftest collects it, scaffold lets a paper take its name): so
    it must register claims.  A harness module added without being listed there is caught."""
    from properties.registry import HARNESS_MODULES

    load_registry([])
    papers = {Path(f).stem for f in REGISTERED_IN.values()
              if Path(f).parent == Path("properties")}
    stray = sorted(p.stem for p in (ROOT / "properties").glob("*.py")
                   if p.stem not in HARNESS_MODULES and p.stem not in papers)
    assert not stray, (f"properties/{stray[0]}.py is neither in registry.HARNESS_MODULES nor a "
                       "paper module that registers claims")
