"""Unit tests of theory/joma.py and sim/joma.py (Eqn. 7, Theorem 4, Lemmas 5-6)."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from sim.joma import entropy_softmax_sq, simulate_eqn7, stable_rank
from theory import joma as th


def test_no_attention_closed_form():
    mu = np.array([0.3, 1.0, 2.5])
    v0 = np.array([-0.2, 0.1, 0.5])
    run = simulate_eqn7(mu, v0, 5.0, n_points=50, attention=False, rtol=1e-11, atol=1e-13)
    exact = mu + (v0 - mu) * np.exp(-run.t)[:, None]
    assert np.max(np.abs(run.v - exact)) < 1e-9


def test_no_attention_closed_form_K_nodes_and_factor():
    M = np.array([[0.5, 1.0, 2.0], [1.5, 0.2, 0.7]])
    V0 = 0.1 * M
    c = 2.0
    run = simulate_eqn7(M, V0, 3.0, n_points=30, attention=False, factor=lambda t, V: c)
    exact = M + (V0 - M) * np.exp(-c * run.t)[:, None, None]
    assert run.v.shape == (30, 2, 3)
    assert np.max(np.abs(run.v - exact)) < 1e-8


def test_eqn7_time_to_reach_matches_quadrature():
    # one component: t(v) = int_{v0}^{v} e^{-u^2/2}/(mu - u) du = F(r, r0, mu)
    mu, v0 = np.array([1.7]), np.array([0.2])
    run = simulate_eqn7(mu, v0, 2.0, n_points=20)
    for t, v in zip(run.t[1:], run.v[1:, 0]):
        tq = integrate.quad(lambda u: math.exp(-u * u / 2) / (mu[0] - u), v0[0], v,
                            epsabs=1e-13, epsrel=1e-12)[0]
        assert abs(tq - t) < 1e-8 * max(1, t)


def test_v_and_deviation_states_agree():
    mu = np.array([0.4, 1.2, 2.4])
    v0 = np.array([0.0, -0.5, 0.3]) * mu
    a = simulate_eqn7(mu, v0, 1.5, n_points=40, state="v")
    b = simulate_eqn7(mu, v0, 1.5, n_points=40, state="deviation", atol=1e-300)
    assert np.max(np.abs(a.v - b.v)) < 1e-9
    assert np.max(np.abs(a.delta - b.delta) / np.abs(b.delta)) < 1e-4


def test_shared_attention_K1_equals_single_node():
    mu = np.array([0.4, 1.2, 2.0])
    v0 = 0.05 * np.ones(3)
    a = simulate_eqn7(mu, v0, 3.0, n_points=20)
    b = simulate_eqn7(mu[None], v0[None], 3.0, n_points=20)
    assert np.max(np.abs(a.v - b.v[:, 0])) < 1e-12


@pytest.mark.parametrize("kw, match", [
    (dict(mu=[1.0, -0.5], v0=[0.0, 0.0], t_end=1.0), "mu"),
    (dict(mu=[1.0, 0.0], v0=[0.0, 0.1], t_end=1.0), "mu"),
    (dict(mu=[1.0, 2.0], v0=[1.0, 0.0], t_end=1.0), "v0/mu"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=0.0), "t_end"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=-1.0), "t_end"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=float("inf")), "t_end"),
    (dict(mu=[1.0, np.nan], v0=[0.0, 0.0], t_end=1.0), "mu"),
    (dict(mu=[1.0, 2.0], v0=[0.0, np.inf], t_end=1.0), "v0"),
    (dict(mu=[1.0, 2.0], v0=[0.0], t_end=1.0), "v0"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=1.0, state="r"), "state"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=1.0, n_points=1), "n_points"),
])
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        simulate_eqn7(**kw)


def test_bad_factor():
    with pytest.raises(ValueError, match="factor"):
        simulate_eqn7([1.0], [0.0], 1.0, factor=lambda t, v: -1.0)


def test_dF_dmu_identity_symbolic():
    """Eqns. 72-75: d/dmu of the integrand and mu int (1+x) e^{-mu^2x^2/2} dx = zeta."""
    mu, r, r0 = th.mu, th.r, th.r0
    assert sp.simplify(sp.diff(th.F_integrand, mu) - th.dF_dmu_integrand_eqn72) == 0
    assert sp.simplify(th.dF_dmu_integrand_eqn72 - th.dF_dmu_integrand_eqn74) == 0
    xs = sp.symbols("xs", real=True)
    integral = sp.integrate(mu * (1 + xs) * sp.exp(-mu ** 2 * xs ** 2 / 2), (xs, r0, r))
    assert sp.simplify(integral - th.zeta_expr) == 0
    # Eqn. 78: d/dmu (e^{mu^2/2} F) = zeta e^{mu^2/2}  <=>  dF/dmu = zeta - mu F
    Fs = sp.Function("F")(mu)
    lhs = sp.diff(sp.exp(mu ** 2 / 2) * Fs, mu).subs(sp.Derivative(Fs, mu), th.zeta_expr - mu * Fs)
    assert sp.simplify(lhs - th.zeta_expr * sp.exp(mu ** 2 / 2)) == 0


def test_F0_symbolic():
    x, r, r0 = sp.symbols("x r r0", real=True)
    val = sp.integrate(1 / (1 - x), (x, r0, r)).subs({r0: sp.Rational(-1, 2), r: sp.Rational(9, 10)})
    assert abs(float(val) - float(th.F0(0.9, -0.5))) < 1e-12


@pytest.mark.parametrize("r, r0, mu", [(0.5, -0.5, 1.3), (0.999, 0.2, 2.7), (1.2, 1.8, 0.4),
                                       (1 - 1e-6, -1.0, 0.05)])
def test_F_gauss_legendre_vs_quad(r, r0, mu):
    q = integrate.quad(lambda s: math.exp(-mu ** 2 * s * s / 2) / (1 - s), r0, r, epsabs=1e-13,
                       epsrel=1e-12, limit=200)[0]
    assert abs(th.F(r, r0, mu) - q) < 1e-9 * max(1, abs(q))


def test_dF_dmu_numeric():
    r, r0, mu, h = 0.93, -0.3, 1.4, 1e-5
    fd = (th.F(r, r0, mu + h) - th.F(r, r0, mu - h)) / (2 * h)
    assert abs(fd - (th.zeta(r, r0, mu) - mu * th.F(r, r0, mu))) < 1e-8


def test_lemma_functions():
    y_star, g_star = th.lemma5_true_max()
    assert abs(th.eqn66_residual(y_star)) < 1e-14
    assert 0.63 < g_star < 1 / math.sqrt(2)
    y6, G6 = th.lemma6_true_max()
    assert 0.76 < G6 < 0.77
    assert abs(th.G(1.0) - float(th.G_expr.subs(th.y, 1).evalf())) < 1e-14
    assert abs(th.G_bound(1.0) - 2 * (1 - math.exp(-0.5))) < 1e-14
    assert th.M_bound(0.5) == pytest.approx(math.sqrt(2 * math.pi) + 1.5)


def test_eqn8_algebra():
    lam = th.lambda_jk(1e-3, 0.8, 2.0, 0.2, 1.1, 0.5)
    Lam = th.Lambda_jk(lam, 0.5, 0.2, 1.1)
    lhs = th.log_ratio(1e-3, 0.8) / th.log_ratio(0.2, 1.1)
    assert lhs == pytest.approx(th.eqn8_ratio(2.0, 0.5, Lam), rel=1e-12)


def test_entropy_and_stable_rank():
    assert entropy_softmax_sq(np.zeros(4)) == pytest.approx(math.log(4))
    assert stable_rank(np.eye(3)) == pytest.approx(3.0)
    assert stable_rank(np.outer([1, 2, 3], [1, 1])) == pytest.approx(1.0)


# --- sim.transformer: the fast path computes what the reference (einsum, per-parameter Adam
# loop) computes, to float32 round-off (issue 23, "Speed pays for the seeds") ---------------
import torch

from sim.measure import record
from sim.transformer import StackedTransformer, _adam_foreach, _loss_per_seed, train


def _tok(S, N=4, T=7, V=11, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(V, (S, N, T), generator=g), torch.randint(V, (S, N), generator=g),
            torch.rand(S, N, T, generator=g) > 0.2)


def _twins(**kw):
    a = StackedTransformer([3, 5, 8], vocab=11, n_out=11, d=8, depth=2, impl="reference", **kw)
    b = StackedTransformer([3, 5, 8], vocab=11, n_out=11, d=8, depth=2, impl="fast", **kw)
    return a, b


@pytest.mark.parametrize("kw", [dict(), dict(heads=2), dict(norm="pre"), dict(norm="none")])
def test_transformer_fast_forward_and_grads_match_reference(kw):
    ref, fast = _twins(**kw)
    tok, lab, mask = _tok(3)
    outs, grads = [], []
    for m in (ref, fast):
        mods = {f"a{l}": m.blocks[l].attn_softmax for l in range(2)}
        mods.update({f"h{l}": m.blocks[l].mlp_act for l in range(2)})
        with record(mods) as rec:
            h = m(tok)
        _loss_per_seed(m, h, tok, lab, mask, "next").sum().backward()
        outs.append((h.detach(), rec))
        grads.append([p.grad for p in m.parameters()])
    (h0, r0), (h1, r1) = outs
    assert torch.allclose(h0, h1, rtol=1e-5, atol=1e-5)
    for k in r0:
        assert r0[k].shape == r1[k].shape
        assert torch.allclose(r0[k], r1[k], rtol=1e-5, atol=1e-6), k
    for g0, g1 in zip(*grads):
        assert torch.allclose(g0, g1, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_adam_foreach_matches_loop(wd):
    g = torch.Generator().manual_seed(1)
    params = [torch.randn(3, 4, 5, generator=g), torch.randn(3, 7, generator=g)]
    grads = [torch.randn_like(p) for p in params]
    lr = torch.tensor([1e-3, 2e-3, 5e-3])
    lr_t = [lr.reshape((-1,) + (1,) * (p.ndim - 1)) for p in params]
    state = [[p.clone() for p in params], [torch.zeros_like(p) for p in params],
             [torch.zeros_like(p) for p in params]]
    loop = [[t.clone() for t in ts] for ts in state]
    b1, b2, eps = 0.9, 0.999, 1e-8
    for step in range(3):
        c1, c2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
        for p, gr in zip(state[0], grads):
            p.grad = gr
        _adam_foreach(state[0], state[1], state[2], lr_t, b1, b2, c1, c2, eps, wd)
        for p, a, v, r, gr in zip(*loop, lr_t, grads):
            gg = gr if wd == 0 else gr + wd * p
            a.mul_(b1).add_(gg, alpha=1 - b1)
            v.mul_(b2).addcmul_(gg, gg, value=1 - b2)
            p.sub_(r * (a / c1) / ((v / c2).sqrt() + eps))
    for x, y in zip(state[0], loop[0]):
        assert torch.allclose(x, y, rtol=1e-6, atol=1e-7)


def test_transformer_fast_training_matches_reference_and_freeze_works():
    """A few Adam steps: the losses agree to float32 round-off (over many steps Adam's
    normalised step amplifies round-off in near-zero gradients, so only a short run is exact);
    Wq / Wk turned into buffers (the attention-frozen null) stay fixed on the fast path."""
    tok, lab, mask = _tok(3, seed=2)
    logs = []
    for m in _twins():
        logs.append(train(m, lambda k: (tok, lab, mask), steps=3, lr=[1e-3, 2e-3, 3e-3],
                          task="next", log_every=1))
    for l0, l1 in zip(logs[0].loss, logs[1].loss):
        assert torch.allclose(l0, l1, rtol=1e-5, atol=1e-6)
    from properties.joma.runs import _freeze_attention
    fast = _twins()[1]
    _freeze_attention(fast)
    wq = fast.blocks[0].Wq.clone()
    wv = fast.blocks[0].Wv.detach().clone()
    train(fast, lambda k: (tok, lab, mask), steps=2, lr=1e-2, task="next", log_every=1)
    assert torch.equal(fast.blocks[0].Wq, wq)
    assert not torch.equal(fast.blocks[0].Wv.detach(), wv)


def test_transformer_bad_impl():
    with pytest.raises(ValueError, match="impl"):
        StackedTransformer([0], vocab=11, n_out=11, d=8, depth=1, impl="compiled")


@pytest.mark.parametrize("heads", [1, 2])
def test_transformer_fused_attention_matches_reference(heads, monkeypatch):
    """With sim.transformer._FUSED_ATTENTION on (off by default: slower at T = 30 on a CPU),
    the unhooked fast path's attention is torch's fused scaled_dot_product_attention (issue 36);
    its forward and gradients agree with the reference's explicit softmax to float32 round-off,
    and a probe that hooks attn_softmax still records the probabilities."""
    import sim.transformer as tr
    monkeypatch.setattr(tr, "_FUSED_ATTENTION", True)
    ref, fast = _twins(heads=heads)
    tok, lab, mask = _tok(3, seed=4)
    hs, grads = [], []
    for m in (ref, fast):
        h = m(tok)
        _loss_per_seed(m, h, tok, lab, mask, "next").sum().backward()
        hs.append(h.detach())
        grads.append([p.grad for p in m.parameters()])
    assert torch.allclose(hs[0], hs[1], rtol=1e-5, atol=1e-5)
    for g0, g1 in zip(*grads):
        assert torch.allclose(g0, g1, rtol=1e-4, atol=1e-6)
    with torch.no_grad(), record({"a0": fast.blocks[0].attn_softmax}) as rec:
        h2 = fast(tok)
    assert rec["a0"].shape == (3, tok.shape[1], heads, tok.shape[2], tok.shape[2])
    assert torch.allclose(h2, hs[1], rtol=1e-5, atol=1e-5)


def test_bench_prints_one_row_per_rung(capsys):
    """`python -m sim.bench --which transformer --d ...`: one row per model size, each rung's
    rate beside its own bare-matmul rate (issue 36)."""
    from sim import bench
    bench.main(["--which", "transformer", "--d", "8,16", "--seeds", "2", "--steps", "2",
                "--impl", "fast"])
    out = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in out if ln.strip() and ln.split()[0] in ("8", "16")]
    assert [r[0] for r in rows] == ["8", "16"] and all(len(r) == 6 for r in rows)
    with pytest.raises(SystemExit):
        bench.main(["--which", "transformer", "--d", "0"])
