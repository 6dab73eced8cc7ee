"""Helpers shared by the JoMA claim files (Sections 2-3: Eqn. 2 problems and strategies).

Imports no claim file (tests/test_layout.py).
"""

from __future__ import annotations

from hypothesis import strategies as st

from sim.joma import make_problem

SEEDS = st.lists(st.integers(0, 2**31 - 1), min_size=2, max_size=3, unique=True)


def ETAS(eta0):
    """The halving ladder of step sizes: eta0, eta0/2, eta0/4, eta0/8."""
    return [eta0, eta0 / 2, eta0 / 4, eta0 / 8]


def problem(draw_params, attention):
    """An Eqn. 2 problem from (seeds, M_C, K, extra_d, N, activation, A)."""
    seeds, M_C, K, extra_d, N, act, A = draw_params
    return make_problem(seeds, M_C=M_C, K=K, C=max(K, 2), d=M_C + 1 + extra_d, N=N,
                        attention=attention, activation=act, A=A, device="cpu")
