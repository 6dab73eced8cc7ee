"""Figures of the JoMA claims (drawn on demand by the audit report; no work at import).

Imports no claim file (tests/test_layout.py): each figure recomputes its own small, fixed run.
"""

from __future__ import annotations

import numpy as np

import torch

from properties.joma.common import (entropy_curves, entropy_setting, eq9_c1, jl_fail_count,
                                    near_orthogonal_runs, random_init, rank_curves,
                                    rank_setting, token_stats)
from sim import joma as sj
from sim.joma import make_problem, simulate_eqn2, simulate_eqn7, solve_eqn3
from theory import joma as th


def plot_theorem2(path):
    """Theorem 2 on the reduced Eqn. 3: the corrected and printed invariants, and v_l(t) with
    the limits of the one-hot remark."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    delta = np.array([1.0, 0.7, -0.45, 0.2])
    t_star = float(th.theorem2_blowup_time(1.0, 1.0))
    t, V = solve_eqn3(delta, 0.999 * t_star, n_eval=400)
    fig, axs = plt.subplots(1, 3, figsize=(11, 3.3))
    for l in range(len(delta)):
        axs[0].plot(t, th.theorem2_corrected_term(V[:, l]) / delta[l], label=f"Delta={delta[l]:g}")
        axs[1].plot(t, th.theorem2_printed_term(V[:, l]) / delta[l])
        axs[2].plot(t, V[:, l])
        lim = th.theorem2_limit(delta[l], 1.0)
        if l:
            axs[2].axhline(lim, ls=":", lw=0.8, color=f"C{l}")
    axs[0].plot(t, np.sqrt(2 / np.pi) * t, "k:", lw=0.8, label="sqrt(2/pi) t")
    axs[0].set_title("corrected: erf(v_l/sqrt2)/Delta_l")
    axs[1].set_title("printed: erf(v_l/2)/Delta_l")
    axs[2].set_title("v_l(t) -> limits (dotted), t -> t*")
    axs[0].legend(fontsize=7)
    for ax in axs:
        ax.set_xlabel("t")
    fig.suptitle("joma.theorem2 on the reduced Eqn. 3 (solve_ivp)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_theorem5(path):
    """Theorem 5: exact enumeration of HBLT(rho) against the corrected and printed rho_0."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    p0, q, depth = np.array([0.3, 0.7]), np.array([0.2, 0.6]), 4
    rs = np.linspace(-1, 1, 41)
    fig, ax = plt.subplots(figsize=(6, 4))
    for h, col in zip(range(1, depth), ["C0", "C1", "C2"]):
        ex = []
        for r in rs:
            tree = sj.make_hblt(p0, q, float(r), 2, depth, 1)
            C, _ = sj.hblt_exact_leaf_cooccurrence(tree)
            Hm = tree.cla_height_matrix()
            ex.append(float(C[int(torch.nonzero(Hm[0] == h)[0, 0]), 0]))
        ax.plot(rs, ex, "o", color=col, ms=3, label=f"exact enumeration, H={h}")
        ax.plot(rs, th.theorem5_corrected(rs, q, p0, h, depth), "-", color=col,
                label=f"corrected rho_0, H={h}")
        ax.plot(rs, th.theorem5_printed(rs, q, p0, h, depth), "--", color=col,
                label=f"printed rho_0, H={h}")
    ax.set_xlabel("rho")
    ax.set_ylabel("P[y_l=1 | y_m=1]")
    ax.set_title("Theorem 5, HBLT(rho), B=1, N_ch=2, L=4, D=2")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_eq9(path):
    """Eqn 9: the printed and corrected remainders against eps (60-digit arithmetic)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    eps_v = np.logspace(-5, -1, 30)
    fig, ax = plt.subplots(figsize=(6, 4))
    for (h, depth), col in zip([(1, 3), (1, 4), (3, 4), (2, 5)], ["C0", "C1", "C2", "C3"]):
        e_p = th.eq9_remainder_mp(eps_v, h, depth, 0)
        e_c = th.eq9_remainder_mp(eps_v, h, depth, eq9_c1(h, depth))
        ax.loglog(eps_v, np.maximum(e_p, 1e-30), "--", color=col, label=f"printed, H={h}, L={depth}")
        ax.loglog(eps_v, np.maximum(e_c, 1e-30), "-", color=col, label=f"corrected, H={h}, L={depth}")
    ax.set_ylim(1e-12, 1)
    ax.set_xlabel("eps")
    ax.set_ylabel("|remainder|")
    ax.set_title("Eqn 9 remainders (L = 2H: identically 0, not drawn)", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_theorem1(kind):
    """Theorem 1 (linear or exp attention): drift of the flow invariant, of the rival dropping
    the square / the 1/2 (z - sum v^2), and of the exact discrete identity, against eta."""
    flow = {"linear": th.theorem1_linear, "exp": th.theorem1_exp}[kind]
    discrete = {"linear": th.theorem1_linear_discrete, "exp": th.theorem1_exp_discrete}[kind]
    wrong = th.lambdify_invariant(th.THEOREM1_EXP_WRONG)  # z - sum_k v_k^2

    def plot(path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        p = make_problem([0, 1, 2], M_C=6, K=2, d=9, N=32, attention=kind, activation="relu",
                         device="cpu")
        W0, z0 = random_init(p, 0, 0.4)
        etas = [0.04 / 2 ** i for i in range(6)]
        err, cerr, derr = [], [], []
        for eta in etas:
            tr = simulate_eqn2(p, eta=eta, horizon=1.0, W0=W0, z0=z0)
            s2, _ = token_stats(tr)
            drift = lambda I: np.abs(I - I[0])[-1].max()  # noqa: E731
            err.append(drift(flow(z=tr.z, s2=s2)))
            cerr.append(drift(wrong(z=tr.z, s2=s2)))
            derr.append(drift(discrete(z=tr.z, s2=s2, Q_v=tr.Qv, Q_z=tr.Qz)) + 1e-17)
        fig, ax = plt.subplots(figsize=(5, 3.6))
        ax.loglog(etas, err, "o-", label="Theorem 1 invariant (flow)")
        ax.loglog(etas, cerr, "s--", label="rival: z - sum v^2")
        ax.loglog(etas, derr, "^:", label="exact discrete identity")
        ax.loglog(etas, np.array(etas) * err[0] / etas[0], "k-", lw=0.6, label="slope 1")
        ax.set_xlabel("step size eta")
        ax.set_ylabel("max drift of the invariant at t = 1")
        ax.set_title(f"joma.theorem1.{kind}: drift vs step size")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return plot


def plot_near_orthogonal(path):
    """Section 7: Theorem 1's exact discrete invariant drift vs the coherence eps, and the JL
    success fraction for d = 8 eps^-2 log M (natural log and log10)."""
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = []
    for eps, z, s2, Qv in near_orthogonal_runs(0)[1:]:
        inv = th.theorem1_exp_discrete(z=z, s2=s2, Q_v=Qv)
        wrong = z - s2
        rows.append((eps, np.abs(inv - inv[0]).max(), np.abs(wrong - wrong[0]).max(),
                     np.abs(z).max()))
    rows = np.array(rows)
    fig, axs = plt.subplots(1, 2, figsize=(8.5, 3.3))
    axs[0].loglog(rows[:, 0], rows[:, 1] / rows[:, 3], "o-", label="Thm 1 invariant")
    axs[0].loglog(rows[:, 0], rows[:, 2] / rows[:, 3], "x--", label="rival z - sum v^2")
    axs[0].set_xlabel("coherence eps = max |u_l^T u_l'|")
    axs[0].set_ylabel("max drift / max |z|")
    axs[0].legend(fontsize=7)
    Ms = np.array([10, 30, 100, 300])
    for eps, c in ((0.2, "C0"), (0.3, "C1")):
        for base, ls in ((math.e, "-"), (10, ":")):
            ds = np.ceil(8 * np.log(Ms) / np.log(base) / eps ** 2)
            fr = [1 - jl_fail_count(int(M), eps, int(d), 10, 0) / 10 for M, d in zip(Ms, ds)]
            axs[1].plot(Ms, fr, ls, color=c, marker="o",
                        label=f"eps={eps}, log{'' if base == math.e else '10'}")
    axs[1].set_xscale("log")
    axs[1].set_xlabel("M")
    axs[1].set_ylabel("fraction of draws with all |u^T u'| <= eps")
    axs[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_theorem4(path):
    """Eqn. 7: delta_j(t) = 1 - v_j/mu_j for seven targets (salient components converge first)."""
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mu = np.array([0.3, 0.7, 1.0, 1.3, 1.6, 1.9, 2.2])
    r0 = np.full(mu.shape, 0.0) + 0.05
    T = 500 / math.exp(mu.max() ** 2 / 2)
    run = simulate_eqn7(mu, r0 * mu, T, n_points=400, state="deviation", atol=1e-300)
    fig, ax = plt.subplots(figsize=(6, 4))
    cmap = plt.get_cmap("viridis")
    for j in range(mu.size):
        ax.semilogy(run.t, np.abs(run.delta[:, j]), color=cmap(j / (mu.size - 1)),
                    label=f"mu_j={mu[j]:.1f}")
    ax.set_xlabel("t")
    ax.set_ylabel("delta_j(t) = 1 - v_j/mu_j")
    ax.set_title("Eqn. 7: salient components converge first (Theorem 4)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_entropy(path):
    """Section 4, Fig. 4 (right): entropy of softmax(v^2) under Eqn. 7, with and without the
    attention factor."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mu, v0 = entropy_setting(16, 2, [2.0, 2.0], list(np.linspace(0.5, 1.0, 14)), 0.01)
    t, Ha, _ = entropy_curves(mu, v0)
    _, Hc, _ = entropy_curves(mu, v0, attention=False)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogx(t[1:], Ha[1:], label="Eqn. 7 (with attention)")
    ax.semilogx(t[1:], Hc[1:], "--", label="null: v_dot = mu - v")
    ax.set_xlabel("t")
    ax.set_ylabel("entropy(softmax(v^2)) [nats]")
    ax.set_title("Attention entropy drops, then rebounds (Fig. 4 right)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rank(path):
    """Section 4: stable rank of V = [v_1..v_K] under Eqn. 7, with and without attention."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    M, V0 = rank_setting(4, 4, 1, 1.4, 0.7, 0.1, 0.01)
    t, Sa, _ = rank_curves(M, V0)
    _, Sc, _ = rank_curves(M, V0, attention=False)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogx(t[1:], Sa[1:], label="K nodes, shared exp attention")
    ax.semilogx(t[1:], Sc[1:], "--", label="null: no attention")
    ax.set_xlabel("t")
    ax.set_ylabel("stable rank ||V||_F^2 / ||V||_2^2")
    ax.set_title("Stable rank of V drops, then bounces back")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_fig2(path):
    """Fig. 2's two settings (M_C = 8, K = 2, N = 64, 6 seeds, horizon 40): correlation with
    z_m(t) of zhat_m and of its two components."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from properties.joma.common import (fig2_correlations, zhat_component_1, zhat_component_2,
                                        zhat_full)
    from properties.joma.runs import DISTS, fig2_run

    fig, axs = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, dist in zip(axs, DISTS):
        tr = fig2_run(tuple(range(6)), 8, 2, 2, 64, dist, 40.0)
        for fn, lab in ((zhat_full, "zhat_m"), (zhat_component_1, "zhat_m1"),
                        (zhat_component_2, "zhat_m2")):
            ax.plot(tr.t[1:], np.nanmedian(fig2_correlations(tr, fn), -1), label=lab)
        ax.axhline(0.9, color="k", ls="--", lw=0.8, label="reading 0.9")
        ax.set_title(f"x {dist} over classes (M_C=8, K=2, 6 seeds)", fontsize=9)
        ax.set_xlabel("t")
        ax.set_ylabel("corr with z_m(t) (median over seeds)")
        ax.legend(fontsize=7)
    fig.suptitle("joma.theorem1.softmax_fig2: Fig. 2's two settings")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_dynamics_trained(key, ylabel, layer=-1):
    """Trained-transformer curves of `key` ("ent" or "sr") in `layer` on the ladder, both token
    orders, the first shared draw (the cached runs of properties.joma.runs)."""
    def plot(path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from properties.joma.common import DYN_DRAWS, dyn_seeds
        from properties.joma.runs import dynamics_run, ladder
        rungs = ladder()
        fig, axs = plt.subplots(1, 2, figsize=(9, 3.4), squeeze=False)
        for ax, order in zip(axs[0], ("sorted", "random")):
            for i, st_ in enumerate(rungs):
                r = dynamics_run(dyn_seeds(DYN_DRAWS[0]), st_, order)
                for j in range(r[key].shape[2]):
                    ax.plot(r["steps"], r[key][:, layer, j], color=f"C{i}", alpha=0.8,
                            label=f"d={st_.d}" if j == 0 else None)
            ax.set_title(f"{order} token order", fontsize=9)
            ax.set_xlabel("Adam step")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return plot


def plot_lowest_first(path):
    """Layer-0 centred attention logits by sibling height H (H = 1: same lowest latent as the
    query), random token order, the first shared draw, every rung of the ladder."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from properties.joma.common import DYN_DRAWS, dyn_seeds
    from properties.joma.runs import dynamics_run, ladder
    rungs = ladder()
    fig, axs = plt.subplots(1, len(rungs), figsize=(3.2 * len(rungs), 3.0), squeeze=False)
    for ax, st_ in zip(axs[0], rungs):
        r = dynamics_run(dyn_seeds(DYN_DRAWS[0]), st_, "random")
        for h in (1, 2, 3):
            ax.plot(r["steps"], np.nanmean(r["logits"][:, :, h], 1), label=f"H={h}")
        ax.set_title(f"d = {st_.d} (mean of {r['logits'].shape[1]} seeds)", fontsize=9)
        ax.set_xlabel("Adam step")
    axs[0, 0].set_ylabel("centred logit, layer 0")
    axs[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_table1(path):
    """Table 1: the paper's NCorr next to the CI-size runs, untrained and trained."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from properties.joma.runs import COMPLEX, PAPER_TABLE1, SIMPLE, TABLE1_CI, table1_run
    from properties.joma.common import table1_seeds, TABLE1_DRAWS
    rows = []
    for cfg in (SIMPLE, COMPLEX):
        r = table1_run(table1_seeds(TABLE1_DRAWS[0]), cfg, TABLE1_CI)
        for s in range(2):
            rows.append([f"({cfg[0]}, {cfg[1]}, {cfg[2]})", f"s={s}",
                         f"{PAPER_TABLE1[cfg][s]:.2f}", f"{r['trained'][:, s].mean():.3f}",
                         f"{r['untrained'][:, s].mean():.3f}"])
    fig, ax = plt.subplots(figsize=(7, 2.6))
    ax.axis("off")
    tb = ax.table(cellText=rows, colLabels=["(C, N_ch, N_s)", "layer", "paper (d=1024)",
                                            f"trained (d={TABLE1_CI.d})", "untrained"],
                  loc="center")
    tb.auto_set_font_size(False)
    tb.set_fontsize(7)
    ax.set_title("Table 1: NCorr of the best-matching neuron per latent")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
