"""Sections 4-7 with trained transformers: Table 1 generator, training-dynamics and hierarchy
claims.

JoMA (Tian et al., ICLR 2024), Section 6 "Validation of Alignment between latents and hidden
nodes" and Table 1: the hierarchical latent generator, producing token sequences together with
the latent values that generated them (known to the audit, never to the model).

Reading of Section 6 (stated in the claims' `reading`):

* "number of latents per layer (N_s)" and "number of children per latent (N_ch)" with
  (N_0, N_1) = (10, 20) or (20, 30): a layer above has MORE latents than the layer below, which a
  tree with N_ch children per latent cannot have (a tree needs N_{s} = N_ch N_{s+1}).  The literal
  reading consistent with the printed numbers is therefore a layered *DAG* (`structure="dag"`,
  the default): every latent of layer s (and every class at the top) picks a distinct random
  combination of N_ch children in the layer below (latents at s = 0 pick tokens among the M - 1
  non-padding tokens); a latent is on when ANY of its parents is on, passed through the HBLT
  channel M(rho) of Appendix A.5 (Definition 2):  child = OR(parents) XOR flip,
  P(flip) = (1 - rho)/2.  With one parent per child this is exactly HBLT(rho); rho = 1 (the
  default) makes the sequence a deterministic function of the class (the authors' released
  generator, luckmatters/ssl/real-dataset/decoder_only_hier.py, works this way).
* `structure="tree"`: the alternative reading "sampled by HBLT" literally: a tree from
  `sim.joma.make_hblt` sampled by `sim.joma.hblt_sample` (reused, not re-implemented), with
  `n_top` latents under the class root, class k switching on its own random N_ch-combination of
  them (q0 in {0, 1}), N_s = n_top N_ch^(top - s) latents in layer s.
* Sequences: the set of tokens that are on, written at the END of a length-T sequence that is
  pre-padded with the padding token M - 1 (the authors' layout; the model predicts the class from
  the last position).  `order="sorted"` (ascending token ids, as the authors' Python set of small
  ints iterates) or `order="random"` (a random permutation per sample).  More than T tokens on
  (possible only when rho < 1) keeps a uniformly random subset of T of them (`truncated` counts).

Layers are numbered as in Table 1: s = 0 is the latent layer directly above the tokens, s = 1 the
one above it, ...; the classes form the top.  Everything uses a local torch.Generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sim.joma._checks import _check_int
from sim.joma.hblt import HBLTTree, hblt_sample, make_hblt
from theory import validate as chk

STRUCTURES = ("dag", "tree")
ORDERS = ("sorted", "random")


@dataclass(frozen=True)
class HierarchyGenerator:
    """A fixed instance of the generator.

    children -- children[s] is a (n_parents, N_ch) int64 tensor: the children (indices into the
                layer below) of each latent of layer s + 1, for s = 0..len-1, with children[0]'s
                entries token ids in [0, M - 1) (the latents of s = 0 pick tokens) and the last
                entry the classes' children (indices into the top latent layer).  So
                children[s] for s < top has N_s rows, children[top] has C rows.
    n_latents -- (N_0, N_1, ...) latents per layer, bottom to top.
    tree     -- the HBLTTree for structure "tree" (None for "dag").
    """

    structure: str
    C: int
    N_ch: int
    n_latents: tuple
    M: int
    T: int
    rho: float
    order: str
    children: tuple
    tree: HBLTTree | None = None

    @property
    def pad(self) -> int:
        return self.M - 1

    @property
    def n_layers(self) -> int:
        """Latent layers (s = 0..n_layers-1), not counting the class layer."""
        return len(self.n_latents)


@dataclass(frozen=True)
class HierarchySample:
    """n samples.  tokens (n, T) int64 (pad = M - 1 first, then the tokens that are on);
    mask (n, T) bool (True at real tokens); labels (n,) classes; latents[s] (n, N_s) bool latent
    values of layer s; token_on (n, M - 1) bool; truncated (n,) int64 tokens dropped (> T on)."""

    tokens: torch.Tensor
    mask: torch.Tensor
    labels: torch.Tensor
    latents: tuple
    token_on: torch.Tensor
    truncated: torch.Tensor


def _combinations(n_rows: int, pool: int, k: int, gen: torch.Generator) -> torch.Tensor:
    """n_rows distinct random k-subsets of range(pool) (sorted rows), by rejection."""
    if math.comb(pool, k) < n_rows:
        raise ValueError(f"cannot draw {n_rows} distinct {k}-combinations out of {pool}: N_ch = "
                         f"{k} children per latent is too many for a layer of {pool} (C(pool, "
                         f"N_ch) >= {n_rows} needed)")
    seen, rows = set(), []
    while len(rows) < n_rows:
        c = tuple(sorted(torch.randperm(pool, generator=gen)[:k].tolist()))
        if c not in seen:
            seen.add(c)
            rows.append(c)
    return torch.tensor(rows, dtype=torch.int64)


def make_table1_generator(C: int, N_ch: int, n_latents=(10, 20), *, M: int = 100, T: int = 30,
                          rho: float = 1.0, structure: str = "dag", order: str = "sorted",
                          n_top: int | None = None, generator: torch.Generator) -> HierarchyGenerator:
    """The generator of Table 1 (3-layer generative model: classes -> N_1 -> N_0 -> tokens).

    C          -- classes (>= 2); Table 1 uses 20, 30, 50
    N_ch       -- children per latent (>= 1); Table 1 uses 2, 3
    n_latents  -- (N_0, N_1, ...) latents per layer bottom to top ("dag" only); Table 1 uses
                  (10, 20) and (20, 30)
    M, T       -- vocabulary (token M - 1 is padding) and sequence length; Table 1: 100, 30
    rho        -- HBLT uncertainty in [-1, 1] of every edge below the classes (1: deterministic)
    structure  -- "dag" (literal reading of N_s) or "tree" (HBLT tree, n_top latents on top,
                  depth len(n_latents) + 1; n_latents is then derived)
    order      -- "sorted" or "random" order of the tokens in the sequence
    """
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, got {structure!r}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if not isinstance(generator, torch.Generator):
        raise ValueError("generator must be a torch.Generator (see sim.make_generator)")
    _check_int(C, "C (classes)", 2)
    _check_int(N_ch, "N_ch (children per latent)", 1)
    _check_int(M, "M (vocabulary incl. padding)", 3)
    _check_int(T, "T (sequence length)", 1)
    chk.elements("make_table1_generator", M=M, M_=M)  # sibling_height is (M, M)
    chk.elements("make_table1_generator", T=T)
    if not (isinstance(rho, (int, float)) and not isinstance(rho, bool) and -1 <= rho <= 1):
        raise ValueError(f"rho must be a number in [-1, 1], got {rho!r}")
    if isinstance(n_latents, (str, bytes)) or not hasattr(n_latents, "__iter__"):
        raise ValueError(f"n_latents must be a tuple of ints >= 1, got {n_latents!r}")
    n_latents = tuple(n_latents)
    if not n_latents:
        raise ValueError("n_latents must name at least one latent layer")
    if len(n_latents) > 64:
        raise ValueError(f"n_latents must have at most 64 layers, got {len(n_latents)}")
    for i, n in enumerate(n_latents):
        _check_int(n, f"n_latents[{i}] (N_{i})", 1)
        chk.elements("make_table1_generator", n_latents_i=n, pool=max(M - 1, max(n_latents)))
    chk.elements("make_table1_generator", C=C, pool=max(n_latents))
    depth = len(n_latents)
    if structure == "tree":
        if n_top is None:
            n_top = n_latents[-1]
        _check_int(n_top, "n_top (top latents of the tree)", N_ch)
        if n_top * N_ch ** depth > M - 1:
            raise ValueError(f"the tree has n_top N_ch^{depth} = {n_top * N_ch ** depth} leaves, "
                             f"more than the M - 1 = {M - 1} tokens")
        n_latents = tuple(n_top * N_ch ** (depth - 1 - s) for s in range(depth))
        n_leaves = n_latents[0] * N_ch
        if n_leaves > M - 1:
            raise ValueError(f"the tree has {n_leaves} leaves, more than the M - 1 = {M - 1} tokens")
        top = _combinations(C, n_top, N_ch, generator)  # class k -> its top latents
        q0 = torch.ones(n_top, C, dtype=torch.float64)
        for k in range(C):
            q0[top[k], k] = 0.0  # P(y_b = 0 | y_0 = k) = 0 on the class's own latents
        tree = make_hblt(torch.full((C,), 1.0 / C, dtype=torch.float64), q0, float(rho),
                         n_children=N_ch, depth=depth + 1, n_root_children=n_top)
        children = []
        for s in range(depth):  # latents of layer s are tree depth (depth - s); their children
            d_par = depth - s
            par = tree.level(d_par)
            kids = tree.level(d_par + 1)
            first = int(kids[0])
            ch = torch.stack([torch.nonzero(tree.parent == int(p)).flatten() - first for p in par])
            children.append(ch)  # leaf index j <-> token j
        children.append(top)
        return HierarchyGenerator(structure, C, N_ch, n_latents, M, T, float(rho), order,
                                  tuple(children), tree)
    pools = (M - 1,) + n_latents
    rows = n_latents + (C,)
    children = tuple(_combinations(rows[s], pools[s], N_ch, generator) for s in range(depth + 1))
    if rho == 1.0 and N_ch ** (depth + 1) > T:
        raise ValueError(f"up to N_ch^{depth + 1} = {N_ch ** (depth + 1)} tokens can be on, more "
                         f"than the sequence length T = {T}")
    return HierarchyGenerator(structure, C, N_ch, n_latents, M, T, float(rho), order, children)


def generator_from_children(children, *, C: int, M: int, T: int, rho: float = 1.0,
                            order: str = "sorted") -> HierarchyGenerator:
    """A "dag" generator with explicit children (bottom to top, as HierarchyGenerator.children),
    e.g. a tree, to compare the sampler against HBLT's exact marginals."""
    _check_int(C, "C (classes)", 2)
    _check_int(M, "M (vocabulary incl. padding)", 3)
    _check_int(T, "T (sequence length)", 1)
    chk.elements("generator_from_children", M=M, M_=M)
    chk.number("rho", rho, lo=-1, hi=1)
    if isinstance(children, (str, bytes, torch.Tensor)) or not hasattr(children, "__iter__"):
        raise ValueError(f"children must be a list of (parents, N_ch) index tensors, got "
                         f"{type(children).__name__}")
    children = list(children)
    if len(children) > 64:
        raise ValueError(f"children must have at most 64 layers, got {len(children)}")
    for s_, c_ in enumerate(children):
        a_ = chk.finite_array(f"children[{s_}]", c_, ndim=2, dtype_kind="iu")
        chk.elements("generator_from_children", children_rows=a_.shape[0],
                     pool=max(M - 1, a_.shape[0]))
    children = tuple(torch.as_tensor(c, dtype=torch.int64) for c in children)
    if len(children) < 2 or any(c.ndim != 2 for c in children):
        raise ValueError("children must be >= 2 two-dimensional (parents, N_ch) index tensors")
    N_ch = children[0].shape[1]
    if any(c.shape[1] != N_ch for c in children) or children[-1].shape[0] != C:
        raise ValueError("every layer needs N_ch columns and the last one C rows")
    n_latents = tuple(int(c.shape[0]) for c in children[:-1])
    pools = (M - 1,) + n_latents
    for s, c in enumerate(children):
        if int(c.min()) < 0 or int(c.max()) >= pools[s]:
            raise ValueError(f"children[{s}] entries must lie in [0, {pools[s] - 1}]")
    if not (-1 <= rho <= 1):
        raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    return HierarchyGenerator("dag", C, N_ch, n_latents, M, T, float(rho), order, children)


def _channel(on: torch.Tensor, rho: float, gen: torch.Generator) -> torch.Tensor:
    if rho == 1.0:
        return on
    flip = torch.rand(on.shape, generator=gen, dtype=torch.float64) < (1 - rho) / 2
    return on ^ flip


def _check_generator_obj(where, g):
    if not isinstance(g, HierarchyGenerator):
        raise ValueError(f"{where}: g must be a HierarchyGenerator (make_table1_generator), got "
                         f"{type(g).__name__}")


def sample_hierarchy(g: HierarchyGenerator, n: int, generator: torch.Generator) -> HierarchySample:
    """n independent samples: class uniform over C, latents top-down, tokens, sequences."""
    _check_generator_obj("sample_hierarchy", g)
    _check_int(n, "n (number of samples)", 1)
    chk.elements("sample_hierarchy", n=n, width=max((g.M,) + tuple(g.n_latents)))
    if not isinstance(generator, torch.Generator):
        raise ValueError("generator must be a torch.Generator (see sim.make_generator)")
    depth = g.n_layers
    if g.structure == "tree":
        smp = hblt_sample(g.tree, n, generator)
        labels = smp.labels
        latents = tuple(smp.nodes[:, g.tree.level(depth - s)] for s in range(depth))
        token_on = torch.zeros(n, g.M - 1, dtype=torch.bool)
        token_on[:, :smp.leaves.shape[1]] = smp.leaves
    else:
        labels = torch.randint(0, g.C, (n,), generator=generator)
        on = torch.nn.functional.one_hot(labels, g.C).bool()  # the class layer, exactly one on
        layers = []
        pools = (g.M - 1,) + g.n_latents
        for s in reversed(range(depth + 1)):  # children of layer s+1 live in pool s
            par_on = on.to(torch.float64)  # (n, rows)
            A = torch.zeros(g.children[s].shape[0], pools[s], dtype=torch.float64)
            A.scatter_(1, g.children[s], 1.0)
            child = (par_on @ A) > 0  # OR over parents
            # classes -> top latents: a class switches its latents on deterministically (q0 in
            # {0, 1}, as in the tree reading); the M(rho) channel acts on every lower edge
            on = child if s == depth else _channel(child, g.rho, generator)
            if s > 0:
                layers.append(on)
        token_on = on
        latents = tuple(reversed(layers))  # latents[s] = layer s
    tokens, mask, truncated = _sequences(token_on, g, generator)
    return HierarchySample(tokens, mask, labels, latents, token_on, truncated)


def _sequences(token_on: torch.Tensor, g: HierarchyGenerator, gen: torch.Generator):
    n, V = token_on.shape
    key = torch.arange(V, dtype=torch.float64).expand(n, V)
    if g.order == "random":
        key = torch.rand(n, V, generator=gen, dtype=torch.float64)
    count = token_on.sum(1)
    truncated = (count - g.T).clamp_min(0)
    if int(truncated.max()) > 0:  # keep a uniformly random subset of T tokens
        r = torch.rand(n, V, generator=gen, dtype=torch.float64)
        r = torch.where(token_on, r, torch.full_like(r, 2.0))
        keep_rank = r.argsort(1).argsort(1)
        token_on = token_on & (keep_rank < g.T)
        count = token_on.sum(1)
    # sort: off tokens first (key -1), on tokens by key; take the last T
    k = torch.where(token_on, key, torch.full_like(key, -1.0))
    idx = torch.argsort(k, dim=1, stable=True)[:, -g.T:] if V >= g.T else torch.argsort(k, dim=1, stable=True)
    tok = idx.clone()
    on_sorted = torch.gather(token_on, 1, idx)
    if V < g.T:
        padn = g.T - V
        tok = torch.cat([torch.full((n, padn), g.pad, dtype=torch.int64), tok], 1)
        on_sorted = torch.cat([torch.zeros(n, padn, dtype=torch.bool), on_sorted], 1)
    tok = torch.where(on_sorted, tok, torch.full_like(tok, g.pad))
    return tok, on_sorted, truncated


def sibling_height(g: HierarchyGenerator) -> torch.Tensor:
    """(M, M) int64: for tokens a != b, the lowest latent layer s at which some latent is a
    common ancestor of both, as a height H = s + 1 (1 = siblings under one s = 0 latent), and
    H = n_layers + 1 when only a class is common, H = n_layers + 2 when nothing is (padding,
    unused tokens, the diagonal).  For the tree this is sim.joma's cla_height."""
    _check_generator_obj("sibling_height", g)
    V = g.M - 1
    # desc[s]: (N_s, V) bool, which tokens descend from latent s
    A0 = torch.zeros(g.children[0].shape[0], V, dtype=torch.bool)
    A0.scatter_(1, g.children[0], True)
    desc = [A0]
    for s in range(1, g.n_layers + 1):
        A = torch.zeros(g.children[s].shape[0], desc[-1].shape[0], dtype=torch.bool)
        A.scatter_(1, g.children[s], True)
        desc.append((A.to(torch.float64) @ desc[-1].to(torch.float64)) > 0)
    H = torch.full((g.M, g.M), g.n_layers + 2, dtype=torch.int64)
    for s in reversed(range(g.n_layers + 1)):  # lower layers overwrite: the lowest common wins
        D = desc[s].to(torch.float64)
        common = (D.T @ D) > 0
        H[:V, :V] = torch.where(common, torch.full((V, V), s + 1, dtype=torch.int64), H[:V, :V])
    H.fill_diagonal_(g.n_layers + 2)
    return H
