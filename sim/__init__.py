"""Simulations the audited claims are about (torch). CUDA when present, CPU otherwise."""

import torch


DEVICE_ENV = "THEOREM_AUDIT_DEVICE"


def default_device() -> torch.device:
    """The device the simulations run on: THEOREM_AUDIT_DEVICE (`cpu` or `cuda`, the audit's
    `--device`) when set, else CUDA when present and the CPU otherwise.  ValueError for another
    name, or for `cuda` where no CUDA device is present (never a silent fallback)."""
    import os

    want = os.environ.get(DEVICE_ENV, "")
    if want == "":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if want not in ("cpu", "cuda"):
        raise ValueError(f"{DEVICE_ENV} must be 'cpu' or 'cuda', got {want!r}")
    if want == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{DEVICE_ENV}=cuda but torch finds no CUDA device (torch "
                         f"{torch.__version__}); use cpu or install a CUDA build of torch")
    return torch.device(want)


def make_generator(seed: int, device: torch.device | str | None = None) -> torch.Generator:
    """A local generator: simulations never touch the global RNG state."""
    from theory.validate import device as _device
    _device("device", device)
    from theory.validate import MAX_SEED, integer
    seed = integer("seed", seed, lo=0, hi=MAX_SEED)  # not a bool, not negative, < 2^63
    g = torch.Generator(device=torch.device(device) if device is not None else "cpu")
    g.manual_seed(seed)
    return g


def gamma_sample(alpha: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Gamma(alpha, 1) samples with an explicit generator (Marsaglia-Tsang, boosted for
    alpha < 1); torch's Gamma and Dirichlet take no generator.  alpha must be finite and > 0
    (an infinite concentration would never be accepted: ValueError, not a hang)."""
    if not isinstance(alpha, torch.Tensor) or not alpha.is_floating_point():
        raise ValueError(f"alpha must be a floating-point tensor, got {type(alpha).__name__}")
    if not isinstance(gen, torch.Generator):
        raise ValueError(f"gen must be a torch.Generator (no fallback to the global RNG), got {gen!r}")
    if alpha.numel() and not bool((torch.isfinite(alpha) & (alpha > 0)).all()):
        raise ValueError("alpha must be finite and > 0 in every entry (range (0, inf)), got "
                         f"min {float(alpha.min())}, max {float(alpha.max())}")
    a = alpha + (alpha < 1).to(alpha.dtype)
    d = a - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)
    out = torch.empty_like(alpha)
    todo = torch.ones_like(alpha, dtype=torch.bool)
    while todo.any():
        x = torch.randn(alpha.shape, generator=gen, dtype=alpha.dtype)
        u = torch.rand(alpha.shape, generator=gen, dtype=alpha.dtype)
        v = (1 + c * x) ** 3
        ok = (v > 0) & (torch.log(u.clamp_min(1e-300)) < 0.5 * x ** 2 + d - d * v
                        + d * torch.log(v.clamp_min(1e-300)))
        take = todo & ok
        out[take] = (d * v)[take]
        todo &= ~ok
    boost = alpha < 1
    if boost.any():
        u = torch.rand(alpha.shape, generator=gen, dtype=alpha.dtype)
        out = torch.where(boost, out * u ** (1.0 / alpha), out)
    return out
