"""properties.cache: a run cache that cannot lie (issue 22).

Every entry is signed (HMAC-SHA256 over its pickled bytes and its key, under the key file); the
digest is checked before anything is unpickled.  An altered, truncated, swapped or foreign entry
is a miss: recomputed, overwritten, named in exactly one warning -- never a wrong value, never
code run.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from properties import cache

ROOT = Path(__file__).resolve().parents[1]
CALLS: list = []


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.DIR_ENV, str(tmp_path / "runs"))
    monkeypatch.setenv(cache.KEY_ENV, str(tmp_path / "keys" / "cache.key"))
    monkeypatch.delenv(cache.OFF_ENV, raising=False)
    CALLS.clear()
    return tmp_path / "runs"


def value_of(name: str):
    """A small synthetic run: a deterministic array per name, counted in CALLS."""
    CALLS.append(name)
    seed = int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)
    return {"name": name, "x": np.random.default_rng(seed).standard_normal(64)}


def run(name: str):
    """cache.call under the key 'k-<name>', recording the warnings it gives."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = cache.call(f"k-{name}", value_of, (name,))
    return out, [str(x.message) for x in w]


def path_of(name: str) -> Path:
    return cache._entry_path(cache.cache_dir(), f"k-{name}")


def same(a, b) -> bool:
    return a["name"] == b["name"] and np.array_equal(a["x"], b["x"])


def test_an_entry_is_signed_and_read_back(store):
    a, w1 = run("a")
    written = path_of("a").stat().st_mtime_ns
    b, w2 = run("a")
    assert same(a, b) and CALLS == ["a"] and not w1 and not w2
    assert path_of("a").name == "output.pkl" and path_of("a").stat().st_mtime_ns == written
    data = path_of("a").read_bytes()
    head = len(cache.MAGIC)
    assert data.startswith(cache.MAGIC)
    payload = data[head + 65:]
    key = cache.key_file().read_bytes()
    msg = cache.MAGIC + len(b"k-a").to_bytes(8, "big") + b"k-a" + payload
    assert data[head:head + 64].decode() == hmac.new(key, msg, hashlib.sha256).hexdigest()


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), xor=st.integers(1, 255), n=st.integers(1, 4))
def test_altered_bytes_are_recomputed_with_one_warning(store, where, xor, n):
    """Overwrite n bytes anywhere in a stored entry (header, digest or pickled data): the next
    read recomputes the same value, overwrites the entry and warns once, naming it."""
    name = f"alter-{where}-{xor}-{n}"
    first, _ = run(name)
    p = path_of(name)
    data = bytearray(p.read_bytes())
    i = int(where * len(data))
    for j in range(i, min(i + n, len(data))):
        data[j] ^= xor
    p.write_bytes(bytes(data))
    CALLS.clear()
    again, w = run(name)
    assert same(again, first) and CALLS == [name]
    assert len(w) == 1 and str(p) in w[0] and f"k-{name}" in w[0] and "rejected" in w[0]
    third, w = run(name)  # overwritten: a clean hit
    assert same(third, first) and CALLS == [name] and not w


@pytest.mark.parametrize("garble", ["empty", "truncated", "no header", "digest only",
                                    "bad separator", "digest of other bytes"])
def test_a_missing_or_garbled_digest_is_a_miss(store, garble):
    first, _ = run("g")
    p = path_of("g")
    data = p.read_bytes()
    head = len(cache.MAGIC)
    new = {"empty": b"",
           "truncated": data[:len(data) // 2],
           "no header": data[head + 65:],
           "digest only": data[:head + 65],
           "bad separator": data[:head + 64] + b" " + data[head + 65:],
           "digest of other bytes": data[:head] + hashlib.sha256(data).hexdigest().encode()
           + data[head + 64:]}[garble]
    p.write_bytes(new)
    CALLS.clear()
    again, w = run("g")
    assert same(again, first) and CALLS == ["g"] and len(w) == 1 and str(p) in w[0]


def test_swapped_entries_are_both_recomputed(store):
    a, _ = run("a")
    b, _ = run("b")
    pa, pb = path_of("a"), path_of("b")
    da, db = pa.read_bytes(), pb.read_bytes()
    pa.write_bytes(db)
    pb.write_bytes(da)  # two valid entries, each under the other's name
    CALLS.clear()
    a2, wa = run("a")
    b2, wb = run("b")
    assert same(a2, a) and same(b2, b) and CALLS == ["a", "b"]
    assert len(wa) == 1 and str(pa) in wa[0] and len(wb) == 1 and str(pb) in wb[0]
    assert same(run("a")[0], a) and same(run("b")[0], b) and CALLS == ["a", "b"]


class Planted:
    """A foreign pickle: unpickling it creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("form", ["raw pickle", "forged header", "signed with another key"])
def test_a_planted_pickle_is_never_unpickled(store, tmp_path, form):
    marker = tmp_path / "marker"
    bomb = pickle.dumps(Planted(marker))
    pickle.loads(bomb)  # the payload works: unpickling it creates the marker
    assert marker.exists()
    marker.unlink()
    run("p")
    p = path_of("p")
    other = b"\x01" * 32
    msg = cache.MAGIC + len(b"k-p").to_bytes(8, "big") + b"k-p" + bomb
    planted = {"raw pickle": bomb,
               "forged header": cache.MAGIC + b"0" * 64 + b"\n" + bomb,
               "signed with another key": cache.MAGIC
               + hmac.new(other, msg, hashlib.sha256).hexdigest().encode() + b"\n" + bomb}[form]
    p.write_bytes(planted)
    CALLS.clear()
    out, w = run("p")
    assert not marker.exists() and CALLS == ["p"] and same(out, value_of("p"))
    assert len(w) == 1 and str(p) in w[0]
    assert p.read_bytes() != planted


def test_the_key_file_is_made_once_with_mode_0600(tmp_path, monkeypatch):
    monkeypatch.delenv(cache.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv(cache.DIR_ENV, str(tmp_path / "runs"))
    monkeypatch.delenv(cache.OFF_ENV, raising=False)
    kf = tmp_path / "config" / "theorem-audit" / "cache.key"
    assert cache.key_file() == kf and not kf.exists()
    run("k")
    assert kf.exists() and len(kf.read_bytes()) == cache.KEY_BYTES
    assert stat.S_IMODE(kf.stat().st_mode) == 0o600
    assert stat.S_IMODE(kf.parent.stat().st_mode) & 0o077 == 0
    key = kf.read_bytes()
    cache._KEYS.clear()  # a new process: the file is read, not made again
    CALLS.clear()
    run("k")
    assert kf.read_bytes() == key and CALLS == []
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert cache.key_file() == Path.home() / ".config" / "theorem-audit" / "cache.key"


def test_a_short_key_file_is_unusable_and_computes(store, monkeypatch, tmp_path):
    bad = tmp_path / "short.key"
    bad.write_bytes(b"too short")
    monkeypatch.setenv(cache.KEY_ENV, str(bad))
    with pytest.warns(UserWarning, match="unusable.*fewer than 32"):
        out = cache.call("k-short", value_of, ("short",))
    assert CALLS == ["short"] and out["name"] == "short"
    assert not list((store / cache.STORE).rglob("*"))  # nothing stored unsigned


CHILD = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("always")
    from properties import cache
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = cache.call(sys.argv[1], lambda: "computed by " + sys.argv[2])
    print(json.dumps({"out": out, "hits": cache.STATS["hits"], "misses": cache.STATS["misses"],
                      "warnings": [str(x.message) for x in w]}))
""")


def child(key: str, who: str, env: dict) -> dict:
    import json
    r = subprocess.run([sys.executable, "-c", CHILD, key, who], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_shared_key_file_gives_hits_in_another_process_and_another_key_does_not(store,
                                                                                  tmp_path):
    assert cache.call("k-shared", lambda: "computed by parent") == "computed by parent"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    got = child("k-shared", "child", env)  # the same key file (the env var): a hit
    assert got == {"out": "computed by parent", "hits": 1, "misses": 0, "warnings": []}
    env[cache.KEY_ENV] = str(tmp_path / "stranger.key")  # the same directory, another key
    got = child("k-shared", "stranger", env)
    assert got["out"] == "computed by stranger" and got["misses"] == 1
    assert len(got["warnings"]) == 1 and "rejected" in got["warnings"][0]
    cache._KEYS.clear()
    with warnings.catch_warnings(record=True) as w:  # and the stranger's entry is no hit here
        warnings.simplefilter("always")
        assert cache.call("k-shared", lambda: "computed by parent") == "computed by parent"
    assert len(w) == 1


CONCURRENT = textwrap.dedent("""
    import sys
    from properties import cache
    for i in range(20):
        v = cache.call(f"k-{i % 4}", lambda: ("value", i % 4, b"x" * 50000))
        assert v == ("value", i % 4, b"x" * 50000), v
    print(cache.STATS["rejected"])
""")


def test_concurrent_processes_agree_on_one_key_and_never_read_a_torn_entry(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{cache.DIR_ENV: str(tmp_path / "runs"),
               "XDG_CONFIG_HOME": str(tmp_path / "config")})
    env.pop(cache.KEY_ENV, None)
    env.pop(cache.OFF_ENV, None)
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert [o[0].strip() for o in outs] == ["0", "0", "0"]  # one key: no entry rejected
    assert len(list((tmp_path / "config" / "theorem-audit").iterdir())) == 1  # no stray tmp key
    files = [p for p in (tmp_path / "runs" / cache.STORE).rglob("*") if p.is_file()]
    assert len(files) == 4 and not [p for p in files if p.name.startswith(".tmp-")]


def test_reduce_size_drops_the_least_recently_used_and_clear_empties(store):
    for name in ("old", "mid", "new"):
        run(name)
    for t, name in enumerate(("old", "mid", "new")):
        os.utime(path_of(name), (1e9 + t, 1e9 + t))
    run("old")  # a hit: now the most recently used
    size = path_of("old").stat().st_size
    cache.reduce_size(2 * size + size // 2)
    assert path_of("old").exists() and path_of("new").exists() and not path_of("mid").exists()
    assert 512 < size < 1024
    cache.reduce_size("1K")  # joblib's notation: room for one entry, the most recently used
    assert [p for p in (store / cache.STORE).rglob("*") if p.is_file()] == [path_of("old")]
    cache.reduce_size(0)
    assert not [p for p in (store / cache.STORE).rglob("*") if p.is_file()]
    run("a")
    (store / cache.LEGACY).mkdir()
    cache.clear()
    assert not (store / cache.STORE).exists() and not (store / cache.LEGACY).exists()
    CALLS.clear()
    run("a")
    assert CALLS == ["a"]


def test_reduce_size_removes_only_stale_temporary_files(store):
    run("a")
    d = path_of("a").parent
    stale, live = d / ".tmp-1-stale", d / ".tmp-2-live"
    stale.write_bytes(b"x")
    live.write_bytes(b"x")
    os.utime(stale, (1e9, 1e9))
    cache.reduce_size("4G")
    assert not stale.exists() and live.exists() and path_of("a").exists()


def test_an_unpicklable_result_warns_and_is_returned(store):
    with pytest.warns(UserWarning, match="not cached"):
        f = cache.call("k-lambda", lambda: (lambda: 1))
    assert f() == 1 and not [p for p in (store / cache.STORE).rglob("*") if p.is_file()]
