"""SignGD (Li et al., ICLR 2025): stage boundaries and per-pair, per-neuron and per-sample event
times, measured from the quantities a run logged (sim.signgd.train's Trace)."""

from __future__ import annotations

import numpy as np

from sim.signgd.model import Trace, squeeze_L2
from theory.validate import MAX_STEPS, integer, number


# --------------------------------------------------------------------------------------------
# Stage boundaries, measured from the logged quantities (L = 2, log_every = 1)
# --------------------------------------------------------------------------------------------
STAGE_DEFINITIONS = {
    "T1": "first step with D_i = V_i - V_mu > 0 for every training sample (the mean value noise "
          "has overtaken the signal; D_i only grows afterwards)",
    "T2": "first step from which sgn(a_{s,i}) = sgn(b_{s,i}) for every (neuron, sample) pair "
          "up to T4^- (query/key noise sign alignment complete)",
    "T3": "first step from which sgn(alpha_s) = sgn(sum_i b_{s,i}) and "
          "sgn(beta_s) = -sgn(sum_i a_{s,i}) for every neuron s, up to T4^- (majority vote done)",
    "T4m": "T4^-: first step at which some key noise b_{s,i} with sgn(b_{s,i}) != sgn(alpha_s), "
           "having moved away from sgn(alpha_s) for the previous TURN_LOOKBACK = 20 steps "
           "(with alpha_s's sign unchanged over them), moves towards sgn(alpha_s)",
    "T4p": "T4^+: first step from which every key noise b_{s,i} has the sign of alpha_s",
    "T4": "first step from which every query and key noise has the sign of alpha_s",
}


TURN_LOOKBACK = 20
# the step in units of a noise inner product's init scale, eta sqrt(s) / sigma_0, at the sheet's
# CPU setting (s = 30, sigma_0 = 1e-3, eta = 6e-5), where TURN_LOOKBACK was set
CPU_EPS = 6e-5 * np.sqrt(30) / 1e-3


def turn_lookback(eps: float) -> int:
    """TURN_LOOKBACK in the analysis's time units at another step eps = eta sqrt(s) / sigma_0:
    the steps that span the same multiple of the noise's init scale as TURN_LOOKBACK steps do at
    the CPU setting (ceil(TURN_LOOKBACK CPU_EPS / eps); TURN_LOOKBACK itself at eps >= CPU_EPS)."""
    eps = number("eps", eps, 1e-6, 1e3)
    return max(TURN_LOOKBACK, int(np.ceil(TURN_LOOKBACK * CPU_EPS / eps - 1e-9)))


def _first_from(ok, t):
    """First logged step from which `ok` (T, S) holds through the end; inf if never."""
    T, S = ok.shape
    out = np.full(S, np.inf)
    for j in range(S):
        bad = np.nonzero(~ok[:, j])[0]
        k = 0 if bad.size == 0 else bad[-1] + 1
        if k < T:
            out[j] = t[k]
    return out


def _sign8(x) -> np.ndarray:
    """np.sign(x) as int8 (-1, 0, 1) for finite x, without a float64 array of x's size: the
    event detectors compare signs of whole histories (T, S, m_k, n), where an int8 sign is an
    eighth of the memory traffic.  Private: the detectors' primitive, on histories finite by
    construction (a logged run, the reduced dynamics), so it checks nothing itself."""
    x = np.asarray(x)
    return (x > 0).view(np.int8) - (x < 0).view(np.int8)


def _diff_sign8(x) -> np.ndarray:
    """np.sign(np.diff(x, axis=0)) as int8 for finite x: x[k + 1] - x[k] > 0 exactly when
    x[k + 1] > x[k] (IEEE subtraction of finite numbers is 0 only for equal ones), so the sign of
    the move is read off two comparisons, without the float64 difference."""
    x = np.asarray(x)
    return (x[1:] > x[:-1]).view(np.int8) - (x[1:] < x[:-1]).view(np.int8)


def _window_all(x, k):
    """x (T, ...) bool: w (T - k + 1, ...) with w[j] = x[j], ..., x[j + k - 1] all True (a run of
    at least k True entries ends at index j + k - 1); by doubling windows, O(log k) passes.
    Empty (0, ...) where k > T."""
    if k > len(x):
        return np.zeros((0,) + x.shape[1:], dtype=bool)
    res, res_len, p, p_len = None, 0, x, 1
    while True:
        if k & 1:
            if res is None:
                res, res_len = p, p_len
            else:
                n = len(x) - (res_len + p_len) + 1
                res, res_len = res[:n] & p[res_len:res_len + n], res_len + p_len
        k >>= 1
        if not k:
            return res
        p, p_len = p[:-p_len] & p[p_len:], 2 * p_len


STAGE_LOG = ("alpha", "beta", "a", "b", "V", "V_mu")  # what stage_times and events read


def _need(tr, names, where, every_step=True):
    """ValueError (not a KeyError) naming the quantities `where` needs that the run did not log."""
    if not (hasattr(tr, "t") and isinstance(getattr(tr, "q", None), dict)):  # duck-typed traces too
        raise ValueError(f"{where}: tr must be a Trace returned by train (or an object with "
                         f"t, the logged steps, and q, a dict of logged quantities), got "
                         f"{type(tr).__name__}")
    if len(tr.t) == 0:
        raise ValueError(f"{where}: tr has no logged step (tr.t is empty): it needs a run with at "
                         f"least 1 logged step (train logs step 0 for any steps >= 0)")
    missing = [k_ for k_ in names if k_ not in tr.q]
    if missing:
        raise ValueError(f"{where} needs the tracked quantities {missing}, which this run (tr) did "
                         f"not log: train with log=None (all) or a log= tuple that includes "
                         f"{tuple(names)}")
    if every_step and len(tr.t) > 1 and np.any(np.diff(tr.t) != 1):
        raise ValueError(f"{where} needs a run logged every step (train's log_every=1), got "
                         f"log_every={int(tr.t[1] - tr.t[0])}")


def _key_turning(al, b, t, lookback=TURN_LOOKBACK):
    """(T, S, m_k, n) bool: the T_4^- event of STAGE_DEFINITIONS at each logged step, per key
    noise b_{s,i} (al (T, S, m_k), b (T, S, m_k, n)), with `lookback` steps of moving away.
    At step k: b has the wrong sign, the move k-1 -> k is towards
    sgn alpha(k), the `lookback` moves before it were away from it and alpha's sign held over
    steps k - lookback .. k; windows of `lookback` moves by doubling (O(T log lookback)), on int8
    signs."""
    return _turning(_sign8(al)[..., None], _sign8(b), b, len(t), lookback)


def _turning(sa, sb, b, n_t, K):
    """_key_turning from the int8 signs sa = sgn alpha (T, S, m_k, 1) and sb = sgn b (T, S, m_k,
    n), and b itself (for the signs of its moves)."""
    wrong_key = sb != sa
    turning = np.zeros(wrong_key.shape, dtype=bool)
    if n_t > K + 1:
        db = _diff_sign8(b)  # db[m] = sign of b(t_{m+1}) - b(t_m)
        # away[m]: the move m -> m+1 is away from sgn alpha(m+1); held[m]: sgn alpha(m) =
        # sgn alpha(m+1).  Under held over k-K..k, 'away from sgn alpha(k)' is away[m] there.
        # A run of at least K of them ends at m where the window of K ending at m is all True:
        # _window_all(.)[m - K + 1].
        away = _window_all(db == -sa[1:], K)  # (T-K, S, m_k, n)
        held = _window_all(sa[:-1] == sa[1:], K)  # (T-K, S, m_k, 1)
        turning[K + 1:] = (wrong_key[K + 1:] & (db[K: n_t - 1] == sa[K + 1:])
                           & away[: n_t - 1 - K] & held[1: n_t - K])
    return turning


def _completed_turns(turning, al, b):
    """The T_4^- events of `turning` (T, S, m_k, n) that are completed turns: from the event's
    step on, the key noise moves towards sgn(alpha_s) at every step until it has that sign (a
    turn that reverses before the crossing, e.g. momentum's overshoot in a Stage II alignment,
    does not count)."""
    sa = _sign8(al)[..., None]
    n_t = b.shape[0]
    if n_t < 2:
        return np.zeros_like(turning)
    toward = _diff_sign8(b) == sa[:-1]  # toward[k]: b(t_k) -> b(t_{k+1}) towards
    crossed = _sign8(b) == sa
    big = n_t + 1
    idx = np.arange(n_t).reshape((n_t,) + (1,) * (b.ndim - 1))
    # first index >= k at which the move is not towards (n_t - 1 past the last move)
    not_tw = np.where(~toward, idx[:-1], big)
    next_bad = np.minimum.accumulate(not_tw[::-1], axis=0)[::-1]
    next_bad = np.concatenate([next_bad, np.full((1,) + b.shape[1:], big)])
    # first index > k with sgn b = sgn alpha (big if never)
    cr = np.where(crossed, idx, big)
    next_cross = np.minimum.accumulate(cr[::-1], axis=0)[::-1]
    next_cross = np.concatenate([next_cross[1:], np.full((1,) + b.shape[1:], big)])
    return turning & (next_cross < big) & (next_bad >= next_cross)


TURNS = ("first", "completed")


def stage_times(tr: Trace, turns: str = "first", lookback: int = TURN_LOOKBACK) -> dict:
    """Per-seed stage boundaries (S,) by STAGE_DEFINITIONS.  Needs a run logged every step with
    alpha, beta, a, b, V, V_mu (STAGE_LOG); `events` gives the per-pair / per-sample events these
    scalars are the extremes of.  turns="completed" counts only T_4^- events that are completed
    turns (_completed_turns: for an optimizer with momentum, whose Stage II alignment can
    overshoot and come back, which the 'first' detector reads as a turn).  `lookback`: the
    steps of moving away before a T_4^- turn (TURN_LOOKBACK, set at the sheet's CPU setting;
    turn_lookback(eps) keeps it in the analysis's time units at another step)."""
    if turns not in TURNS:
        raise ValueError(f"turns: {turns!r} is not one of {TURNS}")
    integer("lookback", lookback, 1, MAX_STEPS)
    _need(tr, STAGE_LOG, "stage_times")
    q = squeeze_L2(tr.q)
    al, be, a, b = q["alpha"], q["beta"], q["a"], q["b"]
    t = tr.t
    D = q["V"] - q["V_mu"][..., None]
    T1 = np.array([t[np.argmax(x)] if x.any() else np.inf for x in (D > 0).all(-1).T])
    s_al = _sign8(al)
    sa, sa_, sb = s_al[..., None], _sign8(a), _sign8(b)  # (T, S, m_k, 1), (T, S, m_k, n) x 2
    turning = _turning(sa, sb, b, len(t), lookback)
    if turns == "completed":
        turning = _completed_turns(turning, al, b)
    T4m = np.array([t[np.argmax(x)] if x.any() else np.inf for x in turning.any((-1, -2)).T])
    before = t[:, None] < T4m[None, :]
    aligned = (sa_ == sb).all((-1, -2))
    voted = ((s_al == _sign8(b.sum(-1))) & (_sign8(be) == -_sign8(a.sum(-1)))).all(-1)
    T2 = _first_from(aligned | ~before, t)
    T3 = _first_from(voted | ~before, t)
    T4p = _first_from((sb == sa).all((-1, -2)), t)
    T4 = _first_from(((sa_ == sa) & (sb == sa)).all((-1, -2)), t)
    return dict(T1=T1, T2=T2, T3=T3, T4m=T4m, T4p=T4p, T4=T4)


def qk_alignment_time(tr: Trace) -> np.ndarray:
    """(S,) first logged step from which sgn(a_{s,i}) = sgn(b_{s,i}) for every (neuron, sample)
    pair through the end of the run: T_2 without stage_times' cut at T_4^-, for runs that stop
    within Stage III.  (With a long Stage I, eta sqrt(s) / sigma_0 << 1, the reversal of a sample's
    noise at its D_i = 0 crossing looks like the key-noise turn that defines T_4^-, so stage_times'
    T_2 would be cut there.)"""
    _need(tr, ("a", "b"), "qk_alignment_time", every_step=False)
    q = squeeze_L2(tr.q)
    return _first_from((np.sign(q["a"]) == np.sign(q["b"])).all((-1, -2)), tr.t)



# --------------------------------------------------------------------------------------------
# Event times per pair, per neuron and per sample (the events stage_times' scalars summarise)
# --------------------------------------------------------------------------------------------
EVENT_DEFINITIONS = {
    "T1_sample": "(S, n) first step with D_i = V_i - V_mu > 0 for sample i (T1 >= its max over i, "
                 "= when no D_i falls back to <= 0)",
    "T2_sample": "(S, n) max over neurons of qk_align_cut (max over samples: T2)",
    "T4_sample": "(S, n) first step from which every query and key noise of sample i has the sign "
                 "of its neuron's alpha (max over samples: T4)",
    "qk_align": "(S, m_k, n) first step from which sgn a_{s,i} = sgn b_{s,i} through the end of "
                "the run (max over pairs: qk_alignment_time)",
    "qk_align_cut": "(S, m_k, n) the same up to T4^- (steps >= T4^- count as aligned; max over "
                    "pairs: T2)",
    "vote": "(S, m_k) first step from which neuron s has sgn alpha_s = sgn sum_i b_{s,i} and "
            "sgn beta_s = -sgn sum_i a_{s,i}, up to T4^- (max over neurons: T3)",
    "t4m_turn": "(S, m_k, n) first step at which key noise b_{s,i} makes the T4^- turn of "
                "STAGE_DEFINITIONS (min over pairs: T4m)",
    "T4m_pair": "(S, 2) int: (neuron s, sample i) of the pair whose turn set T4^- (the first in "
                "C order if several turned at that step); -1 where T4m = inf",
    "align_a": "(S, m_k, n) first step from which sgn a_{s,i} = sgn alpha_s through the end "
               "(max over pairs: Tq)",
    "align_b": "(S, m_k, n) the same for the key noise b_{s,i} (max over pairs: T4p = Tk; "
               "max(align_a, align_b) over pairs: T4)",
    "wrong_a": "(S, m_k, n) bool: sgn a_{s,i} != sgn alpha_s at T4^- (False where T4m = inf)",
    "wrong_b": "(S, m_k, n) bool: the same for b_{s,i}",
    "turn_a": "(S, m_k, n) first step k >= T4^- at which a_{s,i} moves towards sgn alpha_s(k)",
    "turn_b": "(S, m_k, n) the same for b_{s,i}",
    "back_a": "(S, m_k, n) int: steps k in [turn_a, align_a) at which a_{s,i} does not move "
              "towards sgn alpha_s(k)",
    "back_b": "(S, m_k, n) int: the same for b_{s,i}",
    "Tq": "(S,) first step from which every query noise has the sign of alpha",
    "Tk": "(S,) first step from which every key noise has the sign of alpha (= T4p)",
}


def _first_from_nd(ok, t):
    """ok (T, ...) over logged steps t (T,): per trailing index the first logged step from which
    ok holds through the last one (inf if it fails at the last step)."""
    T = ok.shape[0]
    bad = ~ok
    k = np.where(bad.any(0), T - np.argmax(bad[::-1], axis=0), 0)
    return np.append(np.asarray(t, dtype=np.float64), np.inf)[k]


def _first_true(x, t):
    """x (T, ...): per trailing index the first logged step at which x holds (inf: never)."""
    return np.where(x.any(0), np.asarray(t, dtype=np.float64)[np.argmax(x, axis=0)], np.inf)


def events(tr: Trace) -> dict:
    """Event times per (seed, neuron, sample) pair, per neuron and per sample, from a run logged
    every step with STAGE_LOG (L = 2; for L > 2 the first noise patch, as stage_times).  Returns
    a dict of numpy arrays keyed by EVENT_DEFINITIONS plus "stage" (stage_times(tr)); times are
    float steps with inf for "never", indices are ints with -1 for "none".  The stage scalars
    are the extremes of these events: T2 = max qk_align_cut, T3 = max vote, T4m = min t4m_turn
    (reached by T4m_pair), T4p = Tk = max align_b, T4 = max(align_a, align_b) over the seed's
    pairs, T1 >= max T1_sample (tests/test_signgd_events.py checks each).  The Stage IV entries
    (wrong_x, turn_x, back_x, Tq, Tk) are properties/signgd/common.stage4_pairs at stage_times'
    T4^-."""
    _need(tr, STAGE_LOG, "events")
    if len(tr.t) < 2:  # the Stage IV entries read steps k -> k + 1
        raise ValueError(f"events needs tr with at least 2 logged steps (a run of steps >= 1), "
                         f"got {len(tr.t)} logged step{'' if len(tr.t) == 1 else 's'}")
    T = stage_times(tr)
    q = squeeze_L2(tr.q)
    al, be, a, b = q["alpha"], q["beta"], q["a"], q["b"]
    t = np.asarray(tr.t)
    nT = len(t)
    out = {"stage": T}
    out["T1_sample"] = _first_true(q["V"] - q["V_mu"][..., None] > 0, t)
    before = (t[:, None] < T["T4m"][None, :])[..., None, None]  # (T, S, 1, 1)
    s_al, sa_, sb = _sign8(al), _sign8(a), _sign8(b)
    sa = s_al[..., None]
    qk = sa_ == sb
    out["qk_align"] = _first_from_nd(qk, t)
    out["qk_align_cut"] = _first_from_nd(qk | ~before, t)
    voted = (s_al == _sign8(b.sum(-1))) & (_sign8(be) == -_sign8(a.sum(-1)))
    out["vote"] = _first_from_nd(voted | ~before[..., 0], t)
    out["T2_sample"] = out["qk_align_cut"].max(1)
    turning = _turning(sa, sb, b, nT, TURN_LOOKBACK)
    out["t4m_turn"] = _first_true(turning, t)
    S_, m_k, n_ = b.shape[1:]
    pair = np.full((S_, 2), -1, dtype=np.int64)
    for j in range(S_):
        if np.isfinite(T["T4m"][j]):
            k = int(np.searchsorted(t, T["T4m"][j]))
            pair[j] = np.unravel_index(int(np.argmax(turning[k, j])), (m_k, n_))
    out["T4m_pair"] = pair
    # Stage IV (the semantics of properties/signgd/common.stage4_pairs)
    idx = np.arange(nT)[:, None, None, None]
    k4 = np.where(np.isfinite(T["T4m"]), np.searchsorted(t, np.minimum(T["T4m"], t[-1])), nT)
    k4 = k4[None, :, None, None]
    tt = np.append(np.asarray(t[:-1], dtype=np.float64), np.inf)
    for x, X, sx in (("a", a, sa_), ("b", b, sb)):
        ok = sx == sa
        at4 = np.take_along_axis(ok, np.minimum(k4, nT - 1), axis=0)[0]
        out["wrong_" + x] = ~at4 & (k4[0] < nT)
        out["align_" + x] = _first_from_nd(ok, t)
        toward = _diff_sign8(X) == sa[:-1]
        cand = toward & (idx[:-1] >= k4)
        kt = np.where(cand.any(0), np.argmax(cand, axis=0), nT - 1)
        out["turn_" + x] = tt[kt]
        ka = np.searchsorted(t, np.minimum(out["align_" + x], t[-1]))
        ka = np.where(np.isfinite(out["align_" + x]), ka, nT - 1)
        win = (idx[:-1] >= kt[None]) & (idx[:-1] < ka[None])
        out["back_" + x] = (win & ~toward).sum(0)
        out["T" + ("q" if x == "a" else "k")] = _first_from_nd(ok.all((-1, -2)), t)
    out["T4_sample"] = np.maximum(out["align_a"], out["align_b"]).max(1)
    return out
