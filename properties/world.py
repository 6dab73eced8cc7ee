"""Alternatives run by the harness: a property is written once and run in several worlds.

A claim declares its alternatives (`Claim.alternatives`):

* a `rival` replaces a *prediction* slot by a wrong closed form: the printed form of an
  erratum, a dropped factor, another constant or exponent, a neighbouring reading;
* a `null` replaces a *simulation* slot by a run in which the claimed mechanism is switched
  off: no training, attention frozen or uniform, labels shuffled, the other token order.

A property that takes a `world` argument asks the world for the pieces it uses::

    @audits("paper.item")
    @examples(5)
    @given(seed=st.integers(0, 2**31 - 1))
    def test_item(world, seed):
        run = world.simulation(simulate, "run")(seed)      # a null may replace this
        pred = world.prediction(theory.closed_form)(run.x)  # a rival may replace this
        check_close("paper.item", run.y, pred, Tolerance.roundoff())

`@audits` runs the body once per draw in the claim's own world (what the checks record is the
audit), then, on the same draw, once per alternative whose slot the body asked for, and counts
a `ClaimMismatch` there as the alternative rejected.  After the last draw, an alternative that
was rejected on fewer than `must_reject` of its draws is a power failure (`NoPower`): the
suite goes red and the claim cannot be `holds` or `erratum`.

The same wrapper makes a printed form expected to fail (`fails="reason"`) run all its draws and
report every failing draw; a crash on any draw stays an error.  Draws are distinct parameter
draws that completed and made at least one check; the report counts those, not calls.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import os
from dataclasses import dataclass, field
from typing import Callable

import pytest
from _pytest.outcomes import Skipped
from hypothesis.errors import UnsatisfiedAssumption

from properties import check
from properties.check import ClaimMismatch, Inconclusive, NoPower, PropertyError
from properties.digest import fingerprint  # noqa: F401 (re-exported: properties.world.fingerprint)
from properties.registry import Alternative, null, rival  # noqa: F401 (re-exported)

__all__ = ["WORLD_PLACEHOLDER", "Alternative", "World", "audits", "null", "paper_example",
           "rival", "scale_prediction"]

def _draw_repr(kwargs: dict) -> str:
    s = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return s if len(s) <= 300 else s[:297] + "..."


def _record_draw(run, claim, key, draw_kwargs: dict) -> None:
    """Count a completed draw of `run` (its parameters, and the claim's draw_note of them)."""
    run.draws.setdefault(key, _draw_repr(draw_kwargs))
    if claim.draw_note is not None and key not in run.notes:
        run.notes[key] = str(claim.draw_note(**draw_kwargs))


REPLAY_ENV = "THEOREM_AUDIT_DRAW"


def parse_draw(text: str) -> dict:
    """The keyword arguments of a draw as the report writes it (`seed=11, cfg=(1, 2.0)`).
    ValueError if it is not a list of keyword = literal (a truncated or non-literal draw, e.g.
    one of st.data(), cannot be replayed: rerun the whole property instead)."""
    import ast

    try:
        call = ast.parse(f"f({text})", mode="eval").body
        if not isinstance(call, ast.Call) or call.args:
            raise ValueError
        return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    except (SyntaxError, ValueError, TypeError):
        raise ValueError(f"{REPLAY_ENV}: {text!r} is not a replayable draw (keyword=literal, "
                         "comma-separated)") from None


# --------------------------------------------------------------------------------------------
# Worlds
# --------------------------------------------------------------------------------------------
class World:
    """What a property body asks for its predictions and simulations.

    In the claim's own world every slot returns its default.  In an alternative's world the
    slot it replaces returns the alternative's callable."""

    def __init__(self, claim_id: str | None, alternative: Alternative | None = None,
                 memo: dict | None = None, draw: dict | None = None,
                 perturb: float | None = None):
        self.claim_id = claim_id
        self.alternative = alternative
        self.perturb = perturb  # the resolution's worlds: every prediction scaled by this
        self.perturb_slots = True  # False: the declared closed forms are perturbed instead
        self.last_sink: check.Sink | None = None  # what the body recorded (a soft world)
        self.requested: set[str] = set()
        self.predictions: set[str] = set()   # prediction slots the body asked for
        self.impure: set[str] = set()        # simulation slots not declared pure
        self._memo = memo
        self._draw = draw  # the draw's arguments: part of the on-disk key of a pure simulation
        self._ordinal: dict[str, int] = {}
        # an alternative whose replaced slot returns what the claim's world computed on this
        # draw (another slot's run, a shared run, or the claim's own): why it is no alternative
        self.void: str | None = None

    @property
    def _claim_world(self) -> bool:
        return self.alternative is None and self.perturb is None

    def _claim_outputs(self) -> dict | None:
        """fingerprint -> labels of what the claim's world computed on this draw (its slots and
        its shared runs); None outside an audited draw."""
        return None if self._memo is None else self._memo.setdefault(OUTPUTS_KEY, {})

    def observe(self, label: str, out) -> None:
        """Note an output: in the claim's world, as `label`; in an alternative's world, the
        replaced slot's output is compared with what the claim's world computed."""
        seen = self._claim_outputs()
        if seen is None:
            return
        try:
            fp = fingerprint(out)
        except Exception:  # noqa: BLE001 -- an output we cannot digest: nothing to compare
            return
        if self._claim_world:
            seen.setdefault(fp, set()).add(label)
            return
        a = self.alternative
        # a null (a simulation) that returns another run the claim's world computed: the
        # reference run (a rival's closed form coinciding with another prediction's value,
        # such as a small rational, is no such thing; an alternative identical to the claim's
        # own slot passes the body: NoPower)
        runs = {x for x in seen.get(fp, ()) if not x.startswith("prediction ")}
        if (self.void is None and a is not None and a.kind == "null"
                and label == f"slot {a.replaces!r}" and runs and label not in seen[fp]):
            self.void = (f"its {label} returns what the claim's world computes as "
                         + ", ".join(sorted(runs)) + " on the same draw (a check comparing "
                         "the two compares a run with itself)")

    def _observed(self, fn: Callable, slot: str, prediction: bool = False) -> Callable:
        if self._memo is None or not (self._claim_world or (
                self.alternative is not None and self.alternative.replaces == slot)):
            return fn
        # in an alternative's world its replacement is compared as the slot it replaces
        label = f"{'prediction' if prediction and self._claim_world else 'slot'} {slot!r}"

        @functools.wraps(fn)
        def observed(*args, **kwargs):
            out = fn(*args, **kwargs)
            self.observe(label, out)
            return out

        return observed

    @property
    def kind(self) -> str:
        if self.perturb is not None:
            return "perturbation"
        return "claim" if self.alternative is None else self.alternative.kind

    @property
    def name(self) -> str:
        if self.perturb is not None:
            return f"x{self.perturb:.12g}"
        return "claim" if self.alternative is None else self.alternative.name

    def __repr__(self):
        return f"World({self.claim_id}, {self.kind}:{self.name})"

    def _replacement(self, slot: str, kind: str):
        if self.claim_id is None:
            raise PropertyError("`world` is only meaningful in a property marked @audits(...)")
        self.requested.add(slot)
        a = self.alternative
        if a is not None and a.replaces == slot:
            if a.kind != kind:
                raise PropertyError(f"{self.claim_id}: alternative {a.label} replaces slot "
                                    f"{slot!r}, which the property uses as a "
                                    f"{'prediction' if kind == 'rival' else 'simulation'}: a "
                                    f"{'rival' if kind == 'rival' else 'null'} is needed")
            return a.by
        return None

    def prediction(self, fn: Callable, slot: str = "prediction") -> Callable:
        """The closed form for `slot`: `fn` here, a rival's replacement in its world.  In a
        resolution world of a claim that declares closed forms of theory/ the slot is left as
        it is (the declared functions themselves are perturbed, wherever they are called);
        for a claim that declares none, the slot's output is scaled."""
        rep = self._replacement(slot, "rival")
        self.predictions.add(slot)
        out = fn if rep is None else rep
        if self.perturb is None or not self.perturb_slots:
            return self._observed(out, slot, prediction=True)
        factor = self.perturb

        @functools.wraps(out)
        def perturbed(*args, **kwargs):
            return scale_prediction(out(*args, **kwargs), factor, slot)

        return perturbed

    def simulation(self, fn: Callable, slot: str = "simulation", *, pure: bool = False) -> Callable:
        """The simulation for `slot`: `fn` here, a null's replacement in its world.

        pure=True: `fn` is a deterministic function of its arguments, of what it closes over
        and of the draw, and does not modify its arguments.  Its result on a draw is computed
        once (in the claim's world) and reused, as a deep copy, by the alternatives that do not
        replace it; and it is kept in the on-disk run cache (properties.cache), so a later
        audit, another worker or a shard reads it instead of recomputing.  A null replacing a
        pure slot is pure too and is cached the same way, under its own name."""
        rep = self._replacement(slot, "null")
        if not pure:
            self.impure.add(slot)
        if not pure or self._memo is None:
            return self._observed(fn if rep is None else rep, slot)
        i = self._ordinal.get(slot, 0)
        self._ordinal[slot] = i + 1
        if rep is not None:
            return self._observed(self._on_disk(rep, slot, i), slot)
        memo, claim_world = self._memo, self.alternative is None and self.perturb is None
        on_disk = self._on_disk(fn, slot, i)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            try:
                key = (slot, i, fingerprint((args, kwargs)))
            except Exception:  # an argument we cannot digest: no reuse
                return fn(*args, **kwargs)
            if not claim_world and key in memo:
                return copy.deepcopy(memo[key])
            out = on_disk(*args, **kwargs)
            if claim_world:
                memo[key] = copy.deepcopy(out)
            return out

        return self._observed(cached, slot)

    def _on_disk(self, fn: Callable, slot: str, ordinal: int) -> Callable:
        """fn through the on-disk run cache, keyed by the claim, the slot, the call's ordinal,
        the world (a null's own name), the draw and what fn closes over."""
        from properties import cache

        if getattr(fn, "__run_cache__", False):  # a shared run: already on disk by its arguments
            return fn
        who = self.name if self.alternative is not None else "claim"

        @functools.wraps(fn)
        def stored(*args, **kwargs):
            try:
                key = cache.key_of(fn, args, kwargs, self.claim_id, slot, ordinal, who,
                                   self._draw, cache.closure_values(fn))
            except Exception:  # something we cannot digest: compute, store nothing
                return fn(*args, **kwargs)

            def checked(*a, **k):  # a cached result must not hide a side effect
                before = fingerprint((a, k, cache.closure_generators(fn)))
                out = fn(*a, **k)
                if fingerprint((a, k, cache.closure_generators(fn))) != before:
                    raise PropertyError(
                        f"{self.claim_id}: the simulation {fn.__qualname__!r} in slot {slot!r} is "
                        "declared pure=True but changed its arguments or advanced a generator it "
                        "closes over; pass it a seed, or drop pure=True")
                return out

            return cache.call(key, checked, args, kwargs)

        return stored


WORLD_PLACEHOLDER = World(None)
OUTPUTS_KEY = "__claim_world_outputs__"  # in a draw's memo: what the claim's world computed


@contextlib.contextmanager
def _observing(world: World):
    """Note every shared run (properties.cache.run_cache) the world's body calls."""
    from properties import cache
    cache.OBSERVERS.append(world.observe)
    try:
        yield
    finally:
        cache.OBSERVERS.pop()


# the resolution (perturbation worlds) and the trace of theory/ calls, re-exported
from properties.resolution import (RESOLUTION_ENV, RESOLUTION_GRID, NotANumber,  # noqa: E402,F401
                                   _check_values, _closed_form_sites, _OutOfDomain, _perturbing,
                                   _resolution_of_draw, declared_closed_forms,
                                   perturbation_label, resolution_enabled, scale_prediction)
from properties.trace import (TRACE_ENV, _traced, _untraced_codes, theory_names,  # noqa: E402,F401
                              tracing_enabled)


from properties.outcomes import AltOutcome  # noqa: E402 (the typed record, re-exported)


@dataclass
class Run:
    claim_id: str
    form: str
    fails: str | None
    takes_world: bool
    sink: check.Sink = field(default_factory=check.Sink)
    draws: dict = field(default_factory=dict)          # fingerprint -> named parameters of
                                                        # each completed, checked draw
    notes: dict = field(default_factory=dict)          # fingerprint -> the claim's draw_note
    unchecked_draws: int = 0                            # completed draws that made no check
    mismatches: list = field(default_factory=list)      # (draw, message) for a printed form
    mismatch_keys: set = field(default_factory=set)     # fingerprints of the mismatching draws
    trend_mismatches: int = 0                           # of them, refuted by a trend over sizes
    inconclusive: list = field(default_factory=list)    # (draw, message)
    failing_draw: str | None = None
    alternatives: dict = field(default_factory=dict)    # name -> stats
    paper_settings: dict = field(default_factory=dict)  # fingerprint -> where in the paper
    paper_ran: list = field(default_factory=list)       # the cited settings that ran
    resolution: list = field(default_factory=list)      # per draw: delta, inf, or a why (str)
    traced: bool = False                                # the first draw ran under the tracer
    theory_called: set = field(default_factory=set)     # dotted names of theory/ it called
    reading: str | None = None                          # a neighbouring reading (audits)
    sites: list | None = None                           # per declared closed form, where it
    #                                                     lives (properties.resolution)
    diagnosis: dict = field(default_factory=dict)       # near misses the data accept
    diagnosed: int = 0                                  # failing draws diagnosed

    def alt_stats(self, alt: Alternative) -> AltOutcome:
        return self.alternatives.setdefault(alt.name, AltOutcome.of(alt))

    def resolution_row(self) -> dict | None:
        """Per check, the smallest relative perturbation of the prediction (the declared closed
        forms of theory/, or the slots where none is declared) it rejects on every draw, on
        each side; the property's resolution is its weakest check's (`delta`: two-sided; a
        check resolved on one side only is a bound, `one_sided`; a check that moves with the
        prediction but is rejected at no grid step leaves the property `unresolved`)."""
        if not self.resolution:
            return None
        whys = [r for r in self.resolution if isinstance(r, str)]
        draws = [r for r in self.resolution if not isinstance(r, str)]
        if whys:
            return {"delta": None, "draws": len(self.resolution), "why": whys[0]}
        n, inf = len(draws), float("inf")
        grid = f"(grid {RESOLUTION_GRID[0]:g}..{RESOLUTION_GRID[-1]:g})"
        mode = draws[0]["mode"]
        what = ("the declared closed form" if mode == "closed form" else "the prediction")
        per, independent, scale_free = {}, [], []
        for c in sorted({c for d in draws for c in d["checks"]}):
            ds = [d for d in draws if c in d["checks"]]
            if all(c in d["independent"] for d in ds):
                independent.append(c)
                continue
            if all(c in d["independent"] or c in d.get("scale_free", ()) for d in ds):
                scale_free.append(c)
                continue
            up = max(d["up"].get(c, inf) for d in ds)
            down = max(d["down"].get(c, inf) for d in ds)
            per[c] = {"up": up, "down": down, "draws": len(ds)}
        two = {c: max(v["up"], v["down"]) for c, v in per.items()
               if math.isfinite(v["up"]) and math.isfinite(v["down"])}
        one = {c: v for c, v in per.items() if math.isfinite(v["up"]) != math.isfinite(v["down"])}
        unresolved = sorted(c for c, v in per.items()
                            if not math.isfinite(v["up"]) and not math.isfinite(v["down"]))
        out = {"mode": mode, "draws": n, "delta": None,
               "per_check": {c: {"up": v["up"] if math.isfinite(v["up"]) else None,
                                 "down": v["down"] if math.isfinite(v["down"]) else None,
                                 "draws": v["draws"]} for c, v in per.items()},
               "independent": independent, "scale_free": scale_free,
               "unresolved": unresolved}
        if one:
            c, v = max(one.items(), key=lambda kv: min(kv[1]["up"], kv[1]["down"]))
            side = "up" if math.isfinite(v["up"]) else "down"
            out["one_sided"] = {"side": side, "delta": v[side], "check": c}
        if two:
            c = max(two, key=two.get)
            out["delta"], out["weakest"] = two[c], c
        if unresolved:
            # the resolved checks' delta and one-sided part stay: the evidence decides whether
            # the unresolved check is excused (a check that states its own resolution: a trend's
            # exponent shift, a bound's slack) or leaves the verdict unresolved
            out["why"] = (f"{what} {perturbation_label(RESOLUTION_GRID[-1])} is not rejected "
                          f"by " + ", ".join(unresolved[:3]) + f", which move with it {grid}")
        elif two:
            out["why"] = (f"{what} {perturbation_label(out['delta'])} is rejected on every one "
                          f"of {n} draws by every check that depends on it; the weakest: "
                          f"{out['weakest']} {grid}")
        elif one:
            o = out["one_sided"]
            word, other = (("multiplied", "divided") if o["side"] == "up"
                           else ("divided", "multiplied"))
            out["why"] = (f"one-sided (a bound): {what} {word} by {1 + o['delta']:g} is "
                          f"rejected on every one of {n} draws by {o['check']}; {other} by "
                          f"{1 + RESOLUTION_GRID[-1]:g} it is not {grid}")
        elif scale_free:
            out["why"] = (f"{what} scaled scales the checked quantities with it ("
                          + ", ".join(scale_free[:3]) + ": an identity or invariant homogeneous "
                          "in it): a relative perturbation is no alternative there")
        else:
            out["why"] = (f"no check depends on {what} (its values do not move at "
                          f"{perturbation_label(RESOLUTION_GRID[-1])})")
            out["no_dependence"] = True
        if scale_free and (two or one or unresolved):
            out["why"] += ("; homogeneous in it (a relative perturbation is no alternative): "
                           + ", ".join(scale_free[:3]))
        if one and two:
            o = out["one_sided"]
            out["why"] += (f"; one-sided (a bound) in {o['check']}: rejected at "
                           f"{perturbation_label(o['delta'])} on one side only")
        return out

    def as_row(self) -> dict:
        alts = [a.as_dict() for a in self.alternatives.values()]
        return {"records": self.sink.records, "draws": len(self.draws),
                "draw_params": list(self.draws.values())[:20],
                "draw_notes": [self.notes.get(k, "") for k in list(self.draws)[:20]],
                "unchecked_draws": self.unchecked_draws, "checks": self.sink.checks,
                "trends": self.sink.trends,
                "trend_log": self.sink.trend_log,
                "false_fail": self.sink.false_fail,
                "thresholds": list(self.sink.thresholds.values()),
                "takes_world": self.takes_world, "alternatives": alts,
                "named_checks": self.sink.named,
                "trend_rivals": self.sink.trend_rivals,
                "trend_complement": {k: sorted(v) for k, v in
                                     self.sink.trend_complement.items()},
                "trend_resolution": self.sink.trend_resolution,
                "discrepancy": self.sink.discrepancy,
                "slack": self.sink.slack,
                "readings": list(self.sink.readings.values()),
                "resolution": self.resolution_row(),
                "paper_settings": sorted(set(self.paper_settings.values())),
                "paper_ran": sorted(set(self.paper_ran)),
                "theory_called": sorted(self.theory_called),
                "mismatched_draws": len(self.mismatches),
                "trend_mismatches": self.trend_mismatches,
                "mismatches": [{"draw": d, "message": m} for d, m in self.mismatches[:50]],
                "inconclusive": [m for _, m in self.inconclusive][:5],
                "failing_draw": self.failing_draw, "reading": self.reading,
                "diagnosis": self.diagnosis}


_CURRENT: Run | None = None
LAST_RUN: Run | None = None


def pop_last_run() -> Run | None:
    global LAST_RUN
    out, LAST_RUN = LAST_RUN, None
    return out


def property_info(fn) -> dict:
    """What the report needs to know of a property function itself: is it a Hypothesis test,
    how many explicit `@example`s it carries, and which of them cite the paper's own setting
    (`@paper_example`)."""
    return {"hypothesis": hasattr(fn, "hypothesis"),
            "explicit_examples": len(getattr(fn, "hypothesis_explicit_examples", None) or []),
            "paper_examples": [w for w, _ in getattr(fn, PAPER_EXAMPLES_ATTR, [])]}


PAPER_EXAMPLES_ATTR = "__paper_examples__"


def paper_example(where: str, **kwargs):
    """`@example(**kwargs)` that is the paper's own setting, with `where` citing where its
    numbers are in the paper ("Sec. 6: T = v = 10, N = 2000").  Apply it like @example (below
    @examples, above @given).  The report says per claim whether a cited setting ran."""
    from hypothesis import example

    if not (isinstance(where, str) and where.strip()):
        raise ValueError("where: cite where the setting's numbers are in the paper")
    if not kwargs:
        raise ValueError("paper_example needs the setting's parameters as keyword arguments")

    def deco(fn):
        fn = example(**kwargs)(fn)
        setattr(fn, PAPER_EXAMPLES_ATTR, [*getattr(fn, PAPER_EXAMPLES_ATTR, []), (where, kwargs)])
        return fn

    return deco


def _claim(claim_id: str):
    from properties.registry import REGISTRY
    claim = REGISTRY.get(claim_id)
    if claim is None:
        raise PropertyError(f"the property audits {claim_id!r}, which no Claim registers")
    return claim


def _soft(inner: Callable, args, kwargs, world: World, what: str,
          reference: check.Sink | None = None):
    """Run the body in an alternative's (or a perturbation's) world with soft checks.
    Returns (outcome, checks that rejected it, message): outcome "rejected" (a check failed),
    "close" (no check failed, but the body stopped it as inconclusive or rejected the draw,
    or a trend was not significant either way: not told apart), or "survived" (it passed)."""
    sink = check.Sink(soft=True)
    sink.reference = reference  # the claim world's checks on this draw (check_order's band)
    world.last_sink = sink
    stopped = None
    takes_world = "world" in inspect.signature(inner).parameters  # (a diagnosis runs any body)
    with check.recording(sink):
        try:
            inner(*args, **(dict(kwargs, world=world) if takes_world else kwargs))
        except ClaimMismatch as e:  # raised by the body itself, not by a check
            sink.failed.append(("the property body", str(e).splitlines()[0]))
        except (UnsatisfiedAssumption, Skipped) as e:
            stopped = f"{type(e).__name__}: {getattr(e, 'msg', None) or e}".splitlines()[0]
        except Exception as e:
            if not sink.failed:  # it crashed before any check rejected it
                raise PropertyError(f"{world.claim_id}: {what} crashed on draw "
                                    f"{_draw_repr(world._draw or {})}: {type(e).__name__}: "
                                    f"{e}") from e
            # rejected by the checks before the crash; the later checks did not meet it
    met = list(sink.named)
    if sink.failed:
        return "rejected", [n for n, _ in sink.failed], sink.failed[0][1], met
    if stopped or sink.undecided:
        return "close", [], stopped or sink.undecided[0][1], met
    return "survived", [], None, met


def _run_draw(inner: Callable, args, kwargs):
    """One draw: the claim's world, then each applicable alternative on the same draw, then the
    resolution's perturbations of the prediction."""
    run = _CURRENT
    if run is None:  # called outside the @audits wrapper (should not happen): plain call
        return inner(*args, **kwargs)
    claim = _claim(run.claim_id)
    draw_kwargs = {k: v for k, v in kwargs.items() if k != "world"}
    interactive = any(type(v).__name__ == "DataObject" for v in draw_kwargs.values())
    if interactive and run.takes_world and run.fails is None and claim.alternatives:
        raise PropertyError(f"{run.claim_id}: a property with st.data() cannot be replayed on the "
                            "same draw for its alternatives; draw every parameter in @given")
    memo: dict = {}
    def key():  # after the body ran, so that st.data() draws are part of it
        return fingerprint(draw_kwargs)

    world = World(run.claim_id, None, memo, draw_kwargs)
    if run.takes_world:
        kwargs = dict(kwargs, world=world)
    sink = check.Sink()
    with check.recording(sink), _observing(world):
        try:
            if not run.traced and tracing_enabled():
                run.traced = True  # the first draw: which closed forms of theory/ it calls
                _traced(inner, args, kwargs, run.theory_called)
            else:
                inner(*args, **kwargs)
        except UnsatisfiedAssumption:
            run.traced = False  # not a completed draw: trace the next one
            raise  # an invalid draw: Hypothesis draws another; nothing is counted
        except ClaimMismatch as e:
            run.sink.merge(sink)
            if run.fails is None:
                if run.failing_draw is None:  # later calls are Hypothesis shrinking this one
                    _record_draw(run, claim, key(), draw_kwargs)
                    run.trend_mismatches += bool(getattr(e, "trend", False))
                    _diagnose(run, claim, inner, args, kwargs, memo, draw_kwargs)
                run.failing_draw = _draw_repr(draw_kwargs)
                raise
            run.failing_draw = _draw_repr(draw_kwargs)
            _record_draw(run, claim, key(), draw_kwargs)
            if key() not in run.mismatch_keys:  # a draw Hypothesis repeats counts once
                run.mismatch_keys.add(key())
                run.mismatches.append((run.failing_draw, str(e).splitlines()[0]))
                run.trend_mismatches += bool(getattr(e, "trend", False))
                _diagnose(run, claim, inner, args, kwargs, memo, draw_kwargs)
            _note_paper_setting(run, key())
            return None
        except Inconclusive as e:
            run.sink.merge(sink)
            run.inconclusive.append((_draw_repr(draw_kwargs), str(e.msg)))
            _record_draw(run, claim, key(), draw_kwargs)
            _note_paper_setting(run, key())
            return None
        except Exception:
            run.sink.merge(sink)
            run.failing_draw = _draw_repr(draw_kwargs)
            raise
    run.sink.merge(sink)
    if sink.checks == 0:
        run.unchecked_draws += 1
    elif run.failing_draw is None or run.fails is not None:  # not a shrink attempt
        _record_draw(run, claim, key(), draw_kwargs)
        _note_paper_setting(run, key())
    if not run.takes_world or run.fails is not None or run.failing_draw is not None:
        return None  # no alternatives for a printed form expected to fail, nor while shrinking
    for alt in claim.alternatives:
        stats = run.alt_stats(alt)
        if alt.replaces not in world.requested:
            stats.not_applicable += 1
            continue
        if alt.same_as_claim_where is not None:
            try:
                same = bool(alt.same_as_claim_where(**draw_kwargs))
            except Exception as e:
                raise PropertyError(f"{run.claim_id}: same_as_claim_where of {alt.label} failed "
                                    f"on draw {_draw_repr(draw_kwargs)}: {type(e).__name__}: "
                                    f"{e}") from e
            if same:
                stats.excused += 1
                continue
        aw = World(run.claim_id, alt, memo, draw_kwargs)
        outcome, by, msg, met = _soft(inner, args, kwargs, aw, f"alternative {alt.label}",
                                      reference=sink)
        if aw.void is not None:  # no alternative on this draw: its rejection proves nothing
            stats.count_void(aw.void)
            continue
        stats.count(outcome, by, msg, _draw_repr(draw_kwargs), met=met)
    if run.sites is None and resolution_enabled():
        run.sites = _closed_form_sites(declared_closed_forms(claim))
    if (world.predictions or run.sites) and resolution_enabled():
        run.resolution.append(_resolution_of_draw(inner, args, kwargs, run.claim_id, memo,
                                                  draw_kwargs, reference=sink, sites=run.sites))
    return None


def _diagnose(run: Run, claim, inner, args, kwargs, memo, draw_kwargs) -> None:
    """The printed form failed on this draw: try the near misses of its declared closed forms
    (properties.diagnosis) on the first DIAGNOSE_DRAWS such draws."""
    from properties import diagnosis

    if (run.form != "printed" or run.diagnosed >= diagnosis.DIAGNOSE_DRAWS
            or not diagnosis.diagnosis_enabled()):
        return
    if run.sites is None:
        run.sites = _closed_form_sites(declared_closed_forms(claim))
    if not run.sites:
        return
    run.diagnosed += 1
    diagnosis.merge(run.diagnosis, diagnosis.diagnose_draw(
        inner, args, kwargs, run.claim_id, memo, draw_kwargs, run.sites))


def _note_paper_setting(run: Run, k: str):
    where = run.paper_settings.get(k)
    if where is not None:
        run.paper_ran.append(where)


def _finish(run: Run):
    """After the last draw: the printed form's verdict, power, and inconclusive trends."""
    if run.sink.checks == 0 and not run.mismatches and not run.inconclusive:
        raise PropertyError(f"{run.claim_id}: the property made no check "
                            f"({run.unchecked_draws} draws completed without one)")
    if run.fails is not None:
        if run.mismatches:
            lines = [f"  draw {d}: {m}" for d, m in run.mismatches[:10]]
            more = len(run.mismatches) - len(lines)
            raise ClaimMismatch(
                f"{run.claim_id} (printed form): {len(run.mismatches)} of "
                f"{len(run.draws)} draws refute it\n" + "\n".join(lines)
                + (f"\n  ... and {more} more" if more > 0 else ""))
        if run.inconclusive:  # expected to fail, but no draw decides: neither refuted nor passed
            raise Inconclusive("the printed form is marked as failing, but no draw refutes it "
                               "and its trend is inconclusive: " + "; ".join(
                                   m for _, m in run.inconclusive[:3]))
        return
    if run.takes_world:
        row = run.as_row()
        applicable = [a for a in row["alternatives"]
                      if a["draws"] > 0 or a["excused"] > 0 or a.get("void", 0) > 0]
        if not applicable and run.inconclusive:  # nothing was decided, so nothing to reject
            raise Inconclusive("inconclusive: " + "; ".join(m for _, m in run.inconclusive[:3]))
        if not applicable:
            names = ", ".join(a["name"] for a in row["alternatives"]) or "none declared"
            raise NoPower(f"{run.claim_id}: no alternative of the claim ({names}) replaces a slot "
                          "this property asks for: its power is not shown")
        # an alternative that passed the body outright is a power failure (the suite is red); one
        # that was only not told apart (close to the claim on some draws) is reported as such
        weak = [a for a in applicable if a["draws"] > 0 and not a["told_apart"]]
        if weak:
            raise NoPower(f"{run.claim_id}: " + "; ".join(
                f"alternative {a['kind']}:{a['name']} ({a['source']}) passed the property on "
                f"{a['survived']} of {a['draws']} draws (rejected on {a['rejected_draws']}; "
                f"needs {a['must_reject']:.0%})" for a in weak))
    if run.inconclusive:
        raise Inconclusive("inconclusive: " + "; ".join(m for _, m in run.inconclusive[:3]))


FAILS_ATTR = "_audit_fails_by_size"


def fails_at(fails, size: str | None = None) -> str | None:
    """The reason a printed form is expected to fail at `size` (default: the run's size, read
    now): `fails` is a reason, None, or a mapping size -> reason (absent sizes: not expected to
    fail)."""
    if fails is None or isinstance(fails, str):
        return fails
    from properties.settings import size as current
    return fails.get(current() if size is None else size)


def _check_fails(fails, form):
    if fails is None:
        return
    if isinstance(fails, str):
        pass
    elif isinstance(fails, dict):
        from properties.settings import SIZES
        bad = [k for k in fails if k not in SIZES]
        if bad or not all(isinstance(v, str) and v for v in fails.values()):
            raise ValueError(f"fails: a mapping from sizes {SIZES} to non-empty reasons, got "
                             f"{fails!r}")
    else:
        raise ValueError(f"fails: a reason (str), None or a mapping size -> reason, got "
                         f"{fails!r}")
    if form != "printed":
        raise ValueError("fails= is for a printed form expected to fail")


def audits(claim_id: str, form: str = "printed", fails: str | dict | None = None,
           reading: str | None = None):
    """Mark a property as auditing `claim_id` (apply it outermost, above @examples/@given).

    form  -- "printed" (the statement exactly as printed) or "corrected" (an erratum's fix).
    fails -- for a printed statement the simulation refutes: the reason.  The property runs all
             its draws, collects every mismatching draw and then raises one `ClaimMismatch`
             listing them: a strict expected failure that accepts only `ClaimMismatch`, so a
             crash on any draw, or a printed form that no draw refutes, turns the suite red.
             A mapping `{size: reason}` expects the failure only at those sizes; the size is
             read when the suite is collected and run (`properties.settings.size()`), never at
             import.
    reading -- the statement under a neighbouring reading of one of its words (another sign
             convention, another meaning of a symbol), named in a few words: the property is
             set apart from the verdict's basis (the claim's literal reading) and, where it
             decides otherwise than the literal reading, the claim is `reading-dependent`.
    A property that takes a `world` argument is run against the claim's alternatives."""
    if form not in ("printed", "corrected"):
        raise ValueError(f"form must be 'printed' or 'corrected', got {form!r}")
    if reading is not None and not (isinstance(reading, str) and reading.strip()):
        raise ValueError(f"reading must be a non-empty string naming the reading, got {reading!r}")
    _check_fails(fails, form)

    def deco(fn):
        takes_world = "world" in inspect.signature(fn).parameters
        handle = getattr(fn, "hypothesis", None)
        if handle is not None:
            inner = handle.inner_test

            @functools.wraps(inner)
            def per_draw(*args, **kwargs):
                return _run_draw(inner, args, kwargs)

            handle.inner_test = per_draw
            target = fn
        else:
            @functools.wraps(fn)
            def target(*args, **kwargs):
                return _run_draw(fn, args, kwargs)

        paper = {fingerprint(kw): where for where, kw in getattr(fn, PAPER_EXAMPLES_ATTR, [])}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            global _CURRENT, LAST_RUN
            run = Run(claim_id, form, fails_at(fails), takes_world, paper_settings=dict(paper),
                      reading=reading)
            _CURRENT = LAST_RUN = run
            try:
                _claim(claim_id)
                replay = os.environ.get(REPLAY_ENV)
                if replay and handle is not None:  # rerun exactly one draw from the report
                    _run_draw(inner, args, dict(kwargs, **parse_draw(replay)))
                else:
                    target(*args, **kwargs)
                _finish(run)
            finally:
                _CURRENT = None

        wrapper = pytest.mark.claim(claim_id, form=form)(wrapper)
        if isinstance(fails, str):
            wrapper = pytest.mark.xfail(strict=True, raises=ClaimMismatch, reason=fails)(wrapper)
        elif fails:  # per size: the plugin adds the marker at collection, for the run's size
            setattr(wrapper, FAILS_ATTR, dict(fails))
        return wrapper

    return deco
