"""JoMA (Tian et al., ICLR 2024): the simulations its claims are about (torch, float64; scipy
solve_ivp for the reduced ODEs). Sections follow the paper.

JoMA (Tian et al., ICLR 2024): the training dynamics of Eqn. 2 and the reduced Eqn. 3.

Model (Section 2, Eqn. 1), for one query token m and a batch of N samples i:

    h_k = phi(w_k^T f),   f = U_C b + u_m,   b = sigma(z_m) o x / A

with U_C (d x M_C) orthonormal contextual embeddings and u_m a unit query embedding orthogonal to
them (the residual connection).  Attention kinds (Fig. 1b):  linear  b = z o x  (A = 1);
exp  b = exp(z) o x / A  (A constant);  softmax  b = exp(z) o x / 1^T(exp(z) o x).

Dynamics (Eqn. 2) with stationary backpropagated gradients g_{h_k}[i] (Assumption 1):

    dw_k/dt = E_{q=m}[g_{h_k} h'_k f],   dz_m/dt = E_{q=m}[(db/dz_m)^T U_C^T g_f],
    g_f = sum_k g_{h_k} h'_k w_k,

which is gradient ascent on the per-hidden-node objective J = E[sum_k g_{h_k} h_k] (Appendix
A.1, Eqn. 10).  We integrate it with explicit gradient steps of size eta (time t = step x eta;
W and z are updated simultaneously from the same state), so a gradient-flow statement holds up to
O(eta) over a fixed horizon.  E is the mean over the N samples of the batch (full batch).

Everything is batched over a leading dimension S (seeds / parameter sets).  Data: classes
y[i] uniform over C classes, class-conditional token distributions P(l | y) ~ Dirichlet, x[i]
the frequency vector of T_tok tokens drawn from P(. | y[i]); g_{h_k}[i] = 1[y[i] = k] - 1/C,
the cross-entropy gradient at uniform predictions held fixed (Section 2: g_{h_k} ~ 1[y_0 = k]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from scipy.integrate import solve_ivp

from theory import validate as chk
from sim import default_device, gamma_sample, make_generator, measure

#==================================================================================================
# Sections 2-3: Theorems 1-2 (Eqns. 1-4, Appendix A.2)
#==================================================================================================

ATTENTIONS = ("linear", "exp", "softmax")
ACTIVATIONS = ("linear", "relu")


class BlowUpError(ValueError):
    """The horizon runs past the (finite-time) blow-up of the dynamics."""


@dataclass
class Eqn2Problem:
    """One batch of S independent instances of Eqn. 2 (tensors have leading dim S)."""

    U_C: torch.Tensor  # (S, d, M_C) orthonormal columns
    u_q: torch.Tensor  # (S, d) unit, orthogonal to U_C
    X: torch.Tensor  # (S, N, M_C) frequency vectors x[i] (rows sum to 1)
    G: torch.Tensor  # (S, N, K) backpropagated gradients g_{h_k}[i]
    attention: str
    activation: str
    A: float = 1.0  # normalisation constant of exp attention

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if not (self.A > 0 and math.isfinite(self.A)):
            raise ValueError(f"A must be a finite constant > 0, got {self.A}")

    @property
    def shape(self):
        S, d, M_C = self.U_C.shape
        return S, d, M_C, self.X.shape[1], self.G.shape[2]


def make_problem(seeds, *, M_C: int, K: int, d: int, N: int, C: int | None = None,
                 tokens: int = 20, concentration: float = 0.5, attention: str = "exp",
                 activation: str = "linear", A: float = 1.0, device=None,
                 dtype=torch.float64) -> Eqn2Problem:
    """Build S = len(seeds) instances; instance s depends only on seeds[s] (not on the batch)."""
    for name, val, lo in (("M_C", M_C, 1), ("K", K, 1), ("N", N, 1), ("tokens", tokens, 1)):
        chk.integer(name, val, lo=lo)
    chk.integer("d", d, lo=1)
    C = K if C is None else chk.integer("C", C, lo=2)
    if isinstance(seeds, (int, str, bytes)) or not hasattr(seeds, "__iter__"):
        raise ValueError(f"seeds must be a non-empty list of non-negative ints, got {seeds!r}")
    seeds = list(seeds)
    for dims in (dict(N=N, tokens=tokens), dict(N=N, M_C=M_C), dict(d=d, M_C=M_C),
                 dict(K=K, M_C=M_C), dict(N=N, K=K), dict(C=C, M_C=M_C), dict(N=N, C=C)):
        chk.elements("make_problem", seeds=len(seeds), **dims)
    if C < 2:
        raise ValueError(f"K must be >= 2 when C is not given (C = K classes), got K={K}")
    chk.integer("d", d, lo=M_C + 1)  # room for u_q orthogonal to U_C
    if K > C:
        raise ValueError(f"K must be <= C (node k receives the gradient of class k), got K={K}, C={C}")
    chk.number("concentration", concentration, lo=0, lo_open=True)
    chk.number("A", A, lo=0, lo_open=True)
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    if not seeds:
        raise ValueError("seeds must be a non-empty list of non-negative ints")
    for i, sd in enumerate(seeds):
        chk.integer(f"seeds[{i}]", sd, lo=0)
    device = default_device() if device is None else torch.device(device)
    U, Q, X, G = [], [], [], []
    for seed in seeds:
        gen = make_generator(seed)  # CPU generator: same numbers on any device
        basis, _ = torch.linalg.qr(torch.randn(d, M_C + 1, generator=gen, dtype=torch.float64))
        U.append(basis[:, :M_C])
        Q.append(basis[:, M_C])
        # P(l | y) ~ Dirichlet(concentration): torch's Dirichlet takes no generator, so draw
        # it from normalised Gammas with ours
        gam = gamma_sample(torch.full((C, M_C), float(concentration), dtype=torch.float64), gen)
        p_tok = gam / gam.sum(-1, keepdim=True)
        y = torch.randint(0, C, (N,), generator=gen)
        draws = torch.multinomial(p_tok[y], tokens, replacement=True, generator=gen)  # (N, tokens)
        counts = torch.zeros(N, M_C, dtype=torch.float64).scatter_add_(
            1, draws, torch.ones(N, tokens, dtype=torch.float64))
        X.append(counts / tokens)
        G.append(torch.nn.functional.one_hot(y, C)[:, :K].to(torch.float64) - 1.0 / C)
    to = dict(device=device, dtype=dtype)
    return Eqn2Problem(torch.stack(U).to(**to), torch.stack(Q).to(**to), torch.stack(X).to(**to),
                       torch.stack(G).to(**to), attention, activation, float(A))


def _check_zX(where, z, X, name_z="z"):
    if not (isinstance(X, torch.Tensor) and X.is_floating_point() and X.dim() == 3):
        raise ValueError(f"{where}: X must be a floating tensor (S, N, M_C), got "
                         f"{chk.describe(X)}")
    if not (isinstance(z, torch.Tensor) and z.is_floating_point()
            and tuple(z.shape) == (X.shape[0], X.shape[2])):
        raise ValueError(f"{where}: {name_z} must be a floating tensor (S, M_C) = "
                         f"{(X.shape[0], X.shape[2])}, got {chk.describe(z)}")
    if not bool(torch.isfinite(z).all()):
        raise ValueError(f"{where}: {name_z} must be finite")


def attention_scores(z: torch.Tensor, X: torch.Tensor, attention: str, A: float = 1.0):
    """b = sigma(z) o x / A for each sample (Eqn. 1). z: (S, M_C), X: (S, N, M_C)."""
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
    chk.number("A", A, lo=0, lo_open=True)
    _check_zX("attention_scores", z, X)
    return _attention_scores(z, X, attention, A)


def _attention_scores(z, X, attention, A):
    if attention == "linear":
        return z[:, None, :] * X
    if attention == "exp":
        return torch.exp(z)[:, None, :] * X / A
    if attention == "softmax":
        e = torch.exp(z - z.max(-1, keepdim=True).values)[:, None, :] * X
        return e / e.sum(-1, keepdim=True)
    raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")


def _check_state(where, p, W, z):
    """p an Eqn2Problem, W (S, d, K) and z (S, M_C) finite floating tensors of its shapes."""
    if not isinstance(p, Eqn2Problem):
        raise ValueError(f"{where}: p must be an Eqn2Problem (make_problem), got "
                         f"{type(p).__name__}")
    S, d, M_C, N, K = p.shape
    if not (isinstance(W, torch.Tensor) and W.is_floating_point() and tuple(W.shape) == (S, d, K)):
        raise ValueError(f"{where}: W must be a floating tensor (S, d, K) = {(S, d, K)}, got "
                         f"{chk.describe(W)}")
    if not bool(torch.isfinite(W).all()):
        raise ValueError(f"{where}: W must be finite")
    _check_zX(where, z, p.X)


def objective(p: Eqn2Problem, W: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """J = E[sum_k g_{h_k} phi(w_k^T f)] per instance (Appendix A.1, Eqn. 10); shape (S,)."""
    _check_state("objective", p, W, z)
    b = _attention_scores(z, p.X, p.attention, p.A)
    f = b @ p.U_C.transpose(1, 2) + p.u_q[:, None, :]
    pre = f @ W
    h = pre if p.activation == "linear" else torch.relu(pre)
    return (p.G * h).sum(-1).mean(-1)


def eqn2_velocity(p: Eqn2Problem, W: torch.Tensor, z: torch.Tensor):
    """Right-hand side of Eqn. 2: (dW/dt, dz/dt) with W: (S, d, K), z: (S, M_C)."""
    _check_state("eqn2_velocity", p, W, z)
    return _eqn2_velocity(p, W, z)


def _eqn2_velocity(p: Eqn2Problem, W: torch.Tensor, z: torch.Tensor):
    b = _attention_scores(z, p.X, p.attention, p.A)  # (S, N, M_C)
    f = b @ p.U_C.transpose(1, 2) + p.u_q[:, None, :]  # (S, N, d)
    pre = f @ W  # (S, N, K)
    hprime = torch.ones_like(pre) if p.activation == "linear" else (pre > 0).to(pre.dtype)
    coef = p.G * hprime  # g_{h_k} h'_k
    N = p.X.shape[1]
    W_dot = f.transpose(1, 2) @ coef / N  # E[g h' f]
    gb = (coef @ W.transpose(1, 2)) @ p.U_C  # U_C^T g_f, (S, N, M_C)
    if p.attention == "linear":  # db/dz = diag(x)
        z_dot = (p.X * gb).mean(1)
    elif p.attention == "exp":  # db/dz = diag(b)
        z_dot = (b * gb).mean(1)
    else:  # softmax: db/dz = diag(b) - b b^T
        z_dot = (b * gb - b * (b * gb).sum(-1, keepdim=True)).mean(1)
    return W_dot, z_dot


@dataclass
class Trajectory:
    """Logged states. t: (T,) times; V: (T, S, M_C, K) = U_C^T W; xi: (T, S, K) = u_q^T W;
    z: (T, S, M_C); bbar: (T, S, M_C) = E[b]; Qv, Qz: (T, S, M_C) accumulated squared
    increments sum_s sum_k (dv_k)^2 and sum_s (dz)^2 (for the exact discrete-time identities)."""

    t: np.ndarray
    V: np.ndarray
    xi: np.ndarray
    z: np.ndarray
    bbar: np.ndarray
    Qv: np.ndarray
    Qz: np.ndarray


def simulate_eqn2(p: Eqn2Problem, *, eta: float, horizon: float, W0=None, z0=None,
                  log_every: int | None = None, blowup: float = 1e6,
                  freeze_z: bool = False) -> Trajectory:
    """Gradient steps of size eta on Eqn. 2 up to time `horizon` (steps = horizon / eta, which
    must be an integer).  W0 / z0 default to zero initialisation.  Raises BlowUpError when the
    state leaves the finite range |.| < blowup (exp attention blows up in finite time).
    freeze_z=True keeps the attention logits z at z0 (a null: self-attention not trained, W
    still trained by the same steps)."""
    S, d, M_C, N, K = p.shape
    eta = chk.number("eta", eta, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    blowup = chk.number("blowup", blowup, lo=0, lo_open=True)
    steps = chk.steps("simulate_eqn2", horizon, eta)
    log_every = steps if log_every is None else chk.integer("log_every", log_every, lo=1)
    dev, dt = p.U_C.device, p.U_C.dtype
    W = torch.zeros(S, d, K, device=dev, dtype=dt) if W0 is None else W0.clone().to(dev, dt)
    z = torch.zeros(S, M_C, device=dev, dtype=dt) if z0 is None else z0.clone().to(dev, dt)
    if W.shape != (S, d, K) or z.shape != (S, M_C):
        raise ValueError(f"W0 must have shape {(S, d, K)} and z0 {(S, M_C)}")
    Qv = torch.zeros(S, M_C, device=dev, dtype=dt)
    Qz = torch.zeros_like(Qv)
    Ut = p.U_C.transpose(1, 2)
    logs = []

    def log(step):
        b = _attention_scores(z, p.X, p.attention, p.A)
        logs.append((step * eta, (Ut @ W).cpu(), (p.u_q[:, None, :] @ W)[:, 0].cpu(), z.cpu(),
                     b.mean(1).cpu(), Qv.cpu().clone(), Qz.cpu().clone()))

    log(0)
    for step in range(1, steps + 1):
        W_dot, z_dot = _eqn2_velocity(p, W, z)
        dW, dz = eta * W_dot, (0.0 if freeze_z else eta) * z_dot
        dv = Ut @ dW
        Qv += (dv * dv).sum(-1)
        Qz += dz * dz
        W = W + dW
        z = z + dz
        if step % log_every == 0 or step == steps or step % 16 == 0:  # never step on inf/NaN for long
            if not (torch.isfinite(W).all() and torch.isfinite(z).all()
                    and W.abs().max() < blowup and z.abs().max() < blowup):
                raise BlowUpError(f"horizon {horizon} is past the blow-up of the dynamics: the "
                                  f"state left |.| < {blowup:g} by t = {step * eta:g}")
            if step % log_every == 0 or step == steps:
                log(step)
    cols = list(zip(*logs))
    return Trajectory(np.array(cols[0]), *[torch.stack(c).numpy() for c in cols[1:]])


def simulate_eqn2_softmax_budget(p: Eqn2Problem, *, eta: float, horizon: float, W0=None, z0=None,
                                 freeze_z: bool = False):
    """The steps of simulate_eqn2 for softmax attention, with the two assumption violations of
    Theorem 1 (softmax) accumulated along the way, per token (left-point rule):

      viol_E = sum_steps eta sum_k (E[g h'_k b b^T] v_k - bbar (E[g h'_k b]^T v_k))
               (zero when E[g h'_k b b^T] = bbar E[g h'_k b]^T, the theorem's second assumption)
      viol_b = sum_steps 1/2 sum_k ||v_k||^2 (bbar(t + eta) - bbar(t))
               (zero when bbar is constant, the first assumption).

    In continuous time d/dt [z - 1/2 sum_k (v_k^2 - ||v_k||^2 bbar)] = -(E-term) + (b-term), so
    Eqn. 19 drifts by exactly -viol_E + viol_b, up to the O(eta) error of the steps.
    Returns a dict of numpy arrays: z, V (S, M_C, K), bbar at t = 0 and t = horizon, viol_E, viol_b
    (S, M_C)."""
    if p.attention != "softmax":
        raise ValueError(f"the budget is for softmax attention, got {p.attention!r}")
    S, d, M_C, N, K = p.shape
    eta = chk.number("eta", eta, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    steps = chk.steps("simulate_eqn2_softmax_budget", horizon, eta)
    dev, dt = p.U_C.device, p.U_C.dtype
    W = torch.zeros(S, d, K, device=dev, dtype=dt) if W0 is None else W0.clone().to(dev, dt)
    z = torch.zeros(S, M_C, device=dev, dtype=dt) if z0 is None else z0.clone().to(dev, dt)
    Ut = p.U_C.transpose(1, 2)
    vE = torch.zeros(S, M_C, device=dev, dtype=dt)
    vb = torch.zeros_like(vE)

    def state():
        b = _attention_scores(z, p.X, p.attention, p.A)
        return b, b.mean(1), Ut @ W  # b (S, N, M_C), bbar (S, M_C), V (S, M_C, K)

    b, bbar, V = state()
    first = (z.cpu().numpy().copy(), V.cpu().numpy().copy(), bbar.cpu().numpy().copy())
    for _ in range(steps):
        f = b @ p.U_C.transpose(1, 2) + p.u_q[:, None, :]
        pre = f @ W
        hprime = torch.ones_like(pre) if p.activation == "linear" else (pre > 0).to(pre.dtype)
        coef = p.G * hprime  # (S, N, K)
        bv = b @ V  # (S, N, K): b^T v_k per sample
        ebbv = torch.einsum("snk,snm,snk->sm", coef, b, bv) / N  # sum_k E[g h'_k b b^T] v_k
        vdot = torch.einsum("snk,snm->smk", coef, b) / N  # E[g h'_k b] = dv_k/dt
        proj = (vdot * V).sum(1)  # (S, K): E[g h'_k b]^T v_k
        vE += eta * (ebbv - bbar * proj.sum(-1, keepdim=True))
        nv2 = (V ** 2).sum((1, 2))[:, None]  # sum_k ||v_k||^2
        W_dot, z_dot = _eqn2_velocity(p, W, z)
        W = W + eta * W_dot
        if not freeze_z:
            z = z + eta * z_dot
        b, bbar_new, V = state()
        vb += 0.5 * nv2 * (bbar_new - bbar)
        bbar = bbar_new
    last = (z.cpu().numpy(), V.cpu().numpy(), bbar.cpu().numpy())
    return {"z0": first[0], "V0": first[1], "bbar0": first[2], "z": last[0], "V": last[1],
            "bbar": last[2], "viol_E": vE.cpu().numpy(), "viol_b": vb.cpu().numpy()}


# --------------------------------------------------------------------------------------------
# Reduced dynamics, Eqn. 3:  dv/dt = Delta o exp(v^2 / 2 + c)   (exp attention, K = 1, linear phi)
# --------------------------------------------------------------------------------------------
def solve_eqn3(delta, horizon: float, *, c=None, v0=None, A: float = 1.0, n_eval: int = 50,
               rtol: float = 1e-11, atol: float = 1e-13):
    """Integrate Eqn. 3 with scipy's solve_ivp (DOP853).  Eqn. 3 is printed without A (the exp
    attention constant); with a general A the right-hand side carries 1/A (Eqn. 21), which is
    what `A` does here.  Raises BlowUpError if `horizon` is at or past the blow-up time."""
    delta = np.asarray(delta, dtype=np.float64)
    if delta.ndim != 1 or delta.size < 1 or not np.all(np.isfinite(delta)):
        raise ValueError("delta must be a finite 1-D array")
    c = np.zeros_like(delta) if c is None else np.asarray(c, dtype=np.float64)
    v0 = np.zeros_like(delta) if v0 is None else np.asarray(v0, dtype=np.float64)
    A = chk.number("A", A, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    rtol = chk.number("rtol", rtol, lo=1e-13, hi=1.0)  # scipy's own floor is 100 eps
    atol = chk.number("atol", atol, lo=0, lo_open=True)
    n_eval = chk.integer("n_eval", n_eval, lo=2, hi=10 ** 6)
    if c.shape != delta.shape or v0.shape != delta.shape or not (
            np.all(np.isfinite(c)) and np.all(np.isfinite(v0))):
        raise ValueError(f"c and v0 must be finite arrays of the shape of delta {delta.shape}")
    t_star = eqn3_blowup_time(delta, c=c, v0=v0, A=A)
    if horizon >= t_star:
        raise BlowUpError(f"horizon {horizon:g} is at or past the blow-up time {t_star:g} of Eqn. 3")

    def rhs(_t, v):
        return delta * np.exp(v * v / 2 + c) / A

    t_eval = np.linspace(0.0, horizon, n_eval)
    sol = solve_ivp(rhs, (0.0, horizon), v0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return sol.t, sol.y.T


def eqn3_blowup_time(delta, *, c=None, v0=None, A: float = 1.0) -> float:
    """Blow-up time of Eqn. 3: component l reaches +-inf at
    t_l = A e^{-c_l} int_{v0_l}^{sign(D_l) inf} e^{-u^2/2} du / |D_l|  (separable ODE)."""
    from scipy.special import erfc

    d_ = chk.finite_array("delta", delta, ndim=1)
    if d_.size < 1:
        raise ValueError("delta must be a finite 1-D array with at least one entry")
    for name, x in (("c", c), ("v0", v0)):
        if x is not None and chk.finite_array(name, x, ndim=1).shape != d_.shape:
            raise ValueError(f"{name} must be a finite array of the shape of delta {d_.shape}, got "
                             f"{np.shape(x)}")
    chk.number("A", A, lo=0, lo_open=True)
    delta = np.asarray(delta, dtype=np.float64)
    c = np.zeros_like(delta) if c is None else np.asarray(c, dtype=np.float64)
    v0 = np.zeros_like(delta) if v0 is None else np.asarray(v0, dtype=np.float64)
    with np.errstate(divide="ignore"):
        tail = math.sqrt(math.pi / 2) * erfc(np.sign(delta) * v0 / math.sqrt(2))
        t = np.where(delta != 0, A * np.exp(-c) * tail / np.abs(delta), np.inf)
    return float(np.min(t))


#==================================================================================================
# Section 5 / Appendix A.5: HBLT(rho), Lemmas 7-8, Theorem 5, Eq. 9
#==================================================================================================
# HBLT(rho): the hierarchical binary latent tree of JoMA (Tian et al., ICLR 2024), Section 5 and
# Appendix A.5 (Definition 2), in torch float64 with a local torch.Generator.
#
# Structure.  The root y_0 is a class label over D classes with prior p0.  It has B binary
# children (depth 1) with P(y=0 | y_0=k) = q0[b, k].  Every binary latent above the leaves has N_ch
# children, each a noisy copy of its parent through M(rho) (P[child=1|parent=1] =
# P[child=0|parent=0] = (1+rho)/2), optionally with one rho per edge.  The nodes at depth L (L edges
# below the root, layer s = 0 in the paper's numbering) are the tokens: y_leaf = 1 means the
# token appears.  Binary nodes are numbered breadth first (depth 1 first), children of a node are
# contiguous, so `parent` and `depth` describe the tree and `cla_height` gives, for a pair of
# leaves, the number of edges H from their common latent ancestor down to them (H = L when the
# only common ancestor is the root y_0).
#
# Two independent ways to get co-occurrences:
#   * hblt_exact_joint / hblt_exact_leaf_cooccurrence: brute-force sum over all 2^N binary
#     configurations x D classes (small trees, N <= 18), no use of any closed form;
#   * hblt_sample / empirical_leaf_cooccurrence: batched ancestral sampling (Monte Carlo).

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

    def _check_node(self, node):
        if not (isinstance(node, int) and 0 <= node < self.num_nodes):
            raise ValueError(f"node must be an int in [0, {self.num_nodes - 1}], got {node!r}")


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


def _check_int(x, name, lo, hi=None):
    if isinstance(x, bool) or not isinstance(x, int) or x < lo or (hi is not None and x > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an int {rng}, got {x!r}")


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
    tree._check_node(a)
    tree._check_node(b)
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


#==================================================================================================
# Section 4 / Appendix A.3: nonlinear activations, Lemmas 1-4, Theorem 3
#==================================================================================================
# JoMA (Tian et al., ICLR 2024) Sec. 4: the literal Eqn 2 gradient of one MLP node with uniform
# attention, estimated by Monte Carlo on mixtures of isotropic distributions (torch, float64).
#
# Setting (Eqns 1-2, uniform attention b = x):  f = U_C x + u_q, h = phi(w^T f),
# w_dot = E[g phi'(w^T f) f]; v := U_C^T w, xi := u_q^T w, so v_dot = U_C^T w_dot, xi_dot = u_q^T w_dot.
# Every estimator returns the mean and its Monte Carlo standard error (sample std / sqrt(N)).

FAMILIES = ("gaussian", "student_t", "ball")


def _finite_pos(name, x):
    chk.number(name, x, lo=0, lo_open=True)


MAX_NU = 1000  # student_t draws chi^2_nu as nu squared normals: a loop of nu passes


def random_embeddings(d: int, m_c: int, gen: torch.Generator, dtype=torch.float64,
                      device=None):
    """U_C (d x M_C) with orthonormal columns and a unit u_q orthogonal to them (QR of a Gaussian)."""
    chk.generator("gen", gen)
    if not (isinstance(d, int) and isinstance(m_c, int) and not isinstance(d, bool)
            and not isinstance(m_c, bool) and m_c >= 1 and d >= m_c + 1):
        raise ValueError(f"need ints M_C >= 1 and d >= M_C + 1, got d={d!r}, M_C (m_c)={m_c!r}")
    chk.elements("random_embeddings", d=d, m_c_plus_1=m_c + 1)
    a = torch.randn(d, m_c + 1, generator=gen, dtype=dtype, device=device)
    q, _ = torch.linalg.qr(a)
    return q[:, :m_c], q[:, m_c]


def sample_isotropic_noise(n_samples: int, n: int, family: str, gen: torch.Generator,
                           sigma: float = 1.0, nu: int = 5, dtype=torch.float64, device=None):
    """z in R^n, isotropic: gaussian N(0, sigma^2 I); student_t (integer nu >= 1, scale sigma):
    sigma g / sqrt(chi2_nu / nu); ball: uniform in the ball of radius sigma."""
    chk.generator("gen", gen)
    _check_int(n_samples, "n_samples", 2)
    _check_int(n, "dimension n", 1)
    chk.elements("sample_isotropic_noise", n_samples=n_samples, n=n)
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    _finite_pos("sigma", sigma)
    if family == "student_t":
        _check_int(nu, "nu (chi^2 by squared normals)", 1, MAX_NU)
    g = torch.randn(n_samples, n, generator=gen, dtype=dtype, device=device)
    if family == "gaussian":
        return sigma * g
    if family == "student_t":
        if not (isinstance(nu, int) and nu >= 1):
            raise ValueError(f"nu must be an int >= 1 (chi^2 by squared normals), got {nu!r}")
        w = torch.zeros(n_samples, dtype=dtype, device=device)
        for _ in range(nu):
            w += torch.randn(n_samples, generator=gen, dtype=dtype, device=device) ** 2
        return sigma * g / torch.sqrt(w / nu)[:, None]
    u = torch.rand(n_samples, generator=gen, dtype=dtype, device=device)
    direction = g / torch.linalg.norm(g, dim=1, keepdim=True)
    return sigma * u[:, None] ** (1.0 / n) * direction


def sample_mixture(n_samples: int, centers: torch.Tensor, weights, family: str,
                   gen: torch.Generator, sigma: float = 1.0, nu: int = 5, R: torch.Tensor | None = None):
    """x = xbar_c + R z with c ~ Categorical(weights), z isotropic in R^n (n = R.shape[1]; R = I by
    default).  The same p(x - xbar_c) for all components (Eqn 45).  Returns (x, labels)."""
    chk.generator("gen", gen)
    _check_int(n_samples, "n_samples", 2)
    cen = chk.finite_array("centers", centers, ndim=2)
    chk.elements("sample_mixture", n_samples=n_samples, M=cen.shape[1])
    chk.finite_array("weights", weights, ndim=1, lo=0)
    if R is not None:
        chk.finite_array("R", R, ndim=2)
    centers = torch.as_tensor(centers, dtype=torch.float64)
    if centers.ndim != 2 or centers.shape[0] < 1 or centers.shape[1] < 1:
        raise ValueError(f"centers must be a (C, M) tensor with C, M >= 1, got {tuple(centers.shape)}")
    if not torch.all(torch.isfinite(centers)):
        raise ValueError("centers must be finite")
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != (centers.shape[0],) or torch.any(w < 0) or abs(float(w.sum()) - 1) > 1e-9:
        raise ValueError("mixture weights must be a probability vector (>= 0, sum 1) of length C")
    m = centers.shape[1]
    if R is None:
        R = torch.eye(m, dtype=torch.float64, device=centers.device)
    R = torch.as_tensor(R, dtype=torch.float64)
    if R.ndim != 2 or R.shape[0] != m or R.shape[1] < 1 or R.shape[1] > m:
        raise ValueError(f"R must be (M, n) with 1 <= n <= M = {m}, got {tuple(R.shape)}")
    if not torch.allclose(R.T @ R, torch.eye(R.shape[1], dtype=torch.float64), atol=1e-10):
        raise ValueError("R must have orthonormal columns")
    labels = torch.multinomial(w, n_samples, replacement=True, generator=gen)
    z = sample_isotropic_noise(n_samples, R.shape[1], family, gen, sigma=sigma, nu=nu,
                               device=centers.device)
    return centers[labels] + z @ R.T, labels


def _check_phi(u, c_minus, c_plus):
    if not (isinstance(u, torch.Tensor) and u.is_floating_point()):
        raise ValueError(f"u must be a floating tensor, got "
                         f"{getattr(u, 'dtype', type(u).__name__)}")
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def phi(u: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0) -> torch.Tensor:
    """Homogeneous (leaky) ReLU phi(u) = c_+ max(u, 0) + c_- min(u, 0) (c_- = 0: ReLU)."""
    _check_phi(u, c_minus, c_plus)
    return c_plus * torch.clamp(u, min=0) + c_minus * torch.clamp(u, max=0)


def phi_prime(u: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0) -> torch.Tensor:
    """phi'(u) = c_- 1[u<0] + c_+ 1[u>0] (0 at the kink, a null set)."""
    _check_phi(u, c_minus, c_plus)
    one = torch.ones_like(u)
    return torch.where(u > 0, c_plus * one, torch.where(u < 0, c_minus * one, 0.0 * one))


def _mean_se(values: torch.Tensor, dim=0):
    n = values.shape[dim]
    return values.mean(dim), values.std(dim, unbiased=True) / math.sqrt(n)


def _check_node_inputs(where, w, U_C, u_q, x, g, c_minus, c_plus):
    """w (K, d) or (d,), U_C (d, M), u_q (d,), x (N, M) with N >= 2, g (N,): finite, matching."""
    wa = chk.finite_array("w", w, ndim=(1, 2))
    for name, t, nd in (("U_C", U_C, 2), ("u_q", u_q, 1), ("x", x, 2), ("g", g, 1)):
        if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.dim() == nd):
            raise ValueError(f"{where}: {name} must be a floating {nd}-d tensor, got "
                             f"{chk.describe(t)}")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{where}: {name} must be finite")
    d, m = U_C.shape
    if (wa.shape[-1] != d or u_q.shape != (d,) or x.shape[1] != m or x.shape[0] < 2
            or g.shape != (x.shape[0],)):
        raise ValueError(f"{where}: shape mismatch: w {wa.shape} (.., d), U_C {tuple(U_C.shape)} "
                         f"(d, M), u_q {tuple(u_q.shape)} (d,), x {tuple(x.shape)} (N >= 2, M), "
                         f"g {tuple(g.shape)} (N,)")
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def eqn2_gradient(w: torch.Tensor, U_C: torch.Tensor, u_q: torch.Tensor, x: torch.Tensor,
                  g: torch.Tensor, c_minus: float = 0.0, c_plus: float = 1.0):
    """Eqn 2 literally: w_dot = E[g phi'(w^T f) f], f = U_C x + u_q (uniform attention b = x).
    w: (K, d) parameter sets (batched).  Returns a dict with w_dot (K, d) and, projected per sample,
    v_dot = U_C^T w_dot (K, M), xi_dot = u_q^T w_dot (K,), each with its MC standard error."""
    _check_node_inputs("eqn2_gradient", w, U_C, u_q, x, g, c_minus, c_plus)
    w = torch.atleast_2d(torch.as_tensor(w, dtype=torch.float64))
    d, m = U_C.shape
    if w.shape[1] != d or x.ndim != 2 or x.shape[1] != m or g.shape != (x.shape[0],):
        raise ValueError(f"shape mismatch: w {tuple(w.shape)}, U_C {tuple(U_C.shape)}, "
                         f"x {tuple(x.shape)}, g {tuple(g.shape)}")
    f = x @ U_C.T + u_q  # (N, d)
    n = x.shape[0]
    coef = g[None, :] * phi_prime(w @ f.T, c_minus, c_plus)  # (K, N): g h'
    wdot = coef @ f / n
    pf = f @ U_C  # per-sample U_C^T f
    pq = f @ u_q  # per-sample u_q^T f
    vdot = coef @ pf / n
    xdot = coef @ pq / n

    def se(feat, mean):
        second = (coef ** 2) @ (feat ** 2) / n
        return torch.sqrt(torch.clamp(second - mean ** 2, min=0) * n / (n - 1) / n)

    return {"w_dot": wdot, "w_dot_se": se(f, wdot), "v_dot": vdot, "v_dot_se": se(pf, vdot),
            "xi_dot": xdot, "xi_dot_se": se(pq[:, None], xdot[..., None])[..., 0]}


def per_node_objective(w: torch.Tensor, U_C, u_q, x, g, c_minus: float = 0.0, c_plus: float = 1.0):
    """The per-hidden-node objective of App. A.1, J(w) = E[g phi(w^T f)] (MC average)."""
    _check_node_inputs("per_node_objective", w, U_C, u_q, x, g, c_minus, c_plus)
    f = x @ U_C.T + u_q
    return (g[None, :] * phi(torch.atleast_2d(w) @ f.T, c_minus, c_plus)).mean(1)


def lemma1_expectations(v: torch.Tensor, xi: torch.Tensor, x: torch.Tensor, psi):
    """MC estimates of (E[x psi(v^T x + xi)], E[psi(v^T x + xi)]) for K parameter sets.
    v: (K, M), xi: (K,), psi: callable on tensors.  Returns means (K, M), (K,) and their SEs."""
    chk.finite_array("v", v, ndim=(1, 2))
    chk.finite_array("xi", xi, ndim=(0, 1))
    if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() == 2
            and x.shape[0] >= 2 and bool(torch.isfinite(x).all())):
        raise ValueError(f"x must be a finite floating tensor (N >= 2, M), got "
                         f"{chk.describe(x)}")
    chk.function("psi", psi)
    v = torch.atleast_2d(torch.as_tensor(v, dtype=torch.float64))
    xi = torch.atleast_1d(torch.as_tensor(xi, dtype=torch.float64))
    if v.shape[1] != x.shape[1] or xi.shape != (v.shape[0],):
        raise ValueError(f"shape mismatch: v {tuple(v.shape)}, xi {tuple(xi.shape)}, x {tuple(x.shape)}")
    if torch.any(torch.linalg.norm(v, dim=1) == 0):
        raise ValueError("v must be nonzero (Lemma 1 assumes v != 0)")
    n = x.shape[0]
    p = psi(v @ x.T + xi[:, None])  # (K, N)
    ex = p @ x / n
    ep = p.mean(1)
    ex_se = torch.sqrt(torch.clamp((p ** 2) @ (x ** 2) / n - ex ** 2, min=0) / (n - 1))
    ep_se = p.std(1, unbiased=True) / math.sqrt(n)
    return ex, ep, ex_se, ep_se


#==================================================================================================
# Section 4 / Appendix A.4.1: Eqn. 7, Theorem 4, Lemmas 5-6, entropy and rank dynamics
#==================================================================================================
# JoMA Eqn. 7: the reduced dynamics of one (or K) MLP node(s) with exp self-attention.
#
#     v_dot  ∝  (mu - v) ∘ exp(v^2 / 2)                                  (Eqn. 7, K = 1)
#
# and, for K hidden nodes sharing one exp attention (Theorem 1: z = 1/2 sum_k v_k^2 + c, the
# constant c absorbed into the common factor),
#
#     v_k_dot  ∝  (mu_k - v_k) ∘ exp(z),   z = 1/2 sum_k v_k^2            (k = 1..K).
#
# The "∝" is a positive common scalar factor; `factor(t, V)` supplies any positive one (default 1).
# `attention=False` drops the attention term exp(.) (the no-attention control v_dot = mu - v).
#
# This is a reduced ODE, so it is integrated with scipy's `solve_ivp` in float64 numpy (no torch).
# `state="v"` integrates v itself (Eqn. 7 literally); `state="deviation"` integrates e = v - mu,
# the same ODE after a translation of the origin, which keeps the relative precision of
# delta = 1 - v/mu = -e/mu down to tiny delta (the fixed point v = mu is approached geometrically,
# so `1 - v/mu` computed from v loses digits once delta < ~1e-7).

@dataclass(frozen=True)
class SpeedRun:
    """Output of `simulate_eqn7`.

    t     -- (T,) output times (t[0] = 0).
    v     -- (T, d) for one node, (T, K, d) for K nodes: v(t).
    delta -- same shape: delta(t) = 1 - v(t)/mu, computed from the integrated state (precise
             to relative solver tolerance with state="deviation").
    mu    -- the targets, shape (d,) or (K, d).
    nfev  -- right-hand-side evaluations used.
    """

    t: np.ndarray
    v: np.ndarray
    delta: np.ndarray
    mu: np.ndarray
    nfev: int


def _as_finite(name, x, ndim_ok=(1, 2)):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim not in ndim_ok:
        raise ValueError(f"{name} must be a 1-d (d,) or 2-d (K, d) array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a}")
    return a


def simulate_eqn7(mu, v0, t_end: float, *, n_points: int = 200, t_eval=None,
                  attention: bool = True, factor: Callable[[float, np.ndarray], float] | None = None,
                  state: str = "v", rtol: float = 1e-11, atol: float = 1e-13,
                  method: str = "DOP853") -> SpeedRun:
    """Integrate Eqn. 7 from v(0) = v0 to t_end.

    mu      -- targets, (d,) (one node) or (K, d) (K nodes sharing one exp attention); every
               component must be > 0 (Theorem 4's case "mu > 0").
    v0      -- initial v, same shape as mu; r0 = v0/mu must differ from 1 in every component
               (delta(0) = 0 would be a component already converged: ln delta(0) undefined).
    t_end   -- horizon, finite and > 0.
    n_points-- number of output times, uniformly spaced on [0, t_end] (ignored if t_eval given).
    t_eval  -- explicit increasing output times in [0, t_end] starting at 0.
    attention -- False drops exp(.): the control dynamics v_dot = factor * (mu - v).
    factor  -- callable (t, V) -> positive finite scalar: the common factor hidden in "∝"
               (V has the shape of mu). Default: 1.
    state   -- "v" (integrate v) or "deviation" (integrate e = v - mu; same ODE).
    rtol, atol -- solver tolerances (atol is scaled by mu's size for state="v"; for
               state="deviation" it is applied to e, use a tiny value such as 1e-300).
    """
    mu = _as_finite("mu", mu)
    v0 = _as_finite("v0", v0)
    if v0.shape != mu.shape:
        raise ValueError(f"v0 must have the shape of mu {mu.shape}, got {v0.shape}")
    if np.any(mu <= 0):
        raise ValueError(f"mu must be > 0 componentwise (Theorem 4 treats mu > 0), got {mu}")
    r0 = v0 / mu
    if np.any(r0 == 1.0):
        raise ValueError("v0/mu must differ from 1 in every component (delta(0) != 0), got "
                         f"r0 = {r0}")
    t_end = float(t_end)
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be finite and > 0, got {t_end}")
    if state not in ("v", "deviation"):
        raise ValueError(f"state must be 'v' or 'deviation', got {state!r}")
    if not (0 < rtol < 1) or not (atol >= 0):
        raise ValueError(f"need 0 < rtol < 1 and atol >= 0, got rtol={rtol}, atol={atol}")
    if t_eval is None:
        chk.integer("n_points", n_points, lo=2, hi=10 ** 6)
        t_eval = np.linspace(0.0, t_end, int(n_points))
    else:
        t_eval = np.asarray(t_eval, dtype=np.float64)
        if (t_eval.ndim != 1 or t_eval.size < 2 or t_eval[0] != 0.0 or np.any(np.diff(t_eval) <= 0)
                or t_eval[-1] > t_end or not np.all(np.isfinite(t_eval))):
            raise ValueError("t_eval must be finite, strictly increasing, start at 0 and end "
                             f"<= t_end = {t_end}")

    shape = mu.shape
    mu_f = mu.ravel()

    def common(t, v):
        if factor is None:
            return 1.0
        c = float(factor(t, v.reshape(shape)))
        if not (np.isfinite(c) and c > 0):
            raise ValueError(f"factor(t, V) must be a positive finite scalar, got {c} at t={t}")
        return c

    def attn(v):
        if not attention:
            return 1.0
        if mu.ndim == 1:
            return np.exp(0.5 * v * v)
        z = 0.5 * np.sum(v.reshape(shape) ** 2, axis=0)  # shared attention logits, (d,)
        return np.broadcast_to(np.exp(z), shape).ravel()

    if state == "v":
        y0 = v0.ravel().copy()

        def rhs(t, y):
            return common(t, y) * (mu_f - y) * attn(y)
        atol_eff = atol * max(1.0, float(np.max(np.abs(mu))))
    else:
        y0 = (v0 - mu).ravel()

        def rhs(t, y):
            v = mu_f + y
            return -common(t, v) * y * attn(v)
        atol_eff = atol

    sol = solve_ivp(rhs, (0.0, t_end), y0, method=method, t_eval=t_eval, rtol=rtol,
                    atol=atol_eff, dense_output=False)
    if not sol.success:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    y = sol.y.T  # (T, K*d)
    if state == "v":
        v = y
        delta = 1.0 - v / mu_f
    else:
        v = mu_f + y
        delta = -y / mu_f
    T = y.shape[0]
    return SpeedRun(t=sol.t, v=v.reshape((T,) + shape), delta=delta.reshape((T,) + shape),
                    mu=mu, nfev=int(sol.nfev))


def entropy_softmax_sq(v) -> np.ndarray:
    """entropy(softmax(v^2)) along the last axis (nats): Fig. 4 (right)'s attention entropy."""
    va = chk.finite_array("v", v)
    if va.ndim < 1 or va.shape[-1] < 1:
        raise ValueError(f"v must have a last axis of size >= 1, got shape {va.shape}")
    a = np.asarray(v, dtype=np.float64) ** 2
    a = a - a.max(axis=-1, keepdims=True)
    p = np.exp(a)
    p /= p.sum(axis=-1, keepdims=True)
    return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)


def stable_rank(V) -> np.ndarray:
    """||V||_F^2 / ||V||_2^2 of the last two axes (batched)."""
    Va = chk.finite_array("V", V)
    if Va.ndim < 2 or Va.shape[-1] < 1 or Va.shape[-2] < 1:
        raise ValueError(f"V must have at least 2 non-empty axes, got shape {Va.shape}")
    if np.any(np.abs(Va).max(axis=(-2, -1)) == 0):
        raise ValueError("V must not be a zero matrix (its stable rank is undefined)")
    return measure.stable_rank(torch.as_tensor(np.asarray(V, dtype=np.float64))).numpy()


#==================================================================================================
# Sections 4-7 with trained transformers: Table 1 generator, training-dynamics and hierarchy claims
#==================================================================================================
# JoMA (Tian et al., ICLR 2024), Section 6 "Validation of Alignment between latents and hidden
# nodes" and Table 1: the hierarchical latent generator, producing token sequences together with
# the latent values that generated them (known to the audit, never to the model).
#
# Reading of Section 6 (stated in the claims' `reading`):
#
# * "number of latents per layer (N_s)" and "number of children per latent (N_ch)" with
#   (N_0, N_1) = (10, 20) or (20, 30): a layer above has MORE latents than the layer below, which a
#   tree with N_ch children per latent cannot have (a tree needs N_{s} = N_ch N_{s+1}).  The literal
#   reading consistent with the printed numbers is therefore a layered *DAG* (`structure="dag"`,
#   the default): every latent of layer s (and every class at the top) picks a distinct random
#   combination of N_ch children in the layer below (latents at s = 0 pick tokens among the M - 1
#   non-padding tokens); a latent is on when ANY of its parents is on, passed through the HBLT
#   channel M(rho) of Appendix A.5 (Definition 2):  child = OR(parents) XOR flip,
#   P(flip) = (1 - rho)/2.  With one parent per child this is exactly HBLT(rho); rho = 1 (the
#   default) makes the sequence a deterministic function of the class (the authors' released
#   generator, luckmatters/ssl/real-dataset/decoder_only_hier.py, works this way).
# * `structure="tree"`: the alternative reading "sampled by HBLT" literally: a tree from
#   `sim.joma.make_hblt` sampled by `sim.joma.hblt_sample` (reused, not re-implemented), with
#   `n_top` latents under the class root, class k switching on its own random N_ch-combination of
#   them (q0 in {0, 1}), N_s = n_top N_ch^(top - s) latents in layer s.
# * Sequences: the set of tokens that are on, written at the END of a length-T sequence that is
#   pre-padded with the padding token M - 1 (the authors' layout; the model predicts the class from
#   the last position).  `order="sorted"` (ascending token ids, as the authors' Python set of small
#   ints iterates) or `order="random"` (a random permutation per sample).  More than T tokens on
#   (possible only when rho < 1) keeps a uniformly random subset of T of them (`truncated` counts).
#
# Layers are numbered as in Table 1: s = 0 is the latent layer directly above the tokens, s = 1 the
# one above it, ...; the classes form the top.  Everything uses a local torch.Generator.

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
        raise ValueError(f"cannot draw {n_rows} distinct {k}-combinations out of {pool}")
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
