"""Topic structure (Li, Li & Risteski, ICML 2023): attention statistics from word ids
(`attention_stats`, `block_scores`) and Stage 2's explicit three-value attention model under
Assumption 1 (`stage2_loss`).  The package docstring, sim/topic/__init__.py, describes them."""

from __future__ import annotations

import numpy as np
import torch

from sim.topic.model import _check_tokens
from sim.topic.moments import F64, check_params, masked_distribution, topic_of
from theory import validate as chk


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
