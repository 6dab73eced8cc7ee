"""Topic structure (Li, Li & Risteski, ICML 2023): finite documents (`sample_documents`,
`mask_tokens`) and the one-layer transformer of eqs. 5-7 (`init_params`, `forward`, `mlm_loss`,
`train`).  The package docstring, sim/topic/__init__.py, describes them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from sim import default_device, gamma_sample
from sim.topic.moments import F64, check_params
from theory import validate as chk


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
