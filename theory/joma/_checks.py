"""Input checks shared by the theory.joma modules (wrappers of theory.validate).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

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
