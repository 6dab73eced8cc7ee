"""Topic structure (Li, Li & Risteski, ICML 2023): simulators (torch float64).

* Exact Assumption-1 reference: `subset_moments` enumerates all tau-subsets S of the T topics and
  returns M = E_S[p~_S p~_S^T], C = E_S[P_S p~_S^T], m = E_S[p~_S], mP = E_S[P_S]; under uniform
  attention the MLM squared loss is the quadratic `infinite_loss` in (W, b), minimised (with ridge
  lambda ||W||_F^2) at `ridge_minimiser`.
* Finite documents: `sample_documents` (theory model: tau distinct topics; LDA: Dirichlet(0.1)
  topic weights, N uniform in 100..150), `mask_tokens` (p_m, p_c, p_r), the one-layer transformer
  of eqs. 5-7 (`init_params`, `forward`) batched over seeds S and documents D, `mlm_loss`
  (squared / cross-entropy) with optional ridge, `train`, and `attention_stats` from word ids.
* Stage 2: `stage2_loss`, the Assumption-1 loss of an explicit three-value attention model
  (same word beta, same topic other word alpha, otherwise 1) with W^V frozen.

Index 0 is [MASK]; words are 1..Tv; topic(i) = ceil(i / v).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from sim import default_device, gamma_sample
from theory import validate as chk

F64 = torch.float64


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------
_UNSET = object()  # check_params: a parameter not given (None, given, is an invalid value)


def check_params(T=_UNSET, v=_UNSET, tau=_UNSET, p_m=_UNSET, p_c=_UNSET, p_r=_UNSET, *,
                 none_ok=()):
    """Raise ValueError naming the parameter and its valid range: T, v, tau integers >= 1 with
    tau <= T; p_m, p_c, p_r in (0, 1) with p_c + p_r < 1.  A parameter not given is not checked;
    one given as None is an error unless it is named in `none_ok` (an optional one)."""
    if isinstance(none_ok, (str, bytes)) or not isinstance(none_ok, (tuple, list, set, frozenset)):
        raise ValueError(f"none_ok must be a tuple of parameter names, got {none_ok!r}")
    for name, val in (("T", T), ("v", v), ("tau", tau), ("p_m", p_m), ("p_c", p_c), ("p_r", p_r)):
        if val is None and name not in none_ok:
            raise ValueError(f"{name} must be given (a number), got None")
    T, v, tau, p_m, p_c, p_r = (None if x is _UNSET else x for x in (T, v, tau, p_m, p_c, p_r))
    for name, val in (("T", T), ("v", v)):
        if val is not None:
            chk.integer(name, val, lo=1)
    if tau is not None:
        chk.integer("tau", tau, lo=1)
        if T is not None and tau > T:
            raise ValueError(f"tau must be <= T (tau distinct topics of T), got tau={tau}, T={T}")
    for name, val in (("p_m", p_m), ("p_c", p_c), ("p_r", p_r)):
        if val is not None:
            chk.number(name, val, lo=0, hi=1, lo_open=True, hi_open=True)
    if p_c is not None and p_r is not None and not float(p_c) + float(p_r) < 1.0:
        raise ValueError(f"p_c + p_r must be < 1 (some masked positions must show [MASK]), "
                         f"got p_c + p_r = {float(p_c) + float(p_r)}")


def topic_of(n_words: int, v: int) -> np.ndarray:
    """topic(i) for i = 0..n_words (0 for [MASK])."""
    chk.integer("n_words", n_words, lo=0, hi=chk.MAX_ELEMENTS - 1)
    chk.integer("v", v, lo=1)
    i = np.arange(n_words + 1)
    return np.where(i == 0, 0, (i - 1) // v + 1)


# --------------------------------------------------------------------------------------------
# Assumption 1: exact moments over all tau-subsets
# --------------------------------------------------------------------------------------------
def masked_distribution(P: np.ndarray, p_m, p_c, p_r) -> np.ndarray:
    """p~ = s e_0 + a P + p_m p_r / (Tv) for rows P (..., Tv+1) with P[..., 0] = 0."""
    check_params(p_m=p_m, p_c=p_c, p_r=p_r)
    Pa = chk.finite_array("P", P, lo=0)
    if Pa.ndim < 1 or Pa.shape[-1] < 2:
        raise ValueError(f"P must be rows (..., Tv+1) with Tv >= 1, got shape {Pa.shape}")
    n = P.shape[-1]
    a = 1 - (1 - p_c) * p_m
    s = p_m * (1 - p_c - p_r)
    out = a * P + p_m * p_r / (n - 1)
    out[..., 0] = s
    return out


def subset_moments(T, v, tau, p_m, p_c, p_r, max_subsets: int = 200_000) -> dict:
    """Moments of (P_S, p~_S) over the uniform distribution of tau-subsets S, by enumeration."""
    check_params(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r)
    chk.integer("max_subsets", max_subsets, lo=1, hi=chk.MAX_ELEMENTS)
    K = math.comb(T, tau)
    if K > max_subsets:
        raise ValueError(f"C(T, tau) = {K} subsets exceeds max_subsets = {max_subsets}")
    n = T * v + 1
    chk.elements("subset_moments", subsets=K, T_v_plus_1=n)
    chk.elements("subset_moments", T_v_plus_1=n, T_v_plus_1_=n)
    ind = np.zeros((K, T))
    for k, S in enumerate(itertools.combinations(range(T), tau)):
        ind[k, list(S)] = 1.0
    P = np.zeros((K, n))
    P[:, 1:] = np.repeat(ind, v, axis=1) / (tau * v)
    Pt = masked_distribution(P, p_m, p_c, p_r)
    return dict(M=Pt.T @ Pt / K, C=P.T @ Pt / K, m=Pt.mean(0), mP=P.mean(0),
                EPP=float((P * P).sum(1).mean()), n=n, T=T, v=v, tau=tau, K=K)


def infinite_loss(W, mom: dict, b=None, lam: float = 0.0):
    """Assumption-1 MLM squared loss under uniform attention, for W (..., n, n), b (..., n):
    E_S E_{y ~ P_S} ||W p~_S + b - e_y||^2 + lam ||W||_F^2
      = tr(W M W^T) - 2 tr(W C^T) + 2 b^T W m - 2 b^T mP + ||b||^2 + 1 + lam ||W||_F^2."""
    n = _check_moments("infinite_loss", mom, need_b=b is not None)
    chk.number("lam", lam, lo=0)
    if not hasattr(W, "shape") or len(W.shape) < 2 or tuple(W.shape[-2:]) != (n, n):
        raise ValueError(f"infinite_loss: W must be an array (..., n, n) with n = {n} (mom's n), "
                         f"got {getattr(W, 'shape', type(W).__name__)}")
    if b is not None and (not hasattr(b, "shape") or len(b.shape) < 1 or b.shape[-1] != n):
        raise ValueError(f"infinite_loss: b must be None or an array (..., n) with n = {n}, got "
                         f"{getattr(b, 'shape', type(b).__name__)}")
    W = torch.as_tensor(W, dtype=F64)
    if not bool(torch.isfinite(W).all()):
        raise ValueError("infinite_loss: W must be finite in every entry")
    if b is not None and not bool(torch.isfinite(torch.as_tensor(b, dtype=F64)).all()):
        raise ValueError("infinite_loss: b must be finite in every entry")
    M = torch.as_tensor(mom["M"], dtype=F64, device=W.device)
    C = torch.as_tensor(mom["C"], dtype=F64, device=W.device)
    out = ((W @ M) * W).sum((-2, -1)) - 2 * (W * C).sum((-2, -1)) + 1.0
    if b is not None:
        b = torch.as_tensor(b, dtype=F64, device=W.device)
        m = torch.as_tensor(mom["m"], dtype=F64, device=W.device)
        mP = torch.as_tensor(mom["mP"], dtype=F64, device=W.device)
        out = out + 2 * (b * (W @ m)).sum(-1) - 2 * (b * mP).sum(-1) + (b * b).sum(-1)
    if lam:
        out = out + lam * (W * W).sum((-2, -1))
    return out


def _check_moments(where, mom, need_b=False) -> int:
    """mom a subset_moments dict (M, C (n, n) and n; m, mP (n,) when need_b): its n."""
    keys = ("M", "C", "n") + (("m", "mP") if need_b else ())
    if not isinstance(mom, dict) or any(k not in mom for k in keys):
        raise ValueError(f"{where}: mom must be a dict from subset_moments (keys {keys}), got "
                         f"{type(mom).__name__}")
    n = chk.integer(f"{where}: mom['n']", mom["n"], lo=2)
    for k in ("M", "C"):
        if tuple(np.shape(mom[k])) != (n, n):
            raise ValueError(f"{where}: mom['{k}'] must be (n, n) = ({n}, {n}), got "
                             f"{np.shape(mom[k])}")
    return n


def ridge_minimiser(mom: dict, lam: float) -> np.ndarray:
    """argmin_W infinite_loss(W) + lam ||W||_F^2 = C (M + lam I)^-1 (b = 0)."""
    _check_moments("ridge_minimiser", mom)
    chk.number("lam", lam, lo=0, lo_open=True)
    n = mom["n"]
    try:
        return np.linalg.solve((mom["M"] + lam * np.eye(n)).T, mom["C"].T).T
    except np.linalg.LinAlgError:
        raise ValueError(f"lam = {lam:g} is too small: M + lam I is singular in float64 (use "
                         "min_norm_minimiser for the lam -> 0 limit)") from None


def min_norm_minimiser(mom: dict) -> np.ndarray:
    """The minimum-Frobenius-norm minimiser C M^+ (the lam -> 0 limit of the ridge path)."""
    _check_moments("min_norm_minimiser", mom)
    return mom["C"] @ np.linalg.pinv(mom["M"], rcond=1e-12, hermitian=True)


def gd_infinite(W0, mom, steps: int, lr: float, lam: float = 0.0):
    """Full-batch gradient descent on the Assumption-1 loss (closed-form gradient
    2 (W M - C + lam W)), batched over a leading dim of W0."""
    n = _check_moments("gd_infinite", mom)
    chk.integer("steps", steps, lo=0, hi=chk.MAX_STEPS)
    chk.number("lr", lr, lo=0, lo_open=True)
    chk.number("lam", lam, lo=0)
    W0a = chk.finite_array("W0", W0)
    if W0a.ndim < 2 or W0a.shape[-2:] != (n, n):
        raise ValueError(f"gd_infinite: W0 must be (..., n, n) with n = {n}, got {W0a.shape}")
    W = np.array(W0, dtype=np.float64)
    M, C = mom["M"], mom["C"]
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            W -= lr * 2 * (W @ M - C + lam * W)
    if not np.all(np.isfinite(W)):  # diverged: lr is past the stable range
        top = float(np.linalg.eigvalsh((M + M.T) / 2).max()) + lam
        raise ValueError(f"gd_infinite: lr = {lr:g} makes gradient descent diverge to inf/NaN "
                         f"(it is stable for lr < 1/(lambda_max(M) + lam) = {1 / top:.3g})")
    return W


# --------------------------------------------------------------------------------------------
# Finite documents
# --------------------------------------------------------------------------------------------
def sample_documents(gen: torch.Generator, D: int, T: int, v: int, *, model: str = "theory",
                     tau: int | None = None, N: int | None = None, N_range=(100, 150),
                     dirichlet: float = 0.1):
    """D documents. Returns (words (D, Nmax) long in 1..Tv, 0 at padding; valid (D, Nmax) bool).

    model="theory": tau distinct topics uniformly from [T], each position picks one of them
    uniformly, then a word uniformly from that topic; N positions (fixed).
    model="lda": theta ~ Dirichlet(dirichlet 1_T), each position draws a topic from theta then a
    word uniformly from it; N uniform in N_range (inclusive) unless N is given."""
    chk.generator("gen", gen)
    _check_documents(D, T, v, model, tau, N, N_range, dirichlet)
    if model == "theory":
        topics = torch.rand(D, T, generator=gen).argsort(-1)[:, :tau]  # tau distinct topics
        pick = torch.randint(0, tau, (D, N), generator=gen)
        t = topics.gather(1, pick)
        lengths = torch.full((D,), N)
    elif model == "lda":
        lo, hi = (N, N) if N is not None else N_range
        theta = gamma_sample(torch.full((D, T), float(dirichlet), dtype=F64), gen)
        theta = theta / theta.sum(-1, keepdim=True)
        lengths = torch.randint(lo, hi + 1, (D,), generator=gen)
        t = torch.multinomial(theta, hi, replacement=True, generator=gen)
    Nmax = t.shape[1]
    words = t * v + torch.randint(1, v + 1, t.shape, generator=gen)
    valid = torch.arange(Nmax)[None, :] < lengths[:, None]
    return torch.where(valid, words, torch.zeros_like(words)), valid


def _check_documents(D, T, v, model, tau, N, N_range, dirichlet) -> int:
    """sample_documents' checks (also run by train before any work): the longest document."""
    check_params(T=T, v=v, tau=tau, none_ok=("tau",))
    chk.integer("D", D, lo=1)
    if model not in ("theory", "lda"):
        raise ValueError(f"model must be 'theory' or 'lda', got {model!r}")
    if model == "theory":
        if tau is None or N is None:
            raise ValueError("model='theory' needs tau and N")
        Nmax = chk.integer("N", N, lo=1)
        long_name = "N"
    else:
        chk.number("dirichlet", dirichlet, lo=0, lo_open=True)
        if N is not None:
            Nmax = chk.integer("N", N, lo=1)
            long_name = "N"
        else:
            long_name = "N_range_hi"
            if (isinstance(N_range, (str, bytes)) or not hasattr(N_range, "__len__")
                    or len(N_range) != 2):
                raise ValueError(f"N_range must be a pair (lo, hi) of integers with 1 <= lo <= hi, "
                                 f"got {N_range!r}")
            lo = chk.integer("N_range[0]", N_range[0], lo=1)
            Nmax = chk.integer("N_range[1]", N_range[1], lo=1)
            if not 1 <= lo <= Nmax:
                raise ValueError(f"N_range must satisfy 1 <= lo <= hi, got {tuple(N_range)}")
    chk.elements("sample_documents", D=D, T=T)
    chk.elements("sample_documents", D=D, **{long_name: Nmax})
    return Nmax


def _check_tokens(where, tokens, valid, name="tokens", S=None, valid_name="valid"):
    """tokens an integer tensor (D, N) or (S, D, N) and valid a bool tensor of its shape."""
    if not (isinstance(tokens, torch.Tensor) and not tokens.is_floating_point()
            and tokens.dtype != torch.bool and tokens.dim() in (2, 3)):
        raise ValueError(f"{where}: {name} must be an integer tensor (D, N) or (S, D, N), got "
                         f"{chk.describe(tokens)}")
    if S is not None and tokens.dim() == 3 and tokens.shape[0] != S:
        raise ValueError(f"{where}: {name} (S, D, N) must have S = {S} seeds, got "
                         f"{tuple(tokens.shape)}")
    if not (isinstance(valid, torch.Tensor) and valid.dtype == torch.bool
            and valid.shape == tokens.shape):
        raise ValueError(f"{where}: {valid_name} must be a bool tensor of {name}'s shape "
                         f"{tuple(tokens.shape)}, got {chk.describe(valid)}")


def mask_tokens(gen: torch.Generator, words, valid, p_m, p_c, p_r, n_words: int):
    """BERT masking: each valid position is masked w.p. p_m; a masked position keeps its word
    w.p. p_c, becomes a uniform word of [n_words] w.p. p_r, else [MASK] = 0.
    Returns (tokens, masked) with masked a bool tensor."""
    chk.generator("gen", gen)
    check_params(p_m=p_m, p_c=p_c, p_r=p_r)
    _check_tokens("mask_tokens", words, valid, "words")
    chk.integer("n_words", n_words, lo=1)
    masked = (torch.rand(words.shape, generator=gen) < p_m) & valid
    kind = torch.rand(words.shape, generator=gen)
    rand_word = torch.randint(1, n_words + 1, words.shape, generator=gen)
    tok = torch.where(kind < p_c, words, torch.where(kind < p_c + p_r, rand_word,
                                                     torch.zeros_like(words)))
    return torch.where(masked, tok, words), masked


# --------------------------------------------------------------------------------------------
# The one-layer transformer of eqs. 5-7
# --------------------------------------------------------------------------------------------
@dataclass
class Switches:
    onehot: bool = False  # W^E = I frozen (d = Tv + 1), eq. 7
    uniform: bool = False  # W^K = W^Q = 0 frozen (uniform attention)
    freeze_v: bool = False  # W^V (and b^V) frozen at their initial values
    biases: bool = False  # add b^K, b^Q, b^V (Section 6)
    freeze_bpred: bool = False

    def __post_init__(self):
        for name in ("onehot", "uniform", "freeze_v", "biases", "freeze_bpred"):
            chk.flag(name, getattr(self, name))


PARAMS = ("WE", "WK", "WQ", "WV", "bK", "bQ", "bV", "bpred")


def init_params(gen: torch.Generator, S: int, n: int, d: int | None = None, *, sw: Switches = None,
                scale: float = 0.02, positive: bool = False, WV=None, device=None) -> dict:
    """Parameters with a leading seed dim S.  positive=True: near-zero positive init
    (|N(0, scale^2)|), else N(0, scale^2).  WE is N(0, 1/d) unless one-hot.  WV overrides W^V."""
    chk.device("device", device)
    chk.generator("gen", gen)
    _check_switches(sw)
    sw = sw or Switches()
    device = default_device() if device is None else torch.device(device)
    chk.integer("S", S, lo=1)
    chk.integer("n", n, lo=2)
    if sw.onehot:
        d = n
    chk.integer("d", d, lo=1)
    chk.number("scale", scale, lo=0, lo_open=True)
    chk.flag("positive", positive)
    chk.elements("init_params", S=S, d=d, d_=d)
    chk.elements("init_params", S=S, d=d, n=n)
    if WV is not None:
        shape = tuple(chk.finite_array("WV", WV).shape)
        try:
            ok = torch.broadcast_shapes(shape, (S, d, d)) == (S, d, d)
        except RuntimeError:
            ok = False
        if not ok:
            raise ValueError(f"WV must be None or a finite array broadcastable to (S, d, d) = "
                             f"({S}, {d}, {d}), got shape {shape}")

    def rnd(*shape, s=scale, pos=positive):
        x = s * torch.randn(S, *shape, generator=gen, dtype=F64)
        return (x.abs() if pos else x).to(device)

    # near-zero positive init is for the attention matrices (W^K, W^Q, W^V) only; a trainable
    # W^E is always N(0, 1/d) (an all-positive W^E would make every embedding pair correlated)
    p = {"WE": torch.eye(n, dtype=F64, device=device).expand(S, n, n).clone() if sw.onehot
         else rnd(d, n, s=1 / math.sqrt(d), pos=False),
         "WK": torch.zeros(S, d, d, dtype=F64, device=device) if sw.uniform else rnd(d, d),
         "WQ": torch.zeros(S, d, d, dtype=F64, device=device) if sw.uniform else rnd(d, d),
         "WV": rnd(d, d) if WV is None else torch.as_tensor(WV, dtype=F64).expand(S, d, d).clone().to(device),
         "bK": torch.zeros(S, d, dtype=F64, device=device),
         "bQ": torch.zeros(S, d, dtype=F64, device=device),
         "bV": torch.zeros(S, d, dtype=F64, device=device),
         "bpred": torch.zeros(S, n, dtype=F64, device=device)}
    return p


def _check_switches(sw, none=True):
    if not (isinstance(sw, Switches) or (none and sw is None)):
        raise ValueError(f"sw must be a Switches{' or None' if none else ''}, got {sw!r}")


def trainable(sw: Switches) -> tuple:
    """The names of the parameters the switches leave trainable."""
    _check_switches(sw, none=False)
    names = ["WV", "bpred"]
    if not sw.onehot:
        names.append("WE")
    if not sw.uniform:
        names += ["WK", "WQ"]
    if sw.biases:
        names += ["bV"] + ([] if sw.uniform else ["bK", "bQ"])
    if sw.freeze_v:
        names = [x for x in names if x not in ("WV", "bV")]
    if sw.freeze_bpred:
        names.remove("bpred")
    return tuple(names)


def forward(p: dict, tokens, valid, sw: Switches = None, return_attention: bool = False):
    """f(X) = W^E^T W^V Z softmax_col((W^K Z)^T (W^Q Z) / sqrt d) + b^pred, Z = W^E X (eqs. 5-6),
    with optional biases.  tokens, valid: (S, D, N) or (D, N) (broadcast over seeds).
    Returns out (S, D, N, n) (position-major) and optionally A (S, D, N_key, N_query)."""
    _check_switches(sw)
    if not (isinstance(p, dict) and all(isinstance(p.get(k), torch.Tensor) for k in PARAMS)):
        raise ValueError(f"forward: p must be a dict of tensors with keys {PARAMS} (init_params), "
                         f"got {type(p).__name__}")
    _check_tokens("forward", tokens, valid, S=p["WV"].shape[0])
    chk.flag("return_attention", return_attention)
    n = p["WE"].shape[-1]
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= n):
        raise ValueError(f"forward: tokens must be ids in [0, {n - 1}] (n = WE's columns), got "
                         f"[{int(tokens.min())}, {int(tokens.max())}]")
    return _forward(p, tokens, valid, sw, return_attention)


def _forward(p: dict, tokens, valid, sw: Switches = None, return_attention: bool = False):
    sw = sw or Switches()
    S = p["WV"].shape[0]
    if tokens.dim() == 2:
        tokens = tokens.expand(S, *tokens.shape)
        valid = valid.expand(S, *valid.shape)
    WE = p["WE"]
    keymask = valid[..., :, None]  # (S, D, N_key, 1)
    if sw.uniform:
        # every query reads the mean value of the document's valid keys: with h the histogram
        # of the valid tokens, sum_j Z_j = W^E h, so the mean is (W^V W^E h + |valid| b^V) / cnt
        # (the same sums as over the (D, N, d) embeddings of every position, grouped by token;
        # the cost no longer grows with N x d)
        vf = valid.to(F64)
        h = torch.zeros(*tokens.shape[:-1], WE.shape[-1], dtype=F64, device=tokens.device)
        h = h.scatter_add(-1, tokens, vf)  # (S, D, n)
        nvalid = vf.sum(-1)[..., None]  # (S, D, 1)
        cnt = nvalid.clamp_min(1)
        mean_v = (h @ WE.transpose(1, 2)) @ p["WV"].transpose(1, 2)  # (S, D, d)
        if sw.biases:
            mean_v = mean_v + nvalid * p["bV"][:, None]
        mean_v = (mean_v / cnt)[..., None, :]  # (S, D, 1, d)
        out = (mean_v @ WE[:, None] + p["bpred"][:, None, None]).expand(*tokens.shape, WE.shape[-1])
        if not return_attention:
            return out
        A = (keymask.to(F64) / cnt[..., None]).expand(*keymask.shape[:-1], tokens.shape[-1])
        return out, A
    else:
        # W Z for Z = W^E X (the embedded positions): the rows of (W W^E)^T picked by the
        # tokens, the same products as through the (D, N, d) embeddings without multiplying
        # every position's embedding by W
        idx = torch.arange(S, device=tokens.device)[:, None, None]
        WEt = WE.transpose(1, 2)  # (S, n, d)

        def embedded(W, b):  # (S, D, N, d)
            out = (WEt @ W.transpose(1, 2))[idx, tokens]
            return out + b[:, None, None] if sw.biases else out

        Vv, K, Q = (embedded(p[w], p[b]) for w, b in (("WV", "bV"), ("WK", "bK"), ("WQ", "bQ")))
        sc = K @ Q.transpose(-1, -2) / math.sqrt(WE.shape[1])  # (S, D, key, query)
        sc = sc.masked_fill(~keymask, float("-inf"))
        A = torch.softmax(sc, dim=-2)
    attn = A.transpose(-1, -2) @ Vv  # (S, D, query, d)
    out = attn @ WE[:, None] + p["bpred"][:, None, None]  # W^E^T attn: (S, D, N, n)
    return (out, A) if return_attention else out


def mlm_loss(out, words, masked, loss: str = "squared"):
    """Eq. 1: per document (1/|M|) sum_{j in M} loss(f_:j, e_{w_j}), averaged over documents with
    |M| > 0; returns (S,).  squared: ||f - e_w||^2 over all Tv + 1 coordinates; ce: -log softmax."""
    if loss not in ("squared", "ce"):
        raise ValueError(f"loss must be 'squared' or 'ce', got {loss!r}")
    if not (isinstance(out, torch.Tensor) and out.is_floating_point() and out.dim() == 4):
        raise ValueError(f"mlm_loss: out must be a floating tensor (S, D, N, n) (forward), got "
                         f"{chk.describe(out)}")
    if not bool(torch.isfinite(out).all()):
        raise ValueError("mlm_loss: out must be finite in every entry")
    _check_tokens("mlm_loss", words, masked, "words", S=out.shape[0], valid_name="masked")
    if words.shape[-2:] != out.shape[1:3]:
        raise ValueError(f"mlm_loss: words must be (D, N) = {tuple(out.shape[1:3])} like out, got "
                         f"{tuple(words.shape)}")
    return _mlm_loss(out, words, masked, loss)


def _mlm_loss(out, words, masked, loss):
    S = out.shape[0]
    if words.dim() == 2:
        words = words.expand(S, *words.shape)
        masked = masked.expand(S, *masked.shape)
    if loss not in ("squared", "ce"):
        raise ValueError(f"loss must be 'squared' or 'ce', got {loss!r}")
    mf = masked.to(F64)
    cnt = mf.sum(-1)
    if out.shape[2] > 1 and out.stride(2) == 0:
        # one output per document expanded over its positions (uniform attention): the sum over
        # the masked positions grouped by word, hm the histogram of the masked words (the same
        # per-document loss, without an (S, D, N, n) product and its backward)
        o = out[:, :, 0]  # (S, D, n)
        hm = torch.zeros(o.shape, dtype=o.dtype, device=o.device).scatter_add(-1, words, mf)
        dot = (o * hm).sum(-1)
        per_doc = (o * o).sum(-1) + 1.0 if loss == "squared" else torch.logsumexp(o, -1)
        doc = (cnt * per_doc - (2 if loss == "squared" else 1) * dot) / cnt.clamp_min(1)
    else:
        pick = out.gather(-1, words[..., None])[..., 0]
        if loss == "squared":
            per = (out * out).sum(-1) - 2 * pick + 1.0
        else:
            per = torch.logsumexp(out, -1) - pick
        doc = (per * mf).sum(-1) / cnt.clamp_min(1)
    has = (cnt > 0).to(F64)
    return (doc * has).sum(-1) / has.sum(-1).clamp_min(1)


def ridge(p: dict, names, lam: float):
    """lam times the squared Frobenius norms of p[names], per seed (0.0 when lam = 0)."""
    chk.number("lam", lam, lo=0)
    if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise ValueError(f"names must be a list of keys of p, got {names!r}")
    names = list(names)
    if not isinstance(p, dict) or any(not isinstance(p.get(k), torch.Tensor) for k in names):
        raise ValueError(f"ridge: p must be a dict of tensors holding every name in names {names}")
    if not lam:
        return 0.0
    out = lam * sum((p[k] ** 2).flatten(1).sum(-1) for k in names)
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"ridge: lam = {lam:g} times the squared norms overflows "
                         f"{out.dtype}: lam must be smaller")
    return out


@dataclass
class TrainLog:
    step: list = field(default_factory=list)
    loss: list = field(default_factory=list)  # (S,) per logged step
    norms: dict = field(default_factory=dict)  # name -> list of (S,) Frobenius norms


def train(p: dict, gen: torch.Generator, *, T: int, v: int, steps: int, batch: int, sw: Switches,
          loss: str = "squared", opt: str = "adam", lr: float = 1e-2, lam: float = 0.0,
          ridge_on=("WV",), model: str = "lda", tau: int | None = None, N: int | None = None,
          p_m=0.15, p_c=0.1, p_r=0.1, log_every: int = 50, shared_data: bool = False,
          N_range=(100, 150)) -> TrainLog:
    """Train in place with fresh documents each step (online MLM).  Seeds are independent:
    each seed's loss depends only on its own parameters, so summing over seeds keeps the
    per-seed gradients (and Adam/SGD are elementwise).  shared_data=False gives every seed its own
    documents."""
    check_params(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r, none_ok=("tau",))
    if opt not in ("adam", "sgd"):
        raise ValueError(f"opt must be 'adam' or 'sgd', got {opt!r}")
    if loss not in ("squared", "ce"):
        raise ValueError(f"loss must be 'squared' or 'ce', got {loss!r}")
    chk.number("lr", lr, lo=0, lo_open=True)
    chk.integer("steps", steps, lo=0, hi=chk.MAX_STEPS)
    chk.integer("batch", batch, lo=1)
    chk.number("lam", lam, lo=0)
    chk.integer("log_every", log_every, lo=1)
    chk.flag("shared_data", shared_data)
    chk.generator("gen", gen)
    _check_switches(sw, none=False)
    if not (isinstance(p, dict) and all(isinstance(p.get(k), torch.Tensor) for k in PARAMS)):
        raise ValueError(f"train: p must be a dict of tensors with keys {PARAMS} (init_params), "
                         f"got {type(p).__name__}")
    if p["WE"].shape[-1] != T * v + 1:
        raise ValueError(f"train: p must be for n = T v + 1 = {T * v + 1} tokens, got WE with "
                         f"{p['WE'].shape[-1]} columns")
    if isinstance(ridge_on, (str, bytes)) or not hasattr(ridge_on, "__iter__") or any(
            k not in PARAMS for k in ridge_on):
        raise ValueError(f"ridge_on must be a list of names among {PARAMS}, got {ridge_on!r}")
    S_ = p["WV"].shape[0]
    chk.elements("train", S=S_, batch=batch, T=T)
    Nmax = _check_documents(batch if shared_data else batch * S_, T, v, model, tau, N, N_range, 0.1)
    chk.elements("train (attention)", S=S_, batch=batch, N=Nmax, N_=Nmax)
    names = trainable(sw)
    for k in names:
        p[k].requires_grad_(True)
    params = [p[k] for k in names]
    o = (torch.optim.Adam(params, lr=lr) if opt == "adam" else torch.optim.SGD(params, lr=lr))
    S, n = p["WV"].shape[0], T * v + 1
    log = TrainLog(norms={k: [] for k in ("WV", "WK", "WQ", "WE")})
    dev = p["WV"].device
    for step in range(steps + 1):
        Dtot = batch if shared_data else batch * S
        words, valid = sample_documents(gen, Dtot, T, v, model=model, tau=tau, N=N, N_range=N_range)
        tok, masked = mask_tokens(gen, words, valid, p_m, p_c, p_r, n - 1)
        if not shared_data:
            words, valid, tok, masked = (x.view(S, batch, -1) for x in (words, valid, tok, masked))
        words, valid, tok, masked = (x.to(dev) for x in (words, valid, tok, masked))
        L = _mlm_loss(_forward(p, tok, valid, sw), words, masked, loss)
        if step % log_every == 0 or step == steps:
            log.step.append(step)
            log.loss.append(L.detach().cpu().numpy())
            for k in log.norms:
                log.norms[k].append(p[k].detach().flatten(1).norm(dim=-1).cpu().numpy())
        if step == steps:
            break
        o.zero_grad()
        (L + ridge(p, [k for k in ridge_on if k in names], lam)).sum().backward()
        o.step()
    for k in names:
        p[k].requires_grad_(False)
    return log


# --------------------------------------------------------------------------------------------
# Attention statistics from word ids
# --------------------------------------------------------------------------------------------
PAIR_KINDS = ("same_position", "same_word", "same_topic", "diff_topic")


def attention_stats(A, tokens, valid, v: int, normalise_length: float | None = None) -> dict:
    """Average attention weight A[key i, query j] over pairs of valid non-[MASK] positions, per
    seed: same position (i = j), same word at another position, same topic with a different
    word, different topic.  normalise_length=L multiplies each document's weights by N / L (the
    paper's length debiasing, Appendix E.3, with L = 100).  Returns {kind: (S,) array}."""
    chk.integer("v", v, lo=1)
    if normalise_length is not None:
        chk.number("normalise_length", normalise_length, lo=0, lo_open=True)
    if not (isinstance(A, torch.Tensor) and A.is_floating_point() and A.dim() == 4
            and A.shape[-1] == A.shape[-2]):
        raise ValueError(f"attention_stats: A must be a floating tensor (S, D, N, N) (forward's "
                         f"attention), got {chk.describe(A)}")
    if not bool(torch.isfinite(A).all()):
        raise ValueError("attention_stats: A must be finite in every entry")
    _check_tokens("attention_stats", tokens, valid, S=A.shape[0])
    if tuple(tokens.shape[-2:]) != tuple(A.shape[1:3]):
        raise ValueError(f"attention_stats: tokens must be (D, N) = {tuple(A.shape[1:3])} like A, "
                         f"got {tuple(tokens.shape)}")
    S = A.shape[0]
    if tokens.dim() == 2:
        tokens = tokens.expand(S, *tokens.shape)
        valid = valid.expand(S, *valid.shape)
    ok = valid & (tokens > 0)
    pair_ok = ok[..., :, None] & ok[..., None, :]
    if normalise_length:
        A = A * (valid.sum(-1).to(F64) / normalise_length)[..., None, None]
    ti = (tokens - 1).div(v, rounding_mode="floor")
    same_w = tokens[..., :, None] == tokens[..., None, :]
    same_t = ti[..., :, None] == ti[..., None, :]
    eye = torch.eye(tokens.shape[-1], dtype=torch.bool, device=A.device)
    kinds = {"same_position": eye & pair_ok, "same_word": same_w & ~eye & pair_ok,
             "same_topic": same_t & ~same_w & pair_ok, "diff_topic": ~same_t & pair_ok}
    return {k: ((A * m).flatten(1).sum(-1) / m.flatten(1).sum(-1).clamp_min(1)).cpu().numpy()
            for k, m in kinds.items()}


def block_scores(W, T: int, v: int) -> dict:
    """Block structure of a (.., Tv+1, Tv+1) matrix restricted to the word block 1..Tv: mean of
    same-topic off-diagonal entries, mean of diagonal entries, mean of different-topic entries,
    and the spread (std) of the different-topic entries. numpy arrays over leading dims."""
    check_params(T=T, v=v)
    if T * v < 2:
        raise ValueError(f"block_scores needs T v >= 2 words (T, v >= 1), got T={T}, v={v}")
    Wa = chk.finite_array("W", W)
    if Wa.ndim < 2 or Wa.shape[-2:] != (T * v + 1, T * v + 1):
        raise ValueError(f"block_scores: W must be (..., T v + 1, T v + 1) = (..., {T * v + 1}, "
                         f"{T * v + 1}), got {Wa.shape}")
    W = np.asarray(W)[..., 1:, 1:]
    topic = (np.arange(T * v)) // v
    same = topic[:, None] == topic[None, :]
    eye = np.eye(T * v, dtype=bool)
    st_, diag, diff = W[..., same & ~eye], W[..., eye], W[..., ~same]
    return dict(same_topic=st_.mean(-1), diag=diag.mean(-1), diff_topic=diff.mean(-1),
                diff_std=diff.std(-1), same_std=st_.std(-1))


# --------------------------------------------------------------------------------------------
# Stage 2: explicit three-value attention model under Assumption 1
# --------------------------------------------------------------------------------------------
def block_apply(w_i0: float, diff: float, same: float, T: int, v: int):
    """x -> W x for a block-uniform W (row 0 zero; W_i0 = w_i0; W_il = same / diff for l in /
    not in topic(i)), in O(Tv) per row of x (..., Tv+1)."""
    for name, val in (("w_i0", w_i0), ("diff", diff), ("same", same)):
        chk.number(name, val)
    check_params(T=T, v=v)

    def apply(x):
        if np.shape(x)[-1:] != (T * v + 1,):
            raise ValueError(f"block_apply: x must be rows (..., Tv+1) = (..., {T * v + 1}) for "
                             f"T={T}, v={v}, got shape {np.shape(x)}")
        words = x[..., 1:]
        tsum = words.reshape(*x.shape[:-1], T, v).sum(-1)
        o = np.empty_like(x)
        o[..., 0] = 0.0
        o[..., 1:] = (w_i0 * x[..., :1] + diff * words.sum(-1, keepdims=True)
                      + (same - diff) * np.repeat(tsum, v, axis=-1))
        return o
    return apply


def diag_apply(d_i0: float, d_ii: float):
    """x -> D x for D_0j = 0, D_i0 = d_i0, D_ii = d_ii, other entries 0."""
    chk.number("d_i0", d_i0)
    chk.number("d_ii", d_ii)

    def apply(x):
        o = d_ii * x
        o[..., 1:] += d_i0 * x[..., :1]
        o[..., 0] = 0.0
        return o
    return apply


def _stage2_grid(alpha, beta, mask_query):
    """Shared input handling of the Stage-2 losses: validate `mask_query` and flatten the
    broadcast (alpha, beta) grid into columns; returns (grid shape, alpha column, beta column)."""
    if mask_query not in ("token", "uniform"):
        raise ValueError(f"mask_query must be 'token' or 'uniform', got {mask_query!r}")
    # attention weights before normalisation: finite and >= 0 (negative ones can sum to 0)
    chk.finite_array("alpha", alpha, lo=0)
    chk.finite_array("beta", beta, lo=0)
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    try:
        G = np.broadcast_shapes(alpha.shape, beta.shape)
    except ValueError:
        raise ValueError(f"alpha and beta must broadcast to one grid shape, got {alpha.shape} and "
                         f"{beta.shape}") from None
    return G, np.broadcast_to(alpha, G).reshape(-1, 1), np.broadcast_to(beta, G).reshape(-1, 1)


def stage2_loss(W, T: int, v: int, tau: int, p_m, p_c, p_r, alpha, beta,
                mask_query: str = "token") -> np.ndarray:
    """Assumption-1 MLM squared loss of eq. 7 with b^pred = 0, W^V = W frozen, and attention
    weights (before normalisation) from a query showing token q to a key showing token l:
      beta  if l = q,   alpha  if l != q are words of the same topic,   1 otherwise.
    The attention distribution over keys is x_l ∝ p~_S(l) w(q, l) (infinitely many positions).
    [MASK] (index 0) is, with mask_query="token", a one-word topic of its own (a [MASK] query
    gives weight beta to [MASK] keys and 1 to words); with mask_query="uniform" a [MASK] query
    attends uniformly and [MASK] keys get weight 1 from every query.
    The query of a masked position shows its word (p_c), a uniform random word (p_r; cases: the
    same word, another word of its topic, a word of another document topic, a word outside the
    document), or [MASK].  alpha, beta: arrays of one shape G; returns loss of shape G.
    By symmetry S = topics 1..tau and the original word y = 1.  W: an (n, n) array or a callable
    x -> W x (see block_apply, diag_apply)."""
    check_params(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r)
    G, al, be = _stage2_grid(alpha, beta, mask_query)
    n = T * v + 1
    chk.elements("stage2_loss", grid=al.shape[0], T_v_plus_1=n)
    if not callable(W):
        Wa = chk.finite_array("W", W)
        if Wa.shape != (n, n):
            raise ValueError(f"stage2_loss: W must be an (n, n) = ({n}, {n}) array or a callable "
                             f"x -> W x, got shape {Wa.shape}")
    topic = topic_of(n - 1, v)
    P = np.zeros(n)
    P[1:tau * v + 1] = 1.0 / (tau * v)
    pt = masked_distribution(P[None], p_m, p_c, p_r)[0]
    y = 1
    cases = [(p_c + p_r / (n - 1), 1), (p_r * (v - 1) / (n - 1), 2 if v > 1 else None),
             (p_r * (tau - 1) * v / (n - 1), v + 1 if tau > 1 else None),
             (p_r * (T - tau) * v / (n - 1), tau * v + 1 if tau < T else None),
             (1 - p_c - p_r, 0)]
    e_y = np.zeros(n)
    e_y[y] = 1.0
    total = np.zeros(al.shape[0])
    for prob, q in cases:
        if q is None or prob == 0:
            continue
        if q == 0:
            if mask_query == "uniform":
                w = np.ones((1, n))
            else:
                w = np.where(np.arange(n) == 0, be, 1.0)
        else:
            same_word = np.arange(n) == q
            same_top = (topic == topic[q]) & ~same_word & (np.arange(n) > 0)
            w = np.where(same_word, be, np.where(same_top, al, 1.0))
        x = pt * w
        x = x / x.sum(-1, keepdims=True)
        o = W(x) if callable(W) else x @ np.asarray(W).T
        total = total + prob * ((o - e_y) ** 2).sum(-1)
    return total.reshape(G)


def stage2_loss_fast(kind: str, coef: tuple, T: int, v: int, tau: int, p_m, p_c, p_r, alpha, beta,
                     mask_query: str = "token") -> np.ndarray:
    """`stage2_loss` in O(v) per (alpha, beta), by lumping topics that play the same role.
    kind="block": coef = (w_i0, diff, same) (Theorem 2's W*); kind="diag": coef = (d_i0, d_ii)
    (Definition 2's D^V).  Blocks of v words: B0 = the target's topic, B1 = another document
    topic, B2 = the remaining document topics (multiplicity tau - 2), B3 = one topic outside the
    document, B4 = the other outside topics (multiplicity T - tau - 1).  Agrees with the explicit
    `stage2_loss` exactly (tests/test_topic.py)."""
    check_params(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r)
    if kind not in ("block", "diag"):
        raise ValueError(f"kind must be 'block' or 'diag', got {kind!r}")
    n_coef = 3 if kind == "block" else 2
    if isinstance(coef, (str, bytes)) or not hasattr(coef, "__len__") or len(coef) != n_coef:
        raise ValueError(f"coef must be {n_coef} numbers for kind={kind!r}, got {coef!r}")
    for j, c_ in enumerate(coef):
        chk.number(f"coef[{j}]", c_)
    G, al, be = _stage2_grid(alpha, beta, mask_query)
    chk.elements("stage2_loss_fast", grid=al.shape[0], five_v_plus_1=1 + 5 * v)
    a = 1 - (1 - p_c) * p_m
    s = p_m * (1 - p_c - p_r)
    r = p_m * p_r / (T * v)
    bm = np.array([1, 1 if tau >= 2 else 0, max(tau - 2, 0), 1 if T > tau else 0, max(T - tau - 1, 0)],
                  dtype=np.float64)
    bp = np.array([a / (tau * v) + r] * 3 + [r] * 2)
    K = 1 + 5 * v
    mult = np.r_[1.0, np.repeat(bm, v)]
    pt = np.r_[s, np.repeat(bp, v)]
    blk = np.r_[-1, np.repeat(np.arange(5), v)]
    ev = np.zeros(K)
    ev[1] = 1.0  # y = first word of B0
    idx = np.arange(K)
    nw = T * v
    cases = [(p_c + p_r / nw, 1), (p_r * (v - 1) / nw, 2 if v > 1 else None),
             (p_r * (tau - 1) * v / nw, 1 + v if tau > 1 else None),
             (p_r * (T - tau) * v / nw, 1 + 3 * v if tau < T else None), (1 - p_c - p_r, 0)]
    total = np.zeros(al.shape[0])
    for prob, q in cases:
        if q is None or prob == 0:
            continue
        if q == 0:
            w = np.ones((1, K)) if mask_query == "uniform" else np.where(idx == 0, be, 1.0)
        else:
            sw_ = idx == q
            st_ = (blk == blk[q]) & ~sw_ & (idx > 0)
            w = np.where(sw_, be, np.where(st_, al, 1.0))
        x = pt * w
        x = x / (x * mult).sum(-1, keepdims=True)  # per-coordinate attention mass
        if kind == "block":
            w_i0, diff, same = coef
            tsum = x[:, 1:].reshape(-1, 5, v).sum(-1)
            o = np.empty_like(x)
            o[:, 0] = 0.0
            o[:, 1:] = (w_i0 * x[:, :1] + diff * (x * mult)[:, 1:].sum(-1, keepdims=True)
                        + (same - diff) * np.repeat(tsum, v, axis=-1))
        else:
            d_i0, d_ii = coef
            o = d_ii * x
            o[:, 1:] += d_i0 * x[:, :1]
            o[:, 0] = 0.0
        total = total + prob * (mult * (o - ev) ** 2).sum(-1)
    return total.reshape(G)
