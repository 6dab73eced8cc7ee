"""Unit tests of the paths of sim/topic/ that the uniform-attention audit does not exercise:
gradients with trained K/Q (squared and cross-entropy), one SGD / Adam step of `train`, the
masking scheme's frequencies, the LDA sampler, `attention_stats` on hand-built matrices,
near-zero positive initialisation, seed determinism, bad input.

Monte Carlo checks use Tolerance.monte_carlo with a false-fail budget of 1e-6 per test
(Bonferroni over the comparisons of the test), so the whole file false-fails with probability
< 1e-5; the seeds are fixed, so a pass is reproducible.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from properties import Tolerance
from sim import make_generator
from sim import topic as sm

FF = 1e-6  # false-fail budget per Monte Carlo test


def _mc_close(obs, exact, se, comparisons):
    tol = Tolerance.monte_carlo(se, FF, comparisons)
    assert abs(obs - exact) <= tol.value, f"{obs} vs {exact}: {tol.model}"
    return tol.value


# --------------------------------------------------------------------------------------------
# Gradients with trained K/Q
# --------------------------------------------------------------------------------------------
def _small_batch(seed, T=2, v=2, D=2, N=(3, 5)):
    g = make_generator(seed)
    w, valid = sm.sample_documents(g, D, T, v, model="lda", N_range=N)
    tok, m = sm.mask_tokens(g, w, valid, 0.5, 0.2, 0.3, T * v)
    m[:, 0] = True  # at least one masked position per document
    return g, w, valid, tok, m


@pytest.mark.parametrize("loss", ["squared", "ce"])
def test_gradients_match_finite_differences_all_parameters(loss):
    """autograd gradient of the batched eq. 5-6 model (trained W^E, W^K, W^Q, W^V, all biases)
    against central finite differences (torch.autograd.gradcheck, float64)."""
    T, v = 2, 2
    n, d = T * v + 1, 3
    g, w, valid, tok, m = _small_batch(0, T, v)
    sw = sm.Switches(biases=True)
    p = sm.init_params(g, 2, n, d=d, sw=sw, scale=0.5, device="cpu")
    for k in ("bK", "bQ", "bV", "bpred"):
        p[k] = 0.3 * torch.randn(p[k].shape, generator=g, dtype=torch.float64)
    names = list(sm.PARAMS)

    def f(*xs):
        q = dict(zip(names, xs))
        return sm.mlm_loss(sm.forward(q, tok, valid, sw), w, m, loss)

    xs = tuple(p[k].clone().requires_grad_(True) for k in names)
    assert torch.autograd.gradcheck(f, xs, eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("loss", ["squared", "ce"])
def test_uniform_attention_gradient_closed_form(loss):
    """Under one-hot embeddings and uniform attention, dL/dW^V = mean_docs (1/|M|) sum_{j in M}
    g_j zbar^T with g_j = 2 (f_j - e_w) (squared) or softmax(f_j) - e_w (CE)."""
    T, v = 3, 2
    n = T * v + 1
    g, w, valid, tok, m = _small_batch(1, T, v, D=3, N=(4, 7))
    sw = sm.Switches(onehot=True, uniform=True)
    p = sm.init_params(g, 1, n, sw=sw, scale=0.3, device="cpu")
    p["WV"].requires_grad_(True)
    sm.mlm_loss(sm.forward(p, tok, valid, sw), w, m, loss).sum().backward()
    WV = p["WV"].detach()[0].numpy()
    G = np.zeros((n, n))
    for doc in range(w.shape[0]):
        ids = tok[doc][valid[doc]].numpy()
        zbar = np.eye(n)[ids].mean(0)
        f = WV @ zbar
        js = np.nonzero(m[doc].numpy())[0]
        for j in js:
            e = np.eye(n)[w[doc, j].item()]
            gj = 2 * (f - e) if loss == "squared" else np.exp(f) / np.exp(f).sum() - e
            G += np.outer(gj, zbar) / len(js) / w.shape[0]
    assert np.allclose(p["WV"].grad[0].numpy(), G, atol=1e-13)


def test_seed_batch_keeps_per_seed_gradients():
    """Summing the per-seed losses gives each seed the gradient of its own loss."""
    T, v = 2, 2
    n = T * v + 1
    g, w, valid, tok, m = _small_batch(2, T, v)
    sw = sm.Switches(onehot=True)
    p = sm.init_params(g, 3, n, sw=sw, scale=0.5, device="cpu")
    for k in ("WK", "WQ", "WV"):
        p[k].requires_grad_(True)
    sm.mlm_loss(sm.forward(p, tok, valid, sw), w, m, "ce").sum().backward()
    full = {k: p[k].grad[1].clone() for k in ("WK", "WQ", "WV")}
    q = {k: x[1:2].detach().clone().requires_grad_(k in ("WK", "WQ", "WV")) for k, x in p.items()}
    sm.mlm_loss(sm.forward(q, tok, valid, sw), w, m, "ce").sum().backward()
    for k in full:
        assert torch.allclose(full[k], q[k].grad[0], atol=1e-14)


@pytest.mark.parametrize("opt,loss", [("sgd", "ce"), ("sgd", "squared"), ("adam", "ce")])
def test_train_one_step_matches_manual_update(opt, loss):
    """One step of `train` (joint K/Q/V with biases, ridge on W^V) equals the update computed
    by hand from the same documents (same generator stream)."""
    T, v, S, lr, lam = 3, 2, 2, 0.1, 0.01
    n = T * v + 1
    sw = sm.Switches(onehot=True, biases=True)
    kw = dict(T=T, v=v, batch=3, sw=sw, loss=loss, opt=opt, lr=lr, lam=lam, N_range=(5, 8))
    p = sm.init_params(make_generator(5), S, n, sw=sw, scale=0.2, positive=True, device="cpu")
    ref = {k: x.clone() for k, x in p.items()}
    sm.train(p, make_generator(6), steps=1, **kw)
    g = make_generator(6)
    w, valid = sm.sample_documents(g, 3 * S, T, v, model="lda", N_range=(5, 8))
    tok, m = sm.mask_tokens(g, w, valid, 0.15, 0.1, 0.1, n - 1)
    w, valid, tok, m = (x.view(S, 3, -1) for x in (w, valid, tok, m))
    names = sm.trainable(sw)
    assert set(names) == {"WV", "bpred", "WK", "WQ", "bV", "bK", "bQ"}
    for k in names:
        ref[k].requires_grad_(True)
    L = sm.mlm_loss(sm.forward(ref, tok, valid, sw), w, m, loss) + lam * (ref["WV"] ** 2).flatten(1).sum(-1)
    L.sum().backward()
    for k in names:
        gr = ref[k].grad
        # Adam's first step is lr * sign(g) (up to eps); SGD is lr * g
        step = lr * gr / (gr.abs() + 1e-8) if opt == "adam" else lr * gr
        assert torch.allclose(p[k], ref[k].detach() - step, atol=1e-10), k
    assert torch.equal(p["WE"], ref["WE"])  # one-hot embeddings stay frozen


def test_frozen_parameters_do_not_move():
    T, v = 3, 2
    n = T * v + 1
    for sw, frozen in [(sm.Switches(onehot=True, uniform=True), ("WE", "WK", "WQ")),
                       (sm.Switches(onehot=True, freeze_v=True), ("WE", "WV", "bV")),
                       (sm.Switches(onehot=True, uniform=True, freeze_bpred=True), ("bpred",))]:
        p = sm.init_params(make_generator(0), 2, n, sw=sw, scale=0.1, positive=True, device="cpu")
        ref = {k: x.clone() for k, x in p.items()}
        sm.train(p, make_generator(1), T=T, v=v, steps=3, batch=2, sw=sw, N_range=(5, 8), lr=0.1)
        for k in frozen:
            assert torch.equal(p[k], ref[k]), (sw, k)
        moved = [k for k in sm.trainable(sw) if not torch.equal(p[k], ref[k])]
        assert set(moved) == set(sm.trainable(sw)) - {"bV", "bK", "bQ"} or moved


# --------------------------------------------------------------------------------------------
# Masking frequencies vs exact probabilities
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p_m,p_c,p_r", [(0.15, 0.1, 0.1), (0.6, 0.3, 0.5)])
def test_masking_frequencies(p_m, p_c, p_r):
    g = make_generator(11)
    T, v = 4, 3
    nw = T * v
    w, valid = sm.sample_documents(g, 400, T, v, model="lda", N_range=(100, 150))
    tok, m = sm.mask_tokens(g, w, valid, p_m, p_c, p_r, nw)
    nv, nm = int(valid.sum()), int(m.sum())
    assert not (m & ~valid).any() and torch.equal(tok[~m], w[~m])
    assert (tok[~valid] == 0).all()
    q_mask, q_keep = 1 - p_c - p_r, p_c + p_r / nw
    q_other = p_r * (1 - 1 / nw)
    km = tok[m]
    obs = {"masked": (nm / nv, p_m, nv), "[MASK]": (float((km == 0).float().mean()), q_mask, nm),
           "kept": (float((km == w[m]).float().mean()), q_keep, nm),
           "other word": (float(((km != 0) & (km != w[m])).float().mean()), q_other, nm)}
    for name, (o, p, cnt) in obs.items():
        se = math.sqrt(p * (1 - p) / cnt)
        tol = _mc_close(o, p, se, comparisons=5)
        if name == "masked":  # power: a 10% relative error in p_m would be caught
            assert abs(o - 1.1 * p) > tol
    # random replacements are uniform over the n_words words (chi-square, p-value > FF / 5)
    rw = km[(km != 0) & (km != w[m])]
    # conditioned on differing from the original word, each word has prob. that depends on the
    # original word; pool over originals: expected counts ∝ sum over originals of 1/(nw - 1)
    orig = w[m][(km != 0) & (km != w[m])]
    exp = np.zeros(nw)
    cnt_orig = np.bincount(orig.numpy() - 1, minlength=nw)
    for o_, c in enumerate(cnt_orig):
        e = np.full(nw, c / (nw - 1))
        e[o_] = 0.0
        exp += e
    obs_c = np.bincount(rw.numpy() - 1, minlength=nw)
    assert stats.chisquare(obs_c, exp).pvalue > FF / 5


# --------------------------------------------------------------------------------------------
# LDA sampler: Dirichlet(0.1) topic weights, N uniform in 100..150
# --------------------------------------------------------------------------------------------
def test_lda_documents_dirichlet_and_lengths():
    """sum_t n_t (n_t - 1) / (N (N - 1)) is unbiased for sum_t theta_t^2, whose mean under
    Dirichlet(a 1_T) is T (a (T a - a) / ((T a)^2 (T a + 1)) + 1/T^2); topic fractions have mean
    1/T; lengths are uniform on 100..150 (mean 125, variance (51^2 - 1)/12)."""
    g = make_generator(4)
    T, v, D, a = 10, 3, 3000, 0.1
    w, valid = sm.sample_documents(g, D, T, v, model="lda")
    L = valid.sum(1).numpy()
    assert L.min() >= 100 and L.max() <= 150 and {100, 150} <= set(L.tolist())
    assert stats.chisquare(np.bincount(L - 100, minlength=51)).pvalue > FF / 4
    t = (w - 1).div(v, rounding_mode="floor")
    cnt = torch.stack([((t == k) & valid).sum(1) for k in range(T)], 1).numpy().astype(float)
    assert (cnt.sum(1) == L).all() and w[valid].min() >= 1 and w[valid].max() <= T * v
    est = (cnt * (cnt - 1)).sum(1) / (L * (L - 1))
    a0 = T * a
    exact = T * (a * (a0 - a) / (a0**2 * (a0 + 1)) + (a / a0) ** 2)
    tol = _mc_close(est.mean(), exact, est.std(ddof=1) / math.sqrt(D), comparisons=2)
    a1 = 1.0  # power: Dirichlet(1) gives a different second moment
    wrong = T * (a1 * (T * a1 - a1) / ((T * a1) ** 2 * (T * a1 + 1)) + 1 / T**2)
    assert abs(est.mean() - wrong) > tol
    frac = cnt / L[:, None]
    _mc_close(frac[:, 0].mean(), 1 / T, frac[:, 0].std(ddof=1) / math.sqrt(D), comparisons=2)
    # the paper: "most sentences contain 2 to 4 topics" (share of topics with >= 5% of the words)
    k = (frac >= 0.05).sum(1)
    assert 0.5 < np.mean((k >= 2) & (k <= 4))


def test_theory_documents_have_tau_topics():
    g = make_generator(5)
    T, v, tau = 8, 3, 3
    w, valid = sm.sample_documents(g, 300, T, v, model="theory", tau=tau, N=200)
    t = (w - 1).div(v, rounding_mode="floor")
    n_topics = [len(set(x.tolist())) for x in t]
    assert valid.all() and max(n_topics) <= tau and np.mean(np.array(n_topics) == tau) > 0.99


# --------------------------------------------------------------------------------------------
# attention_stats on hand-built attention matrices
# --------------------------------------------------------------------------------------------
def test_attention_stats_hand_built():
    v = 2  # words 1, 2: topic 0; words 3, 4: topic 1
    tokens = torch.tensor([[1, 1, 2, 3, 0], [4, 4, 3, 0, 0]])
    valid = torch.tensor([[True] * 5, [True, True, True, True, False]])
    A = torch.arange(2 * 25, dtype=torch.float64).reshape(1, 2, 5, 5).expand(2, 2, 5, 5).clone()
    A[1] *= 2  # second seed
    a0, a1 = A[0, 0].numpy(), A[0, 1].numpy()
    # document 0: positions 0..3 are words (position 4 shows [MASK]); document 1: 0..2
    sets0 = {"same_position": [(0, 0), (1, 1), (2, 2), (3, 3)], "same_word": [(0, 1), (1, 0)],
             "same_topic": [(0, 2), (2, 0), (1, 2), (2, 1)],
             "diff_topic": [(0, 3), (3, 0), (1, 3), (3, 1), (2, 3), (3, 2)]}
    sets1 = {"same_position": [(0, 0), (1, 1), (2, 2)], "same_word": [(0, 1), (1, 0)],
             "same_topic": [(0, 2), (2, 0), (1, 2), (2, 1)], "diff_topic": []}
    for L in (None, 100.0):
        st = sm.attention_stats(A, tokens, valid, v, normalise_length=L)
        for k in sm.PAIR_KINDS:
            f0 = 5 / L if L else 1.0
            f1 = 4 / L if L else 1.0
            vals = [a0[i, j] * f0 for i, j in sets0[k]] + [a1[i, j] * f1 for i, j in sets1[k]]
            assert st[k][0] == pytest.approx(np.mean(vals), rel=1e-14), k
            assert st[k][1] == pytest.approx(2 * np.mean(vals), rel=1e-14), k


def test_attention_stats_identity_and_uniform():
    g = make_generator(7)
    T, v = 3, 3
    w, valid = sm.sample_documents(g, 5, T, v, model="lda", N_range=(10, 20))
    N = w.shape[1]
    eye = torch.eye(N, dtype=torch.float64).expand(1, 5, N, N)
    st = sm.attention_stats(eye, w, valid, v)
    assert st["same_position"][0] == 1.0 and all(st[k][0] == 0.0 for k in sm.PAIR_KINDS[1:])
    cnt = valid.sum(1).to(torch.float64)
    U = (valid[:, :, None].to(torch.float64) / cnt[:, None, None]).expand(5, N, N)[None]
    st = sm.attention_stats(U, w, valid, v, normalise_length=100)
    for k in sm.PAIR_KINDS:  # uniform attention, length-debiased: every weight is 1/100
        assert st[k][0] == pytest.approx(0.01, rel=1e-12)


def test_forward_attention_columns_are_distributions():
    g = make_generator(8)
    T, v = 3, 2
    n = T * v + 1
    w, valid = sm.sample_documents(g, 4, T, v, model="lda", N_range=(3, 9))
    sw = sm.Switches(biases=True)
    p = sm.init_params(g, 2, n, d=4, sw=sw, scale=1.0, device="cpu")
    _, A = sm.forward(p, w, valid, sw, return_attention=True)
    assert torch.allclose(A.sum(-2), torch.ones(A.shape[:2] + A.shape[-1:], dtype=torch.float64))
    assert (A[~valid.expand(2, *valid.shape)[..., :, None].expand_as(A)] == 0).all()


# --------------------------------------------------------------------------------------------
# Near-zero positive initialisation and determinism
# --------------------------------------------------------------------------------------------
def test_near_zero_positive_init():
    n, d, S, s = 11, 6, 50, 1e-3
    p = sm.init_params(make_generator(9), S, n, d=d, scale=s, positive=True, device="cpu")
    for k in ("WK", "WQ", "WV"):
        x = p[k].numpy().ravel()
        assert (x >= 0).all() and x.max() < 8 * s
        # |N(0, s^2)|: mean s sqrt(2/pi), variance s^2 (1 - 2/pi)
        _mc_close(x.mean(), s * math.sqrt(2 / math.pi), s * math.sqrt((1 - 2 / math.pi) / x.size), 4)
    we = p["WE"].numpy().ravel()  # trainable W^E stays N(0, 1/d), not positive
    assert (we < 0).mean() > 0.4
    _mc_close(we.var(), 1 / d, math.sqrt(2 / we.size) / d, 4)
    q = sm.init_params(make_generator(9), 2, n, sw=sm.Switches(onehot=True, uniform=True),
                       scale=s, positive=True, device="cpu")
    assert torch.equal(q["WE"][0], torch.eye(n, dtype=torch.float64))
    assert (q["WK"] == 0).all() and (q["WQ"] == 0).all() and (q["WV"] > 0).all()


def test_seeds_are_deterministic():
    T, v, n = 3, 2, 7
    sw = sm.Switches(onehot=True, biases=True)

    def run(s):
        g = make_generator(s)
        p = sm.init_params(g, 2, n, sw=sw, scale=0.05, positive=True, device="cpu")
        log = sm.train(p, g, T=T, v=v, steps=4, batch=2, sw=sw, loss="ce", opt="sgd", lr=0.1,
                       N_range=(5, 9), log_every=1)
        return p, np.array(log.loss)

    (p1, l1), (p2, l2), (p3, _) = run(3), run(3), run(4)
    assert all(torch.equal(p1[k], p2[k]) for k in p1) and np.array_equal(l1, l2)
    assert not torch.equal(p1["WV"], p3["WV"])
    # seeds of one batch get their own documents (shared_data=False): their losses differ
    assert not np.allclose(l1[:, 0], l1[:, 1])
    w1, _ = sm.sample_documents(make_generator(3), 4, T, v, model="lda")
    w2, _ = sm.sample_documents(make_generator(3), 4, T, v, model="lda")
    assert torch.equal(w1, w2)


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------
def test_bad_input_sim_paths():
    g = make_generator(0)
    sw = sm.Switches(onehot=True)
    p = sm.init_params(g, 1, 7, sw=sw, device="cpu")
    base = dict(T=3, v=2, steps=1, batch=1, sw=sw)
    with pytest.raises(ValueError, match="opt"):
        sm.train(p, g, opt="rmsprop", **base)
    with pytest.raises(ValueError, match="loss"):
        sm.train(p, g, loss="hinge", **base)
    with pytest.raises(ValueError, match="lr"):
        sm.train(p, g, lr=0.0, **base)
    with pytest.raises(ValueError, match="p_c \\+ p_r"):
        sm.train(p, g, p_c=0.6, p_r=0.5, **base)
    with pytest.raises(ValueError, match="p_m"):
        sm.mask_tokens(g, torch.ones(1, 3, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool),
                       0.0, 0.1, 0.1, 4)
    with pytest.raises(ValueError, match="model"):
        sm.sample_documents(g, 2, 3, 2, model="hmm")
    with pytest.raises(ValueError, match="N must"):
        sm.sample_documents(g, 2, 3, 2, model="theory", tau=1, N=0)
    with pytest.raises(ValueError, match="tau and N"):
        sm.sample_documents(g, 2, 3, 2, model="theory")
    with pytest.raises(ValueError, match="dirichlet"):
        sm.sample_documents(g, 2, 3, 2, model="lda", dirichlet=0.0)
    with pytest.raises(ValueError, match="N_range"):
        sm.sample_documents(g, 2, 3, 2, model="lda", N_range=(5, 3))
    with pytest.raises(ValueError, match="T must"):
        sm.sample_documents(g, 2, 0, 2, model="lda")
    with pytest.raises(ValueError, match="scale"):
        sm.init_params(g, 1, 7, d=3, scale=0.0)
    with pytest.raises(ValueError, match="d must"):
        sm.init_params(g, 1, 7)
    with pytest.raises(ValueError, match="loss"):
        sm.mlm_loss(torch.zeros(1, 1, 2, 3), torch.zeros(1, 2, dtype=torch.long),
                    torch.ones(1, 2, dtype=torch.bool), loss="l1")
