"""What the commands of `theorem-audit` (properties/__main__.py) share: the checkout, the exit
codes and the usage error, and loading and selecting the claims (the suite's paper modules and the
researcher's conjecture files).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import importlib.util
import sys
from pathlib import Path

from properties.registry import HARNESS_MODULES
from properties.settings import PYTEST_INI  # noqa: F401 -- re-exported for the CLI

ROOT = Path(__file__).resolve().parent.parent

PAPER_MODULES = sorted(
    [p.stem for p in (ROOT / "properties").glob("*.py") if p.stem not in HARNESS_MODULES]
    + [f"{p.parent.name}.{p.stem}" for p in (ROOT / "properties").glob("*/*.py")
       if (p.parent / "__init__.py").exists() and p.stem != "__init__"])

EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_BROKEN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# `inconsistent` (a consistency check of the simulator against its own derivation failed) is as
# bad as `refuted`: the simulation the verdicts rest on disagrees with its own derivation.
FAIL_ON = {"refuted": {"refuted", "inconsistent"},
           "erratum": {"refuted", "inconsistent", "erratum"}, "never": set()}


class UsageError(Exception):
    pass


_LOADED_CONJECTURES: list = []


# the paper modules that did not import in this process: "properties/<paper>/<file>.py" -> why
BROKEN_MODULES: dict[str, str] = {}


def papers_of(only: str | None) -> set[str] | None:
    """The papers an --only selection can reach: each glob's prefix (before its first dot) when
    it names a paper without a wildcard; None (every paper) when a glob's prefix has one or no
    --only is given.  Only those papers are imported and collected (a one-paper audit does not
    load the others)."""
    if not only:
        return None
    out = set()
    for p in (p.strip() for p in only.split(",") if p.strip()):
        prefix = p.split(".", 1)[0]
        if any(ch in prefix for ch in "*?["):
            return None
        out.add(prefix)
    return out


def load_registry(conjectures, builtin: bool = True, papers: set[str] | None = None):
    """Import the paper modules (flat modules and each paper package's files; not with
    builtin=False; only those of `papers` when given) and the researcher's conjecture files;
    return the claim registry.  A conjecture file that does not import (a syntax error, an
    exception, a `sys.exit`, a claim id that is already registered with other content) is a
    UsageError naming the file.  A paper module that does not import (a half-written claim) is
    recorded in BROKEN_MODULES with why, and the others load: it blocks only itself (the audit
    reports it as a broken row of its paper and does not collect it)."""
    from properties.registry import REGISTRY

    for mod in PAPER_MODULES if builtin else ():
        if papers is not None and mod.split(".", 1)[0] not in papers:
            continue
        try:
            importlib.import_module(f"properties.{mod}")
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 -- any failure at import is the file's
            path = f"properties/{mod.replace('.', '/')}.py"
            BROKEN_MODULES[path] = f"{type(e).__name__}: {e}"
            sys.modules.pop(f"properties.{mod}", None)
    for i, path in enumerate(conjectures):
        _check_conjecture_path(path)
        name = conjecture_module_name(path)
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # the name the plugin gives it: a forked run reuses it
            spec.loader.exec_module(module)
        except KeyboardInterrupt:
            raise
        except SystemExit as e:
            sys.modules.pop(name, None)
            raise UsageError(f"--conjecture {path}: it calls sys.exit({e.code!r}) when imported; "
                             "a conjecture file must only register claims and define properties"
                             ) from None
        except SyntaxError as e:
            sys.modules.pop(name, None)
            raise UsageError(f"--conjecture {path}: syntax error at line {e.lineno}: {e.msg}"
                             ) from None
        except BaseException as e:  # noqa: BLE001 -- any failure at import is the file's
            sys.modules.pop(name, None)
            raise UsageError(f"--conjecture {path}: importing it failed: "
                             f"{type(e).__name__}: {e}") from None
        _LOADED_CONJECTURES.append(module)
    return REGISTRY


def conjecture_module_name(path) -> str:
    """The module name of a conjecture file: made from its absolute path (two files named alike
    in different folders both load); the same name the audit plugin imports it under."""
    import hashlib
    p = Path(path).resolve()
    return f"_conjecture_{hashlib.sha1(str(p).encode()).hexdigest()[:12]}_{p.stem}"


def _check_conjecture_path(path: str) -> None:
    if not path or not path.endswith(".py") or not Path(path).is_file():
        raise UsageError(f"--conjecture: {path!r} is not a .py file")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UsageError(f"--conjecture: {path!r} cannot be read ({e.strerror or e})") from None


def only_conjectures(only: str | None, conjectures) -> bool:
    """Whether the --only globs can match no built-in claim: each names a prefix (before its
    first dot, no wildcard) that is no paper package.  Then the suite is not imported at all
    (a one-claim conjecture audit starts in a second, not in the suite's import time)."""
    from properties.registry import paper_packages

    if not only or not conjectures:
        return False
    pats = [p.strip() for p in only.split(",") if p.strip()]
    papers = set(paper_packages(ROOT))
    for p in pats:
        prefix = p.split(".", 1)[0]
        if "." not in p or any(ch in prefix for ch in "*?[") or prefix in papers:
            return False
    return bool(pats)


def properties_per_claim() -> dict[str, int]:
    """How many @audits properties each claim has, from the loaded modules (for progress)."""
    return {k: len(v) for k, v in properties_by_claim().items()}


def _claim_properties():
    """(claim id, module, function) of every @audits property of the loaded modules (the suite's
    and the conjecture files), each defined in the module it is found in."""
    mods = [m for name, m in sys.modules.items() if name.startswith("properties.")]
    for m in mods + _LOADED_CONJECTURES:
        for obj in list(vars(m).values()):
            for mark in getattr(obj, "pytestmark", []) if callable(obj) else []:
                if (getattr(mark, "name", "") == "claim" and mark.args
                        and getattr(obj, "__module__", "") == m.__name__):
                    yield mark.args[0], m, obj


def properties_by_claim() -> dict[str, list[str]]:
    """The names of the @audits properties of each claim, from the loaded modules."""
    names: dict[str, list[str]] = {}
    for cid, _, fn in _claim_properties():
        names.setdefault(cid, []).append(getattr(fn, "__name__", "?"))
    return names


def check_claim_ids(registry) -> None:
    """A property that audits an id no Claim registers (a typo, in the paper prefix or after it)
    is a usage error naming its file, its function and the registered ids closest to it: found
    before any work, whatever --only selects (a glob would otherwise deselect it silently)."""
    strays = [(cid, getattr(m, "__file__", m.__name__), getattr(fn, "__name__", "?"))
              for cid, m, fn in _claim_properties() if cid not in registry]
    if not strays:
        return
    cid, path, fn = sorted(strays)[0]
    close = difflib.get_close_matches(cid, sorted(registry), n=3, cutoff=0.5)
    more = f" (and {len(strays) - 1} more)" if len(strays) > 1 else ""
    raise UsageError(f"{path}: {fn} audits {cid!r}, which no Claim registers"
                     + (f"; did you mean {', '.join(repr(c) for c in close)}?" if close else
                        "; register(Claim(id=...)) it, or fix the id in @audits")
                     + more)


def select(ids, only: str | None):
    """The ids matched by the comma-separated globs `only`; a glob that matches nothing is a
    UsageError naming close matches."""
    if only is None:
        return sorted(ids), None
    pats = [p.strip() for p in only.split(",") if p.strip()]
    if not pats:
        raise UsageError("--only: give at least one claim id or glob")
    for p in pats:
        if not any(fnmatch.fnmatchcase(i, p) for i in ids):
            close = difflib.get_close_matches(p.rstrip("*."), sorted(ids), n=5, cutoff=0.5)
            papers = sorted({i.split(".", 1)[0] + ".*" for i in ids})
            broken = [f"{f} does not import ({why})" for f, why in sorted(BROKEN_MODULES.items())
                      if f.split("/")[1] == p.split(".", 1)[0]]
            raise UsageError(f"--only: {p!r} matches no claim"
                             + (f"; {'; '.join(broken)}" if broken else
                                f"; close matches: {', '.join(close)}" if close else
                                f"; papers: {', '.join(papers)}"))
    chosen = sorted(i for i in ids if any(fnmatch.fnmatchcase(i, p) for p in pats))
    return chosen, pats
