"""The setting of the SignGD audit (Li et al., ICLR 2025): what is run, not how.  The sheet's
CPU-sized setting and its sweep, the stage runs' draws, the configurations a draw is read
through, the draw decorators, the declared path of the stage lemmas (issue 35) and what a draw
says of Condition 3.1.  Data, not claims, and no runs: this module imports nothing of the paper
package (common.py, runs.py, comparisons.py, reduced.py, path.py and the claim files import
from it).

Every run is in the statement sheet's CPU-sized setting (orthogonal data, disjoint training
supports, test supports apart): n = 8, s in [20, 30], sigma_p in [1, 2], m_k = 8, m_v = 16,
sigma_0 ~ 1e-3, eta ~ 6e-5, unless a run says otherwise (the declared path: below).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from hypothesis import Phase, example, given
from hypothesis import strategies as st

from properties import examples
from properties.check import profile
from properties.readings import lookup
from sim import signgd as sim

SEED = st.integers(0, 2**31 - 1)
N_SAMPLES = 8
M_K, M_V = 8, 16
MV_ROWS = 16  # one m_v = 16 init per seed, its value rows rescaled by sqrt(16 / m_v)
LOG = ("alpha", "beta", "a", "b", "V", "V_mu", "s11", "s21", "train_loss")
SETTING = ("Definition 2.1, orthogonal data (mu = e_1, noise supports in [d] minus {1}), "
            "pairwise-disjoint training supports (d = 1 + n s + 120), test supports apart, "
            "n = 8, m_k = 8, m_v = 16, fixed head 1/m_v, logistic loss, full-batch SignGD, "
            "sgn(0) = 0, float64")
RANGE = "sweep: s in [20, 30], sigma_p in [1, 2], sigma_0 in [7e-4, 1.3e-3], eta in [5e-5, 7e-5]"
STAGES = "; ".join(f"{k}: {v}" for k, v in sim.STAGE_DEFINITIONS.items())

H = ("sim.signgd.train to 1.25 t* (t*: first step with every seed's noise aligned; cap "
     "12000 steps)")
TAIL = 0.25  # the run continues to 1.25 t*, t* = first step with all noise of all seeds aligned

CAP = 12000
T32 = dict(assumptions=SETTING + "; " + RANGE + "; end of training = 1.25 t*, t* the first "
                        "step with every seed's noise aligned (after T_4 of every seed)",
           simulation=H + ", test loss on 500 fresh samples every 100 steps")
# Theorem 3.2's draws shared by its items (the long 1.25 t* runs are cached across properties):
# the sheet's CPU setting and the slow and fast corners of the sweep
T32_EXAMPLES = ((11, 8, 30, 1.0, 1e-3, 6e-5, 12000), (12345, 4, 20, 1.0, 1.3e-3, 5e-5, 12000),
                (777, 4, 30, 2.0, 7e-4, 7e-5, 12000))
CANON = (11, 8, 30, 1.0, 1e-3, 6e-5, CAP)  # the sheet's CPU setting, 8 seeds
STAGE_RUN = st.tuples(SEED, st.just(4), st.integers(20, 30), st.floats(1.0, 2.0),
                      st.floats(7e-4, 1.3e-3), st.floats(5e-5, 7e-5), st.just(CAP))


# --------------------------------------------------------------------------------------------
# Configurations.  A draw stays a plain tuple: the report writes it as `cfg=(11, 8, 30, ...)`,
# THEOREM_AUDIT_DRAW replays it as that literal, and its fingerprint (the on-disk key of the
# draw's simulations) names the type.  A property reads the fields through `Config(*cfg)` (and
# likewise S2Config, EpsConfig, L43Config, Case), which accepts a plain tuple or a config.
# --------------------------------------------------------------------------------------------
class Config(NamedTuple):
    """A stage run's configuration: stage_run's arguments in order (CANON, T32_EXAMPLES, a draw
    of STAGE_RUN)."""

    seed0: int
    n_seeds: int
    s: int
    sigma_p: float
    sigma_0: float
    eta: float
    cap: int = CAP

    @property
    def seeds(self) -> list[int]:
        return [self.seed0 + k for k in range(self.n_seeds)]

    @property
    def d(self) -> int:
        """The stage run's dimension 1 + n s + 120."""
        return 1 + N_SAMPLES * self.s + 120


class S2Config(NamedTuple):
    """stage2_run's (and the learnable-head runs') draw: S2_CANON, a draw of S2_RUN."""

    seed0: int
    s: int
    sigma_p: float
    sigma_0: float
    eta: float


class EpsConfig(NamedTuple):
    """A draw with the step in units of a noise inner product's init scale, eps = eta sqrt(s) /
    sigma_0 (TT_CANON, TT_RUN, signgd.lemma4_1's draws); eta(self) is the step it sets."""

    seed0: int
    s: int
    sigma_p: float
    sigma_0: float
    eps: float

    @property
    def eta(self) -> float:
        return float(self.eps * self.sigma_0 / np.sqrt(self.s))


class L43Config(NamedTuple):
    """l43_runs' draw (L43_CANON, L43_RUN): s is the ladder L43_S, so it is not drawn."""

    seed0: int
    sigma_p: float
    sigma_0: float
    eps: float


class Case(NamedTuple):
    """A small-model draw of the simulator consistency checks (signgd.step_magnitude,
    signgd.reduced_dynamics): seeds (Hypothesis draws a list), s, n, sigma_p, sigma_0, eta."""

    seeds: tuple
    s: int
    n: int
    sigma_p: float
    sigma_0: float
    eta: float

    @classmethod
    def of(cls, case) -> Case:
        """A hashable Case from a draw (seeds as a tuple): an lru_cache key."""
        return cls(tuple(case[0]), *case[1:])


# --------------------------------------------------------------------------------------------
# Draw decorators
# --------------------------------------------------------------------------------------------
def explicit_draws(draws, name="cfg"):
    """Decorator: an @example(name=draw) for each of `draws`, the first outermost (the order
    Hypothesis runs them in)."""
    def deco(fn):
        for cfg in draws:
            fn = example(**{name: cfg})(fn)
        return fn
    return deco


shared_draws = explicit_draws(T32_EXAMPLES)
shared_draws.__doc__ = ("The three explicit draws of T32_EXAMPLES (the sheet's CPU setting "
                        "first), shared with signgd.theorem3_2 and lemmas 4.3, 4.4, 4.6-4.8.")


def ci_draws(fn):
    """Under `ci` only the explicit (shared) draws run: each stage run costs ~20-40 s of CPU and
    is shared with signgd.theorem3_2 and lemmas 4.3, 4.4, 4.6-4.8; dev and thorough add drawn
    ones."""
    return examples(1, phases=[Phase.explicit])(fn) if profile() == "ci" else examples(1)(fn)


# --------------------------------------------------------------------------------------------
# Condition 3.1 per draw (issue 20: 'say per draw whether Condition 3.1 holds')
# --------------------------------------------------------------------------------------------
def condition31_c(s, sigma_p, sigma_0, m_k=M_K) -> float:
    """The sheet's [D] form of Condition 3.1's sigma_0 clause reads sigma_0 s sigma_p sqrt(m_k)
    << 1: this quantity c."""
    return float(sigma_0 * s * sigma_p * np.sqrt(m_k))


def condition31_note(cs, where: str = "") -> str:
    """What a draw says of Condition 3.1's [D] clause c << 1, c = sigma_0 s sigma_p sqrt(m_k)
    over the values `cs` the draw runs (its rungs), '<< 1' read with the glossary's 'small'
    (level and bracket); the clause's own text was lost (the sheet gives only this form)."""
    r = lookup("small")
    cs = [float(c) for c in np.atleast_1d(cs)]
    lo, hi = min(cs), max(cs)
    if hi <= r.stricter:
        v = "holds at every level"
    elif hi <= r.level:
        v = "holds"
    elif lo > r.looser:
        v = "fails"
    elif hi <= r.looser:
        v = "holds only at the looser level"
    else:
        v = "holds on part of the rungs"
    if hi != lo and v != "holds on part of the rungs":
        v = "at its largest, " + v
    rng = f"{lo:.3g}" if hi == lo else f"{lo:.3g}-{hi:.3g}"
    return (f"Condition 3.1 [D]: c = sigma_0 s sigma_p sqrt(m_k) = {rng}{where}: {v} ('<< 1' "
            f"read as 'small', {r.level:g}, bracket {r.stricter:g}-{r.looser:g})")


# --------------------------------------------------------------------------------------------
# The declared path of the stage lemmas (issue 35; fixed 2026-12-06 before any run on it).
# A "with high probability" statement under Condition 3.1 is decided along a sequence of
# problems on which every clause the CPU allows keeps holding as d grows: s (and so d) grows;
# m_k and m_v grow as a polylog of d; c = sigma_0 s sigma_p sqrt(m_k) is held at the sheet's CPU
# setting's value; sigma_p follows the noise clause sigma_p = Omega(d^{1/4} n^3) with constant
# kappa_p (the draw's); the step is held in the analysis's units (eps = eta sqrt(s) / sigma_0 at
# the CPU setting's 0.329).  Clauses not followed: s = Theta(d^{1/2} n^{-2}) [R] (d = 1 + n s +
# max(120, s + 3) grows like n s, not n^4 s^2: the training supports are disjoint by
# construction, which is what the clause secures, and on the exact reduced dynamics d enters only
# through m_k, m_v and sigma_p); n large enough for concentration [R] (n = 8 fixed); eta small
# [R] (eps fixed, not -> 0).  Its seeds, seed0 + PATH_SEED_OFFSET + k, were used by no earlier
# run.  Timing probes before it was declared (seeds 990000-990023: steps and seconds only) put
# every rung within ~20000 steps.
# Seeds per rung at --size ladder / paper: 128 until 2026-12-06, then 256 (after the ladder audit
# of 3c00e21 left signgd.lemma4_6 and lemma4_7 undecided: ~180-220 runs at the largest rung, and
# every rung's bound below the level, would decide at the rates seen).  The first 128 seeds of
# each rung are the same runs as before (same batches of PATH_CHUNK); seeds 128-255 never ran on
# the path.
# Probe of the cost (seeds 991000-991031, one batch per rung): ~40 s per 32 seeds over the four
# rungs.  No rung, rule, level or path parameter changed (see the claims' histories).
# The largest rung at --size ladder / paper: 256 more seeds (PATH_TOP_EXTRA, seeds 256-511 of
# the draw, never run on the path before) from 2026-12-07, after the ladder audit of 319352a left
# signgd.lemma4_6 undecided by its largest rung alone (8, 7, 6 of 256 runs failing at s = 240 on
# the three draws, upper bounds 0.106, 0.099, 0.093 against 0.1; the failures fell along the path
# on every draw, Cochran-Armitage z -5.7 to -6.4); the path runs ~1.6x faster since (int8 signs in
# the event detectors, bit for bit the same runs), which pays for them.  The seeds were looked at
# three times at the largest rung (128, 256, 512 runs): every path check at these sizes spends
# its rate over PATH_LOOKS looks (check_whp's `looks`: the rate per look is the rate / looks, so
# a verdict reached at any of the looks keeps the stated rate).  At ci the seeds never changed.
# --------------------------------------------------------------------------------------------
PATH_S = {"ci": (30, 60, 120), "ladder": (30, 60, 120, 240), "paper": (30, 60, 120, 240)}
PATH_SEEDS = {"ci": 24, "ladder": 256, "paper": 256}
PATH_TOP_EXTRA = {"ci": 0, "ladder": 256, "paper": 256}  # a second block at the largest rung
PATH_LOOKS = {"ci": 1, "ladder": 3, "paper": 3}  # looks at the path's seeds (see above)
PATH_CHUNK = 32  # seeds per batched reduced run on the path (~4 GB of history at s = 240)
PATH_SEED_OFFSET = 7000
PATH_C = 1e-3 * 30 * 1.0 * float(np.sqrt(M_K))  # c at the sheet's CPU setting: 0.0849
PATH_EPS = float(sim.CPU_EPS)  # eta sqrt(s) / sigma_0 at the CPU setting = 0.329
PATH_CAP = 60000
PATH_DRAWS = ((11, 1.0), (12345, 1.0), (777, 2.0))  # seed0, kappa_p (sigma_p = kappa_p d^1/4 n^3)
PATH_RUN = st.tuples(SEED, st.floats(1.0, 2.0))
PATH_BASE_D = 1 + N_SAMPLES * 30 + 120  # 361: the CPU setting's d, where m_k = 8, m_v = 16


def path_d(s: int) -> int:
    """The path's dimension at noise sparsity s: 1 + n s + max(120, s + 3)."""
    return 1 + N_SAMPLES * int(s) + max(120, int(s) + 3)


def _polylog(s: int) -> float:
    return float((np.log(path_d(s)) / np.log(PATH_BASE_D)) ** 2)


def path_mk(s: int) -> int:
    """m_k = Omega(polylog d) on the path: round(8 (log d / log 361)^2) (8 at s = 30)."""
    return int(round(M_K * _polylog(s)))


def path_mv(s: int) -> int:
    """m_v = Omega(polylog d) on the path: round(16 (log d / log 361)^2) (16 at s = 30)."""
    return int(round(M_V * _polylog(s)))


def path_sigma_p(s: int, kappa_p: float) -> float:
    """sigma_p = kappa_p d^{1/4} n^3 (the noise clause, Omega(d^{1/4} n^3), with constant
    kappa_p)."""
    return float(kappa_p) * path_d(s) ** 0.25 * N_SAMPLES ** 3


def path_sigma_0(s: int, kappa_p: float) -> float:
    """sigma_0 holding c = sigma_0 s sigma_p sqrt(m_k) at PATH_C."""
    return PATH_C / (int(s) * path_sigma_p(s, kappa_p) * np.sqrt(path_mk(s)))


def path_rung(s: int, kappa_p: float) -> dict:
    """Every parameter of the path's rung s (draw constant kappa_p)."""
    return dict(s=int(s), d=path_d(s), m_k=path_mk(s), m_v=path_mv(s),
                sigma_p=path_sigma_p(s, kappa_p), sigma_0=float(path_sigma_0(s, kappa_p)),
                eps=float(PATH_EPS), c=PATH_C)


PATH_CLAUSES = ("the declared path (properties/signgd/setting.py, issue 35): s grows, d = 1 + n s "
                "+ max(120, s + 3); m_k = round(8 (log d / log 361)^2), m_v = round(16 (log d / "
                "log 361)^2) (Condition 3.1's width clause m_k, m_v = Omega(polylog d): followed); "
                "sigma_p = kappa_p d^{1/4} n^3 (the noise clause: followed, kappa_p the draw's); "
                "c = sigma_0 s sigma_p sqrt(m_k) held at 0.0849 (the sigma_0 clause's [D] form "
                "c << 1: followed at the glossary's 'small'); NOT followed: the sparsity clause "
                "s = Theta(d^{1/2} n^{-2}) [R] (d grows like n s; the disjoint training supports it "
                "secures hold by construction), n large enough [R] (n = 8 fixed), eta small [R] "
                "(eps = eta sqrt(s) / sigma_0 held at 0.329)")


# The clauses of Condition 3.1 the declared path does not follow (PATH_CLAUSES' "NOT followed"):
# on it a failure that does not vanish is a finding about that regime, not a refutation
# (procedures.check_whp's `unfollowed`; issue 35's ruling on paths, applied to every path check
# 2026-12-06 after the path's first audit, see history.json).
PATH_UNFOLLOWED = ("Condition 3.1's clauses 'eta small' [R] (eps = eta sqrt(s) / sigma_0 held at "
                   "0.329), 'n large enough' [R] (n = 8 fixed) and s = Theta(d^{1/2} n^{-2}) [R]")


def path_draws(fn):
    """The draws of the declared path (PATH_DRAWS: seed0, kappa_p), explicit only: each is its own
    batched run over PATH_SEEDS seeds per rung (signgd.lemma4_3, 4.4, 4.6, 4.7, stage_order)."""
    return examples(1, phases=[Phase.explicit])(
        explicit_draws(PATH_DRAWS)(given(cfg=PATH_RUN)(fn)))


L43_S = (20, 40, 80, 160)  # signgd.lemma4_3.item3/item4's ladder (runs.l43_runs); s = 320 left out


def _grid(x):
    return np.atleast_1d(np.asarray(x, dtype=float))


def signgd_draw_note(*, s=30, sigma_p=1.0, sigma_0=1e-3, **kw) -> str:
    """The Condition 3.1 note of a SignGD draw (a Claim's draw_note), by the draw's layout: cfg
    of a stage run (Config, 7 fields), of the 5-field sweeps (seed0, s, sigma_p, sigma_0, eta
    or eps), of the declared path (seed0, kappa_p: c held at PATH_C, sigma_p by the noise clause),
    of the Lemma 4.3 s ladder (seed0, sigma_p, sigma_0, eps: s in L43_S); a bare seed runs the
    setting given by the keywords (default: the sheet's CPU setting; a tuple is a grid the draw
    runs)."""
    cfg = kw.get("cfg")
    if cfg is not None:
        cfg = tuple(cfg)
        if len(cfg) == 7:
            c = Config(*cfg)
            return condition31_note(condition31_c(c.s, c.sigma_p, c.sigma_0))
        if len(cfg) == 5:
            return condition31_note(condition31_c(cfg[1], cfg[2], cfg[3]))
        if len(cfg) == 2:
            sp = [path_sigma_p(s_, cfg[1]) for s_ in PATH_S["ladder"]]
            return (condition31_note(PATH_C, " on every rung of the declared path (held)")
                    + f"; noise clause sigma_p = {cfg[1]:g} d^(1/4) n^3 = {min(sp):.4g}-"
                      f"{max(sp):.4g} on the rungs: followed")
        if len(cfg) == 4:
            return condition31_note([condition31_c(s_, cfg[1], cfg[2]) for s_ in L43_S],
                                    f" along s in {L43_S}")
        return f"Condition 3.1 [D]: not evaluated (no layout for a draw of {len(cfg)} fields)"
    cs = [condition31_c(a, b, c) for a in _grid(s) for b in _grid(sigma_p) for c in _grid(sigma_0)]
    return condition31_note(cs, "" if len(cs) == 1 else " over the draw's grid")
