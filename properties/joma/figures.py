"""Figures of the JoMA claims (drawn on demand by the audit report; no work at import).

Imports no claim file (tests/test_layout.py): each figure reads the cached runs of runs.py or
recomputes a small, fixed closed-form / solver / Monte Carlo case (no model is trained here).
Every figure draws under the audit style (properties/figstyle.py); an erratum's figure shows the
printed form failing next to the corrected one.
"""

from __future__ import annotations

import numpy as np

import torch
from scipy.special import erfinv

from properties import figstyle
from properties.joma.common import (entropy_curves, entropy_setting, entropy_theory, eq9_c1,
                                    jl_fail_count, near_orthogonal_runs, random_init, rank_curves,
                                    rank_setting, rank_theory, token_stats)
from sim import joma as sj
from sim import make_generator
from sim.joma import make_problem, simulate_eqn2, simulate_eqn7, solve_eqn3
from theory import joma as th


def plot_theorem2(path):
    """Theorem 2 (Eqn. 4) on the reduced Eqn. 3 (A = 1): the corrected invariant
    erf(v_l/sqrt 2)/Delta_l is one curve sqrt(2/pi) t for every l; the printed erf(v_l/2)/Delta_l
    is not (it depends on l)."""
    delta = np.array([1.0, 0.7, -0.45, 0.2])
    t_star = float(th.theorem2_blowup_time(1.0, 1.0))
    t, V = solve_eqn3(delta, 0.999 * t_star, n_eval=400)
    with figstyle.figure(path, 1, 2, figsize=(9.5, 3.6), sharey=True) as (fig, axs):
        for l in range(len(delta)):
            axs[0].plot(t, th.theorem2_corrected_term(V[:, l]) / delta[l],
                        label=f"Delta_l = {delta[l]:g}")
            axs[1].plot(t, th.theorem2_printed_term(V[:, l]) / delta[l],
                        label=f"Delta_l = {delta[l]:g}")
        for ax in axs:
            ax.plot(t, np.sqrt(2 / np.pi) * t, "k:", lw=1.2, label="sqrt(2/pi) t (common to all l)")
            ax.set_xlabel("t  (blow-up at t* = %.3f)" % t_star)
        axs[0].set(ylabel="invariant / Delta_l",
                   title="corrected: erf(v_l/sqrt 2)/Delta_l, one curve for all l")
        axs[1].set_title("printed Eqn. 4: erf(v_l/2)/Delta_l, differs per l")
        axs[0].legend(loc="upper left")
        fig.suptitle("joma.theorem2: the invariant of Eqn. 3 (solve_ivp, Delta = "
                     f"{tuple(delta.tolist())}, zero init)")


def plot_theorem5(path):
    """Theorem 5: exact enumeration of HBLT(rho) against the corrected and printed rho_0."""
    p0, q, depth = np.array([0.3, 0.7]), np.array([0.2, 0.6]), 4
    rs = np.linspace(-1, 1, 41)
    with figstyle.figure(path, figsize=(6, 4)) as (fig, ax):
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
        ax.set_title("joma.theorem5: HBLT(rho), B=1, N_ch=2, L=4, D=2")
        ax.legend(fontsize=6)


def plot_eq9(path):
    """Eqn 9: the printed and corrected remainders against eps (60-digit arithmetic)."""
    eps_v = np.logspace(-5, -1, 30)
    with figstyle.figure(path, figsize=(6, 4)) as (fig, ax):
        for (h, depth), col in zip([(1, 3), (1, 4), (3, 4), (2, 5)], ["C0", "C1", "C2", "C3"]):
            e_p = th.eq9_remainder_mp(eps_v, h, depth, 0)
            e_c = th.eq9_remainder_mp(eps_v, h, depth, eq9_c1(h, depth))
            ax.loglog(eps_v, np.maximum(e_p, 1e-30), "--", color=col,
                      label=f"printed, H={h}, L={depth}")
            ax.loglog(eps_v, np.maximum(e_c, 1e-30), "-", color=col,
                      label=f"corrected, H={h}, L={depth}")
        ax.set_ylim(1e-12, 1)
        ax.set_xlabel("eps")
        ax.set_ylabel("|remainder|")
        ax.set_title("joma.eq9: Eqn 9 remainders (L = 2H: identically 0, not drawn)")
        ax.legend(fontsize=6)


def plot_theorem1(kind):
    """Theorem 1 (linear or exp attention): drift of the flow invariant, of the rival dropping
    the square / the 1/2 (z - sum v^2), and of the exact discrete identity, against eta."""
    flow = {"linear": th.theorem1_linear, "exp": th.theorem1_exp}[kind]
    discrete = {"linear": th.theorem1_linear_discrete, "exp": th.theorem1_exp_discrete}[kind]
    wrong = th.lambdify_invariant(th.THEOREM1_EXP_WRONG)  # z - sum_k v_k^2

    def plot(path):
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
        with figstyle.figure(path, figsize=(5, 3.6)) as (fig, ax):
            ax.loglog(etas, err, "o-", label="Theorem 1 invariant (flow)")
            ax.loglog(etas, cerr, "s--", label="rival: z - sum v^2")
            ax.loglog(etas, derr, "^:", label="exact discrete identity")
            ax.loglog(etas, np.array(etas) * err[0] / etas[0], "k-", lw=0.6, label="slope 1")
            # one labelled tick per eta (log axis under a decade: no minor-tick labels)
            figstyle.log_ticks(ax.xaxis, etas, rotation=30)
            ax.set_xlabel("step size eta")
            ax.set_ylabel("max drift of the invariant at t = 1")
            ax.set_title(f"joma.theorem1.{kind}: drift vs step size")
            ax.legend()
    return plot


def plot_near_orthogonal(path):
    """Section 7: Theorem 1's exact discrete invariant drift vs the coherence eps, and the JL
    success fraction for d = 8 eps^-2 log M (natural log and log10)."""
    import math

    rows = []
    for eps, z, s2, Qv in near_orthogonal_runs(0)[1:]:
        inv = th.theorem1_exp_discrete(z=z, s2=s2, Q_v=Qv)
        wrong = z - s2
        rows.append((eps, np.abs(inv - inv[0]).max(), np.abs(wrong - wrong[0]).max(),
                     np.abs(z).max()))
    rows = np.array(rows)
    with figstyle.figure(path, 1, 2, figsize=(8.5, 3.3)) as (fig, axs):
        axs[0].loglog(rows[:, 0], rows[:, 1] / rows[:, 3], "o-", label="Thm 1 invariant")
        axs[0].loglog(rows[:, 0], rows[:, 2] / rows[:, 3], "x--", label="rival z - sum v^2")
        axs[0].set_xlabel("coherence eps = max |u_l^T u_l'|")
        axs[0].set_ylabel("max drift / max |z|")
        axs[0].legend()
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
        axs[1].legend()
        fig.suptitle("joma.sec7.near_orthogonal: Theorem 1 with near-orthogonal embeddings;\n"
                     "JL dimension d = 8 eps^-2 log M")


def plot_theorem4(path):
    """Eqn. 7: delta_j(t) = 1 - v_j/mu_j for seven targets (salient components converge first)."""
    import math

    mu = np.array([0.3, 0.7, 1.0, 1.3, 1.6, 1.9, 2.2])
    r0 = np.full(mu.shape, 0.0) + 0.05
    T = 500 / math.exp(mu.max() ** 2 / 2)
    run = simulate_eqn7(mu, r0 * mu, T, n_points=400, state="deviation", atol=1e-300)
    with figstyle.figure(path, figsize=(6, 4)) as (fig, ax):
        import matplotlib
        cmap = matplotlib.colormaps["viridis"]
        for j in range(mu.size):
            ax.semilogy(run.t, np.abs(run.delta[:, j]), color=cmap(j / (mu.size - 1)),
                        label=f"mu_j={mu[j]:.1f}")
        ax.set_xlabel("t")
        ax.set_ylabel("delta_j(t) = 1 - v_j/mu_j")
        ax.set_title("joma.theorem4: Eqn. 7, salient components converge first")
        ax.legend()


def plot_entropy(path):
    """Section 4, Fig. 4 (right): entropy of softmax(v^2) under Eqn. 7, with and without the
    attention factor."""
    mu, v0 = entropy_setting(16, 2, [2.0, 2.0], list(np.linspace(0.5, 1.0, 14)), 0.01)
    t, Ha, _ = entropy_curves(mu, v0)
    _, Hc, _ = entropy_curves(mu, v0, attention=False)
    Ht, _, _ = entropy_theory(t, mu, v0, th.F_delta)
    with figstyle.figure(path, figsize=(6, 4)) as (fig, ax):
        ax.semilogx(t[1:], Ha[1:], label="Eqn. 7 (with attention)")
        ax.semilogx(t[1:], Ht[1:], ":", color="k", label="theory: Eqn. 71 with Eqn. 70's F")
        ax.axvline(t[int(np.argmin(Ht))], color="k", lw=0.5, ls="--")
        ax.semilogx(t[1:], Hc[1:], "--", label="null: v_dot = mu - v")
        ax.set_xlabel("t")
        ax.set_ylabel("entropy(softmax(v^2)) [nats]")
        ax.set_title("joma.sec4.entropy_dynamics: attention entropy drops, then rebounds "
                     "(Fig. 4 right)")
        ax.legend()


def plot_rank(path):
    """Section 4: stable rank of V = [v_1..v_K] under Eqn. 7, with and without attention."""
    M, V0 = rank_setting(4, 4, 1, 1.4, 0.7, 0.1, 0.01)
    t, Sa, _ = rank_curves(M, V0)
    _, Sc, _ = rank_curves(M, V0, attention=False)
    St, _ = rank_theory(t, M, 0.01, th.F_delta)
    with figstyle.figure(path, figsize=(6, 4)) as (fig, ax):
        ax.semilogx(t[1:], Sa[1:], label="K nodes, shared exp attention")
        ax.semilogx(t[1:], St[1:], ":", color="k", label="theory: Eqn. 71 per column")
        ax.axvline(t[int(np.argmin(St))], color="k", lw=0.5, ls="--")
        ax.semilogx(t[1:], Sc[1:], "--", label="null: no attention")
        ax.set_xlabel("t")
        ax.set_ylabel("stable rank ||V||_F^2 / ||V||_2^2")
        ax.set_title("joma.sec4.rank_dynamics: stable rank of V drops, then bounces back")
        ax.legend()


def plot_fig2(path):
    """Fig. 2's two settings (M_C = 8, K = 2, N = 64, 6 seeds, horizon 40): correlation with
    z_m(t) of zhat_m and of its two components."""

    from properties.joma.common import (fig2_correlations, zhat_component_1, zhat_component_2,
                                        zhat_full)
    from properties.joma.runs import DISTS, fig2_run

    with figstyle.figure(path, 1, 2, figsize=(9, 3.4)) as (fig, axs):
        for ax, dist in zip(axs, DISTS):
            tr = fig2_run(tuple(range(6)), 8, 2, 2, 64, dist, 40.0)
            for fn, lab in ((zhat_full, "zhat_m"), (zhat_component_1, "zhat_m1"),
                            (zhat_component_2, "zhat_m2")):
                ax.plot(tr.t[1:], np.nanmedian(fig2_correlations(tr, fn), -1), label=lab)
            ax.axhline(0.9, color="k", ls="--", lw=0.8, label="reading 0.9")
            ax.set_title(f"x {dist} over classes (M_C=8, K=2, 6 seeds)", fontsize=9)
            ax.set_xlabel("t")
            ax.set_ylabel("corr with z_m(t) (median over seeds)")
            ax.legend()
        fig.suptitle("joma.theorem1.softmax_fig2: Fig. 2's two settings")


def plot_dynamics_trained(key, ylabel, layer=-1):
    """Trained-transformer curves of `key` ("ent" or "sr") in `layer` on the ladder, both token
    orders, the first shared draw (the cached runs of properties.joma.runs)."""
    def plot(path):
        from properties.joma.common import DYN_DRAWS, dyn_collect, dyn_seeds
        from properties.joma.runs import dynamics_run
        with figstyle.figure(path, 1, 2, figsize=(9, 3.4), squeeze=False) as (fig, axs):
            for ax, order in zip(axs[0], ("sorted", "random")):
                # the claims' own runs of each rung (cached), the first draw's block
                for i, (st_, r) in enumerate(dyn_collect(dynamics_run, DYN_DRAWS[0], order,
                                                         dyn_seeds(DYN_DRAWS[0]))):
                    for j in range(r[key].shape[2]):
                        ax.plot(r["steps"], r[key][:, layer, j], color=f"C{i}", alpha=0.8,
                                label=f"d={st_.d}" if j == 0 else None)
                ax.set_title(f"{order} token order", fontsize=9)
                ax.set_xlabel("Adam step")
                ax.set_ylabel(ylabel)
                ax.legend()
            fig.suptitle({"ent": "joma.sec4.entropy_dynamics_trained",
                          "sr": "joma.sec4.rank_dynamics_trained"}.get(key, key)
                         + ": trained transformer, "
                         + ("top layer" if layer == -1 else f"layer {layer}")
                         + ", first shared draw")
    return plot


def plot_lowest_first(path):
    """Layer-0 centred attention logits by sibling height H (H = 1: same lowest latent as the
    query), random token order, the first shared draw, every rung of the ladder."""

    from properties.joma.common import DYN_DRAWS, dyn_collect, dyn_seeds
    from properties.joma.runs import dynamics_run
    rungs = dyn_collect(dynamics_run, DYN_DRAWS[0], "random", dyn_seeds(DYN_DRAWS[0]))
    with figstyle.figure(path, 1, len(rungs), figsize=(3.2 * len(rungs), 3.3),
                         squeeze=False) as (fig, axs):
        for ax, (st_, r) in zip(axs[0], rungs):
            for h in (1, 2, 3):
                ax.plot(r["steps"], np.nanmean(r["logits"][:, :, h], 1), label=f"H={h}")
            ax.set_title(f"d = {st_.d} (mean of {r['logits'].shape[1]} seeds)", fontsize=9)
            ax.set_xlabel("Adam step")
        axs[0, 0].set_ylabel("centred logit, layer 0")
        axs[0, 0].legend()
        fig.suptitle("joma.sec5.lowest_first: layer-0 attention logits by sibling height H "
                     "(random token order, first shared draw)")


def plot_table1(path):
    """Table 1: the paper's NCorr next to the CI-size runs, untrained and trained."""

    from properties.joma.runs import COMPLEX, PAPER_TABLE1, SIMPLE, TABLE1_CI, table1_run
    from properties.joma.common import table1_seeds, TABLE1_DRAWS
    rows = []
    for cfg in (SIMPLE, COMPLEX):
        r = table1_run(table1_seeds(TABLE1_DRAWS[0]), cfg, TABLE1_CI)
        for s in range(2):
            rows.append([f"({cfg[0]}, {cfg[1]}, {cfg[2]})", f"s={s}",
                         f"{PAPER_TABLE1[cfg][s]:.2f}", f"{r['trained'][:, s].mean():.3f}",
                         f"{r['untrained'][:, s].mean():.3f}"])
    with figstyle.figure(path, figsize=(7, 2.6)) as (fig, ax):
        ax.axis("off")
        tb = ax.table(cellText=rows, colLabels=["(C, N_ch, N_s)", "layer", "paper (d=1024)",
                                                f"trained (d={TABLE1_CI.d})", "untrained"],
                      loc="center")
        tb.auto_set_font_size(False)
        tb.set_fontsize(7)
        ax.set_title("joma.table1: NCorr of the best-matching neuron per latent")


# --------------------------------------------------------------------------------------------
# Errata: the printed form failing next to the corrected one
# --------------------------------------------------------------------------------------------
def plot_theorem2_onehot(path):
    """The one-hot remark on the reduced Eqn. 3: v_l(t) -> the corrected limits
    sqrt(2) erfinv(Delta_l / |Delta_l*|) as t -> t*, not the printed form's 2 erfinv(...); right:
    the distance to each limit against eps = 1 - t/t* (the corrected one shrinks like eps)."""
    delta = np.array([1.0, 0.7, -0.45, 0.2])
    t_star = float(th.theorem2_blowup_time(1.0, 1.0))
    t, V = solve_eqn3(delta, 0.999 * t_star, n_eval=400)
    eps = np.logspace(-4, -1, 13)
    Ve = np.array([solve_eqn3(delta, (1 - e) * t_star, n_eval=2)[1][-1] for e in eps])
    corr = th.theorem2_limit(delta, 1.0)
    printed = 2.0 * erfinv(delta / np.abs(delta).max())
    with figstyle.figure(path, 1, 2, figsize=(10, 3.6)) as (fig, axs):
        for l in range(len(delta)):
            c = f"C{l}"
            axs[0].plot(t / t_star, V[:, l], color=c, label=f"v_l, Delta_l = {delta[l]:g}"
                        + (" (l*)" if l == 0 else ""))
            if l:
                axs[0].axhline(corr[l], ls=":", color=c, lw=1.2)
                axs[0].axhline(printed[l], ls="--", color=c, lw=0.9)
                axs[1].loglog(eps, np.abs(Ve[:, l] - corr[l]), "o-", color=c,
                              label=f"|v_l - corrected limit|, Delta_l = {delta[l]:g}")
                axs[1].loglog(eps, np.abs(Ve[:, l] - printed[l]), "x--", color=c,
                              label=f"|v_l - printed limit|, Delta_l = {delta[l]:g}")
        axs[0].plot([], [], "k:", label="corrected limit sqrt(2) erfinv(Delta_l/|Delta_l*|)")
        axs[0].plot([], [], "k--", lw=0.9, label="printed-form limit 2 erfinv(Delta_l/|Delta_l*|)")
        axs[0].set_ylim(-1.5, 3.0)
        axs[0].set(xlabel="t / t*", ylabel="v_l(t)",
                   title="v_l* -> +inf, the others -> finite limits")
        axs[0].legend(loc="upper left", fontsize=6.5)
        e0 = np.abs(Ve[0, 1] - corr[1])
        axs[1].loglog(eps, 0.3 * e0 * eps / eps[0], "k:", lw=1.0, label="slope 1 (reference)")
        axs[1].set(xlabel="eps = 1 - t/t*", ylabel="distance to the limit",
                   title="corrected limit approached like eps; printed one missed")
        axs[1].legend(fontsize=6)
        fig.suptitle("joma.theorem2.onehot: the one-hot remark on the reduced Eqn. 3 "
                     "(A = 1, solve_ivp)")


def plot_lemma1(path):
    """Lemma 1 (Eqn 24) for ReLU' and x ~ N(0, I_3) (R = I, xbar = 0, the paper's example
    family): E[psi(v^T x + xi)] and the v-direction component of E[x psi] against ||v|| at a
    fixed r = xi; Monte Carlo (N = 4e4 per point, fixed generator) against the printed
    theta_1(r)/||v||, theta_2(r)/||v||^2 and the corrected Phi(r/||v||), phi(r/||v||)."""
    dist = th.Isotropic("gaussian", 3, 1.0, 5)
    psi = th.RELU
    R, xbar = np.eye(3), np.zeros(3)
    e1 = np.array([1.0, 0.0, 0.0])
    ks = np.linspace(0.3, 3.0, 55)
    k_mc = np.array([0.4, 0.6, 0.8, 1.0, 1.25, 1.6, 2.0, 2.5, 3.0])
    x, _ = sj.sample_mixture(40_000, torch.zeros(1, 3, dtype=torch.float64), [1.0], "gaussian",
                             make_generator(0), sigma=1.0)
    with figstyle.figure(path, 1, 2, figsize=(10, 3.8)) as (fig, axs):
        for r, c in ((0.5, "C0"), (-0.5, "C1")):
            pr = [th.lemma1_printed(k * e1, r, xbar, R, lambda q: th.theta_unit(q, dist, psi)[0],
                                    lambda q: th.theta_unit(q, dist, psi)[1]) for k in ks]
            co = [th.lemma1_corrected(k * e1, r, xbar, R, dist, psi) for k in ks]
            V = torch.tensor(k_mc[:, None] * e1[None])
            ex, ep, exs, eps_ = sj.lemma1_expectations(V, torch.full((len(k_mc),), r,
                                                                     dtype=torch.float64),
                                                       x, lambda u: sj.phi_prime(u, 0.0, 1.0))
            for ax, get, mc, se in ((axs[0], lambda p: p[1], ep.numpy(), eps_.numpy()),
                                    (axs[1], lambda p: p[0][0], ex[:, 0].numpy(),
                                     exs[:, 0].numpy())):
                ax.plot(ks, [get(p) for p in co], "-", color=c, label=f"corrected, r = {r:g}")
                ax.plot(ks, [get(p) for p in pr], "--", color=c, label=f"printed, r = {r:g}")
                ax.errorbar(k_mc, mc, yerr=3 * se, fmt="o", color=c, ms=3.5, capsize=2,
                            label=f"Monte Carlo +- 3 SE, r = {r:g}")
        for ax in axs:
            ax.axvline(1.0, color="0.4", lw=0.8, ls=":")
            ax.set_xlabel("||v||  (the forms agree only at ||v|| = 1, dotted)")
        axs[0].axhline(1.0, color="0.6", lw=0.6)
        axs[0].set(ylabel="E[psi(v^T x + xi)]", ylim=(0, 2.2),
                   title="E[psi]: printed theta_1(r)/||v|| exceeds 1 for ||v|| < 1")
        axs[1].set(ylabel="v/||v|| . E[x psi(v^T x + xi)]", ylim=(0, 2.2),
                   title="E[x psi] along v: printed theta_2(r)/||v||^2\n"
                         "(r = +-0.5 coincide: phi is even)")
        axs[0].legend(fontsize=6.5, ncol=2)
        fig.suptitle("joma.lemma1: Eqn 24 for psi = ReLU', x ~ N(0, I_3), r = v^T xbar + xi fixed")


def plot_lemma2(path):
    """Lemma 2: F(r) = theta_2(r) + r theta_1(r) (Eqn 49) for three psi >= 0, Gaussian p_n
    (n = 2, sigma = 1, closed-form theta).  The printed 'psi >= 0 => F(+inf) = +inf' fails for
    psi = c_- 1[x<0] (c_+ = 0): F increases to 0 (corrected: F(+inf) = +inf iff c_+ > 0)."""
    dist = th.Isotropic("gaussian", 2, 1.0, 5)
    r = np.linspace(-6, 12, 400)
    cases = (((0.0, 1.0), "C0", "ReLU': c_- = 0, c_+ = 1"),
             ((0.5, 1.0), "C2", "c_- = 0.5, c_+ = 1"),
             ((1.0, 0.0), "C1", "c_- = 1, c_+ = 0 (psi = 1[x<0] >= 0)"))
    with figstyle.figure(path, 1, 2, figsize=(10, 3.6)) as (fig, axs):
        for (cm, cp), c, lab in cases:
            t1, t2 = th.theta_step_closed(r, dist, cm, cp)
            F = t2 + r * t1
            axs[0].plot(r, F, color=c, label=lab)
            axs[1].plot(r, F, color=c, label=lab)
        axs[0].set(xlabel="r", ylabel="F(r) = theta_2(r) + r theta_1(r)",
                   title="printed: psi >= 0 => F increasing, F(+inf) = +inf")
        axs[0].annotate("F -> 0, not +inf", xy=(10, 0.0), xytext=(5, -3.5),
                        arrowprops=dict(arrowstyle="->", color="C1"), color="C1")
        axs[1].set_ylim(-0.6, 0.15)
        axs[1].axhline(0.0, color="k", lw=0.7, ls="--",
                       label="corrected limit for c_+ = 0: F(+inf) = 0")
        axs[1].set(xlabel="r", ylabel="F(r) (zoom)",
                   title="corrected: F(+inf) = +inf iff c_+ > 0; = 0 if c_+ = 0")
        axs[0].legend(loc="upper left")
        axs[1].legend(loc="lower right", fontsize=6.5)
        fig.suptitle("joma.lemma2: F of Eqn 49, Gaussian p_n (n = 2, sigma = 1)")


def plot_lemma4(path):
    """Lemma 4 (Eqn 61) for a leaky ReLU (phi' = c_- = 0.5 on x < 0, c_+ = 1) and a Gaussian
    (n = 3, sigma = 1), the paper's example case: central finite differences of theta_1, theta_2
    (quadrature, Eqns 41-42) against the printed (c_- + c_+) and the corrected (c_+ - c_-)."""
    dist = th.Isotropic("gaussian", 3, 1.0, 5)
    cm, cp = 0.5, 1.0
    psi = th.Psi("step", cm, cp)
    h = 1e-4
    r = np.linspace(-3.5, 3.5, 141)
    rf = np.linspace(-3.5, 3.5, 29)
    fd = np.array([(np.array(th.theta_unit(q + h, dist, psi))
                    - np.array(th.theta_unit(q - h, dist, psi))) / (2 * h) for q in rf])
    pr, co = th.lemma4_printed(r, dist, cm, cp), th.lemma4_corrected(r, dist, cm, cp)
    with figstyle.figure(path, 1, 2, figsize=(10, 3.6)) as (fig, axs):
        for i, (ax, name) in enumerate(zip(axs, ("d theta_1 / dr", "d theta_2 / dr"))):
            ax.plot(r, co[i], "-", color="C0", label="corrected (c_+ - c_-)")
            ax.plot(r, pr[i], "--", color="C1", label="printed (c_- + c_+)")
            ax.plot(rf, fd[:, i], "o", color="k", ms=3.5, label="finite differences")
            ax.set(xlabel="r", ylabel=name)
        axs[0].set_title("d theta_1/dr = (c_+ - c_-) p_n(r), printed (c_- + c_+) p_n(r)")
        axs[1].set_title("d theta_2/dr = -(c_+ - c_-) r p_n(r), printed -(c_- + c_+) r p_n(r)")
        axs[0].legend(loc="upper left")
        fig.suptitle("joma.lemma4: leaky ReLU, phi' = 0.5 on x < 0 and 1 on x > 0 (the literal "
                     "c_- 1[x<0] convention), Gaussian n = 3, sigma = 1")


def plot_theorem1_softmax(path):
    """Theorem 1, softmax attention, Fig. 2's setting as far as the text gives it (linear phi,
    zero init, M_C = 4, K = 2, horizon 4, eta = 0.02): the component of z(t) - z(0) along 1
    (conserved exactly by softmax) against what the printed invariant and Eqn. 19 imply for it."""
    p = make_problem([0, 1], M_C=4, K=2, C=2, d=6, N=32, attention="softmax",
                     activation="linear", A=1.0, device="cpu")
    tr = simulate_eqn2(p, eta=0.02, horizon=4.0, log_every=5)
    s2, n2 = token_stats(tr)
    obs = tr.z.sum(-1) - tr.z[0].sum(-1)  # (T, S)

    def implied(fn):
        shift = fn(z=0 * tr.z, s2=s2, n2=n2, bbar=tr.bbar)
        return -(shift.sum(-1) - shift[0].sum(-1))

    pr, co = implied(th.theorem1_softmax_printed), implied(th.theorem1_softmax_eqn19)
    t = np.asarray(tr.t)
    with figstyle.figure(path, 1, 2, figsize=(10, 3.6)) as (fig, axs):
        for j in range(obs.shape[1]):
            c = f"C{j}"
            sfx = f", seed {j}"
            axs[0].plot(t, pr[:, j], "--", color=c, label="printed form implies" + sfx)
            axs[0].plot(t, co[:, j], "-", color=c, lw=2.5, alpha=0.5,
                        label="Eqn. 19 (corrected) implies" + sfx)
            axs[0].plot(t, obs[:, j], ":", color="k" if j == 0 else "0.4", lw=1.5,
                        label="simulated 1^T(z(t) - z(0))" + sfx)
            axs[1].semilogy(t[1:], np.abs(obs[1:, j] - pr[1:, j]) + 1e-18, "--", color=c,
                            label="|simulated - printed|" + sfx)
            axs[1].semilogy(t[1:], np.abs(obs[1:, j] - co[1:, j]) + 1e-18, "-", color=c,
                            label="|simulated - Eqn. 19|" + sfx)
        axs[0].set(xlabel="t", ylabel="1^T (z(t) - z(0))",
                   title="component of z along 1: softmax conserves it")
        axs[1].set(xlabel="t", ylabel="absolute error (float64)",
                   title="printed misses by -1/2 d sum_k ||v_k||^2; Eqn. 19 exact")
        axs[0].legend(fontsize=6)
        axs[1].legend(fontsize=6)
        fig.suptitle("joma.theorem1.softmax: printed z = 1/2 sum v^2 - ||v||^2 bbar + c vs "
                     "corrected (Eqn. 19) z = 1/2 sum (v^2 - ||v||^2 bbar) + c\n"
                     "Eqn. 2 with softmax attention, linear phi, zero init, M_C = 4, K = 2, "
                     "2 seeds")


def plot_theorem3(path):
    """Theorem 3 (Eqn 5, xi dynamics Eqn 50) on the paper's explicit case (two Gaussian clusters,
    sigma = 1, M_C = 3, ReLU, g = +1 / -1, t = r_1 / (sigma ||v||) = 0.5): xi_dot and the
    v-direction component of v_dot against ||v|| (direction fixed), Monte Carlo of Eqn 2
    (N = 4e5, the property's size, fixed generator) against the printed and corrected forms."""
    rng = np.random.default_rng(0)
    m, d, sigma, t_ = 3, 5, 1.0, 0.5
    centers = 1.5 * rng.normal(size=(2, m))
    vhat = rng.normal(size=m)
    vhat /= np.linalg.norm(vhat)
    a = np.array([0.5, -0.5])  # g_c P[c]
    dist = th.Isotropic("gaussian", m, sigma, 5)
    ks = np.linspace(0.35, 3.0, 40)
    k_mc = np.array([0.4, 0.6, 1.0, 1.5, 2.0, 2.5, 3.0])

    def case(k):
        v = k * vhat
        return v, t_ * sigma * k - float(v @ centers[0])

    def forms(fn):
        out = [fn(*case(k), centers, a, dist, th.RELU) for k in ks]
        return np.array([o[1] for o in out]), np.array([o[0] @ vhat for o in out])

    pr, co = forms(th.theorem3_printed), forms(th.theorem3_corrected)
    gen = make_generator(0)
    U, uq = sj.random_embeddings(d, m, gen)
    x, labels = sj.sample_mixture(400_000, torch.tensor(centers), [0.5, 0.5], "gaussian", gen,
                                  sigma=sigma)
    g = torch.tensor([1.0, -1.0], dtype=torch.float64)[labels]
    W = torch.stack([U @ torch.tensor(v) + xi * uq for v, xi in map(case, k_mc)])
    mc = sj.eqn2_gradient(W, U, uq, x, g)
    vh = torch.tensor(vhat)
    mcs = ((mc["xi_dot"].numpy(), mc["xi_dot_se"].numpy()),
           ((mc["v_dot"] @ vh).numpy(), np.sqrt((mc["v_dot_se"] ** 2 @ vh ** 2).numpy())))
    with figstyle.figure(path, 1, 2, figsize=(10, 3.6)) as (fig, axs):
        for i, (ax, name) in enumerate(zip(axs, ("xi_dot", "v/||v|| . v_dot"))):
            ax.plot(ks, co[i], "-", color="C0", label="corrected (theta^y, no 1/||v|| factors)")
            ax.plot(ks, pr[i], "--", color="C1", label="printed Eqn 5 / 50 (1/||v||, 1/||v||^3)")
            ax.errorbar(k_mc, mcs[i][0], yerr=3 * mcs[i][1], fmt="o", color="k", ms=3.5,
                        capsize=2, label="Monte Carlo of Eqn 2 +- 3 SE")
            ax.axvline(1.0, color="0.4", lw=0.8, ls=":")
            ax.set(xlabel="||v|| (direction fixed; forms agree only at 1, dotted)", ylabel=name)
        axs[0].set_title("xi dynamics (Eqn 50)")
        axs[1].set_title("v dynamics along v (Eqn 5); SE of the projection approximate")
        axs[0].legend()
        fig.suptitle("joma.theorem3: two Gaussian clusters (sigma = 1, M_C = 3, d = 5), ReLU, "
                     "g = +1 / -1, r_1 = 0.5 sigma ||v||")
