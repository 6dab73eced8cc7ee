"""The smallest discrepancy a check detects, from the check's own error model (TensorFlow
Probability's `statistical_testing.min_discrepancy_*`).

A relative perturbation of the prediction (properties.world's resolution runs) cannot scale a sign,
an ordering or a count at a level: a prediction of 0, of "+1" or of "none turn" is the same after
x (1 + delta).  Such a check states instead what it would have caught: the smallest true departure
from the boundary it decides that it detects with probability at least 1 - FALSE_PASS, at its own
false-fail rate.  The number comes from the design (the sample size, the rate, the noise of the
statistic), never from the effect observed.

    t_mean            one-sided Student t check of a mean against 0 (seeds as the unit)
    binomial_fraction an exact count k <= level n of n Bernoulli items (a fraction at a level)
    exact_quantum     an exact inequality between integer events (its quantum: one step)

A check takes one as `detects=` (check.check_at_least); the report lists it in the verdict's
resolution where no relative perturbation applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import optimize, stats

__all__ = ["FALSE_PASS", "Discrepancy", "t_mean", "binomial_fraction", "exact_quantum"]

# The rate at which a check misses a discrepancy of the reported size (TFP's false_pass_rate):
# the reported number is detected with probability at least 95%.
FALSE_PASS = 0.05


@dataclass(frozen=True)
class Discrepancy:
    """value -- the smallest discrepancy detected (in `unit`, absolute);
    unit  -- what it is measured in ('test-loss gap', 'turned fraction', 'steps');
    model -- how it follows from the check's error model."""

    value: float
    unit: str
    model: str

    def __post_init__(self):
        if not (isinstance(self.value, (int, float)) and math.isfinite(self.value)
                and self.value > 0):
            raise ValueError(f"value: a discrepancy must be finite and > 0, got {self.value!r}")
        if not self.unit:
            raise ValueError("unit: name what the discrepancy is measured in")

    def as_record(self) -> dict:
        return {"value": float(self.value), "unit": self.unit, "model": self.model}


def _rate(name: str, p: float) -> float:
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"{name}: a rate must lie in (0, 1), got {p!r}")
    return p


def t_mean(se: float, dof: int, false_fail: float, unit: str, *,
           false_pass: float = FALSE_PASS) -> Discrepancy:
    """The check 'mean >= t_{dof}(1 - false_fail) x SE' (a one-sided t test of a mean against 0,
    `dof` = seeds - 1): the smallest true mean it shows positive with probability >= 1 -
    false_pass, by the noncentral t (SE the per-seed spread's, noise not effect)."""
    se = float(se)
    if not (math.isfinite(se) and se > 0):
        raise ValueError(f"se: the standard error must be finite and > 0, got {se!r}")
    if int(dof) != dof or dof < 1:
        raise ValueError(f"dof: degrees of freedom must be an integer >= 1, got {dof!r}")
    ff, fp = _rate("false_fail", false_fail), _rate("false_pass", false_pass)
    dof = int(dof)
    crit = float(stats.t.isf(ff, dof))
    hi = crit + float(stats.t.isf(fp, dof)) + 10.0
    nc = optimize.brentq(lambda d: float(stats.nct.sf(crit, dof, d)) - (1.0 - fp), 0.0, 4 * hi)
    return Discrepancy(nc * se, unit,
                       f"one-sided t_{dof} at false-fail {ff:.3g}: critical {crit:.3g} x SE "
                       f"{se:.3g}; a true mean of {nc:.3g} SE passes with probability "
                       f"{1 - fp:g} (noncentral t)")


def binomial_fraction(n: int, level: float, unit: str, *,
                      false_pass: float = FALSE_PASS) -> Discrepancy:
    """The check 'k / n <= level' on n items: the smallest per-item probability p at which it
    fails with probability >= 1 - false_pass (k ~ Binomial(n, p))."""
    if int(n) != n or n < 1:
        raise ValueError(f"n: the number of items must be an integer >= 1, got {n!r}")
    level = float(level)
    if not 0.0 <= level < 1.0:
        raise ValueError(f"level: a fraction's level must lie in [0, 1), got {level!r}")
    fp = _rate("false_pass", false_pass)
    n = int(n)
    kmax = math.floor(level * n + 1e-12)  # the largest count that passes
    p = optimize.brentq(lambda q: float(stats.binom.sf(kmax, n, q)) - (1.0 - fp),
                        1e-15, 1.0 - 1e-15)
    return Discrepancy(p, unit,
                       f"binomial: the count must stay <= {kmax} of {n} (level {level:g}); a "
                       f"per-item probability of {p:.3g} exceeds it with probability {1 - fp:g}")


def exact_quantum(quantum: float, unit: str, why: str) -> Discrepancy:
    """An exact inequality between deterministic events (integer step numbers, counts): it
    catches any departure of one quantum (`why`: which departure that is)."""
    return Discrepancy(float(quantum), unit, f"exact: {why}")
