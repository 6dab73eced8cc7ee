"""SignGD on a two-layer transformer (Li et al., ICLR 2025): the data model (Definition 2.1), the
model (Eq. 1), its analytic gradients, the optimizers and `train` (the package docstring,
sim/signgd/__init__.py, describes them and the researcher API)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from sim import default_device, make_generator
from theory import validate as chk
from theory.validate import MAX_STEPS, elements, integer, number

OPTIMIZERS = ("signgd", "adam", "gd")
DT = torch.float64
MAX_WIDTH = 10 ** 6  # largest per-seed m_v accepted in a list (init_params)


def _check_int(name, val, lo, hi=None):
    integer(name, val, lo, hi)


def _check_pos(name, val):
    number(name, val, lo=0, lo_open=True)


def _seeds(seeds):
    return chk.seeds("seeds", seeds)


def _check_problem(where, prob, params, name="p"):
    """prob a Problem and params (argument `name`) Params of the same seeds and d, else a
    ValueError."""
    if not isinstance(prob, Problem):
        raise ValueError(f"{where}: prob must be a Problem (make_problem), got "
                         f"{type(prob).__name__}")
    _check_params(where, params, name)
    S, d = prob.train.P.shape[0], prob.train.P.shape[-1]
    if params.WQ.shape[0] != S or params.WQ.shape[-1] != d:
        raise ValueError(f"{where}: {name} must be for S = {S} seeds and d = {d} (init_params "
                         f"with the problem's seeds and d), got WQ of shape "
                         f"{tuple(params.WQ.shape)}")


def _check_params(where, p, name="p"):
    if not isinstance(p, Params):
        raise ValueError(f"{where}: {name} must be a Params (init_params), got {type(p).__name__}")


def _check_patches(where, P, p):
    """P (S, N, L, d) a floating tensor matching p's seeds and d."""
    _check_params(where, p)
    if not (isinstance(P, torch.Tensor) and P.is_floating_point() and P.dim() == 4
            and P.shape[0] == p.WQ.shape[0] and P.shape[-1] == p.WQ.shape[-1] and P.shape[2] >= 1):
        raise ValueError(f"{where}: P must be a floating tensor of shape (S={p.WQ.shape[0]}, N, L, "
                         f"d={p.WQ.shape[-1]}), got "
                         f"{tuple(P.shape) if isinstance(P, torch.Tensor) else type(P).__name__}")
    if not bool(torch.isfinite(P).all()):
        raise ValueError(f"{where}: P must be finite in every entry")


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------
@dataclass
class Data:
    """S batched datasets.  P: (S, N, L, d) patches in their (random) positions; y: (S, N);
    sig: (S, N) position of the signal patch; noise_pos: (S, N, L-1) positions of the noise
    patches; xi: (S, N, L-1, d) the noise vectors (without the label)."""

    P: torch.Tensor
    y: torch.Tensor
    sig: torch.Tensor
    noise_pos: torch.Tensor
    xi: torch.Tensor

    @property
    def order(self):  # (S, N, L): [signal position, noise positions...]
        return torch.cat([self.sig[..., None], self.noise_pos], -1)


@dataclass
class Problem:
    train: Data
    test: Data
    n: int
    s: int
    d: int
    L: int
    sigma_p: float
    orthogonal: bool
    disjoint: bool
    seeds: list


def _draw(gen, N, L, s, d, sigma_p, pool, disjoint_block=None):
    """One dataset of N samples.  pool: candidate coordinates (LongTensor); disjoint_block: if
    given, a (N, L-1, s) LongTensor of fixed supports."""
    y = (torch.randint(0, 2, (N,), generator=gen) * 2 - 1).to(DT)
    sig = torch.randint(0, L, (N,), generator=gen)
    if disjoint_block is None:
        keys = torch.rand(N, L - 1, pool.numel(), generator=gen)
        supp = pool[keys.argsort(-1)[..., :s]]
    else:
        supp = disjoint_block
    vals = sigma_p * torch.randn(N, L - 1, s, generator=gen, dtype=DT)
    xi = torch.zeros(N, L - 1, d, dtype=DT).scatter_(-1, supp, vals)
    # positions: signal at sig, noise patches fill the others in increasing order
    allpos = torch.arange(L).expand(N, L)
    noise_pos = allpos[allpos != sig[:, None]].view(N, L - 1)
    P = torch.zeros(N, L, d, dtype=DT)
    P[torch.arange(N), sig, 0] = y
    P.scatter_(1, noise_pos[..., None].expand(N, L - 1, d), xi)
    return y, sig, noise_pos, xi, P


def make_problem(seeds, *, n: int, s: int, d: int, sigma_p: float, n_test: int = 500, L: int = 2,
                 orthogonal: bool = True, disjoint: bool = False, device=None) -> Problem:
    """Definition 2.1 (and its variants) for every seed.  Raises ValueError on bad input, naming
    the parameter: n >= 1, L >= 2, d >= 2, 1 <= s <= d - 1, sigma_p > 0, n_test >= 1; with
    disjoint=True, n (L-1) s + s <= |pool| (room for disjoint training supports plus one spare
    test support).

    `s` may also be a list with one sparsity per seed (configurations in one batch): seed j's
    instance is then bit for bit the instance of make_problem([seed_j], s=s[j], ...) (the data
    tensors' shapes do not depend on s), and Problem.s is that list."""
    chk.device("device", device)
    seeds = _seeds(seeds)
    _check_int("n", n, 1)
    _check_int("L", L, 2)
    _check_int("d", d, 2)
    if isinstance(s, (list, tuple, np.ndarray)):
        s_list = [integer(f"s[{j}]", x, 1, d - 1) for j, x in enumerate(s)]
        if len(s_list) != len(seeds):
            raise ValueError(f"s must be an integer in [1, {d - 1}] or a list of one per seed "
                             f"({len(seeds)}), got {len(s_list)} values")
        s_max = max(s_list)
    else:
        _check_int("s", s, 1, d - 1)
        s_list, s_max = None, s
    _check_int("n_test", n_test, 1)
    _check_pos("sigma_p", sigma_p)
    chk.flag("orthogonal", orthogonal)
    chk.flag("disjoint", disjoint)
    elements("make_problem", seeds=len(seeds), n_plus_n_test=n + n_test, L=L, d=d)
    pool_size = d - 1 if orthogonal else d
    if disjoint and n * (L - 1) * s_max + s_max > pool_size:
        raise ValueError(f"disjoint=True needs n (L-1) s + s = {n * (L - 1) * s_max + s_max} <= "
                         f"{pool_size} coordinates (d = {d}): increase d or lower n, s")
    device = default_device() if device is None else torch.device(device)
    tr, te = [], []
    for j, seed in enumerate(seeds):
        if s_list is not None:
            s = s_list[j]
        gen = make_generator(seed)
        pool = torch.arange(1 if orthogonal else 0, d)
        if disjoint:
            perm = pool[torch.randperm(pool.numel(), generator=gen)]
            block = perm[: n * (L - 1) * s].view(n, L - 1, s)
            spare = perm[n * (L - 1) * s:]
            tr.append(_draw(gen, n, L, s, d, sigma_p, pool, block))
            te.append(_draw(gen, n_test, L, s, d, sigma_p, spare))
        else:
            tr.append(_draw(gen, n, L, s, d, sigma_p, pool))
            te.append(_draw(gen, n_test, L, s, d, sigma_p, pool))

    def stack(parts):
        y, sig, npos, xi, P = (torch.stack(z).to(device) for z in zip(*parts))
        return Data(P=P, y=y, sig=sig, noise_pos=npos, xi=xi)

    return Problem(stack(tr), stack(te), n, s if s_list is None else s_list, d, L, float(sigma_p),
                   orthogonal, disjoint, seeds)


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------
@dataclass
class Params:
    WQ: torch.Tensor  # (S, m_k, d)
    WK: torch.Tensor  # (S, m_k, d)
    WV: torch.Tensor  # (S, 2, m_v, d); index 0 is j = +1, index 1 is j = -1
    H: torch.Tensor  # (S, 2, m_v) head; fixed 1/m_v unless learnable

    def tensors(self):
        return [self.WQ, self.WK, self.WV, self.H]

    def clone(self):
        return Params(*(t.clone() for t in self.tensors()))


def init_params(seeds, *, d: int, m_k: int, m_v: int, sigma_0: float, head_init: float | None = None,
                device=None) -> Params:
    """Every entry of W_Q, W_K, W_V i.i.d. N(0, sigma_0^2); head 1/m_v (or head_init).

    Configurations in one batch: `sigma_0` may be a list with one value per seed (each instance is
    then bit for bit the instance of a run with that scalar sigma_0), and so may `m_v`: W_V is
    then (S, 2, max m_v, d), and seed j's rows past its m_v_j are zero with a zero head (its first
    m_v_j rows and its head 1/m_v_j are those of the m_v = m_v_j run).  A zero-head zero row gets
    a zero gradient and never moves, so with the fixed head, SignGD with sgn(0) = 0, GD or Adam,
    instance j follows the m_v = m_v_j run up to float summation order over the padded rows
    (~1e-16); vsig_rows / vnoise_rows then include the zero rows.  Not with learnable_head or
    sign_zero != 0 (the padded rows would move).  Per-seed s: make_problem(s=[...]).  Per-seed n
    is not offered: n is the data tensors' sample axis, and padding samples would change every
    seed's mean loss (its 1/n) and so its SignGD steps wherever a gradient sum changes sign."""
    chk.device("device", device)
    seeds = _seeds(seeds)
    _check_int("d", d, 2)
    _check_int("m_k", m_k, 1)
    S = len(seeds)
    elements("init_params", seeds=S, m_k=m_k, d=d)
    if head_init is not None:
        number("head_init", head_init)
    if isinstance(m_v, (list, tuple, np.ndarray)):
        mvs = [integer(f"m_v[{j}]", x, 1, MAX_WIDTH) for j, x in enumerate(m_v)]
        if len(mvs) != S:
            raise ValueError(f"m_v must be an integer >= 1 or a list of one per seed ({S}), got "
                             f"{len(mvs)} values")
    else:
        _check_int("m_v", m_v, 1)
        elements("init_params", seeds=S, m_v=m_v, d=d, j=2)
        mvs = None
    if isinstance(sigma_0, (list, tuple, np.ndarray)):
        sig = [number(f"sigma_0[{j}]", x, 0, lo_open=True) for j, x in enumerate(sigma_0)]
        if len(sig) != S:
            raise ValueError(f"sigma_0 must be a number > 0 or a list of one per seed ({S}), got "
                             f"{len(sig)} values")
    else:
        _check_pos("sigma_0", sigma_0)
        sig = [sigma_0] * S
    if mvs is not None:
        elements("init_params", S=S, m_v=max(mvs), d=d, j=2)
        width = max(mvs)
    else:
        width = m_v
    device = default_device() if device is None else torch.device(device)
    Q, K, V = [], [], []
    for j, seed in enumerate(seeds):
        g = make_generator(seed + 2**31)
        Q.append(sig[j] * torch.randn(m_k, d, generator=g, dtype=DT))
        K.append(sig[j] * torch.randn(m_k, d, generator=g, dtype=DT))
        if mvs is None:
            V.append(sig[j] * torch.randn(2, m_v, d, generator=g, dtype=DT))
        else:
            v = torch.zeros(2, width, d, dtype=DT)
            v[:, : mvs[j]] = sig[j] * torch.randn(2, mvs[j], d, generator=g, dtype=DT)
            V.append(v)
    if mvs is None:
        h = 1.0 / m_v if head_init is None else float(head_init)
        H = torch.full((len(seeds), 2, m_v), h, dtype=DT)
    else:
        H = torch.zeros(S, 2, width, dtype=DT)
        for j, mv in enumerate(mvs):
            H[j, :, :mv] = 1.0 / mv if head_init is None else float(head_init)
    return Params(torch.stack(Q).to(device), torch.stack(K).to(device), torch.stack(V).to(device),
                  H.to(device))


def _mean_value(p: Params):
    """v = h_{+1}^T W_{V,+1} - h_{-1}^T W_{V,-1}, (S, d)."""
    return (p.H[:, 0, None, :] @ p.WV[:, 0] - p.H[:, 1, None, :] @ p.WV[:, 1])[:, 0]


def forward(P: torch.Tensor, p: Params):
    """f (S, N) and the pieces the gradient needs.  P: (S, N, L, d).  Batched matmuls (einsum's
    per-call overhead dominated these small programs)."""
    _check_patches("forward", P, p)
    return _forward(P, p)


def _forward(P: torch.Tensor, p: Params):
    S, N, L, d = P.shape
    X = P.reshape(S, N * L, d)
    q = (X @ p.WQ.transpose(1, 2)).view(S, N, L, -1)
    k = (X @ p.WK.transpose(1, 2)).view(S, N, L, -1)
    Z = q @ k.transpose(-1, -2)  # query l, key m
    A = torch.softmax(Z, -1)
    v = _mean_value(p)
    u = (X @ v[:, :, None]).view(S, N, L)  # value of each patch
    f = (A @ u[..., None])[..., 0].sum(-1)
    return f, dict(q=q, k=k, A=A, u=u, v=v)


def loss_of(f, y):
    """Mean logistic loss per seed, (S,)."""
    if not (isinstance(f, torch.Tensor) and isinstance(y, torch.Tensor) and f.shape == y.shape
            and f.dim() == 2):
        raise ValueError(f"loss_of: f and y must be tensors of one shape (S, N), got "
                         f"{getattr(f, 'shape', type(f).__name__)} and "
                         f"{getattr(y, 'shape', type(y).__name__)}")
    for name, t in (("f", f), ("y", y)):
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"loss_of: {name} must be finite in every entry")
    return torch.nn.functional.softplus(-y * f).mean(-1)


def gradients(P, y, p: Params):
    """Analytic gradients of the per-seed mean logistic loss (each seed's loss depends only on its
    own parameters, so these are the gradients of the sum over seeds)."""
    _check_patches("gradients", P, p)
    if not (isinstance(y, torch.Tensor) and tuple(y.shape) == tuple(P.shape[:2])):
        raise ValueError(f"gradients: y must be a tensor of shape (S, N) = {tuple(P.shape[:2])}, "
                         f"got {getattr(y, 'shape', type(y).__name__)}")
    if not bool(torch.isfinite(y).all()):
        raise ValueError("gradients: y must be finite in every entry (labels +-1)")
    return _gradients(P, y, p)


def _gradients(P, y, p: Params):
    g, f, A, _ = _gradient_parts(P, y, p)
    return g, f, A


# the sign of each value head's term in f = F_{+1} - F_{-1}
_HEAD_SIGN = torch.tensor([1.0, -1.0], dtype=DT)


def _gradient_parts(P, y, p: Params, head: bool = True):
    """(gradients, f, A, v): `_gradients` and the mean value v of the forward pass (what train's
    tracked quantities need again).  head=False leaves the head's gradient out (None): train
    with a fixed head never reads it.  The W_V gradient is (+-h_j) gv elementwise, one
    broadcast product (bit for bit the two products stacked before: h_j * (+-1) is exact)."""
    f, c = _forward(P, p)
    S, N, L, d = P.shape
    X = P.reshape(S, N * L, d)
    G = -y * torch.sigmoid(-y * f) / N  # dL/df_i
    A, u, q, k = c["A"], c["u"], c["q"], c["k"]
    colA = A.sum(-2)  # (S, N, L): sum over queries, per key
    gv = ((G[..., None] * colA).reshape(S, 1, N * L) @ X)[:, 0]  # (S, d)
    E = A * (u[:, :, None, :] - (A * u[:, :, None, :]).sum(-1, keepdim=True))
    GE = G[:, :, None, None] * E  # (S, N, L query, L key)
    gQ = (GE @ k).reshape(S, N * L, -1).transpose(1, 2) @ X  # sum_{n,l,m} GE k_m P_l
    gK = (GE.transpose(-1, -2) @ q).reshape(S, N * L, -1).transpose(1, 2) @ X
    gV = (p.H * _HEAD_SIGN.to(p.H.device)[:, None])[..., None] * gv[:, None, None, :]
    gH = (torch.stack([(p.WV[:, 0] @ gv[:, :, None])[..., 0], -(p.WV[:, 1] @ gv[:, :, None])[..., 0]], 1)
          if head else None)
    return Params(gQ, gK, gV, gH), f, A, c["v"]


# --------------------------------------------------------------------------------------------
# Tracked quantities
# --------------------------------------------------------------------------------------------
TRACKED = ("alpha", "beta", "a", "b", "vsig_rows", "vnoise_rows", "V_mu", "V", "s11", "s12", "s21",
           "s22", "margin", "train_loss", "train_err")


def tracked(prob: Problem, p: Params, f=None, A=None, keep=TRACKED):
    """The analysis' inner products on the training set (numpy, float64).
    alpha/beta (S, m_k): <w_{Q,s}, mu>, <w_{K,s}, mu>;  a/b (S, m_k, n, L-1): <w, y_i xi_i> for
    each noise patch;  vsig_rows (S, 2, m_v), vnoise_rows (S, 2, m_v, n, L-1);  V_mu (S,),
    V (S, n, L-1): mean value v = h_{+1}^T W_{V,+1} - h_{-1}^T W_{V,-1} (= mean row difference for
    the fixed head) against mu and y_i xi_i;  s11 (S, n) signal query -> signal key,
    s12 (S, n, L-1) signal -> each noise key, s21 (S, n, L-1) each noise query -> signal key,
    s22 (S, n, L-1, L-1) noise query -> noise key (for L = 2 the trailing singleton axes are
    kept; use `squeeze_L2`)."""
    _check_problem("tracked", prob, p)
    S_N = tuple(prob.train.P.shape[:2])
    L_ = prob.train.P.shape[2]
    for name, t, shape in (("f", f, S_N), ("A", A, S_N + (L_, L_))):
        if t is not None and not (isinstance(t, torch.Tensor) and tuple(t.shape) == shape):
            raise ValueError(f"tracked: {name} must be None or a tensor of shape {shape} (the "
                             f"forward pass on prob.train), got {chk.describe(t)}")
    if isinstance(keep, (str, bytes)) or not hasattr(keep, "__iter__"):
        raise ValueError(f"keep must be a tuple of names among {TRACKED}, got {keep!r}")
    keep = tuple(keep)
    for k_ in keep:
        if k_ not in TRACKED:
            raise ValueError(f"log entries (keep) must be among {TRACKED}, got {k_!r}")
    D = prob.train
    if f is None or A is None:
        f, c = _forward(D.P, p)
        A = c["A"]
    return _tracked(_TrainingSet(D), p, f, A, _mean_value(p), keep)


class _TrainingSet:
    """What the tracked quantities need of the training set, which a run never changes: built
    once per `train`, not at every step."""

    def __init__(self, D: Data):
        yx = D.y[:, :, None, None] * D.xi  # (S, n, L-1, d)
        self.S, self.n, self.Lm1 = yx.shape[:3]
        self.yxT = yx.reshape(self.S, self.n * self.Lm1, -1).transpose(1, 2)  # (S, d, n (L-1))
        o = D.order  # (S, n, L)
        self.queries = o[..., :, None].expand(*o.shape, o.shape[-1])
        self.keys = o[..., None, :].expand(*o.shape, o.shape[-1])
        self.y = D.y


def _tracked(T: _TrainingSet, p: Params, f, A, v, keep):
    """tracked's quantities from the forward pass's f, A and mean value v, unchecked."""
    S_, n_, Lm1, yxT = T.S, T.n, T.Lm1, T.yxT
    As = A.gather(2, T.queries).gather(3, T.keys)  # reorder queries, then keys
    m = T.y * f
    out = dict(
        alpha=lambda: p.WQ[..., 0], beta=lambda: p.WK[..., 0],
        a=lambda: (p.WQ @ yxT).view(S_, -1, n_, Lm1), b=lambda: (p.WK @ yxT).view(S_, -1, n_, Lm1),
        vsig_rows=lambda: p.WV[..., 0],
        vnoise_rows=lambda: (p.WV.reshape(S_, -1, p.WV.shape[-1]) @ yxT).view(S_, 2, -1, n_, Lm1),
        V_mu=lambda: v[:, 0], V=lambda: (v[:, None, :] @ yxT).view(S_, n_, Lm1),
        s11=lambda: As[:, :, 0, 0], s12=lambda: As[:, :, 0, 1:], s21=lambda: As[:, :, 1:, 0],
        s22=lambda: As[:, :, 1:, 1:], margin=lambda: m,
        train_loss=lambda: torch.nn.functional.softplus(-m).mean(-1),
        train_err=lambda: (m <= 0).to(DT).mean(-1),
    )
    return {k_: out[k_]().detach().cpu().numpy().copy() for k_ in keep}


def squeeze_L2(tr: dict) -> dict:
    """For L = 2: drop the noise-patch axes (a, b: (..., m_k, n); s12, s21, s22: (..., n))."""
    if not isinstance(tr, dict):
        raise ValueError(f"squeeze_L2: tr must be a dict of tracked quantities (Trace.q), got "
                         f"{type(tr).__name__}")
    out = dict(tr)
    for k_ in ("a", "b", "V", "vnoise_rows", "s12", "s21"):
        if k_ in out:
            out[k_] = out[k_][..., 0]
    if "s22" in out:
        out["s22"] = out["s22"][..., 0, 0]
    return out


def test_metrics(prob: Problem, p: Params):
    """(test loss, test error), each (S,), of params p on prob's test set."""
    _check_problem("test_metrics", prob, p)
    f, _ = _forward(prob.test.P, p)
    m = prob.test.y * f
    return (torch.nn.functional.softplus(-m).mean(-1).cpu().numpy(),
            (m <= 0).to(DT).mean(-1).cpu().numpy())


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------
@dataclass
class Trace:
    t: np.ndarray  # logged steps
    q: dict  # tracked quantities, each (T, ...) stacked over logged steps
    t_test: np.ndarray
    test_loss: np.ndarray  # (T_test, S)
    test_err: np.ndarray
    xi_l1: np.ndarray  # (S, n, L-1) ||xi_i||_1
    final: Params
    settings: dict = field(default_factory=dict)
    checkpoints: dict = field(default_factory=dict)  # step -> Checkpoint (train(checkpoints=...))

    def __getitem__(self, k):
        return self.q[k]


@dataclass
class Checkpoint:
    """The state of every seed at logged step t: params (a copy), q (every TRACKED quantity,
    (S, ...) arrays), test_loss / test_err (S,)."""

    t: int
    params: Params
    q: dict
    test_loss: np.ndarray
    test_err: np.ndarray


def _step_list(name, ts, steps):
    """Sorted distinct steps in [0, steps] from an iterable of integers (None: none)."""
    if ts is None:
        return []
    if isinstance(ts, (str, bytes)) or not hasattr(ts, "__iter__"):
        raise ValueError(f"{name} must be a list of integer steps in [0, {steps}], got {ts!r}")
    ts = list(ts)
    elements(name, n=len(ts))
    return sorted({integer(f"{name}[{k}]", x, 0, steps) for k, x in enumerate(ts)})


def _seed_mask(x, S):
    m = np.asarray(x)
    if m.shape != (S,) or m.dtype != bool:
        raise ValueError(f"stop_seed must return a (S,) = ({S},) bool array, got "
                         f"{type(x).__name__} of shape {m.shape} and dtype {m.dtype}")
    return m


def train(prob: Problem, params: Params, *, eta: float, steps: int, optimizer: str = "signgd",
          log_every: int = 1, test_every: int | None = None, learnable_head: bool = False,
          betas=(0.9, 0.999), adam_eps: float = 1e-15, log=None, stop=None, tail: float = 0.0,
          sign_zero: float = 0.0, stop_seed=None, checkpoints=None, test_at=None) -> Trace:
    """Full-batch training of every seed at once.  SignGD: W <- W - eta sgn(grad), sgn(0) = 0
    (`sign_zero` in {-1, 0, 1} sets sgn(0) otherwise: a null of the audit, not the paper's rule);
    GD: W <- W - eta grad; Adam: bias-corrected, betas, eps.  The head is trained only with
    learnable_head=True.  `log`: names of tracked quantities to keep (default all).
    `stop`: optional callable(tracked quantities of this step, a dict of (S, ...) arrays) -> bool,
    evaluated at every logged step; at the first step t* where it is True the horizon becomes
    min(steps, ceil((1 + tail) t*)) (`steps` is then a cap; the trace's settings record t*).

    Researcher options (all off by default; off, the run is bit for bit the run without them):
    `stop_seed`: callable(tracked quantities of this step, a dict of (S, ...) arrays) -> (S,) bool,
    evaluated at every logged step: seed j stops updating (its parameters stay frozen, its
    quantities keep being logged) from step ceil((1 + tail) t_j), t_j the first logged step at
    which its entry is True; the others go on; the run ends once every seed has stopped (or at
    `steps`).  settings["t_stop_seed"] (S,) holds t_j (inf: never), settings["t_frozen"] the step
    each seed stopped updating (inf: never).
    `checkpoints`: steps in [0, steps] at which the parameters, every tracked quantity and the test
    metrics are kept: trace.checkpoints[t] is a Checkpoint (a step the run did not reach because
    a stop rule ended it is absent; checkpoint steps also join the test grid below).
    `test_at`: steps in [0, steps] at which the test metrics are also computed (merged, sorted,
    into t_test / test_loss / test_err with the test_every grid and the last step)."""
    _check_problem("train", prob, params, "params")
    _check_pos("eta", eta)
    _check_int("steps", steps, 0, MAX_STEPS)
    if eta * max(steps, 1) > 1e150:  # the weights move by up to eta per step
        raise ValueError(f"eta * steps must be <= 1e150 (the weights' squares overflow float64 "
                         f"beyond), got eta = {eta:g}, steps = {steps}")
    _check_int("log_every", log_every, 1)
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if test_every is not None:
        _check_int("test_every", test_every, 1)
    chk.flag("learnable_head", learnable_head)
    chk.betas("betas", betas)
    b1, b2 = betas
    number("adam_eps", adam_eps, lo=0, lo_open=True)
    if log is not None and (isinstance(log, (str, bytes)) or not hasattr(log, "__iter__")):
        raise ValueError(f"log must be None or a tuple of names among {TRACKED}, got {log!r}")
    keep = TRACKED if log is None else tuple(log)
    for k_ in keep:
        if k_ not in TRACKED:
            raise ValueError(f"log entries must be among {TRACKED}, got {k_!r}")
    chk.function("stop", stop, none=True)
    number("tail", tail, lo=0)
    if sign_zero not in (-1, 0, 1) or isinstance(sign_zero, bool):
        raise ValueError(f"sign_zero must be -1, 0 or 1, got {sign_zero!r}")
    if stop_seed is not None and not callable(stop_seed):
        raise ValueError(f"stop_seed must be None or a callable(dict of (S, ...) arrays) -> (S,) "
                         f"bool, got {stop_seed!r}")
    ck = set(_step_list("checkpoints", checkpoints, steps))
    t_at = set(_step_list("test_at", test_at, steps))
    p = params.clone()
    n_tr = 4 if learnable_head else 3
    mom = [torch.zeros_like(t) for t in p.tensors()]
    sq = [torch.zeros_like(t) for t in p.tensors()]
    D = prob.train
    ts, logs, tts, tl, te = [], [], [], [], []
    S_ = p.WQ.shape[0]
    t_stop = None
    t_stop_seed = np.full(S_, np.inf)
    t_frozen = np.full(S_, np.inf)
    kept = {}
    fixed = _TrainingSet(D)
    for step in range(steps + 1):
        g, f, A, v = _gradient_parts(D.P, D.y, p, head=learnable_head)
        if step % log_every == 0 or step == steps:
            tq = _tracked(fixed, p, f, A, v, keep)
            ts.append(step)
            logs.append({k_: tq[k_] for k_ in keep})
            if stop is not None and t_stop is None and stop(logs[-1]):
                t_stop = step
                steps = min(steps, int(math.ceil((1 + tail) * step)))
            if stop_seed is not None:
                hit = _seed_mask(stop_seed(logs[-1]), S_) & ~np.isfinite(t_stop_seed)
                t_stop_seed[hit] = step
                t_frozen[hit] = np.ceil((1 + tail) * step)
                if np.isfinite(t_stop_seed).all():
                    steps = min(steps, int(t_frozen.max()))
        if ((test_every is not None and step % test_every == 0) or step == steps
                or step in t_at or step in ck):
            a_, b_ = test_metrics(prob, p)
            tts.append(step), tl.append(a_), te.append(b_)
        if step in ck:
            kept[step] = Checkpoint(step, p.clone(), _tracked(fixed, p, f, A, v, TRACKED), a_, b_)
        if step == steps:
            break
        frozen = None
        if stop_seed is not None and (t_frozen <= step).any():
            frozen = torch.as_tensor(t_frozen <= step, device=p.WQ.device)
        new = []
        for i, (w, gw) in enumerate(zip(p.tensors(), g.tensors())):
            if i >= n_tr:
                new.append(w)
                continue
            if optimizer == "signgd":
                sg = torch.sign(gw)
                if sign_zero:
                    sg = torch.where(gw == 0, torch.full_like(gw, float(sign_zero)), sg)
                w = torch.add(w, sg, alpha=-eta)  # w - eta sg, exactly (sg in {-1, 0, 1})
            elif optimizer == "gd":
                w = w - eta * gw
            else:  # Adam, in place where a value is not kept (op by op the same arithmetic)
                mom[i].mul_(b1).add_(torch.mul(gw, 1 - b1))  # b1 mom + (1 - b1) g
                sq[i].mul_(b2).add_(torch.mul(gw, 1 - b2).mul_(gw))  # b2 sq + (1 - b2) g g
                den = torch.div(sq[i], 1 - b2 ** (step + 1)).sqrt_().add_(adam_eps)
                mh = torch.div(mom[i], 1 - b1 ** (step + 1))
                w = w - mh.mul_(eta).div_(den)  # w - eta mh / (sqrt(vh) + eps)
            if frozen is not None:  # stopped seeds keep their parameters
                old = p.tensors()[i]
                w = torch.where(frozen.view(-1, *([1] * (w.dim() - 1))), old, w)
            new.append(w)
        p = Params(*new)
    q = {k_: np.stack([lg[k_] for lg in logs]) for k_ in keep}
    settings = dict(eta=eta, steps=steps, optimizer=optimizer, learnable_head=learnable_head,
                    t_stop=t_stop)
    if stop_seed is not None:
        settings.update(t_stop_seed=t_stop_seed, t_frozen=t_frozen)
    return Trace(np.array(ts), q, np.array(tts), np.stack(tl), np.stack(te),
                 D.xi.abs().sum(-1).cpu().numpy(), p, settings, kept)
