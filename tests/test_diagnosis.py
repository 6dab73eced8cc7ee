"""The diagnosis of a failing printed form (issue 38): the near misses of a declared sympy closed
form (theory.mutate) run on the failing draws, and the report names those the data accept."""

from __future__ import annotations

import json

import sympy as sp

from tests.test_new_paper import _copy_harness, _run
from theory.mutate import mutated_function, mutations, symbolic

N, tr = sp.symbols("N tr", positive=True)


def test_the_near_misses_include_the_neighbouring_encodings():
    labels = dict(mutations((N, tr), 1 + 2 * tr / N))
    assert labels["the term 2*tr/N with the factor 1/N dropped"] == 1 + 2 * tr
    assert labels["the term 1 + 2*tr/N".replace("1 + 2*tr/N", "2*tr/N") + " x 1/2"] == 1 + tr / N
    assert labels["the term 2*tr/N dropped"] == 1
    assert labels["N read as N - 1"] == 1 + 2 * tr / (N - 1)
    assert labels["the exponent of N in 1/N moved to -1/2"] == 1 + 2 * tr / sp.sqrt(N)
    assert 1 + 2 * tr / N not in labels.values()
    f = symbolic((N, tr), 1 + 2 * tr / N)
    g = mutated_function(f, 1 + tr / N)
    assert f(4, 2.0) == 2.0 and g(4, 2.0) == 1.5 and g(N=4, tr=2.0) == 1.5


THEORY = '''"""The toy paper's closed form, encoded with the 1/N of the trace term dropped."""
import sympy as sp

from theory.mutate import symbolic

N, tr = sp.symbols("N tr", positive=True)
risk = symbolic((N, tr), 1 + tr, "Theorem 1: the risk (encoded wrongly: 1/N dropped)")
'''

CLAIM = '''"""Audit of Toy: theorem1."""
import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from properties import Claim, Tolerance, audits, check_close, examples, register
from theory.toyd import risk

register(Claim(
    id="toyd.theorem1", where="Theorem 1", statement="risk = 1 + tr / N",
    assumptions="N in 2..8, tr > 0", prediction="theory.toyd.risk",
    simulation="exact enumeration of the 2^N sign patterns", metric="abs",
    tolerance="float64 round-off", paper_setting="a toy"))


def exact_risk(n, t):
    means = [np.mean(np.array(s) * np.sqrt(t)) for s in itertools.product((-1, 1), repeat=n)]
    return 1.0 + float(np.mean(np.square(means)))


@audits("toyd.theorem1")
@examples(3)
@given(n=st.integers(2, 8), t=st.floats(0.5, 4.0))
def test_theorem1(n, t):
    check_close("toyd.theorem1", exact_risk(n, t), risk(n, t), Tolerance.roundoff(10.0 * 2 ** n))
'''


def test_a_dropped_factor_is_named_by_the_diagnosis(tmp_path):
    root = _copy_harness(tmp_path / "repo")
    (root / "theory" / "toyd.py").write_text(THEORY)
    (root / "properties" / "toyd").mkdir()
    (root / "properties" / "toyd" / "__init__.py").write_text('"""Audit of Toy: a toy."""\n')
    (root / "properties" / "toyd" / "test_theorem1.py").write_text(CLAIM)
    r = _run(root, "-m", "properties", "audit", "--profile", "ci", "--only", "toyd.*",
             "--no-plots", "--no-cache", "--report", str(tmp_path / "report"))
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    (row,) = json.loads((tmp_path / "report" / "audit.json").read_text())["claims"]
    assert row["verdict"] == "refuted"
    assert "the term tr with an extra factor 1/N" in row["detail"], row["detail"]
    assert "worth a second look at the encoding" in row["detail"]
    assert "the failure rests on 1 draw(s)" in row["detail"]
    acc = row["diagnosis"]["theory.toyd.risk"]["accepted"]
    assert "the term tr with an extra factor 1/N" in acc   # (others may pass on one draw too)
    assert "the term tr dropped" not in acc and "the term 1 dropped" not in acc
