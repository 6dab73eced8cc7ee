"""Section 5 / Appendix A.5: HBLT(rho), Lemmas 7-8, Theorem 5, Eq. 9.

HBLT(rho): the hierarchical binary latent tree of JoMA (Tian et al., ICLR 2024), Section 5 and
Appendix A.5 (Definition 2), in torch float64 with a local torch.Generator.

Structure.  The root y_0 is a class label over D classes with prior p0.  It has B binary
children (depth 1) with P(y=0 | y_0=k) = q0[b, k].  Every binary latent above the leaves has N_ch
children, each a noisy copy of its parent through M(rho) (P[child=1|parent=1] =
P[child=0|parent=0] = (1+rho)/2), optionally with one rho per edge.  The nodes at depth L (L edges
below the root, layer s = 0 in the paper's numbering) are the tokens: y_leaf = 1 means the
token appears.  Binary nodes are numbered breadth first (depth 1 first), children of a node are
contiguous, so `parent` and `depth` describe the tree and `cla_height` gives, for a pair of
leaves, the number of edges H from their common latent ancestor down to them (H = L when the
only common ancestor is the root y_0).

Two independent ways to get co-occurrences:
  * hblt_exact_joint / hblt_exact_leaf_cooccurrence: brute-force sum over all 2^N binary
    configurations x D classes (small trees, N <= 18), no use of any closed form;
  * hblt_sample / empirical_leaf_cooccurrence: batched ancestral sampling (Monte Carlo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from sim.joma._checks import _check_int
from theory import validate as chk

_DT = torch.float64


@dataclass(frozen=True)
class HBLTTree:
    """An HBLT instance. Binary nodes 0..N-1 (breadth first); the root y_0 is not a node.

    p0     -- (D,) class prior P(y_0 = k)
    q0     -- (B, D) P(y_b = 0 | y_0 = k) for the B root children b = 0..B-1 (nodes 0..B-1)
    rho    -- (N,) uncertainty parameter of the edge parent -> node (NaN for depth-1 nodes)
    parent -- (N,) parent node index, -1 for depth-1 nodes (their parent is y_0)
    depth  -- (N,) edges from the root (1..L); the paper's layer index is s = L - depth
    """

    p0: torch.Tensor
    q0: torch.Tensor
    rho: torch.Tensor
    parent: torch.Tensor
    depth: torch.Tensor
    L: int
    B: int
    N_ch: int

    @property
    def D(self) -> int:
        return int(self.p0.numel())

    @property
    def num_nodes(self) -> int:
        return int(self.parent.numel())

    @property
    def device(self) -> torch.device:
        return self.p0.device

    @property
    def leaves(self) -> torch.Tensor:
        """Node indices of the tokens (depth L), in order: leaf index j <-> node leaves[j]."""
        return torch.nonzero(self.depth == self.L).flatten()

    @property
    def n_leaves(self) -> int:
        return int((self.depth == self.L).sum())

    def level(self, d: int) -> torch.Tensor:
        """Node indices at depth d (1..L)."""
        return torch.nonzero(self.depth == d).flatten()

    def ancestors(self, node: int) -> list[int]:
        """[node, parent, grandparent, ..., depth-1 ancestor]."""
        self._check_node(node)
        out, par = [int(node)], self.parent.tolist()
        while par[out[-1]] >= 0:
            out.append(par[out[-1]])
        return out

    def root_child_of(self, node: int) -> int:
        """The depth-1 ancestor (the paper's y_1) of `node`."""
        return self.ancestors(node)[-1]

    def cla(self, a: int, b: int) -> int:
        """Common latent ancestor of nodes a and b (a node index), or -1 if it is the root y_0."""
        anc_a = self.ancestors(a)
        set_b = set(self.ancestors(b))
        for x in anc_a:
            if x in set_b:
                return x
        return -1

    def cla_height(self, a: int, b: int) -> int:
        """H: edges from the CLA of leaves a, b down to them (L if the CLA is the root y_0)."""
        for x in (a, b):
            if int(self.depth[x]) != self.L:
                raise ValueError(f"node {x} is not a leaf (depth {int(self.depth[x])} != L={self.L})")
        c = self.cla(a, b)
        return self.L if c < 0 else self.L - int(self.depth[c])

    def cla_height_matrix(self) -> torch.Tensor:
        """(n_leaves, n_leaves) int64 matrix of H for every pair of leaves (0 on the diagonal)."""
        lv = self.leaves.tolist()
        Hm = torch.zeros(len(lv), len(lv), dtype=torch.int64)
        for i, a in enumerate(lv):
            for j in range(i + 1, len(lv)):
                Hm[i, j] = Hm[j, i] = self.cla_height(a, lv[j])
        return Hm

    def _check_node(self, node, name="node"):
        if isinstance(node, bool) or not (isinstance(node, int) and 0 <= node < self.num_nodes):
            raise ValueError(f"{name} must be a node, an int in [0, {self.num_nodes - 1}], got "
                             f"{node!r}")


@dataclass(frozen=True)
class HBLTSample:
    """n samples: labels (n,) int64 class of y_0; nodes (n, N) bool values of all binary nodes
    (column i = node i); leaves (n, n_leaves) bool token indicators (column j = tree.leaves[j])."""

    labels: torch.Tensor
    nodes: torch.Tensor
    leaves: torch.Tensor


def _as_tensor(x, name, device):
    try:
        return torch.as_tensor(x, dtype=_DT, device=device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{name} must be numeric, got {x!r}") from exc


def _check_prob(t, name):
    if not bool(torch.all(torch.isfinite(t))) or bool(torch.any(t < 0)) or bool(torch.any(t > 1)):
        raise ValueError(f"{name} entries must be probabilities in [0, 1]")


def make_hblt(p0, q0, rho, n_children: int, depth: int, n_root_children: int = 1,
              device: torch.device | str | None = None) -> HBLTTree:
    """Build an HBLT tree.

    p0              -- (D,) class prior, entries in [0, 1] summing to 1 (D >= 1)
    q0              -- P(y_b=0 | y_0=k): (D,) shared by all root children, or (B, D)
    rho             -- scalar in [-1, 1] (HBLT(rho)) or (N,) per edge parent -> node, entries of
                       depth-1 nodes ignored (those edges are given by q0)
    n_children      -- N_ch >= 1 children per binary latent above the leaves
    depth           -- L >= 1 edges from the root to the leaves
    n_root_children -- B >= 1 binary children of the root
    """
    chk.device("device", device)
    device = torch.device(device) if device is not None else torch.device("cpu")
    _check_int(n_children, "n_children (N_ch)", 1)
    _check_int(depth, "depth (L)", 1)
    _check_int(n_root_children, "n_root_children (B)", 1)
    n_nodes, width = 0, n_root_children
    for _ in range(depth):  # N = B (1 + N_ch + ... + N_ch^(L-1)), capped before any allocation
        n_nodes += width
        if n_nodes > chk.MAX_ELEMENTS:
            raise ValueError(f"make_hblt: n_root_children (B) = {n_root_children}, n_children "
                             f"(N_ch) = {n_children}, depth (L) = {depth} give more than "
                             f"{chk.MAX_ELEMENTS:.3g} nodes (MAX_ELEMENTS)")
        width *= n_children
    p0 = _as_tensor(p0, "p0", device)
    if p0.ndim != 1 or p0.numel() < 1:
        raise ValueError(f"p0 must be a 1-d class prior with D >= 1 entries, got shape "
                         f"{tuple(p0.shape)}")
    _check_prob(p0, "p0")
    if abs(float(p0.sum()) - 1.0) > 1e-9:
        raise ValueError(f"p0 must sum to 1 (within 1e-9), sums to {float(p0.sum())!r}")
    D, B, Nch, Ld = p0.numel(), n_root_children, n_children, depth
    q0 = _as_tensor(q0, "q0", device)
    if q0.ndim == 1:
        q0 = q0.unsqueeze(0).expand(B, -1).clone()
    if q0.shape != (B, D):
        raise ValueError(f"q0 must have shape (D,)=({D},) or (B, D)=({B}, {D}), got "
                         f"{tuple(q0.shape)}")
    _check_prob(q0, "q0")
    sizes = [B * Nch ** (d - 1) for d in range(1, Ld + 1)]
    N = sum(sizes)
    starts = [0]
    for s in sizes[:-1]:
        starts.append(starts[-1] + s)
    parent = torch.full((N,), -1, dtype=torch.int64)
    dep = torch.empty(N, dtype=torch.int64)
    for d in range(1, Ld + 1):
        a, n = starts[d - 1], sizes[d - 1]
        dep[a:a + n] = d
        if d > 1:
            parent[a:a + n] = starts[d - 2] + torch.arange(n) // Nch
    r = _as_tensor(rho, "rho", device)
    if r.ndim == 0:
        r = r.expand(N).clone()
    if r.shape != (N,):
        raise ValueError(f"rho must be a scalar or have shape (N,)=({N},), got {tuple(r.shape)}")
    r = r.clone()
    r[:B] = float("nan")
    used = r[B:]
    if not bool(torch.all(torch.isfinite(used))) or bool(torch.any(used.abs() > 1)):
        raise ValueError("rho must lie in [-1, 1]")
    return HBLTTree(p0=p0, q0=q0, rho=r, parent=parent.to(device), depth=dep.to(device), L=Ld,
                    B=B, N_ch=Nch)


# ------------------------------------------------------------------------------------------
# Exact enumeration
# ------------------------------------------------------------------------------------------
def _check_tree(where, tree):
    if not isinstance(tree, HBLTTree):
        raise ValueError(f"{where}: tree must be an HBLTTree (make_hblt), got "
                         f"{type(tree).__name__}")


def _check_joint(where, tree, joint):
    """joint None or (probs (D, 2^N), configs (2^N, N)) from hblt_exact_joint(tree)."""
    if joint is None:
        return
    N = tree.num_nodes
    ok = (isinstance(joint, (tuple, list)) and len(joint) == 2
          and all(isinstance(t, torch.Tensor) for t in joint)
          and tuple(joint[0].shape) == (tree.D, 2 ** N) and tuple(joint[1].shape) == (2 ** N, N))
    if not ok:
        raise ValueError(f"{where}: joint must be None or hblt_exact_joint(tree) = (probs "
                         f"({tree.D}, 2^{N}), configs (2^{N}, {N}))")


def hblt_exact_joint(tree: HBLTTree, max_nodes: int = 18):
    """Brute-force joint law: returns (probs, configs) with probs (D, 2^N) float64,
    probs[k, c] = P(y_0 = k, binary nodes = configs[c]) and configs (2^N, N) bool, node i of
    configuration c = bit i of c.  A plain product of the edge conditionals over all
    configurations (Definition 2); no closed form is used."""
    _check_tree("hblt_exact_joint", tree)
    _check_int(max_nodes, "max_nodes", 1, 24)  # D 2^24 float64: the enumeration stays in memory
    N = tree.num_nodes
    if N > max_nodes:
        raise ValueError(f"exact enumeration needs num_nodes <= max_nodes={max_nodes}, got {N}")
    dev = tree.device
    codes = torch.arange(2 ** N, device=dev)
    configs = ((codes.unsqueeze(1) >> torch.arange(N, device=dev)) & 1).bool()  # (C, N)
    probs = tree.p0.unsqueeze(1).expand(-1, 2 ** N).clone()  # (D, C)
    for b in range(tree.B):  # root children: P(y_b | y_0 = k)
        yb = configs[:, b]
        probs *= torch.where(yb.unsqueeze(0), 1 - tree.q0[b].unsqueeze(1), tree.q0[b].unsqueeze(1))
    if N > tree.B:
        child = torch.arange(tree.B, N, device=dev)
        same = configs[:, child] == configs[:, tree.parent[child]]  # (C, N-B)
        r = tree.rho[child]
        fac = torch.where(same, (1 + r) / 2, (1 - r) / 2).prod(dim=1)
        probs *= fac.unsqueeze(0)
    return probs, configs


def hblt_exact_pair_table(tree: HBLTTree, a: int, b: int, joint=None) -> torch.Tensor:
    """(2, 2) exact joint table T[i, j] = P(y_a = i, y_b = j)."""
    _check_tree("hblt_exact_pair_table", tree)
    _check_joint("hblt_exact_pair_table", tree, joint)
    tree._check_node(a, "a")
    tree._check_node(b, "b")
    probs, configs = hblt_exact_joint(tree) if joint is None else joint
    w = probs.sum(0)
    T = torch.empty(2, 2, dtype=_DT, device=tree.device)
    for i in range(2):
        for j in range(2):
            T[i, j] = w[(configs[:, a] == bool(i)) & (configs[:, b] == bool(j))].sum()
    return T


def hblt_exact_conditional_table(tree: HBLTTree, child: int, ancestor: int, joint=None):
    """P_{child|ancestor} in the layout of Eqn 88: T[i, j] = P(y_child = i | y_ancestor = j)
    (columns sum to 1), by exact enumeration."""
    _check_tree("hblt_exact_conditional_table", tree)
    for name, node in (("child", child), ("ancestor", ancestor)):
        if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < tree.num_nodes:
            raise ValueError(f"{name} must be a node, an int in [0, {tree.num_nodes - 1}], got "
                             f"{node!r}")
    T = hblt_exact_pair_table(tree, child, ancestor, joint)
    col = T.sum(0, keepdim=True)
    if bool(torch.any(col <= 0)):
        raise ValueError("the conditioning node has a value of probability 0")
    return T / col


def hblt_exact_leaf_cooccurrence(tree: HBLTTree, joint=None):
    """Exact (C, marg): C[l, m] = P[y_l = 1 | y_m = 1] for leaves l, m (leaf indices), and
    marg[m] = P[y_m = 1]; by brute-force summation over all configurations."""
    _check_tree("hblt_exact_leaf_cooccurrence", tree)
    _check_joint("hblt_exact_leaf_cooccurrence", tree, joint)
    probs, configs = hblt_exact_joint(tree) if joint is None else joint
    w = probs.sum(0)
    X = configs[:, tree.leaves].to(_DT)  # (C, n_leaves)
    P11 = X.T @ (w.unsqueeze(1) * X)
    marg = torch.diagonal(P11).clone()
    return P11 / marg.unsqueeze(0), marg


# ------------------------------------------------------------------------------------------
# Monte Carlo
# ------------------------------------------------------------------------------------------
def hblt_sample(tree: HBLTTree, n: int, generator: torch.Generator) -> HBLTSample:
    """n independent ancestral samples (class label, every binary latent, the tokens), batched
    level by level; randomness only from the local `generator` (on the tree's device)."""
    _check_tree("hblt_sample", tree)
    _check_int(n, "n (number of samples)", 1)
    chk.elements("hblt_sample", n=n, num_nodes=tree.num_nodes)
    if not isinstance(generator, torch.Generator):
        raise ValueError("generator must be a torch.Generator (see sim.make_generator)")
    dev = tree.device
    labels = torch.multinomial(tree.p0, n, replacement=True, generator=generator)
    nodes = torch.empty(n, tree.num_nodes, dtype=torch.bool, device=dev)
    u = torch.rand(n, tree.B, generator=generator, dtype=_DT, device=dev)
    nodes[:, :tree.B] = u >= tree.q0[:, labels].T  # y_b = 0 with probability q0[b, k]
    for d in range(2, tree.L + 1):
        idx = tree.level(d)
        flip_p = (1 - tree.rho[idx]) / 2
        flip = torch.rand(n, idx.numel(), generator=generator, dtype=_DT, device=dev) < flip_p
        nodes[:, idx] = nodes[:, tree.parent[idx]] ^ flip
    return HBLTSample(labels=labels, nodes=nodes, leaves=nodes[:, tree.leaves])


def empirical_leaf_cooccurrence(sample: HBLTSample):
    """(F, count): F[l, m] = #(y_l = 1 and y_m = 1) / #(y_m = 1) (NaN where #(y_m=1) = 0) and
    count[m] = #(y_m = 1).  Given the samples with y_m = 1, #(y_l=1) among them is
    Binomial(count[m], P[y_l=1|y_m=1]), so SE = sqrt(p (1-p) / count[m])."""
    if not isinstance(sample, HBLTSample):
        raise ValueError(f"sample must be an HBLTSample (hblt_sample), got {type(sample).__name__}")
    X = sample.leaves.to(_DT)
    both = X.T @ X
    count = torch.diagonal(both).clone()
    F = both / count.unsqueeze(0)
    F = torch.where(count.unsqueeze(0) > 0, F, torch.full_like(F, math.nan))
    return F, count
