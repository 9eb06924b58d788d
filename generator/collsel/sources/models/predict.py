"""Predicted bcast times of a parameter set: per method over message sizes, the model's choice
per cell, and the canonical performance table `collsel model predict` writes."""
from pathlib import Path

import numpy as np

from collsel import __version__
from collsel.core import statistic
from collsel.errors import InputError
from collsel.sources.models import bcast

MODELS = ("tlop", "hockney")
PRESET_DIR = "generator/collsel/sources/models/presets"   # as the repository spells it
STATISTIC_DETAIL = "time_us = model prediction (µs)"


def predict_times(par, P, msg_sizes, model="tlop", platform=None):
    """{(alg, seg): array of predicted µs over msg_sizes} for the bcast methods of `par`."""
    platform = platform or par.platform
    out = {}
    for (coll, alg, seg), theta in sorted(par.methods.items()):
        if coll != "bcast":
            continue
        if model == "tlop":
            A = np.array([bcast.tlop_coefficients(alg, P, m, seg, platform) for m in msg_sizes])
            out[(alg, seg)] = A @ np.array(theta)
        else:
            h = par.hockney
            A = np.array([bcast.hockney_coefficients(alg, P, m, seg, platform.chain_fanout,
                                                      platform.knomial_radix)
                          for m in msg_sizes])
            out[(alg, seg)] = A @ np.array([h["alpha"], h["beta"]])
    return out


def model_choices(par, cells, model):
    """{(P, m): the method with the smallest predicted time} over the measured cells."""
    choice = {}
    msg_sizes = sorted({m for _, m in cells})
    for P in sorted({P for P, _ in cells}):
        pred = predict_times(par, P, msg_sizes, model)
        for i, m in enumerate(msg_sizes):
            choice[(P, m)] = min(pred, key=lambda k: (pred[k][i], k))
    return choice


def predict_table(par, comm_sizes, msg_sizes, model="tlop", ranks_per_node=None,
                  preset=False, comm_sizes_text="", msg_sizes_text=""):
    """(rows, metadata) of the predicted bcast table over comm_sizes x msg_sizes. `preset`:
    `par` is a shipped preset (recorded by its repository path); the *_text are the sizes as
    asked for."""
    if model == "hockney" and not par.hockney:
        raise InputError(f"{par.path}: no \"hockney\" parameters for --model hockney")
    platform = par.platform
    if ranks_per_node:
        platform.ppn = ranks_per_node
    rows = []
    for P in comm_sizes:
        for (alg, seg), times in predict_times(par, P, msg_sizes, model, platform).items():
            for m, t in zip(msg_sizes, times):
                rows.append({"collective": "bcast", "comm_size": P, "msg_size": m,
                             "algorithm": alg, "segsize": seg, "faninout": 0,
                             "time_us": float(f"{max(t, 1e-9):.6g}")})
    rows.sort(key=lambda r: (r["comm_size"], r["msg_size"], r["algorithm"], r["segsize"]))
    meta = {"source": f"collsel model predict ({'tau-Lop' if model == 'tlop' else 'Hockney'}"
                      " analytical model; predicted, not measured)",
            "collsel_version": __version__, "collective": "bcast", "predicted": "yes",
            "model": model, "params": par.name,
            "params_file": f"{PRESET_DIR}/{Path(par.path).name} (preset)" if preset else par.path,
            "params_source": par.doc.get("source", ""),
            "ranks_per_node": platform.ppn or "all (one node)",
            "chain_fanout": platform.chain_fanout, "knomial_radix": platform.knomial_radix,
            "statistic": statistic.MODEL,
            "statistic_detail": STATISTIC_DETAIL,
            "comm_sizes": comm_sizes_text, "msg_sizes": msg_sizes_text}
    return rows, meta
