"""Unit tests of sim/joma.py (Eqn. 2, Eqn. 3) and theory/joma.py (Theorems 1-2)."""

import math

import numpy as np
import pytest
import sympy as sp
import torch

from sim.joma import (
    BlowUpError,
    Eqn2Problem,
    attention_scores,
    eqn2_velocity,
    eqn3_blowup_time,
    make_problem,
    objective,
    simulate_eqn2,
    solve_eqn3,
)
from theory import joma as th

KINDS = [(a, p) for a in ("linear", "exp", "softmax") for p in ("linear", "relu")]


def _init(p, seed=0, scale=0.3):
    S, d, M_C, N, K = p.shape
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(S, d, K, generator=g, dtype=torch.float64),
            scale * torch.randn(S, M_C, generator=g, dtype=torch.float64))


@pytest.mark.parametrize("attention,activation", KINDS)
def test_eqn2_velocity_is_the_gradient_of_the_per_node_objective(attention, activation):
    # Eqn. 2 is gradient ascent on J = E[sum_k g_{h_k} h_k] (Appendix A.1): compare with autograd
    p = make_problem([3, 4], M_C=5, K=2, C=3, d=8, N=16, attention=attention,
                     activation=activation, A=1.7, device="cpu")
    W0, z0 = _init(p)
    W, z = W0.clone().requires_grad_(), z0.clone().requires_grad_()
    gW, gz = torch.autograd.grad(objective(p, W, z).sum(), (W, z))
    W_dot, z_dot = eqn2_velocity(p, W0, z0)
    torch.testing.assert_close(W_dot, gW, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(z_dot, gz, rtol=1e-12, atol=1e-14)


def test_eqn2_velocity_matches_finite_differences_softmax():
    p = make_problem([5], M_C=4, K=2, d=6, N=8, attention="softmax", activation="linear",
                     device="cpu")
    W0, z0 = _init(p, 1)
    _, z_dot = eqn2_velocity(p, W0, z0)
    h = 1e-6
    for l in range(4):
        e = torch.zeros_like(z0)
        e[0, l] = h
        fd = (objective(p, W0, z0 + e) - objective(p, W0, z0 - e)) / (2 * h)
        assert abs(fd.item() - z_dot[0, l].item()) < 1e-8


def test_embeddings_orthonormal_and_query_orthogonal():
    p = make_problem([0, 1, 2], M_C=6, K=2, d=9, N=4, device="cpu")
    UtU = p.U_C.transpose(1, 2) @ p.U_C
    torch.testing.assert_close(UtU, torch.eye(6, dtype=torch.float64).expand(3, 6, 6))
    assert (p.U_C.transpose(1, 2) @ p.u_q[..., None]).abs().max() < 1e-14
    torch.testing.assert_close(p.u_q.norm(dim=-1), torch.ones(3, dtype=torch.float64))


def test_data_are_frequency_vectors_and_gradients_tied_to_labels():
    p = make_problem([7], M_C=5, K=3, C=3, d=6, N=50, tokens=10, device="cpu")
    torch.testing.assert_close(p.X.sum(-1), torch.ones(1, 50, dtype=torch.float64))
    assert (p.X >= 0).all() and torch.all((p.X * 10 - (p.X * 10).round()).abs() < 1e-12)
    # g_{h_k}[i] = 1[y_i = k] - 1/C: one entry 2/3 per row, the others -1/3
    assert torch.allclose(torch.sort(p.G[0], dim=-1).values,
                          torch.tensor([-1 / 3, -1 / 3, 2 / 3], dtype=torch.float64).expand(50, 3))


def test_same_seed_same_numbers_whatever_the_batch():
    a = make_problem([11, 12], M_C=4, K=2, d=6, N=8, device="cpu")
    b = make_problem([12], M_C=4, K=2, d=6, N=8, device="cpu")
    torch.testing.assert_close(a.X[1], b.X[0])
    torch.testing.assert_close(a.U_C[1], b.U_C[0])
    ta = simulate_eqn2(a, eta=0.01, horizon=0.5)
    tb = simulate_eqn2(b, eta=0.01, horizon=0.5)
    np.testing.assert_allclose(ta.z[:, 1], tb.z[:, 0], rtol=0, atol=1e-13)


def test_global_rng_untouched():
    before = torch.get_rng_state().clone()
    make_problem([1], M_C=3, K=1, C=2, d=4, N=4, device="cpu")
    assert torch.equal(before, torch.get_rng_state())


def test_softmax_scores_sum_to_one_and_ignore_absent_tokens():
    z = torch.tensor([[0.3, -1.0, 2.0]], dtype=torch.float64)
    X = torch.tensor([[[0.5, 0.0, 0.5]]], dtype=torch.float64)
    b = attention_scores(z, X, "softmax")
    assert abs(b.sum().item() - 1) < 1e-15 and b[0, 0, 1] == 0


def test_discrete_identities_exact():
    p = make_problem([2], M_C=4, K=2, d=6, N=16, attention="exp", activation="relu", device="cpu")
    W0, z0 = _init(p, 2)
    tr = simulate_eqn2(p, eta=0.01, horizon=1.0, W0=W0, z0=z0, log_every=10)
    s2 = (tr.V ** 2).sum(-1)
    I = th.theorem1_exp_discrete(z=tr.z, s2=s2, Q_v=tr.Qv)
    assert np.abs(I - I[0]).max() < 1e-13


@pytest.mark.parametrize("kw,match", [
    (dict(attention="cosine"), "attention"), (dict(activation="gelu"), "activation"),
    (dict(d=4), "d must be"), (dict(K=4, C=3), "K must be"), (dict(N=0), "N must be"),
    (dict(M_C=0), "M_C must be"), (dict(concentration=0.0), "concentration"),
])
def test_make_problem_rejects_bad_input(kw, match):
    args = dict(M_C=4, K=2, d=6, N=8, device="cpu")
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        make_problem([0], **args)


def test_make_problem_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed"):
        make_problem([-1], M_C=4, K=2, d=6, N=8)


@pytest.mark.parametrize("kw,match", [(dict(eta=0.0), "eta"), (dict(eta=float("nan")), "eta"),
                                      (dict(horizon=-1.0), "horizon"), (dict(eta=0.3, horizon=1.0), "integer")])
def test_simulate_rejects_bad_steps(kw, match):
    p = make_problem([0], M_C=3, K=1, C=2, d=4, N=4, device="cpu")
    args = dict(eta=0.1, horizon=1.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        simulate_eqn2(p, **args)


def test_exp_attention_horizon_past_blowup_is_an_error():
    p = make_problem([0], M_C=3, K=1, C=2, d=4, N=8, attention="exp", device="cpu")
    W0, z0 = _init(p, 0, 2.0)
    with pytest.raises(BlowUpError, match="blow-up"):
        simulate_eqn2(p, eta=0.01, horizon=50.0, W0=W0 * 3, z0=z0 + 3, log_every=10)


def test_freeze_z_keeps_attention_fixed_and_v_linear():
    # the null of joma.theorem2: z held at 0, so dv/dt = Delta / A exactly (K = 1, linear phi)
    p = make_problem([5, 6], M_C=4, K=1, C=2, d=6, N=16, attention="exp", activation="linear",
                     A=1.6, device="cpu")
    tr = simulate_eqn2(p, eta=0.05, horizon=1.0, freeze_z=True)
    assert np.all(tr.z == 0)
    delta = (p.G[..., 0:1] * p.X).mean(1).numpy()
    np.testing.assert_allclose(tr.V[-1, :, :, 0], delta * 1.0 / 1.6, atol=1e-13)
    trained = simulate_eqn2(p, eta=0.05, horizon=1.0)
    assert np.abs(trained.z[-1]).max() > 0


def test_softmax_budget_runs_the_same_steps_and_vanishes_under_the_assumption():
    import dataclasses

    from sim.joma import simulate_eqn2_softmax_budget
    p = make_problem([1, 2], M_C=5, K=2, C=3, d=7, N=16, attention="softmax",
                     activation="relu", device="cpu")
    W0, z0 = _init(p, 3, 0.4)
    r = simulate_eqn2_softmax_budget(p, eta=0.05, horizon=1.0, W0=W0, z0=z0)
    tr = simulate_eqn2(p, eta=0.05, horizon=1.0, W0=W0, z0=z0)
    np.testing.assert_array_equal(r["z"], tr.z[-1])
    np.testing.assert_array_equal(r["V"], tr.V[-1])
    assert np.abs(r["viol_E"]).max() > 1e-6
    # every sample with the same x: E[g h' b b^T] = bbar E[g h' b]^T exactly (b the same for all)
    same = dataclasses.replace(p, X=p.X[:, :1].expand_as(p.X).clone())
    r2 = simulate_eqn2_softmax_budget(same, eta=0.05, horizon=1.0, W0=W0, z0=z0)
    assert np.abs(r2["viol_E"]).max() < 1e-14
    with pytest.raises(ValueError, match="softmax"):
        simulate_eqn2_softmax_budget(make_problem([0], M_C=3, K=1, C=2, d=4, N=8, attention="exp",
                                                  device="cpu"), eta=0.1, horizon=1.0)


def test_eqn2_problem_validates():
    p = make_problem([0], M_C=3, K=1, C=2, d=4, N=4, device="cpu")
    with pytest.raises(ValueError, match="A must be"):
        Eqn2Problem(p.U_C, p.u_q, p.X, p.G, "exp", "linear", A=0.0)


def test_eqn3_blowup_time_and_errors():
    delta = np.array([0.5, -2.0])
    t_star = eqn3_blowup_time(delta)
    assert math.isclose(t_star, math.sqrt(math.pi / 2) / 2.0)
    with pytest.raises(BlowUpError):
        solve_eqn3(delta, t_star)
    with pytest.raises(ValueError, match="horizon"):
        solve_eqn3(delta, -1.0)
    with pytest.raises(ValueError, match="delta"):
        solve_eqn3(np.array([np.nan]), 1.0)


def test_eqn3_one_dimensional_closed_form():
    t, V = solve_eqn3(np.array([0.7]), 1.0)
    closed = th.theorem2_trajectory(0.7, t, 1.0)
    assert np.abs(V[:, 0] - closed).max() < 1e-9


def test_softmax_sum_drift_symbolic():
    assert th.softmax_sum_drift(th.THEOREM1_SOFTMAX_PRINTED) == sp.Rational(-1, 2)
    assert th.softmax_sum_drift(th.THEOREM1_SOFTMAX_EQN19) == 0


def test_theorem2_corrected_invariant_symbolic():
    # along dv/dt = Delta exp(v^2/2)/A, d/dt erf(v/sqrt2) = sqrt(2/pi) Delta / A (constant)
    v, D, A = th.v, th.Delta, th.A
    rate = sp.diff(sp.erf(v / sp.sqrt(2)), v) * D * sp.exp(v ** 2 / 2) / A
    assert sp.simplify(rate - sp.sqrt(2 / sp.pi) * D / A) == 0
    rate_printed = sp.diff(sp.erf(v / 2), v) * D * sp.exp(v ** 2 / 2) / A
    assert sp.simplify(rate_printed - sp.sqrt(2 / sp.pi) * D / A) != 0
    # the closed-form trajectory solves the ODE
    traj = th.THEOREM2_TRAJECTORY
    assert sp.simplify(sp.diff(traj, th.t) - D * sp.exp(traj ** 2 / 2) / A) == 0


def test_theorem2_ratio_check_shapes():
    r = th.theorem2_ratio_check(np.zeros((5, 3, 4)), np.ones((3, 4)) * [1, 2, 3, 4], th.theorem2_corrected_term)
    assert r.shape == (5, 3, 4) and np.all(r == 0)
