"""SignGD on a two-layer transformer (Li et al., ICLR 2025): data model, model, optimizers, and the
exact reduced scalar dynamics of the statement sheet.

Data (Definition 2.1): signal mu = e_1 (coordinate 0 here), label y Rademacher, L patches per
sample: one patch, at a random position, is y mu; the other L - 1 are noise patches xi with s
nonzero coordinates, i.i.d. N(0, sigma_p^2).  Supports are drawn from [d] minus {coordinate 0}
(orthogonal data) or from all of [d] (non-orthogonal variant).  With `disjoint=True` the n(L-1)
training supports are pairwise disjoint and every test support is drawn from the coordinates no
training support uses ("test supports apart").

Model (Eq. 1): W_Q, W_K (m_k x d), W_{V,j} (m_v x d), j in {+1, -1}; head h_j (m_v), fixed at
1/m_v (or learnable, Appendix F.3); F_j = sum_l h_j^T W_{V,j} X softmax(X^T W_K^T W_Q x^(l));
f = F_{+1} - F_{-1}.  No 1/sqrt(m_k) temperature.  Logistic loss, full batch.

Everything is batched over a leading seed dimension S; instance s depends only on seeds[s]
(data from make_generator(seed), init from make_generator(seed + 2**31)).  float64 throughout.
Gradients are analytic (tested against autograd in tests/test_signgd.py).

Researcher API (event level; examples/signgd_events.py is the runnable version):

    import numpy as np
    from sim import signgd as sim

    seeds, d = [1, 2, 3], 101
    prob = sim.make_problem(seeds, n=4, s=20, d=d, sigma_p=1.0, disjoint=True, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=2, m_v=8, sigma_0=1e-3, device="cpu")

    def aligned(q):  # (S,) bool: all noise of the seed has sgn(alpha)
        sa = np.sign(q["alpha"])[..., None, None]
        return ((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all((1, 2, 3))

    tr = sim.train(prob, p0, eta=1e-3, steps=1500, log=sim.STAGE_LOG,   # log every step
                   stop_seed=aligned,          # each seed stops updating once aligned
                   checkpoints=[0, 50], test_at=[25])
    ev = sim.events(tr)        # per pair / neuron / sample event times (EVENT_DEFINITIONS)
    ev["align_b"][0]           # (m_k, n): step from which key noise b_{s,i} has sgn(alpha_s)
    ev["T4m_pair"]             # (S, 2): (neuron, sample) whose turn set T_4^-
    ev["stage"]["T4m"]         # = ev["t4m_turn"].min((-1, -2)): stage_times' scalars
    tr.settings["t_stop_seed"]  # (S,): the step each seed stopped (inf: never)
    ck = tr.checkpoints[50]    # ck.params, ck.q (every TRACKED quantity), ck.test_err
    tr.t_test, tr.test_err     # test metrics at 0, 25, 50 and the last step

init_params also takes one sigma_0 or m_v per seed (configurations in one batch; see its
docstring for what that is exact for and why n is not batched), make_problem one s per seed.

The package: sim/signgd/model.py (data, model, gradients, optimizers, `train`), events.py (stage
boundaries and event times from a run's Trace), reduced.py (the reduced scalar dynamics).  Every
name is importable from `sim.signgd` itself, as above.
"""

# ruff: noqa: F401 -- the package's API, one module's names as before the split
from sim.signgd.model import (OPTIMIZERS, DT, MAX_WIDTH, _check_int, _check_pos, _seeds,
    _check_problem, _check_params, _check_patches, Data, Problem, _draw, make_problem, Params,
    init_params, _mean_value, forward, _forward, loss_of, gradients, _gradients, TRACKED, tracked,
    squeeze_L2, test_metrics, Trace, Checkpoint, _step_list, _seed_mask, train)
from sim.signgd.events import (STAGE_DEFINITIONS, TURN_LOOKBACK, CPU_EPS, turn_lookback,
    _first_from, _sign8, _diff_sign8, _window_all, STAGE_LOG, _need, _key_turning, _turning,
    _completed_turns, TURNS, stage_times,
    qk_alignment_time, EVENT_DEFINITIONS, _first_from_nd, _first_true, events)
from sim.signgd.reduced import _sig, reduced_dynamics
