"""Decision procedures the harness owns, one per kind of statement (shared/design/decisions.md).

A claim declares the quantity and the closed form; the procedure computes the critical value, the
standard error and the smallest departure it detects from the design, never from the effect:

    check_mc_mean       a Monte Carlo estimate (scalar, vector or matrix, one row per seed)
                        against a closed form: coordinatewise Student t on the seed-clustered
                        mean, Sidak over the coordinates (decisions 2)
    check_estimate      one estimate with its standard error (a Monte Carlo mean, a seed-
                        clustered mean or ratio: clustered_mean, clustered_ratio) against a
                        prediction: two-sided, or 'not significantly below / above' (decisions 2)
    check_bound         a one-sided bound f <= B (deterministic, or with seed noise): passes with
                        its slack recorded, the resolution a bound needs (decisions 3)
    check_whp           "with high probability" along a declared path: per run "any failure",
                        the failure probability falling along the path (a logistic slope over
                        seeds x rungs) and, at the largest rung, a Clopper-Pearson upper bound
                        below the glossary level (decisions 6)
    check_mean_at_least a mean over seeds said to be at least a level (an ordering "A > B" as
                        a per-seed difference against 0, or a glossary word such as "high"):
                        one-sided seed-clustered t; above, below, or undecided (decisions 2)
    check_count_at_most failures among independent trials, each failing with probability at most
                        a guaranteed p (a union or tail bound): the binomial upper quantile
    check_event_order   "T_a before T_b" per item: a-first, b-first and ties; decided on the
                        untied items by a sign test, ties reported, never failures (decisions 7)
    check_paired_order  "A > B" on paired runs (common random numbers): the per-element
                        differences against 0 by check_mean_at_least (decisions 2)
    check_above_noise   one element's statistic against 0 with its seed-to-seed noise from
                        calibration elements on disjoint seeds: a Student t prediction bound
    check_beyond_permutations
                        a statistic of the audited data above all P relabellings of the same
                        data: a permutation test at the exact level 1 / (P + 1)

The deterministic order of a sequence is `properties.check.check_order` and the direction or
exponent of a trend over seeds is `properties.check.check_trend`.  Every procedure records its
false-fail rate as spent and, where a relative perturbation cannot say it, the smallest
discrepancy it detects (`properties.discrepancy`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from properties import check as _c
from properties import discrepancy as _d
from properties.policy import SATURATED_SUFFIX

__all__ = ["check_mc_mean", "check_mean_at_least", "check_bound", "check_whp", "check_estimate",
           "clustered_mean", "clustered_ratio", "clustered_fractions",
           "check_count_at_most", "check_event_order", "check_paired_order", "check_above_noise",
           "check_beyond_permutations", "sidak", "cochran_armitage"]


def sidak(false_fail: float, p: int) -> float:
    """The per-coordinate rate that keeps the family-wise rate of p independent tests at
    `false_fail` (Sidak; conservative under positive dependence)."""
    if not 0 < false_fail < 1:
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail!r}")
    if not (isinstance(p, (int, np.integer)) and p >= 1):
        raise ValueError(f"p: the number of coordinates must be an integer >= 1, got {p!r}")
    return float(-math.expm1(math.log1p(-false_fail) / p))


def check_mc_mean(claim_id: str, samples, predicted, *, false_fail: float, unit: str = "",
                  what: str = "", name: str | None = None) -> float:
    """A Monte Carlo estimate against its closed form.  `samples`: one estimate per independent
    replicate (seed) in the first axis, any shape after it (a scalar, a vector, a matrix:
    flattened); `predicted`: the closed form, of the shape after the first axis.

    Each coordinate j: t_j = (mean_j - mu_j) / SE_j, SE_j the seed-clustered standard error,
    Student t with S - 1 dof at the Sidak per-coordinate rate; the check fails if any |t_j|
    exceeds the critical value.  The rate recorded is `false_fail`, the check's family-wise rate
    whatever the number of coordinates.  The smallest departure detected (recorded for the
    report): a relative error delta of the prediction with |delta mu_j| >= (t_{a'/2} + t_0.05)
    SE_j for some j, from the design and the seeds' noise.  A coordinate with SE 0 (every seed
    equal) is compared exactly (round-off).  Returns the largest |t_j| / critical value."""
    cname = _c.check_name("check_mc_mean", name)
    x = np.asarray(samples, dtype=np.float64)
    mu = np.asarray(predicted, dtype=np.float64)
    if x.ndim < 1 or x.shape[0] < 3:
        raise ValueError(f"samples: at least 3 replicates (seeds) in the first axis, got shape "
                         f"{x.shape}")
    if x.shape[1:] != mu.shape:
        raise ValueError(f"predicted: shape {mu.shape} != the samples' per-seed shape "
                         f"{x.shape[1:]}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(mu))):
        raise ValueError("samples and predicted must be finite")
    S = x.shape[0]
    x = x.reshape(S, -1)
    mu = mu.reshape(-1)
    p = mu.size
    a = sidak(false_fail, p)
    crit = float(stats.t.isf(a / 2, S - 1))
    mean = x.mean(axis=0)
    se = x.std(axis=0, ddof=1) / math.sqrt(S)
    exact = se <= 0
    ro = _c.Tolerance.roundoff(float(np.abs(mu).max() + np.abs(mean).max() + 1.0), ops=10 * S)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(exact, 0.0, np.abs(mean - mu) / np.where(exact, 1.0, se))
    bad_exact = exact & (np.abs(mean - mu) > ro.value)
    score = float(z.max() / crit) if p else 0.0
    detect = (crit + float(stats.t.isf(0.05, S - 1))) * se
    nz = np.abs(mu) > 0
    rel = (detect[nz & ~exact] / np.abs(mu[nz & ~exact]))
    if rel.size and np.all(np.isfinite(rel)) and float(rel.min()) > 0:
        _c._record_discrepancy(cname, _d.Discrepancy(
            float(rel.min()), unit or "relative error of the closed form",
            f"two-sided t_{S - 1}, Sidak over {p} coordinate(s) at family-wise {false_fail:g}: "
            f"(t {crit:.3g} + t_0.05) x SE; the smallest relative departure of one "
            "coordinate caught with probability 0.95"), what)
    tol = _c.Tolerance.derived(1.0, f"Monte Carlo: |mean - closed form| <= t_{S - 1} {crit:.3g} "
                                    f"x seed-clustered SE per coordinate (Sidak over {p}, "
                                    f"family-wise false-fail {false_fail:g})", false_fail)
    _c._record(claim_id, score, tol, name=cname, what=what)
    if bad_exact.any() or not score <= 1.0:
        j = int(np.argmax(np.where(bad_exact, np.inf, z)))
        _c._fail(_c.ClaimMismatch(
            f"{claim_id}{_c._w(what)}: coordinate {j}: mean {mean[j]:.6g} vs closed form "
            f"{mu[j]:.6g}, SE {se[j]:.3g} over {S} seeds: |t| {z[j]:.3g} > {crit:.3g} (Sidak over "
            f"{p}, family-wise {false_fail:g})"), cname)
    return score


def check_mean_at_least(claim_id: str, samples, threshold, *, false_fail: float,
                        what: str = "", name: str | None = None, unit: str | None = None,
                        alternatives_must_pass: bool = False) -> float:
    """mean(samples) >= threshold, one value per independent replicate (seed), decided by the
    seed-clustered one-sided Student t at `false_fail` per side: passes if the lower confidence
    bound m - t SE is at least the level (significantly above); ClaimMismatch if the upper bound
    m + t SE is below it (significantly below: a refutation with a noise model); otherwise
    `Inconclusive`, saying how many seeds would decide the difference seen.  `threshold` is a
    `Threshold` (a glossary reading, `Threshold.reading("high", ...)`: the recorded score is
    the lower bound, so a bracket level 'passes' where the mean is significantly above it) or
    a number (a derived ordering, e.g. a per-seed difference against 0).  Records the rate and
    the smallest shortfall below the level it detects ((t + t_0.05) x SE; relative to the level,
    or, with `unit`, the smallest true mean above the level it shows, by the noncentral t, in
    that unit: for a level at or near 0).  `alternatives_must_pass`: in an alternative's world
    (a null that runs through the body on its own data), 'not significantly above' rejects it,
    as it could not have given the claim's verdict; by default it is not told apart.  Returns
    the lower bound."""
    cname = _c.check_name("check_mean_at_least", name)
    if not 0 < false_fail < 0.5:
        raise ValueError(f"false_fail must be in (0, 0.5), got {false_fail!r}")
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    if x.size < 3 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples: at least 3 finite values (one per seed), got {x.size}")
    th = threshold if isinstance(threshold, _c.Threshold) else _c.Threshold(
        float(threshold), "derived: an ordering of the per-seed values against a level",
        "derived")
    S = x.size
    m, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(S))
    crit = float(stats.t.isf(false_fail, S - 1))
    lo, hi = m - crit * se, m + crit * se
    model = (f"one-sided seed-clustered t_{S - 1} {crit:.3g} x SE {se:.3g} over {S} seeds "
             f"(false-fail {false_fail:g})")
    rec = _c.Threshold(th.value, f"{th.model}; {model}", th.origin,
                       max(float(th.false_fail), false_fail), word=th.word, bracket=th.bracket)
    _c._record(claim_id, lo, rec, kind="score>=tol", name=cname, what=what)
    detect = (crit + float(stats.t.isf(0.05, S - 1))) * se
    if unit is not None:
        _c._record_discrepancy(cname, _d.t_mean(max(se, 1e-300), S - 1, false_fail, unit), what)
    elif detect > 0 and th.value != 0:
        _c._record_discrepancy(cname, _d.Discrepancy(
            detect / abs(th.value), "relative shortfall of the mean below the level",
            f"one-sided t_{S - 1} at {false_fail:g}: (t {crit:.3g} + t_0.05) x SE; caught with "
            "probability 0.95"), what)
    desc = (f"{claim_id}{_c._w(what)}: mean {m:.4g} over {S} seeds, {model}: [{lo:.4g}, "
            f"{hi:.4g}] against level {th.value:.4g} ({th.model})")
    if lo >= th.value:
        return lo
    if hi < th.value:
        _c._fail(_c.ClaimMismatch(desc + ": significantly below"), cname)
        return lo
    from properties.trend import seeds_needed
    msg = (desc + ": not significantly above or below; "
           + seeds_needed(m - th.value, se, S, 2 * false_fail, "increasing"))
    if _c._SINK.soft and alternatives_must_pass:
        _c._fail(_c.ClaimMismatch(desc + ": not significantly above (this alternative's data do "
                                  "not give the claim's verdict)"), cname)
        return lo
    if _c._SINK.soft:
        _c._SINK.undecided.append((cname, msg))
        return lo
    raise _c.Inconclusive(msg)


def clustered_mean(samples) -> tuple[float, float, int]:
    """(mean, standard error, dof) of one value per independent cluster (a seed, a document):
    SE = sd / sqrt(J) and J - 1 degrees of freedom."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples: at least 2 finite values (one per cluster), got {x.size}")
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), int(x.size - 1)


def clustered_ratio(num, den):
    """A pooled ratio num.sum(0) / den.sum(0) over J independent clusters (axis 0: the seeds; any
    shape after it) and its cluster-robust standard error (the delta method for a ratio
    estimator, with the J / (J - 1) small-sample factor): items within a cluster share their
    seed and are not independent, the clusters are.  Returns (ratio, se, dof = J - 1); a ratio
    with no items (den 0) is NaN, its SE NaN."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    if num.shape != den.shape or num.ndim < 1:
        raise ValueError(f"num, den: one shape with the clusters in axis 0, got {num.shape} and "
                         f"{den.shape}")
    J = num.shape[0]
    if J < 2:
        raise ValueError(f"num, den: at least 2 clusters in axis 0, got {J}")
    N, D = num.sum(0), den.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = N / D
        resid = num - f * den
        se = np.sqrt(J / (J - 1) * (resid ** 2).sum(0)) / D
    return f, se, J - 1


def clustered_fractions(num, den):
    """Fractions of items pooled over J seeds (clusters in axis 0; one fraction per column), as
    `clustered_ratio`, with two repairs a fraction needs, and the design effect:

      deff   per fraction, the seed-clustered variance over the binomial variance of its pooled
             items, at least 1; where the clustered variance is 0 or undefined (a fraction of 0
             or 1), the largest of the others (1 if none);
      se     the clustered SE; where every seed gave the same fraction 0 or 1 (clustered SE 0:
             no seed-to-seed spread to estimate, not a fraction known exactly), the Agresti-
             Coull ('plus four') binomial SE of the pooled items, (x + 2) / (N + 4), times that
             design effect.

    Returns (f, se, dof = J - 1, deff).  A published table's binomial SE of the same fraction
    is comparable after the same factor sqrt(deff) (`check_estimate(predicted_se=...)`)."""
    f, se, dof = clustered_ratio(num, den)
    se = np.nan_to_num(se)
    N = np.asarray(den, dtype=np.float64).sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        deff = se ** 2 / (f * (1 - f) / N)
    ok = np.isfinite(deff) & (f > 0) & (f < 1)
    top = float(deff[ok].max()) if ok.any() else 1.0
    deff = np.maximum(np.where(ok, deff, top), 1.0)
    pt = (f * N + 2) / (N + 4)
    floor = np.sqrt(pt * (1 - pt) / (N + 4) * deff)
    se = np.where((se <= 0) & ((f <= 0) | (f >= 1)), floor, se)
    return f, se, dof, deff


ESTIMATE_SIDES = ("two-sided", "not_below", "not_above")


def check_estimate(claim_id: str, estimate: float, predicted: float = 0.0, *, se: float,
                   dof: int | None = None, side: str = "two-sided", false_fail: float,
                   comparisons: int = 1, predicted_se: float | None = None,
                   reading: tuple[str, str] | None = None, unit: str = "estimate",
                   what: str = "", name: str | None = None) -> float:
    """One estimate with its standard error against a prediction: a Monte Carlo mean over many
    documents or samples (`dof` None: normal) or a seed-clustered mean or ratio (`dof` = clusters
    - 1: Student t; `clustered_mean`, `clustered_ratio`), at `false_fail` spent over
    `comparisons` checks of the same kind (Bonferroni).

      side "two-sided"  |estimate - predicted| <= the critical value x SE (two-sided);
      side "not_below"  estimate >= predicted - critical value x SE (one-sided: fails only where
                        the estimate is significantly below; 'at least', 'not better than');
      side "not_above"  the mirror image.

    `predicted_se`: the prediction's own standard error (a published table's counts), combined
    in quadrature with the z critical value of the same rate.  `reading`: (word, sentence) of the
    glossary: the level is the word's (`Threshold.reading`, its bracket decided too), the noise
    term added to it (side "not_below" only; `predicted` unused).  Records the rate and the
    smallest departure on the guarded side it detects (`properties.discrepancy`, in `unit`).
    An SE of 0 (every cluster equal) leaves a comparison up to round-off (two-sided) or an exact
    one (one-sided).  Returns what check_close returns (the error, two-sided) or check_at_least
    (the score: the estimate, or its signed distance from the prediction, one-sided).  The
    check's identity is check_close's (two-sided) or check_at_least's."""
    if side not in ESTIMATE_SIDES:
        raise ValueError(f"side must be one of {ESTIMATE_SIDES}, got {side!r}")
    if not 0 < false_fail < 0.5:
        raise ValueError(f"false_fail must be in (0, 0.5), got {false_fail!r}")
    if isinstance(comparisons, bool) or not isinstance(comparisons, int) or comparisons < 1:
        raise ValueError(f"comparisons must be an int >= 1, got {comparisons!r}")
    if dof is not None and (isinstance(dof, bool) or int(dof) != dof or dof < 1):
        raise ValueError(f"dof must be None (normal) or an integer >= 1, got {dof!r}")
    est, s = float(estimate), float(se)
    if not (math.isfinite(est) and math.isfinite(s) and s >= 0):
        raise ValueError(f"estimate must be finite and se finite >= 0, got {estimate!r}, {se!r}")
    if predicted_se is not None and not (math.isfinite(float(predicted_se))
                                         and float(predicted_se) >= 0):
        raise ValueError(f"predicted_se must be finite and >= 0, got {predicted_se!r}")
    if reading is not None and side != "not_below":
        raise ValueError(f"reading: a glossary level is a lower limit (side 'not_below' only), "
                         f"got side {side!r}")
    a = false_fail / comparisons / (2 if side == "two-sided" else 1)
    dist = "z" if dof is None else f"t_{int(dof)}"
    crit = float(stats.norm.isf(a) if dof is None else stats.t.isf(a, int(dof)))
    width, model = crit * s, f"{dist} {crit:.3g} x SE {s:.3g}"
    if predicted_se is not None:
        z = float(stats.norm.isf(a))
        width = float(np.hypot(crit * s, z * float(predicted_se)))
        model += f" (+) z {z:.3g} x the prediction's SE {float(predicted_se):.3g}, in quadrature"
    model += (f" ({side}, false-fail {false_fail:g}"
              + (f" over {comparisons} comparisons" if comparisons > 1 else "") + ")")
    eff = width / crit if crit > 0 else 0.0
    detects = None
    if eff > 0:
        detects = (_d.normal_mean(eff, a, unit) if dof is None
                   else _d.t_mean(eff, int(dof), a, unit))
    rate = false_fail / comparisons
    if side == "two-sided":
        ro = _c.Tolerance.roundoff(abs(float(predicted)) + abs(est) + 1.0).value
        tol = _c.Tolerance.derived(max(width, ro), f"Monte Carlo: {model}", rate)
        return _c.check_close(claim_id, est, float(predicted), tol, what=what, name=name,
                              detects=detects)
    sign = 1.0 if side == "not_below" else -1.0
    noise = _c.Threshold(-width, f"Monte Carlo: -{model}", "derived", rate)
    if reading is not None:
        th = _c.Threshold.reading(reading[0], reading[1], plus=noise)
        return _c.check_at_least(claim_id, est, th, what=what, name=name, detects=detects)
    return _c.check_at_least(claim_id, sign * (est - float(predicted)), noise, what=what,
                             name=name, detects=detects)


def check_bound(claim_id: str, value, bound, *, side: str = "upper", false_fail: float = 0.0,
                se=None, dof: int | None = None, what: str = "", name: str | None = None
                ) -> float:
    """A one-sided bound: value <= bound (side "upper") or value >= bound ("lower").
    Deterministic (false_fail 0: the comparison itself, plus round-off), or with seed noise:
    `se` with `dof`, the value's upper (lower) t confidence bound at `false_fail` must meet the
    bound.  Returns the slack, 1 - value / bound (upper) or 1 - bound / value (lower), worst
    over the values; recorded per check, so the report shows how loose the bound is (a bound
    with 30% slack is resolved to 30%, whatever the sharper checks beside it resolve)."""
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    cname = _c.check_name("check_bound", name)
    v = np.atleast_1d(np.asarray(value, dtype=np.float64))
    b = np.broadcast_to(np.asarray(bound, dtype=np.float64), v.shape)
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(b))):
        raise ValueError("value and bound must be finite")
    if se is not None:
        if not (0 < false_fail < 1) or dof is None or dof < 1:
            raise ValueError("se needs a false_fail in (0, 1) and dof >= 1")
        crit = float(stats.t.isf(false_fail, dof))
        s = np.broadcast_to(np.asarray(se, dtype=np.float64), v.shape)
        v = v + crit * s if side == "upper" else v - crit * s
        model = f"one-sided t_{dof} {crit:.3g} x SE at false-fail {false_fail:g}"
    else:
        false_fail = 0.0
        model = "deterministic comparison"
    ro = _c.Tolerance.roundoff(float(np.abs(b).max() + 1.0))
    margin = (b - v) if side == "upper" else (v - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        slack = np.where(side == "upper", 1 - v / b, 1 - b / v)
    worst = float(np.nanmin(slack)) if np.any(np.isfinite(slack)) else float("nan")
    th = _c.Threshold(-ro.value, f"one-sided bound ({side}): {model}; round-off {ro.value:.3g}",
                      "derived", false_fail)
    _c._record(claim_id, float(margin.min()), th, kind="score>=tol", name=cname, what=what)
    _c._SINK.slack[cname] = min(_c._SINK.slack.get(cname, float("inf")), worst)
    if not float(margin.min()) >= -ro.value:
        j = np.unravel_index(int(np.argmin(margin)), margin.shape)  # any shape of value
        _c._fail(_c.ClaimMismatch(
            f"{claim_id}{_c._w(what)}: {'upper' if side == 'upper' else 'lower'} bound "
            f"violated: {v[j]:.6g} vs bound {b[j]:.6g} ({model})"), cname)
    return worst


def _whp_state(x, k, n, level: float, a: float) -> tuple[str, object, float, float]:
    """check_whp's decision at one level: ("holds" | "refuted" | "undecided", the largest
    rung's Clopper-Pearson interval, the Cochran-Armitage z and its critical value)."""
    z = cochran_armitage(np.log(x), k, n)
    zc = float(stats.norm.isf(a / 2))
    top = int(np.argmax(x))
    ci = _cp(k[top], n[top], a)
    every_below = all(_cp(kk, nn, a).high < level for kk, nn in zip(k, n))
    falls, rises = z < -zc, z > zc
    if ci.high < level and (falls or every_below) and not rises:
        return "holds", ci, z, zc
    if rises or (ci.low > level and not falls):
        return "refuted", ci, z, zc
    return "undecided", ci, z, zc


def _cp(k, n, a: float):
    """The exact (Clopper-Pearson) interval, confidence 1 - a, of a rate of k failures in n
    runs (`.low`, `.high`)."""
    return stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=1 - a, method="exact")


def _whp_levels(level) -> tuple[float, dict | None]:
    """`level` of check_whp: a number, or a glossary word for the share of runs that hold
    ('most', 'high'): the failure probability allowed is one minus its level, and its bracket
    is decided too."""
    if isinstance(level, str):
        from properties.readings import lookup
        r = lookup(level)
        return 1.0 - r.level, {"word": r.word, "kind": "score>=tol",
                               "levels": {"level": r.level, "stricter": r.stricter,
                                          "looser": r.looser},
                               "allowed": {"level": 1.0 - r.level,
                                           "stricter": 1.0 - r.stricter,
                                           "looser": 1.0 - r.looser}}
    return float(level), None


def check_whp(claim_id: str, sizes, failures, level, *, false_fail: float,
              word: str = "", what: str = "", name: str | None = None,
              unfollowed: str = "", reading: str | None = None, looks: int = 1,
              items=None) -> dict:
    """'With high probability' along a declared path of sizes (every clause of the paper's
    condition kept as the size grows).  `failures`: per rung, one boolean per run, True if the
    run had ANY failure of the statement ("for all s and i": the per-run statistic); the
    per-item fractions belong beside it, in the property's `what`.

    The trend: Cochran-Armitage on the per-rung counts with log size as the score (z, at half
    the rate, two-sided).  Holds when, at the largest rung, the Clopper-Pearson upper bound (at
    half the rate) is below `level` and the failure probability falls significantly along the
    path, or is below `level` at every rung already (each rung's upper bound).  Refuted (a
    trend over sizes) when it grows significantly, or stays above `level` at the largest rung
    (its lower bound above it) without falling.  Otherwise inconclusive, with the runs per rung
    that would put the largest rung's upper bound below `level` at its observed rate.

    Glossary words, each decided at its stricter and looser level as well (the others at
    theirs; a verdict that changes inside a bracket is reading-dependent in the report):
      `level`   a number, or a word for the share of runs that hold ('most', 'high'): the
                failure probability allowed is one minus the word's level;
      `reading` a word for the per-run statement ('extremely sparse'): then `failures` are, per
                rung, each run's value of the word's statistic, and a run fails where the value
                is beyond the word's level (above it for a tolerance word, below for a score).
    At a bracket level the decision is recorded as passing where it is not the glossary level's
    failure: a refutation passes there where that level does not refute (holds or undecided), a
    holds where that level holds too.

    `unfollowed`: the clauses of the paper's condition the path does not follow (declared with
    the path).  On such a path a failure probability that does not vanish is evidence neither
    for nor against the statement (a finding about the regime outside those clauses): in the
    claim's world it is Inconclusive with the numbers, never a refutation.  A rival or null
    that fails there is still told apart from a claim that holds (its data do not give the
    claim's verdict), and a 'holds' stands with the clauses named.

    `items`: per rung, (failing items, items) per run, where a run's statement is over items
    (pairs, neurons, samples): only to tell, in an alternative's world, a rejection where every
    item of every run fails (the farthest data the check could meet: a null whose mechanism
    cannot act) from one that could have gone the other way; that one is recorded under
    policy.SATURATED_SUFFIX and not counted as the check's power.

    `looks`: how many times the path's runs were looked at (its seeds extended after an
    undecided look, each earlier look's runs kept): the rate is spent over the looks (each
    decides at false_fail / looks, Bonferroni), so a verdict reached at any look keeps the
    stated rate."""
    cname = _c.check_name("check_whp", name)
    x = np.asarray(list(sizes), dtype=np.float64)
    if x.ndim != 1 or len(failures) != x.size or np.unique(x).size < 3 or np.any(x <= 0):
        raise ValueError("sizes: at least three distinct rungs > 0, one array of runs per rung")
    if not 0 < false_fail < 1:
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail!r}")
    if items is not None and (len(items) != 2 or any(len(v) != x.size for v in items)
                              or any(np.shape(a_) != np.shape(b_) for a_, b_ in zip(*items))):
        raise ValueError("items: (failing items, items), each one array of runs per rung, the "
                         "two of a rung the same shape")
    if isinstance(looks, bool) or not isinstance(looks, (int, np.integer)) or not 1 <= looks <= 100:
        raise ValueError(f"looks must be an integer in [1, 100], got {looks!r}")
    level, frac_word = _whp_levels(level)
    if not word and frac_word is not None:  # a glossary word for the share: say which level
        word = f"'{frac_word['word']}' probability, the glossary's {frac_word['levels']['level']:g}"
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    run_word = None
    if reading is not None:
        from properties.readings import lookup
        r = lookup(reading)
        tolerance = r.stricter < r.level
        values = [np.asarray(f, dtype=np.float64).ravel() for f in failures]
        if any(not np.all(np.isfinite(v)) for v in values):
            raise ValueError(f"failures: with reading {reading!r}, each run's value of the "
                             "word's statistic, finite")
        run_word = {"word": r.word, "kind": "error<=tol" if tolerance else "score>=tol",
                    "levels": {"level": r.level, "stricter": r.stricter, "looser": r.looser}}

        def fails_at(lv):
            return [(v > lv) if tolerance else (v < lv) for v in values]
        runs = fails_at(r.level)
    else:
        runs = [np.asarray(f, dtype=bool).ravel() for f in failures]
    if any(r_.size < 1 for r_ in runs):
        raise ValueError("failures: every rung needs at least one run")
    a = false_fail / 2 / looks
    n = np.array([r_.size for r_ in runs], dtype=np.float64)

    def counts(rr):
        return np.array([int(r_.sum()) for r_ in rr], dtype=np.float64)
    k = counts(runs)
    state, ci, z, zc = _whp_state(x, k, n, level, a)
    top = int(np.argmax(x))
    rates = ", ".join(f"{s:g}: {int(kk)}/{int(nn)}" for s, kk, nn in zip(x, k, n))
    desc = (f"runs with any failure per rung ({rates}); Cochran-Armitage z {z:.3g} on log size "
            f"(critical {zc:.3g}); largest rung Clopper-Pearson [{ci.low:.3g}, {ci.high:.3g}] "
            f"against the level {level:g}" + (f" ('{word}')" if word else "")
            + (f"; the rate spent over {looks} looks at the runs" if looks > 1 else ""))
    ok = state == "holds"
    th = _c.Threshold(0.0, f"with high probability along the path: {desc}", "derived",
                      false_fail)
    _c._record(claim_id, 1.0 if ok else -1.0, th, kind="score>=tol", name=cname, what=what)
    _c._SINK.trends += 1
    _c._record_discrepancy(cname, _d.binomial_fraction(int(n[top]), level, "per-run failure "
                                                       "probability at the largest rung"), what)
    bracket = []
    if frac_word is not None:
        states = {lv: _whp_state(x, k, n, frac_word["allowed"][lv], a)[0]
                  for lv in ("stricter", "looser")}
        # the statistic the levels are decided on: the share of runs that hold at its lower
        # confidence bound, at the binding rung (the largest rung where the failures fall
        # significantly, else the rung with the largest upper bound of the failure rate)
        upper = {i: float(_cp(k[i], n[i], a).high)
                 for i in ([top] if z < -zc else range(x.size))}
        b = max(upper, key=upper.get)
        share = 1.0 - upper[b]
        bracket.append((frac_word, states, share, share - frac_word["levels"]["level"],
                        f"share of runs that hold, lower confidence bound {share:.3g} at the "
                        f"binding rung {x[b]:g} ({int(n[b] - k[b])} of {int(n[b])} runs)"))
    if run_word is not None:
        states = {lv: _whp_state(x, counts(fails_at(run_word["levels"][lv])), n, level, a)[0]
                  for lv in ("stricter", "looser")}
        v_top = values[top]
        worst = float(v_top.max() if run_word["kind"] == "error<=tol" else v_top.min())
        margin = (run_word["levels"]["level"] - worst if run_word["kind"] == "error<=tol"
                  else worst - run_word["levels"]["level"])
        bracket.append((run_word, states, worst, margin, None))
    at = []
    for w, states, worst, margin, worst_what in bracket:
        states = {"level": state, **states}
        passes = {lv: (st != "refuted") if state == "refuted" else (st == "holds")
                  for lv, st in states.items()}
        rd = _c._SINK.readings.setdefault(w["word"], {
            "word": w["word"], "kind": w["kind"], "levels": dict(w["levels"]),
            "model": f"check_whp {cname}: '{w['word']}' decided at its glossary level and "
                     "bracket", "passes": {}, "calls": 0, "worst": worst,
            "worst_margin": margin, "worst_what": worst_what})
        rd["calls"] += 1
        for lv, p in passes.items():
            rd["passes"][lv] = rd["passes"].get(lv, True) and bool(p)
        if margin < rd["worst_margin"]:
            rd["worst"], rd["worst_margin"], rd["worst_what"] = worst, margin, worst_what
        at.append(f"'{w['word']}' " + ", ".join(f"{lv} {w['levels'][lv]:g}: {states[lv]}"
                                               for lv in ("stricter", "level", "looser")))
    if at:
        desc += "; across the glossary's brackets: " + "; ".join(at)
    out = {"z": z, "upper": float(ci.high), "lower": float(ci.low), "state": state}
    if ok:
        return out
    if state == "refuted":
        msg = (f"{claim_id}{_c._w(what)}: {desc}: the failure probability does not vanish "
               "along the path")
        if not unfollowed or _c._SINK.soft:
            _c._fail(_c._trend_mismatch(msg), cname + SATURATED_SUFFIX
                     if _c._SINK.soft and _saturated(items) else cname)
            return out
        raise _c.Inconclusive(msg + f"; but the path does not follow {unfollowed}: a failure "
                              "there is evidence neither for nor against the statement, not a "
                              "refutation")
    p_top = float(k[top] / n[top])
    need = _runs_for_upper_bound(p_top, level, a)
    msg = (f"{claim_id}{_c._w(what)}: {desc}: undecided"
           + (f"; at the largest rung's rate {p_top:.3g}, {need} runs there would put its upper "
              f"bound below {level:g}" if need else ""))
    if _c._SINK.soft:
        _c._SINK.undecided.append((cname, msg))
        return out
    raise _c.Inconclusive(msg)


def _saturated(items) -> bool:
    """Does every item of every run fail (and is there any item): `items` as check_whp's
    (validated there)."""
    if items is None:
        return False
    k, n = (np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in part])
            for part in items)
    return bool(n.sum() > 0 and np.all(k == n))


def cochran_armitage(scores, k, n) -> float:
    """The Cochran-Armitage trend z of counts k of n over groups with `scores` (positive: the
    proportion rises with the score); 0 where every run agrees (no information on a trend)."""
    x = np.asarray(scores, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    N, K = float(n.sum()), float(k.sum())
    p = K / N
    if p <= 0 or p >= 1:
        return 0.0
    xbar = float(np.sum(n * x) / N)
    T = float(np.sum(k * (x - xbar)))
    var = p * (1 - p) * float(np.sum(n * (x - xbar) ** 2))
    return T / math.sqrt(var) if var > 0 else 0.0


def _runs_for_upper_bound(p: float, level: float, a: float) -> int | None:
    """The runs at which a Clopper-Pearson upper bound at rate a of a rate p would fall below
    `level` (None if p >= level, or beyond 2^19 runs)."""
    if p >= level:
        return None

    def below(m):
        return _cp(round(p * m), m, a).high < level
    for m in (2 ** i for i in range(3, 20)):
        if below(m):
            lo, hi = m // 2, m
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if below(mid) else (mid, hi)
            return hi
    return None


def check_count_at_most(claim_id: str, count: int, trials: int, p: float, *,
                        false_fail: float, unit: str = "trials", what: str = "",
                        name: str | None = None) -> int:
    """'Each of `trials` independent trials fails with probability at most p' (a guarantee: a
    union bound, a tail bound): the observed number of failing trials against the binomial
    upper quantile, the largest count `allowed` with P(Binomial(trials, p) > allowed) <=
    false_fail.  Fails where count > allowed (rate at most false_fail where the guarantee
    holds); records the smallest per-trial failure probability it detects.  Where allowed =
    trials the check cannot fail (the guarantee is too weak to say anything at this number of
    trials): it passes with no discrepancy recorded.  Returns `allowed`."""
    if isinstance(trials, bool) or int(trials) != trials or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    if isinstance(count, bool) or int(count) != count or not 0 <= count <= trials:
        raise ValueError(f"count must be an integer in [0, trials = {trials}], got {count!r}")
    if not (math.isfinite(float(p)) and 0.0 <= float(p) <= 1.0):
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    if not 0 < false_fail < 1:
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail!r}")
    n, q = int(trials), float(p)
    allowed = int(stats.binom.isf(false_fail, n, q)) if q > 0 else 0
    allowed = min(max(allowed, 0), n)
    detects = (_d.binomial_fraction(n, allowed / n, "per-trial failure probability")
               if allowed < n else None)
    th = _c.Threshold(-float(allowed) - 0.5,
                      f"derived: failing {unit} <= the binomial {false_fail:g} upper quantile "
                      f"{allowed} of Bin({n}, p = {q:.2g})", "derived", false_fail)
    _c.check_at_least(claim_id, -float(count), th, what=what, name=name, detects=detects)
    return allowed


def check_event_order(claim_id: str, t_a, t_b, *, false_fail: float, what: str = "",
                      name: str | None = None) -> dict:
    """'T_a comes before T_b', item by item (event steps; inf: never came).  Each item is
    a-first, b-first, or a tie (the same step: indistinguishable at step resolution, never a
    failure of 'before').  Decided on the untied items, a deterministic count (rate 0, quantum
    one item): any b-first item refutes it; with every item tied it is inconclusive (halve the
    step and see whether the ties split); otherwise it holds.  The tie fraction is reported
    beside it.  For a statement that holds only with high probability, count the runs with a
    b-first item per rung and use `check_whp` along the path."""
    cname = _c.check_name("check_event_order", name)
    a = np.asarray(t_a, dtype=np.float64).ravel()
    b = np.asarray(t_b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size < 1:
        raise ValueError("t_a, t_b: one event time each per item, the same number of items")
    if np.any(np.isnan(a)) or np.any(np.isnan(b)):
        raise ValueError("t_a, t_b: event times must not be NaN (inf: the event never came)")
    a_first = int(np.sum(a < b))
    b_first = int(np.sum(b < a))
    ties = int(np.sum(a == b))
    untied = a_first + b_first
    desc = (f"{a_first} a-first, {b_first} b-first, {ties} tied of {a.size} items (tie "
            f"fraction {ties / a.size:.3g}; ties are not failures)")
    th = _c.Threshold(0.0, f"event order on the untied items: {desc}", "derived", 0.0)
    _c._record(claim_id, float(-b_first), th, kind="score>=tol", name=cname, what=what)
    out = {"a_first": a_first, "b_first": b_first, "ties": ties}
    if untied == 0:
        msg = f"{claim_id}{_c._w(what)}: {desc}: every item tied at step resolution"
        if _c._SINK.soft:
            _c._SINK.undecided.append((cname, msg))
            return out
        raise _c.Inconclusive(msg)
    _c._record_discrepancy(cname, _d.binomial_fraction(untied, 0.0, "b-first fraction of "
                                                       "untied items"), what)
    if b_first > 0:
        _c._fail(_c.ClaimMismatch(f"{claim_id}{_c._w(what)}: {desc}: b came first on "
                                  f"{b_first} untied item(s)"), cname)
    return out


def check_paired_order(claim_id: str, diffs, *, false_fail: float, order: str, unit: str,
                       what: str = "", name: str | None = None) -> float:
    """The order 'A > B' of a statement on paired runs: S i.i.d. elements (each its own init and
    data) trained twice on common random numbers, A with the statement's condition and B
    without; `diffs` = A_e - B_e per element (or A and B measured on the same element, e.g. a
    log ratio of two attention means).  Decided by `check_mean_at_least` against float64
    round-off: the one-sided seed-clustered Student t on the elements' own spread of the
    difference (nothing calibrated on the effect).  A true mean difference of 0 passes with
    probability `false_fail` only, so the mechanism switched off (B against another,
    independent run without the condition) is rejected with probability 1 - false_fail; an
    order significantly the other way is a ClaimMismatch; in between, Inconclusive (with the
    elements a decision would need).  In an alternative's world (the null's own paired runs,
    a different run from the claim's) 'not significantly above' rejects the alternative: its
    data do not give the claim's verdict, which a null of difference 0 does with probability
    `false_fail` only.  Returns the lower confidence bound of the mean."""
    d = np.asarray(diffs, dtype=np.float64).reshape(-1)
    if d.size < 3 or not np.all(np.isfinite(d)):
        raise ValueError(f"diffs: at least 3 finite per-element differences, got {d.size}")
    if not 0 < false_fail < 0.5:
        raise ValueError(f"false_fail must be in (0, 0.5), got {false_fail!r}")
    floor = _c.Tolerance.roundoff(float(np.abs(d).max()) + 1.0, ops=64).value
    th = _c.Threshold(floor, f"the order '{order}' on paired runs (common random numbers): the "
                             f"per-element difference against 0 + round-off {floor:.2g}",
                      "derived")
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    t = d.mean() / se if se > 0 else float("inf")
    return check_mean_at_least(
        claim_id, d, th, false_fail=false_fail, name=name, unit=unit, alternatives_must_pass=True,
        what=f"{what}: mean {d.mean():.4g} over {d.size} elements (min {d.min():.4g}, max "
             f"{d.max():.4g}; t = {t:.3g})")


def check_above_noise(claim_id: str, score: float, noise, *, false_fail: float, what: str = "",
                      noise_from: str = "", name: str | None = None, unit: str = "statistic"
                      ) -> None:
    """One element's statistic `score` said to be above 0 (an order 'A > B' as a log ratio),
    against its own seed-to-seed noise: `noise` = the same statistic over n calibration elements
    on seeds disjoint from the audit's (their spread only is read; their mean, the size of the
    effect, is not).  Passes if score >= t_{n-1}(1 - false_fail) x sd x sqrt(1 + 1/n), the
    Student t prediction bound of one new element under the normal model of the noise (an
    element whose statistic has mean 0 passes with probability `false_fail`).  `noise_from`
    says where the calibration elements come from (shown in the model)."""
    x = np.asarray(noise, dtype=np.float64).reshape(-1)
    if x.size < 3 or not np.all(np.isfinite(x)):
        raise ValueError(f"noise: at least 3 finite calibration values, got {x.size}")
    if not 0 < false_fail < 0.5:
        raise ValueError(f"false_fail must be in (0, 0.5), got {false_fail!r}")
    n = x.size
    t = float(stats.t.isf(false_fail, n - 1))
    sd = float(x.std(ddof=1))
    inflate = math.sqrt(1 + 1 / n)
    _c.check_at_least(claim_id, float(score), _c.Threshold(
        t * sd * inflate,
        f"the statement's order against 0 with its own seed error: t_{n - 1} {t:.2f} x sd "
        f"{sd:.3g} x sqrt(1 + 1/{n}), the sd of the statistic over {n} calibration elements"
        + (f" ({noise_from})" if noise_from else "") + "; the noise only, their mean is not "
        f"used; Shapiro-Wilk p = {stats.shapiro(x).pvalue:.2g}); one-sided level "
        f"{false_fail:g} under the normal model of the seed-to-seed spread", "derived",
        false_fail), what=what, name=name,
        detects=_d.t_mean(sd, n - 1, false_fail, unit, inflate=inflate))


def check_beyond_permutations(claim_id: str, score: float, noise, *, kind: str, what: str = "",
                              name: str | None = None, unit: str = "statistic") -> None:
    """A statistic of trained weights shown beyond its own noise: `score` must exceed every one
    of the P values `noise` of the same statistic on relabellings of the same weights (`kind`
    names them): a one-sided permutation test at the exact level 1 / (P + 1), distribution-free
    (under no association the observed value is exchangeable with them)."""
    noise = np.asarray(noise, dtype=np.float64).reshape(-1)
    if noise.size < 1 or not np.all(np.isfinite(noise)) or not math.isfinite(float(score)):
        raise ValueError(f"noise: at least one finite relabelled value and a finite score, got "
                         f"{noise.size} values, score {score!r}")
    P = int(noise.size)
    floor = _c.Tolerance.roundoff(float(np.abs(noise).max()) + abs(score) + 1.0, ops=64).value
    model = (f"the statement's order against 0 beyond the statistic's own noise: the largest "
             f"of {P} {kind} of the same weights (a permutation test, exact level 1/({P}+1) = "
             f"{1 / (P + 1):.2g}; their median {float(np.median(noise)):.3g}) + round-off "
             f"{floor:.2g}")
    thr = float(noise.max()) + floor
    _c.check_at_least(claim_id, float(score), _c.Threshold(thr, model, "derived", 1.0 / (P + 1)),
                      what=what, name=name, detects=_d.permutation(max(thr, floor), P, unit))
