"""Unit tests of theory/topic.py (sympy closed forms) and sim/topic/ (samplers, moments,
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


@pytest.mark.parametrize("factor", [1.0, 1.02])
def test_definition2_decides_through_theory_dv(monkeypatch, factor):
    """topic.definition2's exact property calls theory.topic.definition2_dv (no copy of the
    closed form in the claim file): a 2% error put into it fails the property; the same wrapper
    without the error passes."""
    from properties import ClaimMismatch
    from properties import world as W
    from properties.topic import test_definition2 as prop

    monkeypatch.setenv("THEOREM_AUDIT_NO_CACHE", "1")
    monkeypatch.setenv("THEOREM_AUDIT_RESOLUTION", "0")
    real = th.definition2_dv
    monkeypatch.setattr(th, "definition2_dv", lambda *a, **k: factor * real(*a, **k))
    W.pop_last_run()
    try:
        if factor == 1.0:
            prop.test_definition2_in_family(world=W.WORLD_PLACEHOLDER)
        else:
            with pytest.raises(ClaimMismatch, match="Lemma 1 conditions"):
                prop.test_definition2_in_family(world=W.WORLD_PLACEHOLDER)
    finally:
        W.pop_last_run()


@pytest.mark.parametrize("loss", ["squared", "ce"])
def test_uniform_loss_per_document_equals_per_position(loss):
    """sim.topic's loss of an output expanded over positions (uniform attention) sums per document
    by word; the same output materialised (contiguous) takes the per-position path: equal values
    and gradients, and forward's uniform output equals W^V's mean over the embedded valid keys."""
    g = make_generator(7)
    T, v = 3, 2
    n = T * v + 1
    sw = sm.Switches(onehot=True, uniform=True, biases=True)
    w, valid = sm.sample_documents(g, 12, T, v, model="lda", N_range=(3, 9))
    tok, m = sm.mask_tokens(g, w, valid, 0.4, 0.1, 0.1, n - 1)
    w, valid, tok, m = (x.view(3, 4, -1) for x in (w, valid, tok, m))
    p = sm.init_params(g, 3, n, sw=sw, scale=0.3, device="cpu")
    p["bV"] = 0.1 * torch.randn(p["bV"].shape, generator=g, dtype=torch.float64)
    p["WV"].requires_grad_(True)
    out = sm.forward(p, tok, valid, sw)
    assert out.stride(2) == 0  # one output per document, expanded
    Z = p["WE"].transpose(1, 2)[torch.arange(3)[:, None, None], tok]  # embedded positions
    V = Z @ p["WV"].transpose(1, 2)[:, None] + p["bV"][:, None, None]
    mean = (V * valid[..., None]).sum(-2) / valid.sum(-1, keepdim=True).clamp_min(1)
    assert torch.allclose(out[:, :, 0], mean @ p["WE"] + p["bpred"][:, None], atol=1e-13)
    fast = sm.mlm_loss(out, w, m, loss)
    slow = sm.mlm_loss(out.contiguous(), w, m, loss)
    g1 = torch.autograd.grad(fast.sum(), p["WV"], retain_graph=True)[0]
    g2 = torch.autograd.grad(slow.sum(), p["WV"])[0]
    assert torch.allclose(fast, slow, atol=1e-13) and torch.allclose(g1, g2, atol=1e-13)


def test_forward_matches_the_embedded_positions():
    """forward (trained attention) picks rows of (W W^E)^T by token: the same as multiplying every
    embedded position Z = W^E X by W (eqs. 5-6), with a trainable W^E too."""
    g = make_generator(8)
    T, v = 3, 2
    n = T * v + 1
    sw = sm.Switches(biases=True)
    w, valid = sm.sample_documents(g, 4, T, v, model="lda", N_range=(3, 9))
    p = sm.init_params(g, 2, n, d=5, sw=sw, scale=0.5, device="cpu")
    for k in ("bV", "bK", "bQ"):
        p[k] = 0.1 * torch.randn(p[k].shape, generator=g, dtype=torch.float64)
    out, A = sm.forward(p, w, valid, sw, return_attention=True)
    Z = p["WE"].transpose(1, 2)[:, w]  # (S, D, N, d)
    K, Q, V = (Z @ p[m].transpose(1, 2)[:, None] + p[b][:, None, None]
               for m, b in (("WK", "bK"), ("WQ", "bQ"), ("WV", "bV")))
    sc = (K @ Q.transpose(-1, -2) / np.sqrt(5)).masked_fill(~valid[None, :, :, None], -np.inf)
    A2 = torch.softmax(sc, dim=-2)
    out2 = (A2.transpose(-1, -2) @ V) @ p["WE"][:, None] + p["bpred"][:, None, None]
    assert torch.allclose(A, A2, atol=1e-14) and torch.allclose(out, out2, atol=1e-13)
