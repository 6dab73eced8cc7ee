"""Sections 2-3 / Appendix A.2: Theorem 1 (Section 3), the invariants of Eqn. 2, in sympy.

Conventions. v_k := U_C^T w_k (Theorem 1).  Per contextual token l, write
s2_l := sum_k v_{kl}^2  and  n2 := sum_k ||v_k||_2^2  (so sum_l s2_l = n2).  Time t is gradient
flow time; a gradient step of size eta advances t by eta.

Each invariant is an expression I(state) that Theorem 1 says is constant in time (= c).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory.joma._checks import _expr, _fin

z, s2, n2, bbar, c = sp.symbols("z s2 n2 bbar c", real=True)
Qv, Qz = sp.symbols("Q_v Q_z", nonnegative=True)  # accumulated squared increments (discrete time)

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
        try:
            np.broadcast_shapes(*(np.shape(kw[n]) for n in names))
        except ValueError:
            shapes = ", ".join(f"{n} {np.shape(kw[n])}" for n in names)
            raise ValueError(f"the arguments must broadcast to one shape, got {shapes}") from None
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
