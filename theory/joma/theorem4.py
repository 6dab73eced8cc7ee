"""Section 4 / Appendix A.4.1: Theorem 4, convergence speed of salient vs non-salient components:
F(r, r0, mu) = int_{r0}^{r} e^{-mu^2 x^2/2}/(1-x) dx (Eqn. 70), its mu-derivative (Eqns. 72-75),
zeta (Eqn. 76), M(r0) (Eqn. 77), F(r, r0, 0) (Eqn. 81), rho (Eqn. 84), lambda_jk (Eqn. 87) and
the Eqn. 8 prediction of the log-convergence ratio.  Lemmas 5-6: theory.joma.lemma5_6.
Pure math: no torch.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theory import validate as chk
from theory.joma._checks import _fin

x = sp.symbols("x", positive=True)
r, r0 = sp.symbols("r r_0", real=True)
mu = sp.symbols("mu", positive=True)

# Theorem 4 (proof, Eqns. 70-81)
F_integrand = sp.exp(-mu ** 2 * x ** 2 / 2) / (1 - x)                        # Eqn. 70
dF_dmu_integrand_eqn72 = -mu * x ** 2 * sp.exp(-mu ** 2 * x ** 2 / 2) / (1 - x)  # Eqn. 72
dF_dmu_integrand_eqn74 = mu * (1 + x) * sp.exp(-mu ** 2 * x ** 2 / 2) - mu * F_integrand  # 74
zeta_expr = (sp.sqrt(sp.pi / 2) * (sp.erf(r * mu / sp.sqrt(2)) - sp.erf(r0 * mu / sp.sqrt(2)))
             + (sp.exp(-r0 ** 2 * mu ** 2 / 2) - sp.exp(-r ** 2 * mu ** 2 / 2)) / mu)  # Eqn. 76
M_expr = sp.sqrt(2 * sp.pi) + sp.Max(2 * sp.Abs(r0), sp.Abs(r0) + 1)                 # Eqn. 77
F0_expr = sp.log((1 - r0) / (1 - r))                                                 # Eqn. 81

_MODS = ["scipy", "numpy"]
_zeta = sp.lambdify((r, r0, mu), zeta_expr, _MODS)
_M = sp.lambdify(r0, M_expr, _MODS)
_F0 = sp.lambdify((r, r0), F0_expr, _MODS)


def zeta(rv, r0v, muv):
    """Eqn. 76 (vectorised). mu > 0."""
    _fin("rv", rv)
    _fin("r0v", r0v)
    _fin("muv", muv, lo=0, lo_open=True)
    return _zeta(np.asarray(rv, float), np.asarray(r0v, float), np.asarray(muv, float))


def M_bound(r0v):
    """Eqn. 77: M(r0) = sqrt(2 pi) + max(2|r0|, |r0| + 1)."""
    _fin("r0v", r0v)
    r0v = np.asarray(r0v, dtype=np.float64)
    return math.sqrt(2 * math.pi) + np.maximum(2 * np.abs(r0v), np.abs(r0v) + 1)


def F0(rv, r0v):
    """Eqn. 81: F(r, r0, 0) = ln((1 - r0)/(1 - r))."""
    _same_side("rv", rv, "r0v", r0v)
    return _F0(np.asarray(rv, float), np.asarray(r0v, float))


_GL_X, _GL_W = np.polynomial.legendre.leggauss(80)
MU_MAX = 37.0       # e^{mu^2/2} is a finite float64 up to |mu| = 37.6
DELTA_MAX = 1e150   # delta^2 and mu^2 delta (2 - delta) stay finite


def _same_side(rn, rv, r0n, r0v):
    """r and r0 finite, broadcastable, with 1 not between them (1 - r, 1 - r0 nonzero, one sign)."""
    a, b = _fin(rn, rv), _fin(r0n, r0v)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(f"{rn} and {r0n} must broadcast, got shapes {np.shape(rv)} and "
                         f"{np.shape(r0v)}") from None
    if np.any((1 - a) * (1 - b) <= 0):
        raise ValueError(f"{rn} and {r0n} must be != 1 and on one side of 1 (the integrand "
                         f"1/(1-x) is singular at 1)")


def _deltas(dn, d, d0n, d0):
    """delta and delta0 finite, nonzero, of one sign, broadcastable."""
    a, b = _fin(dn, d), _fin(d0n, d0)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(f"{dn} and {d0n} must broadcast, got shapes {np.shape(d)} and "
                         f"{np.shape(d0)}") from None
    if np.any(a * b <= 0):
        raise ValueError(f"{dn} and {d0n} must be nonzero and of the same sign")


def F_delta(delta, delta0, muv, *, integrand_power: float = 2.0):
    """Eqn. 70 in delta = 1 - r coordinates, F = int_{delta}^{delta0} e^{-mu^2 (1-s)^2/2}/s ds,
    evaluated as  e^{-mu^2/2} ln(delta0/delta) + int_{delta}^{delta0} e^{-mu^2/2}
    expm1(mu^2 s (2-s)/2)/s ds  (smooth integrand, 80-point Gauss-Legendre), which keeps full
    relative precision when delta is tiny.  delta and delta0 must have the same sign (1 is not
    between r and r0).  Broadcasts over its arguments.

    integrand_power -- 2 is Eqn. 70; any other value p replaces e^{-mu^2 x^2/2} by
    e^{-mu^p |x|^p/2} (a deliberately wrong integrand for negative controls).
    """
    _deltas("delta", delta, "delta0", delta0)
    _fin("muv", muv)
    chk.number("integrand_power", integrand_power, lo=0, lo_open=True)
    chk.magnitude("muv", muv, MU_MAX, "e^{mu^2/2} overflows float64 beyond")
    chk.magnitude("delta", delta, DELTA_MAX, "delta^2 overflows float64 beyond")
    chk.magnitude("delta0", delta0, DELTA_MAX, "delta0^2 overflows float64 beyond")
    d, d0, m = np.broadcast_arrays(np.asarray(delta, float), np.asarray(delta0, float),
                                   np.asarray(muv, float))
    if np.any(d * d0 <= 0):
        raise ValueError("delta and delta0 must be nonzero and of the same sign")
    a, b = d[..., None], d0[..., None]
    s = 0.5 * (b - a) * _GL_X + 0.5 * (b + a)
    mm = m[..., None]
    if integrand_power == 2.0:
        smooth = np.exp(-mm ** 2 / 2) * np.expm1(mm ** 2 * s * (2 - s) / 2) / s
        log_part = np.exp(-m ** 2 / 2) * np.log(d0 / d)
    else:
        p = integrand_power
        smooth = (np.exp(-(mm * np.abs(1 - s)) ** p / 2) - np.exp(-mm ** p / 2)) / s
        log_part = np.exp(-m ** p / 2) * np.log(d0 / d)
    return log_part + 0.5 * (d0 - d) * np.sum(_GL_W * smooth, axis=-1)


def F_theorem4(rv, r0v, muv):
    """Eqn. 70, F(r, r0, mu) = int_{r0}^{r} e^{-mu^2 x^2/2}/(1-x) dx.
    The paper's name F is an alias of this function."""
    _same_side("rv", rv, "r0v", r0v)
    chk.magnitude("rv", rv, DELTA_MAX / 2, "(1 - r)^2 overflows float64 beyond")
    chk.magnitude("r0v", r0v, DELTA_MAX / 2, "(1 - r0)^2 overflows float64 beyond")
    return F_delta(1.0 - np.asarray(rv, float), 1.0 - np.asarray(r0v, float), muv)


# The paper's letter, kept as an alias: F is F_theorem4 (Eqn. 70).
F = F_theorem4


def rho_delta(delta, delta0, muv):
    """Eqn. 84: rho = F(1-delta, 1-delta0, mu) - e^{-mu^2/2} ln(delta0/delta)."""
    _deltas("delta", delta, "delta0", delta0)
    _fin("muv", muv)
    return F_delta(delta, delta0, muv) - np.exp(-np.asarray(muv, float) ** 2 / 2) * np.log(
        np.asarray(delta0, float) / np.asarray(delta, float))


def rho_limit_delta(delta0, muv):
    """lim_{delta -> 0} rho = int_0^{delta0} e^{-mu^2/2} expm1(mu^2 s(2-s)/2)/s ds (finite)."""
    if np.any(_fin("delta0", delta0) == 0):
        raise ValueError("delta0 must be finite and nonzero")
    return rho_delta(np.full(np.shape(delta0), 1e-300) * np.sign(delta0), delta0, muv)


def log_ratio(delta, delta0):
    """ln(delta(0)/delta(t))."""
    _deltas("delta", delta, "delta0", delta0)
    return np.log(np.asarray(delta0, float) / np.asarray(delta, float))


def lambda_jk(delta_j, delta_j0, mu_j, delta_k, delta_k0, mu_k):
    """Eqn. 87: lambda_jk = e^{-mu_j^2/2} ln(delta_j0/delta_j) - e^{-mu_k^2/2} ln(delta_k0/delta_k)."""
    _deltas("delta_j", delta_j, "delta_j0", delta_j0)
    _deltas("delta_k", delta_k, "delta_k0", delta_k0)
    _fin("mu_j", mu_j)
    _fin("mu_k", mu_k)
    return (np.exp(-np.asarray(mu_j, float) ** 2 / 2) * log_ratio(delta_j, delta_j0)
            - np.exp(-np.asarray(mu_k, float) ** 2 / 2) * log_ratio(delta_k, delta_k0))


def Lambda_jk(lam, mu_k, delta_k, delta_k0):
    """Theorem 4: Lambda_jk = lambda_jk e^{mu_k^2/2} / ln(delta_k0/delta_k)."""
    _fin("lam", lam)
    _fin("mu_k", mu_k)
    _deltas("delta_k", delta_k, "delta_k0", delta_k0)
    chk.magnitude("mu_k", mu_k, MU_MAX, "e^{mu_k^2/2} overflows float64 beyond")
    if np.any(np.asarray(delta_k, float) == np.asarray(delta_k0, float)):
        raise ValueError("delta_k must differ from delta_k0 (ln(delta_k0/delta_k) divides)")
    return lam * np.exp(np.asarray(mu_k, float) ** 2 / 2) / log_ratio(delta_k, delta_k0)


def eqn8_ratio(mu_j, mu_k, Lam, *, exponent: float = 0.5):
    """Eqn. 8's right-hand side e^{mu_j^2/2}/e^{mu_k^2/2} (1 + Lambda_jk).
    exponent -- 0.5 as printed; other values give wrong predictions for negative controls."""
    _fin("mu_j", mu_j)
    _fin("mu_k", mu_k)
    _fin("Lam", Lam)
    chk.number("exponent", exponent)
    mu_max = math.sqrt(700.0 / max(abs(exponent), 1e-300))
    chk.magnitude("mu_j", mu_j, mu_max, "e^{exponent (mu_j^2 - mu_k^2)} overflows float64 beyond")
    chk.magnitude("mu_k", mu_k, mu_max, "e^{exponent (mu_j^2 - mu_k^2)} overflows float64 beyond")
    return np.exp(exponent * (np.asarray(mu_j, float) ** 2 - np.asarray(mu_k, float) ** 2)) * (1 + Lam)


def lambda_bound(r0_j, r0_k):
    """The proof's C_jk = M(r_j(0)) + M(r_k(0))."""
    _fin("r0_j", r0_j)
    _fin("r0_k", r0_k)
    return M_bound(r0_j) + M_bound(r0_k)
