"""Audit of JoMA (Tian et al., ICLR 2024): one file per claim item, `test_<item>.py` (the Claim, its strategies, its
alternatives, its printed and corrected properties), shared cached runs in `runs.py`, figures in
`figures.py`.

Every JoMA claim is on the earned-verdict harness (the last ones, the trained-transformer claims
and Fig. 2, left `test_unmigrated.py` in issue 10, which then was deleted).
"""
