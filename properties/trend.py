"""Trends over sizes and orders of deterministic sequences: `check_trend` (the exponent or the
direction of an asymptotic statement over at least three sizes, with the error model of what is
known of the values) and `check_order` (the discretization order of a deterministic error
sequence, decisions.md 4).  Split from properties.check, which re-exports every name."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

from properties import check as _c
from properties.policy import FLAT_SUFFIX
from properties.check import (EXACT, ClaimMismatch, Inconclusive, NoPower, Threshold,
                              Tolerance)

__all__ = ["ASSUMED_DOF", "ORDER_FACTOR", "ORDER_SLOPE_TOL", "ORDER_TAIL", "Trend",
           "check_order", "check_trend", "clustered_slope", "loglog_slope", "order_band",
           "order_slope_tolerance", "refine_order_ladder"]


def loglog_slope(hs: Sequence[float], errors: Sequence[float]) -> float:
    """Least-squares slope of log(error) against log(h)."""
    h = np.log(np.asarray(hs, dtype=np.float64))
    e = np.log(np.maximum(np.asarray(errors, dtype=np.float64), 1e-300))
    return float(np.polyfit(h, e, 1)[0])



# check_order's slope tolerance when the call gives none.  Not an error model: a threshold
# with origin "unstated", so a verdict resting on it is never `holds` until the claim derives
# its slope tolerance (the fit's residual error, the next-order term over the step ladder) or
# calibrates it.  Use `order_slope_tolerance(hs, errors)` for the fit-residual bound.
ORDER_SLOPE_TOL = 0.25


def order_slope_tolerance(hs: Sequence[float], errors: Sequence[float], *,
                          false_fail: float = 1e-3) -> Tolerance:
    """A derived slope tolerance for `check_order`: the Student-t band (n - 2 degrees of
    freedom, two-sided `false_fail`) of the least-squares log-log slope, from the fit's own
    residuals (the next-order term shows up as curvature, i.e. residual).  Needs >= 4 step
    sizes (2 residual degrees of freedom)."""
    h = np.log(np.asarray(list(hs), dtype=np.float64))
    e = np.log(np.maximum(np.abs(np.asarray(list(errors), dtype=np.float64)), 1e-300))
    if h.size < 4:
        raise ValueError(f"hs: order_slope_tolerance needs at least 4 step sizes, got {h.size}")
    fit = stats.linregress(h, e)
    crit = float(stats.t.isf(false_fail / 2, h.size - 2))
    return Tolerance.derived(max(crit * float(fit.stderr), 1e-12),
                             f"discretization order: {crit:.3g} x the log-log slope's SE "
                             f"{float(fit.stderr):.3g} (t, {h.size - 2} dof, false-fail "
                             f"{false_fail:g})", false_fail)


ORDER_TAIL = 3  # check_order: the finest local slopes whose spread says how asymptotic the range is
# check_order's band is ORDER_FACTOR x that spread: it covers the distance left for a next-order
# term that shrinks by r <= sqrt(3) / 2 per rung (order_band); 1 covered r <= 0.71 only, and
# failed drawn ReLU cases of joma.theorem1 (2026-12-07)
ORDER_FACTOR = 3.0


def order_band(hs: Sequence[float], errors: Sequence[float], value_error=None, *,
               tail: int = ORDER_TAIL) -> tuple[float, float, str]:
    """The harness's error model of a deterministic sequence err_i ~ C h_i^p (decisions.md 4):
    (slope, band, model).  Local slopes log(err_{i+1} / err_i) / log(h_{i+1} / h_i) between
    successive step sizes, coarse to fine; the slope is the finest one, and the band is the
    spread of the last `tail` local slopes (how far from asymptotic the range still is) times
    ORDER_FACTOR, plus the numerical error of each value (`value_error`, an absolute bound: a
    Tolerance, a number or one per value; default round-off, EXACT) carried to the local slopes.

    Why that bounds the distance left.  A next-order term that shrinks geometrically, by r per
    rung, moves the local slopes monotonically by increments ..., d / r, d: the distance from
    the finest one to the limit is d r / (1 - r), and the spread of the last three is
    d (1 + 1/r); c times that spread covers the distance while r^2 <= c / (1 + c).  With
    c = 3, r <= sqrt(3) / 2 = 0.87: a relative next-order power >= 0.21 on a halving ladder
    (c = 1 needs r <= 0.71, power >= 0.5, and failed drawn ReLU cases of joma.theorem1 whose
    local slopes wander at 1e-3 or approach slowly).  A next-order term whose sign changes from
    rung to rung (a ReLU kink crossed at a different fraction of a step at each step size)
    makes the local slopes wander about the order: three times the spread of the last three
    covered the finest one's distance to it on every such curve of tests/test_procedures (a
    model, not a bound).  A transient at coarser rungs (a unit switching at step-dependent
    times) does not widen the band once three rungs have settled.  Where the last three
    increments are of one sign and each larger than the one before (beyond twice the carried
    value error), the local slopes still accelerate at the fine end: the range is not
    asymptotic yet, the model's premise fails on the data, and the band is infinite
    (`check_order`: Inconclusive, refine the step ladder; `refine_order_ladder`).  No t
    quantile: a deterministic curve has no seeds."""
    h = np.asarray(list(hs), dtype=np.float64)
    e = np.abs(np.asarray(list(errors), dtype=np.float64))
    if h.ndim != 1 or h.size < 3 or e.shape != h.shape:
        raise ValueError(f"hs, errors: at least three step sizes with one error each, got "
                         f"{h.shape} and {e.shape}")
    if np.any(h <= 0) or not np.all(np.isfinite(h)) or np.unique(h).size != h.size:
        raise ValueError("hs must be distinct, finite and > 0")
    if not (isinstance(tail, int) and tail >= 2):
        raise ValueError(f"tail must be an integer >= 2, got {tail!r}")
    if value_error is None:
        value_error = EXACT
    ve = value_error.value if isinstance(value_error, Threshold) else value_error
    ve = np.broadcast_to(np.abs(np.asarray(ve, dtype=np.float64)), h.shape)
    vmodel = value_error.model if isinstance(value_error, Threshold) else "as given"
    order = np.argsort(-h)  # coarse to fine
    h, e, ve = h[order], e[order], ve[order]
    if np.any(e <= ve) or not np.all(np.isfinite(e)):
        bad = ", ".join(f"{a:g}: {b:.3g}" for a, b, c in zip(h, e, ve) if not b > c)
        return float("nan"), float("inf"), (f"an error at or below its numerical error bound "
                                              f"({bad}; {vmodel}): no order can be read")
    lh, le = np.log(h), np.log(e)
    dlh = np.diff(lh)
    local = np.diff(le) / dlh
    rel = np.minimum(ve / e, 1 - 1e-16)
    b = -np.log1p(-rel)  # |log err_i| error bound
    carried = (b[:-1] + b[1:]) / np.abs(dlh)
    k = min(tail, local.size)
    last = local[-k:]
    spread = float(last.max() - last.min())
    carry = float(carried[-k:].max())
    inc = np.diff(local)[-3:]  # the last three increments, beyond their carried value error
    if inc.size == 3 and (np.all(inc > 2 * carry) or np.all(inc < -2 * carry)) \
            and abs(inc[2]) > abs(inc[1]) > abs(inc[0]):
        shown = ", ".join(f"{v:.4g}" for v in local[-4:])
        return float(last[-1]), float("inf"), (
            f"not yet asymptotic: the local slopes ({shown}) still accelerate at the fine end "
            f"(increments {', '.join(f'{v:.3g}' for v in inc)}, each larger than the one "
            f"before), so no band bounds the distance left")
    model = (f"deterministic order: finest local slope {last[-1]:.4g}; band = {ORDER_FACTOR:g} x "
             f"spread {spread:.3g} of the last {k} local slopes "
             f"({', '.join(f'{v:.4g}' for v in last)}) + carried value error {carry:.3g} "
             f"({vmodel})")
    return float(last[-1]), ORDER_FACTOR * spread + carry, model


def refine_order_ladder(hs, errors, add_rung, *, value_error=None, band_at_most: float = 0.5,
                        most: int = 9) -> tuple[list, list]:
    """check_order's "refine the step ladder" as a rule fixed before the run: while
    `order_band`'s band is above `band_at_most` (default 0.5, half the gap to check_order's
    default rival orders: above it the check is Inconclusive) or infinite (the local slopes
    still accelerate at the fine end), halve the finest step and append `add_rung(h)`, the
    error at the new step, up to `most` step sizes.  `value_error`: as order_band's, or a
    function of the step sizes so far.  Returns the (grown) lists hs, errors; check_order then
    decides on the whole ladder."""
    hs, errors = list(hs), list(errors)
    if len(hs) != len(errors) or len(hs) < 3:
        raise ValueError(f"hs, errors: at least three step sizes with one error each, got "
                         f"{len(hs)} and {len(errors)}")
    if not (isinstance(most, int) and most >= len(hs)):
        raise ValueError(f"most must be an integer >= len(hs) = {len(hs)}, got {most!r}")
    if not (band_at_most > 0):
        raise ValueError(f"band_at_most must be > 0, got {band_at_most!r}")

    def band():
        ve = value_error(hs) if callable(value_error) else value_error
        return order_band(hs, errors, ve)[1]

    while not band() <= band_at_most and len(hs) < most:
        hs.append(min(hs) / 2)
        errors.append(float(add_rung(hs[-1])))
    return hs, errors


def check_order(claim_id: str, hs: Iterable[float], errors: Iterable[float], order: float, *,
                value_error: Threshold | float | None = None, rivals: Iterable[float] | None = None,
                slope_tol: float | Tolerance | None = None,
                control_errors: Iterable[float] | None = None,
                exact: Tolerance | None = EXACT, what: str = "", name: str | None = None) -> float:
    """Discretization order of a deterministic sequence: the error behaves as C h^order.

    The harness's procedure (`order_band`): the finest local slope, with a band from the spread
    of the last three local slopes times ORDER_FACTOR (3) plus each value's numerical error
    (`value_error`) carried to them; passes if |slope - order| <= band.  It decides only where
    the band is below half the gap to the nearest rival order (`rivals`, default order - 1 and
    order + 1: O(h) against O(1) and O(h^2)); otherwise `Inconclusive` (refine the step
    ladder: `refine_order_ladder`).  A rival order is rejected
    when it lies outside the band around the slope.  In an alternative's world the band is the
    claim world's (the same check on the same draw), never recomputed from the rival's own
    curve.  Errors all at or below `exact` (round-off) mean the identity holds exactly at every
    step size: that passes (slope undefined, recorded as 0 deviation).

    `slope_tol` (legacy): a band given by the property instead (a Tolerance with its model;
    a bare number is a threshold without provenance), with the least-squares slope."""
    cname = _c.check_name("check_order", name)
    hs, errors = list(hs), list(errors)
    if len(hs) < 3:
        raise ValueError("check_order needs at least three step sizes")
    errs = np.abs(np.asarray(errors, dtype=np.float64))
    if exact is not None and np.all(np.isfinite(errs)) and float(errs.max()) <= exact.value:
        _c._record(claim_id, 0.0, exact, name=cname, what=what)
        return float("nan")
    sink = _c._SINK
    i = sink.order_calls[cname] = sink.order_calls.get(cname, -1) + 1
    if slope_tol is not None:  # legacy: the property's band, the least-squares slope
        tol = slope_tol if isinstance(slope_tol, Threshold) else Tolerance(
            float(slope_tol), f"discretization order {order}: fitted log-log slope within "
                              f"+-{float(slope_tol):g} (a hand-set allowance, no error model)")
        slope = loglog_slope(hs, errors)
        band, model = float(tol.value), tol.model
    else:
        slope, band, model = order_band(hs, errors, value_error)
        ref = sink.reference
        if ref is not None and (cname, i) in ref.order_bands:  # the claim world's band
            band = ref.order_bands[(cname, i)]
            model = f"the claim world's band {band:.3g} on this draw (applied to this world)"
        elif sink is not _c._DEFAULT_SINK:  # a property's draw: its alternatives read it
            sink.order_bands[(cname, i)] = band
        if not math.isfinite(band):
            msg = f"{claim_id}{_c._w(what)}: {model}"
            if sink.soft:
                sink.undecided.append((cname, msg))
                return slope
            raise Inconclusive(msg)
        tol = Tolerance.derived(band, model) if band > 0 else Threshold(0.0, model, "derived")
    cslope = None if control_errors is None else loglog_slope(hs, list(control_errors))
    dev = abs(slope - order) if math.isfinite(slope) else float("inf")
    _c._record(claim_id, dev, tol, None if cslope is None else abs(cslope - order), name=cname,
            what=what)
    if cslope is not None and not abs(cslope - order) > band and not sink.soft:
        raise NoPower(f"{claim_id}{_c._w(what)}: the control's slope {cslope:.3f} "
                      f"also matches order {order}")
    rv = (order - 1.0, order + 1.0) if rivals is None else tuple(float(r) for r in rivals)
    rv = tuple(r for r in rv if r != order)
    if slope_tol is None and rv and math.isfinite(band):
        gap = min(abs(r - order) for r in rv)
        if not band < gap / 2:
            msg = (f"{claim_id}{_c._w(what)}: order band {band:.3g} is not below half the gap "
                   f"{gap:g} to the nearest rival order ({model}): refine the step ladder")
            if sink.soft:
                sink.undecided.append((cname, msg))
                return slope
            raise Inconclusive(msg)
    if math.isfinite(dev):
        # the smallest shift of the order this draw would have rejected (either sign)
        res = sink.trend_resolution
        res[cname] = max(res.get(cname, 0.0), float(band) + dev)
        if rv and slope_tol is None:
            tr = sink.trend_rivals.setdefault(cname, {})
            for r in rv:
                label = f"order {r:g}"
                tr[label] = tr.get(label, True) and abs(slope - r) > band
    if not dev <= band:
        _c._fail(ClaimMismatch(f"{claim_id}{_c._w(what)}: log-log slope {slope:.3f} of "
                            f"error vs step, expected {order} +- {band:.3g} ({model})"), cname)
    return slope


@dataclass(frozen=True)
class Trend:
    slope: float
    stderr: float
    crit: float
    sizes: tuple
    values: tuple


ASSUMED_DOF = 2  # `se` given without `dof`: as if from 3 seeds (the fewest a claim may use)


def seeds_needed(slope: float, stderr: float, seeds: int, false_fail: float, direction: str,
                 power: float = 0.8, most: int = 100_000) -> str:
    """What would decide an inconclusive seed-clustered direction trend: the seeds per size at
    which a true slope equal to the one seen is detected with probability `power` at the
    check's false-fail rate (noncentral t; the per-seed slope scatter taken as seen, so the SE
    shrinks as 1/sqrt(seeds)), and which verdict it would then point to."""
    if not (math.isfinite(slope) and math.isfinite(stderr)) or stderr <= 0 or slope == 0:
        return "no slope to detect: more seeds would not decide it at this effect"
    sd = stderr * math.sqrt(seeds)
    toward = ("the claimed direction" if (slope > 0) == (direction == "increasing")
              else "the other direction (a refutation)")
    # the power at each seed count of the grid, vectorized (the same values as one call per
    # count), up to 63 first, then the geometric tail: the smallest count that reaches `power`
    for grid in (np.arange(max(seeds, 2), 64), np.unique(np.geomspace(64, most, 200).astype(int))):
        if grid.size == 0:
            continue
        crit = stats.t.isf(false_fail / 2, grid - 1)
        reach = stats.nct.sf(crit, grid - 1, abs(slope) / (sd / np.sqrt(grid))) >= power
        if reach.any():
            n = int(grid[int(np.argmax(reach))])
            return (f"the slope seen ({slope:.3g}) would be decided, toward {toward}, with "
                    f"power {power:g} at about {n} seeds per size (now {seeds}; false-fail "
                    f"{false_fail:g})")
    return f"the slope seen ({slope:.3g}) is too small to decide with fewer than {most} seeds"


def _ols_slope(x, y) -> float:
    """The least-squares slope of y on x, computed exactly as scipy.stats.linregress computes
    it (np.cov with bias=1: the same floating-point result), without its per-call overhead."""
    ssxm, ssxym = np.cov(x, y, bias=1)[0]
    return float(ssxym / ssxm)


def clustered_slope(sizes, values, *, log_values: bool = True) -> tuple[float, float, int]:
    """The seed-clustered slope of a seeds x sizes array: per seed (cluster) the least-squares
    slope of log(value) (the value itself, log_values=False) on log(size), then their mean, its
    standard error sd / sqrt(J) and J - 1 degrees of freedom.  What `check_trend` decides a 2-D
    `values` by; hand it to `check_estimate(side=...)` for a one-sided bound on the exponent.
    The seeds need not be paired across sizes: each seed's slope is one independent draw."""
    x = np.asarray(list(sizes), dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or np.any(x <= 0) or not np.all(np.isfinite(x)) \
            or np.unique(x).size != x.size:
        raise ValueError(f"sizes: at least two distinct finite sizes > 0, got {x.tolist()}")
    if v.ndim != 2 or v.shape[1] != x.size or v.shape[0] < 2:
        raise ValueError(f"values: a seeds x sizes array with at least 2 seeds and one column "
                         f"per size ({x.size}), got shape {v.shape}")
    if not np.all(np.isfinite(v)) or (log_values and np.any(v <= 0)):
        raise ValueError("values must be finite" + (" and > 0 (their log is fitted)"
                                                     if log_values else ""))
    lx = np.log(x)
    ys = np.log(v) if log_values else v
    slopes = np.array([_ols_slope(lx, y) for y in ys])
    n = slopes.size
    return float(slopes.mean()), float(slopes.std(ddof=1) / math.sqrt(n)), n - 1


def _slope_fit(x, v, log_values, se, dof, value_error, false_fail):
    """(slope, stderr, crit, dof, model, per-size values) for the four error models."""
    lx = np.log(x)
    if v.ndim == 2:  # seeds x sizes: a slope per seed, clustered by seed, Student t
        slope, stderr, d = clustered_slope(x, v, log_values=log_values)  # >= 2 seeds, or raises
        crit = float(stats.t.isf(false_fail / 2, d))
        return slope, stderr, crit, d, f"seed-clustered: t with {d} dof over {d + 1} seeds", \
            v.mean(axis=0)
    y = np.log(v) if log_values else v
    if value_error is not None:  # a deterministic sequence: propagate a per-value error bound
        r = float(value_error.value)
        bound = (-math.log1p(-r) if r < 1 else float("inf")) if log_values else r
        cx = (lx - lx.mean()) / float(np.sum((lx - lx.mean()) ** 2))
        band = bound * float(np.sum(np.abs(cx)))
        slope = float(np.sum(cx * (y - y.mean())))
        return slope, band, 1.0, None, (f"deterministic: each value within {r:.3g} "
                                        f"({value_error.model}), worst-case slope error"), v
    if se is None:
        fit = stats.linregress(lx, y)
        # a constant sequence: linregress's r (and so its SE) is 0 / 0; the fit is exact, slope 0
        # with no residual, SE 0 (an exactly flat null is then decided, not left undecided)
        stderr = 0.0 if float(np.ptp(y)) == 0.0 else float(fit.stderr)
        return float(fit.slope), stderr, float(stats.t.isf(false_fail / 2, x.size - 2)), \
            x.size - 2, f"residual: t with {x.size - 2} dof", v
    s = np.asarray(list(se), dtype=np.float64)
    if s.shape != x.shape or np.any(s <= 0):
        raise ValueError("se must be positive, one per size")
    d = ASSUMED_DOF if dof is None else dof
    w = 1.0 / s ** 2
    xm = np.sum(w * lx) / np.sum(w)
    sxx = float(np.sum(w * (lx - xm) ** 2))
    slope = float(np.sum(w * (lx - xm) * y) / sxx)
    return slope, math.sqrt(1.0 / sxx), float(stats.t.isf(false_fail / 2, d)), d, \
        (f"weighted by se: t with {d} dof" + (" (dof not given: assumed, as from 3 seeds)"
                                             if dof is None else "")), v


def _rival_out(slope: float, r: float, band: float, up: float) -> bool:
    """Is the rival exponent `r` rejected by this slope and band: outside the band around it
    (a value, up = 0), or beyond it on the bound's failing side (a bound, up = +1 / -1)?"""
    return abs(slope - r) > band if up == 0 else up * (slope - r) > band


def check_trend(claim_id: str, sizes: Iterable[float], values, *,
                exponent: float | None = None, direction: str | None = None,
                allowance: Tolerance | None = None, false_fail: float = 1e-3,
                se: Iterable[float] | None = None, dof: int | None = None,
                value_error: Tolerance | None = None, rivals: Iterable[float] = (),
                log_values: bool = True, what: str = "", name: str | None = None,
                side: str | None = None) -> Trend:
    """Decide an asymptotic statement by its trend over at least three sizes.

    Fits y = a + slope * log(size), y = log(value) (or the value itself, log_values=False).
    The slope's error, by what is known of the values (never a normal critical value):

    values 2-D  -- seeds x sizes: one least-squares slope per seed, their mean, and the
                   seed-clustered standard error with Student t on seeds - 1 dof;
    se, dof     -- the standard error of each y (e.g. over `dof + 1` seeds): a weighted fit and
                   Student t on `dof` dof (without `dof`: 2, as from 3 seeds);
    value_error -- a deterministic sequence: a derived bound on each value's relative error
                   (absolute with log_values=False), propagated to the worst-case slope error
                   (round-off or solver error, never an optimizer "precision" as an SE);
    none        -- the fit's residual error, Student t with sizes - 2 dof.
    The two-sided false-fail rate of the decision is `false_fail`.

    exponent  -- the exponent the theory implies: passes if |slope - exponent| <= band +
                 allowance (a finite-size term derived beforehand, or calibrated on disjoint
                 seeds, never computed from the run being decided); else ClaimMismatch.
    side      -- with `exponent`, a bound instead of a value: "not_above" (the exponent is at
                 most `exponent`: a rate at least that fast) passes if slope - exponent <= band
                 + allowance, "not_below" the mirror; the band at the one-sided rate
                 `false_fail`.  A rival bound counts where it could have passed: on the claimed
                 side of `exponent` (a faster rate for "not_above"); a looser one is the check's
                 complement.
    direction -- "increasing" or "decreasing": passes if the slope is significantly of that
                 sign, ClaimMismatch if significantly of the other, `Inconclusive` otherwise.
    rivals    -- the trend's own rival exponents (the next simple exponent, 0 for "no trend"):
                 each is rejected on a draw if it lies outside the band around the slope; the
                 report credits them to this check (per-check power).
    Fewer than three distinct sizes: `Inconclusive` with the numbers (one size decides nothing).
    """
    cname = _c.check_name("check_trend", name)
    if (exponent is None) == (direction is None):
        raise ValueError("check_trend needs exactly one of exponent= or direction=")
    if direction not in (None, "increasing", "decreasing"):
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    if side not in (None, "not_above", "not_below"):
        raise ValueError(f"side must be 'not_above' or 'not_below', got {side!r}")
    if side is not None and exponent is None:
        raise ValueError("side= bounds an exponent: give it with exponent=, not direction=")
    if side is not None and not false_fail < 0.5:
        raise ValueError(f"false_fail of a one-sided bound must be in (0, 0.5), got {false_fail}")
    if not (0 < false_fail < 1):
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
    if dof is not None and not (isinstance(dof, int) and dof >= 1):
        raise ValueError(f"dof must be an integer >= 1, got {dof!r}")
    x = np.asarray(list(sizes), dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if sum(a is not None for a in (se, value_error)) + (v.ndim == 2) > 1:
        raise ValueError("check_trend: give at most one of se=, value_error= or 2-D values")
    rivals = tuple(float(r) for r in rivals)
    _c._SINK.trends += 1
    if x.ndim != 1 or v.shape[-1:] != x.shape or v.ndim not in (1, 2):
        raise ValueError(f"sizes must be 1-D and values (seeds x) sizes, got {x.shape}, {v.shape}")
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("sizes must be finite and > 0")
    vm = v if v.ndim == 1 else v.mean(axis=0)
    nums = ", ".join(f"{a:g}: {b:.4g}" for a, b in zip(x, vm))
    if np.unique(x).size < 3:
        raise Inconclusive(f"{claim_id}{_c._w(what)}: {np.unique(x).size} size(s) only ({nums}); "
                           "an asymptotic statement needs a trend over at least three")
    if log_values and (np.any(v <= 0) or not np.all(np.isfinite(v))):
        _c._record(claim_id, float("inf"), Tolerance.derived(1e-300, "trend: values must be > 0"),
                name=cname, what=what)
        _c._fail(ClaimMismatch(f"{claim_id}{_c._w(what)}: values must be finite and > 0 for a "
                            f"log-log trend ({nums})"), cname)
        return Trend(float("nan"), float("nan"), float("nan"), tuple(x.tolist()), tuple(vm.tolist()))
    # a one-sided bound spends its whole rate on one side: the band at twice the two-sided rate
    slope, stderr, crit, d, emodel, vm = _slope_fit(x, v, log_values, se, dof, value_error,
                                                    false_fail * (1 if side is None else 2))
    ff = false_fail if value_error is None else float(value_error.false_fail)
    band = crit * stderr
    trend = Trend(slope, stderr, crit, tuple(x.tolist()), tuple(np.asarray(vm).tolist()))
    desc = (f"slope {slope:.4g} +- {band:.3g} ({crit:.3g} x SE {stderr:.3g}; {emodel}) over "
            f"sizes ({nums})")
    # a rival counts only where it could have passed this check: for an exponent, any other
    # exponent; for a direction, an exponent on the claimed side of 0 (the exponent 0, the
    # other side or the opposite direction is the test's own complement, rejected whenever
    # the check passes: not power)
    sign = None if direction is None else (1.0 if direction == "increasing" else -1.0)
    # a one-sided bound: `up` is +1 where the check fails above the bound ("not_above")
    up = {None: 0.0, "not_above": 1.0, "not_below": -1.0}[side]
    if side is not None:  # a rival bound on the claimed side (stricter) could have passed
        credited = tuple(r for r in rivals if up * (exponent - r) > 0)
    else:
        credited = tuple(r for r in rivals if sign is None or sign * r > 0)
    complement = tuple(r for r in rivals if r not in credited)
    if credited:
        rv = _c._SINK.trend_rivals.setdefault(cname, {})
        for r in credited:
            label = f"exponent {r:g}"
            rv[label] = rv.get(label, True) and _rival_out(slope, r, band, up)
    if complement:
        _c._SINK.trend_complement.setdefault(cname, set()).update(f"exponent {r:g}"
                                                               for r in complement)
    expected = (direction if exponent is None else f"exponent {exponent:g}" if side is None
                else f"exponent {'at most' if up > 0 else 'at least'} {exponent:g}")
    if len(_c._SINK.trend_log) < _c.TREND_LOG_MAX:
        _c._SINK.trend_log.append({
            "what": what, "sizes": [float(a) for a in x], "values": [float(b) for b in vm],
            "slope": slope, "band": band, "error_model": emodel, "dof": d,
            "expected": expected,
            "rivals": {f"exponent {r:g}": bool(_rival_out(slope, r, band, up)) for r in credited},
            "complement": [f"exponent {r:g}" for r in complement]})
    if exponent is not None:
        allow = 0.0 if allowance is None else float(allowance.value)
        total = band + allow
        tol = Tolerance.derived(total, f"trend: {crit:.3g} x slope SE ({emodel}; false-fail "
                                       f"{ff:g})" + (f" + allowance {allow:g} ({allowance.model})"
                                                     if allowance else ""), ff) \
            if total > 0 else Threshold(0.0, f"trend: an exact slope ({emodel})", "derived", ff)
        if allowance is not None and allowance.origin not in ("derived", "calibrated"):
            tol = Tolerance(max(total, 1e-300), tol.model + " [allowance without provenance]")
        sdev = slope - exponent
        # a value: |slope - exponent|; a bound: how far beyond it, on its failing side (0 inside)
        dev = abs(sdev) if side is None else max(0.0, up * sdev)
        _c._record(claim_id, dev, tol, name=cname, what=what)
        # the smallest shift of the exponent this draw would have rejected (either sign; a
        # bound: toward its claimed side, a stricter bound)
        res = _c._SINK.trend_resolution
        res[cname] = max(res.get(cname, 0.0),
                         total + (abs(sdev) if side is None else max(0.0, -up * sdev)))
        if not dev <= total:
            want = f"{expected} ({'+-' if side is None else '+'} allowance {allow:g})"
            # an exactly flat sequence (slope 0, no spread) met in an alternative's world fails
            # an exponent other than 0 whatever the data: rejected under FLAT_SUFFIX, not power
            flat = band == 0 and slope == 0
            _c._fail(_c._trend_mismatch(f"{claim_id}{_c._w(what)}: {desc}; expected {want}"),
                     cname + FLAT_SUFFIX if flat and _c._SINK.soft else cname)
        return trend
    # the smallest true slope this design detects (TFP's min_discrepancy): with probability 0.95
    # at its false-fail rate, (crit + t_0.05) x SE on the seeds' dof; a deterministic sequence
    # (no dof) detects any slope beyond its band
    res = _c._SINK.trend_resolution
    detect = band if d is None else (crit + float(stats.t.isf(0.05, d))) * stderr
    res[cname] = max(res.get(cname, 0.0), detect)
    th = Threshold(0.0, f"trend direction {direction}: slope beyond {crit:.3g} x SE ({emodel}; "
                        f"false-fail {ff:g})", "derived", ff)
    _c._record(claim_id, sign * slope - band, th, kind="score>=tol", name=cname, what=what)
    if sign * slope - band > 0:
        return trend
    # an exactly flat (or reversed) sequence with no spread (band 0) is decisively not of the
    # claimed direction: rejected, never "not told apart".  An exactly flat one met in an
    # alternative's world (a null that copies one run to every size, or freezes the statistic)
    # could not have passed this check whatever the data: it is rejected, but under a name of
    # its own (FLAT_SUFFIX), so it is not counted as this check's power
    flat = band == 0 and slope == 0
    if flat or sign * slope + band < 0 or (band == 0 and sign * slope <= 0):
        how = ("exactly flat (slope 0 with no spread)" if flat else
               f"significantly {'decreasing' if sign > 0 else 'increasing'}")
        _c._fail(_c._trend_mismatch(f"{claim_id}{_c._w(what)}: {desc}: {how}, expected "
                                    f"{direction}"),
                 cname + FLAT_SUFFIX if flat and _c._SINK.soft else cname)
        return trend
    msg = f"{claim_id}{_c._w(what)}: {desc}: not significantly {direction} (nor the other way)"
    if emodel.startswith("seed-clustered"):
        msg += f"; {seeds_needed(slope, stderr, d + 1, ff, direction)}"
    if _c._SINK.soft:
        _c._SINK.undecided.append((cname, msg))
        return trend
    raise Inconclusive(msg)
