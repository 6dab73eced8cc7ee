"""The declared path's tie readings (issue 35): a pair tied at step resolution (signs differing,
both flipping every step) does not hold T_2 back; a key noise chattering within one step of zero
does not count as turning back (stage4_pairs' back_untied); the end of Stage III is the first
step with a softmax beyond the level, capped at T_4^-."""

import numpy as np
import pytest

from properties.signgd.common import stage4_pairs
from properties.signgd.path import end_of_stage3, t2_ties_as_ties


def _pairs(a_rows, b_rows):
    """(T, S=1, m_k=1, n) arrays from per-step lists of the n pairs' values."""
    return (np.asarray(a_rows, float)[:, None, None, :], np.asarray(b_rows, float)[:, None, None, :])


def test_tied_pair_does_not_hold_t2_back():
    # pair 0 aligns at step 1; pair 1 oscillates (-+, +-, -+, ...) with signs differing throughout
    a, b = _pairs([[1, -0.5], [-0.2, 0.5], [-1, -0.5], [-2, 0.5], [-3, -0.5], [-4, 0.5]],
                  [[-2, 0.4], [-3, -0.6], [-4, 0.4], [-5, -0.6], [-6, 0.4], [-7, -0.6]])
    t = np.arange(6)
    T2, tied = t2_ties_as_ties(a, b, t, np.array([np.inf]))
    assert T2[0] == 1  # pair 0 aligned from step 1; pair 1 tied from step 1 on
    assert tied[:, 0].tolist() == [0, 1, 1, 1, 1, 1]


def test_untied_misaligned_pair_holds_t2_back():
    # pair 1 is misaligned without flipping until step 4 (a and b moving apart, then aligned)
    a, b = _pairs([[1, 1], [2, 2], [3, 3], [4, 4], [5, -1], [6, -2]],
                  [[2, -1], [3, -2], [4, -3], [5, -4], [6, -5], [7, -6]])
    T2, tied = t2_ties_as_ties(a, b, np.arange(6), np.array([np.inf]))
    assert T2[0] == 4 and tied.sum() == 0


def test_t2_stops_at_t4_minus():
    a, b = _pairs([[1], [1], [1], [1]], [[-1], [-1], [-1], [-1]])
    T2, _ = t2_ties_as_ties(a, b, np.arange(4), np.array([2.0]))
    assert T2[0] == 2  # steps >= T_4^- count as aligned (stage_times' convention)


def test_end_of_stage3_is_first_softmax_beyond_level_capped():
    T_, S, m_k, n = 6, 2, 1, 1
    z = np.zeros((T_, S, m_k))
    a = np.zeros((T_, S, m_k, n))
    b = np.zeros((T_, S, m_k, n))
    # seed 0: logit of s_21 = a (beta - b) = -a b grows: |s_21 - 1/2| > 0.05 from step 3
    a[:, 0, 0, 0] = np.arange(T_) * 0.2
    b[:, 0, 0, 0] = np.arange(T_) * 0.2
    h = dict(alpha=z, beta=z.copy(), a=a, b=b)
    got = end_of_stage3(h, np.array([np.inf, 4.0]), 0.05, chunk=2)
    # -a b at step 2: -0.16 (|s - 1/2| 0.04), step 3: -0.36 (0.089)
    assert got.tolist() == [3.0, 4.0]


def test_back_untied_skips_chatter_within_one_step_of_zero():
    # alpha > 0 throughout; key noise b wrong (< 0) at T_4^- = 0, turns, chatters across zero
    # (|b| <= c = 1), then moves up for good; and a second key noise moving back from b = -5
    T_ = 8
    al = np.ones((T_, 1, 1))
    b = np.zeros((T_, 1, 1, 2))
    b[:, 0, 0, 0] = [-1.5, -0.5, 0.5, -0.5, 0.5, 1.5, 2.5, 3.5]
    b[:, 0, 0, 1] = [-5, -4, -5, -4, -3, -2, -1, 1]
    a = np.ones_like(b)
    q = dict(alpha=al, a=a, b=b)
    ev = stage4_pairs(q, np.arange(T_), np.array([0.0]), tie_scale=np.ones((1, 2)))
    assert ev["back_b"][0, 0].tolist() == [1, 1]
    assert ev["back_untied_b"][0, 0].tolist() == [0, 1]
    assert "back_untied_b" not in stage4_pairs(q, np.arange(T_), np.array([0.0]))


@pytest.mark.parametrize("T4m", [np.array([np.inf]), np.array([3.0])])
def test_t2_ties_shapes(T4m):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 1, 3, 4))
    b = rng.normal(size=(5, 1, 3, 4))
    T2, tied = t2_ties_as_ties(a, b, np.arange(5), T4m)
    assert T2.shape == (1,) and tied.shape == (5, 1)
