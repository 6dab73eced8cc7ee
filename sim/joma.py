"""JoMA (Tian et al., ICLR 2024): the training dynamics of Eqn. 2 and the reduced Eqn. 3.

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
from scipy.integrate import solve_ivp

from sim import default_device, make_generator

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
    C = K if C is None else C
    for name, val, lo in (("M_C", M_C, 1), ("K", K, 1), ("N", N, 1), ("C", C, 2),
                          ("tokens", tokens, 1)):
        if not isinstance(val, (int, np.integer)) or val < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {val!r}")
    if d < M_C + 1:
        raise ValueError(f"d must be >= M_C + 1 = {M_C + 1} (room for u_q orthogonal to U_C), got {d}")
    if K > C:
        raise ValueError(f"K must be <= C (node k receives the gradient of class k), got K={K}, C={C}")
    if not concentration > 0:
        raise ValueError(f"concentration must be > 0, got {concentration}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must be a non-empty list of non-negative ints")
    device = default_device() if device is None else torch.device(device)
    U, Q, X, G = [], [], [], []
    for seed in seeds:
        gen = make_generator(seed)  # CPU generator: same numbers on any device
        basis, _ = torch.linalg.qr(torch.randn(d, M_C + 1, generator=gen, dtype=torch.float64))
        U.append(basis[:, :M_C])
        Q.append(basis[:, M_C])
        # P(l | y) ~ Dirichlet(concentration): torch's Dirichlet takes no generator, so draw
        # it from normalised Gammas with ours
        gam = _gamma(torch.full((C, M_C), float(concentration), dtype=torch.float64), gen)
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


def _gamma(alpha: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Gamma(alpha, 1) samples with an explicit generator (Marsaglia-Tsang, boosted for a < 1)."""
    a = alpha + (alpha < 1).to(alpha.dtype)
    d = a - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    out = torch.empty_like(alpha)
    todo = torch.ones_like(alpha, dtype=torch.bool)
    while todo.any():
        x = torch.randn(alpha.shape, generator=gen, dtype=alpha.dtype)
        u = torch.rand(alpha.shape, generator=gen, dtype=alpha.dtype)
        v = (1 + c * x) ** 3
        ok = (v > 0) & (torch.log(u.clamp_min(1e-300)) < 0.5 * x ** 2 + d - d * v
                        + d * torch.log(v.clamp_min(1e-300)))
        take = todo & ok
        out[take] = (d * v)[take]
        todo &= ~ok
    boost = alpha < 1
    if boost.any():
        u = torch.rand(alpha.shape, generator=gen, dtype=alpha.dtype)
        out = torch.where(boost, out * u ** (1.0 / alpha), out)
    return out


def attention_scores(z: torch.Tensor, X: torch.Tensor, attention: str, A: float = 1.0):
    """b = sigma(z) o x / A for each sample (Eqn. 1). z: (S, M_C), X: (S, N, M_C)."""
    if attention == "linear":
        return z[:, None, :] * X
    if attention == "exp":
        return torch.exp(z)[:, None, :] * X / A
    if attention == "softmax":
        e = torch.exp(z - z.max(-1, keepdim=True).values)[:, None, :] * X
        return e / e.sum(-1, keepdim=True)
    raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")


def objective(p: Eqn2Problem, W: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """J = E[sum_k g_{h_k} phi(w_k^T f)] per instance (Appendix A.1, Eqn. 10); shape (S,)."""
    b = attention_scores(z, p.X, p.attention, p.A)
    f = b @ p.U_C.transpose(1, 2) + p.u_q[:, None, :]
    pre = f @ W
    h = pre if p.activation == "linear" else torch.relu(pre)
    return (p.G * h).sum(-1).mean(-1)


def eqn2_velocity(p: Eqn2Problem, W: torch.Tensor, z: torch.Tensor):
    """Right-hand side of Eqn. 2: (dW/dt, dz/dt) with W: (S, d, K), z: (S, M_C)."""
    b = attention_scores(z, p.X, p.attention, p.A)  # (S, N, M_C)
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
                  log_every: int | None = None, blowup: float = 1e6) -> Trajectory:
    """Gradient steps of size eta on Eqn. 2 up to time `horizon` (steps = horizon / eta, which
    must be an integer).  W0 / z0 default to zero initialisation.  Raises BlowUpError when the
    state leaves the finite range |.| < blowup (exp attention blows up in finite time)."""
    S, d, M_C, N, K = p.shape
    if not (eta > 0 and math.isfinite(eta)):
        raise ValueError(f"eta must be finite and > 0, got {eta}")
    if not (horizon > 0 and math.isfinite(horizon)):
        raise ValueError(f"horizon must be finite and > 0, got {horizon}")
    steps = int(round(horizon / eta))
    if steps < 1 or abs(steps * eta - horizon) > 1e-9 * horizon:
        raise ValueError(f"horizon / eta must be a positive integer, got {horizon} / {eta}")
    log_every = log_every or steps
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
        b = attention_scores(z, p.X, p.attention, p.A)
        logs.append((step * eta, (Ut @ W).cpu(), (p.u_q[:, None, :] @ W)[:, 0].cpu(), z.cpu(),
                     b.mean(1).cpu(), Qv.cpu().clone(), Qz.cpu().clone()))

    log(0)
    for step in range(1, steps + 1):
        W_dot, z_dot = eqn2_velocity(p, W, z)
        dW, dz = eta * W_dot, eta * z_dot
        dv = Ut @ dW
        Qv += (dv * dv).sum(-1)
        Qz += dz * dz
        W = W + dW
        z = z + dz
        if step % log_every == 0 or step == steps:
            if not (torch.isfinite(W).all() and torch.isfinite(z).all()
                    and W.abs().max() < blowup and z.abs().max() < blowup):
                raise BlowUpError(f"horizon {horizon} is past the blow-up of the dynamics: the "
                                  f"state left |.| < {blowup:g} by t = {step * eta:g}")
            log(step)
    cols = list(zip(*logs))
    return Trajectory(np.array(cols[0]), *[torch.stack(c).numpy() for c in cols[1:]])


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
    if not (A > 0):
        raise ValueError(f"A must be > 0, got {A}")
    if not (horizon > 0 and math.isfinite(horizon)):
        raise ValueError(f"horizon must be finite and > 0, got {horizon}")
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

    delta = np.asarray(delta, dtype=np.float64)
    c = np.zeros_like(delta) if c is None else np.asarray(c, dtype=np.float64)
    v0 = np.zeros_like(delta) if v0 is None else np.asarray(v0, dtype=np.float64)
    with np.errstate(divide="ignore"):
        tail = math.sqrt(math.pi / 2) * erfc(np.sign(delta) * v0 / math.sqrt(2))
        t = np.where(delta != 0, A * np.exp(-c) * tail / np.abs(delta), np.inf)
    return float(np.min(t))
