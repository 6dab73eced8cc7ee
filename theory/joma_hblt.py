"""JoMA (Tian et al., ICLR 2024), Section 5 and Appendix A.5: the hierarchical binary latent
tree HBLT(rho), in closed form (sympy, lambdified for numbers; no torch).

Conventions (the paper's, Section 5): the class label y_0 is the root, at layer s = L; binary
latents sit at layers s = L-1, ..., 1; the tokens (leaves) are at layer s = 0.  So L is the number
of edges from the root to a leaf, and a common latent ancestor (CLA) "of depth H" sits at layer
s = H, i.e. H edges above both tokens.  The CLA must be a binary latent (1 <= H <= L-1): the proof
of Theorem 5 needs a binary y_c with rho_{c|1} = rho^{L-1-H}.

Contents
  M(rho), p(rho)                  Definition 1 (Eqn 88 ff.)
  lemma7_residuals()              Lemma 7 (Eqn 89), every residual simplifies to 0
  lemma8_residuals(k)             Lemma 8 (Eqns 90-91) for a chain of k edges
  theorem5_expr(rho, rho0, H, L)  Theorem 5 / Eqn 108 as printed, as a function of rho_0
  theorem5_via_proof(...)         Eqns 93-97 + 107 (M D M^T), to check the algebra of the proof
  rho0_printed(q, p0)             rho_0 := p_{.|0}^T p_0 with p_{.|0} = [P(y_1=0|y_0=k)] (as printed)
  rho0_corrected(q, p0)           rho_0 := 2 p_{.|0}^T p_0 - 1 (what Eqn 102 actually uses)
  theorem5_printed / _corrected   numeric P[y_l=1|y_m=1] from (rho, q, p0, H, L)
  eq9_printed(H, L)               Eqn 9: 1 - H/L (+ O(eps^2) claimed)
  eq9_corrected(eps, H, L)        1 - H/L + H(2H-L)/(2L) eps (+ O(eps^2))
  eq9_second_order_coefficient    the eps^2 coefficient -H(2H-L)(4H-L-3)/(12L)
  eq9_exact_mp(eps, H, L)         Theorem 5 at rho = rho_0 = 1-eps in mpmath (no cancellation)
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

__all__ = [
    "rho", "rho0", "rho1", "rho2", "eps", "H", "L",
    "M", "p", "lemma7_residuals", "lemma8_residuals",
    "theorem5_expr", "theorem5_via_proof", "theorem5_numeric",
    "rho0_printed", "rho0_corrected", "theorem5_printed", "theorem5_corrected",
    "theorem5_alt_levels", "theorem5_alt_top_depth",
    "eq9_printed", "eq9_corrected", "eq9_second_order_coefficient", "eq9_series",
    "eq9_remainder_order", "eq9_exact_mp", "eq9_remainder_mp", "eq9_first_order_coefficient",
]

rho, rho0, rho1, rho2, eps = sp.symbols("rho rho_0 rho_1 rho_2 epsilon", real=True)
H, L = sp.symbols("H L", positive=True, integer=True)
_HALF = sp.Rational(1, 2)


# ------------------------------------------------------------------------------------------
# Definition 1, Lemma 7, Lemma 8
# ------------------------------------------------------------------------------------------
def M(r) -> sp.Matrix:
    """Definition 1: M(rho) = 1/2 [[1+rho, 1-rho], [1-rho, 1+rho]]; M(rho) = P_{beta|alpha}
    (Eqn 88, rows = child value 0/1, columns = parent value 0/1) in HBLT(rho) (Definition 2)."""
    return _HALF * sp.Matrix([[1 + r, 1 - r], [1 - r, 1 + r]])


def p(r) -> sp.Matrix:
    """Definition 1: p(rho) = 1/2 [1+rho, 1-rho]^T (the law [P(y=0), P(y=1)] of a binary y)."""
    return _HALF * sp.Matrix([1 + r, 1 - r])


def _zero(expr: sp.Matrix) -> sp.Matrix:
    return sp.simplify(sp.expand(expr))


def lemma7_residuals() -> dict[str, sp.Matrix]:
    """Lemma 7 (proof: Eqn 89) as residuals that must simplify to the zero matrix:
    symmetry M - M^T, M 1 - 1, M(r1) M(r2) - M(r1 r2), M(r1) p(r2) - p(r1 r2)."""
    one = sp.Matrix([1, 1])
    return {
        "symmetric": _zero(M(rho) - M(rho).T),
        "stochastic": _zero(M(rho) * one - one),
        "product": _zero(M(rho1) * M(rho2) - M(rho1 * rho2)),
        "vector": _zero(M(rho1) * p(rho2) - p(rho1 * rho2)),
    }


def lemma8_residuals(k: int) -> dict[str, sp.Matrix]:
    """Lemma 8 for a descendant chain alpha > beta_1 > ... > gamma of k edges with uncertainty
    parameters rho_1..rho_k: both the matrix product (Eqn 90) and the explicit sum over the
    intermediate latents (Eqn 91) equal M(rho_1 ... rho_k).  Residuals must simplify to 0."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k (chain length in edges) must be an int >= 1, got {k!r}")
    rs = sp.symbols(f"r1:{k + 1}", real=True)
    target = M(sp.Mul(*rs))
    prod = sp.eye(2)
    for r in rs:
        prod = prod * M(r)
    # Eqn 91: P[y_gamma = i | y_alpha = j] = sum over the k-1 intermediate values
    # (chain ordered from alpha down: alpha -rs[0]-> beta_k -> ... -rs[-1]-> gamma)
    import itertools
    summed = sp.zeros(2, 2)
    for i in range(2):
        for j in range(2):
            tot = 0
            for mids in itertools.product(range(2), repeat=k - 1):
                vals = (j,) + mids + (i,)
                term = 1
                for e_idx, r in enumerate(rs):
                    term *= M(r)[vals[e_idx + 1], vals[e_idx]]
                tot += term
            summed[i, j] = tot
    return {"product": _zero(prod - target), "sum": _zero(summed - target)}


# ------------------------------------------------------------------------------------------
# Theorem 5
# ------------------------------------------------------------------------------------------
def theorem5_expr(r=rho, r0=rho0, h=H, depth=L):
    """Theorem 5 / Eqn 108: P[y_l=1|y_m=1] = 1/2 (1 + rho^{2H} - 2 rho^{L-1} rho_0) /
    (1 - rho^{L-1} rho_0), as a function of rho_0 (whose definition is the erratum)."""
    return _HALF * (1 + r ** (2 * h) - 2 * r ** (depth - 1) * r0) / (1 - r ** (depth - 1) * r0)


def theorem5_via_proof(h: int, depth: int, r=rho, r0=rho0):
    """Eqns 93-97 and 107 for integer H, L: P_{b1 b2} = M(rho^H) D(c) M(rho^H)^T with
    D(c) = diag(p(rho_c)), rho_c = rho_{c|1} rho_0 = rho^{L-1-H} rho_0 (Eqn 106), then
    P[y_l=1|y_m=1] = P[1,1] / (P[0,1] + P[1,1]).  Returns the sympy expression."""
    if not (1 <= h <= depth - 1):
        raise ValueError(f"H must be in [1, L-1] (CLA a binary latent), got H={h}, L={depth}")
    rc = r ** (depth - 1 - h) * r0
    D = sp.diag(*p(rc))
    P = M(r ** h) * D * M(r ** h).T
    return sp.simplify(P[1, 1] / (P[0, 1] + P[1, 1]))


theorem5_numeric = sp.lambdify((rho, rho0, H, L), theorem5_expr(), "numpy")
theorem5_numeric.__doc__ = "Eqn 108 in numpy: theorem5_numeric(rho, rho0, H, L) (broadcasts)."


def _check_q_p0(q, p0):
    q = np.asarray(q, dtype=np.float64)
    p0 = np.asarray(p0, dtype=np.float64)
    if p0.ndim != 1 or p0.size < 1:
        raise ValueError(f"p0 must be a non-empty 1-d class prior (D >= 1), got shape {p0.shape}")
    if np.any(p0 < 0) or np.any(p0 > 1) or abs(p0.sum() - 1) > 1e-9:
        raise ValueError("p0 entries must lie in [0, 1] and sum to 1")
    if q.shape[-1] != p0.size or np.any(q < 0) or np.any(q > 1):
        raise ValueError(f"q (P(y_1=0|y_0=k)) must have last dim D={p0.size} and entries in [0, 1]")
    return q, p0


def rho0_printed(q, p0):
    """Theorem 5 as printed: rho_0 := p_{.|0}^T p_0 with p_{.|0} = [P(y_1=0|y_0=k)]_k, i.e.
    rho_0 = P(y_1=0)."""
    q, p0 = _check_q_p0(q, p0)
    return q @ p0


def rho0_corrected(q, p0):
    """What the proof uses (Eqn 102 writes P(y_1=0|y_0=k) = (1+p_{k|0})/2): rho_0 =
    2 P(y_1=0) - 1 = 2 q^T p0 - 1, the same convention as rho_c := 2 P[y_c=0] - 1 (Eqn 93)."""
    q, p0 = _check_q_p0(q, p0)
    return 2.0 * (q @ p0) - 1.0


def _check_HL(h, depth):
    h = np.asarray(h)
    depth = np.asarray(depth)
    if np.any(depth < 2) or np.any(h < 1) or np.any(h > depth - 1):
        raise ValueError("need L >= 2 and 1 <= H <= L-1 (CLA a binary latent)")
    return h, depth


def theorem5_printed(r, q, p0, h, depth):
    """Theorem 5 exactly as printed (Eqn 108 with rho_0 = p_{.|0}^T p_0, probabilities)."""
    h, depth = _check_HL(h, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_printed(q, p0), h, depth)


def theorem5_corrected(r, q, p0, h, depth):
    """Theorem 5 with rho_0 = 2 p_{.|0}^T p_0 - 1 (the proof's own parametrisation)."""
    h, depth = _check_HL(h, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth)


def theorem5_alt_levels(r, q, p0, h, depth):
    """Alternative reading: 'total depth L' = number of levels including the leaves (= our L+1),
    with rho_0 corrected. Evaluates Eqn 108 with L -> L+1."""
    h, depth = _check_HL(h, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth + 1)


def theorem5_alt_top_depth(r, q, p0, h, depth):
    """Alternative reading: 'CLA of depth H' = the CLA's level index counted from the root
    (= our L-H), with rho_0 corrected. Evaluates Eqn 108 with H -> L-H."""
    h, depth = _check_HL(h, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), depth - h,
                            depth)


# ------------------------------------------------------------------------------------------
# Eqn 9 (rho = rho_0 = 1 - eps)
# ------------------------------------------------------------------------------------------
def eq9_printed(h, depth):
    """Eqn 9 as printed: P[y_l=1|y_m=1] = 1 - H/L + O(eps^2)."""
    return 1.0 - np.asarray(h, dtype=np.float64) / np.asarray(depth, dtype=np.float64)


def eq9_first_order_coefficient(h, depth):
    """The eps coefficient of Eqn 108 at rho = rho_0 = 1-eps: H(2H-L)/(2L) (sympy series)."""
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return h * (2 * h - depth) / (2 * depth)


def eq9_corrected(e, h, depth):
    """Corrected Eqn 9: P[y_l=1|y_m=1] = 1 - H/L + H(2H-L)/(2L) eps + O(eps^2)."""
    return eq9_printed(h, depth) + eq9_first_order_coefficient(h, depth) * np.asarray(e)


def eq9_second_order_coefficient(h, depth):
    """The eps^2 coefficient: -H(2H-L)(4H-L-3)/(12L); zero at L = 2H (then P = 1/2 exactly)
    and at L = 4H-3 (then the corrected remainder is O(eps^3))."""
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return -h * (2 * h - depth) * (4 * h - depth - 3) / (12 * depth)


@lru_cache(maxsize=None)
def eq9_series(h: int | None = None, depth: int | None = None, order: int = 3):
    """sympy series of Eqn 108 at rho = rho_0 = 1-eps up to O(eps^order); symbolic H, L if
    h/depth are None."""
    hh = H if h is None else sp.Integer(h)
    dd = L if depth is None else sp.Integer(depth)
    f = theorem5_expr(1 - eps, 1 - eps, hh, dd)
    return sp.series(f, eps, 0, order).removeO()


def eq9_remainder_order(h: int, depth: int) -> int | None:
    """Order in eps of Eqn 108 - (1 - H/L + H(2H-L)/(2L) eps): 2 generically, 3 at L = 4H-3,
    None at L = 2H (Eqn 108 = 1/2 identically when rho = rho_0)."""
    if depth == 2 * h:
        return None
    return 3 if depth == 4 * h - 3 else 2


def eq9_exact_mp(e, h: int, depth: int, dps: int = 60):
    """Eqn 108 at rho = rho_0 = 1-eps evaluated in mpmath with `dps` digits (returns mpf)."""
    with mpmath.workdps(dps):
        r = 1 - mpmath.mpf(e)
        b = r ** depth
        return (1 + r ** (2 * h) - 2 * b) / (2 * (1 - b))


def eq9_remainder_mp(eps_values, h: int, depth: int, linear_coefficient=0, dps: int = 60):
    """|Eqn 108 - (1 - H/L + c eps)| at rho = rho_0 = 1-eps, for each eps, computed entirely in
    mpmath (`dps` digits) and returned as float64: c = 0 is the printed Eqn 9 remainder,
    c = H(2H-L)/(2L) the corrected one.  `linear_coefficient` may be a float or a Fraction."""
    out = []
    with mpmath.workdps(dps):
        c = mpmath.mpf(linear_coefficient.numerator) / linear_coefficient.denominator \
            if hasattr(linear_coefficient, "denominator") else mpmath.mpf(linear_coefficient)
        for e in eps_values:
            e = mpmath.mpf(e)
            r = 1 - e
            b = r ** depth
            f = (1 + r ** (2 * h) - 2 * b) / (2 * (1 - b))
            out.append(float(abs(f - (1 - mpmath.mpf(h) / depth) - c * e)))
    return np.asarray(out, dtype=np.float64)
