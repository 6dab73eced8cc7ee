"""Section 3.1 / Appendix A.2: Theorem 2 (linear phi, exp attention, zero init, K = 1), Eqn. 4, in
sympy (lambdified for numbers).  Time t is gradient flow time.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory import validate as chk
from theory.joma._checks import _callable, _fin

v, vp, Delta, Deltap, t, A = sp.symbols("v v' Delta Delta' t A", real=True)

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


theorem2_printed_term = chk.closed_form(_lam(sp.erf(v / 2), v), ("v",),  # erf(v/2): the
                                       what="theorem2_printed_term")  # printed numerator
theorem2_corrected_term = chk.closed_form(_lam(sp.erf(v / sp.sqrt(2)), v), ("v",),
                                         what="theorem2_corrected_term")
# THEOREM2_CORRECTED_VALUE, the common value of erf(v_l/sqrt 2)/Delta_l: sqrt(2/pi) t / A
theorem2_corrected_value = chk.closed_form(_lam(THEOREM2_CORRECTED_VALUE, t, A), ("t", "A"),
                                          positive=("A",), what="theorem2_corrected_value")
_trajectory = _lam(THEOREM2_TRAJECTORY, Delta, t, A)
_blowup_time = _lam(THEOREM2_BLOWUP, Delta, A)
_limit = _lam(THEOREM2_LIMIT, Delta, Deltap)


def _broadcast(**arrays):
    try:
        return np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise ValueError(f"{' and '.join(arrays)} must broadcast, got shapes {shapes}") from None


def theorem2_trajectory(Delta, t, A):
    """THEOREM2_TRAJECTORY in numpy: v_l(t) = sqrt2 erfinv(sqrt(2/pi) Delta_l t / A) (broadcasts),
    for A > 0 and t up to the blow-up time sqrt(pi/2) A / |Delta_l| (where v_l = +-inf)."""
    _fin("Delta", Delta)
    _fin("t", t)
    _fin("A", A, lo=0, lo_open=True)
    d, tt, a = _broadcast(Delta=Delta, t=t, A=A)
    if np.any(np.abs(np.sqrt(2 / np.pi) * d * tt / a) > 1):
        raise ValueError("t must lie within the blow-up time sqrt(pi/2) A / |Delta| of Theorem 2 "
                         "(|t| <= t*: no solution past the blow-up)")
    return _trajectory(Delta, t, A)


def theorem2_blowup_time(Delta, A):
    """THEOREM2_BLOWUP in numpy: t* = sqrt(pi/2) A / |Delta| (broadcasts), A > 0; inf where
    Delta = 0 (that component never blows up)."""
    _fin("Delta", Delta)
    _fin("A", A, lo=0, lo_open=True)
    _broadcast(Delta=Delta, A=A)
    return _blowup_time(Delta, A)


def theorem2_limit(Delta, Deltap):
    """THEOREM2_LIMIT in numpy: v_l(t*) = sqrt2 erfinv(Delta_l / |Delta_l*|) (broadcasts), with
    Delta' = Delta_l* != 0 the largest |Delta| (so |Delta_l| <= |Delta_l*|)."""
    _fin("Delta", Delta)
    dp = _fin("Deltap", Deltap)
    if np.any(dp == 0):
        raise ValueError("Deltap (Delta_l*, the largest |Delta|) must be nonzero")
    d, dpb = _broadcast(Delta=Delta, Deltap=Deltap)
    if np.any(np.abs(d) > np.abs(dpb)):
        raise ValueError("Delta must satisfy |Delta| <= |Deltap| (Deltap = Delta_l*, the largest "
                         "|Delta_l|)")
    return _limit(Delta, Deltap)


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
