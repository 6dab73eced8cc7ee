"""One source of closed forms: which functions of theory/ the claim's world calls (a profiler
over the property body's first draw, outside pure simulations and shared runs).  Split from
properties.world, which re-exports every name."""

from __future__ import annotations

import os
from typing import Callable

__all__ = ["TRACE_ENV", "theory_names", "tracing_enabled"]

TRACE_ENV = "THEOREM_AUDIT_TRACE"  # "0": do not record which closed forms the bodies call


def tracing_enabled() -> bool:
    return os.environ.get(TRACE_ENV, "1") != "0"


_THEORY_NAMES: dict | None = None


def theory_names() -> dict:
    """code object -> every dotted name under which a function of `theory` is importable
    (re-exports included).  Functions made by one factory share a code object (the checking
    wrapper of lambdified expressions): such a shared code is not a name, and the code of the
    function it closes over (the lambdified expression itself) identifies it instead."""
    global _THEORY_NAMES
    if _THEORY_NAMES is None:
        import importlib
        import pkgutil

        import theory
        mods = ["theory"] + [m.name for m in pkgutil.walk_packages(theory.__path__, "theory.")]
        objs: dict = {}  # id -> (function, names)
        for name in mods:
            mod = importlib.import_module(name)
            for attr, obj in list(vars(mod).items()):
                if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__code__"):
                    objs.setdefault(id(obj), (obj, set()))[1].add(f"{name}.{attr}")
        owners: dict = {}
        for obj, names in objs.values():
            owners.setdefault(obj.__code__, []).append((obj, names))
        out: dict = {}
        for code, fs in owners.items():
            if len(fs) == 1:
                out.setdefault(code, set()).update(fs[0][1])
                continue
            for obj, names in fs:  # a shared factory code: name it by what it closes over
                for cell in obj.__closure__ or ():
                    try:
                        inner = cell.cell_contents
                    except ValueError:
                        continue
                    c = getattr(inner, "__code__", None)
                    if c is not None and c not in owners:
                        out.setdefault(c, set()).update(names)
        _THEORY_NAMES = out
    return _THEORY_NAMES


def _untraced_codes() -> set:
    """The wrappers inside which calls are not counted: pure simulations and shared runs (a
    warm cache skips them, so counting what they call would make warm and cold audits differ)."""
    from properties import cache
    from properties.world import World
    codes = {c for c in World.simulation.__code__.co_consts + World._on_disk.__code__.co_consts
             if hasattr(c, "co_name") and c.co_name in ("cached", "stored")}
    probe = cache.run_cache()(lambda: None)
    inner = getattr(probe, "__wrapped__", None)
    if getattr(inner, "__code__", None) is not None:
        codes.add(inner.__code__)
    return codes


def _traced(inner: Callable, args, kwargs, into: set):
    """Run the body once with a profiler that notes every function of theory/ it calls (outside
    pure simulations and shared runs) into `into` (their dotted names)."""
    names = theory_names()
    skip = _untraced_codes()
    depth = [0]

    def prof(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code in skip:
                depth[0] += 1
            elif depth[0] == 0 and code in names:
                into.update(names[code])
        elif event == "return" and frame.f_code in skip:
            depth[0] -= 1

    import sys
    old = sys.getprofile()
    sys.setprofile(prof)
    try:
        return inner(*args, **kwargs)
    finally:
        sys.setprofile(old)
