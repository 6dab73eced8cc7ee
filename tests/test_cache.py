"""properties.cache: the on-disk, content-addressed run cache (issue 13)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, cache, check_close, register, rival
from properties import world as W
from sim import make_generator

CALLS: list = []


@pytest.fixture
def cache_at(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.DIR_ENV, str(tmp_path / "runs"))
    monkeypatch.setenv(cache.KEY_ENV, str(tmp_path / "cache.key"))
    monkeypatch.delenv(cache.OFF_ENV, raising=False)
    CALLS.clear()
    return tmp_path / "runs"


@cache.run_cache(maxsize=4)
def noisy_run(seed: int, n: int = 3) -> np.ndarray:
    CALLS.append((seed, n))
    return torch.randn(n, generator=make_generator(seed), dtype=torch.float64).numpy()


def test_a_run_is_computed_once_then_read_from_disk(cache_at):
    a = noisy_run(5)
    noisy_run.cache_clear()  # a new process: nothing in memory
    hits = cache.STATS["hits"]
    b = noisy_run(5)
    assert CALLS == [(5, 3)] and np.array_equal(a, b) and cache.STATS["hits"] == hits + 1
    assert list(cache_at.rglob("output.pkl"))
    noisy_run(6)
    noisy_run(5, n=4)
    assert CALLS == [(5, 3), (6, 3), (5, 4)]  # other arguments: other entries
    noisy_run.cache_clear()


def test_a_new_code_version_is_a_miss(cache_at, monkeypatch):
    noisy_run(1)
    noisy_run.cache_clear()
    monkeypatch.setattr(cache, "code_version", lambda module: "another version")
    noisy_run(1)
    assert CALLS == [(1, 3), (1, 3)]
    noisy_run.cache_clear()


def test_the_code_version_covers_sim_theory_the_package_and_the_environment(monkeypatch):
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "ci")
    monkeypatch.delenv("THEOREM_AUDIT_SIZE", raising=False)
    v = cache.code_version(__name__)
    assert v == cache.code_version(__name__)
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "ladder")
    assert cache.code_version(__name__) != v  # the named size is part of the key
    monkeypatch.delenv("THEOREM_AUDIT_SIZE")
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "dev")
    assert cache.code_version(__name__) != v  # and the profile
    base = cache._module_digest.__wrapped__(__name__)
    real = cache._file_digest
    monkeypatch.setattr(cache, "_file_digest",
                        lambda path: real(path) + ("-edited" if path.endswith("sim/__init__.py")
                                                   else ""))
    assert cache._module_digest.__wrapped__(__name__) != base  # an edit of sim/


def test_the_code_version_follows_imports_into_sim_and_theory(tmp_path, monkeypatch):
    """Of sim/ and theory/, a run's code version holds what its module and its paper package's
    shared modules reach by import (at module level or in a function, transitively): an edit
    there is a miss; an edit of a module nothing imports (another paper's simulator, a new one)
    is not."""
    import importlib
    import sys as _sys

    files = {"sim/__init__.py": "", "sim/toy.py": "from theory.toy import y\n",
             "sim/deep/__init__.py": "", "sim/deep/leaf.py": "v = 1\n",
             "sim/other.py": "z = 3\n", "theory/__init__.py": "", "theory/toy.py": "y = 2\n",
             "theory/other.py": "w = 4\n", "properties/paperx/__init__.py": "",
             "properties/paperx/runs.py": "from sim import toy\n\ndef f():\n"
                                          "    import sim.deep.leaf\n",
             "properties/paperx/test_a.py": "from sim import other\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    def read(rel):
        return (tmp_path / rel).read_text() if (tmp_path / rel).is_file() else None

    assert cache.code_closure(["properties/paperx/runs.py"], read) == {
        "sim/__init__.py", "sim/toy.py", "theory/__init__.py", "theory/toy.py",
        "sim/deep/__init__.py", "sim/deep/leaf.py"}
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    spec = importlib.util.spec_from_file_location("properties.paperx.runs",
                                                  tmp_path / "properties/paperx/runs.py")
    monkeypatch.setitem(_sys.modules, "properties.paperx.runs", importlib.util.module_from_spec(spec))
    digest = cache._module_digest.__wrapped__

    def after_edit(rel):
        before = digest("properties.paperx.runs")
        (tmp_path / rel).write_text((tmp_path / rel).read_text() + "# edited\n")
        cache._file_digest.cache_clear()
        cache._read_file.cache_clear()
        return digest("properties.paperx.runs") != before

    for rel in ("sim/other.py", "theory/other.py", "properties/paperx/test_a.py"):
        assert not after_edit(rel), rel  # not reached (a claim file is keyed only for its own runs)
    for rel in ("sim/toy.py", "theory/toy.py", "sim/deep/leaf.py", "sim/__init__.py",
                "properties/paperx/runs.py"):
        assert after_edit(rel), rel


def test_a_claims_history_is_not_part_of_the_code_version(tmp_path, monkeypatch):
    """properties/<paper>/history.json is prose about the claims, read by no run: an entry
    added there changes neither the run cache's code version nor the README's stamp, while a
    data file beside it (a calibration table) does."""
    import importlib
    import sys as _sys

    from properties import readme

    root = tmp_path
    pkg = root / "properties" / "paperx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "runs.py").write_text("X = 1\n")
    (pkg / "history.json").write_text("{}\n")
    (pkg / "table.json").write_text("[1]\n")
    monkeypatch.setattr(cache, "ROOT", root)
    monkeypatch.syspath_prepend(str(root))
    for m in [m for m in _sys.modules if m == "properties.paperx" or m.startswith("properties.paperx.")]:
        del _sys.modules[m]
    spec = importlib.util.spec_from_file_location("properties.paperx.runs", pkg / "runs.py")
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(_sys.modules, "properties.paperx.runs", mod)
    digest = cache._module_digest.__wrapped__
    base = digest("properties.paperx.runs")
    (pkg / "history.json").write_text('{"paperx.a": ["an entry"]}\n')
    cache._file_digest.cache_clear()
    assert digest("properties.paperx.runs") == base
    (pkg / "table.json").write_text("[2]\n")
    cache._file_digest.cache_clear()
    assert digest("properties.paperx.runs") != base
    assert not readme._code_member("properties/paperx/history.json", "paperx")
    assert readme._code_member("properties/paperx/table.json", "paperx")
    assert readme._code_member("properties/paperx/test_a.py", "paperx")


def test_no_cache_keeps_nothing_on_disk(cache_at, monkeypatch):
    monkeypatch.setenv(cache.OFF_ENV, "1")
    noisy_run(2)
    noisy_run.cache_clear()
    noisy_run(2)
    assert CALLS == [(2, 3), (2, 3)] and not cache_at.exists()


@cache.run_cache(maxsize=2)
def failing_run(seed: int):
    CALLS.append(seed)
    raise ValueError("seed must be ... (a run that raises stores nothing)")


def test_a_run_that_raises_stores_nothing(cache_at):
    for _ in range(2):
        with pytest.raises(ValueError, match="stores nothing"):
            failing_run(3)
    assert CALLS == [3, 3]


def test_an_unusable_cache_directory_warns_and_computes(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(cache.DIR_ENV, str(blocker / "sub"))
    monkeypatch.delenv(cache.OFF_ENV, raising=False)
    CALLS.clear()
    with pytest.warns(UserWarning, match="unusable"):
        out = noisy_run(7)
    assert CALLS == [(7, 3)] and out.shape == (3,)
    noisy_run.cache_clear()


# --- pure simulations of a draw -------------------------------------------------------------
EXACT = Tolerance.roundoff(1.0)
PURE_CALLS: list = []


def twice(v):
    return 2.0 * v


def once(v):
    return v


for _cid in ("harness.cache.pure", "harness.cache.impure"):
    register(Claim(id=_cid, where="synthetic", statement="y = 2x", assumptions="x real",
                   prediction="twice", simulation="sim", metric="abs", tolerance="round-off",
                   alternatives=(rival("halved", once, "drops the factor 2"),)))


def sim_double(x):
    PURE_CALLS.append(float(x[0]))
    return 2.0 * x


@audits("harness.cache.pure")
@settings(max_examples=3, database=None, derandomize=True, deadline=None)
@given(x=st.integers(1, 9))
def prop_pure(world, x):
    y = world.simulation(sim_double, pure=True)(np.array([float(x)]))
    check_close("harness.cache.pure", y, world.prediction(twice)(np.array([float(x)])), EXACT)


def test_a_pure_simulation_is_read_from_disk_on_a_second_audit(cache_at):
    PURE_CALLS.clear()
    W.pop_last_run()
    prop_pure(world=W.WORLD_PLACEHOLDER)
    first = len(PURE_CALLS)
    run = W.pop_last_run()
    assert first >= 1 and run.draws and run.alt_stats(run_alt(run)).rejected_draws >= 1
    prop_pure(world=W.WORLD_PLACEHOLDER)  # the same draws again: every simulation from disk
    run = W.pop_last_run()
    assert len(PURE_CALLS) == first and run.draws and not run.mismatches


def run_alt(run):
    from properties.registry import REGISTRY
    return REGISTRY[run.claim_id].alternatives[0]


@audits("harness.cache.impure")
@settings(max_examples=1, database=None, derandomize=True, deadline=None)
@given(seed=st.integers(0, 9))
def prop_impure(world, seed):
    g = make_generator(seed)

    def sim_noise(x):
        return x + 0 * torch.rand(1, generator=g).item()  # advances g: not pure

    y = world.simulation(sim_noise, pure=True)(np.array([1.0]))
    check_close("harness.cache.impure", 2 * y, world.prediction(twice)(np.array([1.0])), EXACT)


def test_a_pure_simulation_that_advances_a_generator_is_an_error(cache_at):
    W.pop_last_run()
    with pytest.raises(W.PropertyError, match="pure=True"):
        prop_impure(world=W.WORLD_PLACEHOLDER)
    W.pop_last_run()


def test_a_run_is_keyed_by_its_bound_arguments(cache_at):
    """f(5), f(5, 3) and f(seed=5, n=3) are one run (the figures call runs with defaults left
    out, the properties with them spelled out)."""
    noisy_run(5)
    noisy_run.cache_clear()
    noisy_run(5, 3)
    noisy_run.cache_clear()
    noisy_run(seed=5, n=3)
    assert CALLS == [(5, 3)]
    noisy_run.cache_clear()


@cache.run_cache(maxsize=2)
def slow_run(seed: int, log: str = "") -> int:
    """A run that records each computation in `log` (one line per process that computed it)."""
    import os
    import time
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(1.0)
    return seed * 2


def _in_process(log):
    return slow_run(3, log)


def test_two_processes_that_miss_one_entry_compute_it_once(cache_at):
    """Two xdist workers asking for one shared run at the same time: the second waits on the
    first's lock, then reads the stored entry instead of computing it again."""
    import multiprocessing as mp

    log = str(cache_at.parent / "computed.log")
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        out = pool.map(_in_process, [log, log])
    assert out == [6, 6]
    assert len(open(log).read().split()) == 1


def test_each_papers_code_version_holds_its_own_simulator_only():
    """The built-in papers import no other paper's simulator or closed forms, so an edit of one
    paper's sim/ or theory/ modules (or a new paper's) re-keys the runs and README stamps of that
    paper alone.  A cross-import added later would couple them: it fails here first."""
    from properties import readme
    from properties.registry import paper_packages

    root = cache.ROOT
    files = {p.relative_to(root).as_posix(): p for top in ("sim", "theory", "properties")
             for p in (root / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    new = "sim/brand_new_paper.py"  # a simulator nothing imports yet

    def read(rel):
        return "import torch\n" if rel == new else (
            files[rel].read_text() if rel in files else None)

    papers = paper_packages(root)
    for paper in papers:
        own = readme.paper_code_files(paper, {**files, new: None}, read)
        assert new not in own
        for other in papers:
            if other != paper:
                assert not any(rel.startswith((f"sim/{other}", f"theory/{other}"))
                               for rel in own), (paper, other)
