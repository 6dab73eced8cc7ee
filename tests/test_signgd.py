"""Unit tests of sim.signgd and theory.signgd (analytic gradients vs autograd, shapes, bad input)."""

import numpy as np
import pytest
import torch

from sim import signgd as sim
from theory import signgd as th


def _small(L=2, orthogonal=True, disjoint=True, seeds=(3, 4)):
    prob = sim.make_problem(list(seeds), n=4, s=5, d=60, sigma_p=1.3, n_test=6, L=L,
                            orthogonal=orthogonal, disjoint=disjoint, device="cpu")
    p = sim.init_params(list(seeds), d=60, m_k=3, m_v=5, sigma_0=0.3, device="cpu")
    return prob, p


@pytest.mark.parametrize("L,orthogonal,disjoint", [(2, True, True), (2, False, False), (3, True, True)])
def test_gradients_match_autograd(L, orthogonal, disjoint):
    prob, p = _small(L, orthogonal, disjoint)
    p.H = p.H + 0.01 * torch.arange(p.H.numel(), dtype=p.H.dtype).view_as(p.H)  # a non-constant head
    g, f, _ = sim.gradients(prob.train.P, prob.train.y, p)
    ts = [t.clone().requires_grad_(True) for t in p.tensors()]
    f2, _ = sim.forward(prob.train.P, sim.Params(*ts))
    sim.loss_of(f2, prob.train.y).sum().backward()
    for a, t in zip(g.tensors(), ts):
        assert torch.allclose(a, t.grad, rtol=1e-10, atol=1e-13)
    assert torch.allclose(f, f2.detach())


def test_shapes_and_data_model():
    prob, p = _small(L=3)
    D = prob.train
    assert D.P.shape == (2, 4, 3, 60) and D.xi.shape == (2, 4, 2, 60)
    assert torch.all((D.xi != 0).sum(-1) == 5)
    assert torch.all(D.xi[..., 0] == 0)  # orthogonal to mu
    supp = (D.xi != 0).flatten(1, 2).to(torch.int)  # (S, n(L-1), d)
    assert torch.all(supp.sum(1) <= 1)  # disjoint training supports
    test_supp = (prob.test.xi != 0).flatten(1, 2).any(1)
    assert not torch.any(test_supp & supp.sum(1).bool())  # test supports apart
    assert torch.all(D.P[torch.arange(2)[:, None], torch.arange(4), D.sig][..., 0] == D.y)
    tr = sim.train(prob, p, eta=1e-3, steps=3, log_every=1)
    assert tr["a"].shape == (4, 2, 3, 4, 2) and tr["s22"].shape == (4, 2, 4, 2, 2)
    assert tr.test_loss.shape == (1, 2)


def test_instances_independent_of_batch():
    a, _ = _small(seeds=(3, 4))
    b, _ = _small(seeds=(4,))
    assert torch.equal(a.train.P[1], b.train.P[0])


def test_softmax_sums_and_margin_identity():
    prob, p = _small()
    q = sim.squeeze_L2(sim.tracked(prob, p))
    np.testing.assert_allclose(q["s11"] + q["s12"], 1, atol=1e-14)
    np.testing.assert_allclose(q["s21"] + q["s22"], 1, atol=1e-14)
    np.testing.assert_allclose(th.margin(q["s11"], q["s21"], q["V_mu"][:, None], q["V"]), q["margin"],
                               atol=1e-12)
    assert th.margin_identity_residual() == 0


def test_sign_zero_is_zero():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-2, steps=2)
    unused = (prob.train.xi != 0).flatten(1, 2).any(1)  # (S, d) training support
    unused[:, 0] = True
    W0, W1 = p.WQ, tr.final.WQ
    assert torch.equal(W0[~unused[:, None, :].expand_as(W0)], W1[~unused[:, None, :].expand_as(W1)])


def test_sign_zero_option_moves_only_the_zero_gradient_coordinates():
    prob, p = _small()
    base = sim.train(prob, p, eta=1e-2, steps=2)
    plus = sim.train(prob, p, eta=1e-2, steps=2, sign_zero=1)
    used = (prob.train.xi != 0).flatten(1, 2).any(1)
    used[:, 0] = True
    m = used[:, None, :].expand_as(p.WQ)
    assert torch.equal(base.final.WQ[m], plus.final.WQ[m])  # the gradient's support: unchanged
    assert torch.allclose(plus.final.WQ[~m], p.WQ[~m] - 2e-2)  # sgn(0) = +1: moved by 2 eta
    with pytest.raises(ValueError, match="sign_zero"):
        sim.train(prob, p, eta=1e-2, steps=1, sign_zero=0.5)


def test_theory_constants():
    assert np.isclose(th.expected_xi_l1(10, 2.0), 10 * 2 * np.sqrt(2 / np.pi))
    assert np.isclose(th.lemma41_slope(0.1, 10, 2.0), 2 * 0.1 * 10 * 2 * np.sqrt(2 / np.pi))


@pytest.mark.parametrize("kw,name", [
    (dict(s=40), "s"), (dict(s=0), "s"), (dict(n=0), "n"), (dict(sigma_p=0.0), "sigma_p"),
    (dict(sigma_p=-1.0), "sigma_p"), (dict(L=1), "L"), (dict(n=8, s=5, disjoint=True), "disjoint"),
])
def test_bad_data_input(kw, name):
    args = dict(n=4, s=5, d=40, sigma_p=1.0, n_test=4, device="cpu")
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        sim.make_problem([1], **args)


def test_bad_model_and_training_input():
    with pytest.raises(ValueError, match="sigma_0"):
        sim.init_params([1], d=10, m_k=2, m_v=2, sigma_0=0.0)
    with pytest.raises(ValueError, match="m_k"):
        sim.init_params([1], d=10, m_k=0, m_v=2, sigma_0=0.1)
    prob, p = _small()
    for kw, name in ((dict(eta=0.0), "eta"), (dict(eta=-1.0), "eta"), (dict(eta=0.1, optimizer="sgd"), "optimizer"),
                     (dict(eta=0.1, steps=-1), "steps"), (dict(eta=0.1, log=("nope",)), "log")):
        kw.setdefault("steps", 1)
        with pytest.raises(ValueError, match=name):
            sim.train(prob, p, **kw)
    with pytest.raises(ValueError, match="seeds"):
        sim.make_problem([], n=2, s=2, d=10, sigma_p=1.0)


def test_reduced_matches_full_short():
    prob, p = _small()
    eta = 1e-3
    tr = sim.train(prob, p, eta=eta, steps=40)
    q = sim.squeeze_L2(tr.q)
    r = sim.reduced_dynamics(q["alpha"][0], q["beta"][0], q["a"][0], q["b"][0], q["V_mu"][0], q["V"][0],
                             eta * tr.xi_l1[..., 0], eta, 40)
    for k in ("alpha", "beta", "a", "b", "V", "s11", "s21", "margin"):
        np.testing.assert_allclose(q[k], r[k], atol=1e-10)


def test_adam_and_gd_run():
    prob, p = _small()
    for opt in ("adam", "gd"):
        tr = sim.train(prob, p, eta=1e-2, steps=20, optimizer=opt, learnable_head=True)
        assert tr["train_loss"][-1].max() < tr["train_loss"][0].max()


def test_train_stop_rule_sets_horizon():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-3, steps=50, stop=lambda q: True, tail=0.0)
    assert tr.t[-1] == 0 and tr.settings["t_stop"] == 0
    calls = []

    def stop(q):
        calls.append(1)
        return len(calls) == 5  # step 4

    tr = sim.train(prob, p, eta=1e-3, steps=50, stop=stop, tail=0.5)
    assert tr.settings["t_stop"] == 4 and tr.t[-1] == 6
    full = sim.train(prob, p, eta=1e-3, steps=6)
    assert np.array_equal(full["a"], tr["a"])
    with pytest.raises(ValueError, match="tail"):
        sim.train(prob, p, eta=1e-3, steps=5, tail=-1.0)


def test_value_rows_enter_only_through_mean_value():
    """Under SignGD with the fixed head every value row gets the same update, so the training
    trajectory seen through the tracked quantities depends on W_V only through the mean value v:
    an m_v = 64 init and an m_v = 4 init whose rows are set to give the same v train identically.
    (This is what lets signgd.t2_vs_t1 sample the m_v grid by rescaling one init's rows.)"""
    seeds = [3, 4]
    prob = sim.make_problem(seeds, n=4, s=6, d=1 + 4 * 6 + 9, sigma_p=1.0, disjoint=True, n_test=4)
    big = sim.init_params(seeds, d=prob.d, m_k=3, m_v=64, sigma_0=1e-2)
    small = sim.init_params(seeds, d=prob.d, m_k=3, m_v=4, sigma_0=1e-2)
    v = (big.WV[:, 0].mean(1) - big.WV[:, 1].mean(1))  # (S, d)
    WV = torch.zeros_like(small.WV)
    WV[:, 0] = (v / 2)[:, None, :]
    WV[:, 1] = -(v / 2)[:, None, :]
    small = sim.Params(big.WQ, big.WK, WV, small.H)
    keep = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "margin")
    ta = sim.train(prob, big, eta=2e-4, steps=60, log=keep)
    tb = sim.train(prob, small, eta=2e-4, steps=60, log=keep)
    for k in keep:
        np.testing.assert_allclose(ta[k], tb[k], atol=1e-12, rtol=0)
    other = sim.train(prob, sim.Params(big.WQ, big.WK, 2 * big.WV, big.H), eta=2e-4, steps=60,
                      log=("V",))
    assert np.abs(other["V"] - ta["V"]).max() > 1e-4  # a different v does change the run


def test_stage1_end_closed_form_cases():
    # D(0) > 0: T1 = 0; D(0) < 0 crosses between steps 2 and 3: T1 = 3; ||xi||_1 <= 1: never
    assert th.stage1_end(np.array([0.0]), np.array([[1e-3]]), 1e-5, np.array([[24.0]]))[0] == 0
    assert th.stage1_end(np.array([0.0]), np.array([[-1e-3, 2e-3]]), 1e-5,
                         np.array([[24.0, 24.0]]))[0] == 3
    assert np.isinf(th.stage1_end(np.array([0.0]), np.array([[-1e-3]]), 1e-5, np.array([[0.9]]))[0])
    # an exact crossing at an integer: D(2) = 0 is not > 0, so T1 = 3
    assert th.stage1_end(np.array([0.0]), np.array([[-2 * 2 * 0.5 * 2]]), 0.5, np.array([[3.0]]))[0] == 3


def _key_turning_loop(al, b, K):
    """The T_4^- detector read literally (a loop over steps and lookback), any lookback K."""
    sa = np.sign(al)[..., None]
    wrong_key = np.sign(b) != sa
    db = np.sign(np.diff(b, axis=0))
    turning = np.zeros(wrong_key.shape, dtype=bool)
    for k in range(K + 1, len(b)):
        away = np.ones(wrong_key.shape[1:], dtype=bool)
        for j in range(1, K + 1):
            away &= (db[k - 1 - j] == -sa[k]) & (sa[k - j] == sa[k])
        turning[k] = wrong_key[k] & (db[k - 1] == sa[k]) & away
    return turning


def _turn_times_reference(tr, K=None):
    """stage_times' T_4^- from the loop reading of the detector (lookback K, TURN_LOOKBACK if
    None), for the vectorised one."""
    q = sim.squeeze_L2(tr.q)
    turning = _key_turning_loop(q["alpha"], q["b"], sim.TURN_LOOKBACK if K is None else K)
    return np.array([tr.t[np.argmax(x)] if x.any() else np.inf for x in turning.any((-1, -2)).T])


def test_stage_times_turn_detector_matches_loop():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-3, steps=120, log=("alpha", "beta", "a", "b", "V", "V_mu"))
    np.testing.assert_array_equal(sim.stage_times(tr)["T4m"], _turn_times_reference(tr))
    g = np.random.default_rng(0)
    for T in (1, 21, 22, 60, 200):  # random walks that keep a direction for a while, then turn
        steps = np.where(g.random((T, 3, 2, 3, 1)) < 0.9, -1.0, 1.0)
        b = np.cumsum(steps * np.where(np.arange(T) < T // 2, 1.0, -1.0)[:, None, None, None, None], 0)
        al = np.where(g.random((T, 3, 2)) < 0.01, -1.0, 1.0)
        q = dict(alpha=al, beta=al, a=b, b=b, V=np.ones((T, 3, 3, 1)), V_mu=np.zeros((T, 3)))
        tr = sim.Trace(np.arange(T), q, np.arange(1), np.zeros((1, 3)), np.zeros((1, 3)),
                       np.ones((3, 3, 1)), p)
        np.testing.assert_array_equal(sim.stage_times(tr)["T4m"], _turn_times_reference(tr))


def _completed_reference(turning, al, b):
    """_completed_turns as a loop over events (the definition read literally)."""
    sa = np.sign(al)[..., None] * np.ones_like(b)
    out = np.zeros_like(turning)
    for idx in zip(*np.nonzero(turning)):
        k, rest = idx[0], idx[1:]
        ok = False
        for j in range(k, b.shape[0] - 1):
            if np.sign(b[(j + 1,) + rest] - b[(j,) + rest]) != sa[(j,) + rest]:
                break
            if np.sign(b[(j + 1,) + rest]) == sa[(j + 1,) + rest]:
                ok = True
                break
        out[idx] = ok
    return out


def test_completed_turns_match_loop_and_drop_overshoot():
    g = np.random.default_rng(1)
    for T in (2, 30, 80):
        b = np.cumsum(np.where(g.random((T, 2, 2, 3)) < 0.6, 1.0, -1.0), 0) - 3.0
        al = np.where(g.random((T, 2, 2)) < 0.05, -1.0, 1.0)
        turning = g.random(b.shape) < 0.3
        np.testing.assert_array_equal(sim._completed_turns(turning, al, b),
                                      _completed_reference(turning, al, b))
    # an overshoot: b moves away from sgn alpha = +1 for 25 steps, back for 3, away again
    path = np.concatenate([-np.arange(1.0, 26.0), -25.0 + np.arange(1.0, 4.0),
                           -22.0 - np.arange(1.0, 30.0)])
    b = path[:, None, None, None]
    al = np.ones(b.shape[:3])
    turning = sim._key_turning(al, b, np.arange(len(path)))
    assert turning.any() and not sim._completed_turns(turning, al, b).any()
    # the same turn carried through to the crossing counts
    b2 = np.concatenate([-np.arange(1.0, 26.0), -25.0 + np.arange(1.0, 30.0)])[:, None, None, None]
    turning2 = sim._key_turning(al[:1].repeat(len(b2), 0), b2, np.arange(len(b2)))
    assert sim._completed_turns(turning2, al[:1].repeat(len(b2), 0), b2).any()


def test_stage_times_rejects_unknown_turns():
    with pytest.raises(ValueError, match="turns"):
        sim.stage_times(None, turns="last")


def test_reduced_dynamics_per_instance_eta():
    prob, p = _small()
    q = sim.squeeze_L2(sim.tracked(prob, p))
    xi1 = prob.train.xi.abs().sum(-1)[..., 0].numpy()
    etas = np.array([1e-3, 3e-3])[: len(prob.seeds)]
    args = [q["alpha"], q["beta"], q["a"], q["b"], q["V_mu"], q["V"]]
    both = sim.reduced_dynamics(*args, etas[:, None] * xi1, etas, 30)
    for j, e in enumerate(etas):
        one = sim.reduced_dynamics(*(x[j:j + 1] for x in args), e * xi1[j:j + 1], float(e), 30)
        for k_ in ("alpha", "beta", "a", "b", "V", "s21"):
            np.testing.assert_allclose(both[k_][:, j:j + 1], one[k_], rtol=0, atol=1e-12)
    for bad in (0.0, -1e-3, np.nan, np.ones(len(etas) + 1), np.ones((2, 2))):
        with pytest.raises(ValueError, match="eta"):
            sim.reduced_dynamics(*args, xi1, bad, 3)
    with pytest.raises(ValueError, match="steps"):
        sim.reduced_dynamics(*args, xi1, 1e-3, -1)


def test_key_turning_matches_the_loop_at_any_lookback():
    g = np.random.default_rng(2)
    for trial in range(60):
        T, K = int(g.integers(1, 60)), int(g.integers(1, 9))
        p = g.random()
        steps = np.where(g.random((T, 2, 3, 4)) < p, -1.0,
                         np.where(g.random((T, 2, 3, 4)) < 0.1, 0.0, 1.0))  # some moves are 0
        b = np.cumsum(steps, 0) + g.integers(-3, 4)
        al = g.choice([-1.0, 0.0, 1.0], size=(T, 2, 3), p=[0.05, 0.02, 0.93])  # sgn(0) = 0
        np.testing.assert_array_equal(sim._key_turning(al, b, np.arange(T), K),
                                      _key_turning_loop(al, b, K))
    # the default is TURN_LOOKBACK
    np.testing.assert_array_equal(sim._key_turning(al, b, np.arange(T)),
                                  _key_turning_loop(al, b, sim.TURN_LOOKBACK))


def test_int8_signs_and_windows_equal_their_float_definitions():
    """_sign8 / _diff_sign8 are np.sign / np.sign(np.diff) for finite input (zeros, -0.0, ties,
    subnormal differences, huge values included), and _window_all(x, k)[j] is x[j:j + k].all(0)
    for every k, down to windows longer than x."""
    g = np.random.default_rng(5)
    x = g.choice([-2.0, -1.0, -0.0, 0.0, 1.0, 5e-324, 1e308, -1e308], size=(40, 3, 4))
    x[5:9] = x[4]  # repeated values: moves of size 0
    np.testing.assert_array_equal(sim._sign8(x), np.sign(x))
    with np.errstate(over="ignore"):  # 1e308 - (-1e308) overflows to inf: its sign is still 1
        np.testing.assert_array_equal(sim._diff_sign8(x), np.sign(np.diff(x, axis=0)))
    assert sim._sign8(x).dtype == np.int8 and sim._diff_sign8(x).dtype == np.int8
    for trial in range(40):
        T, k = int(g.integers(1, 50)), int(g.integers(1, 40))
        b = g.random((T, 2, 3)) < g.random()
        want = np.array([b[j:j + k].all(0) for j in range(T - k + 1)]).reshape(-1, 2, 3)
        np.testing.assert_array_equal(sim._window_all(b, k), want)


def test_turn_lookback_keeps_the_lookback_in_the_analysis_time_units():
    assert sim.turn_lookback(sim.CPU_EPS) == sim.TURN_LOOKBACK
    assert sim.turn_lookback(1.0) == sim.TURN_LOOKBACK  # never shorter than the CPU setting's
    assert sim.turn_lookback(0.03) == 220  # ceil(20 x 0.3286 / 0.03)
    assert sim.turn_lookback(sim.CPU_EPS / 4) == 4 * sim.TURN_LOOKBACK
    for bad in (0.0, -0.1, float("nan"), "0.1", True):
        with pytest.raises(ValueError, match="eps"):
            sim.turn_lookback(bad)


def test_stage_times_lookback_is_checked_and_used():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-3, steps=80, log=sim.STAGE_LOG)
    assert np.array_equal(sim.stage_times(tr)["T4m"], sim.stage_times(tr, lookback=20)["T4m"])
    for K in (3, 7):
        np.testing.assert_array_equal(sim.stage_times(tr, lookback=K)["T4m"],
                                      _turn_times_reference(tr, K))
    for bad in (0, -1, 2.5, True, None):
        with pytest.raises(ValueError, match="lookback"):
            sim.stage_times(tr, lookback=bad)
