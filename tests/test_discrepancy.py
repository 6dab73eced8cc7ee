"""properties.discrepancy: the smallest discrepancy a check detects, against its error model
(the noncentral t and the binomial by simulation), and its input checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from properties import discrepancy as D


@settings(max_examples=5, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(4, 12))
def test_t_mean_is_passed_with_the_stated_probability(seed, n):
    """A true mean of the reported size passes the one-sided t check in ~95% of samples; the
    mean 0 passes at the false-fail rate."""
    ff, se_true = 0.01, 1.0
    d = D.t_mean(se_true, n - 1, ff, "u")
    rng = np.random.default_rng(seed)
    crit = stats.t.isf(ff, n - 1)
    sd = se_true * np.sqrt(n)

    def pass_rate(mu, reps=20000):
        x = rng.normal(mu, sd, size=(reps, n))
        return float(np.mean(x.mean(1) >= crit * x.std(1, ddof=1) / np.sqrt(n)))

    # the noncentral t fixes the SE at its true value; the check estimates it: the rate agrees
    # to Monte Carlo error (+-0.005 at 20000 samples, 4 sigma)
    assert abs(pass_rate(d.value) - (1 - D.FALSE_PASS)) < 0.006
    assert pass_rate(0.0) < 3 * ff


@pytest.mark.parametrize("n,level", [(1, 0.0), (15, 0.1), (87, 0.1), (400, 0.05)])
def test_binomial_fraction_fails_with_the_stated_probability(n, level):
    d = D.binomial_fraction(n, level, "u")
    kmax = int(np.floor(level * n + 1e-12))
    assert stats.binom.sf(kmax, n, d.value) == pytest.approx(1 - D.FALSE_PASS, abs=1e-9)
    assert level < d.value < 1
    # more items resolve finer
    if n > 1:
        assert D.binomial_fraction(4 * n, level, "u").value < d.value


def test_deterministic_is_its_quantum():
    assert D.deterministic(1, "steps", "one step").value == 1.0


@pytest.mark.parametrize("call,param", [
    (lambda: D.t_mean(0.0, 3, 0.01, "u"), "se"),
    (lambda: D.t_mean(float("nan"), 3, 0.01, "u"), "se"),
    (lambda: D.t_mean(1.0, 0, 0.01, "u"), "dof"),
    (lambda: D.t_mean(1.0, 2.5, 0.01, "u"), "dof"),
    (lambda: D.t_mean(1.0, 3, 0.0, "u"), "false_fail"),
    (lambda: D.t_mean(1.0, 3, 0.01, "u", false_pass=1.0), "false_pass"),
    (lambda: D.binomial_fraction(0, 0.1, "u"), "n"),
    (lambda: D.binomial_fraction(10, 1.0, "u"), "level"),
    (lambda: D.binomial_fraction(10, -0.1, "u"), "level"),
    (lambda: D.deterministic(0, "steps", "w"), "value"),
    (lambda: D.t_mean(1.0, 3, 0.01, "u", inflate=0.5), "inflate"),
    (lambda: D.normal_mean(-1.0, 0.01, "u"), "se"),
    (lambda: D.permutation(0.4, 0, "u"), "P"),
    (lambda: D.Discrepancy(1.0, "", "m"), "unit"),
])
def test_bad_input_names_its_parameter(call, param):
    with pytest.raises(ValueError, match=param):
        call()
