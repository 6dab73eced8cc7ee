"""The simulation of the `new-claim` skeleton's toy claim (gradient descent on a quadratic):
kept in the package, so that a skeleton claim file runs as written at any point in a paper's
life, whatever sim/<paper>.py holds by then.  Not a paper's simulation."""

from __future__ import annotations

import torch

from sim import make_generator
from theory.validate import device as check_device
from theory.validate import flag, integer, number


def gd_quadratic(seed: int, a: float, eta: float, t: int, device="cpu", train: bool = True):
    """Run t steps of gradient descent on f(x) = a x^2 / 2 from x0 ~ N(0, 1) drawn from `seed`;
    returns (x0, x_t).  `train=False` is the null (the steps switched off)."""
    a, eta = number("a", a, lo=0, lo_open=True), number("eta", eta, lo=0, lo_open=True)
    t, train = integer("t", t, lo=0, hi=10**6), flag("train", train)
    check_device("device", device)
    g = make_generator(seed)
    x0 = torch.randn((), generator=g, dtype=torch.float64).to(device)
    x = x0.clone().requires_grad_(True)
    for _ in range(t if train else 0):
        loss = 0.5 * a * x ** 2
        (grad,) = torch.autograd.grad(loss, x)
        x = (x - eta * grad).detach().requires_grad_(True)
    return float(x0), float(x.detach())
