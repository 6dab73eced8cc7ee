"""Figures of the topic claims (drawn on demand by the audit report; no work at import).

Imports no claim file (tests/test_layout.py): each figure reads its runs from runs.py or computes
a small closed form / exact-loss minimiser; every figure draws under the audit style
(properties/figstyle.py).
"""

from __future__ import annotations

import numpy as np

from properties import figstyle
from properties.topic.runs import TWO_STAGE, TWO_STAGE_GRID, two_stage_run
from sim import topic as sm
from theory import topic as th


def plot_two_stage(path):
    """Section 5.1 (Figure 4): ||W^V||_F, ||W^K||_F, ||W^Q||_F under Adam from near-zero
    positive init, one element per init scale of the ladder (generator seed 0)."""
    opt, lr, N_range = TWO_STAGE_GRID[0]  # the setting CI runs (the property's stored run)
    run = two_stage_run(0, opt=opt, lr=lr, N_range=N_range)
    R = TWO_STAGE["replicates"]
    with figstyle.figure(path, 1, len(TWO_STAGE["scales"]), figsize=(11, 3.5),
                         sharey=True) as (fig, axs):
        for i, (ax, s) in enumerate(zip(np.atleast_1d(axs), TWO_STAGE["scales"])):
            e = i * R
            for k, c in (("WV", "C0"), ("WK", "C1"), ("WQ", "C2")):
                ax.plot(run["step"], run[k][:, e], color=c, label=f"||{k}||_F")
            tv = run["step"][int(np.argmax(run["WV"][:, e] >= 0.9 * run["WV"][:, e].max()))]
            ax.axvline(tv, ls=":", color="k", lw=0.8, label="t_V: ||W^V|| at 90% of its max")
            ax.set_title(f"init scale {s:g}")
            ax.set_xlabel("Adam step")
        np.atleast_1d(axs)[0].set_ylabel("Frobenius norm")
        np.atleast_1d(axs)[0].legend()
        fig.suptitle("topic.empirical.two_stage: weight norms under Adam from near-zero "
                     "positive init (generator seed 0)")


def plot_theorem2_ranges(path):
    """topic.theorem2.ranges: c1 against p_r (p_m = 0.5, p_c = 0.05, the reason's example) for
    three small (T, v): the closed form and c1 measured from the exact loss's minimisers; the
    printed range c1 < 1 fails past the corrected boundary p_r* = (1 - p_c) a Tv / (1 + a Tv).
    Right: inside Assumptions 3-4 (T = 100, v = 10, p_m = 0.15, p_c = p_r = 1/2 - eps) c1 < 1
    fails only for eps below ~1/(4 a T v).  The measured c1 is the property's
    (common.measure_constants)."""
    from properties.topic.common import measure_constants
    p_m, p_c, tau = 0.5, 0.05, 1
    a = 1 - (1 - p_c) * p_m
    with figstyle.figure(path, 1, 2, figsize=(10.5, 4)) as (fig, axs):
        ax = axs[0]
        ax.axhspan(1e-3, 1.0, color="C2", alpha=0.08)
        ax.axhline(1.0, color="k", lw=1.0, ls="--", label="printed: c1 in (0, 1)")
        for (T, v), c_ in zip(((2, 1), (2, 2), (4, 3)), ("C0", "C1", "C3")):
            pr = np.linspace(0.01, 1 - p_c - 0.01, 200)
            ax.plot(pr, [th.c1(p_m, p_c, x, T, v) for x in pr], color=c_,
                    label=f"c1 closed form, T = {T}, v = {v}")
            pm_ = np.linspace(0.05, 1 - p_c - 0.02, 9)
            ax.plot(pm_, [measure_constants(T, v, tau, p_m, p_c, x)[0] for x in pm_], "o",
                    color=c_, ms=4, mfc="none")
            ps = (1 - p_c) * a * T * v / (1 + a * T * v)
            ax.axvline(ps, color=c_, ls=":", lw=1.2)
        ax.plot([], [], "ko", mfc="none", ms=4, label="c1 measured from the loss's minimisers")
        ax.plot([], [], "k:", label="corrected boundary p_r* (c1 = 1)")
        ax.set(yscale="log", ylim=(1e-3, 1e2), xlabel="p_r", ylabel="c1",
               title=f"p_m = {p_m}, p_c = {p_c}: c1 > 1 past p_r*")
        ax.legend(loc="upper left", fontsize=6.5)
        T, v, p_m2 = 100, 10, 0.15
        eps = np.logspace(-7, np.log10(0.45), 200)
        a2 = 1 - (1 - (0.5 - eps)) * p_m2
        c1s = [th.c1(p_m2, 0.5 - e, 0.5 - e, T, v) for e in eps]
        axs[1].loglog(eps, c1s, color="C0", label="c1 (closed form)")
        axs[1].axhline(1.0, color="k", lw=1.0, ls="--", label="printed bound c1 < 1")
        axs[1].axvline(1 / (4 * a2[0] * T * v), color="C1", ls=":",
                       label="eps = 1/(4 a T v)")
        axs[1].set(xlabel="eps = 1/2 - p_r (p_c = p_r)", ylabel="c1",
                   title="inside Assumptions 3-4 (T = 100, v = 10, p_m = 0.15)")
        axs[1].legend(loc="upper right")
        fig.suptitle("topic.theorem2.ranges: c1 = p_r / ((1 - p_c - p_r)(1 - (1 - p_c) p_m) T v) "
                     "is not bounded by 1")


def _word_block_heatmap(ax, W, T, v, title):
    """The word block (rows/columns 1..Tv) of a (Tv+1, Tv+1) matrix, topic blocks outlined."""
    B = np.asarray(W)[1:, 1:]
    lim = float(np.abs(B).max()) or 1.0
    im = ax.imshow(B, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    for k in range(1, T):
        ax.axhline(k * v - 0.5, color="k", lw=0.6)
        ax.axvline(k * v - 0.5, color="k", lw=0.6)
    ax.set_xticks([v * k + (v - 1) / 2 for k in range(T)], [f"topic {k + 1}" for k in range(T)],
                  fontsize=6.5, rotation=45)
    ax.set_yticks([])
    ax.grid(False)
    ax.set_title(title, fontsize=8.5)
    return im


def plot_embedding_block(path):
    """topic.empirical.embedding_block: the word block of W^E^T W^E after training, for the four
    (loss, optimizer) settings of the claim (the cached run of generator seed 0, the claim's
    explicit example), each titled with its block contrast (runs.embedding_contrast)."""
    from properties.topic.runs import EMBEDDING, embedding_contrast, train_embedding
    E = train_embedding(0)  # (settings, S, n, n)
    T, v = EMBEDDING["T"], EMBEDDING["v"]
    ns = len(EMBEDDING["settings"])
    with figstyle.figure(path, 1, ns, figsize=(2.9 * ns, 3.4)) as (fig, axs):
        for ax, (loss, opt, lr), Ek in zip(np.atleast_1d(axs), EMBEDDING["settings"], E):
            c = float(embedding_contrast(Ek[0]))
            im = _word_block_heatmap(ax, Ek[0], T, v,
                                     f"{loss} loss, {opt} lr {lr:g}\nblock contrast {c:.2f}")
            fig.colorbar(im, ax=ax, shrink=0.7)
        fig.suptitle("topic.empirical.embedding_block: W^E^T W^E (word block) after training, "
                     f"T = {T} topics x v = {v} words (generator seed 0)")


def plot_wv_diagonal_no_l2(path):
    """topic.empirical.wv_diagonal_no_l2: the word block of the trained W^V without L2 (the
    claim's run), with the claim's reference ridge lam = 1e-3, and at init (the untrained null),
    generator seed 0 (the explicit example; cached runs), each titled with its diagonal excess
    (runs.diagonal_excess: (diagonal - same-topic off-diagonal) / (c3/v))."""
    from properties.topic.runs import WV_DIAGONAL, diagonal_excess, train_wv_diagonal
    T, v = WV_DIAGONAL["T"], WV_DIAGONAL["v"]
    runs = (("no L2 (the claim)", train_wv_diagonal(0)),
            ("L2 lam = 1e-3 (the claim's reference ridge)", train_wv_diagonal(0, lam=1e-3)),
            ("untrained (init)", train_wv_diagonal(0, steps=0)))
    with figstyle.figure(path, 1, 3, figsize=(10.5, 3.8)) as (fig, axs):
        for ax, (lab, r) in zip(axs, runs):
            W = r["WV"][0]
            im = _word_block_heatmap(ax, W, T, v,
                                     f"{lab}\ndiagonal excess {float(diagonal_excess(W)):.2f}")
            fig.colorbar(im, ax=ax, shrink=0.7)
        fig.suptitle("topic.empirical.wv_diagonal_no_l2: trained W^V (word block), one-hot "
                     "embeddings, uniform attention (generator seed 0)")


def plot_theorem2(path):
    """topic.theorem2 at the paper's size (T = 10, v = 10, tau = 3, p = (0.15, 0.1, 0.1)): the
    lambda -> 0 limit C M^+ of the ridge minimisers of the exact Assumption-1 loss next to the
    printed W* (their difference is round-off), and ||C (M + lambda I)^-1 - W||_F against
    lambda for W = W* (-> 0 at rate lambda) and W = Definition 2's D^V (another minimiser of
    the unregularised loss: the ridge does not select it)."""
    from properties.topic.common import PAPER
    T, v, tau, p_m, p_c, p_r = PAPER
    mom = sm.subset_moments(T, v, tau, p_m, p_c, p_r)
    W0 = sm.min_norm_minimiser(mom)
    Ws = th.theorem2_wstar(T, v, p_m, p_c, p_r)
    Dv = th.definition2_dv(T, v, p_m, p_c, p_r)
    lams = np.logspace(-8, 0, 13)
    Wl = [sm.ridge_minimiser(mom, lam) for lam in lams]
    e_s = [float(np.linalg.norm(W - Ws)) for W in Wl]
    e_d = [float(np.linalg.norm(W - Dv)) for W in Wl]
    lim = float(np.abs(Ws).max())
    with figstyle.figure(path, 1, 3, figsize=(12, 3.9),
                         gridspec_kw=dict(width_ratios=(1, 1, 1.25))) as (fig, axs):
        for ax, W, ttl in ((axs[0], W0, "C M^+ (ridge minimiser, lambda -> 0)"),
                           (axs[1], Ws, "printed W* (Theorem 2)")):
            im = ax.imshow(W, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
            ax.set_title(ttl)
            ax.grid(False)
            ax.set(xlabel="column (index 0: [MASK]; words 1..Tv by topic)", ylabel="row")
        fig.colorbar(im, ax=axs[:2], shrink=0.8)
        axs[2].loglog(lams, e_s, "o-", label="||W_lambda - W*||_F (printed W*)")
        axs[2].loglog(lams, e_d, "s--", label="||W_lambda - D^V||_F (Definition 2's member)")
        axs[2].loglog(lams, 3 * e_s[0] * lams / lams[0], "k:", lw=1.0, label="slope 1 (reference)")
        axs[2].set(xlabel="ridge lambda", ylabel="Frobenius distance",
                   title=f"max |C M^+ - W*| = {float(np.abs(W0 - Ws).max()):.1e}")
        axs[2].legend(loc="lower right")
        fig.suptitle(f"topic.theorem2: the L2 -> 0 minimiser of the exact loss is the printed W* "
                     f"(T = {T}, v = {v}, tau = {tau}, p = {(p_m, p_c, p_r)})")


TAU_LADDER = (16, 32, 64, 128, 256)  # the ladder of the Theorem 3 / 5 properties (T = tau^2)


def plot_theorem3(path):
    """topic.theorem3 on the properties' ladder (T = tau^2, v = 10, p = (0.15, 0.1, 0.1)): the
    optimal gamma* (properties.topic.common.gamma_opt, both [MASK] readings) against the printed
    bounds lambda1 (tau - 1) < gamma* < lambda2 T and two rival lower bounds."""
    from properties.topic.common import PAPER_P, gamma_opt
    v = 10
    taus = np.array(TAU_LADDER, float)
    Ts = [int(round(t ** 2)) for t in TAU_LADDER]
    b = np.array([th.theorem3_bounds(T, t, v, *PAPER_P) for T, t in zip(Ts, TAU_LADDER)])
    with figstyle.figure(path, figsize=(7.5, 4.4)) as (fig, ax):
        for mq, mk in (("uniform", "o-"), ("token", "s--")):
            g = [gamma_opt(T, v, t, *PAPER_P, mq) for T, t in zip(Ts, TAU_LADDER)]
            ax.loglog(taus, g, mk, lw=2, label=f"gamma* (optimal; [MASK] reading '{mq}')")
        ax.loglog(taus, b[:, 0], "k-", label="printed lower bound lambda1 (tau - 1)")
        ax.loglog(taus, b[:, 1], "k-.", label="printed upper bound lambda2 T")
        ax.loglog(taus, b[:, 0] * (taus - 1), ":", color="C3",
                  label="rival lower bound lambda1 (tau - 1)^2")
        ax.loglog(taus, b[:, 0] / (taus - 1) * (np.array(Ts) - 1), "--", color="C5",
                  label="rival lower bound lambda1 (T - 1)")
        ax.set(xlabel="tau (topics per document; T = tau^2)", ylabel="gamma",
               title="the optimal gamma lies between the printed bounds")
        figstyle.log_ticks(ax.xaxis, taus, [str(t) for t in TAU_LADDER])
        ax.legend(fontsize=6.5, loc="upper left")
        fig.suptitle(f"topic.theorem3: W^V = W*, v = {v}, p = {PAPER_P}")


def plot_theorem5(path):
    """topic.theorem5 on the properties' ladder (T = tau^2, v = 10, p = (0.15, 0.1, 0.1), the
    'uniform' [MASK] reading): beta* against the printed bounds, and alpha* against
    c4 beta* / (v - 1) (properties.topic.common.ab_star)."""
    from properties.topic.common import PAPER_P, ab_star
    v = 10
    taus = np.array(TAU_LADDER, float)
    Ts = [int(round(t ** 2)) for t in TAU_LADDER]
    ab = np.array([ab_star(T, v, t, *PAPER_P, "uniform") for T, t in zip(Ts, TAU_LADDER)])
    b = np.array([th.theorem5_bounds(T, t, v, *PAPER_P) for T, t in zip(Ts, TAU_LADDER)])
    with figstyle.figure(path, 1, 2, figsize=(10.5, 4.2)) as (fig, axs):
        axs[0].loglog(taus, ab[:, 1], "o-", lw=2, label="beta* (optimal)")
        axs[0].loglog(taus, b[:, 0], "k-", label="printed lower bound")
        axs[0].loglog(taus, b[:, 1], "k-.", label="printed upper bound")
        axs[0].set(ylabel="beta", title="(1 + c4 p_m p_r) v tau/(100 c4) < beta* < c7 (...) v T")
        axs[1].loglog(taus, ab[:, 0], "o-", lw=2, color="C1", label="alpha* (optimal)")
        axs[1].loglog(taus, b[:, 2] * ab[:, 1], "k-", label="printed bound c4 beta* / (v - 1)")
        axs[1].set(ylabel="alpha", title="alpha* < c4 beta* / (v - 1)")
        for ax in axs:
            ax.set_xlabel("tau (T = tau^2)")
            figstyle.log_ticks(ax.xaxis, taus, [str(t) for t in TAU_LADDER])
            ax.legend(loc="upper left")
        fig.suptitle(f"topic.theorem5: W^V = D^V, v = {v}, p = {PAPER_P}, [MASK] reading "
                     "'uniform'")


def plot_definition2(path):
    """topic.definition2 at the paper's size (T = 10, v = 10, tau = 3, p = (0.15, 0.1, 0.1)):
    D^V next to the loss excess L(W) - L(C M^+) of the exact Assumption-1 loss (uniform
    attention) for D^V, Theorem 2's W* (another minimiser) and the four rival D's of the claim
    (sign slip on c1, c1 dropped, c3 = 1, [MASK] on the diagonal); a minimiser has excess 0
    (round-off)."""
    from properties.topic.common import PAPER
    T, v, tau, p_m, p_c, p_r = PAPER
    mom = sm.subset_moments(T, v, tau, p_m, p_c, p_r)
    D = np.asarray(th.definition2_dv(T, v, p_m, p_c, p_r), float)
    cc = th.constants(p_m, p_c, p_r, T, v)
    c1, c3 = cc["c1"], cc["c3"]
    rivals = {}
    R = D.copy(); R[1:, 0] = +c1; rivals["D_i0 = +c1\n(sign slip)"] = R
    R = D.copy(); R[1:, 0] = 0.0; rivals["D_i0 = 0\n(c1 dropped)"] = R
    R = D.copy(); np.fill_diagonal(R[1:, 1:], 1.0); rivals["D_ii = 1\n(c3 = 1)"] = R
    R = D.copy(); R[0, 0] = c3; rivals["D_00 = c3\n([MASK] too)"] = R
    cands = {"D^V\n(printed)": D,
             "W*\n(Theorem 2)": np.asarray(th.theorem2_wstar(T, v, p_m, p_c, p_r), float),
             **rivals}
    L0 = float(sm.infinite_loss(sm.min_norm_minimiser(mom), mom))
    ex = np.array([float(sm.infinite_loss(W, mom)) - L0 for W in cands.values()])
    with figstyle.figure(path, 1, 2, figsize=(11, 4.2),
                         gridspec_kw=dict(width_ratios=(1, 1.4))) as (fig, axs):
        lim = float(np.abs(D).max())
        im = axs[0].imshow(D, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        axs[0].grid(False)
        axs[0].set(title=f"D^V: D_i0 = -c1 = {-c1:.3g}, D_ii = c3 = {c3:.3g}",
                   xlabel="column (index 0: [MASK])", ylabel="row")
        fig.colorbar(im, ax=axs[0], shrink=0.8)
        floor = 1e-17
        cols = ["C0", "C2"] + ["C1"] * len(rivals)
        axs[1].bar(np.arange(len(ex)), np.maximum(np.abs(ex), floor), color=cols)
        for k, e in enumerate(ex):
            axs[1].text(k, max(abs(e), floor) * 1.6, f"{e:.1e}", ha="center", fontsize=7)
        axs[1].set_xticks(np.arange(len(ex)), list(cands), fontsize=7)
        axs[1].set(yscale="log", ylim=(floor / 3, 10 * max(np.abs(ex).max(), 1e-3)),
                   ylabel="|L(W) - L(C M^+)| (exact loss)",
                   title="minimisers (blue, green) at round-off; rival D's (orange) above")
        fig.suptitle(f"topic.definition2: D^V is a Stage-1 minimiser (T = {T}, v = {v}, "
                     f"tau = {tau}, p = {(p_m, p_c, p_r)})")


def plot_theorem4(path):
    """topic.theorem4 at a small size (T = 4, v = 3, tau = 2, p = (0.15, 0.1, 0.1)): full-batch
    GD (sim.topic.gd_infinite, step 1/(mu_min + mu_max)) on the unregularised exact loss from
    three random inits (N(0, 0.5^2), seed 0): the residual of the Lemma 1 family conditions
    (printed constants) falls with the contraction bound sqrt(v) rho^k ||W0 - C M^+||_F, while
    the distance to the unique-minimiser reading W* and the residual with c1 dropped stay
    away from 0 (the limit depends on the init)."""
    from properties.topic.common import mu_range
    T, v, tau, (p_m, p_c, p_r) = 4, 3, 2, (0.15, 0.1, 0.1)
    mom = sm.subset_moments(T, v, tau, p_m, p_c, p_r)
    n = mom["n"]
    cc = th.constants(p_m, p_c, p_r, T, v)
    mu_min, mu_max = mu_range(mom)
    lr, rho = 1.0 / (mu_min + mu_max), (mu_max - mu_min) / (mu_max + mu_min)
    W = np.random.default_rng(0).normal(0, 0.5, (3, n, n))
    d0 = float(np.linalg.norm(W - sm.min_norm_minimiser(mom), axis=(1, 2)).max())
    Ws = np.asarray(th.theorem2_wstar(T, v, p_m, p_c, p_r), float)
    chunk, n_chunks = 2, 50
    ks, fam, nc1, dws = [0], [], [], []

    def record(W):
        fam.append([np.abs(th.lemma1_fit_with(w, T, v, cc["c1"], cc["c2"], cc["c3"])[1]).max()
                    for w in W])
        nc1.append([np.abs(th.lemma1_fit_with(w, T, v, 0.0, cc["c2"], cc["c3"])[1]).max()
                    for w in W])
        dws.append([np.abs(w - Ws).max() for w in W])

    record(W)
    for i in range(n_chunks):
        W = sm.gd_infinite(W, mom, steps=chunk, lr=lr)
        ks.append((i + 1) * chunk)
        record(W)
    ks = np.array(ks)
    with figstyle.figure(path, figsize=(7.5, 4.4)) as (fig, ax):
        for j in range(3):
            kw = dict(label=None) if j else {}
            ax.semilogy(ks, np.array(fam)[:, j], "-", color="C0",
                        **(kw or dict(label="Lemma 1 family residual (printed c1, c2, c3)")))
            ax.semilogy(ks, np.array(nc1)[:, j], "--", color="C1",
                        **(kw or dict(label="family residual with c1 = 0 (rival)")))
            ax.semilogy(ks, np.array(dws)[:, j], "-.", color="C2",
                        **(kw or dict(label="max |W - W*| (rival: unique minimiser W*)")))
        ax.semilogy(ks, np.maximum(np.sqrt(v) * rho ** ks * d0, 1e-17), "k:",
                    label="bound sqrt(v) rho^k ||W0 - C M^+||_F")
        ax.set(xlabel="GD step k", ylabel="max abs residual / distance", ylim=(1e-16, None),
               title=f"GD from 3 random inits, T = {T}, v = {v}, tau = {tau}, rho = {rho:.3f}")
        ax.legend(loc="center right")
        fig.suptitle("topic.theorem4: unregularised GD lands in the Lemma 1 family, not on W*")


def plot_lemma1(path):
    """topic.lemma1 at the paper's size (T = 10, v = 10, tau = 3, p = (0.15, 0.1, 0.1)): the
    exact-loss excess L(W) - L(C M^+) of 12 random members of the Lemma 1 family (random u,
    generator seed 0) built with the printed constants and with each rival's constants, and of
    12 random matrices (the null): only the printed family sits at round-off."""
    from properties.topic import common as tc
    m = tc.PAPER
    T, v, tau, p_m, p_c, p_r = m
    mom = sm.subset_moments(T, v, tau, p_m, p_c, p_r)
    n = mom["n"]
    L0 = float(sm.infinite_loss(sm.min_norm_minimiser(mom), mom))
    sets = (("printed\nc1, c2, c3", tc.constants(m)), ("c1 = 0", tc.constants_no_c1(m)),
            ("c3 = 1", tc.constants_c3_one(m)),
            ("c2 without\n'- 1'", tc.constants_c2_no_minus_one(m)),
            ("W_i0 = +c1\n- c2 u_i", tc.constants_c1_sign(m)))
    rng = np.random.default_rng(0)
    rows = []
    for lab, consts in sets:
        Ws = np.stack([tc.random_member(rng, m, consts) for _ in range(12)])
        rows.append((lab, np.asarray(sm.infinite_loss(Ws, mom)) - L0))
    Wr = rng.normal(0, 0.3, (12, n, n))
    rows.append(("random W\n(null)", np.asarray(sm.infinite_loss(Wr, mom)) - L0))
    floor = 1e-17
    with figstyle.figure(path, figsize=(8.5, 4.2)) as (fig, ax):
        for k, (lab, ex) in enumerate(rows):
            x = k + np.linspace(-0.2, 0.2, ex.size)
            ax.plot(x, np.maximum(np.abs(ex), floor), "o", ms=4,
                    color="C0" if k == 0 else ("0.4" if k == len(rows) - 1 else "C1"))
        ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=7.5)
        ax.set(yscale="log", ylim=(floor / 3, None), ylabel="|L(W) - L(C M^+)| (exact loss)",
               title="random family members: printed constants at round-off, rivals above")
        fig.suptitle(f"topic.lemma1: the minimisers are the Lemma 1 family (T = {T}, v = {v}, "
                     f"tau = {tau}, p = {(p_m, p_c, p_r)})")


def plot_attention_order(path):
    """topic.empirical.attention_order: length-debiased mean attention per pair kind on the
    held-out documents (runs.attention_kinds) for (a) the jointly trained model and (b) the
    model with W^V frozen to D^V, generator seed 0 (the claims' explicit example; cached
    runs), each read also with uniform attention (the null)."""
    from properties.topic.runs import attention_kinds, lda_run
    kinds = (("same_word", "same word\n(other position)"),
             ("same_topic", "same topic,\nother word"), ("diff_topic", "different\ntopic"))
    with figstyle.figure(path, 1, 2, figsize=(10, 4)) as (fig, axs):
        for ax, (model, ttl) in zip(axs, (("joint", "(a) W^K, W^Q, W^V trained jointly:\n"
                                                    "same topic > different topic"),
                                           ("dv", "(b) W^V = D^V: same word > different topic "
                                                  "> same topic"))):
            p, held = lda_run(model, 0)
            a = attention_kinds(model, p, held)
            u = attention_kinds(model, p, held, uniform=True)
            xs = np.arange(len(kinds))
            ax.bar(xs - 0.2, [float(a[k][0]) for k, _ in kinds], 0.4, label="trained attention")
            ax.bar(xs + 0.2, [float(u[k][0]) for k, _ in kinds], 0.4, color="0.7",
                   label="the same model, uniform attention (null)")
            ax.set_xticks(xs, [lab for _, lab in kinds])
            ax.set(ylabel="mean attention per pair (x N/100)", title=ttl)
            ax.legend(loc="upper right")
        fig.suptitle("topic.empirical.attention_order: attention by pair kind on held-out LDA "
                     "documents (generator seed 0)")


def plot_uniform_loss_gap(path):
    """topic.empirical.uniform_loss_gap: per-document held-out MLM loss of the jointly trained
    model and of the model with W^K = W^Q = 0 (only W^V trained), generator seed 0 (cached
    runs), with the relative gap (L_uniform - L_joint) / L_uniform and its paired SE."""
    from properties.topic.runs import heldout_losses, lda_run, uniform_loss_gap
    pu, held = lda_run("uniform", 0)
    pj, _ = lda_run("joint", 0)
    lu, lj = heldout_losses("uniform", pu, held)[0], heldout_losses("joint", pj, held)[0]
    g = uniform_loss_gap(0)
    with figstyle.figure(path, 1, 2, figsize=(10, 4)) as (fig, axs):
        lo, hi = float(min(lu.min(), lj.min())), float(max(lu.max(), lj.max()))
        axs[0].plot(lj, lu, "o", ms=3, alpha=0.6)
        axs[0].plot([lo, hi], [lo, hi], "k--", lw=0.8, label="equal loss")
        axs[0].set(xlabel="held-out loss, joint training", ylabel="held-out loss, uniform "
                   "attention (only W^V)", title=f"{lu.size} held-out documents")
        axs[0].legend(loc="upper left")
        d = lu - lj
        axs[1].hist(d, bins=30, color="C0", alpha=0.8)
        axs[1].axvline(0, color="k", lw=0.8)
        axs[1].axvline(d.mean(), color="C1", lw=1.5,
                       label=f"mean: relative gap {float(g['gap'][0]):.4f} +- "
                             f"{float(g['se'][0]):.4f} (SE)")
        axs[1].set(xlabel="L_uniform - L_joint per document", ylabel="documents",
                   title=f"L_uniform = {float(g['L_uniform'][0]):.4f}, "
                         f"L_joint = {float(g['L_joint'][0]):.4f}")
        axs[1].set_ylim(0, 1.2 * axs[1].get_ylim()[1])
        axs[1].legend(loc="upper right")
        fig.suptitle("topic.empirical.uniform_loss_gap: freezing W^K = W^Q = 0 costs only a "
                     "little held-out loss (generator seed 0)")
