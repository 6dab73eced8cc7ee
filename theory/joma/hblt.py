"""Section 5 / Appendix A.5: HBLT(rho), Lemmas 7-8, Theorem 5, Eq. 9.

JoMA (Tian et al., ICLR 2024), Section 5 and Appendix A.5: the hierarchical binary latent
tree HBLT(rho), in closed form (sympy, lambdified for numbers; no torch).

Conventions (the paper's, Section 5): the class label y_0 is the root, at layer s = L; binary
latents sit at layers s = L-1, ..., 1; the tokens (leaves) are at layer s = 0.  So L is the number
of edges from the root to a leaf, and a common latent ancestor (CLA) "of depth H" sits at layer
s = H, i.e. H edges above both tokens.  The CLA must be a binary latent (1 <= H <= L-1): the proof
of Theorem 5 needs a binary y_c with rho_{c|1} = rho^{L-1-H}.

Contents (this module: Definition 1, Lemmas 7-8; Theorem 5: theory.joma.theorem5; Eqn 9:
theory.joma.eq9)
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

import sympy as sp

from theory import validate as chk
from theory.joma._checks import _sym_or_number

rho, rho0, rho1, rho2, eps = sp.symbols("rho rho_0 rho_1 rho_2 epsilon", real=True)
H, L = sp.symbols("H L", positive=True, integer=True)
_HALF = sp.Rational(1, 2)


# ------------------------------------------------------------------------------------------
# Definition 1, Lemma 7, Lemma 8
# ------------------------------------------------------------------------------------------
def transition_matrix(r) -> sp.Matrix:
    """Definition 1: M(rho) = 1/2 [[1+rho, 1-rho], [1-rho, 1+rho]]; M(rho) = P_{beta|alpha}
    (Eqn 88, rows = child value 0/1, columns = parent value 0/1) in HBLT(rho) (Definition 2).
    The paper's name M is an alias of this function."""
    _sym_or_number("r", r, lo=-1, hi=1)
    return _HALF * sp.Matrix([[1 + r, 1 - r], [1 - r, 1 + r]])


def binary_marginal(r) -> sp.Matrix:
    """Definition 1: p(rho) = 1/2 [1+rho, 1-rho]^T (the law [P(y=0), P(y=1)] of a binary y).
    The paper's name p is an alias of this function."""
    _sym_or_number("r", r, lo=-1, hi=1)
    return _HALF * sp.Matrix([1 + r, 1 - r])


# The paper's letters (Definition 1), kept as aliases: M is transition_matrix, p is binary_marginal.
M = transition_matrix
p = binary_marginal


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
    target = transition_matrix(sp.Mul(*rs))
    prod = sp.eye(2)
    for r in rs:
        prod = prod * transition_matrix(r)
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
                    term *= transition_matrix(r)[vals[e_idx + 1], vals[e_idx]]
                tot += term
            summed[i, j] = tot
    return {"product": _zero(prod - target), "sum": _zero(summed - target)}
