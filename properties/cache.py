"""The run cache: every shared run (`@run_cache` in properties/<paper>/runs.py) and every pure
simulation of a draw (`world.simulation(fn, pure=True)`) is computed once and kept on disk,
content-addressed, so that xdist workers, the alternatives of a draw, audit shards, a resumed
audit and the figures all read the same result instead of training again.

Storage: one file per entry, <cache dir>/signed/<ab>/<sha256 of its key>/output.pkl, written
atomically (a temporary file in the same directory, fsync, os.replace: concurrent xdist workers
and shards are safe), bounded by `reduce_size` (least recently used first). Every entry is
signed: it holds an HMAC-SHA256 over its pickled bytes and its key, under a secret key file
(`key_file()`: $THEOREM_AUDIT_CACHE_KEY_FILE, else $XDG_CONFIG_HOME/theorem-audit/cache.key,
~/.config/theorem-audit/cache.key; 32 random bytes made on first use, mode 0600). The digest is
checked before anything is unpickled: an entry that was altered, truncated, swapped with another
or written without the key (a foreign pickle in a shared directory) is a miss -- recomputed,
overwritten, and named in one warning -- never a wrong verdict and never code run. Who shares a
cache directory and wants hits shares the key file, and so trusts everyone who holds it (a
holder can sign any pickle).  An entry's key (what it is stored under) is a SHA-1 over

  * the code version: the modules of sim/ and theory/ that the function's file and its paper
    package's shared modules reach through their imports (`code_closure`: another paper's
    simulator is not part of it), the harness modules that runs depend on (check.py, world.py,
    registry.py, cache.py, ...), the paper package's shared modules and data files (runs.py,
    common.py, ... : everything but its claim files, figures.py and history.json) and the file
    that defines the function (a claim file, for a simulation defined there);
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

import contextlib
import functools
import hashlib
import hmac
import inspect
import os
import pickle
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

DIR_ENV = "THEOREM_AUDIT_CACHE_DIR"
OFF_ENV = "THEOREM_AUDIT_NO_CACHE"
ROOT = Path(__file__).resolve().parents[1]

STATS = {"hits": 0, "misses": 0, "uncached": 0, "rejected": 0}  # this process's counts (tests, benchmark)


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
_SHARED_HARNESS = ("check.py", "world.py", "registry.py", "cache.py", "settings.py", "digest.py",
                   "readings.py")
# Files of a paper package that no run reads: the claims' histories (properties.registry's
# HISTORY_FILE), prose about how a claim's rule came to be.  An entry added there must not make
# every run of the paper a miss (nor the README's verdicts stale).
NOT_RUN_INPUTS = ("history.json",)


@functools.lru_cache(maxsize=None)
def _file_digest(path: str) -> str:
    try:
        return hashlib.sha1(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "missing:" + path


# --------------------------------------------------------------------------------------------
# The sim/ and theory/ code a module reaches: its imports, followed
# --------------------------------------------------------------------------------------------
CODE_TREES = ("sim", "theory")  # the packages whose modules a run executes, followed by import
ALWAYS_REACHED = ("sim/__init__.py",)  # the device and the generators: every run reaches them


@functools.lru_cache(maxsize=None)
def imported_modules(source: str) -> frozenset[str]:
    """The dotted names a Python source imports, at module level or inside functions: `import
    a.b` gives a.b, `from a.b import c` gives a.b and a.b.c (c may be a submodule).  Relative
    imports are left out (sim/ and theory/ import absolutely); a source that does not parse
    gives nothing (its own digest still keys it).  Kept per source text: a process parses each
    file once, however many modules reach it."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(out)


def _module_files(name: str, is_file: Callable[[str], bool]) -> list[str]:
    """The files (relative to the checkout, with '/') that importing the module `name` of
    sim/ or theory/ executes: each package's __init__.py on the way and the module itself."""
    parts = name.split(".")
    if parts[0] not in CODE_TREES:
        return []
    out = []
    for i in range(1, len(parts) + 1):
        base = "/".join(parts[:i])
        for rel in (base + "/__init__.py", base + ".py"):
            if is_file(rel):
                out.append(rel)
                break
        else:
            break  # not a module (a name imported from its parent): nothing further down
    return out


def code_closure(starts, read: Callable[[str], str | None]) -> frozenset[str]:
    """The sim/ and theory/ files the Python sources `starts` reach through their imports,
    followed transitively, with ALWAYS_REACHED and what it imports (paths relative to the
    checkout; `read(rel)` is a file's text, None where there is no such file).  What a run can
    execute of sim/ and theory/: a module it does not reach is not part of its code version, so
    a new paper's simulator (or an edit of another paper's) leaves the runs and README stamps of
    the papers that never import it as they are."""
    texts: dict = {}

    def text(rel):
        if rel not in texts:
            texts[rel] = read(rel)
        return texts[rel]

    seen = {rel for rel in ALWAYS_REACHED if text(rel) is not None}
    todo = [*starts, *seen]
    while todo:
        src = text(todo.pop())
        if src is None:
            continue
        for name in imported_modules(src):
            for rel in _module_files(name, lambda r: text(r) is not None):
                if rel not in seen:
                    seen.add(rel)
                    todo.append(rel)
    return frozenset(seen)


def _read_checkout(rel: str) -> str | None:
    """The text of the checkout's file `rel` (an absolute path is read where it is); None where
    there is no such file."""
    return _read_file(str(ROOT / rel))


@functools.lru_cache(maxsize=None)
def _read_file(path: str) -> str | None:
    """A file's text, read once per process (as _file_digest: the code does not change under a
    running process); None where there is no such file."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:  # no such file (or a folder)
        return None


def _package_inputs(pkg: Path) -> list[Path]:
    """A paper package's shared modules and data files (calibration tables read by its runs):
    everything but its claim files, figures.py and the claims' histories."""
    return [p for p in sorted([*pkg.glob("*.py"), *pkg.glob("*.json")])
            if not p.name.startswith("test_") and p.name != "figures.py"
            and p.name not in NOT_RUN_INPUTS]


@functools.lru_cache(maxsize=None)
def _module_digest(module: str) -> str:
    """The code a function of `module` may run: the sim/ and theory/ modules that its file and
    its paper package's shared modules reach through their imports (`code_closure`), the
    run-relevant harness modules, its paper package's shared (non-claim, non-figure) modules and
    data files, and its own file."""
    h = hashlib.sha1()
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    own = Path(path).resolve() if path else None
    inputs = []
    if own is not None and own.parent.parent == ROOT / "properties":  # a paper package
        inputs = _package_inputs(own.parent)
    # absolute paths (a module outside the checkout, a conjecture file, is read where it is)
    starts = [str(p) for p in [*inputs, own] if p is not None and p.suffix == ".py"]
    for rel in sorted(code_closure(starts, _read_checkout)):
        h.update(rel.encode())
        h.update(_file_digest(str(ROOT / rel)).encode())
    for name in _SHARED_HARNESS:
        h.update(_file_digest(str(ROOT / "properties" / name)).encode())
    for p in inputs:
        h.update(p.name.encode())
        h.update(_file_digest(str(p)).encode())
    if own is not None:
        h.update(_file_digest(str(own)).encode())
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
# The key that signs the entries
# --------------------------------------------------------------------------------------------
KEY_ENV = "THEOREM_AUDIT_CACHE_KEY_FILE"
KEY_BYTES = 32
_KEYS: dict = {}  # key file path -> its bytes (read once per process)


def key_file() -> Path:
    """$THEOREM_AUDIT_CACHE_KEY_FILE, else $XDG_CONFIG_HOME/theorem-audit/cache.key
    (~/.config/theorem-audit/cache.key)."""
    f = os.environ.get(KEY_ENV, "")
    if f:
        return Path(f).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "theorem-audit" / "cache.key"


def _signing_key() -> bytes:
    """The bytes of the key file, created on first use (32 random bytes, mode 0600; concurrent
    workers agree on one: it is linked into place, never overwritten).  OSError when it cannot
    be read or created, or holds fewer than 32 bytes."""
    path = key_file()
    k = _KEYS.get(path)
    if k is not None:
        return k
    if not path.exists():
        _create_key(path)
    k = path.read_bytes()
    if len(k) < KEY_BYTES:
        raise OSError(f"key file {path} holds {len(k)} bytes, fewer than {KEY_BYTES}")
    _KEYS[path] = k
    return k


def _create_key(path: Path) -> None:
    import secrets

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # complete when it appears; a key another worker made stays
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# Storage: one signed file per entry
# --------------------------------------------------------------------------------------------
STORE = "signed"  # <cache_dir>/signed/<2 hex>/<sha256 of the entry's key>/output.pkl
MAGIC = b"theorem-audit-cache 1\n"
_DIGEST_HEX = 64
LEGACY = "joblib"  # the unsigned joblib.Memory store of earlier versions: never read, cleared


def _entry_path(location: Path, key: str) -> Path:
    name = hashlib.sha256(key.encode()).hexdigest()
    return location / STORE / name[:2] / name / "output.pkl"


def _sign(secret: bytes, key: str, payload: bytes) -> str:
    k = key.encode()
    msg = MAGIC + len(k).to_bytes(8, "big") + k + payload  # the key, length-prefixed, then data
    return hmac.new(secret, msg, hashlib.sha256).hexdigest()


def _read(path: Path, key: str, secret: bytes):
    """(True, value) for a verified entry; (False, None) for none; (False, reason) for an entry
    that fails its check.  Nothing is unpickled before its digest matches."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False, None
    head = len(MAGIC)
    if not data.startswith(MAGIC) or len(data) < head + _DIGEST_HEX + 1 \
            or data[head + _DIGEST_HEX:head + _DIGEST_HEX + 1] != b"\n":
        return False, "no digest"
    digest, payload = data[head:head + _DIGEST_HEX], data[head + _DIGEST_HEX + 1:]
    if not hmac.compare_digest(digest, _sign(secret, key, payload).encode()):
        return False, "digest mismatch (altered, swapped, or signed with another key)"
    try:
        value = pickle.loads(payload)
    except Exception as e:  # noqa: BLE001 -- signed by us but unreadable now: recompute
        return False, f"signed but not loadable ({type(e).__name__}: {e})"
    try:  # the last use, for reduce_size: the access time, set here (mounts may not keep it);
        os.utime(path, ns=(time.time_ns(), os.stat(path).st_mtime_ns))  # the mtime stays
    except OSError:
        pass
    return True, value


def _write(path: Path, key: str, secret: bytes, value) -> None:
    """Store value atomically: a temporary file in the entry's directory, fsync, os.replace (a
    reader sees the old entry or the new one, never part of one)."""
    import secrets

    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    tmp = path.with_name(f".tmp-{os.getpid()}-{secrets.token_hex(6)}")
    for attempt in (0, 1):  # reduce_size may remove the entry's emptied directory meanwhile
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
            break
        except FileNotFoundError:
            if attempt:
                raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + _sign(secret, key, payload).encode() + b"\n")
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _compute(key: str, fn, args, kwargs):
    STATS["misses"] += 1
    return fn(*args, **kwargs)


def call(key: str, fn: Callable, args: tuple = (), kwargs: dict | None = None):
    """fn(*args, **kwargs), stored under `key` (the caller's full digest) when the cache is
    enabled.  A cache that cannot be written (read-only, full disk) warns and computes.  An entry
    whose digest does not match (altered, swapped, truncated, foreign) is never unpickled: it is
    recomputed and overwritten, with one warning naming it."""
    kwargs = kwargs or {}
    if not enabled():
        STATS["uncached"] += 1
        return fn(*args, **kwargs)
    location = cache_dir()
    try:
        location.mkdir(parents=True, exist_ok=True)
        secret = _signing_key()
        path = _entry_path(location, key)
        found, value = _read(path, key, secret)
    except OSError as e:
        warnings.warn(f"run cache at {location} unusable ({e}); computing without it")
        STATS["uncached"] += 1
        return fn(*args, **kwargs)
    if found:
        STATS["hits"] += 1
        return value
    with _computing(location, path):
        # another process (an xdist worker, a shard) may have stored it while this one waited
        # for the lock: read again before computing, so a run is computed once across processes
        if value is None:
            try:
                found, value = _read(path, key, secret)
            except OSError:
                found, value = False, None
            if found:
                STATS["hits"] += 1
                return value
        if value is not None:
            STATS["rejected"] += 1
            warnings.warn(f"run cache entry {path} (key {key}) rejected: {value}; recomputing "
                          "and overwriting it")
        out = _compute(key, fn, args, kwargs)
        try:
            _write(path, key, secret, out)
        except Exception as e:  # noqa: BLE001 -- OSError (full disk, read-only), unpicklable
            warnings.warn(f"run cache at {location}: could not store {path.name} "
                          f"({type(e).__name__}: {e}); the result is not cached")
    return out


@contextlib.contextmanager
def _computing(location: Path, path: Path):
    """An exclusive lock (fcntl.flock on `<entry>.lock`) while one process computes an entry:
    a second process that misses the same entry waits, then reads what the first stored,
    instead of computing it again (two xdist workers asking for one shared run).  Keys are
    full digests, so nested runs take different locks (no cycle without infinite recursion);
    the lock goes with its process if that dies.  No lock where flock is missing or the lock
    file cannot be made (the run is then computed without one)."""
    try:
        import fcntl
        locks = location / "locks"  # apart from the entries (their sizes and checks ignore it)
        locks.mkdir(exist_ok=True)
        f = open(locks / (path.parent.name + ".lock"), "a")
    except (ImportError, OSError):
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def key_of(fn: Callable, args: tuple, kwargs: dict, *extra) -> str:
    from properties.digest import fingerprint

    h = hashlib.sha1()
    h.update(code_version(fn.__module__).encode())
    h.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    h.update(fingerprint((args, kwargs)).encode())
    for x in extra:
        h.update(fingerprint(x).encode())
    return h.hexdigest()


# callables (name, output) told of every shared run's result while a world runs (the harness
# compares an alternative's output with what the claim's world computed: properties.world)
OBSERVERS: list = []


def run_cache(maxsize: int | None = 8):
    """Decorator for a shared run: `functools.lru_cache(maxsize)` in memory (callers must not
    modify what it returns) over the on-disk cache.  `.cache_clear()` clears the memory level.

    For a run that several claims (or several properties, alternatives and figures) use, in a
    paper's `properties/<paper>/runs.py`:

        @run_cache(maxsize=8)
        def train_wv(seed: int, S: int = 1, steps: int | None = None) -> np.ndarray:
            ...                               # seeds -> make_generator(seed), never global RNG

    - Arguments must be hashable, as for `functools.lru_cache`: ints, floats, strings, None,
      tuples of them, frozen dataclasses.  A list, dict or numpy array raises
      `TypeError: unhashable type` (a torch tensor hashes by identity: each new tensor is a new
      memory entry); pass a tuple (`tuple(seeds)`) or the numbers that build the array, and
      build it inside.
    - On disk a call is keyed by its bound arguments with the defaults applied (`f(0)` and
      `f(0, 1)` are one run when 1 is the default) and by the code version (the sim/ and theory/
      modules it reaches by import, the harness modules runs depend on, the paper's shared
      modules, this file) and environment
      (library versions, device, profile, size): an edit of the code is a miss, never a stale
      hit.  A result that does not pickle is kept in memory only (with a warning).
    - The value returned is shared by every caller (memory level) and stored as it was returned
      (disk level): treat it as read-only (copy before changing it).
    - `maxsize` bounds the in-memory level only (None: unbounded); the disk level is bounded by
      the audit's `--cache-limit`.  THEOREM_AUDIT_NO_CACHE=1 (`--no-cache`) keeps the memory
      level only.
    - While a property runs in a world, the harness is told of every result (it compares an
      alternative's run with the claim's: a null that returns the claim's own run is caught)."""

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

        lru = functools.lru_cache(maxsize=maxsize)(on_disk)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            out = lru(*args, **kwargs)
            if OBSERVERS:  # the harness notes what a world's shared runs returned
                OBSERVERS[-1](f"{fn.__module__}.{fn.__qualname__}", out)
            return out

        cached.__wrapped__ = on_disk  # world._untraced_codes: calls under it are not traced
        cached.cache_clear, cached.cache_info = lru.cache_clear, lru.cache_info
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


def _entries(location: Path) -> list:
    """(last use, last write, size, path) of every file in the store, temporary files included."""
    out = []
    for p in (location / STORE).glob("??/*/*"):
        try:
            st = p.stat()
        except OSError:  # removed meanwhile
            continue
        out.append((max(st.st_atime, st.st_mtime), st.st_mtime, st.st_size, p))
    return out


STALE_TMP_S = 3600  # a temporary file older than this is a dead writer's


def reduce_size(bytes_limit: int | str) -> None:
    """Bound the cache on disk: least recently used entries go until the store holds at most
    bytes_limit bytes (an int, or joblib's '4G', '500M', '50K').  Temporary files of writers dead
    for an hour go first; a live writer's are counted but left."""
    if not enabled():
        return
    if isinstance(bytes_limit, str):
        from joblib.disk import memstr_to_bytes
        bytes_limit = memstr_to_bytes(bytes_limit)
    location = cache_dir()
    try:
        now, items = time.time(), []
        for item in _entries(location):
            if item[3].name.startswith(".tmp-") and now - item[1] > STALE_TMP_S:
                item[3].unlink(missing_ok=True)
            else:
                items.append(item)
        size = sum(i[2] for i in items)
        for _, _, nbytes, p in sorted(items, key=lambda i: i[0]):
            if size <= bytes_limit:
                break
            if not p.name.startswith(".tmp-"):
                p.unlink(missing_ok=True)
                size -= nbytes
                try:
                    p.parent.rmdir()  # the entry's directory, unless a writer is in it
                except OSError:
                    pass
    except OSError as e:
        warnings.warn(f"run cache at {location}: could not reduce its size ({e})")


def clear() -> None:
    """Remove every stored result (and the unsigned store of earlier versions)."""
    import shutil

    for sub in (STORE, LEGACY):
        shutil.rmtree(cache_dir() / sub, ignore_errors=True)
