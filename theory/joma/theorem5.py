"""Section 5 / Appendix A.5: Theorem 5 (Eqn 108) and the two readings of rho_0 (Eqns 93-107).
Conventions: theory.joma.hblt.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory import validate as chk
from theory.joma._checks import _fin, _sym_or_int, _sym_or_number
from theory.joma.hblt import _HALF, H, L, binary_marginal, rho, rho0, transition_matrix

MAX_DEPTH = 10 ** 4  # tree depth L accepted by the closed forms (sympy powers rho^(L-1))


def theorem5_expr(r=rho, r0=rho0, h=H, depth=L):
    """Theorem 5 / Eqn 108: P[y_l=1|y_m=1] = 1/2 (1 + rho^{2H} - 2 rho^{L-1} rho_0) /
    (1 - rho^{L-1} rho_0), as a function of rho_0 (whose definition is the erratum)."""
    _sym_or_number("r", r, lo=-1, hi=1)
    _sym_or_number("r0", r0, lo=-1, hi=1)
    _sym_or_int("h (H)", h, lo=1)
    _sym_or_int("depth (L)", depth, lo=2, hi=MAX_DEPTH)
    return _HALF * (1 + r ** (2 * h) - 2 * r ** (depth - 1) * r0) / (1 - r ** (depth - 1) * r0)


def theorem5_via_proof(h: int, depth: int, r=rho, r0=rho0):
    """Eqns 93-97 and 107 for integer H, L: P_{b1 b2} = M(rho^H) D(c) M(rho^H)^T with
    D(c) = diag(p(rho_c)), rho_c = rho_{c|1} rho_0 = rho^{L-1-H} rho_0 (Eqn 106), then
    P[y_l=1|y_m=1] = P[1,1] / (P[0,1] + P[1,1]).  Returns the sympy expression."""
    chk.integer("depth (L)", depth, lo=2, hi=MAX_DEPTH)
    chk.integer("h (H)", h)
    _sym_or_number("r", r, lo=-1, hi=1)
    _sym_or_number("r0", r0, lo=-1, hi=1)
    if not (1 <= h <= depth - 1):
        raise ValueError(f"h (H) must be in [1, L-1] (CLA a binary latent), got H={h}, L={depth}")
    rc = r ** (depth - 1 - h) * r0
    D = sp.diag(*binary_marginal(rc))
    P = transition_matrix(r ** h) * D * transition_matrix(r ** h).T
    return sp.simplify(P[1, 1] / (P[0, 1] + P[1, 1]))


_theorem5_numeric = sp.lambdify((rho, rho0, H, L), theorem5_expr(), "numpy")


def theorem5_numeric(rho, rho_0, H, L):
    """Eqn 108 in numpy: theorem5_numeric(rho, rho0, H, L) (broadcasts); rho, rho_0 in [-1, 1],
    integers 1 <= H <= L-1, L <= MAX_DEPTH, and a nonzero denominator 1 - rho^(L-1) rho_0."""
    r0 = _fin("rho_0", rho_0)
    if np.any(np.abs(r0) > 1):
        raise ValueError(f"rho_0 must lie in [-1, 1], got {r0}")
    ra = _fin("rho", rho)
    if np.any(np.abs(ra) > 1):
        raise ValueError(f"rho must lie in [-1, 1], got {ra}")
    h, depth = _check_HL(H, L)
    _check_theorem5(rho, r0, h, depth, depth)
    return _theorem5_numeric(rho, rho_0, H, L)


def _check_q_p0(q, p0):
    _fin("p0", p0)
    _fin("q", q)
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
    hf, df = _fin("h (H)", h, dtype_kind="iuf"), _fin("depth (L)", depth, dtype_kind="iuf")
    for name, a in (("h (H)", hf), ("depth (L)", df)):
        if np.any(a != np.round(a)):
            raise ValueError(f"{name} must be integer-valued, got {a}")
    if np.any(df > MAX_DEPTH):
        raise ValueError(f"depth (L) must be <= {MAX_DEPTH}, got max {df.max()}")
    h = np.asarray(h)
    depth = np.asarray(depth)
    if np.any(depth < 2) or np.any(h < 1) or np.any(h > depth - 1):
        raise ValueError("need L >= 2 and 1 <= H <= L-1 (CLA a binary latent): depth (L) in "
                         "[2, MAX_DEPTH], h (H) in [1, L-1]")
    return h, depth


def _check_theorem5(r, rho_0, h, depth, depth_eval):
    """r in [-1, 1] and a nonzero denominator 1 - r^(L-1) rho_0 of Eqn 108."""
    ra = _fin("r", r)
    if np.any(np.abs(ra) > 1):
        raise ValueError(f"r (rho) must lie in [-1, 1], got {ra}")
    with np.errstate(all="ignore"):
        den = 1 - np.asarray(r, dtype=np.float64) ** (np.asarray(depth_eval) - 1) * rho_0
    if np.any(den == 0):
        raise ValueError("r = rho and rho_0 make Eqn 108's denominator 1 - rho^(L-1) rho_0 zero "
                         "(rho = rho_0 = 1: fully deterministic tree, P undefined)")


def theorem5_printed(r, q, p0, h, depth):
    """Theorem 5 exactly as printed (Eqn 108 with rho_0 = p_{.|0}^T p_0, probabilities)."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_printed(q, p0), h, depth, depth)
    return _theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_printed(q, p0), h, depth)


def theorem5_corrected(r, q, p0, h, depth):
    """Theorem 5 with rho_0 = 2 p_{.|0}^T p_0 - 1 (the proof's own parametrisation)."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth)
    return _theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth)


def theorem5_alt_levels(r, q, p0, h, depth):
    """Alternative reading: 'total depth L' = number of levels including the leaves (= our L+1),
    with rho_0 corrected. Evaluates Eqn 108 with L -> L+1."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth + 1)
    return _theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth + 1)


def theorem5_alt_top_depth(r, q, p0, h, depth):
    """Alternative reading: 'CLA of depth H' = the CLA's level index counted from the root
    (= our L-H), with rho_0 corrected. Evaluates Eqn 108 with H -> L-H."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth)
    return _theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), depth - h,
                            depth)
