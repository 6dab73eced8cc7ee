"""Unit tests of the JoMA claim helpers added for issue 23 (properties/joma/common.py, the sec4
error models, theory.joma.eq9's exact rationals)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from properties.joma import common as jc
from theory import joma as th


def test_etas_ladder_has_six_halving_sizes():
    etas = jc.ETAS(0.1)
    assert len(etas) == 6
    assert np.allclose(np.array(etas[:-1]) / np.array(etas[1:]), 2.0)
    assert etas[2] == 0.1


def test_the_eta_ladder_gives_check_order_a_narrow_band_on_a_near_power_law():
    from properties.check import order_band
    hs = jc.ETAS(0.01)
    slope, band, model = order_band(hs, [3.0 * h * (1 + 0.1 * h) for h in hs])
    assert abs(slope - 1) < band < 0.05 and "local slopes" in model


def test_dyn_seed_sets_cycle_the_explicit_draws():
    sets = [jc.dyn_seed_sets(b) for b in jc.DYN_DRAWS]
    programs = {s for pair in sets for s in pair}
    assert len(programs) == len(jc.DYN_DRAWS)  # three programs, each used twice
    for b, (own, partner) in zip(jc.DYN_DRAWS, sets):
        assert own[0] == b and own != partner
    own, partner = jc.dyn_seed_sets(12345)
    assert partner[0] == own[-1] + 1


def test_dyn_stack_concatenates_the_seed_axes():
    a = {"ent": np.zeros((3, 2, 2)), "sr": np.zeros((3, 2, 2)), "logits": np.zeros((3, 2, 4)),
         "seeds": (0, 1), "d": 8}
    b = {"ent": np.ones((3, 2, 3)), "sr": np.ones((3, 2, 3)), "logits": np.ones((3, 3, 4)),
         "seeds": (2, 3, 4), "d": 8}
    out = jc.dyn_stack([a, b])
    assert out["ent"].shape == (3, 2, 5) and out["sr"].shape == (3, 2, 5)
    assert out["logits"].shape == (3, 5, 4) and out["seeds"] == (0, 1, 2, 3, 4)


def test_sec4_error_models_scale_with_the_solver_tolerance():
    from properties.joma.test_sec4 import entropy_error, rank_error
    v = np.linspace(0.1, 2.0, 12)[None, :].repeat(4, 0)
    assert 0 < entropy_error(v, 1e-9) < entropy_error(v, 1e-8)
    assert entropy_error(v, 1e-9) == pytest.approx(10 * entropy_error(v, 1e-10))
    assert 0 < rank_error(2) < rank_error(4)


def test_eq9_exact_rationals_match_the_floats():
    for h, depth in [(1, 3), (2, 5), (3, 4)]:
        lead = th.eq9_printed(h, depth, exact=True)
        c1 = th.eq9_first_order_coefficient(h, depth, exact=True)
        assert isinstance(lead, Fraction) and isinstance(c1, Fraction)
        assert float(lead) == pytest.approx(float(th.eq9_printed(h, depth)), rel=1e-15)
        assert float(c1) == pytest.approx(float(th.eq9_first_order_coefficient(h, depth)),
                                          rel=1e-15)
    with pytest.raises(ValueError, match="exact"):
        th.eq9_printed(1, 3, exact="yes")
    with pytest.raises(ValueError, match="exact"):
        th.eq9_first_order_coefficient(1, 3, exact=1)


def test_M_np_and_p_np_call_definition_1():
    M = jc.M_np(0.3)
    assert M.shape == (2, 2) and np.allclose(M, 0.5 * np.array([[1.3, 0.7], [0.7, 1.3]]))
    assert np.allclose(jc.p_np(-0.2).ravel(), [0.4, 0.6])
    with pytest.raises(ValueError):
        jc.M_np(1.5)
