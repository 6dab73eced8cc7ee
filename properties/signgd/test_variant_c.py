"""signgd.variant_c: Appendix B.2 / Table 3 row (c), Fig. 4: 'our theoretical results hold
empirically' for orthogonal non-sparse (s = 200, d = 241) data.

What is read, what is automatic and what could fail: as for signgd.variant_b (its docstring);
the Claim and property body shared by the three rows are in variants.py.
"""

from __future__ import annotations

from hypothesis import example, given

from properties import audits, examples, register
from properties.signgd.setting import SEED
from properties.signgd.variants import (NON_SPARSE_LEMMA_FAILS, variant_check, variant_claim,
                                        variant_lemma_check)

CID = "signgd.variant_c"
NAME = "c"

register(variant_claim(
    CID, NAME, where="Appendix B.2, Table 3 row (c), Fig. 4",
    desc="orthogonal non-sparse (s = 200, d = 241)",
    measured=("Lemma 4.1 constant ~0.38; stages II-III finish together (T_2 ~ T_3 ~ T_4^-, 30-70 steps); aligned fraction at T_4^- - 1: 0.98-1.00.")))


@audits(CID)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_variant_c(world, seed):
    variant_check(CID, NAME, world, seed)


@audits(CID, fails=NON_SPARSE_LEMMA_FAILS)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_variant_c_lemmas(world, seed):
    """Lemmas 4.3 (1) and 4.4 on this variant's run (issue 35), as signgd.adam carries them."""
    variant_lemma_check(CID, NAME, world, seed)
