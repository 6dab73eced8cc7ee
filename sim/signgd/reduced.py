"""SignGD (Li et al., ICLR 2025): the statement sheet's exact reduced scalar dynamics, an
implementation in numpy independent of the transformer in sim/signgd/model.py."""

from __future__ import annotations

import numpy as np

from theory import validate as chk
from theory.validate import MAX_STEPS, elements, integer


# --------------------------------------------------------------------------------------------
# Exact reduced scalar dynamics (statement sheet), an independent numpy implementation
# --------------------------------------------------------------------------------------------
def _sig(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


def reduced_dynamics(alpha, beta, a, b, V_mu, V, c, eta, steps):
    """The scalar system of the statement sheet for orthogonal data with pairwise-disjoint
    training supports, L = 2.  alpha, beta: (S, m_k); a, b: (S, m_k, n); V_mu: (S,); V: (S, n);
    c: (S, n) = eta ||xi_i||_1.  eta: a number, or one per instance (S,) so that configurations
    with different step sizes share one batched program.  Returns a dict of arrays stacked over
    steps 0..steps."""
    shapes = {}
    for name, x, nd in (("alpha", alpha, 2), ("beta", beta, 2), ("a", a, 3), ("b", b, 3),
                        ("V_mu", V_mu, 1), ("V", V, 2), ("c", c, 2)):
        shapes[name] = chk.finite_array(name, x, ndim=nd).shape
    S_, m_k = shapes["alpha"]
    n_ = shapes["V"][1] if len(shapes["V"]) == 2 else 0
    want = dict(alpha=(S_, m_k), beta=(S_, m_k), a=(S_, m_k, n_), b=(S_, m_k, n_), V_mu=(S_,),
                V=(S_, n_), c=(S_, n_))
    for name, shp in want.items():
        if shapes[name] != shp:
            raise ValueError(f"reduced_dynamics: {name} must have shape {shp} (alpha (S, m_k), "
                             f"a, b (S, m_k, n), V_mu (S,), V, c (S, n)), got {shapes[name]}")
    integer("steps", steps, 0, MAX_STEPS)
    elements("reduced_dynamics", steps_plus_1=steps + 1, S=S_, m_k=m_k, n=n_)
    alpha, beta, a, b = (np.array(x, dtype=np.float64) for x in (alpha, beta, a, b))
    V_mu, V, c = (np.array(x, dtype=np.float64) for x in (V_mu, V, c))
    eta_v = np.asarray(eta, dtype=np.float64)
    if eta_v.ndim > 1 or (eta_v.ndim == 1 and eta_v.shape != V_mu.shape) or not (
            np.all(np.isfinite(eta_v)) and np.all(eta_v > 0)):
        raise ValueError(f"eta must be a finite number > 0 or one per instance (shape "
                         f"{V_mu.shape}), got {eta!r}")
    integer("steps", steps, 0)
    eta = np.broadcast_to(eta_v, V_mu.shape)
    hist = {k_: [] for k_ in ("alpha", "beta", "a", "b", "V_mu", "V", "s11", "s21", "margin")}
    for t in range(steps + 1):
        s11 = _sig((alpha[:, :, None] * (beta[:, :, None] - b)).sum(1))  # (S, n)
        s21 = _sig((a * (beta[:, :, None] - b)).sum(1))
        s12, s22 = 1 - s11, 1 - s21
        m = (s11 + s21) * V_mu[:, None] + (s12 + s22) * V
        for k_, x in (("alpha", alpha), ("beta", beta), ("a", a), ("b", b), ("V_mu", V_mu), ("V", V),
                      ("s11", s11), ("s21", s21), ("margin", m)):
            hist[k_].append(x.copy())
        if t == steps:
            break
        g = _sig(-m)
        Dl = V - V_mu[:, None]
        kq = (s11 * s12)[:, None, :] * alpha[:, :, None] + (s21 * s22)[:, None, :] * a  # (S, m_k, n)
        da = c[:, None, :] * np.sign(Dl[:, None, :] * (b - beta[:, :, None]))
        db = c[:, None, :] * np.sign(Dl[:, None, :] * kq)
        dal = eta[:, None] * np.sign(((g * Dl * s11 * s12)[:, None, :] * (b - beta[:, :, None])).sum(-1))
        dbe = -eta[:, None] * np.sign(((g * Dl)[:, None, :] * kq).sum(-1))
        a, b, alpha, beta = a + da, b + db, alpha + dal, beta + dbe
        V_mu, V = V_mu + 2 * eta, V + 2 * c
    return {k_: np.stack(v_) for k_, v_ in hist.items()}
