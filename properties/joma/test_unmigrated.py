"""JoMA (Tian et al., ICLR 2024): the claims not yet migrated onto the earned-verdict harness.

Left here (their properties still use the old number controls, so the claims are reported
`not-audited`): the trained-transformer claims (joma.sec4.entropy_dynamics_trained,
joma.sec4.rank_dynamics_trained, joma.sec5.lowest_first).  Every other JoMA claim lives in its
own file, properties/joma/test_<item>.py.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from properties import Claim, attach_plot, audits, check_at_least, examples, register
from sim import default_device, make_generator, measure
from sim.joma import make_table1_generator, sample_hierarchy, sibling_height
from sim.measure import (
    attention_entropy,
    best_match_ncorr,
    grouped_attention_logits,
    max_over_sequence,
    record,
)
from sim.transformer import StackedTransformer, train

#==================================================================================================
# Section 5 / Appendix A.5 (HBLT): Lemmas 7-8, Theorem 5 and Eq. 9 are migrated
# (properties/joma/test_lemma7.py, test_lemma8.py, test_theorem5.py, test_eq9.py)
#==================================================================================================


#==================================================================================================
# Section 4 / Appendix A.3 (Lemmas 1-4, Theorem 3) are migrated: properties/joma/test_lemma1.py,
# test_theorem3.py, test_lemma2.py, test_lemma3.py, test_lemma4.py
#==================================================================================================
# Section 4 / Appendix A.4.1 (Eqn. 7, Theorem 4, Lemmas 5-6, entropy and rank dynamics) is migrated:
# properties/joma/test_theorem4.py, test_lemma5.py, test_lemma6.py, test_sec4.py


#==================================================================================================
# Sections 4-7 with trained transformers: Table 1 generator, training-dynamics and hierarchy claims
#==================================================================================================
# Audit of JoMA (Tian et al., ICLR 2024) claims that need real multilayer transformer training
# (issue 5): Table 1 (latent / hidden-neuron alignment), Section 5's lowest-latent-first
# attention, Sections 4/6's entropy and stable-rank dynamics in trained transformers (Figs. 6-8),
# and Section 7's almost-orthogonal embeddings remark.
#
# Simulations: sim.joma (Table 1 generator, reusing sim.joma's HBLT sampler),
# sim.transformer (stacked-seed decoder-only transformer, Adam, float32: no exact claim rests on
# training), sim.measure (model-agnostic measurements).  CI size: d = 32, 2 layers, width 4d,
# batch 32, 200-400 Adam steps; full size (d = 1024, 3 layers, 10k steps) is for `thorough` on a
# GPU and was not run by the author of this module.

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
SEED = st.integers(0, 2**31 - 1)

# Table 1 as printed: (C, N_ch, (N_0, N_1)) -> (NCorr s=0, NCorr s=1) means
PAPER_TABLE1 = {
    (20, 2, (10, 20)): (0.99, 0.81), (20, 2, (20, 30)): (0.97, 0.80),
    (20, 3, (10, 20)): (1.00, 0.69), (20, 3, (20, 30)): (0.96, 0.68),
    (30, 2, (10, 20)): (0.99, 0.73), (30, 2, (20, 30)): (0.94, 0.74),
    (30, 3, (10, 20)): (0.99, 0.72), (30, 3, (20, 30)): (0.95, 0.66),
    (50, 2, (10, 20)): (0.99, 0.58), (50, 2, (20, 30)): (0.95, 0.55),
    (50, 3, (10, 20)): (0.99, 0.64), (50, 3, (20, 30)): (0.95, 0.61),
}
SIMPLE, COMPLEX = (20, 2, (10, 20)), (50, 3, (20, 30))  # the two extremes of Table 1

# CI-sized training (full size under thorough: d 1024, 3 layers, more steps; GPU if present)
CI = dict(d=32, depth=2, N=32, n_eval=256, steps_t1=200, lr_t1=3e-3, steps_dyn=400)
FULL = dict(d=1024, depth=3, N=64, n_eval=512, steps_t1=10000, lr_t1=1e-4, steps_dyn=10000)
SIZE = FULL if THOROUGH and torch.cuda.is_available() else CI
DYN_LRS = (3e-4, 1e-3, 1e-2)

_READ_GEN = ("Generator (sim.joma, structure='dag'): Table 1's N_s has MORE latents "
             "above than below ((10, 20)), impossible for a tree, so the literal reading is a "
             "layered DAG: each latent / class picks a distinct random N_ch-combination of "
             "children in the layer below; child = OR(parents) through M(rho), rho = 1 "
             "(deterministic given the class, as in the authors' released generator); tokens "
             "sorted and pre-padded to T = 30 with token M - 1 = 99. Alternative: "
             "structure='tree' (HBLT via sim.joma.make_hblt/hblt_sample), order='random', rho < 1. "
             "Model: decoder-only, no positional embedding, post-LN, ReLU MLP width 4d, "
             "1 head, class read out from the last position, Adam.")

# --------------------------------------------------------------------------------------------
# Shared runs (cached by seed: the ci profile is derandomized, so claims share one run)
# --------------------------------------------------------------------------------------------


def _batcher(gens, data_gens, N):
    def batch(_step):
        ss = [sample_hierarchy(g, N, dg) for g, dg in zip(gens, data_gens)]
        dev = default_device()
        return (torch.stack([s.tokens for s in ss]).to(dev), torch.stack([s.labels for s in ss]).to(dev),
                torch.stack([s.mask for s in ss]).to(dev))
    return batch


@functools.lru_cache(maxsize=4)
def table1_run(seed: int, config=SIMPLE, n_seeds: int = 3):
    """NCorr (s = 0, 1) per seed at initialisation and after training on one Table 1 config.
    Returns dict(init=(n_seeds, 2), trained=(n_seeds, 2), shuffled=(n_seeds, 2) (control:
    latents of permuted samples), acc)."""
    C, N_ch, Ns = config
    seeds = [seed + i for i in range(n_seeds)]
    gens = [make_table1_generator(C, N_ch, Ns, generator=make_generator(s)) for s in seeds]
    dgs = [make_generator(s + 7919) for s in seeds]
    model = StackedTransformer(seeds, vocab=100, n_out=C, d=SIZE["d"], depth=SIZE["depth"])
    ev = [sample_hierarchy(g, SIZE["n_eval"], make_generator(s + 104729)) for g, s in zip(gens, seeds)]
    etok = torch.stack([e.tokens for e in ev]).to(default_device())
    perm = torch.randperm(SIZE["n_eval"], generator=make_generator(seed + 1))

    def ncorr(m):
        with record({f"h{l}": m.blocks[l].mlp_act for l in range(2)}) as out:
            m(etok)
        res, ctl = np.zeros((n_seeds, 2)), np.zeros((n_seeds, 2))
        for i in range(n_seeds):
            for s in range(2):
                mx = max_over_sequence(out[f"h{s}"][i].cpu(), ev[i].mask)
                res[i, s] = float(torch.nanmean(best_match_ncorr(mx, ev[i].latents[s])))
                ctl[i, s] = float(torch.nanmean(best_match_ncorr(mx, ev[i].latents[s][perm])))
        return res, ctl

    with torch.no_grad():
        init, _ = ncorr(model)
    train(model, _batcher(gens, dgs, SIZE["N"]), steps=SIZE["steps_t1"], lr=SIZE["lr_t1"],
          log_every=SIZE["steps_t1"])
    with torch.no_grad():
        trained, shuffled = ncorr(model)
    return dict(init=init, trained=trained, shuffled=shuffled)


@functools.lru_cache(maxsize=4)
def dynamics_run(seed: int, n_seeds: int = 2, lrs=DYN_LRS, task: str = "next",
                 order: str = "sorted", rho: float = 1.0):
    """Next-token training on the SIMPLE Table 1 generator (token `order`, uncertainty `rho`),
    one model per (seed, lr), stacked.  Returns steps, entropy (t, layer, run), stable rank
    (t, layer, run), grouped layer-0 logits (t, run, H) and the lr of each run."""
    runs = [(seed + i, lr) for i in range(n_seeds) for lr in lrs]
    seeds = [s * len(lrs) + j for j, (s, _lr) in enumerate(runs)]
    C, N_ch, Ns = SIMPLE
    gens = [make_table1_generator(C, N_ch, Ns, rho=rho, order=order, generator=make_generator(s))
            for s, _ in runs]
    dgs = [make_generator(s + 7919 + 31 * j) for j, (s, _) in enumerate(runs)]
    depth = SIZE["depth"]
    model = StackedTransformer(seeds, vocab=100, n_out=100 if task == "next" else C, d=SIZE["d"],
                               depth=depth)
    ev = [sample_hierarchy(g, 128, make_generator(s + 104729)) for g, (s, _) in zip(gens, runs)]
    dev = default_device()
    etok = torch.stack([e.tokens for e in ev]).to(dev)
    emask = torch.stack([e.mask for e in ev]).to(dev)
    T = etok.shape[-1]
    grp = torch.stack([sibling_height(g)[e.tokens[:, :, None], e.tokens[:, None, :]]
                       for g, e in zip(gens, ev)]).to(dev)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=dev), -1)
    km = emask[:, :, None, :] & emask[:, :, :, None] & causal

    def probe(m, step):
        with record({f"a{l}": m.blocks[l].attn_softmax for l in range(depth)}) as out:
            m(etok)
        ent = torch.stack([attention_entropy(out[f"a{l}"], emask[:, :, None, :], keep_dims=1)
                           for l in range(depth)]).cpu()
        sr = torch.stack([measure.stable_rank(b.W1) for b in m.blocks]).cpu()
        gl = grouped_attention_logits(out["a0"], grp, 4, km).cpu()
        return step, ent, sr, gl

    steps = SIZE["steps_dyn"]
    log = train(model, _batcher(gens, dgs, SIZE["N"]), steps=steps, lr=[lr for _, lr in runs],
                task=task, log_every=max(steps // 20, 1), probe=probe)
    st_, ent, sr, gl = zip(*log.records)
    return dict(steps=np.array(st_), ent=torch.stack(ent).double().numpy(),
                sr=torch.stack(sr).double().numpy(), logits=torch.stack(gl).numpy(),
                lr=np.array([lr for _, lr in runs]))


# --------------------------------------------------------------------------------------------
# joma.sec4.entropy_dynamics_trained / joma.sec4.rank_dynamics_trained
# --------------------------------------------------------------------------------------------
_DYN_ASSUME = ("Decoder-only transformer trained from scratch by Adam (next-token loss) on the "
               "Table 1 generator (C = 20, N_ch = 2, N_s = (10, 20)). CI: d = 32, 2 layers, 400 "
               "steps, batch 32, 2 seeds x lr in {3e-4, 1e-3, 1e-2}, stacked in one program. "
               "Wikitext (the paper's Figs. 6, 8 data) is not available offline.")
_REBOUND_NOTE = ("With the literal generator (rho = 1, tokens SORTED) the curves drop and then "
                 "plateau in 400 steps (top-layer entropy rebounds of 0.02-0.09 nats at lr "
                 "3e-3, 0-5% of stable rank, not consistent over seeds); the sorted-order "
                 "rebound properties run only under HYPOTHESIS_PROFILE=thorough (full size) "
                 "and were not run by this module's author.")
# Rebound run (issue 5 follow-up): same model and generator, tokens in RANDOM order (sorted
# order makes each next token nearly determined by its predecessor, so attention never needs to
# spread again), one lr, REB_SEEDS seeds stacked in one program.
REB_SEEDS, REB_LR, _REB_MEDIAN = 6, 3e-3, 0.25
_REB_ENT_NOTE = (
    "Rebound (asserted at CI size with tokens in RANDOM order, rho = 1, lr 3e-3, 6 seeds "
    "stacked): the top-layer entropy drops by 1.9-2.7 nats and then rebounds by H(T) - "
    "min_t H(t) = 0.32-1.59 nats (mean 0.87, s.d. 0.34 over 12 dev seeds; bottom layer "
    "0.28-0.94). Measured alternatives (dev, 4-6 seeds each, 'rebound' = top layer): "
    "random order lr 1e-3: 0.37-0.61; lr 1e-2: 0.05-1.61; d = 16, 800 steps: 0.40-1.50 "
    "(18 seeds); d = 16, 500 steps: 0.13-1.02; rho = 0.8 random lr 3e-3: 0.0-0.96 (one seed "
    "of 10 without rebound); rho = 0.7 lr 5e-3: 0.09-0.79; rho = 0.8 lr 2e-3, 800 steps, "
    "d = 16: 0.0-0.34; sorted order rho = 1: 0.02-0.09. So the rebound is robust at rho = 1 "
    "with random order and moderate lr, and weaker/less consistent at rho < 1 in this budget. "
    "The Fig. 8 lr ordering is asserted on the sorted-order runs (with random order the "
    "lr 1e-2 runs rebound too, so final entropies need not be ordered by lr).")
register(Claim(
    id="joma.sec4.entropy_dynamics_trained",
    where="Section 4 ('Relationship with rank ...'), Section 6 'Dynamics of Attention Sparsity', "
          "Figs. 6 and 8",
    statement="In trained transformers the attention entropy first drops, then rebounds (top "
              "layers; bottom layers may be suppressed); different learning rates lead to "
              "different dynamics: with large learning rate attention becomes extremely sparse.",
    assumptions=_DYN_ASSUME,
    prediction="drop: H(0) - min_t H(t) >= 0.3 nats in every layer and run with lr >= 1e-3; "
               "Fig. 8: final entropy at lr 1e-2 below lr 1e-3 by >= 0.2 nats (every layer, seed); "
               f"rebound (random token order, lr {REB_LR:g}, {REB_SEEDS} seeds): median over "
               f"seeds of H(T) - min_t H(t) >= {_REB_MEDIAN} nats in the top layer (and the drop "
               "before it >= 0.3 nats in every seed); (thorough, sorted order, full size): "
               "median rebound >= 0.05 nats",
    simulation="properties.joma.test_unmigrated.dynamics_run (sim.measure.attention_entropy over "
               "real query tokens)",
    metric="mean attention entropy (nats) over heads, eval samples and real query positions",
    tolerance="ordinal margins (0.3 / 0.2 nats); dev runs show drops 0.9-2.4 nats and lr gaps "
              ">= 0.36 nats, so the budget is far from the margin (false-fail << 1e-3). "
              f"Rebound: median of {REB_SEEDS} seeds >= {_REB_MEDIAN} nats; with per-seed "
              "rebounds ~ N(0.87, 0.34^2) (12 dev seeds) a seed falls below 0.25 with p ~ 0.034 "
              "and the median fails only if >= 3 of 6 do: false-fail ~ 8e-4. Negative control: "
              "the same statistic on the sorted-order runs (no rebound) must be below the "
              "threshold.",
    reading="'Attention sparsity' = attention entropy (Fig. 6's y-axis); 'top layers' = the "
            "last of the 2 layers. " + _REBOUND_NOTE + " " + _REB_ENT_NOTE,
    asymptotic='the model size d (and the step count)',
))
register(Claim(
    id="joma.sec4.rank_dynamics_trained",
    where="Section 4 ('Relationship with rank of MLP lower layer'), Section 6, Fig. 7",
    statement="The stable rank of the MLP lower layer W (projection into hidden nodes) first "
              "drops (salient components learned first) and then bounces back when the "
              "non-salient components catch up (salient for top layers; bottom layers may only "
              "drop).",
    assumptions=_DYN_ASSUME,
    prediction="drop: min_t sr(t) <= 0.95 sr(0) in every layer and run with lr = 1e-2 (lr 1e-3: drops of 1-15%, reported); bounce-back "
               "(printed, CI): median over the 32 ordering runs of joma.sec5.lowest_first (rho "
               "0.8, random order, lr 3e-3) of the top layer's sr(T) / min_t sr(t) - 1 >= 0.02, "
               "the thorough profile's margin and the same median reading as the entropy rebound; "
               "(thorough, full size): the same on the dynamics runs",
    simulation="properties.joma.test_unmigrated.dynamics_run (sim.measure.stable_rank of blocks[l].W1)",
    metric="stable rank ||W1||_F^2 / ||W1||_2^2",
    tolerance="ordinal margin 5% (dev runs: drops 8-40%)",
    reading=_REBOUND_NOTE + " Bounce-back searched for (issue 5 follow-up, relative rebound "
            "sr(T) / min_t sr(t) - 1 of the top layer's W1, 6 seeds each): rho = 1 random order "
            "lr 3e-3, d = 32, 400 steps: 0-7.5% (mostly 0, 12 seeds); d = 16, 800 steps: "
            "0-25% (median ~3%, 18 seeds); d = 16, 500 steps: 0-17%; rho = 0.8 random, d = 16, "
            "800 steps, lr 2e-3: 0-31% (two seed sets: 0, 15-31% / 0.6-15%); rho = 0.7, lr 3e-3: "
            "1-32%; rho = 0.9 / 0.7 lr 5e-3, 400 steps: 0-6%. Bounces of 10-30% occur in some "
            "seeds but not robustly (every setting has seeds with < 1%). The verdict is for the "
            "CI size only: the full-size runs (thorough, GPU) were never executed.",
    reason="At CI size the bounce-back is not the typical behaviour: on 32 stacked runs (rho "
           "0.8, random order, lr 3e-3, seeds 3000-3031) every run's top-layer stable rank drops "
           "(12-40%), but sr(T) / min_t sr(t) - 1 has median 0.6% (>= 2% in 28% of runs, >= 5% "
           "in 22%); the bottom layer: median 0, >= 2% in 12%. Training 4x longer does not bring it "
           "back: at 1600 steps (16 runs, seeds 4000-4015, dev) the stable rank keeps falling "
           "(median drop 60-66% in both layers) and is smallest at the last step in every run. "
           "Salient components are learned first (the drop); the non-salient ones do not catch "
           "up at this size.",
    asymptotic='the model size d (and the step count)',
))


def _dyn_select(r):
    return r["lr"] >= 1e-3


@audits("joma.sec4.entropy_dynamics_trained")
@examples(1)
@given(seed=SEED)
def test_joma_sec4_entropy_dynamics_trained_drop(seed):
    r = dynamics_run(seed)
    ent = r["ent"][:, :, _dyn_select(r)]  # (t, layer, run)
    drop = ent[0] - ent.min(0)
    check_at_least("joma.sec4.entropy_dynamics_trained", float(drop.min()), 0.3,
                   "entropy drop (nats), min over layers and runs",
                   control=float(np.abs(ent[0] - ent[0]).max()), what="first drops")
    lr = r["lr"]
    fin = r["ent"][-1]
    gap = fin[:, lr == 1e-3] - fin[:, lr == 1e-2]
    check_at_least("joma.sec4.entropy_dynamics_trained", float(gap.min()), 0.2,
                   "Fig. 8: larger lr -> sparser attention", control=float(-gap.max()),
                   what="lr ordering")


@audits("joma.sec4.rank_dynamics_trained")
@examples(1)
@given(seed=SEED)
def test_joma_sec4_rank_dynamics_trained_drop(seed):
    r = dynamics_run(seed)
    sr = r["sr"][:, :, r["lr"] == 1e-2]  # lr 1e-3 runs drop only 1-15% in 400 steps
    rel = 1 - sr.min(0) / sr[0]
    check_at_least("joma.sec4.rank_dynamics_trained", float(rel.min()), 0.05,
                   "relative stable-rank drop, min over layers and runs",
                   control=float(np.abs(1 - sr[0] / sr[0]).max()), what="first drops")


def rebound_run(seed: int):
    """The random-order dynamics run of the entropy rebound: REB_SEEDS seeds at lr REB_LR."""
    return dynamics_run(seed, n_seeds=REB_SEEDS, lrs=(REB_LR,), order="random")


def _rebound(curves):
    """curves (t, run) -> (drop H(0) - min_t H, rebound H(T) - min_t H) per run."""
    lo = curves.min(0)
    return curves[0] - lo, curves[-1] - lo


@audits("joma.sec4.entropy_dynamics_trained")
@examples(1)
@given(seed=SEED)
def test_joma_sec4_entropy_dynamics_trained_rebound_random_order(seed):
    r = rebound_run(seed)
    drop, reb = _rebound(r["ent"][:, -1])  # top layer, (run,)
    c = dynamics_run(seed)  # control: sorted-order runs, where the curves plateau
    _cdrop, creb = _rebound(c["ent"][:, -1, _dyn_select(c)])
    check_at_least("joma.sec4.entropy_dynamics_trained", float(drop.min()), 0.3,
                   "top-layer entropy drop before the rebound (nats), min over seeds",
                   control=0.0, what="drops (random order)")
    check_at_least("joma.sec4.entropy_dynamics_trained", float(np.median(reb)), _REB_MEDIAN,
                   f"top-layer rebound H(T) - min_t H(t) (nats), median over {REB_SEEDS} seeds",
                   control=float(np.median(creb)), what="then rebounds (random order)")


if SIZE is FULL:  # full-size rebound (thorough on a GPU); at CI size the claims above decide
    @audits("joma.sec4.entropy_dynamics_trained")
    @examples(1)
    @given(seed=SEED)
    def test_joma_sec4_entropy_dynamics_trained_rebound(seed):
        r = dynamics_run(seed)
        top = r["ent"][:, -1, _dyn_select(r)]
        reb = top[-1] - top.min(0)
        check_at_least("joma.sec4.entropy_dynamics_trained", float(np.median(reb)), 0.05,
                       "rebound of the top layer (nats), median over runs",
                       control=-float(np.median(reb)) - 1e-9, what="then rebounds")

    @audits("joma.sec4.rank_dynamics_trained")
    @examples(1)
    @given(seed=SEED)
    def test_joma_sec4_rank_dynamics_trained_rebound(seed):
        r = dynamics_run(seed)
        top = r["sr"][:, -1, _dyn_select(r)]
        reb = top[-1] / top.min(0) - 1
        check_at_least("joma.sec4.rank_dynamics_trained", float(np.median(reb)), 0.02,
                       "relative rebound of the top layer, median over runs",
                       control=-float(np.median(reb)) - 1e-9, what="then rebounds")


@audits("joma.sec4.rank_dynamics_trained", fails="top-layer bounce-back median < 2% at CI size")
@examples(1, printed_fails=True)
@given(seed=SEED)
def test_joma_sec4_rank_dynamics_trained_bounce_printed(seed):
    top = lowest_first_run(seed)["sr"][:, -1]  # (t, run), the 32 ordering runs
    reb = top[-1] / top.min(0) - 1
    check_at_least("joma.sec4.rank_dynamics_trained", float(np.median(reb)), 0.02,
                   "relative bounce-back of the top layer, median over runs", what="then bounces back")


# --------------------------------------------------------------------------------------------
# joma.sec5.lowest_first
# --------------------------------------------------------------------------------------------
LF_SEEDS, LF_LR, LF_RHO, LF_EXCEPT = 32, 3e-3, 0.8, 0.05
LF_LEAD = 0.2  # a group "leads" once its centred logit exceeds this (nats)


def lowest_first_run(seed: int):
    """The ordering run: LF_SEEDS models (random token order, rho = LF_RHO, lr LF_LR) stacked."""
    return dynamics_run(seed, n_seeds=LF_SEEDS, lrs=(LF_LR,), order="random", rho=LF_RHO)


def _first_over(lg):
    """(run, H): first logged index at which each group's logit exceeds LF_LEAD (int max if
    never)."""
    over = lg > LF_LEAD
    return np.where(over.any(0), over.argmax(0), np.iinfo(np.int64).max)


def lowest_first_stats(lg):
    """lg: (t, run, H = 1..3) centred layer-0 logits.  Per run: S1 = H = 1 has the largest
    logit averaged over the first half of training; S2 = H = 1 is the first group whose logit
    exceeds LF_LEAD (a group that never does counts as never)."""
    half = lg.shape[0] // 2
    s1 = np.argmax(np.nanmean(lg[:half], 0), -1) == 0
    first = _first_over(lg)
    s2 = (first[:, 0] < first[:, 1:].min(-1))
    return s1, s2


register(Claim(
    id="joma.sec5.lowest_first", where="Section 5 (after Theorem 5, Fig. 5(b, c))",
    statement="The learning dynamics first focuses on associating the tokens in the same lowest "
              "hierarchy as the query m (they co-occur a lot with m), then gradually reaches out "
              "to tokens l' whose common latent ancestor is higher.",
    assumptions=_DYN_ASSUME.replace("2 seeds x lr in {3e-4, 1e-3, 1e-2}",
                                    f"{LF_SEEDS} seeds at lr {LF_LR:g}") +
                f" Tokens in RANDOM order and rho = {LF_RHO} (at rho = 1 Theorem 5 gives "
                "P[y_l = 1 | y_m = 1] = 1 for every H: no co-occurrence hierarchy to act on; sorted "
                "order makes the next token nearly determined by its predecessor). Measured in the "
                "bottom attention layer.",
    prediction=f"printed, in its most favourable reading: the H = 1 group (keys under the same "
               f"s = 0 latent as the query) is the first whose centred attention logit exceeds "
               f"{LF_LEAD} (S2) in all runs but a {LF_EXCEPT:.0%} share of exceptions",
    simulation="properties.joma.test_unmigrated.dynamics_run (sim.measure.grouped_attention_logits "
               "with sim.joma.sibling_height), the runs stacked in one program",
    metric="per run: mean over eval samples, queries and heads of log p(key) minus the row "
           "mean of log p over real earlier keys, by H group, logged 20 times over training; "
           "count of runs with S2 (and S1: H = 1 largest over the first half, reported)",
    tolerance=f"binomial: the count must reach the 1e-3 lower quantile of Bin({LF_SEEDS}, "
              f"{1 - LF_EXCEPT:.2f}) (false-fail 1e-3 if the claim holds with {LF_EXCEPT:.0%} "
              "exceptions); power: a rate of 0.95 vs the measured ~0.5 is far beyond the "
              "smallest detectable gap (~0.17 at this n). The structure check (every run's group "
              "spread grows by >= 0.3) is a separate passing property.",
    reason=f"At CI size (d = 32, 2 layers, 400 steps) the H = 1 group leads no more than "
           f"modestly above chance. 64 dev runs (seeds 2000-2063, rho = {LF_RHO}, random order, lr "
           f"{LF_LR:g}): S2 in 26/64 (41%; 31 if ties with H = 2 count), S1 in 19/64 (30%); chance ~1/3 (one of "
           "three groups). First group to exceed 0.2: H = 1 in 26, H = 2 in 22, H = 3 in 8, ties "
           "in 8 of the 64; largest logit averaged over all of training: H = 1 in 34, H = 2 in "
           "24, H = 3 in 6. So the class-only group (H = 3) tends to come last, but the two lower "
           "groups are not ordered: the 'same lowest latent first' step is not seen. Earlier sweeps over rho in {0.7, 0.8, 0.9}, lr, batch, task and d "
           "(52 runs) gave S1 in ~46%. In runs where H = 1 does not lead its logit typically goes "
           "negative (to -0.3 .. -1.4) while H = 2 or H = 3 (class-discriminative) keys rise. "
           "Training 4x longer (1600 steps, 16 runs, dev) gives S2 in 5/16, S1 in 7/16. "
           "Whether a larger model (d = 1024, 10k steps, thorough on a GPU) shows the ordering "
           "was not run: no device was lent.",
    reading="The verdict is for the audited size only; the paper's Fig. 5(b, c) evidence is "
            "about the reduced JoMA dynamics, which joma.theorem5 / joma.sec5.* audit separately. "
            "Earlier CI-size notes: in the rho = 1 DAG generator runs the attention often moved "
            "towards H = 3 keys and away from siblings; with rho = 0.8, lr 1e-2 the layer-0 "
            "logits diverge to +-50.",
    asymptotic='the model size d (and the step count)',
))


@audits("joma.sec5.lowest_first", fails="H = 1 leads in ~half of the runs, not (nearly) all")
@examples(1, printed_fails=True)
@given(seed=SEED)
def test_joma_sec5_lowest_first_printed(seed):
    lg = lowest_first_run(seed)["logits"][:, :, 1:4]
    _, s2 = lowest_first_stats(lg)
    need = int(stats.binom.ppf(1e-3, LF_SEEDS, 1 - LF_EXCEPT))
    check_at_least("joma.sec5.lowest_first", float(s2.sum()), float(need),
                   f"runs with H = 1 first >= Bin({LF_SEEDS}, {1 - LF_EXCEPT:.2f}) 1e-3 quantile",
                   what="H = 1 first (S2)")


@audits("joma.sec5.lowest_first")
@examples(1)
@given(seed=SEED)
def test_joma_sec5_lowest_first_structure(seed):
    r = dynamics_run(seed)
    lg = r["logits"][:, _dyn_select(r)][:, :, 1:4]  # (t, run, H=1..3)
    spread = np.nanmax(lg, -1) - np.nanmin(lg, -1)  # (t, run)
    grow = spread.max(0) - spread[0]  # growth of the spread over the random init's
    check_at_least("joma.sec5.lowest_first", float(grow.min()), 0.3,
                   "hierarchy-structured bottom attention (growth of the group spread of "
                   "centred logits)", control=float(np.abs(spread[0] - spread[0]).max()),
                   what="attention structured by H")


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------
def _plot_dyn(key, ylabel):
    def plot(path):
        import matplotlib.pyplot as plt
        r = dynamics_run(0)
        rr = rebound_run(0)  # random token order (the setting of the asserted rebound)
        L = r[key].shape[1]
        fig, axs = plt.subplots(2, L, figsize=(4 * L, 6.4), squeeze=False)
        for l in range(L):
            for j, lr in enumerate(r["lr"]):
                axs[0, l].plot(r["steps"], r[key][:, l, j], color=f"C{list(DYN_LRS).index(lr)}",
                               label=f"lr={lr:g}" if j < len(DYN_LRS) else None)
            axs[0, l].set_title(f"layer {l}, sorted tokens")
            for j in range(rr[key].shape[2]):
                axs[1, l].plot(rr["steps"], rr[key][:, l, j], color="C3", alpha=0.7,
                               label=f"lr={REB_LR:g}, {REB_SEEDS} seeds" if j == 0 else None)
            axs[1, l].set_title(f"layer {l}, random token order")
            for i in range(2):
                axs[i, l].set_xlabel("Adam step")
                axs[i, l].set_ylabel(ylabel)
        axs[0, 0].legend(fontsize=7)
        axs[1, 0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return plot


def _plot_lowest_first(path):
    """Top: the group logits of the first four ordering runs; bottom right: which group is the
    first to exceed LF_LEAD, over all LF_SEEDS runs (H = 1 is the claim's prediction)."""
    import matplotlib.pyplot as plt
    r = lowest_first_run(0)
    lg = r["logits"][:, :, 1:4]
    n = 4
    fig, axs = plt.subplots(1, n + 1, figsize=(2.6 * (n + 1), 2.8), squeeze=False)
    for j in range(n):
        for h in (1, 2, 3):
            axs[0, j].plot(r["steps"], r["logits"][:, j, h], label=f"H={h}")
        axs[0, j].set_title(f"run {j}, lr={r['lr'][j]:g}, rho={LF_RHO}", fontsize=8)
    axs[0, 0].set_ylabel("centred logit, layer 0")
    axs[0, 0].legend(fontsize=7)
    first = _first_over(lg)
    tie = (first == first.min(-1, keepdims=True)).sum(-1) > 1
    lead = np.where(~(lg > LF_LEAD).any((0, 2)), 4, np.where(tie, 3, first.argmin(-1)))
    axs[0, n].bar(["H=1", "H=2", "H=3", "tie", "none"], np.bincount(lead, minlength=5))
    axs[0, n].axhline(LF_SEEDS / 3, color="k", ls=":", lw=0.8, label="chance (1/3)")
    axs[0, n].set_title(f"first group > {LF_LEAD} ({LF_SEEDS} runs)", fontsize=8)
    axs[0, n].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


attach_plot("joma.sec4.entropy_dynamics_trained", _plot_dyn("ent", "attention entropy (nats)"))
attach_plot("joma.sec4.rank_dynamics_trained", _plot_dyn("sr", "stable rank of W1"))
attach_plot("joma.sec5.lowest_first", _plot_lowest_first)
