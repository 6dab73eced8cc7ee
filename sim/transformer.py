"""A small decoder-only transformer, batched over seeds by stacking parameters (every parameter
has a leading dimension S; seed s's slice depends only on seed s), trained with Adam.

Architecture (JoMA Section 6 / the authors' released decoder_only_hier.py, read as such):
token embedding (no positional embedding: the sequence is a set written in a fixed order under a
causal mask), `depth` blocks of

    a = h + concat_heads softmax(mask + (h Wq)(h Wk)^T / sqrt(d_head)) (h Wv)      (no out-proj)
    a = LN(a)   (post-LN; `norm="none"` drops it, `norm="pre"` normalises the inputs instead)
    h = a + W2 relu(W1 a + b1) + b2,  h = LN(h)

and a linear read-out. `task="label"`: cross-entropy of the class from the last position (the
authors' Table-1 task); `task="next"`: next-token cross-entropy at every real position.

Adam is elementwise, so one torch.optim.Adam over the stacked tensors with the loss summed over
seeds is exactly S independent Adam runs (same for Adam's L2 weight decay).  float32 by default
for speed: no exact claim rests on training (stated in the claims).  Hookable submodules: each
block's `attn_softmax` (nn.Softmax, output: attention probabilities (S, N, H, T, T)) and
`mlp_act` (nn.ReLU, output: hidden neurons (S, N, T, F)); `blocks[l].W1` is the MLP's lower
(in-projection) weight (S, d, F).  Randomness: local torch.Generators only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from sim import default_device, make_generator
from theory import validate as chk
from theory.validate import MAX_STEPS

NORMS = ("post", "pre", "none")
# "fast": one advanced index for the embedding, fused QKV / bias matmuls (bmm, baddbmm), the
# per-seed LayerNorm affine in one pass (addcmul), Adam with multi-tensor (torch._foreach_*) ops
# (and, where _FUSED_ATTENTION is on, torch's fused causal attention wherever no probe hooks the
# block's attn_softmax); "reference": the original einsum forward and the per-parameter Adam
# loop.  Same computation (agreement to float32 round-off is tested in
# tests/test_joma_speed.py); `python -m sim.bench --which transformer [--d 16,32,64,128]` times
# both, rung by rung, against bare batched matmuls of the same shapes.
IMPLS = ("fast", "reference")
# torch's fused scaled_dot_product_attention in the fast path's training steps: off.  Measured
# (issue 36, one thread, T = 30, forward + backward of the attention alone): 10-25% SLOWER than
# the explicit baddbmm / softmax / bmm at every d in 8..128 and S in {12, 36} (the sequences are
# too short for the fused kernel to pay); the switch stays for devices or lengths where it pays.
_FUSED_ATTENTION = False


def _hooked(module) -> bool:
    """Whether a forward hook (a probe: sim.measure.record) would see `module`'s output."""
    return bool(module._forward_hooks or module._forward_pre_hooks
                or nn.modules.module._global_forward_hooks
                or nn.modules.module._global_forward_pre_hooks)
TASKS = ("label", "next")


def _check_int(x, name, lo, hi=None):
    if isinstance(x, bool) or not isinstance(x, int) or x < lo or (hi is not None and x > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be an int {rng}, got {x!r}")


def _check_model(where, model):
    if not isinstance(model, StackedTransformer):
        raise ValueError(f"{where}: model must be a StackedTransformer, got {type(model).__name__}")


def _uniform(shape, bound, gens, dtype):
    return torch.stack([(torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * bound
                        for g in gens]).to(dtype)


class StackedLayerNorm(nn.Module):
    def __init__(self, S, d, dtype):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(S, 1, 1, d, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(S, 1, 1, d, dtype=dtype))

    def forward(self, x):  # x: (S, N, T, d)
        x = torch.nn.functional.layer_norm(x, x.shape[-1:])
        return torch.addcmul(self.bias, x, self.weight)


class Block(nn.Module):
    def __init__(self, S, d, heads, width, gens, dtype, norm):
        super().__init__()
        b = 1 / math.sqrt(d)
        self.heads, self.norm = heads, norm
        self.Wq = nn.Parameter(_uniform((d, d), b, gens, dtype))
        self.Wk = nn.Parameter(_uniform((d, d), b, gens, dtype))
        self.Wv = nn.Parameter(_uniform((d, d), b, gens, dtype))
        self.W1 = nn.Parameter(_uniform((d, width), b, gens, dtype))  # lower / in-projection
        self.b1 = nn.Parameter(_uniform((width,), b, gens, dtype))
        bw = 1 / math.sqrt(width)
        self.W2 = nn.Parameter(_uniform((width, d), bw, gens, dtype))
        self.b2 = nn.Parameter(_uniform((d,), bw, gens, dtype))
        self.attn_softmax = nn.Softmax(dim=-1)
        self.mlp_act = nn.ReLU()
        self.ln1 = StackedLayerNorm(S, d, dtype) if norm != "none" else nn.Identity()
        self.ln2 = StackedLayerNorm(S, d, dtype) if norm != "none" else nn.Identity()

    def forward(self, h, mask, impl="fast", causal=False):
        """h: (S, N, T, d); mask: (T, T) additive.  causal=True says `mask` is the causal mask
        (StackedTransformer's), so the fast path may use the fused attention kernel."""
        if impl == "reference":
            return self._forward_reference(h, mask)
        S, N, T, d = h.shape
        H = self.heads
        dh = d // H
        x = self.ln1(h) if self.norm == "pre" else h
        # one matmul for q, k, v (the weights concatenated each step: Wq / Wk stay separate
        # tensors, so a probe or a freeze that turns them into buffers keeps working)
        qkv = torch.bmm(x.reshape(S, N * T, d), torch.cat((self.Wq, self.Wk, self.Wv), -1))
        q, k, v = qkv.reshape(S, N, T, 3, H, dh).unbind(3)
        if H == 1:
            q, k, v = (t.reshape(S * N, T, dh) for t in (q, k, v))
        else:
            q, k, v = (t.permute(0, 1, 3, 2, 4).reshape(S * N * H, T, dh) for t in (q, k, v))
        if causal and _FUSED_ATTENTION and not _hooked(self.attn_softmax):
            # the fused kernel (the mask is the causal one: position t sees keys 0..t)
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                 scale=1 / math.sqrt(dh))
        else:
            logits = torch.baddbmm(mask, q, k.transpose(1, 2), alpha=1 / math.sqrt(dh))
            p = self.attn_softmax(logits.reshape(S, N, H, T, T))
            o = torch.bmm(p.reshape(S * N * H, T, T), v)
        if H == 1:
            a = o.reshape(S, N, T, d) + h
        else:
            a = o.reshape(S, N, H, T, dh).permute(0, 1, 3, 2, 4).reshape(S, N, T, d) + h
        if self.norm == "post":
            a = self.ln1(a)
        y = self.ln2(a) if self.norm == "pre" else a
        F = self.W1.shape[-1]
        hid = self.mlp_act(torch.baddbmm(self.b1[:, None], y.reshape(S, N * T, d), self.W1)
                           .reshape(S, N, T, F))
        out = torch.baddbmm(self.b2[:, None], hid.reshape(S, N * T, F), self.W2)
        out = out.reshape(S, N, T, d) + a
        if self.norm == "post":
            out = self.ln2(out)
        return out

    def _forward_reference(self, h, mask):
        """The original einsum forward (kept as the benchmark's and the tests' reference)."""
        S, N, T, d = h.shape
        H = self.heads
        x = self.ln1(h) if self.norm == "pre" else h
        q = torch.einsum("sntd,sde->snte", x, self.Wq).reshape(S, N, T, H, d // H)
        k = torch.einsum("sntd,sde->snte", x, self.Wk).reshape(S, N, T, H, d // H)
        v = torch.einsum("sntd,sde->snte", x, self.Wv).reshape(S, N, T, H, d // H)
        logits = torch.einsum("snqhe,snkhe->snhqk", q, k) / math.sqrt(d // H) + mask
        p = self.attn_softmax(logits)
        a = torch.einsum("snhqk,snkhe->snqhe", p, v).reshape(S, N, T, d) + h
        if self.norm == "post":
            a = self.ln1(a)
        y = self.ln2(a) if self.norm == "pre" else a
        hid = self.mlp_act(torch.einsum("sntd,sdf->sntf", y, self.W1) + self.b1[:, None, None])
        out = torch.einsum("sntf,sfd->sntd", hid, self.W2) + self.b2[:, None, None] + a
        if self.norm == "post":
            out = self.ln2(out)
        return out


class StackedTransformer(nn.Module):
    """S independent decoder-only transformers. forward(tokens (S, N, T)) -> logits."""

    def __init__(self, seeds, *, vocab: int, n_out: int, d: int = 64, depth: int = 3,
                 heads: int = 1, width: int | None = None, norm: str = "post",
                 embed_scale: float = 1.0, dtype=torch.float32, device=None,
                 impl: str = "fast"):
        chk.device("device", device)
        if impl not in IMPLS:
            raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
        super().__init__()
        seeds = chk.seeds("seeds", seeds)
        for name, val, lo in (("vocab", vocab, 2), ("n_out", n_out, 2), ("d", d, 1),
                              ("depth", depth, 1), ("heads", heads, 1)):
            _check_int(val, name, lo)
        width = 4 * d if width is None else width
        _check_int(width, "width", 1)
        if d % heads:
            raise ValueError(f"d = {d} must be divisible by heads = {heads}")
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        chk.number("embed_scale", embed_scale, lo=0, lo_open=True)
        if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ValueError(f"dtype must be a floating torch.dtype, got {dtype!r}")
        S = len(seeds)
        chk.elements("StackedTransformer", seeds=S, vocab=vocab, d=d)
        chk.elements("StackedTransformer", seeds=S, n_out=n_out, d=d)
        chk.elements("StackedTransformer", seeds=S, depth=depth, d=d, d_plus_width=d + width)
        gens = [make_generator(s) for s in seeds]
        self.S, self.d, self.depth_, self.vocab = S, d, depth, vocab
        self.impl = impl
        self.embed = nn.Parameter(torch.stack([embed_scale * torch.randn(vocab, d, generator=g,
                                                                         dtype=torch.float64)
                                               for g in gens]).to(dtype))
        self.blocks = nn.ModuleList([Block(S, d, heads, width, gens, dtype, norm)
                                     for _ in range(depth)])
        b = 1 / math.sqrt(d)
        self.Wout = nn.Parameter(_uniform((d, n_out), b, gens, dtype))
        self.bout = nn.Parameter(_uniform((n_out,), b, gens, dtype))
        self.to(default_device() if device is None else torch.device(device))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (S, N, T) int64 -> final hidden states (S, N, T, d)."""
        if tokens.ndim != 3 or tokens.shape[0] != self.S:
            raise ValueError(f"tokens must have shape (S={self.S}, N, T), got {tuple(tokens.shape)}")
        T = tokens.shape[2]
        if self.impl == "reference":
            h = torch.stack([self.embed[s][tokens[s]] for s in range(self.S)])
        else:
            h = self.embed[torch.arange(self.S, device=tokens.device)[:, None, None], tokens]
        mask = torch.triu(torch.full((T, T), float("-inf"), device=h.device, dtype=h.dtype), 1)
        for blk in self.blocks:
            h = blk(h, mask, self.impl, causal=True)
        return h

    def readout(self, h):
        return torch.einsum("sntd,sdc->sntc", h, self.Wout) + self.bout[:, None, None]


@dataclass
class TrainLog:
    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)  # per logged step: (S,) training loss
    records: list = field(default_factory=list)  # whatever `probe(model, step)` returned


def train(model: StackedTransformer, batch: Callable[[int], tuple], *, steps: int, lr,
          task: str = "label", weight_decay: float = 0.0, log_every: int = 10,
          probe: Callable | None = None, betas=(0.9, 0.999), eps: float = 1e-8) -> TrainLog:
    """Adam on the stacked parameters: S independent Adam runs (Adam is elementwise; the loss
    of seed s only reaches seed s's slices).  `lr` is a float or one learning rate per seed
    (length S: a learning-rate sweep in one batched program).  `weight_decay` is Adam's L2
    term (added to the gradient, as torch.optim.Adam does).

    batch(step) -> (tokens (S, N, T), labels (S, N), mask (S, N, T) bool real tokens); the
    caller draws it with its own generators.  probe(model, step) is called (under no_grad) at
    step 0 and every `log_every` steps; its results are stored in TrainLog.records."""
    _check_model("train", model)
    chk.function("batch", batch)
    chk.function("probe", probe, none=True)
    _check_int(steps, "steps", 1, MAX_STEPS)
    _check_int(log_every, "log_every", 1)
    if isinstance(lr, (str, bytes)) or lr is None or isinstance(lr, bool):
        raise ValueError(f"lr must be finite > 0, a float or one per seed (S={model.S}), got "
                         f"{lr!r}")
    try:
        torch.as_tensor(lr, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"lr must be finite > 0, a float or one per seed (S={model.S}), got "
                         f"{lr!r}") from None
    lrs = torch.as_tensor(lr, dtype=torch.float64).flatten()
    if lrs.numel() == 1:
        lrs = lrs.expand(model.S)
    if lrs.numel() != model.S or not bool(torch.all(torch.isfinite(lrs) & (lrs > 0))):
        raise ValueError(f"lr must be finite > 0, a float or one per seed (S={model.S}), got {lr}")
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    chk.number("weight_decay", weight_decay, lo=0)
    chk.betas("betas", betas)
    chk.number("eps", eps, lo=0, lo_open=True)
    params = list(model.parameters())
    lr_t = [lrs.to(p.device, p.dtype).reshape((-1,) + (1,) * (p.ndim - 1)) for p in params]
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    b1, b2 = betas
    log = TrainLog()
    for step in range(steps + 1):
        if probe is not None and step % log_every == 0:
            with torch.no_grad():
                log.records.append(probe(model, step))
        if step == steps:
            break
        tokens, labels, mask = batch(step)
        h = model(tokens)
        loss_s = _loss_per_seed(model, h, tokens, labels, mask, task)
        for p in params:
            p.grad = None
        loss_s.sum().backward()
        with torch.no_grad():
            c1, c2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
            if model.impl == "reference":
                for p, a, v, r in zip(params, m1, m2, lr_t):
                    g = p.grad if weight_decay == 0 else p.grad + weight_decay * p
                    a.mul_(b1).add_(g, alpha=1 - b1)
                    v.mul_(b2).addcmul_(g, g, value=1 - b2)
                    p.sub_(r * (a / c1) / ((v / c2).sqrt() + eps))
            else:
                _adam_foreach(params, m1, m2, lr_t, b1, b2, c1, c2, eps, weight_decay)
        if step % log_every == 0:
            log.steps.append(step)
            log.loss.append(loss_s.detach().cpu())
    return log


def _adam_foreach(params, m1, m2, lr_t, b1, b2, c1, c2, eps, weight_decay):
    """The reference loop's Adam step, op for op, with multi-tensor ops."""
    grads = [p.grad for p in params]
    if weight_decay != 0:
        grads = torch._foreach_add(grads, params, alpha=weight_decay)
    torch._foreach_mul_(m1, b1)
    torch._foreach_add_(m1, grads, alpha=1 - b1)
    torch._foreach_mul_(m2, b2)
    torch._foreach_addcmul_(m2, grads, grads, value=1 - b2)
    den = torch._foreach_div(m2, c2)
    torch._foreach_sqrt_(den)
    torch._foreach_add_(den, eps)
    num = torch._foreach_div(m1, c1)
    num = torch._foreach_mul(lr_t, num)
    torch._foreach_div_(num, den)
    torch._foreach_sub_(params, num)


def loss_per_seed(model, h, tokens, labels, mask, task):
    """(S,) loss of each seed from the final hidden states h (S, N, T, d) = model(tokens):
    task "label" (cross-entropy of labels (S, N) from the last position) or "next" (next-token
    cross-entropy over the real positions, mask (S, N, T) bool)."""
    _check_model("loss_per_seed", model)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if not (isinstance(h, torch.Tensor) and h.is_floating_point() and h.dim() == 4
            and h.shape[0] == model.S and h.shape[-1] == model.d):
        raise ValueError(f"loss_per_seed: h must be a floating tensor (S={model.S}, N, T, "
                         f"d={model.d}) (model(tokens)), got {chk.describe(h)}")
    if not bool(torch.isfinite(h).all()):
        raise ValueError("loss_per_seed: h must be finite in every entry")
    if not (isinstance(tokens, torch.Tensor) and tuple(tokens.shape) == tuple(h.shape[:3])):
        raise ValueError(f"loss_per_seed: tokens must be a tensor of shape "
                         f"{tuple(h.shape[:3])}, got "
                         f"{tuple(getattr(tokens, 'shape', ())) or type(tokens).__name__}")
    if task == "label" and not (isinstance(labels, torch.Tensor)
                                and tuple(labels.shape) == tuple(h.shape[:2])):
        raise ValueError(f"loss_per_seed: labels must be a tensor of shape "
                         f"{tuple(h.shape[:2])}, got "
                         f"{tuple(getattr(labels, 'shape', ())) or type(labels).__name__}")
    if task == "next" and not (isinstance(mask, torch.Tensor) and mask.shape == tokens.shape):
        raise ValueError(f"loss_per_seed: mask must be a tensor of shape {tuple(tokens.shape)}, "
                         f"got "
                         f"{tuple(getattr(mask, 'shape', ())) or type(mask).__name__}")
    n_out = model.Wout.shape[-1]
    target, t_name = (labels, "labels") if task == "label" else (tokens[:, :, 1:], "tokens")
    if target.numel() and (int(target.min()) < 0 or int(target.max()) >= n_out):
        raise ValueError(f"loss_per_seed: {t_name} (the targets of task {task!r}) must be in "
                         f"[0, {n_out - 1}] (n_out = {n_out}), got [{int(target.min())}, "
                         f"{int(target.max())}]")
    return _loss_per_seed(model, h, tokens, labels, mask, task)


def _loss_per_seed(model, h, tokens, labels, mask, task):
    if task == "label":
        logits = model.readout(h[:, :, -1:])[:, :, 0]  # (S, N, C)
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels,
                                                 reduction="none").mean(1)
    logits = model.readout(h[:, :, :-1])  # predict token t+1 from position t
    tgt = tokens[:, :, 1:]
    w = (mask[:, :, 1:]).to(logits.dtype)
    if model.impl == "reference":
        ce = torch.nn.functional.cross_entropy(logits.permute(0, 3, 1, 2), tgt, reduction="none")
    else:  # the same per-position cross-entropy on contiguous rows (S N (T-1), C)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               tgt.reshape(-1), reduction="none").reshape(tgt.shape)
    return (ce * w).sum((1, 2)) / w.sum((1, 2)).clamp_min(1)


def accuracy(model, tokens, labels) -> torch.Tensor:
    """(S,) label accuracy from the last position."""
    _check_model("accuracy", model)
    if not (isinstance(tokens, torch.Tensor) and tokens.dim() == 3 and tokens.shape[0] == model.S):
        raise ValueError(f"accuracy: tokens must be a tensor (S={model.S}, N, T), got "
                         f"{tuple(getattr(tokens, 'shape', ())) or type(tokens).__name__}")
    if not (isinstance(labels, torch.Tensor) and tuple(labels.shape) == tuple(tokens.shape[:2])):
        raise ValueError(f"accuracy: labels must be a tensor of shape "
                         f"{tuple(tokens.shape[:2])}, got "
                         f"{tuple(getattr(labels, 'shape', ())) or type(labels).__name__}")
    with torch.no_grad():
        logits = model.readout(model(tokens)[:, :, -1:])[:, :, 0]
    return (logits.argmax(-1) == labels).float().mean(1)
