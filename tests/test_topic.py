"""Unit tests of theory/topic.py (sympy closed forms) and sim/topic.py (samplers, moments,
eq. 7 model, Stage-2 attention model)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch

from sim import make_generator
from sim import topic as sm
from theory import topic as th


def test_lemma1_symbolic_residuals_vanish():
    assert all(c == 0 for c in th.lemma1_row_residual())
    b = -th.p_m * th.p_r / (th.A_ * th.T * th.v)
    assert all(c == 0 for c in th.lemma1_row_residual(with_c1=False, bias=b))
    assert th.lemma1_mask_row_residual() == 0
    # control: dropping -c1 without the bias leaves a residual
    assert any(c != 0 for c in th.lemma1_row_residual(with_c1=False))


def test_theorem2_min_norm_derivation_matches_printed():
    ustar, wi0 = th.theorem2_min_norm_u()
    assert sp.simplify(ustar - th.W_DIFF) == 0 and sp.simplify(wi0 - th.W_I0) == 0


def test_moments_against_closed_form():
    T, v, tau = 5, 3, 2
    mom = sm.subset_moments(T, v, tau, 0.15, 0.1, 0.1)
    assert np.allclose(mom["mP"][1:], 1 / (T * v)) and mom["EPP"] == pytest.approx(1 / (tau * v))
    assert np.allclose(mom["M"].sum(), 1.0)  # p~ are probability vectors
    assert np.linalg.matrix_rank(mom["M"], tol=1e-10) == T


def test_stage2_fast_matches_explicit():
    rng = np.random.default_rng(0)
    for T, v, tau in [(3, 2, 1), (4, 3, 2), (3, 3, 3), (6, 2, 4)]:
        args = (0.2, 0.15, 0.1, T, v)
        coef = (th._wi0(*args), th._wdiff(*args), th._wsame(*args))
        cc = th.constants(*args)
        A, B = np.exp(rng.normal(0, 2, 5)), np.exp(rng.normal(0, 2, 5))
        for mq in ("token", "uniform"):
            e1 = sm.stage2_loss(sm.block_apply(*coef, T, v), T, v, tau, 0.2, 0.15, 0.1, A, B, mq)
            f1 = sm.stage2_loss_fast("block", coef, T, v, tau, 0.2, 0.15, 0.1, A, B, mq)
            e2 = sm.stage2_loss(sm.diag_apply(-cc["c1"], cc["c3"]), T, v, tau, 0.2, 0.15, 0.1, A, B, mq)
            f2 = sm.stage2_loss_fast("diag", (-cc["c1"], cc["c3"]), T, v, tau, 0.2, 0.15, 0.1, A, B, mq)
            assert np.allclose(e1, f1, atol=1e-14) and np.allclose(e2, f2, atol=1e-14)


def test_stage2_uniform_attention_equals_stage1_loss():
    T, v, tau = 4, 3, 2
    mom = sm.subset_moments(T, v, tau, 0.2, 0.15, 0.1)
    D = th.definition2_dv(T, v, 0.2, 0.15, 0.1)
    for mq in ("token", "uniform"):
        L = sm.stage2_loss(D, T, v, tau, 0.2, 0.15, 0.1, 1.0, 1.0, mq)
        assert float(L) == pytest.approx(float(sm.infinite_loss(torch.tensor(D), mom)), abs=1e-13)


def test_documents_and_masking():
    g = make_generator(1)
    w, valid = sm.sample_documents(g, 200, 6, 4, model="theory", tau=2, N=50)
    topics = ((w - 1) // 4)
    assert all(len(set(t.tolist())) <= 2 for t in topics) and w.min() >= 1 and w.max() <= 24
    w2, valid2 = sm.sample_documents(g, 200, 10, 10, model="lda")
    L = valid2.sum(1)
    assert L.min() >= 100 and L.max() <= 150 and (w2[~valid2] == 0).all()
    tok, m = sm.mask_tokens(g, w2, valid2, 0.15, 0.1, 0.1, 100)
    frac = m.sum() / valid2.sum()
    assert abs(float(frac) - 0.15) < 0.01
    assert ((tok == 0) & m).sum() / m.sum() == pytest.approx(0.8, abs=0.03)
    assert (tok[~m] == w2[~m]).all()


def test_forward_uniform_matches_general_with_zero_kq():
    g = make_generator(2)
    T, v = 3, 2
    n = T * v + 1
    w, valid = sm.sample_documents(g, 4, T, v, model="lda", N_range=(5, 9))
    p = sm.init_params(g, 2, n, sw=sm.Switches(onehot=True), device="cpu")
    p["WK"].zero_()
    p["WQ"].zero_()
    out1, A = sm.forward(p, w, valid, sm.Switches(onehot=True), return_attention=True)
    out2 = sm.forward(p, w, valid, sm.Switches(onehot=True, uniform=True))
    assert torch.allclose(out1, out2, atol=1e-12)
    st = sm.attention_stats(A, w, valid, v)
    assert set(st) == set(sm.PAIR_KINDS)


def test_bad_input():
    with pytest.raises(ValueError, match="tau"):
        sm.subset_moments(3, 2, 4, 0.1, 0.1, 0.1)
    with pytest.raises(ValueError, match="p_m"):
        sm.check_params(p_m=1.0)
    with pytest.raises(ValueError, match="p_c"):
        sm.check_params(p_c=0.0)
    with pytest.raises(ValueError, match="p_c \\+ p_r"):
        sm.check_params(p_c=0.5, p_r=0.5)
    with pytest.raises(ValueError, match="v"):
        sm.check_params(v=0)
    with pytest.raises(ValueError, match="tau"):
        sm.sample_documents(make_generator(0), 2, 3, 2, model="theory", tau=5, N=4)
    with pytest.raises(ValueError, match="v must exceed"):
        th.theorem5_bounds(100, 10, 3, 0.15, 0.1, 0.1)
