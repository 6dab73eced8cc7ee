"""The glossary: one level for each word of a statement that a threshold interprets.

A paper's "near 1/2", "small", "high", "Theta(1)" or "slight" is not a number; a property
that turns one into a threshold makes a *reading*, and every claim reads the same word at the
same level, from this table (`Threshold.reading(word, sentence)` / `Tolerance.reading(...)`,
with the sentence of the paper it reads quoted at the use).  Each entry also has a stricter and
a looser level: the harness decides every reading check at all three, and a verdict that changes
inside the bracket is reported `reading-dependent`, with the levels where it flips, instead of
holds or refuted.

A level is a choice, not a measurement: it is fixed here before any run, one per word, and a
change of it after an audit saw a failure goes into the history of every claim that reads it.
Leaf module (imports nothing of the harness).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOSSARY", "Reading", "lookup"]


@dataclass(frozen=True)
class Reading:
    """word     -- the word as the statements use it;
    meaning  -- what the level bounds (the statistic the check compares with it);
    level    -- the glossary's reading; stricter / looser: the bracket the verdict must survive
                (for a tolerance stricter < level < looser, for a score stricter > level > looser);
    why      -- where the level comes from (a convention of the field, a scale of the problem);
    fixed    -- the date the level was fixed (the commit that added it to the glossary);
    first    -- the claim it was first used for;
    in_view  -- the level was set with that claim's data in view (it reproduces a number the
                claim already used on data it had seen): the report shows it as such."""

    word: str
    meaning: str
    level: float
    stricter: float
    looser: float
    why: str
    fixed: str = "2026-12-03"
    first: str = ""
    in_view: bool = False

    @property
    def provenance(self) -> str:
        """When and for which claim the level was fixed, and whether with its data in view."""
        return (f"fixed {self.fixed} for {self.first or 'an unnamed claim'}"
                + ("; SET WITH THAT CLAIM'S DATA IN VIEW (it reproduces the number the claim "
                   "already used)" if self.in_view else ""))

    def __post_init__(self):
        lo, hi = sorted((self.stricter, self.looser))
        if not lo < self.level < hi:
            raise ValueError(f"reading {self.word!r}: the level {self.level} must lie strictly "
                             f"inside its bracket [{self.stricter}, {self.looser}]")


# The first glossary (f10147b, 2026-12-03) was written before its words were read by claims;
# each later word below names the claim it was added for and whether its level reproduces the
# number that claim already used (from the commits that added them, issue 34's finding).
_FIRST = "the first glossary (before any claim read it)"


def _r(word, meaning, level, stricter, looser, why, fixed="2026-12-03", first=_FIRST,
       in_view=False):
    return Reading(word, meaning, level, stricter, looser, why, fixed, first, in_view)


GLOSSARY: dict[str, Reading] = {r.word: r for r in (
    _r("near 1/2", "|p - 1/2| for a probability p said to be near 1/2", 0.05, 0.025, 0.1,
       "a deviation of a twentieth of the range [0, 1]; the bracket halves and doubles it"),
    _r("near 0", "|x| / scale for a quantity said to be near 0 (relative to its scale)", 0.05,
       0.025, 0.1, "the same twentieth as 'near 1/2', relative to the quantity's own scale"),
    _r("close to 1", "|r - 1| for a ratio or correlation said to be close to 1", 0.05, 0.025,
       0.1, "the same twentieth as 'near 1/2'"),
    _r("high", "a correlation or fraction said to be high (score >= level)", 0.9, 0.95, 0.8,
       "the usual 'strong' band of a correlation; the bracket 0.8-0.95"),
    _r("most", "a fraction said to hold for most elements (score >= level)", 0.9, 0.95, 0.75,
       "nine in ten; the bracket three in four to nineteen in twenty"),
    _r("small", "|x| / scale for a quantity said to be small against a scale", 0.1, 0.05, 0.2,
       "an order of magnitude below the scale it is compared with; the bracket halves and "
       "doubles it"),
    _r("slight", "a relative difference said to be slight", 0.05, 0.02, 0.1,
       "a few percent; the bracket 2%-10%"),
    _r("Theta(1)", "max(r, 1/r) for a ratio said to be Theta(1) at the sizes run (score <= "
       "level)", 3.0, 2.0, 5.0,
       "a ratio within a small constant factor of 1 at the sizes run; the bracket 2-5"),
    _r("stays at init", "the relative change of a quantity said not to move from its "
       "initialisation", 1e-3, 1e-4, 1e-2,
       "a thousandth of its scale; the bracket a decade either way"),
    _r("+inf", "a quantity said to diverge, read as 'larger than level x its initial scale' "
       "(score >= level)", 100.0, 1000.0, 10.0,
       "two decades above the initial scale; the bracket one to three decades"),
    _r("keep their sign", "the fraction of pairs said to keep their sign (score >= level)", 0.9,
       0.95, 0.8, "nine in ten, as 'most' (a literal 'every pair' is contradicted by the paper's "
       "own Table 2, 93%); the bracket four in five to nineteen in twenty",
       fixed="2026-12-04", first="signgd.lemma4_2", in_view=True),
    _r("converged", "a training loss said to have converged (in a comparison of optimizers or "
       "a figure read by eye): L_S <= level", 0.05, 0.02, 0.1,
       "a twentieth of the logistic loss at init (log 2 ~ 0.69 is ~14 levels), where a curve "
       "drawn on [0, log 2] meets its axis; the bracket 2%-10%",
       fixed="2026-12-04", first="signgd.gd.faster", in_view=True),
    _r("not yet converged", "a training loss said not to have converged yet, still of the "
       "order of its init log 2: L_S >= level", 0.5, 0.6, 0.35,
       "about 70% of log 2 ~ 0.69 (the loss has left its init by less than a third); the "
       "bracket half of log 2 to ~87% of it",
       fixed="2026-12-04", first="signgd.gd.faster", in_view=True),
    _r("Theta(1) error", "a 0-1 error said to be Theta(1), of the order of chance rather than "
       "vanishing: error >= level", 0.1, 0.2, 0.05,
       "a tenth, a fifth of chance (1/2); the bracket a twentieth to a fifth",
       fixed="2026-12-04", first="signgd.appendix_f1", in_view=True),
    _r("-> epsilon", "a training loss said to converge to (an arbitrary) epsilon, read at the "
       "end of training: L_S <= level", 1e-3, 1e-4, 1e-2,
       "a thousandth (~1/700 of the loss at init, log 2); the bracket a decade either way",
       fixed="2026-12-04", first="signgd.theorem3_2.item1", in_view=True),
    _r("extremely sparse", "an attention said to become extremely sparse: its entropy as a "
       "fraction of its entropy at initialisation (near uniform), H / H_0 <= level", 0.1, 0.05,
       0.2, "an order of magnitude below the near-uniform entropy it starts from, as 'small'; "
       "the bracket halves and doubles it",
       fixed="2026-12-05", first="joma.sec4.entropy_dynamics_trained", in_view=False),
    _r("one-hot", "an attention row said to become one-hot: its largest weight (score >= "
       "level)", 0.9, 0.99, 0.8, "nine tenths of the row on one key; the bracket four fifths to "
       "ninety-nine hundredths",
       fixed="2026-12-05", first="signgd.longer_context", in_view=True),
    _r("constant order", "a loss said to stay of constant order (Theta(1)) rather than vanish, "
       "read at one size: L >= level", 0.1, 0.2, 0.05,
       "a tenth (~1/7 of the logistic loss at init, log 2); the bracket a twentieth to a fifth, "
       "as 'Theta(1) error'",
       fixed="2026-12-05", first="signgd.theorem3_2.item2", in_view=True),
    _r("dominates", "a ratio A / B of magnitudes where A is said to dominate B (score >= level)",
       2.0, 3.0, 1.5, "A at least twice B; the bracket one and a half to three times",
       fixed="2026-12-04", first="signgd.theorem3_2.item3", in_view=True),
)}


def lookup(word: str) -> Reading:
    """The glossary entry for `word`; ValueError naming the known words otherwise."""
    try:
        return GLOSSARY[word]
    except (KeyError, TypeError):
        raise ValueError(f"word: {word!r} is not in the glossary (properties/readings.py); "
                         f"known: {', '.join(sorted(GLOSSARY))}") from None
