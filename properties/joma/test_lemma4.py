"""joma.lemma4: Lemma 4 (Eqn 61), d theta_1/dr and d theta_2/dr for homogeneous phi.

theta_1, theta_2 by quadrature (Eqns 41-42, unit marginal), central finite differences in r
(h = 1e-4 std).  The constant depends on the sign convention for c_-, stated nowhere (the statement
is the only place c_- appears): the literal phi' = c_- on x < 0 decides; phi' = -c_- on x < 0 (as
for phi = c_+ x^+ + c_- x^-, e.g. |x| with c_- = c_+ = 1) is a declared neighbouring reading.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register, rival
from properties.joma.common import fd_grid, isotropic
from properties import attach_plot
from properties.joma.figures import plot_lemma4
from theory import joma as th


def relu_only(r, dist, c_minus, c_plus):
    """Rival: c_- dropped (the ReLU formula): (c_+ p_n(r), -c_+ r p_n(r))."""
    return th.lemma4_corrected(r, dist, 0.0, c_plus)


def theta2_without_r(r, dist, c_minus, c_plus):
    """Rival: the factor r dropped in d theta_2/dr."""
    p = dist.pdf(r)
    return (c_plus - c_minus) * p, -(c_plus - c_minus) * p


register(Claim(
    id="joma.lemma4",
    where="Lemma 4, Eqn 61, App. A.4",
    statement=("If phi is homogeneous, phi(x) = phi'(x) x, then there exist c_-, c_+ with "
               "phi(x) = c_- 1[x<0] + c_+ 1[x>0], and d theta1/dr = (c_- + c_+) p_n(r), "
               "d theta2/dr = -(c_- + c_+) r p_n(r)."),
    assumptions=("phi' = c_- 1[x<0] + c_+ 1[x>0] with c_- in +-[0.2, 1.5] (leaky-ReLU type, "
                 "negative slopes included), c_+ in [0.2, 2]; theta from Eqns 41-42 (unit "
                 "marginal) for Gaussian, Student-t (nu 3..8), ball."),
    prediction="theory.joma.lemma4_printed, lemma4_corrected",
    simulation="quadrature theta (Eqns 41-42) and central finite differences on an r-grid",
    metric="max abs difference over the grid of (d theta1/dr, d theta2/dr)",
    tolerance="central difference h = 1e-4 std: truncation h^2/6 max|theta'''| + 2 x quadrature "
              "error / h, with a x100 margin: 1e-6 (|c_-| + |c_+|)",
    corrected=("phi'(x) = c_- 1[x<0] + c_+ 1[x>0] (phi(x) = c_+ max(x,0) + c_- min(x,0)), and "
               "d theta1/dr = (c_+ - c_-) p_n(r), d theta2/dr = -(c_+ - c_-) r p_n(r)."),
    reason=("theta1(r) = c_- P(s < -r) + c_+ P(s > -r), so d theta1/dr = (c_+ - c_-) p_n(r) "
            "(p_n symmetric); the printed (c_- + c_+) is right only for c_- = 0 (ReLU). Also the "
            "statement's phi = step is not homogeneous unless c_- = c_+ = 0: the proof shows phi' "
            "is piecewise constant."),
    reading=("'phi(x) = c_- 1[x<0] + c_+ 1[x>0]' read as a typo for phi' (what the proof "
             "derives, Eqns 62-64); the derivative formulas are audited with that reading. The "
             "literal step phi fails phi = x phi' (tests/). p_n read as unit marginal. Sign "
             "convention: the paper writes c_- 1[x<0], so phi' = c_- on x < 0 (literal, the "
             "verdict's basis); the other convention phi' = -c_- on x < 0 makes Eqn 61 exact and "
             "is audited as an alternative reading (test_lemma4_printed_other_convention, "
             "passes). The paper gives no numbers: the explicit example is a leaky ReLU "
             "(c_- = 0.5, c_+ = 1) with a Gaussian (n = 3, sigma = 1)."),
    paper_setting="No setting of its own: Lemma 4 (App. A.4) holds for every homogeneous phi and "
                  "symmetric p_n, with no numbers; the draws cover c_- in +-[0.2, 1.5], c_+ in "
                  "[0.2, 2] with Gaussian, Student-t (nu 3..8) and ball families, n in 1..5, sigma "
                  "in [0.3, 2].",
    alternatives=(
        rival("printed_sum", th.lemma4_printed,
              "Eqn 61 as printed: (c_- + c_+) with phi' = c_- on x < 0"),
        rival("relu_only", relu_only, "c_- dropped: the ReLU formula c_+ p_n(r)"),
        rival("theta2_without_r", theta2_without_r,
              "the factor r dropped in d theta_2/dr"),
    ),
))
attach_plot("joma.lemma4", plot_lemma4)


@st.composite
def lemma4_params(draw):
    family = draw(st.sampled_from(["gaussian", "student_t", "ball"]))
    n = draw(st.integers(1, 5))
    sigma = draw(st.floats(0.3, 2.0))
    nu = draw(st.integers(3, 8))
    c_minus = draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(0.2, 1.5))
    c_plus = draw(st.floats(0.2, 2.0))
    return (family, n, sigma, nu), c_minus, c_plus


PAPER_LEMMA4 = (("gaussian", 3, 1.0, 5), 0.5, 1.0)


def fd_derivatives(dist, c_minus, c_plus):
    """Central finite differences of (theta_1, theta_2) in r for phi' = c_- 1[x<0] + c_+ 1[x>0]."""
    psi = th.Psi("step", c_minus, c_plus)
    h = 1e-4 * dist.std()
    grid = fd_grid(dist)
    d1, d2 = [], []
    for r in grid:
        hi, lo = th.theta_unit(r + h, dist, psi), th.theta_unit(r - h, dist, psi)
        d1.append((hi[0] - lo[0]) / (2 * h))
        d2.append((hi[1] - lo[1]) / (2 * h))
    return grid, np.concatenate([d1, d2])


def fd_tol(c_minus, c_plus):
    return Tolerance.derived(1e-6 * (abs(c_minus) + abs(c_plus)),
                             "central difference h = 1e-4 std: h^2/6 max|theta'''| + 2 quad_err/h, "
                             "x100 margin")


@audits("joma.lemma4", form="printed",
        fails="d theta/dr carries (c_+ - c_-), not (c_- + c_+); printed only right for c_- = 0")
@examples(5)
@example(p=PAPER_LEMMA4)
@given(p=lemma4_params())
def test_lemma4_printed(p):
    """Eqn 61 as printed, phi' = c_- on x < 0 (the convention the statement writes)."""
    spec, c_minus, c_plus = p
    dist = isotropic(*spec)
    grid, obs = fd_derivatives(dist, c_minus, c_plus)
    check_close("joma.lemma4", obs, np.concatenate(th.lemma4_printed(grid, dist, c_minus, c_plus)),
                fd_tol(c_minus, c_plus), what="Eqn 61 as printed")


@audits("joma.lemma4", form="printed",
        reading="phi' = -c_- on x < 0 (phi = c_+ x^+ + c_- x^-)")
@examples(5)
@example(p=PAPER_LEMMA4)
@given(p=lemma4_params())
def test_lemma4_printed_other_convention(p):
    """Alternative reading: phi' = -c_- on x < 0 (phi = c_+ x^+ + c_- x^-). The printed
    (c_- + c_+) is then exact: the step simulated is (-c_-, c_+)."""
    spec, c_minus, c_plus = p
    dist = isotropic(*spec)
    grid, obs = fd_derivatives(dist, -c_minus, c_plus)
    check_close("joma.lemma4", obs, np.concatenate(th.lemma4_printed(grid, dist, c_minus, c_plus)),
                fd_tol(c_minus, c_plus), what="Eqn 61 as printed, phi' = -c_- on x < 0")


@audits("joma.lemma4", form="corrected")
@examples(10)
@example(p=PAPER_LEMMA4)
@given(p=lemma4_params())
def test_lemma4_corrected(world, p):
    spec, c_minus, c_plus = p
    assume(abs(c_plus - c_minus) > 0.1)  # theta not constant in r
    dist = isotropic(*spec)
    grid, obs = fd_derivatives(dist, c_minus, c_plus)
    pred = np.concatenate(world.prediction(th.lemma4_corrected)(grid, dist, c_minus, c_plus))
    check_close("joma.lemma4", obs, pred, fd_tol(c_minus, c_plus), what="corrected Eqn 61")
