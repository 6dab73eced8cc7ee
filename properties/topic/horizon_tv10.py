"""T = v = 10 horizon of runs.LDA_PAPER_STEPS (the measurement; see runs.py for the rule and its
history).  Rule first written (before the run): train 'joint' and 'uniform' (LDA_MODELS) on
calibration seed 10000 (disjoint from audit seeds 0..9999), S=2, 2400 steps, training loss logged
every step; window means over consecutive 300-step windows; horizon = end of the first window
whose mean differs from the previous window's by < 1% relative.  "dv" and "wstar" (W^V frozen to
Definition 2's D^V / Theorem 2's W*, as in runs.lda_run) were measured the same way on 2026-12-06
(issue 37), for topic.empirical.attention_order's T = v = 10 draw."""
import json
import sys
import time

import numpy as np
import torch

from properties.topic.runs import EMP, LDA_MODELS, LDA_TRAIN, heldout_documents
from sim import make_generator
from sim import topic as sm
from theory import topic as th


def main(model: str) -> None:
    """Print the window means of `model`'s training loss (see the module docstring)."""
    if model not in LDA_MODELS:
        raise ValueError(f"model must be one of {sorted(LDA_MODELS)}, got {model!r}")
    torch.set_num_threads(1)
    T = v = 10; n = T*v+1; S = 2; K = 2400
    c = LDA_MODELS[model]
    g = make_generator(10000)
    heldout_documents(g, S, 10)  # drawn first, as in runs.lda_run: the same training stream
    WV = (th.definition2_dv(T, v, *EMP["p"]) if model == "dv" else
          th.theorem2_wstar(T, v, *EMP["p"]) if model == "wstar" else None)
    p = sm.init_params(g, S, n, sw=c["sw"], scale=LDA_TRAIN["scale"], WV=WV, device="cpu")
    t0 = time.time()
    log = sm.train(p, g, T=T, v=v, steps=K, batch=LDA_TRAIN["batch"], sw=c["sw"], loss="squared",
                   opt="adam", lr=LDA_TRAIN["lr"], model="lda", p_m=EMP["p"][0], p_c=EMP["p"][1],
                   p_r=EMP["p"][2], N_range=LDA_TRAIN["N_range"], log_every=1)
    L = np.array(log.loss)[:K].mean(1)
    w = L.reshape(-1, 300).mean(1)
    print(json.dumps({"model": model, "seconds": time.time()-t0, "window_means": w.tolist(),
                      "rel_change": (np.abs(np.diff(w))/w[:-1]).tolist()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
