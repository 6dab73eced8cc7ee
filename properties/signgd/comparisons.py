"""SignGD against its comparisons (Li et al., ICLR 2025): the runs of SignGD beside GD (Section
3.2, Fig. 2 (c), App. B.4's longer context), beside Adam (Section 3.2, App. B.3) and on the data
variants of Table 3 (App. B.2), shared by signgd.gd.*, signgd.longer_context, signgd.adam (and
.beta0, .query_noise) and signgd.variant_b/c/d.  Data, not claims.  Imports go
one way: setting.py, common.py and runs.py (the stop rule and the nulls) are read here.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import example, given

from properties.cache import run_cache
from properties.signgd.runs import (all_noise_aligned, attention_frozen_null, held_at_init,
                                    problem_and_init, training_off)
from properties.signgd.setting import CAP, LOG, M_K, M_V, N_SAMPLES, SEED, SETTING, TAIL
from sim import signgd as sim


OPT_SEEDS, OPT_LOG_EVERY = 2, 10
OPT_LOG = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "train_loss")
OPT_SETTING = SETTING.replace("n = 8,", "n = 8, s = 30, sigma_p = 1, sigma_0 = 1e-3, eta = 6e-5,")
GD_TAIL = 8000  # GD steps of the rate fit (signgd.gd.faster)
GD_RATES = (0.1, 1.0)  # 0.1: the paper's GD rate on MNIST (App. B.1); its synthetic rate was lost
GD_SIGMA_P = (1.0, 2.0)


@run_cache(maxsize=4)
def gd_runs(seed0: int, sigma_p: float):
    """SignGD (6e-5) and GD (GD_RATES), each stopped at the first logged step with L_S <= 0.05
    for every seed; and SignGD vs GD at the common rate 1e-4 (Fig. 2 (c)) for 1000 steps."""
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    s = 30
    d = 1 + N_SAMPLES * s + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=sigma_p, disjoint=True, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")
    stop = lambda q: bool(q["train_loss"].max() <= 0.05)  # noqa: E731
    kw = dict(log_every=OPT_LOG_EVERY, log=("s11", "s21", "alpha", "train_loss"), stop=stop)
    out = {"signgd": sim.train(prob, p0, eta=6e-5, steps=CAP, **kw)}
    for lr in GD_RATES:
        out[lr] = sim.train(prob, p0, eta=lr, steps=CAP, optimizer="gd", **kw)
    for k_ in ("signgd",) + GD_RATES:  # per-test-sample losses (paired across optimizers)
        f, _ = sim.forward(prob.test.P, out[k_].final)
        out[k_].settings["test_losses"] = torch.nn.functional.softplus(-prob.test.y * f).numpy()
    kw = dict(log_every=OPT_LOG_EVERY, log=("train_loss",), steps=1000, eta=1e-4)
    out["fair"] = (sim.train(prob, p0, **kw), sim.train(prob, p0, optimizer="gd", **kw))
    return out


GD_SETTING = SETTING.replace("n = 8,", "n = 8, s = 30, sigma_0 = 1e-3,")
GD_L, GD_L_S = 3, 20  # Appendix B.4's longer context, as signgd.longer_context runs it
GD_L_SETTING = SETTING.replace("n = 8,", f"n = 8, L = {GD_L} (one signal, {GD_L - 1} noise "
                               f"patches), s = {GD_L_S}, sigma_p = 1, sigma_0 = 1e-3,").replace(
    "d = 1 + n s + 120", "d = 1 + n (L - 1) s + 120")


@run_cache(maxsize=4)
def gd_runs_long_context(seed0: int):
    """Appendix B.4's setting (L = GD_L): GD at GD_RATES and SignGD (6e-5), each stopped at the
    first logged step (every 10) with L_S <= 0.05 for every seed, from the same data and init
    (OPT_SEEDS seeds).  Per optimizer: the max over seeds, samples and every attention row's
    entries of |s - 1/L| at the stop and at init, and the stop step."""
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    d = 1 + N_SAMPLES * (GD_L - 1) * GD_L_S + 120
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=GD_L_S, d=d, sigma_p=1.0, L=GD_L,
                            disjoint=True, n_test=8, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=1e-3, device="cpu")

    def stop(q):
        return bool(q["train_loss"].max() <= 0.05)

    out = {}
    for opt, lr in [("gd", lr_) for lr_ in GD_RATES] + [("signgd", 6e-5)]:
        tr = sim.train(prob, p0, eta=lr, steps=CAP, optimizer=opt, log_every=OPT_LOG_EVERY,
                       log=("s11", "s12", "s21", "s22", "train_loss"), stop=stop)
        dev = [max(float(np.abs(np.asarray(tr[k_][i]) - 1.0 / GD_L).max())
                   for k_ in ("s11", "s12", "s21", "s22")) for i in (-1, 0)]
        out[lr if opt == "gd" else "signgd"] = dict(dev=dev[0], dev0=dev[1], t=int(tr.t[-1]),
                                                    loss=float(tr["train_loss"][-1].max()))
    return out



# --------------------------------------------------------------------------------------------
# signgd.gd.faster: rate runs (the trend in t) and the figure's runs at the common rate 1e-4
# --------------------------------------------------------------------------------------------
RATE_LADDER = {  # optimizer: (lr, horizon, the T of the ladder; the statistic reads L(T) and L(T/2))
    "gd": (1.0, 4000, tuple(int(round(500 * 2 ** (k / 2))) // 20 * 20 for k in range(7))),
    "signgd": (6e-5, 4000, tuple(range(1000, 4001, 500))),
}


@run_cache(maxsize=4)
def rate_runs(seed0: int):
    """Per optimizer of RATE_LADDER: max over the OPT_SEEDS seeds of L_S(t), logged every 10 steps
    to the horizon, on the sheet's CPU setting (s = 30, sigma_p = 1, sigma_0 = 1e-3), same data
    and init for both.  Returns {opt: (t, L)}."""
    prob, p0 = problem_and_init([seed0 + k for k in range(OPT_SEEDS)], 30)
    out = {}
    for opt, (lr, T, _) in RATE_LADDER.items():
        tr = sim.train(prob, p0, eta=lr, steps=T, optimizer=opt, log_every=10, log=("train_loss",))
        out[opt] = (tr.t.copy(), tr["train_loss"].max(-1))
    return out


# --------------------------------------------------------------------------------------------
# Table 3 variants (b)-(d) (Appendix B.2): signgd.variant_b, variant_c, variant_d
# --------------------------------------------------------------------------------------------
VARIANTS = {  # name: (orthogonal, s, d)
    "b": (False, 30, 1 + N_SAMPLES * 30 + 120),  # non-orthogonal, sparse
    "c": (True, 200, 241),  # orthogonal, non-sparse (s close to d)
    "d": (False, 200, 241),  # non-orthogonal, non-sparse
}
VAR_ETA, VAR_SIGMA_P, VAR_SIGMA_0 = 6e-5, 1.0, 1e-3


@run_cache(maxsize=6)
def variant_run(name: str, seed0: int):
    """OPT_SEEDS seeds of variant `name` (supports drawn independently per sample, overlapping),
    SignGD logged every step to 1.25 t* (the stage runs' stop rule).  Returns what the variant
    claims read: per-step s11, s21 (steps, seeds, n) and alpha, beta, a, b (the inner products
    Lemmas 4.3 (1) and 4.4 read: common.stage3_lemma_checks); V, V_mu, L_S at init and end; L_D at
    init and end (500 test samples); the stage times; the horizon; s, eta, sigma_p, sigma_0; the
    noise patches' ||xi_i||_1, ||xi_i||_2 (S, n)."""
    if name not in VARIANTS:
        raise ValueError(f"name must be one of {sorted(VARIANTS)}, got {name!r}")
    orth, s, d = VARIANTS[name]
    seeds = [seed0 + k for k in range(OPT_SEEDS)]
    prob = sim.make_problem(seeds, n=N_SAMPLES, s=s, d=d, sigma_p=VAR_SIGMA_P, orthogonal=orth,
                            disjoint=False, device="cpu")
    p0 = sim.init_params(seeds, d=d, m_k=M_K, m_v=M_V, sigma_0=VAR_SIGMA_0, device="cpu")
    tr = sim.train(prob, p0, eta=VAR_ETA, steps=CAP, log_every=1, log=LOG,
                   stop=all_noise_aligned, tail=TAIL)
    q = sim.squeeze_L2(tr.q)
    ends = lambda x: x[[0, -1]].copy()  # noqa: E731
    xi = prob.train.xi[..., 0, :]  # (S, n, d): the noise patch
    return dict(s11=q["s11"], s21=q["s21"], V=ends(q["V"]), V_mu=ends(q["V_mu"]),
                train_loss=ends(q["train_loss"]),
                test_loss=np.stack([sim.test_metrics(prob, p0)[0], tr.test_loss[-1]]),
                T=sim.stage_times(tr), t_end=int(tr.t[-1]), s=s, eta=VAR_ETA, sigma_p=VAR_SIGMA_P,
                sigma_0=VAR_SIGMA_0, **{k_: q[k_] for k_ in ("alpha", "beta", "a", "b")},
                xi_l1=xi.abs().sum(-1).numpy(), xi_l2=(xi ** 2).sum(-1).sqrt().numpy())


def variant_untrained(name: str, seed0: int):
    """Null of the variant claims: training off (every quantity at its init value, no stage
    event)."""
    return training_off(variant_run(name, seed0),
                        ("s11", "s21", "V", "V_mu", "train_loss", "test_loss", "alpha", "beta",
                         "a", "b"))


def variant_signals_frozen(name: str, seed0: int):
    """Null of the variant claims' Lemma 4.4 checks: the query and key signals alpha, beta keep
    their init values (the rest of the run, its stage times included, as trained)."""
    return held_at_init(variant_run(name, seed0), ("alpha", "beta"))


variant_attention_frozen = attention_frozen_null(variant_run)
variant_attention_frozen.__doc__ = ("Null of the variant claims: W_Q, W_K not trained: the softmax "
                                    "outputs keep their init values (the value trajectories as "
                                    "trained).")


# --------------------------------------------------------------------------------------------
# Adam beside SignGD (signgd.adam, signgd.adam.beta0 and signgd.adam.query_noise)
# --------------------------------------------------------------------------------------------
ADAM_RATES = (3e-5, 6e-5, 1.2e-4)  # the SignGD rate 6e-5 halved and doubled (Adam's own was lost)
RATE = 6e-5  # the sheet's SignGD rate: the horizon and (i)'s comparison
SG_LOG = ("alpha", "beta", "a", "b", "V")


def adam_draws(fn):
    """The draws of the Adam claims: the sheet's CPU setting (seed 11), seed 12345, one drawn."""
    return example(seed=11)(example(seed=12345)(given(seed=SEED)(fn)))


def all_key_noise_aligned(q):
    """Adam's stop rule: every key noise of every seed has the sign of its neuron's query signal
    (SignGD's rule, runs.all_noise_aligned, without the query noise: Section 3.2's exception)."""
    sa = np.sign(q["alpha"])[..., None, None]
    return bool((np.sign(q["b"]) == sa).all())


def _key_aligned_at(t, q):
    """The first logged step at which every key noise of every seed has the sign of its neuron's
    query signal (inf if none): the event of Adam's stop rule, read the same way on both runs."""
    sa = np.sign(q["alpha"])[..., None]
    ok = (np.sign(q["b"]) == sa).reshape(len(t), -1).all(-1)
    return float(t[np.argmax(ok)]) if ok.any() else np.inf


@run_cache(maxsize=12)
def opt_runs(seed0: int, eta: float = RATE):
    """At rate eta, same data and init (OPT_SEEDS seeds, s = 30, sigma_p = 1, sigma_0 = 1e-3, 500
    test samples): SignGD to its horizon T = 1.25 t* (t*: all noise aligned; logged every 10
    steps); Adam beta = (0.9, 0.999) / eps = 1e-15 to its own horizon 1.25 t*_A (t*_A: all key
    noise aligned; every step, 'ad') and to SignGD's T (every 10 steps, 'adT'); at RATE also Adam
    beta = 0 / eps = 1e-100 to T.  Adam's stage times count completed T_4^- turns
    (sim.signgd.stage_times(turns="completed")): with momentum a Stage II alignment can
    overshoot and come back, which the first-turn detector reads as T_4^- (exploration seed
    7002 at 3e-5: T_4^- = 31, two steps after T_2)."""
    prob, p0 = problem_and_init([seed0 + k for k in range(OPT_SEEDS)], 30, n_test=500)
    sg = sim.train(prob, p0, eta=eta, steps=CAP, log_every=10, log=SG_LOG,
                   stop=all_noise_aligned, tail=TAIL)
    T = int(sg.t[-1])
    out = dict(sg=dict(t=sg.t, **sim.squeeze_L2(sg.q)), T_signgd=T)
    if eta == RATE:
        a0 = sim.train(prob, p0, eta=eta, steps=T, log_every=10, log=SG_LOG, optimizer="adam",
                       betas=(0.0, 0.0), adam_eps=1e-100)
        out["a0"] = dict(t=a0.t, **sim.squeeze_L2(a0.q))
    adT = sim.train(prob, p0, eta=eta, steps=T, log_every=10, test_every=T, log=LOG,
                    optimizer="adam", betas=(0.9, 0.999))
    out["adT"] = dict(t=adT.t, **sim.squeeze_L2(adT.q), test_loss=adT.test_loss)
    ad = sim.train(prob, p0, eta=eta, steps=CAP, log_every=1, test_every=CAP, log=LOG,
                   optimizer="adam", betas=(0.9, 0.999), stop=all_key_noise_aligned, tail=TAIL)
    xi = prob.train.xi[..., 0, :]  # (S, n, d): the noise patch
    out["ad"] = dict(t=ad.t, **sim.squeeze_L2(ad.q), test_loss=ad.test_loss,
                     T=sim.stage_times(ad, turns="completed"), eta=float(eta), sigma_0=1e-3,
                     xi_l1=xi.abs().sum(-1).numpy(), xi_l2=(xi ** 2).sum(-1).sqrt().numpy(),
                     horizon=int(ad.t[-1]), T_signgd=T,
                     t_key=_key_aligned_at(ad.t, sim.squeeze_L2(ad.q)),
                     t_key_signgd=_key_aligned_at(sg.t, out["sg"]))
    return out



def signgd_run(seed):
    """SignGD, logged every 10 steps."""
    return opt_runs(seed)["sg"]


def adam_beta0(seed):
    """Adam with beta_1 = beta_2 = 0, eps = 1e-100, logged every 10 steps."""
    return opt_runs(seed)["a0"]


def adam_momentum_every10(seed):
    """Null of signgd.adam.beta0: Adam with the paper's momentum (beta = (0.9, 0.999)), at the
    same logged steps."""
    return opt_runs(seed)["adT"]


def adam_run(seed, eta=RATE):
    """Adam (0.9, 0.999) at rate eta to its own horizon, every step, with its stage times and
    test loss (init, end)."""
    return opt_runs(seed, eta)["ad"]


def adam_at_signgd_horizon(seed, eta=RATE):
    """Adam (0.9, 0.999) at rate eta to SignGD's horizon at that rate (every 10 steps)."""
    return opt_runs(seed, eta)["adT"]

