"""Audit of SignGD on two-layer transformers (Li et al., ICLR 2025): one file per claim item, `test_<item>.py` (the Claim, its strategies, its
alternatives, its printed and corrected properties), shared cached runs in `runs.py`, figures in
`figures.py`, shared statistics in `common.py`.  (Every claim was migrated to the
earned-verdict harness; the last left `test_unmigrated*.py` on 2026-12-03.)
"""
