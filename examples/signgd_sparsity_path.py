"""Exploration for issue 35 (not a claim; nothing is decided on it): the declared path of
SignGD's stage lemmas, and a path that also follows Condition 3.1's sparsity clause d = n^4 s^2.

On the exact reduced dynamics (properties/signgd/reduced.py) d enters only through m_k, m_v and
sigma_p, so the init is sampled here from the inner products' exact law, with no d-dimensional
vector: per seed, xi_i (n x s) i.i.d. N(0, sigma_p^2); alpha, beta (m_k) N(0, sigma_0^2); a, b
(m_k x n) N(0, sigma_0^2 ||xi_i||^2); V_mu N(0, 2 sigma_0^2 / m_v); V_i N(0, 2 sigma_0^2
||xi_i||^2 / m_v); c_i = eta ||xi_i||_1 (derived from sim.signgd.make_problem / init_params with
disjoint supports; on 16 seeds at d = 361 its statistics agree with reduced_setup's, mode orig
against mode declared: a check, not a test of the law).  Then one batch of
properties.signgd.path._batch per rung.

    python examples/signgd_sparsity_path.py declared|orig|sparse S SEEDS [EPS]
    e.g. python examples/signgd_sparsity_path.py sparse 120 16     # about a minute

declared: the declared path's rung s (d = 1 + n s + 120), this sampler; orig: the same rung
through reduced_setup (the audit's sampler); sparse: d = n^4 s^2, with m_k, m_v = round(8, 16 x
(log d / log 361)^2) and sigma_p = d^(1/4) n^3 following it, c and eps held as on the declared
path.  Seeds 996000 + k (fresh: used by no audit).  Results of 2026-12-06 in docs/findings.md.
"""

import sys
import time
import types

import numpy as np
import torch

import properties.signgd.path as path
from properties.signgd import setting as S
from properties.signgd.reduced import ReducedState

MODES = ("declared", "orig", "sparse")
SEED0 = 996000
KAPPA_P = 1.0


def direct_setup(seeds, s, sigma_p, sigma_0, eps, *, m_v, m_k, d=None, n_test=1):
    """reduced_setup's (state, prob, p0) from the inner products' exact law (d unused)."""
    n, eta = S.N_SAMPLES, eps * sigma_0 / np.sqrt(s)
    cols = {k: [] for k in ("alpha", "beta", "a", "b", "V_mu", "V", "c", "xi")}
    for sd in seeds:
        g = np.random.default_rng(int(sd))
        xi = sigma_p * g.standard_normal((n, s))
        l2, l1 = np.sqrt((xi ** 2).sum(-1)), np.abs(xi).sum(-1)
        sv = sigma_0 * np.sqrt(2.0 / m_v)  # the mean value's init scale (fixed head 1 / m_v)
        for k, v in (("alpha", sigma_0 * g.standard_normal(m_k)),
                     ("beta", sigma_0 * g.standard_normal(m_k)),
                     ("a", sigma_0 * l2 * g.standard_normal((m_k, n))),
                     ("b", sigma_0 * l2 * g.standard_normal((m_k, n))),
                     ("V_mu", sv * g.standard_normal()), ("V", sv * l2 * g.standard_normal(n)),
                     ("c", eta * l1), ("xi", xi)):
            cols[k].append(v)
    state = ReducedState(*(np.array(cols[k]) for k in ReducedState._fields[:-1]),
                         np.full(len(seeds), eta))
    xi = torch.from_numpy(np.array(cols["xi"])[:, :, None, :])  # (S, n, 1, s): norms only
    return state, types.SimpleNamespace(train=types.SimpleNamespace(xi=xi)), None


def sparse_rung(s, kappa_p=KAPPA_P, eps=S.PATH_EPS):
    """The rung s of the path following d = n^4 s^2 (m_k, m_v, sigma_p follow d; c, eps held)."""
    n = S.N_SAMPLES
    d = n ** 4 * s ** 2
    pl = (np.log(d) / np.log(S.PATH_BASE_D)) ** 2
    mk, mv, sp = int(round(S.M_K * pl)), int(round(S.M_V * pl)), kappa_p * d ** 0.25 * n ** 3
    return dict(s=s, d=d, m_k=mk, m_v=mv, sigma_p=sp, sigma_0=S.PATH_C / (s * sp * np.sqrt(mk)),
                eps=float(eps), c=S.PATH_C)


def run(mode, s, n_seeds, eps=S.PATH_EPS):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if not 2 <= s <= 240:
        raise ValueError(f"S (the noise sparsity s) must be in [2, 240], got {s}")
    if not 1 <= n_seeds <= 64:
        raise ValueError(f"SEEDS must be in [1, 64] (one batch), got {n_seeds}")
    if not 0.005 <= eps <= S.PATH_EPS:
        raise ValueError(f"EPS must be in [0.005, {S.PATH_EPS:.3g}], got {eps}")
    rung = sparse_rung(s, eps=eps) if mode == "sparse" else dict(S.path_rung(s, KAPPA_P), eps=eps)
    if mode != "orig":
        path.reduced_setup = direct_setup  # this process only
    seeds = list(range(SEED0, SEED0 + n_seeds))
    t0 = time.perf_counter()
    out, pieces, T = path._batch(seeds, rung)
    el = time.perf_counter() - t0
    k = len(seeds)
    runs = lambda x: f"{int(np.sum(np.asarray(x) > 0))}/{k}"  # noqa: E731
    T2, T3v = np.asarray(out["T2"]), np.asarray(out["T3v"])
    print(f"{mode} s={s} eps={rung['eps']:.3g} d={rung['d']} m_k={rung['m_k']} m_v={rung['m_v']} "
          f"sigma_p={rung['sigma_p']:.4g} sigma_0={rung['sigma_0']:.3g} steps={T} {el:.0f}s")
    print(f"  runs with: a neuron off its vote {runs(out['off_vote'])} (Lemma 4.4); a wrong-sign "
          f"key noise that never turns {runs(out['never'])} or turns back {runs(out['back'])} "
          f"(Lemma 4.6); T_2 >= T_3 {int(np.sum(T2 >= T3v))}/{k} (stage order); query-first "
          f"pairs {runs(out['query_first'])} (Lemma 4.7)")
    print(f"  softmax at T_2, max |s - 1/2| (Lemma 4.3 (2)): median "
          f"{np.median(pieces['dev_T2']):.3g}; T_2 median {np.median(T2):.0f}, T_3 median "
          f"{np.median(T3v):.0f}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if len(argv) not in (3, 4):
            raise ValueError("usage: signgd_sparsity_path.py declared|orig|sparse S SEEDS [EPS]")
        try:
            s, n = int(argv[1]), int(argv[2])
            eps = float(argv[3]) if len(argv) == 4 else S.PATH_EPS
        except ValueError:
            raise ValueError(f"S and SEEDS must be integers and EPS a number, got "
                             f"{argv[1:]!r}") from None
        run(argv[0], s, n, eps)
    except ValueError as e:
        print(f"signgd_sparsity_path: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
