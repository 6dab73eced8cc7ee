"""The topic calibration data (properties/topic/calibration.json, loaded by runs.py): the loaded
sets are the numbers that were Python literals in runs.py before issue 24 moved them (pinned by a
digest of their float hex values, computed from the old literals), every series has one score
per calibration element, and the calibration seeds are disjoint from the audit's."""

from __future__ import annotations

import hashlib
import json

import pytest

from properties.topic import runs
from properties.topic.common import EMPIRICAL_AUDIT_SEEDS

# sha256 of the four sets as they were literals in runs.py (commit 09ced7f), value for value
PINNED = "1993e9bc38223599820ae821a9a2fd4acfc5dfc0c2c3d88e362664244b2346f1"
NAMES = ("WV_BLOCKWISE_CALIBRATION", "EMBEDDING_CALIBRATION", "WV_DIAGONAL_CALIBRATION",
         "LDA_CALIBRATION")


def _digest(sets: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(sets):
        for kk in sorted(sets[k]):
            x = sets[k][kk]
            if kk == "generator_seeds":
                a, b = (x.start, x.stop) if isinstance(x, range) else x
                h.update(f"{k}/{kk}={a},{b}".encode())
            elif kk == "elements_per_seed":
                h.update(f"{k}/{kk}={x}".encode())
            else:
                h.update((f"{k}/{kk}=" + ",".join(float(f).hex() for f in x)).encode())
    return h.hexdigest()


def test_calibration_numbers_unchanged():
    assert _digest({k: getattr(runs, k) for k in NAMES}) == PINNED


def test_calibration_shapes_and_seeds():
    # the shapes the claim files read: range for wv_blockwise (.start/.stop), a pair otherwise
    assert isinstance(runs.WV_BLOCKWISE_CALIBRATION["generator_seeds"], range)
    audit = EMPIRICAL_AUDIT_SEEDS
    for k in NAMES:
        s = getattr(runs, k)
        lo, hi = ((s["generator_seeds"].start, s["generator_seeds"].stop)
                  if k == "WV_BLOCKWISE_CALIBRATION" else s["generator_seeds"])
        assert max(lo, audit.start) >= min(hi, audit.stop), k
        for kk, xs in s.items():
            if kk not in ("generator_seeds", "elements_per_seed"):
                assert isinstance(xs, tuple) and len(xs) == (hi - lo) * s["elements_per_seed"]
    raw = json.loads(runs.CALIBRATION_FILE.read_text())
    for k in NAMES:
        p = raw["sets"][k]
        assert p["command"] and p["added_in_commit"] and p["claims"], k


def test_calibration_rejects_a_short_series(tmp_path):
    raw = json.loads(runs.CALIBRATION_FILE.read_text())
    raw["sets"]["LDA_CALIBRATION"]["series"]["loss:gap"].pop()
    bad = tmp_path / "calibration.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="LDA_CALIBRATION"):
        runs._load_calibration(bad)
