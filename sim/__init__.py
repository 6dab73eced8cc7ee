"""Simulations the audited claims are about (torch). CUDA when present, CPU otherwise."""

import torch


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_generator(seed: int, device: torch.device | str | None = None) -> torch.Generator:
    """A local generator: simulations never touch the global RNG state."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    g = torch.Generator(device=torch.device(device) if device is not None else "cpu")
    g.manual_seed(seed)
    return g
