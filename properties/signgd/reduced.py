"""The exact reduced dynamics of SignGD (sim.signgd.reduced_dynamics) from the full model's init:
the state, its setup from sim.signgd.make_problem / init_params, the held-out margins, the
batched runs to a stop event.  For orthogonal data with pairwise-disjoint training supports and
L = 2 it is the full model's SignGD trajectory seen through the training set, step for step
(signgd.reduced_dynamics): cheap ladders in s, m_k, sigma_0, sigma_p (signgd.stage_order,
signgd.lemma4_8, signgd.theorem3_2.item2, the declared path of path.py).  Data, not claims.
Imports go one way: setting.py is read here; path.py and the claim files read this module.
"""

from __future__ import annotations

import dataclasses
import types
from typing import NamedTuple

import numpy as np

from properties.signgd.setting import M_K, MV_ROWS, N_SAMPLES
from sim import signgd as sim

REDUCED_KEYS = ("alpha", "beta", "a", "b", "V_mu", "V")


class ReducedState(NamedTuple):
    """The reduced dynamics' state and constants: alpha, beta (S, m_k); a, b (S, m_k, n); V_mu
    (S,); V (S, n); c = eta ||xi_i||_1 (S, n); eta (S,)."""

    alpha: np.ndarray
    beta: np.ndarray
    a: np.ndarray
    b: np.ndarray
    V_mu: np.ndarray
    V: np.ndarray
    c: np.ndarray
    eta: np.ndarray


def reduced_setup(seeds, s, sigma_p, sigma_0, eps, *, m_v=MV_ROWS, m_k=M_K, d=None, n_test=1):
    """(state, prob, p0): the full model's problem and init (sim.signgd.make_problem /
    init_params, the problem_and_init setup, n_test test samples per seed) and the reduced
    dynamics' state they give (reduced_init)."""
    eta = eps * sigma_0 / np.sqrt(s)
    d = 1 + N_SAMPLES * s + s + 3 if d is None else d
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True,
                            n_test=n_test, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=m_k, m_v=MV_ROWS, sigma_0=sigma_0, device="cpu")
    if m_v != MV_ROWS:
        p0 = sim.Params(p0.WQ, p0.WK, p0.WV * (np.sqrt(MV_ROWS / m_v) if m_v else 0.0), p0.H)
    q = sim.squeeze_L2(sim.tracked(prob, p0, keep=REDUCED_KEYS))
    xi1 = prob.train.xi.abs().sum(-1)[..., 0].numpy()
    state = ReducedState(q["alpha"], q["beta"], q["a"], q["b"], q["V_mu"], q["V"], eta * xi1,
                         np.full(len(seeds), eta))
    return state, prob, p0


def reduced_init(seeds, s, sigma_p, sigma_0, eps, *, m_v=MV_ROWS, m_k=M_K, d=None):
    """The full model's init (sim.signgd.make_problem / init_params, the problem_and_init setup)
    seen through the training set: the reduced dynamics' state, with eta = eps sigma_0 / sqrt(s).
    d defaults to 1 + n s + s + 3; m_v other than MV_ROWS rescales the value rows (exact: W_V
    enters only through the mean value; m_v = 0 stands for m_v = inf, v(0) = 0)."""
    return reduced_setup(seeds, s, sigma_p, sigma_0, eps, m_v=m_v, m_k=m_k, d=d)[0]


def heldout_margins(prob, p0, alpha, beta, V_mu):
    """The test margins y f (S, n_test) of prob.test at a reduced state (alpha, beta (S, m_k),
    V_mu (S,)), exactly: no gradient reaches the test supports (disjoint from the training
    ones), so the test noise inner products keep their init values a', b', V' (of p0), and the
    margin is (s11' + s21') V_mu + (2 - s11' - s21') V' with s11' = sigma(sum_s alpha_s (beta_s -
    b'_s)), s21' = sigma(sum_s a'_s (beta_s - b'_s))."""
    n_test = int(prob.test.y.shape[1])
    tq = sim.squeeze_L2(sim.tracked(dataclasses.replace(prob, train=prob.test, n=n_test), p0,
                                    keep=("a", "b", "V")))
    s11, s21 = reduced_softmax(alpha, beta, tq["a"], tq["b"])
    return margins(s11, s21, V_mu, tq["V"])


def margins(s11, s21, V_mu, V):
    """The margins y f (S, n) from the softmax entries s11, s21 (S, n), V_mu (S,) and the noise
    values V (S, n): (s11 + s21) V_mu + (2 - s11 - s21) V (the margin identity, L = 2)."""
    return (s11 + s21) * V_mu[:, None] + (2.0 - s11 - s21) * V


def training_loss(alpha, beta, a, b, V_mu, V):
    """L_S (S,): the mean logistic loss over the training samples at a reduced state (alpha,
    beta (S, m_k); a, b (S, m_k, n); V_mu (S,); V (S, n)), from reduced_softmax and margins (an
    overflowing exp is a saturated softmax, 0 or 1)."""
    with np.errstate(over="ignore"):
        s11, s21 = reduced_softmax(alpha, beta, a, b)
    return np.logaddexp(0.0, -margins(s11, s21, V_mu, V)).mean(-1)


def reduced_softmax(alpha, beta, a, b):
    """s_11, s_21 (S, n) from the inner products (alpha, beta (S, m_k); a, b (S, m_k, n)): the
    statement sheet's logit s_11 = sum_s alpha_s (beta_s - b_{s,i}), logit s_21 = sum_s a_{s,i}
    (beta_s - b_{s,i}) (orthogonal data, L = 2)."""
    bt = beta[:, :, None] - b
    return (1.0 / (1.0 + np.exp(-(alpha[:, :, None] * bt).sum(1))),
            1.0 / (1.0 + np.exp(-(a * bt).sum(1))))


def batched(states) -> ReducedState:
    """One ReducedState of several (instances concatenated: one batched program)."""
    return ReducedState(*(np.concatenate([st_[i] for st_ in states]) for i in range(8)))


def as_trace(hist, t0=0):
    """A reduced-dynamics history as the Trace-like object sim.signgd.stage_times reads (logged
    every step from t0)."""
    q = dict(alpha=hist["alpha"], beta=hist["beta"], a=hist["a"][..., None],
             b=hist["b"][..., None], V=hist["V"][..., None], V_mu=hist["V_mu"])
    return types.SimpleNamespace(t=t0 + np.arange(len(hist["alpha"])), q=q)


HISTORY_BYTES = 1 << 30  # the first history buffer's bound per quantity (address space)


def run_reduced_until(state, stop, tail, cap, chunk=500):
    """The reduced dynamics in chunks until stop(hist) gives a step t* (or None), then to
    ceil((1 + tail) t*); returns the history of the tracked inner products (REDUCED_KEYS, steps
    0..).  RuntimeError if the stop event has not come within `cap` steps.  The history is
    written into one buffer sized for the longest run the stop rule allows, (1 + tail) cap
    steps, or HISTORY_BYTES per quantity if less, whose memory is touched only as the history
    fills it; a buffer that fills doubles (stop reads views of it; the history returned is
    views of it), so a step is copied a bounded number of times, none for most runs."""
    state = list(state)
    buf, n, t_star, done = None, 0, None, 0
    while True:
        h = sim.reduced_dynamics(*state[:7], state[7], chunk)
        new = {k_: h[k_] if buf is None else h[k_][1:] for k_ in REDUCED_KEYS}
        m = len(new["alpha"])
        if buf is None or n + m > len(buf["alpha"]):
            # first: room for the longest run the stop rule allows (its pages are only touched
            # as the history fills them), so no copy as it grows, up to HISTORY_BYTES per
            # quantity (a wide run's history would ask more address space than the machine
            # has); beyond that, doubling
            per_step = max(v[0].nbytes for v in new.values())
            size = (min(int(np.ceil((1 + tail) * cap)) + chunk + 1,
                        max(HISTORY_BYTES // per_step, 4 * m)) if buf is None
                    else max(2 * (n + m), 4 * m))
            grown = {k_: np.empty((size,) + v.shape[1:], dtype=v.dtype) for k_, v in new.items()}
            if buf is not None:
                for k_ in REDUCED_KEYS:
                    grown[k_][:n] = buf[k_][:n]
            buf = grown
        for k_ in REDUCED_KEYS:
            buf[k_][n:n + m] = new[k_]
        n += m
        done += chunk
        state = [h[k_][-1] for k_ in REDUCED_KEYS] + state[6:]
        if t_star is None:
            t_star = stop({k_: buf[k_][:n] for k_ in REDUCED_KEYS})
        if t_star is not None and done >= np.ceil((1 + tail) * t_star):
            end = int(np.ceil((1 + tail) * t_star)) + 1
            return {k_: buf[k_][:end] for k_ in REDUCED_KEYS}  # views of the buffer
        if done >= cap:
            raise RuntimeError(f"the reduced run did not reach its stop event within {cap} steps")


def first_all_noise_aligned(hist):
    """Stop rule of reduced runs into Stage IV: the first step at which every query and key noise
    of every instance has the sign of its neuron's query signal (T_4 of the slowest), or None."""
    sa = sim._sign8(hist["alpha"])[..., None]
    ok = ((sim._sign8(hist["a"]) == sa) & (sim._sign8(hist["b"]) == sa)).all((-1, -2, -3))
    return int(np.argmax(ok)) if ok.any() else None


class AllNoiseAligned:
    """first_all_noise_aligned evaluated only on the steps added since the last call (the event
    at a step reads that step alone), for long runs: one stop rule per run."""

    def __init__(self):
        self.seen = 0

    def __call__(self, hist):
        sa = sim._sign8(hist["alpha"][self.seen:])[..., None]
        ok = ((sim._sign8(hist["a"][self.seen:]) == sa)
              & (sim._sign8(hist["b"][self.seen:]) == sa)).all((-1, -2, -3))
        first = self.seen + int(np.argmax(ok)) if ok.any() else None
        self.seen = len(hist["alpha"])
        return first


SEED_CHUNK = 24  # seeds per batched reduced run (bounds the history: steps x 24 x m_k x n)


def seed_batches(first, n_seeds, chunk=SEED_CHUNK):
    """The seeds first, first + 1, ..., first + n_seeds - 1 in lists of at most `chunk` (one
    batched reduced run each: the chunk bounds the history, steps x chunk x m_k x n)."""
    return [list(range(first + j0, first + min(n_seeds, j0 + chunk)))
            for j0 in range(0, n_seeds, chunk)]
