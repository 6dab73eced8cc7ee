"""Exploration for issue 35 (not a claim; nothing is decided on it): why Lemma 4.6 still fails in
some runs of the declared path.  Per run of the path's rung s (the audit's sampler and stop rule,
properties.signgd.reduced), the neurons whose query signal alpha_s changes sign after T_4^-, and
the failing wrong-sign key noises of Lemma 4.6 (never turns, or moves away from sgn alpha after
its turn, ties as ties: common.stage4_pairs) inside and outside such neurons.

    python examples/signgd_alpha_reversal.py S SEEDS [FIRST]
    e.g. python examples/signgd_alpha_reversal.py 30 64 993000     # about 20 s

Seeds FIRST + k (fresh: 993000-993063 at s = 30, 993100-993163 at s = 60, 993200-993263 at
s = 120 were used by no audit), kappa_p = 1.  Results of 2026-12-06 in docs/findings.md.
"""

import sys

import numpy as np

from properties.signgd.common import lemma46_failures, stage4_pairs
from properties.signgd.reduced import AllNoiseAligned, as_trace, reduced_setup, run_reduced_until
from properties.signgd.setting import PATH_CAP, TAIL, path_rung
from sim import signgd as sim

KAPPA_P = 1.0


def batch(seeds, rung):
    st_, _, _ = reduced_setup(seeds, rung["s"], rung["sigma_p"], rung["sigma_0"], rung["eps"],
                              m_v=rung["m_v"], m_k=rung["m_k"], d=rung["d"])
    h = run_reduced_until(st_, AllNoiseAligned(), TAIL, PATH_CAP, chunk=1000)
    tr = as_trace(h)
    T = sim.stage_times(tr)
    ev = stage4_pairs(h, tr.t, T["T4m"], tie_scale=st_.c)
    return h, tr, T, ev, np.broadcast_to(np.asarray(st_.eta, dtype=float), (len(seeds),))


def main(s, n, first):
    rung = path_rung(s, KAPPA_P)
    c = dict(runs=0, failing=0, failing_only_in_reversed=0, runs_with_reversal=0, reversed=0,
             permanent=0, to_minus_sgn_beta=0, to_the_vote=0, off_vote_before=0, others=0,
             others_off_vote_before=0)
    size, when = [], []
    for b0 in range(first, first + n, 32):
        seeds = list(range(b0, min(b0 + 32, first + n)))
        h, tr, T, ev, eta = batch(seeds, rung)
        never, back = lemma46_failures(ev)  # Lemma 4.6's failing key noises, as the audit counts
        al, be, a, b = h["alpha"], h["beta"], h["a"], h["b"]
        for j in range(len(seeds)):
            c["runs"] += 1
            if not np.isfinite(T["T4m"][j]):
                continue
            k4 = int(T["T4m"][j])
            sg = np.sign(al[k4:, j])  # (steps from T_4^-, m_k)
            rev = (sg != sg[0]).any(0)
            c["runs_with_reversal"] += int(rev.any())
            bad = (never | back)[j]
            if bad.any():
                c["failing"] += 1
                c["failing_only_in_reversed"] += int((bad.any(-1) <= rev).all())
            k = k4 - 1  # the votes just before T_4^-
            on_vote = ((np.sign(al[k, j]) == np.sign(b[k, j].sum(-1)))
                       & (np.sign(be[k, j]) == -np.sign(a[k, j].sum(-1))))
            for m in range(al.shape[2]):
                if not rev[m]:
                    c["others"] += 1
                    c["others_off_vote_before"] += int(not on_vote[m])
                    continue
                c["reversed"] += 1
                c["permanent"] += int(sg[-1, m] != sg[0, m])
                c["to_minus_sgn_beta"] += int(sg[-1, m] == -np.sign(be[k, j, m]))
                c["to_the_vote"] += int(sg[-1, m] == np.sign(b[k, j, m].sum()))
                c["off_vote_before"] += int(not on_vote[m])
                size.append(abs(al[k4, j, m]) / eta[j])
                when.append(np.argmax(sg[:, m] != sg[0, m]) / (len(tr.t) - k4))
    print(f"s = {s}, seeds {first}-{first + n - 1}, kappa_p = {KAPPA_P}: {c}")
    if size:
        q = (0, 0.25, 0.5, 0.75, 1)
        print("  |alpha(T_4^-)| / eta of the reversed neurons, quantiles:",
              np.quantile(size, q).round(1))
        print("  first reversal as a fraction of (end - T_4^-), quantiles:",
              np.quantile(when, q).round(3))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 993000)
