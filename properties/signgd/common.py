"""Shared statistics of the SignGD properties (no runs, no claims)."""

from __future__ import annotations

import numpy as np
from scipy import stats

FRACTION_NAMES = ("aligned", "P(keep|++)", "P(++|+-)", "P(++|-+)", "P(keep|--)",
                  "positive share of aligned")


def table_parts(M):
    """Numerators and denominators of Table 2's six fractions for a (..., 4, 4) count table
    (rows: sign of (a, b) at init; columns at the end; order ++, +-, -+, --)."""
    M = np.asarray(M, dtype=np.float64)
    al = M[..., :, 0].sum(-1) + M[..., :, 3].sum(-1)
    num = np.stack([al, M[..., 0, 0], M[..., 1, 0], M[..., 2, 0], M[..., 3, 3],
                    M[..., :, 0].sum(-1)], -1)
    den = np.stack([M.sum((-1, -2)), M[..., 0, :].sum(-1), M[..., 1, 0] + M[..., 1, 3],
                    M[..., 2, 0] + M[..., 2, 3], M[..., 3, :].sum(-1), al], -1)
    return num, den


def clustered_fractions(num, den):
    """Pooled ratio num.sum(0) / den.sum(0) over J independent clusters (axis 0: the seeds) and
    its cluster-robust standard error (delta method for a ratio estimator, J / (J - 1) small-
    sample factor): pairs within a seed share neurons and samples and are not independent, the
    seeds are.  Returns (fraction, se, J)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    J = num.shape[0]
    if J < 2:
        raise ValueError(f"need at least 2 clusters, got {J}")
    N, D = num.sum(0), den.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = N / D
        resid = num - f * den
        se = np.sqrt(J / (J - 1) * (resid ** 2).sum(0)) / D
    return f, se, J


def t_crit(false_fail: float, comparisons: int, df: int) -> float:
    """Two-sided Student t critical value at family-wise false-fail `false_fail` (Bonferroni
    over `comparisons`) with `df` degrees of freedom."""
    return float(stats.t.isf(false_fail / (2 * comparisons), df))
