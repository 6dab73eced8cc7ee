"""Section 4 / Appendix A.4.1: Eqn. 7, Theorem 4, Lemmas 5-6, entropy and rank dynamics.

JoMA Section 4 / Appendix A.4.1: convergence speed of salient vs non-salient components.

Closed forms (sympy, lambdified to numpy/scipy) for
  * Lemma 5:  g(y) = (1 - e^{-y^2})/y, stationary-point equation (Eqn. 66), value there (Eqn. 67);
  * Lemma 6:  G(y) = e^{-y^2/2} int_0^y e^{x^2/2} dx = sqrt(2) Dawson(y/sqrt 2), and the
              intermediate bound G(y) <= sqrt(2) g(y/sqrt 2);
  * Theorem 4: F(r, r0, mu) = int_{r0}^{r} e^{-mu^2 x^2/2}/(1-x) dx (Eqn. 70), its mu-derivative
              (Eqns. 72-75), zeta (Eqn. 76), M(r0) (Eqn. 77), F(r, r0, 0) (Eqn. 81), rho (Eqn. 84),
              lambda_jk (Eqn. 87) and the Eqn. 8 prediction of the log-convergence ratio.
Pure math: no torch.

This module: Lemmas 5 and 6 (the bounds the proof of Theorem 4 uses); Theorem 4 itself:
theory.joma.theorem4.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import optimize, special

from theory import validate as chk
from theory.joma._checks import _fin

y = sp.symbols("y", positive=True)

# Lemma 5
g_expr = (1 - sp.exp(-y ** 2)) / y
g_prime_expr = sp.diff(g_expr, y)
eqn66_expr = sp.exp(-y ** 2) - 1 / (2 * y ** 2 + 1)           # = 0 at a stationary point
eqn67_expr = 2 * y / (2 * y ** 2 + 1)                          # g(y*) at a stationary point

# Lemma 6: G(y) = e^{-y^2/2} int_0^y e^{x^2/2} dx = sqrt(pi/2) e^{-y^2/2} erfi(y/sqrt 2)
G_expr = sp.sqrt(sp.pi / 2) * sp.exp(-y ** 2 / 2) * sp.erfi(y / sp.sqrt(2))
G_bound_expr = sp.sqrt(2) * g_expr.subs(y, y / sp.sqrt(2))   # = (2/y)(1 - e^{-y^2/2})

_MODS = ["scipy", "numpy"]
_g_sym = sp.lambdify(y, g_expr, _MODS)  # the sympy form (cancels for tiny y); numerics below
eqn66_residual = chk.closed_form(sp.lambdify(y, eqn66_expr, _MODS), ("y",),
                                 what="eqn66_residual (Eqn. 66)")
g_at_stationary = chk.closed_form(sp.lambdify(y, eqn67_expr, _MODS), ("y",),
                                  what="g_at_stationary (Eqn. 67)")
_G_bound_sym = sp.lambdify(y, G_bound_expr, _MODS)


def g_lemma5(yv):
    """Lemma 5's g(y) = (1 - e^{-y^2})/y, as -expm1(-y^2)/y (no cancellation for tiny y); y > 0.
    The paper's name g is an alias of this function."""
    _fin("yv", yv, lo=0, lo_open=True)
    yv = np.asarray(yv, dtype=np.float64)
    return -np.expm1(-yv * yv) / yv


def G_bound(yv):
    """sqrt(2) g(y/sqrt 2) = (2/y)(1 - e^{-y^2/2}) (Lemma 6's intermediate bound); y > 0."""
    _fin("yv", yv, lo=0, lo_open=True)
    yv = np.asarray(yv, dtype=np.float64)
    return -2.0 * np.expm1(-yv * yv / 2) / yv


def G_lemma6(yv):
    """Lemma 6's G(y) = sqrt(2) * Dawson(y / sqrt 2) (overflow-free form of G_expr).
    The paper's name G is an alias of this function."""
    _fin("yv", yv)
    return math.sqrt(2.0) * special.dawsn(np.asarray(yv, dtype=np.float64) / math.sqrt(2.0))


def lemma5_true_max() -> tuple[float, float]:
    """(y*, g(y*)): the true maximiser of g on y > 0, the positive root of Eqn. 66 (brentq),
    polished by a bounded scalar maximisation of g itself."""
    y_root = optimize.brentq(lambda t: float(eqn66_residual(t)), 0.5, 3.0, xtol=1e-15)
    res = optimize.minimize_scalar(lambda t: -float(g_lemma5(t)), bounds=(0.5, 3.0),
                                   method="bounded", options={"xatol": 1e-12})
    y_star = y_root if g_lemma5(y_root) >= -res.fun else float(res.x)
    return float(y_star), float(g_lemma5(y_star))


def lemma6_true_max() -> tuple[float, float]:
    """(y*, G(y*)): the maximiser of G on y >= 0 (G' = 1 - yG = 0), via brentq."""
    y_root = optimize.brentq(lambda t: 1.0 - t * float(G_lemma6(t)), 0.5, 3.0, xtol=1e-15)
    return float(y_root), float(G_lemma6(y_root))


# The paper's letters, kept as aliases: g is g_lemma5 (Lemma 5), G is G_lemma6 (Lemma 6).
g = g_lemma5
G = G_lemma6
