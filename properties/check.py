"""How a property decides: comparisons with named error models, and their negative controls.

Every check records the observed error and the tolerance under the running test, so the audit
report can show the worst error against the tolerance.  Every check that takes a `control`
also verifies power: the same comparison applied to a deliberately wrong prediction must be
rejected, otherwise the property raises `NoPower` (a real failure, never an expected one).

A mismatch between simulation and prediction raises `ClaimMismatch`.  A printed statement that
is known to fail is marked `@audits(id, form="printed", fails="reason")`: a strict xfail that
only accepts `ClaimMismatch`, so a crash or a power failure still turns the suite red.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from scipy import stats

__all__ = [
    "ClaimMismatch",
    "NoPower",
    "Tolerance",
    "audits",
    "check_close",
    "check_at_least",
    "check_order",
    "examples",
    "loglog_slope",
]


class ClaimMismatch(AssertionError):
    """The simulation disagrees with the prediction beyond the tolerance."""


class NoPower(AssertionError):
    """The negative control was not rejected: the check could not have failed."""


# --------------------------------------------------------------------------------------------
# Tolerances with their error models
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tolerance:
    """A tolerance `value` together with the error model `model` that justifies it."""

    value: float
    model: str

    def __post_init__(self):
        if not (self.value > 0 and math.isfinite(self.value)):
            raise ValueError(f"tolerance value must be finite and > 0, got {self.value}")

    @staticmethod
    def roundoff(scale: float = 1.0, ops: float = 1e3, dtype_eps: float = np.finfo(np.float64).eps):
        """Float round-off: `ops` accumulated operations of relative error eps on numbers of
        size `scale` (a deliberately generous but still tiny bound)."""
        return Tolerance(float(ops * dtype_eps * max(scale, 1e-300)),
                         f"float64 round-off: {ops:g} ops x eps x scale {scale:.3g}")

    @staticmethod
    def monte_carlo(se: float, false_fail: float = 1e-6, comparisons: int = 1):
        """Monte Carlo standard error `se`: reject beyond z * se with a two-sided z chosen so the
        false-fail probability of this check (Bonferroni over `comparisons`) is `false_fail`."""
        if not (0 < false_fail < 1):
            raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
        z = float(stats.norm.isf(false_fail / (2 * comparisons)))
        return Tolerance(float(z * se), f"Monte Carlo: {z:.2f} x SE {se:.3g} "
                         f"(false-fail {false_fail:g} over {comparisons} comparisons)")

    @staticmethod
    def solver(rtol: float, scale: float = 1.0, factor: float = 100.0):
        """ODE solver tolerance: `factor` x rtol x scale (global error of an adaptive solver run
        at local tolerance rtol)."""
        return Tolerance(float(factor * rtol * max(scale, 1e-300)),
                         f"ODE solver: {factor:g} x rtol {rtol:g} x scale {scale:.3g}")


# --------------------------------------------------------------------------------------------
# Recording (read by properties.plugin, which attaches it to the pytest report)
# --------------------------------------------------------------------------------------------
_RECORDS: dict[str, dict] = {}


def _record(claim_id: str, error: float, tol: float, control_error: float | None = None,
            kind: str = "error<=tol"):
    # one record per (claim, kind of comparison): errors and scores are not comparable
    rec = _RECORDS.setdefault(f"{claim_id}|{kind}", {"claim": claim_id, "max_error": None,
                                                     "tolerance": tol, "examples": 0,
                                                     "min_control_error": None, "kind": kind})
    rec["examples"] += 1
    if error is not None and math.isfinite(error):
        if rec["max_error"] is None or _worse(error, rec["max_error"], rec["tolerance"], tol, kind):
            rec["max_error"], rec["tolerance"] = float(error), float(tol)
    elif error is not None:  # NaN / inf observed: that is the worst possible error
        rec["max_error"], rec["tolerance"] = float("inf"), float(tol)
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
    out = dict(_RECORDS)
    _RECORDS.clear()
    return out


# --------------------------------------------------------------------------------------------
# Marking properties
# --------------------------------------------------------------------------------------------
def audits(claim_id: str, form: str = "printed", fails: str | None = None):
    """Mark a property as auditing `claim_id`.

    form  -- "printed" (the statement exactly as printed) or "corrected" (an erratum's fix).
    fails -- for a printed statement the simulation refutes: the reason. The property becomes a
             strict expected failure that accepts only `ClaimMismatch`.
    """
    if form not in ("printed", "corrected"):
        raise ValueError(f"form must be 'printed' or 'corrected', got {form!r}")

    def deco(fn):
        fn = pytest.mark.claim(claim_id, form=form)(fn)
        if fails:
            fn = pytest.mark.xfail(strict=True, raises=ClaimMismatch, reason=fails)(fn)
        return fn

    return deco


def examples(n: int, *, printed_fails: bool = False, **kw) -> settings:
    """Hypothesis settings for a property with a CI budget of `n` examples, scaled by profile
    (dev x0.5, thorough x10).  A printed statement expected to fail stops at the first
    counterexample (no shrinking: the report shows what was found, not a minimal example)."""
    scale = {"ci": 1.0, "dev": 0.5, "thorough": 10.0}.get(os.environ.get("HYPOTHESIS_PROFILE",
                                                                         "ci" if os.environ.get("CI") else "dev"), 1.0)
    kw.setdefault("max_examples", max(1, int(round(n * scale))))
    kw.setdefault("deadline", None)
    kw.setdefault("suppress_health_check", [HealthCheck.too_slow, HealthCheck.data_too_large])
    if printed_fails:
        kw.setdefault("phases", [Phase.explicit, Phase.reuse, Phase.generate])
        kw.setdefault("report_multiple_bugs", False)
    return settings(**kw)


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


def check_close(claim_id: str, observed, predicted, tol: Tolerance, *, metric: str = "max_abs",
                control=None, what: str = "") -> float:
    """Assert error(observed, predicted) <= tol.value; with `control`, also assert that the
    deliberately wrong prediction `control` is rejected by the same check (power)."""
    err = _norm_error(observed, predicted, metric)
    cerr = None if control is None else _norm_error(observed, control, metric)
    _record(claim_id, err, tol.value, cerr)
    if cerr is not None and not cerr > tol.value:
        raise NoPower(f"{claim_id}{' ' + what if what else ''}: negative control error {cerr:.3g}"
                      f" is within the tolerance {tol.value:.3g} ({tol.model})")
    if not err <= tol.value:  # also catches NaN
        raise ClaimMismatch(f"{claim_id}{' ' + what if what else ''}: {metric} error {err:.3g} > "
                            f"tolerance {tol.value:.3g} ({tol.model})")
    return err


def check_at_least(claim_id: str, score: float, threshold: float, model: str, *,
                   control: float | None = None, what: str = "") -> float:
    """Assert score >= threshold (a correlation, a margin). With `control`, the score of a
    deliberately wrong prediction must fall below the threshold."""
    _record(claim_id, float(score), float(threshold), control, kind="score>=tol")
    if control is not None and not control < threshold:
        raise NoPower(f"{claim_id}{' ' + what if what else ''}: negative control score "
                      f"{control:.3g} is not below the threshold {threshold:.3g} ({model})")
    if not score >= threshold:
        raise ClaimMismatch(f"{claim_id}{' ' + what if what else ''}: score {score:.3g} < "
                            f"threshold {threshold:.3g} ({model})")
    return float(score)


def loglog_slope(hs: Sequence[float], errors: Sequence[float]) -> float:
    """Least-squares slope of log(error) against log(h)."""
    h = np.log(np.asarray(hs, dtype=np.float64))
    e = np.log(np.maximum(np.asarray(errors, dtype=np.float64), 1e-300))
    return float(np.polyfit(h, e, 1)[0])


def check_order(claim_id: str, hs: Iterable[float], errors: Iterable[float], order: float, *,
                slope_tol: float = 0.25, control_errors: Iterable[float] | None = None,
                what: str = "") -> float:
    """Discretization order: the fitted log-log slope of error vs step size must be within
    `slope_tol` of `order` (diffrax-style test_ode_order).  The control (errors of a wrong
    prediction on the same runs) must not show that order."""
    hs, errors = list(hs), list(errors)
    if len(hs) < 3:
        raise ValueError("check_order needs at least three step sizes")
    slope = loglog_slope(hs, errors)
    cslope = None if control_errors is None else loglog_slope(hs, list(control_errors))
    dev = abs(slope - order) if math.isfinite(slope) else float("inf")
    _record(claim_id, dev, slope_tol, None if cslope is None else abs(cslope - order))
    if cslope is not None and not abs(cslope - order) > slope_tol:
        raise NoPower(f"{claim_id}{' ' + what if what else ''}: the control's slope {cslope:.3f} "
                      f"also matches order {order}")
    if not dev <= slope_tol:
        raise ClaimMismatch(f"{claim_id}{' ' + what if what else ''}: log-log slope {slope:.3f} of "
                            f"error vs step, expected {order} +- {slope_tol}")
    return slope
