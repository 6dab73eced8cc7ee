"""The audit's policy, fixed before any run: the verdicts a claim can get, the draws and the
false-fail budget a verdict needs, and the report's schema version.

A leaf module (it imports nothing of the harness), so that paper packages may read the budget
(e.g. `CLAIM_SHARE`) without importing the report.  The rules that apply it are in
`properties.verdict`.
"""

from __future__ import annotations

VERDICTS = ("holds", "erratum", "refuted", "reading-dependent", "not-audited", "consistency",
            "inconsistent")
PAPER_VERDICTS = VERDICTS[:5]                 # the paper's statements
CONSISTENCY_VERDICTS = ("consistency", "inconsistent")  # the simulator against its derivation
MIN_DRAWS = 3
SCHEMA_VERSION = 3
FALSE_FAIL_GOAL = 0.01
# The false-fail allocation, a rule stated before any run: every claim may spend at most an equal
# share of the goal, as if the suite held MAX_CLAIMS claims (1e-4 expected spurious failures per
# claim), so the run stays within the goal while it holds at most that many.  A claim whose
# checks spend more is not `holds`/`erratum`/`consistency` until its rates are lowered (and the
# change recorded in its history); rates are never lowered after seeing the verdict.
MAX_CLAIMS = 100
CLAIM_SHARE = FALSE_FAIL_GOAL / MAX_CLAIMS
# Grants (issue 34: allocate the goal where it buys decisions): a claim whose trend or
# with-high-probability decision needs a larger rate may be granted a larger share here, stated
# before the run with its reason ("claim id": (share, why)).  The shares of the registered claims
# (CLAIM_SHARE each, a grant in its place) must sum to at most FALSE_FAIL_GOAL
# (tests/test_report.py checks it), so a grant is paid for by the slots no claim uses yet.
SHARE_GRANTS: dict[str, tuple[float, str]] = {}


def share_of(claim_id: str) -> float:
    """The false-fail share of a claim: its grant, else CLAIM_SHARE."""
    grant = SHARE_GRANTS.get(claim_id)
    return float(grant[0]) if grant else CLAIM_SHARE
NO_POWER = "power not shown by an alternative"
NO_CHECK_POWER = "faced no alternative"
# appended to a direction check's name where it rejects an alternative's exactly flat series
# (properties.trend): the alternative is rejected, but the check is not credited with it, since
# a series constant by construction could not have passed it
FLAT_SUFFIX = " [exactly flat]"
# appended to a 'with high probability' check's name where it rejects an alternative's world in
# which every item of every run fails (properties.procedures.check_whp's `items`): the farthest
# data the check could meet (a null whose mechanism cannot act, e.g. a frozen noise that never
# turns), so it is rejected but not counted as the check's power
SATURATED_SUFFIX = " [every item fails]"
