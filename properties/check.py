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
from typing import Sequence

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
        self.values: dict[str, list] = {}  # check name -> the values it compared, call by call
        self.close_calls: dict[str, int] = {}  # check name -> check_close calls so far
        self.predicted: dict[tuple, np.ndarray] = {}  # (check, call) -> the claim's prediction
        self.slack: dict[str, float] = {}  # check name -> a bound's worst slack (check_bound)
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
        for name, v in other.slack.items():  # one draw's sink into the run's: across draws
            self.slack[name] = max(v, self.slack.get(name, float("-inf")))
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
_DEFAULT_SINK = _SINK  # checks made outside a property: no per-draw state is kept for them


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
# the harness modules that call a property body (where the walk up the call sites stops)
_BODY_CALLERS = ("world.py", "trace.py", "resolution.py")
# the modules whose frames are the checks themselves, never a call site of the property
_CHECK_FILES = {os.path.join(_HARNESS_DIR, f) for f in ("check.py", "trend.py",
                                                        "procedures.py")}


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
        if os.path.dirname(os.path.abspath(path)) == _HARNESS_DIR and base in _BODY_CALLERS:
            break  # reached the harness that called the property body
        if (os.path.abspath(path) not in _CHECK_FILES and "site-packages" not in path
                and "/hypothesis/" not in path):
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
        if error is not None:  # what the check saw, call by call (the resolution compares
            # worlds): an error in units of its tolerance, a score as it is
            vals = sink.values.setdefault(name, [])
            v = float(error) / tol if kind == "error<=tol" and tol > 0 else float(error)
            if len(vals) < 200:
                vals.append(v if math.isfinite(v) else str(v))
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
    sink = _SINK
    i = sink.close_calls[cname] = sink.close_calls.get(cname, -1) + 1
    if sink.reference is None and not sink.soft and sink is not _DEFAULT_SINK:
        try:  # the claim's own prediction on this draw, for the alternatives' worlds
            sink.predicted[(cname, i)] = np.array(predicted, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    if not err <= tol.value:  # also catches NaN
        _fail(ClaimMismatch(f"{claim_id}{_w(what)}: {metric} error {err:.3g} > "
                            f"tolerance {tol.value:.3g} ({tol.model})"), cname)
        return err
    ref = sink.reference.predicted.get((cname, i)) if sink.reference is not None else None
    if sink.soft and ref is not None:
        # an alternative that passes with a prediction within twice this check's tolerance of
        # the claim's own on this draw could not have been told apart by it (the two acceptance
        # intervals overlap: an observation can pass both): not told apart, a closeness the
        # design allows, not a survival of the property
        try:
            gap = _norm_error(ref, predicted, metric)
        except ValueError:
            gap = float("inf")
        if 0 < gap <= 2 * tol.value:  # (the same prediction exactly is no alternative)
            sink.undecided.append((cname, f"{claim_id}{_w(what)}: the prediction is within "
                                          f"twice the check's tolerance {tol.value:.3g} of the "
                                          f"claim's own on this draw ({metric} gap {gap:.3g})"))
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


EXACT = Tolerance.roundoff(1.0)


# trends over sizes and orders of deterministic sequences (re-exported: properties.check is the
# module properties import them from)
from properties.trend import (ASSUMED_DOF, ORDER_SLOPE_TOL, ORDER_TAIL, Trend,  # noqa: E402,F401
                              check_order, check_trend, loglog_slope, order_band,
                              order_slope_tolerance)
