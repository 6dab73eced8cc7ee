"""A worked conjecture: audited exactly like a built-in claim.

    python -m properties audit --conjecture examples/conjecture_exp_logits.py --only 'conjecture.*'

Conjecture: with linear phi, exp attention and zero initialisation, every attention logit stays
non-negative during training, z_m(t) >= 0 (as the flow invariant z = 1/2 sum_k v_k^2 suggests;
in discrete time z = 1/2 sum_k v_k^2 - 1/2 Q_v, so this is a real question about the steps).

Its power is shown by two alternatives the same property must reject on the same draws:
* rival `flow_invariant_bound`: the neighbouring, stronger reading z_m(t) >= 1/2 sum_k v_k^2(t)
  (Theorem 1's flow invariant read as a bound on the discrete steps; it fails by 1/2 Q_v);
* null `softmax_attention`: the same run with softmax attention, which conserves 1^T z exactly,
  so from zero init some logit must go negative.
"""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, examples, null, register, rival
from properties.check import check_close
from sim.joma import make_problem, simulate_eqn2


def no_lower_bound(tr):
    """The conjecture's bound: z_m(t) >= 0."""
    return np.zeros_like(tr.z)


def flow_invariant_bound(tr):
    """Rival: z_m(t) >= 1/2 sum_k v_k^2(t) (Theorem 1, exp attention, read on the steps)."""
    return 0.5 * (tr.V ** 2).sum(-1)


def softmax_run(p, **kw):
    """Null: the same problem and steps with softmax attention instead of exp."""
    from dataclasses import replace
    return simulate_eqn2(replace(p, attention="softmax"), **kw)


register(Claim(
    id="conjecture.exp_logits_nonnegative",
    where="user conjecture (after JoMA Theorem 1, exp attention)",
    statement="Linear phi, exp attention, zero init: z_m(t) >= 0 for every token and step.",
    assumptions="Eqn. 2 as in sim.joma; K = 1..3 nodes; horizon well before blow-up.",
    prediction="min(z_m(t) - 0, 0) = 0",
    simulation="sim.joma.simulate_eqn2",
    metric="max over tokens/steps of the negative part of z_m(t) - bound",
    tolerance="float64 round-off (derived)",
    alternatives=(
        rival("flow_invariant_bound", flow_invariant_bound,
              "neighbouring reading: Theorem 1's flow invariant as a bound on the discrete steps",
              replaces="bound"),
        null("softmax_attention", softmax_run,
             "mechanism off: softmax attention conserves 1^T z, so a logit goes negative",
             replaces="run"),
    ),
))


@audits("conjecture.exp_logits_nonnegative")
@examples(5)
@example(seeds=[0], M_C=4, K=2)
@given(seeds=st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=3, unique=True),
       M_C=st.integers(2, 6), K=st.integers(1, 3))
def test_exp_logits_nonnegative(world, seeds, M_C, K):
    p = make_problem(seeds, M_C=M_C, K=K, C=max(K, 2), d=M_C + 2, N=32, attention="exp",
                     activation="linear", device="cpu")
    tr = world.simulation(simulate_eqn2, "run", pure=True)(p, eta=0.01, horizon=1.0, log_every=1)
    bound = world.prediction(no_lower_bound, "bound")(tr)
    check_close("conjecture.exp_logits_nonnegative", np.minimum(tr.z - bound, 0.0),
                np.zeros_like(tr.z), Tolerance.roundoff(1.0))
