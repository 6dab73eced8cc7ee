"""Benchmarks, side by side in one run: each simulator batched over seeds (one tensor program)
vs one seed at a time, on the same work.

    python -m sim.bench [--which eqn2,transformer,signgd] [--seeds 64] [--steps 200]
                        [--impl reference,fast] [--d 16,32,64,128]
                        [--device cpu|cuda]

  eqn2         JoMA's Eqn. 2 simulator (sim.joma.simulate_eqn2), float64;
  transformer  the stacked-seed transformer (sim.transformer: S models in one program) trained by
               Adam, float32, at the CI size of the JoMA dynamics runs (d = 32, 2 layers,
               batch 32, T = 30, next-token); each implementation of --impl (default
               reference,fast) side by side, with its GFLOP/s and the ratio to bare batched
               matmuls of the same shapes; with --d, one row per model size d (the rungs of a
               size ladder), each rung's ratio beside its own matmul rate;
  signgd       the SignGD simulator (sim.signgd.train), float64, at the sheet's CPU setting.

Prints the wall time and throughput (seed-steps per second) of both ways, the speed-up, and the
largest difference between their numbers (0 or float round-off: the batched program is the
same computation).  Not a test: timings depend on the machine.  One thread.
"""

import argparse
import time

import numpy as np
import torch

from sim import default_device
from sim.joma import make_problem, simulate_eqn2
from theory import validate as chk

MAX_SEEDS = 4096  # seeds of one benchmark (each also runs alone)
MAX_REPS = 1000   # repetitions of a timing


def _sizes(where, **sizes):
    """Each size an integer >= 1 (a ValueError naming it), their product below the element cap."""
    for name, v in sizes.items():
        chk.integer(name, v, lo=1, hi=chk.MAX_ELEMENTS)
    chk.elements(where, **sizes)


def run(seeds: int, steps: int, device, M_C=8, K=3, d=12, N=64, attention="exp"):
    chk.integer("seeds", seeds, lo=1, hi=MAX_SEEDS)
    chk.integer("steps", steps, lo=1, hi=chk.MAX_STEPS)
    chk.device("device", device)
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


def transformer_flops(N, T, d, depth, width, n_out, task="next"):
    """Matmul FLOPs of one seed-step (forward + backward = 3 x the forward's matmuls) of the
    stacked transformer: per block QKV 2NT d 3d, scores and values 2 x 2N T^2 d, MLP
    2 x 2NT d F; the read-out 2N T' d C (T' = T - 1 for next-token, 1 for the label task)."""
    for name, v in dict(N=N, T=T, d=d, depth=depth, width=width, n_out=n_out).items():
        chk.integer(name, v, lo=1)
    if task not in ("next", "label"):
        raise ValueError(f"task must be 'next' or 'label', got {task!r}")
    blk = 2 * N * T * d * 3 * d + 2 * 2 * N * T * T * d + 2 * 2 * N * T * d * width
    out = 2 * N * (T - 1 if task == "next" else 1) * d * n_out
    return 3 * (depth * blk + out)


def matmul_rate(S, N, T, d, depth, width, n_out, device, task="next", reps=20):
    """GFLOP/s of bare batched matmuls (torch.bmm, batch S) of the model's forward shapes, each
    run 3 times (standing for forward + backward): the rate the training step could reach if
    it were only its matmuls."""
    # the largest tensors allocated below: (S, N T, width), (S N, T, T), (S, N T, d), (S, d, 3d),
    # (S, N T, n_out)
    _sizes("matmul_rate", S=S, N=N, T=T, width=width)
    _sizes("matmul_rate", S=S, N=N, T=T, T_=T)
    _sizes("matmul_rate", S=S, N=N, T=T, d=d)
    _sizes("matmul_rate", S=S, d=d, d3=3 * d)
    _sizes("matmul_rate", S=S, N=N, T=T, n_out=n_out)
    chk.integer("depth", depth, lo=1, hi=MAX_REPS)
    chk.integer("reps", reps, lo=1, hi=MAX_REPS)
    chk.device("device", device)
    if task not in ("next", "label"):
        raise ValueError(f"task must be 'next' or 'label', got {task!r}")
    g = torch.Generator().manual_seed(1)

    def r(*shape):
        return torch.randn(*shape, generator=g).to(device)
    Tp = T - 1 if task == "next" else 1
    mats = [(r(S, N * T, d), r(S, d, 3 * d)), (r(S * N, T, d), r(S * N, d, T)),
            (r(S * N, T, T), r(S * N, T, d)), (r(S, N * T, d), r(S, d, width)),
            (r(S, N * T, width), r(S, width, d))]
    ops = [m for m in mats for _ in range(depth)] + [(r(S, N * Tp, d), r(S, d, n_out))]
    flop = sum(2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2] for a, b in ops) * 3
    for a, b in ops:
        torch.bmm(a, b)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(3):
            for a, b in ops:
                torch.bmm(a, b)
        best = min(best, time.perf_counter() - t0)
    return flop / best / 1e9


def run_transformer(seeds: int, steps: int, device, d=32, depth=2, N=32, T=30, vocab=100,
                    n_out=100, impls=("reference", "fast"), repeats=None, singles=True):
    """S stacked transformers at the JoMA dynamics CI size (properties.joma.runs.DYN_CI: d = 32,
    2 layers, batch 32, T = 30, vocab 100, next-token loss, Adam), each implementation in
    `impls` (sim.transformer.IMPLS) timed on the same data, alternating, best of `repeats`
    (the machine may be shared: the ratios are measured within one run); then (singles=True)
    S single-seed models with the last implementation."""
    from sim.transformer import IMPLS, StackedTransformer, train
    chk.integer("seeds", seeds, lo=1, hi=MAX_SEEDS)
    chk.integer("steps", steps, lo=1, hi=chk.MAX_STEPS)
    chk.device("device", device)
    _sizes("run_transformer", steps=steps, seeds=seeds, N=N, T=T)  # the token draws
    for name, v in dict(d=d, depth=depth, vocab=vocab, n_out=n_out).items():
        chk.integer(name, v, lo=1, hi=chk.MAX_ELEMENTS)
    if n_out < vocab:
        raise ValueError(f"n_out must be >= vocab = {vocab} (the next-token targets are tokens), "
                         f"got n_out = {n_out}")
    if (isinstance(impls, (str, bytes)) or not isinstance(impls, (tuple, list)) or not impls
            or any(i not in IMPLS for i in impls)):
        raise ValueError(f"impls must be a non-empty tuple of names among {IMPLS}, got {impls!r}")
    if repeats is not None:
        chk.integer("repeats", repeats, lo=1, hi=MAX_REPS)
    chk.flag("singles", singles)
    torch.set_num_threads(1)
    if repeats is None:  # best of 3 on small work; one pass where a pass is long
        repeats = 3 if seeds * steps <= 2000 else 1
    g = torch.Generator().manual_seed(0)
    tok = torch.randint(vocab, (steps, seeds, N, T), generator=g).to(device)
    lab = torch.randint(n_out, (steps, seeds, N), generator=g).to(device)
    mask = torch.ones(seeds, N, T, dtype=torch.bool, device=device)
    kw = dict(vocab=vocab, n_out=n_out, d=d, depth=depth, device=device)
    times = {i: float("inf") for i in impls}
    final = {}
    for _ in range(repeats):
        for impl in impls:
            t0 = time.perf_counter()
            m = StackedTransformer(list(range(seeds)), impl=impl, **kw)
            lb = train(m, lambda k: (tok[k], lab[k], mask), steps=steps, lr=1e-3, task="next",
                       log_every=steps)
            times[impl] = min(times[impl], time.perf_counter() - t0)
            final[impl] = lb.loss[-1]
    t_single = same = None
    if singles:
        t0 = time.perf_counter()
        ls = []
        for s in range(seeds):
            ms = StackedTransformer([s], impl=impls[-1], **kw)
            ls.append(train(ms, lambda k, s=s: (tok[k, s:s + 1], lab[k, s:s + 1], mask[s:s + 1]),
                            steps=steps, lr=1e-3, task="next", log_every=steps))
        t_single = time.perf_counter() - t0
        same = max(abs(float(final[impls[-1]][s]) - float(l.loss[-1][0]))
                   for s, l in enumerate(ls))
    impl_diff = max(float((final[i] - final[impls[-1]]).abs().max()) for i in impls)
    flops = transformer_flops(N, T, d, depth, 4 * d, n_out)
    mm = matmul_rate(seeds, N, T, d, depth, 4 * d, n_out, device)
    return dict(times=times, t_single=t_single, same=same, impl_diff=impl_diff,
                flops=flops, matmul=mm, repeats=repeats)


def run_signgd(seeds: int, steps: int, device, s=30, n=8, sigma_p=1.0, sigma_0=1e-3, eta=6e-5):
    """SignGD on Definition 2.1: every seed in one program vs one seed at a time."""
    from sim import signgd as sg
    chk.integer("seeds", seeds, lo=1, hi=MAX_SEEDS)
    chk.integer("steps", steps, lo=1, hi=chk.MAX_STEPS)
    chk.device("device", device)
    _sizes("run_signgd", n=n, s=s)  # d = 1 + n s + 120
    torch.set_num_threads(1)
    d = 1 + n * s + 120
    ids = list(range(seeds))

    def once(ss):
        prob = sg.make_problem(ss, n=n, s=s, d=d, sigma_p=sigma_p, disjoint=True, device=device)
        p0 = sg.init_params(ss, d=d, m_k=8, m_v=16, sigma_0=sigma_0, device=device)
        return sg.train(prob, p0, eta=eta, steps=steps, log_every=steps)

    t0 = time.perf_counter()
    tb = once(ids)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    ts = [once([i]) for i in ids]
    t_single = time.perf_counter() - t0
    same = max(float(np.abs(np.asarray(tb["train_loss"])[:, i]
                            - np.asarray(t["train_loss"])[:, 0]).max()) for i, t in enumerate(ts))
    return t_batched, t_single, same


BENCHES = {
    "eqn2": ("Eqn. 2 simulator (float64)", run, "z"),
    "transformer": ("stacked-seed transformer, d = 32, 2 layers, T = 30, Adam (float32)",
                    run_transformer,
                    "final loss"),
    "signgd": ("SignGD simulator, s = 30, n = 8 (float64)", run_signgd, "training loss"),
}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sim.bench")
    ap.add_argument("--which", default="eqn2,transformer,signgd",
                    help="comma-separated: " + ", ".join(BENCHES))
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--device", default=None)
    ap.add_argument("--impl", default="reference,fast",
                    help="transformer only: comma-separated implementations (sim.transformer."
                         "IMPLS: reference = the original einsum forward and Adam loop, fast)")
    ap.add_argument("--d", default=None,
                    help="transformer only: comma-separated model sizes d (the rungs of a size "
                         "ladder, e.g. 16,32,64,128): one row per rung, each implementation's "
                         "rate and its ratio to bare batched matmuls of that rung's shapes, "
                         "side by side (no one-seed-at-a-time runs)")
    a = ap.parse_args(argv)
    ds = None
    if a.d is not None:
        try:
            ds = [int(x) for x in a.d.split(",") if x.strip()]
        except ValueError:
            ap.error(f"--d: comma-separated integers, got {a.d!r}")
        if not ds or any(not 1 <= x <= 4096 for x in ds):
            ap.error(f"--d: model sizes in [1, 4096], got {a.d!r}")
    from sim.transformer import IMPLS
    impls = tuple(i.strip() for i in a.impl.split(",") if i.strip())
    if not impls or any(i not in IMPLS for i in impls):
        ap.error(f"--impl: choose from {list(IMPLS)}, got {a.impl!r}")
    which = [w.strip() for w in a.which.split(",") if w.strip()]
    bad = [w for w in which if w not in BENCHES]
    if bad:
        ap.error(f"--which: unknown {bad}; choose from {list(BENCHES)}")
    for name, val in (("--seeds", a.seeds), ("--steps", a.steps)):
        if not 1 <= val <= 10 ** 5:
            ap.error(f"{name} must be in [1, 100000], got {val}")
    device = torch.device(a.device) if a.device else default_device()
    work = a.seeds * a.steps
    for w in which:
        title, fn, what = BENCHES[w]
        if w == "transformer" and ds is not None:
            _print_ladder(ds, a, device, impls)
            continue
        if w == "transformer":
            _print_transformer(title, fn(a.seeds, a.steps, device, impls=impls), a, device)
            continue
        tb, ts, same = fn(a.seeds, a.steps, device)
        print(f"{title}: {a.seeds} seeds x {a.steps} steps on {device} (1 thread)")
        print(f"  batched       {tb:8.3f} s  {work / tb:10.0f} seed-steps/s")
        print(f"  one at a time {ts:8.3f} s  {work / ts:10.0f} seed-steps/s")
        print(f"  speed-up x{ts / tb:.1f}; max |difference| of the {what} between the two: "
              f"{same:.1e}", flush=True)


def _print_ladder(ds, a, device, impls):
    """One row per rung d: the FLOPs of a seed-step, the bare batched matmul rate of the rung's
    shapes, and each implementation's seed-steps/s, GFLOP/s and ratio to the matmul rate."""
    print(f"stacked-seed transformer by rung (2 layers, batch 32, T = 30, width 4d, Adam, "
          f"float32): {a.seeds} seeds x {a.steps} steps on {device} (1 thread; each rung's "
          "implementations alternating, best of repeats, its matmuls timed right after)")
    head = "".join(f"  {i + ' seed-steps/s':>22} {'GFLOP/s':>8} {'ratio':>6}" for i in impls)
    print(f"  {'d':>5} {'MFLOP/seed-step':>16} {'matmul GFLOP/s':>15}" + head)
    for d in ds:
        r = run_transformer(a.seeds, a.steps, device, d=d, impls=impls, singles=False)
        work = a.seeds * a.steps
        cells = ""
        for impl in impls:
            t = r["times"][impl]
            rate = work * r["flops"] / t / 1e9
            cells += f"  {work / t:>22.1f} {rate:>8.1f} {rate / r['matmul']:>6.2f}"
        print(f"  {d:>5} {r['flops'] / 1e6:>16.1f} {r['matmul']:>15.1f}" + cells, flush=True)


def _print_transformer(title, r, a, device):
    work = a.seeds * a.steps
    print(f"{title}: {a.seeds} seeds x {a.steps} steps on {device} (1 thread; best of "
          f"{r['repeats']}, alternating)")
    print(f"  matmul FLOPs per seed-step {r['flops'] / 1e6:.1f} M; bare batched matmuls of the "
          f"same shapes: {r['matmul']:.1f} GFLOP/s")
    for impl, t in r["times"].items():
        rate = work * r["flops"] / t / 1e9
        print(f"  batched {impl:<9} {t:8.3f} s  {work / t:10.0f} seed-steps/s  {rate:6.1f} "
              f"GFLOP/s  ({rate / r['matmul']:.2f} of the matmul rate)")
    first, last = list(r["times"])[0], list(r["times"])[-1]
    print(f"  one at a time ({last}) {r['t_single']:8.3f} s  {work / r['t_single']:10.0f} "
          "seed-steps/s")
    if first != last:
        print(f"  {last} vs {first}: x{r['times'][first] / r['times'][last]:.2f}; max "
              f"|difference| of the final loss: {r['impl_diff']:.1e} (float32 round-off)")
    print(f"  batched vs one at a time: x{r['t_single'] / r['times'][last]:.1f}; max |difference| "
          f"of the final loss: {r['same']:.1e}", flush=True)


if __name__ == "__main__":
    main()
