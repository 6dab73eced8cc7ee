"""Event-level SignGD simulation for researchers: per-pair event times, per-seed stopping,
checkpoints and test error at chosen steps (sim.signgd).

    python examples/signgd_events.py            # < 30 s on one CPU core

1. Train a small problem (orthogonal data, disjoint supports, L = 2) to T_4 of every seed and read
   `events`: per (neuron, sample) pair the step its query and key noise align with each other and
   with sgn(alpha), and which pair triggered T_4^- (stage_times' scalars are their extremes).
2. Rerun with `stop_seed`: each seed stops updating once all its noise has the sign of alpha;
   the others go on (a slow seed no longer sets everyone's horizon).
3. Read a checkpoint (parameters, tracked quantities, test error at exactly that step) and the
   test error at chosen steps (`test_at`).
"""

from __future__ import annotations

import numpy as np
import torch

from sim import signgd as sim


def noise_aligned(q):
    """(S,) bool: every query and key noise of the seed has the sign of its neuron's alpha."""
    sa = np.sign(q["alpha"])[..., None, None]
    return ((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all((1, 2, 3))


def main(seeds=(1, 2, 3), n=4, s=20, m_k=2, m_v=8, sigma_0=1e-3, eta=1e-3, steps=1500,
         verbose=True):
    """Runs the three parts; returns a dict of what it printed (for tests)."""
    say = print if verbose else (lambda *a, **k: None)
    seeds = list(seeds)
    d = 1 + n * s + 20
    prob = sim.make_problem(seeds, n=n, s=s, d=d, sigma_p=1.0, n_test=50, disjoint=True,
                            device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=m_k, m_v=m_v, sigma_0=sigma_0, device="cpu")

    # 1. one run of every seed to the slowest seed's T_4, logged every step
    tr = sim.train(prob, p0, eta=eta, steps=steps, log=sim.STAGE_LOG,
                   stop=lambda q: bool(noise_aligned(q).all()))
    ev = sim.events(tr)
    say("stage times per seed:", {k: v.tolist() for k, v in ev["stage"].items()})
    for j, seed in enumerate(seeds):
        s_, i_ = ev["T4m_pair"][j]
        say(f"seed {seed}: T_4^- = {ev['stage']['T4m'][j]:g}, triggered by neuron {s_}, "
            f"sample {i_} (-1: no T_4^-)")
        say("  query/key noise signs agree from step, up to T_4^- (neuron x sample):\n",
            ev["qk_align_cut"][j])
        say("  key noise has sgn(alpha) from step:\n", ev["align_b"][j])

    # 2. per-seed stopping: a seed freezes at the first step its noise is all aligned
    tr2 = sim.train(prob, p0, eta=eta, steps=steps, log=sim.STAGE_LOG, stop_seed=noise_aligned)
    say("per-seed stop steps:", tr2.settings["t_stop_seed"].tolist(), "; run ended at step",
        int(tr2.t[-1]))

    # 3. checkpoints and test error at chosen steps
    t_ck = int(min(ev["stage"]["T4m"].min(), tr.t[-1]))
    tr3 = sim.train(prob, p0, eta=eta, steps=int(tr.t[-1]), log=("alpha", "train_loss"),
                    checkpoints=[0, t_ck], test_at=[t_ck // 2])
    ck = tr3.checkpoints[t_ck]
    say(f"checkpoint at step {ck.t}: train loss {ck.q['train_loss'].round(4).tolist()}, "
        f"test error {ck.test_err.round(3).tolist()}, |W_Q| {ck.params.WQ.norm().item():.4g}")
    say("test error at steps", tr3.t_test.tolist(), ":", tr3.test_err.round(3).tolist())
    return dict(events=ev, t_stop_seed=tr2.settings["t_stop_seed"], checkpoint=ck,
                t_test=tr3.t_test)


if __name__ == "__main__":
    torch.set_num_threads(1)  # these small programs are slower with several threads
    main()
