"""The per-draw Condition 3.1 note of the SignGD claims (setting.signgd_draw_note): the [D] quantity
c = sigma_0 s sigma_p sqrt(m_k) by the draw's layout, read against the glossary's 'small'."""

import numpy as np
import pytest

from properties.readings import lookup
from properties.signgd.setting import (L43_S, PATH_C, condition31_c, condition31_note, path_sigma_p,
                                       signgd_draw_note)


def test_c_is_the_sheet_quantity():
    assert condition31_c(30, 1.0, 1e-3) == pytest.approx(1e-3 * 30 * np.sqrt(8))
    assert condition31_c(30, 2.0, 1e-3, m_k=16) == pytest.approx(2e-3 * 30 * 4)


@pytest.mark.parametrize("c, word", [(0.01, "holds at every level"), (0.08, ": holds ("),
                                     (0.15, "holds only at the looser level"), (0.5, ": fails (")])
def test_levels_follow_the_glossary(c, word):
    r = lookup("small")
    assert (r.stricter, r.level, r.looser) == (0.05, 0.1, 0.2)
    assert word in condition31_note(c)


def test_layouts():
    sheet = condition31_c(30, 1.0, 1e-3)
    assert f"{sheet:.3g}" in signgd_draw_note(seed=11)  # a bare seed: the sheet's CPU setting
    assert f"{sheet:.3g}" in signgd_draw_note(cfg=(11, 8, 30, 1.0, 1e-3, 6e-5, 12000))
    assert f"{condition31_c(30, 2.0, 7e-4):.3g}" in signgd_draw_note(cfg=(777, 30, 2.0, 7e-4, 7e-5))
    path = signgd_draw_note(cfg=(11, 1.5))  # a draw of the declared path: c held, sigma_p by clause
    assert f"{PATH_C:.3g}" in path and "every rung" in path and "noise clause" in path
    assert f"{path_sigma_p(30, 1.5):.4g}" in path
    l43 = signgd_draw_note(cfg=(11, 1.0, 1e-3, 0.02))
    assert f"{condition31_c(L43_S[-1], 1.0, 1e-3):.3g}" in l43 and "part of the rungs" in l43
    grid = signgd_draw_note(seed=0, sigma_0=(1e-3, 0.3))
    assert "0.0849-25.5" in grid and "part of the rungs" in grid
    assert "not evaluated" in signgd_draw_note(cfg=(1, 2, 3))
