"""Shared pieces of the topic-structure properties: strategies, the exact Assumption-1 setup,
the finite-document Monte Carlo, and error models.  Imported by the claim files; imports no
claim file.

Paper's own setting (Section 6 experiments): T = v = 10, p_m = 0.15, p_c = p_r = 0.1.  The
theory claims (Lemma 1, Theorems 1, 2, 4, Definition 2) fix no tau; their paper-setting example
uses tau = 3 (C(10, 3) = 120 subsets).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import strategies as st

from properties import Threshold, Tolerance, discrepancy
from sim import make_generator
from sim import topic as sm
from theory import topic as th

SEED = st.integers(0, 2**31 - 1)
PAPER = (10, 10, 3, 0.15, 0.1, 0.1)  # (T, v, tau, p_m, p_c, p_r)
PAPER_P = (0.15, 0.1, 0.1)


@st.composite
def probs(draw, lo=0.02):
    p_m = draw(st.floats(0.05, 0.9))
    p_c = draw(st.floats(lo, 0.6))
    p_r = draw(st.floats(lo, min(0.6, 0.95 - p_c)))
    return p_m, p_c, p_r


@st.composite
def small_model(draw):
    """(T, v, tau, p_m, p_c, p_r) with tau < T, small enough to enumerate all tau-subsets."""
    T = draw(st.integers(2, 6))
    v = draw(st.integers(1, 4))
    tau = draw(st.integers(1, T - 1))
    return (T, v, tau, *draw(probs()))


@st.composite
def mc_model(draw):
    T = draw(st.integers(2, 5))
    v = draw(st.integers(2, 4))
    tau = draw(st.integers(1, T - 1))
    p_m = draw(st.floats(0.2, 0.6))
    p_c = draw(st.floats(0.05, 0.4))
    p_r = draw(st.floats(0.05, 0.4))
    return T, v, tau, p_m, p_c, p_r


SETTING = ("one-hot embeddings (eq. 7, W^E = I), uniform attention (W^K = W^Q = 0), squared "
           "MLM loss (eqs. 1, 3) over all Tv + 1 output coordinates, Assumption 1 (exactly tau "
           "topics, empirical word frequencies 1/(tau v)), 1 <= tau < T, p_m, p_c, p_r in (0, 1), "
           "p_c + p_r < 1")
EXACT_TOL = ("float64 round-off of the enumerated moments and the closed forms (Tolerance."
             "roundoff, scale = the matrices' magnitude); finite-document Monte Carlo: z x SE "
             "(false-fail 1e-6) plus the O(1/N) finite-document bias bound "
             "(||W||_2^2 + 4 max|W| + 4 max|b|) / N")


def setup(m):
    T, v, tau, p_m, p_c, p_r = m
    return sm.subset_moments(T, v, tau, p_m, p_c, p_r)


def constants(m):
    """(c1, c2, c3) of Lemma 1 as printed (theory.topic)."""
    T, v, tau, p_m, p_c, p_r = m
    cc = th.constants(p_m, p_c, p_r, T, v)
    return cc["c1"], cc["c2"], cc["c3"]


# neighbouring constants (rivals): each a plausible slip in the printed c1, c2, c3
def constants_no_c1(m):
    """c1 = 0: Theorem 1's conditions (its bias b^pred absorbs the -c1 term)."""
    c1, c2, c3 = constants(m)
    return 0.0, c2, c3


def constants_c3_one(m):
    """c3 = 1: the 1/(1 - (1 - p_c) p_m) rescaling by the unmasked share a dropped."""
    c1, c2, c3 = constants(m)
    return c1, c2, 1.0


def constants_c2_no_minus_one(m):
    """c2 = 1/((1 - p_c - p_r) p_m): the '- 1' of c2 dropped."""
    c1, c2, c3 = constants(m)
    return c1, c2 + 1.0, c3


def constants_c1_sign(m):
    """+c1 instead of -c1 in W_i0."""
    c1, c2, c3 = constants(m)
    return -c1, c2, c3


def measure_constants(T, v, tau, p_m, p_c, p_r, seed=0):
    """(c1, c2, c3, spread, scale) of Lemma 1 MEASURED from two minimisers of the exact
    Assumption-1 loss (sim.topic.subset_moments): W1 = C M^+ and W2 = W1 + Z (I - M M^+), Z
    N(0, 1) from `seed`.  For each word row i, with u_i = (mean other-topic block sum) / v:
    c3 = own-topic block sum - v u_i, c2 = -(change of W_i0) / (change of u_i) and
    c1 = -W_i0 - c2 u_i.  `spread` is the largest disagreement between rows (0 up to round-off
    when Lemma 1 holds), `scale` the round-off scale of the constants: max |W| x (1 + |c2|) x
    cond M on its range / min(1, min_i |change of u_i|) (c2 is a difference quotient over the
    change of u_i, and c1 carries c2's error times |u_i| <= max |W|).  Used by
    topic.theorem2.ranges and its figure."""
    mom = sm.subset_moments(T, v, tau, p_m, p_c, p_r)
    n = mom["n"]
    Mp = np.linalg.pinv(mom["M"], rcond=1e-12, hermitian=True)
    W1 = mom["C"] @ Mp
    Z = np.random.default_rng(seed).normal(0, 1, (n, n))
    W2 = W1 + Z @ (np.eye(n) - mom["M"] @ Mp)
    topic = np.r_[0, (np.arange(1, n) - 1) // v + 1]
    own = topic[:, None] == np.arange(1, T + 1)[None, :]

    def u_and_own(W):
        B = W[:, 1:].reshape(n, T, v).sum(-1)
        other = (B * ~own).sum(1) / np.maximum((~own).sum(1), 1)
        return other / v, (B * own).sum(1)

    u1, own1 = u_and_own(W1)
    u2, _ = u_and_own(W2)
    rows = np.arange(1, n)
    c2 = -(W2[rows, 0] - W1[rows, 0]) / (u2[rows] - u1[rows])
    c1 = -W1[rows, 0] - c2 * u1[rows]
    c3 = own1[rows] - v * u1[rows]
    cond = float(np.linalg.cond(mom["M"] + np.eye(n) - mom["M"] @ Mp))
    spread = max(np.ptp(c1), np.ptp(c2), np.ptp(c3))
    du = float(np.abs(u2[rows] - u1[rows]).min())
    scale = float((np.abs(W2).max() + 1) * (1 + abs(c2.mean())) * cond / min(1.0, du))
    return float(c1.mean()), float(c2.mean()), float(c3.mean()), float(spread), scale


def mu_range(mom):
    """(smallest non-zero, largest) eigenvalue of M."""
    mu = np.linalg.eigvalsh(mom["M"])
    return float(mu[mu > 1e-12 * mu.max()].min()), float(mu.max())


def grad(W, mom, b=None, lam=0.0):
    """Autograd gradient of the Assumption-1 loss in W (and b): numpy arrays."""
    Wt = torch.tensor(np.asarray(W, dtype=np.float64), requires_grad=True)
    sm.infinite_loss(Wt, mom, None if b is None else torch.tensor(b), lam).sum().backward()
    return Wt.grad.numpy()


def exact_tol(W, mom):
    """Round-off of the quadratic loss and its gradient at W: 10 n^2 accumulated products of
    size max|W|^2 n (a deliberately generous bound; still ~1e-10)."""
    n = mom["n"]
    scale = float(np.abs(W).max() ** 2 * n + 1)
    return Tolerance.roundoff(scale, ops=10 * n ** 2)


def residual_bound(G, v, mu_min):
    """Error model for the Lemma 1 family residual of an approximate minimiser W, from its
    gradient G = 2 (W M - C'): the distance of W from the (affine) minimiser set along range(M)
    is ||D||_F <= ||G||_F / (2 mu_min); the residual is the projection (I - P_coef) of the
    linear map D_row -> (block sums of D_row, D_i0), whose norm is <= sqrt(v); so
    max|residual| <= sqrt(v) ||G||_F / (2 mu_min)."""
    return math.sqrt(v) * float(np.linalg.norm(G)) / (2 * mu_min)


def random_member(rng, m, consts, u_scale=0.3):
    """A random member of the Lemma 1 family with constants `consts` = (c1, c2, c3)."""
    T, v, tau, p_m, p_c, p_r = m
    n = T * v + 1
    c1, c2, c3 = consts
    return th.lemma1_member_with(T, v, c1, c2, c3, rng.normal(0, u_scale, n),
                                 rng.uniform(0.2, 1.0, (n, n)))


def mc_loss(W, b, m, seed, N, D):
    """Finite-document MC estimate of the uniform-attention loss with (W, b), by the eq. 7 model
    (sim.topic.forward) on `D` documents of N tokens (model='theory', tau topics each)."""
    T, v, tau, p_m, p_c, p_r = m
    g = make_generator(seed)
    n = T * v + 1
    words, valid = sm.sample_documents(g, D, T, v, model="theory", tau=tau, N=N)
    tok, masked = sm.mask_tokens(g, words, valid, p_m, p_c, p_r, n - 1)
    sw = sm.Switches(onehot=True, uniform=True)
    p = sm.init_params(g, len(W), n, sw=sw, WV=None, device="cpu")
    p["WV"] = torch.as_tensor(np.stack(W))
    p["bpred"] = torch.as_tensor(np.stack(b))
    per_doc = []
    ch = 100
    for k in range(0, D, ch):  # per-document losses, in chunks
        out = sm.forward(p, tok[k:k + ch], valid[k:k + ch], sw)
        pick = out.gather(-1, words[k:k + ch].expand(len(W), -1, -1)[..., None])[..., 0]
        per = (out * out).sum(-1) - 2 * pick + 1.0
        mf = masked[k:k + ch].to(torch.float64)
        per_doc.append((per * mf).sum(-1) / mf.sum(-1).clamp_min(1))
    per_doc = torch.cat(per_doc, 1).numpy()  # (len(W), D)
    return per_doc.mean(1), per_doc.std(1, ddof=1) / math.sqrt(D)


def mc_loss_topics_off(W, b, m, seed, N, D):
    """Null of the Monte Carlo: the same documents with the topic structure switched off (every
    document covers all T topics, so words are uniform over the vocabulary)."""
    T, v, tau, p_m, p_c, p_r = m
    return mc_loss(W, b, (T, v, T, p_m, p_c, p_r), seed, N, D)


def bias_bound(W, b, N):
    """O(1/N) finite-document bias of the per-document loss: the masked-position average and
    the empirical token distribution are ratios of sums over N positions; the bound
    (||W||_2^2 + 4 max|W| + 4 max|b|) / N of the original audit."""
    return np.array([(np.linalg.norm(w, 2) ** 2 + 4 * np.abs(w).max() + 4 * np.abs(bb).max()) / N
                     for w, bb in zip(W, b)])


# --------------------------------------------------------------------------------------------
# Stage 2 (Theorems 3 and 5): the explicit three-value attention model, minimised
# --------------------------------------------------------------------------------------------
S2_MODEL = ("explicit three-value attention model (Assumption 2 [R]): unnormalised weight of a "
            "key token l for a query token q is beta if l = q, alpha if l != q are words of the "
            "same topic, 1 otherwise, times the key's Assumption-1 frequency p~_S(l); a masked "
            "query shows its word (p_c), a uniform random word (p_r) or [MASK]. Two readings of "
            "[MASK] (not recovered): 'token' ([MASK] is a one-word topic) and 'uniform' (a "
            "[MASK] query attends uniformly, [MASK] keys weigh 1); both are audited")


def golden(f, lo, hi, iters=80):
    gr = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - gr * (b - a), a + gr * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - gr * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + gr * (b - a)
            fd = f(d)
    return (a + b) / 2


def gamma_star(T, v, tau, p_m, p_c, p_r, mq):
    args = (p_m, p_c, p_r, T, v)
    coef = (th._wi0(*args), th._wdiff(*args), th._wsame(*args))
    lg = np.linspace(np.log(1e-3), np.log(1e12), 1500)
    L = sm.stage2_loss_fast("block", coef, T, v, tau, p_m, p_c, p_r, np.exp(lg), np.exp(lg), mq)
    k = int(L.argmin())
    if k in (0, len(lg) - 1):
        raise AssertionError(f"gamma* at the grid edge ({np.exp(lg[k]):.3g}): widen the grid")
    f = lambda x: float(sm.stage2_loss_fast("block", coef, T, v, tau, p_m, p_c, p_r,  # noqa: E731
                                            np.exp(x), np.exp(x), mq))
    return math.exp(golden(f, lg[k - 1], lg[k + 1]))


def ab_star(T, v, tau, p_m, p_c, p_r, mq):
    from scipy.optimize import minimize
    cc = th.constants(p_m, p_c, p_r, T, v)
    coef = (-cc["c1"], cc["c3"])
    la = np.linspace(np.log(1e-5), np.log(1e10), 90)
    A, B = np.meshgrid(la, la, indexing="ij")
    L = sm.stage2_loss_fast("diag", coef, T, v, tau, p_m, p_c, p_r, np.exp(A), np.exp(B), mq)
    i, j = np.unravel_index(int(L.argmin()), L.shape)
    f = lambda z: float(sm.stage2_loss_fast("diag", coef, T, v, tau, p_m, p_c, p_r,  # noqa: E731
                                            np.exp(z[0]), np.exp(z[1]), mq))
    res = minimize(f, [A[i, j], B[i, j]], method="Nelder-Mead",
                   options=dict(xatol=1e-8, fatol=1e-15, maxiter=2000))
    za, zb = (res.x if res.fun <= L[i, j] else (A[i, j], B[i, j]))
    if zb >= la[-1] - 1e-9 or zb <= la[0] + 1e-9:
        raise AssertionError("beta* at the grid edge: widen the grid")
    return math.exp(za), math.exp(zb)




def gamma_opt(T, v, tau, p_m, p_c, p_r, mq):
    """gamma* of Theorem 3: the optimal gamma = ((v-1) alpha + beta)/v over (alpha, beta) with
    W^V = Theorem 2's W*.  'uniform' [MASK] reading: the loss depends on gamma only, so
    alpha = beta = gamma (gamma_star).  'token' reading: a [MASK] query weighs [MASK] keys by
    beta and words by 1, so the loss is L_words(gamma) + L_mask(beta) (word queries see only
    their topic sums, p~ (beta + (v-1) alpha) = p~ v gamma, under the block-uniform W*): it is
    separable, and gamma* is found at beta = 1 fixed, alpha = (v gamma - 1)/(v - 1)."""
    if mq == "uniform":
        return gamma_star(T, v, tau, p_m, p_c, p_r, mq)
    args = (p_m, p_c, p_r, T, v)
    coef = (th._wi0(*args), th._wdiff(*args), th._wsame(*args))

    def loss(lg):
        g = np.exp(lg)
        return sm.stage2_loss_fast("block", coef, T, v, tau, p_m, p_c, p_r,
                                   (v * g - 1.0) / (v - 1), np.ones_like(g), mq)

    lg = np.linspace(np.log(1.0 / v) + 1e-6, np.log(1e12), 1500)
    L = loss(lg)
    k = int(L.argmin())
    if k in (0, len(lg) - 1):
        raise AssertionError(f"gamma* at the grid edge ({np.exp(lg[k]):.3g}): widen the grid")
    return math.exp(golden(lambda x: float(loss(np.array(x))), lg[k - 1], lg[k + 1]))


# --------------------------------------------------------------------------------------------
# Thresholds of the empirical claims, calibrated on seeds disjoint from the audit's
# --------------------------------------------------------------------------------------------
EMPIRICAL_AUDIT_SEEDS = range(0, 10000)
EMPIRICAL_FALSE_FAIL = 1e-4  # per check and draw, under the normal model of seed-to-seed spread


# --------------------------------------------------------------------------------------------
# The empirical orders, tested as the paper writes them (issue 24): "A > B" shown on the draw
# against 0 beyond the statistic's own noise (the same weights or attention with the topics
# relabelled: permutation tests, distribution-free), never against the A - B that calibration
# runs gave
# --------------------------------------------------------------------------------------------
def permutations_for(level: float) -> int:
    """Relabellings needed for a one-sided permutation test at level `level`: the P with
    1 / (P + 1) = level (rounded up to the next integer 1 / level)."""
    if not (0 < level < 1):
        raise ValueError(f"level must be in (0, 1), got {level}")
    return int(math.ceil(1.0 / level)) - 1


def relabelled_contrasts(W, T: int, v: int, P: int, seed: int) -> np.ndarray:
    """Block contrast (mean same-topic off-diagonal - mean different-topic entry of the word
    block) of W (n x n) under P uniformly random relabellings of the Tv word ids (rows and
    columns together; the topic sizes kept), from np.random.default_rng(seed): the statistic's
    noise when W's structure has nothing to do with the topics."""
    n = T * v
    Wb = np.asarray(W, dtype=np.float64)[1:, 1:]
    rng = np.random.default_rng(seed)
    total, tr = float(Wb.sum()), float(np.trace(Wb))
    n_same, n_diff = n * (v - 1), n * (n - v)
    out = np.empty(P)
    base = np.arange(n) // v
    for i in range(0, P, 4096):
        k = min(4096, P - i)
        lab = rng.permuted(np.broadcast_to(base, (k, n)), axis=1)  # (k, n) topic of each word
        Z = (lab[:, :, None] == np.arange(T)[None, None, :]).astype(np.float64)  # (k, n, T)
        s_same = (Z * np.matmul(Wb[None], Z)).sum((1, 2))
        out[i:i + k] = (s_same - tr) / n_same - (total - s_same) / n_diff
    return out


def within_topic_diagonal(W, T: int, v: int, P: int, seed: int) -> np.ndarray:
    """Diagonal excess (mean diagonal - mean same-topic off-diagonal entry of the word block) of
    W under P uniformly random permutations of the columns within each topic (the block sums
    kept): the statistic's noise when the same-topic blocks carry no diagonal structure."""
    Wb = np.asarray(W, dtype=np.float64)[1:, 1:]
    n = T * v
    topic = np.arange(n) // v
    s_block = float(Wb[topic[:, None] == topic[None, :]].sum())
    n_off = n * (v - 1)
    rng = np.random.default_rng(seed)
    out = np.empty(P)
    rows = np.arange(n)
    for i in range(0, P, 8192):
        k = min(8192, P - i)
        within = rng.permuted(np.broadcast_to(np.arange(v), (k, T, v)), axis=2)
        cols = (within + (np.arange(T) * v)[None, :, None]).reshape(k, n)
        d = Wb[rows[None, :], cols].sum(-1)
        out[i:i + k] = d / n - (s_block - d) / n_off
    return out


def order_beyond_seed_noise(cid: str, score: float, scores, calibration: dict, *, level: float,
                            what: str, name: str | None = None, unit: str = "log ratio",
                            audit_seeds: range = EMPIRICAL_AUDIT_SEEDS) -> None:
    """The order 'A > B' (score = a log ratio of A to B, one trained element) against 0 with its
    own seed error from `calibration` (calibration.json: generator seeds disjoint from the
    audit's, checked here): the harness's `check_above_noise`."""
    from properties.procedures import check_above_noise

    cal = range(*calibration["generator_seeds"])
    if max(cal.start, audit_seeds.start) < min(cal.stop, audit_seeds.stop):
        raise ValueError(f"calibration seeds {cal} must be disjoint from audit seeds {audit_seeds}")
    check_above_noise(cid, score, scores, false_fail=level, what=what, name=name, unit=unit,
                      noise_from=f"generator seeds [{cal.start}, {cal.stop}) x "
                                 f"{calibration['elements_per_seed']}, disjoint from the "
                                 "audit's")


# The paper's own setting of the empirical claims (Section 6): T = v = 10.  Its cost on one CPU
# core, measured 2026-12-04 (one element, T = v = 10, machine shared): W^V blockwise 21.7 s per
# run (two runs: with and without L2), W^V without L2 15.9 s (two runs), the uniform / joint /
# D^V models 4.6 / 14.2 / 8.3 s, the embedding runs 26.6 s (four settings): ~2.5 min for the
# claims that take it, more than CI's budget, so it runs at the named sizes ladder and paper.
# Re-measured 2026-12-04 (issue 24, round 3) after the T = v = 10 horizon of the LDA models was
# set to 2100 steps (runs.LDA_PAPER_STEPS) and the nulls of the claims' own mechanisms were added
# (embedding topics_off: a second four-setting training): from the audit's own per-claim seconds
# at --size ladder minus those at ci (one core each, machine shared, load ~4.6 on 2 cores), the
# T = v = 10 draw of uniform_loss_gap costs ~78 s and embedding_block's ~95 s; with the W^V
# claims' ~38 s, ~210 s of CPU for the empirical claims' T = v = 10 draws, i.e. > 105 s of wall
# time on 2 cores even perfectly split: above the ~90 s CI allowance, so the paper's setting
# stays at --size ladder / paper.
# Re-measured 2026-12-06 (issue 37), after sim.topic's uniform-attention forward and loss were
# made to sum per document by token (the same sums; 3-5x less CPU for the uniform models): the
# T = v = 10 draw of wv_blockwise_l2 and of wv_diagonal_no_l2 costs ~14 s of one core with 8
# elements (the audit's files at --size ladder minus ci, machine shared), but their paired
# checks need 16 elements there (t_15; with 8, t_7's critical value fails a true effect too
# often): ~60 s, so it stays at --size ladder / paper, as do uniform_loss_gap (2100 joint
# steps), embedding_block and attention_order (12 elements, 2100 joint steps).
PAPER_TV = 10
WV_ELEMENTS = {None: 12, PAPER_TV: 16}  # i.i.d. elements per draw of the two W^V claims (one
# program): 12 at the CI size T = v = 5, 16 at the paper's T = v = 10 (t_15 for the paired order)


def wv_elements(tv=None) -> int:
    """Elements per draw of topic.empirical.wv_blockwise_l2 / wv_diagonal_no_l2 at T = v = tv
    (None: the CI size 5): 12, or 16 at the paper's 10."""
    return WV_ELEMENTS[None if tv is None else PAPER_TV]
PAPER_WHERE = ("Sec. 6: T = v = 10, Dirichlet(0.1) topic mixtures, p_m = 0.15, p_c = p_r = 0.1, "
               "N uniform in an interval lost from the text (100..150 here)")
PAPER_TV_WHY = ("the paper's T = v = 10 (Sec. 6) runs as the explicit @paper_example at --size "
                "ladder / paper; at ci it is skipped for cost (measured: ~20-45 s per draw "
                "against ~5 s at T = v = 5 with the CI's horizons; re-measured 2026-12-04: ~78 s "
                "for uniform_loss_gap with its T = v = 10 horizon of 2100 steps, ~95 s for "
                "embedding_block with its topics_off null, ~210 s for the empirical claims on "
                "one core, > 105 s of CI wall time on 2 cores, above the ~90 s allowed)")


def paper_size_gate(tv: int) -> None:
    """Skip (reject) the paper's T = v = 10 draw at the named size ci (its cost); every other
    draw runs.  Called first in a property body, before any work."""
    from hypothesis import reject

    from properties.settings import size

    if tv != 5 and size() == "ci":
        reject()


def run_tv(tv: int):
    """The `tv` argument of a run at this draw's size: None at the CI size T = v = 5 (the runs'
    default, so that the stored run is the one the figures and the other claims read), else tv."""
    return None if tv == 5 else tv
