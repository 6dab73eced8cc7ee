"""signgd.variant_b: Appendix B.2 / Table 3 row (b), Fig. 3: 'our theoretical results hold
empirically' for non-orthogonal sparse data, on comparisons.variant_run (2 seeds per draw, every
step to 1.25 t*); the Claim and property bodies shared with variant_c and variant_d are in
variants.py.  Automatic, so not asserted: every noise with sgn alpha at the end (the stop rule ends
the run 0.25 t* after it), max(T_2, T_3) <= T_4^- (T_2, T_3 are defined with 'or t >= T_4^-') and
T_4^- < T_4^+ (a wrong-sign key noise at T_4^-, none from T_4^+ on).  What could fail and is
checked: Theorem 3.2 (1)-(4) at the end, Lemma 4.1's Theta constant, T_1 <= min(T_2, T_3) / 2,
T_4^+ < T_4 (Lemma 4.7: query noise after key noise), Lemma 4.5.
"""

from __future__ import annotations

from hypothesis import example, given

from properties import audits, examples, register
from properties.signgd.setting import SEED
from properties.signgd.variants import variant_check, variant_claim, variant_lemma_check

CID = "signgd.variant_b"
NAME = "b"

register(variant_claim(
    CID, NAME, where="Appendix B.2, Table 3 row (b), Fig. 3",
    desc="non-orthogonal sparse (supports from all of [d], s = 30, d = 361)",
    measured=("Lemma 4.1 constant ~0.81-0.86 (shared coordinates cancel part of the value updates); Table 2 aligned fraction at T_4^- - 1: 1.00.")))


@audits(CID)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_variant_b(world, seed):
    variant_check(CID, NAME, world, seed)


@audits(CID)
@examples(1)
@example(seed=11)
@example(seed=12345)
@given(seed=SEED)
def test_signgd_variant_b_lemmas(world, seed):
    """Lemmas 4.3 (1) and 4.4 on this variant's run (issue 35), as signgd.adam carries them."""
    variant_lemma_check(CID, NAME, world, seed)
