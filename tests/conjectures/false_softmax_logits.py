"""A false conjecture (used by tests/test_audit_cli.py): softmax logits stay non-negative.
Softmax conserves 1^T z exactly, so from zero init some logit must go negative."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register
from sim.joma import make_problem, simulate_eqn2

register(Claim(
    id="conjecture.softmax_logits_nonnegative", where="test conjecture",
    statement="Linear phi, softmax attention, zero init: z_m(t) >= 0.",
    assumptions="Eqn. 2 as in sim.joma.", prediction="min(z, 0) = 0",
    simulation="sim.joma.simulate_eqn2", metric="negative part of z", tolerance="round-off",
    draw_note=lambda seed: f"test note: seed mod 7 = {seed % 7}",
))


@audits("conjecture.softmax_logits_nonnegative")
@examples(3)
@given(st.integers(0, 2**31 - 1))
def test_softmax_logits_nonnegative(seed):
    p = make_problem([seed], M_C=4, K=2, d=6, N=32, attention="softmax", activation="linear",
                     device="cpu")
    tr = simulate_eqn2(p, eta=0.05, horizon=5.0, log_every=10)
    check_close("conjecture.softmax_logits_nonnegative", np.minimum(tr.z, 0), np.zeros_like(tr.z),
                Tolerance.roundoff(1.0), control=np.minimum(tr.z - 0.01, 0.0))
