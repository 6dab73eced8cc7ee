"""topic.theorem1: with W^K = W^Q = 0, W^V = I and the printed b^pred, the optimal E satisfies
Lemma 1's conditions with -c1 removed, and same-topic embeddings have larger inner products.

(A) exact: random c1-free family members attain 1 - 1/(tau v) with zero gradient in E; (B)
trained: W^E by L-BFGS (train_embeddings) reaches the bound and fits the family.  The rival
"c3_one" reaches (B)'s own-minus-other block-sum check.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import example, given

from properties import (Claim, Tolerance, audits, check_close, examples, null, register,
                        rival)
from properties.topic.common import (PAPER, SEED, SETTING, constants, constants_c3_one,
                                     constants_no_c1, exact_tol, grad, mu_range, random_member,
                                     residual_bound, setup, small_model)
from sim import make_generator
from sim import topic as sm
from theory import topic as th

CID = "topic.theorem1"


def t1_bias(m):
    """b^pred of Theorem 1 as printed: -p_m p_r / ((1 - (1 - p_c) p_m) Tv) on words, 0 on [MASK]."""
    T, v, tau, p_m, p_c, p_r = m
    b = np.full(T * v + 1, -p_m * p_r / ((1 - (1 - p_c) * p_m) * T * v))
    b[0] = 0.0
    return b


def bias_no_a(m):
    """Rival: b^pred without the 1/(1 - (1 - p_c) p_m) factor."""
    T, v, tau, p_m, p_c, p_r = m
    b = np.full(T * v + 1, -p_m * p_r / (T * v))
    b[0] = 0.0
    return b


def bias_zero(m):
    """Rival: no output bias (Lemma 1's setting)."""
    return np.zeros(m[0] * m[1] + 1)


def _init(m, seed):
    n = m[0] * m[1] + 1
    g = make_generator(seed)
    return torch.randn(n, n, generator=g, dtype=torch.float64) / math.sqrt(n)


def train_embeddings(m, b, seed):
    """Minimise the Assumption-1 loss over W^E (E = W^E^T W^E, d = Tv + 1) from N(0, 1/d) by
    L-BFGS (strong Wolfe, gradient tolerance 1e-12); returns E."""
    mom = setup(m)
    WE = _init(m, seed).requires_grad_(True)
    bt = torch.tensor(b)
    opt = torch.optim.LBFGS([WE], lr=1, max_iter=3000, tolerance_grad=1e-12,
                            tolerance_change=1e-16, history_size=50, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        L = sm.infinite_loss(WE.T @ WE, mom, bt)
        L.backward()
        return L

    opt.step(closure)
    return (WE.T @ WE).detach().numpy()


def untrained_embeddings(m, b, seed):
    """Null: the same random W^E, no optimisation steps."""
    WE = _init(m, seed)
    return (WE.T @ WE).numpy()


register(Claim(
    id=CID, where="Theorem 1 (Section 4, Appendix B)",
    statement="With W^K = W^Q = 0, W^V = I, b^pred_i = -p_m p_r/((1-(1-p_c)p_m)Tv) (i >= 1), "
              "squared loss, the optimal E = W^E^T W^E satisfies: E_00 = -c2 u_0, "
              "sum_{l in t} E_0l = u_0 v; E_i0 = -c2 u_i; sum_{l in topic(i)} E_il = c3 + u_i v; "
              "sum_{l in t} E_il = u_i v for t != topic(i). Same-topic embeddings have larger "
              "inner products than different-topic ones.",
    assumptions=SETTING.replace("one-hot embeddings (eq. 7, W^E = I)", "trainable W^E (eq. 6), "
                                "d = Tv + 1") + ", b^pred_0 = 0.",
    prediction="theory.topic.lemma1_member_with / lemma1_fit_with with c1 = 0 (the Lemma 1 "
               "family with -c1 removed); the loss's lower bound 1 - 1/(tau v)",
    simulation="sim.topic.infinite_loss with bias b; L-BFGS on W^E (d = Tv+1) by autograd",
    metric="max_abs loss gap and E-gradient for family members; for the trained E: loss gap, "
           "family residual, own-topic minus mean other-topic block sum (= c3)",
    tolerance="round-off for the exact part and the trained loss gap; the trained E's family "
              "residual: sqrt(v) ||grad_E||_F / (2 mu_min(M)) (distance from the minimiser set "
              "bounded by the gradient of the quadratic; the residual map has norm <= sqrt(v)), "
              "twice that for the block-sum contrast",
    reading="b^pred_0 = 0 ('b^pred_0' is not printed; the bias only on words).  The loss is "
            "E_S||E p~_S + b - P_S||^2 + 1 - 1/(tau v) >= 1 - 1/(tau v), so reaching that bound "
            "is optimality.  E must be PSD; the family contains PSD members (u = 0: c3/v on "
            "same-topic blocks), so the optimum over PSD E is the family's PSD part, which "
            "L-BFGS on W^E reaches.  'Larger inner products' read as: own-topic block sums "
            "exceed the mean other-topic block sum (by exactly c3 > 1 in the family).",
    paper_setting="No setting of its own: Theorem 1 (Sec. 4) holds for every T, v, tau < T and "
                  "masking probabilities under Assumption 1; the draws cover T in 2..6, v in 1..4, "
                  "p_m in [0.05, 0.9], p_c, p_r in [0.02, 0.6] (T v <= 16 for the trained W^E), "
                  "and Sec. 6's T = v = 10, p_m = 0.15, p_c = p_r = 0.1 is an explicit example at "
                  "tau = 3 (its LDA documents have no fixed tau).",
    alternatives=(
        rival("c1_kept", constants, "Lemma 1's conditions: E_i0 = -c1 - c2 u_i (the neighbouring "
              "closed form, -c1 not removed)", replaces="constants"),
        rival("bpred_no_a", bias_no_a, "b^pred without the 1/(1-(1-p_c)p_m) factor",
              replaces="bpred"),
        rival("bpred_zero", bias_zero, "b^pred = 0 (Lemma 1's setting)", replaces="bpred"),
        rival("c3_one", constants_c3_one, "c3 = 1: the 1/(1-(1-p_c)p_m) factor of the "
              "same-topic block sum dropped", replaces="constants"),
        null("untrained", untrained_embeddings, "no optimisation: W^E at its random init",
             replaces="train"),
    ),
))


@audits(CID)
@examples(8)
@example(m=PAPER, seed=0)
@given(m=small_model(), seed=SEED)
def test_theorem1_family_attains_minimum(world, m, seed):
    T, v, tau, p_m, p_c, p_r = m
    mom = setup(m)
    consts = world.prediction(constants_no_c1, "constants")(m)
    b = world.prediction(t1_bias, "bpred")(m)
    rng = np.random.default_rng(seed)
    Es = np.stack([random_member(rng, m, consts) for _ in range(3)])
    L = sm.infinite_loss(torch.tensor(Es), mom, torch.tensor(b)).numpy()
    tol = exact_tol(Es, mom)
    check_close(CID, L, np.full_like(L, 1 - 1 / (tau * v)), tol,
                what="c1-free family attains 1 - 1/(tau v) with the printed b^pred")
    check_close(CID, grad(Es, mom, b), 0.0 * Es, tol, what="zero gradient in E")


@audits(CID)
@examples(4)
@example(m=PAPER, seed=0)
@given(m=small_model().filter(lambda m: m[0] * m[1] <= 16), seed=SEED)
def test_theorem1_trained_embeddings(world, m, seed):
    T, v, tau, p_m, p_c, p_r = m
    mom = setup(m)
    b = world.prediction(t1_bias, "bpred")(m)
    E = world.simulation(train_embeddings, "train", pure=True)(m, b, seed)
    consts = world.prediction(constants_no_c1, "constants")(m)
    gap = float(sm.infinite_loss(torch.tensor(E), mom, torch.tensor(b))) - (1 - 1 / (tau * v))
    rt = exact_tol(E, mom)
    check_close(CID, gap, 0.0, rt, what="trained E reaches the lower bound 1 - 1/(tau v)")
    mu_min, _ = mu_range(mom)
    bound = residual_bound(grad(E, mom, b), v, mu_min)
    _, res = th.lemma1_fit_with(E, T, v, *consts)
    check_close(CID, res, np.zeros_like(res),
                Tolerance.derived(bound + rt.value, "sqrt(v) ||grad_E||_F / (2 mu_min) + "
                                  "round-off (distance of E from the minimiser set)"),
                what="trained E satisfies Theorem 1's conditions")
    B = E[1:, 1:].reshape(T * v, T, v).sum(-1)
    own = B[np.arange(T * v), np.arange(T * v) // v]
    other = (B.sum(1) - own) / (T - 1)
    check_close(CID, own - other, np.full(T * v, consts[2]),
                Tolerance.derived(2 * bound + rt.value, "2 x the family-residual bound"),
                what="own-topic minus other-topic block sum = c3")
    # the statement's inequality (same-topic inner products exceed different-topic ones) then
    # follows: own - other is within 2 x bound of c3 > 1 (checked above against the c3 rival);
    # asserted, as no alternative could fail it where the c3 check passes
    assert float((own - other).min()) > 0.0, (own - other)
