"""Figures of the topic claims (drawn on demand by the audit report; no work at import).

Imports no claim file (tests/test_layout.py): each figure reads its runs from runs.py.
"""

from __future__ import annotations

import numpy as np

from properties.topic.runs import TWO_STAGE, two_stage_run


def plot_two_stage(path):
    """Section 5.1 (Figure 4): ||W^V||_F, ||W^K||_F, ||W^Q||_F under Adam from near-zero
    positive init, one element per init scale of the ladder (generator seed 0)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    run = two_stage_run(0)
    R = TWO_STAGE["replicates"]
    fig, axs = plt.subplots(1, len(TWO_STAGE["scales"]), figsize=(11, 3.3), sharey=True)
    for i, (ax, s) in enumerate(zip(np.atleast_1d(axs), TWO_STAGE["scales"])):
        e = i * R
        for k, c in (("WV", "C0"), ("WK", "C1"), ("WQ", "C2")):
            ax.plot(run["step"], run[k][:, e], color=c, label=f"||{k}||_F")
        tv = run["step"][int(np.argmax(run["WV"][:, e] >= 0.9 * run["WV"][:, e].max()))]
        ax.axvline(tv, ls=":", color="k", lw=0.8)
        ax.set_title(f"init scale {s:g} (dotted: t_V)")
        ax.set_xlabel("Adam step")
    np.atleast_1d(axs)[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
