"""The resolution of a verdict: the smallest relative perturbation of the prediction each check
rejects.  A claim that declares closed forms of theory/ (its `prediction` names them) has those
functions themselves perturbed, wherever the property body calls them (the module attributes
that hold them, its re-exports and the claim modules that imported them by name, are swapped for
the perturbed function while a perturbation world runs); a claim that declares none has its
prediction slots scaled (`World.prediction`).  Split from properties.world, which re-exports
every name."""

from __future__ import annotations

import contextlib
import dataclasses
import fractions
import functools
import os

import numpy as np

from properties import check
from properties.check import PropertyError

__all__ = ["NotANumber", "RESOLUTION_ENV", "RESOLUTION_GRID", "declared_closed_forms",
           "perturbation_label", "resolution_enabled", "scale_prediction"]


class NotANumber(TypeError):
    """A prediction that a relative perturbation cannot scale (an ordering, a string)."""


class _OutOfDomain(Exception):
    """A scaled prediction the body rejects as input (a ValueError: a correlation past 1)."""


def scale_prediction(x, factor: float, slot: str = "prediction"):
    """x with every number in it multiplied by `factor` (numbers, numpy arrays, torch tensors,
    and tuples, lists, dicts, named tuples and dataclasses of them); NotANumber otherwise."""
    if isinstance(x, bool) or x is None or isinstance(x, (str, bytes)):
        raise NotANumber(f"prediction slot {slot!r} returns {type(x).__name__} "
                         f"{x!r:.40}: not a number")
    if isinstance(x, fractions.Fraction):  # an exact rational stays exact
        return x * fractions.Fraction(factor)
    if isinstance(x, (int, float, complex, np.number)):
        return x * factor
    if type(x).__module__.startswith("sympy"):  # an expression or matrix: x factor, exactly
        import sympy
        if isinstance(x, (sympy.Basic, sympy.MatrixBase)):
            return x * sympy.nsimplify(factor, rational=True)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fiuc":
            raise NotANumber(f"prediction slot {slot!r} returns an array of {x.dtype}")
        return x * factor
    if type(x).__module__.startswith("torch"):
        import torch
        if isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex()):
            return x * factor
        raise NotANumber(f"prediction slot {slot!r} returns {type(x).__name__}")
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(scale_prediction(v, factor, slot) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(scale_prediction(v, factor, slot) for v in x)
    if isinstance(x, dict):
        return {k: scale_prediction(v, factor, slot) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return dataclasses.replace(x, **{f.name: scale_prediction(getattr(x, f.name), factor, slot)
                                         for f in dataclasses.fields(x) if f.init})
    raise NotANumber(f"prediction slot {slot!r} returns {type(x).__name__}: not a number")


# The resolution: every prediction multiplied and divided by 1 + delta, delta over this grid
# (to 1 + delta = 10: a bound loose by a constant factor is resolved to that factor; dividing
# instead of x (1 - delta) keeps the prediction's sign, so +-100% never zeroes it).
RESOLUTION_GRID = (1e-9, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 9.0)


def perturbation_label(delta: float) -> str:
    """How the report writes one grid step: 'x (1 +- 0.01)' below 30%, 'x or / 2' above."""
    return f"x (1 +- {delta:g})" if delta < 0.3 else f"x or / {1 + delta:g}"


RESOLUTION_ENV = "THEOREM_AUDIT_RESOLUTION"  # "0": skip the perturbation runs (a quick loop)


def resolution_enabled() -> bool:
    return os.environ.get(RESOLUTION_ENV, "1") != "0"


def declared_closed_forms(claim) -> list[str]:
    """The functions of theory/ the claim declares in its `prediction` (dotted names)."""
    from properties.evidence import declared_functions
    return declared_functions(claim.prediction)[0] if claim is not None else []


def _closed_form_sites(names: list[str]) -> list[tuple[str, list]]:
    """Per declared function of theory/, every module attribute that holds it (the module that
    defines it, its re-exports, and the claim modules that imported it by name): where the
    harness swaps in the perturbed function.  One group per function: each closed form is
    perturbed on its own (an identity between two declared forms is no identity if both are
    scaled alike)."""
    import importlib
    import sys

    fns = []
    for n in names:
        mod, _, attr = n.rpartition(".")
        fns.append((n, getattr(importlib.import_module(mod), attr)))
    modules = [getattr(m, "__dict__", None) for m in list(sys.modules.values())]
    groups = []
    for n, f in fns:
        sites = [(d, attr, val) for d in modules if isinstance(d, dict)
                 for attr, val in list(d.items()) if val is f]
        if sites and not any(f is g for _, gs in groups for _, _, g in gs):
            groups.append((n, sites))
    return groups


@contextlib.contextmanager
def _perturbing(sites, factor: float):
    """The declared closed forms return their value x factor while the block runs."""
    def scaled(fn):
        @functools.wraps(fn)
        def perturbed(*args, **kwargs):
            return scale_prediction(fn(*args, **kwargs), factor,
                                    f"{fn.__module__}.{fn.__qualname__}")
        return perturbed

    wrapped = {}
    for d, attr, fn in sites:
        d[attr] = wrapped.setdefault(id(fn), scaled(fn))
    try:
        yield
    finally:
        for d, attr, fn in sites:
            d[attr] = fn


def _moved(vals, base) -> bool:
    """Did a check's values move between two worlds by more than round-off (a millionth of its
    tolerance for an error, of the value's own size for a score)?"""
    if base is None or len(vals) != len(base):
        return True
    for v, b in zip(vals, base):
        if isinstance(v, str) or isinstance(b, str):
            if v != b:
                return True
        elif abs(v - b) > 1e-6 * max(1.0, abs(b)):
            return True
    return False


def _proportional(vals, base, factor: float) -> bool:
    """The check's values moved exactly with the perturbation (each x factor or / factor, or
    0 stayed 0): the checked quantity is homogeneous in the closed form (an identity whose two
    sides both scale, an invariant), so a relative perturbation is no alternative for it."""
    if not base or len(vals) != len(base):
        return False
    ok = True
    for v, b in zip(vals, base):
        if isinstance(v, str) or isinstance(b, str):
            return False
        if b == 0:
            ok &= abs(v) <= 1e-300
        else:
            r = v / b
            ok &= (abs(r - factor) <= 1e-6 * factor or abs(r - 1 / factor) <= 1e-6 / factor
                   or abs(abs(r) - factor) <= 1e-6 * factor)
    return bool(ok)


def _check_values(sink: check.Sink | None) -> dict:
    return {} if sink is None else {k: tuple(v) for k, v in sink.values.items()}


def _resolution_of_draw(inner, args, kwargs, claim_id, memo, draw_kwargs, reference=None,
                        sites=None):
    """Per check and per side, the smallest delta of RESOLUTION_GRID at which x (1 + delta)
    (up) and / (1 + delta) (down) of the prediction is rejected by that check on this draw
    (inf where not even the largest is): each declared closed form of theory/ on its own
    (`sites`, one group per function, wherever the body calls it), a check taking the finest
    over the forms it depends on; where the claim declares none, every prediction slot.  A
    check whose values do not move at the largest perturbation of any form does not depend on
    the prediction (`independent`); one whose values move exactly with it is homogeneous in it
    (`scale_free`).  Returns a dict, or a string saying why a relative perturbation does not
    apply."""
    groups = list(sites or [(None, None)])
    base = _check_values(reference)
    try:
        found = [_resolution_of_group(inner, args, kwargs, claim_id, memo, draw_kwargs,
                                      reference, grp, base) for _, grp in groups]
    except (NotANumber, _OutOfDomain) as e:
        return str(e)
    inf = float("inf")
    checks = set(base).union(*(set(g["up"]) | set(g["down"]) for g in found))
    up = {c: min(g["up"].get(c, inf) for g in found) for c in checks}
    down = {c: min(g["down"].get(c, inf) for g in found) for c in checks}
    rejected = {c for c in checks if up[c] < inf or down[c] < inf}
    moved = set().union(*(g["moved"] for g in found))
    return {"mode": "closed form" if sites else "slot", "checks": sorted(checks),
            "functions": [n for n, _ in groups if n],
            "up": {c: d for c, d in up.items() if d < inf},
            "down": {c: d for c, d in down.items() if d < inf},
            "scale_free": sorted(c for c in moved - rejected
                                 if all(c in g["scale_free"] or c not in g["moved"]
                                        for g in found)),
            "independent": sorted(checks - rejected - moved)}


def _resolution_of_group(inner, args, kwargs, claim_id, memo, draw_kwargs, reference, sites,
                         base) -> dict:
    """One closed form (or, with `sites` None, every prediction slot) perturbed over the grid:
    per check the smallest rejected delta on each side, the checks that moved, and those that
    moved exactly with it (homogeneous)."""
    declared = bool(sites)

    def probe(factor):
        """The checks that rejected x factor, and every check's values there."""
        from properties.world import World, _soft

        pw = World(claim_id, None, memo, draw_kwargs, perturb=factor)
        pw.perturb_slots = not declared
        ctx = _perturbing(sites, factor) if declared else contextlib.nullcontext()
        try:
            with ctx:
                _, by, _, _ = _soft(inner, args, kwargs, pw, f"the prediction x {factor:g}",
                                    reference)
        except PropertyError as e:
            cause = e.__cause__
            if isinstance(cause, NotANumber):
                raise cause
            msg = (f"the body cannot use a scaled prediction ({type(cause).__name__}: "
                   f"{str(cause)[:120]})")
            if isinstance(cause, ValueError):  # the scaled prediction left its domain
                raise _OutOfDomain(msg) from None
            raise NotANumber(msg) from None
        return set(by), _check_values(pw.last_sink)

    grid = RESOLUTION_GRID
    scale_free: set = set()

    def side(up: bool) -> tuple[dict, set]:
        """check -> smallest rejected grid delta (inf: not at the largest); and the checks
        whose values moved at the largest perturbation.  Rejection grows with delta: one
        bisection per check, all checks read off every probe."""
        def factor(i):
            return 1 + grid[i] if up else 1 / (1 + grid[i])
        top = len(grid) - 1
        try:
            failed, vals = probe(factor(top))
        except _OutOfDomain:  # walk up from the finest delta until the domain ends
            out, moved = {}, set()
            for i in range(top):
                try:
                    failed, vals = probe(factor(i))
                except _OutOfDomain:
                    break
                moved |= {c for c, v in vals.items() if _moved(v, base.get(c))}
                for c in failed:
                    out.setdefault(c, grid[i])
            return out, moved
        moved = {c for c, v in vals.items() if _moved(v, base.get(c))}
        scale_free.update(c for c in moved - failed
                          if _proportional(vals[c], base.get(c), factor(top)))
        lo = {c: -1 for c in failed}
        hi = {c: top for c in failed}
        while True:
            open_ = [c for c in failed if hi[c] - lo[c] > 1]
            if not open_:
                break
            c0 = max(open_, key=lambda c: hi[c] - lo[c])
            mid = (lo[c0] + hi[c0]) // 2
            got, _ = probe(factor(mid))
            for c in open_:
                if lo[c] < mid < hi[c]:
                    if c in got:
                        hi[c] = mid
                    else:
                        lo[c] = mid
        return {c: grid[hi[c]] for c in failed}, moved

    up, moved_up = side(True)
    down, moved_down = side(False)
    return {"up": up, "down": down, "moved": moved_up | moved_down,
            "scale_free": scale_free}
