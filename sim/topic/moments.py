"""Topic structure (Li, Li & Risteski, ICML 2023): argument checks, and the exact Assumption-1
reference (`subset_moments`, `infinite_loss`, `ridge_minimiser`, `gd_infinite`).
The package docstring, sim/topic/__init__.py, describes them."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

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
