"""Shared, cached trained-transformer runs of the JoMA claims (Section 6, Table 1's generator) and
the settings they use, as data.  No Claim is registered here and no claim file is imported
(tests/test_layout.py); the claim files (test_table1.py, test_sec4_*_trained.py,
test_sec5_lowest_first.py) and figures.py read these runs.

Settings (`Setting`, frozen data):
  TABLE1_CI / DYN_CI         the CI size (d = 32, 2 layers) the old module used;
  TABLE1_PAPER / DYN_PAPER   the paper's size (d = 1024, 3 layers, 10k Adam steps; Table 1 at lr
                             1e-5, Fig. 6 at lr 1e-4).  They run through the same functions, only
                             when CUDA is present (`paper_available()`); nothing here runs them
                             on a CPU.
  LADDERS                    the model sizes d of the asymptotic policy per named size
                             (properties.check.size(), the audit's --size): ci (8, 16, 32),
                             ladder (16, 32, 64, 128), paper the same plus DYN_PAPER as the last
                             rung (CUDA only).

Runs (properties.cache.run_cache: trained once, whichever claim, worker, shard or figure asks
first, and kept on disk, content-addressed by the code version and the arguments):
  table1_run(seeds, config, setting)    NCorr (s = 0, 1) of each stacked seed, untrained (the
                                        network at its initialisation, evaluated on the same
                                        samples) and trained;
  dynamics_run(seeds, setting, order, rho, lr, freeze)
                                        next-token training on the SIMPLE Table 1 generator,
                                        every model of `seeds` stacked in one program (the
                                        claims pass every seed of a rung at once and take their
                                        draw's part: one cache entry per rung and seed batch,
                                        computed once across processes), probed N_LOG times:
                                        attention entropy per layer, stable rank of each
                                        block's W1, centred layer-0 attention logits by sibling
                                        height H.  freeze="attention": Wq and Wk of every block
                                        held at their initialisation (a null).
  untrained_curves(run)                 the same probes with training off (every logged time
                                        is the initialisation): a null.

Randomness: local generators only (sim.make_generator); float32 training (no exact claim rests
on it, said in each claim).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from properties.cache import run_cache
from properties import null
from properties.check import size
from sim import default_device, make_generator, measure
from sim.joma import make_table1_generator, sample_hierarchy, sibling_height
from sim.measure import (attention_entropy, best_match_ncorr, grouped_attention_logits,
                         max_over_sequence, record)
from sim.transformer import StackedTransformer, train


@dataclass(frozen=True)
class Setting:
    """One training size.  batch: samples per model per step; n_eval: held-out samples probed;
    steps: Adam steps; lr: the learning rate; cuda_only: never run on a CPU."""

    name: str
    d: int
    depth: int
    batch: int
    n_eval: int
    steps: int
    lr: float
    cuda_only: bool = False

    def __post_init__(self):
        for k in ("d", "depth", "batch", "n_eval", "steps"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k} must be an int >= 1, got {v!r}")
        if not (self.lr > 0):
            raise ValueError(f"lr must be > 0, got {self.lr!r}")

    def at(self, d: int) -> "Setting":
        """The same setting at model size d (a rung of the ladder)."""
        return replace(self, name=f"{self.name}-d{d}", d=d)


# Table 1 (Section 6): C, N_ch, (N_0, N_1); the paper's printed means (s = 0, s = 1)
PAPER_TABLE1 = {
    (20, 2, (10, 20)): (0.99, 0.81), (20, 2, (20, 30)): (0.97, 0.80),
    (20, 3, (10, 20)): (1.00, 0.69), (20, 3, (20, 30)): (0.96, 0.68),
    (30, 2, (10, 20)): (0.99, 0.73), (30, 2, (20, 30)): (0.94, 0.74),
    (30, 3, (10, 20)): (0.99, 0.72), (30, 3, (20, 30)): (0.95, 0.66),
    (50, 2, (10, 20)): (0.99, 0.58), (50, 2, (20, 30)): (0.95, 0.55),
    (50, 3, (10, 20)): (0.99, 0.64), (50, 3, (20, 30)): (0.95, 0.61),
}
SIMPLE, COMPLEX = (20, 2, (10, 20)), (50, 3, (20, 30))  # Table 1's two extremes

TABLE1_CI = Setting("table1-ci", d=32, depth=2, batch=32, n_eval=256, steps=200, lr=3e-3)
TABLE1_PAPER = Setting("table1-paper", d=1024, depth=3, batch=64, n_eval=512, steps=10000,
                       lr=1e-5, cuda_only=True)
DYN_CI = Setting("dyn-ci", d=32, depth=2, batch=32, n_eval=64, steps=400, lr=3e-3)
DYN_PAPER = Setting("dyn-paper", d=1024, depth=3, batch=64, n_eval=128, steps=10000, lr=1e-4,
                    cuda_only=True)
# The named sizes (properties.check.size(); `--size` of the audit): the ladder's rungs d, and
# whether the paper's own size runs (as the ladder's last rung, and as Table 1's setting).
LADDERS = {"ci": (8, 16, 32), "ladder": (16, 32, 64, 128), "paper": (16, 32, 64, 128)}
N_LOG = 10  # probes per run (plus the initialisation)


def paper_available() -> bool:
    """The paper-size settings run only on a CUDA device (sim.default_device(): `--device`)."""
    return default_device().type == "cuda"


def _paper_size() -> bool:
    if size() != "paper":
        return False
    if not paper_available():
        raise ValueError("size 'paper' (JoMA d = 1024, 3 layers, 10k steps) runs only on a CUDA "
                         "device; use --size ci or ladder on a CPU")
    return True


def ladder(base: Setting = DYN_CI) -> tuple:
    """The settings of the size ladder of the named size (properties.check.size()); at size
    `paper` the paper's own size is the last rung (same code path)."""
    rungs = tuple(base.at(d) for d in LADDERS[size()])
    if size() != "ci":  # the long ladders: the horizon grows with d (steps x d / 32, >= steps)
        rungs = tuple(replace(r, steps=max(r.steps, r.steps * r.d // 32)) for r in rungs)
    if _paper_size():
        rungs += (DYN_PAPER,)
    return rungs


def table1_setting() -> Setting:
    """Table 1's setting at the named size: the paper's at size `paper`, else the CI size."""
    return TABLE1_PAPER if _paper_size() else TABLE1_CI


def _guard(setting: Setting):
    if setting.cuda_only and not paper_available():
        raise ValueError(f"setting {setting.name!r} (d = {setting.d}) runs only with CUDA present")


def _batcher(gens, data_gens, N, chunk: int = 50):
    """batch(step) for train(): each model's samples are drawn `chunk` steps at a time (one
    sample_hierarchy call per model per chunk, from its own generator)."""
    dev = default_device()
    cur = {}

    def batch(step):
        c, i = divmod(step, chunk)
        if cur.get("c") != c:
            ss = [sample_hierarchy(g, N * chunk, dg) for g, dg in zip(gens, data_gens)]
            cur.update(c=c, tok=torch.stack([s.tokens.reshape(chunk, N, -1) for s in ss]).to(dev),
                       lab=torch.stack([s.labels.reshape(chunk, N) for s in ss]).to(dev),
                       mask=torch.stack([s.mask.reshape(chunk, N, -1) for s in ss]).to(dev))
        return cur["tok"][:, i], cur["lab"][:, i], cur["mask"][:, i]
    return batch


# --------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------
@run_cache(maxsize=16)
def table1_run(seeds: tuple, config: tuple = SIMPLE, setting: Setting = TABLE1_CI) -> dict:
    """NCorr (Section 6) of every stacked seed on one Table 1 config.

    Returns dict(untrained=(S, 2), trained=(S, 2)): per seed and layer s = 0, 1 the mean over
    latents (those varying in the eval sample) of the best-matching neuron's normalized
    correlation; each neuron's max activation over real positions, centred over the n_eval
    held-out samples.  `untrained` is the same network at its initialisation on the same
    samples (the null of joma.table1)."""
    _guard(setting)
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must be a non-empty tuple of ints")
    C, N_ch, Ns = config
    gens = [make_table1_generator(C, N_ch, Ns, generator=make_generator(s)) for s in seeds]
    dgs = [make_generator(s + 7919) for s in seeds]
    model = StackedTransformer(list(seeds), vocab=100, n_out=C, d=setting.d, depth=setting.depth)
    ev = [sample_hierarchy(g, setting.n_eval, make_generator(s + 104729))
          for g, s in zip(gens, seeds)]
    etok = torch.stack([e.tokens for e in ev]).to(default_device())

    def ncorr(m):
        with torch.no_grad(), record({f"h{l}": m.blocks[l].mlp_act for l in range(2)}) as out:
            m(etok)
        res = np.zeros((len(seeds), 2))
        for i in range(len(seeds)):
            for s in range(2):
                mx = max_over_sequence(out[f"h{s}"][i].cpu(), ev[i].mask)
                res[i, s] = float(torch.nanmean(best_match_ncorr(mx, ev[i].latents[s])))
        return res

    untrained = ncorr(model)
    train(model, _batcher(gens, dgs, setting.batch), steps=setting.steps, lr=setting.lr,
          log_every=setting.steps)
    return dict(untrained=untrained, trained=ncorr(model))


# --------------------------------------------------------------------------------------------
# Training dynamics (Sections 4-6: entropy, stable rank, grouped attention logits)
# --------------------------------------------------------------------------------------------
def _freeze_attention(model):
    """Hold every block's Wq and Wk at their initialisation: they become buffers, so train()
    (which steps model.parameters()) leaves them alone; the forward pass is unchanged."""
    for blk in model.blocks:
        for name in ("Wq", "Wk"):
            w = getattr(blk, name).detach().clone()
            delattr(blk, name)
            blk.register_buffer(name, w)


FREEZES = ("none", "attention")


@run_cache(maxsize=48)
def dynamics_run(seeds: tuple, setting: Setting = DYN_CI, order: str = "sorted",
                 rho: float = 1.0, lr: float | None = None, freeze: str = "none") -> dict:
    """Next-token training of len(seeds) models (stacked, one program) on the SIMPLE Table 1
    generator with token `order` and uncertainty `rho`, at `setting` (lr defaults to
    setting.lr), probed N_LOG times (plus step 0) on setting.n_eval held-out samples.  One
    cache entry per call (computed once across processes: the run cache's lock).

    Returns dict(steps (t,), ent (t, layer, S) attention entropy over real query rows (nats),
    sr (t, layer, S) stable rank of blocks[l].W1, logits (t, S, 4) centred layer-0 attention
    logits by sibling height H = 0..3 (H = 1: same s = 0 latent as the query), d, seeds)."""
    _guard(setting)
    if freeze not in FREEZES:
        raise ValueError(f"freeze must be one of {FREEZES}, got {freeze!r}")
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must be a non-empty tuple of ints")
    lr = setting.lr if lr is None else float(lr)
    C, N_ch, Ns = SIMPLE
    gens = [make_table1_generator(C, N_ch, Ns, rho=rho, order=order, generator=make_generator(s))
            for s in seeds]
    dgs = [make_generator(s + 7919) for s in seeds]
    depth = setting.depth
    model = StackedTransformer(list(seeds), vocab=100, n_out=100, d=setting.d, depth=depth)
    if freeze == "attention":
        _freeze_attention(model)
    ev = [sample_hierarchy(g, setting.n_eval, make_generator(s + 104729))
          for g, s in zip(gens, seeds)]
    dev = default_device()
    etok = torch.stack([e.tokens for e in ev]).to(dev)
    emask = torch.stack([e.mask for e in ev]).to(dev)
    T = etok.shape[-1]
    grp = torch.stack([sibling_height(g)[e.tokens[:, :, None], e.tokens[:, None, :]]
                       for g, e in zip(gens, ev)]).to(dev)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=dev), -1)
    km = emask[:, :, None, :] & emask[:, :, :, None] & causal

    def probe(m, step):
        with record({f"a{l}": m.blocks[l].attn_softmax for l in range(depth)}) as out:
            m(etok)
        ent = torch.stack([attention_entropy(out[f"a{l}"], emask[:, :, None, :], keep_dims=1)
                           for l in range(depth)]).cpu()
        sr = torch.stack([measure.stable_rank(b.W1) for b in m.blocks]).cpu()
        gl = grouped_attention_logits(out["a0"], grp, 4, km).cpu()
        return step, ent, sr, gl

    steps = setting.steps
    log = train(model, _batcher(gens, dgs, setting.batch), steps=steps, lr=lr, task="next",
                log_every=max(steps // N_LOG, 1), probe=probe)
    st_, ent, sr, gl = zip(*log.records)
    return dict(steps=np.array(st_), ent=torch.stack(ent).double().numpy(),
                sr=torch.stack(sr).double().numpy(), logits=torch.stack(gl).numpy(),
                d=setting.d, seeds=seeds)


def untrained_curves(run: dict) -> dict:
    """The null 'no training': every logged time shows the initialisation (step 0) of `run`."""
    out = dict(run)
    for k in ("ent", "sr", "logits"):
        out[k] = np.repeat(run[k][:1], run[k].shape[0], axis=0)
    return out


def dynamics_untrained(seeds: tuple, setting: Setting = DYN_CI, order: str = "sorted") -> dict:
    """Null of the trained-dynamics claims: training off (the initialisation at every logged
    time)."""
    return untrained_curves(dynamics_run(seeds, setting, order))


def dynamics_attention_frozen(seeds: tuple, setting: Setting = DYN_CI,
                              order: str = "sorted") -> dict:
    """Null of the trained-dynamics claims: Wq and Wk of every block held at their
    initialisation; the rest trained."""
    return dynamics_run(seeds, setting, order, 1.0, None, "attention")


# The setting and the nulls shared by joma.sec4.entropy_dynamics_trained,
# joma.sec4.rank_dynamics_trained and joma.sec5.lowest_first (slot "run": dynamics_run)
DYN_SETTING = (f"Decoder-only transformer (sim.transformer: no positional embedding, post-LN, "
               f"1 head, ReLU MLP of width 4d) trained from scratch by Adam (lr {DYN_CI.lr:g}, "
               f"batch {DYN_CI.batch}, {DYN_CI.steps} steps, next-token loss) on Table 1's "
               "generator C = 20, "
               f"N_ch = 2, N_s = (10, 20), rho = 1, M = 100, T = 30; {DYN_CI.depth} layers; "
               "every seed of the three explicit draws stacked (size ci: 12 in one program per "
               "rung; size ladder: 36, one program per block of 12), each draw deciding on 2 "
               f"blocks of them (8 / 24 seeds per rung); ladder d in {LADDERS['ci']} (size ci, {DYN_CI.steps} steps "
               f"at every d) / {LADDERS['ladder']} (size ladder, steps x d/32 at d > 32; size "
               "paper adds d = 1024, 3 layers, 10k steps, lr 1e-4, CUDA only). "
               "Wikitext (Figs. 6, 8) is not available offline.")
DYN_NULLS = (
    null("untrained", dynamics_untrained, "training off: the network at its initialisation at "
         "every logged time", replaces="run"),
    null("attention_frozen", dynamics_attention_frozen, "attention frozen: Wq, Wk of every block "
         "held at their initialisation, everything else trained", replaces="run"),
)


# --------------------------------------------------------------------------------------------
# Fig. 2 (Section 3): Eqn. 2 with softmax attention and linear phi on Fig. 2's two x settings
# --------------------------------------------------------------------------------------------
FIG2_ETA = 0.05
DISTS = ("smooth", "random")


def fig2_problem(seeds, M_C, K, extra_d, N, dist, tokens=20):
    """Eqn. 2 (softmax, linear phi, C = max(K, 2) classes) with Fig. 2's data: x[i] the token
    frequencies of `tokens` draws from P(l | y_i).  dist="random": P(l | y) ~ Dirichlet(0.5) per
    class (sim.joma.make_problem); dist="smooth": P(l | y) ∝ exp(-(l - c_y)^2 / (2 w^2)), a bump
    whose centre c_y = y (M_C - 1)/(C - 1) moves with the class, width w = M_C / C.  The
    gradients are Assumption 1's g_{h_k}[i] = 1[y_i = k] - 1/C."""
    import dataclasses

    from sim.joma import make_problem
    if dist not in DISTS:
        raise ValueError(f"dist must be one of {DISTS}, got {dist!r}")
    C = max(K, 2)
    p = make_problem(seeds, M_C=M_C, K=K, C=C, d=M_C + 1 + extra_d, N=N, attention="softmax",
                     activation="linear", device="cpu")
    if dist == "random":
        return p
    X, G = [], []
    for s in seeds:
        g = make_generator(s + 31337)
        y = torch.randint(0, C, (N,), generator=g)
        l = torch.arange(M_C, dtype=torch.float64)
        c = torch.arange(C, dtype=torch.float64) * (M_C - 1) / (C - 1)
        w = M_C / C
        pt = torch.exp(-(l[None] - c[:, None]) ** 2 / (2 * w * w))
        pt = pt / pt.sum(-1, keepdim=True)
        draws = torch.multinomial(pt[y], tokens, replacement=True, generator=g)
        X.append(torch.zeros(N, M_C, dtype=torch.float64).scatter_add_(
            1, draws, torch.ones(N, tokens, dtype=torch.float64)) / tokens)
        G.append(torch.nn.functional.one_hot(y, C)[:, :K].to(torch.float64) - 1.0 / C)
    return dataclasses.replace(p, X=torch.stack(X), G=torch.stack(G))


def fig2_run(seeds, M_C, K, extra_d, N, dist, horizon):
    """sim.joma.simulate_eqn2 from zero initialisation, eta = FIG2_ETA, 20 logged times."""
    from sim.joma import simulate_eqn2
    p = fig2_problem(list(seeds), M_C, K, extra_d, N, dist)
    steps = int(round(horizon / FIG2_ETA))
    return simulate_eqn2(p, eta=FIG2_ETA, horizon=horizon, log_every=max(1, steps // 20))
