"""Automatic perturbations of a closed form written in sympy (no torch): the near misses of an
encoding -- a constant doubled or halved, an exponent moved by 1/2 or 1, an additive term
dropped or its sign flipped, a factor dropped from a term or a symbol's factor added to it, an
integer size N read as N - 1 or N + 1.  The audit's diagnosis (`properties.diagnosis`) runs a
failing printed form again with each of them in place of the declared closed form and reports
which the data accept: a refutation that one of them turns into a pass is worth a second look
at the encoding before it is reported against the paper.

A theory function takes part when it carries its sympy form: build it with `symbolic`

    N, tr = sp.symbols("N tr", positive=True)
    risk = symbolic((N, tr), 1 + tr / N, "risk of the optimum, Theorem 4.1")   # risk(N, tr)

or attach the form to a hand-written function with `@with_sympy_form(args, expr)` (its
positional parameters are `args`, in order).
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Sequence

import sympy as sp

__all__ = ["symbolic", "with_sympy_form", "sympy_form", "mutations", "mutated_function"]

SYMPY_FORM_ATTR = "sympy_form"


def _check_args(args) -> tuple:
    """args as a tuple, if it is a non-empty sequence of sympy Symbols."""
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise ValueError(f"args must be a non-empty sequence of sympy Symbols, got {args!r}")
    args = tuple(args)
    if not args or not all(isinstance(a, sp.Symbol) for a in args):
        raise ValueError(f"args must be a non-empty sequence of sympy Symbols, got {args!r}")
    return args


def _check_expr(expr) -> sp.Expr:
    """expr as a sympy expression (a string is read by sympify), if it is one with no NaN or
    complex infinity in it."""
    try:
        e = sp.sympify(expr, strict=not isinstance(expr, str))
    except (sp.SympifyError, TypeError, ValueError, SyntaxError) as err:
        raise ValueError(f"expr must be a sympy expression (or a string sympify reads), got "
                         f"{expr!r} ({type(err).__name__})") from None
    if not isinstance(e, sp.Expr) or e.has(sp.nan, sp.zoo):
        raise ValueError(f"expr must be a sympy expression with no NaN or complex infinity in it, "
                         f"got {expr!r}")
    return e


def symbolic(args: Sequence[sp.Symbol], expr, doc: str = "") -> Callable:
    """A numpy function of `args` (positional, in order) computing `expr`, carrying its sympy
    form (so that the audit can perturb it)."""
    args = _check_args(args)
    _check_expr(expr)
    args = tuple(args)
    if not args or not all(isinstance(a, sp.Symbol) for a in args):
        raise ValueError(f"args must be a non-empty sequence of sympy Symbols, got {args!r}")
    expr = sp.sympify(expr)
    fn = sp.lambdify(args, expr, "numpy")
    fn.__doc__ = doc or f"{expr} as a function of ({', '.join(map(str, args))})"
    setattr(fn, SYMPY_FORM_ATTR, (args, expr))
    return fn


def with_sympy_form(args: Sequence[sp.Symbol], expr) -> Callable[[Callable], Callable]:
    """Attach the sympy form of a hand-written function whose positional parameters are `args`."""
    args = _check_args(args)
    _check_expr(expr)
    args = tuple(args)
    if not args or not all(isinstance(a, sp.Symbol) for a in args):
        raise ValueError(f"args must be a non-empty sequence of sympy Symbols, got {args!r}")

    def deco(fn):
        setattr(fn, SYMPY_FORM_ATTR, (args, sp.sympify(expr)))
        return fn
    return deco


def sympy_form(fn) -> tuple[tuple, sp.Expr] | None:
    """(args, expr) of a function that carries its sympy form, else None."""
    form = getattr(fn, SYMPY_FORM_ATTR, None)
    return form if isinstance(form, tuple) and len(form) == 2 else None


def _integer_like(s: sp.Symbol) -> bool:
    return bool(s.is_integer) or str(s) in ("N", "n", "T", "L", "K", "M", "d", "m")


def mutations(args: Sequence[sp.Symbol], expr) -> list[tuple[str, sp.Expr]]:
    """The near misses of `expr` as (label, expression), deduplicated, the original excluded."""
    args = _check_args(args)
    _check_expr(expr)
    expr = sp.sympify(expr)
    out: dict[str, tuple[str, sp.Expr]] = {}

    def add(label, e):
        key = sp.srepr(e)
        if e != expr and key not in out and e.is_finite is not False:
            out[key] = (label, e)

    terms = sp.Add.make_args(expr)
    for i, t in enumerate(terms):
        rest = expr - t
        name = f"the term {t}" if len(terms) > 1 else "the form"
        if len(terms) > 1:
            add(f"{name} dropped", rest)
        add(f"{name} with its sign flipped", rest - t)
        add(f"{name} x 2", rest + 2 * t)
        add(f"{name} x 1/2", rest + t / 2)
        for f in sp.Mul.make_args(t):
            if not f.is_number:
                add(f"{name} with the factor {f} dropped", rest + t / f)
        for s in args:
            add(f"{name} with an extra factor {s}", rest + t * s)
            add(f"{name} with an extra factor 1/{s}", rest + t / s)
    for p in sorted(expr.atoms(sp.Pow), key=sp.default_sort_key):
        if p.exp.is_number:
            for dx in (sp.Rational(1, 2), sp.Rational(-1, 2), 1, -1):
                new = p.exp + dx
                add(f"the exponent of {p.base} in {p} moved to {new}",
                    expr.xreplace({p: sp.Pow(p.base, new)}))
    for c in sorted(expr.atoms(sp.Number), key=sp.default_sort_key):
        if c not in (0, 1, -1):
            for k, lab in ((2, "x 2"), (sp.Rational(1, 2), "x 1/2")):
                add(f"the constant {c} {lab}", expr.xreplace({c: c * k}))
    for s in args:
        if _integer_like(s):
            add(f"{s} read as {s} - 1", expr.subs(s, s - 1))
            add(f"{s} read as {s} + 1", expr.subs(s, s + 1))
    return list(out.values())


def mutated_function(fn: Callable, expr) -> Callable:
    """A stand-in for `fn` (same call: its parameters bound by name or position to its sympy
    form's args) that computes `expr` instead."""
    form = sympy_form(fn)
    if form is None:
        raise ValueError(f"fn {getattr(fn, '__name__', fn)!r} carries no sympy form")
    _check_expr(expr)
    args, _ = form
    g = sp.lambdify(args, expr, "numpy")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None

    @functools.wraps(fn)
    def mutated(*a, **kw):
        if sig is not None and kw:
            bound = sig.bind(*a, **kw)
            bound.apply_defaults()
            a = tuple(bound.arguments.values())[:len(args)]
        return g(*a)
    return mutated
