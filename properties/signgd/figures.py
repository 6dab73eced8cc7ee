"""Figures of the SignGD audit: each reads the cached runs of `properties.signgd.runs` (never trains
anything the runs module does not) and draws one claim's standard figure."""

from __future__ import annotations

import numpy as np

from properties.signgd.runs import (CANON, L43_CANON, L43_DELTA, L43_S, L43_SEEDS, N_SAMPLES,
                                    TABLE2_FR, _l43_runs, _run, _sign_patterns,
                                    _table_at_end_of_stage3, _table_fractions)


def _plot_table2(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tr, q, st_ = _run(*CANON)
    al = (np.sign(q["a"]) == np.sign(q["b"])).mean((-1, -2))
    sa = np.sign(q["alpha"])[..., None]
    ka = (np.sign(q["b"]) == sa).mean((-1, -2))
    qa = (np.sign(q["a"]) == sa).mean((-1, -2))
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    for x, lab_ in ((al, "sgn a = sgn b"), (ka, "sgn b = sgn alpha"), (qa, "sgn a = sgn alpha")):
        ax[0].plot(tr.t, x.mean(1), label=lab_)
    for k_, c_ in (("T2", "k"), ("T4m", "r"), ("T4p", "g"), ("T4", "b")):
        ax[0].axvline(np.median(st_[k_][np.isfinite(st_[k_])]), color=c_, ls=":", lw=0.8)
    ax[0].set(xscale="symlog", xlim=(0, tr.t[-1]), xlabel="step", ylabel="fraction of (neuron, sample) pairs",
              title="alignment fractions (mean over seeds; median stage lines)")
    ax[0].legend(fontsize=7)
    M, _ = _table_at_end_of_stage3(CANON)
    fr, _ = _table_fractions(M)
    xs = np.arange(6)
    ax[1].bar(xs - 0.2, TABLE2_FR, 0.4, label="Table 2")
    ax[1].bar(xs + 0.2, fr, 0.4, label="simulated")
    ax[1].set_xticks(xs, ["aligned", "keep|++", "++|+-", "++|-+", "keep|--", "+ share"], fontsize=7)
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_softmax(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tr, q, st_ = _run(*CANON)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for k_, lab_, lab2 in (("s11", "s_11 signal->signal", "s_12 signal->noise (1 - s_11)"),
                           ("s21", "s_21 noise->signal", "s_22 noise->noise (1 - s_21)")):
        ax.plot(tr.t, q[k_][:, 0].mean(-1), label=lab_ + " (seed 11, mean over i)")
        ax.plot(tr.t, 1 - q[k_][:, 0].mean(-1), ls="--", label=lab2)
    for k_, c_ in (("T4m", "r"), ("T4p", "g"), ("T4", "b")):
        ax.axvline(st_[k_][0], color=c_, ls=":", lw=0.8, label=k_)
    ax.set(yscale="log", ylim=(1e-12, 1.5), xlabel="step", ylabel="softmax output",
           title="four softmax outputs (s_12 = 1 - s_11, s_22 = 1 - s_21)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_l43(path):
    """Lemma 4.3 (4) motion of the signals by T_2 vs s; (3) histogram of the normalised key-noise
    sums against the random-sign reference."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = _l43_runs(*L43_CANON)
    xs = np.array(L43_S, float)
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for k_, lab in (("dalpha", "|alpha(T_2) - alpha(0)|"), ("dbeta", "|beta(T_2) - beta(0)|"),
                    ("tau2", "eta T_2")):
        y = [np.median(runs[s][k_]) for s in L43_S]
        ax[0].plot(xs, y, "o-", label=lab + " / sigma_0")
    ax[0].plot(xs, np.median(runs[L43_S[0]]["dalpha"]) * (xs / xs[0]) ** -0.5, "k--", lw=0.8,
               label="s^-1/2")
    ax[0].set_xscale("log"), ax[0].set_yscale("log"), ax[0].set_xlabel("s"), ax[0].legend()
    ax[0].set_title("Lemma 4.3 (4): signal motion by T_2 (median)", fontsize=9)
    z = np.concatenate([runs[s]["z_b"].ravel() for s in L43_S])
    p = np.concatenate([runs[s]["p_b"].ravel() for s in L43_S])
    ax[1].hist(z, bins=30, range=(0, 3), alpha=0.7, label="measured |sum_i b| / ||b||_2")
    pats = _sign_patterns(N_SAMPLES)
    ref = np.concatenate([(np.abs(np.abs(runs[s_]["b"]) @ pats.T)
                           / np.sqrt((runs[s_]["b"] ** 2).sum(-1))[..., None]).ravel()
                          for s_ in L43_S])
    ax[1].hist(ref, bins=30, range=(0, 3), weights=np.full(ref.size, 1 / len(pats)),
               histtype="step", color="k", label="same magnitudes, random signs")
    ax[1].axvline(L43_DELTA, color="k", ls=":")
    ax[1].set_title(f"Lemma 4.3 (3): {int((z < L43_DELTA).sum())} neurons below {L43_DELTA}\n"
                    f"vs {p.sum():.1f} expected for random signs", fontsize=9)
    ax[1].legend()
    fig.suptitle(f"signgd.lemma4_3: sigma_p = {L43_CANON[1]}, sigma_0 = {L43_CANON[2]}, eps = "
                 f"{L43_CANON[3]}, {L43_SEEDS} seeds per s")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _plot_losses(path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tr, q, st_ = _run(*CANON)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(tr.t, q["train_loss"].mean(1), label="train (SignGD)")
    ax.plot(tr.t_test, tr.test_loss.mean(1), label="test, 500 fresh samples (SignGD)")
    ax.set(yscale="log", xlabel="step", ylabel="logistic loss (mean over seeds)",
           title="SignGD: fast convergence, constant test loss")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_gd_faster(path):
    """signgd.gd.faster: train and test loss per optimizer at the common rate 1e-4 (Fig. 2 (c))."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from properties.signgd.runs import OPT_SEEDS, fair_runs
    runs = fair_runs(11)
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for (name, tr), c in zip(runs.items(), ("C0", "C1", "C2")):
        ax[0].plot(tr.t, tr["train_loss"].mean(-1), c, label=name)
        ax[1].plot(tr.t_test, tr.test_loss.mean(-1), c, label=name)
    for a_, ttl in zip(ax, ("train loss L_S", "test loss L_D (500 fresh samples)")):
        a_.set_xlabel("step"), a_.set_title(ttl), a_.legend()
    ax[0].set_yscale("log")
    fig.suptitle(f"signgd.gd.faster: lr 1e-4 for all, s = 30, sigma_p = 1, sigma_0 = 1e-3, "
                 f"seeds 11-{10 + OPT_SEEDS} (mean)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
