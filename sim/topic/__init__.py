"""Topic structure (Li, Li & Risteski, ICML 2023): simulators (torch float64).

* Exact Assumption-1 reference: `subset_moments` enumerates all tau-subsets S of the T topics and
  returns M = E_S[p~_S p~_S^T], C = E_S[P_S p~_S^T], m = E_S[p~_S], mP = E_S[P_S]; under uniform
  attention the MLM squared loss is the quadratic `infinite_loss` in (W, b), minimised (with ridge
  lambda ||W||_F^2) at `ridge_minimiser`.
* Finite documents: `sample_documents` (theory model: tau distinct topics; LDA: Dirichlet(0.1)
  topic weights, N uniform in 100..150), `mask_tokens` (p_m, p_c, p_r), the one-layer transformer
  of eqs. 5-7 (`init_params`, `forward`) batched over seeds S and documents D, `mlm_loss`
  (squared / cross-entropy) with optional ridge, `train`, and `attention_stats` from word ids.
* Stage 2: `stage2_loss`, the Assumption-1 loss of an explicit three-value attention model
  (same word beta, same topic other word alpha, otherwise 1) with W^V frozen.

Index 0 is [MASK]; words are 1..Tv; topic(i) = ceil(i / v).

The package: sim/topic/moments.py (argument checks and the Assumption-1 reference), model.py
(documents and the transformer), attention.py (attention statistics and Stage 2).  Every name is
importable from `sim.topic` itself.
"""

# ruff: noqa: F401 -- the package's API, one module's names as before the split
from sim.topic.moments import (F64, _UNSET, check_params, topic_of, masked_distribution,
    subset_moments, infinite_loss, _check_moments, ridge_minimiser, min_norm_minimiser, gd_infinite)
from sim.topic.model import (sample_documents, _check_documents, _check_tokens, mask_tokens,
    Switches, PARAMS, init_params, _check_switches, trainable, forward, _forward, mlm_loss,
    _mlm_loss, ridge, TrainLog, train)
from sim.topic.attention import (PAIR_KINDS, attention_stats, block_scores, block_apply, diag_apply,
    _stage2_grid, stage2_loss, stage2_loss_fast)
