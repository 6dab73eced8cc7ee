"""Unit tests of the SignGD harness helpers in properties/signgd (runs.run_reduced_until,
common.paired_trend)."""

import numpy as np
import pytest

from properties import check
from properties.signgd import runs as R
from properties.signgd.common import paired_trend
from sim import signgd as sim


def _state():
    return R.reduced_init([5, 6], 12, 1.0, 2e-3, 0.2, m_k=3, d=1 + 8 * 12 + 20)


def _pairs_aligned(hist):
    ok = (np.sign(hist["a"]) == np.sign(hist["b"])).all((-1, -2, -3))
    return int(np.argmax(ok)) if ok.any() else None


def test_run_reduced_until_is_the_one_shot_run_cut_at_its_stop():
    st_ = _state()
    one = sim.reduced_dynamics(*st_[:7], st_[7], 400)
    t_star = _pairs_aligned({k_: one[k_] for k_ in R.REDUCED_KEYS})
    assert t_star is not None and 10 < t_star < 300
    end = int(np.ceil(1.25 * t_star)) + 1
    for chunk in (3, 50, 1000):  # the buffer grows several times at chunk 3
        h = R.run_reduced_until(st_, _pairs_aligned, 0.25, 10000, chunk=chunk)
        assert set(h) == set(R.REDUCED_KEYS)
        for k_ in R.REDUCED_KEYS:
            np.testing.assert_array_equal(h[k_], one[k_][:end])


def test_run_reduced_until_raises_at_its_cap():
    with pytest.raises(RuntimeError, match="within 20 steps"):
        R.run_reduced_until(_state(), lambda hist: None, 0.0, 20, chunk=10)


def test_paired_trend_is_seed_clustered():
    """One slope per seed, their mean and standard error, Student t on seeds - 1 dof."""
    g = np.random.default_rng(0)
    sizes = (4.0, 8.0, 16.0, 32.0)
    slopes = 0.5 + 0.2 * g.standard_normal(6)  # seeds that differ in slope
    R_ = np.exp(np.outer(np.log(sizes), slopes) + 0.05 * g.standard_normal((4, 6)))
    with check.recording(check.Sink()):
        tr = paired_trend("x.y", sizes, R_, direction="increasing", false_fail=1e-3)
    per = [np.polyfit(np.log(sizes), np.log(R_[:, j]), 1)[0] for j in range(6)]
    assert tr.slope == pytest.approx(np.mean(per), rel=1e-12)
    assert tr.stderr == pytest.approx(np.std(per, ddof=1) / np.sqrt(6), rel=1e-12)
    from scipy import stats
    assert tr.crit == pytest.approx(stats.t.isf(5e-4, 5), rel=1e-12)
    with pytest.raises(ValueError, match="rungs x seeds"):
        paired_trend("x.y", sizes, R_[:, :1], direction="increasing")
