"""joma.lemma7: Definition 1 and Lemma 7 (Eqn 89), the algebra of M(rho) and p(rho).

Definition 1 evaluated in float64 at drawn (rho1, rho2) plus the witness pair (0.5, 0.5), the four
identities of Lemma 7 to round-off; the rivals are composition laws a reader could plausibly use in
place of rho1 rho2.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register, rival
from properties.joma.common import M_np, p_np, rho_full


def product_law(r1, r2):
    return r1 * r2


register(Claim(
    id="joma.lemma7",
    kind="by_construction",  # a 2x2 identity of the printed text: algebra (issues 19, 34)
    where="Appendix A.5, Definition 1 and Lemma 7 (Eqn 89)",
    statement="M(rho) = 1/2 [[1+rho, 1-rho], [1-rho, 1+rho]], p(rho) = 1/2 [1+rho, 1-rho]^T, "
              "rho in [-1,1]: M(rho) is symmetric; M(rho) 1 = 1; M(rho1) M(rho2) = M(rho1 rho2); "
              "M(rho1) p(rho2) = p(rho1 rho2).",
    assumptions="rho, rho1, rho2 in [-1, 1].",
    prediction="theory.joma.M, theory.joma.p (Definition 1, evaluated at the drawn rhos; the "
               "symbolic residuals of Lemma 7 are simplified to 0 in tests/test_joma_hblt.py)",
    simulation="numpy evaluation of Definition 1 (the matrices themselves)",
    metric="max_abs over all entries of the four identities, for a batch of drawn (rho1, rho2) "
           "plus the witness pair (0.5, 0.5)",
    tolerance="float64 round-off (16 ops on entries of size <= 1). Symbolic proof (sympy "
              "simplify to 0) in tests/test_joma_hblt.py.",
    reading="An algebraic identity: the numeric check confirms it at the drawn points; the "
            "paper gives no numbers, so the explicit example is the witness pair alone.",
    paper_setting="No setting of its own: Lemma 7 (App. A.5) is an identity of Definition 1 for "
                  "all rho_1, rho_2 in [-1, 1]; the draws cover that whole square (up to 8 pairs "
                  "per draw, plus the witness pair (0.5, 0.5)).",
    alternatives=(
        rival("flip_probabilities_add", lambda a, b: max(-1.0, a + b - 1),
              "composition by adding the flip probabilities (1 - rho)/2: rho1 + rho2 - 1 "
              "(clipped at -1: a flip probability is at most 1)",
              replaces="law"),
        rival("weakest_link", lambda a, b: min(a, b),
              "the composed rho is that of the weaker edge: min(rho1, rho2)", replaces="law"),
    ),
))


def _lemma7_stack(pairs, law):
    obs, pred = [], []
    one = np.ones((2, 1))
    for r1, r2 in pairs:
        M1, M2 = M_np(r1), M_np(r2)
        obs += [(M1 @ M2).ravel(), (M1 @ p_np(r2)).ravel(), (M1 @ one).ravel(), M1.T.ravel()]
        r = law(r1, r2)
        pred += [M_np(r).ravel(), p_np(r).ravel(), one.ravel(), M1.ravel()]
    return np.concatenate(obs), np.concatenate(pred)


@audits("joma.lemma7", form="printed")
@examples(40)
@example(pairs=[])
@given(pairs=st.lists(st.tuples(rho_full, rho_full), min_size=1, max_size=8))
def test_lemma7_printed(world, pairs):
    pairs = pairs + [(0.5, 0.5)]  # witness pair: every rival law differs from the product there
    obs, pred = _lemma7_stack(pairs, world.prediction(product_law, "law"))
    check_close("joma.lemma7", obs, pred, Tolerance.roundoff(1.0, 16))
