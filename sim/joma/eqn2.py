"""Sections 2-3 (Theorems 1-2, Eqns. 1-4, Appendix A.2): the full training dynamics of Eqn. 2.

JoMA (Tian et al., ICLR 2024): the training dynamics of Eqn. 2 (the reduced Eqn. 3: sim.joma.eqn3).

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

import numpy as np
import torch

from sim import default_device, gamma_sample, make_generator
from sim.joma.attention import ATTENTIONS, _attention_scores, _check_exp_logits, _check_zX
from theory import validate as chk

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
    chk.device("device", device)
    chk.float_dtype("dtype", dtype)
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


def _check_problem(where, p):
    if not isinstance(p, Eqn2Problem):
        raise ValueError(f"{where}: p must be an Eqn2Problem (make_problem), got "
                         f"{type(p).__name__}")


def _check_state(where, p, W, z):
    """p an Eqn2Problem, W (S, d, K) and z (S, M_C) finite floating tensors of its shapes."""
    _check_problem(where, p)
    S, d, M_C, N, K = p.shape
    if not (isinstance(W, torch.Tensor) and W.is_floating_point() and tuple(W.shape) == (S, d, K)):
        raise ValueError(f"{where}: W must be a floating tensor (S, d, K) = {(S, d, K)}, got "
                         f"{chk.describe(W)}")
    if not bool(torch.isfinite(W).all()):
        raise ValueError(f"{where}: W must be finite")
    _check_zX(where, z, p.X)
    if p.attention == "exp":
        _check_exp_logits(where, z)


def _initial(name, x, shape, dev, dt):
    """The initial state: zeros where x is None, else a copy of the finite tensor x of `shape`."""
    if x is None:
        return torch.zeros(shape, device=dev, dtype=dt)
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a tensor of shape {shape} or None, got {chk.describe(x)}")
    x = x.clone().to(dev, dt)
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {shape}, got {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must be finite (a NaN or inf initial state is not a blow-up)")
    return x


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
    _check_problem("simulate_eqn2", p)
    chk.flag("freeze_z", freeze_z)
    S, d, M_C, N, K = p.shape
    eta = chk.number("eta", eta, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    blowup = chk.number("blowup", blowup, lo=0, lo_open=True)
    steps = chk.steps("simulate_eqn2", horizon, eta)
    log_every = steps if log_every is None else chk.integer("log_every", log_every, lo=1)
    dev, dt = p.U_C.device, p.U_C.dtype
    W = _initial("W0", W0, (S, d, K), dev, dt)
    z = _initial("z0", z0, (S, M_C), dev, dt)
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
    _check_problem("simulate_eqn2_softmax_budget", p)
    chk.flag("freeze_z", freeze_z)
    if p.attention != "softmax":
        raise ValueError(f"the budget is for softmax attention, got {p.attention!r}")
    S, d, M_C, N, K = p.shape
    eta = chk.number("eta", eta, lo=0, lo_open=True)
    horizon = chk.number("horizon", horizon, lo=0, lo_open=True)
    steps = chk.steps("simulate_eqn2_softmax_budget", horizon, eta)
    dev, dt = p.U_C.device, p.U_C.dtype
    W = _initial("W0", W0, (S, d, K), dev, dt)
    z = _initial("z0", z0, (S, M_C), dev, dt)
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
