"""The unit tests' one rule beyond the root conftest: a harness check that is undecided inside a
unit test (properties.check.Inconclusive, a pytest skip so that an audit stays green) fails the
test.  For a property an undecided check is a result, reported `not-audited` with its numbers; in
a unit test it means the test's own data decided nothing and its later assertions never ran
(test_procedures' whp-bracket test was skipped that way, unseen, until its runs per rung could
decide)."""

from __future__ import annotations

import pytest

from properties.check import Inconclusive


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and call.excinfo is not None and call.excinfo.errisinstance(Inconclusive):
        rep.outcome = "failed"
        rep.longrepr = (f"{item.nodeid}: a harness check inside a unit test decided nothing "
                        f"(Inconclusive), so the test's later assertions never ran: "
                        f"{call.excinfo.value}")
