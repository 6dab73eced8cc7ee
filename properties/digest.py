"""Stable digests of a draw's arguments: the identity of a distinct draw, the per-draw memo of
pure simulations and the on-disk key of a run (properties.cache).  A leaf module: numpy and
hashlib only (torch is looked at only when a value is a torch object)."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

__all__ = ["fingerprint"]


def fingerprint(obj, _depth: int = 0) -> str:
    """A stable digest of a draw's arguments (numbers, strings, containers, arrays, tensors,
    generators, dataclasses).  Falls back to repr."""
    h = hashlib.sha1()

    def feed(o, d):
        if d > 8:
            h.update(b"<deep>")
            return
        if o is None or isinstance(o, (bool, int, str, bytes)):
            h.update(f"{type(o).__name__}:{o!r};".encode())
        elif isinstance(o, float):
            h.update(f"f:{o!r};".encode())
        elif isinstance(o, (list, tuple)):
            h.update(f"{type(o).__name__}[".encode())
            for x in o:
                feed(x, d + 1)
            h.update(b"]")
        elif isinstance(o, dict):
            h.update(b"{")
            for k in sorted(o, key=repr):
                feed(k, d + 1)
                feed(o[k], d + 1)
            h.update(b"}")
        elif isinstance(o, np.ndarray):
            h.update(f"nd{o.shape}{o.dtype};".encode())
            h.update(np.ascontiguousarray(o).tobytes())
        elif type(o).__module__.startswith("torch"):
            import torch
            if isinstance(o, torch.Tensor):
                t = o.detach().cpu().contiguous()
                h.update(f"t{tuple(t.shape)}{t.dtype};".encode())
                h.update(t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.float().numpy().tobytes())
            elif isinstance(o, torch.Generator):
                h.update(b"gen;")
                h.update(o.get_state().numpy().tobytes())
            else:
                h.update(repr(o).encode())
        elif isinstance(o, np.random.Generator):
            h.update(b"npgen;")
            feed(o.bit_generator.state, d + 1)
        elif isinstance(o, np.random.RandomState):
            h.update(b"nprs;")
            feed(o.get_state(legacy=False), d + 1)
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            h.update(type(o).__qualname__.encode())
            for f in dataclasses.fields(o):
                feed(f.name, d + 1)
                feed(getattr(o, f.name), d + 1)
        elif type(o).__name__ == "DataObject" and hasattr(o, "conjecture_data"):
            # st.data(): the draw is what was drawn from it (known after the body ran)
            h.update(b"data:")
            feed(tuple(getattr(o.conjecture_data, "choices", ())), d + 1)
        elif callable(o):
            h.update(f"fn:{getattr(o, '__module__', '')}.{getattr(o, '__qualname__', repr(o))};".encode())
        else:
            h.update(repr(o).encode())

    feed(obj, _depth)
    return h.hexdigest()
