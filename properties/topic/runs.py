"""Runs and settings of the topic audit, as data.  Imports no claim file.

`WV_BLOCKWISE`: the Section 6 (Figure 2) run, one-hot embeddings frozen, uniform attention, W^V
trained with ridge by Adam on fresh LDA documents; CI size T = v = 5 (the paper's T = v = 10 is
not run), the paper's p_m, p_c, p_r.  Each batch element (seed slot) has its own documents and
init, so the elements of a batched run are i.i.d. with the law of a single-element run.

`WV_BLOCKWISE_CALIBRATION`: the block contrast of 160 calibration elements (generator seeds
10000..10003, 40 elements each; the audit draws generator seeds 0..9999 with one element), made
by `calibrate_wv_blockwise()` on 2026-12-03 (CPU, float64).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch

from properties.cache import run_cache
from sim import make_generator
from sim import topic as sm
from theory import topic as th

WV_BLOCKWISE = dict(T=5, v=5, steps=300, batch=32, lr=0.02, lam=1e-4, scale=0.01,
                    p=(0.15, 0.1, 0.1))


def train_wv_blockwise(seed: int, S: int = 1, steps: int | None = None) -> np.ndarray:
    """Trained W^V, shape (S, n, n), of the WV_BLOCKWISE setting from generator seed `seed`."""
    c = WV_BLOCKWISE
    T, v = c["T"], c["v"]
    n = T * v + 1
    g = make_generator(seed)
    sw = sm.Switches(onehot=True, uniform=True)
    p = sm.init_params(g, S, n, sw=sw, scale=c["scale"], device="cpu")
    k = c["steps"] if steps is None else steps
    sm.train(p, g, T=T, v=v, steps=k, batch=c["batch"], sw=sw, loss="squared", opt="adam",
             lr=c["lr"], lam=c["lam"], model="lda", p_m=c["p"][0], p_c=c["p"][1],
             p_r=c["p"][2], log_every=max(k, 1))
    return p["WV"].numpy()


def block_contrast(W) -> np.ndarray:
    """(mean same-topic off-diagonal - mean different-topic entry of the word block) / (c3/v):
    the block contrast relative to Theorem 2's contrast c3/v, per leading index."""
    c = WV_BLOCKWISE
    sc = sm.block_scores(W, c["T"], c["v"])
    return (sc["same_topic"] - sc["diff_topic"]) / (th.c3(*c["p"]) / c["v"])


def calibrate_wv_blockwise(seeds=(10000, 10001, 10002, 10003), S=40) -> list:
    return [float(x) for s in seeds for x in block_contrast(train_wv_blockwise(s, S=S))]


WV_BLOCKWISE_CALIBRATION = dict(
    generator_seeds=range(10000, 10004),
    elements_per_seed=40,
    scores=(
        0.9274720403569957,
        0.9362987257817155,
        0.9277675987537384,
        0.9357039569163447,
        0.9345557061224751,
        0.9324823122274376,
        0.9277584891317263,
        0.9001349541151288,
        0.9290331362179678,
        0.9418531822119166,
        0.9384785045514483,
        0.9251461125850042,
        0.9462802778634967,
        0.937852215572027,
        0.915591066439032,
        0.9245114993390116,
        0.9390402022117413,
        0.9176180265886671,
        0.92628144581198,
        0.9267426892453988,
        0.9136110712226729,
        0.921470441185735,
        0.9280592417039992,
        0.9388193516656665,
        0.9354518900710905,
        0.9379475350249051,
        0.9495155069956526,
        0.9371367550578783,
        0.9466867909604356,
        0.948400284949356,
        0.9510376691789688,
        0.9295010245285334,
        0.9470909148089146,
        0.9366068205944298,
        0.9238783122470158,
        0.9306640281448885,
        0.9355844876618606,
        0.9443935311648317,
        0.9372376843879509,
        0.9366651683914413,
        0.9320458700010296,
        0.9314642693559583,
        0.9208598519017084,
        0.9264692569879805,
        0.9319464572639413,
        0.9285322450589275,
        0.9323288631549803,
        0.9174548993679486,
        0.9253972968248255,
        0.9387657409503307,
        0.9410438720813407,
        0.9317463466485167,
        0.9301212772310659,
        0.9275920087628046,
        0.9149582552491041,
        0.9301577444261636,
        0.927778333865492,
        0.9563566202180838,
        0.9269295895671091,
        0.9362104364514036,
        0.9468321923077305,
        0.9288087114491613,
        0.9301156608954979,
        0.9128886428488906,
        0.9255148358513289,
        0.9187615911436531,
        0.9349105144494286,
        0.9274613680363052,
        0.9284563987672768,
        0.922559097607564,
        0.9327643169074761,
        0.9188802354314141,
        0.922151991736314,
        0.9375060313179208,
        0.9323468319369679,
        0.9340680797434273,
        0.9366113752857628,
        0.9191439440053336,
        0.9426236726795475,
        0.9453767476663424,
        0.93567452554728,
        0.934712774778091,
        0.9326599487801612,
        0.9347690980999043,
        0.9297443053254546,
        0.950600815815439,
        0.9415675599147685,
        0.9345298279992447,
        0.9084275819645861,
        0.9411482626527088,
        0.9201307842245234,
        0.9379711921408563,
        0.9244904789035595,
        0.9389115670317597,
        0.9297619967712604,
        0.9418963307847462,
        0.9265703457779327,
        0.9271134256756137,
        0.9319163232826471,
        0.9361146070119077,
        0.929662255639785,
        0.9183358310755297,
        0.9433723899049408,
        0.9265652297497997,
        0.9191289553571276,
        0.9283704909900635,
        0.9382349340766001,
        0.9285962362834624,
        0.927476170243627,
        0.9377994899800555,
        0.9211532331578997,
        0.9148485911455142,
        0.9445220376190939,
        0.9293096041324198,
        0.9348161641875408,
        0.9319770862156918,
        0.9195993722609804,
        0.9250324495504515,
        0.9343131245161791,
        0.9418677058565211,
        0.9299361510644698,
        0.926573101227335,
        0.9562559875271323,
        0.9340477684029873,
        0.9380596853706644,
        0.9330680682433794,
        0.9550586834162763,
        0.950452796009085,
        0.9220935856959162,
        0.9356946797539362,
        0.9250401778306735,
        0.9389678368534163,
        0.9307592204864964,
        0.9418476014791572,
        0.9341075440872727,
        0.9048989362232124,
        0.9333970878562825,
        0.9148884544639405,
        0.9426830128319742,
        0.9387475079916623,
        0.9457254295732257,
        0.9313092298840804,
        0.9378888182345521,
        0.9427719055736301,
        0.9199708704736352,
        0.9289888331680843,
        0.9385369200462848,
        0.9236150696399072,
        0.9324488663780466,
        0.9307439733038645,
        0.9429205908644465,
        0.9247942616484802,
        0.9269097768273283,
        0.9330462776244951,
        0.9238278435256191,
        0.9418771126916213,
        0.92055707388795,
        0.9369124553265199,
        0.946068160480436,
        0.9444767674488684,
    ),
)


# ============================================================================================
# Section 6 / Appendix E: the other empirical runs (topic.empirical.*)
# ============================================================================================
# Every run below: LDA documents (Dirichlet(0.1)), the paper's p_m, p_c, p_r, CI size T = v = 5
# (the paper's T = v = 10 is not run), float64 on CPU, a batch of S i.i.d. elements (each its
# own init and documents) drawn from one generator seed.  Held-out documents are drawn FIRST
# from the run's generator (so two models trained from the same seed are compared on the same
# documents, common random numbers), then the init, then the training stream.  The functions are
# cached (lru_cache): callers must not modify what they return.
EMP = dict(T=5, v=5, p=(0.15, 0.1, 0.1), heldout_docs=200, heldout_N=(100, 150))

# The one-layer models of Section 6 (one-hot W^E, squared loss, Adam lr 0.01, N(0, 0.01^2)
# init, batch 8, documents N in 100..150):
#   "joint":   W^K, W^Q, W^V, the biases and b^pred trained jointly, 300 steps
#              (topic.empirical.attention_order (a), topic.empirical.uniform_loss_gap);
#   "uniform": W^K = W^Q = 0 frozen (uniform attention), W^V, b^V, b^pred trained, 300 steps
#              (topic.empirical.uniform_loss_gap);
#   "dv":      W^V frozen to Definition 2's D^V, W^K, W^Q, the biases, b^pred trained, 200 steps
#              (topic.empirical.attention_order (b)).
LDA_MODELS = {
    "joint": dict(sw=sm.Switches(onehot=True, biases=True), steps=300),
    "uniform": dict(sw=sm.Switches(onehot=True, uniform=True, biases=True), steps=300),
    "dv": dict(sw=sm.Switches(onehot=True, biases=True, freeze_v=True), steps=200),
}
LDA_TRAIN = dict(batch=8, lr=0.01, scale=0.01, N_range=(100, 150))


def heldout_documents(g: torch.Generator, S: int):
    """S x D held-out LDA documents, masked: (words, valid, tokens, masked), each (S, D, N)."""
    T, v, D = EMP["T"], EMP["v"], EMP["heldout_docs"]
    w, valid = sm.sample_documents(g, S * D, T, v, model="lda", N_range=EMP["heldout_N"])
    tok, m = sm.mask_tokens(g, w, valid, *EMP["p"], T * v)
    return tuple(x.view(S, D, -1) for x in (w, valid, tok, m))


@run_cache(maxsize=16)
def lda_run(model: str, seed: int, S: int = 1, steps: int | None = None):
    """(params, held-out documents) of LDA_MODELS[model] from generator seed `seed`, S elements;
    steps=0 is the untrained model (training off)."""
    if model not in LDA_MODELS:
        raise ValueError(f"model must be one of {sorted(LDA_MODELS)}, got {model!r}")
    c, T, v = LDA_MODELS[model], EMP["T"], EMP["v"]
    n = T * v + 1
    g = make_generator(seed)
    held = heldout_documents(g, S)
    WV = th.definition2_dv(T, v, *EMP["p"]) if model == "dv" else None
    p = sm.init_params(g, S, n, sw=c["sw"], scale=LDA_TRAIN["scale"], WV=WV, device="cpu")
    k = c["steps"] if steps is None else steps
    sm.train(p, g, T=T, v=v, steps=k, batch=LDA_TRAIN["batch"], sw=c["sw"], loss="squared",
             opt="adam", lr=LDA_TRAIN["lr"], model="lda", p_m=EMP["p"][0], p_c=EMP["p"][1],
             p_r=EMP["p"][2], N_range=LDA_TRAIN["N_range"], log_every=max(k, 1))
    return p, held


def _chunks(p: dict, held, chunk: int):
    S = p["WV"].shape[0]
    for i in range(0, S, chunk):
        yield ({k: x[i:i + chunk] for k, x in p.items()},
               tuple(x[i:i + chunk] for x in held))


def attention_kinds(model: str, p: dict, held, chunk: int = 2, uniform: bool = False,
                    relabel: bool = False) -> dict:
    """Length-debiased (Appendix E.3: x N/100) mean attention per pair kind on the held-out
    documents, per element: {same_position, same_word, same_topic, diff_topic: (S,)}.
    uniform=True: the same model read with uniform attention (W^K = W^Q = 0 switched in);
    relabel=True: the attention of the true input, its pairs classified by topic-scrambled ids."""
    sw, v = LDA_MODELS[model]["sw"], EMP["v"]
    if uniform:
        sw = sm.Switches(onehot=sw.onehot, uniform=True, freeze_v=sw.freeze_v, biases=sw.biases)
    out = []
    with torch.no_grad():
        for pc, (w, valid, tok, m) in _chunks(p, held, chunk):
            _, A = sm.forward(pc, tok, valid, sw, return_attention=True)
            ids = relabel_topics(tok) if relabel else tok
            out.append(sm.attention_stats(A, ids, valid, v, normalise_length=100))
    return {k: np.concatenate([o[k] for o in out]) for k in out[0]}


def relabel_topics(tok: torch.Tensor) -> torch.Tensor:
    """Topic-scrambling relabelling of word ids (needs v <= T): word j of topic t -> word j of
    topic (t + j) mod T, [MASK] = 0 fixed.  Two different words share a relabelled topic only if
    their true topics differ: relabelled same-topic pairs are true different-topic pairs."""
    T, v = EMP["T"], EMP["v"]
    t, j = np.divmod(np.arange(T * v), v)
    perm = torch.as_tensor(np.r_[0, 1 + ((t + j) % T) * v + j])
    return perm[tok]


def heldout_losses(model: str, p: dict, held, chunk: int = 4) -> np.ndarray:
    """Per-document held-out MLM squared loss (mean over masked positions), (S, D)."""
    sw = LDA_MODELS[model]["sw"]
    out = []
    with torch.no_grad():
        for pc, (w, valid, tok, m) in _chunks(p, held, chunk):
            f = sm.forward(pc, tok, valid, sw)
            pick = f.gather(-1, w[..., None])[..., 0]
            per = (f * f).sum(-1) - 2 * pick + 1.0
            mf = m.to(torch.float64)
            out.append(((per * mf).sum(-1) / mf.sum(-1).clamp_min(1)).numpy())
    return np.concatenate(out)


def attention_order_scores(model: str, seed: int, S: int = 1, steps: int | None = None,
                           relabel: bool = False, uniform: bool = False) -> dict:
    """Log attention ratios per element: (a) "same_topic/diff_topic", (b) "same_word/diff_topic"
    and "diff_topic/same_topic" (each (S,)), from the trained `model` ("joint" or "dv").
    relabel: pair kinds read from topic-scrambled word ids; uniform: uniform attention."""
    p, held = lda_run(model, seed, S, steps)
    a = attention_kinds(model, p, held, uniform=uniform, relabel=relabel)
    return {"same_topic/diff_topic": np.log(a["same_topic"] / a["diff_topic"]),
            "same_word/diff_topic": np.log(a["same_word"] / a["diff_topic"]),
            "diff_topic/same_topic": np.log(a["diff_topic"] / a["same_topic"])}


def uniform_loss_gap(seed: int, S: int = 1, joint_steps: int | None = None,
                     uniform_steps: int | None = None) -> dict:
    """Relative held-out loss gap (L_uniform - L_joint) / L_uniform per element, with its paired
    Monte Carlo SE over the D held-out documents (common to both models)."""
    pu, held = lda_run("uniform", seed, S, uniform_steps)
    pj, held_j = lda_run("joint", seed, S, joint_steps)
    if not all(torch.equal(a, b) for a, b in zip(held, held_j)):
        raise RuntimeError("the two models must be compared on the same held-out documents")
    lu, lj = heldout_losses("uniform", pu, held), heldout_losses("joint", pj, held)
    d = lu - lj
    Lu = lu.mean(-1)
    return {"gap": d.mean(-1) / Lu, "se": d.std(-1, ddof=1) / np.sqrt(d.shape[-1]) / Lu,
            "L_uniform": Lu, "L_joint": lj.mean(-1)}


# topic.empirical.embedding_block: all components trained (W^E N(0, 1/d), d = Tv + 1), biases,
# N(0, 0.01^2) init of the rest, batch 16, 250 steps, documents N in 20..30, four (loss,
# optimiser, lr) settings trained one after the other from one generator.
EMBEDDING = dict(T=5, v=5, steps=250, batch=16, N_range=(20, 30), scale=0.01,
                 settings=(("squared", "adam", 0.01), ("squared", "sgd", 0.2),
                           ("ce", "adam", 0.01), ("ce", "sgd", 0.5)))


@run_cache(maxsize=8)
def train_embedding(seed: int, S: int = 1, steps: int | None = None) -> np.ndarray:
    """E = W^E^T W^E after training, (len(settings), S, n, n), from generator seed `seed`."""
    c = EMBEDDING
    T, v = c["T"], c["v"]
    n = T * v + 1
    k = c["steps"] if steps is None else steps
    sw = sm.Switches(biases=True)
    g = make_generator(seed)
    out = []
    for loss, opt, lr in c["settings"]:
        p = sm.init_params(g, S, n, d=n, sw=sw, scale=c["scale"], device="cpu")
        sm.train(p, g, T=T, v=v, steps=k, batch=c["batch"], sw=sw, loss=loss, opt=opt, lr=lr,
                 p_m=EMP["p"][0], p_c=EMP["p"][1], p_r=EMP["p"][2], N_range=c["N_range"],
                 log_every=max(k, 1))
        WE = p["WE"].numpy()
        out.append(np.einsum("sdi,sdj->sij", WE, WE))
    return np.stack(out)


def embedding_contrast(E) -> np.ndarray:
    """(mean same-topic off-diagonal - mean different-topic entry) / mean diagonal entry of the
    word block of E, per leading index."""
    sc = sm.block_scores(E, EMBEDDING["T"], EMBEDDING["v"])
    return (sc["same_topic"] - sc["diff_topic"]) / np.abs(sc["diag"])


# topic.empirical.wv_diagonal_no_l2: one-hot W^E, uniform attention, biases, squared loss, Adam
# lr 0.02, batch 32, 300 steps, N(0, 0.01^2) init, ridge lam on W^V (0: the claim's run).
WV_DIAGONAL = dict(T=5, v=5, steps=300, batch=32, lr=0.02, scale=0.01)


@run_cache(maxsize=8)
def train_wv_diagonal(seed: int, S: int = 1, lam: float = 0.0, steps: int | None = None) -> dict:
    """{"WV": trained W^V (S, n, n), "heldout_loss": (S, D) per-document MLM loss on held-out
    documents drawn after training from the same generator}.  Runs with equal seed and steps
    but different lam see the same training and held-out documents (common random numbers)."""
    c = WV_DIAGONAL
    T, v = c["T"], c["v"]
    n = T * v + 1
    k = c["steps"] if steps is None else steps
    sw = sm.Switches(onehot=True, uniform=True, biases=True)
    g = make_generator(seed)
    p = sm.init_params(g, S, n, sw=sw, scale=c["scale"], device="cpu")
    sm.train(p, g, T=T, v=v, steps=k, batch=c["batch"], sw=sw, loss="squared", opt="adam",
             lr=c["lr"], lam=lam, p_m=EMP["p"][0], p_c=EMP["p"][1], p_r=EMP["p"][2],
             log_every=max(k, 1))
    held = heldout_documents(g, S)
    with torch.no_grad():
        w, valid, tok, m = held
        f = sm.forward(p, tok, valid, sw)
        per = (f * f).sum(-1) - 2 * f.gather(-1, w[..., None])[..., 0] + 1.0
        mf = m.to(torch.float64)
        loss = ((per * mf).sum(-1) / mf.sum(-1).clamp_min(1)).numpy()
    return {"WV": p["WV"].numpy(), "heldout_loss": loss}


def diagonal_excess(W) -> np.ndarray:
    """(mean diagonal - mean same-topic off-diagonal entry of the word block) / (c3/v)."""
    c = WV_DIAGONAL
    sc = sm.block_scores(W, c["T"], c["v"])
    return (sc["diag"] - sc["same_topic"]) / (th.c3(*EMP["p"]) / c["v"])


# topic.empirical.two_stage: one-hot W^E, biases, near-zero positive init |N(0, s^2)| of W^K,
# W^Q, W^V for s on a ladder (REPLICATES elements per size, all in one program), squared loss,
# Adam lr 0.01, batch 8, 300 steps, documents N in 20..30, norms logged every 5 steps.
TWO_STAGE = dict(T=5, v=5, steps=300, batch=8, lr=0.01, scales=(0.02, 0.005, 0.00125),
                 replicates=4, N_range=(20, 30), log_every=5)


@run_cache(maxsize=8)
def two_stage_run(seed: int, steps: int | None = None) -> dict:
    """Norm curves (logged steps, elements) of W^V, W^K, W^Q; element e has init scale
    scales[e // replicates]."""
    c = TWO_STAGE
    T, v = c["T"], c["v"]
    n = T * v + 1
    R, sc = c["replicates"], c["scales"]
    S = R * len(sc)
    k = c["steps"] if steps is None else steps
    sw = sm.Switches(onehot=True, biases=True)
    g = make_generator(seed)
    p = sm.init_params(g, S, n, sw=sw, scale=1.0, positive=True, device="cpu")
    s = torch.tensor(np.repeat(sc, R), dtype=torch.float64)[:, None, None]
    for name in ("WK", "WQ", "WV"):
        p[name] = p[name] * s
    log = sm.train(p, g, T=T, v=v, steps=k, batch=c["batch"], sw=sw, loss="squared",
                   opt="adam", lr=c["lr"], p_m=EMP["p"][0], p_c=EMP["p"][1], p_r=EMP["p"][2],
                   N_range=c["N_range"], log_every=c["log_every"])
    return {"step": np.array(log.step), "scale": np.repeat(sc, R),
            **{name: np.array(log.norms[name]) for name in ("WV", "WK", "WQ")}}


def two_stage_fraction(run: dict) -> dict:
    """Per element: t_V (first logged step with ||W^V||_F >= 0.9 max), the fraction of W^K's and
    W^Q's total norm change (start -> end) done by t_V (the larger of the two), and their growth."""
    nv, nk, nq = run["WV"], run["WK"], run["WQ"]
    tV = np.argmax(nv >= 0.9 * nv.max(0), axis=0)
    idx = np.arange(nv.shape[1])

    def frac(x):
        return (x[tV, idx] - x[0]) / (x[-1] - x[0])
    return {"tV": run["step"][tV], "fraction": np.maximum(frac(nk), frac(nq)),
            "kq_at_tV": np.maximum(nk[tV, idx], nq[tV, idx]) / nv[tV, idx],
            "growth": np.minimum(nk[-1] / nk[0], nq[-1] / nq[0])}


# --------------------------------------------------------------------------------------------
# Calibration of the empirical claims' thresholds (run once; the results are stored below as
# *_CALIBRATION and CI only runs the audit draws):
#     python -m properties.topic.runs calibrate {embedding_block,wv_diagonal_no_l2,lda}
# ("lda": attention_order and uniform_loss_gap, which share the "joint" runs; run with 20
# elements per seed for cost), one JSON line per generator seed from 10000 up; the audit draws
# seeds 0..9999.  Each stored *_CALIBRATION says which seeds it holds (the runs were stopped
# when the session's time ran out, on a 2-core machine shared with other jobs).
# --------------------------------------------------------------------------------------------
CAL_SEEDS = range(10000, 10004)
CAL_S = 40


def calibrate(name: str, seeds=CAL_SEEDS, S: int = CAL_S):
    """Yield, per calibration generator seed, {"seed": s, "elements": S, <score>: [...]}."""
    if name not in ("embedding_block", "wv_diagonal_no_l2", "lda"):
        raise ValueError(f"name must be embedding_block, wv_diagonal_no_l2 or lda, got {name!r}")
    for s in seeds:
        out: dict = {"seed": s, "elements": S}
        if name == "embedding_block":
            E = train_embedding(s, S)
            for (loss, opt, lr), x in zip(EMBEDDING["settings"], embedding_contrast(E)):
                out[f"{loss}/{opt}"] = [float(y) for y in x]
            train_embedding.cache_clear()
        elif name == "wv_diagonal_no_l2":
            W = train_wv_diagonal(s, S)["WV"]
            out["diagonal_excess"] = [float(y) for y in diagonal_excess(W)]
            train_wv_diagonal.cache_clear()
        else:
            for model in ("joint", "dv"):
                for k, x in attention_order_scores(model, s, S).items():
                    out[f"{model}:{k}"] = [float(y) for y in x]
            gap = uniform_loss_gap(s, S)
            for k in ("gap", "se", "L_uniform", "L_joint"):
                out[f"loss:{k}"] = [float(y) for y in gap[k]]
            lda_run.cache_clear()
        yield out


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] != "calibrate":
        raise SystemExit("usage: python -m properties.topic.runs calibrate "
                         "{embedding_block,wv_diagonal_no_l2,lda} [elements per seed]")
    torch.set_num_threads(1)
    for rec in calibrate(sys.argv[2], S=int(sys.argv[3]) if len(sys.argv) == 4 else CAL_S):
        print(json.dumps(rec), flush=True)  # one JSON line per calibration seed


# topic.empirical.embedding_block: block contrast (embedding_contrast) per setting of 80
# calibration elements, generator seeds 10000..10001 x 40, made by python -m properties.topic.runs
# calibrate embedding_block 40 on 2026-12-03 (CPU, float64; the run was stopped after two seeds
# for time).
EMBEDDING_CALIBRATION = {
    "generator_seeds": (10000, 10002),
    "elements_per_seed": 40,
    "squared/adam": (  # n = 80, mean 0.6617, sd 0.0512, min 0.5523, max 0.7635
        0.6839823386235145, 0.6538137631714703, 0.5854930117108595, 0.552338742061138,
        0.6412077847805415, 0.714303418542424, 0.5670941477449235, 0.6566877408896583,
        0.6336951677241034, 0.6912878094722918, 0.6082165037521474, 0.7094395908667622,
        0.6418323273336061, 0.55964345941993, 0.6028049527888101, 0.7484246107063287,
        0.6441463403527584, 0.6444262854409997, 0.7377985650968176, 0.6493265995422588,
        0.6098729983539123, 0.7542502010581909, 0.7054538451493588, 0.6809795050061447,
        0.6838519076439292, 0.7074138215404454, 0.6954104986268038, 0.6597058508581016,
        0.6940166134305432, 0.6526399472383014, 0.7277494062965311, 0.5764966500777504,
        0.6193441519684699, 0.6372951287812021, 0.6809634463176499, 0.6587841615654653,
        0.651588682893896, 0.5787747805727734, 0.667380490379939, 0.7124942215041818,
        0.5936280133338431, 0.6975268783436366, 0.5651553675519266, 0.6664115558629062,
        0.6543013614169583, 0.6144174604567866, 0.6385253698542804, 0.5933978941349333,
        0.7099239640339585, 0.6441390559469788, 0.6060326085183941, 0.6699781703701887,
        0.6211940050064649, 0.7090327555922027, 0.6851255362987336, 0.606121853727196,
        0.5853726113191514, 0.637338558119625, 0.717942831232397, 0.6975658612493275,
        0.7106534499313658, 0.7222369628977952, 0.6813199203858421, 0.663486172663641,
        0.7453856707160568, 0.6349120010822038, 0.6354740459334951, 0.742546874709322,
        0.694221525614085, 0.7064314261071518, 0.7635161593938218, 0.6525433909207885,
        0.6190021743132649, 0.6144482488516932, 0.7339823642994061, 0.6768179470288946,
        0.6682971571204812, 0.6789654131558021, 0.6527920690442349, 0.748605535014483,
    ),
    "squared/sgd": (  # n = 80, mean 0.208, sd 0.0243, min 0.1509, max 0.2582
        0.1754432466929714, 0.23523312873227537, 0.19613170121073914, 0.18883908626875415,
        0.2299842614470265, 0.22069660933058963, 0.18193814601132155, 0.2415463683737288,
        0.20973489412848598, 0.196538883511165, 0.21329526764358087, 0.16753064647201502,
        0.16086437914140905, 0.1812069129520718, 0.225832469086685, 0.1729413537893356,
        0.20901184504692383, 0.21366113323926805, 0.18963983106231622, 0.1643394762740133,
        0.2236506589352619, 0.23870894918576324, 0.17796876170326767, 0.1961538247708021,
        0.23488223356564789, 0.22419452844140664, 0.2582006771282927, 0.22239045693129797,
        0.20768823908376355, 0.20835491747813148, 0.21092574892661572, 0.19069059616479395,
        0.20360811472923135, 0.21966518954414618, 0.20680249223635222, 0.23242597480996233,
        0.248708025532578, 0.2023079181948956, 0.24033264877350816, 0.2001978912104722,
        0.20953515763708014, 0.24094591824789732, 0.22546477953281263, 0.18818114399701957,
        0.255245949153152, 0.20956101276261338, 0.15092888260151102, 0.2003893596594594,
        0.2304991329902285, 0.1854182732621913, 0.2073807181049854, 0.24541795079360548,
        0.20999201398940356, 0.1787930208943498, 0.2088456211743266, 0.20171733381797122,
        0.2258984912242577, 0.1584596064011822, 0.2193187387461016, 0.21218878091105056,
        0.16674696497346736, 0.18300946614286612, 0.20610770910216553, 0.1836506014447827,
        0.20319512664846254, 0.1689864596441414, 0.22128921240982785, 0.22678135923257384,
        0.22228627918015595, 0.23784411617988951, 0.1711386684176305, 0.21977806787392123,
        0.23019151540887134, 0.19052654834386046, 0.21878880401849626, 0.2221909643426454,
        0.22302029474821508, 0.23180751009967304, 0.23011488276058178, 0.19682321990896492,
    ),
    "ce/adam": (  # n = 80, mean 0.8787, sd 0.0217, min 0.8373, max 0.9272
        0.8946243430575311, 0.8750047570290075, 0.8988501814175223, 0.860897797002929,
        0.9079889172605852, 0.8497446973989191, 0.8686710406660472, 0.847738726644903,
        0.8594877960170644, 0.8621301794685242, 0.9165976939885141, 0.8627013986289787,
        0.8651984812850293, 0.8827716635046265, 0.8795557907827708, 0.9029277691026325,
        0.87994128328013, 0.8666306489101269, 0.8437327374602271, 0.8608601389751636,
        0.8373425246834684, 0.8612583412692657, 0.8377968942918758, 0.8869697501333177,
        0.889256620314431, 0.8839872537593423, 0.8865340398331792, 0.8716602213908826,
        0.8816676318442952, 0.8867423829394258, 0.8984972481662955, 0.8878740495506094,
        0.8487536460124429, 0.8692768600261858, 0.8779938848103858, 0.8822813264126176,
        0.8532584330279752, 0.8999953283318988, 0.877278308768353, 0.9156619885679034,
        0.8569715794269538, 0.8848270306980721, 0.9272341502769565, 0.8889894487337648,
        0.9085240702635095, 0.9084112358904749, 0.8767753101728044, 0.9049269561723845,
        0.8557595444794162, 0.8691944489797221, 0.8592575118799676, 0.8845959035049941,
        0.8970510023436988, 0.9177193126719149, 0.8858972827899511, 0.8787400533137754,
        0.8600920698154979, 0.8863657892260982, 0.9241247638120456, 0.8856575956256074,
        0.8727037262761693, 0.8746843145086334, 0.8746067180081097, 0.8449637068525351,
        0.8649866362629235, 0.9015957251605708, 0.8551932062175276, 0.9146600256573836,
        0.8892805231275235, 0.882320203830003, 0.8394678479758189, 0.8971230242363899,
        0.9090669034751897, 0.8862311591508746, 0.8875669358800371, 0.867728286990821,
        0.8434106212270984, 0.8420502056239366, 0.8791835946831572, 0.8906094859157324,
    ),
    "ce/sgd": (  # n = 80, mean 0.8407, sd 0.0186, min 0.7891, max 0.8778
        0.8542381100921705, 0.8322729267257839, 0.8240196192711655, 0.8580787310205692,
        0.8423779028769924, 0.8510517311662464, 0.8193045539004205, 0.8694457328812727,
        0.7968748550740823, 0.8563277892275518, 0.8434697730405049, 0.8146654177921386,
        0.8598334472912116, 0.8507051578361654, 0.8567375746925867, 0.8425972468187622,
        0.8471775145631928, 0.8130151065580664, 0.8512140640820041, 0.8666363008780729,
        0.8165330739799631, 0.8610779905769356, 0.8662454970924294, 0.8368274849901456,
        0.8306949508849659, 0.8555747629134474, 0.8573374757854489, 0.8332210822153499,
        0.8658215234376697, 0.8493148923286148, 0.8604333508327293, 0.8573219529899487,
        0.797998083522623, 0.8517204270702514, 0.8522738006891013, 0.8093395655167345,
        0.8729085188062466, 0.8312783652673236, 0.8270131728779337, 0.8622422223878786,
        0.842072460383805, 0.8392675538887764, 0.8511102359335159, 0.8469156041629388,
        0.8553329191582082, 0.8471215705147366, 0.8103552684214202, 0.8289982410032362,
        0.8552456746685153, 0.8493875410598661, 0.8593673923420497, 0.8254515317095535,
        0.8190883107849641, 0.8232662987386749, 0.8210107847292325, 0.8388929614832417,
        0.8272354271465576, 0.829658095127922, 0.8518102915264528, 0.8419978517717387,
        0.8405201627381967, 0.7891135745186741, 0.8393318852197491, 0.8527732395712485,
        0.8344379470070447, 0.825343424021764, 0.8777612688089949, 0.8518472126240768,
        0.8463259489962252, 0.8486982134906871, 0.8442447555617842, 0.8254477257794779,
        0.8123151900529403, 0.8610815120908517, 0.8378623853684154, 0.8416667335711187,
        0.8517871513087074, 0.8335473877624875, 0.8106986226463906, 0.8258382993160667,
    ),
}


# topic.empirical.wv_diagonal_no_l2: diagonal excess (diagonal_excess, c3/v units) of 80
# calibration elements, generator seeds 10000..10001 x 40, made by python -m properties.topic.runs
# calibrate wv_diagonal_no_l2 40 on 2026-12-03 (CPU, float64; stopped after two seeds for time).
WV_DIAGONAL_CALIBRATION = {
    "generator_seeds": (10000, 10002),
    "elements_per_seed": 40,
    "diagonal_excess": (  # n = 80, mean 0.338, sd 0.044, min 0.19, max 0.4273
        0.39285803509950556, 0.3441712269220747, 0.38169907349936916, 0.32263812944866443,
        0.33140188315191127, 0.35596839328233026, 0.32475251571552677, 0.42398794143894486,
        0.32125196704201575, 0.2788067685955925, 0.27919985750897197, 0.3535149865463217,
        0.3412220086102963, 0.2856735190901348, 0.4180852441499798, 0.3227865153364944,
        0.34994077919870237, 0.27347134592518646, 0.35280459380830237, 0.32123741365437314,
        0.3789014499185006, 0.34447686967923874, 0.3757054970594145, 0.3694851234270521,
        0.2811984643111416, 0.3305398223732288, 0.2662029294748911, 0.35169752977776897,
        0.31416342898144406, 0.29973564001665204, 0.27279348308728946, 0.3615225662884858,
        0.3224753365654876, 0.3248124372416995, 0.3528455347305448, 0.3486839748248641,
        0.3038612891409652, 0.34693493280056903, 0.2998665474101269, 0.346672773121693,
        0.3706925500390747, 0.3147479821247027, 0.3296887636170509, 0.3484784076893956,
        0.3971886138459451, 0.35655268661429423, 0.3163600481128739, 0.4066139520756819,
        0.394755962419308, 0.3504312241982764, 0.25105750565548185, 0.3579584627773918,
        0.350358519011942, 0.2906622601965255, 0.41140515892039314, 0.3313821509063538,
        0.34723197010568346, 0.1900131996526403, 0.39333866190424177, 0.30749072000280125,
        0.3680881393218784, 0.32616427449603635, 0.3548355622721543, 0.41526158953698317,
        0.34034330689501274, 0.31745420637419886, 0.28923050013973095, 0.3288328503068614,
        0.2953700329321439, 0.4272803181916004, 0.3404074179162768, 0.40743455623224567,
        0.40824110897142923, 0.30327401679210814, 0.30843476471580056, 0.352721647937382,
        0.3208472325490922, 0.37288895502224884, 0.27683141056961386, 0.2978291483346397,
    ),
}


# topic.empirical.attention_order and topic.empirical.uniform_loss_gap: log attention ratios
# (attention_order_scores) of the 'joint' and 'dv' models and the relative held-out loss gap
# (uniform_loss_gap) of 80 calibration elements, generator seeds 10000..10003 x 20, made by python
# -m properties.topic.runs calibrate lda 20 on 2026-12-03 (CPU, float64; seeds 10002-10003 by a
# second process calling calibrate('lda', seeds=range(10002, 10004), S=20)).
LDA_CALIBRATION = {
    "generator_seeds": (10000, 10004),
    "elements_per_seed": 20,
    "joint:same_topic/diff_topic": (  # n = 80, mean 0.6882, sd 0.0993, min 0.4757, max 0.8823
        0.7380392599056501, 0.5877494826268617, 0.5386639881678837, 0.6129522745827561,
        0.6165142975817807, 0.5855606207902, 0.8003501038485071, 0.7333664940564588,
        0.6673459086524569, 0.8740559529411539, 0.6310548070418184, 0.652152308318687,
        0.7218021187478239, 0.8361453348431923, 0.5290277618014825, 0.7331033205568372,
        0.6949876099961373, 0.5994630791780983, 0.7492658480097688, 0.8532998766553416,
        0.717922968217922, 0.8244658191406417, 0.6132274657611481, 0.7024626574709472,
        0.8007636194522736, 0.6110589002542949, 0.8411282526105563, 0.802674541523434,
        0.5086441761376962, 0.6187390414218003, 0.6941615941680974, 0.6546392457953985,
        0.6919136325590198, 0.5782846365259031, 0.8598828784723815, 0.7084249340505323,
        0.6572527299851696, 0.7549254425203934, 0.7163162539401374, 0.5086858080838791,
        0.5703374277352571, 0.6642546606669177, 0.8193077584719063, 0.7279412041919217,
        0.801622950648141, 0.5735066235629244, 0.6656144378014691, 0.5844762289575473,
        0.7651598633601647, 0.7831617956262644, 0.6353429734325458, 0.6207474324081985,
        0.7013224231388692, 0.6612723372391308, 0.6539536946464134, 0.6484509553230396,
        0.7901138790950872, 0.7470148083893821, 0.7800937946970304, 0.6379104244151209,
        0.8696795434430691, 0.6205248208949597, 0.5114462832107883, 0.6131293517535099,
        0.6351772308495323, 0.6344062753065001, 0.6523140635500173, 0.6027793080063315,
        0.7597244181328581, 0.6157099055846019, 0.47572000760799227, 0.7631100025122944,
        0.8822801826252801, 0.7979376790914842, 0.5274013990658194, 0.6891843248030513,
        0.7210599632374387, 0.6405320848612739, 0.7430161839533532, 0.8512899728324994,
    ),
    "dv:same_word/diff_topic": (  # n = 80, mean 1.961, sd 0.0406, min 1.85, max 2.037
        1.957919345084505, 1.9627899730509604, 2.0258749538714227, 2.014802342099344,
        2.01897813024683, 2.016573691620201, 1.9448946062309018, 2.0201422898831156,
        1.8700902620429765, 1.953357275469054, 1.8495107091125813, 1.985220320658783,
        1.9440599907148024, 1.9312796247744854, 1.9789502496157945, 1.964025769125326,
        2.00315092206412, 1.988259056454121, 1.9728437533222645, 1.9904227312235547,
        1.9505300823852936, 1.971443902860883, 2.0370099782959734, 1.9478653361210587,
        1.983069990018578, 1.9454787706269052, 2.001606690547864, 1.9978537217689656,
        1.9037739510275613, 1.9040880057956966, 1.964715751310035, 1.92411304231696,
        1.9531590286035614, 1.922826929607314, 1.9840981153970432, 2.011045693848084,
        1.9309742151429423, 1.937601197530938, 1.9615699627706804, 1.9280433094302647,
        1.944699662171342, 1.9247030317434408, 1.997483918846362, 1.972966360364607,
        1.9204078325496694, 1.9237251892024663, 1.9953981218509678, 2.014791176490517,
        1.9478981378688018, 2.0300994433344743, 1.9315346882691609, 1.8688569847579444,
        1.9691133972361015, 1.9923766770204443, 1.9741367828522807, 1.9301329927116084,
        1.9882987729435855, 2.036337580110595, 1.9348792979179132, 1.9600237019041487,
        1.9973902085568873, 1.9880434463085805, 1.947654358676186, 1.9095579818538424,
        1.9967543198748214, 1.9481557954611577, 1.9417373584414475, 1.9437908898111462,
        1.930635601248507, 1.953901203500368, 1.9234862956925336, 1.8946199656548466,
        1.9548686769677206, 1.9270681941744305, 1.995827644613184, 1.9448038208133183,
        2.0034620563612204, 1.9894219262029038, 2.0066274068155736, 1.8791390033663036,
    ),
    "dv:diff_topic/same_topic": (  # n = 80, mean 0.9137, sd 0.031, min 0.86, max 0.9896
        0.9131332439695801, 0.9191423959011898, 0.9572639233158612, 0.9291946537435646,
        0.9141049027221403, 0.922498302374221, 0.8760042150745384, 0.9433211635603671,
        0.8986989729557164, 0.8939543815631391, 0.8658492324106558, 0.9209543793871063,
        0.8983193221036524, 0.9458875309606259, 0.9039440109354571, 0.9011654098520778,
        0.9158050312599416, 0.9530232279501809, 0.9503377069590329, 0.9317663646901561,
        0.870908129456717, 0.9033176253629702, 0.9381228812326932, 0.9546939284187174,
        0.9320663745441795, 0.9226803910139468, 0.8847505804761671, 0.8792702036601429,
        0.9342503013486275, 0.8630175275028464, 0.9224655830838466, 0.8673081816751343,
        0.9397996144940934, 0.9056376537788913, 0.8910957901045473, 0.9680201951837537,
        0.8730573329031368, 0.8903518300549971, 0.9239357882151193, 0.8600159369002873,
        0.935620626890333, 0.9040277099579912, 0.9857401299630449, 0.9289079008581972,
        0.8824552002777237, 0.9052954254069908, 0.9895669835983195, 0.9524513502329001,
        0.8865339741679265, 0.9465253233551059, 0.9436334240186235, 0.8627177378637385,
        0.9447107434305876, 0.90889721837276, 0.8993919403969995, 0.8886686593519985,
        0.9252617941481939, 0.9712238017426906, 0.8926028876495414, 0.8725431786240698,
        0.9755412271640506, 0.9172070087522877, 0.8948268691451388, 0.875289083173507,
        0.9726908904844144, 0.9076433302405575, 0.893328105192869, 0.9267432962937672,
        0.8975741998121025, 0.8796001670083127, 0.8851608913523424, 0.8801680647715244,
        0.9098676002049161, 0.896132405493417, 0.9165724278610593, 0.8985406852571556,
        0.9363406220244327, 0.9126578034848943, 0.9279515572688161, 0.8838578066793935,
    ),
    "loss:gap": (  # n = 80, mean 0.009709, sd 0.00321, min 0.002479, max 0.01834
        0.009890045887584163, 0.006613904614885767, 0.005675496200652622, 0.012713504016076571,
        0.012613151064058662, 0.00990058635702869, 0.009716120665539162, 0.009763178470189851,
        0.011853776435526056, 0.012200350824714521, 0.002871471445459008, 0.009998443346880093,
        0.012890310949938378, 0.006687444546763925, 0.00642675861174499, 0.01033931395454324,
        0.010246395535868008, 0.004537960927839234, 0.01176512186434706, 0.011816773705242064,
        0.008575475057198037, 0.012844097262026741, 0.01298958964324873, 0.010154400506027604,
        0.010095658263128122, 0.010259469828191292, 0.012765195552808755, 0.00715270589071228,
        0.012949808528867174, 0.011905913959485735, 0.005625809993091184, 0.010709115169933028,
        0.013283973610390513, 0.008565169442878195, 0.011276249394036196, 0.007950489294941267,
        0.011353861371322223, 0.002478845338929386, 0.010660425374518785, 0.013666339897886588,
        0.01475467324322727, 0.01759234298442326, 0.008117825729774403, 0.008958039682740022,
        0.00414235299474413, 0.013787321530249953, 0.010292759115209806, 0.00975365696642997,
        0.010709877745431931, 0.005960633414469081, 0.012976911637390892, 0.009410194644071876,
        0.01151076152920076, 0.004496059145785259, 0.00772769064125872, 0.010896599800202068,
        0.010384460883236833, 0.008991558596216783, 0.006886452146981319, 0.007976544794321215,
        0.01833705093533952, 0.009850332178946907, 0.003864195292416647, 0.004577294741959004,
        0.005229386417608943, 0.011210659846471651, 0.006149210446484699, 0.006356520320510808,
        0.012159168062657757, 0.006351710072099447, 0.01027148327631469, 0.010991712405499392,
        0.008335119251917326, 0.009757841200897037, 0.0085872351262478, 0.01257144813377977,
        0.004883796733659537, 0.011939029239962888, 0.015415697556593277, 0.010795520237364109,
    ),
}
