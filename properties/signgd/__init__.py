"""Audit of SignGD on two-layer transformers (Li et al., ICLR 2025): one file per claim item, `test_<item>.py` (the Claim, its strategies, its
alternatives, its printed and corrected properties), shared cached runs in `runs.py`, figures in
`figures.py`.

`test_unmigrated*.py` holds the claims not yet moved onto the earned-verdict harness (their
properties still use the old number controls, so their claims are reported `not-audited`:
power not shown by an alternative).  Claims leave it one file at a time.
"""
