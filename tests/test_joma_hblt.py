"""Unit tests of theory/joma.py (sympy closed forms) and sim/joma.py (HBLT sampler and
exact enumeration)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
import torch
from scipy import stats

from sim import joma as simh
from sim import make_generator
from theory import joma as th


# --------------------------------------------------------------------------------------------
# theory: symbolic identities
# --------------------------------------------------------------------------------------------
def test_lemma7_symbolic_residuals_are_zero():
    res = th.lemma7_residuals()
    assert set(res) == {"symmetric", "stochastic", "product", "vector"}
    for name, r in res.items():
        assert r == sp.zeros(*r.shape), name


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_lemma8_symbolic_chain(k):
    for name, r in th.lemma8_residuals(k).items():
        assert r == sp.zeros(2, 2), (k, name)


def test_lemma7_control_law_is_not_an_identity():
    # the negative control used by the property really is wrong symbolically
    r = sp.simplify(th.M(th.rho1) * th.M(th.rho2) - th.M(th.rho1 + th.rho2 - 1))
    assert r != sp.zeros(2, 2)


@pytest.mark.parametrize("h,depth", [(1, 2), (1, 3), (2, 3), (2, 5), (3, 4)])
def test_theorem5_proof_algebra_matches_eqn108(h, depth):
    d = sp.simplify(th.theorem5_via_proof(h, depth) - th.theorem5_expr(th.rho, th.rho0, h, depth))
    assert d == 0


def test_eq9_series_coefficients():
    s = th.eq9_series()
    c0, c1, c2 = (sp.simplify(s.coeff(th.eps, k)) for k in range(3))
    assert sp.simplify(c0 - (1 - th.H / th.L)) == 0
    assert sp.simplify(c1 - th.H * (2 * th.H - th.L) / (2 * th.L)) == 0
    assert sp.simplify(c2 + th.H * (2 * th.H - th.L) * (4 * th.H - th.L - 3) / (12 * th.L)) == 0
    for h, depth in [(1, 3), (2, 5), (3, 7), (2, 4)]:
        assert float(th.eq9_first_order_coefficient(h, depth)) == pytest.approx(
            float(c1.subs({th.H: h, th.L: depth})))
        assert float(th.eq9_second_order_coefficient(h, depth)) == pytest.approx(
            float(c2.subs({th.H: h, th.L: depth})), abs=1e-15)
    assert th.eq9_series(2, 4) == sp.Rational(1, 2)  # L = 2H: exactly 1/2


def test_eq9_remainder_order_cases():
    assert th.eq9_remainder_order(2, 4) is None
    assert th.eq9_remainder_order(2, 5) == 3  # L = 4H - 3
    assert th.eq9_remainder_order(1, 3) == 2
    e = 1e-4
    r = th.eq9_remainder_mp([e], 1, 3, 0)[0]
    assert r == pytest.approx(abs(float(th.eq9_first_order_coefficient(1, 3))) * e, rel=1e-3)


def test_theorem5_numeric_versions():
    q, p0 = np.array([0.2, 0.6]), np.array([0.3, 0.7])
    x = q @ p0
    assert th.rho0_printed(q, p0) == pytest.approx(x)
    assert th.rho0_corrected(q, p0) == pytest.approx(2 * x - 1)
    assert th.theorem5_corrected(0.7, q, p0, 2, 4) == pytest.approx(
        th.theorem5_numeric(0.7, 2 * x - 1, 2, 4))
    assert th.theorem5_alt_levels(0.7, q, p0, 2, 4) == pytest.approx(
        th.theorem5_numeric(0.7, 2 * x - 1, 2, 5))
    assert th.theorem5_alt_top_depth(0.7, q, p0, 1, 4) == pytest.approx(
        th.theorem5_numeric(0.7, 2 * x - 1, 3, 4))
    # rho = 0: tokens independent, P = 1/2 in both readings
    assert th.theorem5_printed(0.0, q, p0, 1, 3) == pytest.approx(0.5)


def test_theory_bad_input():
    with pytest.raises(ValueError, match="k"):
        th.lemma8_residuals(0)
    with pytest.raises(ValueError, match="H"):
        th.theorem5_via_proof(3, 3)
    with pytest.raises(ValueError, match="H"):
        th.theorem5_corrected(0.5, [0.5], [1.0], 0, 3)
    with pytest.raises(ValueError, match="p0"):
        th.rho0_printed([0.5, 0.5], [0.5, 0.6])
    with pytest.raises(ValueError, match="q"):
        th.rho0_corrected([1.5, 0.5], [0.5, 0.5])


# --------------------------------------------------------------------------------------------
# sim: structure
# --------------------------------------------------------------------------------------------
def test_tree_structure_and_cla():
    tree = simh.make_hblt([1.0], [0.3], 0.5, 2, 3, 2)
    assert tree.num_nodes == 2 * (1 + 2 + 4) and tree.n_leaves == 8 and tree.D == 1
    assert tree.parent[:2].tolist() == [-1, -1]
    assert tree.parent[2:6].tolist() == [0, 0, 1, 1]
    assert tree.depth.tolist() == [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3]
    lv = tree.leaves.tolist()
    assert lv == list(range(6, 14))
    assert tree.cla(lv[0], lv[1]) == 2 and tree.cla(lv[0], lv[2]) == 0 and tree.cla(lv[0], lv[4]) == -1
    Hm = tree.cla_height_matrix()
    assert Hm.shape == (8, 8) and Hm.dtype == torch.int64
    assert Hm[0, 1] == 1 and Hm[0, 2] == 2 and Hm[0, 4] == 3 and Hm[0, 0] == 0
    assert torch.equal(Hm, Hm.T)
    assert tree.root_child_of(lv[5]) == 1
    assert tree.ancestors(lv[0]) == [6, 2, 0]
    assert torch.isnan(tree.rho[:2]).all() and (tree.rho[2:] == 0.5).all()
    with pytest.raises(ValueError, match="leaf"):
        tree.cla_height(0, lv[0])


# --------------------------------------------------------------------------------------------
# sim: exact enumeration
# --------------------------------------------------------------------------------------------
def _tree_small(per_edge=True):
    N = 2 * (1 + 2)  # B=2, N_ch=2, L=2
    rho = torch.tensor([0.0, 0.0, 0.8, -0.5, 0.3, 1.0], dtype=torch.float64) if per_edge else 0.7
    assert N == 6
    return simh.make_hblt([0.2, 0.5, 0.3], [[0.1, 0.6, 0.9], [0.5, 0.2, 0.7]], rho, 2, 2, 2)


def test_enumeration_normalised_and_class_marginals():
    tree = _tree_small()
    probs, configs = simh.hblt_exact_joint(tree)
    assert probs.shape == (3, 2 ** 6) and configs.shape == (2 ** 6, 6)
    assert probs.dtype == torch.float64 and configs.dtype == torch.bool
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-14)
    assert torch.allclose(probs.sum(1), tree.p0, atol=1e-14)
    assert bool((probs >= 0).all())
    # root child marginal P(y_b = 0) = q0[b] . p0
    w = probs.sum(0)
    for b in range(2):
        assert float(w[~configs[:, b]].sum()) == pytest.approx(float(tree.q0[b] @ tree.p0))


def test_enumeration_conditional_tables_special_rho():
    # chain root -> a -> b -> c with rho = 1, -1: identity then swap; rho = 0 gives uniform
    tree = simh.make_hblt([0.4, 0.6], [0.3, 0.8], [0.0, 1.0, -1.0], 1, 3, 1)
    T = simh.hblt_exact_conditional_table(tree, 1, 0)
    assert torch.allclose(T, torch.eye(2, dtype=torch.float64))
    T = simh.hblt_exact_conditional_table(tree, 2, 0)
    assert torch.allclose(T, torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64))
    tree0 = simh.make_hblt([1.0], [0.3], [0.0, 0.0], 1, 2, 1)
    assert torch.allclose(simh.hblt_exact_conditional_table(tree0, 1, 0),
                          torch.full((2, 2), 0.5, dtype=torch.float64))
    assert torch.allclose(simh.hblt_exact_conditional_table(tree, 2, 0).sum(0),
                          torch.ones(2, dtype=torch.float64))


def test_enumeration_matches_corrected_theorem5():
    tree = simh.make_hblt([0.3, 0.7], [0.2, 0.6], 0.7, 2, 4, 1)
    C, marg = simh.hblt_exact_leaf_cooccurrence(tree)
    Hm = tree.cla_height_matrix()
    q, p0 = tree.q0[0].numpy(), tree.p0.numpy()
    for h in range(1, 4):
        i, j = [tuple(x) for x in torch.nonzero(Hm == h).tolist()][0]
        assert float(C[i, j]) == pytest.approx(float(th.theorem5_corrected(0.7, q, p0, h, 4)),
                                               abs=1e-12)
        assert abs(float(C[i, j]) - float(th.theorem5_printed(0.7, q, p0, h, 4))) > 1e-3
    assert torch.allclose(torch.diagonal(C), torch.ones(8, dtype=torch.float64))
    assert torch.allclose(marg, torch.full((8,), (1 - 0.7 ** 3 * (2 * 0.3 * 0.2 + 2 * 0.7 * 0.6 - 1))
                                           / 2, dtype=torch.float64))


# --------------------------------------------------------------------------------------------
# sim: Monte Carlo vs exact
# --------------------------------------------------------------------------------------------
def test_sampler_shapes_and_determinism(device):
    tree = simh.make_hblt([0.5, 0.5], [0.3, 0.7], 0.6, 3, 2, 2, device=device)
    state = torch.random.get_rng_state()
    s1 = simh.hblt_sample(tree, 50, make_generator(7, device))
    s2 = simh.hblt_sample(tree, 50, make_generator(7, device))
    assert torch.equal(torch.random.get_rng_state(), state)  # global RNG untouched
    assert s1.labels.shape == (50,) and s1.labels.dtype == torch.int64
    assert s1.nodes.shape == (50, tree.num_nodes) and s1.nodes.dtype == torch.bool
    assert s1.leaves.shape == (50, tree.n_leaves)
    assert torch.equal(s1.nodes, s2.nodes) and torch.equal(s1.labels, s2.labels)
    assert torch.equal(s1.leaves, s1.nodes[:, tree.leaves])


def test_sampler_matches_exact_enumeration():
    """Class frequencies, node marginals and all leaf co-occurrences within binomial bounds
    (Bonferroni over all comparisons, false-fail 1e-6)."""
    tree = simh.make_hblt([0.2, 0.5, 0.3], [[0.1, 0.6, 0.9], [0.5, 0.2, 0.7]],
                          torch.tensor([0, 0, .8, -.5, .3, .95, .6, -.9, .7, .4, .2, .5, 1., .85]),
                          2, 3, 2)
    n = 60_000
    s = simh.hblt_sample(tree, n, make_generator(12345))
    joint = simh.hblt_exact_joint(tree)
    probs, configs = joint
    w = probs.sum(0)
    C, marg = simh.hblt_exact_leaf_cooccurrence(tree, joint)
    F, count = simh.empirical_leaf_cooccurrence(s)
    z = []
    # class labels and node marginals
    pk = tree.p0
    z.append((torch.bincount(s.labels, minlength=3) / n - pk) / torch.sqrt(pk * (1 - pk) / n))
    pn = (w.unsqueeze(1) * configs.to(torch.float64)).sum(0)
    z.append((s.nodes.to(torch.float64).mean(0) - pn) / torch.sqrt(pn * (1 - pn) / n))
    # co-occurrences P[y_l=1 | y_m=1] (off-diagonal)
    off = ~torch.eye(tree.n_leaves, dtype=torch.bool)
    se = torch.sqrt(C * (1 - C) / count.unsqueeze(0))
    z.append(((F - C) / se)[off])
    z = torch.cat(z)
    zcrit = stats.norm.isf(1e-6 / (2 * z.numel()))
    assert float(z.abs().max()) < zcrit
    # power: the sampler is not trivially matching a wrong law (independence)
    zind = ((F - marg.unsqueeze(1)) / se)[off]
    assert float(zind.abs().max()) > zcrit


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(rho=1.5), "rho"),
    (dict(rho=float("nan")), "rho"),
    (dict(rho=[0.5, 0.5]), "rho"),
    (dict(p0=[]), "p0"),
    (dict(p0=[0.5, 0.4]), "p0"),
    (dict(p0=[1.2, -0.2]), "p0"),
    (dict(q0=[1.3, 0.2]), "q0"),
    (dict(q0=[0.3]), "q0"),
    (dict(n_children=0), "n_children"),
    (dict(depth=0), "depth"),
    (dict(n_root_children=0), "n_root_children"),
    (dict(depth=2.5), "depth"),
])
def test_make_hblt_bad_input(kw, match):
    args = dict(p0=[0.5, 0.5], q0=[0.3, 0.7], rho=0.5, n_children=2, depth=2, n_root_children=1)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        simh.make_hblt(**args)


def test_sampler_and_enumeration_bad_input():
    tree = simh.make_hblt([1.0], [0.5], 0.5, 2, 2)
    with pytest.raises(ValueError, match="n"):
        simh.hblt_sample(tree, 0, make_generator(0))
    with pytest.raises(ValueError, match="generator"):
        simh.hblt_sample(tree, 5, 0)
    big = simh.make_hblt([1.0], [0.5], 0.5, 2, 5)
    with pytest.raises(ValueError, match="max_nodes"):
        simh.hblt_exact_joint(big)
    with pytest.raises(ValueError, match="node"):
        simh.hblt_exact_pair_table(tree, 0, 99)
