"""A refinement: a rival whose predicted region lies inside the claim's.

The closest plausible mistake of a one-sided bound is a tighter bound (a lower bound raised, an
upper bound lowered, a bracket narrowed to one of its parts).  The check rejects it only on the
draws whose measurement falls between the two bounds; where the measurement lies inside the
tighter region as well, the data are consistent with the claim *and* with the refinement, so that
draw does not tell them apart.  It is not a power failure either: the refinement passing says that
the printed bound is not tight on that draw, never that the check could not fail.

So the harness counts a refinement that passes a draw as *not told apart* on it (with that reason),
and a refinement that is rejected as rejected: the check's power against it is the draws on which
the data fell between the two regions.  Declare it with `refinement(...)` in place of
`rival(...)`; it is a rival in every other respect (it replaces a prediction slot, the report
lists it as `rival:name`).

Only a region *inside* the claim's is a refinement: the declaration is the claim author's, read by
a referee beside the two closed forms (a rival that predicts outside the claim's region must be
declared with `rival`, and a pass of it stays a power failure).

(Kept apart from properties.registry because that module is an input of every cached run, and a
refinement changes what the harness counts, not what any run computes.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

from properties.registry import Alternative

__all__ = ["Refinement", "refinement", "REFINEMENT_PASSED"]

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
    draw it passes is not told apart, not survived (properties.refine)."""
    return Refinement(name, "rival", replaces, by, source, must_reject, same_as_claim_where,
                      same_as_claim_why)
