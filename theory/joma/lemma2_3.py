"""Appendix A.3: Lemma 2 (Eqns 47-49) and Lemma 3 (Eqns 50-59).  Notation: theory.joma.isotropic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize

from theory import validate as chk
from theory.joma._checks import _callable, _fin, _scalar
from theory.joma.theorem3 import _check_centers, printed_eqn50_rhs


def F_lemma2(r: float, theta1: Callable, theta2: Callable, include_constant: bool = True,
             breaks=()) -> float:
    """Eqn 49: F(r) = theta2(0) + int_0^r theta1 (by quadrature).  `breaks`: points where
    theta1 has a kink (for the ball, r = +-sigma, where -r crosses the edge of the support);
    adaptive quadrature loses its accuracy across an unflagged kink."""
    _scalar("r", r)
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    chk.flag("include_constant", include_constant)
    if isinstance(breaks, (str, bytes)) or not hasattr(breaks, "__iter__"):
        raise ValueError(f"breaks must be a sequence of finite numbers (kinks of theta1), got "
                         f"{breaks!r}")
    _fin("breaks", list(breaks), ndim=1)
    pts = sorted(b for b in breaks if min(0.0, r) < b < max(0.0, r))
    val, _ = integrate.quad(theta1, 0.0, r, epsabs=1e-13, epsrel=1e-12, limit=400,
                            points=pts or None)
    return val + (theta2(0.0) if include_constant else 0.0)


def lemma3_lhs_printed(v, xi, centers, a, theta1, theta2) -> float:
    """||v|| v^T v_dot + ||v|| xi xi_dot under the printed dynamics Eqn 50 (Eqn 53 rearranged)."""
    vd, xd = printed_eqn50_rhs(v, xi, centers, a, theta1, theta2)
    nv = np.linalg.norm(v)
    return float(nv * (np.asarray(v) @ vd) + nv * xi * xd)


def lemma3_rhs(v, xi, centers, a, F: Callable) -> float:
    """sum_j a_j F(r_j)."""
    _check_centers(_fin("v", v, ndim=1), xi, centers, a)
    _callable("F", F)
    r = np.atleast_2d(np.asarray(centers, float)) @ np.asarray(v, float) + xi
    return float(sum(aj * F(float(rj)) for aj, rj in zip(np.asarray(a, float), r)))


def mean_residual_H(r, theta1, theta2) -> float:
    """H(r) = F(r)/theta1(r) = r + theta2(r)/theta1(r) (homogeneous phi; equals E[y + r | y > -r]
    for ReLU).  Two-cluster stationary points of Eqn 5 need H(r_+) = H(r_-), r_+ != r_-."""
    _scalar("r", r)
    chk.magnitude("r", r, 1e100, "r + theta2/theta1 loses every digit beyond")
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = theta1(r)
        return float(r + theta2(r) / t1) if t1 > 0 else float("inf")


def mean_residual_argmin(theta1, theta2, lo: float, hi: float) -> float:
    """argmin of H on [lo, hi] (bounded scalar minimisation)."""
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    _scalar("lo", lo)
    chk.magnitude("lo", lo, 1e100, "H loses every digit beyond")
    _scalar("hi", hi, lo=float(lo), lo_open=True)
    chk.magnitude("hi", hi, 1e100, "H loses every digit beyond")
    res = optimize.minimize_scalar(lambda r: mean_residual_H(r, theta1, theta2), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-10})
    return float(res.x)


def two_cluster_stationary_point(x_plus, x_minus, a_plus, r_plus, theta1, theta2,
                                 bracket=(-1e3, None)):
    """Construct a stationary point of the printed Eqn 5 / Eqn 50 with two clusters (ReLU-type
    theta).  Stationarity forces v = lam (x_+ - x_-), a_+ theta1(r_+) = -a_- theta1(r_-) and
    H(r_+) = H(r_-).  Given r_+ (on the increasing branch of H), find r_- on the other branch;
    returns (v, xi, a_minus, r_minus) or None if H is monotone (no such r_-)."""
    xpa, xma = _fin("x_plus", x_plus, ndim=1), _fin("x_minus", x_minus, ndim=1)
    if xpa.shape != xma.shape or np.array_equal(xpa, xma):
        raise ValueError(f"x_plus and x_minus must be two different points of one dimension, got "
                         f"shapes {xpa.shape}, {xma.shape}")
    _scalar("a_plus", a_plus)
    if a_plus == 0:
        raise ValueError("a_plus must be nonzero (kappa = a_+ theta1(r_+) divides)")
    _scalar("r_plus", r_plus)
    chk.magnitude("r_plus", r_plus, 1e100, "H loses every digit beyond")
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    if isinstance(bracket, (str, bytes)) or not hasattr(bracket, "__len__") or len(bracket) != 2:
        raise ValueError(f"bracket must be a pair (lo, None) with lo finite < 0, got {bracket!r}")
    _scalar("bracket[0]", bracket[0], hi=0, hi_open=True)
    xp, xm = np.asarray(x_plus, float), np.asarray(x_minus, float)
    Hp = mean_residual_H(r_plus, theta1, theta2)
    g = lambda r: mean_residual_H(r, theta1, theta2) - Hp
    res = optimize.minimize_scalar(lambda r: mean_residual_H(r, theta1, theta2),
                                   bounds=(bracket[0] / 10, r_plus), method="bounded",
                                   options={"xatol": 1e-10})
    rmin = float(res.x)
    if not (g(rmin) < 0 and rmin < r_plus - 1e-6):
        return None
    lo = rmin
    while g(lo) < 0:
        lo = 2 * lo - 1.0
        if lo < bracket[0]:
            return None
    r_minus = optimize.brentq(g, lo, rmin, xtol=1e-14, rtol=1e-14, maxiter=500)
    a_minus = -a_plus * theta1(r_plus) / theta1(r_minus)
    kappa = a_plus * theta1(r_plus)
    S = a_plus * theta2(r_plus) + a_minus * theta2(r_minus)
    D = xp - xm
    lam = -S / (kappa * (D @ D))
    v = lam * D
    xi = r_plus - v @ xp
    return v, float(xi), float(a_minus), float(r_minus)
