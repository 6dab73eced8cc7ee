"""Printed statements are immutable: each claim's `statement` is pinned by its SHA-256 in
`tests/statements.json`.

A changed statement fails here.  If the change restores what the paper prints (an item that was
lost, a typo in transcription), update the pin and add an entry to the claim's history
(`properties/<paper>/history.json`) saying what changed and why:

    python tests/test_statements.py --update

A new claim needs its pin too (the same command adds it).  A correction never goes into
`statement`: it goes into `corrected` with its `reason`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

LOCK = Path(__file__).with_name("statements.json")


def current() -> dict[str, str]:
    from properties.__main__ import ROOT, load_registry
    from properties.registry import paper_packages
    reg = load_registry([])
    papers = set(paper_packages(ROOT))  # found, never listed: a new paper is pinned like the rest
    return {cid: hashlib.sha256(c.statement.encode()).hexdigest()
            for cid, c in sorted(reg.items()) if cid.split(".", 1)[0] in papers}


def test_printed_statements_are_pinned():
    pins = json.loads(LOCK.read_text())
    now = current()
    changed = sorted(c for c in now if c in pins and pins[c] != now[c])
    new = sorted(set(now) - set(pins))
    gone = sorted(set(pins) - set(now))
    assert not changed, (f"printed statements changed: {changed}. A statement is as printed and "
                         "never edited; see this file's docstring")
    assert not new, f"claims without a pinned statement: {new} (python tests/test_statements.py --update)"
    assert not gone, f"pinned claims no longer registered: {gone}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/test_statements.py --update")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    LOCK.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {LOCK}")
