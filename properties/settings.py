"""Settings in one place: the Hypothesis profile, the named size, the example budget, and the
CUDA rule.  A leaf module (imports nothing of the harness); everything is read at run time, not
decided at import, so a claim asks `size()` inside its property, never in a decorator argument."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

__all__ = ["PROFILES", "SIZES", "SIZE_ENV", "DEVICE_ENV", "profile", "size", "examples",
           "cuda_available"]

PROFILES = ("ci", "dev", "thorough")
DEVICE_ENV = "THEOREM_AUDIT_DEVICE"


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (torch imported lazily)."""
    import torch
    return bool(torch.cuda.is_available())


def profile() -> str:
    """The Hypothesis profile: $HYPOTHESIS_PROFILE, else `ci` under CI=... and `dev` elsewhere."""
    return os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")


SIZE_ENV = "THEOREM_AUDIT_SIZE"

# The pytest configuration of the audit's runs and of their Rerun commands, shipped inside the
# package (a wheel has no pyproject.toml)
PYTEST_INI = Path(__file__).resolve().with_name("pytest-audit.ini")
SIZES = ("ci", "ladder", "paper")


def size() -> str:
    """The named size the runs use (`--size` of the audit, or THEOREM_AUDIT_SIZE):

    ci      the CI sizes (JoMA's ladder d = 8, 16, 32; Table 1 at d = 32): 2 CPU cores, minutes;
    ladder  the longer size ladder of the asymptotic policy (JoMA d = 16, 32, 64, 128), CPU;
    paper   the ladder plus the paper's own size (JoMA d = 1024, 3 layers, 10k steps) as the last
            rung, through the same code path; it needs CUDA.

    Default: `ci`, except under the `thorough` profile (`ladder`, or `paper` where CUDA is
    present).  Each paper's runs.py maps the name to its settings (data, not an import-time
    switch)."""
    s = os.environ.get(SIZE_ENV)
    if s is None or s == "":
        if profile() != "thorough":
            return "ci"
        return "paper" if cuda_available() else "ladder"
    if s not in SIZES:
        raise ValueError(f"{SIZE_ENV} must be one of {SIZES}, got {s!r}")
    return s


def examples(n: int, *, printed_fails: bool = False, **kw) -> settings:
    """Hypothesis settings for a property with a CI budget of `n` examples, scaled by profile
    (dev x0.5, thorough x10).  `printed_fails` is kept for old call sites: a printed form
    expected to fail now runs all its draws under `@audits(fails=...)` whatever the phases."""
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    scale = {"ci": 1.0, "dev": 0.5, "thorough": 10.0}.get(profile(), 1.0)
    kw.setdefault("max_examples", max(1, int(round(n * scale))))
    kw.setdefault("deadline", None)
    kw.setdefault("suppress_health_check", [HealthCheck.too_slow, HealthCheck.data_too_large])
    if printed_fails:
        kw.setdefault("phases", [Phase.explicit, Phase.reuse, Phase.generate])
    return settings(**kw)
