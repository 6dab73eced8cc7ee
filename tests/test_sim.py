"""Unit tests of the shared helpers in sim/__init__.py."""

import math

import pytest
import torch
from scipy import stats

from sim import default_device, gamma_sample, make_generator


@pytest.mark.parametrize("alpha", [0.1, 0.5, 2.0, 7.5])
def test_gamma_sample_matches_gamma_distribution(alpha):
    # mean alpha and variance alpha; z = 5 on each of 2 moments (false-fail ~1e-6 per test),
    # plus a Kolmogorov-Smirnov test against scipy's Gamma cdf at level 1e-6
    n = 200_000
    x = gamma_sample(torch.full((n,), alpha, dtype=torch.float64), make_generator(3))
    assert abs(x.mean().item() - alpha) <= 5 * math.sqrt(alpha / n)
    # SE of the sample variance: sqrt((mu_4 - sigma^4)/n), Gamma's mu_4 = 3 alpha^2 + 6 alpha
    var_se = math.sqrt((2 * alpha**2 + 6 * alpha) / n)
    assert abs(x.var().item() - alpha) <= 5 * var_se
    assert stats.kstest(x.numpy(), stats.gamma(alpha).cdf).pvalue > 1e-6


def test_gamma_sample_rejects_wrong_shape_power():
    # negative control for the KS check: Gamma(2) samples are rejected as Gamma(1)
    x = gamma_sample(torch.full((50_000,), 2.0, dtype=torch.float64), make_generator(4))
    assert stats.kstest(x.numpy(), stats.gamma(1.0).cdf).pvalue < 1e-6


def test_generators_are_local_and_reproducible():
    before = torch.get_rng_state().clone()
    a = torch.rand(5, generator=make_generator(9), dtype=torch.float64)
    b = torch.rand(5, generator=make_generator(9), dtype=torch.float64)
    assert torch.equal(a, b) and torch.equal(before, torch.get_rng_state())


@pytest.mark.parametrize("seed", [-1, 1.5, "3"])
def test_make_generator_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match="seed"):
        make_generator(seed)


def test_default_device():
    assert default_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
