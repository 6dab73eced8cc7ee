"""Section 4 / Appendix A.4.1: Eqn. 7, Theorem 4, Lemmas 5-6, entropy and rank dynamics.

JoMA Eqn. 7: the reduced dynamics of one (or K) MLP node(s) with exp self-attention.

    v_dot  ∝  (mu - v) ∘ exp(v^2 / 2)                                  (Eqn. 7, K = 1)

and, for K hidden nodes sharing one exp attention (Theorem 1: z = 1/2 sum_k v_k^2 + c, the
constant c absorbed into the common factor),

    v_k_dot  ∝  (mu_k - v_k) ∘ exp(z),   z = 1/2 sum_k v_k^2            (k = 1..K).

The "∝" is a positive common scalar factor; `factor(t, V)` supplies any positive one (default 1).
`attention=False` drops the attention term exp(.) (the no-attention control v_dot = mu - v).

This is a reduced ODE, so it is integrated with scipy's `solve_ivp` in float64 numpy (no torch).
`state="v"` integrates v itself (Eqn. 7 literally); `state="deviation"` integrates e = v - mu,
the same ODE after a translation of the origin, which keeps the relative precision of
delta = 1 - v/mu = -e/mu down to tiny delta (the fixed point v = mu is approached geometrically,
so `1 - v/mu` computed from v loses digits once delta < ~1e-7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from scipy.integrate import solve_ivp

from sim import measure
from theory import validate as chk

# The solvers' work grows with t_end x rate, rate = c e^z the linear rate of Eqn. 7 near its fixed
# point (c = factor(0, v0), z = 1/2 sum_k max(v0^2, mu^2)): an explicit method (DOP853) is held to
# steps of ~ 1/rate once v is near mu, ~2 right-hand-side evaluations per unit of t_end x rate.
# The audit's runs stay below ~1.5e4; 1e5 (a few seconds of DOP853) bounds a call.
MAX_RATE_TIME = 1e5


@dataclass(frozen=True)
class SpeedRun:
    """Output of `simulate_eqn7`.

    t     -- (T,) output times (t[0] = 0).
    v     -- (T, d) for one node, (T, K, d) for K nodes: v(t).
    delta -- same shape: delta(t) = 1 - v(t)/mu, computed from the integrated state (precise
             to relative solver tolerance with state="deviation").
    mu    -- the targets, shape (d,) or (K, d).
    nfev  -- right-hand-side evaluations used.
    """

    t: np.ndarray
    v: np.ndarray
    delta: np.ndarray
    mu: np.ndarray
    nfev: int


def _as_finite(name, x, ndim_ok=(1, 2)):
    chk.finite_array(name, x)  # an array of real numbers (not a string, not ragged)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim not in ndim_ok:
        raise ValueError(f"{name} must be a 1-d (d,) or 2-d (K, d) array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def simulate_eqn7(mu, v0, t_end: float, *, n_points: int = 200, t_eval=None,
                  attention: bool = True, factor: Callable[[float, np.ndarray], float] | None = None,
                  state: str = "v", rtol: float = 1e-11, atol: float = 1e-13,
                  method: str = "DOP853") -> SpeedRun:
    """Integrate Eqn. 7 from v(0) = v0 to t_end.

    mu      -- targets, (d,) (one node) or (K, d) (K nodes sharing one exp attention); every
               component must be > 0 (Theorem 4's case "mu > 0").
    v0      -- initial v, same shape as mu; r0 = v0/mu must differ from 1 in every component
               (delta(0) = 0 would be a component already converged: ln delta(0) undefined).
    t_end   -- horizon, finite and > 0.
    n_points-- number of output times, uniformly spaced on [0, t_end] (ignored if t_eval given).
    t_eval  -- explicit increasing output times in [0, t_end] starting at 0.
    attention -- False drops exp(.): the control dynamics v_dot = factor * (mu - v).
    factor  -- callable (t, V) -> positive finite scalar: the common factor hidden in "∝"
               (V has the shape of mu). Default: 1.
    state   -- "v" (integrate v) or "deviation" (integrate e = v - mu; same ODE).
    rtol, atol -- solver tolerances (atol is scaled by mu's size for state="v"; for
               state="deviation" it is applied to e, use a tiny value such as 1e-300).
    """
    mu = _as_finite("mu", mu)
    v0 = _as_finite("v0", v0)
    if v0.shape != mu.shape:
        raise ValueError(f"v0 must have the shape of mu {mu.shape}, got {v0.shape}")
    if np.any(mu <= 0):
        raise ValueError(f"mu must be > 0 componentwise (Theorem 4 treats mu > 0), got {mu}")
    r0 = v0 / mu
    if np.any(r0 == 1.0):
        raise ValueError("v0/mu must differ from 1 in every component (delta(0) != 0), got "
                         f"r0 = {r0}")
    if isinstance(t_end, (str, bytes, bool)) or not hasattr(t_end, "__float__"):
        raise ValueError(f"t_end must be a finite number > 0, got {t_end!r}")
    t_end = float(t_end)
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be finite and > 0, got {t_end}")
    if state not in ("v", "deviation"):
        raise ValueError(f"state must be 'v' or 'deviation', got {state!r}")
    chk.number("rtol", rtol, lo=0, hi=1, lo_open=True, hi_open=True)
    chk.number("atol", atol, lo=0)
    chk.flag("attention", attention)
    chk.function("factor", factor, none=True)
    if not (0 < rtol < 1) or not (atol >= 0):
        raise ValueError(f"need 0 < rtol < 1 and atol >= 0, got rtol={rtol}, atol={atol}")
    # log of the rate c e^z near the fixed point (z over the path, c = factor at t = 0)
    log_rate = 0.0
    if attention:
        big = np.maximum(v0 * v0, mu * mu)
        log_rate = 0.5 * float(np.max(big if mu.ndim == 1 else big.sum(axis=0)))
    if factor is not None:
        c0 = float(factor(0.0, v0))
        if not (np.isfinite(c0) and c0 > 0):
            raise ValueError(f"factor(t, V) must be a positive finite scalar, got {c0} at t=0")
        log_rate += math.log(c0)
    if math.log(t_end) + log_rate > math.log(MAX_RATE_TIME):
        limit = math.exp(math.log(MAX_RATE_TIME) - log_rate)
        raise ValueError(f"t_end must be in (0, {limit:.4g}] for these mu, v0 (t_end x rate <= "
                         f"{MAX_RATE_TIME:g}, rate = c e^z = e^{log_rate:.4g} the rate near the "
                         f"fixed point: the solver's work grows with it), got t_end = {t_end:g}")
    if t_eval is None:
        chk.integer("n_points", n_points, lo=2, hi=10 ** 6)
        t_eval = np.linspace(0.0, t_end, int(n_points))
    else:
        chk.finite_array("t_eval", t_eval, ndim=1)
        t_eval = np.asarray(t_eval, dtype=np.float64)
        if (t_eval.ndim != 1 or t_eval.size < 2 or t_eval[0] != 0.0 or np.any(np.diff(t_eval) <= 0)
                or t_eval[-1] > t_end or not np.all(np.isfinite(t_eval))):
            raise ValueError("t_eval must be finite, strictly increasing, start at 0 and end "
                             f"<= t_end = {t_end}")

    shape = mu.shape
    mu_f = mu.ravel()

    def common(t, v):
        if factor is None:
            return 1.0
        c = float(factor(t, v.reshape(shape)))
        if not (np.isfinite(c) and c > 0):
            raise ValueError(f"factor(t, V) must be a positive finite scalar, got {c} at t={t}")
        return c

    def attn(v):
        if not attention:
            return 1.0
        if mu.ndim == 1:
            return np.exp(0.5 * v * v)
        z = 0.5 * np.sum(v.reshape(shape) ** 2, axis=0)  # shared attention logits, (d,)
        return np.broadcast_to(np.exp(z), shape).ravel()

    if state == "v":
        y0 = v0.ravel().copy()

        def rhs(t, y):
            return common(t, y) * (mu_f - y) * attn(y)
        atol_eff = atol * max(1.0, float(np.max(np.abs(mu))))
    else:
        y0 = (v0 - mu).ravel()

        def rhs(t, y):
            v = mu_f + y
            return -common(t, v) * y * attn(v)
        atol_eff = atol

    sol = solve_ivp(rhs, (0.0, t_end), y0, method=method, t_eval=t_eval, rtol=rtol,
                    atol=atol_eff, dense_output=False)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    y = sol.y.T  # (T, K*d)
    if state == "v":
        v = y
        delta = 1.0 - v / mu_f
    else:
        v = mu_f + y
        delta = -y / mu_f
    T = y.shape[0]
    return SpeedRun(t=sol.t, v=v.reshape((T,) + shape), delta=delta.reshape((T,) + shape),
                    mu=mu, nfev=int(sol.nfev))


def entropy_softmax_sq(v) -> np.ndarray:
    """entropy(softmax(v^2)) along the last axis (nats): Fig. 4 (right)'s attention entropy."""
    va = chk.finite_array("v", v)
    if va.ndim < 1 or va.shape[-1] < 1:
        raise ValueError(f"v must have a last axis of size >= 1, got shape {va.shape}")
    a = np.asarray(v, dtype=np.float64) ** 2
    a = a - a.max(axis=-1, keepdims=True)
    p = np.exp(a)
    p /= p.sum(axis=-1, keepdims=True)
    return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)


def stable_rank(V) -> np.ndarray:
    """||V||_F^2 / ||V||_2^2 of the last two axes (batched)."""
    Va = chk.finite_array("V", V)
    if Va.ndim < 2 or Va.shape[-1] < 1 or Va.shape[-2] < 1:
        raise ValueError(f"V must have at least 2 non-empty axes, got shape {Va.shape}")
    if np.any(np.abs(Va).max(axis=(-2, -1)) == 0):
        raise ValueError("V must not be a zero matrix (its stable rank is undefined)")
    return measure.stable_rank(torch.as_tensor(np.asarray(V, dtype=np.float64))).numpy()
