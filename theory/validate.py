"""Input checks shared by `theory/` and `sim/` (pure Python, no torch): every public function
rejects invalid input with a `ValueError` that names the parameter and its valid range, before
doing any work -- never a hang, a huge allocation or a silent NaN.

    number("eta", eta, lo=0, lo_open=True)          # finite, > 0
    integer("steps", steps, lo=1, hi=MAX_STEPS)
    elements("make_problem", S=S, N=N, d=d)         # the product is below MAX_ELEMENTS
"""

from __future__ import annotations

import math
import numbers

MAX_ELEMENTS = 2 ** 28  # largest tensor a public function will allocate (2 GiB of float64)
MAX_STEPS = 10 ** 7     # longest run a simulator will start (a typo like eta = 1e-12 is caught)


def _interval(lo, hi, lo_open, hi_open) -> str:
    a = "(" if lo_open or lo is None else "["
    b = ")" if hi_open or hi is None else "]"
    return f"{a}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{b}"


def number(name: str, x, lo=None, hi=None, *, lo_open: bool = False, hi_open: bool = False,
           allow_inf: bool = False) -> float:
    """x as a float, if it is a real number in the interval (finite unless allow_inf)."""
    rng = _interval(lo, hi, lo_open, hi_open)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number in {rng}, got {x!r}")
    v = float(x)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number in {rng}, got {x!r}")
    if ((lo is not None and (v < lo or (lo_open and v == lo)))
            or (hi is not None and (v > hi or (hi_open and v == hi)))):
        raise ValueError(f"{name} must be in {rng}, got {x!r}")
    return v


def integer(name: str, x, lo=None, hi=None) -> int:
    """x as an int, if it is an integer (not a bool, not a float) in [lo, hi]."""
    rng = _interval(lo, hi, False, False)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer in {rng}, got {x!r}")
    v = int(x)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {x!r}")
    return v


def elements(where: str, **dims) -> int:
    """The product of the named sizes, if it is at most MAX_ELEMENTS (else a ValueError naming
    the sizes): call it before allocating."""
    n = 1
    for v in dims.values():
        n *= max(int(v), 0)
    if n > MAX_ELEMENTS:
        sizes = ", ".join(f"{k}={v}" for k, v in dims.items())
        raise ValueError(f"{where}: {sizes} asks for {n:.3g} elements, above the cap "
                         f"{MAX_ELEMENTS:.3g} (MAX_ELEMENTS in theory/validate.py)")
    return n


def steps(where: str, horizon: float, eta: float) -> int:
    """horizon / eta as a positive integer number of steps, at most MAX_STEPS."""
    n = horizon / eta
    if n > MAX_STEPS:
        raise ValueError(f"{where}: horizon / eta = {horizon:g} / {eta:g} = {n:.3g} steps, above "
                         f"the cap {MAX_STEPS:g}: eta must be >= horizon / {MAX_STEPS:g}")
    k = int(round(n))
    if k < 1 or abs(k * eta - horizon) > 1e-9 * horizon:
        raise ValueError(f"{where}: horizon / eta must be a positive integer, got {horizon} / {eta}")
    return k
