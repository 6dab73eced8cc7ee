"""JoMA (Tian et al., ICLR 2024), Section 2, Eqn. 1 and Fig. 1b: the attention kinds,

    b = sigma(z_m) o x / A:   linear  b = z o x  (A = 1);  exp  b = exp(z) o x / A  (A constant);
                              softmax  b = exp(z) o x / 1^T(exp(z) o x),

batched over a leading dimension S (z: (S, M_C), X: (S, N, M_C)); torch, float64.
"""

from __future__ import annotations

import math

import torch

from theory import validate as chk

ATTENTIONS = ("linear", "exp", "softmax")


def _check_zX(where, z, X, name_z="z"):
    if not (isinstance(X, torch.Tensor) and X.is_floating_point() and X.dim() == 3):
        raise ValueError(f"{where}: X must be a floating tensor (S, N, M_C), got "
                         f"{chk.describe(X)}")
    if not bool(torch.isfinite(X).all()):
        raise ValueError(f"{where}: X must be finite in every entry")
    if not (isinstance(z, torch.Tensor) and z.is_floating_point()
            and tuple(z.shape) == (X.shape[0], X.shape[2])):
        raise ValueError(f"{where}: {name_z} must be a floating tensor (S, M_C) = "
                         f"{(X.shape[0], X.shape[2])} (X is (S, N, M_C) = {tuple(X.shape)}), got "
                         f"{chk.describe(z)}")
    if not bool(torch.isfinite(z).all()):
        raise ValueError(f"{where}: {name_z} must be finite")


def attention_scores(z: torch.Tensor, X: torch.Tensor, attention: str, A: float = 1.0):
    """b = sigma(z) o x / A for each sample (Eqn. 1). z: (S, M_C), X: (S, N, M_C)."""
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
    chk.number("A", A, lo=0, lo_open=True)
    _check_zX("attention_scores", z, X)
    if attention == "exp":
        _check_exp_logits("attention_scores", z)
    b = _attention_scores(z, X, attention, A)
    if attention == "exp" and not bool(torch.isfinite(b).all()):
        raise ValueError(f"attention_scores: exp(z) o x / A overflows {b.dtype} (max z = "
                         f"{float(z.detach().max()):.6g}, A = {A:g}): z too large for this A")
    return b


def _check_exp_logits(where, z, name_z="z"):
    """Under exp attention b = exp(z) o x / A: exp(z) must not overflow z's dtype."""
    top = math.log(torch.finfo(z.dtype).max)
    if float(z.detach().max()) > top:
        raise ValueError(f"{where}: {name_z} must be <= {top:.6g} under exp attention (exp("
                         f"{name_z}) overflows {z.dtype}), got max {float(z.detach().max()):.6g}")


def _attention_scores(z, X, attention, A):
    if attention == "linear":
        return z[:, None, :] * X
    if attention == "exp":
        return torch.exp(z)[:, None, :] * X / A
    if attention == "softmax":
        e = torch.exp(z - z.max(-1, keepdim=True).values)[:, None, :] * X
        return e / e.sum(-1, keepdim=True)
    raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}")
