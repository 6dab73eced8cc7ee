"""joma.theorem1.softmax_fig2: Section 3 after Theorem 1 and Fig. 2, with softmax attention
Eqn. 19's invariant (with the current bbar_m(t)) "still predicts z_m(t) fairly well", while its two
components do not.  Runs: properties.joma.runs.fig2_run on Fig. 2's two x settings, SEEDS seeds per
draw; the main claim ('high') and the caption's contrast are two properties.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import (Claim, Threshold, attach_plot, audits, check_mean_at_least, examples,
                        register, rival)
from properties.joma.common import fig2_correlations as correlations
from properties.joma.common import zhat_component_1, zhat_component_2, zhat_full
from properties.joma.figures import plot_fig2
from properties.joma.runs import DISTS, FIG2_ETA as ETA, fig2_run

register(Claim(
    id="joma.theorem1.softmax_fig2",
    where="Section 3 after Theorem 1, and Fig. 2 (softmax approximation)",
    statement="For softmax attention, even without its assumptions, the invariance of Theorem 1 "
              "still predicts z_m(t) fairly well (Fig. 2: zhat_m(t) shows high correlation with "
              "the true z_m(t)).",
    assumptions="Fig. 2's setting as far as its caption gives it: Eqn. 2 with linear phi, softmax "
                "attention, zero initialisation, W and z_m trained together by gradient steps "
                "(eta = 0.05); x the token frequencies of 20 draws from P(l | y), with P(l | y) "
                "smoothly transiting over the classes (Fig. 2 left) or random per class (Fig. 2 "
                "right); stationary g_{h_k}[i] = 1[y_i = k] - 1/C (Assumption 1). Not given by "
                "the paper, drawn: M_C in 4..8, K in 1..3 (C = max(K, 2)), d = M_C + 1 + 0..3, "
                "N in {16, 32, 64}, horizon 400..800 steps.",
    prediction="zhat_m(t) = 1/2 sum_k (v_k^2(t) - ||v_k(t)||^2 bbar_m(t)) (Eqn. 19 with the "
               "current bbar_m(t), c = 0)",
    simulation="properties.joma.runs.fig2_run (sim.joma.simulate_eqn2, "
               "attention='softmax', activation='linear')",
    metric="normalized (Pearson) correlation over tokens l of zhat_m(t) and z_m(t), and of each "
           "of the caption's two components with z_m(t); per seed, the mean over the 20 logged "
           "times t in (0, T] of corr(zhat_m) (the main claim) and of corr(zhat_m) - "
           "corr(component) (the caption's contrast)",
    tolerance="check_mean_at_least over the draw's seeds (one-sided seed-clustered Student t at "
              "FF per check): the main claim against the glossary's 'high' (0.9, bracket "
              "0.8-0.95), the contrast against 0; significantly above passes, significantly "
              "below refutes, otherwise the draw is undecided",
    reason="Decided with a noise model (issue 36): per seed the trajectory-mean correlation, "
           "over 96 seeds per draw, one-sided seed-clustered t at 5e-6. In Fig. 2's random-x "
           "setting ((M_C, K, extra d, N) = (8, 2, 2, 64), horizon 40) corr(zhat_m, z_m) "
           "averages 0.535 (SE 0.026): significantly below 'high' at every level of its "
           "bracket (0.8-0.95); in the smooth setting 0.869 (SE 0.008): above the looser 0.8, "
           "undecided at 0.9. The caption's contrast fails for the first component in both: "
           "zhat_m1 alone beats zhat_m by 0.076 (SE 0.005, smooth) and 0.263 (SE 0.023, "
           "random). Earlier numbers: Fig. 2's words do not decide it, and the numbers depend "
           "on the size and horizon the caption leaves out. Measured (seeds 1-3, N = 64, horizon 40 = 800 steps, min over "
           "seeds; correlation at t = 2 / 18 / 34): smooth x, (M_C, K) = (8, 2): 0.83 / 0.80 / "
           "0.67; (16, 4): 0.88 / 0.87 / 0.82; (6, 2): 0.82 / 0.73 / 0.52; (20, 5): 0.86 / 0.86 "
           "/ 0.83. Random x: (8, 2): 0.83 / 0.66 / 0.11; (16, 4): 0.95 / 0.94 / 0.80; (6, 2): "
           "-0.55 / -0.59 / -0.64 (one seed anti-correlated from the start); (20, 5): 0.92 / "
           "0.91 / 0.88. So zhat_m correlates at ~0.8-0.95 early in training in both of Fig. 2's "
           "settings and decays as bbar_m(t) drifts (more for small M_C). The caption's "
           "contrast does not hold for the first component: zhat_m1 = 1/2 sum_k v_k^2 alone "
           "correlates 0.74-0.88 (random (6, 2): -0.28 .. 0.28), and late in training it beats "
           "zhat_m in every smooth configuration above (e.g. (8, 2) at t = 34: 0.86 vs 0.67); "
           "zhat_m2 is anti-correlated (-0.1 .. -0.98). The caption's contrast, averaged over "
           "the 20 logged times and the seeds (issue 23; seeds 0-5, (M_C, K, extra d, N) = "
           "(8, 2, 2, 64), horizon 40): smooth x, corr(zhat_m) 0.856 vs corr(zhat_m1) 0.943 "
           "(zhat_m2 -0.68); random x, 0.685 vs 0.807 (zhat_m2 -0.66): the first component "
           "alone predicts z_m better than the invariant, so 'its two components do not' fails "
           "for zhat_m1 on 4 of the 5 audited draws (it holds for zhat_m2).",
    reading="Fig. 2's two data settings are encoded as the caption describes them (a smooth bump "
            "moving with the class; a Dirichlet(0.5) distribution per class); 'fairly well' / "
            "'high correlation' is read by the caption's own contrast: zhat_m(t) must "
            "correlate with z_m(t) better than each of its two components, which the caption "
            "says do not (mean over the trajectory and the seeds: the reading most favourable "
            "to the paper): the contrast needs no level of 'high'; the main claim is read at "
            "the glossary's 'high' (its own property).",
    paper_setting="Fig. 2's caption gives only its two x distributions (smooth over the classes, "
                  "random per class) with linear phi and softmax attention, and no M_C, K, C, N, "
                  "d, learning rate or horizon; both distributions are run, the rest drawn (M_C in "
                  "4..8, K in 1..3, N in {16, 32, 64}, 400-800 steps of eta = 0.05).",
    alternatives=(
        rival("component_1", zhat_component_1,
              "Fig. 2's caption: the component zhat_m1 = 1/2 sum_k v_k^2 alone", replaces="zhat"),
        rival("component_2", zhat_component_2,
              "Fig. 2's caption: the component zhat_m2 = -1/2 sum_k ||v_k||^2 bbar_m alone",
              replaces="zhat"),
    ),
))

# Seeds per draw: the per-seed statistics are cheap (96 seeds of Fig. 2's setting: ~0.6 s), and
# 96 decide a per-seed effect of a third of its spread at FF (t_95 4.6); fixed before the run
# (issue 36), as is FF: 3 checks x 5 draws x 5e-6 = 7.5e-5 of the claim's 1e-4 share.
SEEDS = 96
FF = 5e-6
FIG2_CASE = st.tuples(st.integers(0, 2**31 - SEEDS - 1), st.integers(4, 8), st.integers(1, 3),
                      st.integers(0, 3), st.sampled_from([16, 32, 64]), st.sampled_from(DISTS))
HORIZON = st.integers(400, 800).map(lambda n: n * ETA)  # on the step grid of eta = 0.05
# Fig. 2's setting as far as the caption gives it, both x distributions (the report figure's)
PAPER_FIG2 = [dict(case=(0, 8, 2, 2, 64, dist), horizon=40.0) for dist in DISTS]


def _per_seed(tr, zhat) -> np.ndarray:
    """Per seed, the mean over the 20 logged times of corr(zhat(t), z(t)) (seeds whose
    correlation is undefined at every time, a constant z, are left out)."""
    with np.errstate(all="ignore"):
        c = np.nanmean(correlations(tr, zhat), axis=0)
    return c[np.isfinite(c)]


def _run(world, case, horizon):
    base, *rest = case
    return world.simulation(fig2_run, "run", pure=True)(tuple(range(base, base + SEEDS)), *rest,
                                                        horizon)


@audits("joma.theorem1.softmax_fig2", form="printed",
        fails="zhat_m(t)'s correlation with z_m(t), averaged over the trajectory, is "
              "significantly below the glossary's 'high' (0.9, and below the looser 0.8) over "
              "the draw's 96 seeds on some draws (Fig. 2's random-x setting among them)")
@examples(3)
@example(**PAPER_FIG2[0])
@example(**PAPER_FIG2[1])
@given(case=FIG2_CASE, horizon=HORIZON)
def test_theorem1_softmax_fig2_high_correlation(world, case, horizon):
    """The statement's main claim: zhat_m(t) 'shows high correlation with the true z_m(t)'.
    Per seed the mean over the trajectory of corr(zhat_m, z_m); over the draw's seeds, its mean
    is significantly at least the glossary's level of 'high' (decided at the bracket too)."""
    tr = _run(world, case, horizon)
    check_mean_at_least("joma.theorem1.softmax_fig2",
                        _per_seed(tr, world.prediction(zhat_full, "zhat")),
                        Threshold.reading("high", "zhat_m(t) shows high correlation with the "
                                                  "true z_m(t)"),
                        false_fail=FF, what="mean_t corr(zhat_m, z_m) over seeds",
                        name="high correlation")


@audits("joma.theorem1.softmax_fig2", form="printed",
        fails="the caption's contrast fails for the first component: zhat_m1 = 1/2 sum_k v_k^2 "
              "alone correlates with z_m(t) significantly better than zhat_m (per seed, "
              "averaged over the trajectory; seed-clustered t over 96 seeds)")
@examples(3)
@example(**PAPER_FIG2[0])
@example(**PAPER_FIG2[1])
@given(case=FIG2_CASE, horizon=HORIZON)
def test_theorem1_softmax_fig2(world, case, horizon):
    """The caption's contrast: zhat_m(t) correlates with z_m(t) better than each of its two
    components (which the caption says do not).  Per seed, the mean over the 20 logged times of
    corr(zhat_m, z_m) - corr(component, z_m); over the draw's seeds, significantly >= 0
    (seed-clustered one-sided t; a draw where it is neither significantly above nor below
    decides nothing).  The second component first: the first is the one that fails."""
    tr = _run(world, case, horizon)
    full = correlations(tr, world.prediction(zhat_full, "zhat"))
    for name, comp in (("zhat_m2 = -1/2 sum_k ||v_k||^2 bbar_m", zhat_component_2),
                       ("zhat_m1 = 1/2 sum_k v_k^2", zhat_component_1)):
        gap = np.nanmean(full - correlations(tr, comp), axis=0)
        check_mean_at_least("joma.theorem1.softmax_fig2", gap[np.isfinite(gap)], 0.0,
                            false_fail=FF,
                            what=f"mean_t corr(zhat_m, z_m) - corr({name}, z_m) over seeds",
                            name=f"contrast with {name.split(' =')[0]}")


attach_plot("joma.theorem1.softmax_fig2", plot_fig2)
