"""A fast probe conjecture for the fault tests (tests/test_faults.py): two claims whose
properties take well under a second, and misbehave on request through $THEOREM_AUDIT_FAULT:

  kill      the property of `fault.lost` SIGKILLs the process running it (a lost xdist worker)
  sleep     the property of `fault.lost` sleeps for a minute (something to interrupt)
  sleep-once  as sleep, but only while the file $THEOREM_AUDIT_FAULT_MARK does not exist (it
            creates it first): a rerun after an interruption runs normally
  exit      this file calls sys.exit(0) when imported (a conjecture that exits)
  raise     this file raises when imported
  clash     this file re-registers an existing claim id with other content

`fault.steady` always runs normally, so a report shows what a lost worker did not take along.
"""

import os
import signal
import sys
import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register

FAULT = os.environ.get("THEOREM_AUDIT_FAULT", "")
if FAULT == "exit":
    sys.exit(0)
if FAULT == "raise":
    raise RuntimeError("a conjecture that fails at import")

for cid in ("fault.steady", "fault.lost"):
    register(Claim(
        id=cid, where="test probe", statement="0 + 0 = 0 in float64.",
        assumptions="none", prediction="0", simulation="numpy", metric="|x - 0|",
        tolerance="round-off", kind="consistency"))
if FAULT == "clash":
    register(Claim(id="joma.theorem2", where="elsewhere", statement="something else",
                   assumptions="-", prediction="-", simulation="-", metric="-", tolerance="-"))


def _zero(seed):
    x = np.zeros(3) + 0.0 * seed
    check_close(_zero.claim, x, np.zeros(3), Tolerance.roundoff(1.0))


@audits("fault.steady")
@examples(2)
@given(st.integers(0, 100))
def test_steady(seed):
    _zero.claim = "fault.steady"
    _zero(seed)


@audits("fault.lost")
@examples(2)
@given(st.integers(0, 100))
def test_lost(seed):
    if FAULT == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if FAULT == "sleep":
        time.sleep(60)
    mark = os.environ.get("THEOREM_AUDIT_FAULT_MARK", "")
    if FAULT == "sleep-once" and mark and not os.path.exists(mark):
        open(mark, "w").close()
        time.sleep(60)
    _zero.claim = "fault.lost"
    _zero(seed)
