"""Unit tests of theory/joma.py and sim/joma.py (Eqn. 7, Theorem 4, Lemmas 5-6)."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from sim.joma import entropy_softmax_sq, simulate_eqn7, stable_rank
from theory import joma as th


def test_no_attention_closed_form():
    mu = np.array([0.3, 1.0, 2.5])
    v0 = np.array([-0.2, 0.1, 0.5])
    run = simulate_eqn7(mu, v0, 5.0, n_points=50, attention=False, rtol=1e-11, atol=1e-13)
    exact = mu + (v0 - mu) * np.exp(-run.t)[:, None]
    assert np.max(np.abs(run.v - exact)) < 1e-9


def test_no_attention_closed_form_K_nodes_and_factor():
    M = np.array([[0.5, 1.0, 2.0], [1.5, 0.2, 0.7]])
    V0 = 0.1 * M
    c = 2.0
    run = simulate_eqn7(M, V0, 3.0, n_points=30, attention=False, factor=lambda t, V: c)
    exact = M + (V0 - M) * np.exp(-c * run.t)[:, None, None]
    assert run.v.shape == (30, 2, 3)
    assert np.max(np.abs(run.v - exact)) < 1e-8


def test_eqn7_time_to_reach_matches_quadrature():
    # one component: t(v) = int_{v0}^{v} e^{-u^2/2}/(mu - u) du = F(r, r0, mu)
    mu, v0 = np.array([1.7]), np.array([0.2])
    run = simulate_eqn7(mu, v0, 2.0, n_points=20)
    for t, v in zip(run.t[1:], run.v[1:, 0]):
        tq = integrate.quad(lambda u: math.exp(-u * u / 2) / (mu[0] - u), v0[0], v,
                            epsabs=1e-13, epsrel=1e-12)[0]
        assert abs(tq - t) < 1e-8 * max(1, t)


def test_v_and_deviation_states_agree():
    mu = np.array([0.4, 1.2, 2.4])
    v0 = np.array([0.0, -0.5, 0.3]) * mu
    a = simulate_eqn7(mu, v0, 1.5, n_points=40, state="v")
    b = simulate_eqn7(mu, v0, 1.5, n_points=40, state="deviation", atol=1e-300)
    assert np.max(np.abs(a.v - b.v)) < 1e-9
    assert np.max(np.abs(a.delta - b.delta) / np.abs(b.delta)) < 1e-4


def test_shared_attention_K1_equals_single_node():
    mu = np.array([0.4, 1.2, 2.0])
    v0 = 0.05 * np.ones(3)
    a = simulate_eqn7(mu, v0, 3.0, n_points=20)
    b = simulate_eqn7(mu[None], v0[None], 3.0, n_points=20)
    assert np.max(np.abs(a.v - b.v[:, 0])) < 1e-12


@pytest.mark.parametrize("kw, match", [
    (dict(mu=[1.0, -0.5], v0=[0.0, 0.0], t_end=1.0), "mu"),
    (dict(mu=[1.0, 0.0], v0=[0.0, 0.1], t_end=1.0), "mu"),
    (dict(mu=[1.0, 2.0], v0=[1.0, 0.0], t_end=1.0), "v0/mu"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=0.0), "t_end"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=-1.0), "t_end"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=float("inf")), "t_end"),
    (dict(mu=[1.0, np.nan], v0=[0.0, 0.0], t_end=1.0), "mu"),
    (dict(mu=[1.0, 2.0], v0=[0.0, np.inf], t_end=1.0), "v0"),
    (dict(mu=[1.0, 2.0], v0=[0.0], t_end=1.0), "v0"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=1.0, state="r"), "state"),
    (dict(mu=[1.0, 2.0], v0=[0.0, 0.0], t_end=1.0, n_points=1), "n_points"),
])
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        simulate_eqn7(**kw)


def test_bad_factor():
    with pytest.raises(ValueError, match="factor"):
        simulate_eqn7([1.0], [0.0], 1.0, factor=lambda t, v: -1.0)


def test_dF_dmu_identity_symbolic():
    """Eqns. 72-75: d/dmu of the integrand and mu int (1+x) e^{-mu^2x^2/2} dx = zeta."""
    mu, r, r0 = th.mu, th.r, th.r0
    assert sp.simplify(sp.diff(th.F_integrand, mu) - th.dF_dmu_integrand_eqn72) == 0
    assert sp.simplify(th.dF_dmu_integrand_eqn72 - th.dF_dmu_integrand_eqn74) == 0
    xs = sp.symbols("xs", real=True)
    integral = sp.integrate(mu * (1 + xs) * sp.exp(-mu ** 2 * xs ** 2 / 2), (xs, r0, r))
    assert sp.simplify(integral - th.zeta_expr) == 0
    # Eqn. 78: d/dmu (e^{mu^2/2} F) = zeta e^{mu^2/2}  <=>  dF/dmu = zeta - mu F
    Fs = sp.Function("F")(mu)
    lhs = sp.diff(sp.exp(mu ** 2 / 2) * Fs, mu).subs(sp.Derivative(Fs, mu), th.zeta_expr - mu * Fs)
    assert sp.simplify(lhs - th.zeta_expr * sp.exp(mu ** 2 / 2)) == 0


def test_F0_symbolic():
    x, r, r0 = sp.symbols("x r r0", real=True)
    val = sp.integrate(1 / (1 - x), (x, r0, r)).subs({r0: sp.Rational(-1, 2), r: sp.Rational(9, 10)})
    assert abs(float(val) - float(th.F0(0.9, -0.5))) < 1e-12


@pytest.mark.parametrize("r, r0, mu", [(0.5, -0.5, 1.3), (0.999, 0.2, 2.7), (1.2, 1.8, 0.4),
                                       (1 - 1e-6, -1.0, 0.05)])
def test_F_gauss_legendre_vs_quad(r, r0, mu):
    q = integrate.quad(lambda s: math.exp(-mu ** 2 * s * s / 2) / (1 - s), r0, r, epsabs=1e-13,
                       epsrel=1e-12, limit=200)[0]
    assert abs(th.F(r, r0, mu) - q) < 1e-9 * max(1, abs(q))


def test_dF_dmu_numeric():
    r, r0, mu, h = 0.93, -0.3, 1.4, 1e-5
    fd = (th.F(r, r0, mu + h) - th.F(r, r0, mu - h)) / (2 * h)
    assert abs(fd - (th.zeta(r, r0, mu) - mu * th.F(r, r0, mu))) < 1e-8


def test_lemma_functions():
    y_star, g_star = th.lemma5_true_max()
    assert abs(th.eqn66_residual(y_star)) < 1e-14
    assert 0.63 < g_star < 1 / math.sqrt(2)
    y6, G6 = th.lemma6_true_max()
    assert 0.76 < G6 < 0.77
    assert abs(th.G(1.0) - float(th.G_expr.subs(th.y, 1).evalf())) < 1e-14
    assert abs(th.G_bound(1.0) - 2 * (1 - math.exp(-0.5))) < 1e-14
    assert th.M_bound(0.5) == pytest.approx(math.sqrt(2 * math.pi) + 1.5)


def test_eqn8_algebra():
    lam = th.lambda_jk(1e-3, 0.8, 2.0, 0.2, 1.1, 0.5)
    Lam = th.Lambda_jk(lam, 0.5, 0.2, 1.1)
    lhs = th.log_ratio(1e-3, 0.8) / th.log_ratio(0.2, 1.1)
    assert lhs == pytest.approx(th.eqn8_ratio(2.0, 0.5, Lam), rel=1e-12)


def test_entropy_and_stable_rank():
    assert entropy_softmax_sq(np.zeros(4)) == pytest.approx(math.log(4))
    assert stable_rank(np.eye(3)) == pytest.approx(3.0)
    assert stable_rank(np.outer([1, 2, 3], [1, 1])) == pytest.approx(1.0)
