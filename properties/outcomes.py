"""Typed records of what a property met: `AltOutcome`, one alternative over a property's draws
(the report reads its `as_dict()`).  Split from properties.world, which re-exports it."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from properties.registry import Alternative

__all__ = ["AltOutcome"]


@dataclass
class AltOutcome:
    """What one alternative met over a property's draws: a typed record (the report reads its
    `as_dict()`).  Each draw is one of: not applicable (it replaces no slot the body asks for),
    excused (inside the region it declared, before any run, to coincide with the claim),
    rejected (a check failed; `by_check` counts which), not told apart (the body stopped it as
    inconclusive, a trend was undecided, or a refinement of the claim passed:
    properties.refine), or survived (it passed the body)."""

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
    refines: bool = False         # a refinement (properties.refine): a pass is not told apart
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
            from properties.refine import REFINEMENT_PASSED
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
