"""Section 4 / Appendix A.3: nonlinear activations, Lemmas 1-4, Theorem 3.

JoMA (Tian et al., ICLR 2024) Sec. 4: the literal Eqn 2 gradient of one MLP node with uniform
attention, estimated by Monte Carlo on mixtures of isotropic distributions (torch, float64).

Setting (Eqns 1-2, uniform attention b = x):  f = U_C x + u_q, h = phi(w^T f),
w_dot = E[g phi'(w^T f) f]; v := U_C^T w, xi := u_q^T w, so v_dot = U_C^T w_dot, xi_dot = u_q^T w_dot.
Every estimator returns the mean and its Monte Carlo standard error (sample std / sqrt(N)).
"""

from __future__ import annotations

import math

import torch

from sim.joma._checks import _check_int
from theory import validate as chk

FAMILIES = ("gaussian", "student_t", "ball")


def _finite_pos(name, x):
    chk.number(name, x, lo=0, lo_open=True)


MAX_NU = 1000  # student_t draws chi^2_nu as nu squared normals: a loop of nu passes


def random_embeddings(d: int, m_c: int, gen: torch.Generator, dtype=torch.float64,
                      device=None):
    """U_C (d x M_C) with orthonormal columns and a unit u_q orthogonal to them (QR of a Gaussian)."""
    chk.device("device", device)
    chk.generator("gen", gen)
    chk.float_dtype("dtype", dtype)
    if not (isinstance(d, int) and isinstance(m_c, int) and not isinstance(d, bool)
            and not isinstance(m_c, bool) and m_c >= 1 and d >= m_c + 1):
        raise ValueError(f"need ints M_C >= 1 and d >= M_C + 1, got d={d!r}, M_C (m_c)={m_c!r}")
    chk.elements("random_embeddings", d=d, m_c_plus_1=m_c + 1)
    a = torch.randn(d, m_c + 1, generator=gen, dtype=dtype, device=device)
    q, _ = torch.linalg.qr(a)
    return q[:, :m_c], q[:, m_c]


def sample_isotropic_noise(n_samples: int, n: int, family: str, gen: torch.Generator,
                           sigma: float = 1.0, nu: int = 5, dtype=torch.float64, device=None):
    """z in R^n, isotropic: gaussian N(0, sigma^2 I); student_t (integer nu >= 1, scale sigma):
    sigma g / sqrt(chi2_nu / nu); ball: uniform in the ball of radius sigma."""
    chk.device("device", device)
    chk.generator("gen", gen)
    chk.float_dtype("dtype", dtype)
    _check_int(n_samples, "n_samples", 2)
    _check_int(n, "dimension n", 1)
    chk.elements("sample_isotropic_noise", n_samples=n_samples, n=n)
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    _finite_pos("sigma", sigma)
    if family == "student_t":
        _check_int(nu, "nu (chi^2 by squared normals)", 1, MAX_NU)
    g = torch.randn(n_samples, n, generator=gen, dtype=dtype, device=device)
    if family == "gaussian":
        return sigma * g
    if family == "student_t":
        if not (isinstance(nu, int) and nu >= 1):
            raise ValueError(f"nu must be an int >= 1 (chi^2 by squared normals), got {nu!r}")
        w = torch.zeros(n_samples, dtype=dtype, device=device)
        for _ in range(nu):
            w += torch.randn(n_samples, generator=gen, dtype=dtype, device=device) ** 2
        return sigma * g / torch.sqrt(w / nu)[:, None]
    u = torch.rand(n_samples, generator=gen, dtype=dtype, device=device)
    direction = g / torch.linalg.norm(g, dim=1, keepdim=True)
    return sigma * u[:, None] ** (1.0 / n) * direction


def sample_mixture(n_samples: int, centers: torch.Tensor, weights, family: str,
                   gen: torch.Generator, sigma: float = 1.0, nu: int = 5, R: torch.Tensor | None = None):
    """x = xbar_c + R z with c ~ Categorical(weights), z isotropic in R^n (n = R.shape[1]; R = I by
    default).  The same p(x - xbar_c) for all components (Eqn 45).  Returns (x, labels)."""
    chk.generator("gen", gen)
    _check_int(n_samples, "n_samples", 2)
    cen = chk.finite_array("centers", centers, ndim=2)
    chk.elements("sample_mixture", n_samples=n_samples, M=cen.shape[1])
    chk.finite_array("weights", weights, ndim=1, lo=0)
    if R is not None:
        chk.finite_array("R", R, ndim=2)
    centers = torch.as_tensor(centers, dtype=torch.float64)
    if centers.ndim != 2 or centers.shape[0] < 1 or centers.shape[1] < 1:
        raise ValueError(f"centers must be a (C, M) tensor with C, M >= 1, got {tuple(centers.shape)}")
    if not torch.all(torch.isfinite(centers)):
        raise ValueError("centers must be finite")
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != (centers.shape[0],) or torch.any(w < 0) or abs(float(w.sum()) - 1) > 1e-9:
        raise ValueError("mixture weights must be a probability vector (>= 0, sum 1) of length C")
    m = centers.shape[1]
    if R is None:
        R = torch.eye(m, dtype=torch.float64, device=centers.device)
    R = torch.as_tensor(R, dtype=torch.float64)
    if R.ndim != 2 or R.shape[0] != m or R.shape[1] < 1 or R.shape[1] > m:
        raise ValueError(f"R must be (M, n) with 1 <= n <= M = {m}, got {tuple(R.shape)}")
    if not torch.allclose(R.T @ R, torch.eye(R.shape[1], dtype=torch.float64), atol=1e-10):
        raise ValueError("R must have orthonormal columns")
    labels = torch.multinomial(w, n_samples, replacement=True, generator=gen)
    z = sample_isotropic_noise(n_samples, R.shape[1], family, gen, sigma=sigma, nu=nu,
                               device=centers.device)
    return centers[labels] + z @ R.T, labels


def _check_phi(u, c_minus, c_plus):
    if not (isinstance(u, torch.Tensor) and u.is_floating_point()):
        raise ValueError(f"u must be a floating tensor, got "
                         f"{getattr(u, 'dtype', type(u).__name__)}")
    if bool(torch.isnan(u).any()):
        raise ValueError(f"u must be a number in [-inf, inf] in every entry, got "
                         f"{int(torch.isnan(u).sum())} NaN entries")
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def phi(u: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0) -> torch.Tensor:
    """Homogeneous (leaky) ReLU phi(u) = c_+ max(u, 0) + c_- min(u, 0) (c_- = 0: ReLU)."""
    _check_phi(u, c_minus, c_plus)
    return c_plus * torch.clamp(u, min=0) + c_minus * torch.clamp(u, max=0)


def phi_prime(u: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0) -> torch.Tensor:
    """phi'(u) = c_- 1[u<0] + c_+ 1[u>0] (0 at the kink, a null set)."""
    _check_phi(u, c_minus, c_plus)
    one = torch.ones_like(u)
    return torch.where(u > 0, c_plus * one, torch.where(u < 0, c_minus * one, 0.0 * one))


def _mean_se(values: torch.Tensor, dim=0):
    n = values.shape[dim]
    return values.mean(dim), values.std(dim, unbiased=True) / math.sqrt(n)


def _check_node_inputs(where, w, U_C, u_q, x, g, c_minus, c_plus):
    """w (K, d) or (d,), U_C (d, M), u_q (d,), x (N, M) with N >= 2, g (N,): finite, matching."""
    wa = chk.finite_array("w", w, ndim=(1, 2))
    for name, t, nd in (("U_C", U_C, 2), ("u_q", u_q, 1), ("x", x, 2), ("g", g, 1)):
        if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() == nd):
            raise ValueError(f"{where}: {name} must be a floating {nd}-d tensor, got "
                             f"{chk.describe(t)}")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{where}: {name} must be finite")
    d, m = U_C.shape
    if (wa.shape[-1] != d or u_q.shape != (d,) or x.shape[1] != m or x.shape[0] < 2
            or g.shape != (x.shape[0],)):
        raise ValueError(f"{where}: shape mismatch: w {wa.shape} (.., d), U_C {tuple(U_C.shape)} "
                         f"(d, M), u_q {tuple(u_q.shape)} (d,), x {tuple(x.shape)} (N >= 2, M), "
                         f"g {tuple(g.shape)} (N,)")
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def eqn2_gradient(w: torch.Tensor, U_C: torch.Tensor, u_q: torch.Tensor, x: torch.Tensor,
                  g: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0):
    """Eqn 2 literally: w_dot = E[g phi'(w^T f) f], f = U_C x + u_q (uniform attention b = x).
    w: (K, d) parameter sets (batched).  Returns a dict with w_dot (K, d) and, projected per sample,
    v_dot = U_C^T w_dot (K, M), xi_dot = u_q^T w_dot (K,), each with its MC standard error."""
    _check_node_inputs("eqn2_gradient", w, U_C, u_q, x, g, c_minus, c_plus)
    w = torch.atleast_2d(torch.as_tensor(w, dtype=torch.float64))
    d, m = U_C.shape
    if w.shape[1] != d or x.ndim != 2 or x.shape[1] != m or g.shape != (x.shape[0],):
        raise ValueError(f"shape mismatch: w {tuple(w.shape)}, U_C {tuple(U_C.shape)}, "
                         f"x {tuple(x.shape)}, g {tuple(g.shape)}")
    f = x @ U_C.T + u_q  # (N, d)
    n = x.shape[0]
    coef = g[None, :] * phi_prime(w @ f.T, c_minus, c_plus)  # (K, N): g h'
    wdot = coef @ f / n
    pf = f @ U_C  # per-sample U_C^T f
    pq = f @ u_q  # per-sample u_q^T f
    vdot = coef @ pf / n
    xdot = coef @ pq / n

    def se(feat, mean):
        second = (coef ** 2) @ (feat ** 2) / n
        return torch.sqrt(torch.clamp(second - mean ** 2, min=0) * n / (n - 1) / n)

    return {"w_dot": wdot, "w_dot_se": se(f, wdot), "v_dot": vdot, "v_dot_se": se(pf, vdot),
            "xi_dot": xdot, "xi_dot_se": se(pq[:, None], xdot[..., None])[..., 0]}


def per_node_objective(w: torch.Tensor, U_C, u_q, x, g, c_minus: float = 0.0, c_plus: float = 1.0):
    """The per-hidden-node objective of App. A.1, J(w) = E[g phi(w^T f)] (MC average)."""
    _check_node_inputs("per_node_objective", w, U_C, u_q, x, g, c_minus, c_plus)
    f = x @ U_C.T + u_q
    return (g[None, :] * phi(torch.atleast_2d(w) @ f.T, c_minus, c_plus)).mean(1)


def lemma1_expectations(v: torch.Tensor, xi: torch.Tensor, x: torch.Tensor, psi):
    """MC estimates of (E[x psi(v^T x + xi)], E[psi(v^T x + xi)]) for K parameter sets.
    v: (K, M), xi: (K,), psi: callable on tensors.  Returns means (K, M), (K,) and their SEs."""
    chk.finite_array("v", v, ndim=(1, 2))
    chk.finite_array("xi", xi, ndim=(0, 1))
    if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() == 2
            and x.shape[0] >= 2 and bool(torch.isfinite(x).all())):
        raise ValueError(f"x must be a finite floating tensor (N >= 2, M), got "
                         f"{chk.describe(x)}")
    chk.function("psi", psi)
    v = torch.atleast_2d(torch.as_tensor(v, dtype=torch.float64))
    xi = torch.atleast_1d(torch.as_tensor(xi, dtype=torch.float64))
    if v.shape[1] != x.shape[1] or xi.shape != (v.shape[0],):
        raise ValueError(f"shape mismatch: v {tuple(v.shape)}, xi {tuple(xi.shape)}, x {tuple(x.shape)}")
    if torch.any(torch.linalg.norm(v, dim=1) == 0):
        raise ValueError("v must be nonzero (Lemma 1 assumes v != 0)")
    n = x.shape[0]
    p = psi(v @ x.T + xi[:, None])  # (K, N)
    ex = p @ x / n
    ep = p.mean(1)
    ex_se = torch.sqrt(torch.clamp((p ** 2) @ (x ** 2) / n - ex ** 2, min=0) / (n - 1))
    ep_se = p.std(1, unbiased=True) / math.sqrt(n)
    return ex, ep, ex_se, ep_se
