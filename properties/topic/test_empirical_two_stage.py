"""topic.empirical.two_stage: the two stages of Section 5.1 (Figure 4), read as existential over
the settings of runs.TWO_STAGE_GRID and asymptotic in the init scale s (see `reading`).

Runs: runs.two_stage_run per setting (3 init scales x 16 replicates, one program) and
runs.two_stage_fraction; the setting with the largest SE-weighted trend t (trend_t) is decided by
check_trend.  The rival "other_direction" is decided on that same selected setting.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from properties import Claim, audits, check_trend, examples, register, rival
from properties.check import ClaimMismatch, Inconclusive
from properties.topic.common import EMPIRICAL_AUDIT_SEEDS
from properties.topic.figures import plot_two_stage
from properties.topic.runs import TWO_STAGE, two_stage_fraction, two_stage_run, two_stage_settings

CID = "topic.empirical.two_stage"
AUDIT_SEEDS = EMPIRICAL_AUDIT_SEEDS
DIRECTION = "increasing"  # f(s) increasing in s: f -> 0 as the init scale s -> 0
TREND_FALSE_FAIL = 1e-5  # for the selected setting, divided by the number of settings run
MOVES = 1.01  # W^K, W^Q must grow by at least 1% over the run to have a second stage


def stages(seed, settings):
    """Per setting and init scale: mean and SE over the replicates of f, and the other numbers."""
    R = TWO_STAGE["replicates"]
    out = []
    for opt, lr, N_range in settings:
        fr = two_stage_fraction(two_stage_run(seed, opt=opt, lr=lr, N_range=N_range))
        per = {k: np.asarray(fr[k], dtype=np.float64).reshape(-1, R) for k in fr}
        out.append({"setting": (opt, lr, tuple(N_range)), "scales": np.array(TWO_STAGE["scales"]),
                    "f": per["fraction"].mean(1), "rows": per["fraction"].T,
                    "se": per["fraction"].std(1, ddof=1) / np.sqrt(R), "tV": per["tV"].mean(1),
                    "kq_at_tV": per["kq_at_tV"].mean(1), "growth": per["growth"].mean(1),
                    "moves": bool(np.all(per["growth"] >= MOVES))})
    return out


def trend_t(r) -> float:
    """Weighted least-squares slope of f over log s divided by its standard error (the
    selection statistic: the setting with the largest is decided)."""
    lx = np.log(r["scales"])
    w = 1.0 / np.maximum(r["se"], 1e-300) ** 2
    xm = np.sum(w * lx) / np.sum(w)
    sxx = float(np.sum(w * (lx - xm) ** 2))
    return float(np.sum(w * (lx - xm) * r["f"]) / sxx * np.sqrt(sxx))


def direction():
    return DIRECTION


def other_direction():
    """Rival: the stages merge as the init shrinks (f decreasing in s)."""
    return "decreasing"


def _describe(r):
    opt, lr, N = r["setting"]
    return (f"{opt} lr {lr:g}, N in {N[0]}..{N[1]}: f by init scale "
            f"{dict(zip(r['scales'].tolist(), np.round(r['f'], 3).tolist()))} (SE "
            f"{np.round(r['se'], 3).tolist()}; t_V {r['tV'].tolist()}; max(||W^K||, ||W^Q||)/"
            f"||W^V|| at t_V {np.round(r['kq_at_tV'], 2).tolist()}; growth "
            f"{np.round(r['growth'], 2).tolist()})")


register(Claim(
    id=CID, where="Section 5.1 (Figure 4)",
    statement="With certain initialisation and learning-rate settings, from near-zero "
              "initialisation: in Stage 1 W^K, W^Q stay close to 0 while ||W^V||_F increases "
              "significantly; in Stage 2 ||W^V||_F plateaus and only after that do W^K and W^Q "
              "move significantly.",
    assumptions="LDA data (Dirichlet(0.1)), p_m = 0.15, p_c = p_r = 0.1, biases (Section 6); "
                "one-hot W^E, near-zero positive init |N(0, s^2)| of W^K, W^Q, W^V, squared "
                "loss, batch 8, 300 steps, joint training; the settings (optimiser, lr, N) of "
                "runs.TWO_STAGE_GRID: Adam 0.01 N 20..30 (CI), Adam 0.01 N 100..150, Adam 0.001 "
                "N 20..30, SGD 0.3 N 20..30; CI size T = v = 5.",
    prediction="in at least one setting of the declared grid, the fraction f of W^K's / W^Q's "
               "norm change done when ||W^V||_F plateaus tends to 0 as the init scale s -> 0: "
               "f increasing in s",
    simulation="properties.topic.runs.two_stage_run (sim.topic.train(Switches(onehot, "
               "biases))), per setting 3 init scales x 16 replicates in one program, norms "
               "every 5 steps",
    metric="f = max over W^K, W^Q of (||W||(t_V) - ||W||(0)) / (||W||(end) - ||W||(0)), t_V = "
           "first logged step with ||W^V||_F >= 0.9 max; trend of f over log s, seed-clustered "
           "over the replicate rows, in the setting with the largest (SE-weighted) trend "
           "t-statistic",
    tolerance="check_trend: direction, seed-clustered over the 16 replicate rows (one slope "
              "per row of independent elements, one per size), Student t with 15 dof, two-sided "
              "false-fail 1e-5 / K (K settings run: Bonferroni for the selection of the best "
              "one)",
    reading="Existential in the hyperparameters (Section 5.1: 'with certain initialization and "
            "learning rate settings'; 'this two-stage phenomenon is sensitive to "
            "hyperparameters like initialization and learning rate ... not usually visibly "
            "two-stage using the common default hyperparameters') and asymptotic in the init "
            "scale ('from near-zero initialization'): the stages separate as s -> 0 (f shrinks "
            "with s) in at least one setting of a grid declared beforehand over what the paper "
            "(and the issue) says the stages depend on: optimiser (Adam, SGD), learning rate "
            "(Adam 0.01, 0.001; SGD 0.3) and the documents' length (N in 20..30, 100..150), "
            "each on the init-scale ladder.  Holds if the best setting's trend is significantly "
            "increasing (its selection paid by Bonferroni over the settings run); no finite "
            "grid refutes an existential statement, so this reading gives holds or "
            "not-audited, never refuted: a grid without such a setting (a flat trend, or one "
            "significantly the other way) is not-audited with every setting's numbers and, for "
            "a flat trend, the replicates per size that would decide it.  16 replicates per "
            "size (seed-clustered t_15 over the replicate rows).  A setting whose W^K, W^Q do "
            "not move (growth < 1%) has no Stage 2 and is no candidate.  CI runs the first "
            "setting only; --size ladder runs the grid.  No null: with training off (or W^K, "
            "W^Q frozen) f is 0/0.",
    asymptotic="init scale s",
    paper_setting="the paper gives no hyperparameters for Figure 4 (nor T, v, N for it); the "
                  "grid stands in for 'certain initialization and learning rate settings'",
    alternatives=(
        rival("other_direction", other_direction, "f decreasing in s: the stages merge as "
              "the init shrinks", replaces="direction"),
    ),
    plot=plot_two_stage,
))


@audits(CID)
@examples(3)
@example(seed=0)
@given(seed=st.integers(AUDIT_SEEDS.start, AUDIT_SEEDS.stop - 1))
def test_empirical_two_stage(world, seed):
    settings = two_stage_settings()
    rs = world.simulation(stages, "runs", pure=True)(seed, settings)
    want = world.prediction(direction, "direction")()
    what = " | ".join(_describe(r) for r in rs)
    cands = [r for r in rs if r["moves"]]
    if not cands:
        raise Inconclusive(f"no setting has a second stage (W^K, W^Q grow < 1%): {what}")
    best = max(cands, key=trend_t)
    try:
        # seed-clustered over the replicate rows (row r: replicate r at each init scale)
        check_trend(CID, best["scales"], best["rows"], direction=want, log_values=False,
                    false_fail=TREND_FALSE_FAIL / len(settings),
                    what=f"best of {len(settings)} setting(s): {_describe(best)}; all: {what}")
    except ClaimMismatch as e:
        if want != DIRECTION:
            raise  # a rival's direction refuted by the data: the rival is rejected
        raise Inconclusive(f"{e} -- existential in the hyperparameters: no setting of the "
                           "declared grid showed the stages separating; not a refutation (this "
                           "reading gives holds or not-audited, never refuted)") from e
    except Inconclusive as e:
        if want != DIRECTION:
            raise
        raise Inconclusive(f"{e} -- existential in the hyperparameters: a trend toward the "
                           "other direction in this setting would be not-audited too, not a "
                           "refutation (this reading gives holds or not-audited, never "
                           "refuted)") from e
