"""A worked conjecture: audited exactly like a built-in claim.

    python -m properties audit --conjecture examples/conjecture_exp_logits.py --only 'conjecture.*'

Conjecture: with linear phi, exp attention and zero initialisation, every attention logit stays
non-negative during training, z_m(t) >= 0 (as the flow invariant z = 1/2 sum_k v_k^2 suggests;
in discrete time z = 1/2 sum_k v_k^2 - 1/2 Q_v, so this is a real question about the steps).
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register
from sim.joma import make_problem, simulate_eqn2

register(Claim(
    id="conjecture.exp_logits_nonnegative",
    where="user conjecture (after JoMA Theorem 1, exp attention)",
    statement="Linear phi, exp attention, zero init: z_m(t) >= 0 for every token and step.",
    assumptions="Eqn. 2 as in sim.joma; K = 1..3 nodes; horizon well before blow-up.",
    prediction="min(z_m(t), 0) = 0",
    simulation="sim.joma.simulate_eqn2",
    metric="max over tokens/steps of the negative part of z_m(t)",
    tolerance="float64 round-off",
))


@audits("conjecture.exp_logits_nonnegative")
@examples(5)
@given(st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=3, unique=True),
       st.integers(2, 6), st.integers(1, 3))
def test_exp_logits_nonnegative(seeds, M_C, K):
    p = make_problem(seeds, M_C=M_C, K=K, C=max(K, 2), d=M_C + 2, N=32, attention="exp",
                     activation="linear", device="cpu")
    tr = simulate_eqn2(p, eta=0.01, horizon=1.0, log_every=1)
    negative_part = np.minimum(tr.z, 0.0)
    # control: the same check must reject a wrong prediction (logits shifted down by 0.01)
    check_close("conjecture.exp_logits_nonnegative", negative_part, np.zeros_like(tr.z),
                Tolerance.roundoff(1.0), control=np.minimum(tr.z - 0.01, 0.0))
