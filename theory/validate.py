"""Input checks shared by `theory/` and `sim/` (pure Python at import; `generator` and
`finite_array` import torch / numpy when called): every public function rejects invalid input
with a `ValueError` that names the parameter and its valid range, before doing any work --
never a hang, a huge allocation or a silent NaN.

    number("eta", eta, lo=0, lo_open=True)          # finite, > 0
    integer("steps", steps, lo=1, hi=MAX_STEPS)
    elements("make_problem", S=S, N=N, d=d)         # the product is below MAX_ELEMENTS
    seeds("seeds", seeds)                           # non-empty list of ints in [0, MAX_SEED]
    flag("disjoint", disjoint)                      # a bool, never a truthy string
    generator("gen", gen)                           # a torch.Generator, no global RNG
    float_dtype("dtype", dtype)                     # a floating torch.dtype
    betas("betas", betas)                           # (b1, b2) in [0, 1)
    finite_array("V0", V0, ndim=2, lo=0)            # finite entries (>= lo), element cap
    covariance("Sigma", Sigma)                      # symmetric positive definite (no LinAlgError)
"""

from __future__ import annotations

import math
import numbers

MAX_ELEMENTS = 2 ** 28  # largest tensor a public function will allocate (2 GiB of float64)
MAX_STEPS = 10 ** 7     # longest run a simulator will start (a typo like eta = 1e-12 is caught)


def _interval(lo, hi, lo_open, hi_open) -> str:
    a = "(" if lo_open or lo is None else "["
    b = ")" if hi_open or hi is None else "]"
    return f"{a}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{b}"


def number(name: str, x, lo=None, hi=None, *, lo_open: bool = False, hi_open: bool = False,
           allow_inf: bool = False) -> float:
    """x as a float, if it is a real number in the interval (finite unless allow_inf)."""
    rng = _interval(lo, hi, lo_open, hi_open)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a real number in {rng}, got {x!r}")
    v = float(x)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number in {rng}, got {x!r}")
    if ((lo is not None and (v < lo or (lo_open and v == lo)))
            or (hi is not None and (v > hi or (hi_open and v == hi)))):
        raise ValueError(f"{name} must be in {rng}, got {x!r}")
    return v


def integer(name: str, x, lo=None, hi=None) -> int:
    """x as an int, if it is an integer (not a bool, not a float) in [lo, hi]."""
    rng = _interval(lo, hi, False, False)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be an integer in {rng}, got {x!r}")
    v = int(x)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {x!r}")
    return v


def elements(where: str, **dims) -> int:
    """The product of the named sizes, if it is at most MAX_ELEMENTS (else a ValueError naming
    the sizes): call it before allocating."""
    n = 1
    for v in dims.values():
        n *= max(int(v), 0)
    if n > MAX_ELEMENTS:
        sizes = ", ".join(f"{k}={v}" for k, v in dims.items())
        raise ValueError(f"{where}: {sizes} asks for {n:.3g} elements, above the cap "
                         f"{MAX_ELEMENTS:.3g} (MAX_ELEMENTS in theory/validate.py)")
    return n


def steps(where: str, horizon: float, eta: float) -> int:
    """horizon / eta as a positive integer number of steps, at most MAX_STEPS."""
    n = horizon / eta
    if n > MAX_STEPS:
        raise ValueError(f"{where}: horizon / eta = {horizon:g} / {eta:g} = {n:.3g} steps, above "
                         f"the cap {MAX_STEPS:g}: eta must be >= horizon / {MAX_STEPS:g}")
    k = int(round(n))
    if k < 1 or abs(k * eta - horizon) > 1e-9 * horizon:
        raise ValueError(f"{where}: horizon / eta must be a positive integer, got {horizon} / {eta}")
    return k


MAX_SEED = 2 ** 63 - 1  # torch.Generator.manual_seed takes < 2^64; callers add offsets < 2^63


def seeds(name: str, x) -> list:
    """x as a non-empty list of integer seeds in [0, MAX_SEED] (a list, tuple, range or array)."""
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise ValueError(f"{name} must be a non-empty list of integers in [0, {MAX_SEED}], got "
                         f"{x!r}")
    xs = list(x)
    if not xs:
        raise ValueError(f"{name} must be a non-empty list of integers in [0, {MAX_SEED}], got "
                         f"{x!r}")
    elements(name, n=len(xs))
    return [integer(f"{name}[{i}]", s, lo=0, hi=MAX_SEED) for i, s in enumerate(xs)]


def flag(name: str, x) -> bool:
    """x, if it is a bool (or numpy bool): an option is never set by a truthy string or number."""
    if type(x).__name__ not in ("bool", "bool_"):
        raise ValueError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def function(name: str, f, *, none: bool = False):
    """f, if it is callable (or None when `none`)."""
    if f is None and none:
        return None
    if not callable(f):
        raise ValueError(f"{name} must be a callable{' or None' if none else ''}, got {f!r}")
    return f


def generator(name: str, g):
    """g, if it is a torch.Generator: no silent fallback to the global RNG."""
    import torch  # lazily: theory/ stays torch-free
    if not isinstance(g, torch.Generator):
        raise ValueError(f"{name} must be a torch.Generator (a local generator: no fallback to "
                         f"the global RNG), got {g!r}")
    return g


def float_dtype(name: str, dt):
    """dt, if it is a floating torch dtype (torch.float32, torch.float64, ...): not an integer
    dtype, not a string."""
    import torch  # lazily: theory/ stays torch-free
    if not (isinstance(dt, torch.dtype) and dt.is_floating_point):
        raise ValueError(f"{name} must be a floating torch.dtype (torch.float32 or torch.float64), "
                         f"got {dt!r}")
    return dt


def betas(name: str, b) -> tuple[float, float]:
    """b as a pair (b1, b2) of numbers in [0, 1) (Adam's decay rates; 1 would divide by 0)."""
    if isinstance(b, (str, bytes)) or not hasattr(b, "__len__") or len(b) != 2:
        raise ValueError(f"{name} must be a pair (b1, b2) of numbers in [0, 1), got {b!r}")
    return (number(f"{name}[0]", b[0], lo=0, hi=1, hi_open=True),
            number(f"{name}[1]", b[1], lo=0, hi=1, hi_open=True))


def describe(x) -> str:
    """A short description of an argument for messages: dtype and shape, else its type."""
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return f"{x.dtype} {tuple(x.shape)}"
    return type(x).__name__


def finite_array(name: str, x, *, ndim=None, lo=None, lo_open: bool = False, dtype_kind="biuf"):
    """x (a numpy array, torch tensor or nested list of real numbers) as a float64 numpy array, if
    every entry is finite (and >= lo, or > lo when lo_open) and it has `ndim` dimensions (an int
    or a tuple of allowed ints); the element count is capped (MAX_ELEMENTS)."""
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "numel"):  # a torch tensor
        if x.numel() > MAX_ELEMENTS:
            raise ValueError(f"{name} has {x.numel():.3g} elements, above the cap "
                             f"{MAX_ELEMENTS:.3g}")
        if x.dtype.is_complex:
            raise ValueError(f"{name} must hold real numbers, got dtype {x.dtype}")
        a = x.detach().cpu().numpy()
    else:
        if isinstance(x, (str, bytes)) or x is None:
            raise ValueError(f"{name} must be an array of real numbers, got {x!r}")
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as e:  # ragged lists
            raise ValueError(f"{name} must be an array of real numbers, got {x!r} ({e})") from None
    if a.dtype.kind not in dtype_kind:
        raise ValueError(f"{name} must be an array of real numbers, got dtype {a.dtype}")
    if a.size > MAX_ELEMENTS:
        raise ValueError(f"{name} has {a.size:.3g} elements, above the cap {MAX_ELEMENTS:.3g}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimensions, got "
                             f"shape {a.shape}")
    a = a.astype(np.float64, copy=False)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite in every entry, got "
                         f"{int((~np.isfinite(a)).sum())} "
                         f"non-finite entries")
    if lo is not None and a.size and (a.min() < lo or (lo_open and a.min() == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo} in every entry, got min "
                         f"{a.min()}")
    return a


def covariance(name: str, x, *, semidefinite: bool = False):
    """x (an (n, n) array or tensor) as a float64 numpy array, if it is a finite symmetric
    positive-definite matrix (positive semidefinite when `semidefinite`): a ValueError naming
    the parameter, never torch's or numpy's LinAlgError from a Cholesky factor later."""
    import numpy as np
    a = finite_array(name, x, ndim=2)
    if a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"{name} must be a square (n, n) covariance matrix, got shape {a.shape}")
    scale = max(float(np.abs(a).max()), 1e-300)
    if not np.allclose(a, a.T, rtol=0, atol=1e-10 * scale):
        raise ValueError(f"{name} must be symmetric (a covariance matrix), got max |{name} - "
                         f"{name}^T| = {float(np.abs(a - a.T).max()):.3g}")
    low = float(np.linalg.eigvalsh((a + a.T) / 2)[0])
    tol = 1e-12 * scale
    if low < -tol if semidefinite else low <= tol:
        raise ValueError(f"{name} must be positive {'semi' if semidefinite else ''}definite (a "
                         f"covariance matrix: every eigenvalue {'>= 0' if semidefinite else '> 0'}"
                         f"), got smallest eigenvalue {low:.3g}")
    return a


def magnitude(name: str, x, hi: float, why: str = "") -> None:
    """Every entry of x (a number or an array of numbers, already checked finite) has
    |x| <= hi: the extreme finite values (1e300) whose result would overflow float64 to inf or
    NaN are refused, naming the parameter and the bound."""
    import numpy as np
    a = np.abs(np.asarray(x, dtype=np.float64))
    if a.size and float(a.max()) > hi:
        raise ValueError(f"{name} must satisfy |{name}| <= {hi:g}"
                         + (f" ({why})" if why else "") + f", got {float(a.max()):g}")


def tiny(name: str, x, lo: float, why: str = "") -> None:
    """Every entry of x has |x| >= lo (or is exactly 0 where 0 was already allowed): values so
    small that a division by them overflows (1e-300) are refused, naming the parameter."""
    import numpy as np
    a = np.abs(np.asarray(x, dtype=np.float64))
    bad = (a > 0) & (a < lo)
    if a.size and bad.any():
        raise ValueError(f"{name} must be 0 or satisfy |{name}| >= {lo:g}"
                         + (f" ({why})" if why else "") + f", got {float(a[bad].min()):g}")


def closed_form(f, names, *, positive=(), what: str = ""):
    """f (a lambdified closed form of the arguments `names`, in order) with its arguments checked
    (each a finite number or array of them, > 0 for those in `positive`) and its value checked
    finite: a ValueError naming the arguments, never a silent NaN/inf.  The returned function
    closes over f (properties.world names a traced call by the function closed over)."""
    import numpy as np

    names = tuple(names)
    label = what or "the closed form"

    def call(*args, **kwargs):
        if len(args) > len(names):
            raise ValueError(f"{label} takes {len(names)} arguments ({', '.join(names)}), got "
                             f"{len(args)}")
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in vals:
                raise ValueError(f"{label}: unexpected or repeated argument {k!r} (takes "
                                 f"{', '.join(names)})")
            vals[k] = v
        missing = [n for n in names if n not in vals]
        if missing:
            raise ValueError(f"{label}: missing argument(s) {', '.join(missing)}")
        for n in names:
            a = finite_array(n, vals[n])
            if n in positive and a.size and a.min() <= 0:
                raise ValueError(f"{n} must be > 0 in every entry, got min {a.min()}")
        with np.errstate(all="ignore"):
            try:
                out = f(*(vals[n] for n in names))
            except (OverflowError, ZeroDivisionError):
                out = float("inf")
        if not np.all(np.isfinite(np.asarray(out, dtype=np.float64))):
            shown = ", ".join(f"{n}={describe(vals[n]) if hasattr(vals[n], 'shape') else vals[n]!r}"
                              for n in names)
            raise ValueError(f"{label} is not finite at {shown} ({', '.join(names)} outside the "
                             "range where it is representable in float64)")
        return out

    call.__name__ = call.__qualname__ = what.split(" ")[0] if what else "closed_form"
    call.__doc__ = f"{label}, with its arguments ({', '.join(names)}) and value checked."
    import sys
    call.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)  # the defining module
    return call


def device(name: str, d, *, none: bool = True):
    """d, if it names a device this machine has: None (where the caller defaults it), 'cpu', a
    torch.device, or 'cuda' / 'cuda:i' with CUDA present and i below the device count.  A typo
    ('gpu'), a number, or CUDA without a GPU is a ValueError naming the parameter (not torch's
    RuntimeError or AssertionError)."""
    if d is None and none:
        return d
    import torch  # lazily: theory/ stays torch-free
    if not isinstance(d, (str, torch.device)):
        raise ValueError(f"{name} must be 'cpu', 'cuda', 'cuda:<i>' or a torch.device"
                         f"{' (or None)' if none else ''}, got {d!r}")
    try:
        dev = torch.device(d)
    except (RuntimeError, ValueError):
        raise ValueError(f"{name} must be 'cpu', 'cuda', 'cuda:<i>' or a torch.device, got "
                         f"{d!r}") from None
    if dev.type == "cpu":
        return d
    if dev.type != "cuda":
        raise ValueError(f"{name} must be a cpu or cuda device, got {d!r}")
    if not torch.cuda.is_available():
        raise ValueError(f"{name} = {d!r}: torch {torch.__version__} finds no CUDA device here")
    if dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"{name} = {d!r}: this machine has {torch.cuda.device_count()} CUDA "
                         f"device(s)")
    return d
