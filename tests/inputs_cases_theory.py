"""The hand-written cases of tests/test_inputs.py for theory/ (tests/inputs_cases.py holds the
record, the helpers and sim/'s): appended to CASES on import (tests/inputs_discovery.py imports
this module, so that discovery sees every hand-written case).
"""

from __future__ import annotations

import numpy as np

import theory.joma as TJ
import theory.signgd as TS
import theory.topic as TT

from tests.inputs_cases import (_add, BAD_FLOAT, BAD_INT, BAD_POS_FLOAT, BAD_PROB, BAD_SIZE, INF,
                                 NAN)


# ---- theory.signgd, theory.topic ------------------------------------------------------------
_add(TS.stage1_end, dict(V_mu0=np.zeros(2), V0=np.full((2, 3), -0.1), eta_=0.01,
                         xi_l1=np.full((2, 3), 2.0)),
     {"V_mu0": [[NAN, 0.0], np.zeros(3), "v", None, [True, False]],
      "V0": [np.full((2, 3), INF), np.zeros(2), np.full((2, 3), -1e308)],  # -1e308: T_1 overflows
      "eta_": BAD_POS_FLOAT + [np.full(3, 0.01), 1e-320, True, "0.01"],
      "xi_l1": [np.full((2, 3), NAN), np.full((2, 3), -1.0), np.ones((2, 2)), None]})
_add(TS.stage1_end, dict(V_mu0=np.zeros(2), V0=np.full((2, 3), -0.1), eta_=np.array([0.01, 0.02]),
                         xi_l1=np.full((2, 3), 2.0)),
     {"eta_": [np.array([0.01, NAN]), np.array([0.01, 0.0]), np.array([0.01, 1e-320])]},
     name="theory.signgd.stage1_end[one eta per instance]")
BAD_TYPE = ["x", None, True, 1j]                    # a string, None, a bool, a complex number
_add(TS.value_mu, dict(V_mu0=np.zeros(3), eta=0.01, t=np.arange(4.0)[:, None]),
     {"V_mu0": [NAN, INF, [NAN, 0.0, 0.0], np.zeros((3, 3))] + BAD_TYPE,  # (3, 3) vs t (4, 1)
      "eta": BAD_POS_FLOAT + [1e308] + BAD_TYPE,    # 1e308: V_mu(t) overflows
      "t": [NAN, INF, -1.0, np.array([[1.0], [-1.0]])] + BAD_TYPE})
_add(TS.value_mu, dict(V_mu0=np.zeros(3), eta=0.01, t=np.arange(2.0 ** 14)[:, None]),
     {"V_mu0": [np.zeros(2 ** 15)]}, name="theory.signgd.value_mu[broadcast cap]")
_add(TS.value_noise, dict(V_i0=np.zeros((2, 3)), eta=0.01, t=np.arange(4.0)[:, None, None],
                          xi_l1=np.full((2, 3), 2.0)),
     {"V_i0": [NAN, np.full((2, 3), INF), np.zeros((2, 4))] + BAD_TYPE,
      "eta": BAD_POS_FLOAT + [1e308] + BAD_TYPE,
      "t": [NAN, INF, -1.0] + BAD_TYPE,
      "xi_l1": [NAN, -1.0, np.full((2, 3), -0.5), INF] + BAD_TYPE})
_add(TS.crossing_time, dict(V_mu0=np.zeros((2, 1)), V_i0=np.full((2, 3), -0.1), eta=0.01,
                            xi_l1=np.full((2, 3), 2.0)),
     {"V_mu0": [NAN, INF, np.zeros((3, 1))] + BAD_TYPE,
      "V_i0": [np.full((2, 3), NAN), -1e308] + BAD_TYPE,  # -1e308: the crossing time overflows
      "eta": BAD_POS_FLOAT + [1e-320] + BAD_TYPE,
      "xi_l1": [NAN, INF, -1.0, 1.0, np.ones((2, 3))] + BAD_TYPE})  # 1: parallel laws
BAD_WEIGHT = [NAN, INF, -0.1, 1.1, np.array([0.5, 2.0, 0.5])] + BAD_TYPE  # a softmax weight
_add(TS.margin, dict(s11=np.full(3, 0.5), s21=np.full(3, 0.4), V_mu=np.zeros(3), V_i=np.ones(3)),
     {"s11": BAD_WEIGHT, "s21": BAD_WEIGHT,
      "V_mu": [NAN, INF, np.zeros(4)] + BAD_TYPE,
      "V_i": [-INF, np.full(3, NAN), 1.7e308] + BAD_TYPE})  # 1.7e308: the margin overflows
_add(TS.expected_xi_l1, dict(s=10, sigma_p=2.0),
     {"s": BAD_POS_FLOAT + [1e308] + BAD_TYPE, "sigma_p": BAD_POS_FLOAT + [1e308] + BAD_TYPE})
_add(TS.lemma41_slope, dict(eta=0.1, s=10, sigma_p=2.0),
     {"eta": BAD_POS_FLOAT + [1e308] + BAD_TYPE, "s": BAD_POS_FLOAT + BAD_TYPE,
      "sigma_p": BAD_POS_FLOAT + [1e308, [2.0, NAN]] + BAD_TYPE})
_TP = dict(T_=3, v_=2, p_m_=0.2, p_c_=0.1, p_r_=0.1)
BAD_TP = {"T_": BAD_SIZE, "v_": BAD_SIZE, "p_m_": BAD_PROB, "p_c_": BAD_PROB,
          "p_r_": BAD_PROB + [0.95]}
_add(TT.check_params, dict(_TP, tau_=2), dict({k: v for k, v in BAD_TP.items()},
                                              T_=BAD_INT, v_=BAD_INT, tau_=[0, 2.5, 4]))
_add(TT.constants, dict(_TP), dict(BAD_TP, T_=BAD_INT, v_=BAD_INT))
_add(TT.definition2_dv, dict(_TP), BAD_TP)
_add(TT.lemma1_row_residual, dict(with_c1=True, bias=0), {"with_c1": ["yes", None],
                                                          "bias": [NAN, INF, "b", TT.sp.oo]})
_MEMBER = dict(u_vec=np.zeros(7), spread=np.ones((7, 7)))
BAD_MEMBER = {"u_vec": [np.full(7, NAN), np.zeros(6), None],
              "spread": [np.full((7, 7), INF), -np.ones((7, 7)), np.zeros((7, 7)), np.ones((6, 6))]}
_add(TT.lemma1_member, dict(_TP, **_MEMBER), dict(BAD_TP, with_c1=["yes"], **BAD_MEMBER))
_add(TT.lemma1_member_with, dict(T_=3, v_=2, c1_=0.1, c2_=1.0, c3_=1.0, **_MEMBER),
     dict(T_=BAD_SIZE, v_=BAD_SIZE, c1_=BAD_FLOAT, c2_=BAD_FLOAT, c3_=BAD_FLOAT + ["c"],
          **BAD_MEMBER))
BAD_W7 = [np.full((7, 7), NAN), np.zeros((6, 6)), np.zeros(7), None]
_add(TT.lemma1_fit, dict(_TP, W=np.eye(7)), dict(BAD_TP, W=BAD_W7, with_c1=["yes"]))
_add(TT.lemma1_fit_with, dict(W=np.eye(7), T_=3, v_=2, c1_=0.1, c2_=1.0, c3_=1.0),
     dict(W=BAD_W7, T_=BAD_SIZE, v_=BAD_SIZE, c1_=BAD_FLOAT, c2_=BAD_FLOAT, c3_=BAD_FLOAT))
_TB = dict(T_=8, tau_=2, v_=2, p_m_=0.2, p_c_=0.1, p_r_=0.1)
for _n in ("c1", "c2", "c3", "c4", "c7", "lambda1", "lambda1_proof", "lambda2", "t5_beta_lo",
           "t5_beta_hi"):
    _add(getattr(TT, _n), dict(pm=0.2, pc=0.1, pr=0.1, T_=8, v_=100, tau_=2),
         {"pm": BAD_PROB, "pc": BAD_PROB, "pr": BAD_PROB + [0.95], "T_": BAD_INT,
          "v_": BAD_INT, "tau_": [0, 2.5, 9]}, name=f"theory.topic.{_n}")
_add(TT.theorem3_bounds, dict(_TB), dict(BAD_TP, T_=BAD_INT, v_=BAD_INT, tau_=[0, 2.5, 9],
                                         proof_constant=["yes", None]))
_add(TT.theorem5_bounds, dict(_TB, v_=100), dict(BAD_TP, T_=BAD_INT, v_=[0, 1, 2, 2.5],
                                                 tau_=[0, 2.5, 9]))


# ---- theory.joma ------------------------------------------------------------------------------
BAD_EXPR = ["z", 1.0, None]
_add(TJ.lambdify_invariant, dict(expr=TJ.THEOREM1_EXP), {"expr": BAD_EXPR})
_INV_KW = dict(z=np.zeros(3), s2=np.ones(3), n2=np.ones(3), bbar=np.full(3, 1 / 3),
               Q_v=np.zeros(3), Q_z=np.zeros(3))
for _n in ("theorem1_linear", "theorem1_exp", "theorem1_softmax_printed", "theorem1_softmax_eqn19",
           "theorem1_exp_discrete", "theorem1_linear_discrete"):
    _add(getattr(TJ, _n), dict(_INV_KW), {"z": [np.full(3, NAN), "z"], "s2": [[INF, 0.0, 0.0]]},
         name=f"theory.joma.{_n}")
_add(TJ.softmax_sum_drift, dict(expr=TJ.THEOREM1_SOFTMAX_EQN19), {"expr": BAD_EXPR})
_add(TJ.theorem2_ratio_check, dict(vs=np.array([[0.1, 0.2]]), deltas=np.array([1.0, 2.0]),
                                   term=np.tanh),
     {"vs": [[[NAN, 0.1]], np.zeros(0), "v"], "deltas": [[0.0, 0.0], [NAN, 1.0], np.ones(3)],
      "term": [None, 5]})
_add(TJ.theorem2_trajectory, dict(Delta=0.7, t=0.5, A=1.0),
     {"A": BAD_POS_FLOAT, "Delta": [NAN, INF], "t": [NAN, INF, 10.0, -10.0]})  # t* = 1.79
_add(TJ.theorem2_blowup_time, dict(Delta=0.7, A=1.0),
     {"A": BAD_POS_FLOAT, "Delta": [NAN, -INF]})
_add(TJ.theorem2_limit, dict(Delta=0.5, Deltap=1.0),
     {"Deltap": [0.0, NAN, 0.1], "Delta": [NAN, 2.0, -1.5]})
BAD_RHO = [NAN, 2.0, "r", TJ.sp.oo]
_add(TJ.transition_matrix, dict(r=0.5), {"r": BAD_RHO})
_add(TJ.binary_marginal, dict(r=0.5), {"r": BAD_RHO})
_add(TJ.lemma8_residuals, dict(k=2), {"k": [0, 2.5, 100, True]})
_add(TJ.theorem5_expr, dict(r=0.5, r0=0.5, h=1, depth=3),
     {"r": [NAN, 2.0], "r0": [INF, -2.0], "h": [0, 2.5], "depth": [1, 10 ** 6, 2.5]})
_add(TJ.theorem5_via_proof, dict(h=1, depth=3),
     {"h": [0, 3, 2.5], "depth": [1, 10 ** 6], "r": [NAN, 2.0], "r0": [INF]})
_add(TJ.theorem5_numeric, dict(rho=0.7, rho_0=0.5, H=1, L=3),
     {"rho": [NAN, 1.5, -2.0], "rho_0": [NAN, 1.5, -INF], "H": [0, 3, 2.5], "L": [1, 2.5, 10 ** 6]})
_add(TJ.rho0_printed, dict(q=[0.5, 0.5], p0=[0.5, 0.5]),
     {"q": [[NAN, 0.5], [1.5, 0.5], [0.5]], "p0": [[NAN, 1.0], [0.5, 0.6], []]})
_add(TJ.rho0_corrected, dict(q=[0.5, 0.5], p0=[0.5, 0.5]), {"q": [[INF, 0.5]], "p0": [[0.5, NAN]]})
for _fn in (TJ.theorem5_printed, TJ.theorem5_corrected, TJ.theorem5_alt_levels,
            TJ.theorem5_alt_top_depth):
    _add(_fn, dict(r=0.7, q=[0.5, 0.5], p0=[0.5, 0.5], h=1, depth=3),
         {"r": [NAN, 1.5, "r"], "h": [0, 2.5, NAN, 3], "depth": [1, 2.5, 10 ** 6],
          "q": [[NAN, 0.5]], "p0": [[0.5, 0.6]]})
_add(TJ.theorem5_corrected, dict(r=0.7, q=[1.0, 1.0], p0=[0.5, 0.5], h=1, depth=3), {"r": [1.0]},
     name="theory.joma.theorem5_corrected[rho_0=1]")
for _fn in (TJ.eq9_printed, TJ.eq9_first_order_coefficient, TJ.eq9_second_order_coefficient):
    _add(_fn, dict(h=1, depth=3), {"h": [0, 2.5, NAN, 3], "depth": [1, 2.5, INF]})
_add(TJ.eq9_corrected, dict(e=0.1, h=1, depth=3), {"e": [NAN, -0.1, 1.0], "h": [0], "depth": [1]})
_add(TJ.eq9_series, dict(h=1, depth=3, order=2),
     {"h": [0, 3, 2.5], "depth": [1, 10 ** 6], "order": [0, 100, 2.5]})
_add(TJ.eq9_remainder_order, dict(h=1, depth=3), {"h": [0, 3, 2.5], "depth": [1, 2.5]})
_add(TJ.eq9_remainder_mp, dict(eps_values=[0.1], h=1, depth=3),
     {"eps_values": [[NAN], [1.5], 0.1, "x"], "linear_coefficient": [NAN, INF, "c"],
      "dps": [0, 10 ** 9], "h": [0, 3], "depth": [1, 10 ** 9]})
_GAUSS = TJ.Isotropic("gaussian", 2)
_add(TJ.Psi, dict(kind="step", c_minus=0.0, c_plus=1.0),
     {"kind": ["relu", None], "c_minus": [NAN, INF, "x"], "c_plus": [NAN, -INF]})
_add(TJ.Isotropic, dict(family="student_t", n=2, sigma=1.0, nu=5.0),
     {"family": ["cauchy", None], "n": [0, 2.5, 10 ** 12], "sigma": BAD_POS_FLOAT,
      "nu": [1.0, NAN, INF, 0.5]})
BAD_DIST, BAD_PSI = [None, "gaussian"], [None, "step"]
_add(TJ.p_n_from_p0, dict(dist=_GAUSS, y=0.3), {"dist": BAD_DIST, "y": [NAN, INF]})
_add(TJ.theta_y, dict(r=0.1, k=1.0, dist=_GAUSS, psi=TJ.RELU),
     {"r": [NAN, INF], "k": BAD_POS_FLOAT, "dist": BAD_DIST, "psi": BAD_PSI})
_add(TJ.theta_unit, dict(r=0.1, dist=_GAUSS, psi=TJ.RELU),
     {"r": [NAN, INF], "dist": BAD_DIST, "psi": BAD_PSI})
_add(TJ.theta_step_closed, dict(r=0.1, dist=_GAUSS),
     {"r": [NAN, [0.1, INF]], "dist": BAD_DIST, "c_minus": [NAN], "c_plus": [INF]})
_LEMMA1 = dict(v=[1.0, 0.0], xi=0.1, xbar=[0.5, 0.5], R=np.eye(2))
BAD_LEMMA1 = {"v": [[NAN, 0.0], [0.0, 0.0], [[1.0]]], "xi": [NAN, "x"], "xbar": [[NAN, 0.0], [0.5]],
              "R": [np.full((2, 2), NAN), np.eye(3)]}
_add(TJ.lemma1_printed, dict(_LEMMA1, theta1=np.tanh, theta2=np.tanh),
     dict(BAD_LEMMA1, theta1=[None], theta2=[5]))
_add(TJ.lemma1_corrected, dict(_LEMMA1, dist=_GAUSS, psi=TJ.RELU),
     dict(BAD_LEMMA1, dist=BAD_DIST, psi=BAD_PSI))
_add(TJ.lemma1_printed_alt, dict(_LEMMA1, dist=_GAUSS, psi=TJ.RELU),
     dict(BAD_LEMMA1, dist=BAD_DIST, psi=BAD_PSI))
_add(TJ.linear_prediction, dict(xbar=[[1.0, 0.0], [0.0, 1.0]]),
     {"xbar": [[NAN], "x"], "a": [[1.0, 1.0, 1.0], [NAN, 1.0]]})
_EQN50 = dict(v=[1.0, 0.0], xi=0.1, centers=[[1.0, 0.0], [0.0, 1.0]], a=[1.0, -1.0])
BAD_EQN50 = {"v": [[NAN, 0.0], [0.0, 0.0]], "xi": [INF],
             "centers": [[[NAN, 0.0]], [[0.0, 0.0, 0.0]]],
             "a": [[1.0], [NAN, 1.0]]}
_add(TJ.printed_eqn50_rhs, dict(_EQN50, theta1=np.tanh, theta2=np.tanh),
     dict(BAD_EQN50, theta1=[None], theta2=["t"]))
_add(TJ.theorem3_printed, dict(_EQN50, dist=_GAUSS, psi=TJ.RELU),
     dict(BAD_EQN50, dist=BAD_DIST, psi=BAD_PSI))
_add(TJ.theorem3_corrected, dict(_EQN50, dist=_GAUSS, psi=TJ.RELU),
     dict(BAD_EQN50, dist=BAD_DIST, psi=BAD_PSI))
_add(TJ.lemma3_lhs_printed, dict(_EQN50, theta1=np.tanh, theta2=np.tanh),
     dict(BAD_EQN50, theta1=[None]))
_add(TJ.lemma3_rhs, dict(_EQN50, F=np.tanh), dict(BAD_EQN50, F=[None], v=[[NAN, 0.0], [[1.0]]]))


def _t1(r):
    return float(TJ.theta_step_closed(r, _GAUSS)[0])


def _t2(r):
    return float(TJ.theta_step_closed(r, _GAUSS)[1])


_add(TJ.F_lemma2, dict(r=0.3, theta1=_t1, theta2=_t2),
     {"r": [NAN, INF], "theta1": [None], "theta2": [1.0], "include_constant": ["yes"],
      "breaks": [[NAN], "b"]})
_add(TJ.mean_residual_H, dict(r=0.3, theta1=_t1, theta2=_t2),
     {"r": [NAN], "theta1": [None], "theta2": ["t"]})
_add(TJ.mean_residual_argmin, dict(theta1=_t1, theta2=_t2, lo=-5.0, hi=5.0),
     {"lo": [NAN, -INF], "hi": [-10.0, NAN], "theta1": [None]})
_add(TJ.two_cluster_stationary_point, dict(x_plus=[1.0, 0.0], x_minus=[0.0, 1.0], a_plus=1.0,
                                           r_plus=0.5, theta1=_t1, theta2=_t2),
     {"x_plus": [[NAN, 0.0], [0.0, 1.0], [1.0, 0.0, 0.0]], "x_minus": [[INF, 0.0]],
      "a_plus": [0.0, NAN], "r_plus": [NAN], "theta1": [None],
      "bracket": [(-INF, None), (1.0, None), 5]})
for _fn in (TJ.lemma4_printed, TJ.lemma4_corrected):
    _add(_fn, dict(r=0.1, dist=_GAUSS, c_minus=0.0, c_plus=1.0),
         {"r": [NAN, [0.1, INF]], "dist": BAD_DIST, "c_minus": [NAN], "c_plus": [INF]})
_add(TJ.g_lemma5, dict(yv=0.5), {"yv": [0.0, -1.0, NAN, INF]})
_add(TJ.G_bound, dict(yv=0.5), {"yv": [0.0, -1.0, NAN, INF]})
_add(TJ.G_lemma6, dict(yv=0.5), {"yv": [NAN, INF, "y"]})
_add(TJ.zeta, dict(rv=0.5, r0v=0.2, muv=1.0), {"muv": [0.0, -1.0, NAN], "rv": [NAN], "r0v": [INF]})
_add(TJ.M_bound, dict(r0v=0.2), {"r0v": [NAN, INF]})
_add(TJ.F0, dict(rv=0.5, r0v=0.2), {"rv": [1.0, 2.0, NAN], "r0v": [NAN, 1.0]})
_add(TJ.F_delta, dict(delta=0.1, delta0=0.5, muv=1.0),
     {"delta": [0.0, -0.1, NAN], "delta0": [INF], "muv": [NAN], "integrand_power": [0.0, NAN]})
_add(TJ.F_theorem4, dict(rv=0.5, r0v=0.2, muv=1.0), {"rv": [1.0, NAN], "r0v": [2.0], "muv": [NAN]})
_add(TJ.rho_delta, dict(delta=0.1, delta0=0.5, muv=1.0),
     {"delta": [0.0, NAN], "delta0": [-0.5], "muv": [INF]})
_add(TJ.rho_limit_delta, dict(delta0=0.5, muv=1.0), {"delta0": [0.0, NAN], "muv": [NAN]})
_add(TJ.log_ratio, dict(delta=0.1, delta0=0.5), {"delta": [0.0, -0.1, NAN], "delta0": [INF]})
_add(TJ.lambda_jk, dict(delta_j=0.1, delta_j0=0.5, mu_j=1.0, delta_k=0.2, delta_k0=0.5, mu_k=2.0),
     {"delta_j": [0.0, NAN], "delta_j0": [-0.5], "mu_j": [NAN], "delta_k": [INF],
      "delta_k0": [0.0], "mu_k": [INF]})
_add(TJ.Lambda_jk, dict(lam=0.1, mu_k=1.0, delta_k=0.1, delta_k0=0.5),
     {"lam": [NAN], "mu_k": [INF], "delta_k": [0.5, 0.0], "delta_k0": [NAN]})
_add(TJ.eqn8_ratio, dict(mu_j=1.0, mu_k=2.0, Lam=0.1),
     {"mu_j": [NAN], "mu_k": [INF], "Lam": [NAN], "exponent": [NAN, "e"]})
_add(TJ.lambda_bound, dict(r0_j=0.1, r0_k=0.2), {"r0_j": [NAN], "r0_k": [INF]})


# ---- lambdified closed forms re-exported as predictions (theory.validate.closed_form) --------------
_add(TJ.eqn66_residual, dict(y=1.0), {"y": BAD_FLOAT + [1e300, "y", None]})
_add(TJ.g_at_stationary, dict(y=1.0), {"y": BAD_FLOAT + [1e300, None]})
_add(TJ.theorem2_printed_term, dict(v=0.5), {"v": BAD_FLOAT + [[NAN, 0.0], "v"]})
_add(TJ.theorem2_corrected_term, dict(v=0.5), {"v": BAD_FLOAT + [None]})
for _f in (TJ.theta1_gauss, TJ.theta2_gauss):
    _add(_f, dict(r=0.1, sigma=1.0, c_minus=0.0, c_plus=1.0),
         {"r": BAD_FLOAT, "sigma": BAD_POS_FLOAT, "c_minus": BAD_FLOAT, "c_plus": [NAN, None]})
