"""The audit's wall time, side by side in one run (issue 13):

    python -m properties.bench [--only GLOBS] [--profile ci] [-n auto] [--out bench.json]

runs, one after another on this machine, each into a fresh report directory:

  1. `audit --no-plots`          the properties alone, cold (a fresh run cache)
  2. `audit`                     the same properties and every figure, cold (another fresh cache)
  3. `audit`                     2 again, on the cache that 2 filled (warm)

and prints the wall times and the two ratios the issue sets: full / properties-only (goal
<= 1.3: figures read the cached runs and never train) and warm / cold (goal <= 1/3).  It also
checks that the three reports agree claim for claim (verdict, max error, draws), so a warm
audit that read a stale result would show here.  Measured results go to --out (JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _audit(report: Path, cache: Path, args, *extra) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "properties", "audit", "--report", str(report),
           "--cache-dir", str(cache), "--fail-on", "never", "-n", str(args.workers),
           "--profile", args.profile, *extra]
    if args.only:
        cmd += ["--only", args.only]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"audit exited {proc.returncode}: {' '.join(cmd)}")
    doc = json.loads((report / "audit.json").read_text())
    return dt, doc


def _rows(doc) -> dict:
    return {r["id"]: (r["verdict"], r["max_error"], r["draws"]) for r in doc["claims"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m properties.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None, help="glob(s) of claim ids (default: every claim)")
    ap.add_argument("--profile", default="ci", choices=["ci", "dev", "thorough"])
    ap.add_argument("-n", "--workers", default="auto")
    ap.add_argument("--out", default=None, help="write the measurements here (JSON)")
    ap.add_argument("--keep", default=None,
                    help="copy the cold full audit's report directory here (e.g. for "
                         "`theorem-audit readme --report DIR`)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="theorem-audit-bench-") as tmp:
        tmp = Path(tmp)
        t_props, d_props = _audit(tmp / "props", tmp / "cache-props", args, "--no-plots")
        print(f"properties only, cold cache : {t_props:7.1f} s", flush=True)
        t_cold, d_cold = _audit(tmp / "cold", tmp / "cache", args)
        print(f"with figures, cold cache    : {t_cold:7.1f} s", flush=True)
        t_warm, d_warm = _audit(tmp / "warm", tmp / "cache", args)
        print(f"with figures, warm cache    : {t_warm:7.1f} s", flush=True)
        figures = len(list((tmp / "cold").glob("*.png")))
        if args.keep:
            import shutil
            shutil.copytree(tmp / "cold", args.keep, dirs_exist_ok=True)
        cache_mb = sum(p.stat().st_size for p in (tmp / "cache").rglob("*") if p.is_file()) / 2**20
    agree = _rows(d_props) == _rows(d_cold) == _rows(d_warm)
    res = {"cpus": os.cpu_count(), "profile": args.profile, "only": args.only,
           "commit": d_cold.get("commit"), "claims": len(d_cold["claims"]), "figures": figures,
           "seconds": {"properties_only": round(t_props, 1), "full_cold": round(t_cold, 1),
                       "full_warm": round(t_warm, 1)},
           "full_over_properties": round(t_cold / t_props, 3),
           "warm_over_cold": round(t_warm / t_cold, 3), "cache_MiB": round(cache_mb, 1),
           "reports_agree": agree}
    print(f"full / properties only     : {res['full_over_properties']:.2f}  (goal <= 1.3)")
    print(f"warm / cold                : {res['warm_over_cold']:.2f}  (goal <= 0.33)")
    print(f"{figures} figures, run cache {cache_mb:.0f} MiB, reports agree claim for claim: {agree}")
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
