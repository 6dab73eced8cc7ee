"""JoMA (Tian et al., ICLR 2024): closed forms of every numbered claim, in sympy (lambdified for
numbers). Pure math: no torch. Sections follow the paper; each formula cites its equation.

JoMA (Tian et al., ICLR 2024): closed forms of Theorems 1 and 2 (Section 3), in sympy.

Conventions. v_k := U_C^T w_k (Theorem 1).  Per contextual token l, write
s2_l := sum_k v_{kl}^2  and  n2 := sum_k ||v_k||_2^2  (so sum_l s2_l = n2).  Time t is gradient
flow time; a gradient step of size eta advances t by eta.

Each invariant is an expression I(state) that Theorem 1 says is constant in time (= c).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

import mpmath
import numpy as np
import sympy as sp
from scipy import integrate, optimize, special, stats

from theory import validate as chk


def _fin(name, val, **kw):
    """val as a float64 array, if finite (theory.validate.finite_array)."""
    return chk.finite_array(name, val, **kw)


def _expr(name, e):
    if not isinstance(e, sp.Expr):
        raise ValueError(f"{name} must be a sympy expression, got {type(e).__name__}")
    return e


def _sym_or_number(name, val, lo=None, hi=None):
    """A sympy expression with free symbols passes; a number (python or sympy) must be finite
    (and in [lo, hi] where given)."""
    if isinstance(val, sp.Basic) and val.free_symbols:
        return val
    if isinstance(val, sp.Basic):
        if not (val.is_number and val.is_real and val.is_finite):
            raise ValueError(f"{name} must be a finite real number or a sympy symbol, got {val}")
        val = float(val)
    return chk.number(name, val, lo=lo, hi=hi)


def _sym_or_int(name, val, lo=None, hi=None):
    """A sympy expression with free symbols passes; otherwise an integer in [lo, hi]."""
    if isinstance(val, sp.Basic) and val.free_symbols:
        return val
    if isinstance(val, sp.Integer):
        val = int(val)
    return chk.integer(name, val, lo=lo, hi=hi)


def _scalar(name, val, **kw):
    """chk.number, also for a 0-d numpy array (a scalar that went through np.asarray)."""
    if isinstance(val, np.ndarray) and val.ndim == 0 and val.dtype.kind in "iuf":
        val = val.item()
    return chk.number(name, val, **kw)


def _callable(name, f):
    return chk.function(name, f)

#==================================================================================================
# Sections 2-3: Theorems 1-2 (Eqns. 1-4, Appendix A.2)
#==================================================================================================

z, s2, n2, bbar, c = sp.symbols("z s2 n2 bbar c", real=True)
Qv, Qz = sp.symbols("Q_v Q_z", nonnegative=True)  # accumulated squared increments (discrete time)
v, vp, Delta, Deltap, t, A = sp.symbols("v v' Delta Delta' t A", real=True)

# ---- Theorem 1 (JoMA), Section 3 -----------------------------------------------------------
# Linear attention (sigma(x) = x, A = 1):  z_m^2(t) = sum_k v_k^2(t) + c
THEOREM1_LINEAR = z**2 - s2
# Exp attention (sigma = exp, A const):   z_m(t) = 1/2 sum_k v_k^2(t) + c
THEOREM1_EXP = z - s2 / 2
# Softmax, as printed in the theorem:      z_m(t) = 1/2 sum_k v_k^2(t) - ||v_k(t)||^2 bbar_m + c
THEOREM1_SOFTMAX_PRINTED = z - (s2 / 2 - n2 * bbar)
# Softmax, as derived in the proof (Appendix A.2, Eqn. 19; also Fig. 2's caption, where
# zhat_m2 = -1/2 sum_k ||v_k||^2 bbar_m):  z_m(t) = 1/2 sum_k (v_k^2 - ||v_k||^2 bbar_m) + c
THEOREM1_SOFTMAX_EQN19 = z - (s2 - n2 * bbar) / 2

# Exact discrete-time counterparts (this suite's derivation, not in the paper).  With
# simultaneous gradient steps dv_k = eta E[g h' b] and dz = eta (db/dz)^T-term of Eqn. 2:
#  exp:    dz = sum_k dv_k o v_k exactly, and 1/2(v+dv)^2 - 1/2 v^2 = dv o v + dv^2/2, so
#          z - 1/2 sum_k v_k^2 + 1/2 Q_v is exactly constant, Q_v := sum_steps sum_k dv_k^2;
#  linear: z o dz = sum_k dv_k o v_k exactly, so z^2 - sum_k v_k^2 - (Q_z - Q_v) is exactly
#          constant, Q_z := sum_steps dz^2.
# Q_v, Q_z = O(eta) over a fixed horizon, which is the O(eta) error of the flow invariants.
THEOREM1_EXP_DISCRETE = THEOREM1_EXP + Qv / 2
THEOREM1_LINEAR_DISCRETE = THEOREM1_LINEAR - (Qz - Qv)

# A deliberately wrong invariant used as negative control (drops the factor 1/2).
THEOREM1_EXP_WRONG = z - s2
THEOREM1_LINEAR_WRONG = z - s2


def lambdify_invariant(expr):
    """Numeric version of an invariant, broadcasting over numpy arrays."""
    _expr("expr", expr)
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    f = sp.lambdify(syms, expr, "numpy")
    names = [s.name for s in syms]

    def call(**kw):
        missing = [n for n in names if n not in kw]
        if missing:
            raise ValueError(f"missing values for {missing}")
        for n in names:
            _fin(n, kw[n])
        return f(*[kw[n] for n in names])

    call.__doc__ = f"{expr} as a function of {names}"
    return call


theorem1_linear = lambdify_invariant(THEOREM1_LINEAR)
theorem1_exp = lambdify_invariant(THEOREM1_EXP)
theorem1_softmax_printed = lambdify_invariant(THEOREM1_SOFTMAX_PRINTED)
theorem1_softmax_eqn19 = lambdify_invariant(THEOREM1_SOFTMAX_EQN19)
theorem1_exp_discrete = lambdify_invariant(THEOREM1_EXP_DISCRETE)
theorem1_linear_discrete = lambdify_invariant(THEOREM1_LINEAR_DISCRETE)


def softmax_sum_drift(expr):
    """What an invariant predicts for d/dt 1^T z_m, given that 1^T bbar_m = 1 and
    sum_l s2_l = n2: the coefficient of the growth of n2.  Softmax attention conserves 1^T z
    exactly (1^T (diag(b) - b b^T) = 0 when 1^T b = 1), so a correct invariant gives 0."""
    _expr("expr", expr)
    # sum over components of I = 1^T z - (coefficient) n2:  replace z -> Z, s2 -> n2, bbar -> 1
    Z = sp.Symbol("Z")
    summed = expr.subs({z: Z, s2: n2, bbar: 1})
    return sp.simplify(-sp.diff(summed, n2))  # d(1^T z)/d(n2) implied by I = const


# ---- Theorem 2 (linear phi, exp attention, zero init, K = 1), Eqn. 4 ------------------------
# Printed:   erf(v_l(t)/2) / Delta_lm = erf(v_l'(t)/2) / Delta_l'm
THEOREM2_PRINTED = sp.erf(v / 2) / Delta - sp.erf(vp / 2) / Deltap
# Corrected: dv_l/dt = Delta_l exp(v_l^2/2)/A (Eqns. 20-21 with z = v^2/2) separates as
#   e^{-v^2/2} dv = Delta_l dt / A,  and  int_0^v e^{-u^2/2} du = sqrt(pi/2) erf(v/sqrt 2),
# so erf(v_l/sqrt 2)/Delta_l = sqrt(2/pi) t / A is the same for every l:
THEOREM2_CORRECTED = sp.erf(v / sp.sqrt(2)) / Delta - sp.erf(vp / sp.sqrt(2)) / Deltap
THEOREM2_CORRECTED_VALUE = sp.sqrt(2 / sp.pi) * t / A  # common value of erf(v_l/sqrt2)/Delta_l
# Closed-form trajectory from zero init and its blow-up time (first l to reach infinity):
THEOREM2_TRAJECTORY = sp.sqrt(2) * sp.erfinv(sp.sqrt(2 / sp.pi) * Delta * t / A)
THEOREM2_BLOWUP = sp.sqrt(sp.pi / 2) * A / sp.Abs(Delta)  # with Delta = Delta_{l*}
# Remark after Theorem 2: v_{l*} -> sign(Delta_{l*}) inf and the others converge to finite
# values; by the corrected invariant, at the blow-up time t* of l* = argmax_l |Delta_l|:
THEOREM2_LIMIT = sp.sqrt(2) * sp.erfinv(Delta / sp.Abs(Deltap))  # Delta = Delta_l, Delta' = Delta_{l*}


def _lam(expr, *syms):
    return sp.lambdify(syms, expr, modules=["numpy", "scipy"])


theorem2_printed_term = _lam(sp.erf(v / 2), v)  # erf(v/2): the printed invariant's numerator
theorem2_corrected_term = _lam(sp.erf(v / sp.sqrt(2)), v)
theorem2_trajectory = _lam(THEOREM2_TRAJECTORY, Delta, t, A)
theorem2_blowup_time = _lam(THEOREM2_BLOWUP, Delta, A)
theorem2_limit = _lam(THEOREM2_LIMIT, Delta, Deltap)


def theorem2_ratio_check(vs, deltas, term):
    """Pairwise form of Eqn. 4 against l* = argmax |Delta_l| (no division by small Delta_l):
    term(v_l) - (Delta_l / Delta_{l*}) term(v_{l*}) for every l (zero where Eqn. 4 holds)."""
    import numpy as np

    _callable("term", term)
    va = _fin("vs", vs)
    da = _fin("deltas", deltas)
    if va.ndim < 1 or va.shape[-1] < 1:
        raise ValueError(f"vs must be an array (..., l) with at least one component, got "
                         f"{va.shape}")
    try:
        db = np.broadcast_to(da, va.shape)
    except ValueError:
        raise ValueError(f"deltas must broadcast to vs's shape {va.shape}, got "
                         f"{da.shape}") from None
    if np.any(np.abs(db).max(-1) == 0):
        raise ValueError("deltas must have a nonzero entry in every row (Delta_{l*} divides)")
    vs = np.asarray(vs, dtype=np.float64)
    deltas = np.broadcast_to(np.asarray(deltas, dtype=np.float64), vs.shape)
    lstar = np.argmax(np.abs(deltas), axis=-1)
    tv = term(vs)
    tstar = np.take_along_axis(tv, lstar[..., None], -1)
    dstar = np.take_along_axis(deltas, lstar[..., None], -1)
    return tv - deltas / dstar * tstar


#==================================================================================================
# Section 5 / Appendix A.5: HBLT(rho), Lemmas 7-8, Theorem 5, Eq. 9
#==================================================================================================
# JoMA (Tian et al., ICLR 2024), Section 5 and Appendix A.5: the hierarchical binary latent
# tree HBLT(rho), in closed form (sympy, lambdified for numbers; no torch).
#
# Conventions (the paper's, Section 5): the class label y_0 is the root, at layer s = L; binary
# latents sit at layers s = L-1, ..., 1; the tokens (leaves) are at layer s = 0.  So L is the number
# of edges from the root to a leaf, and a common latent ancestor (CLA) "of depth H" sits at layer
# s = H, i.e. H edges above both tokens.  The CLA must be a binary latent (1 <= H <= L-1): the proof
# of Theorem 5 needs a binary y_c with rho_{c|1} = rho^{L-1-H}.
#
# Contents
#   M(rho), p(rho)                  Definition 1 (Eqn 88 ff.)
#   lemma7_residuals()              Lemma 7 (Eqn 89), every residual simplifies to 0
#   lemma8_residuals(k)             Lemma 8 (Eqns 90-91) for a chain of k edges
#   theorem5_expr(rho, rho0, H, L)  Theorem 5 / Eqn 108 as printed, as a function of rho_0
#   theorem5_via_proof(...)         Eqns 93-97 + 107 (M D M^T), to check the algebra of the proof
#   rho0_printed(q, p0)             rho_0 := p_{.|0}^T p_0 with p_{.|0} = [P(y_1=0|y_0=k)] (as printed)
#   rho0_corrected(q, p0)           rho_0 := 2 p_{.|0}^T p_0 - 1 (what Eqn 102 actually uses)
#   theorem5_printed / _corrected   numeric P[y_l=1|y_m=1] from (rho, q, p0, H, L)
#   eq9_printed(H, L)               Eqn 9: 1 - H/L (+ O(eps^2) claimed)
#   eq9_corrected(eps, H, L)        1 - H/L + H(2H-L)/(2L) eps (+ O(eps^2))
#   eq9_second_order_coefficient    the eps^2 coefficient -H(2H-L)(4H-L-3)/(12L)
#   eq9_exact_mp(eps, H, L)         Theorem 5 at rho = rho_0 = 1-eps in mpmath (no cancellation)

rho, rho0, rho1, rho2, eps = sp.symbols("rho rho_0 rho_1 rho_2 epsilon", real=True)
H, L = sp.symbols("H L", positive=True, integer=True)
_HALF = sp.Rational(1, 2)


# ------------------------------------------------------------------------------------------
# Definition 1, Lemma 7, Lemma 8
# ------------------------------------------------------------------------------------------
def M(r) -> sp.Matrix:
    """Definition 1: M(rho) = 1/2 [[1+rho, 1-rho], [1-rho, 1+rho]]; M(rho) = P_{beta|alpha}
    (Eqn 88, rows = child value 0/1, columns = parent value 0/1) in HBLT(rho) (Definition 2)."""
    _sym_or_number("r", r, lo=-1, hi=1)
    return _HALF * sp.Matrix([[1 + r, 1 - r], [1 - r, 1 + r]])


def p(r) -> sp.Matrix:
    """Definition 1: p(rho) = 1/2 [1+rho, 1-rho]^T (the law [P(y=0), P(y=1)] of a binary y)."""
    _sym_or_number("r", r, lo=-1, hi=1)
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


LEMMA8_MAX_K = 12  # 2^11 products per entry: seconds in sympy; the claims use k <= 6


def lemma8_residuals(k: int) -> dict[str, sp.Matrix]:
    """Lemma 8 for a descendant chain alpha > beta_1 > ... > gamma of k edges with uncertainty
    parameters rho_1..rho_k: both the matrix product (Eqn 90) and the explicit sum over the
    intermediate latents (Eqn 91) equal M(rho_1 ... rho_k).  Residuals must simplify to 0."""
    # 2^(k-1) terms per entry: k is capped so that a typo cannot start an endless expansion
    chk.integer("k (chain length in edges)", k, lo=1, hi=LEMMA8_MAX_K)
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
    D = sp.diag(*p(rc))
    P = M(r ** h) * D * M(r ** h).T
    return sp.simplify(P[1, 1] / (P[0, 1] + P[1, 1]))


theorem5_numeric = sp.lambdify((rho, rho0, H, L), theorem5_expr(), "numpy")
theorem5_numeric.__doc__ = "Eqn 108 in numpy: theorem5_numeric(rho, rho0, H, L) (broadcasts)."


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
    hf, df = _fin("h (H)", h), _fin("depth (L)", depth)
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
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_printed(q, p0), h, depth)


def theorem5_corrected(r, q, p0, h, depth):
    """Theorem 5 with rho_0 = 2 p_{.|0}^T p_0 - 1 (the proof's own parametrisation)."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth)


def theorem5_alt_levels(r, q, p0, h, depth):
    """Alternative reading: 'total depth L' = number of levels including the leaves (= our L+1),
    with rho_0 corrected. Evaluates Eqn 108 with L -> L+1."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth + 1)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), h, depth + 1)


def theorem5_alt_top_depth(r, q, p0, h, depth):
    """Alternative reading: 'CLA of depth H' = the CLA's level index counted from the root
    (= our L-H), with rho_0 corrected. Evaluates Eqn 108 with H -> L-H."""
    h, depth = _check_HL(h, depth)
    _check_theorem5(r, rho0_corrected(q, p0), h, depth, depth)
    return theorem5_numeric(np.asarray(r, dtype=np.float64), rho0_corrected(q, p0), depth - h,
                            depth)


# ------------------------------------------------------------------------------------------
# Eqn 9 (rho = rho_0 = 1 - eps)
# ------------------------------------------------------------------------------------------
def eq9_printed(h, depth):
    """Eqn 9 as printed: P[y_l=1|y_m=1] = 1 - H/L + O(eps^2)."""
    _check_HL(h, depth)
    return 1.0 - np.asarray(h, dtype=np.float64) / np.asarray(depth, dtype=np.float64)


def eq9_first_order_coefficient(h, depth):
    """The eps coefficient of Eqn 108 at rho = rho_0 = 1-eps: H(2H-L)/(2L) (sympy series)."""
    _check_HL(h, depth)
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return h * (2 * h - depth) / (2 * depth)


def eq9_corrected(e, h, depth):
    """Corrected Eqn 9: P[y_l=1|y_m=1] = 1 - H/L + H(2H-L)/(2L) eps + O(eps^2)."""
    ea = _fin("e", e)
    if np.any((ea < 0) | (ea >= 1)):
        raise ValueError(f"e (eps = 1 - rho) must lie in [0, 1), got {ea}")
    return eq9_printed(h, depth) + eq9_first_order_coefficient(h, depth) * np.asarray(e)


def eq9_second_order_coefficient(h, depth):
    """The eps^2 coefficient: -H(2H-L)(4H-L-3)/(12L); zero at L = 2H (then P = 1/2 exactly)
    and at L = 4H-3 (then the corrected remainder is O(eps^3))."""
    _check_HL(h, depth)
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return -h * (2 * h - depth) * (4 * h - depth - 3) / (12 * depth)


def eq9_series(h: int | None = None, depth: int | None = None, order: int = 3):
    """sympy series of Eqn 108 at rho = rho_0 = 1-eps up to O(eps^order); symbolic H, L if
    h/depth are None."""
    if depth is not None:
        chk.integer("depth (L)", depth, lo=2, hi=MAX_DEPTH)
    if h is not None:
        chk.integer("h (H)", h, lo=1, hi=None if depth is None else int(depth) - 1)
    chk.integer("order", order, lo=1, hi=8)
    return _eq9_series(h, depth, order)


@lru_cache(maxsize=None)
def _eq9_series(h, depth, order):
    hh = H if h is None else sp.Integer(h)
    dd = L if depth is None else sp.Integer(depth)
    f = theorem5_expr(1 - eps, 1 - eps, hh, dd)
    return sp.series(f, eps, 0, order).removeO()


def eq9_remainder_order(h: int, depth: int) -> int | None:
    """Order in eps of Eqn 108 - (1 - H/L + H(2H-L)/(2L) eps): 2 generically, 3 at L = 4H-3,
    None at L = 2H (Eqn 108 = 1/2 identically when rho = rho_0)."""
    chk.integer("depth (L)", depth, lo=2)
    chk.integer("h (H)", h, lo=1, hi=int(depth) - 1)
    if depth == 2 * h:
        return None
    return 3 if depth == 4 * h - 3 else 2


def _check_eq9(h, depth, dps, where):
    chk.integer(f"{where}: depth", depth, lo=2, hi=10 ** 6)
    chk.integer(f"{where}: h", h, lo=1, hi=int(depth) - 1)
    chk.integer(f"{where}: dps", dps, lo=15, hi=10 ** 4)


def eq9_exact_mp(e, h: int, depth: int, dps: int = 60):
    """Eqn 108 at rho = rho_0 = 1-eps evaluated in mpmath with `dps` digits (returns mpf).
    1 <= h < depth integers (H is a level strictly below the top L), eps in (0, 1), 15 <= dps
    <= 10000."""
    _check_eq9(h, depth, dps, "eq9_exact_mp")
    chk.number("eq9_exact_mp: e", float(e), lo=0, hi=1, lo_open=True, hi_open=True)
    with mpmath.workdps(dps):
        r = 1 - mpmath.mpf(e)
        b = r ** depth
        return (1 + r ** (2 * h) - 2 * b) / (2 * (1 - b))


def eq9_remainder_mp(eps_values, h: int, depth: int, linear_coefficient=0, dps: int = 60):
    """|Eqn 108 - (1 - H/L + c eps)| at rho = rho_0 = 1-eps, for each eps, computed entirely in
    mpmath (`dps` digits) and returned as float64: c = 0 is the printed Eqn 9 remainder,
    c = H(2H-L)/(2L) the corrected one.  `linear_coefficient` may be a float or a Fraction."""
    _check_eq9(h, depth, dps, "eq9_remainder_mp")
    if isinstance(eps_values, (str, bytes)) or not hasattr(eps_values, "__iter__"):
        raise ValueError(f"eps_values must be a list of numbers in (0, 1), got {eps_values!r}")
    eps_values = list(eps_values)
    chk.elements("eq9_remainder_mp", eps_values=len(eps_values))
    for i, e in enumerate(eps_values):
        if not isinstance(e, mpmath.mpf):
            chk.number(f"eps_values[{i}]", e, lo=0, hi=1, lo_open=True, hi_open=True)
    if not isinstance(linear_coefficient, mpmath.mpf):
        chk.number("linear_coefficient", linear_coefficient)
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


#==================================================================================================
# Section 4 / Appendix A.3: nonlinear activations, Lemmas 1-4, Theorem 3
#==================================================================================================
# JoMA (Tian et al., ICLR 2024), Sec. 4 and App. A.3-A.4: nonlinear MLP with uniform attention.
#
# Closed forms and 1-D quadratures for the quantities of Lemma 1 (Eqn 24, theta_1/theta_2 of
# Eqns 41-42), Theorem 3 (Eqn 5), Lemma 2 (Eqns 47-49), Lemma 3 (Eqns 50-54) and Lemma 4 (Eqn 61),
# each in its printed form and, where the audit refutes it, a corrected form.  Pure math: numpy,
# scipy, sympy; no torch.
#
# Notation.  An isotropic distribution in span(R) (dimension n) is x = xbar + R z with z isotropic in
# R^n.  Its *unit-direction marginal* p_n(s) is the density of s = e^T z for a unit vector e (Eqns
# 34-37 build it from the radial density p_0).  A "psi" is the derivative phi' of the activation.
# Families implemented: Gaussian N(0, sigma^2 I_n), multivariate Student-t (nu, scale sigma) and the
# uniform distribution in the n-ball of radius rho.
#
# Readings of theta_1, theta_2 (Eqns 41-42):
#   * "unit" (literal, Eqns 32-37): p_n is the unit-direction marginal; theta_i(r) = int psi(s+r)
#     [s] p_n(s) ds.  For ReLU and N(0, sigma^2): theta_1 = Phi(r/sigma), theta_2 = sigma phi(r/sigma).
#   * "y" (alternative, the sentence after Eqn 33): p_n is the density of y' = v^T x', i.e. of
#     k s with k = ||R R^T v||, so theta_i^y(r; k) = int psi(k s + r) [k s] p_n(s) ds.
# The corrected Lemma 1 is E[psi] = theta_1^y(r; k), E[x psi] = theta_1^y xbar + theta_2^y v_R / k^2.

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
        x = np.asarray(x, dtype=np.float64)
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


# --------------------------------------------------------------------------------------------
# theta_1, theta_2 by quadrature (any psi, any family) and in closed form (step psi)
# --------------------------------------------------------------------------------------------
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


theta1_gauss = _lamb(0)  # theta1_gauss(r, sigma, c_minus, c_plus)
theta2_gauss = _lamb(1)


# --------------------------------------------------------------------------------------------
# Lemma 1 (Eqn 24)
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# Theorem 3 (Eqn 5) and the xi dynamics (Eqn 50)
# --------------------------------------------------------------------------------------------
def _check_centers(v, xi, centers, a):
    _scalar("xi", xi)
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


# --------------------------------------------------------------------------------------------
# Lemma 2 (Eqns 47-49) and Lemma 3 (Eqns 50-59)
# --------------------------------------------------------------------------------------------
def F_lemma2(r: float, theta1: Callable, theta2: Callable, include_constant: bool = True,
             breaks=()) -> float:
    """Eqn 49: F(r) = theta2(0) + int_0^r theta1 (by quadrature).  `breaks`: points where
    theta1 has a kink (for the ball, r = +-sigma, where -r crosses the edge of the support);
    adaptive quadrature loses its accuracy across an unflagged kink."""
    _scalar("r", r)
    _callable("theta1", theta1)
    _callable("theta2", theta2)
    chk.flag("include_constant", include_constant)
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
    _scalar("hi", hi, lo=float(lo), lo_open=True)
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


# --------------------------------------------------------------------------------------------
# Lemma 4 (Eqn 61)
# --------------------------------------------------------------------------------------------
def _check_lemma4(r, dist, c_minus, c_plus):
    _fin("r", r)
    _dist_psi(dist)
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def lemma4_printed(r, dist: Isotropic, c_minus, c_plus):
    """Eqn 61 as printed: (d theta1/dr, d theta2/dr) = ((c_- + c_+) p_n(r), -(c_- + c_+) r p_n(r))."""
    _check_lemma4(r, dist, c_minus, c_plus)
    p = dist.pdf(r)
    return (c_minus + c_plus) * p, -(c_minus + c_plus) * np.asarray(r) * p


def lemma4_corrected(r, dist: Isotropic, c_minus, c_plus):
    """Corrected Eqn 61 (phi' = c_- 1[x<0] + c_+ 1[x>0]): ((c_+ - c_-) p_n(r), -(c_+ - c_-) r p_n(r))."""
    _check_lemma4(r, dist, c_minus, c_plus)
    p = dist.pdf(r)
    return (c_plus - c_minus) * p, -(c_plus - c_minus) * np.asarray(r) * p


#==================================================================================================
# Section 4 / Appendix A.4.1: Eqn. 7, Theorem 4, Lemmas 5-6, entropy and rank dynamics
#==================================================================================================
# JoMA Section 4 / Appendix A.4.1: convergence speed of salient vs non-salient components.
#
# Closed forms (sympy, lambdified to numpy/scipy) for
#   * Lemma 5:  g(y) = (1 - e^{-y^2})/y, stationary-point equation (Eqn. 66), value there (Eqn. 67);
#   * Lemma 6:  G(y) = e^{-y^2/2} int_0^y e^{x^2/2} dx = sqrt(2) Dawson(y/sqrt 2), and the
#               intermediate bound G(y) <= sqrt(2) g(y/sqrt 2);
#   * Theorem 4: F(r, r0, mu) = int_{r0}^{r} e^{-mu^2 x^2/2}/(1-x) dx (Eqn. 70), its mu-derivative
#               (Eqns. 72-75), zeta (Eqn. 76), M(r0) (Eqn. 77), F(r, r0, 0) (Eqn. 81), rho (Eqn. 84),
#               lambda_jk (Eqn. 87) and the Eqn. 8 prediction of the log-convergence ratio.
# Pure math: no torch.

# ------------------------------------------------------------------------------------------
# Symbols and sympy expressions
# ------------------------------------------------------------------------------------------
y, x = sp.symbols("y x", positive=True)
r, r0 = sp.symbols("r r_0", real=True)
mu = sp.symbols("mu", positive=True)

# Lemma 5
g_expr = (1 - sp.exp(-y ** 2)) / y
g_prime_expr = sp.diff(g_expr, y)
eqn66_expr = sp.exp(-y ** 2) - 1 / (2 * y ** 2 + 1)           # = 0 at a stationary point
eqn67_expr = 2 * y / (2 * y ** 2 + 1)                          # g(y*) at a stationary point

# Lemma 6: G(y) = e^{-y^2/2} int_0^y e^{x^2/2} dx = sqrt(pi/2) e^{-y^2/2} erfi(y/sqrt 2)
G_expr = sp.sqrt(sp.pi / 2) * sp.exp(-y ** 2 / 2) * sp.erfi(y / sp.sqrt(2))
G_bound_expr = sp.sqrt(2) * g_expr.subs(y, y / sp.sqrt(2))   # = (2/y)(1 - e^{-y^2/2})

# Theorem 4 (proof, Eqns. 70-81)
F_integrand = sp.exp(-mu ** 2 * x ** 2 / 2) / (1 - x)                        # Eqn. 70
dF_dmu_integrand_eqn72 = -mu * x ** 2 * sp.exp(-mu ** 2 * x ** 2 / 2) / (1 - x)  # Eqn. 72
dF_dmu_integrand_eqn74 = mu * (1 + x) * sp.exp(-mu ** 2 * x ** 2 / 2) - mu * F_integrand  # 74
zeta_expr = (sp.sqrt(sp.pi / 2) * (sp.erf(r * mu / sp.sqrt(2)) - sp.erf(r0 * mu / sp.sqrt(2)))
             + (sp.exp(-r0 ** 2 * mu ** 2 / 2) - sp.exp(-r ** 2 * mu ** 2 / 2)) / mu)  # Eqn. 76
M_expr = sp.sqrt(2 * sp.pi) + sp.Max(2 * sp.Abs(r0), sp.Abs(r0) + 1)                 # Eqn. 77
F0_expr = sp.log((1 - r0) / (1 - r))                                                 # Eqn. 81

# ------------------------------------------------------------------------------------------
# Lambdified numerics
# ------------------------------------------------------------------------------------------
_MODS = ["scipy", "numpy"]
_g_sym = sp.lambdify(y, g_expr, _MODS)  # the sympy form (cancels for tiny y); numerics below
eqn66_residual = sp.lambdify(y, eqn66_expr, _MODS)
g_at_stationary = sp.lambdify(y, eqn67_expr, _MODS)
_G_bound_sym = sp.lambdify(y, G_bound_expr, _MODS)


def g(yv):
    """Lemma 5's g(y) = (1 - e^{-y^2})/y, as -expm1(-y^2)/y (no cancellation for tiny y); y > 0."""
    _fin("yv", yv, lo=0, lo_open=True)
    yv = np.asarray(yv, dtype=np.float64)
    return -np.expm1(-yv * yv) / yv


def G_bound(yv):
    """sqrt(2) g(y/sqrt 2) = (2/y)(1 - e^{-y^2/2}) (Lemma 6's intermediate bound); y > 0."""
    _fin("yv", yv, lo=0, lo_open=True)
    yv = np.asarray(yv, dtype=np.float64)
    return -2.0 * np.expm1(-yv * yv / 2) / yv
_zeta = sp.lambdify((r, r0, mu), zeta_expr, _MODS)
_M = sp.lambdify(r0, M_expr, _MODS)
_F0 = sp.lambdify((r, r0), F0_expr, _MODS)


def G(yv):
    """Lemma 6's G(y) = sqrt(2) * Dawson(y / sqrt 2) (overflow-free form of G_expr)."""
    _fin("yv", yv)
    return math.sqrt(2.0) * special.dawsn(np.asarray(yv, dtype=np.float64) / math.sqrt(2.0))


def lemma5_true_max() -> tuple[float, float]:
    """(y*, g(y*)): the true maximiser of g on y > 0, the positive root of Eqn. 66 (brentq),
    polished by a bounded scalar maximisation of g itself."""
    y_root = optimize.brentq(lambda t: float(eqn66_residual(t)), 0.5, 3.0, xtol=1e-15)
    res = optimize.minimize_scalar(lambda t: -float(g(t)), bounds=(0.5, 3.0), method="bounded",
                                   options={"xatol": 1e-12})
    y_star = y_root if g(y_root) >= -res.fun else float(res.x)
    return float(y_star), float(g(y_star))


def lemma6_true_max() -> tuple[float, float]:
    """(y*, G(y*)): the maximiser of G on y >= 0 (G' = 1 - yG = 0), via brentq."""
    y_root = optimize.brentq(lambda t: 1.0 - t * float(G(t)), 0.5, 3.0, xtol=1e-15)
    return float(y_root), float(G(y_root))


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


def F(rv, r0v, muv):
    """Eqn. 70, F(r, r0, mu) = int_{r0}^{r} e^{-mu^2 x^2/2}/(1-x) dx."""
    _same_side("rv", rv, "r0v", r0v)
    return F_delta(1.0 - np.asarray(rv, float), 1.0 - np.asarray(r0v, float), muv)


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
    return np.exp(exponent * (np.asarray(mu_j, float) ** 2 - np.asarray(mu_k, float) ** 2)) * (1 + Lam)


def lambda_bound(r0_j, r0_k):
    """The proof's C_jk = M(r_j(0)) + M(r_k(0))."""
    _fin("r0_j", r0_j)
    _fin("r0_k", r0_k)
    return M_bound(r0_j) + M_bound(r0_k)
