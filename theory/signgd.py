"""Closed forms for SignGD on a two-layer transformer (Li et al., ICLR 2025), in sympy.

Derived [D] items of the statement sheet, for orthogonal data with disjoint training supports
and L = 2: the margin in terms of the tracked inner products, the softmax logits, the constant
step magnitudes and the linear value dynamics, and E||xi||_1 (the constant behind Lemma 4.1's
Theta(t eta s sigma_p)).  Pure math: no torch.
"""

from __future__ import annotations

import math

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


# --------------------------------------------------------------------------------------------
# Input checks of the numeric forms (theory/validate.py): finite real numbers or arrays in range,
# shapes that broadcast to at most MAX_ELEMENTS, and a finite result (1e300-style extremes that
# overflow float64 are a ValueError naming the parameters, never an inf or a NaN returned).
# The checked call passes its arguments on unchanged: a valid call returns what it always did.
# --------------------------------------------------------------------------------------------
POS = dict(lo=0, lo_open=True)   # finite and > 0
NONNEG = dict(lo=0)              # finite and >= 0
ANY: dict = {}                   # finite
PROB = dict(lo=0, hi=1)          # in [0, 1]


def _check(where: str, **named) -> dict:
    """Each named argument (value, range) as a float64 array, if it holds finite real numbers in
    its range (not bools, strings or None) and all of them broadcast together within the cap."""
    arrays = {}
    for name, (x, rng) in named.items():
        a = chk.finite_array(name, x, lo=rng.get("lo"), lo_open=rng.get("lo_open", False),
                             dtype_kind="iuf")
        hi = rng.get("hi")
        if hi is not None and a.size and a.max() > hi:
            raise ValueError(f"{name} must be in [{rng.get('lo', '-inf')}, {hi}] in every "
                             f"entry, got max {a.max()}")
        arrays[name] = a
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {a.shape}" for k, a in arrays.items())
        raise ValueError(f"{where}: the arguments must broadcast together, got {shapes}") from None
    n = math.prod(shape)
    if n > chk.MAX_ELEMENTS:
        raise ValueError(f"{where}: {', '.join(arrays)} broadcast to shape {shape}, {n:.3g} "
                         f"elements, above the cap {chk.MAX_ELEMENTS:.3g}")
    return arrays


def _finite(where: str, f, args: tuple, names: tuple):
    """f(*args), if every entry of the result is finite (else a ValueError: the arguments are
    large or small enough to overflow float64)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = f(*args)
    a = out.detach().cpu().numpy() if hasattr(out, "detach") else np.asarray(out, np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{where}: {', '.join(names)} overflow float64 (the result is not "
                         f"finite); use values of moderate magnitude")
    return out


_value_mu = sp.lambdify((Vmu0, eta, t), V_MU_T, "numpy")
_value_noise = sp.lambdify((Vi0, eta, t, xi1), V_I_T, "numpy")


def value_mu(V_mu0, eta, t):
    """V_mu(t) = V_mu0 + 2 eta t (broadcasts): V_mu0 finite, eta > 0, t >= 0."""
    _check("value_mu", V_mu0=(V_mu0, ANY), eta=(eta, POS), t=(t, NONNEG))
    return _finite("value_mu", _value_mu, (V_mu0, eta, t), ("V_mu0", "eta", "t"))


def value_noise(V_i0, eta, t, xi_l1):
    """V_i(t) = V_i0 + 2 eta t ||xi_i||_1 (broadcasts): V_i0 finite, eta > 0, t >= 0,
    xi_l1 >= 0."""
    _check("value_noise", V_i0=(V_i0, ANY), eta=(eta, POS), t=(t, NONNEG),
           xi_l1=(xi_l1, NONNEG))
    return _finite("value_noise", _value_noise, (V_i0, eta, t, xi_l1),
                   ("V_i0", "eta", "t", "xi_l1"))

# End of Stage I [D]: D_i(t) = V_i(t) - V_mu(t) = D_i(0) + 2 eta t (||xi_i||_1 - 1) exactly (the two
# linear laws above), so sample i's mean value noise overtakes the signal after the crossing time
# t_i* = (V_mu0 - V_i0) / (2 eta (||xi_i||_1 - 1)), and T_1 (first step with D_i > 0 for every i)
# is max_i (floor(t_i*) + 1 if t_i* >= 0 else 0).  The mean value v = mean row difference starts
# as N(0, 2 sigma_0^2 / m_v) per coordinate, so D_i(0) sqrt(m_v) / sigma_0 has an m_v-free law and
# eta T_1 / sigma_0 = Theta((s m_v)^{-1/2}) (||xi||_2 ~ sigma_p sqrt s over ||xi||_1 ~ s sigma_p),
# with no sigma_p left: T_1 << T_2 can only come from m_v (see t2_pair_delay_bound).
D_CROSS = (Vmu0 - Vi0) / (2 * eta * (xi1 - 1))
_crossing_time = sp.lambdify((Vmu0, Vi0, eta, xi1), D_CROSS, "numpy")


def crossing_time(V_mu0, V_i0, eta, xi_l1):
    """t_i* = (V_mu0 - V_i0) / (2 eta (||xi_i||_1 - 1)) (broadcasts): V_mu0, V_i0 finite,
    eta > 0, xi_l1 >= 0 and != 1 in every entry (at 1 the two linear laws are parallel)."""
    a = _check("crossing_time", V_mu0=(V_mu0, ANY), V_i0=(V_i0, ANY), eta=(eta, POS),
               xi_l1=(xi_l1, NONNEG))
    if np.any(a["xi_l1"] == 1):
        raise ValueError("crossing_time: xi_l1 must be in [0, 1) or (1, inf) in every entry "
                         "(at ||xi_i||_1 = 1 the laws are parallel: no crossing time), got "
                         f"{int((a['xi_l1'] == 1).sum())} entries equal to 1")
    return _finite("crossing_time", _crossing_time, (V_mu0, V_i0, eta, xi_l1),
                   ("V_mu0", "V_i0", "eta", "xi_l1"))


def stage1_end(V_mu0, V0, eta_, xi_l1):
    """T_1 from the init: V_mu0 (S,), V0 (S, n), xi_l1 (S, n) = ||xi_i||_1; returns (S,) floats
    (inf where some sample has ||xi_i||_1 <= 1 and D_i(0) <= 0: its D_i never grows).  eta_ is
    a number > 0 or an array of them broadcastable to V0's leading shape (one per instance)."""
    a_mu = chk.finite_array("V_mu0", V_mu0, dtype_kind="iuf")
    a_v = chk.finite_array("V0", V0, ndim=a_mu.ndim + 1, dtype_kind="iuf")
    a_xi = chk.finite_array("xi_l1", xi_l1, lo=0, dtype_kind="iuf")
    if a_v.shape[:-1] != a_mu.shape or a_v.shape[-1] < 1:
        raise ValueError(f"stage1_end: V0 must be (S, n) with V_mu0 (S,), got V0 {a_v.shape} and "
                         f"V_mu0 {a_mu.shape}")
    if a_xi.shape != a_v.shape:
        raise ValueError(f"stage1_end: xi_l1 must have V0's shape {a_v.shape}, got {a_xi.shape}")
    a_eta = chk.finite_array("eta_", eta_, lo=0, lo_open=True, dtype_kind="iuf")
    try:
        np.broadcast_shapes(a_eta.shape + (1,), a_v.shape)
    except ValueError:
        raise ValueError(f"stage1_end: eta_ must be a number or one per instance (shape "
                         f"{a_mu.shape}), got shape {a_eta.shape}") from None
    V_mu0, V0, xi_l1 = (np.asarray(x, dtype=np.float64) for x in (V_mu0, V0, xi_l1))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        D0 = V0 - V_mu0[..., None]
        # one eta per instance (shape (S,)) applies to all n samples of it: eta_[..., None]
        e = np.asarray(eta_)[..., None] if 0 < a_eta.ndim == a_mu.ndim else eta_
        tc = _crossing_time(V_mu0[..., None], V0, e, xi_l1)
    # inf is the answer only where D_i never grows; elsewhere it is float64 overflow
    if not np.all(np.isfinite(D0)) or np.any(~np.isfinite(tc) & (D0 <= 0) & (xi_l1 > 1)):
        raise ValueError("stage1_end: V_mu0, V0, eta_, xi_l1 overflow float64 (D_i(0) or the "
                         "crossing time is not finite); use values of moderate magnitude")
    ti = np.where(D0 > 0, 0.0, np.where(xi_l1 > 1, np.floor(tc) + 1.0, np.inf))
    return ti.max(-1)


# Stage II's delay [D, pair model]: with the softmax at 1/2 and alpha, beta neglected next to the
# noise (|beta| ~ sigma_0 vs |b| ~ sigma_0 sigma_p sqrt s), a disagreeing pair (a, b) of sample i
# moves apart by c_i = eta ||xi_i||_1 per step while D_i < 0 and towards each other afterwards, so
# sample i's flip time t_i <= T_1 delays the pair's alignment by at most 2 t_i: T_2(v_0) lies in
# [T_2(v_0 = 0), T_2(v_0 = 0) + 2 T_1].  T_2(v_0 = 0) does not depend on m_v, hence
# T_2 / T_1 = Theta(sqrt(m_v)) and is Theta(1) along eta, sigma_0, s and sigma_p.
T2_DELAY_FACTOR = 2

_margin = sp.lambdify((s11, s21, Vmu, Vi), MARGIN, "numpy")
_expected_xi_l1 = sp.lambdify((s, sigma_p), E_XI_L1, "numpy")
_lemma41_slope = sp.lambdify((eta, s, sigma_p), LEMMA41_SLOPE, "numpy")


def margin(s11, s21, V_mu, V_i):
    """y f = (s11 + s21) V_mu + ((1 - s11) + (1 - s21)) V_i (broadcasts): s11, s21 softmax
    weights in [0, 1], V_mu, V_i finite."""
    _check("margin", s11=(s11, PROB), s21=(s21, PROB), V_mu=(V_mu, ANY), V_i=(V_i, ANY))
    return _finite("margin", _margin, (s11, s21, V_mu, V_i), ("s11", "s21", "V_mu", "V_i"))


def expected_xi_l1(s, sigma_p):
    """E||xi||_1 = s sigma_p sqrt(2/pi) (broadcasts): s > 0, sigma_p > 0."""
    _check("expected_xi_l1", s=(s, POS), sigma_p=(sigma_p, POS))
    return _finite("expected_xi_l1", _expected_xi_l1, (s, sigma_p), ("s", "sigma_p"))


def lemma41_slope(eta, s, sigma_p):
    """Lemma 4.1 (1)'s slope 2 sqrt(2/pi) eta s sigma_p (broadcasts): eta, s, sigma_p > 0."""
    _check("lemma41_slope", eta=(eta, POS), s=(s, POS), sigma_p=(sigma_p, POS))
    return _finite("lemma41_slope", _lemma41_slope, (eta, s, sigma_p), ("eta", "s", "sigma_p"))


def margin_identity_residual():
    """sympy check that the fixed-head model's margin equals MARGIN: with attention rows
    (s11, 1 - s11) and (s21, 1 - s21) over (signal, noise) keys and patch values y V_mu, y V_i,
    y f = y * sum_rows (row . values) with y^2 = 1."""
    y = sp.symbols("y")
    f = (s11 * y * Vmu + (1 - s11) * y * Vi) + (s21 * y * Vmu + (1 - s21) * y * Vi)
    return sp.simplify((y * f).subs(y**2, 1).expand().subs(y**2, 1) - MARGIN.expand())
