"""joma.lemma5: Lemma 5 (Eqns. 66-67), g(y) = (1 - e^{-y^2})/y has max_{y >= 0} g(y) <= 1/sqrt 2.

A calculus fact: the bound on a dense grid plus Hypothesis-drawn y (g evaluated as -expm1(-y^2)/y,
without cancellation), Eqns. 66-67 at the true maximiser y* (brentq on Eqn. 66), and the proof's
three algebraic steps by sympy.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, Tolerance, audits, check_bound, check_close, examples, register,
                        rival)
from theory import joma as th

Y5, G5 = th.lemma5_true_max()


def bound_printed():
    return 1 / math.sqrt(2)


register(Claim(
    id="joma.lemma5", where="Appendix A.4.1, Lemma 5 (Eqns. 66-67)",
    statement="g(y) := (1 - e^{-y^2})/y. Then max_{y>=0} g(y) <= 1/sqrt(2). Proof: a stationary "
              "point satisfies e^{-y*^2} = 1/(2y*^2+1) (Eqn. 66), there g(y*) = 2y*/(2y*^2+1) = "
              "2/(2y* + 1/y*) <= 1/sqrt(2) (Eqn. 67).",
    assumptions="y >= 0 (g(0) := 0 by continuity).",
    prediction="theory.joma.g, theory.joma.eqn66_expr, theory.joma.eqn67_expr",
    simulation="dense grid + Hypothesis-drawn y; scipy brentq/minimize_scalar for the true max",
    metric="max g <= bound (check_bound: a one-sided bound, its slack recorded); Eqn. 66/67 "
           "residuals at the true maximiser (max_abs); sympy identities g'(y) y^2 = "
           "e^{-y^2}(2y^2+1) - 1, g|_{Eqn 66} = Eqn 67, (2y + 1/y - 2 sqrt 2) y = (sqrt2 y - 1)^2",
    tolerance="the bound: a deterministic comparison plus float64 round-off (check_bound); the "
              "residuals: float64 round-off (1e3 x eps); the sympy identities of the proof are "
              "asserted (algebra no alternative could fail)",
    reading=f"True max g(y*) = {G5:.10f} at y* = {Y5:.10f} (the bound 1/sqrt2 = 0.7071 is not "
            "attained: AM-GM equality would need y = 1/sqrt2, which does not solve Eqn. 66). "
            "No numbers in the paper: the explicit example adds y* itself to the grid.",
    paper_setting="No setting of its own: Lemma 5 (App. A.4.1) bounds g(y) for all y >= 0; the "
                  "draws cover y in [1e-6, 1e3] (up to 64 points per draw) plus a dense grid and "
                  "the true maximiser y*.",
    alternatives=(
        rival("attained_at_amgm", lambda: float(th.g(1 / math.sqrt(2))),
              "neighbouring reading: the max is where Eqn. 67's AM-GM step is tight, g(1/sqrt2)",
              replaces="bound"),
        rival("bound_dropped_2", lambda: 1 / (2 * math.sqrt(2)),
              "Eqn. 67 with its factor 2 dropped: 1/(2 sqrt 2)", replaces="bound"),
        rival("eqn67_dropped_2", lambda yv: 2 * yv / (yv ** 2 + 1),
              "g at a stationary point with the 2 of 2y^2 dropped: 2y/(y^2+1)", replaces="eqn67"),
    ),
))


@functools.cache
def _sympy_steps():
    """The proof's three algebraic steps, each simplified by sympy (0 when it holds)."""
    yy = th.y
    ok66 = sp.simplify(th.g_prime_expr * yy ** 2 - (sp.exp(-yy ** 2) * (2 * yy ** 2 + 1) - 1))
    ok67 = sp.simplify((1 - 1 / (2 * yy ** 2 + 1)) / yy - th.eqn67_expr)
    okam = sp.expand((2 * yy + 1 / yy - 2 * sp.sqrt(2)) * yy - (sp.sqrt(2) * yy - 1) ** 2)
    return [float(ok66 != 0), float(ok67 != 0), float(okam != 0)]


_G_PRIME = sp.lambdify(th.y, th.g_prime_expr, "numpy")


@audits("joma.lemma5", form="printed")
@examples(5)
@example(ys=[Y5])
@given(ys=st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=64))
def test_lemma5_printed(world, ys):
    cid = "joma.lemma5"
    grid = np.concatenate([np.linspace(1e-9, 20.0, 200_001), np.asarray(ys)])
    gmax = float(np.max(th.g(grid)))
    bound = world.prediction(bound_printed, "bound")()
    # a one-sided bound: decided by the harness's procedure, which records its slack (the
    # bound is not attained: max g = g(y*) ~ 0.638, slack ~ 10%)
    check_bound(cid, gmax, bound, side="upper", what="max g <= bound")
    # Eqn. 66 / 67 at the true maximiser, and g' = 0 there
    eqn67 = world.prediction(th.g_at_stationary, "eqn67")
    check_close(cid, [th.eqn66_residual(Y5), _G_PRIME(Y5), th.g(Y5) - eqn67(Y5)],
                [0.0, 0.0, 0.0], Tolerance.roundoff(1.0, 1e3), what="Eqns. 66-67 at y*")
    # the proof's three algebraic steps (sympy): algebra of the printed proof that no
    # alternative could fail, so asserted rather than a check the verdict rests on
    assert _sympy_steps() == [0.0, 0.0, 0.0], f"a sympy proof step does not simplify: {_sympy_steps()}"
