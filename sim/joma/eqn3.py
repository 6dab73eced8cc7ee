"""JoMA (Tian et al., ICLR 2024), Section 3.1: the reduced dynamics of Eqn. 3,

    dv/dt = Delta o exp(v^2 / 2 + c)   (exp attention, K = 1, linear phi),

integrated with scipy's solve_ivp (float64 numpy), and its blow-up time.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from sim.joma.eqn2 import BlowUpError
from theory import validate as chk


def solve_eqn3(delta, horizon: float, *, c=None, v0=None, A: float = 1.0, n_eval: int = 50,
               rtol: float = 1e-11, atol: float = 1e-13):
    """Integrate Eqn. 3 with scipy's solve_ivp (DOP853).  Eqn. 3 is printed without A (the exp
    attention constant); with a general A the right-hand side carries 1/A (Eqn. 21), which is
    what `A` does here.  Raises BlowUpError if `horizon` is at or past the blow-up time."""
    chk.finite_array("delta", delta, ndim=1)
    for name, x in (("c", c), ("v0", v0)):
        if x is not None:
            chk.finite_array(name, x)
    delta = np.asarray(delta, dtype=np.float64)
    if delta.ndim != 1 or delta.size < 1 or not np.all(np.isfinite(delta)):
        raise ValueError("delta must be a finite 1-D array")
    c = np.zeros_like(delta) if c is None else np.asarray(c, dtype=np.float64)
    v0 = np.zeros_like(delta) if v0 is None else np.asarray(v0, dtype=np.float64)
    A = chk.number("A", A, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    rtol = chk.number("rtol", rtol, lo=1e-13, hi=1.0)  # scipy's own floor is 100 eps
    atol = chk.number("atol", atol, lo=0, lo_open=True)
    n_eval = chk.integer("n_eval", n_eval, lo=2, hi=10 ** 6)
    if c.shape != delta.shape or v0.shape != delta.shape or not (
            np.all(np.isfinite(c)) and np.all(np.isfinite(v0))):
        raise ValueError(f"c and v0 must be finite arrays of the shape of delta {delta.shape}")
    t_star = eqn3_blowup_time(delta, c=c, v0=v0, A=A)
    if horizon >= t_star:
        raise BlowUpError(f"horizon {horizon:g} is at or past the blow-up time {t_star:g} of Eqn. 3")

    def rhs(_t, v):
        return delta * np.exp(v * v / 2 + c) / A

    t_eval = np.linspace(0.0, horizon, n_eval)
    sol = solve_ivp(rhs, (0.0, horizon), v0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.t, sol.y.T


def eqn3_blowup_time(delta, *, c=None, v0=None, A: float = 1.0) -> float:
    """Blow-up time of Eqn. 3: component l reaches +-inf at
    t_l = A e^{-c_l} int_{v0_l}^{sign(D_l) inf} e^{-u^2/2} du / |D_l|  (separable ODE)."""
    from scipy.special import erfc

    d_ = chk.finite_array("delta", delta, ndim=1)
    if d_.size < 1:
        raise ValueError("delta must be a finite 1-D array with at least one entry")
    for name, x in (("c", c), ("v0", v0)):
        if x is not None and chk.finite_array(name, x, ndim=1).shape != d_.shape:
            raise ValueError(f"{name} must be a finite array of the shape of delta {d_.shape}, got "
                             f"{np.shape(x)}")
    chk.number("A", A, lo=0, lo_open=True)
    delta = np.asarray(delta, dtype=np.float64)
    c = np.zeros_like(delta) if c is None else np.asarray(c, dtype=np.float64)
    v0 = np.zeros_like(delta) if v0 is None else np.asarray(v0, dtype=np.float64)
    with np.errstate(divide="ignore"):
        tail = math.sqrt(math.pi / 2) * erfc(np.sign(delta) * v0 / math.sqrt(2))
        t = np.where(delta != 0, A * np.exp(-c) * tail / np.abs(delta), np.inf)
    return float(np.min(t))
