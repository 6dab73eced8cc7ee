"""Input checks shared by the sim.joma modules.
"""

from __future__ import annotations


def _check_int(x, name, lo, hi=None):
    if isinstance(x, bool) or not isinstance(x, int) or x < lo or (hi is not None and x > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an int {rng}, got {x!r}")
