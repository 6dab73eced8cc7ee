"""How a property decides: comparisons with named thresholds, and what each check records.

A threshold says where it comes from (`Threshold.origin`): *derived* from an error model
(round-off, discretization order, Monte Carlo with a false-fail rate, solver tolerance) or
*calibrated* on seeds disjoint from the audit's (`Tolerance.calibrated`, with the number of
calibration runs and the false-fail rate that the order statistic implies).  A threshold built
by hand without an origin is `unstated`, and a claim resting on one is never `holds`.

Every check records the observed error and its threshold under the running draw, and adds the
threshold's false-fail probability to the run's false-fail budget.  A mismatch between
simulation and prediction raises `ClaimMismatch`.  Power is not shown here: it is shown by the
claim's alternatives (rivals and nulls, `properties.world`), which the harness runs through the
same property body.  The old `control=` arguments are still accepted and still raise `NoPower`
when the control is not rejected, but a control computed by the property no longer counts as
power.

Asymptotic and qualitative statements ("<<", Theta, "tends to", "grows") go through
`check_trend`: a fitted log-log slope over at least three sizes, tested against the exponent or
direction the theory implies with its fit error.  One size, or a trend that is not significant
either way, raises `Inconclusive` (the claim is then `not-audited`, with the numbers).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from _pytest.outcomes import Skipped
from scipy import stats

from properties.settings import SIZE_ENV, SIZES, examples, profile, size  # noqa: F401 (re-exported)

__all__ = [
    "ClaimMismatch",
    "NoPower",
    "Inconclusive",
    "PropertyError",
    "Threshold",
    "Tolerance",
    "check_close",
    "check_at_least",
    "check_order",
    "check_trend",
    "examples",
    "loglog_slope",
]

ORIGINS = ("derived", "calibrated", "unstated")


class ClaimMismatch(AssertionError):
    """The simulation disagrees with the prediction beyond the tolerance."""


class NoPower(AssertionError):
    """An alternative (or a legacy control) was not rejected: the check could not have failed."""


class PropertyError(AssertionError):
    """The property itself is malformed: it made no check, audits an unregistered claim, or an
    alternative replaces a slot of the wrong kind."""


class Inconclusive(Skipped):
    """The evidence decides neither way (one size only, or a trend within its fit error).
    A pytest skip, so the suite stays green; the claim is reported `not-audited` with the
    numbers in the message."""

    def __init__(self, msg: str):
        super().__init__(msg=msg, allow_module_level=False)


# --------------------------------------------------------------------------------------------
# Thresholds with their provenance
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Threshold:
    """A threshold `value` with the model it comes from.

    origin     -- "derived" (an error model), "calibrated" (fixed on calibration seeds disjoint
                  from the audit's), or "unstated" (a hand-written number: not evidence).
    false_fail -- probability that one check against this threshold fails although the claim is
                  true (0 for a deterministic bound such as round-off)."""

    value: float
    model: str
    origin: str = "unstated"
    false_fail: float = 0.0

    def __post_init__(self):
        if not math.isfinite(self.value):
            raise ValueError(f"threshold value must be finite, got {self.value}")
        if self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, got {self.origin!r}")
        if not (0.0 <= self.false_fail < 1.0):
            raise ValueError(f"false_fail must be in [0, 1), got {self.false_fail}")

    def as_record(self) -> dict:
        return {"value": float(self.value), "origin": self.origin,
                "false_fail": float(self.false_fail), "model": self.model}


@dataclass(frozen=True)
class Tolerance(Threshold):
    """A tolerance on an error: a `Threshold` whose value is > 0."""

    def __post_init__(self):
        super().__post_init__()
        if not self.value > 0:
            raise ValueError(f"tolerance value must be finite and > 0, got {self.value}")

    @staticmethod
    def roundoff(scale: float = 1.0, ops: float = 1e3, dtype_eps: float = np.finfo(np.float64).eps):
        """Float round-off: `ops` accumulated operations of relative error eps on numbers of
        size `scale` (a deliberately generous but still tiny bound)."""
        return Tolerance(float(ops * dtype_eps * max(scale, 1e-300)),
                         f"float64 round-off: {ops:g} ops x eps x scale {scale:.3g}", "derived")

    @staticmethod
    def monte_carlo(se: float, false_fail: float = 1e-6, comparisons: int = 1):
        """Monte Carlo standard error `se`: reject beyond z * se with a two-sided z chosen so the
        false-fail probability of this check (Bonferroni over `comparisons`) is `false_fail`."""
        if not (0 < false_fail < 1):
            raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
        if not (isinstance(comparisons, int) and comparisons >= 1):
            raise ValueError(f"comparisons must be an integer >= 1, got {comparisons!r}")
        z = float(stats.norm.isf(false_fail / (2 * comparisons)))
        return Tolerance(float(z * se), f"Monte Carlo: {z:.2f} x SE {se:.3g} "
                         f"(false-fail {false_fail:g} over {comparisons} comparisons)", "derived",
                         false_fail / comparisons)

    @staticmethod
    def solver(rtol: float, scale: float = 1.0, factor: float = 100.0):
        """ODE solver tolerance: `factor` x rtol x scale (global error of an adaptive solver run
        at local tolerance rtol)."""
        return Tolerance(float(factor * rtol * max(scale, 1e-300)),
                         f"ODE solver: {factor:g} x rtol {rtol:g} x scale {scale:.3g}", "derived")

    @staticmethod
    def derived(value: float, model: str, false_fail: float = 0.0):
        """A tolerance from an error model stated in `model` (say which, and why)."""
        return Tolerance(float(value), model, "derived", false_fail)

    @staticmethod
    def calibrated(samples: Sequence[float], *, calibration_seeds: range, audit_seeds: range,
                   rank: int = 1, side: str = "upper", model: str = ""):
        """A threshold fixed on calibration runs: the `rank`-th largest (side="upper", for an
        error that must stay below) or smallest (side="lower", for a score that must stay above)
        of `samples`, measured on `calibration_seeds`, which must not meet `audit_seeds`.

        For a draw exchangeable with the calibration runs, P(it lands beyond the rank-th extreme
        of n runs) = rank / (n + 1): that is the false-fail rate recorded (distribution-free)."""
        x = np.asarray(samples, dtype=np.float64)
        if x.ndim != 1 or x.size < 1 or not np.all(np.isfinite(x)):
            raise ValueError("samples must be a non-empty 1-D list of finite numbers")
        if not (isinstance(rank, int) and 1 <= rank <= x.size):
            raise ValueError(f"rank must be an integer in [1, {x.size}], got {rank!r}")
        if side not in ("upper", "lower"):
            raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
        for name, r in (("calibration_seeds", calibration_seeds), ("audit_seeds", audit_seeds)):
            if not isinstance(r, range) or len(r) == 0:
                raise ValueError(f"{name} must be a non-empty range, got {r!r}")
        if max(calibration_seeds.start, audit_seeds.start) < min(calibration_seeds.stop,
                                                                 audit_seeds.stop):
            raise ValueError(f"calibration_seeds {calibration_seeds} must be disjoint from "
                             f"audit_seeds {audit_seeds}")
        xs = np.sort(x)
        value = float(xs[-rank] if side == "upper" else xs[rank - 1])
        ff = rank / (x.size + 1)
        text = (f"calibrated: {'largest' if side == 'upper' else 'smallest'}"
                f"{'' if rank == 1 else f' (rank {rank})'} of {x.size} runs on seeds "
                f"[{calibration_seeds.start}, {calibration_seeds.stop}); audit seeds "
                f"[{audit_seeds.start}, {audit_seeds.stop}); false-fail {ff:.3g} per draw"
                + (f"; {model}" if model else ""))
        cls = Tolerance if value > 0 else Threshold
        return cls(value, text, "calibrated", ff)


def _as_threshold(t, model: str | None, *, tolerance: bool = False) -> Threshold:
    if isinstance(t, Threshold):
        return t
    if tolerance:
        return Tolerance(float(t), model or "unstated")
    return Threshold(float(t), model or "unstated")


# --------------------------------------------------------------------------------------------
# Recording: every check writes into the active sink (properties.world swaps sinks per draw
# and per alternative; outside a property the sink is a module-level default).
# --------------------------------------------------------------------------------------------
class Sink:
    """Where the checks of one draw (in one world) are recorded."""

    def __init__(self):
        self.records: dict[str, dict] = {}
        self.checks = 0
        self.trends = 0  # check_trend decisions (the asymptotic policy)
        self.trend_log: list[dict] = []  # each trend's sizes, values, fitted slope (the report)
        self.false_fail = 0.0
        self.thresholds: dict[tuple, dict] = {}

    def merge(self, other: "Sink"):
        for key, rec in other.records.items():
            mine = self.records.get(key)
            if mine is None:
                self.records[key] = dict(rec)
                continue
            mine["examples"] += rec["examples"]
            if rec["max_error"] is not None and (
                    mine["max_error"] is None
                    or _worse(rec["max_error"], mine["max_error"], mine["tolerance"],
                              rec["tolerance"], rec["kind"])):
                mine["max_error"], mine["tolerance"] = rec["max_error"], rec["tolerance"]
            if rec["min_control_error"] is not None and (
                    mine["min_control_error"] is None
                    or _worse(rec["min_control_error"], mine["min_control_error"], rec["tolerance"],
                              rec["tolerance"], _flip(rec["kind"]))):
                mine["min_control_error"] = rec["min_control_error"]
        self.checks += other.checks
        self.trends += other.trends
        self.trend_log.extend(other.trend_log[:TREND_LOG_MAX - len(self.trend_log)])
        self.false_fail += other.false_fail
        self.thresholds.update(other.thresholds)


TREND_LOG_MAX = 12  # trends kept per property for the report
_SINK = Sink()


@contextlib.contextmanager
def recording(sink: Sink):
    """Route the checks made inside the block into `sink`."""
    global _SINK
    old, _SINK = _SINK, sink
    try:
        yield sink
    finally:
        _SINK = old


def _record(claim_id: str, error: float | None, threshold: Threshold, control_error=None,
            kind: str = "error<=tol"):
    sink, tol = _SINK, float(threshold.value)
    sink.checks += 1
    sink.false_fail += threshold.false_fail
    t = threshold.as_record()
    sink.thresholds[(t["value"], t["origin"], t["model"])] = t
    # one record per (claim, kind of comparison): errors and scores are not comparable
    rec = sink.records.setdefault(f"{claim_id}|{kind}", {"claim": claim_id, "max_error": None,
                                                         "tolerance": tol, "examples": 0,
                                                         "min_control_error": None, "kind": kind})
    rec["examples"] += 1
    if error is not None and math.isfinite(error):
        if rec["max_error"] is None or _worse(error, rec["max_error"], rec["tolerance"], tol, kind):
            rec["max_error"], rec["tolerance"] = float(error), tol
    elif error is not None:  # NaN / inf observed: that is the worst possible error
        rec["max_error"], rec["tolerance"] = float("inf"), tol
    if control_error is not None:
        c = float(control_error)
        if rec["min_control_error"] is None or _worse(c, rec["min_control_error"], tol, tol,
                                                      _flip(kind)):
            rec["min_control_error"] = c


def _flip(kind):
    return "score>=tol" if kind == "error<=tol" else "error<=tol"


def _worse(new, old, old_tol, new_tol, kind):
    """Is `new` a worse observation than `old` (relative to its own tolerance)?"""
    if kind == "score>=tol":  # a score must stay above its threshold: smaller is worse
        return new - new_tol < old - old_tol
    if old_tol > 0 and new_tol > 0:
        return new / new_tol > old / old_tol
    return new - new_tol > old - old_tol


def pop_records() -> dict[str, dict]:
    """Records of the default sink (checks made outside an `@audits` property)."""
    out = dict(_SINK.records)
    _SINK.records.clear()
    return out


# --------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------
def _norm_error(observed, predicted, metric: str) -> float:
    o = np.asarray(observed, dtype=np.float64)
    p = np.asarray(predicted, dtype=np.float64)
    if o.shape != p.shape:
        raise ValueError(f"observed shape {o.shape} != predicted shape {p.shape}")
    if metric == "max_abs":
        return float(np.max(np.abs(o - p))) if o.size else 0.0
    if metric == "rel_l2":  # norm-relative error, as in neural-tangents' tests
        denom = max(float(np.linalg.norm(p)), float(np.linalg.norm(o)), 1e-300)
        return float(np.linalg.norm(o - p) / denom)
    raise ValueError(f"unknown metric {metric!r}; use 'max_abs' or 'rel_l2'")


def _w(what):
    return f" {what}" if what else ""


def check_close(claim_id: str, observed, predicted, tol: Tolerance, *, metric: str = "max_abs",
                control=None, what: str = "") -> float:
    """Assert error(observed, predicted) <= tol.value.  `control` (legacy): a wrong prediction
    the same check must reject, else NoPower; it does not count as power for the verdict."""
    tol = _as_threshold(tol, None, tolerance=True)
    err = _norm_error(observed, predicted, metric)
    cerr = None if control is None else _norm_error(observed, control, metric)
    _record(claim_id, err, tol, cerr)
    if cerr is not None and not cerr > tol.value:
        raise NoPower(f"{claim_id}{_w(what)}: negative control error {cerr:.3g}"
                      f" is within the tolerance {tol.value:.3g} ({tol.model})")
    if not err <= tol.value:  # also catches NaN
        raise ClaimMismatch(f"{claim_id}{_w(what)}: {metric} error {err:.3g} > "
                            f"tolerance {tol.value:.3g} ({tol.model})")
    return err


def check_at_least(claim_id: str, score: float, threshold, model: str | None = None, *,
                   control: float | None = None, what: str = "") -> float:
    """Assert score >= threshold (a correlation, a margin).  `threshold` is a `Threshold` (or a
    number with its `model` text, origin unstated).  `control` as in `check_close`."""
    th = _as_threshold(threshold, model)
    score = float(score)
    _record(claim_id, score, th, control, kind="score>=tol")
    if control is not None and not control < th.value:
        raise NoPower(f"{claim_id}{_w(what)}: negative control score "
                      f"{control:.3g} is not below the threshold {th.value:.3g} ({th.model})")
    if not score >= th.value:
        raise ClaimMismatch(f"{claim_id}{_w(what)}: score {score:.3g} < "
                            f"threshold {th.value:.3g} ({th.model})")
    return score


def loglog_slope(hs: Sequence[float], errors: Sequence[float]) -> float:
    """Least-squares slope of log(error) against log(h)."""
    h = np.log(np.asarray(hs, dtype=np.float64))
    e = np.log(np.maximum(np.asarray(errors, dtype=np.float64), 1e-300))
    return float(np.polyfit(h, e, 1)[0])


EXACT = Tolerance.roundoff(1.0)


def check_order(claim_id: str, hs: Iterable[float], errors: Iterable[float], order: float, *,
                slope_tol: float | Tolerance = 0.25, control_errors: Iterable[float] | None = None,
                exact: Tolerance | None = EXACT, what: str = "") -> float:
    """Discretization order: the fitted log-log slope of error vs step size must be within
    `slope_tol` of `order` (diffrax-style test_ode_order).  Errors all at or below `exact`
    (round-off) mean the identity holds exactly at every step size: that passes (slope
    undefined, recorded as 0 deviation) rather than being refuted for a zero slope."""
    hs, errors = list(hs), list(errors)
    if len(hs) < 3:
        raise ValueError("check_order needs at least three step sizes")
    tol = slope_tol if isinstance(slope_tol, Threshold) else Tolerance.derived(
        float(slope_tol), f"discretization order {order}: fitted log-log slope within "
                          f"+-{float(slope_tol):g}")
    errs = np.abs(np.asarray(errors, dtype=np.float64))
    if exact is not None and np.all(np.isfinite(errs)) and float(errs.max()) <= exact.value:
        _record(claim_id, 0.0, tol)
        return float("nan")
    slope = loglog_slope(hs, errors)
    cslope = None if control_errors is None else loglog_slope(hs, list(control_errors))
    dev = abs(slope - order) if math.isfinite(slope) else float("inf")
    _record(claim_id, dev, tol, None if cslope is None else abs(cslope - order))
    if cslope is not None and not abs(cslope - order) > tol.value:
        raise NoPower(f"{claim_id}{_w(what)}: the control's slope {cslope:.3f} "
                      f"also matches order {order}")
    if not dev <= tol.value:
        raise ClaimMismatch(f"{claim_id}{_w(what)}: log-log slope {slope:.3f} of "
                            f"error vs step, expected {order} +- {tol.value:g}")
    return slope


@dataclass(frozen=True)
class Trend:
    slope: float
    stderr: float
    crit: float
    sizes: tuple
    values: tuple


def check_trend(claim_id: str, sizes: Iterable[float], values: Iterable[float], *,
                exponent: float | None = None, direction: str | None = None,
                allowance: Tolerance | None = None, false_fail: float = 1e-3,
                se: Iterable[float] | None = None, log_values: bool = True,
                what: str = "") -> Trend:
    """Decide an asymptotic statement by its trend over at least three sizes.

    Fits y = a + slope * log(size), y = log(value) (or the value itself, log_values=False), by
    least squares.  Without `se` the slope's standard error is the residual one and the critical
    value is Student t with n - 2 degrees of freedom; with `se` (the standard error of each y,
    e.g. from seeds) the fit is weighted and the critical value normal.  The two-sided
    false-fail rate of the decision is `false_fail`.

    exponent  -- the exponent the theory implies: passes if |slope - exponent| <= crit * stderr
                 + allowance (a shrinking finite-size term, derived); else ClaimMismatch (a
                 trend against the statement).
    direction -- "increasing" or "decreasing" (for "grows", "tends to 0", "<<" ratios): passes
                 if the slope is significantly of that sign, ClaimMismatch if significantly of
                 the other, `Inconclusive` otherwise.
    Fewer than three distinct sizes: `Inconclusive` with the numbers (one size decides nothing).
    """
    if (exponent is None) == (direction is None):
        raise ValueError("check_trend needs exactly one of exponent= or direction=")
    if direction not in (None, "increasing", "decreasing"):
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    if not (0 < false_fail < 1):
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
    x = np.asarray(list(sizes), dtype=np.float64)
    v = np.asarray(list(values), dtype=np.float64)
    _SINK.trends += 1
    if x.shape != v.shape or x.ndim != 1:
        raise ValueError(f"sizes and values must be 1-D of one length, got {x.shape}, {v.shape}")
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("sizes must be finite and > 0")
    nums = ", ".join(f"{a:g}: {b:.4g}" for a, b in zip(x, v))
    if np.unique(x).size < 3:
        raise Inconclusive(f"{claim_id}{_w(what)}: {np.unique(x).size} size(s) only ({nums}); "
                           "an asymptotic statement needs a trend over at least three")
    if log_values and (np.any(v <= 0) or not np.all(np.isfinite(v))):
        raise ClaimMismatch(f"{claim_id}{_w(what)}: values must be finite and > 0 for a log-log "
                            f"trend ({nums})")
    y = np.log(v) if log_values else v
    lx = np.log(x)
    if se is None:
        fit = stats.linregress(lx, y)
        slope, stderr = float(fit.slope), float(fit.stderr)
        crit = float(stats.t.isf(false_fail / 2, x.size - 2))
    else:
        s = np.asarray(list(se), dtype=np.float64)
        if s.shape != x.shape or np.any(s <= 0):
            raise ValueError("se must be positive, one per size")
        w = 1.0 / s ** 2
        xm = np.sum(w * lx) / np.sum(w)
        sxx = float(np.sum(w * (lx - xm) ** 2))
        slope = float(np.sum(w * (lx - xm) * y) / sxx)
        stderr = math.sqrt(1.0 / sxx)
        crit = float(stats.norm.isf(false_fail / 2))
    band = crit * stderr
    trend = Trend(slope, stderr, crit, tuple(x.tolist()), tuple(v.tolist()))
    desc = f"slope {slope:.4g} +- {band:.3g} ({crit:.3g} x SE {stderr:.3g}) over sizes ({nums})"
    if len(_SINK.trend_log) < TREND_LOG_MAX:
        _SINK.trend_log.append({
            "what": what, "sizes": [float(a) for a in x], "values": [float(b) for b in v],
            "slope": slope, "band": band,
            "expected": (f"exponent {exponent:g}" if exponent is not None else direction)})
    if exponent is not None:
        allow = 0.0 if allowance is None else float(allowance.value)
        tol = Tolerance.derived(band + allow if band + allow > 0 else 1e-300,
                                f"trend: {crit:.3g} x slope SE (false-fail {false_fail:g})"
                                + (f" + allowance {allow:g} ({allowance.model})" if allowance else ""),
                                false_fail)
        dev = abs(slope - exponent)
        _record(claim_id, dev, tol)
        if not dev <= tol.value:
            raise ClaimMismatch(f"{claim_id}{_w(what)}: {desc}; expected exponent {exponent:g}"
                                f" (+- allowance {allow:g})")
        return trend
    sign = 1.0 if direction == "increasing" else -1.0
    th = Threshold(0.0, f"trend direction {direction}: slope beyond {crit:.3g} x SE "
                        f"(false-fail {false_fail:g})", "derived", false_fail)
    _record(claim_id, sign * slope - band, th, kind="score>=tol")
    if sign * slope - band > 0:
        return trend
    if sign * slope + band < 0:
        raise ClaimMismatch(f"{claim_id}{_w(what)}: {desc}: significantly "
                            f"{'decreasing' if sign > 0 else 'increasing'}, expected {direction}")
    raise Inconclusive(f"{claim_id}{_w(what)}: {desc}: not significantly {direction} "
                       "(nor the other way)")
