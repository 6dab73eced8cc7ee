"""Audit of "How do transformers learn topic structure" (Li, Li & Risteski, ICML 2023): the
claims not yet migrated to the earned-verdict harness, i.e. the Section 6 / Appendix E empirical
claims on trained models (finite LDA documents).  Their properties still use number controls and
thresholds judged from 2-3 seeds, so they are reported not-audited until migrated.

The theory claims (Lemma 1, Theorems 1-5, Definition 2, the constants' ranges) live in their own
files, `test_<item>.py`; shared helpers in `common.py`.
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_at_least, examples, register
from sim import make_generator
from sim import topic as sm

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"

# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------
SEED = st.integers(0, 2**31 - 1)


# --------------------------------------------------------------------------------------------
# Section 6 / Appendix E: the other empirical claims (finite LDA documents, trained models)
# --------------------------------------------------------------------------------------------
# Common setting: LDA documents (Dirichlet(0.1), N uniform in 100..150 unless said), p_m = 0.15,
# p_c = p_r = 0.1, biases b^K, b^Q, b^V on (Section 6), several seeds batched in one program
# (each seed its own documents).  CI: T = v = 5 (n = 26), a few hundred steps; thorough:
# T = v = 10 as in the paper and longer runs.  Every ordinal check is "min over seeds of a
# margin >= threshold", so one seed going the wrong way fails the claim; a run is deterministic
# given its seed, so the false-fail budget is that of the seed draw.  The thresholds were set
# from only 2-3 calibration seed draws per claim, with a slack of about 1.5-2x over the worst
# seed seen: the stated budget of <= 1e-2 per claim is a judgement, not a computed probability
# (a proper calibration over many seeds is future work).
_TV = (10, 10) if THOROUGH else (5, 5)
_EMP = ("LDA data (Dirichlet(0.1), N uniform in 100..150), p_m = 0.15, p_c = p_r = 0.1, biases "
        "b^K, b^Q, b^V (Section 6); CI size T = v = 5, thorough T = v = 10 (the paper's)")
_BUDGET = ("min over 3 batched seeds; threshold chosen with ~1.5-2x slack over the worst of "
           "2-3 calibration seeds (stated false-fail budget <= 1e-2 per claim, a judgement); "
           "negative control: the same score with topics relabelled at random must fail")


def _heldout(seed, T, v, D=200, N_range=(100, 150)):
    g = make_generator(seed)
    w, valid = sm.sample_documents(g, D, T, v, model="lda", N_range=N_range)
    tok, m = sm.mask_tokens(g, w, valid, 0.15, 0.1, 0.1, T * v)
    return w, valid, tok, m


register(Claim(
    id="topic.empirical.uniform_loss_gap", where="Section 5.2 (after Theorem 2), Appendix E",
    statement="The loss achieved by freezing W^K = W^Q = 0 and only training W^V is only "
              "slightly greater than the loss achieved by training all of them jointly.",
    assumptions=_EMP + "; one-hot W^E, squared loss, Adam lr 0.01, same steps and data stream "
                "for both models.",
    prediction="relative gap (L_uniform - L_joint) / L_uniform in [-0.01, 0.05] on 200 "
               "held-out documents (common random numbers)",
    simulation="sim.topic.train with Switches(onehot, uniform, biases) and Switches(onehot, biases)",
    metric="relative held-out loss gap, per seed; Monte Carlo SE from the per-document paired "
           "differences",
    tolerance="gap <= 0.05 + z SE and gap >= -0.01 - z SE (z for false-fail 1e-6 over 2x3 "
              "comparisons); control: the untrained model's loss in place of L_joint must fail",
    reading="'Slightly greater' read as: not smaller (beyond MC error and a 1% margin) and at "
            "most 5% greater. Both models see the same number of steps.",
))


@audits("topic.empirical.uniform_loss_gap")
@examples(1)
@given(SEED)
def test_topic_empirical_uniform_loss_gap(seed):
    T, v = _TV
    n = T * v + 1
    steps = 1500 if THOROUGH else 300
    w, valid, tok, m = _heldout(seed + 1, T, v)
    per_doc = {}
    for name, sw in (("uniform", sm.Switches(onehot=True, uniform=True, biases=True)),
                     ("joint", sm.Switches(onehot=True, biases=True))):
        g = make_generator(seed)
        p = sm.init_params(g, 3, n, sw=sw, scale=0.01, device="cpu")
        if name == "joint":
            p0 = {k: x.clone() for k, x in p.items()}
        sm.train(p, g, T=T, v=v, steps=steps, batch=8, sw=sw, opt="adam", lr=0.01, log_every=steps)
        per_doc[name] = _doc_losses(p, sw, w, valid, tok, m)
    per_doc["untrained"] = _doc_losses(p0, sm.Switches(onehot=True, biases=True), w, valid, tok, m)
    Lu = per_doc["uniform"].mean(-1)
    diff = per_doc["uniform"] - per_doc["joint"]
    gap = diff.mean(-1) / Lu
    se = diff.std(-1, ddof=1) / math.sqrt(diff.shape[-1]) / Lu
    cgap = (per_doc["uniform"] - per_doc["untrained"]).mean(-1) / Lu
    tol = Tolerance.monte_carlo(float(se.max()), 1e-6, comparisons=6)
    what = f"relative gaps {np.round(gap, 4)} (SE {np.round(se, 4)}), untrained {np.round(cgap, 3)}"
    check_at_least("topic.empirical.uniform_loss_gap", float(gap.min()), -0.01 - tol.value,
                   "uniform attention is not better than joint (beyond 1% + MC)",
                   control=float(cgap.max()), what=what)
    check_at_least("topic.empirical.uniform_loss_gap", float(-gap.max()), -0.05 - tol.value,
                   "uniform attention is at most 5% worse than joint (+ MC)",
                   control=float(-np.abs(cgap).min()), what=what)


def _doc_losses(p, sw, w, valid, tok, m):
    """Per-document held-out MLM squared loss, (S, D)."""
    out = sm.forward(p, tok, valid, sw)
    pick = out.gather(-1, w.expand(out.shape[0], *w.shape)[..., None])[..., 0]
    per = (out * out).sum(-1) - 2 * pick + 1.0
    mf = m.to(torch.float64)
    return ((per * mf).sum(-1) / mf.sum(-1).clamp_min(1)).detach().numpy()
