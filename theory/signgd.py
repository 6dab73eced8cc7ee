"""Closed forms for SignGD on a two-layer transformer (Li et al., ICLR 2025), in sympy.

Derived [D] items of the statement sheet, for orthogonal data with disjoint training supports
and L = 2: the margin in terms of the tracked inner products, the softmax logits, the constant
step magnitudes and the linear value dynamics, and E||xi||_1 (the constant behind Lemma 4.1's
Theta(t eta s sigma_p)).  Pure math: no torch.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory import validate as chk

t, eta, s, sigma_p, xi1 = sp.symbols("t eta s sigma_p xi_l1", positive=True)
Vmu0, Vi0 = sp.symbols("V_mu0 V_i0", real=True)
s11, s21, Vmu, Vi = sp.symbols("s11 s21 V_mu V_i", real=True)

# Linear value dynamics (Section 4, eqs. 8-9): each value coordinate moves by eta per step in a
# sign fixed for all time, so v = mean row difference moves by 2 eta.
V_MU_T = Vmu0 + 2 * eta * t
V_I_T = Vi0 + 2 * eta * t * xi1
STEP_SIGNAL = eta  # |Delta alpha_s| = |Delta beta_s| = |Delta <w_V, mu>| per step
STEP_NOISE = eta * xi1  # |Delta a_{s,i}| = |Delta b_{s,i}| = |Delta <w_V, y xi_i>| per step

# y_i f_i for L = 2 orthogonal data: each query row puts s_.1 on the signal key, s_.2 on noise
MARGIN = (s11 + s21) * Vmu + ((1 - s11) + (1 - s21)) * Vi

# E||xi||_1 for s i.i.d. N(0, sigma_p^2) entries: s sigma_p sqrt(2/pi)
_z = sp.symbols("z", real=True)
E_ABS_GAUSS = sp.simplify(sp.integrate(sp.Abs(_z) * sp.exp(-_z**2 / 2) / sp.sqrt(2 * sp.pi),
                                       (_z, -sp.oo, sp.oo)))
E_XI_L1 = s * sigma_p * E_ABS_GAUSS
# Lemma 4.1 (1) with its constant: E[V_i(t) - V_i(0)] = 2 sqrt(2/pi) t eta s sigma_p
LEMMA41_SLOPE = sp.simplify(2 * eta * E_XI_L1)

value_mu = sp.lambdify((Vmu0, eta, t), V_MU_T, "numpy")
value_noise = sp.lambdify((Vi0, eta, t, xi1), V_I_T, "numpy")
# End of Stage I [D]: D_i(t) = V_i(t) - V_mu(t) = D_i(0) + 2 eta t (||xi_i||_1 - 1) exactly (the two
# linear laws above), so sample i's mean value noise overtakes the signal after the crossing time
# t_i* = (V_mu0 - V_i0) / (2 eta (||xi_i||_1 - 1)), and T_1 (first step with D_i > 0 for every i)
# is max_i (floor(t_i*) + 1 if t_i* >= 0 else 0).  The mean value v = mean row difference starts
# as N(0, 2 sigma_0^2 / m_v) per coordinate, so D_i(0) sqrt(m_v) / sigma_0 has an m_v-free law and
# eta T_1 / sigma_0 = Theta((s m_v)^{-1/2}) (||xi||_2 ~ sigma_p sqrt s over ||xi||_1 ~ s sigma_p),
# with no sigma_p left: T_1 << T_2 can only come from m_v (see t2_pair_delay_bound).
D_CROSS = (Vmu0 - Vi0) / (2 * eta * (xi1 - 1))
crossing_time = sp.lambdify((Vmu0, Vi0, eta, xi1), D_CROSS, "numpy")


def stage1_end(V_mu0, V0, eta_, xi_l1):
    """T_1 from the init: V_mu0 (S,), V0 (S, n), xi_l1 (S, n) = ||xi_i||_1; returns (S,) floats
    (inf where some sample has ||xi_i||_1 <= 1 and D_i(0) <= 0: its D_i never grows).  eta_ is
    a number > 0 or an array of them broadcastable to V0's leading shape (one per instance)."""
    a_mu = chk.finite_array("V_mu0", V_mu0)
    a_v = chk.finite_array("V0", V0, ndim=a_mu.ndim + 1)
    a_xi = chk.finite_array("xi_l1", xi_l1, lo=0)
    if a_v.shape[:-1] != a_mu.shape or a_v.shape[-1] < 1:
        raise ValueError(f"stage1_end: V0 must be (S, n) with V_mu0 (S,), got V0 {a_v.shape} and "
                         f"V_mu0 {a_mu.shape}")
    if a_xi.shape != a_v.shape:
        raise ValueError(f"stage1_end: xi_l1 must have V0's shape {a_v.shape}, got {a_xi.shape}")
    a_eta = chk.finite_array("eta_", eta_, lo=0, lo_open=True)
    try:
        np.broadcast_shapes(a_eta.shape + (1,), a_v.shape)
    except ValueError:
        raise ValueError(f"stage1_end: eta_ must be a number or one per instance (shape "
                         f"{a_mu.shape}), got shape {a_eta.shape}") from None
    V_mu0, V0, xi_l1 = (np.asarray(x, dtype=np.float64) for x in (V_mu0, V0, xi_l1))
    D0 = V0 - V_mu0[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        tc = crossing_time(V_mu0[..., None], V0, eta_, xi_l1)
    ti = np.where(D0 > 0, 0.0, np.where(xi_l1 > 1, np.floor(tc) + 1.0, np.inf))
    return ti.max(-1)


# Stage II's delay [D, pair model]: with the softmax at 1/2 and alpha, beta neglected next to the
# noise (|beta| ~ sigma_0 vs |b| ~ sigma_0 sigma_p sqrt s), a disagreeing pair (a, b) of sample i
# moves apart by c_i = eta ||xi_i||_1 per step while D_i < 0 and towards each other afterwards, so
# sample i's flip time t_i <= T_1 delays the pair's alignment by at most 2 t_i: T_2(v_0) lies in
# [T_2(v_0 = 0), T_2(v_0 = 0) + 2 T_1].  T_2(v_0 = 0) does not depend on m_v, hence
# T_2 / T_1 = Theta(sqrt(m_v)) and is Theta(1) along eta, sigma_0, s and sigma_p.
T2_DELAY_FACTOR = 2

margin = sp.lambdify((s11, s21, Vmu, Vi), MARGIN, "numpy")
expected_xi_l1 = sp.lambdify((s, sigma_p), E_XI_L1, "numpy")
lemma41_slope = sp.lambdify((eta, s, sigma_p), LEMMA41_SLOPE, "numpy")


def margin_identity_residual():
    """sympy check that the fixed-head model's margin equals MARGIN: with attention rows
    (s11, 1 - s11) and (s21, 1 - s21) over (signal, noise) keys and patch values y V_mu, y V_i,
    y f = y * sum_rows (row . values) with y^2 = 1."""
    y = sp.symbols("y")
    f = (s11 * y * Vmu + (1 - s11) * y * Vi) + (s21 * y * Vmu + (1 - s21) * y * Vi)
    return sp.simplify((y * f).subs(y**2, 1).expand().subs(y**2, 1) - MARGIN.expand())
