"""Unit tests of sim/joma.py (Table 1 generator), sim/transformer.py (stacked-seed
decoder-only transformer) and sim/measure.py (model-agnostic measurement tools)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from sim import joma as simj
from sim import make_generator
from sim import measure as ms
from sim.joma import (
    generator_from_children,
    make_table1_generator,
    sample_hierarchy,
    sibling_height,
)
from sim.transformer import StackedTransformer, accuracy, train


# --------------------------------------------------------------------------------------------
# generator
# --------------------------------------------------------------------------------------------
def test_generator_shapes_and_layout():
    g = make_table1_generator(20, 2, (10, 20), generator=make_generator(0))
    smp = sample_hierarchy(g, 50, make_generator(1))
    assert smp.tokens.shape == (50, 30) and smp.mask.shape == (50, 30)
    assert [z.shape for z in smp.latents] == [(50, 10), (50, 20)]
    assert smp.token_on.shape == (50, 99)
    # pre-padding: pads first, then real tokens, sorted ascending
    for i in range(50):
        m = smp.mask[i]
        k = int(m.sum())
        assert bool(m[-k:].all()) and not bool(m[:-k].any())
        real = smp.tokens[i, -k:]
        assert torch.equal(real, torch.sort(real).values)
        assert set(real.tolist()) == set(torch.nonzero(smp.token_on[i]).flatten().tolist())
        assert bool((smp.tokens[i, :-k] == g.pad).all())
    # rho = 1: deterministic given the class, class -> exactly N_ch top latents
    assert bool((smp.latents[1].sum(1) == 2).all())
    for c in smp.labels.unique():
        rows = smp.tokens[smp.labels == c]
        assert bool((rows == rows[0]).all())


def test_generator_latents_are_or_of_parents():
    g = make_table1_generator(5, 2, (6, 5), generator=make_generator(3))
    smp = sample_hierarchy(g, 40, make_generator(4))
    for i in range(40):
        top = torch.nonzero(smp.latents[1][i]).flatten()
        assert set(top.tolist()) == set(g.children[2][smp.labels[i]].tolist())
        low = set(g.children[1][top].flatten().tolist())
        assert set(torch.nonzero(smp.latents[0][i]).flatten().tolist()) == low
        toks = set(g.children[0][sorted(low)].flatten().tolist())
        assert set(torch.nonzero(smp.token_on[i]).flatten().tolist()) == toks


def test_dag_sampler_on_a_tree_matches_hblt_exact_marginals():
    # a tree written as a DAG (disjoint children) must reproduce HBLT(rho)'s exact law; the
    # root's children are switched on deterministically by the class (q0 in {0, 1})
    C, rho = 2, 0.6
    q0 = torch.tensor([[0.0, 1.0], [1.0, 0.0]])  # class 0 -> top latent 0, class 1 -> latent 1
    tree = simj.make_hblt([0.5, 0.5], q0, rho, n_children=2, depth=3, n_root_children=2)
    lv1 = tree.level(2)
    children = [torch.stack([torch.nonzero(tree.parent == int(p)).flatten() - int(tree.level(3)[0])
                             for p in lv1]),
                torch.stack([torch.nonzero(tree.parent == int(p)).flatten() - int(lv1[0])
                             for p in tree.level(1)]),
                torch.tensor([[0, 0], [1, 1]])]  # class -> its top latent (duplicate = same)
    g = generator_from_children(children, C=C, M=9, T=8, rho=rho)
    n = 40000
    smp = sample_hierarchy(g, n, make_generator(5))
    exact_C, marg = simj.hblt_exact_leaf_cooccurrence(tree)
    emp = smp.token_on[:, :8].to(torch.float64)
    se = torch.sqrt(marg * (1 - marg) / n)
    assert float(((emp.mean(0) - marg).abs() / se).max()) < 5.5
    both = emp.T @ emp
    F = both / both.diagonal()[None, :]
    cnt = both.diagonal()[None, :]
    se2 = torch.sqrt(exact_C * (1 - exact_C) / cnt).clamp_min(1e-12)
    off = ~torch.eye(8, dtype=torch.bool)
    assert float(((F - exact_C).abs() / se2)[off].max()) < 5.5


def test_tree_structure_reuses_hblt_and_heights():
    g = make_table1_generator(4, 2, (8, 4), structure="tree", n_top=4, M=40, T=30,
                              rho=0.9, generator=make_generator(2))
    assert g.n_latents == (8, 4) and g.tree is not None
    H = sibling_height(g)
    Ht = g.tree.cla_height_matrix()
    n = Ht.shape[0]
    off = ~torch.eye(n, dtype=torch.bool)
    low = off & (Ht < g.tree.L)  # common latent ancestor below the class root: same height
    assert torch.equal(H[:n, :n][low], Ht[low])
    assert bool((H[:n, :n][off & ~low] >= g.tree.L).all())
    smp = sample_hierarchy(g, 20, make_generator(9))
    assert smp.tokens.shape == (20, 30)


def test_generator_seed_determinism():
    a = make_table1_generator(20, 2, (10, 20), generator=make_generator(7))
    b = make_table1_generator(20, 2, (10, 20), generator=make_generator(7))
    assert all(torch.equal(x, y) for x, y in zip(a.children, b.children))
    sa = sample_hierarchy(a, 30, make_generator(8))
    sb = sample_hierarchy(b, 30, make_generator(8))
    assert torch.equal(sa.tokens, sb.tokens)
    sc = sample_hierarchy(a, 30, make_generator(9))
    assert not torch.equal(sa.tokens, sc.tokens)


def test_noise_truncates_to_T():
    g = make_table1_generator(5, 2, (4, 4), rho=0.0, M=100, T=30, generator=make_generator(1))
    smp = sample_hierarchy(g, 20, make_generator(2))
    assert int(smp.truncated.max()) > 0 and bool((smp.mask.sum(1) <= 30).all())


@pytest.mark.parametrize("kw", [dict(C=1), dict(N_ch=0), dict(M=2), dict(rho=1.5),
                                dict(structure="graph"), dict(order="up"),
                                dict(n_latents=()), dict(n_latents=(0, 3)),
                                dict(N_ch=4, n_latents=(10, 20))])
def test_generator_bad_input(kw):
    args = dict(C=20, N_ch=2, n_latents=(10, 20))
    args.update(kw)
    with pytest.raises(ValueError):
        make_table1_generator(args.pop("C"), args.pop("N_ch"), args.pop("n_latents"),
                              generator=make_generator(0), **args)


def test_sampler_bad_input():
    g = make_table1_generator(20, 2, (10, 20), generator=make_generator(0))
    with pytest.raises(ValueError):
        sample_hierarchy(g, 0, make_generator(0))
    with pytest.raises(ValueError):
        sample_hierarchy(g, 5, 123)


# --------------------------------------------------------------------------------------------
# transformer
# --------------------------------------------------------------------------------------------
def _tiny(seeds, **kw):
    return StackedTransformer(seeds, vocab=12, n_out=3, d=8, depth=2, heads=2, width=16,
                              device="cpu", **kw)


def test_transformer_shapes_and_seed_independence():
    m = _tiny([1, 2])
    m1 = _tiny([2])
    x = torch.randint(0, 12, (2, 5, 7), generator=make_generator(0))
    h = m(x)
    assert h.shape == (2, 5, 7, 8)
    # seed 2's slice does not depend on the other seeds of the batch
    assert torch.allclose(h[1], m1(x[1:])[0], atol=1e-6)
    with record_probs(m) as out:
        m(x)
    assert out["a0"].shape == (2, 5, 2, 7, 7) and out["h0"].shape == (2, 5, 7, 16)
    p = out["a0"]
    assert torch.allclose(p.sum(-1), torch.ones_like(p.sum(-1)), atol=1e-5)
    assert float(p[..., 0, 1:].abs().max()) == 0.0  # causal: the first query sees only itself


def record_probs(m):
    mods = {f"a{i}": b.attn_softmax for i, b in enumerate(m.blocks)}
    mods.update({f"h{i}": b.mlp_act for i, b in enumerate(m.blocks)})
    return ms.record(mods)


def test_stacked_adam_equals_independent_runs_and_learns():
    x = torch.randint(0, 12, (3, 16, 6), generator=make_generator(1))
    y = x[:, :, -1] % 3  # the label is a function of the last token
    mask = torch.ones_like(x, dtype=torch.bool)
    m = _tiny([4, 5, 6])
    log = train(m, lambda s: (x, y, mask), steps=60, lr=[1e-2, 1e-2, 3e-2], log_every=20)
    single = _tiny([6])
    train(single, lambda s: (x[2:], y[2:], mask[2:]), steps=60, lr=3e-2, log_every=20)
    assert torch.allclose(m.blocks[0].W1[2], single.blocks[0].W1[0], atol=1e-4)
    assert float(log.loss[-1].max()) < float(log.loss[0].min())
    assert float(accuracy(m, x, y).min()) > 0.9
    # next-token task runs
    train(_tiny([1]), lambda s: (x[:1] % 3, y[:1], mask[:1]), steps=3, lr=1e-3, task="next")


@pytest.mark.parametrize("kw", [dict(d=9, heads=2), dict(norm="batch"), dict(depth=0),
                                dict(embed_scale=0.0)])
def test_transformer_bad_input(kw):
    args = dict(vocab=12, n_out=3, d=8, depth=2, heads=2, device="cpu")
    args.update(kw)
    with pytest.raises(ValueError):
        StackedTransformer([1], **args)


def test_train_bad_input():
    m = _tiny([1, 2])
    b = lambda s: None  # noqa: E731
    for kw in (dict(steps=0, lr=1e-3), dict(steps=1, lr=-1.0), dict(steps=1, lr=[1e-3, 1e-3, 1e-3]),
               dict(steps=1, lr=1e-3, task="mlm"), dict(steps=1, lr=1e-3, weight_decay=-1)):
        with pytest.raises(ValueError):
            train(m, b, **kw)
    with pytest.raises(ValueError):
        StackedTransformer([], vocab=12, n_out=3)


# --------------------------------------------------------------------------------------------
# measurement tools (on hand-built models with known answers)
# --------------------------------------------------------------------------------------------
class HandModel(nn.Module):
    """A user-style model: uniform attention (zero logits) and a ReLU 'MLP'."""

    def __init__(self, T):
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)
        self.act = nn.ReLU()
        self.lin = nn.Linear(3, 4)
        self.T = T

    def forward(self, x):  # x: (N, T, 3)
        p = self.softmax(torch.zeros(x.shape[0], self.T, self.T))
        return self.act(self.lin(p @ x))


def test_uniform_attention_has_entropy_log_T():
    T = 7
    m = HandModel(T)
    with ms.record({"attn": m.softmax}) as out:
        m(torch.randn(4, T, 3, generator=make_generator(0)))
    assert math.isclose(float(ms.attention_entropy(out["attn"])), math.log(T), rel_tol=1e-6)
    one_hot = torch.eye(T).expand(2, T, T)
    assert float(ms.attention_entropy(one_hot)) == 0.0
    # causal uniform: row q has q + 1 keys; per-row values and the query mask
    causal = torch.tril(torch.ones(T, T))
    causal = causal / causal.sum(-1, keepdim=True)
    ent = ms.row_entropy(causal)
    assert torch.allclose(ent, torch.log(torch.arange(1, T + 1, dtype=torch.float32)))
    qm = torch.zeros(T, dtype=torch.bool)
    qm[-1] = True
    assert math.isclose(float(ms.attention_entropy(causal, qm)), math.log(T), rel_tol=1e-6)
    per = ms.attention_entropy(torch.stack([causal, torch.eye(T)]), keep_dims=1)
    assert per.shape == (2,) and float(per[1]) == 0.0


def test_stable_rank_known_values():
    u = torch.randn(6, 1, generator=make_generator(1))
    v = torch.randn(1, 5, generator=make_generator(2))
    assert math.isclose(float(ms.stable_rank(u @ v)), 1.0, rel_tol=1e-9)
    assert math.isclose(float(ms.stable_rank(torch.eye(4))), 4.0, rel_tol=1e-12)
    lin = nn.Linear(5, 3)
    assert math.isclose(float(ms.stable_rank(lin.weight)), float(ms.stable_rank(lin.weight.T)),
                        rel_tol=1e-9)
    assert ms.stable_rank(torch.stack([torch.eye(3), torch.diag(torch.tensor([2.0, 0, 0]))])
                          ).tolist() == pytest.approx([3.0, 1.0])


def test_ncorr_neuron_equal_to_latent_is_one():
    gen = make_generator(3)
    N, T = 200, 5
    z = (torch.rand(N, 2, generator=gen) < 0.4)
    acts = torch.randn(N, T, 6, generator=gen)
    # neuron 4 peaks (max over the sequence) exactly at 3 x latent 0 + 1
    acts[:, :, 4] = -1.0
    acts[:, 2, 4] = 3 * z[:, 0].float() + 1
    best = ms.best_match_ncorr(ms.max_over_sequence(acts), z)
    assert math.isclose(float(best[0]), 1.0, rel_tol=1e-9)
    assert float(best[1]) < 0.5  # nothing built for latent 1
    c = ms.normalized_correlation(-ms.max_over_sequence(acts), z)
    assert math.isclose(float(c[4, 0]), -1.0, rel_tol=1e-9)
    # constant latent / dead neuron -> NaN, ignored by the best match
    zc = torch.cat([z, torch.zeros(N, 1, dtype=torch.bool)], 1)
    acts[:, :, 0] = 0.0
    c = ms.normalized_correlation(ms.max_over_sequence(acts), zc)
    assert bool(torch.isnan(c[:, 2]).all()) and bool(torch.isnan(c[0]).all())
    assert torch.isnan(ms.best_match_ncorr(ms.max_over_sequence(acts), zc)[2])
    # masked max ignores padding positions
    m = torch.ones(N, T, dtype=torch.bool)
    m[:, 2] = False
    assert float(ms.max_over_sequence(acts, m)[:, 4].max()) == -1.0


def test_grouped_logits_recover_known_logits():
    T = 4
    logits = torch.tensor([0.0, 1.0, 3.0, 0.0])
    p = torch.softmax(logits, -1).expand(1, 1, T, T).clone()  # (N, H, T, T), same row
    groups = torch.tensor([0, 1, 2, 3]).expand(1, T, T)
    km = torch.ones(1, T, T, dtype=torch.bool)
    out = ms.grouped_attention_logits(p, groups, 4, km)
    assert torch.allclose(out, (logits - logits.mean()).double(), atol=1e-6)


def test_measure_bad_input():
    with pytest.raises(ValueError):
        ms.attention_entropy(torch.full((3, 3), 0.5))  # rows do not sum to 1
    with pytest.raises(ValueError):
        ms.stable_rank(torch.zeros(3, 3))
    with pytest.raises(ValueError):
        ms.stable_rank(torch.ones(3))
    with pytest.raises(ValueError):
        ms.normalized_correlation(torch.ones(5, 2), torch.ones(4, 2))
    with pytest.raises(ValueError):
        ms.max_over_sequence(torch.ones(3, 4))
    with pytest.raises(ValueError):
        with ms.record({"x": 3}):
            pass
