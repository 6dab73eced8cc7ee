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
import os
import sys
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
    "order_slope_tolerance",
]

ORIGINS = ("derived", "calibrated", "reading", "unstated")


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
    # origin "reading": the glossary word, and the threshold at its stricter and looser level
    word: str | None = None
    bracket: tuple | None = None
    # origin "calibrated": set only by Tolerance.calibrated (the order statistic it came from)
    calibration: tuple | None = None

    def __post_init__(self):
        if not math.isfinite(self.value):
            raise ValueError(f"threshold value must be finite, got {self.value}")
        if self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, got {self.origin!r}")
        if not (0.0 <= self.false_fail < 1.0):
            raise ValueError(f"false_fail must be in [0, 1), got {self.false_fail}")

        if self.origin == "reading" and (self.word is None or self.bracket is None):
            raise ValueError("a threshold of origin 'reading' comes from the glossary: "
                             "use Threshold.reading(word, sentence) / Tolerance.reading(...)")

    def as_record(self) -> dict:
        out = {"value": float(self.value), "origin": self.origin,
               "false_fail": float(self.false_fail), "model": self.model}
        if self.word is not None:
            out["reading"], out["bracket"] = self.word, [float(b) for b in self.bracket]
        if self.origin == "calibrated":
            out["order_statistic"] = self.calibration is not None
        return out

    @classmethod
    def reading(cls, word: str, sentence: str, *, plus: Threshold | None = None,
                scale: float = 1.0):
        """The level at which the glossary (`properties.readings`) reads `word` of the statement
        (e.g. "near 1/2", "high"), quoted from the paper in `sentence`.  `scale` multiplies the
        level (a level stated relative to a size); `plus` adds a derived noise term (its
        false-fail rate is kept).  The harness decides the check at the glossary's stricter and
        looser levels too (a verdict that flips inside the bracket is `reading-dependent`)."""
        from properties.readings import lookup

        r = lookup(word)
        if not (isinstance(sentence, str) and sentence.strip()):
            raise ValueError(f"reading {word!r}: quote the sentence of the paper it reads")
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be finite and > 0, got {scale!r}")
        extra = 0.0 if plus is None else float(plus.value)
        levels = [scale * v + extra for v in (r.level, r.stricter, r.looser)]
        model = (f"reading of {word!r} ({r.meaning}; glossary level {r.level:g}, bracket "
                 f"[{r.stricter:g}, {r.looser:g}]{f' x {scale:g}' if scale != 1 else ''}; "
                 f"{r.provenance}) in "
                 f"\"{' '.join(sentence.split())}\"" + (f" + {extra:.3g} ({plus.model})" if plus else ""))
        return cls(levels[0], model, "reading", 0.0 if plus is None else plus.false_fail,
                   word=word, bracket=(levels[1], levels[2]))


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
        false-fail probability of this check is `false_fail` over its `comparisons` (Bonferroni:
        each comparison at false_fail / comparisons).  The rate recorded is `false_fail`, what
        the check spends over all its comparisons; a property that makes each comparison a
        check of its own with this tolerance counts `false_fail` per check (conservative)."""
        if not (0 < false_fail < 1):
            raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
        if not (isinstance(comparisons, int) and comparisons >= 1):
            raise ValueError(f"comparisons must be an integer >= 1, got {comparisons!r}")
        z = float(stats.norm.isf(false_fail / (2 * comparisons)))
        return Tolerance(float(z * se), f"Monte Carlo: {z:.2f} x SE {se:.3g} "
                         f"(false-fail {false_fail:g} over {comparisons} comparisons)", "derived",
                         false_fail)

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
                   noise: str, rank: int = 1, side: str = "upper", model: str = ""):
        """A threshold fixed on calibration runs: the `rank`-th largest (side="upper", for an
        error that must stay below) or smallest (side="lower", for a score that must stay above)
        of `samples`, measured on `calibration_seeds`, which must not meet `audit_seeds`.

        `noise` says which noise the samples measure (a null's spread, the seed-to-seed error
        of an estimator, round-off of a solver): a calibration sets a noise level, never the
        size of the claimed effect (a claim "A > B" is tested against 0 with its own error,
        not against the A - B that other seeds gave).

        For a draw exchangeable with the calibration runs, P(it lands beyond the rank-th extreme
        of n runs) = rank / (n + 1): that is the false-fail rate recorded (distribution-free)."""
        if not (isinstance(noise, str) and noise.strip()):
            raise ValueError("noise: say which noise the calibration runs measure (a null's "
                             "spread, a seed-to-seed error), not the claimed effect")
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
                f"[{audit_seeds.start}, {audit_seeds.stop}); false-fail {ff:.3g} per draw; "
                f"noise: {noise}" + (f"; {model}" if model else ""))
        cls = Tolerance if value > 0 else Threshold
        return cls(value, text, "calibrated", ff,
                   calibration=(int(x.size), int(rank), side, noise))


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
    """Where the checks of one draw (in one world) are recorded.

    soft -- an alternative's world: a failing check does not raise, it records its name in
            `failed` and returns, so every check of the body meets the alternative (power is
            credited per check, not to whichever check happens to fail first)."""

    def __init__(self, soft: bool = False):
        self.soft = soft
        self.records: dict[str, dict] = {}
        self.checks = 0
        self.trends = 0  # check_trend decisions (the asymptotic policy)
        self.trend_log: list[dict] = []  # each trend's sizes, values, fitted slope (the report)
        self.false_fail = 0.0
        self.thresholds: dict[tuple, dict] = {}
        self.named: dict[str, dict] = {}        # check name -> {"fn", "calls", "what"}
        self.failed: list[tuple] = []           # (check name, message): soft failures
        self.undecided: list[tuple] = []        # (check name, message): soft inconclusive trends
        self.readings: dict[str, dict] = {}     # glossary word -> levels and worst observation
        self.trend_rivals: dict[str, dict] = {}  # check name -> {rival label: rejected}
        self.trend_complement: dict[str, set] = {}  # check name -> rivals that are the test's
        #                                               own complement (declared, not counted)
        self.order_bands: dict[tuple, float] = {}  # (check name, call) -> check_order's band
        self.order_calls: dict[str, int] = {}  # check name -> check_order calls so far
        self.reference: Sink | None = None  # an alternative's world: the claim world's sink
        self.trend_resolution: dict[str, float] = {}  # check name -> exponent shift it rejects
        self.discrepancy: dict[str, dict] = {}  # check name -> its smallest detected discrepancy

    def merge(self, other: Sink):
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
        for name, n in other.named.items():
            mine = self.named.setdefault(name, dict(n, calls=0))
            mine["calls"] += n["calls"]
        self.failed += other.failed
        self.undecided += other.undecided
        for word, r in other.readings.items():
            mine = self.readings.get(word)
            if mine is None:
                self.readings[word] = {k: (dict(v) if isinstance(v, dict) else v)
                                       for k, v in r.items()}
                continue
            for level, ok in r["passes"].items():
                mine["passes"][level] = mine["passes"].get(level, True) and ok
            mine["calls"] += r["calls"]
            if r["worst_margin"] < mine["worst_margin"]:
                mine["worst"], mine["worst_margin"] = r["worst"], r["worst_margin"]
        for name, rv in other.trend_rivals.items():
            mine = self.trend_rivals.setdefault(name, {})
            for label, ok in rv.items():
                mine[label] = mine.get(label, True) and ok
        for name, labels in other.trend_complement.items():
            self.trend_complement.setdefault(name, set()).update(labels)
        for name, d in other.trend_resolution.items():
            self.trend_resolution[name] = max(d, self.trend_resolution.get(name, 0.0))
        for name, d in other.discrepancy.items():
            _keep_coarsest(self.discrepancy, name, d)


TREND_LOG_MAX = 12  # trends kept per property for the report


def _keep_coarsest(into: dict, name: str, rec: dict):
    """A check's detected discrepancy over its calls and draws: the coarsest (largest) one, the
    resolution it has on every draw."""
    mine = into.get(name)
    if mine is None or rec["value"] > mine["value"]:
        into[name] = dict(rec, calls=(mine or {}).get("calls", 0) + rec.get("calls", 1))
    else:
        mine["calls"] = mine.get("calls", 1) + rec.get("calls", 1)


def _record_discrepancy(name: str, detects, what: str):
    """Record `detects` (a properties.discrepancy.Discrepancy) as check `name`'s resolution."""
    if detects is None:
        return
    rec = detects.as_record()
    rec["what"] = (what or "")[:160]
    _keep_coarsest(_SINK.discrepancy, name, dict(rec, calls=1))


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


_HERE = os.path.abspath(__file__)
_HARNESS_DIR = os.path.dirname(_HERE)


def check_name(fn: str, name: str | None = None) -> str:
    """The identity of a check: `name` if the property gives one, else the chain of call sites
    from the property body down to the check (`test_x.py:40>common.py:12`), the same in the
    claim's world and in every alternative's, so power can be credited check by check."""
    if name:
        return f"{fn} {name}"
    sites = []
    f = sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        base = os.path.basename(path)
        if os.path.dirname(os.path.abspath(path)) == _HARNESS_DIR and base == "world.py":
            break  # reached the harness that called the property body
        if os.path.abspath(path) != _HERE and "site-packages" not in path and "/hypothesis/" not in path:
            sites.append(f"{base}:{f.f_lineno}")
        f = f.f_back
        if len(sites) >= 6:
            break
    return f"{fn}@" + ">".join(reversed(sites)) if sites else fn


def _trend_mismatch(msg: str) -> ClaimMismatch:
    """A ClaimMismatch raised by a trend over sizes (check_trend), marked so: the report lets an
    asymptotic claim be refuted only by such a failure, never by a check at one size."""
    e = ClaimMismatch(msg)
    e.trend = True
    return e


def _fail(exc: AssertionError, name: str):
    """A failing check: raise it, or (in an alternative's soft world) record it and go on."""
    if _SINK.soft:
        _SINK.failed.append((name, str(exc).splitlines()[0]))
        return
    raise exc


def _record(claim_id: str, error: float | None, threshold: Threshold, control_error=None,
            kind: str = "error<=tol", name: str | None = None, what: str = ""):
    sink, tol = _SINK, float(threshold.value)
    sink.checks += 1
    sink.false_fail += threshold.false_fail
    t = threshold.as_record()
    sink.thresholds[(t["value"], t["origin"], t["model"])] = t
    if name is not None:
        n = sink.named.setdefault(name, {"fn": name.split("@")[0].split(" ")[0], "calls": 0,
                                         "what": (what or "")[:160]})
        n["calls"] += 1
    if threshold.word is not None and error is not None:
        _record_reading(sink, threshold, float(error), kind)
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


def _record_reading(sink: Sink, threshold: Threshold, value: float, kind: str):
    """A check against a glossary reading: does it pass at the level, and at the stricter and
    looser levels of the bracket (the report turns a flip inside it into reading-dependent)."""
    stricter, looser = threshold.bracket
    levels = {"level": float(threshold.value), "stricter": float(stricter),
              "looser": float(looser)}
    ok = (lambda lv: value >= lv) if kind == "score>=tol" else (lambda lv: value <= lv)
    margin = (value - threshold.value) if kind == "score>=tol" else (threshold.value - value)
    r = sink.readings.setdefault(threshold.word, {
        "word": threshold.word, "kind": kind, "levels": levels, "model": threshold.model,
        "passes": {}, "calls": 0, "worst": value, "worst_margin": margin})
    r["calls"] += 1
    for k, lv in levels.items():
        r["passes"][k] = r["passes"].get(k, True) and bool(ok(lv))
    if margin < r["worst_margin"]:
        r["worst"], r["worst_margin"] = value, margin


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
                control=None, what: str = "", name: str | None = None,
                detects=None) -> float:
    """Assert error(observed, predicted) <= tol.value.  `name`: the check's identity in the
    report (default: its call site).  `control` (legacy): a wrong prediction the same check
    must reject, else NoPower; it does not count as power for the verdict.  `detects`: the
    smallest discrepancy the check catches (properties.discrepancy), where a relative
    perturbation of the prediction cannot say it."""
    cname = check_name("check_close", name)
    _record_discrepancy(cname, detects, what)
    tol = _as_threshold(tol, None, tolerance=True)
    err = _norm_error(observed, predicted, metric)
    cerr = None if control is None else _norm_error(observed, control, metric)
    _record(claim_id, err, tol, cerr, name=cname, what=what)
    if cerr is not None and not cerr > tol.value and not _SINK.soft:
        raise NoPower(f"{claim_id}{_w(what)}: negative control error {cerr:.3g}"
                      f" is within the tolerance {tol.value:.3g} ({tol.model})")
    if not err <= tol.value:  # also catches NaN
        _fail(ClaimMismatch(f"{claim_id}{_w(what)}: {metric} error {err:.3g} > "
                            f"tolerance {tol.value:.3g} ({tol.model})"), cname)
    return err


def check_at_least(claim_id: str, score: float, threshold, model: str | None = None, *,
                   control: float | None = None, what: str = "", name: str | None = None,
                   detects=None) -> float:
    """Assert score >= threshold (a correlation, a margin).  `threshold` is a `Threshold` (or a
    number with its `model` text, origin unstated).  `control`, `name`, `detects` as in
    `check_close`."""
    cname = check_name("check_at_least", name)
    _record_discrepancy(cname, detects, what)
    th = _as_threshold(threshold, model)
    score = float(score)
    _record(claim_id, score, th, control, kind="score>=tol", name=cname, what=what)
    if control is not None and not control < th.value and not _SINK.soft:
        raise NoPower(f"{claim_id}{_w(what)}: negative control score "
                      f"{control:.3g} is not below the threshold {th.value:.3g} ({th.model})")
    if not score >= th.value:
        _fail(ClaimMismatch(f"{claim_id}{_w(what)}: score {score:.3g} < "
                            f"threshold {th.value:.3g} ({th.model})"), cname)
    return score


def loglog_slope(hs: Sequence[float], errors: Sequence[float]) -> float:
    """Least-squares slope of log(error) against log(h)."""
    h = np.log(np.asarray(hs, dtype=np.float64))
    e = np.log(np.maximum(np.asarray(errors, dtype=np.float64), 1e-300))
    return float(np.polyfit(h, e, 1)[0])


EXACT = Tolerance.roundoff(1.0)

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


def order_band(hs: Sequence[float], errors: Sequence[float], value_error=None, *,
               tail: int = ORDER_TAIL) -> tuple[float, float, str]:
    """The harness's error model of a deterministic sequence err_i ~ C h_i^p (decisions.md 4):
    (slope, band, model).  Local slopes log(err_{i+1} / err_i) / log(h_{i+1} / h_i) between
    successive step sizes, coarse to fine; the slope is the finest one, and the band is the
    spread of the last `tail` local slopes (how far from asymptotic the range still is: for a
    next-order term that shrinks geometrically by a factor <= 1/2 per rung, the distance from
    the finest local slope to the limit is at most the last increment) plus the numerical
    error of each value (`value_error`, an absolute bound: a Tolerance, a number or one per
    value; default round-off, EXACT) carried to the local slopes.  No t quantile: a
    deterministic curve has no seeds."""
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
    model = (f"deterministic order: finest local slope {last[-1]:.4g}; band = spread "
             f"{spread:.3g} of the last {k} local slopes ({', '.join(f'{v:.4g}' for v in last)})"
             f" + carried value error {carry:.3g} ({vmodel})")
    return float(last[-1]), spread + carry, model


def check_order(claim_id: str, hs: Iterable[float], errors: Iterable[float], order: float, *,
                value_error: Threshold | float | None = None, rivals: Iterable[float] | None = None,
                slope_tol: float | Tolerance | None = None,
                control_errors: Iterable[float] | None = None,
                exact: Tolerance | None = EXACT, what: str = "", name: str | None = None) -> float:
    """Discretization order of a deterministic sequence: the error behaves as C h^order.

    The harness's procedure (`order_band`): the finest local slope, with a band from the spread
    of the last local slopes plus each value's numerical error (`value_error`) carried to them;
    passes if |slope - order| <= band.  It decides only where the band is below half the gap
    to the nearest rival order (`rivals`, default order - 1 and order + 1: O(h) against O(1)
    and O(h^2)); otherwise `Inconclusive` (refine the step ladder).  A rival order is rejected
    when it lies outside the band around the slope.  In an alternative's world the band is the
    claim world's (the same check on the same draw), never recomputed from the rival's own
    curve.  Errors all at or below `exact` (round-off) mean the identity holds exactly at every
    step size: that passes (slope undefined, recorded as 0 deviation).

    `slope_tol` (legacy): a band given by the property instead (a Tolerance with its model;
    a bare number is a threshold without provenance), with the least-squares slope."""
    cname = check_name("check_order", name)
    hs, errors = list(hs), list(errors)
    if len(hs) < 3:
        raise ValueError("check_order needs at least three step sizes")
    errs = np.abs(np.asarray(errors, dtype=np.float64))
    if exact is not None and np.all(np.isfinite(errs)) and float(errs.max()) <= exact.value:
        _record(claim_id, 0.0, exact, name=cname, what=what)
        return float("nan")
    sink = _SINK
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
        else:
            sink.order_bands[(cname, i)] = band
        if not math.isfinite(band):
            msg = f"{claim_id}{_w(what)}: {model}"
            if sink.soft:
                sink.undecided.append((cname, msg))
                return slope
            raise Inconclusive(msg)
        tol = Tolerance.derived(band, model) if band > 0 else Threshold(0.0, model, "derived")
    cslope = None if control_errors is None else loglog_slope(hs, list(control_errors))
    dev = abs(slope - order) if math.isfinite(slope) else float("inf")
    _record(claim_id, dev, tol, None if cslope is None else abs(cslope - order), name=cname,
            what=what)
    if cslope is not None and not abs(cslope - order) > band and not sink.soft:
        raise NoPower(f"{claim_id}{_w(what)}: the control's slope {cslope:.3f} "
                      f"also matches order {order}")
    rv = (order - 1.0, order + 1.0) if rivals is None else tuple(float(r) for r in rivals)
    rv = tuple(r for r in rv if r != order)
    if slope_tol is None and rv and math.isfinite(band):
        gap = min(abs(r - order) for r in rv)
        if not band < gap / 2:
            msg = (f"{claim_id}{_w(what)}: order band {band:.3g} is not below half the gap "
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
        _fail(ClaimMismatch(f"{claim_id}{_w(what)}: log-log slope {slope:.3f} of "
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


def _slope_fit(x, v, log_values, se, dof, value_error, false_fail):
    """(slope, stderr, crit, dof, model, per-size values) for the four error models."""
    lx = np.log(x)
    if v.ndim == 2:  # seeds x sizes: a slope per seed, clustered by seed, Student t
        n = v.shape[0]
        if n < 2:
            raise ValueError("values: a seeds x sizes array needs at least 2 seeds")
        ys = np.log(v) if log_values else v
        slopes = np.array([stats.linregress(lx, y).slope for y in ys])
        slope = float(slopes.mean())
        stderr = float(slopes.std(ddof=1) / math.sqrt(n))
        crit = float(stats.t.isf(false_fail / 2, n - 1))
        return slope, stderr, crit, n - 1, f"seed-clustered: t with {n - 1} dof over {n} seeds", \
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
        return float(fit.slope), float(fit.stderr), float(stats.t.isf(false_fail / 2, x.size - 2)), \
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


def check_trend(claim_id: str, sizes: Iterable[float], values, *,
                exponent: float | None = None, direction: str | None = None,
                allowance: Tolerance | None = None, false_fail: float = 1e-3,
                se: Iterable[float] | None = None, dof: int | None = None,
                value_error: Tolerance | None = None, rivals: Iterable[float] = (),
                log_values: bool = True, what: str = "", name: str | None = None) -> Trend:
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
    direction -- "increasing" or "decreasing": passes if the slope is significantly of that
                 sign, ClaimMismatch if significantly of the other, `Inconclusive` otherwise.
    rivals    -- the trend's own rival exponents (the next simple exponent, 0 for "no trend"):
                 each is rejected on a draw if it lies outside the band around the slope; the
                 report credits them to this check (per-check power).
    Fewer than three distinct sizes: `Inconclusive` with the numbers (one size decides nothing).
    """
    cname = check_name("check_trend", name)
    if (exponent is None) == (direction is None):
        raise ValueError("check_trend needs exactly one of exponent= or direction=")
    if direction not in (None, "increasing", "decreasing"):
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    if not (0 < false_fail < 1):
        raise ValueError(f"false_fail must be in (0, 1), got {false_fail}")
    if dof is not None and not (isinstance(dof, int) and dof >= 1):
        raise ValueError(f"dof must be an integer >= 1, got {dof!r}")
    x = np.asarray(list(sizes), dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if sum(a is not None for a in (se, value_error)) + (v.ndim == 2) > 1:
        raise ValueError("check_trend: give at most one of se=, value_error= or 2-D values")
    rivals = tuple(float(r) for r in rivals)
    _SINK.trends += 1
    if x.ndim != 1 or v.shape[-1:] != x.shape or v.ndim not in (1, 2):
        raise ValueError(f"sizes must be 1-D and values (seeds x) sizes, got {x.shape}, {v.shape}")
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ValueError("sizes must be finite and > 0")
    vm = v if v.ndim == 1 else v.mean(axis=0)
    nums = ", ".join(f"{a:g}: {b:.4g}" for a, b in zip(x, vm))
    if np.unique(x).size < 3:
        raise Inconclusive(f"{claim_id}{_w(what)}: {np.unique(x).size} size(s) only ({nums}); "
                           "an asymptotic statement needs a trend over at least three")
    if log_values and (np.any(v <= 0) or not np.all(np.isfinite(v))):
        _record(claim_id, float("inf"), Tolerance.derived(1e-300, "trend: values must be > 0"),
                name=cname, what=what)
        _fail(ClaimMismatch(f"{claim_id}{_w(what)}: values must be finite and > 0 for a "
                            f"log-log trend ({nums})"), cname)
        return Trend(float("nan"), float("nan"), float("nan"), tuple(x.tolist()), tuple(vm.tolist()))
    slope, stderr, crit, d, emodel, vm = _slope_fit(x, v, log_values, se, dof, value_error,
                                                    false_fail)
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
    credited = tuple(r for r in rivals if sign is None or sign * r > 0)
    complement = tuple(r for r in rivals if r not in credited)
    if credited:
        rv = _SINK.trend_rivals.setdefault(cname, {})
        for r in credited:
            label = f"exponent {r:g}"
            rv[label] = rv.get(label, True) and abs(slope - r) > band
    if complement:
        _SINK.trend_complement.setdefault(cname, set()).update(f"exponent {r:g}"
                                                               for r in complement)
    if len(_SINK.trend_log) < TREND_LOG_MAX:
        _SINK.trend_log.append({
            "what": what, "sizes": [float(a) for a in x], "values": [float(b) for b in vm],
            "slope": slope, "band": band, "error_model": emodel, "dof": d,
            "expected": (f"exponent {exponent:g}" if exponent is not None else direction),
            "rivals": {f"exponent {r:g}": bool(abs(slope - r) > band) for r in credited},
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
        dev = abs(slope - exponent)
        _record(claim_id, dev, tol, name=cname, what=what)
        # the smallest shift of the exponent this draw would have rejected (either sign)
        res = _SINK.trend_resolution
        res[cname] = max(res.get(cname, 0.0), total + dev)
        if not dev <= total:
            _fail(_trend_mismatch(f"{claim_id}{_w(what)}: {desc}; expected exponent "
                                  f"{exponent:g} (+- allowance {allow:g})"), cname)
        return trend
    # the smallest true slope this design detects (TFP's min_discrepancy): with probability 0.95
    # at its false-fail rate, (crit + t_0.05) x SE on the seeds' dof; a deterministic sequence
    # (no dof) detects any slope beyond its band
    res = _SINK.trend_resolution
    detect = band if d is None else (crit + float(stats.t.isf(0.05, d))) * stderr
    res[cname] = max(res.get(cname, 0.0), detect)
    th = Threshold(0.0, f"trend direction {direction}: slope beyond {crit:.3g} x SE ({emodel}; "
                        f"false-fail {ff:g})", "derived", ff)
    _record(claim_id, sign * slope - band, th, kind="score>=tol", name=cname, what=what)
    if sign * slope - band > 0:
        return trend
    # an exactly flat (or reversed) sequence with no spread (band 0) is decisively not of the
    # claimed direction: rejected, never "not told apart"
    if sign * slope + band < 0 or (band == 0 and sign * slope <= 0):
        _fail(_trend_mismatch(f"{claim_id}{_w(what)}: {desc}: significantly "
                              f"{'decreasing' if sign > 0 else 'increasing'}, expected "
                              f"{direction}"), cname)
        return trend
    msg = f"{claim_id}{_w(what)}: {desc}: not significantly {direction} (nor the other way)"
    if _SINK.soft:
        _SINK.undecided.append((cname, msg))
        return trend
    raise Inconclusive(msg)
