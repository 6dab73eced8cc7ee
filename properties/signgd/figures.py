"""Figures of the SignGD audit: each reads the cached runs of `properties.signgd.runs` (never trains
anything the runs module does not) and draws one claim's standard figure."""

from __future__ import annotations

import numpy as np

from properties.signgd.runs import (CANON, TABLE2_FR, _run, _table_at_end_of_stage3,
                                    _table_fractions)


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
