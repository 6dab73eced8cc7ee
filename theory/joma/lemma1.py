"""Appendix A.3: Lemma 1 (Eqn 24), printed and corrected.  Notation: theory.joma.isotropic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from theory import validate as chk
from theory.joma._checks import _callable, _fin, _scalar
from theory.joma.isotropic import Isotropic, Psi, _dist_psi
from theory.joma.theta import theta_y


def _check_v(v):
    _fin("v", v, ndim=1)
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1 or not np.all(np.isfinite(v)):
        raise ValueError("v must be a finite 1-D vector")
    if not np.linalg.norm(v) > 0:
        raise ValueError("v must be nonzero (Lemma 1 assumes v != 0)")
    return v


def _check_xbar_R(v, xi, xbar, R):
    """xi a finite number, xbar (n,) and R (n, m) finite, n = len(v)."""
    _scalar("xi", xi)
    chk.magnitude("xi", xi, 1e100, "theta's quadrature overflows beyond")
    xb = _fin("xbar", xbar, ndim=1)
    Ra = _fin("R", R, ndim=2)
    n = np.shape(v)[0]
    if xb.shape != (n,) or Ra.shape[0] != n:
        raise ValueError(f"xbar must be ({n},) and R ({n}, m) for v of length {n}, got {xb.shape} "
                         f"and {Ra.shape}")


def lemma1_printed(v, xi, xbar, R, theta1: Callable, theta2: Callable):
    """Eqn 24 as printed: (E[x psi], E[psi]) = (theta1(r)/||v|| xbar + theta2(r)/||v||^3 R R^T v,
    theta1(r)/||v||), r = v^T xbar + xi."""
    v = _check_v(v)
    _check_xbar_R(v, xi, xbar, R)
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    xbar, R = np.asarray(xbar, float), np.asarray(R, float)
    nv = np.linalg.norm(v)
    r = float(v @ xbar + xi)
    t1, t2 = theta1(r), theta2(r)
    return t1 / nv * xbar + t2 / nv ** 3 * (R @ (R.T @ v)), t1 / nv


def lemma1_corrected(v, xi, xbar, R, dist: Isotropic, psi: Psi):
    """Corrected Eqn 24: E[psi] = theta_1^y(r; k), E[x psi] = theta_1^y xbar + theta_2^y v_R/k^2,
    v_R = R R^T v, k = ||v_R||, theta^y with the density of y = v^T (x - xbar)."""
    v = _check_v(v)
    _check_xbar_R(v, xi, xbar, R)
    _dist_psi(dist, psi)
    xbar, R = np.asarray(xbar, float), np.asarray(R, float)
    vR = R @ (R.T @ v)
    k = float(np.linalg.norm(vR))
    r = float(v @ xbar + xi)
    t1, t2 = theta_y(r, k, dist, psi)
    return t1 * xbar + t2 * vR / k ** 2, t1


def lemma1_printed_alt(v, xi, xbar, R, dist: Isotropic, psi: Psi):
    """Eqn 24 as printed under the alternative reading (p_n = density of y' = v^T x')."""
    _check_xbar_R(_check_v(v), xi, xbar, R)
    _dist_psi(dist, psi)
    vR = np.asarray(R, float) @ (np.asarray(R, float).T @ _check_v(v))
    k = float(np.linalg.norm(vR))
    return lemma1_printed(v, xi, xbar, R, lambda r: theta_y(r, k, dist, psi)[0],
                          lambda r: theta_y(r, k, dist, psi)[1])


def linear_prediction(xbar, a=None):
    """Negative control: the linear-activation case (psi = 1, theta_1 = 1, theta_2 = 0)."""
    xb = np.atleast_2d(_fin("xbar", xbar, ndim=(1, 2)))
    if a is not None and _fin("a", a, ndim=1).shape != (len(xb),):
        raise ValueError(f"a must have one weight per center ({len(xb)}), got shape {np.shape(a)}")
    xbar = np.atleast_2d(np.asarray(xbar, float))
    a = np.ones(len(xbar)) if a is None else np.asarray(a, float)
    return a @ xbar, float(np.sum(a))
