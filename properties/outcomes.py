"""Typed records of what a property met: `AltOutcome`, one alternative over a property's draws
(the report reads its `as_dict()`).  Split from properties.world, which re-exports it.

And the one kind of alternative whose passes count differently, `Refinement`: a rival whose
predicted region lies inside the claim's.  The closest plausible mistake of a one-sided bound is
a tighter bound (a lower bound raised, an upper bound lowered, a bracket narrowed to one of its
parts).  The check rejects it only on the draws whose measurement falls between the two bounds;
where the measurement lies inside the tighter region as well, the data are consistent with the
claim *and* with the refinement, so that draw does not tell them apart.  It is not a power
failure either: the refinement passing says that the printed bound is not tight on that draw,
never that the check could not fail.  So a refinement that passes a draw is counted *not told
apart* on it (with that reason), and one that is rejected as rejected.  Declare it with
`refinement(...)` in place of `rival(...)`; it is a rival in every other respect (it replaces a
prediction slot, the report lists it as `rival:name`).  Only a region *inside* the claim's is a
refinement: the declaration is the claim author's, read by a referee beside the two closed
forms.  (It lives here, not in properties.registry, because that module is an input of every
cached run, and a refinement changes what the harness counts, not what any run computes.)

And the one kind of property whose outcome is no part of the verdict's basis: one run outside the
statement's condition (issue 35's ruling on off-path runs).  `@outside_condition("...")` names the
regime (the clause of the paper's condition it does not follow, and where the claim decides the
same item inside it); the plugin carries it on the property's row (`regime`), and
properties.verdict lists what it finds as a finding about that regime, never a refutation, a
holds or a reading flip (a crash still breaks the claim).  Here, not on properties.world.audits,
for the same reason: world.py is an input of every cached run."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from properties.registry import Alternative

__all__ = ["AltOutcome", "Refinement", "refinement", "REFINEMENT_PASSED", "outside_condition",
           "regime_of"]

REGIME_ATTR = "__audit_regime__"


def outside_condition(regime: str):
    """Mark a property as run outside the statement's condition, `regime` naming how: the clause
    it does not follow and where the item is decided inside it (apply above or below @audits)."""
    if not (isinstance(regime, str) and regime.strip()):
        raise ValueError(f"regime must be a non-empty string naming the clause not followed and "
                         f"where the item is decided inside it, got {regime!r}")

    def deco(fn):
        setattr(fn, REGIME_ATTR, regime)
        return fn

    return deco


def regime_of(fn) -> str | None:
    """The regime a property function was marked with (None: inside the condition)."""
    return getattr(fn, REGIME_ATTR, None)

REFINEMENT_PASSED = ("passed, and it is a refinement of the claim (its predicted region inside "
                     "the claim's): the measurement lies in both, so this draw does not tell "
                     "them apart")


@dataclass(frozen=True)
class Refinement(Alternative):
    """A rival whose predicted region lies inside the claim's (see the module)."""

    refines: ClassVar[bool] = True

    def __post_init__(self):
        super().__post_init__()
        if self.kind != "rival":
            raise ValueError(f"alternative {self.name!r}: a refinement replaces a prediction "
                             "(kind 'rival'); a null switches a mechanism off and refines "
                             "nothing")


def refinement(name: str, by: Callable, source: str, *, replaces: str = "prediction",
               must_reject: float = 1.0, same_as_claim_where: Callable | None = None,
               same_as_claim_why: str = "") -> Refinement:
    """A rival closed form whose predicted region lies inside the claim's (a tighter bound): a
    draw it passes is not told apart, not survived (the module docstring)."""
    return Refinement(name, "rival", replaces, by, source, must_reject, same_as_claim_where,
                      same_as_claim_why)


@dataclass
class AltOutcome:
    """What one alternative met over a property's draws: a typed record (the report reads its
    `as_dict()`).  Each draw is one of: not applicable (it replaces no slot the body asks for),
    excused (inside the region it declared, before any run, to coincide with the claim),
    rejected (a check failed; `by_check` counts which), not told apart (the body stopped it as
    inconclusive, a trend was undecided, or a `Refinement` of the claim passed), or survived (it
    passed the body)."""

    name: str
    kind: str
    replaces: str
    source: str
    must_reject: float
    excused_why: str | None = None
    draws: int = 0
    rejected_draws: int = 0
    not_applicable: int = 0
    not_told_apart: int = 0
    survived: int = 0
    excused: int = 0
    void: int = 0                 # draws on which it returned what the claim's world computed
    void_why: str | None = None
    refines: bool = False         # a refinement (the module docstring): a pass is not told apart
    by_check: dict = field(default_factory=dict)
    met_check: dict = field(default_factory=dict)   # check -> decisive draws that called it
    messages: list = field(default_factory=list)
    close_messages: list = field(default_factory=list)

    KEEP_MESSAGES = 3

    @classmethod
    def of(cls, alt: Alternative) -> AltOutcome:
        return cls(alt.name, alt.kind, alt.replaces, alt.source, alt.must_reject,
                   alt.same_as_claim_why or None, refines=bool(getattr(alt, "refines", False)))

    def count(self, outcome: str, by=(), msg: str | None = None, draw: str = "",
              met=()) -> None:
        """Count one draw on which the alternative ran, with its outcome from `_soft`; `met`:
        the checks the body called in the alternative's world on that draw (a check inside a
        branch meets the alternative only on the draws that take the branch)."""
        if outcome not in ("rejected", "close", "survived"):
            raise ValueError(f"outcome must be rejected, close or survived, got {outcome!r}")
        if outcome == "survived" and self.refines:  # consistent with the claim and with it
            outcome, msg = "close", REFINEMENT_PASSED
        self.draws += 1
        if outcome != "close":  # decisive draws: the per-check power is counted over these
            for c in set(met) | set(by):
                self.met_check[c] = self.met_check.get(c, 0) + 1
        if outcome == "rejected":
            self.rejected_draws += 1
            for c in set(by):
                self.by_check[c] = self.by_check.get(c, 0) + 1
            if msg and len(self.messages) < self.KEEP_MESSAGES:
                self.messages.append(msg)
        elif outcome == "close":
            self.not_told_apart += 1
            if len(self.close_messages) < self.KEEP_MESSAGES:
                self.close_messages.append(f"draw {draw}: {msg}")
        else:
            self.survived += 1

    def count_void(self, why: str) -> None:
        """A draw on which the alternative's replaced slot returned what the claim's world
        computed (`World.void`): not counted as run, rejected or survived."""
        self.void += 1
        self.void_why = self.void_why or why

    @property
    def needed(self) -> int:
        return math.ceil(self.must_reject * self.draws - 1e-9)

    @property
    def rejected(self) -> bool:
        return self.draws > 0 and self.rejected_draws >= self.needed

    @property
    def told_apart(self) -> bool:
        return self.draws > 0 and self.rejected_draws + self.not_told_apart >= self.needed

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["by_check"] = dict(self.by_check)
        d["met_check"] = dict(self.met_check)
        d.update(rejected=self.rejected, told_apart=self.told_apart)
        return d
