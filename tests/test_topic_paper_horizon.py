"""The T = v = 10 horizon of the topic LDA models (runs.LDA_PAPER_STEPS) and the own-mechanism
nulls' run switches (issue 24): cheap checks, no training."""

from __future__ import annotations

import pytest

from properties.topic import runs


def test_paper_horizon_is_the_rule_applied_to_the_measured_curve():
    k = runs.horizon_by_rule(runs.HORIZON_JOINT_TV10_WINDOWS)
    assert k == runs.LDA_PAPER_STEPS["joint"] == 2100
    # the uniform models get the joint model's steps
    assert {runs.LDA_PAPER_STEPS[m] for m in ("uniform", "uniform_value_off")} == {k}
    # the D^V model (attention_order (b)) by the same rule on its own curve; its null W* the same
    k_dv = runs.horizon_by_rule(runs.HORIZON_DV_TV10_WINDOWS)
    assert k_dv == runs.LDA_PAPER_STEPS["dv"] == runs.LDA_PAPER_STEPS["wstar"] == 1200
    assert set(runs.LDA_PAPER_STEPS) <= set(runs.LDA_MODELS)


def test_the_first_rule_stopped_on_the_plateau():
    # one window changing by < 1%: the rule first written, rejected on the loss curve
    w = runs.HORIZON_JOINT_TV10_WINDOWS
    first = next(i for i in range(1, len(w)) if abs(w[i] - w[i - 1]) / w[i - 1] < 0.01)
    assert (first + 1) * runs.HORIZON_WINDOW == 600
    assert w[first] - w[-1] > 0.04  # the loss fell a further ~5% after it


def test_horizon_rule_rejects_bad_input():
    with pytest.raises(ValueError, match="window_means"):
        runs.horizon_by_rule([1.0, 0.5])
    with pytest.raises(ValueError, match="window_means"):
        runs.horizon_by_rule([1.0, 0.5, 0.3, 0.1])


def test_null_switches_reject_bad_input():
    with pytest.raises(ValueError, match="topics"):
        runs.train_embedding.__wrapped__(0, topics="no") if hasattr(
            runs.train_embedding, "__wrapped__") else runs.train_embedding(0, topics="no")
    with pytest.raises(ValueError, match="uniform_model"):
        runs.uniform_loss_gap(0, uniform_model="joint")
    assert runs.LDA_MODELS["uniform_value_off"]["sw"].freeze_v
    assert runs.LDA_MODELS["uniform_value_off"]["sw"].uniform
