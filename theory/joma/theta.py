"""Appendix A.3, Eqns 41-42: theta_1, theta_2 by quadrature (any psi, any family) and in closed
form (step psi).  Notation and the two readings: theory.joma.isotropic.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import sympy as sp
from scipy import integrate, special

from theory import validate as chk
from theory.joma._checks import _fin, _scalar
from theory.joma.isotropic import Isotropic, Psi, _dist_psi


def _quad_split(fn, a, b, cut, scale):
    """int_a^b fn, split at the kink/transition `cut`, at the density's centre 0 and at
    +-10, +-1e3 `scale` (so that quad never has to find the mass of a far-away feature)."""
    pts = {cut, 0.0, -10 * scale, 10 * scale, -1e3 * scale, 1e3 * scale}
    edges = [a] + sorted(p for p in pts if a < p < b) + [b]
    tot = 0.0
    for lo, hi in itertools.pairwise(edges):
        val, _ = integrate.quad(fn, lo, hi, epsabs=1e-14, epsrel=1e-11, limit=400)
        tot += val
    return tot


def theta_y(r: float, k: float, dist: Isotropic, psi: Psi) -> tuple[float, float]:
    """theta_1^y(r; k) = int psi(k s + r) p_n(s) ds and theta_2^y(r; k) = int k s psi(k s + r)
    p_n(s) ds, by 1-D quadrature; k = 1 gives the literal (unit-marginal) Eqns 41-42."""
    _scalar("k = ||R R^T v||", k, lo=0, lo_open=True)
    _scalar("r", r)
    chk.magnitude("r", r, 1e100, "the quadrature overflows beyond")
    chk.number("k = ||R R^T v||", k, lo=1e-100, hi=1e100)
    _dist_psi(dist, psi)
    a, b = dist.support()
    cut = -r / k  # psi's kink / jump, and the centre of its transition for smooth psi
    pdf, ps = dist.pdf_scalar(), psi.scalar()
    f2 = lambda s: k * s * ps(k * s + r) * pdf(s)
    if psi.kind == "step":
        up = 1.0 - float(dist.cdf(cut))
        t1 = psi.c_minus * (1.0 - up) + psi.c_plus * up
        return t1, _quad_split(f2, a, b, cut, dist.sigma)
    f1 = lambda s: ps(k * s + r) * pdf(s)
    return _quad_split(f1, a, b, cut, dist.sigma), _quad_split(f2, a, b, cut, dist.sigma)


def theta_unit(r: float, dist: Isotropic, psi: Psi) -> tuple[float, float]:
    """Literal Eqns 41-42 with p_n the unit-direction marginal."""
    _scalar("r", r)
    _dist_psi(dist, psi)
    return theta_y(r, 1.0, dist, psi)


def theta_step_closed(r, dist: Isotropic, c_minus: float = 0.0, c_plus: float = 1.0):
    """Closed forms for step psi (ReLU / leaky ReLU), literal reading:
    theta_1 = c_- P(s < -r) + c_+ P(s > -r), theta_2 = (c_+ - c_-) T(r), T(r) = int_{-r}^inf s p_n."""
    _fin("r", r)
    _dist_psi(dist)
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)
    r = np.asarray(r, dtype=np.float64)
    up = dist.cdf(r)  # P(s > -r) = P(s < r)
    return c_minus * (1 - up) + c_plus * up, (c_plus - c_minus) * dist.upper_first_moment(r)


@cache
def theta_gauss_sym():
    """Sympy closed forms (theta_1, theta_2) for psi = c_- 1[x<0] + c_+ 1[x>0] and N(0, sigma^2):
    theta_1 = c_- (1 - Phi(r/sigma)) + c_+ Phi(r/sigma), theta_2 = (c_+ - c_-) sigma phi(r/sigma).
    Returns (theta1, theta2, (r, sigma, c_minus, c_plus))."""
    r = sp.Symbol("r", real=True)
    sg = sp.Symbol("sigma", positive=True)
    cm, cp = sp.symbols("c_minus c_plus", real=True)
    Phi = (1 + sp.erf(r / (sg * sp.sqrt(2)))) / 2
    t1 = cm * (1 - Phi) + cp * Phi
    t2 = (cp - cm) * sg / sp.sqrt(2 * sp.pi) * sp.exp(-r ** 2 / (2 * sg ** 2))
    return t1, t2, (r, sg, cm, cp)


def _lamb(i):
    t1, t2, syms = theta_gauss_sym()
    return sp.lambdify(syms, (t1, t2)[i], modules=[{"erf": special.erf}, "numpy"])


theta1_gauss = chk.closed_form(_lamb(0), ("r", "sigma", "c_minus", "c_plus"), positive=("sigma",),
                               what="theta1_gauss")  # theta1_gauss(r, sigma, c_minus, c_plus)
theta2_gauss = chk.closed_form(_lamb(1), ("r", "sigma", "c_minus", "c_plus"), positive=("sigma",),
                               what="theta2_gauss")
