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


def test_dyn_program_holds_every_explicit_draw_and_dyn_select_takes_a_draws_part():
    prog = jc.dyn_program(jc.DYN_DRAWS[1])
    assert prog == jc.dyn_program(jc.DYN_DRAWS[0])  # one program per rung for all three draws
    for b in jc.DYN_DRAWS:
        assert set(jc.dyn_draw_seeds(b)) <= set(prog)
    assert len(prog) == len(jc.DYN_DRAWS) * jc.dyn_seeds_per_program()
    gen = jc.dyn_program(12345)  # a generated draw: its own two blocks
    assert gen == jc.dyn_draw_seeds(12345)
    S, seeds = 5, (7, 3, 9, 1, 4)
    run = {"ent": np.arange(3 * 2 * S).reshape(3, 2, S).astype(float),
           "sr": -np.arange(3 * 2 * S).reshape(3, 2, S).astype(float),
           "logits": np.arange(3 * S * 4).reshape(3, S, 4).astype(float), "seeds": seeds, "d": 8}
    out = jc.dyn_select(run, (9, 7))
    assert out["seeds"] == (9, 7)
    assert np.array_equal(out["ent"], run["ent"][:, :, [2, 0]])
    assert np.array_equal(out["sr"], run["sr"][:, :, [2, 0]])
    assert np.array_equal(out["logits"], run["logits"][:, [2, 0]])
    assert run["ent"].shape == (3, 2, S)  # the shared run is left as it was


def test_dyn_blocks_grow_with_the_named_size(monkeypatch):
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "ci")
    assert len(jc.dyn_draw_seeds(0)) == 8
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "ladder")
    assert len(jc.dyn_draw_seeds(0)) == 24 and len(jc.dyn_program(0)) == 36


def test_invert_F_solves_eqn71_and_matches_the_ode():
    from sim.joma import simulate_eqn7
    mu = np.array([0.5, 1.0, 2.2])
    v0 = 0.01 * np.ones(3)
    t = np.array([0.0, 0.1, 0.7, 2.0, 9.0, 400.0])
    delta, res = jc.invert_F(th.F_delta, t[:, None], (1 - v0 / mu)[None], mu[None])
    assert res < 1e-10 and delta[-1, 2] == 0.0  # beyond 1e-300 (v = mu in float64)
    assert np.all(mu * (1 - delta[-1]) == mu)
    assert np.allclose(delta[0], 1 - v0 / mu, rtol=1e-12)
    ok = delta[1:-1] > 0
    F = th.F_delta(delta[1:-1][ok], np.broadcast_to(1 - v0 / mu, ok.shape)[ok],
                   np.broadcast_to(mu, ok.shape)[ok])
    assert np.allclose(F, np.broadcast_to(t[1:-1, None], ok.shape)[ok], atol=1e-10)
    run = simulate_eqn7(mu, v0, 9.0, t_eval=t[:-1], rtol=1e-11, atol=1e-13)
    assert np.allclose(run.v, mu * (1 - delta[:-1]), atol=1e-8)


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


def test_theory_curves_from_their_minimum_match_the_full_grid():
    """The sec4 properties compute the theory's curve from its minimum on (every 4th time, then
    the full grid from two strides before the coarse minimum): the same values and argmin."""
    mu, v0 = jc.entropy_setting(12, 2, [2.0, 1.8, 2.2], list(np.linspace(0.5, 1.0, 19)), 0.01)
    t = np.concatenate([[0.0], np.geomspace(1e-3, 60.0, 300)])
    full, _, _ = jc.entropy_theory(t, mu, v0, th.F_delta)
    part, v, _ = jc.entropy_theory(t, mu, v0, th.F_delta, stride=4)
    ok = np.isfinite(part)
    assert np.nanargmin(part) == np.argmin(full) and ok[int(np.argmin(full)):].all()
    assert np.array_equal(part[ok], full[ok]) and np.isnan(v[~ok]).all()
    M, _ = jc.rank_setting(3, 3, 1, 1.4, 0.7, 0.1, 0.01)
    sr_full, _ = jc.rank_theory(t, M, 0.01, th.F_delta)
    sr_part, _ = jc.rank_theory(t, M, 0.01, th.F_delta, stride=4)
    assert np.nanargmin(sr_part) == np.argmin(sr_full)
    assert np.array_equal(sr_part[np.isfinite(sr_part)], sr_full[np.isfinite(sr_part)])


def test_dyn_programs_split_the_blocks_at_the_long_ladder_only(monkeypatch):
    import properties.check as pc
    monkeypatch.setattr(pc, "size", lambda: "ci")
    assert jc.dyn_programs(0) == (jc.dyn_program(0),)
    monkeypatch.setattr(pc, "size", lambda: "ladder")
    progs = jc.dyn_programs(0)
    assert len(progs) == 3 and all(len(p) == 12 for p in progs)
    assert tuple(s for p in progs for s in p) == jc.dyn_program(0)


def test_worker_order_computes_every_job_once_and_splits_the_largest_first(monkeypatch):
    jobs = [(d, b) for d in (16, 32, 64, 128) for b in range(3)]
    cost = lambda j: j[0] ** 2  # noqa: E731
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    seqs = {}
    for w in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", w)
        seqs[w] = jc._worker_order(jobs, cost)
        assert sorted(seqs[w]) == sorted(jobs)  # every job, once
    # the two workers start on different jobs of the largest rung
    assert seqs["gw0"][0][0] == seqs["gw1"][0][0] == 128 and seqs["gw0"][0] != seqs["gw1"][0]
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT")
    assert jc._worker_order(jobs, cost)[0][0] == 128


def test_dyn_merge_concatenates_seeds():
    import numpy as np
    a = {"ent": np.zeros((3, 2, 2)), "sr": np.zeros((3, 2, 2)), "logits": np.zeros((3, 2, 4)),
         "seeds": (1, 2), "steps": np.arange(3), "d": 8}
    b = {**a, "ent": np.ones((3, 2, 1)), "sr": np.ones((3, 2, 1)),
         "logits": np.ones((3, 1, 4)), "seeds": (3,)}
    m = jc.dyn_merge([a, b])
    assert m["seeds"] == (1, 2, 3) and m["ent"].shape == (3, 2, 3)
    assert m["logits"].shape == (3, 3, 4) and m["ent"][0, 0, 2] == 1
    assert jc.dyn_select(m, (3, 1))["seeds"] == (3, 1)
