"""`theorem-audit new-paper NAME` and `theorem-audit new-claim ID`: the skeleton files of a new
paper or claim, laid out as the layout test (`tests/test_layout.py`) wants them.

    new-paper NAME [--title T] [--claim ITEM]
                     theory/NAME.py (a closed form with its sympy form), sim/NAME.py (a seeded
                     torch simulation), properties/NAME/__init__.py (the paper's display name,
                     PAPER = T), and the paper's first claim, NAME.ITEM (default theorem1; as
                     new-claim writes it)
    new-claim ID     properties/<paper>/test_<item>.py: the Claim (statement as printed, to fill
                     in), a rival, a null, and the printed form's property with a paper-setting
                     example; it runs as written (an exact toy claim: gradient descent on a
                     quadratic against its closed form), so the first audit gives a verdict,
                     and then each TODO is replaced by the paper's own.

Nothing is overwritten: an existing file is a ValueError naming it.  CONTRIBUTING.md ("Adding a
paper") walks through what to edit in each file.

`reference_page`: what a claim file written from these skeletons may call, docs/reference.md,
generated from the docstrings of `properties.__all__`, `properties.cache.run_cache` and
`theory.validate` (`python -m properties.readme reference` writes it).
"""

from __future__ import annotations

import keyword
import re
import textwrap
from pathlib import Path

_PAPER = re.compile(r"^[a-z][a-z0-9_]*$")
_ITEM = re.compile(r"^[a-z0-9][a-z0-9_]*(\.[a-z0-9][a-z0-9_]*)*$")
# the names the harness and the CLI use for themselves: no paper may take them
_RESERVED = {"conjecture", "tests", "theory", "sim", "properties", "examples"}


def _check_paper(name: str) -> str:
    from properties.registry import HARNESS_MODULES
    if not isinstance(name, str) or not _PAPER.match(name) or keyword.iskeyword(name):
        raise ValueError(f"paper name must be a lower-case Python identifier (a-z, 0-9, _), "
                         f"got {name!r}")
    if name in HARNESS_MODULES or name in _RESERVED:
        raise ValueError(f"paper name {name!r} is taken by the harness; choose another")
    return name


def split_claim_id(claim_id: str) -> tuple[str, str]:
    """(paper, item) of a claim id 'paper.item[.sub]'; ValueError for anything else."""
    if not isinstance(claim_id, str) or "." not in claim_id:
        raise ValueError(f"claim id must look like 'paper.item', got {claim_id!r}")
    paper, item = claim_id.split(".", 1)
    _check_paper(paper)
    if not _ITEM.match(item):
        raise ValueError(f"claim id {claim_id!r}: the item after the paper must be lower-case "
                         "words (a-z, 0-9, _) joined by dots, e.g. 'theorem2' or 'lemma4_3.item3'")
    return paper, item


def claim_file(claim_id: str) -> str:
    """The file the layout rule puts a claim in: properties/<paper>/test_<item>.py (dots of the
    item as underscores)."""
    paper, item = split_claim_id(claim_id)
    return f"properties/{paper}/test_{item.replace('.', '_')}.py"


def _write(root: Path, rel: str, text: str) -> str:
    path = root / rel
    if path.exists():
        raise ValueError(f"{rel} exists already; nothing was written over it")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return rel


THEORY = '''"""Closed forms of {paper} (theory/: pure math, no torch; sympy where a form is derived,
lambdified for numbers).  TODO: replace the example with the paper's closed forms, one function
per formula, named after the equation or theorem it comes from."""

from __future__ import annotations

import sympy as sp

from theory.mutate import symbolic

# A closed form built by `symbolic` carries its sympy form: where the printed form fails, the
# audit tries its near misses (a dropped factor, a neighbouring exponent, N +- 1) and says
# which the data accept.  A hand-written function can carry one too (`with_sympy_form`).
N, s2 = sp.symbols("N sigma2", positive=True)
mean_variance = symbolic((N, s2), s2 / N, "TODO (an example): Var of the mean of N draws")
'''

SIM = '''"""Simulations of {paper} (sim/: torch, float64, seeded by a local generator, on the
`device` every simulator takes).  TODO: replace the example with the paper's model and training
loop; bad arguments are a ValueError naming the parameter and its range, before any work."""

from __future__ import annotations

import torch

from sim import make_generator
from theory.validate import integer, number


def mean_of_draws(seed: int, n: int, sigma2: float, reps: int = 1000, device="cpu"):
    """TODO (an example): `reps` means of n N(0, sigma2) draws, from `seed`."""
    n, reps = integer("n", n, lo=1, hi=10**6), integer("reps", reps, lo=1, hi=10**6)
    sigma2 = number("sigma2", sigma2, lo=0, lo_open=True)
    g = make_generator(seed)
    x = torch.randn((reps, n), generator=g, dtype=torch.float64) * sigma2 ** 0.5
    return x.to(device).mean(dim=1)
'''

INIT = '''"""{doc}
"""

{title_comment}
PAPER = {title_literal}
'''

INIT_DOC = ("Audit of {title}: one file per claim item, `test_<item>.py` (the Claim, its "
            "strategies, its alternatives, its printed and corrected properties); runs two "
            "claims share go in `runs.py`, figures in `figures.py`.  Written by `theorem-audit "
            "new-paper {paper}`; see CONTRIBUTING.md, \"Adding a paper\".")

LINE = 100  # the project's ruff line-length: generated files stay within it


def _str_literal(text: str, indent: int) -> str:
    """A Python string literal of `text` within LINE columns (adjacent literals)."""
    one = repr(text)
    if indent + len(one) <= LINE:
        return one
    parts = textwrap.wrap(text, LINE - indent - 4, drop_whitespace=False)
    pad = " " * (indent + 1)
    return "(" + ("\n" + pad).join(repr(p) for p in parts) + ")"


CLAIM = '''"""{claim_id}: TODO the theorem, lemma or equation of the paper this file audits.

Written by `theorem-audit new-claim {claim_id}`.  It runs as written (an exact toy claim,
gradient descent on a quadratic against its closed form, from theory/skeleton.py and
sim/skeleton.py, which stay in the package) so the first audit gives a verdict:

    theorem-audit audit --only '{claim_id}' --report /tmp/report

Then replace each TODO with the paper's own (CONTRIBUTING.md, "Adding a paper"), pin the
printed statement (`python tests/test_statements.py --update`), and rerun.
"""

import math

from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, null, paper_example, \\
    register, rival
from sim import default_device
from sim.skeleton import gd_quadratic as simulate  # TODO: the paper's, from sim.{paper}
from theory.skeleton import gd_quadratic as closed_form  # TODO: from theory.{paper}

CLAIM_ID = "{claim_id}"


def gradient_flow(x0, a, eta, t):
    """Rival (the nearest plausible mistake): the continuous-time flow x0 exp(-eta a t) read as
    the discrete steps.  TODO: the paper's nearest plausible mistake (another constant or exponent,
    a dropped factor, a neighbouring reading)."""
    return float(x0) * math.exp(-eta * a * t)


def no_training(seed, a, eta, t, device="cpu"):
    """Null: the same run with the mechanism switched off (no steps).  TODO: the paper's
    mechanism switched off (training off, attention frozen, labels shuffled)."""
    return simulate(seed, a, eta, t, device=device, train=False)


register(Claim(
    id=CLAIM_ID,
    where="TODO: Theorem N, Eqn. M",
    statement="TODO: the statement exactly as printed, every item of it "
              "(pinned in tests/statements.json; never edited afterwards)",
    assumptions="TODO: what the statement assumes (the strategies draw from inside it)",
    prediction="theory.skeleton.gd_quadratic",  # TODO: theory.{paper}.<closed form>
    simulation="sim.skeleton.gd_quadratic",  # TODO: sim.{paper}.<simulation>
    metric="|x_t - closed form|",
    tolerance="float64 round-off over the t steps (derived)",
    alternatives=(
        rival("gradient_flow", gradient_flow, "continuous-time flow read as the steps"),
        null("no_training", no_training, "mechanism off: no steps", replaces="run"),
    ),
    paper_setting=None,  # or why the paper's own setting is not run (none given, too large)
    # delete this line when the file audits the paper's claim: until then the claim is never
    # reported `holds` (its verdict says it is the skeleton's example)
    audit_gap="the skeleton's example claim (new-claim), not yet the paper's statement",
))


@audits(CLAIM_ID)
@examples(5)                                    # CI budget; x0.5 dev, x10 thorough
@paper_example(where="TODO: Sec. N, Fig. M: the paper's own numbers", seed=0, a=1.0, eta=0.1,
               t=20)
@given(seed=st.integers(0, 2**31 - 1), a=st.floats(0.5, 2.0), eta=st.floats(0.05, 0.4),
       t=st.integers(5, 40))
def test_{func}(world, seed, a, eta, t):
    x0, xt = world.simulation(simulate, "run", pure=True)(seed, a, eta, t,
                                                          device=default_device())
    pred = world.prediction(closed_form)(x0, a, eta, t)
    check_close(CLAIM_ID, xt, pred, Tolerance.roundoff(max(abs(x0), 1e-12), ops=10 * t + 10))
'''


def new_claim(claim_id: str, root: Path | str) -> list[str]:
    """Write the claim file of `claim_id` under `root`; returns the paths written (relative).
    The paper (properties/<paper>/, theory/<paper>.py, sim/<paper>.py) must exist: make it
    with new_paper."""
    root = Path(root)
    paper, item = split_claim_id(claim_id)
    missing = [p for p in (f"properties/{paper}/__init__.py", f"theory/{paper}.py",
                           f"sim/{paper}.py") if not (root / p).exists()]
    if missing:
        raise ValueError(f"claim id {claim_id!r}: paper {paper!r} has no {', '.join(missing)}; "
                         f"run `theorem-audit new-paper {paper}` first")
    func = item.replace(".", "_")
    return [_write(root, claim_file(claim_id),
                   CLAIM.format(claim_id=claim_id, paper=paper, func=func))]


def new_paper(name: str, root: Path | str, title: str | None = None,
              first_claim: str = "theorem1") -> list[str]:
    """Write the skeleton of paper `name` under `root` and its first claim `name.<first_claim>`
    (an item such as 'theorem4_1', or a whole id of this paper); returns the paths written
    (relative)."""
    root = Path(root)
    _check_paper(name)
    item = first_claim.split(".", 1)[1] if first_claim.startswith(f"{name}.") else first_claim
    split_claim_id(f"{name}.{item}")  # a bad item is a ValueError before anything is written
    taken = [p for p in (f"properties/{name}", f"theory/{name}.py", f"theory/{name}",
                         f"sim/{name}.py", f"sim/{name}") if (root / p).exists()]
    if taken:
        raise ValueError(f"paper {name!r}: {', '.join(taken)} exists already; nothing written")
    comment = ("# the paper's name in the report's tables" if title else
               "# the paper's name in the report's tables (TODO: authors, venue, year)")
    title = title or f"{name} (TODO: authors, venue, year)"
    out = [_write(root, f"theory/{name}.py", THEORY.format(paper=name)),
           _write(root, f"sim/{name}.py", SIM.format(paper=name)),
           _write(root, f"properties/{name}/__init__.py",
                  INIT.format(doc=textwrap.fill(INIT_DOC.format(title=title, paper=name),
                                                LINE - 4).replace('"' * 3, "'" * 3),
                              title_comment=comment, title_literal=_str_literal(title, 8)))]
    return out + new_claim(f"{name}.{item}", root)


# --------------------------------------------------------------------------------------------
# The reference page of the claim-writing vocabulary, from docstrings
# --------------------------------------------------------------------------------------------
class _Raw:
    """An annotation shown as written (a string annotation without quotes)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _default(x):
    """A default value as the page shows it: a numpy scalar as the Python number it holds (its
    repr changes between numpy versions), anything else by its repr."""
    if type(x).__module__ == "numpy" and hasattr(x, "item") and getattr(x, "ndim", None) == 0:
        return _Raw(repr(x.item()))
    return x


def _signature(obj, returns: bool = True) -> str:
    import inspect

    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""

    def raw(a):
        return _Raw(a) if isinstance(a, str) else a

    params = [p.replace(annotation=raw(p.annotation),
                        default=p.default if p.default is p.empty else _default(p.default))
              for p in sig.parameters.values()]
    sig = sig.replace(parameters=params, return_annotation=raw(sig.return_annotation)
                      if returns else inspect.Signature.empty)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", str(sig))


def _doc_block(text: str | None) -> list[str]:
    return ["```text", text.strip(), "```"] if text and text.strip() else ["(no docstring)"]


def _entry(qualname: str, obj, level: str = "###") -> list[str]:
    import inspect

    if inspect.isclass(obj):
        bases = [b.__name__ for b in obj.__bases__ if b is not object]
        sig = _signature(obj, returns=False) if not issubclass(obj, BaseException) else ""
        head = f"{level} class `{qualname}{sig}`" + (f" ({', '.join(bases)})" if bases else "")
    elif callable(obj):
        head = f"{level} `{qualname}{_signature(obj)}`"
    else:
        head = f"{level} `{qualname}`"
    out = [head, ""]
    module = getattr(obj, "__module__", None)
    if module and (inspect.isclass(obj) or inspect.isfunction(obj)):
        out += [f"Defined in `{module}`.", ""]
    out += _doc_block(inspect.getdoc(obj) if (inspect.isclass(obj) or callable(obj)) else None)
    if inspect.isclass(obj):
        undocumented = []
        for name, member in vars(obj).items():
            if name.startswith("_"):
                continue
            target = member.__func__ if isinstance(member, (staticmethod, classmethod)) \
                else member
            if not (callable(target) or isinstance(member, property)):
                continue
            doc = (member.__doc__ if isinstance(member, property) else target.__doc__) or ""
            if not doc.strip():
                undocumented.append(f"`{name}`")
                continue
            kind = ("property" if isinstance(member, property) else "static method"
                    if isinstance(member, staticmethod) else "class method"
                    if isinstance(member, classmethod) else "method")
            sig = "" if isinstance(member, property) else _signature(getattr(obj, name))
            out += ["", f"- `{qualname}.{name}{sig}` ({kind}):", ""]
            out += ["  " + x if x else x for x in _doc_block(inspect.cleandoc(doc))]
        if undocumented:
            out += ["", f"Other public members of `{qualname}`: {', '.join(undocumented)}."]
    return out + [""]


_DATA = {"REGISTRY": "Every registered claim, by id: `dict[str, Claim]` (read it; add claims "
                     "with `register`)."}


def reference_page() -> str:
    """docs/reference.md: the vocabulary a claim file or a conjecture uses, from the docstrings
    of what `properties` exports (`properties.__all__`), of `properties.cache.run_cache` (shared
    runs) and of `theory.validate`'s public helpers (input checks for `theory/` and `sim/`)."""
    import importlib
    import inspect

    import properties

    out = ["# Reference: the claim-writing vocabulary", "",
           ("Generated from the docstrings by `python -m properties.readme reference`; do not edit "
           "(`tests/test_docs.py` fails when this page is stale). How the pieces fit together: "
           "[CONTRIBUTING.md](../CONTRIBUTING.md) and [conjectures.md](conjectures.md); what the "
           "verdicts mean: [report.md](report.md)."), "",
           "## `properties`", "", ("What a claim file imports (`from properties import ...`, "
           "the names of `properties.__all__`, in its order)."), ""]
    out += _doc_block(inspect.getdoc(properties)) + [""]
    for name in properties.__all__:
        obj = getattr(properties, name)
        if name in _DATA:
            out += [f"### `{name}`", "", _DATA[name], ""]
        else:
            out += _entry(name, obj)
    cache = importlib.import_module("properties.cache")
    out += ["## `properties.cache.run_cache`", "",
            ("Shared runs of a paper (`properties/<paper>/runs.py`): `from properties.cache import "
            "run_cache`."), ""]
    out += _entry("run_cache", cache.run_cache)
    validate = importlib.import_module("theory.validate")
    out += ["## `theory.validate`", "", ("Input checks for the public functions of `theory/` and "
            "`sim/`: `from theory import validate` (or `from theory.validate import "
            "finite_array, ...`)."), ""]
    out += _doc_block(inspect.getdoc(validate)) + [""]
    consts = [f"`{n}` = {v!r}" for n, v in vars(validate).items()
              if n.isupper() and not n.startswith("_") and isinstance(v, (int, float))]
    if consts:
        out += ["Constants: " + ", ".join(consts) + ".", ""]
    for name, obj in vars(validate).items():
        if (not name.startswith("_") and inspect.isfunction(obj)
                and obj.__module__ == validate.__name__):
            out += _entry(name, obj)
    return "\n".join(out).rstrip() + "\n"
