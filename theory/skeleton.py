"""The closed form of the `new-claim` skeleton's toy claim (gradient descent on a quadratic):
kept in the package, so that a skeleton claim file runs as written at any point in a paper's
life, whatever theory/<paper>.py holds by then.  Not a paper's closed form."""

from __future__ import annotations

import sympy as sp

from theory.mutate import with_sympy_form
from theory.validate import integer, number

x0_, a_, eta_, t_ = sp.symbols("x0 a eta t", real=True)


@with_sympy_form((x0_, a_, eta_, t_), x0_ * (1 - eta_ * a_) ** t_)
def gd_quadratic(x0: float, a: float, eta: float, t: int) -> float:
    """Gradient descent on f(x) = a x^2 / 2 from x0 with step eta: x_t = x0 (1 - eta a)^t."""
    x0 = number("x0", x0)
    a, eta = number("a", a, lo=0, lo_open=True), number("eta", eta, lo=0, lo_open=True)
    t = integer("t", t, lo=0, hi=10**6)
    return float(x0) * (1.0 - eta * a) ** t
