"""Unit tests of sim.signgd's researcher API (issue 11): events, per-seed stopping, checkpoints,
test error at chosen steps, per-seed configurations, ValueErrors instead of KeyErrors, and the
worked example.  Every default run must stay bit for bit the run before the API was added."""

import importlib.util
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

from sim import signgd as sim

ROOT = pathlib.Path(__file__).resolve().parents[1]
BASELINE = "8b63c3a"  # the last commit before the API: its train() is the reference output


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """These programs are tiny: several threads only slow them down on a loaded machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _small(seeds=(3, 4)):
    prob = sim.make_problem(list(seeds), n=4, s=5, d=60, sigma_p=1.3, n_test=6, disjoint=True,
                            device="cpu")
    p = sim.init_params(list(seeds), d=60, m_k=3, m_v=5, sigma_0=0.3, device="cpu")
    return prob, p


def _stage_setup(seeds=(1, 2, 3), sigma_0=1e-3, m_v=8):
    """A problem whose seeds all reach T_4^- and T_4 within ~340 steps (eta = 1e-3)."""
    n, s = 4, 20
    d = 1 + n * s + 20
    prob = sim.make_problem(list(seeds), n=n, s=s, d=d, sigma_p=1.0, n_test=20, disjoint=True,
                            device="cpu")
    p = sim.init_params(list(seeds), d=d, m_k=2, m_v=m_v, sigma_0=sigma_0, device="cpu")
    return prob, p


def _aligned(q):
    sa = np.sign(q["alpha"])[..., None, None]
    return ((np.sign(q["a"]) == sa) & (np.sign(q["b"]) == sa)).all((1, 2, 3))


@pytest.fixture(scope="module")
def stage_run():
    prob, p = _stage_setup()
    tr = sim.train(prob, p, eta=1e-3, steps=400, log=sim.STAGE_LOG)
    return prob, p, tr


def _same_trace(a, b):
    assert np.array_equal(a.t, b.t) and np.array_equal(a.t_test, b.t_test)
    assert a.q.keys() == b.q.keys() and all(np.array_equal(a.q[k], b.q[k]) for k in a.q)
    assert np.array_equal(a.test_loss, b.test_loss) and np.array_equal(a.test_err, b.test_err)
    assert all(torch.equal(x, y) for x, y in zip(a.final.tensors(), b.final.tensors()))


def _baseline_module():
    try:
        src = subprocess.run(["git", "show", f"{BASELINE}:sim/signgd.py"], cwd=ROOT, check=True,
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip(f"git history with {BASELINE} not available")
    spec = importlib.util.spec_from_loader("_signgd_baseline", loader=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    try:
        exec(compile(src, f"{BASELINE}:sim/signgd.py", "exec"), mod.__dict__)
    finally:
        sys.modules.pop(spec.name, None)
    return mod


@pytest.mark.parametrize("kw", [
    dict(eta=1e-3, steps=40),
    dict(eta=1e-2, steps=20, optimizer="adam", learnable_head=True, test_every=7),
    dict(eta=1e-3, steps=60, stop=lambda q: q["train_loss"].max() < 0.69, tail=0.3, sign_zero=1),
])
def test_default_run_bit_for_bit_as_before_the_api(kw):
    old = _baseline_module()
    prob, p = _small()
    prob_o = old.make_problem([3, 4], n=4, s=5, d=60, sigma_p=1.3, n_test=6, disjoint=True,
                              device="cpu")
    p_o = old.init_params([3, 4], d=60, m_k=3, m_v=5, sigma_0=0.3, device="cpu")
    a, b = old.train(prob_o, p_o, **kw), sim.train(prob, p, **kw)
    _same_trace(a, b)
    assert a.settings == b.settings
    if "stop" not in kw:
        sa, sb = old.stage_times(a), sim.stage_times(b)
        assert all(np.array_equal(sa[k], sb[k]) for k in sa)


def test_inert_options_change_nothing():
    prob, p = _small()
    base = sim.train(prob, p, eta=1e-3, steps=30)
    on = sim.train(prob, p, eta=1e-3, steps=30, stop_seed=lambda q: np.zeros(2, dtype=bool),
                   checkpoints=[5, 30], test_at=[30])
    assert np.array_equal(base.q["a"], on.q["a"]) and np.array_equal(base.t, on.t)
    assert all(torch.equal(x, y) for x, y in zip(base.final.tensors(), on.final.tensors()))
    assert np.all(np.isinf(on.settings["t_stop_seed"]))


def test_stage_times_are_extremes_of_events(stage_run):
    _, _, tr = stage_run
    ev = sim.events(tr)
    T = sim.stage_times(tr)
    for k in T:
        assert np.array_equal(ev["stage"][k], T[k])
    assert np.isfinite(T["T4"]).all() and np.isfinite(T["T4m"]).all()  # the run covers Stage IV
    mx = lambda x: x.max((-1, -2))  # noqa: E731  over a seed's pairs
    assert np.array_equal(T["T2"], mx(ev["qk_align_cut"]))
    assert np.array_equal(T["T3"], ev["vote"].max(-1))
    assert np.array_equal(T["T4m"], ev["t4m_turn"].min((-1, -2)))
    assert np.array_equal(T["T4p"], mx(ev["align_b"])) and np.array_equal(T["T4p"], ev["Tk"])
    assert np.array_equal(T["T4"], np.maximum(mx(ev["align_a"]), mx(ev["align_b"])))
    assert np.array_equal(ev["Tq"], mx(ev["align_a"]))
    assert np.array_equal(sim.qk_alignment_time(tr), mx(ev["qk_align"]))
    assert np.all(T["T1"] >= ev["T1_sample"].max(-1))
    assert np.array_equal(T["T2"], ev["T2_sample"].max(-1))
    assert np.array_equal(T["T4"], ev["T4_sample"].max(-1))
    for j, (s, i) in enumerate(ev["T4m_pair"]):
        assert ev["t4m_turn"][j, s, i] == T["T4m"][j]


def test_stage4_entries_match_the_audit(stage_run):
    from properties.signgd.common import stage4_pairs
    _, _, tr = stage_run
    ev = sim.events(tr)
    ref = stage4_pairs(sim.squeeze_L2(tr.q), tr.t, ev["stage"]["T4m"])
    for k, v in ref.items():
        assert np.array_equal(ev[k], v), k


def test_events_without_t4m():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-3, steps=3, log=sim.STAGE_LOG)
    ev = sim.events(tr)
    assert np.all(ev["T4m_pair"] == -1) and np.all(np.isinf(ev["t4m_turn"]))
    assert not ev["wrong_a"].any() and ev["qk_align"].shape == (2, 3, 4)


def test_events_of_a_zero_step_run_is_a_value_error():
    """A run of steps = 0 logs one step: events (whose Stage IV entries read steps k -> k + 1)
    says so instead of numpy's 'argmax of an empty sequence'; one step is enough."""
    from properties.signgd.common import stage4_pairs

    prob, p = _small()
    tr = sim.train(prob, p, eta=0.01, steps=0, log=sim.STAGE_LOG)
    assert len(tr.t) == 1
    sim.stage_times(tr)  # defined on one logged step (every event inf)
    with pytest.raises(ValueError, match=r"events needs tr with at least 2 logged steps.*got 1"):
        sim.events(tr)
    q = sim.squeeze_L2(tr.q)
    with pytest.raises(ValueError, match=r"stage4_pairs needs t with at least 2 logged steps"):
        stage4_pairs(q, tr.t, sim.stage_times(tr)["T4m"])
    ev = sim.events(sim.train(prob, p, eta=0.01, steps=1, log=sim.STAGE_LOG))
    assert ev["turn_a"].shape == (2, 3, 4)


def test_stop_seed_freezes_each_seed_and_the_others_go_on(stage_run):
    prob, p, full = stage_run
    tr = sim.train(prob, p, eta=1e-3, steps=400, log=sim.STAGE_LOG, stop_seed=_aligned)
    sa = np.sign(full["alpha"])[..., None, None]
    ok = ((np.sign(full["a"]) == sa) & (np.sign(full["b"]) == sa)).all((2, 3, 4))  # (T, S)
    first = np.array([full.t[np.argmax(c)] for c in ok.T])
    assert np.array_equal(tr.settings["t_stop_seed"], first)
    assert np.array_equal(tr.settings["t_frozen"], first)
    assert tr.t[-1] == first.max()
    for j, tj in enumerate(first.astype(int)):
        # up to its stop, seed j is the full run; from it, its parameters never move
        assert np.array_equal(tr["b"][: tj + 1, j], full["b"][: tj + 1, j])
        assert np.all(tr["b"][tj:, j] == tr["b"][tj, j])
    last = int(np.argmax(first))
    assert np.array_equal(tr["a"][:, last], full["a"][: len(tr.t), last])
    with pytest.raises(ValueError, match="stop_seed"):
        sim.train(prob, p, eta=1e-3, steps=2, stop_seed=lambda q: True)
    with pytest.raises(ValueError, match="stop_seed"):
        sim.train(prob, p, eta=1e-3, steps=2, stop_seed="aligned")


def test_stop_seed_tail():
    prob, p = _small()
    calls = []

    def stop(q):
        calls.append(1)
        return np.array([len(calls) >= 3, False])  # seed 0 at step 2

    tr = sim.train(prob, p, eta=1e-3, steps=10, stop_seed=stop, tail=1.0)
    assert tr.settings["t_stop_seed"][0] == 2 and tr.settings["t_frozen"][0] == 4
    assert np.isinf(tr.settings["t_stop_seed"][1]) and tr.t[-1] == 10
    assert np.all(tr["a"][4:, 0] == tr["a"][4, 0]) and not np.all(tr["a"][4:, 1] == tr["a"][4, 1])
    assert not np.array_equal(tr["a"][3, 0], tr["a"][4, 0])


def test_checkpoints_and_test_at():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-2, steps=12, log=("a", "train_loss"), test_every=5,
                   checkpoints=[7, 0, 7], test_at=[3, 11])
    assert sorted(tr.checkpoints) == [0, 7]
    assert tr.t_test.tolist() == [0, 3, 5, 7, 10, 11, 12]
    ck = tr.checkpoints[7]
    short = sim.train(prob, p, eta=1e-2, steps=7)
    assert all(torch.equal(x, y) for x, y in zip(ck.params.tensors(), short.final.tensors()))
    assert set(ck.q) == set(sim.TRACKED)
    assert np.array_equal(ck.q["a"], tr["a"][7]) and np.array_equal(ck.q["b"], short["b"][-1])
    assert np.array_equal(ck.test_err, short.test_err[-1])
    k3 = tr.t_test.tolist().index(3)
    assert np.array_equal(tr.test_loss[k3], sim.train(prob, p, eta=1e-2, steps=3).test_loss[-1])
    stopped = sim.train(prob, p, eta=1e-2, steps=12, stop=lambda q: True, checkpoints=[0, 5])
    assert sorted(stopped.checkpoints) == [0]  # the run ended at step 0


@pytest.mark.parametrize("kw,name", [
    (dict(checkpoints=[-1]), "checkpoints"), (dict(checkpoints=[13]), "checkpoints"),
    (dict(checkpoints=[2.5]), "checkpoints"), (dict(checkpoints=5), "checkpoints"),
    (dict(checkpoints="5"), "checkpoints"), (dict(checkpoints=[True]), "checkpoints"),
    (dict(test_at=[100]), "test_at"), (dict(test_at=[None]), "test_at"),
])
def test_bad_new_train_input(kw, name):
    prob, p = _small()
    with pytest.raises(ValueError, match=name):
        sim.train(prob, p, eta=1e-2, steps=12, **kw)


def test_missing_quantity_is_a_value_error_naming_it():
    prob, p = _small()
    tr = sim.train(prob, p, eta=1e-3, steps=3, log=("alpha", "beta", "a", "b"))
    for fn in (sim.stage_times, sim.events):
        with pytest.raises(ValueError, match=r"\['V', 'V_mu'\].*log="):
            fn(tr)
    with pytest.raises(ValueError, match=r"\['a', 'b'\].*log="):
        sim.qk_alignment_time(sim.train(prob, p, eta=1e-3, steps=2, log=("alpha",)))
    with pytest.raises(ValueError, match="log_every"):
        sim.events(sim.train(prob, p, eta=1e-3, steps=4, log_every=2))
    with pytest.raises(ValueError, match="Trace"):
        sim.events({"a": 1})
    duck = types.SimpleNamespace(t=tr.t, q=dict(tr.q))  # the audit passes such objects
    assert np.array_equal(sim.qk_alignment_time(duck), sim.qk_alignment_time(tr))


def test_per_seed_sigma_0_and_m_v():
    seeds = [5, 6, 7]
    prob, _ = _stage_setup(seeds)
    batch = sim.init_params(seeds, d=101, m_k=2, m_v=[4, 8, 16], sigma_0=[1e-3, 2e-3, 5e-4],
                            device="cpu")
    assert batch.WV.shape == (3, 2, 16, 101)
    tb = sim.train(prob, batch, eta=1e-3, steps=30, log=sim.STAGE_LOG)
    for j, (mv, s0) in enumerate(zip([4, 8, 16], [1e-3, 2e-3, 5e-4])):
        one = sim.init_params([seeds[j]], d=101, m_k=2, m_v=mv, sigma_0=s0, device="cpu")
        assert torch.equal(batch.WQ[j], one.WQ[0]) and torch.equal(batch.WV[j, :, :mv], one.WV[0])
        assert torch.all(batch.WV[j, :, mv:] == 0) and torch.all(batch.H[j, :, mv:] == 0)
        t1 = sim.train(sim.make_problem([seeds[j]], n=4, s=20, d=101, sigma_p=1.0, n_test=20,
                                        disjoint=True, device="cpu"),
                       one, eta=1e-3, steps=30, log=sim.STAGE_LOG)
        for k in sim.STAGE_LOG:
            np.testing.assert_allclose(tb[k][:, j], t1[k][:, 0], rtol=1e-12, atol=1e-15)
    same = sim.init_params(seeds, d=101, m_k=2, m_v=8, sigma_0=[1e-3] * 3, device="cpu")
    ref = sim.init_params(seeds, d=101, m_k=2, m_v=8, sigma_0=1e-3, device="cpu")
    assert all(torch.equal(x, y) for x, y in zip(same.tensors(), ref.tensors()))
    for kw, name in ((dict(m_v=[4, 8]), "m_v"), (dict(m_v=[4, 0, 8]), r"m_v\[1\]"),
                     (dict(sigma_0=[1e-3, -1.0, 1e-3]), r"sigma_0\[1\]"),
                     (dict(sigma_0=[1e-3]), "sigma_0"), (dict(sigma_0=[1e-3, float("nan"), 1.0]),
                                                         "sigma_0")):
        args = dict(d=101, m_k=2, m_v=8, sigma_0=1e-3, device="cpu")
        args.update(kw)
        with pytest.raises(ValueError, match=name):
            sim.init_params(seeds, **args)


def test_worked_example_runs():
    spec = importlib.util.spec_from_file_location("signgd_events_example",
                                                  ROOT / "examples" / "signgd_events.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    out = ex.main(seeds=(1, 2), verbose=False)
    ev = out["events"]
    assert ev["qk_align"].shape == (2, 2, 4) and np.isfinite(ev["stage"]["T4"]).all()
    assert np.array_equal(out["t_stop_seed"], ev["stage"]["T4"])  # aligned once, aligned since
    assert out["checkpoint"].t in out["t_test"]


def test_per_seed_s():
    seeds, d = [5, 6, 7], 101
    prob = sim.make_problem(seeds, n=4, s=[10, 20, 15], d=d, sigma_p=1.0, n_test=8,
                            disjoint=True, device="cpu")
    assert prob.s == [10, 20, 15]
    p = sim.init_params(seeds, d=d, m_k=2, m_v=8, sigma_0=1e-3, device="cpu")
    tb = sim.train(prob, p, eta=1e-3, steps=20, log=sim.STAGE_LOG)
    for j, sj in enumerate(prob.s):
        one = sim.make_problem([seeds[j]], n=4, s=sj, d=d, sigma_p=1.0, n_test=8, disjoint=True,
                               device="cpu")
        assert torch.equal(prob.train.P[j], one.train.P[0])
        assert torch.equal(prob.test.P[j], one.test.P[0])
        assert torch.all((one.train.xi != 0).sum(-1) == sj)
        t1 = sim.train(one, sim.init_params([seeds[j]], d=d, m_k=2, m_v=8, sigma_0=1e-3,
                                            device="cpu"), eta=1e-3, steps=20, log=sim.STAGE_LOG)
        for k in sim.STAGE_LOG:
            np.testing.assert_allclose(tb[k][:, j], t1[k][:, 0], rtol=1e-12, atol=1e-15)
    for s_, name in (([10, 20], "s"), ([10, 0, 5], r"s\[1\]"), ([10, 200, 5], r"s\[1\]"),
                     ([10, 2.5, 5], r"s\[1\]"), ([30, 30, 30], "disjoint")):
        with pytest.raises(ValueError, match=name):
            sim.make_problem(seeds, n=4, s=s_, d=d, sigma_p=1.0, disjoint=True, device="cpu")


def test_stage_functions_reject_an_empty_trace():
    """An empty trace (no logged step): a ValueError naming tr, before any numpy work."""
    tr = types.SimpleNamespace(t=np.array([]), q={k: np.zeros((0, 1, 2, 4, 1))
                                                  for k in sim.STAGE_LOG})
    for f in (sim.stage_times, sim.qk_alignment_time, sim.events):
        with pytest.raises(ValueError, match="tr"):
            f(tr)
