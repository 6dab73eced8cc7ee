"""Figures of the JoMA claims (drawn on demand by the audit report; no work at import).

Imports no claim file (tests/test_layout.py): each figure recomputes its own small, fixed run.
"""

from __future__ import annotations

import numpy as np

from sim.joma import solve_eqn3
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
