"""signgd.theorem3_2.item2 (Theorem 3.2 (2): a constant-order test loss) on the stage run to
1.25 t* (runs.stage_run, the three draws shared with the other items of Theorem 3.2) and along a
sigma_p ladder on the reduced dynamics.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import Phase, given

from properties import (Claim, Threshold, audits, check_at_least, check_trend, examples, null, register, rival)
from properties.readings import lookup
from properties.signgd.common import claim_rate, exact
from properties.signgd.figures import plot_losses
from properties.settings import size
from properties.signgd.setting import (Config, M_K, M_V, N_SAMPLES, shared_draws, signgd_draw_note,
                                       STAGE_RUN, T32, TAIL)
from properties.signgd.runs import stage_run
from properties.signgd.reduced import (first_all_noise_aligned, heldout_margins, margins,
                                       REDUCED_KEYS, ReducedState, reduced_softmax,
                                       run_reduced_until)
from sim import signgd as sim

EXACT = exact()


CID2 = "signgd.theorem3_2.item2"
EPS2 = 1e-3  # the training loss's epsilon (item 1's reading)


@functools.lru_cache(maxsize=8)
def _test_losses(cfg):
    tr, q, _ = stage_run(*cfg)
    return dict(test=tr.test_loss[-1].copy(), train=q["train_loss"][-1].copy(),
                t_test=tr.t_test.copy(), test_curve=tr.test_loss.copy())


def trained_test_loss(cfg):
    """Test loss (500 fresh samples per seed, supports apart from the training ones) and training
    loss of every seed at the end of training (1.25 t*)."""
    return _test_losses(tuple(cfg))


def loss_on_training_set(cfg):
    """Null: the 'test' loss measured on the training samples (seen data: no held-out set)."""
    r = dict(_test_losses(tuple(cfg)))
    r["test"] = r["train"].copy()
    return r


# The ladder in sigma_p (issue 20): the end-of-training test loss on the exact reduced dynamics.
# The test-noise inner products never move (no gradient reaches the test supports), so the test
# margin at step t is (s11' + s21') V_mu(t) + (2 - s11' - s21') V', with s11' = sigma(sum_s
# alpha_s(t) (beta_s(t) - b'_s)), s21' = sigma(sum_s a'_s (beta_s(t) - b'_s)) and a', b', V' the
# init inner products with y xi' of the test sample: the reduced run's alpha, beta, V_mu and the
# init's test inner products give L_D(t) exactly.
T2_SP = {"ci": (1, 2, 4), "ladder": (1, 2, 4, 8), "paper": (1, 2, 4, 8)}  # x the draw's sigma_p
T2_CAP = 60000
TREND_FF2 = claim_rate(3)  # per draw: the claim share over the three shared draws


@functools.lru_cache(maxsize=4)
def _test_loss_ladder(seed0, n_seeds, s, sigma_p, sigma_0, eta, factors):
    seeds = [seed0 + k for k in range(n_seeds)]
    d = 1 + N_SAMPLES * s + 120
    out, train = [], []
    for f in factors:
        sp = sigma_p * f
        prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sp, disjoint=True,
                                device="cpu")  # 500 test samples, supports apart
        p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=sigma_0, device="cpu")
        q = sim.squeeze_L2(sim.tracked(prob, p0, keep=REDUCED_KEYS))
        c = eta * prob.train.xi.abs().sum(-1)[..., 0].numpy()
        st_ = ReducedState(q["alpha"], q["beta"], q["a"], q["b"], q["V_mu"], q["V"], c,
                           np.full(len(seeds), eta))
        h = run_reduced_until(st_, first_all_noise_aligned, TAIL, T2_CAP, chunk=1000)
        with np.errstate(over="ignore"):  # a saturated logistic: exp overflows to inf, s -> 0
            m = heldout_margins(prob, p0, h["alpha"][-1], h["beta"][-1], h["V_mu"][-1])
            # the training margins at the same state: the noise inner products a, b, V of the
            # training samples move (the null train_loss_ladder reads them)
            s11, s21 = reduced_softmax(h["alpha"][-1], h["beta"][-1], h["a"][-1], h["b"][-1])
        out.append(np.logaddexp(0.0, -m).mean(-1))
        mt = margins(s11, s21, h["V_mu"][-1], h["V"][-1])
        train.append(np.logaddexp(0.0, -mt).mean(-1))
    return dict(sizes=tuple(float(sigma_p * f) for f in factors), loss=np.array(out),
                train=np.array(train))


def heldout_loss_ladder(cfg):
    """Per sigma_p rung (rows: the draw's sigma_p x T2_SP) and seed (columns: the draw's seeds,
    batched as in runs.stage_run, whose stop rule sets the end of training 1.25 t* over them): L_D
    at the end of training on the reduced dynamics, at the named size."""
    c = Config(*cfg)
    return _test_loss_ladder(int(c.seed0), int(c.n_seeds), int(c.s), float(c.sigma_p),
                             float(c.sigma_0), float(c.eta), T2_SP[size()])


def train_loss_ladder(cfg):
    """Null: the 'test' loss along the sigma_p ladder measured on the training samples (their
    loss at the same end of training; no held-out data)."""
    r = dict(heldout_loss_ladder(cfg))
    r["loss"] = r["train"].copy()
    return r


SENT2 = "The trained transformer has a constant-order test loss (Theorem 3.2 (2))"


LEVEL2 = lookup("constant order").level  # the glossary's one-size level of 'constant order'


def constant_order():
    """The printed reading: L_D(end) in [LEVEL2, inf), LEVEL2 the glossary's 'constant order'
    (read at its stricter and looser levels too, at one size)."""
    return (LEVEL2, np.inf)


def generalizes():
    """Rival: the test loss follows the training loss to epsilon (L_D(end) <= 1e-3)."""
    return (0.0, EPS2)


def chance_level():
    """Rival: nothing reaches the test margin: L_D(end) within 0.01 of its init value log 2."""
    return (np.log(2) - 0.01, np.log(2) + 0.01)


register(Claim(
    draw_note=signgd_draw_note,
    id=CID2, where="Theorem 3.2 (2)",
    statement="The trained transformer has a constant-order test loss.",
    prediction="L_D(end) 'constant order' (glossary: >= 0.1, bracket 0.2-0.05) for every seed "
               "while L_S(end) <= 1e-3 (item 1); L_D(end) "
               "increasing along the noise strength sigma_p (not vanishing)",
    metric="min over seeds of the test loss at the end of training (1.25 t*)",
    tolerance="at the draw's size the glossary reading 'constant order' (0.1, bracket 0.2-0.05; "
              "an exact inequality of the run's test loss, 500 test samples per seed); the ladder: check_trend increasing, per-seed "
              "slopes of log L_D(end) against log sigma_p, seed-clustered, t on seeds - 1 dof, "
              f"false-fail {TREND_FF2:.3g} per draw (the claim share 1e-4 over 3 draws)",
    reading="'Constant order' is Theta(1) in the problem size, an asymptotic statement: at one "
            "size it is read as L_D(end) >= 0.1 and, by the asymptotic policy, that reading is "
            "not-audited (the same policy as signgd.appendix_f1's 'Theta(1)'). L_D falls "
            "slowly and steadily over training: the test margin's signal term (s_11 + s_21) V_mu "
            "grows with V_mu(t) = V_mu(0) + 2 eta t "
            "(the test noise inner products never move), so at a fixed size L_D -> 0 as t -> inf "
            "and is Theta(1) only at the end of training, T ~ log(1/eps) / (eta s sigma_p), where "
            "V_mu(T) ~ log(1/eps) / (s sigma_p) -> 0 as the noise strength grows. Decided "
            "(issue 20) by the trend of L_D(end) along sigma_p (the draw's sigma_p x "
            f"{T2_SP['ci']} at ci, x {T2_SP['ladder']} under --size ladder; the draw's seeds) on "
            "the exact reduced dynamics, the test loss from the init's test inner products "
            "(cross-checked against the full simulator's L_D(end) at the draw's own sigma_p): "
            "increasing, its rival exponent -1 (a test loss that vanishes with the noise "
            "strength). Condition 3.1's sigma_0 s sigma_p sqrt(m_k) on the rungs: 0.085 x the "
            "factor at the sheet's setting (<= 0.34 at x 4); on the fast corner (sigma_0 = 7e-4, "
            "sigma_p = 2) up to 0.48 at x 4 (x 8 under --size ladder: 0.68, 0.95). Alternatives: rivals 'generalizes' (L_D(end) <= 1e-3) and 'chance level' "
            "(L_D(end) = log 2 +- 0.01); null: the test loss measured on the training set.",
    asymptotic="the problem size (s sigma_p: Theta(1) test loss at the end of training)",
    plot=plot_losses(CID2),
    paper_setting="Theorem 3.2 (2) is asymptotic under Condition 3.1 (no numbers), and Table 3 row "
                  "(a), the setting of Figs. 1-2 and Table 2 (App. B.1), lost its numbers in "
                  "extraction; the sheet's CPU setting (n = 8, s = 30, sigma_p = 1, sigma_0 = "
                  "1e-3, eta = 6e-5) and the sweep's slow and fast corners (s in [20, 30], sigma_p "
                  "in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]) stand in, with "
                  "sigma_p scaled x 1, 2, 4 at ci.",
    alternatives=(
        rival("generalizes", generalizes, "the test loss follows the training loss to its "
              "epsilon 1e-3", replaces="band"),
        rival("chance_level", chance_level, "nothing reaches the test margin: L_D stays at its "
              "init value log 2 (+- 0.01)", replaces="band"),
        null("test_on_training_set", loss_on_training_set, "the 'test' loss measured on the "
             "training samples (no held-out data)", replaces="losses"),
        null("train_loss_ladder", train_loss_ladder, "along the sigma_p ladder, the 'test' loss "
             "measured on the training samples (no held-out data)", replaces="ladder"),
    ),
    **T32))


@audits(CID2)
@examples(1, phases=[Phase.explicit])  # the three shared draws (cached runs); no fourth long run
@shared_draws
@given(cfg=STAGE_RUN)
def test_signgd_theorem3_2_item2(world, cfg):
    r = world.simulation(trained_test_loss, "losses", pure=True)(cfg)
    lo, hi = world.prediction(constant_order, "band")()
    LD = r["test"]
    # one named check in every world: L_D(end) inside the predicted band [lo, hi], its lower
    # end the glossary word where it is the claim's (decided at the word's bracket too), the
    # band's own ends (derived, exact) where a rival's band or the resolution replaces it
    for side, v, end in (("lower", float(LD.min()), lo), ("upper", -float(LD.max()), -hi)):
        if not np.isfinite(end):
            continue
        th = (Threshold.reading("constant order", SENT2) if side == "lower" and lo == LEVEL2
              else EXACT)
        check_at_least(CID2, v if th is not EXACT else v - end, th, name="one size",
                       what=f"{'min' if side == 'lower' else 'max'} over seeds L_D(end) = "
                            f"{abs(v):.4g} {'>=' if side == 'lower' else '<='} {abs(end):.4g} "
                            f"(L_S(end) <= {r['train'].max():.2g})")
    # the ladder in sigma_p (reduced dynamics): L_D(end) must not vanish as sigma_p grows
    if T2_SP[size()][0] == 1:  # cross-check at one rung: the full simulator's stage run
        L0 = heldout_loss_ladder(cfg)["loss"][0]
        assert np.allclose(L0, trained_test_loss(cfg)["test"], rtol=1e-6), (L0, LD)
    L = world.simulation(heldout_loss_ladder, "ladder", pure=True)(cfg)
    desc = ", ".join(f"sigma_p = {a:g}: {np.median(v):.3g}" for a, v in zip(L["sizes"], L["loss"]))
    check_trend(CID2, L["sizes"], L["loss"].T, direction="increasing", false_fail=TREND_FF2,
                rivals=(-1.0,), name="L_D(end) along sigma_p",
                what=f"L_D(end) along sigma_p (medians over seeds: {desc})")
