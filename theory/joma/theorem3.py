"""Section 4 / Appendix A.3: Theorem 3 (Eqn 5) and the xi dynamics (Eqn 50).  Notation:
theory.joma.isotropic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from theory import validate as chk
from theory.joma._checks import _callable, _fin, _scalar
from theory.joma.isotropic import Isotropic, Psi, _dist_psi
from theory.joma.lemma1 import _check_v, lemma1_corrected
from theory.joma.theta import theta_unit


def _check_centers(v, xi, centers, a):
    _scalar("xi", xi)
    chk.magnitude("xi", xi, 1e100, "theta's quadrature overflows beyond")
    C = np.atleast_2d(_fin("centers", centers, ndim=(1, 2)))
    if C.shape[1] != np.shape(v)[0]:
        raise ValueError(f"centers must be (c, n) with n = len(v) = {np.shape(v)[0]}, got "
                         f"{C.shape}")
    if _fin("a", a, ndim=1).shape != (C.shape[0],):
        raise ValueError(f"a must have one weight per center ({C.shape[0]}), got shape "
                         f"{np.shape(a)}")


def printed_eqn50_rhs(v, xi, centers, a, theta1: Callable, theta2: Callable):
    """Eqns 5/50 as printed: v_dot = (1/||v||) sum a_c theta1(r_c) xbar_c + (1/||v||^3) sum a_c
    theta2(r_c) v, xi_dot = (1/||v||) sum a_c theta1(r_c)."""
    v = _check_v(v)
    _check_centers(v, xi, centers, a)
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    C = np.atleast_2d(np.asarray(centers, float))
    a = np.asarray(a, float)
    nv = np.linalg.norm(v)
    r = C @ v + xi
    t1 = np.array([theta1(float(x)) for x in r])
    t2 = np.array([theta2(float(x)) for x in r])
    return (a * t1) @ C / nv + np.sum(a * t2) * v / nv ** 3, float(np.sum(a * t1)) / nv


def theorem3_printed(v, xi, centers, a, dist: Isotropic, psi: Psi):
    """Eqn 5 with the literal (unit-marginal) theta_1, theta_2 of Eqns 41-42."""
    _dist_psi(dist, psi)
    return printed_eqn50_rhs(v, xi, centers, a, lambda r: theta_unit(r, dist, psi)[0],
                             lambda r: theta_unit(r, dist, psi)[1])


def theorem3_corrected(v, xi, centers, a, dist: Isotropic, psi: Psi):
    """sum_c a_c (corrected Lemma 1 for component c), full-space isotropy (R = I):
    v_dot = sum_c a_c [theta_1^y(r_c) xbar_c + theta_2^y(r_c) v/||v||^2], xi_dot = sum a_c theta_1^y."""
    v = _check_v(v)
    _check_centers(v, xi, centers, a)
    _dist_psi(dist, psi)
    C = np.atleast_2d(np.asarray(centers, float))
    a = np.asarray(a, float)
    eye = np.eye(len(v))
    vd, xd = np.zeros_like(v), 0.0
    for ac, xb in zip(a, C):
        ex, ep = lemma1_corrected(v, xi, xb, eye, dist, psi)
        vd, xd = vd + ac * ex, xd + ac * ep
    return vd, xd
