"""Audit of Topic structure (Li, Li & Risteski, ICML 2023): one file per claim item, `test_<item>.py` (the Claim, its strategies, its
alternatives, its printed and corrected properties), shared cached runs and the calibration
constants of the empirical claims in `runs.py` (`python -m properties.topic.runs calibrate ...`
remakes them), shared statistics in `common.py`, figures in `figures.py`.  Every claim is
migrated to the earned-verdict harness (the last five left `test_unmigrated.py` on 2026-12-03).
"""
