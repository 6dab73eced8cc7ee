"""Benchmark: the Eqn. 2 simulator batched over seeds vs one seed at a time, on the same work.

    python -m sim.bench [--seeds 64] [--steps 200] [--device cpu|cuda]

Prints the wall time and throughput (seed-steps per second) of both, and checks that they
produced the same numbers.  Not a test: timings depend on the machine.
"""

import argparse
import time

import numpy as np
import torch

from sim import default_device
from sim.joma import make_problem, simulate_eqn2


def run(seeds: int, steps: int, device, M_C=8, K=3, d=12, N=64, attention="exp"):
    torch.set_num_threads(1)
    ids = list(range(seeds))
    kw = dict(M_C=M_C, K=K, d=d, N=N, attention=attention, activation="relu", device=device)
    eta, horizon = 0.01, 0.01 * steps
    batched = make_problem(ids, **kw)
    singles = [make_problem([s], **kw) for s in ids]
    g = torch.Generator().manual_seed(0)
    W0 = 0.3 * torch.randn(seeds, d, K, generator=g, dtype=torch.float64)
    z0 = 0.3 * torch.randn(seeds, M_C, generator=g, dtype=torch.float64)

    t0 = time.perf_counter()
    tb = simulate_eqn2(batched, eta=eta, horizon=horizon, W0=W0, z0=z0)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    ts = [simulate_eqn2(p, eta=eta, horizon=horizon, W0=W0[i:i + 1], z0=z0[i:i + 1])
          for i, p in enumerate(singles)]
    t_single = time.perf_counter() - t0
    same = max(float(np.abs(tb.z[:, i] - t.z[:, 0]).max()) for i, t in enumerate(ts))
    return t_batched, t_single, same


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sim.bench")
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--device", default=None)
    a = ap.parse_args(argv)
    device = torch.device(a.device) if a.device else default_device()
    tb, ts, same = run(a.seeds, a.steps, device)
    work = a.seeds * a.steps
    print(f"Eqn. 2 simulator, {a.seeds} seeds x {a.steps} steps on {device} (1 thread)")
    print(f"  batched       {tb:7.3f} s  {work / tb:10.0f} seed-steps/s")
    print(f"  one at a time {ts:7.3f} s  {work / ts:10.0f} seed-steps/s")
    print(f"  speed-up x{ts / tb:.1f}; max |difference| of z between the two: {same:.1e}")


if __name__ == "__main__":
    main()
