"""Unit tests of the SignGD harness helpers in properties/signgd (reduced.run_reduced_until and its
stop rules, common.paired_trend, the declared path's parameters) and of the package's structure
(one direction of imports between its shared modules)."""

import numpy as np
import pytest

from properties import check
from properties.signgd import reduced as R
from properties.signgd.common import paired_trend
from sim import signgd as sim


def _state():
    return R.reduced_init([5, 6], 12, 1.0, 2e-3, 0.2, m_k=3, d=1 + 8 * 12 + 20)


def _pairs_aligned(hist):
    ok = (np.sign(hist["a"]) == np.sign(hist["b"])).all((-1, -2, -3))
    return int(np.argmax(ok)) if ok.any() else None


def test_run_reduced_until_is_the_one_shot_run_cut_at_its_stop():
    st_ = _state()
    one = sim.reduced_dynamics(*st_[:7], st_[7], 400)
    t_star = _pairs_aligned({k_: one[k_] for k_ in R.REDUCED_KEYS})
    assert t_star is not None and 10 < t_star < 300
    end = int(np.ceil(1.25 * t_star)) + 1
    for chunk in (3, 50, 1000):  # the buffer grows several times at chunk 3
        h = R.run_reduced_until(st_, _pairs_aligned, 0.25, 10000, chunk=chunk)
        assert set(h) == set(R.REDUCED_KEYS)
        for k_ in R.REDUCED_KEYS:
            np.testing.assert_array_equal(h[k_], one[k_][:end])


def test_run_reduced_until_grows_past_its_first_buffer(monkeypatch):
    """A first buffer bounded by HISTORY_BYTES (a wide run) doubles as it fills: same history."""
    st_ = _state()
    ref = R.run_reduced_until(st_, _pairs_aligned, 0.25, 10000, chunk=7)
    monkeypatch.setattr(R, "HISTORY_BYTES", 1)  # the first buffer: 4 chunks, then doubling
    h = R.run_reduced_until(st_, _pairs_aligned, 0.25, 10000, chunk=7)
    for k_ in R.REDUCED_KEYS:
        np.testing.assert_array_equal(h[k_], ref[k_])


def test_run_reduced_until_raises_at_its_cap():
    with pytest.raises(RuntimeError, match="within 20 steps"):
        R.run_reduced_until(_state(), lambda hist: None, 0.0, 20, chunk=10)


def test_paired_trend_is_seed_clustered():
    """One slope per seed, their mean and standard error, Student t on seeds - 1 dof."""
    g = np.random.default_rng(0)
    sizes = (4.0, 8.0, 16.0, 32.0)
    slopes = 0.5 + 0.2 * g.standard_normal(6)  # seeds that differ in slope
    R_ = np.exp(np.outer(np.log(sizes), slopes) + 0.05 * g.standard_normal((4, 6)))
    with check.recording(check.Sink()):
        tr = paired_trend("x.y", sizes, R_, direction="increasing", false_fail=1e-3)
    per = [np.polyfit(np.log(sizes), np.log(R_[:, j]), 1)[0] for j in range(6)]
    assert tr.slope == pytest.approx(np.mean(per), rel=1e-12)
    assert tr.stderr == pytest.approx(np.std(per, ddof=1) / np.sqrt(6), rel=1e-12)
    from scipy import stats
    assert tr.crit == pytest.approx(stats.t.isf(5e-4, 5), rel=1e-12)
    with pytest.raises(ValueError, match="rungs x seeds"):
        paired_trend("x.y", sizes, R_[:, :1], direction="increasing")


def test_all_noise_aligned_incremental_is_the_whole_history_rule():
    st_ = _state()
    one = sim.reduced_dynamics(*st_[:7], st_[7], 3000)
    hist = {k_: one[k_] for k_ in R.REDUCED_KEYS}
    want = R.first_all_noise_aligned(hist)
    stop = R.AllNoiseAligned()
    got = None
    for end in range(100, 3001, 100):  # as run_reduced_until calls it: the history so far
        got = stop({k_: v[:end] for k_, v in hist.items()})
        if got is not None:
            break
    assert got == want


def test_declared_path_follows_its_clauses():
    """The path's rungs (setting.PATH_S): m_k, m_v a polylog of d (8, 16 at d = 361), sigma_p the
    noise clause d^(1/4) n^3 x kappa_p, c = sigma_0 s sigma_p sqrt(m_k) held."""
    from properties.signgd import setting as S
    assert (S.path_d(30), S.path_mk(30), S.path_mv(30)) == (361, 8, 16)
    prev = None
    for s in S.PATH_S["ladder"]:
        r = S.path_rung(s, 2.0)
        assert r["sigma_p"] == pytest.approx(2.0 * r["d"] ** 0.25 * 8 ** 3)
        assert S.condition31_c(s, r["sigma_p"], r["sigma_0"], r["m_k"]) == pytest.approx(S.PATH_C)
        assert r["m_k"] == round(8 * (np.log(r["d"]) / np.log(361)) ** 2)
        if prev is not None:
            assert r["d"] > prev["d"] and r["m_k"] >= prev["m_k"] and r["m_v"] >= prev["m_v"]
        prev = r
    assert set(S.PATH_S["ci"]) <= set(S.PATH_S["ladder"])


def test_path_rows_of_a_rung_are_pooled_before_the_decision():
    """A rung run in two blocks of seeds (setting.PATH_TOP_EXTRA: the largest rung's second
    block) is one rung for check_path_whp: its rows pooled (pool_rungs), named once in the
    summary with both blocks' seeds."""
    from properties.signgd import common as C
    sizes = (30, 60, 120, 240, 240)
    fail = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1]], dtype=bool)
    u, f = C.pool_rungs(sizes, fail)
    assert u == [30, 60, 120, 240] and [x.tolist() for x in f][-1] == [0, 1, 0, 0, 0, 1]
    rung = dict(s=240, d=2164, m_k=14, m_v=27, sigma_p=3492.0, sigma_0=2.7e-8)
    P = {"sizes": sizes, "rungs": tuple({**rung, "s": s} for s in sizes),
         "steps": (1, 2, 3, 4, 5), "seeds": ((0, 3),) * 4 + ((3, 6),)}
    text = C.rung_summary(P)
    assert text.count("s = 240") == 1 and "seeds 0-2: 4 steps; seeds 3-5: 5 steps" in text
    assert C.per_rung_counts(u, f, None).endswith("s = 240: 2/6 runs")
    from properties.signgd import setting as S
    assert all(S.PATH_TOP_EXTRA[k] in (0, S.PATH_SEEDS[k]) for k in S.PATH_SEEDS)
    assert S.PATH_LOOKS["ci"] == 1 and S.PATH_TOP_EXTRA["ci"] == 0


def test_path_whp_reads_a_glossary_word_per_run():
    """check_path_whp(reading=...): each run's value of the word's statistic, pooled per rung as
    floats (a loss of 1e-8 is below 'not yet converged', not True), the runs beyond the word's
    level counted beside; on the path a failure that does not vanish is Inconclusive (its
    unfollowed clauses), one above the level everywhere holds."""
    from properties.check import Inconclusive
    from properties.signgd import common as C
    sizes = (30, 60, 120, 240, 240)
    rung = dict(s=240, d=2164, m_k=14, m_v=27, sigma_p=3492.0, sigma_0=2.7e-8)
    n = 128
    P = {"sizes": sizes, "rungs": tuple({**rung, "s": s} for s in sizes),
         "steps": (1, 2, 3, 4, 5), "seeds": ((0, n),) * 4 + ((n, 2 * n),)}
    with pytest.raises(Inconclusive, match=r"s = 240: 256/256 runs.*does not follow"):
        C.check_path_whp("x.lemma", P, np.full((5, n), 1e-8), reading="not yet converged",
                         false_fail=1e-3, name="word", what="loss")
    out = C.check_path_whp("x.lemma", P, np.full((5, n), 0.9), reading="not yet converged",
                           false_fail=1e-3, name="word", what="loss")
    assert out["state"] == "holds"
    with pytest.raises(ValueError, match="finite"):
        C.check_path_whp("x.lemma", P, np.full((5, n), np.nan), reading="not yet converged",
                         false_fail=1e-3, name="word", what="loss")

SHARED = ("setting", "common", "runs", "comparisons", "reduced", "path", "variants", "figures")
ORDER = ("setting", "common", "reduced", "runs", "comparisons", "path", "variants", "figures")


def test_shared_modules_import_one_way():
    """properties/signgd's shared modules import each other in one direction (ORDER: a module
    reads only those before it) and only at module level (no function-level import of the
    paper package: the cycle common <-> runs it replaced)."""
    import ast
    import pathlib

    pkg = pathlib.Path(__file__).resolve().parents[1] / "properties" / "signgd"
    bad = []
    for name in SHARED:
        tree = ast.parse((pkg / f"{name}.py").read_text())
        top = set(id(n) for n in tree.body)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("properties.signgd")):
                continue
            dep = node.module.split(".")[2] if node.module.count(".") >= 2 else None
            if id(node) not in top:
                bad.append(f"{name}: function-level import of {node.module}")
            if dep is None or dep not in ORDER or ORDER.index(dep) >= ORDER.index(name):
                bad.append(f"{name} imports {node.module}")
    assert not bad, bad


def test_check_theta_calls_an_observation_within_both_scales_not_told_apart():
    """common.check_theta in a rival's world: where the observation is within the word's factor
    of both the rival's scale and the claim's, the draw cannot tell them apart (Inconclusive);
    where it is within the claim's only, the rival fails as before."""
    from properties import Inconclusive
    from properties.check import ClaimMismatch, Sink, recording
    from properties.signgd.common import check_theta

    with recording(Sink()):
        with pytest.raises(Inconclusive, match="both"):
            check_theta("x.y", 2.0, "x = Theta(rate)", name="t", what="r", rival_ratio=1 / 3.5,
                        own_ratio=1 / 1.75)
        with pytest.raises(ClaimMismatch):
            check_theta("x.y", 3.5, "x = Theta(rate)", name="t", what="r", rival_ratio=1 / 3.5,
                        own_ratio=1.0)
