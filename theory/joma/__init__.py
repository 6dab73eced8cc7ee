"""JoMA (Tian et al., ICLR 2024): closed forms of every numbered claim, in sympy (lambdified for
numbers). Pure math: no torch. Sections follow the paper; each formula cites its equation.
One module per claim (or per concept the claims share):

  theory.joma.theorem1    Section 3: Theorem 1's invariants (and their discrete-time versions)
  theory.joma.theorem2    Section 3.1: Theorem 2 / Eqn. 4, trajectory, blow-up time, limit
  theory.joma.hblt        Section 5 / A.5: HBLT conventions, Definition 1 (M, p), Lemmas 7-8
  theory.joma.theorem5    Theorem 5 / Eqn 108 and the two readings of rho_0
  theory.joma.eq9         Eqn 9: Theorem 5 at rho = rho_0 = 1 - eps
  theory.joma.isotropic   Section 4 / A.3: psi = phi' (Psi) and the isotropic families (Isotropic)
  theory.joma.theta       Eqns 41-42: theta_1, theta_2
  theory.joma.lemma1      Lemma 1 (Eqn 24)
  theory.joma.theorem3    Theorem 3 (Eqn 5) and the xi dynamics (Eqn 50)
  theory.joma.lemma2_3    Lemma 2 (Eqns 47-49) and Lemma 3 (Eqns 50-59)
  theory.joma.lemma4      Lemma 4 (Eqn 61)
  theory.joma.lemma5_6    Section 4 / A.4.1: Lemmas 5-6 (g, G and the stationary points)
  theory.joma.theorem4    Theorem 4 (Eqns 70-87) and Eqn. 8

Every name is importable from theory.joma itself (as before the split into modules).  Renamed
single-letter functions keep their old names as aliases: M = transition_matrix,
p = binary_marginal (Definition 1), g = g_lemma5, G = G_lemma6, F = F_theorem4.
The sympy symbols (z, v, t, A, H, L, y, x, r, ...) keep the paper's letters.
"""

# ruff: noqa: F401 - this module re-exports its modules' names (public and private)

import sympy as sp  # theory.joma.sp, as before the split

from theory.joma._checks import (
    _callable,
    _expr,
    _fin,
    _scalar,
    _sym_or_int,
    _sym_or_number,
)
from theory.joma.eq9 import (
    _check_eq9,
    _eq9_series,
    eq9_corrected,
    eq9_exact_mp,
    eq9_first_order_coefficient,
    eq9_printed,
    eq9_remainder_mp,
    eq9_remainder_order,
    eq9_second_order_coefficient,
    eq9_series,
)
from theory.joma.hblt import (
    _HALF,
    LEMMA8_MAX_K,
    H,
    L,
    M,
    _zero,
    binary_marginal,
    eps,
    lemma7_residuals,
    lemma8_residuals,
    p,
    rho,
    rho0,
    rho1,
    rho2,
    transition_matrix,
)
from theory.joma.isotropic import (
    _UNSET,
    MAX_DIM,
    RELU,
    Isotropic,
    Psi,
    _dist_psi,
    p_n_from_p0,
)
from theory.joma.lemma1 import (
    _check_v,
    _check_xbar_R,
    lemma1_corrected,
    lemma1_printed,
    lemma1_printed_alt,
    linear_prediction,
)
from theory.joma.lemma2_3 import (
    F_lemma2,
    lemma3_lhs_printed,
    lemma3_rhs,
    mean_residual_argmin,
    mean_residual_H,
    two_cluster_stationary_point,
)
from theory.joma.lemma4 import (
    _check_lemma4,
    lemma4_corrected,
    lemma4_printed,
)
from theory.joma.lemma5_6 import (
    _MODS,
    G,
    G_bound,
    G_bound_expr,
    G_expr,
    G_lemma6,
    _G_bound_sym,
    _g_sym,
    eqn66_expr,
    eqn66_residual,
    eqn67_expr,
    g,
    g_at_stationary,
    g_expr,
    g_lemma5,
    g_prime_expr,
    lemma5_true_max,
    lemma6_true_max,
    y,
)
from theory.joma.theorem1 import (
    THEOREM1_EXP,
    THEOREM1_EXP_DISCRETE,
    THEOREM1_EXP_WRONG,
    THEOREM1_LINEAR,
    THEOREM1_LINEAR_DISCRETE,
    THEOREM1_LINEAR_WRONG,
    THEOREM1_SOFTMAX_EQN19,
    THEOREM1_SOFTMAX_PRINTED,
    Qv,
    Qz,
    bbar,
    c,
    lambdify_invariant,
    n2,
    s2,
    softmax_sum_drift,
    theorem1_exp,
    theorem1_exp_discrete,
    theorem1_linear,
    theorem1_linear_discrete,
    theorem1_softmax_eqn19,
    theorem1_softmax_printed,
    z,
)
from theory.joma.theorem2 import (
    THEOREM2_BLOWUP,
    THEOREM2_CORRECTED,
    THEOREM2_CORRECTED_VALUE,
    THEOREM2_LIMIT,
    THEOREM2_PRINTED,
    THEOREM2_TRAJECTORY,
    A,
    Delta,
    Deltap,
    _lam,
    t,
    theorem2_blowup_time,
    theorem2_corrected_term,
    theorem2_corrected_value,
    theorem2_limit,
    theorem2_printed_term,
    theorem2_ratio_check,
    theorem2_trajectory,
    v,
    vp,
)
from theory.joma.theorem3 import (
    _check_centers,
    printed_eqn50_rhs,
    theorem3_corrected,
    theorem3_printed,
)
from theory.joma.theorem4 import (
    _F0,
    _GL_W,
    _GL_X,
    _M,
    F0,
    F,
    F0_expr,
    F_delta,
    F_integrand,
    F_theorem4,
    Lambda_jk,
    M_bound,
    M_expr,
    _deltas,
    _same_side,
    _zeta,
    dF_dmu_integrand_eqn72,
    dF_dmu_integrand_eqn74,
    eqn8_ratio,
    lambda_bound,
    lambda_jk,
    log_ratio,
    mu,
    r,
    r0,
    rho_delta,
    rho_limit_delta,
    x,
    zeta,
    zeta_expr,
)
from theory.joma.theorem5 import (
    MAX_DEPTH,
    _check_HL,
    _check_q_p0,
    _check_theorem5,
    rho0_corrected,
    rho0_printed,
    theorem5_alt_levels,
    theorem5_alt_top_depth,
    theorem5_corrected,
    theorem5_expr,
    theorem5_numeric,
    theorem5_printed,
    theorem5_via_proof,
)
from theory.joma.theta import (
    _lamb,
    _quad_split,
    theta1_gauss,
    theta2_gauss,
    theta_gauss_sym,
    theta_step_closed,
    theta_unit,
    theta_y,
)
