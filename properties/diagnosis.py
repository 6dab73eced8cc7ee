"""The diagnosis of a failing printed form (issue 38): on the first draws a claim's own form fails,
the property body runs again with each near miss of a declared closed form in its place
(`theory.mutate.mutations`: a constant x2 or x1/2, an exponent +-1/2 or +-1, an additive term
dropped or its sign flipped, a factor dropped or added, N read as N +- 1), and the report says
which of them the data accept.  A refutation that a near miss turns into a pass is worth a
second look at the encoding before it is reported against the paper.

Only closed forms that carry their sympy form (`theory.mutate.symbolic` or `with_sympy_form`)
take part; the runs are soft (no check raises) and read the draw's cached runs, so the cost is
that of the checks.  Split from properties.world, which calls `diagnose_draw`.
"""

from __future__ import annotations

import contextlib
import os

from properties.check import PropertyError

DIAGNOSE_DRAWS = 2     # the failing draws of a property the diagnosis runs on
MAX_MUTATIONS = 60     # per closed form (the first ones of theory.mutate.mutations' order)
DIAGNOSIS_ENV = "THEOREM_AUDIT_DIAGNOSIS"   # "0": skip the diagnosis


def diagnosis_enabled() -> bool:
    return os.environ.get(DIAGNOSIS_ENV, "1") != "0"


@contextlib.contextmanager
def _swapped(sites, replacement):
    for d, attr, _ in sites:
        d[attr] = replacement
    try:
        yield
    finally:
        for d, attr, fn in sites:
            d[attr] = fn


def diagnose_draw(inner, args, kwargs, claim_id, memo, draw_kwargs, groups) -> dict:
    """{closed form: {near miss: accepted on this draw}} for the declared closed forms (groups
    from `_closed_form_sites`) that carry a sympy form; forms without one are listed as None."""
    from properties.world import World, _soft
    from theory.mutate import mutated_function, mutations, sympy_form

    out: dict = {}
    for name, sites in groups or ():
        fn = sites[0][2]
        form = sympy_form(fn)
        if form is None:
            out[name] = None
            continue
        res = out.setdefault(name, {})
        for label, expr in mutations(*form)[:MAX_MUTATIONS]:
            try:
                g = mutated_function(fn, expr)
                pw = World(claim_id, None, memo, draw_kwargs, perturb=1.0)
                pw.perturb_slots = False
                with _swapped(sites, g):
                    outcome, _, _, _ = _soft(inner, args, kwargs, pw, f"near miss: {label}",
                                             None)
                res[label] = outcome == "survived"
            except (PropertyError, Exception):  # noqa: BLE001 -- a near miss the body cannot use
                res[label] = False
    return out


def merge(acc: dict, draw: dict) -> None:
    """Accumulate one draw's diagnosis: {form: {"tried": n draws, "accepted": {label: k}}}."""
    for name, res in draw.items():
        slot = acc.setdefault(name, {"draws": 0, "near_misses": 0, "accepted": {},
                                     "sympy_form": res is not None})
        if res is None:
            continue
        slot["draws"] += 1
        slot["near_misses"] = max(slot["near_misses"], len(res))
        for label, ok in res.items():
            if ok:
                slot["accepted"][label] = slot["accepted"].get(label, 0) + 1


def summary_text(diag: dict, failing_draws: int) -> str:
    """One sentence for the report: what the data accept, on how many draws the failure rests."""
    if not diag:
        return ""
    parts = []
    for name, d in sorted(diag.items()):
        short = name.rsplit(".", 1)[-1]
        if not d.get("sympy_form"):
            parts.append(f"{short} carries no sympy form: no near miss tried "
                         "(theory.mutate.symbolic would let the audit try them)")
            continue
        n = d["draws"]
        full = [lab for lab, k in d["accepted"].items() if k == n]
        if full:
            parts.append(f"the data accept {len(full)} of {d['near_misses']} near misses of "
                         f"{short} on all {n} diagnosed draws: " + "; ".join(full[:4])
                         + (" ..." if len(full) > 4 else "")
                         + " -- worth a second look at the encoding")
        else:
            parts.append(f"none of {d['near_misses']} near misses of {short} passes on the "
                         f"{n} diagnosed draws")
    return (f"diagnosis (the failure rests on {failing_draws} draw(s)): " + "; ".join(parts))
