"""Measurement tools for ANY torch transformer (the suite's own `sim.transformer` models and a
user's checkpoint alike): they take tensors (attention probabilities, hidden activations,
weights), and `record` captures such tensors from any nn.Module with forward hooks.

* attention_entropy: mean over query rows of -sum_k p log p (nats; 0 log 0 = 0).  Uniform
  attention over n keys gives log n.
* stable_rank: ||W||_F^2 / ||W||_2^2 over the last two axes (batched); transpose invariant, so
  an nn.Linear's (out, in) weight and an (in, out) matrix give the same value.
* max_over_sequence + normalized_correlation + best_match_ncorr: JoMA Section 6 / Table 1:
  each neuron's maximal activation over the sequence, centred over the sample dimension, and its
  normalized (Pearson) correlation with each latent; per latent the best-matching neuron.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Mapping

import torch
from torch import nn

from theory import validate as chk


def _as_float(x, name):
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not torch.is_floating_point(x):
        x = x.to(torch.float64)
    return x


def _finite(x, name):
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must be finite (no NaN or inf entries)")


def _bool_mask(mask, shape, name):
    """mask a bool tensor broadcastable to `shape`."""
    if not (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool):
        raise ValueError(f"{name} must be a bool tensor broadcastable to {tuple(shape)}, got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    try:
        torch.broadcast_shapes(mask.shape, tuple(shape))
    except RuntimeError:
        raise ValueError(f"{name} must be broadcastable to {tuple(shape)}, got "
                         f"{tuple(mask.shape)}") from None
    if torch.broadcast_shapes(mask.shape, tuple(shape)) != torch.Size(shape):
        raise ValueError(f"{name} must be broadcastable to {tuple(shape)}, got {tuple(mask.shape)}")


def row_entropy(probs: torch.Tensor, check: bool = True) -> torch.Tensor:
    """Entropy (nats) of each row of `probs` (..., T_k): shape (...)."""
    chk.flag("check", check)
    p = _as_float(probs, "probs")
    if p.ndim < 1 or p.shape[-1] < 1:
        raise ValueError("probs must have a last axis of keys of size >= 1")
    if check:
        if bool(torch.any(p < -1e-6)) or not bool(torch.all(torch.isfinite(p))):
            raise ValueError("probs must be finite and >= 0")
        s = p.sum(-1)
        if bool(torch.any((s - 1).abs() > 1e-3)):
            raise ValueError("each row of probs must sum to 1 (attention probabilities)")
    pos = p > 0
    return -(torch.where(pos, p * torch.log(torch.where(pos, p, torch.ones_like(p))),
                         torch.zeros_like(p))).sum(-1)


def attention_entropy(probs: torch.Tensor, query_mask: torch.Tensor | None = None,
                      keep_dims: int = 0) -> torch.Tensor:
    """Mean attention entropy over query rows.

    probs      -- (..., T_q, T_k) attention probabilities (rows sum to 1), e.g. (N, H, T, T) or
                  (S, N, H, T, T)
    query_mask -- optional bool mask broadcastable to probs.shape[:-1] (True: the row counts),
                  e.g. real (non-padding) query tokens
    keep_dims  -- number of leading dims to keep (e.g. 1 for a per-seed value)
    """
    nd = probs.ndim - 1 if isinstance(probs, torch.Tensor) else 0
    if isinstance(keep_dims, bool) or not (isinstance(keep_dims, int) and 0 <= keep_dims < nd + 1):
        raise ValueError(f"keep_dims must be an int in [0, {nd}], got {keep_dims!r}")
    if query_mask is not None and isinstance(probs, torch.Tensor):
        _bool_mask(query_mask, probs.shape[:-1], "query_mask")
    ent = row_entropy(probs)
    w = torch.ones_like(ent) if query_mask is None else \
        torch.broadcast_to(query_mask, ent.shape).to(ent.dtype)
    dims = tuple(range(keep_dims, ent.ndim))
    tot = w.sum(dims) if dims else w
    if bool(torch.any(tot == 0)):
        raise ValueError("query_mask selects no query row")
    return (ent * w).sum(dims) / tot if dims else ent


def stable_rank(W: torch.Tensor) -> torch.Tensor:
    """||W||_F^2 / ||W||_2^2 of the last two axes (batched over leading axes)."""
    W = _as_float(W, "W")
    if W.ndim < 2 or W.shape[-1] < 1 or W.shape[-2] < 1:
        raise ValueError(f"W must have at least 2 non-empty axes, got shape {tuple(W.shape)}")
    if not bool(torch.isfinite(W).all()):
        raise ValueError("W must be finite (no NaN or inf entries)")
    s = torch.linalg.svdvals(W.detach().to(torch.float64))
    top = s[..., 0]
    if bool(torch.any(top == 0)):
        raise ValueError("stable rank of a zero matrix is undefined")
    return (s ** 2).sum(-1) / top ** 2


def max_over_sequence(acts: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Each neuron's maximal activation over the sequence: acts (..., N, T, K) -> (..., N, K).
    mask (N, T) or broadcastable to acts.shape[:-1]: positions that count (at least one each)."""
    a = _as_float(acts, "acts")
    if a.ndim < 3:
        raise ValueError(f"acts must be (..., N, T, K), got shape {tuple(a.shape)}")
    _finite(a, "acts")
    if mask is not None:
        _bool_mask(mask, a.shape[:-1], "mask")
    if mask is None:
        return a.max(-2).values
    m = torch.broadcast_to(mask, a.shape[:-1])
    if bool(torch.any(m.sum(-1) == 0)):
        raise ValueError("mask leaves a sample without any position")
    return torch.where(m[..., None], a, torch.full_like(a, -torch.inf)).max(-2).values


def normalized_correlation(acts: torch.Tensor, latents: torch.Tensor) -> torch.Tensor:
    """acts (..., N, K) neuron values, latents (N, J) (or (..., N, J)): the (..., K, J) matrix of
    normalized correlations after centring over the sample axis N.  NaN where a neuron or a
    latent is constant over the samples (correlation undefined)."""
    a = _as_float(acts, "acts").to(torch.float64)
    z = _as_float(latents, "latents").to(torch.float64)
    if a.ndim < 2 or z.ndim < 2 or a.shape[-2] != z.shape[-2]:
        raise ValueError(f"acts (..., N, K) and latents (..., N, J) need the same N, got "
                         f"{tuple(a.shape)} and {tuple(z.shape)}")
    if a.shape[-2] < 2:
        raise ValueError("need at least 2 samples to centre (acts (..., N, K), N >= 2)")
    _finite(a, "acts")
    _finite(z, "latents")
    a = a - a.mean(-2, keepdim=True)
    z = z - z.mean(-2, keepdim=True)
    num = a.transpose(-1, -2) @ z
    na = torch.linalg.norm(a, dim=-2)
    nz = torch.linalg.norm(z, dim=-2)
    scale = torch.maximum(a.abs().amax(-2), torch.ones_like(na)) * 1e-9
    na = torch.where(na > scale, na, torch.full_like(na, torch.nan))
    nz = torch.where(nz > 1e-12, nz, torch.full_like(nz, torch.nan))
    return num / (na[..., :, None] * nz[..., None, :])


def best_match_ncorr(acts: torch.Tensor, latents: torch.Tensor) -> torch.Tensor:
    """Per latent, the NCorr of its best-matching neuron: (..., J) (max over neurons, NaN
    neurons ignored; NaN for a constant latent)."""
    c = normalized_correlation(acts, latents)
    c = torch.where(torch.isnan(c), torch.full_like(c, -torch.inf), c)
    best = c.max(-2).values
    return torch.where(torch.isinf(best), torch.full_like(best, torch.nan), best)


@contextlib.contextmanager
def record(modules: Mapping[str, nn.Module], select: Callable | None = None):
    """Capture the forward outputs of named modules with forward hooks:

        with record({"attn0": m.blocks[0].attn_softmax}) as out:
            model(x)
        out["attn0"]  # the tensor (select(output) if given), detached

    Works on any nn.Module (e.g. a user's nn.Softmax / activation module, or an
    nn.MultiheadAttention with select=lambda o: o[1])."""
    chk.function("select", select, none=True)
    if not isinstance(modules, Mapping) or not all(isinstance(m, nn.Module)
                                                   for m in modules.values()):
        raise ValueError("modules must be a mapping name -> nn.Module")
    out, handles = {}, []
    for name, mod in modules.items():
        def hook(_m, _inp, output, name=name):
            val = select(output) if select is not None else output
            out[name] = val.detach() if isinstance(val, torch.Tensor) else val
        handles.append(mod.register_forward_hook(hook))
    try:
        yield out
    finally:
        for h in handles:
            h.remove()


def layer_ncorr(hidden_by_layer, latents_by_layer, mask=None) -> list:
    """Table 1's statistic: for each layer s, best_match_ncorr(max_over_sequence(hidden_s),
    latents_s) averaged over the latents that vary in the sample. hidden_s (..., N, T, K),
    latents_s (N, J_s). Returns a list of (...)-shaped tensors (mean over latents)."""
    for name, x in (("hidden_by_layer", hidden_by_layer), ("latents_by_layer", latents_by_layer)):
        if isinstance(x, (str, bytes, torch.Tensor)) or not hasattr(x, "__len__"):
            raise ValueError(f"{name} must be a list of tensors (one per layer), got "
                             f"{type(x).__name__}")
    if len(hidden_by_layer) != len(latents_by_layer):
        raise ValueError("need one hidden tensor per latent layer (hidden_by_layer and "
                         "latents_by_layer of one length)")
    for i, (hid, lat) in enumerate(zip(hidden_by_layer, latents_by_layer)):
        _finite(_as_float(hid, f"hidden_by_layer[{i}]"), f"hidden_by_layer[{i}]")
        _finite(_as_float(lat, f"latents_by_layer[{i}]"), f"latents_by_layer[{i}]")
    res = []
    for hid, lat in zip(hidden_by_layer, latents_by_layer):
        best = best_match_ncorr(max_over_sequence(hid, mask), lat)
        res.append(torch.nanmean(best, -1))
    return res


def grouped_attention_logits(probs: torch.Tensor, groups: torch.Tensor, n_groups: int,
                             key_mask: torch.Tensor) -> torch.Tensor:
    """Attention logits by key group, recovered from probabilities (softmax is shift invariant,
    so log p_k - mean_k' log p_k' over a row's valid keys is the row's centred logit of key k).

    probs    -- (..., N, H, T, T) attention probabilities
    groups   -- (..., N, T, T) int64 group of (query q, key k), e.g. the sibling height
                H(token_q, token_k); entries outside [0, n_groups) are ignored
    key_mask -- (..., N, T, T) bool: which (q, k) pairs are valid keys of the row (e.g. real
                tokens, k < q); rows with < 2 valid keys are ignored
    Returns (..., n_groups): the mean centred logit of each group (NaN if the group is empty)."""
    p = _as_float(probs, "probs").to(torch.float64)
    if p.ndim < 4 or p.shape[-1] != p.shape[-2]:
        raise ValueError(f"probs must be (..., N, H, T, T), got {tuple(p.shape)}")
    _finite(p, "probs")
    if bool(torch.any(p < 0)):
        raise ValueError("probs must be >= 0 (attention probabilities)")
    chk.integer("n_groups", n_groups, lo=1, hi=10 ** 6)
    chk.elements("grouped_attention_logits", probs=p.numel(), n_groups=n_groups)
    pair_shape = p.shape[:-3] + p.shape[-2:]
    if not (isinstance(groups, torch.Tensor) and not groups.is_floating_point()
            and groups.dtype != torch.bool and tuple(groups.shape) == tuple(pair_shape)):
        raise ValueError(f"groups must be an integer tensor (..., N, T, T) = {tuple(pair_shape)}, "
                         f"got {chk.describe(groups)}")
    if not (isinstance(key_mask, torch.Tensor) and key_mask.dtype == torch.bool
            and tuple(key_mask.shape) == tuple(pair_shape)):
        raise ValueError(f"key_mask must be a bool tensor (..., N, T, T) = {tuple(pair_shape)}, "
                         f"got {chk.describe(key_mask)}")
    km = key_mask.unsqueeze(-3).expand(p.shape)
    lp = torch.log(p.clamp_min(1e-300))
    cnt = km.sum(-1, keepdim=True)
    row_mean = torch.where(km, lp, torch.zeros_like(lp)).sum(-1, keepdim=True) / cnt.clamp_min(1)
    cl = lp - row_mean
    ok = km & (cnt >= 2)
    g = groups.unsqueeze(-3).expand(p.shape)
    out = []
    red = tuple(range(p.ndim - 4, p.ndim))
    for j in range(n_groups):
        sel = ok & (g == j)
        n = sel.sum(red)
        s = torch.where(sel, cl, torch.zeros_like(cl)).sum(red)
        out.append(torch.where(n > 0, s / n.clamp_min(1), torch.full_like(s, torch.nan)))
    return torch.stack(out, -1)
