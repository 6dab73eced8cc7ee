"""JoMA (Tian et al., ICLR 2024): the simulations its claims are about (torch, float64; scipy
solve_ivp for the reduced ODEs).  One module per section of the paper:

  sim.joma.attention   Eqn. 1 / Fig. 1b: the attention kinds b = sigma(z) o x / A
  sim.joma.eqn2        Sections 2-3 (Theorems 1-2): the problem of Eqn. 2 and its gradient steps
  sim.joma.eqn3        Section 3.1: the reduced Eqn. 3 (solve_ivp) and its blow-up time
  sim.joma.hblt        Section 5 / Appendix A.5: HBLT(rho), exact enumeration and sampling
  sim.joma.nonlinear   Section 4 / Appendix A.3: the Eqn. 2 gradient of one MLP node (Lemmas 1-4,
                       Theorem 3) on mixtures of isotropic distributions
  sim.joma.eqn7        Section 4 / Appendix A.4.1: Eqn. 7 (Theorem 4, Lemmas 5-6), entropy, rank
  sim.joma.hierarchy   Sections 4-7 with trained transformers: the Table 1 generator

Every name is importable from sim.joma itself (as before the split into modules).
"""

# ruff: noqa: F401 - this module re-exports its modules' names (public and private)

from sim.joma._checks import _check_int
from sim.joma.attention import (
    ATTENTIONS,
    _attention_scores,
    _check_zX,
    attention_scores,
)
from sim.joma.eqn2 import (
    ACTIVATIONS,
    BlowUpError,
    Eqn2Problem,
    Trajectory,
    _check_state,
    _eqn2_velocity,
    eqn2_velocity,
    make_problem,
    objective,
    simulate_eqn2,
    simulate_eqn2_softmax_budget,
)
from sim.joma.eqn3 import eqn3_blowup_time, solve_eqn3
from sim.joma.eqn7 import SpeedRun, _as_finite, entropy_softmax_sq, simulate_eqn7, stable_rank
from sim.joma.hblt import (
    _DT,
    HBLTSample,
    HBLTTree,
    _as_tensor,
    _check_joint,
    _check_prob,
    _check_tree,
    empirical_leaf_cooccurrence,
    hblt_exact_conditional_table,
    hblt_exact_joint,
    hblt_exact_leaf_cooccurrence,
    hblt_exact_pair_table,
    hblt_sample,
    make_hblt,
)
from sim.joma.hierarchy import (
    ORDERS,
    STRUCTURES,
    HierarchyGenerator,
    HierarchySample,
    _channel,
    _check_generator_obj,
    _combinations,
    _sequences,
    generator_from_children,
    make_table1_generator,
    sample_hierarchy,
    sibling_height,
)
from sim.joma.nonlinear import (
    FAMILIES,
    MAX_NU,
    _check_node_inputs,
    _check_phi,
    _finite_pos,
    _mean_se,
    eqn2_gradient,
    lemma1_expectations,
    per_node_objective,
    phi,
    phi_prime,
    random_embeddings,
    sample_isotropic_noise,
    sample_mixture,
)
