"""properties.signgd.common: check_theta / rival_ratio (a Theta's constants read with the
glossary's 'Theta(1)' (max(r, 1/r) <= 3), a rival within that factor not told apart) and
stage1_separation (the one-size '<<' between Stage I and the next stages)."""

import numpy as np
import pytest

from properties import Inconclusive
from properties.check import ClaimMismatch
from properties.signgd.common import check_theta, rival_ratio

CID = "test.theta"


@pytest.mark.parametrize("r", [1.0, 0.4, 2.9, 1 / 2.9])
def test_within_the_factor_passes(r):
    check_theta(CID, r, "x = Theta(rate)", name="t", what="ratio")


@pytest.mark.parametrize("r", [3.5, 1 / 3.5, 0.0, -1.0, np.nan, np.inf])
def test_beyond_the_factor_fails(r):
    with pytest.raises(ClaimMismatch):
        check_theta(CID, r, "x = Theta(rate)", name="t", what="ratio")


def test_a_rival_within_the_factor_is_not_told_apart():
    with pytest.raises(Inconclusive, match="not told apart"):
        check_theta(CID, 1.0, "x = Theta(rate)", name="t", what="ratio", rival_ratio=1 / 2.6)


def test_a_rival_beyond_the_factor_is_decided():
    with pytest.raises(ClaimMismatch):  # its own ratio is then far from 1
        check_theta(CID, 1 / 4.4, "x = Theta(rate)", name="t", what="ratio", rival_ratio=4.4)


def test_rival_ratio():
    own = np.array([[1.0, 2.0], [4.0, 8.0]])
    assert rival_ratio(own, own.copy()) is None
    assert rival_ratio(3 * own, own) == pytest.approx(3.0)
    assert rival_ratio(np.array([[2.0], [8.0]]), own) == pytest.approx(1.5)  # broadcast


def test_stage1_separation():
    from properties.signgd.common import stage1_separation

    inf = np.inf
    T = {"T1": np.array([2.0, 5.0]), "T2": np.array([20.0, 30.0]), "T3": np.array([40.0, 25.0])}
    assert stage1_separation(T) == pytest.approx(5.0)  # min(20/2, 25/5)
    T0 = {"T1": np.array([0.0]), "T2": np.array([6.0]), "T3": np.array([9.0])}
    assert stage1_separation(T0) == pytest.approx(6.0)  # T_1 = 0 counts as one step
    with np.errstate(all="raise"):  # training off: no stage reached, no warning
        assert stage1_separation({k: np.array([inf, 3.0]) for k in ("T1", "T2", "T3")}) == 0.0
