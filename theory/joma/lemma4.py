"""Appendix A.3: Lemma 4 (Eqn 61), printed and corrected.  Notation: theory.joma.isotropic.
"""

from __future__ import annotations

import numpy as np

from theory import validate as chk
from theory.joma._checks import _fin
from theory.joma.isotropic import Isotropic, _dist_psi


def _check_lemma4(r, dist, c_minus, c_plus):
    _fin("r", r)
    _dist_psi(dist)
    chk.number("c_minus", c_minus)
    chk.number("c_plus", c_plus)


def lemma4_printed(r, dist: Isotropic, c_minus, c_plus):
    """Eqn 61 as printed: (d theta1/dr, d theta2/dr) = ((c_- + c_+) p_n(r), -(c_- + c_+) r p_n(r))."""
    _check_lemma4(r, dist, c_minus, c_plus)
    p = dist.pdf(r)
    return (c_minus + c_plus) * p, -(c_minus + c_plus) * np.asarray(r) * p


def lemma4_corrected(r, dist: Isotropic, c_minus, c_plus):
    """Corrected Eqn 61 (phi' = c_- 1[x<0] + c_+ 1[x>0]): ((c_+ - c_-) p_n(r), -(c_+ - c_-) r p_n(r))."""
    _check_lemma4(r, dist, c_minus, c_plus)
    p = dist.pdf(r)
    return (c_plus - c_minus) * p, -(c_plus - c_minus) * np.asarray(r) * p
