"""properties.joma.runs: settings as data and the attention-frozen null of the trained runs."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from properties.joma import runs
from sim import make_generator
from sim.joma import make_table1_generator, sample_hierarchy
from sim.transformer import StackedTransformer, train


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="d must be"):
        runs.Setting("x", d=0, depth=2, batch=4, n_eval=8, steps=1, lr=1e-3)
    with pytest.raises(ValueError, match="lr must be"):
        runs.Setting("x", d=8, depth=2, batch=4, n_eval=8, steps=1, lr=0.0)
    assert runs.DYN_CI.at(16).d == 16 and runs.DYN_CI.at(16).steps == runs.DYN_CI.steps
    assert runs.DYN_PAPER.cuda_only and runs.DYN_PAPER.d == 1024 and runs.DYN_PAPER.depth == 3


def test_paper_size_never_runs_without_cuda():
    if runs.paper_available():
        pytest.skip("CUDA present")
    with pytest.raises(ValueError, match="only with CUDA"):
        runs.dynamics_run((0,), runs.DYN_PAPER)
    with pytest.raises(ValueError, match="only with CUDA"):
        runs.table1_run((0,), runs.SIMPLE, runs.TABLE1_PAPER)


def test_attention_frozen_keeps_wq_wk_and_trains_the_rest():
    g = make_table1_generator(20, 2, (10, 20), generator=make_generator(0))
    model = StackedTransformer([0], vocab=100, n_out=100, d=8, depth=2, device="cpu")
    runs._freeze_attention(model)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    batch = runs._batcher([g], [make_generator(1)], 4, chunk=2)
    train(model, batch, steps=3, lr=1e-2, task="next", log_every=3)
    after = model.state_dict()
    for l in range(2):
        for name in ("Wq", "Wk"):
            assert torch.equal(before[f"blocks.{l}.{name}"], after[f"blocks.{l}.{name}"])
        assert not torch.equal(before[f"blocks.{l}.W1"], after[f"blocks.{l}.W1"])


def test_batcher_chunks_match_shapes():
    g = make_table1_generator(20, 2, (10, 20), generator=make_generator(0))
    batch = runs._batcher([g, g], [make_generator(1), make_generator(2)], 5, chunk=3)
    for step in range(4):
        tok, lab, mask = batch(step)
        assert tok.shape == (2, 5, g.T) and lab.shape == (2, 5) and mask.shape == (2, 5, g.T)
    fresh = runs._batcher([g], [make_generator(1)], 5, chunk=3)
    ref = sample_hierarchy(g, 5 * 3, make_generator(1))  # the first chunk, same generator
    assert torch.equal(fresh(0)[0][0].cpu(), ref.tokens[:5])
    assert torch.equal(fresh(2)[0][0].cpu(), ref.tokens[10:15])
    assert dataclasses.is_dataclass(runs.DYN_CI)


def _paper_smoke(setting, steps=1, n_eval=64):
    """The paper's own model and batch for `steps` Adam steps, allowed on a CPU; the probes'
    held-out set cut to `n_eval` samples (Table 1's 512 at d = 1024 made most of the test's time,
    and the shapes it checks do not depend on it)."""
    return dataclasses.replace(setting, name=setting.name + "-smoke", steps=steps, cuda_only=False,
                               n_eval=min(n_eval, setting.n_eval))


def test_paper_size_runs_the_same_code_path_for_a_few_steps(monkeypatch):
    """Issue 13: the paper size (d = 1024, 3 layers, batch 64) goes through the very functions
    the CI size uses; on a CPU only for one Adam step and its two probes on 64 held-out samples
    (a smoke test, not a verdict; most of its time is the float64 SVDs of the three 1024 x 4096
    W1)."""
    monkeypatch.setenv("THEOREM_AUDIT_NO_CACHE", "1")
    dyn = runs.dynamics_run((0,), _paper_smoke(runs.DYN_PAPER))
    assert dyn["d"] == 1024 and dyn["ent"].shape[1:] == (3, 1) and dyn["sr"].shape[1:] == (3, 1)
    assert list(dyn["steps"]) == [0, 1] and all(map(lambda a: bool((abs(a) < 1e9).all()),
                                                (dyn["ent"], dyn["sr"])))
    t1 = runs.table1_run((0,), runs.SIMPLE, _paper_smoke(runs.TABLE1_PAPER))
    assert t1["trained"].shape == (1, 2) and t1["untrained"].shape == (1, 2)


@pytest.mark.gpu
@pytest.mark.slow
def test_paper_size_on_cuda_trains(monkeypatch):
    """On a CUDA device: the paper size itself for 200 steps; the attention entropy moves."""
    monkeypatch.setenv("THEOREM_AUDIT_NO_CACHE", "1")
    dyn = runs.dynamics_run((0, 1), dataclasses.replace(runs.DYN_PAPER, steps=200))
    assert abs(dyn["ent"][-1] - dyn["ent"][0]).max() > 1e-3


def test_sizes_are_named_settings(monkeypatch):
    """--size picks the ladder as data: ci (8, 16, 32), ladder (16, ..., 128); paper needs CUDA."""
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "ci")
    assert [s.d for s in runs.ladder()] == [8, 16, 32]
    assert runs.table1_setting() == runs.TABLE1_CI
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "ladder")
    assert [s.d for s in runs.ladder()] == [16, 32, 64, 128]
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "paper")
    if not runs.paper_available():
        with pytest.raises(ValueError, match="CUDA"):
            runs.ladder()
    else:
        assert runs.ladder()[-1] == runs.DYN_PAPER and runs.table1_setting() == runs.TABLE1_PAPER
    monkeypatch.setenv("THEOREM_AUDIT_SIZE", "huge")
    with pytest.raises(ValueError, match="THEOREM_AUDIT_SIZE"):
        runs.ladder()
