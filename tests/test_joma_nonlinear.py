"""Unit tests of theory/joma.py and sim/joma.py (JoMA Sec. 4, App. A.3-A.4)."""

import math

import numpy as np
import pytest
import sympy as sp
import torch

from sim import joma as S
from sim import make_generator
from theory import joma as T

FAMILIES = ["gaussian", "student_t", "ball"]


# --------------------------------------------------------------------------------------------
# Eqn 2 gradient vs autograd of the per-hidden-node objective (App. A.1)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("c_minus,c_plus", [(0.0, 1.0), (-0.3, 1.5), (0.4, 0.7)])
def test_eqn2_gradient_matches_autograd_of_per_node_objective(c_minus, c_plus):
    gen = make_generator(3)
    d, m = 7, 4
    U, uq = S.random_embeddings(d, m, gen)
    centers = torch.randn(3, m, generator=gen, dtype=torch.float64)
    x, labels = S.sample_mixture(5000, centers, [0.2, 0.5, 0.3], "gaussian", gen, sigma=0.7)
    g = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)[labels]
    w = torch.randn(3, d, generator=gen, dtype=torch.float64).requires_grad_(True)
    J = S.per_node_objective(w, U, uq, x, g, c_minus, c_plus).sum()
    (grad,) = torch.autograd.grad(J, w)
    out = S.eqn2_gradient(w.detach(), U, uq, x, g, c_minus, c_plus)
    assert torch.allclose(out["w_dot"], grad, atol=1e-13, rtol=0)
    # projections: v_dot = U_C^T w_dot, xi_dot = u_q^T w_dot = E[g h']
    assert torch.allclose(out["v_dot"], out["w_dot"] @ U, atol=1e-13, rtol=0)
    assert torch.allclose(out["xi_dot"], out["w_dot"] @ uq, atol=1e-13, rtol=0)
    h1 = S.phi_prime(w.detach() @ (x @ U.T + uq).T, c_minus, c_plus)
    assert torch.allclose(out["xi_dot"], (g * h1).mean(1), atol=1e-13, rtol=0)


def test_eqn2_se_matches_direct_std():
    gen = make_generator(5)
    U, uq = S.random_embeddings(5, 3, gen)
    x, _ = S.sample_mixture(4000, torch.zeros(1, 3, dtype=torch.float64), [1.0], "gaussian", gen)
    g = torch.ones(4000, dtype=torch.float64)
    w = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    out = S.eqn2_gradient(w, U, uq, x, g)
    f = x @ U.T + uq
    per = S.phi_prime(w @ f.T)[:, :, None] * (f @ U)[None]
    se = per.std(1, unbiased=True) / math.sqrt(4000)
    assert torch.allclose(out["v_dot_se"], se, rtol=1e-9, atol=1e-15)


def test_true_dynamics_euler_identity():
    """v^T v_dot + xi xi_dot = E[g phi(w^T f)] for homogeneous phi (the true-dynamics analogue of
    Eqn 53), exactly on the same samples."""
    gen = make_generator(11)
    U, uq = S.random_embeddings(6, 4, gen)
    x, lab = S.sample_mixture(3000, torch.randn(2, 4, generator=gen, dtype=torch.float64),
                              [0.5, 0.5], "gaussian", gen)
    g = torch.tensor([1.0, -0.7], dtype=torch.float64)[lab]
    w = torch.randn(1, 6, generator=gen, dtype=torch.float64)
    out = S.eqn2_gradient(w, U, uq, x, g, -0.2, 1.0)
    v, xi = w[0] @ U, w[0] @ uq
    lhs = v @ out["v_dot"][0] + xi * out["xi_dot"][0]
    rhs = S.per_node_objective(w, U, uq, x, g, -0.2, 1.0)[0]
    assert abs(float(lhs - rhs)) < 1e-12


def test_embeddings_orthonormal():
    U, uq = S.random_embeddings(9, 5, make_generator(0))
    Q = torch.cat([U, uq[:, None]], 1)
    assert torch.allclose(Q.T @ Q, torch.eye(6, dtype=torch.float64), atol=1e-12)


# --------------------------------------------------------------------------------------------
# Sampler moments
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_isotropic_noise_moments(family):
    n, N, sigma, nu = 3, 200_000, 0.7, 6
    z = S.sample_isotropic_noise(N, n, family, make_generator(1), sigma=sigma, nu=nu)
    dist = T.Isotropic(family, n, sigma, nu)
    cov = (z.T @ z / N).numpy()
    var = dist.std() ** 2
    # 6-sigma bounds on the sample mean and the diagonal / off-diagonal of the covariance
    assert np.all(np.abs(z.mean(0).numpy()) < 6 * math.sqrt(var / N))
    kurt_se = 6 * var * math.sqrt(10.0 / N)  # generous (t_6 has finite 4th moment)
    assert np.all(np.abs(np.diag(cov) - var) < kurt_se)
    assert np.all(np.abs(cov - np.diag(np.diag(cov))) < kurt_se)
    # unit-direction marginal: empirical CDF vs theory (Kolmogorov bound 2/sqrt(N))
    e = np.array([0.6, -0.8, 0.0])
    s = np.sort(z.numpy() @ e)
    ecdf = np.arange(1, N + 1) / N
    assert np.max(np.abs(ecdf - dist.cdf(s))) < 2.0 / math.sqrt(N)
    if family == "ball":
        assert float(torch.linalg.norm(z, dim=1).max()) <= sigma + 1e-12


def test_mixture_labels_and_subspace():
    gen = make_generator(2)
    R = torch.linalg.qr(torch.randn(5, 2, generator=gen, dtype=torch.float64))[0]
    centers = R @ torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, -3.0]], dtype=torch.float64).T
    w = [0.1, 0.3, 0.6]
    x, lab = S.sample_mixture(100_000, centers.T, w, "gaussian", gen, sigma=0.5, R=R)
    freq = torch.bincount(lab, minlength=3).double() / 100_000
    assert torch.all(torch.abs(freq - torch.tensor(w, dtype=torch.float64)) < 6 * 0.5 / math.sqrt(1e5))
    resid = x - centers.T[lab]
    assert torch.allclose(resid - resid @ R @ R.T, torch.zeros_like(resid), atol=1e-12)


# --------------------------------------------------------------------------------------------
# theta: closed forms vs quadrature vs sympy, Eqn 36
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("n", [1, 2, 5])
def test_theta_closed_vs_quadrature_and_eqn36(family, n):
    dist = T.Isotropic(family, n, 1.3, 4.0)
    for c_minus, c_plus in [(0.0, 1.0), (-0.4, 1.2)]:
        psi = T.Psi("step", c_minus, c_plus)
        for r in [-2.0, -0.3, 0.0, 0.7, 1.1]:
            t1, t2 = T.theta_unit(r, dist, psi)
            c1, c2 = T.theta_step_closed(r, dist, c_minus, c_plus)
            assert abs(t1 - c1) < 1e-10 and abs(t2 - c2) < 1e-9
            # 0-homogeneity: theta^y(r; k) = (theta1(r/k), k theta2(r/k))
            y1, y2 = T.theta_y(r, 0.6, dist, psi)
            u1, u2 = T.theta_unit(r / 0.6, dist, psi)
            assert abs(y1 - u1) < 1e-10 and abs(y2 - 0.6 * u2) < 1e-9
    for y in [0.0, 0.4, 1.0]:
        assert abs(T.p_n_from_p0(dist, y) - float(dist.pdf(y))) < 1e-8 * (1 + float(dist.pdf(0.0)))
    # the unit marginal integrates to one
    from scipy import integrate
    a, b = dist.support()
    assert abs(integrate.quad(lambda s: float(dist.pdf(s)), a, b)[0] - 1) < 1e-8


def test_theta_gauss_sympy_matches_definition():
    """Eqns 41-42 integrated by sympy for N(0, sigma^2) and psi = c_- 1[x<0] + c_+ 1[x>0]."""
    t1, t2, (r, sg, cm, cp) = T.theta_gauss_sym()
    y = sp.Symbol("y", real=True)
    p = sp.exp(-y ** 2 / (2 * sg ** 2)) / (sg * sp.sqrt(2 * sp.pi))
    i1 = cm * sp.integrate(p, (y, -sp.oo, -r)) + cp * sp.integrate(p, (y, -r, sp.oo))
    i2 = cm * sp.integrate(y * p, (y, -sp.oo, -r)) + cp * sp.integrate(y * p, (y, -r, sp.oo))
    assert sp.simplify((i1 - t1).rewrite(sp.erf)) == 0
    assert sp.simplify((i2 - t2).rewrite(sp.erf)) == 0
    # lambdified versions agree with scipy closed forms
    d = T.Isotropic("gaussian", 3, 0.8)
    c = T.theta_step_closed(0.37, d, -0.2, 1.1)
    assert abs(T.theta1_gauss(0.37, 0.8, -0.2, 1.1) - c[0]) < 1e-14
    assert abs(T.theta2_gauss(0.37, 0.8, -0.2, 1.1) - c[1]) < 1e-14


def test_sympy_lemma2_and_lemma4_derivatives():
    t1, t2, (r, sg, cm, cp) = T.theta_gauss_sym()
    p = sp.exp(-r ** 2 / (2 * sg ** 2)) / (sg * sp.sqrt(2 * sp.pi))
    assert sp.simplify(sp.diff(t2 + r * t1, r) - t1) == 0  # Eqn 47
    assert sp.simplify(sp.diff(t1, r) - (cp - cm) * p) == 0  # corrected Eqn 61
    assert sp.simplify(sp.diff(t2, r) + (cp - cm) * r * p) == 0
    assert sp.simplify(sp.diff(t1, r) - (cp + cm) * p) != 0  # printed Eqn 61 (c_- != 0)
    # Eqn 49: F = theta2(0) + int_0^r theta1 = theta2 + r theta1
    rp = sp.Symbol("rp", real=True)
    F = t2.subs(r, 0) + sp.integrate(t1.subs(r, rp), (rp, 0, r))
    assert sp.simplify(F - (t2 + r * t1)) == 0


def test_reluGaussian_lemma1_closed_form():
    """Corrected Lemma 1 for ReLU + N(xbar, s^2 I): E[psi] = Phi(r/(s k)), E[x psi] = ... ."""
    dist = T.Isotropic("gaussian", 3, 0.9)
    v, xi, xbar = np.array([0.3, -1.2, 2.0]), 0.4, np.array([1.0, 0.5, -0.2])
    ex, ep = T.lemma1_corrected(v, xi, xbar, np.eye(3), dist, T.RELU)
    k, r = np.linalg.norm(v), v @ xbar + xi
    from scipy import stats
    u = r / (0.9 * k)
    assert abs(ep - stats.norm.cdf(u)) < 1e-12
    assert np.allclose(ex, stats.norm.cdf(u) * xbar + 0.9 * stats.norm.pdf(u) * v / k, atol=1e-10)
    # printed form: theta1(r)/||v||, with theta1 = Phi(r/sigma); -> 1/||v|| > 1 for ||v|| < 1
    _, pp = T.lemma1_printed(0.5 * v / k, 50.0, xbar, np.eye(3),
                              lambda r: T.theta_unit(r, dist, T.RELU)[0],
                              lambda r: T.theta_unit(r, dist, T.RELU)[1])
    assert pp > 1.99


def test_literal_step_phi_is_not_homogeneous():
    """Lemma 4's 'phi(x) = c_- 1[x<0] + c_+ 1[x>0]' violates phi = x phi' (read as phi')."""
    cm, cp = 0.3, 1.0
    phi = lambda x: cm * (x < 0) + cp * (x > 0)
    for x in [-1.5, -0.2, 0.4, 2.0]:
        h = 1e-6
        dphi = (phi(x + h) - phi(x - h)) / (2 * h)
        assert abs(phi(x) - x * dphi) > 0.2
    # the leaky-ReLU reading is homogeneous
    u = torch.tensor([-1.5, -0.2, 0.4, 2.0], dtype=torch.float64)
    assert torch.allclose(S.phi(u, cm, cp), u * S.phi_prime(u, cm, cp))


def test_mean_residual_monotone_gaussian_not_student_t():
    """Two-cluster stationary points of printed Eqn 5 need H to take a value twice: none for the
    Gaussian (H increasing), some for Student-t."""
    for family, expect in [("gaussian", None), ("ball", None), ("student_t", "point")]:
        dist = T.Isotropic(family, 2, 1.0, 3.0)
        t1 = lambda r, d=dist: float(T.theta_step_closed(r, d)[0])
        t2 = lambda r, d=dist: float(T.theta_step_closed(r, d)[1])
        lo = -0.99 if family == "ball" else -8.0
        grid = np.linspace(lo, 4.0, 200)
        H = np.array([T.mean_residual_H(r, t1, t2) for r in grid])
        if expect is None:
            assert np.all(np.diff(H) > 0)
        else:
            assert np.any(np.diff(H) < 0)
            out = T.two_cluster_stationary_point(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 1.0,
                                                 0.5, t1, t2)
            v, xi, am, _ = out
            vd, xd = T.printed_eqn50_rhs(v, xi, np.array([[1.0, 0.0], [0.0, 1.0]]),
                                         [1.0, am], t1, t2)
            assert np.linalg.norm(vd) < 1e-12 and abs(xd) < 1e-12


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------
def test_bad_input():
    gen = make_generator(0)
    with pytest.raises(ValueError, match="sigma"):
        S.sample_isotropic_noise(10, 2, "gaussian", gen, sigma=0.0)
    with pytest.raises(ValueError, match="sigma"):
        S.sample_isotropic_noise(10, 2, "gaussian", gen, sigma=-1.0)
    with pytest.raises(ValueError, match="dimension"):
        S.sample_isotropic_noise(10, 0, "gaussian", gen)
    with pytest.raises(ValueError, match="family"):
        S.sample_isotropic_noise(10, 2, "cauchy", gen)
    with pytest.raises(ValueError, match="nu"):
        S.sample_isotropic_noise(10, 2, "student_t", gen, nu=0)
    with pytest.raises(ValueError, match="n_samples"):
        S.sample_isotropic_noise(1, 2, "gaussian", gen)
    with pytest.raises(ValueError, match="d >= M_C"):
        S.random_embeddings(3, 3, gen)
    with pytest.raises(ValueError, match="d >= M_C"):
        S.random_embeddings(0, 1, gen)
    c = torch.zeros(2, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="weights"):
        S.sample_mixture(10, c, [0.5, 0.6], "gaussian", gen)
    with pytest.raises(ValueError, match="weights"):
        S.sample_mixture(10, c, [1.5, -0.5], "gaussian", gen)
    with pytest.raises(ValueError, match="weights"):
        S.sample_mixture(10, c, [1.0], "gaussian", gen)
    with pytest.raises(ValueError, match="R must"):
        S.sample_mixture(10, c, [0.5, 0.5], "gaussian", gen, R=2 * torch.eye(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="v must be nonzero"):
        S.lemma1_expectations(torch.zeros(1, 3), torch.zeros(1), torch.ones(5, 3), torch.sigmoid)
    with pytest.raises(ValueError, match="v must be nonzero"):
        T.lemma1_printed(np.zeros(3), 0.0, np.ones(3), np.eye(3), lambda r: r, lambda r: r)
    with pytest.raises(ValueError, match="sigma"):
        T.Isotropic("gaussian", 2, 0.0)
    with pytest.raises(ValueError, match="dimension"):
        T.Isotropic("ball", 0, 1.0)
    with pytest.raises(ValueError, match="nu"):
        T.Isotropic("student_t", 2, 1.0, 1.0)
    with pytest.raises(ValueError, match="family"):
        T.Isotropic("laplace", 2, 1.0)
    with pytest.raises(ValueError, match="psi kind"):
        T.Psi("relu6")
    with pytest.raises(ValueError, match="k = "):
        T.theta_y(0.0, 0.0, T.Isotropic("gaussian", 1), T.RELU)
    U, uq = S.random_embeddings(4, 2, gen)
    with pytest.raises(ValueError, match="shape"):
        S.eqn2_gradient(torch.zeros(1, 3), U, uq, torch.zeros(5, 2, dtype=torch.float64),
                        torch.zeros(5, dtype=torch.float64))
