"""joma.lemma8: Lemma 8 (Eqns 90-91), the conditional table of a descendant given a latent ancestor
is M(product of the per-edge rhos on the chain).

Brute-force enumeration of the joint of a drawn HBLT (enumerate_tables: sim.joma.hblt_exact_joint,
hblt_exact_conditional_table, float64 sums of 2^N terms) at every (ancestor, descendant) pair: the
paper's claim against the generative model itself.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, null, register, rival
from properties.joma.common import M_np, class_prior, signed_rho
from sim import joma as sj

_LEMMA8_SHAPES = [(1, 2), (1, 3), (1, 4), (1, 5), (2, 2), (2, 3), (2, 4), (3, 2)]  # (N_ch, L)


def _n_nodes(B, Nch, depth):
    return B * sum(Nch ** d for d in range(depth))


def chain_product(edge_r):
    return float(np.prod(edge_r))


def enumerate_tables(p0, q0, rhos, Nch, depth, tree_rho=None):
    """Exact P_{gamma|alpha} for every (descendant gamma, binary ancestor alpha), with the list
    of per-edge rhos on each chain (from gamma's edge up to the edge into alpha)."""
    tree = sj.make_hblt(p0, q0, rhos if tree_rho is None else [tree_rho] * len(rhos), Nch, depth)
    joint = sj.hblt_exact_joint(tree)
    out = []
    for g in range(1, tree.num_nodes):
        chain = tree.ancestors(g)  # [g, parent, ..., depth-1 node]
        for k in range(1, len(chain)):  # ancestor alpha = chain[k], edges: chain[0..k-1]
            T = sj.hblt_exact_conditional_table(tree, g, chain[k], joint).numpy()
            out.append((T, [float(rhos[x]) for x in chain[:k]]))
    return out, tree.num_nodes


def enumerate_tables_edges_cut(p0, q0, rhos, Nch, depth):
    """Null: the same tree with rho = 0 on every edge (no inheritance along the chain)."""
    return enumerate_tables(p0, q0, rhos, Nch, depth, tree_rho=0.0)


register(Claim(
    id="joma.lemma8",
    where="Appendix A.5, Lemma 8 (Eqns 90-91)",
    statement="For latent y_alpha and its descendant y_gamma: P_{gamma|alpha} = P_{gamma|beta_1} "
              "P_{beta_1|beta_2} ... P_{beta_k|alpha} = M(rho_{gamma|alpha}), rho_{gamma|alpha} := "
              "rho_{gamma|beta_1} rho_{beta_1|beta_2} ... rho_{beta_k|alpha}.",
    assumptions="HBLT with per-edge rho (Definition 2); alpha a binary latent (depth >= 1).",
    prediction="theory.joma.M (of the product of the drawn per-edge rhos)",
    simulation="sim.joma.hblt_exact_conditional_table (brute-force enumeration of the joint)",
    metric="max_abs over the 2x2 tables of every (ancestor, descendant) pair of the drawn tree",
    tolerance="float64 round-off of a 2^N-term sum (4 x 2^N ops x eps). Symbolic proof for "
              "chains of 1..4 edges (matrix product and explicit sum of Eqn 91) in tests/.",
    reading="Per-edge |rho| drawn in [0.1, 0.99] with random sign so that the rivals always "
            "differ; rho in {0, +-1} is covered by unit tests. The paper gives no numbers: the "
            "explicit example is a binary tree of depth 3 with rho = 0.8 on every edge.",
    paper_setting="No setting of its own: Lemma 8 (App. A.5) holds for every HBLT and descendant "
                  "chain, and the paper gives no tree; the draws cover 8 shapes with N_ch in 1..3 "
                  "and L in 2..5, per-edge |rho| in [0.1, 0.99] of either sign.",
    alternatives=(
        rival("chain_missing_top_edge", lambda r: float(np.prod(r[:-1])),
              "off by one: the chain's product without the edge into alpha",
              replaces="chain_rho"),
        rival("chain_missing_bottom_edge", lambda r: float(np.prod(r[1:])),
              "off by one: the chain's product without gamma's own edge", replaces="chain_rho"),
        null("edges_cut", enumerate_tables_edges_cut,
             "mechanism off: rho = 0 on every edge (nothing inherited along the chain)",
             replaces="enumeration"),
    ),
))


@st.composite
def lemma8_case(draw):
    Nch, depth = draw(st.sampled_from(_LEMMA8_SHAPES), label="(N_ch, L)")
    p0 = draw(class_prior(), label="p0")
    N = _n_nodes(1, Nch, depth)
    rhos = draw(st.lists(signed_rho(), min_size=N, max_size=N), label="rho per edge")
    q0 = draw(st.lists(st.floats(0.05, 0.95), min_size=p0.size, max_size=p0.size), label="q0")
    return Nch, depth, p0, rhos, q0


PAPER_LEMMA8 = (2, 3, np.array([0.3, 0.7]), [0.8] * 7, [0.2, 0.6])


@audits("joma.lemma8", form="printed")
@examples(25)
@example(case=PAPER_LEMMA8)
@given(case=lemma8_case())
def test_lemma8_printed(world, case):
    Nch, depth, p0, rhos, q0 = case
    tables, n_nodes = world.simulation(enumerate_tables, "enumeration", pure=True)(
        p0, q0, rhos, Nch, depth)
    law = world.prediction(chain_product, "chain_rho")
    obs = np.concatenate([T.ravel() for T, _ in tables])
    pred = np.concatenate([M_np(law(edge_r)).ravel() for _, edge_r in tables])
    check_close("joma.lemma8", obs, pred, Tolerance.roundoff(1.0, 4.0 * 2 ** n_nodes))
