"""The claim registry: every audited statement is one `Claim`, keyed by its id.

The id is reused everywhere: the `@audits(id, ...)` marker on property tests, the rows of the
audit report, and `--only` globs on the command line.  Verdicts are not stored here; they are
computed from the outcomes of the property tests that carry the id (see `properties.report`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

# Modules of properties/ that are the harness, not a paper's claims (collection and the CLI
# skip them).
HARNESS_MODULES = frozenset({"__init__", "__main__", "registry", "check", "plugin", "report",
                             "world", "cli", "cache", "figstyle", "bench", "settings",
                             "digest", "readings", "scaffold", "policy", "evidence", "verdict",
                             "readme", "cli_common", "cli_audit", "proctree", "shards",
                             "discrepancy", "procedures", "outcomes", "resolution", "trace",
                             "trend", "diagnosis"})

CLAIM_KINDS = ("paper", "by_construction", "consistency")
# how the statement text stands to the paper: its words ("printed"), its meaning in other words
# ("paraphrased": the text lost its math, or a figure's caption read as a sentence), or a form
# this suite derived or rebuilt ("derived": from proof fragments, a statement sheet's [R]/[D])
STATEMENT_KINDS = ("printed", "paraphrased", "derived")
STATEMENT_LABEL = {"printed": "As printed", "paraphrased": "Paraphrased (the paper's meaning, "
                   "not its words)", "derived": "Derived (rebuilt or derived by this suite, not "
                   "printed as such)"}

PAPER_DOC = re.compile(r"^\s*Audit of (.+?):", re.S)


def paper_packages(root=None) -> list[str]:
    """The papers: every package `properties/<name>/` (a directory with an `__init__.py`), found
    on disk, never listed by hand.  The harness modules are flat files, so every package is a
    paper.  Sorted by name (the order of every table)."""
    from pathlib import Path
    base = Path(root) if root is not None else Path(__file__).resolve().parent.parent
    d = base / "properties"
    return sorted(p.name for p in d.iterdir()
                  if p.is_dir() and (p / "__init__.py").is_file() and p.name.isidentifier())


def paper_name(prefix: str) -> str:
    """The display name of the paper `prefix` (a claim id's prefix): the `PAPER` attribute of its
    package `properties/<prefix>/__init__.py`, else the part of that package's docstring between
    "Audit of " and the first colon, else the prefix itself (a conjecture's)."""
    import sys
    mod = sys.modules.get(f"properties.{prefix}")
    if mod is None:
        return prefix
    name = getattr(mod, "PAPER", None)
    if isinstance(name, str) and name.strip():
        return name.strip()
    m = PAPER_DOC.match(mod.__doc__ or "")
    return " ".join(m.group(1).split()) if m else prefix


@dataclass(frozen=True)
class Claim:
    """One numbered (or clearly stated qualitative) claim of a paper.

    id          -- e.g. "joma.theorem2"; the prefix before the first dot names the paper.
    where       -- theorem / lemma / equation in the paper, e.g. "Theorem 2, Eqn. 4".
    statement   -- the statement as printed (math in plain text / LaTeX-ish).
    statement_kind -- "printed" (the paper's words, the default), "paraphrased" (its meaning in
                   other words) or "derived" (rebuilt or derived by this suite): shown as such
                   in the report, never under "As printed".
    assumptions -- what the statement assumes; strategies draw from inside these.
    prediction  -- dotted name(s) of the closed form(s) in `theory/`.
    simulation  -- dotted name(s) of the simulation(s) in `sim/` the prediction is checked against.
    metric      -- how observed and predicted are compared.
    tolerance   -- the tolerance and the error model it comes from.
    corrected   -- for an erratum: the corrected statement (the printed one stays as printed).
    reason      -- for an erratum or a refutation: why the printed form fails.
    reading     -- interpretation choices where the text is ambiguous, and alternatives tested.
    audit_gap   -- what the properties do NOT establish of the statement (e.g. a second half that
                   only a full-size run could show).  A claim with a gap is never reported as
                   `holds`: passing properties make it `not-audited`, with the gap as the reason.
    plot        -- optional callable(path) that draws the claim's standard figure.
    alternatives -- the rivals and nulls (`properties.world.rival` / `null`) its properties must
                   reject on the same draws; without one the claim is never `holds` or `erratum`.
    asymptotic  -- for an asymptotic or qualitative statement ("<<", Theta, o(1), "tends to",
                   "first ... then"): the parameter it is asymptotic in.  Such a claim is decided
                   only by `check_trend` over at least three values of it; a verdict resting on
                   one size is `not-audited`, whichever way it points.
    history     -- thresholds, horizons, grids or readings changed after the audit saw a
                   failure, each with what was changed, when, and why (shown in the report).
    paper       -- display name of the paper (derived from the id prefix if omitted).
    paper_setting -- where the paper gives no setting of its own, or the machine cannot run
                   it: why (shown in the report beside "paper's setting: not run").  Where it
                   does, the properties carry `@paper_example(where=..., ...)` instead.
    kind        -- "paper" (a statement of the paper, decided against the simulation) or
                   "consistency" (a check of the simulator against its own derivation, or algebra
                   of the printed text: it could fail only through a bug, not through the
                   paper being wrong).  A consistency claim gets the verdict `consistency` (or
                   `inconsistent`), is listed apart and is never counted among the paper's holds.
                   "by_construction": a numbered statement of the paper that is true by
                   construction in this model (its checks test the simulator's implementation
                   of it): decided as a paper claim and counted in the paper's tally, labelled
                   "holds (by construction in this model)".
    draw_note   -- optional callable(**draw parameters) -> str: what the report says of each
                   draw beside its parameters (e.g. whether the draw satisfies a condition of
                   the theorem); it reads the draw, never the run.
    """

    id: str
    where: str
    statement: str
    assumptions: str
    prediction: str
    simulation: str
    metric: str
    tolerance: str
    corrected: str | None = None
    reason: str | None = None
    reading: str | None = None
    audit_gap: str | None = None
    plot: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    paper: str = ""
    alternatives: tuple = ()
    asymptotic: str | None = None
    history: tuple = ()
    kind: str = "paper"
    paper_setting: str | None = None
    draw_note: Callable[..., str] | None = field(default=None, compare=False, repr=False)
    statement_kind: str = "printed"

    def __post_init__(self):
        if not self.id or " " in self.id or "." not in self.id:
            raise ValueError(f"claim id must look like 'paper.item', got {self.id!r}")
        if self.kind not in CLAIM_KINDS:
            raise ValueError(f"{self.id}: kind must be one of {CLAIM_KINDS}, got {self.kind!r}")
        if self.statement_kind not in STATEMENT_KINDS:
            raise ValueError(f"{self.id}: statement_kind must be one of {STATEMENT_KINDS}, got "
                             f"{self.statement_kind!r}")
        if not self.paper:
            prefix = self.id.split(".", 1)[0]
            object.__setattr__(self, "paper", paper_name(prefix))
        if (self.corrected is None) != (self.reason is None) and self.corrected is not None:
            raise ValueError(f"{self.id}: an erratum needs both `corrected` and `reason`")
        alts = tuple(self.alternatives)
        if not all(isinstance(a, Alternative) for a in alts):
            raise ValueError(f"{self.id}: alternatives must be rival(...) / null(...) objects")
        names = [a.name for a in alts]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: alternative names must be distinct, got {names}")
        object.__setattr__(self, "alternatives", alts)
        hist = (self.history,) if isinstance(self.history, str) else tuple(self.history)
        if not all(isinstance(h, str) and h.strip() for h in hist):
            raise ValueError(f"{self.id}: history entries must be non-empty strings")
        object.__setattr__(self, "history", hist)


# --------------------------------------------------------------------------------------------
# Alternatives: what a claim's properties must reject
# --------------------------------------------------------------------------------------------
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


@dataclass(frozen=True)
class Alternative:
    """A wrong world the claim's properties must reject.

    name        -- short slug, shown as `[rival:name]` / `[null:name]` in the report.
    kind        -- "rival" (replaces a prediction slot) or "null" (replaces a simulation slot).
    replaces    -- the slot name the property asks for (`world.prediction(fn, slot)` /
                   `world.simulation(fn, slot)`).
    by          -- the replacement: a callable with the same signature as the slot's default.
    source      -- where the alternative comes from (the printed erratum, "dropped factor 1/2",
                   "training switched off", ...).
    must_reject -- fraction of its draws on which it must be rejected (1.0: every draw).
    same_as_claim_where -- declared before any run: a predicate of a draw's parameters (the
                   keyword arguments of the property) that is true where the alternative
                   coincides with the claim (a rival equal to the prediction at x = 0).  Such a
                   draw is *excused*: the alternative is not run on it, and the report says on
                   how many draws and why (`same_as_claim_why`).  Any other draw on which the
                   alternative is not rejected (it passed, or the body called it inconclusive or
                   rejected the draw) counts as not rejected: close alternatives are never
                   excused after the fact."""

    name: str
    kind: str
    replaces: str
    by: Callable = field(compare=False, repr=False)
    source: str = ""
    must_reject: float = 1.0
    same_as_claim_where: Callable | None = field(default=None, compare=False, repr=False)
    same_as_claim_why: str = ""

    def __post_init__(self):
        if not _NAME.match(self.name or ""):
            raise ValueError(f"alternative name must be a lower-case slug, got {self.name!r}")
        if self.kind not in ("rival", "null"):
            raise ValueError(f"alternative kind must be 'rival' or 'null', got {self.kind!r}")
        if not self.replaces:
            raise ValueError("alternative `replaces` must name a slot")
        if not callable(self.by):
            raise ValueError(f"alternative {self.name!r}: `by` must be callable")
        if not self.source:
            raise ValueError(f"alternative {self.name!r}: say where it comes from (`source`)")
        if not (0.0 < self.must_reject <= 1.0):
            raise ValueError(f"must_reject must be in (0, 1], got {self.must_reject}")
        if self.same_as_claim_where is not None and (
                not callable(self.same_as_claim_where) or not self.same_as_claim_why.strip()):
            raise ValueError(f"alternative {self.name!r}: same_as_claim_where must be a callable "
                             "of the draw's parameters, with same_as_claim_why saying why it "
                             "coincides with the claim there")

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"


def rival(name: str, by: Callable, source: str, *, replaces: str = "prediction",
          must_reject: float = 1.0, same_as_claim_where: Callable | None = None,
          same_as_claim_why: str = "") -> Alternative:
    """A wrong closed form (replaces the prediction slot `replaces`)."""
    return Alternative(name, "rival", replaces, by, source, must_reject, same_as_claim_where,
                       same_as_claim_why)


def null(name: str, by: Callable, source: str, *, replaces: str = "simulation",
         must_reject: float = 1.0, same_as_claim_where: Callable | None = None,
         same_as_claim_why: str = "") -> Alternative:
    """A simulation with the claimed mechanism switched off (replaces simulation `replaces`)."""
    return Alternative(name, "null", replaces, by, source, must_reject, same_as_claim_where,
                       same_as_claim_why)


REGISTRY: dict[str, Claim] = {}
REGISTERED_IN: dict[str, str] = {}  # claim id -> file (relative to the repository) that registers it


def _caller_file() -> str:
    import os
    import sys
    f = sys._getframe(2).f_code.co_filename
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f = os.path.abspath(f)  # a file outside the checkout (a conjecture) by its absolute path
    return os.path.relpath(f, root) if f.startswith(root + os.sep) else f


def register(claim: Claim) -> Claim:
    """Add `claim` to the registry. Re-registering an equal claim (a module imported twice,
    e.g. by pytest and by the audit command) is a no-op; a different claim with a taken id
    is an error."""
    old = REGISTRY.get(claim.id)
    if old is not None and old != claim:
        raise ValueError(f"claim id {claim.id!r} is already registered with different content")
    REGISTRY[claim.id] = claim
    REGISTERED_IN.setdefault(claim.id, _caller_file())
    return claim


def attach_plot(claim_id: str, plot: Callable[[str], None]) -> Claim:
    """Give a registered claim its figure (for plot functions defined after the claim)."""
    if claim_id not in REGISTRY:
        raise ValueError(f"no claim {claim_id!r} registered")
    REGISTRY[claim_id] = replace(REGISTRY[claim_id], plot=plot)
    return REGISTRY[claim_id]


HISTORY_FILE = "history.json"  # beside a paper's claim files: {claim id: [entries]}


def history_of(claim: Claim) -> list[str]:
    """A claim's history: the entries its `Claim(history=...)` carries, then those kept as data
    beside the claim files (`properties/<paper>/history.json`, keyed by claim id), so that a
    change of rule need not be written into the claim file."""
    import json
    from pathlib import Path

    out = list(claim.history)
    f = Path(__file__).resolve().parent / claim.id.split(".", 1)[0] / HISTORY_FILE
    try:
        data = json.loads(f.read_text())
    except FileNotFoundError:
        return out
    except (OSError, ValueError) as e:
        raise ValueError(f"{f}: not a JSON object of claim id -> [entries] ({e})") from None
    extra = data.get(claim.id, []) if isinstance(data, dict) else None
    if not (isinstance(extra, list) and all(isinstance(h, str) and h.strip() for h in extra)):
        raise ValueError(f"{f}: the entry of {claim.id!r} must be a list of non-empty strings")
    return out + extra
