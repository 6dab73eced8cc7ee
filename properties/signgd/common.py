"""Shared statistics of the SignGD properties: functions of logged quantities and the checks
several claims make on them.  No runs and no claims: this module imports nothing of the paper
package but its setting (runs.py, reduced.py, path.py and the claim files import from it)."""

from __future__ import annotations

import numpy as np

from properties.check import (Inconclusive, Threshold, Tolerance, check_at_least, check_close,
                              check_trend)
from properties.readings import lookup
from properties.policy import CLAIM_SHARE
from properties.procedures import check_whp
from properties.registry import rival
from properties.settings import size
from properties.signgd.setting import PATH_LOOKS, PATH_UNFOLLOWED
from sim import signgd as sim


# The allocation rule of the false-fail budget (report.CLAIM_SHARE, fixed before any run): a
# claim's checks, summed over its draws under `ci`, spend at most CLAIM_SHARE = 1e-4.
def claim_rate(draws: int, checks: int = 1, share: float = CLAIM_SHARE) -> float:
    """The false-fail rate of one check such that `checks` checks on each of `draws` draws (the
    claim's draws under `ci`) spend at most the claim's share of the budget."""
    if not (isinstance(draws, int) and draws >= 1):
        raise ValueError(f"draws must be an int >= 1, got {draws!r}")
    if not (isinstance(checks, int) and checks >= 1):
        raise ValueError(f"checks must be an int >= 1, got {checks!r}")
    if not (0 < share < 1):
        raise ValueError(f"share must be in (0, 1), got {share!r}")
    return share / (draws * checks)

EXACT_MODEL = "exact inequality at the reading's level (deterministic statistic of the run)"


def exact(model: str = EXACT_MODEL) -> Threshold:
    """The threshold 0 of an exact inequality between deterministic statistics of a run (event
    times, counts, a statistic at a reading's level): derived, false-fail 0.  `model` says what
    is exact (the report shows it)."""
    return Threshold(0.0, model, "derived", 0.0)


EXACT = exact()

FRACTION_NAMES = ("aligned", "P(keep|++)", "P(++|+-)", "P(++|-+)", "P(keep|--)",
                  "positive share of aligned")


def table_parts(M):
    """Numerators and denominators of Table 2's six fractions for a (..., 4, 4) count table
    (rows: sign of (a, b) at init; columns at the end; order ++, +-, -+, --)."""
    M = np.asarray(M, dtype=np.float64)
    al = M[..., :, 0].sum(-1) + M[..., :, 3].sum(-1)
    num = np.stack([al, M[..., 0, 0], M[..., 1, 0], M[..., 2, 0], M[..., 3, 3],
                    M[..., :, 0].sum(-1)], -1)
    den = np.stack([M.sum((-1, -2)), M[..., 0, :].sum(-1), M[..., 1, 0] + M[..., 1, 3],
                    M[..., 2, 0] + M[..., 2, 3], M[..., 3, :].sum(-1), al], -1)
    return num, den


# --------------------------------------------------------------------------------------------
# Pieces of a logged run: values at per-seed steps, Table 2's sign table, Lemma 4.4's votes
# --------------------------------------------------------------------------------------------
def at_steps(x, times):
    """x: (T, S, ...) -> (S, ...) taken at per-seed logged steps `times` (ints)."""
    return np.stack([x[int(t), j] for j, t in enumerate(times)])


def sign_table(a0, b0, a1, b1):
    """Table 2's 4 x 4 count table of the pairs (rows: the sign of (a, b) at init, columns at the
    end; order ++, +-, -+, --)."""
    def lab(a, b):
        return np.where(a > 0, np.where(b > 0, 0, 1), np.where(b > 0, 2, 3))
    r, c = lab(a0, b0).ravel(), lab(a1, b1).ravel()
    M = np.zeros((4, 4), dtype=int)
    np.add.at(M, (r, c), 1)
    return M


def table_fractions(M):
    """aligned; P(keep|++); P(++|+-); P(++|-+); P(keep|--); positive share among aligned."""
    M = np.asarray(M, float)
    tot = M.sum()
    al = M[:, 0].sum() + M[:, 3].sum()
    return np.array([al / tot, M[0, 0] / M[0].sum(), M[1, 0] / (M[1, 0] + M[1, 3]),
                     M[2, 0] / (M[2, 0] + M[2, 3]), M[3, 3] / M[3].sum(), M[:, 0].sum() / al]), \
        np.array([tot, M[0].sum(), M[1, 0] + M[1, 3], M[2, 0] + M[2, 3], M[3].sum(), al])


def sign_patterns(n):
    """The 2^n sign patterns of n entries (rows of +-1)."""
    return np.array([[1 - 2 * ((k >> i) & 1) for i in range(n)] for k in range(2 ** n)], float)


VOTE_RULES = ("sum", "majority")


def split_votes(alpha, beta, a, b, rule="sum"):
    """The 2 m_k votes per instance of Lemma 4.4 (alpha_s by sgn sum_i b_{s,i}, then beta_s by
    -sgn sum_i a_{s,i}; alpha, beta (S, m_k); a, b (S, m_k, n)), each (S, 2 m_k): `off`, the
    vote not followed; `even`, the voters' signs split evenly (n / 2 each: possible for even n).
    A neuron follows its vote where neither of its two is off.  rule="majority" counts the
    voters' signs instead of summing their values (a rival reading of the vote)."""
    if rule not in VOTE_RULES:
        raise ValueError(f"rule: {rule!r} is not one of {VOTE_RULES}")
    n_ = b.shape[-1]
    if rule == "sum":
        vb, va = b.sum(-1), a.sum(-1)
    else:
        vb, va = np.sign(b).sum(-1), np.sign(a).sum(-1)
    return dict(off=np.concatenate([np.sign(alpha) != np.sign(vb),
                                    np.sign(beta) != -np.sign(va)], -1),
                even=np.concatenate([(b > 0).sum(-1) * 2 == n_, (a > 0).sum(-1) * 2 == n_], -1))


def off_vote_neurons(off):
    """Per instance, the neurons off their vote (either of their two votes off; `off` as
    split_votes gives it)."""
    m = off.shape[-1] // 2
    return (off[..., :m] | off[..., m:]).sum(-1)


def _lemma45_checks(cid, q, T4m_all, prefix):
    """Lemma 4.5 on another run (a Table 3 variant, Adam): per seed, -log(2 s21) fitted against
    log t on [T_4^- / 4, T_4^-] has exponent >= 1 (control: the sub-exponential
    s21 = 1/2 (1 + t / T_4^-)^-1 fitted the same way), and |s11 - 1/2| <= 0.1 up to T_4^-."""
    ps, pc, dev = [], [], 0.0
    for j, T4m in enumerate(np.asarray(T4m_all).astype(int)):
        t = np.arange(max(T4m // 4, 1), T4m + 1)
        y = -np.log(2 * q["s21"][t, j].mean(-1))
        ps.append(np.polyfit(np.log(t), np.log(np.maximum(y, 1e-300)), 1)[0])
        pc.append(np.polyfit(np.log(t), np.log(np.log1p(t / T4m)), 1)[0])
        dev = max(dev, float(np.abs(q["s11"][: T4m + 1, j] - 0.5).max()))
    check_at_least(cid, float(min(ps)) - 1.0, 0.0, "fitted exponent p >= 1",
                   control=float(max(pc)) - 1.0, what=prefix + "Lemma 4.5 s21 decay")
    check_at_least(cid, 0.1 - dev, 0.0, "|s11 - 1/2| <= 0.1 up to T_4^-",
                   control=0.1 - float(np.abs(q["s11"][-1] - 0.5).max()), what=prefix + "Lemma 4.5 s11")


def lemma45_stats(s21, s11, T4m_all):
    """Lemma 4.5's two statistics on a run logged every step (no control; for the migrated
    Adam / Table 3 variant claims): per seed, the least-squares exponent p of -log(2 mean_i
    s21(t)) against t on [T_4^- / 4, T_4^-] (-inf where that is not positive somewhere: s21 has
    not left 1/2), minimised over seeds; and max over seeds, samples, t <= T_4^- of |s11 - 1/2|.
    s21, s11: (steps, seeds, n); T4m_all: (seeds,), inf where a seed had no T_4^- (then
    (-inf, inf): nothing to fit)."""
    T4m_all = np.asarray(T4m_all, dtype=np.float64)
    if not np.all(np.isfinite(T4m_all)) or np.any(T4m_all < 2):
        return -np.inf, np.inf
    ps, dev = [], 0.0
    for j, T4m in enumerate(T4m_all.astype(int)):
        t = np.arange(max(T4m // 4, 1), T4m + 1)
        y = -np.log(2 * s21[t, j].mean(-1))
        ps.append(float(np.polyfit(np.log(t), np.log(y), 1)[0]) if np.all(y > 0) else -np.inf)
        dev = max(dev, float(np.abs(s11[: T4m + 1, j] - 0.5).max()))
    return min(ps), dev


# --------------------------------------------------------------------------------------------
# Stage IV per-pair events (signgd.lemma4_6, signgd.lemma4_7, signgd.lemma4_8)
# --------------------------------------------------------------------------------------------
def first_from(ok, t):
    """ok (T, ...) bool over logged steps t (T,): per trailing index, the first logged step from
    which ok holds through the last one (inf if it fails at the last step)."""
    ok = np.asarray(ok, dtype=bool)
    T = ok.shape[0]
    bad = ~ok
    last_bad = T - 1 - np.argmax(bad[::-1], axis=0)
    k = np.where(bad.any(0), last_bad + 1, 0)
    tt = np.append(np.asarray(t, dtype=np.float64), np.inf)
    return tt[k]


def stage4_pairs(q, t, T4m, tie_scale=None):
    """Per (seed, neuron, sample) pair, from a run logged every step (q: alpha (T, S, m_k), a, b
    (T, S, m_k, n); t (T,)) and the per-seed T_4^- (S,), for x in (a, b):
      wrong_x:  sgn x != sgn alpha at T_4^- (the pairs Lemmas 4.6-4.7 speak of);
      align_x:  first step from which sgn x = sgn alpha through the end of the run (inf: never);
      turn_x:   first step k >= T_4^- at which x moves towards sgn alpha(k) (inf: never);
      back_x:   number of steps k in [turn_x, align_x) at which x does not move towards
                sgn alpha(k) (0: from its turn on it moves straight to alignment);
    and per seed: Tk / Tq, the first step from which every key / every query noise has the
    sign of alpha (T_4^+, and the query-noise counterpart of T_4^+), inf where never.
    With tie_scale (S, n), the step c_i = eta ||xi_i||_1 of sample i's noise, also
      back_untied_x: back_x without the moves made within one step of zero (|x(k)| <= c_i),
                     where the sign of the move is decided at step resolution (a tie).
    A seed with T_4^- = inf has no wrong pair and Tk, Tq as measured."""
    t = np.asarray(t)
    if len(t) < 2:  # the entries read steps k -> k + 1
        raise ValueError(f"stage4_pairs needs t with at least 2 logged steps, got {len(t)}")
    if np.any(np.diff(t) != 1):
        raise ValueError("stage4_pairs needs a run logged every step")
    T4m = np.asarray(T4m, dtype=np.float64)
    sa = sim._sign8(q["alpha"])[..., None]  # (T, S, m_k, 1), int8
    idx = np.arange(len(t))[:, None, None, None]
    k4 = np.where(np.isfinite(T4m), np.searchsorted(t, np.minimum(T4m, t[-1])), len(t))
    k4 = k4[None, :, None, None]
    out = {}
    for x in ("a", "b"):
        X = np.asarray(q[x])
        ok = sim._sign8(X) == sa
        at4 = np.take_along_axis(ok, np.minimum(k4, len(t) - 1), axis=0)[0]
        out["wrong_" + x] = ~at4 & (k4[0] < len(t))
        out["align_" + x] = first_from(ok, t)
        toward = sim._diff_sign8(X) == sa[:-1]  # step k -> k + 1 towards sgn alpha(k)
        cand = toward & (idx[:-1] >= k4)
        tt = np.append(np.asarray(t[:-1], dtype=np.float64), np.inf)
        kt = np.where(cand.any(0), np.argmax(cand, axis=0), len(t) - 1)
        out["turn_" + x] = tt[kt]
        ka = np.searchsorted(t, np.minimum(out["align_" + x], t[-1]))
        ka = np.where(np.isfinite(out["align_" + x]), ka, len(t) - 1)
        win = (idx[:-1] >= kt[None]) & (idx[:-1] < ka[None])
        out["back_" + x] = (win & ~toward).sum(0)
        if tie_scale is not None:
            c = np.asarray(tie_scale)[None, :, None, :]
            win &= ~toward
            win &= (X[:-1] > c) | (X[:-1] < -c)  # |x| > c without a float temporary of |x|
            out["back_untied_" + x] = win.sum(0)
        out["T" + ("q" if x == "a" else "k")] = first_from(ok.all((-1, -2)), t)
    return out


def lemma46_failures(ev, x="b"):
    """Lemma 4.6's two failures per (seed, neuron, sample) pair, from stage4_pairs(...,
    tie_scale=...): (never, back), the key noises (x = "b"; the query noises, x = "a", for its
    rival) against sgn alpha at T_4^- that never turn, and those that move away from sgn alpha
    after their turn before they have it for good (a move within one step of zero is a tie, not
    counted).  Disjoint: a noise that never turns has no step after its turn."""
    w = ev["wrong_" + x]
    return w & ~np.isfinite(ev["turn_" + x]), w & (ev["back_untied_" + x] > 0)

def vote_time(hist):
    """(S,) first step at which the majority vote is complete for every neuron: sgn(alpha_s) =
    sgn(sum_i b_{s,i}) and sgn(beta_s) = -sgn(sum_i a_{s,i}) (Lemma 4.4's event), inf if never;
    hist: alpha, beta (T, S, m_k), a, b (T, S, m_k, n) logged every step from 0."""
    a, b = hist["a"], hist["b"]
    ok = ((sim._sign8(hist["alpha"]) == sim._sign8(b.sum(-1)))
          & (sim._sign8(hist["beta"]) == -sim._sign8(a.sum(-1)))).all(-1)
    return np.where(ok.any(0), np.argmax(ok, 0).astype(float), np.inf)


def check_word(cid, v, word, side, sentence, what="", name=None):
    """A statistic read with a glossary word: side '<=' (a tolerance: v <= level, e.g. 'near 0',
    'converged') or '>=' (a score: v >= level, e.g. 'dominates'), decided at the word's level
    and bracket (properties/readings.py)."""
    if side == "<=":
        check_close(cid, v, 0.0, Tolerance.reading(word, sentence), name=name,
                    what=f"{what} ({word!r})")
    elif side == ">=":
        check_at_least(cid, v, Threshold.reading(word, sentence), name=name,
                       what=f"{what} ({word!r})")
    else:
        raise ValueError(f"side must be '<=' or '>=', got {side!r}")


def check_intervals(cid, stats, intervals, threshold, name="listed items"):
    """For each named statistic, lo <= value <= hi (intervals[name] = (lo, hi), infinite ends
    unchecked), each side a check_at_least against `threshold` (an exact inequality); or, where
    intervals[name] = (word, side, sentence), the glossary word's reading (check_word).  All are
    one named check (`name`) for the per-check power: an alternative that fails any listed item
    is rejected by it."""
    for key, v in stats.items():
        spec = intervals[key]
        if isinstance(spec[0], str):
            check_word(cid, v, *spec, what=f"{key} = {v:.4g}", name=name)
            continue
        lo, hi = spec
        if lo > -np.inf:
            check_at_least(cid, v - lo, threshold, name=name, what=f"{key} = {v:.4g} >= {lo:g}")
        if hi < np.inf:
            check_at_least(cid, hi - v, threshold, name=name, what=f"{key} = {v:.4g} <= {hi:g}")


STAGE_ORDER_SENT = "T_1 << T_2 << T_3 (Section 4's stage order)"
L45_SENT = "s_21 decays exponentially fast while s_11 stays near 1/2, until a time T_4^-"
THM32_SENTS = {1: "the training loss converges to epsilon (Theorem 3.2 (1))",
               2: "The trained transformer has a constant-order test loss (Theorem 3.2 (2))",
               3: "value noise dominates value signal for every training sample (Theorem 3.2 (3))",
               4: "attention of both queries concentrates on the noise patch (Theorem 3.2 (4))"}


def stage1_separation(T):
    """min over seeds of min(T_2, T_3) / max(T_1, 1): '<<' between Stage I and the next stages
    read at one size (0 where a seed never reaches T_2 or T_3)."""
    lo = np.minimum(np.asarray(T["T2"], dtype=np.float64), T["T3"])
    t1 = np.maximum(np.asarray(T["T1"], dtype=np.float64), 1.0)
    ok = np.isfinite(lo)  # a seed that never reaches T_2 or T_3 (T_1 = inf too: untrained): 0
    r = np.divide(lo, t1, out=np.zeros_like(lo), where=ok)
    return float(r.min())


def variant_stats(r, slope):
    """The Table 3 variant claims' statistics of a comparisons.variant_run result; `slope(eta, s,
    sigma_p)` is Lemma 4.1's value-noise growth per step the constant is measured against."""
    T = r["T"]
    p, dev = lemma45_stats(r["s21"], r["s11"], T["T4m"])
    dV = float(((r["V"][-1] - r["V"][0]) / r["t_end"]).mean())
    return {
        "Thm 3.2 (1) max L_S(end)": float(r["train_loss"][-1].max()),
        "Thm 3.2 (2) min L_D(end)": float(r["test_loss"][-1].min()),
        "Thm 3.2 (3) min V_i / |V_mu| (end)": float((r["V"][-1] / np.abs(r["V_mu"][-1])[:, None]).min()),
        "Thm 3.2 (4) max s11, s21 (end)": float(max(r["s11"][-1].max(), r["s21"][-1].max())),
        "Lemma 4.1 (1) constant": dV / float(slope(r["eta"], r["s"], r["sigma_p"])),
        "stages: min over seeds of min(T_2, T_3) / T_1": stage1_separation(T),
        "Lemma 4.7: fraction of seeds with T_4^+ < T_4": float((T["T4p"] < T["T4"]).mean()),
        "Lemma 4.5 fitted exponent of -log(2 s21)": float(p),
        "Lemma 4.5 max |s11 - 1/2| up to T_4^-": float(dev),
    }


VARIANT_OUTCOME = {  # the orthogonal-sparse properties' readings, per statistic of variant_stats
    "Thm 3.2 (1) max L_S(end)": ("-> epsilon", "<=", THM32_SENTS[1]),
    "Thm 3.2 (2) min L_D(end)": ("constant order", ">=", THM32_SENTS[2]),
    "Thm 3.2 (3) min V_i / |V_mu| (end)": ("dominates", ">=", THM32_SENTS[3]),
    "Thm 3.2 (4) max s11, s21 (end)": ("near 0", "<=", THM32_SENTS[4]),
    "stages: min over seeds of min(T_2, T_3) / T_1": ("dominates", ">=", STAGE_ORDER_SENT),
    "Lemma 4.7: fraction of seeds with T_4^+ < T_4": (1.0, 1.0),
    "Lemma 4.5 fitted exponent of -log(2 s21)": (1.0, np.inf),
    "Lemma 4.5 max |s11 - 1/2| up to T_4^-": ("near 1/2", "<=", L45_SENT),
}


# --------------------------------------------------------------------------------------------
# Trends on ladders whose rungs share their seeds (signgd.stage_order, signgd.t2_vs_t1)
# --------------------------------------------------------------------------------------------
def paired_trend(claim_id, sizes, R, exponent=None, *, direction=None, allowance=None,
                 false_fail=1e-3, rivals=(), what="", name=None):
    """check_trend of log R (rungs x seeds, the rungs sharing their seeds) against log size,
    seed-clustered: one least-squares slope per seed (a seed's own intercept is its fixed
    effect), their mean, and their standard error with Student t on seeds - 1 dof.  `exponent`
    or `direction` as in check_trend.  (Until 2026-12-05 the error was the pooled within-seed
    residual scatter on S (rungs - 1) - 1 dof, which counts a seed's rungs as independent and
    understated the error where seeds differ in slope: see the history of
    signgd.stage_order and signgd.t2_vs_t1.)"""
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[1] < 2:
        raise ValueError(f"paired_trend: R must be rungs x seeds with >= 2 seeds, got {R.shape}")
    return check_trend(claim_id, sizes, R.T, exponent=exponent, direction=direction,
                       false_fail=false_fail, allowance=allowance, rivals=rivals, what=what,
                       name=name)


# --------------------------------------------------------------------------------------------
# Lemmas 4.3 (1) and 4.4 carried to another run (signgd.adam, signgd.learnable_head)
# --------------------------------------------------------------------------------------------
def noise_l1_scale(r):
    """Lemma 4.3 (1) carried to another run: |a|, |b| at T_2 = Theta(T_2 eta ||xi_i||_1), per seed and
    sample (S, 1, n)."""
    return r["T"]["T2"][:, None, None] * r["eta"] * r["xi_l1"][:, None, :]


THETA_WORD = "Theta(1)"  # the glossary word a Theta's constants are read with (factor 3)
L43_SENT = "|a_{s,i}(T_2)|, |b_{s,i}(T_2)| = Theta(T_2 eta s sigma_p) (Lemma 4.3 (1))"
L44_SENT = "|alpha_s|, |beta_s| = Theta(T_3 eta) (Lemma 4.4 (2))"


def _factor(r) -> float:
    r = float(r)
    return max(r, 1.0 / r) if np.isfinite(r) and r > 0 else np.inf


def check_theta(cid, ratio, sentence, *, name, what, rival_ratio=None, own_ratio=None):
    """A quantity said to be Theta(rate), read with the glossary's 'Theta(1)': the ratio of the
    quantity to the rate (a median over pairs or neurons) within the word's factor of 1,
    max(r, 1/r) <= level (3; bracket 2-5).  `rival_ratio`, in an alternative's world, is the
    ratio of the rival's predicted scale to the claim's own on this draw (a median): where it is
    itself within the level's factor, no reading of the word can tell the two apart on this
    draw, and the alternative is stopped as Inconclusive (reported 'not told apart', never
    excused).  `own_ratio`, in an alternative's world, is the same quantity's ratio to the
    claim's own rate: where the observation lies within the level's factor of both scales (the
    rival's and the claim's), this draw cannot tell them apart either (the same report)."""
    level = lookup(THETA_WORD).level
    if rival_ratio is not None:
        rf = _factor(rival_ratio)
        if rf <= level:
            raise Inconclusive(f"{cid}: {name}: the rival's scale is within a factor {rf:.3g} "
                               f"of the claim's on this draw (the reading's factor {level:g}): "
                               "not told apart")
        if own_ratio is not None and _factor(own_ratio) <= level and _factor(ratio) <= level:
            raise Inconclusive(f"{cid}: {name}: the observation is within the reading's factor "
                               f"{level:g} of both the rival's scale ({_factor(ratio):.3g}) and "
                               f"the claim's ({_factor(own_ratio):.3g}) on this draw: not told "
                               "apart")
    r = float(ratio)
    factor = _factor(r)
    check_close(cid, factor, 0.0, Tolerance.reading(THETA_WORD, sentence), name=name,
                what=f"{what}: ratio {r:.3g}, factor {factor:.3g}")


def rival_ratio(pred, own):
    """The median ratio of a predicted scale to the claim's own (None where they are the same
    array: the claim's world)."""
    pred, own = np.asarray(pred, dtype=np.float64), np.asarray(own, dtype=np.float64)
    if pred.shape == own.shape and np.array_equal(pred, own):
        return None
    return float(np.median(np.broadcast_to(pred, np.broadcast_shapes(pred.shape, own.shape))
                           / own))


def noise_init_scale(r):
    """Rival (as signgd.lemma4_3's): the noise still at its init scale sigma_0 ||xi_i||_2 at T_2."""
    return r["sigma_0"] * r["xi_l2"][:, None, :]


def noise_l2_scale(r):
    """Rival (as signgd.lemma4_3's): an l2 rate, T_2 eta ||xi_i||_2."""
    return r["T"]["T2"][:, None, None] * r["eta"] * r["xi_l2"][:, None, :]


def signal_linear_scale(r):
    """Lemma 4.4 carried to another run: |alpha|, |beta| at T_4^- = Theta(T_4^- eta) (S, 1)."""
    return r["T"]["T4m"][:, None] * r["eta"]


def signal_init_scale(r):
    """Rival (as signgd.lemma4_4's): the signals still at their init at T_4^- (S, m_k)."""
    return np.maximum(np.abs(r["alpha"][0]), 1e-300)


def sum_rule():
    """Lemma 4.4's vote: the sign of the voters' sum."""
    return "sum"


def majority_rule():
    """Rival: the vote as the majority of the voters' signs (the 'majority voting' of the
    lemma's name read as a count of signs, not a sum of values)."""
    return "majority"


def votes_by_rule(cid, world, alpha, beta, a, b, at=""):
    """Lemma 4.4's votes (common.split_votes) under the rule the prediction slot "vote_rule" names
    (sum_rule; the rival majority_rule).  A rival rule that predicts every uneven vote as the sum
    does cannot be told apart on this draw: Inconclusive (reported 'not told apart', never
    excused)."""
    rule = world.prediction(sum_rule, "vote_rule")()
    v = split_votes(alpha, beta, a, b, rule=rule)
    if rule != "sum":
        ref = split_votes(alpha, beta, a, b, rule="sum")["off"]
        if np.array_equal(v["off"] & ~v["even"], ref & ~v["even"]):
            raise Inconclusive(f"{cid}: the {rule} rule predicts all {int((~v['even']).sum())} "
                               f"uneven votes as the sum does{at}: not told apart")
    return v


def stage3_lemma_rivals():
    """The rivals of stage3_lemma_checks' prediction slots, for the claims that carry the checks
    (signgd.adam, signgd.learnable_head, signgd.variant_b/c/d)."""
    return (
        rival("noise_init_scale", noise_init_scale, "Lemma 4.3 (1)'s rival: the query/key noise "
              "still at its init scale sigma_0 ||xi_i||_2 at T_2", replaces="noise_scale"),
        rival("noise_l2_rate", noise_l2_scale, "Lemma 4.3 (1)'s rival: Theta(T_2 eta "
              "||xi_i||_2), an l2 rate instead of l1", replaces="noise_scale"),
        rival("majority_of_signs", majority_rule, "Lemma 4.4 (a)'s closest rival: the vote "
              "as the majority of the voters' signs instead of the sign of their sum (not told "
              "apart where the two agree on every uneven vote)", replaces="vote_rule"),
        rival("signals_at_init", signal_init_scale, "Lemma 4.4's rival: the signals still at "
              "their init at T_4^- (Lemma 4.3 (4) carried through Stage III)",
              replaces="signal_scale"),
    )


def stage3_lemma_checks(cid, world, q, at=""):
    """Lemmas 4.3 (1) and 4.4 on one run logged every step (q: alpha, beta, a, b (T, S, ...), T
    its stage times, eta, xi_l1 (S, n)), by the bodies of the SignGD properties, for the claims
    that carry them to another optimizer or model (signgd.adam, signgd.learnable_head); `at`
    names the run in the messages.  Prediction slots "vote_rule" (sum_rule; rival majority_rule,
    reported not told apart where it predicts the same), "noise_scale" (the median noise at T_2
    against its l1 rate) and "signal_scale" (the median signal at T_4^- against eta T_4^-), each
    read with the glossary's 'Theta(1)' (check_theta: a rival scale within its factor of the
    lemma's is not told apart); and every uneven vote followed at T_4^- - 1 (signgd.lemma4_4's
    corrected form (a))."""
    T = q["T"]
    ok = np.isfinite(T["T2"]) & np.isfinite(T["T4m"])
    check_at_least(cid, float(ok.mean()) - 1.0, EXACT,
                   what=f"every seed reaches T_2 and T_4^-{at}: {T['T2']}, {T['T4m']}")
    if not ok.all():
        return  # nothing to measure at T_2 / T_4^- (the check above has failed)
    nscale = world.prediction(noise_l1_scale, "noise_scale")(q)
    rr = rival_ratio(nscale, noise_l1_scale(q))
    for k_ in ("a", "b"):
        x = np.abs(at_steps(q[k_], T["T2"]))
        med = float(np.median(x / nscale))
        check_theta(cid, med, L43_SENT, name=f"L4.3 (1) {k_}", rival_ratio=rr,
                    own_ratio=float(np.median(x / noise_l1_scale(q))),
                    what=f"Lemma 4.3 (1): median |{k_}(T_2)| / scale{at}")
    sscale = world.prediction(signal_linear_scale, "signal_scale")(q)
    rr = rival_ratio(sscale, signal_linear_scale(q))
    for k_ in ("alpha", "beta"):
        x = np.abs(at_steps(q[k_], T["T4m"]))
        med = float(np.median(x / sscale))
        check_theta(cid, med, L44_SENT, name=f"L4.4 {k_}", rival_ratio=rr,
                    own_ratio=float(np.median(x / signal_linear_scale(q))),
                    what=f"Lemma 4.4: median |{k_}(T_4^-)| / (eta T_4^-){at}")
    t_end = T["T4m"] - 1
    v = votes_by_rule(cid, world, *(at_steps(q[k_], t_end) for k_ in ("alpha", "beta", "a", "b")),
                      at=at)
    off_uneven = int((v["off"] & ~v["even"]).sum())
    check_at_least(cid, -float(off_uneven), EXACT, name="L4.4 (a) votes",
                   what=f"Lemma 4.4 (a): {off_uneven} of {int((~v['even']).sum())} uneven "
                        f"votes not followed at T_4^- - 1{at} (even splits: "
                        f"{int((v['off'] & v['even']).sum())} of {int(v['even'].sum())} off; "
                        f"neurons off: {int(off_vote_neurons(v['off']).sum())})")


# --------------------------------------------------------------------------------------------
# 'With high probability' along the declared path (path.path_run; issue 35)
# --------------------------------------------------------------------------------------------
WHP_WORD = "high"  # the glossary word a 'with high probability' is read with: P(no failure)


def whp_level() -> float:
    """The per-run failure probability a 'with high probability' allows at the largest rung: one
    minus the glossary's 'high' (0.9), i.e. 0.1 (check_whp, given the word, decides its bracket
    0.95 and 0.75 too)."""
    return 1.0 - lookup(WHP_WORD).level


def rung_summary(P) -> str:
    """The declared path's rungs of a path_run result, in a few words (for a check's `what`);
    a rung run in two blocks of seeds names both."""
    parts = {}
    for r, n_, (lo, hi) in zip(P["rungs"], P["steps"], P["seeds"]):
        if r["s"] in parts:
            parts[r["s"]] += f"; seeds {lo}-{hi - 1}: {n_} steps"
        else:
            parts[r["s"]] = (f"s = {r['s']}: d = {r['d']}, m_k = {r['m_k']}, m_v = {r['m_v']}, "
                             f"sigma_p = {r['sigma_p']:.4g}, sigma_0 = {r['sigma_0']:.3g}, "
                             + (f"seeds {lo}-{hi - 1}: " if P["sizes"].count(r["s"]) > 1 else "")
                             + f"{n_} steps")
    return "; ".join(parts.values())


def pool_rungs(sizes, *per_row):
    """(sizes, pooled...): the rows of a path_run result (one per block of seeds, a rung's
    blocks apart) pooled per rung: the distinct sizes in order and, for each array of rows x
    seeds in `per_row`, one array of runs per rung (its blocks' seeds concatenated)."""
    sizes = [int(s) for s in sizes]
    uniq = list(dict.fromkeys(sizes))
    return (uniq, *([np.concatenate([np.asarray(x[i]) for i, s in enumerate(sizes) if s == u])
                     for u in uniq] for x in per_row))


def per_rung_counts(sizes, fail, items=None, unit="items") -> str:
    """'s = 30: 3/24 runs (5/1024 items), ...': the runs with any failure per rung and, beside,
    the per-item fraction (`items`: (failing items, all items), each rungs x seeds)."""
    parts = []
    for i, s in enumerate(sizes):
        f = np.asarray(fail[i], dtype=bool)
        txt = f"s = {s}: {int(f.sum())}/{f.size} runs"
        if items is not None:
            k, n = items
            txt += f" ({int(np.sum(k[i]))}/{int(np.sum(n[i]))} {unit})"
        parts.append(txt)
    return ", ".join(parts)


def check_path_whp(cid, P, fail, *, false_fail, name, what, items=None, unit="items",
                   reading=None):
    """'With high probability' of one statement along the declared path P (a path_run result):
    check_whp of the per-run failures `fail` (path_run's rows x seeds, True where the run has
    ANY failure of the statement; a rung's rows pooled, pool_rungs) at the glossary's 'high'
    (whp_level(); its bracket decided too), with the per-item fraction reported beside
    (`items`), the rate spent over the looks at the path's seeds (setting.PATH_LOOKS).  With
    `reading` (a glossary word for the per-run statement, check_whp's), `fail` holds each
    run's value of the word's statistic instead, and the word is decided at its bracket too.
    The path's unfollowed clauses (setting.PATH_UNFOLLOWED) go with it: a failure that does not
    vanish there is Inconclusive with its numbers, not a refutation."""
    fail = np.asarray(fail, dtype=np.float64 if reading is not None else bool)
    if items is None:
        sizes, fail = pool_rungs(P["sizes"], fail)
    else:
        sizes, fail, k_, n_ = pool_rungs(P["sizes"], fail, *items)
        items = (k_, n_)
    shown = fail
    if reading is not None:  # the runs beyond the word's level, for the counts beside
        r = lookup(reading)
        shown = [(v > r.level) if r.stricter < r.level else (v < r.level) for v in fail]
    desc = per_rung_counts(sizes, shown, items, unit)
    return check_whp(cid, sizes, fail, WHP_WORD, false_fail=false_fail, items=items,
                     reading=reading, unfollowed=PATH_UNFOLLOWED, looks=PATH_LOOKS[size()],
                     word=f"'{WHP_WORD}' probability, the glossary's {lookup(WHP_WORD).level:g}",
                     name=name, what=f"{what}: {desc} [{rung_summary(P)}]")
