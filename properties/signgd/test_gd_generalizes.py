"""signgd.gd.generalizes (Section 3.2, Fig. 2 (d)): per draw and noise level sigma_p in GD_SIGMA_P,
SignGD and GD from the same data and init (`_gen_runs`), each stopped at L_S <= 0.05 for every
seed; the per-seed test-loss gaps on the same 500 test samples, the seeds the independent units.
"""

from __future__ import annotations

import functools

import torch
from hypothesis import example, given

from properties import Claim, audits, check_paired_order, examples, null, register
from properties.signgd.common import claim_rate
from properties.signgd.setting import CAP, SEED, signgd_draw_note
from properties.signgd.runs import problem_and_init
from properties.signgd.comparisons import GD_RATES, GD_SETTING
from sim import signgd as sim

CID = "signgd.gd.generalizes"
GEN_SEEDS = 16  # independent seeds per draw and noise level (the clusters of the error model)
GD_SIGMA_P = (1.0, 1.5, 2.0)  # the noise levels ('consistently across levels': three)
DRAWS = 3  # under ci: seeds 11 and 12345 and one drawn
FALSE_FAIL = claim_rate(DRAWS)  # per draw, over the len(GD_SIGMA_P) x len(GD_RATES) comparisons
N_CMP = len(GD_SIGMA_P) * len(GD_RATES)


@functools.lru_cache(maxsize=4)
def _gen_runs(seed0: int, sigma_p: float):
    """Per optimizer ('signgd', each GD rate): the per-seed mean test loss (J,) at its stop step
    (the first logged step with L_S <= 0.05 for every seed), and the stop steps."""
    prob, p0 = problem_and_init([seed0 + k for k in range(GEN_SEEDS)], 30, sigma_p=sigma_p, n_test=500)
    stop = lambda q: bool(q["train_loss"].max() <= 0.05)  # noqa: E731
    kw = dict(log_every=10, log=("train_loss",), stop=stop, steps=CAP)
    runs = {"signgd": sim.train(prob, p0, eta=6e-5, **kw)}
    for lr in GD_RATES:
        runs[lr] = sim.train(prob, p0, eta=lr, optimizer="gd", **kw)
    out = {}
    for k_, tr in runs.items():
        if tr.settings["t_stop"] is None:
            raise RuntimeError(f"{k_} did not reach L_S <= 0.05 within {CAP} steps "
                               f"(seed0 {seed0}, sigma_p {sigma_p})")
        f, _ = sim.forward(prob.test.P, tr.final)
        out[k_] = torch.nn.functional.softplus(-prob.test.y * f).numpy().mean(-1)
        out[f"stop_{k_}"] = int(tr.t[-1])
    return out


def trained_losses(seed0, sigma_p):
    return _gen_runs(seed0, float(sigma_p))


def gd_untrained(seed0, sigma_p):
    """Null: GD's training off: its test loss is that of the init (f ~ 0: log 2 per sample)."""
    r = dict(_gen_runs(seed0, float(sigma_p)))
    prob, p0 = problem_and_init([seed0 + k for k in range(GEN_SEEDS)], 30, sigma_p=sigma_p, n_test=500)
    f, _ = sim.forward(prob.test.P, p0)
    init = torch.nn.functional.softplus(-prob.test.y * f).numpy().mean(-1)
    for lr in GD_RATES:
        r[lr] = init
    return r


register(Claim(
    draw_note=functools.partial(signgd_draw_note, sigma_p=GD_SIGMA_P),
    id=CID, where="Section 3.2 ('GD generalizes better', Fig. 2 (d)), App. B.3",
    statement="GD generalizes better than SignGD consistently across different levels of data "
              "noise (lower test loss).",
    assumptions=GD_SETTING + " sigma_p in " + str(GD_SIGMA_P) + "; each optimizer stopped at "
                "the first logged step (every 10) with L_S <= 0.05 for every seed (the paper's "
                "MNIST criterion); SignGD lr 6e-5, GD lr in " + str(GD_RATES) + " (0.1 = the "
                f"paper's MNIST GD rate); {GEN_SEEDS} seeds per draw and noise level; seed 11 "
                "(the sheet's CPU setting) and 12345 explicit examples",
    prediction="L_D(GD) < L_D(SignGD) at every noise level and GD rate, beyond the seed-to-seed "
               "Monte Carlo error",
    simulation="sim.signgd.train, 500 fresh test samples per seed (the same for both optimizers)",
    metric="per (sigma_p, GD rate): mean over seeds of the per-seed gap L_D(SignGD) - L_D(GD)",
    tolerance=f"the harness's check_paired_order (paired runs: one init and data per seed): "
              f"seed-clustered one-sided t_(J-1) x sd_seeds(gap) / sqrt(J), J = {GEN_SEEDS}, "
              f"three-way (above: holds; below: refuted; else undecided), level "
              f"{FALSE_FAIL:.3g} per draw over the {N_CMP} comparisons "
              f"(Bonferroni; the claim share 1e-4 over {DRAWS} draws)",
    reading="Fig. 2 (d) is on noisy MNIST; audited on the synthetic data of Definition 2.1 with "
            "sigma_p as the noise level. Alternative: null GD's training off (its test loss at "
            "init), which passes where SignGD's trained test loss is above the init's. The "
            "opposite order and a 'no gap' null are the one-sided test's own complement "
            "(rejected whenever it passes): not alternatives.",
    paper_setting="Fig. 2 (d) is on noisy MNIST (classes 3 and 7, 128 training points, 200 epochs, "
                  "GD lr 0.1, SignGD 5e-4; App. B.1, its SNR scales and noise std lost), not "
                  "available offline; Definition 2.1's data at the sheet's CPU setting stands in, "
                  "with sigma_p in {1, 1.5, 2} as the noise level and GD lr in {0.1, 1}.",
    alternatives=(
        null("gd_untrained", gd_untrained, "GD's training off: its test loss is the init's",
             replaces="losses"),
    ),
))


@audits(CID)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_gd_generalizes(world, seed):
    order = world.prediction(lambda: 1.0, "order")()  # +1: L_D(SignGD) - L_D(GD) > 0
    for sp_ in GD_SIGMA_P:
        r = world.simulation(trained_losses, "losses", pure=True)(seed, sp_)
        for lr in GD_RATES:
            gap = order * (r["signgd"] - r[lr])  # per seed: the two optimizers on one init and data
            check_paired_order(CID, gap, false_fail=FALSE_FAIL / N_CMP, unit="test-loss gap",
                               order=("SignGD's test loss above GD's" if order > 0
                                      else "GD's test loss above SignGD's"),
                               what=f"sigma_p = {sp_}, GD lr {lr}")
