"""Section 4 / Appendix A.3: nonlinear activations, Lemmas 1-4, Theorem 3.

JoMA (Tian et al., ICLR 2024), Sec. 4 and App. A.3-A.4: nonlinear MLP with uniform attention.

Closed forms and 1-D quadratures for the quantities of Lemma 1 (Eqn 24, theta_1/theta_2 of
Eqns 41-42), Theorem 3 (Eqn 5), Lemma 2 (Eqns 47-49), Lemma 3 (Eqns 50-54) and Lemma 4 (Eqn 61),
each in its printed form and, where the audit refutes it, a corrected form.  Pure math: numpy,
scipy, sympy; no torch.

Notation.  An isotropic distribution in span(R) (dimension n) is x = xbar + R z with z isotropic in
R^n.  Its *unit-direction marginal* p_n(s) is the density of s = e^T z for a unit vector e (Eqns
34-37 build it from the radial density p_0).  A "psi" is the derivative phi' of the activation.
Families implemented: Gaussian N(0, sigma^2 I_n), multivariate Student-t (nu, scale sigma) and the
uniform distribution in the n-ball of radius rho.

Readings of theta_1, theta_2 (Eqns 41-42):
  * "unit" (literal, Eqns 32-37): p_n is the unit-direction marginal; theta_i(r) = int psi(s+r)
    [s] p_n(s) ds.  For ReLU and N(0, sigma^2): theta_1 = Phi(r/sigma), theta_2 = sigma phi(r/sigma).
  * "y" (alternative, the sentence after Eqn 33): p_n is the density of y' = v^T x', i.e. of
    k s with k = ||R R^T v||, so theta_i^y(r; k) = int psi(k s + r) [k s] p_n(s) ds.
The corrected Lemma 1 is E[psi] = theta_1^y(r; k), E[x psi] = theta_1^y xbar + theta_2^y v_R / k^2.

This module: the activations' derivatives psi = phi' and the isotropic families (Eqns 32-37).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate, special, stats

from theory import validate as chk
from theory.joma._checks import _scalar


# --------------------------------------------------------------------------------------------
# Activations' derivatives psi = phi'
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Psi:
    """psi = phi'.  kind: "step" (phi'(x) = c_minus 1[x<0] + c_plus 1[x>0]: ReLU for (0, 1), leaky
    ReLU otherwise; phi(x) = c_plus max(x,0) + c_minus min(x,0) is 1-homogeneous), "sigmoid"
    (phi = softplus), "tanh" (phi = log cosh; takes negative values), "bump" (exp(-x^2), not
    monotone)."""

    kind: str = "step"
    c_minus: float = 0.0
    c_plus: float = 1.0

    def __post_init__(self):
        if self.kind not in ("step", "sigmoid", "tanh", "bump"):
            raise ValueError(f"psi kind must be step, sigmoid, tanh or bump, got {self.kind!r}")
        chk.number("c_minus", self.c_minus)
        chk.number("c_plus", self.c_plus)

    def __call__(self, x):
        if isinstance(x, (str, bytes)) or x is None:
            raise ValueError(f"x must be a number or an array of numbers, got {x!r}")
        x = np.asarray(x, dtype=np.float64)
        if np.isnan(x).any():
            raise ValueError(f"x must be a number in [-inf, inf] in every entry, got "
                             f"{int(np.isnan(x).sum())} NaN entries")
        if self.kind == "step":
            return np.where(x > 0, self.c_plus, np.where(x < 0, self.c_minus, 0.0))
        if self.kind == "sigmoid":
            return special.expit(x)
        if self.kind == "tanh":
            return np.tanh(x)
        return np.exp(-x * x)

    def scalar(self) -> Callable[[float], float]:
        """A fast scalar version of psi (for quadrature integrands)."""
        if self.kind == "step":
            cm, cp = self.c_minus, self.c_plus
            return lambda x: cp if x > 0 else (cm if x < 0 else 0.0)
        if self.kind == "sigmoid":
            return lambda x: 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
        if self.kind == "tanh":
            return math.tanh
        return lambda x: math.exp(-x * x)

    @property
    def homogeneous(self) -> bool:
        return self.kind == "step"


RELU = Psi("step", 0.0, 1.0)
MAX_DIM = 10 ** 6  # dimension n of an isotropic family (its closed forms use Gamma(n/2))


_UNSET = object()


def _dist_psi(dist=_UNSET, psi=_UNSET):
    """dist an Isotropic and psi a Psi (each checked when passed)."""
    if dist is not _UNSET and not isinstance(dist, Isotropic):
        raise ValueError(f"dist must be an Isotropic, got {type(dist).__name__}")
    if psi is not _UNSET and not isinstance(psi, Psi):
        raise ValueError(f"psi must be a Psi, got {type(psi).__name__}")


# --------------------------------------------------------------------------------------------
# Isotropic families
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Isotropic:
    """An isotropic distribution of z in R^n. family: gaussian (scale sigma), student_t (nu,
    scale sigma), ball (uniform in the ball of radius sigma)."""

    family: str
    n: int
    sigma: float = 1.0
    nu: float = 5.0

    def __post_init__(self):
        if self.family not in ("gaussian", "student_t", "ball"):
            raise ValueError(f"family must be gaussian, student_t or ball, got {self.family!r}")
        chk.integer("dimension n", self.n, lo=1, hi=MAX_DIM)
        chk.number("sigma", self.sigma, lo=0, lo_open=True)
        if self.family == "student_t":
            chk.number("nu (finite mean: > 1)", self.nu, lo=1, lo_open=True)

    # unit-direction marginal p_n(s) and its CDF
    def pdf(self, s):
        s = np.asarray(s, dtype=np.float64)
        if self.family == "gaussian":
            return stats.norm.pdf(s, scale=self.sigma)
        if self.family == "student_t":
            return stats.t.pdf(s, self.nu, scale=self.sigma)
        rho, n = self.sigma, self.n
        c = math.exp(math.lgamma(n / 2 + 1) - math.lgamma((n + 1) / 2)) / (math.sqrt(math.pi) * rho)
        inside = np.clip(1.0 - (s / rho) ** 2, 0.0, None)
        return np.where(np.abs(s) < rho, c * inside ** ((n - 1) / 2), 0.0)

    def pdf_scalar(self) -> Callable[[float], float]:
        """A fast scalar version of pdf (for quadrature integrands)."""
        sg, n = self.sigma, self.n
        if self.family == "gaussian":
            c = 1.0 / (sg * math.sqrt(2 * math.pi))
            return lambda s: c * math.exp(-0.5 * (s / sg) ** 2)
        if self.family == "student_t":
            nu = self.nu
            c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / (math.sqrt(nu * math.pi) * sg)
            return lambda s: c * (1.0 + (s / sg) ** 2 / nu) ** (-(nu + 1) / 2)
        c = math.exp(math.lgamma(n / 2 + 1) - math.lgamma((n + 1) / 2)) / (math.sqrt(math.pi) * sg)
        e = (n - 1) / 2
        return lambda s: c * max(1.0 - (s / sg) ** 2, 0.0) ** e if abs(s) < sg else 0.0

    def cdf(self, s):
        s = np.asarray(s, dtype=np.float64)
        if self.family == "gaussian":
            return stats.norm.cdf(s, scale=self.sigma)
        if self.family == "student_t":
            return stats.t.cdf(s, self.nu, scale=self.sigma)
        # s = rho (2B - 1), B ~ Beta((n+1)/2, (n+1)/2)
        a = (self.n + 1) / 2
        u = np.clip((s / self.sigma + 1) / 2, 0.0, 1.0)
        return special.betainc(a, a, u)

    def upper_first_moment(self, r):
        """T(r) := int_{-r}^{inf} s p_n(s) ds = int_{|r|}^{inf} s p_n(s) ds (symmetry)."""
        r = np.abs(np.asarray(r, dtype=np.float64))
        if self.family == "gaussian":
            return self.sigma ** 2 * stats.norm.pdf(r, scale=self.sigma)
        if self.family == "student_t":
            nu, sg = self.nu, self.sigma
            u = r / sg
            return sg * (nu + u * u) / (nu - 1) * stats.t.pdf(u, nu)
        rho, n = self.sigma, self.n
        c = math.exp(math.lgamma(n / 2 + 1) - math.lgamma((n + 1) / 2)) / (math.sqrt(math.pi) * rho)
        inside = np.clip(1.0 - (r / rho) ** 2, 0.0, None)
        return c * rho ** 2 / (n + 1) * inside ** ((n + 1) / 2)

    def std(self) -> float:
        if self.family == "gaussian":
            return self.sigma
        if self.family == "student_t":
            if self.nu <= 2:
                return float("inf")
            return self.sigma * math.sqrt(self.nu / (self.nu - 2))
        return self.sigma / math.sqrt(self.n + 2)

    def support(self) -> tuple[float, float]:
        return (-self.sigma, self.sigma) if self.family == "ball" else (-np.inf, np.inf)

    def p0(self, rho):
        """Radial density p_0(||z||) = p(z) in R^n (the p_0 of the proof of Lemma 1)."""
        rho = np.asarray(rho, dtype=np.float64)
        n, sg = self.n, self.sigma
        if self.family == "gaussian":
            return (2 * math.pi * sg ** 2) ** (-n / 2) * np.exp(-rho ** 2 / (2 * sg ** 2))
        if self.family == "student_t":
            nu = self.nu
            lc = (math.lgamma((nu + n) / 2) - math.lgamma(nu / 2) - n / 2 * math.log(nu * math.pi)
                  - n * math.log(sg))
            return math.exp(lc) * (1 + rho ** 2 / (nu * sg ** 2)) ** (-(nu + n) / 2)
        vol = math.pi ** (n / 2) * sg ** n / math.gamma(n / 2 + 1)
        return np.where(rho < sg, 1.0 / vol, 0.0)


def p_n_from_p0(dist: Isotropic, y: float) -> float:
    """Eqn 36: p_n(y) = (n-1) pi^{(n-1)/2} / Gamma((n+1)/2) int_0^inf p_0(sqrt(y^2+l^2)) l^{n-2} dl
    (n >= 2); p_n = p_0(|y|) for n = 1."""
    if not isinstance(dist, Isotropic):
        raise ValueError(f"dist must be an Isotropic, got {type(dist).__name__}")
    _scalar("y", y)
    n = dist.n
    if n == 1:
        return float(dist.p0(abs(y)))
    const = (n - 1) * math.pi ** ((n - 1) / 2) / math.gamma((n + 1) / 2)
    upper = math.sqrt(max(dist.sigma ** 2 - y * y, 0.0)) if dist.family == "ball" else np.inf
    if upper == 0.0:
        return 0.0
    val, _ = integrate.quad(lambda l: float(dist.p0(math.sqrt(y * y + l * l))) * l ** (n - 2),
                            0.0, upper, epsabs=1e-14, epsrel=1e-11, limit=200)
    return const * val
