"""signgd.adam.beta0: Adam with beta_1 = beta_2 = 0 and eps -> 0 is SignGD (Section 1, App. B.3),
on the runs of signgd.adam (`comparisons.opt_runs`): a simulator consistency check.
"""

from __future__ import annotations

import numpy as np
import pytest

from properties import Claim, Tolerance, audits, check_close, examples, null, register
from properties.signgd.common import first_from
from properties.signgd.comparisons import (adam_beta0, adam_draws, adam_momentum_every10,
                                           OPT_SEEDS, OPT_SETTING, SG_LOG, signgd_run)
from properties.signgd.setting import signgd_draw_note

# signgd.adam and signgd.adam.beta0 share comparisons.opt_runs: one xdist worker runs both
pytestmark = pytest.mark.xdist_group("signgd-adam")

CIDB = "signgd.adam.beta0"

register(Claim(
    draw_note=signgd_draw_note,
    id=CIDB, kind="consistency", where="Section 1 ('SignGD ... an effective surrogate for Adam'), "
    "App. B.3 (Adam with beta_1 = beta_2 = 0)",
    statement="Adam with beta_1 = beta_2 = 0 and eps -> 0 is SignGD.",
    assumptions=OPT_SETTING + f"; Adam lr 6e-5, beta = 0, eps = 1e-100; {OPT_SEEDS} seeds per "
                "draw, horizon = SignGD's 1.25 t*; seeds 11 and 12345 explicit examples",
    prediction="trajectories of alpha, beta, a, b, V equal to round-off through SignGD's T_4^+",
    simulation="sim.signgd.train(optimizer='adam', betas=(0, 0)) vs optimizer='signgd', same data "
               "and init",
    metric="max_abs of alpha, beta, a, b, V over logged steps <= T_4^+ (SignGD's) and seeds",
    tolerance="float64 round-off, 20 x steps ops on the largest inner product",
    reading="A simulator consistency check (beta = 0 makes Adam's step sgn g up to eps by "
            "construction); it holds with eps = 1e-100 until g^2 underflows (|g| < 1e-154: a "
            "query-noise gradient late in Stage IV, after T_4^+; then v = 0 and the step is "
            "g/eps). With the default eps = 1e-15 query noise already differs at step 1 "
            "(query-noise gradients are ~1e-15 early): eps is not negligible there. Null: "
            "momentum on (Adam (0.9, 0.999) in place of beta = 0).",
    paper_setting="No setting of its own: with beta_1 = beta_2 = 0 and eps -> 0 Adam's update is "
                  "SignGD's for any data and step (Sec. 1, App. B.3); the sheet's CPU setting (n = "
                  "8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5) is run (seeds 11, 12345 and "
                  "one drawn), Adam at lr 6e-5, eps = 1e-100.",
    alternatives=(
        null("momentum_on", adam_momentum_every10, "Adam with the paper's momentum and second-"
             "moment averaging (beta = (0.9, 0.999)) in place of beta = 0", replaces="adam0"),
    ),
))


@audits(CIDB)
@examples(1)
@adam_draws
def test_signgd_adam_beta0_is_signgd(world, seed):
    sg = signgd_run(seed)
    a0 = world.simulation(adam_beta0, "adam0", pure=True)(seed)
    sa = np.sign(sg["alpha"])[..., None]
    T4p = first_from((np.sign(sg["b"]) == sa).all((-1, -2)), sg["t"])
    k = int(np.searchsorted(sg["t"], np.max(np.where(np.isfinite(T4p), T4p, sg["t"][-1])))) + 1
    scale = float(np.abs(sg["a"]).max() + np.abs(sg["V"]).max())
    tol = Tolerance.roundoff(scale, ops=20 * int(sg["t"][k - 1]))
    for k_ in SG_LOG:
        check_close(CIDB, a0[k_][:k], sg[k_][:k], tol,
                    what=f"Adam(beta=0) = SignGD through T_4^+: {k_}")
