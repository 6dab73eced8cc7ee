"""The runs of the declared path of the stage lemmas (issue 35): the exact reduced dynamics
(reduced.py) from the full model's init on every rung of setting.PATH_S, each batch of seeds run
to 1.25 x the first step with every noise aligned (the stage runs' stop rule), and per seed the
statistics signgd.lemma4_3 (1), (2), lemma4_4, lemma4_6, lemma4_7, lemma4_8 (2) and stage_order
read.

A "with high probability" statement is decided on these runs by properties.procedures.check_whp:
per run (seed) "any failure" of the statement, per rung, along the path; the per-item fractions
are reported beside.  The path itself (its rungs, the clauses of Condition 3.1 it follows and
those it does not) is declared in setting.py.  Data, not claims.  Imports go one way:
setting.py, common.py and reduced.py are read here; the claim files read this module.
"""

from __future__ import annotations

import numpy as np

from properties.cache import run_cache
from properties.readings import lookup
from properties.settings import size
from properties.signgd.common import (first_from, lemma46_failures, off_vote_neurons, split_votes,
                                      stage4_pairs, vote_time)
from properties.signgd.reduced import (AllNoiseAligned, as_trace, REDUCED_KEYS, reduced_setup,
                                       reduced_softmax, run_reduced_until, seed_batches,
                                       training_loss)
from properties.signgd.setting import (PATH_CAP, PATH_CHUNK, PATH_S, PATH_SEED_OFFSET, PATH_SEEDS,
                                       PATH_TOP_EXTRA, TAIL, path_rung)
from sim import signgd as sim

NEAR = lookup("near 1/2").level  # a softmax output 'near 1/2' (the glossary's level, 0.05)
PATH_T2 = ("on the path T_2 is read with ties as ties: the first step from which every (neuron, "
           "sample) pair is aligned or tied at step resolution (signs differing, both flipped at "
           "that step: a and b move towards each other by the same c_i = eta ||xi_i||_1 and cross "
           "zero in the same step, a period-2 oscillation) up to T_4^-; stage_times' T_2 (every "
           "pair strictly aligned, which waits for the tied pairs until near T_4^-) is reported "
           "beside")
PATH_T3E = (f"the end of Stage III read by Lemma 4.4's own 'softmax still near 1/2': the last step "
            f"before some sample's s_11 or s_21 is more than {NEAR:g} from 1/2 (the glossary's "
            f"'near 1/2'), capped at T_4^- - 1")

# the per-seed statistics of a rung (rungs x seeds once stacked); the per-seed arrays of other
# shapes (a, b at T_2, the per-sample softmax deviations) are kept per rung in lists
PER_SEED = ("T1", "T2", "T3", "T3v", "T4m", "T4p", "T4", "Tq", "Tk",
            # T_2 with ties as ties (T2, the path's reading), stage_times' T_2 (every pair
            # strictly aligned, T2_strict), the pairs tied at T2; the end of Stage III (T3e)
            "T2_strict", "tied_T2", "T3e",
            # signgd.lemma4_4: neurons off their vote at the end of Stage III (T3e); the 2 m_k
            # votes by even / uneven voters, off, as trained and with alpha, beta at init (the
            # null); beside, the neurons off their vote at T_4^- - 1 (off_vote_T4m)
            "off_vote", "neurons", "votes", "even", "off_even", "off_uneven", "off_even_frozen",
            "off_uneven_frozen", "off_vote_T4m",
            # the 'final sign' reading: neurons whose alpha, beta at the end of the run are off
            # the votes at the end of Stage III, as trained and with alpha, beta at init
            "final_off_vote", "final_off_vote_frozen",
            # signgd.lemma4_6: wrong-sign key noises at T_4^-, those that never turn, those that
            # move away from sgn alpha after their turn; and with alpha, a, b at init (the null)
            # (back: ties as ties, a move within one step of zero not counted; back_strict:
            # every move away counted)
            "wrong", "never", "back", "back_strict", "wrong_frozen",
            # the same of the query noise (wrong_q, never_q, back_q): lemma4_6's rival
            "wrong_q", "never_q", "back_q",
            # beside it: neurons whose query signal alpha_s changes sign after T_4^- (flip), and
            # the failing key noises (never or back) of such neurons (bad_flip)
            "flip", "bad_flip",
            # signgd.lemma4_7: both-wrong pairs at T_4^- and their order (align_b vs align_a)
            "both", "key_first", "query_first", "ties",
            # signgd.lemma4_8 (2): the training loss L_S at T_4 (every noise aligned)
            "LS_T4")
PER_RUNG = ("a_T2", "b_T2", "c", "xi_l2", "eta", "sigma_0", "dev_0", "dev_T2", "dev_T2_strict",
            "dev_T3", "dev_T4m")


def _softmax_dev(h, k, j):
    """Per seed and sample, max(|s_11 - 1/2|, |s_21 - 1/2|) at the per-seed steps k (S, n)."""
    s11, s21 = reduced_softmax(h["alpha"][k, j], h["beta"][k, j], h["a"][k, j], h["b"][k, j])
    return np.maximum(np.abs(s11 - 0.5), np.abs(s21 - 0.5))


def t2_ties_as_ties(a, b, t, T4m):
    """(T_2, tied) per seed: T_2 read with ties as ties (PATH_T2), and the (T, S) count of pairs
    tied at each step.  a, b (T, S, m_k, n) logged every step; T4m (S,).  A pair is tied at a
    step where its signs differ and both flipped at that step: a and b move towards each other
    by the same c_i, cross zero in the same step, and do so again at the next (a period-2
    oscillation, aligned up to one step)."""
    sa, sb = sim._sign8(a), sim._sign8(b)
    mis = sa != sb
    tied = np.zeros_like(mis)
    tied[1:] = mis[1:] & (sa[1:] != sa[:-1]) & (sb[1:] != sb[:-1])
    before = np.asarray(t)[:, None] < np.asarray(T4m)[None, :]
    ok = (~mis | tied).all((-1, -2)) | ~before
    return first_from(ok, t), tied.sum((-1, -2))


def end_of_stage3(h, T4m, near, chunk=1000):
    """(S,) the end of Stage III read by Lemma 4.4's own 'softmax still near 1/2' (PATH_T3E): the
    first step at which some sample's s_11 or s_21 is more than `near` from 1/2, capped at T_4^-
    (Lemma 4.5's decay of s_21 is Stage IV's)."""
    S = h["alpha"].shape[1]
    T4m = np.asarray(T4m, dtype=np.float64)
    # the steps that can matter: up to the latest T_4^- (all of them if one is inf)
    n_t = h["alpha"].shape[0] if not np.isfinite(T4m).all() else min(
        h["alpha"].shape[0], int(T4m.max()) + 1)
    first = np.full(S, np.inf)
    for k0 in range(0, n_t, chunk):
        al, be, a, b = (h[k_][k0:min(k0 + chunk, n_t)] for k_ in ("alpha", "beta", "a", "b"))
        m_k, n_ = a.shape[-2:]
        with np.errstate(over="ignore"):  # exp overflow: a saturated softmax, 0 or 1
            s11, s21 = reduced_softmax(al.reshape(-1, m_k), be.reshape(-1, m_k),
                                       a.reshape(-1, m_k, n_), b.reshape(-1, m_k, n_))
        over = (np.maximum(np.abs(s11 - 0.5), np.abs(s21 - 0.5)) > near).any(-1)
        over = over.reshape(al.shape[0], S)
        hit = over.any(0) & ~np.isfinite(first)
        first[hit] = k0 + np.argmax(over[:, hit], axis=0)
    return np.minimum(first, T4m)


def _batch(seeds, rung):
    """One batch of seeds on one rung: the reduced run to 1.25 x the first step with every noise
    aligned, and its per-seed statistics (PER_SEED) and per-rung pieces (PER_RUNG)."""
    st_, prob, _ = reduced_setup(seeds, rung["s"], rung["sigma_p"], rung["sigma_0"], rung["eps"],
                                 m_v=rung["m_v"], m_k=rung["m_k"], d=rung["d"])
    h = run_reduced_until(st_, AllNoiseAligned(), TAIL, PATH_CAP, chunk=1000)
    tr = as_trace(h)
    T = sim.stage_times(tr)
    last = len(tr.t) - 1
    S, j = len(seeds), np.arange(len(seeds))
    ev = stage4_pairs(h, tr.t, T["T4m"], tie_scale=st_.c)
    out = {k_: T[k_] for k_ in ("T1", "T3", "T4m", "T4p", "T4")}
    T2, tied = t2_ties_as_ties(h["a"], h["b"], tr.t, T["T4m"])
    out.update(Tq=ev["Tq"], Tk=ev["Tk"], T3v=vote_time(h), T2=T2, T2_strict=T["T2"],
               T3e=end_of_stage3(h, T["T4m"], NEAR))

    def at(x):  # per-seed step of an event, the last step where it never came
        return np.where(np.isfinite(x), x, last).astype(int)

    k2, k4 = at(T2), at(T["T4m"])
    out["tied_T2"] = tied[k2, j]
    k3 = at(np.minimum(out["T3v"], T["T4m"]))
    pieces = dict(a_T2=np.abs(h["a"][k2, j]), b_T2=np.abs(h["b"][k2, j]), c=st_.c,
                  xi_l2=(prob.train.xi ** 2).sum(-1).sqrt().numpy()[..., 0],
                  eta=np.asarray(st_.eta), sigma_0=np.full(S, rung["sigma_0"]),
                  dev_0=_softmax_dev(h, np.zeros(S, dtype=int), j),
                  dev_T2=_softmax_dev(h, k2, j), dev_T3=_softmax_dev(h, k3, j),
                  dev_T2_strict=_softmax_dev(h, at(T["T2"]), j),
                  dev_T4m=_softmax_dev(h, k4, j))
    # Lemma 4.4: the votes at the end of Stage III (the last step before T3e), with alpha, beta
    # as trained and at init (the null); beside, the votes at T_4^- - 1 (inside Stage IV)
    k4v = np.maximum(k4 - 1, 0)
    v4 = split_votes(h["alpha"][k4v, j], h["beta"][k4v, j], h["a"][k4v, j], h["b"][k4v, j])
    out["off_vote_T4m"] = off_vote_neurons(v4["off"])
    kv = np.maximum(at(out["T3e"]) - 1, 0)
    a, b = h["a"][kv, j], h["b"][kv, j]
    for tag, al, be in (("", h["alpha"][kv, j], h["beta"][kv, j]),
                        ("_frozen", h["alpha"][0], h["beta"][0])):
        v = split_votes(al, be, a, b)
        off, even = v["off"], v["even"]
        if not tag:
            out.update(off_vote=off_vote_neurons(off), neurons=np.full(S, a.shape[1]),
                       votes=np.full(S, off.shape[-1]), even=even.sum(-1))
            # the paper's reading of Lemma 4.4 (1), 'the final sign of the query & key signals
            # [is] determined by' the vote: alpha, beta at the end of the run against the votes
            # at the end of Stage III
            out["final_off_vote"] = off_vote_neurons(split_votes(
                h["alpha"][last], h["beta"][last], a, b)["off"])
        else:  # the null's final signs are its init signs
            out["final_off_vote_frozen"] = off_vote_neurons(off)
        out["off_even" + tag] = (off & even).sum(-1)
        out["off_uneven" + tag] = (off & ~even).sum(-1)
    # Lemma 4.6: every wrong-sign key noise at T_4^- turns, then moves towards sgn alpha until
    # it has it for good; the null (alpha, a, b at init): the key noises against sgn alpha(0)
    w = ev["wrong_b"]
    never, back = lemma46_failures(ev)
    out.update(wrong=w.sum((1, 2)), never=never.sum((1, 2)), back=back.sum((1, 2)),
               back_strict=(w & (ev["back_b"] > 0)).sum((1, 2)),
               wrong_frozen=(np.sign(h["b"][0]) != np.sign(h["alpha"][0])[..., None])
               .sum((1, 2)))
    never_q, back_q = lemma46_failures(ev, "a")
    out.update(wrong_q=ev["wrong_a"].sum((1, 2)), never_q=never_q.sum((1, 2)),
               back_q=back_q.sum((1, 2)))
    sal = sim._sign8(h["alpha"])  # (T, S, m_k)
    after = np.arange(len(tr.t))[:, None] >= k4[None, :]  # (T, S): from T_4^- on
    flip = ((sal != sal[k4, j][None]) & after[..., None]).any(0) & np.isfinite(T["T4m"])[:, None]
    out.update(flip=flip.sum(-1), bad_flip=((never | back) & flip[..., None]).sum((1, 2)))
    # Lemma 4.7: of the pairs with both noises against sgn alpha at T_4^-, the order in which
    # they align for good (a tie at step resolution is a tie)
    both = ev["wrong_a"] & ev["wrong_b"]
    ka, kb = ev["align_a"], ev["align_b"]
    out.update(both=both.sum((1, 2)), key_first=(both & (kb < ka)).sum((1, 2)),
               query_first=(both & (ka < kb)).sum((1, 2)), ties=(both & (ka == kb)).sum((1, 2)))
    # Lemma 4.8 (2): L_S(T_4), the mean logistic loss over the training samples at T_4
    k_4 = at(T["T4"])
    out["LS_T4"] = training_loss(*(h[k_][k_4, j] for k_ in REDUCED_KEYS))
    return out, pieces, int(tr.t[-1])


@run_cache(maxsize=4)
def _path_run(first: int, kappa_p: float, n_seeds: int, rungs: tuple, top_extra: int = 0):
    # one row per block of n_seeds seeds: every rung's first block, then the largest rung's
    # second one (seeds n_seeds .. 2 n_seeds - 1) where top_extra
    blocks = [(s, first) for s in rungs] + ([(max(rungs), first + n_seeds)] if top_extra else [])
    per_seed = {k_: [] for k_ in PER_SEED}
    per_rung = {k_: [] for k_ in PER_RUNG}
    steps, params = [], []
    for s, first_b in blocks:
        rung = path_rung(s, kappa_p)
        outs, pieces, longest = [], [], 0
        for seeds in seed_batches(first_b, n_seeds, PATH_CHUNK):
            o, p, n_ = _batch(seeds, rung)
            outs.append(o), pieces.append(p)
            longest = max(longest, n_)
        for k_ in PER_SEED:
            per_seed[k_].append(np.concatenate([o[k_] for o in outs]).astype(np.float64))
        for k_ in PER_RUNG:
            per_rung[k_].append(np.concatenate([p[k_] for p in pieces]))
        steps.append(longest), params.append(rung)
    return dict(sizes=tuple(int(s) for s, _ in blocks), steps=tuple(steps), rungs=tuple(params),
                seeds=tuple((f - first, f - first + n_seeds) for _, f in blocks),
                first=int(first), **{k_: np.array(v) for k_, v in per_seed.items()}, **per_rung)


def path_run(seed0, kappa_p):
    """The declared path at the named size (`--size`): per block of seeds (rows: each rung of
    PATH_S, seed0 + PATH_SEED_OFFSET + 0, 1, ..., PATH_SEEDS of them, then, where
    PATH_TOP_EXTRA, a second block at the largest rung, the next PATH_SEEDS seeds; `sizes`
    gives each row's rung, `seeds` its seeds' range; batches of PATH_CHUNK each run to its own
    stop) and seed (columns) the PER_SEED statistics; per row the PER_RUNG pieces (lists over
    rows: a_T2, b_T2 (S, m_k, n) = |a|, |b| at each seed's T_2; c = eta ||xi_i||_1, xi_l2 (S,
    n); eta, sigma_0 (S,); dev_0 / dev_T2 / dev_T2_strict / dev_T3 / dev_T4m (S, n), the largest
    of |s_11 - 1/2|, |s_21 - 1/2| per sample at init, at T_2 (ties as ties, PATH_T2), at
    stage_times' T_2, at T_3 = min(vote time, T_4^-) and at T_4^-); `rungs` (every parameter of
    each row's rung), `steps` (the longest batch per row).  A statement is decided per rung:
    common.check_path_whp pools the rows of a rung."""
    first = int(seed0) + PATH_SEED_OFFSET
    n_seeds, extra = PATH_SEEDS[size()], PATH_TOP_EXTRA[size()]
    if extra not in (0, n_seeds):
        raise ValueError(f"PATH_TOP_EXTRA[{size()!r}] must be 0 or PATH_SEEDS ({n_seeds}): one "
                         f"more block of the same seeds per row, got {extra}")
    return _path_run(first, float(kappa_p), n_seeds, PATH_S[size()], extra)
