"""Section 5: Eqn 9, Theorem 5 at rho = rho_0 = 1 - eps (and its expansion in eps).
Conventions: theory.joma.hblt.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from theory import validate as chk
from theory.joma._checks import _fin
from theory.joma.hblt import H, L, eps
from theory.joma.theorem5 import MAX_DEPTH, _check_HL, theorem5_expr


def eq9_printed(h, depth, exact: bool = False):
    """Eqn 9 as printed: P[y_l=1|y_m=1] = 1 - H/L + O(eps^2).  exact=True: for integers H, L,
    the exact rational (fractions.Fraction), for remainders far below float64 resolution."""
    _check_HL(h, depth)
    if not isinstance(exact, bool):
        raise ValueError(f"exact must be a bool, got {exact!r}")
    if exact:
        return 1 - Fraction(int(h), int(depth))
    return 1.0 - np.asarray(h, dtype=np.float64) / np.asarray(depth, dtype=np.float64)


def eq9_first_order_coefficient(h, depth, exact: bool = False):
    """The eps coefficient of Eqn 108 at rho = rho_0 = 1-eps: H(2H-L)/(2L) (sympy series).
    exact=True: for integers H, L, the exact rational (fractions.Fraction)."""
    _check_HL(h, depth)
    if not isinstance(exact, bool):
        raise ValueError(f"exact must be a bool, got {exact!r}")
    if exact:
        h, depth = int(h), int(depth)
        return Fraction(h * (2 * h - depth), 2 * depth)
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return h * (2 * h - depth) / (2 * depth)


def eq9_corrected(e, h, depth):
    """Corrected Eqn 9: P[y_l=1|y_m=1] = 1 - H/L + H(2H-L)/(2L) eps + O(eps^2)."""
    ea = _fin("e", e)
    if np.any((ea < 0) | (ea >= 1)):
        raise ValueError(f"e (eps = 1 - rho) must lie in [0, 1), got {ea}")
    return eq9_printed(h, depth) + eq9_first_order_coefficient(h, depth) * np.asarray(e)


def eq9_second_order_coefficient(h, depth):
    """The eps^2 coefficient: -H(2H-L)(4H-L-3)/(12L); zero at L = 2H (then P = 1/2 exactly)
    and at L = 4H-3 (then the corrected remainder is O(eps^3))."""
    _check_HL(h, depth)
    h = np.asarray(h, dtype=np.float64)
    depth = np.asarray(depth, dtype=np.float64)
    return -h * (2 * h - depth) * (4 * h - depth - 3) / (12 * depth)


def eq9_series(h: int | None = None, depth: int | None = None, order: int = 3):
    """sympy series of Eqn 108 at rho = rho_0 = 1-eps up to O(eps^order); symbolic H, L if
    h/depth are None."""
    if depth is not None:
        chk.integer("depth (L)", depth, lo=2, hi=MAX_DEPTH)
    if h is not None:
        chk.integer("h (H)", h, lo=1, hi=None if depth is None else int(depth) - 1)
    chk.integer("order", order, lo=1, hi=8)
    return _eq9_series(h, depth, order)


@lru_cache(maxsize=None)
def _eq9_series(h, depth, order):
    hh = H if h is None else sp.Integer(h)
    dd = L if depth is None else sp.Integer(depth)
    f = theorem5_expr(1 - eps, 1 - eps, hh, dd)
    return sp.series(f, eps, 0, order).removeO()


def eq9_remainder_order(h: int, depth: int) -> int | None:
    """Order in eps of Eqn 108 - (1 - H/L + H(2H-L)/(2L) eps): 2 generically, 3 at L = 4H-3,
    None at L = 2H (Eqn 108 = 1/2 identically when rho = rho_0)."""
    chk.integer("depth (L)", depth, lo=2)
    chk.integer("h (H)", h, lo=1, hi=int(depth) - 1)
    if depth == 2 * h:
        return None
    return 3 if depth == 4 * h - 3 else 2


def _check_eq9(h, depth, dps, where):
    chk.integer(f"{where}: depth", depth, lo=2, hi=10 ** 6)
    chk.integer(f"{where}: h", h, lo=1, hi=int(depth) - 1)
    chk.integer(f"{where}: dps", dps, lo=15, hi=10 ** 4)


def eq9_exact_mp(e, h: int, depth: int, dps: int = 60):
    """Eqn 108 at rho = rho_0 = 1-eps evaluated in mpmath with `dps` digits (returns mpf).
    1 <= h < depth integers (H is a level strictly below the top L), eps in (0, 1), 15 <= dps
    <= 10000."""
    _check_eq9(h, depth, dps, "eq9_exact_mp")
    if isinstance(e, (str, bytes, bool)) or not hasattr(e, "__float__"):
        raise ValueError(f"eq9_exact_mp: e must be a number in (0, 1), got {e!r}")
    chk.number("eq9_exact_mp: e", float(e), lo=0, hi=1, lo_open=True, hi_open=True)
    chk.number("eq9_exact_mp: e", float(e), lo=10.0 ** (5 - dps), hi=1, hi_open=True)  # 1 - e != 1
    with mpmath.workdps(dps):
        r = 1 - mpmath.mpf(e)
        b = r ** depth
        return (1 + r ** (2 * h) - 2 * b) / (2 * (1 - b))


def eq9_remainder_mp(eps_values, h: int, depth: int, linear_coefficient=0, dps: int = 60):
    """|Eqn 108 - (1 - H/L + c eps)| at rho = rho_0 = 1-eps, for each eps, computed entirely in
    mpmath (`dps` digits) and returned as float64: c = 0 is the printed Eqn 9 remainder,
    c = H(2H-L)/(2L) the corrected one.  `linear_coefficient` may be a float or a Fraction."""
    _check_eq9(h, depth, dps, "eq9_remainder_mp")
    if isinstance(eps_values, (str, bytes)) or not hasattr(eps_values, "__iter__"):
        raise ValueError(f"eps_values must be a list of numbers in (0, 1), got {eps_values!r}")
    eps_values = list(eps_values)
    chk.elements("eq9_remainder_mp", eps_values=len(eps_values))
    for i, e in enumerate(eps_values):
        if not isinstance(e, mpmath.mpf):
            chk.number(f"eps_values[{i}]", e, lo=0, hi=1, lo_open=True, hi_open=True)
    if not isinstance(linear_coefficient, mpmath.mpf):
        chk.number("linear_coefficient", linear_coefficient)
    out = []
    with mpmath.workdps(dps):
        c = mpmath.mpf(linear_coefficient.numerator) / linear_coefficient.denominator \
            if hasattr(linear_coefficient, "denominator") else mpmath.mpf(linear_coefficient)
        for e in eps_values:
            e = mpmath.mpf(e)
            r = 1 - e
            b = r ** depth
            f = (1 + r ** (2 * h) - 2 * b) / (2 * (1 - b))
            out.append(float(abs(f - (1 - mpmath.mpf(h) / depth) - c * e)))
    return np.asarray(out, dtype=np.float64)
