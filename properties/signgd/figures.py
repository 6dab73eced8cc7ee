"""Figures of the SignGD audit: each reads the cached runs of `properties.signgd.runs` (never trains
anything the runs module does not) and draws one claim's figure under the audit style
(properties/figstyle.py).  A figure shared by several claims takes the claim id and shows that
claim's own item; an erratum's figure shows the printed form failing next to the corrected one."""

from __future__ import annotations

import numpy as np

from properties import figstyle
from properties.readings import lookup
from properties.signgd.common import sign_patterns, stage4_pairs, table_fractions
from properties.signgd.comparisons import GD_RATES, OPT_SEEDS, RATE_LADDER, gd_runs, rate_runs
from properties.signgd.runs import (L43_CANON, L43_DELTA, L43_SEEDS, TABLE2_FR, TABLE2_N,
                                    l43_runs, stage_run, table_at_end_of_stage3)
from properties.signgd.setting import CANON, L43_S, N_SAMPLES

# the stage times of sim.signgd.STAGE_DEFINITIONS, as they are named on a figure
STAGE_LABELS = {
    "T2": "T_2: query/key noise signs aligned",
    "T3": "T_3: majority vote done",
    "T4m": "T_4^-: first wrong-sign key noise turns",
    "T4p": "T_4^+: every key noise has sgn alpha",
    "T4": "T_4: every query and key noise has sgn alpha",
}
STAGE_STYLE = {"T2": ("0.35", ":"), "T3": ("0.35", (0, (1, 3))), "T4m": ("k", "--"),
               "T4p": ("k", "-."), "T4": ("k", (0, (6, 2, 1, 2, 1, 2)))}
STAGE_SHORT = {"T2": "T_2", "T3": "T_3", "T4m": "T_4^-", "T4p": "T_4^+", "T4": "T_4"}
FAIL = "#C00000"  # the printed form failing
CANON_TEXT = "s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5, seeds 11-18"


def _stage_lines(ax, times, keys):
    """Vertical lines at the given stage times, each labelled for the legend and directly (its
    short name at the foot of the axes)."""
    import matplotlib.transforms as mtransforms
    trans = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for k_ in keys:
        c_, ls = STAGE_STYLE[k_]
        ax.axvline(times[k_], color=c_, ls=ls, lw=1.0, label=STAGE_LABELS[k_])
        ax.text(times[k_], 0.01, STAGE_SHORT[k_] + " ", transform=trans, rotation=90,
                va="bottom", ha="right", fontsize=7, color=c_,
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))


def plot_table2(path):
    """signgd.table2: alignment fractions over training with the stage times labelled, and the
    six fractions of Table 2 (paper, with its binomial 2 SE) against the canonical run."""
    tr, q, st_ = stage_run(*CANON)
    al = (np.sign(q["a"]) == np.sign(q["b"])).mean((-1, -2))
    sa = np.sign(q["alpha"])[..., None]
    ka = (np.sign(q["b"]) == sa).mean((-1, -2))
    qa = (np.sign(q["a"]) == sa).mean((-1, -2))
    M, _ = table_at_end_of_stage3(CANON)
    fr, n_sim = table_fractions(M)
    with figstyle.figure(path, 1, 2, figsize=(12, 4.8),
                         gridspec_kw=dict(width_ratios=(1, 1.15))) as (fig, ax):
        for x, lab_ in ((al, "sgn a = sgn b (query and key noise agree)"),
                        (ka, "sgn b = sgn alpha (key noise has the signal's sign)"),
                        (qa, "sgn a = sgn alpha (query noise has the signal's sign)")):
            ax[0].plot(tr.t, x.mean(1), label=lab_)
        med = {k_: np.median(st_[k_][np.isfinite(st_[k_])]) for k_ in ("T2", "T4m", "T4p", "T4")}
        _stage_lines(ax[0], med, ("T2", "T4m", "T4p", "T4"))
        ax[0].set(xscale="symlog", xlim=(0, tr.t[-1]), xlabel="step",
                  ylabel="fraction of (neuron, sample) pairs",
                  title="alignment over training (mean over 8 seeds; stage lines: median)")
        ax[0].legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        names = ["aligned\n(sgn a = sgn b)", "stays ++\ngiven ++\nat init",
                 "ends ++\ngiven +-\nat init", "ends ++\ngiven -+\nat init",
                 "stays --\ngiven --\nat init", "++ share\nof aligned\npairs"]
        xs = np.arange(6)
        se_p = np.sqrt(TABLE2_FR * (1 - TABLE2_FR) / TABLE2_N)
        ax[1].bar(xs - 0.2, TABLE2_FR, 0.4, yerr=2 * se_p, capsize=3,
                  label="Table 2 (paper, +- 2 binomial SE)")
        ax[1].bar(xs + 0.2, fr, 0.4, label="simulated (end of Stage III)")
        for x_, f_ in zip(xs, fr):
            ax[1].text(x_ + 0.2, f_ + 0.01, f"{f_:.3f}", ha="center", fontsize=6.5)
        for x_, f_, e_ in zip(xs, TABLE2_FR, se_p):
            ax[1].text(x_ - 0.2, f_ + 2 * e_ + 0.01, f"{f_:.3f}", ha="center", fontsize=6.5)
        ax[1].set_xticks(xs, names, fontsize=7)
        ax[1].set(ylim=(0, 1.12), ylabel="fraction",
                  title="Table 2's fractions: printed aligned 0.984 vs simulated 1.000")
        ax[1].legend(loc="upper center", ncol=2)
        fig.suptitle(f"signgd.table2: signs of (query noise a, key noise b) before and after "
                     f"Stage II ({CANON_TEXT})")


def plot_softmax(cid):
    """The four softmax outputs of the canonical run; `cid` picks the item drawn:
    signgd.lemma4_5: up to T_4^- (s_21 decays, s_11 stays near 1/2 within 0.1);
    signgd.theorem3_2.item4: to the end of training (s_11, s_21 -> 0, below 0.05)."""
    if cid not in ("signgd.lemma4_5", "signgd.theorem3_2.item4"):
        raise ValueError(f"cid must be signgd.lemma4_5 or signgd.theorem3_2.item4, got {cid!r}")

    def plot(path):
        tr, q, st_ = stage_run(*CANON)
        lemma = cid == "signgd.lemma4_5"
        with figstyle.figure(path, figsize=(7.5, 4.2)) as (fig, ax):
            for k_, lab_, c_ in (("s11", "s_11 (signal query -> signal key)", "C0"),
                                 ("s21", "s_21 (noise query -> signal key)", "C1")):
                y = q[k_][:, 0]  # seed 11, every sample
                ax.plot(tr.t, y.mean(-1), color=c_, lw=2, label=lab_ + ", mean over samples")
                ax.fill_between(tr.t, y.min(-1), y.max(-1), color=c_, alpha=0.2, lw=0,
                                label=lab_.split(" ")[0] + " range over samples")
            if lemma:
                ax.axhspan(0.4, 0.6, color="C0", alpha=0.08,
                           label="Lemma 4.5: s_11 within 0.1 of 1/2 until T_4^-")
                _stage_lines(ax, {"T4m": st_["T4m"][0]}, ("T4m",))
                ax.set(yscale="log", ylim=(1e-4, 1.5), xlim=(0, 1.3 * st_["T4m"][0]),
                       title="until T_4^-: s_21 decays (faster than exponentially), "
                             "s_11 stays near 1/2")
            else:
                ax.axhline(0.05, color="k", ls="--", lw=0.9,
                           label="reading of '-> 0': below 0.05 at the end of training")
                _stage_lines(ax, {k_: st_[k_][0] for k_ in ("T4m", "T4p", "T4")},
                             ("T4m", "T4p", "T4"))
                ax.set(yscale="log", ylim=(1e-12, 1.5), xlim=(0, tr.t[-1]),
                       title="to the end of training: s_11 and s_21 -> 0 (attention on the "
                             "noise patch)")
            ax.set(xlabel="step", ylabel="softmax output (s_12 = 1 - s_11)")
            ax.legend(fontsize=6.5, loc="lower left" if lemma else "lower right")
            fig.suptitle(f"{cid}: softmax outputs, seed 11\n{CANON_TEXT}")
    return plot


def plot_l43(cid):
    """Lemma 4.3 at T_2 on the s-ladder; `cid` picks the item drawn:
    signgd.lemma4_3.item3 (erratum): histogram of |sum_i b_{s,i}| / ||b_s||_2 against the
    random-sign reference (the printed 'bounded away from 0' needs an empty bin at 0);
    signgd.lemma4_3.item4: the signals' motion by T_2 against s, with the s^-1/2 rate."""
    if cid not in ("signgd.lemma4_3.item3", "signgd.lemma4_3.item4"):
        raise ValueError(f"cid must be signgd.lemma4_3.item3 or .item4, got {cid!r}")

    def plot(path):
        runs = l43_runs(*L43_CANON)
        xs = np.array(L43_S, float)
        with figstyle.figure(path, figsize=(7, 4.2)) as (fig, ax):
            if cid.endswith("item4"):
                for k_, lab in (("dalpha", "|alpha(T_2) - alpha(0)|"),
                                ("dbeta", "|beta(T_2) - beta(0)|"), ("tau2", "eta T_2")):
                    y = [np.median(runs[s][k_]) for s in L43_S]
                    ax.plot(xs, y, "o-", label=lab + " / sigma_0 (median)")
                ax.plot(xs, np.median(runs[L43_S[0]]["dalpha"]) * (xs / xs[0]) ** -0.5, "k--",
                        lw=0.8, label="rate s^-1/2 (corrected: o(1) motion)")
                ax.set_xscale("log")
                figstyle.log_ticks(ax.xaxis, xs, [str(s) for s in L43_S])
                ax.set(yscale="log", xlabel="s (sparsity of the noise patch)",
                       ylabel="motion by T_2 in units of sigma_0",
                       title="item (4): signals move ~0.5 sigma_0 at CPU size, shrinking in s")
                ax.legend()
            else:
                z = np.concatenate([runs[s]["z_b"].ravel() for s in L43_S])
                p = np.concatenate([runs[s]["p_b"].ravel() for s in L43_S])
                ax.hist(z, bins=30, range=(0, 3), alpha=0.7,
                        label="measured |sum_i b_{s,i}| / ||b_s||_2 at T_2")
                pats = sign_patterns(N_SAMPLES)
                ref = np.concatenate([(np.abs(np.abs(runs[s_]["b"]) @ pats.T)
                                       / np.sqrt((runs[s_]["b"] ** 2).sum(-1))[..., None]).ravel()
                                      for s_ in L43_S])
                ax.hist(ref, bins=30, range=(0, 3), weights=np.full(ref.size, 1 / len(pats)),
                        histtype="step", color="k", lw=1.3,
                        label="corrected: same magnitudes, fair random signs")
                ax.axvline(L43_DELTA, color="C1", ls=":", lw=1.3,
                           label=f"near-tie level {L43_DELTA} (corrected count)")
                ax.axvspan(0, 0.1, fc="none", ec=FAIL, hatch="////", lw=0.8, zorder=3,
                           label="printed: 'bounded away from 0' (read as >= 0.1) "
                                 "leaves this empty")
                ax.set(xlabel="|sum_i b_{s,i}| / ||b_s||_2", ylabel="neurons",
                       title=f"item (3): {int((z < L43_DELTA).sum())} neurons below {L43_DELTA} "
                             f"vs {p.sum():.1f} expected for random signs")
                ax.legend(fontsize=6.5)
            fig.suptitle(f"{cid}\nsigma_p = {L43_CANON[1]}, sigma_0 = {L43_CANON[2]}, "
                         f"eps = {L43_CANON[3]}, {L43_SEEDS} seeds per s in {L43_S}")
    return plot


def plot_losses(cid):
    """Train and test loss of the canonical run; `cid` picks the item highlighted:
    signgd.theorem3_2.item1 (training loss to eps = 1e-3, geometric), item2 (test loss of
    constant order, read as >= 0.1)."""
    if cid not in ("signgd.theorem3_2.item1", "signgd.theorem3_2.item2"):
        raise ValueError(f"cid must be signgd.theorem3_2.item1 or .item2, got {cid!r}")

    def plot(path):
        tr, q, st_ = stage_run(*CANON)
        train = cid.endswith("item1")
        with figstyle.figure(path, figsize=(7, 4)) as (fig, ax):
            ax.plot(tr.t, q["train_loss"].mean(1), lw=2.2 if train else 1.0,
                    color="C0" if train else "0.6", label="train loss L_S (mean over seeds)")
            ax.plot(tr.t_test, tr.test_loss.mean(1), lw=1.0 if train else 2.2,
                    color="0.6" if train else "C1",
                    label="test loss L_D, 500 fresh samples (mean over seeds)")
            if train:
                ax.axhline(1e-3, color="k", ls="--", lw=0.9, label="eps = 1e-3 (the reading)")
                title = "item (1): training loss converges to eps at a linear (geometric) rate"
            else:
                ax.axhline(0.1, color="k", ls="--", lw=0.9,
                           label="0.1: 'constant order' read at one size")
                title = "item (2): the test loss stays of constant order"
            ax.set(yscale="log", xlabel="step", ylabel="logistic loss", title=title)
            ax.legend(loc="lower left")
            fig.suptitle(f"{cid}: SignGD\n{CANON_TEXT}")
    return plot


def plot_gd_faster(path):
    """signgd.gd.faster, from the runs its properties read (seed 11): L_S of SignGD and GD at the
    common rate 1e-4 (Fig. 2 (c), comparisons.gd_runs 'fair'), and each optimizer at its own rate with
    the rate ladder's T marked (comparisons.rate_runs)."""
    sgn, gd = gd_runs(11, 1.0)["fair"]
    ladder = rate_runs(11)
    with figstyle.figure(path, 1, 2, figsize=(10, 4)) as (fig, ax):
        for tr, name, c in ((sgn, "SignGD", "C0"), (gd, "GD", "C2")):
            ax[0].plot(tr.t, np.asarray(tr["train_loss"]).max(-1), c, label=name)
        ax[0].set(yscale="log", xlabel="step", ylabel=f"L_S (max over {OPT_SEEDS} seeds)",
                  title="lr 1e-4 for both (Fig. 2 (c))")
        ax[0].legend()
        for (opt, (t, L)), c in zip(ladder.items(), ("C2", "C0")):
            lr, _, Ts = RATE_LADDER[opt]
            name = {"gd": "GD", "signgd": "SignGD"}[opt]
            ax[1].plot(t, L, c, label=f"{name}, lr {lr:g}")
            ax[1].plot(Ts, [L[int(np.searchsorted(t, T))] for T in Ts], "o", color=c, ms=4)
        ax[1].set(yscale="log", xlabel="step", ylabel=f"L_S (max over {OPT_SEEDS} seeds)",
                  title="each at its own rate; dots: the ladder's T (rate r(T))")
        ax[1].legend()
        fig.suptitle(f"signgd.gd.faster: s = 30, sigma_p = 1, sigma_0 = 1e-3, seeds "
                     f"11-{10 + OPT_SEEDS}")


# --------------------------------------------------------------------------------------------
# Errata and refuted claims: the printed form failing next to the corrected one
# --------------------------------------------------------------------------------------------
def plot_gd_qk_not_learned(path):
    """signgd.gd.qk_not_learned under its neighbouring reading L = 2: GD at the rates 0.1 and 1
    (the shared gd_runs of seed 11): training loss to its stop at L_S <= 0.05, and max over
    samples of |s_21 - 1/2|; 'basically not learned' is the band [0, 'near 1/2'] (glossary), the
    L = 2 runs lie above it (at L = 3, the sentence's own setting, GD stays inside)."""
    level = lookup("near 1/2").level
    r = gd_runs(11, 1.0)
    with figstyle.figure(path, 1, 2, figsize=(10, 3.9)) as (fig, ax):
        for lr, c_ in zip(GD_RATES, ("C0", "C1")):
            tr = r[lr]
            ax[0].plot(tr.t, tr["train_loss"].max(-1), "o-", ms=3, color=c_,
                       label=f"GD lr {lr:g} (max over 2 seeds)")
            dev = np.abs(np.asarray(tr["s21"]) - 0.5).reshape(len(tr.t), -1).max(-1)
            ax[1].plot(tr.t, dev, "o-", ms=3, color=c_, label=f"GD lr {lr:g}")
            ax[1].plot(tr.t[-1], dev[-1], "*", ms=12, color=c_)
        ax[0].axhline(0.05, color="k", ls="--", lw=0.9, label="stop: L_S <= 0.05")
        tmax = 1.3 * max(r[lr].t[-1] for lr in GD_RATES)
        ax[0].set(yscale="log", xscale="symlog", xlim=(0, tmax), xlabel="GD step",
                  ylabel="training loss",
                  title="the loss converges in 50-410 steps")
        ax[0].legend(loc="lower left")
        ax[1].axhspan(0, level, color=FAIL, alpha=0.15,
                      label=f"printed 'not learned':\n|s_21 - 1/2| <= {level:g}")
        ax[1].axhline(level, color=FAIL, lw=0.8)
        ax[1].set(xscale="symlog", xlim=(0, tmax), ylim=(0, 0.52), xlabel="GD step",
                  ylabel="max over samples |s_21 - 1/2|",
                  title="at L = 2 the attention is learned by the stop (star)")
        ax[1].legend(loc="upper left")
        fig.suptitle("signgd.gd.qk_not_learned, the reading L = 2: gradient descent, s = 30, "
                     "sigma_p = 1, sigma_0 = 1e-3, seeds 11-12")


def _stage4(cfg=CANON):
    tr, q, st_ = stage_run(*cfg)
    return tr, q, st_, stage4_pairs(q, tr.t, st_["T4m"])


def plot_lemma4_7(path):
    """signgd.lemma4_7 on the canonical run: per pair with both noises against sgn alpha at
    T_4^-, the step its key noise and its query noise align for good (printed: key first in
    every pair; a few pairs fail), and per seed T_4^+ (all key noise aligned) against T_q (all
    query noise aligned; corrected: T_q > T_4^+ in every seed)."""
    tr, q, st_, ev = _stage4()
    both = ev["wrong_a"] & ev["wrong_b"]
    ak, aq = ev["align_b"][both], ev["align_a"][both]
    ok = ak < aq
    with figstyle.figure(path, 1, 2, figsize=(10.5, 4.2)) as (fig, ax):
        ax[0].plot(ak[ok], aq[ok], "o", ms=3.5, color="C0", alpha=0.7,
                   label=f"key noise aligns first: {ok.sum()} pairs")
        ax[0].plot(ak[~ok], aq[~ok], "X", ms=7, color=FAIL,
                   label=f"query noise first or together: {(~ok).sum()} pairs (printed fails)")
        lo, hi = np.nanmin([ak.min(), aq.min()]), np.nanmax([ak.max(), aq.max()])
        ax[0].plot([lo, hi], [lo, hi], "k--", lw=0.8, label="same step")
        ax[0].set(xlabel="step the key noise b aligns for good",
                  ylabel="step the query noise a aligns for good",
                  title=f"printed (per pair): key noise first in all {both.sum()} pairs")
        ax[0].legend(loc="lower right", fontsize=6.5)
        seeds = np.arange(len(ev["Tk"]))
        ax[1].bar(seeds - 0.2, ev["Tk"], 0.4, color="C2", label="T_4^+: every key noise aligned")
        ax[1].bar(seeds + 0.2, ev["Tq"], 0.4, color="C1", label="T_q: every query noise aligned")
        ax[1].set_xticks(seeds, [str(11 + s) for s in seeds])
        ax[1].set(xlabel="seed", ylabel="step",
                  title=f"corrected (per seed): T_q > T_4^+ in {(ev['Tq'] > ev['Tk']).sum()} "
                        f"of {len(seeds)} seeds")
        ax[1].set_ylim(0, 1.25 * np.nanmax(ev["Tq"][np.isfinite(ev["Tq"])]))
        ax[1].legend(loc="upper left", ncol=2)
        fig.suptitle(f"signgd.lemma4_7: query noise aligns after key noise ({CANON_TEXT})")


def plot_lemma4_6(path):
    """signgd.lemma4_6 (refuted) on the canonical run: every key noise with the wrong sign at
    T_4^-, sgn(alpha) b against steps since its turn, normalised by |b| at the turn (printed:
    from its turn it moves towards sgn alpha at every step until aligned); the ones that move
    away after their turn are drawn in red."""
    tr, q, st_, ev = _stage4()
    wrong = np.argwhere(ev["wrong_b"])
    sa = np.sign(q["alpha"])
    with figstyle.figure(path, 1, 2, figsize=(10.5, 4.2),
                         gridspec_kw=dict(width_ratios=(1.6, 1))) as (fig, ax):
        nbad = 0
        backs = []
        for s, n, i in wrong:
            turn = ev["turn_b"][s, n, i]
            if not np.isfinite(turn):
                continue
            k0 = int(np.searchsorted(tr.t, turn))
            k1 = int(min(len(tr.t) - 1, np.searchsorted(tr.t, min(ev["align_b"][s, n, i],
                                                                    tr.t[-1])) + 200))
            y = sa[k0:k1, s, n] * q["b"][k0:k1, s, n, i]
            y = y / abs(y[0])
            bad = ev["back_b"][s, n, i] > 0
            backs.append(ev["back_b"][s, n, i])
            nbad += bad
            ax[0].plot(tr.t[k0:k1] - turn, y, color=FAIL if bad else "C0",
                       lw=1.8 if bad else 0.5, alpha=1.0 if bad else 0.35, zorder=3 if bad else 2)
        ax[0].plot([], [], color="C0", lw=0.8, label="moves towards sgn alpha every step (printed)")
        ax[0].plot([], [], color=FAIL, lw=1.8,
                   label=f"moves away after its turn: {nbad} key noises")
        ax[0].axhline(0, color="k", lw=0.7)
        ax[0].set(xlim=(0, None), xlabel="steps since the key noise's turn",
                  ylabel="sgn(alpha_s) b_{s,i} / |b_{s,i}(turn)|",
                  title=f"{len(wrong)} wrong-sign key noises at T_4^-, from their turn on")
        ax[0].legend(loc="lower right")
        backs = np.array(backs)
        ax[1].hist(backs, bins=np.arange(-2.5, max(backs.max(), 3) + 5, 5), color="C0")
        for b_ in backs[backs > 0]:
            ax[1].annotate(f"{b_} steps", (b_, 1), xytext=(0, 12), textcoords="offset points",
                           ha="center", color=FAIL, fontsize=7,
                           arrowprops=dict(arrowstyle="->", color=FAIL))
        ax[1].set(yscale="log", ylim=(0.5, None),
                  xlabel="steps away from sgn alpha between turn and alignment",
                  ylabel="key noises", title="printed (ii) needs every count = 0")
        fig.suptitle(f"signgd.lemma4_6 (refuted): after T_4^- every wrong-sign key noise turns "
                     f"and moves straight to sgn alpha?\n{CANON_TEXT}")
