"""Closed forms for SignGD on a two-layer transformer (Li et al., ICLR 2025), in sympy.

Derived [D] items of the statement sheet, for orthogonal data with disjoint training supports
and L = 2: the margin in terms of the tracked inner products, the softmax logits, the constant
step magnitudes and the linear value dynamics, and E||xi||_1 (the constant behind Lemma 4.1's
Theta(t eta s sigma_p)).  Pure math: no torch.
"""

from __future__ import annotations

import sympy as sp

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
