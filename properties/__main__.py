"""`python -m properties audit`: run the claims' properties through pytest and report verdicts.

    python -m properties audit [--profile ci|dev|thorough] [--only GLOB] [--json PATH]
                               [--report DIR] [--conjecture FILE.py ...] [-n WORKERS]

The properties run in a pytest subprocess (so the CLI and CI share one code path); the plugin
writes one row per property, and this command turns the rows into verdicts, prints the table and
writes audit.json, audit.md and the claims' plots into the report directory.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from properties.registry import HARNESS_MODULES  # noqa: E402

PAPER_MODULES = sorted(
    [p.stem for p in (ROOT / "properties").glob("*.py") if p.stem not in HARNESS_MODULES]
    + [f"{p.parent.name}.{p.stem}" for p in (ROOT / "properties").glob("*/*.py")
       if (p.parent / "__init__.py").exists() and p.stem != "__init__"])


def load_registry(conjectures):
    """Import every paper module (flat modules and each paper package's files) and the
    researcher's conjecture files; return the claim registry."""
    from properties.registry import REGISTRY

    for mod in PAPER_MODULES:
        importlib.import_module(f"properties.{mod}")
    for i, path in enumerate(conjectures):
        spec = importlib.util.spec_from_file_location(f"_conjecture_{i}_{Path(path).stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return REGISTRY


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m properties")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("audit", help="run the audit and write the report")
    a.add_argument("--profile", choices=["ci", "dev", "thorough"], default=None,
                   help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else ci under CI, else dev)")
    a.add_argument("--only", default=None, help="glob(s) of claim ids, comma-separated, e.g. 'joma.*'")
    a.add_argument("--json", default=None, help="path of audit.json (default: REPORT/audit.json)")
    a.add_argument("--report", default="audit_report", help="report directory (default audit_report)")
    a.add_argument("--conjecture", nargs="+", default=[], metavar="FILE.py",
                   help="researcher conjecture files to audit like built-in claims")
    a.add_argument("-n", "--workers", default="auto", help="pytest-xdist workers (default auto; 0 = none)")
    a.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    args = ap.parse_args(argv)

    for c in args.conjecture:
        if not Path(c).is_file() or not c.endswith(".py"):
            raise SystemExit(f"--conjecture: {c!r} is not a .py file")
    profile = args.profile or os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    report = Path(args.report)
    report.mkdir(parents=True, exist_ok=True)
    json_path = Path(args.json) if args.json else report / "audit.json"

    env = dict(os.environ, HYPOTHESIS_PROFILE=profile, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        raw_path = Path(tmp) / "raw.json"
        cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(ROOT / "pyproject.toml"),
               "--rootdir", str(ROOT), "--audit-raw", str(raw_path), "-p", "no:cacheprovider",
               str(ROOT / "properties"), *[str(Path(c).resolve()) for c in args.conjecture]]
        if args.only:
            cmd += ["--claims", args.only]
        if args.workers not in ("0", 0):
            cmd += ["-n", str(args.workers)]
        t0 = time.time()
        proc = subprocess.run(cmd, env=env, cwd=ROOT)
        if not raw_path.exists():
            raise SystemExit(f"pytest produced no audit rows (exit {proc.returncode})")
        import json

        raw = json.loads(raw_path.read_text())

    sys.path.insert(0, str(ROOT))
    from properties import report as rep

    registry = load_registry(args.conjecture)
    pats = [p.strip() for p in args.only.split(",")] if args.only else None
    selected = None if pats is None else (lambda i: any(fnmatch.fnmatchcase(i, p) for p in pats))
    rows = rep.build(registry, raw, selected)

    plots = {}
    if not args.no_plots:
        import matplotlib

        matplotlib.use("Agg")
        for r in rows:
            claim = registry.get(r["id"])
            if claim is not None and claim.plot is not None:
                name = r["id"].replace(".", "_") + ".png"
                try:
                    claim.plot(str(report / name))
                    plots[r["id"]] = name
                except Exception as e:  # a broken figure must not hide the verdicts
                    r["detail"] = (r["detail"] + f" | plot failed: {e!r}").lstrip(" |")
    rep.write(rows, json_path, report / "audit.md", profile, plots)
    print()
    print(rep.table(rows))
    print(f"\nwrote {json_path}, {report / 'audit.md'} and {len(plots)} plots "
          f"({time.time() - t0:.0f} s, pytest exit {proc.returncode})")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
