"""The run cache: every shared run (`@run_cache` in properties/<paper>/runs.py) and every pure
simulation of a draw (`world.simulation(fn, pure=True)`) is computed once and kept on disk,
content-addressed, so that xdist workers, the alternatives of a draw, audit shards, a resumed
audit and the figures all read the same result instead of training again.

Storage is joblib.Memory (atomic, concurrency-safe writes; `reduce_size` to bound it).  The key
is a SHA-1 over

  * the code version: the source of sim/, theory/, the harness modules that runs depend on
    (check.py, world.py, registry.py, cache.py), the paper package's shared modules (runs.py,
    common.py, ... : everything but its claim files and figures.py) and the file that defines
    the function (a claim file, for a simulation defined there);
  * the environment a result depends on: the versions of Python, torch, numpy, scipy and sympy,
    the device, the default dtype, the Hypothesis profile and the named size (runs resolve
    profile- and size-dependent defaults inside);
  * the function (module and qualified name) and a digest of its arguments
    (`properties.world.fingerprint`: numbers, strings, arrays, tensors, generator states,
    dataclasses); for a pure simulation also the claim, the slot, the call's ordinal, the draw
    and the values the function closes over.

Anything not digestible (an object whose repr carries an address) changes the key on every call:
a miss, never a wrong hit.  A function that raises stores nothing.

Where (in this order): $THEOREM_AUDIT_CACHE_DIR (the audit's --cache-dir); else
<checkout>/.theorem-audit-cache in a source checkout; else $XDG_CACHE_HOME/theorem-audit
(~/.cache/theorem-audit).  THEOREM_AUDIT_NO_CACHE=1 (the audit's --no-cache) keeps results in
memory only, per process, as before.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import warnings
from pathlib import Path
from typing import Callable

DIR_ENV = "THEOREM_AUDIT_CACHE_DIR"
OFF_ENV = "THEOREM_AUDIT_NO_CACHE"
ROOT = Path(__file__).resolve().parents[1]

STATS = {"hits": 0, "misses": 0, "uncached": 0}  # this process's counts (tests, benchmark)


def enabled() -> bool:
    return os.environ.get(OFF_ENV, "") in ("", "0")


def cache_dir() -> Path:
    d = os.environ.get(DIR_ENV, "")
    if d:
        return Path(d).expanduser()
    if (ROOT / ".git").exists() or (ROOT / "pyproject.toml").exists():
        return ROOT / ".theorem-audit-cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "theorem-audit"


# --------------------------------------------------------------------------------------------
# The code version
# --------------------------------------------------------------------------------------------
_SHARED_HARNESS = ("check.py", "world.py", "registry.py", "cache.py")


@functools.lru_cache(maxsize=None)
def _file_digest(path: str) -> str:
    try:
        return hashlib.sha1(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "missing:" + path


@functools.lru_cache(maxsize=None)
def _tree_digest(folder: str) -> str:
    h = hashlib.sha1()
    for p in sorted(Path(folder).rglob("*.py")):
        h.update(str(p.relative_to(folder)).encode())
        h.update(_file_digest(str(p)).encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _module_digest(module: str) -> str:
    """The code a function of `module` may run: sim/, theory/, the run-relevant harness modules,
    its paper package's shared (non-claim, non-figure) modules, and its own file."""
    h = hashlib.sha1()
    for tree in ("sim", "theory"):
        h.update(_tree_digest(str(ROOT / tree)).encode())
    for name in _SHARED_HARNESS:
        h.update(_file_digest(str(ROOT / "properties" / name)).encode())
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if path:
        pkg = Path(path).resolve().parent
        if pkg.parent == ROOT / "properties":  # a paper package: its shared modules
            for p in sorted(pkg.glob("*.py")):
                if not p.name.startswith("test_") and p.name != "figures.py":
                    h.update(p.name.encode())
                    h.update(_file_digest(str(p)).encode())
        h.update(_file_digest(str(Path(path).resolve())).encode())
    else:
        h.update(f"nofile:{module}".encode())
    return h.hexdigest()


def _environment() -> str:
    import numpy
    import scipy
    import sympy
    import torch

    from properties.check import profile, size
    from sim import default_device
    return (f"py{sys.version_info[:3]}|torch{torch.__version__}|numpy{numpy.__version__}|"
            f"scipy{scipy.__version__}|sympy{sympy.__version__}|{default_device()}|"
            f"{torch.get_default_dtype()}|profile={profile()}|size={size()}")


def code_version(module: str) -> str:
    """The digest of the code and environment a function of `module` depends on."""
    return hashlib.sha1((_module_digest(module) + "|" + _environment()).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# Storage (joblib.Memory)
# --------------------------------------------------------------------------------------------
_MEMORY: dict = {}


def _compute(key: str, fn, args, kwargs):  # joblib keys this function on `key` alone
    STATS["misses"] += 1
    return fn(*args, **kwargs)


def _cached_compute(location: Path):
    c = _MEMORY.get(location)
    if c is None:
        import joblib

        location.mkdir(parents=True, exist_ok=True)  # OSError here: the caller computes uncached
        mem = joblib.Memory(str(location), verbose=0)
        c = _MEMORY[location] = (mem, mem.cache(_compute, ignore=["fn", "args", "kwargs"]))
    return c[1]


def call(key: str, fn: Callable, args: tuple = (), kwargs: dict | None = None):
    """fn(*args, **kwargs), stored under `key` (the caller's full digest) when the cache is
    enabled.  A cache that cannot be written (read-only, full disk) warns and computes."""
    kwargs = kwargs or {}
    if not enabled():
        STATS["uncached"] += 1
        return fn(*args, **kwargs)
    misses = STATS["misses"]
    try:
        cached = _cached_compute(cache_dir())
    except OSError as e:
        warnings.warn(f"run cache at {cache_dir()} unusable ({e}); computing without it")
        STATS["uncached"] += 1
        return fn(*args, **kwargs)
    out = cached(key, fn, args, kwargs)
    if STATS["misses"] == misses:
        STATS["hits"] += 1
    return out


def key_of(fn: Callable, args: tuple, kwargs: dict, *extra) -> str:
    from properties.digest import fingerprint

    h = hashlib.sha1()
    h.update(code_version(fn.__module__).encode())
    h.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    h.update(fingerprint((args, kwargs)).encode())
    for x in extra:
        h.update(fingerprint(x).encode())
    return h.hexdigest()


def run_cache(maxsize: int | None = 8):
    """Decorator for a shared run: `functools.lru_cache(maxsize)` in memory (callers must not
    modify what it returns) over the on-disk cache.  `.cache_clear()` clears the memory level."""

    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def on_disk(*args, **kwargs):
            try:  # keyed by the bound arguments, defaults applied: f(0) and f(0, 1) are one run
                bound = sig.bind(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # the call's own error
            bound.apply_defaults()
            return call(key_of(fn, (), dict(bound.arguments)), fn, args, kwargs)

        cached = functools.lru_cache(maxsize=maxsize)(on_disk)
        cached.__run_cache__ = True  # world.simulation(pure=True) stores it only once
        return cached

    return deco


def closure_values(fn: Callable) -> tuple:
    """What `fn` closes over and its defaults (part of a pure simulation's key)."""
    cells = tuple(c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
                  if _has_contents(c))
    return cells, getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)


def closure_generators(fn: Callable) -> tuple:
    """The random generators `fn` closes over (a pure simulation must not advance them: a cached
    result would leave them where the computed one moved them)."""
    out = []
    for v in closure_values(fn)[0]:
        name = type(v).__module__ + "." + type(v).__name__
        if name in ("torch.Generator", "torch._C.Generator", "numpy.random._generator.Generator",
                    "numpy.random.mtrand.RandomState", "random.Random"):
            out.append(v.getstate() if name == "random.Random" else v)
    return tuple(out)


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:  # an empty cell
        return False


def reduce_size(bytes_limit: int | str) -> None:
    """Bound the cache on disk (joblib.Memory.reduce_size: least recently used results go)."""
    if not enabled():
        return
    try:
        _cached_compute(cache_dir())  # opens the store if this process has not yet
        _MEMORY[cache_dir()][0].reduce_size(bytes_limit=bytes_limit)
    except OSError as e:
        warnings.warn(f"run cache at {cache_dir()}: could not reduce its size ({e})")


def clear() -> None:
    """Remove every stored result."""
    import shutil

    shutil.rmtree(cache_dir() / "joblib", ignore_errors=True)
    _MEMORY.clear()
