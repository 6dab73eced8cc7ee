"""The smallest discrepancy a check detects, from the check's own error model (TensorFlow
Probability's `statistical_testing.min_discrepancy_*`).

A relative perturbation of the prediction (properties.world's resolution runs) cannot scale a sign,
an ordering or a count at a level: a prediction of 0, of "+1" or of "none turn" is the same after
x (1 + delta).  Such a check states instead what it would have caught: the smallest true departure
from the boundary it decides that it detects with probability at least 1 - FALSE_PASS, at its own
false-fail rate.  The number comes from the design (the sample size, the rate, the noise of the
statistic), never from the effect observed.

    t_mean            one-sided Student t check of a mean against 0 (seeds as the unit)
    normal_mean       one-sided z check of a Monte Carlo mean (many documents, SE known)
    permutation       a permutation test's noise floor (the largest relabelled value)
    binomial_fraction an exact count k <= level n of n Bernoulli items (a fraction at a level)
    deterministic     a comparison of deterministic quantities (a step, a numerical tolerance)

A check takes one as `detects=` (check.check_at_least); the report lists it in the verdict's
resolution where no relative perturbation applies.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from scipy import optimize, stats

__all__ = ["FALSE_PASS", "Discrepancy", "t_mean", "normal_mean", "permutation",
           "binomial_fraction", "deterministic"]

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


def _se(se) -> float:
    se = float(se)
    if not (math.isfinite(se) and se > 0):
        raise ValueError(f"se: the standard error must be finite and > 0, got {se!r}")
    return se


@functools.lru_cache(maxsize=1024)
def _t_noncentrality(dof: int, ff: float, inflate: float, fp: float) -> tuple[float, float]:
    """t_mean's critical value and the noncentrality it detects with probability 1 - fp: a
    function of the design alone (no data), so computed once per design."""
    crit = float(stats.t.isf(ff, dof)) * inflate
    hi = crit + float(stats.t.isf(fp, dof)) + 10.0
    nc = optimize.brentq(lambda d: float(stats.nct.sf(crit, dof, d)) - (1.0 - fp), 0.0, 4 * hi)
    return crit, nc


def t_mean(se: float, dof: int, false_fail: float, unit: str, *, inflate: float = 1.0,
           false_pass: float = FALSE_PASS) -> Discrepancy:
    """The check 'x >= t_{dof}(1 - false_fail) x inflate x SE' (a one-sided t test of a mean
    against 0, `dof` = seeds - 1; `inflate` = sqrt(1 + 1/n) for a prediction bound on one new
    element, SE then the elements' sd): the smallest true mean it shows positive with
    probability >= 1 - false_pass, by the noncentral t (SE the spread's, noise not effect)."""
    se = _se(se)
    if int(dof) != dof or dof < 1:
        raise ValueError(f"dof: degrees of freedom must be an integer >= 1, got {dof!r}")
    if not (math.isfinite(inflate) and inflate >= 1.0):
        raise ValueError(f"inflate: the critical value's factor must be finite and >= 1, got "
                         f"{inflate!r}")
    ff, fp = _rate("false_fail", false_fail), _rate("false_pass", false_pass)
    crit, nc = _t_noncentrality(int(dof), ff, float(inflate), fp)
    return Discrepancy(nc * se, unit,
                       f"one-sided t_{dof} at false-fail {ff:.3g}: critical {crit:.3g} x SE "
                       f"{se:.3g}; a true mean of {nc:.3g} SE passes with probability "
                       f"{1 - fp:g} (noncentral t)")


def normal_mean(se: float, false_fail: float, unit: str, *,
                false_pass: float = FALSE_PASS) -> Discrepancy:
    """A one-sided normal (z) check of a mean against a boundary at level `false_fail` (a
    Monte Carlo mean over many documents, SE known): a true mean (z_{1-ff} + z_{1-fp}) SE from
    the boundary, on the side the check guards, is caught with probability >= 1 - fp."""
    se = _se(se)
    ff, fp = _rate("false_fail", false_fail), _rate("false_pass", false_pass)
    zf, zp = float(stats.norm.isf(ff)), float(stats.norm.isf(fp))
    return Discrepancy((zf + zp) * se, unit,
                       f"one-sided z at false-fail {ff:.3g}: (z {zf:.3g} + z {zp:.3g}) x SE "
                       f"{se:.3g}")


def permutation(threshold: float, P: int, unit: str) -> Discrepancy:
    """A permutation test (the statistic must exceed all P relabelled values of the same data,
    exact level 1 / (P + 1)): a statistic above `threshold` (their largest, + round-off) is
    caught, one below it is not; the threshold is the data's own noise, not the effect."""
    if int(P) != P or P < 1:
        raise ValueError(f"P: the number of relabellings must be an integer >= 1, got {P!r}")
    return Discrepancy(float(threshold), unit,
                       f"permutation test: above the largest of {int(P)} relabellings of the same "
                       f"data (exact level 1/({int(P)}+1))")


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


def deterministic(bound: float, unit: str, why: str) -> Discrepancy:
    """A comparison of deterministic quantities (integer step numbers and counts: `bound` one
    quantum; a numerical evaluation: `bound` its tolerance, the evaluation's own error below
    it): any departure beyond `bound` is caught (`why`: which departure that is)."""
    return Discrepancy(float(bound), unit, f"deterministic: {why}")
