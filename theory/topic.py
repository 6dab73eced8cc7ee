"""Topic structure (Li, Li & Risteski, ICML 2023): closed forms of Lemma 1, Theorems 1-5 and
Definition 2, in sympy (no torch).

Notation (statement sheet `topic_li2023_statements.md`): words 1..Tv, index 0 is [MASK];
a := 1 - (1 - p_c) p_m (share of positions that still show their true word),
s := p_m (1 - p_c - p_r) (share of positions that became [MASK]),
r := p_m p_r / (Tv) (mass a uniformly random replacement puts on each word).

Uniform attention (W^K = W^Q = 0) under Assumption 1: every output column of eq. 7 is
W p~_S + b with the masked document's token distribution p~_S = s e_0 + a P_S + r 1_words, P_S
uniform on the words of the document's tau topics.  The MLM squared loss is then
E_S ||W p~_S + b - P_S||^2 + 1 - E_S ||P_S||^2, minimised exactly when W p~_S + b = P_S for all S.

Everything symbolic lives here; `sim.topic` does the linear algebra over tau-subsets.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theory import validate as chk

p_m, p_c, p_r = sp.symbols("p_m p_c p_r", positive=True)
T, v, tau = sp.symbols("T v tau", positive=True)
u, x_in = sp.symbols("u x_in", real=True)  # Lemma 1 free constant of a row; indicator [topic(i) in S]

A_ = 1 - (1 - p_c) * p_m
S_ = p_m * (1 - p_c - p_r)
R_ = p_m * p_r / (T * v)

# ---- constants as printed (Theorem 2; Appendix D) ------------------------------------------
C1 = p_r / ((1 - p_c - p_r) * (1 - (1 - p_c) * p_m) * T * v)
C2 = 1 / ((1 - p_c - p_r) * p_m) - 1
C3 = 1 / (1 - (1 - p_c) * p_m)
C4 = 1 / (1 - (1 - p_c) * p_m)
# Theorem 2 block values of W*
W_I0 = (C2 * C3 - C1 * T * v) / (C2**2 + T * v)
W_DIFF = -(C1 * C2 + C3) / (C2**2 + T * v)
W_SAME = W_DIFF + C3 / v
# Theorem 3 constants as printed, and the constant its proof (Case 1, App. D.3) uses
LAMBDA1 = (1 - (1 - p_c) * p_m + p_m * p_r) * (1 + (1 - p_c) * p_m) / (2 * (1 - (1 - p_c) * p_m))
LAMBDA1_PROOF = (1 + C4 * p_m * p_r) * (2 - C4) / (2 * C4)
LAMBDA2 = 100 * ((1 - (1 - p_c) * p_m) / (p_m * p_r) + 1)
# Theorem 5 constants
C7 = 1 / (C4 * (sp.sqrt(v - 1) - 1 / C4 - 1))
T5_BETA_LO = (1 + C4 * p_m * p_r) * v * tau / (100 * C4)
T5_BETA_HI = C7 * (1 / (C4 * p_m * p_r) + 1) * v * T


# ---- derived (D): Lemma 1 residuals and the minimum-norm member ----------------------------
def lemma1_row_residual(with_c1: bool = True, bias: sp.Expr = 0):
    """Residual (W p~_S + b - P_S)_i for a word row i >= 1 of a Lemma 1 family member, as a
    polynomial in x_in = [topic(i) in S] (times tau v): the family makes it identically zero iff
    both coefficients vanish.  Row i: W_i0 = -c1 - c2 u (or -c2 u without c1), own-topic block
    sum c3 + u v, every other block sum u v.  Since P_S = 1/(tau v) on the words of S,
    sum_l W_il P_S(l) = (tau u v + c3 x_in)/(tau v) and sum_l W_il = T u v + c3."""
    chk.flag("with_c1", with_c1)
    _sym_or_number("bias", bias)
    w_i0 = -(C1 if with_c1 else 0) - C2 * u
    out = S_ * w_i0 + A_ * (tau * u * v + C3 * x_in) / (tau * v) + R_ * (T * u * v + C3) + bias
    target = x_in / (tau * v)
    poly = sp.Poly(sp.expand(out - target), x_in)
    return [sp.simplify(c) for c in poly.all_coeffs()]


def lemma1_mask_row_residual():
    """Row 0 of the family: W_00 = -c2 u, every block sum u v; target P_S(0) = 0."""
    out = S_ * (-C2 * u) + A_ * (tau * u * v) / (tau * v) + R_ * T * u * v
    return sp.simplify(out)


def theorem2_min_norm_u():
    """Minimise the Frobenius norm of a word row of the Lemma 1 family over its free constant u
    (blocks uniform: own block c3/v + u, other blocks u, column 0 -c1 - c2 u).  Returns u*
    (= the printed diff-topic value) and the implied W_i0."""
    f = (C1 + C2 * u) ** 2 + T * v * u**2 + 2 * C3 * u + C3**2 / v
    ustar = sp.solve(sp.diff(f, u), u)[0]
    return sp.simplify(ustar), sp.simplify(-C1 - C2 * ustar)


def min_loss():
    """Minimum of the Assumption-1 MLM squared loss: 1 - E_S ||P_S||^2 = 1 - 1/(tau v)."""
    return 1 - 1 / (tau * v)


# ---- numeric helpers ----------------------------------------------------------------------
def _sym_or_number(name, x):
    """A sympy expression passes (symbols allowed); a number must be finite."""
    if isinstance(x, sp.Basic):
        if x.is_number and not x.is_finite:
            raise ValueError(f"{name} must be finite (a sympy expression or a finite number), "
                             f"got {x}")
        return x
    return chk.number(name, x)


def _dense(where, T_, v_):
    """T_ v_ + 1 squared below the element cap (a dense (Tv+1) x (Tv+1) matrix)."""
    chk.elements(where, T_v_plus_1=T_ * v_ + 1, Tv_plus_1=T_ * v_ + 1)
    return T_ * v_ + 1


def _member_args(where, T_, v_, u_vec, spread):
    n = _dense(where, T_, v_)
    u = chk.finite_array("u_vec", u_vec, ndim=1)
    if u.shape != (n,):
        raise ValueError(f"{where}: u_vec must have length Tv+1 = {n}, got {u.shape}")
    sp_ = chk.finite_array("spread", spread, ndim=2, lo=0)
    if sp_.shape != (n, n):
        raise ValueError(f"{where}: spread must be (Tv+1, Tv+1) = ({n}, {n}), got {sp_.shape}")
    if not np.all(sp_[:, 1:].reshape(n, T_, v_).sum(-1) > 0):
        raise ValueError(f"{where}: spread must have a positive sum over every block of v columns "
                         f"in every row (its weights are normalised per block)")



_SYMS = (p_m, p_c, p_r, T, v, tau)


def _num(expr):
    """expr as a float function of (pm, pc, pr, T_, v_, tau_), checking the paper's ranges (pm,
    pc, pr in (0, 1) with pc + pr < 1; integers T_, v_, tau_ >= 1, tau_ <= T_) and that the
    value is finite."""
    f = sp.lambdify(_SYMS, expr, "numpy")

    def call(pm, pc, pr, T_=1, v_=1, tau_=1):
        for name, val in (("pm (p_m)", pm), ("pc (p_c)", pc), ("pr (p_r)", pr)):
            chk.number(name, val, lo=0, hi=1, lo_open=True, hi_open=True)
        if not float(pc) + float(pr) < 1:
            raise ValueError(f"pc + pr (p_c + p_r) must be < 1, got {float(pc) + float(pr)}")
        for name, val in (("T_", T_), ("v_", v_), ("tau_", tau_)):
            chk.integer(name, val, lo=1)
        if tau_ > T_:
            raise ValueError(f"tau_ must be <= T_, got tau_={tau_}, T_={T_}")
        out = float(f(pm, pc, pr, T_, v_, tau_))
        if not math.isfinite(out):
            raise ValueError(f"{expr} is not finite at pm={pm}, pc={pc}, pr={pr}, T_={T_}, "
                             f"v_={v_}, tau_={tau_} (a pole of the closed form)")
        return out

    return call


c1 = _num(C1)
c2 = _num(C2)
c3 = _num(C3)
c4 = _num(C4)
c7 = _num(C7)
lambda1 = _num(LAMBDA1)
lambda1_proof = _num(LAMBDA1_PROOF)
lambda2 = _num(LAMBDA2)
t5_beta_lo = _num(T5_BETA_LO)
t5_beta_hi = _num(T5_BETA_HI)
_wi0, _wdiff, _wsame = _num(W_I0), _num(W_DIFF), _num(W_SAME)



_UNSET = object()  # check_params: a parameter not given (None, given, is an invalid value)


def check_params(T_=_UNSET, v_=_UNSET, tau_=_UNSET, p_m_=_UNSET, p_c_=_UNSET, p_r_=_UNSET,
                 where=""):
    """The paper's parameter ranges (Section 3): ValueError naming the parameter and its range.
    T_, v_, tau_ integers >= 1 with tau_ <= T_; p_m_, p_c_, p_r_ in (0, 1) with p_c_ + p_r_ < 1.
    A parameter not given is not checked; one given as None is an error."""
    pre = f"{where}: " if where else ""
    for name, val in (("T_", T_), ("v_", v_), ("tau_", tau_), ("p_m_", p_m_), ("p_c_", p_c_),
                      ("p_r_", p_r_)):
        if val is None:
            raise ValueError(f"{pre}{name} must be given (a number), got None")
    T_, v_, tau_, p_m_, p_c_, p_r_ = (None if x is _UNSET else x
                                      for x in (T_, v_, tau_, p_m_, p_c_, p_r_))
    for name, val in (("T_", T_), ("v_", v_), ("tau_", tau_)):
        if val is not None:
            chk.integer(pre + name, val, lo=1)
    if tau_ is not None and T_ is not None and int(tau_) > int(T_):
        raise ValueError(f"{pre}tau_ must be <= T_ (tau distinct topics of T), got {tau_} > {T_}")
    for name, val in (("p_m_", p_m_), ("p_c_", p_c_), ("p_r_", p_r_)):
        if val is not None:
            chk.number(pre + name, val, lo=0, hi=1, lo_open=True, hi_open=True)
    if p_c_ is not None and p_r_ is not None and not float(p_c_) + float(p_r_) < 1:
        raise ValueError(f"{pre}p_c_ + p_r_ must be < 1, got {float(p_c_) + float(p_r_)}")

def constants(p_m_, p_c_, p_r_, T_, v_):
    check_params(T_=T_, v_=v_, p_m_=p_m_, p_c_=p_c_, p_r_=p_r_, where="constants")
    return dict(c1=c1(p_m_, p_c_, p_r_, T_, v_), c2=c2(p_m_, p_c_, p_r_),
                c3=c3(p_m_, p_c_, p_r_), c4=c4(p_m_, p_c_, p_r_))


def theorem2_wstar(T_: int, v_: int, p_m_: float, p_c_: float, p_r_: float) -> np.ndarray:
    """W^V* of Theorem 2 as printed, a (Tv+1) x (Tv+1) numpy array."""
    check_params(T_=T_, v_=v_, p_m_=p_m_, p_c_=p_c_, p_r_=p_r_, where="theorem2_wstar")
    chk.number("theorem2_wstar: p_m_", p_m_, lo=1e-100, hi=1, hi_open=True)  # 1/p_m_^k overflows
    chk.elements("theorem2_wstar", T_v_plus_1=T_ * v_ + 1, Tv_plus_1=T_ * v_ + 1)  # a dense matrix
    n = T_ * v_ + 1
    args = (p_m_, p_c_, p_r_, T_, v_)
    W = np.full((n, n), _wdiff(*args))
    topic = np.r_[0, (np.arange(1, n) - 1) // v_ + 1]
    same = topic[:, None] == topic[None, :]
    W[same] = _wsame(*args)
    W[1:, 0] = _wi0(*args)
    W[0, :] = 0.0
    return W


def definition2_dv(T_: int, v_: int, p_m_: float, p_c_: float, p_r_: float) -> np.ndarray:
    """D^V of Definition 2: D_0j = 0, D_i0 = -c1, D_ii = c3, every other entry 0."""
    check_params(T_=T_, v_=v_, p_m_=p_m_, p_c_=p_c_, p_r_=p_r_, where="definition2_dv")
    chk.elements("definition2_dv", T_v_plus_1=T_ * v_ + 1, Tv_plus_1=T_ * v_ + 1)  # a dense matrix
    n = T_ * v_ + 1
    D = np.zeros((n, n))
    D[np.arange(1, n), np.arange(1, n)] = c3(p_m_, p_c_, p_r_)
    D[1:, 0] = -c1(p_m_, p_c_, p_r_, T_, v_)
    return D


def lemma1_member(T_, v_, p_m_, p_c_, p_r_, u_vec, spread, with_c1=True):
    """A member of the Lemma 1 family: free constants u_vec (length Tv+1) and, for the split of
    each block sum over its v entries, `spread` (n x n array of weights; rows of each block are
    normalised to sum to one).  with_c1=False gives Theorem 1's family (the -c1 term removed)."""
    chk.flag("with_c1", with_c1)
    cc = constants(p_m_, p_c_, p_r_, T_, v_)
    _member_args("lemma1_member", T_, v_, u_vec, spread)
    return lemma1_member_with(T_, v_, cc["c1"] if with_c1 else 0.0, cc["c2"], cc["c3"], u_vec,
                              spread)


def lemma1_member_with(T_, v_, c1_, c2_, c3_, u_vec, spread):
    """`lemma1_member` with the constants given explicitly (c1_ = 0: Theorem 1's family)."""
    check_params(T_=T_, v_=v_, where="lemma1_member_with")
    for name, val in (("c1_", c1_), ("c2_", c2_), ("c3_", c3_)):
        chk.number(name, val)
    _member_args("lemma1_member_with", T_, v_, u_vec, spread)
    n = T_ * v_ + 1
    u_vec = np.asarray(u_vec, dtype=np.float64)
    topic = np.r_[0, (np.arange(1, n) - 1) // v_ + 1]
    W = np.zeros((n, n))
    sp_ = np.asarray(spread, dtype=np.float64)
    for t in range(1, T_ + 1):
        cols = np.arange((t - 1) * v_ + 1, t * v_ + 1)
        wts = sp_[:, cols] / sp_[:, cols].sum(1, keepdims=True)
        block_sum = u_vec * v_ + c3_ * (topic == t)  # row 0 (topic 0) never matches
        W[:, cols] = wts * block_sum[:, None]
    W[0, 0] = -c2_ * u_vec[0]
    W[1:, 0] = -c1_ - c2_ * u_vec[1:]
    return W


def _fit_args(where, W, T_, v_):
    n = _dense(where, T_, v_)
    Wa = chk.finite_array("W", W, ndim=2)
    if Wa.shape != (n, n):
        raise ValueError(f"{where}: W must be (Tv+1, Tv+1) = ({n}, {n}), got {Wa.shape}")


def lemma1_fit(W: np.ndarray, T_: int, v_: int, p_m_, p_c_, p_r_, with_c1=True):
    """Distance of W from the Lemma 1 family: fit each row's u by least squares to the T + 1
    linear conditions (column 0 and the T block sums) and return (u, residuals (n, T+1))."""
    chk.flag("with_c1", with_c1)
    cc = constants(p_m_, p_c_, p_r_, T_, v_)
    _fit_args("lemma1_fit", W, T_, v_)
    return lemma1_fit_with(W, T_, v_, cc["c1"] if with_c1 else 0.0, cc["c2"], cc["c3"])


def lemma1_fit_with(W: np.ndarray, T_: int, v_: int, c1_, c2_, c3_):
    """`lemma1_fit` with the constants given explicitly (c1_ = 0: Theorem 1's conditions)."""
    check_params(T_=T_, v_=v_, where="lemma1_fit_with")
    for name, val in (("c1_", c1_), ("c2_", c2_), ("c3_", c3_)):
        chk.number(name, val)
    _fit_args("lemma1_fit_with", W, T_, v_)
    n = T_ * v_ + 1
    topic = np.r_[0, (np.arange(1, n) - 1) // v_ + 1]
    B = W[:, 1:].reshape(n, T_, v_).sum(-1)  # block sums (n, T)
    own = (topic[:, None] == np.arange(1, T_ + 1)[None, :]).astype(float)
    # conditions: B_it - c3 own_it = v u_i ; W_i0 + c1' = -c2 u_i
    c1v = np.where(topic > 0, c1_, 0.0)
    lhs = np.concatenate([B - c3_ * own, (W[:, 0] + c1v)[:, None]], 1)  # (n, T+1)
    coef = np.r_[np.full(T_, float(v_)), -c2_]
    uhat = lhs @ coef / (coef @ coef)
    return uhat, lhs - uhat[:, None] * coef[None, :]


def theorem3_bounds(T_, tau_, v_, p_m_, p_c_, p_r_, proof_constant=False):
    """(lambda1 (tau - 1), lambda2 T) of Theorem 3 (or the proof's Case-1 constant)."""
    check_params(T_=T_, tau_=tau_, v_=v_, p_m_=p_m_, p_c_=p_c_, p_r_=p_r_, where="theorem3_bounds")
    chk.flag("proof_constant", proof_constant)
    l1 = (lambda1_proof if proof_constant else lambda1)(p_m_, p_c_, p_r_)
    return l1 * (tau_ - 1), lambda2(p_m_, p_c_, p_r_) * T_


def theorem5_bounds(T_, tau_, v_, p_m_, p_c_, p_r_):
    """(beta_lo, beta_hi, alpha_over_beta_hi) of Theorem 5: beta_lo < beta < beta_hi and
    alpha < c4 beta / (v - 1)."""
    check_params(T_=T_, tau_=tau_, p_m_=p_m_, p_c_=p_c_, p_r_=p_r_, where="theorem5_bounds")
    chk.integer("theorem5_bounds: v_", v_, lo=2)
    args = (p_m_, p_c_, p_r_, T_, v_, tau_)
    if not math.sqrt(v_ - 1) > 1 / c4(p_m_, p_c_, p_r_) + 1:
        raise ValueError(f"v must exceed (1/c4 + 1)^2 + 1 for c7 > 0, got v={v_}")
    return (t5_beta_lo(*args), t5_beta_hi(*args), c4(p_m_, p_c_, p_r_) / (v_ - 1))
